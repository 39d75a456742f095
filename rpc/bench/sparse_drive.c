/*
 * sparse-drive — drives a gRPC server the way players do: many connections,
 * each quiet most of the time (a unary call every 1/RATE seconds, about
 * 0.6/s for a human-paced player) and each holding one open server stream
 * (a player's Subscribe). It is the client half of the floor benchmark
 * (scripts/bench/floor.sh): the bare C core (bare-echo, bare-forward) and
 * the runtime are driven with it at the same connection count and rate, so
 * the CPU, context switches and wakeups a call costs at that concurrency
 * can be compared with the stack's own under the load driver.
 *
 *   sparse-drive TARGET CONNS RATE SECONDS UNARY_PATH STREAM_PATH [KEY=VALUE ...]
 *
 * e.g. sparse-drive 127.0.0.1:7900 2000 0.6 20 /grpc.health.v1.Health/Check
 *      /grpc.health.v1.Health/Watch
 * STREAM_PATH "-": no streams. KEY=VALUE pairs are sent as metadata on
 * every call. Requests are empty messages (a valid HealthCheckRequest).
 *
 * Every connection is its own channel with a local subchannel pool (one TCP
 * connection each, as separate players would have). Two threads, each with
 * one completion queue, own half the channels; a thread fires its channels'
 * calls round-robin at a fixed spacing, so each channel calls every 1/RATE
 * seconds with a phase of its own. The run is bounded: it stops issuing
 * after SECONDS, waits for what is in flight, then cancels the streams.
 *
 * TARGET must be on this machine (the load driver's rule, netpolicy.h):
 * benchmarks never drive anyone else's server.
 *
 * Prints one line: calls, errors, calls/s, latency p50/p99, streams held.
 * Exits 1 when any call failed or a stream ended early, 2 on bad usage.
 */
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "netpolicy.h"

#define SD_THREADS 2
#define SD_MAX_MD 8
#define SD_CALL_TIMEOUT_MS 5000

typedef enum { SD_UNARY, SD_STREAM_END, SD_STREAM_MSG } sd_kind;

typedef struct sd_conn sd_conn;

/* One outstanding operation: a unary call, a stream's end, or a stream's
 * message read. The tag of every batch. */
typedef struct sd_op {
    sd_kind kind;
    sd_conn *conn;
    grpc_call *call;
    int64_t started_ns;
    grpc_metadata_array initial, trailing;
    grpc_byte_buffer *reply;
    grpc_status_code status;
    grpc_slice details;
} sd_op;

struct sd_conn {
    grpc_channel *channel;
    void *unary_handle, *stream_handle;
    sd_op stream_end, stream_msg; /* the held stream's two batches */
    int stream_open;
};

typedef struct sd_thread {
    pthread_t thread;
    grpc_completion_queue *cq;
    sd_conn *conns;
    int nconns;
    /* results */
    long calls, errors, stream_errors, streams_held;
    int64_t *lat_us;
    long nlat, caplat;
} sd_thread;

static const char *target, *unary_path, *stream_path;
static double rate, seconds;
static grpc_metadata md[SD_MAX_MD];
static size_t nmd;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static gpr_timespec in_ms(int64_t ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

static grpc_byte_buffer *empty_message(void)
{
    grpc_slice s = grpc_empty_slice();
    return grpc_raw_byte_buffer_create(&s, 1);
}

static void sd_op_init(sd_op *op, sd_kind kind, sd_conn *c)
{
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->conn = c;
    grpc_metadata_array_init(&op->initial);
    grpc_metadata_array_init(&op->trailing);
}

static void sd_op_clear(sd_op *op)
{
    grpc_metadata_array_destroy(&op->initial);
    grpc_metadata_array_destroy(&op->trailing);
    grpc_slice_unref(op->details);
    if (op->reply)
        grpc_byte_buffer_destroy(op->reply);
    op->reply = NULL;
}

/* The client half of a call in one batch: metadata, the empty request,
 * half-close, and (with want_reply) everything the server sends back. */
static void sd_start(sd_op *op, grpc_byte_buffer *req, int want_reply)
{
    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    size_t n = 0;
    ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].data.send_initial_metadata.count = nmd;
    ops[n++].data.send_initial_metadata.metadata = md;
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = req;
    ops[n++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[n++].data.recv_initial_metadata.recv_initial_metadata = &op->initial;
    if (want_reply) {
        ops[n].op = GRPC_OP_RECV_MESSAGE;
        ops[n++].data.recv_message.recv_message = &op->reply;
    }
    ops[n].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[n].data.recv_status_on_client.trailing_metadata = &op->trailing;
    ops[n].data.recv_status_on_client.status = &op->status;
    ops[n++].data.recv_status_on_client.status_details = &op->details;
    grpc_call_start_batch(op->call, ops, n, op, NULL);
}

static void sd_fire_unary(sd_thread *t, sd_conn *c)
{
    sd_op *op = malloc(sizeof(*op));
    sd_op_init(op, SD_UNARY, c);
    op->started_ns = now_ns();
    op->call =
        grpc_channel_create_registered_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, t->cq,
                                            c->unary_handle, in_ms(SD_CALL_TIMEOUT_MS), NULL);
    grpc_byte_buffer *req = empty_message();
    sd_start(op, req, 1);
    grpc_byte_buffer_destroy(req);
}

static void sd_read_stream(sd_conn *c)
{
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->stream_msg.reply;
    grpc_call_start_batch(c->stream_msg.call, &op, 1, &c->stream_msg, NULL);
}

static void sd_open_stream(sd_thread *t, sd_conn *c)
{
    sd_op_init(&c->stream_end, SD_STREAM_END, c);
    sd_op_init(&c->stream_msg, SD_STREAM_MSG, c);
    grpc_call *call = grpc_channel_create_registered_call(
        c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, t->cq, c->stream_handle,
        gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    c->stream_end.call = call;
    c->stream_msg.call = call;
    c->stream_open = 1;
    grpc_byte_buffer *req = empty_message();
    sd_start(&c->stream_end, req, 0);
    grpc_byte_buffer_destroy(req);
    sd_read_stream(c);
}

/* Handles one completion; returns how many operations it finished (a
 * unary call, or a stream's end batch). */
static int sd_complete(sd_thread *t, sd_op *op, int success, int stopping)
{
    sd_conn *c = op->conn;
    switch (op->kind) {
    case SD_UNARY: {
        t->calls++;
        if (!success || op->status != GRPC_STATUS_OK)
            t->errors++;
        if (t->nlat < t->caplat)
            t->lat_us[t->nlat++] = (now_ns() - op->started_ns) / 1000;
        grpc_call_unref(op->call);
        sd_op_clear(op);
        free(op);
        return 1;
    }
    case SD_STREAM_MSG:
        if (op->reply) { /* a status update: keep reading */
            grpc_byte_buffer_destroy(op->reply);
            op->reply = NULL;
            if (success)
                sd_read_stream(c);
        }
        return 0;
    case SD_STREAM_END:
        if (!stopping)
            t->stream_errors++;
        c->stream_open = 0;
        grpc_call_unref(op->call);
        sd_op_clear(op);
        sd_op_clear(&c->stream_msg);
        return 1;
    }
    return 0;
}

static void *sd_thread_main(void *arg)
{
    sd_thread *t = arg;
    int streams = 0;
    for (int i = 0; i < t->nconns; i++) {
        sd_conn *c = &t->conns[i];
        if (c->stream_handle) {
            sd_open_stream(t, c);
            streams++;
        }
    }
    t->streams_held = streams;
    /* Calls are spaced evenly over the thread's channels: channel k % n is
     * called at t0 + k * gap, so each channel calls every 1/RATE s. */
    const double gap_ns = 1e9 / (rate * t->nconns);
    const int64_t t0 = now_ns();
    const int64_t end = t0 + (int64_t)(seconds * 1e9);
    long k = 0, outstanding = 0;
    int issuing = 1, stopping = 0;
    for (;;) {
        int64_t now = now_ns();
        while (issuing && now >= t0 + (int64_t)(k * gap_ns)) {
            if (now >= end) {
                issuing = 0;
                break;
            }
            sd_fire_unary(t, &t->conns[k % t->nconns]);
            outstanding++;
            k++;
        }
        if (!issuing && outstanding == 0 && !stopping) {
            /* Every unary call is back: end the streams. */
            stopping = 1;
            for (int i = 0; i < t->nconns; i++) {
                if (t->conns[i].stream_open) {
                    grpc_call_cancel(t->conns[i].stream_end.call, NULL);
                    outstanding++;
                }
            }
        }
        if (stopping && outstanding == 0)
            break;
        gpr_timespec until =
            issuing
                ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                               gpr_time_from_nanos(t0 + (int64_t)(k * gap_ns) - now, GPR_TIMESPAN))
                : in_ms(1000);
        grpc_event ev = grpc_completion_queue_next(t->cq, until, NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            outstanding -= sd_complete(t, ev.tag, ev.success, stopping);
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: sparse-drive TARGET CONNS RATE SECONDS UNARY_PATH STREAM_PATH "
                        "[KEY=VALUE ...]\n");
        return 2;
    }
    target = argv[1];
    int conns = atoi(argv[2]);
    rate = atof(argv[3]);
    seconds = atof(argv[4]);
    unary_path = argv[5];
    stream_path = strcmp(argv[6], "-") == 0 ? NULL : argv[6];
    if (conns < SD_THREADS || conns > 100000 || rate <= 0 || rate > 1000 || seconds <= 0 ||
        seconds > 3600) {
        fprintf(stderr, "sparse-drive: CONNS 2..100000, RATE (0, 1000] per s, SECONDS (0, 3600]\n");
        return 2;
    }
    char err[256];
    if (!lt_net_target_allowed(target, false, err, sizeof(err))) {
        fprintf(stderr, "sparse-drive: %s\n", err);
        return 2;
    }
    for (int i = 7; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL || nmd == SD_MAX_MD) {
            fprintf(stderr, "sparse-drive: metadata must be KEY=VALUE (at most %d)\n", SD_MAX_MD);
            return 2;
        }
        *eq = '\0';
        md[nmd].key = grpc_slice_from_static_string(argv[i]);
        md[nmd].value = grpc_slice_from_static_string(eq + 1);
        nmd++;
    }
    grpc_init();
    /* A local subchannel pool: one TCP connection per channel, as separate
     * players have; the global pool would share one. */
    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, .value.integer = 1},
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0},
    };
    grpc_channel_args cargs = {.num_args = 2, .args = args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    sd_thread th[SD_THREADS];
    memset(th, 0, sizeof(th));
    long expected = (long)(rate * conns * seconds) + 1024;
    for (int i = 0; i < SD_THREADS; i++) {
        sd_thread *t = &th[i];
        t->nconns = conns / SD_THREADS + (i < conns % SD_THREADS);
        t->conns = calloc((size_t)t->nconns, sizeof(sd_conn));
        t->cq = grpc_completion_queue_create_for_next(NULL);
        t->caplat = expected;
        t->lat_us = malloc(sizeof(int64_t) * (size_t)t->caplat);
        for (int j = 0; j < t->nconns; j++) {
            sd_conn *c = &t->conns[j];
            c->channel = grpc_channel_create(target, creds, &cargs);
            c->unary_handle = grpc_channel_register_call(c->channel, unary_path, NULL, NULL);
            if (stream_path)
                c->stream_handle = grpc_channel_register_call(c->channel, stream_path, NULL, NULL);
        }
    }
    for (int i = 0; i < SD_THREADS; i++)
        pthread_create(&th[i].thread, NULL, sd_thread_main, &th[i]);
    long calls = 0, errors = 0, stream_errors = 0, streams = 0, nlat = 0;
    for (int i = 0; i < SD_THREADS; i++) {
        pthread_join(th[i].thread, NULL);
        calls += th[i].calls;
        errors += th[i].errors;
        stream_errors += th[i].stream_errors;
        streams += th[i].streams_held;
        nlat += th[i].nlat;
    }
    int64_t *lat = malloc(sizeof(int64_t) * (size_t)(nlat + 1));
    long m = 0;
    for (int i = 0; i < SD_THREADS; i++) {
        memcpy(lat + m, th[i].lat_us, sizeof(int64_t) * (size_t)th[i].nlat);
        m += th[i].nlat;
    }
    qsort(lat, (size_t)nlat, sizeof(int64_t), cmp_i64);
    double p50 = nlat ? lat[nlat / 2] / 1000.0 : 0, p99 = nlat ? lat[nlat * 99 / 100] / 1000.0 : 0;
    printf("conns=%d rate=%.2f seconds=%.1f calls=%ld errors=%ld calls_per_s=%.1f p50_ms=%.2f "
           "p99_ms=%.2f streams=%ld streams_ended_early=%ld\n",
           conns, rate, seconds, calls, errors, calls / seconds, p50, p99, streams, stream_errors);
    for (int i = 0; i < SD_THREADS; i++) {
        for (int j = 0; j < th[i].nconns; j++)
            grpc_channel_destroy(th[i].conns[j].channel);
        grpc_completion_queue_shutdown(th[i].cq);
        while (
            grpc_completion_queue_next(th[i].cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
            GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(th[i].cq);
        free(th[i].conns);
        free(th[i].lat_us);
    }
    free(lat);
    grpc_channel_credentials_release(creds);
    grpc_shutdown();
    return errors || stream_errors ? 1 : 0;
}

/*
 * bare-forward — the smallest forwarder one can write on the C core batch
 * API: the floor under the gateway's forwarding cost, measured side by side
 * with it (scripts/bench/gateway.sh).
 *
 * One registered inbound method whose payload arrives with the call; each
 * inbound call starts one outbound call on the same completion queue (so
 * every tag of a call comes back to one thread and nothing is locked) with
 * the request bytes unchanged, fixed metadata and a deadline, in one six-op
 * batch; when it completes, the inbound call is answered in one batch with
 * the downstream message, status, details and scrabble-reason trailer. No
 * authentication, no rate limit, no metrics, no logs: what is left is the
 * C core's own cost of a server call plus a client call.
 *
 *   bare-forward PORT TARGET IN_PATH OUT_PATH [THREADS] [KEY=VALUE ...]
 *
 * e.g. bare-forward 7000 127.0.0.1:7100 /scrabble.v1.Edge/GetState
 *      /scrabble.v1.Game/GetState 1 scrabble-account-id=1 scrabble-handle=alice
 * Stops on SIGINT/SIGTERM.
 */
#include <grpc/grpc.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bare_server.h"

#define FWD_MAX_MD 8
#define FWD_TIMEOUT_MS 5000 /* the gateway's default downstream timeout */

typedef enum { FWD_ARRIVING, FWD_FORWARDING, FWD_REPLYING } fwd_state;

typedef struct fwd_call {
    fwd_state state;
    grpc_completion_queue *cq;
    /* inbound */
    grpc_call *in;
    gpr_timespec in_deadline;
    grpc_metadata_array in_md;
    grpc_byte_buffer *req;
    int cancelled;
    /* outbound */
    grpc_call *out;
    grpc_metadata_array out_initial, out_trailing;
    grpc_byte_buffer *reply;
    grpc_status_code status;
    grpc_slice details;
    const char *error_string;
    grpc_metadata reason; /* the downstream's scrabble-reason, if any */
    size_t nreason;
} fwd_call;

static grpc_server *server;
static bare_server bare;
static grpc_channel *channel;
static void *in_method;
static grpc_slice out_path;
static grpc_metadata out_md[FWD_MAX_MD];
static size_t out_md_count;

static void fwd_request(grpc_completion_queue *cq)
{
    fwd_call *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    c->cq = cq;
    grpc_metadata_array_init(&c->in_md);
    grpc_server_request_registered_call(server, in_method, &c->in, &c->in_deadline, &c->in_md,
                                        &c->req, cq, cq, c);
}

static void fwd_free(fwd_call *c)
{
    if (c->req)
        grpc_byte_buffer_destroy(c->req);
    if (c->reply)
        grpc_byte_buffer_destroy(c->reply);
    grpc_metadata_array_destroy(&c->in_md);
    grpc_metadata_array_destroy(&c->out_initial);
    grpc_metadata_array_destroy(&c->out_trailing);
    grpc_slice_unref(c->details);
    gpr_free((void *)c->error_string);
    if (c->out)
        grpc_call_unref(c->out);
    if (c->in)
        grpc_call_unref(c->in);
    free(c);
}

/* The inbound call arrived: forward it. */
static void fwd_start(fwd_call *c)
{
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                         gpr_time_from_millis(FWD_TIMEOUT_MS, GPR_TIMESPAN));
    gpr_timespec in_deadline = gpr_convert_clock_type(c->in_deadline, GPR_CLOCK_MONOTONIC);
    if (gpr_time_cmp(in_deadline, deadline) < 0)
        deadline = in_deadline;
    c->out = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, out_path, NULL,
                                      deadline, NULL);
    grpc_metadata_array_init(&c->out_initial);
    grpc_metadata_array_init(&c->out_trailing);
    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = out_md_count;
    ops[0].data.send_initial_metadata.metadata = out_md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = c->req;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->out_initial;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &c->reply;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.status = &c->status;
    ops[5].data.recv_status_on_client.status_details = &c->details;
    ops[5].data.recv_status_on_client.trailing_metadata = &c->out_trailing;
    ops[5].data.recv_status_on_client.error_string = &c->error_string;
    c->state = FWD_FORWARDING;
    if (grpc_call_start_batch(c->out, ops, 6, c, NULL) != GRPC_CALL_OK)
        abort(); /* a bench tool: a refused batch is a bug here */
}

/* The downstream answered: relay message, status and reason. */
static void fwd_reply(fwd_call *c)
{
    static const char reason_key[] = "scrabble-reason";
    for (size_t i = 0; i < c->out_trailing.count; i++) {
        const grpc_metadata *md = &c->out_trailing.metadata[i];
        if (GRPC_SLICE_LENGTH(md->key) == sizeof(reason_key) - 1 &&
            memcmp(GRPC_SLICE_START_PTR(md->key), reason_key, sizeof(reason_key) - 1) == 0) {
            c->reason = *md;
            c->nreason = 1;
            break;
        }
    }
    grpc_op ops[4];
    memset(ops, 0, sizeof(ops));
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (c->status == GRPC_STATUS_OK && c->reply) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->reply;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = c->status;
    ops[n].data.send_status_from_server.status_details = &c->details;
    ops[n].data.send_status_from_server.trailing_metadata_count = c->nreason;
    ops[n++].data.send_status_from_server.trailing_metadata = &c->reason;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    c->state = FWD_REPLYING;
    if (grpc_call_start_batch(c->in, ops, n, c, NULL) != GRPC_CALL_OK)
        abort();
}

static void *fwd_worker(void *arg)
{
    grpc_completion_queue *cq = arg;
    for (int i = 0; i < 16; i++) {
        fwd_request(cq);
        bare_watch_request(&bare, cq);
    }
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (bare_is_watch(ev.tag)) {
            bare_watch_event(&bare, cq, ev.tag, ev.success);
            continue;
        }
        fwd_call *c = ev.tag;
        switch (c->state) {
        case FWD_ARRIVING:
            if (!ev.success) { /* shutting down */
                fwd_free(c);
                continue;
            }
            fwd_request(cq);
            fwd_start(c);
            break;
        case FWD_FORWARDING:
            fwd_reply(c);
            break;
        case FWD_REPLYING:
            fwd_free(c);
            break;
        }
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: bare-forward PORT TARGET IN_PATH OUT_PATH [THREADS] [KEY=VALUE ...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        usage();
    int nthreads = argc > 5 ? atoi(argv[5]) : 1;
    if (nthreads < 1 || nthreads > BARE_MAX_THREADS)
        usage();
    for (int i = 6; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL || out_md_count == FWD_MAX_MD)
            usage();
        *eq = '\0';
        out_md[out_md_count].key = grpc_slice_from_static_string(argv[i]);
        out_md[out_md_count++].value = grpc_slice_from_static_string(eq + 1);
    }
    bare_server *b = &bare;
    int port = bare_server_listen(b, argv[1], argv[3], nthreads);
    if (port == 0) {
        fprintf(stderr, "bare-forward: cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    server = b->server;
    in_method = b->method;

    /* The channel settings of the runtime (rpc/src/client.c) that matter
     * per call: no retries, no channelz, no keepalive pings. */
    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_RETRIES, .value.integer = 0},
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0},
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_KEEPALIVE_TIME_MS, .value.integer = INT_MAX},
    };
    grpc_channel_args cargs = {.num_args = sizeof(args) / sizeof(args[0]), .args = args};
    grpc_channel_credentials *ccreds = grpc_insecure_credentials_create();
    channel = grpc_channel_create(argv[2], ccreds, &cargs);
    grpc_channel_credentials_release(ccreds);
    out_path = grpc_slice_from_static_string(argv[4]);

    bare_server_start(b, fwd_worker);
    printf("bare-forward listening on %d, forwarding %s to %s%s with %d threads\n", port, argv[3],
           argv[2], argv[4], nthreads);
    fflush(stdout);
    bare_server_wait_and_stop(b);
    grpc_channel_destroy(channel);
    grpc_shutdown();
    return 0;
}

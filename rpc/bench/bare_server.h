/*
 * bare_server.h — the set-up and shutdown the bare C-core baselines
 * (bare-echo, bare-forward) share, so that they differ only in what they do
 * with a call. Straight on the C core, nothing from rpc/; the server gets
 * the one per-call setting the runtime also sets (channelz off), so the
 * baselines and the runtime are compared on equal terms.
 */
#ifndef RPC_BENCH_BARE_SERVER_H
#define RPC_BENCH_BARE_SERVER_H

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BARE_MAX_THREADS 64

typedef struct bare_server {
    grpc_server *server;
    void *method; /* the registered method, its payload read with the call */
    void *watch;  /* /grpc.health.v1.Health/Watch, held open (bare_watch) */
    int nthreads;
    grpc_completion_queue *cqs[BARE_MAX_THREADS];
    pthread_t threads[BARE_MAX_THREADS];
    sigset_t stop_signals;
} bare_server;

/* grpc_init, a server with `path` registered and one completion queue per
 * thread, listening on 127.0.0.1:port; SIGINT and SIGTERM are blocked so
 * bare_server_wait_and_stop can wait for them. Returns the bound port, 0 if it
 * cannot listen. */
static int bare_server_listen(bare_server *b, const char *port, const char *path, int nthreads)
{
    b->nthreads = nthreads;
    sigemptyset(&b->stop_signals);
    sigaddset(&b->stop_signals, SIGINT);
    sigaddset(&b->stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &b->stop_signals, NULL);
    grpc_init();
    grpc_arg arg = {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0};
    grpc_channel_args args = {.num_args = 1, .args = &arg};
    b->server = grpc_server_create(&args, NULL);
    b->method = grpc_server_register_method(b->server, path, NULL,
                                            GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    b->watch = grpc_server_register_method(b->server, "/grpc.health.v1.Health/Watch", NULL,
                                           GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    for (int i = 0; i < nthreads; i++) {
        b->cqs[i] = grpc_completion_queue_create_for_next(NULL);
        grpc_server_register_completion_queue(b->server, b->cqs[i], NULL);
    }
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%s", port);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int bound = grpc_server_add_http2_port(b->server, addr, creds);
    grpc_server_credentials_release(creds);
    return bound;
}

/* A held server stream, the shape of a player's Subscribe: Watch answers
 * SERVING once and then stays open, sending nothing, until the client
 * cancels it (scripts/bench/floor.sh drives it with sparse-drive). One batch
 * and one completion per stream. Its tag starts with BARE_WATCH_TAG, which
 * no other tag of the bare servers starts with (their first field is a
 * small state number): a worker hands such tags to bare_watch_event. */
#define BARE_WATCH_TAG 0x57617463

typedef struct bare_watch {
    int tag;
    int arrived;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array md;
    grpc_byte_buffer *req, *reply;
    int cancelled;
} bare_watch;

static void bare_watch_request(bare_server *b, grpc_completion_queue *cq)
{
    bare_watch *w = calloc(1, sizeof(*w));
    w->tag = BARE_WATCH_TAG;
    grpc_metadata_array_init(&w->md);
    grpc_server_request_registered_call(b->server, b->watch, &w->call, &w->deadline, &w->md,
                                        &w->req, cq, cq, w);
}

static int bare_is_watch(void *tag)
{
    return *(int *)tag == BARE_WATCH_TAG;
}

static void bare_watch_event(bare_server *b, grpc_completion_queue *cq, bare_watch *w, int success)
{
    if (!w->arrived && success) {
        static const unsigned char serving[] = {0x08, 0x01};
        bare_watch_request(b, cq);
        w->arrived = 1;
        grpc_slice s = grpc_slice_from_static_buffer(serving, sizeof(serving));
        w->reply = grpc_raw_byte_buffer_create(&s, 1);
        grpc_op ops[3];
        memset(ops, 0, sizeof(ops));
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_SEND_MESSAGE;
        ops[1].data.send_message.send_message = w->reply;
        ops[2].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[2].data.recv_close_on_server.cancelled = &w->cancelled;
        grpc_call_start_batch(w->call, ops, 3, w, NULL);
        return;
    }
    /* Closed by the client (or shutting down before it arrived). */
    if (w->req)
        grpc_byte_buffer_destroy(w->req);
    if (w->reply)
        grpc_byte_buffer_destroy(w->reply);
    grpc_metadata_array_destroy(&w->md);
    if (w->call)
        grpc_call_unref(w->call);
    free(w);
}

/* Starts the server and one worker(cq) per thread. */
static void bare_server_start(bare_server *b, void *(*worker)(void *))
{
    grpc_server_start(b->server);
    for (int i = 0; i < b->nthreads; i++)
        pthread_create(&b->threads[i], NULL, worker, b->cqs[i]);
}

/* Waits for SIGINT or SIGTERM, then shuts down: calls cancelled, queues
 * drained, workers joined (each returns on GRPC_QUEUE_SHUTDOWN). */
static void bare_server_wait_and_stop(bare_server *b)
{
    int sig;
    sigwait(&b->stop_signals, &sig);
    grpc_completion_queue *scq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_server_shutdown_and_notify(b->server, scq, NULL);
    grpc_server_cancel_all_calls(b->server);
    grpc_completion_queue_pluck(scq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    for (int i = 0; i < b->nthreads; i++) {
        grpc_completion_queue_shutdown(b->cqs[i]);
        pthread_join(b->threads[i], NULL);
        grpc_completion_queue_destroy(b->cqs[i]);
    }
    grpc_server_destroy(b->server);
    grpc_completion_queue_shutdown(scq);
    grpc_completion_queue_destroy(scq);
}

#endif

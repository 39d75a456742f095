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

#define BARE_MAX_THREADS 64

typedef struct bare_server {
    grpc_server *server;
    void *method; /* the registered method, its payload read with the call */
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

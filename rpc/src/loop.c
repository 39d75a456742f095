/*
 * loop.c — threads that drain completion queues (server workers and client
 * loops, each calling the rpc__tag of every event), queues their owner's
 * thread polls instead (rpc_loop_create/rpc_loop_poll), the client-side choice
 * of which queue a call completes on (the caller's worker, a loop named in
 * the options, or the shared client loop), the process set-up every binary
 * starts with (rpc_init: open-file limit, signal mask, grpc_init) and
 * rpc__read_file for the runtime's PEM and descriptor files.
 */
#include <grpc/support/time.h>
#include <stdint.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rpc/log.h"

static __thread rpc_loop *rpc__tls_loop;

static pthread_once_t shared_once = PTHREAD_ONCE_INIT;
static rpc_loop *shared_loop; /* the runtime's shared client loop */

rpc_loop *rpc__current_loop(void)
{
    return rpc__tls_loop;
}

int rpc_current_worker(void)
{
    return rpc__tls_loop ? rpc__tls_loop->worker_index : -1;
}

int rpc__loop_init(rpc_loop *loop, const char *name, int worker_index)
{
    memset(loop, 0, sizeof(*loop));
    snprintf(loop->name, sizeof(loop->name), "%s", name);
    loop->worker_index = worker_index;
    loop->cq = grpc_completion_queue_create_for_next(NULL);
    return loop->cq ? RPC_OK : RPC_ERROR;
}

static void *rpc__loop_main(void *arg)
{
    rpc_loop *loop = arg;
    rpc__tls_loop = loop;
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(loop->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        rpc__tag *tag = ev.tag;
        tag->fn(tag, ev.success != 0);
    }
    return NULL;
}

int rpc__loop_run(rpc_loop *loop)
{
    if (pthread_create(&loop->thread, NULL, rpc__loop_main, loop) != 0)
        return RPC_ERROR;
    loop->started = true;
    return RPC_OK;
}

void rpc__loop_shutdown(rpc_loop *loop)
{
    if (loop->cq == NULL)
        return;
    grpc_completion_queue_shutdown(loop->cq);
    if (loop->started)
        pthread_join(loop->thread, NULL);
    else if (loop->polled) {
        /* The owner's thread is here: it runs what is still pending. */
        while (rpc_loop_poll(loop, INT64_MAX) >= 0)
            ;
    } else {
        /* Never ran: drain here so the queue can be destroyed. */
        while (
            grpc_completion_queue_next(loop->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
            GRPC_QUEUE_SHUTDOWN)
            ;
    }
    grpc_completion_queue_destroy(loop->cq);
    loop->cq = NULL;
    loop->started = false;
}

rpc_loop *rpc_loop_start(const char *name)
{
    rpc_loop *loop = calloc(1, sizeof(*loop));
    if (loop == NULL)
        return NULL;
    if (rpc__loop_init(loop, name, -1) != RPC_OK || rpc__loop_run(loop) != RPC_OK) {
        if (loop->cq)
            grpc_completion_queue_destroy(loop->cq);
        free(loop);
        return NULL;
    }
    return loop;
}

rpc_loop *rpc_loop_create(const char *name)
{
    rpc_loop *loop = calloc(1, sizeof(*loop));
    if (loop == NULL)
        return NULL;
    if (rpc__loop_init(loop, name, -1) != RPC_OK) {
        free(loop);
        return NULL;
    }
    loop->polled = true;
    return loop;
}

/* The most completions one rpc_loop_poll runs before it returns, so the
 * caller's own timers are never starved by a burst. */
#define RPC__POLL_BATCH 256

int rpc_loop_poll(rpc_loop *loop, int64_t timeout_ns)
{
    gpr_timespec deadline = gpr_inf_past(GPR_CLOCK_MONOTONIC);
    if (timeout_ns == INT64_MAX)
        deadline = gpr_inf_future(GPR_CLOCK_MONOTONIC);
    else if (timeout_ns > 0)
        deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                gpr_time_from_nanos(timeout_ns, GPR_TIMESPAN));
    int n = 0;
    while (n < RPC__POLL_BATCH) {
        grpc_event ev = grpc_completion_queue_next(loop->cq, deadline, NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return n > 0 ? n : -1;
        if (ev.type != GRPC_OP_COMPLETE)
            break; /* the wait ran out */
        rpc__tag *tag = ev.tag;
        tag->fn(tag, ev.success != 0);
        n++;
        deadline = gpr_inf_past(GPR_CLOCK_MONOTONIC); /* the rest: only what waits */
    }
    return n;
}

void rpc_loop_stop(rpc_loop *loop)
{
    if (loop == NULL)
        return;
    /* Calls still pending complete before the queue reports shutdown. */
    rpc__loop_shutdown(loop);
    free(loop);
}

static void rpc__shared_loop_start(void)
{
    shared_loop = rpc_loop_start("rpc-client");
}

rpc_loop *rpc__client_loop_for(const rpc_client_opts *opts)
{
    if (opts && opts->loop)
        return opts->loop;
    if (rpc__tls_loop)
        return rpc__tls_loop;
    pthread_once(&shared_once, rpc__shared_loop_start);
    return shared_loop;
}

void rpc_init(void)
{
    /* A server of ours may hold tens of thousands of connections: use the
     * whole open-file allowance the system grants, not the shell's soft
     * default. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    rpc__absl_tune();
    grpc_init();
}

void rpc_shutdown(void)
{
    if (shared_loop) {
        rpc_loop_stop(shared_loop);
        shared_loop = NULL;
    }
    grpc_shutdown();
}

char *rpc__read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) != 0)
        goto fail;
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto fail;
    buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
        goto fail;
    buf[n] = '\0';
    fclose(f);
    return buf;
fail:
    free(buf);
    fclose(f);
    return NULL;
}

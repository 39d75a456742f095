/*
 * bare-echo — the smallest server one can write on the C core batch API,
 * answering /grpc.health.v1.Health/Check with SERVING from a registered
 * method whose payload arrives with the call (one batch per reply). It is
 * the baseline the runtime (rpc-ping-server, which serves the same method
 * through rpc/) is measured against in docs/BENCHMARKS.md.
 *
 *   bare-echo PORT [THREADS] [fail]     (stops on SIGINT/SIGTERM)
 *
 * It also holds /grpc.health.v1.Health/Watch streams open (bare_watch in
 * bare_server.h), for the floor benchmark of quiet connections.
 *
 * With "fail" every call is answered as the gateway's limiter answers a
 * call over budget: no message, RESOURCE_EXHAUSTED with the same details
 * and scrabble-reason trailer. That is the C core's own cost of such a
 * rejection, the floor under the gateway's hammer figure.
 */
#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bare_server.h"

typedef struct echo_call {
    int replying;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array md;
    grpc_byte_buffer *req;
    grpc_byte_buffer *reply;
    int cancelled;
    grpc_slice details;   /* fail mode: the status details */
    grpc_metadata reason; /* fail mode: the scrabble-reason trailer */
} echo_call;

static bare_server bare;
static grpc_server *server;
static void *method;
static int fail_mode;

static void echo_request(grpc_completion_queue *cq)
{
    echo_call *c = calloc(1, sizeof(*c));
    grpc_metadata_array_init(&c->md);
    grpc_server_request_registered_call(server, method, &c->call, &c->deadline, &c->md, &c->req, cq,
                                        cq, c);
}

static void *echo_worker(void *arg)
{
    grpc_completion_queue *cq = arg;
    /* HealthCheckResponse{status: SERVING} */
    static const unsigned char serving[] = {0x08, 0x01};
    for (int i = 0; i < 16; i++) {
        echo_request(cq);
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
        echo_call *c = ev.tag;
        if (!c->replying) {
            if (!ev.success) {
                grpc_metadata_array_destroy(&c->md);
                free(c);
                continue;
            }
            echo_request(cq);
            c->replying = 1;
            c->details = grpc_slice_from_static_string("too many list calls; slow down");
            c->reason.key = grpc_slice_from_static_string("scrabble-reason");
            c->reason.value = grpc_slice_from_static_string("rate_limited");
            grpc_op ops[4];
            memset(ops, 0, sizeof(ops));
            size_t n = 0;
            ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
            if (!fail_mode) {
                grpc_slice s = grpc_slice_from_static_buffer(serving, sizeof(serving));
                c->reply = grpc_raw_byte_buffer_create(&s, 1);
                ops[n].op = GRPC_OP_SEND_MESSAGE;
                ops[n++].data.send_message.send_message = c->reply;
            }
            ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
            if (fail_mode) {
                ops[n].data.send_status_from_server.status = GRPC_STATUS_RESOURCE_EXHAUSTED;
                ops[n].data.send_status_from_server.status_details = &c->details;
                ops[n].data.send_status_from_server.trailing_metadata_count = 1;
                ops[n].data.send_status_from_server.trailing_metadata = &c->reason;
            } else {
                ops[n].data.send_status_from_server.status = GRPC_STATUS_OK;
            }
            n++;
            ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
            ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
            grpc_call_start_batch(c->call, ops, n, c, NULL);
        } else {
            if (c->req)
                grpc_byte_buffer_destroy(c->req);
            if (c->reply)
                grpc_byte_buffer_destroy(c->reply);
            grpc_metadata_array_destroy(&c->md);
            grpc_call_unref(c->call);
            free(c);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bare-echo PORT [THREADS] [fail]\n");
        return 2;
    }
    int nthreads = argc > 2 ? atoi(argv[2]) : 1;
    if (nthreads < 1 || nthreads > BARE_MAX_THREADS)
        nthreads = 1;
    fail_mode = argc > 3 && strcmp(argv[3], "fail") == 0;
    bare_server *b = &bare;
    int port = bare_server_listen(b, argv[1], "/grpc.health.v1.Health/Check", nthreads);
    if (port == 0) {
        fprintf(stderr, "bare-echo: cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    server = b->server;
    method = b->method;
    bare_server_start(b, echo_worker);
    printf("bare-echo listening on %d with %d threads\n", port, nthreads);
    fflush(stdout);
    bare_server_wait_and_stop(b);
    grpc_shutdown();
    return 0;
}

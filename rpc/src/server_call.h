/*
 * server_call.h — what server.c (workers, method registry, lifecycle) and
 * call.c (the per-call state machine) share: the server and call records.
 * Private to rpc/src; handlers see only the opaque types of rpc/rpc.h.
 */
#ifndef RPC_SERVER_CALL_H
#define RPC_SERVER_CALL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "rpc/metrics.h"
#include "rpc/trace.h"

#define RPC__REQUESTS_PER_METHOD 4 /* outstanding request_call per method per worker */
#define RPC__GENERIC_REQUESTS 2
#define RPC__MAX_SERVICES 16
#define RPC__MAX_METHODS 128
#define RPC__NCODES 17 /* gRPC status codes 0..16 */

typedef enum rpc__call_state {
    RPC__CALL_REQUESTED, /* waiting for a call to arrive */
    RPC__CALL_ACTIVE,    /* handler owns it */
    RPC__CALL_FINISHING, /* final status batch started */
} rpc__call_state;

typedef enum rpc__method_kind {
    RPC__METHOD_HANDLER,       /* unary or server streaming */
    RPC__METHOD_BIDI,          /* internal: request/reply per message */
    RPC__METHOD_UNIMPLEMENTED, /* registered without a handler */
} rpc__method_kind;

typedef struct rpc__method {
    char path[160];
    void *registered; /* grpc_server_register_method handle */
    rpc__method_kind kind;
    const ProtobufCMessageDescriptor *input;
    rpc_handler handler;
    size_t max_request_bytes; /* 0: no limit of its own */
    bool decode_later;
    rpc__bidi_fn bidi;
    void *ctx;
    metric *in_flight;
    metric *latency;
    atomic_uintptr_t by_code[RPC__NCODES]; /* metric *, created on first use */
} rpc__method;

/* One queued outbound stream message. */
typedef struct rpc__outmsg {
    struct rpc__outmsg *next;
    grpc_byte_buffer *bb;
} rpc__outmsg;

struct rpc_call {
    rpc__tag arrive_tag;
    rpc__tag close_tag;
    rpc__tag send_tag; /* stream messages and the final status */
    rpc__tag recv_tag; /* bidi only: next request message */
    rpc_server *server;
    rpc_loop *loop;
    rpc__method *method; /* NULL for a generic (unknown method) call */
    grpc_call *call;
    grpc_call_details details; /* generic calls only */
    gpr_timespec deadline;
    grpc_metadata_array request_md;
    grpc_byte_buffer *request;
    rpc_arena *arena;
    int64_t started_ns;
    rpc_call *next_free;   /* on the loop's free list */
    rpc__guard_conn *conn; /* its client connection in the abuse guard */
    rpc_trace trace;       /* set at arrival (trace.c); .on false: none */
    bool guard_admitted;   /* ... which let it through */
    bool close_posted;     /* RECV_CLOSE_ON_SERVER is in flight (own batch or the final one) */
    bool close_in_final;   /* ... as part of the final status batch */
    atomic_int refs;
    atomic_bool cancelled;
    int close_cancelled;
    rpc__call_state state;
    rpc_cancel_cb on_cancel;
    void *on_cancel_arg;
    /* Outbound side, guarded by mu. */
    pthread_mutex_t mu;
    bool finish_requested;
    bool sending;
    bool initial_md_sent;
    bool closed; /* the client is gone: drop sends */
    int queue_len, queue_limit;
    rpc__outmsg *queue_head, *queue_tail;
    grpc_byte_buffer *in_flight_msg;
    grpc_byte_buffer *final_msg;
    rpc_status final_status;
    grpc_status_code sent_code;
    grpc_slice status_details;
    grpc_metadata trailing[2]; /* scrabble-reason, scrabble-trace-id */
    size_t trailing_count;
};

struct rpc_server {
    rpc_server_config cfg;
    char label[32];
    grpc_server *server;
    grpc_completion_queue *shutdown_cq;
    rpc_loop *workers;
    int nworkers;
    rpc__method methods[RPC__MAX_METHODS];
    int nmethods;
    const char *service_names[RPC__MAX_SERVICES];
    int nservices;
    rpc__health *health;
    void *reflection;
    metrics_registry *metrics;
    metric *calls_live; /* calls arrived and not freed: the drain waits on it */
    rpc__guard *guard;  /* live-call bounds and stream-abuse defence */
    atomic_bool shutting_down;
    bool started, stopped;
    void (*on_drain)(void *arg);
    void *on_drain_arg;
    rpc__authz *authz;   /* identity checks at dispatch (identity.c) */
    rpc__tracer *tracer; /* trace context policy and span lines (trace.c) */
};

static inline int64_t rpc__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Posts one request for method m (or a generic one when m is NULL) on the
 * worker's queue: a call object waits in REQUESTED for a call to arrive.
 * RPC_OK or RPC_ERROR (out of memory, or the core refused). */
int rpc__request(rpc_server *s, rpc_loop *loop, rpc__method *m);
/* Frees the loop's reusable call objects (at shutdown, on the loop's
 * thread or after it has stopped). */
void rpc__loop_free_calls(rpc_loop *loop);

#endif

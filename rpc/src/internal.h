/*
 * internal.h — what the runtime's own files share and nothing else sees.
 */
#ifndef RPC_INTERNAL_H
#define RPC_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "rpc/rpc.h"

#define rpc__container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Everything put on a completion queue is an rpc__tag: the loop calls
 * fn(tag, ok) on the queue's thread. */
typedef struct rpc__tag {
    void (*fn)(struct rpc__tag *tag, bool ok);
} rpc__tag;

/* A thread draining one completion queue. Server workers and client loops
 * are both loops. */
struct rpc_loop {
    grpc_completion_queue *cq;
    pthread_t thread;
    int worker_index; /* >= 0 for a server worker, -1 for a client loop */
    char name[32];
    atomic_long pending; /* client calls started on this loop, not completed */
    bool started;
    bool polled; /* rpc_loop_create: its owner's thread runs it */
    /* Server call objects finished on this loop, kept for reuse (touched
     * only by the loop's own thread). */
    struct rpc_call *free_calls;
    int nfree_calls;
};

/* Creates the queue (not the thread). */
int rpc__loop_init(rpc_loop *loop, const char *name, int worker_index);
int rpc__loop_run(rpc_loop *loop);       /* starts the thread */
void rpc__loop_shutdown(rpc_loop *loop); /* shuts the queue down, joins */

/* The loop the calling thread drains, or NULL. */
rpc_loop *rpc__current_loop(void);
/* The loop client completions should land on for this thread. */
rpc_loop *rpc__client_loop_for(const rpc_client_opts *opts);

/* Absolute realtime deadline for a client call. */
gpr_timespec rpc__client_deadline(const rpc_client_opts *opts);

/* Builds an rpc_status from a received status + trailing metadata. */
void rpc__status_from_core(rpc_status *st, grpc_status_code code, grpc_slice details,
                           const grpc_metadata_array *trailing);

/* The channel argument that turns HTTP/2 bandwidth-delay probing off, for
 * servers and clients alike. The probe sizes flow-control windows for bulk
 * transfers; our messages are a few hundred bytes, far below the default
 * window, so it never changes a window here. What it costs is per
 * connection: after data arrives it sends a PING, reads the ack and arms a
 * timer for the next probe. With thousands of quiet connections (players)
 * that is a timer-thread wakeup, a write and a read for a large share of
 * calls (issue 18, scripts/bench/stack_wakeups.sh). */
static inline grpc_arg rpc__no_bdp_probe(void)
{
    return (grpc_arg){
        .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_HTTP2_BDP_PROBE, .value.integer = 0};
}

/* Reads a whole PEM file into a malloc'd NUL-terminated string (caller
 * frees), or NULL. */
char *rpc__read_file(const char *path);

/* Health: per-server registry of service statuses and Watch streams. */
typedef struct rpc__health rpc__health;
rpc__health *rpc__health_create(void);
void rpc__health_destroy(rpc__health *h);
void rpc__health_set(rpc__health *h, const char *service, bool serving);
void rpc__health_set_all(rpc__health *h, bool serving);
int rpc__health_register(rpc_server *s, rpc__health *h);

/* Reflection over the embedded descriptor set. */
void *rpc__reflection_register(rpc_server *s); /* NULL on failure */
void rpc__reflection_free(void *ctx);

/* A bidi-streaming method served by a function that maps each request
 * message to one reply message (allocated in `arena`, freed after send). */
typedef ProtobufCMessage *(*rpc__bidi_fn)(rpc_call *call, const ProtobufCMessage *req,
                                          rpc_arena *arena, void *ctx);
int rpc__server_add_bidi(rpc_server *s, const char *path, const ProtobufCMessageDescriptor *input,
                         rpc__bidi_fn fn, void *ctx);

/* The stream-abuse guard (conn_guard.c): live calls per connection and per
 * process, connections shut down for cancelling much faster than they
 * complete, and a penalty box per client address. */
typedef enum rpc__guard_reason {
    RPC__GUARD_OK = -1,
    RPC__GUARD_CONN_LIMIT = 0, /* the connection holds max_calls_per_connection */
    RPC__GUARD_SERVER_LIMIT,   /* the process holds max_calls */
    RPC__GUARD_ABUSE,          /* the connection is being shut down for abuse */
    RPC__GUARD_PENALTY,        /* its address is in the penalty box */
    RPC__GUARD_NREASONS
} rpc__guard_reason;
typedef struct rpc__guard rpc__guard;
typedef struct rpc__guard_conn rpc__guard_conn;
struct metrics_registry;
/* Turns abseil's mutex deadlock detector off (absl_tune.cc); before grpc_init. */
void rpc__absl_tune(void);

/* NULL on out of memory. Free with rpc__guard_destroy. */
rpc__guard *rpc__guard_create(const rpc_server_config *cfg, struct metrics_registry *m);
void rpc__guard_destroy(rpc__guard *g);
/* The bound port: only sockets on it are ever shut down. */
void rpc__guard_set_port(rpc__guard *g, int port);
/* At arrival: counts the call on its connection (*conn, to hand back to
 * rpc__guard_end whatever the verdict) and says whether to serve it. */
rpc__guard_reason rpc__guard_admit(rpc__guard *g, grpc_call *call, rpc__guard_conn **conn);
/* When the call is freed; client_cancelled: the client cancelled it
 * before its deadline (a reset); admitted: rpc__guard_admit said OK. May
 * shut the connection down. */
void rpc__guard_end(rpc__guard *g, rpc__guard_conn *conn, bool client_cancelled, bool admitted);
/* Requests at least this large leave megabytes in malloc's free lists once
 * the core and the decoder are done with them (see rpc__guard_note_bulk). */
#define RPC__GUARD_BULK_BYTES (1u << 20)
/* A request of RPC__GUARD_BULK_BYTES or more arrived: once they stop, the
 * memory is handed back as after a stream-abuse attack. */
void rpc__guard_note_bulk(rpc__guard *g);
/* The scrabble-reason token and the status code of a refusal. */
const char *rpc__guard_reason_name(rpc__guard_reason r);
grpc_status_code rpc__guard_reason_code(rpc__guard_reason r);
/* shutdown(SHUT_RDWR) the socket of `peer` ("ipv4:a.b.c.d:port") whose
 * local port is local_port (any when <= 0); never closes it. The
 * descriptor, -1 when none matched, -2 when it matched a connection no
 * longer established (the peer had gone). */
int rpc__guard_shutdown_peer(const char *peer, int local_port);
/* Who may call what on an internal port (identity.c). */
typedef struct rpc__authz rpc__authz;
rpc__authz *rpc__authz_create(const rpc_server_config *cfg); /* NULL: out of memory */
void rpc__authz_destroy(rpc__authz *az);
/* Whether calls are checked (an internal port with identities on). */
bool rpc__authz_enforced(const rpc__authz *az);
int rpc__authz_add(rpc__authz *az, const ProtobufCServiceDescriptor *svc,
                   const rpc_allow_rule *rules);
/* true: the call may go on; false: it was failed (UNAUTHENTICATED or
 * PERMISSION_DENIED with a reason) and must not be run. */
bool rpc__authz_check(const rpc__authz *az, rpc_call *c);

/* Trace context on the server side (trace.c): whether to trust a caller's
 * traceparent and its sampled flag, and the span lines. */
typedef struct rpc__tracer rpc__tracer;
struct rpc_trace;
/* NULL on out of memory. Free with rpc__tracer_destroy. */
rpc__tracer *rpc__tracer_create(const rpc_server_config *cfg, struct metrics_registry *m);
void rpc__tracer_destroy(rpc__tracer *tr);
/* At arrival: the call's trace from its request metadata (continued when
 * the traceparent is valid, fresh otherwise; off when tracing is off). */
void rpc__trace_accept(rpc__tracer *tr, const grpc_metadata_array *md, struct rpc_trace *out);
/* When the call is freed: its span line, if sampled or a server-side
 * failure within the per-second budget. */
void rpc__trace_end(rpc__tracer *tr, const struct rpc_trace *t, const char *method,
                    grpc_status_code code, int64_t dur_ns);

/* Names of the services registered (for reflection's list_services). */
size_t rpc__server_service_names(rpc_server *s, const char **out, size_t max);

#endif

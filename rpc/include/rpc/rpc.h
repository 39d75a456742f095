/*
 * rpc.h — the gRPC C-core runtime every binary of the system shares.
 *
 * The C core offers completion queues and batches; this runtime turns them
 * into: a server with N worker threads (one completion queue each) that
 * decodes each request into a per-call arena and hands it to a handler; a
 * client with long-lived channels whose async calls complete as callbacks on
 * the caller's worker thread; health, reflection and Prometheus metrics on
 * every server; graceful shutdown on SIGTERM/SIGINT.
 *
 * Threading contract:
 * - A handler runs on a worker thread. It must finish its call exactly once
 *   (rpc_call_reply, rpc_call_fail, rpc_call_reply_raw, or for a stream
 *   rpc_call_finish), now or later, from any thread.
 * - An async client call started on a worker thread completes (its callback
 *   runs) on that same worker thread, so a handler that calls a downstream
 *   service and finishes in the callback needs no locks. Started from any
 *   other thread, it completes on the runtime's shared client loop (or the
 *   loop named in rpc_client_opts).
 * - rpc_stream_send may be called from any thread.
 *
 * Memory contract: a request message, and everything a handler allocates
 * from rpc_call_arena(), lives until the call is finished and its last
 * completion has arrived; the runtime then frees it all at once.
 */
#ifndef RPC_RPC_H
#define RPC_RPC_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/addr.h"
#include "rpc/arena.h"
#include "rpc/status.h"

/* ------------------------------------------------------------------ */
/* Process set-up                                                      */

/* Raises the open-file soft limit to the hard limit, blocks
 * SIGINT/SIGTERM/SIGPIPE in the calling thread (so every thread the core
 * creates inherits the mask) and calls grpc_init(). Call it first thing in
 * main(), before any other thread exists. */
void rpc_init(void);
/* grpc_shutdown(). */
void rpc_shutdown(void);

/* ------------------------------------------------------------------ */
/* Transport security                                                  */

/* TLS is off when cert_file is empty. With ca_file set on a server, clients
 * must present a certificate signed by that CA (mutual TLS); on a client,
 * ca_file is the root used to verify the server, and cert/key are the
 * client's own certificate for mutual TLS. Paths are PEM files. */
typedef struct rpc_tls_config {
    char cert_file[256];
    char key_file[256];
    char ca_file[256];
    /* Client only: the name to verify in the server certificate (SAN), when
     * it differs from the target host. */
    char server_name[128];
} rpc_tls_config;

/* ------------------------------------------------------------------ */
/* Server                                                              */

typedef struct rpc_server_config {
    char listen[128];           /* "127.0.0.1:7000"; port 0 picks a free one */
    char metrics_listen[128];   /* "127.0.0.1:9000"; "" turns metrics off */
    int workers;                /* worker threads, each with its own queue */
    int max_message_bytes;      /* larger requests: RESOURCE_EXHAUSTED */
    int max_concurrent_streams; /* HTTP/2 streams per client connection */
    int keepalive_ms;           /* server keepalive ping interval */
    int shutdown_grace_ms;      /* in-flight calls get this long on SIGTERM */
    int stream_queue_limit;     /* default per-stream queued messages */
    /* Stream-abuse guard (rpc/src/conn_guard.c, docs/SECURITY.md). Calls
     * that arrived and are not yet freed, per client connection and per
     * process: past either, a call is refused with RESOURCE_EXHAUSTED before
     * any handler work. */
    int max_calls_per_connection;
    int max_calls;
    /* A connection whose client cancels more than this many calls before
     * their deadline, and more than it completes (both counts halve every
     * 10 s), is shut down; 0 turns the check off. */
    int max_resets;
    /* After such a close, calls from the same address are refused (and
     * their connections shut down) for this long; 0: no penalty box. */
    int abuse_penalty_ms;
    /* The metrics/health HTTP endpoint: idle timeout, connections per
     * client address, connections in all. */
    int metrics_timeout_ms;
    int metrics_conns_per_address;
    int metrics_conns;
    /* Trace context (rpc/trace.h): off turns trace ids, traceparent
     * propagation, the scrabble-trace-id trailer and span lines off; one
     * new trace in trace_sample is sampled (0: none). */
    bool trace;
    int trace_sample;
    rpc_tls_config tls; /* this server's own port */
    /* The identity this process presents when it calls other services of
     * ours (mutual TLS between services); plaintext when empty. Services
     * pass it to rpc_channel_create for their downstream channels. */
    rpc_tls_config peer_tls;
    /* Service identities (rpc_identity_setup). certs_dir holds ca.crt and
     * <identity>.crt/.key; empty TLS paths above are filled from it. */
    char certs_dir[256];
    /* Benchmarks only: plaintext between services, no identity checks. */
    bool insecure_internal;
    /* Set by rpc_identity_setup, not options: this process's identity and
     * whether its gRPC port serves other services only (then every call
     * must come from an allowed identity, rpc_server_allow). */
    char identity[32];
    bool internal_port;
} rpc_server_config;

/* Fills the defaults every service shares, with its own ports. */
void rpc_server_config_defaults(rpc_server_config *cfg, int grpc_port, int metrics_port);

typedef struct rpc_server rpc_server;
typedef struct rpc_call rpc_call;

/* Handles one inbound call. `request` is decoded into the call's arena
 * (a valid message of the method's input type; a body that does not decode
 * never reaches the handler: the runtime answers INVALID_ARGUMENT
 * bad_request; a body over the method's max_request_bytes is refused
 * RESOURCE_EXHAUSTED request_too_large before protobuf-c sees it). With
 * decode_later, `request` is NULL and the handler decodes with
 * rpc_call_decode once it has admitted the call. `svc` is the pointer given
 * to rpc_server_add_service. */
typedef void (*rpc_handler)(rpc_call *call, const ProtobufCMessage *request, void *svc);

typedef struct rpc_method_impl {
    const char *name; /* method name as in the .proto, e.g. "CommitMove" */
    rpc_handler handler;
    /* The largest request body the method can legitimately carry, in
     * bytes; 0: only the server's max_message_bytes applies. */
    size_t max_request_bytes;
    /* The handler runs before the body is decoded (request NULL), so it
     * can refuse a call (no token, throttled) whatever the body holds; it
     * then calls rpc_call_decode. */
    bool decode_later;
} rpc_method_impl;

/* Creates a server; nothing listens until rpc_server_start. NULL on error
 * (message in err). Free with rpc_server_destroy. */
rpc_server *rpc_server_create(const rpc_server_config *cfg, const char *service_label, char *err,
                              size_t errlen);

/* Registers every method of `svc` (from protoc-c); methods listed in `impls`
 * (terminated by an entry with name NULL) get their handler, the others
 * answer UNIMPLEMENTED. The service is announced by health (SERVING once the
 * server starts) and by reflection. Returns 0, or -1 on an unknown name. */
int rpc_server_add_service(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                           const rpc_method_impl *impls, void *svc_ctx);

/* Binds, starts the workers and the metrics endpoint. Returns the bound gRPC
 * port, or 0 on failure (message in err). */
int rpc_server_start(rpc_server *s, char *err, size_t errlen);

/* Blocks until SIGTERM or SIGINT, then drains: stops accepting calls, lets
 * in-flight calls finish within shutdown_grace_ms, cancels what is left,
 * stops the workers. Returns 0. */
int rpc_server_wait(rpc_server *s);

/* Drains as rpc_server_wait does, without waiting for a signal (tests,
 * embedded use). */
void rpc_server_stop(rpc_server *s);
void rpc_server_destroy(rpc_server *s);

/* Called once when draining starts (SIGTERM, rpc_server_stop), after
 * health turns NOT_SERVING and before in-flight calls are awaited: the place
 * to end long-lived streams so the drain does not wait for them. */
void rpc_server_on_drain(rpc_server *s, void (*fn)(void *arg), void *arg);

/* Health status of one service name ("" is the whole server). */
void rpc_server_set_serving(rpc_server *s, const char *service, bool serving);

/* The server's metrics registry (services add their own metrics). */
struct metrics_registry *rpc_server_metrics(rpc_server *s);

/* ------------------------------------------------------------------ */
/* Service identities (mutual TLS between our services)                */

/* Every service of ours has an identity, carried in its certificate as
 * the URI SAN spiffe://scrabble/<identity> (RPC_IDENTITY_URI_PREFIX). */
#define RPC_IDENTITY_URI_PREFIX "spiffe://scrabble/"

/* Call after loading the config, before rpc_server_create. Records
 * `identity` ("game-svc") and whether the gRPC port is internal (serves
 * other services only: game-svc, store-svc). Unless insecure_internal is
 * set, fills the empty peer_tls paths (and, for an internal port, the tls
 * paths) from certs_dir: ca.crt, <identity>.crt, <identity>.key, and
 * checks that every file is readable. Returns 0, or -1 with a message
 * naming the missing file in err. Logs a warning when insecure_internal
 * is on. */
int rpc_identity_setup(rpc_server_config *cfg, const char *identity, bool internal_port, char *err,
                       size_t errlen);

/* The TLS settings for a channel to our service `peer` ("store-svc"):
 * cfg->peer_tls, with the server's certificate checked for the DNS name
 * `peer` (every service certificate carries DNS:<identity>) unless an
 * explicit peer-tls-server-name is set. All empty (plaintext) when
 * insecure_internal is on. */
void rpc_identity_peer_tls(const rpc_server_config *cfg, const char *peer, rpc_tls_config *out);

/* The TLS settings of a tool or test that calls our service `server` as
 * identity `as`, from a certificates directory (ca.crt, <as>.crt,
 * <as>.key). All empty (plaintext) when certs_dir is NULL or empty. */
void rpc_identity_tls(const char *certs_dir, const char *as, const char *server,
                      rpc_tls_config *out);

/* Who may call a method: `callers` is a space-separated list of
 * identities ("gateway game-svc"). */
typedef struct rpc_allow_rule {
    const char *method; /* method name as in the .proto, e.g. "CommitMove" */
    const char *callers;
} rpc_allow_rule;

/* On an internal port, grants the methods of `svc` to identities; rules end
 * with an entry whose method is NULL. A method without a rule is refused
 * to everyone (PERMISSION_DENIED). Health and reflection are open to every
 * identity of ours. Without identities (insecure_internal, or a public
 * port) the rules are kept but not enforced. Returns 0, or -1 when a rule
 * names no method of `svc`. Call before rpc_server_start. */
int rpc_server_allow(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                     const rpc_allow_rule *rules);

/* ------------------------------------------------------------------ */
/* Inbound call                                                        */

/* The caller's service identity ("gateway") from its certificate, copied
 * into the call's arena; NULL when it presented none of ours. */
const char *rpc_call_peer_identity(rpc_call *call);
/* True when the caller is `identity`, or when this server runs without
 * identities (insecure_internal): what a handler asks before putting
 * something only `identity` may see into a reply. */
bool rpc_call_peer_is(rpc_call *call, const char *identity);

/* The call's arena: free with the call. */
rpc_arena *rpc_call_arena(rpc_call *call);
/* An allocator on the call's arena, for protobuf-c unpack. */
ProtobufCAllocator *rpc_call_allocator(rpc_call *call);
/* First value of request metadata `key` (lower case), or NULL; the bytes are
 * not NUL-terminated: *len has the length. Valid while the call lives. */
const char *rpc_call_metadata(rpc_call *call, const char *key, size_t *len);
/* Same, copied NUL-terminated into the call's arena. */
const char *rpc_call_metadata_str(rpc_call *call, const char *key);
/* The raw request bytes (for forwarding unchanged). Owned by the call. */
grpc_byte_buffer *rpc_call_request_bytes(rpc_call *call);
/* Length of the request body in bytes (0 when none was sent). */
size_t rpc_call_request_size(rpc_call *call);
/* For a decode_later method: decodes the request into the call's arena,
 * checking max_request_bytes first. NULL when the call was finished
 * instead (RESOURCE_EXHAUSTED request_too_large or INVALID_ARGUMENT
 * bad_request): the handler must then not touch the call again. Call it
 * at most once, on the thread that owns the call (a worker). */
ProtobufCMessage *rpc_call_decode(rpc_call *call);
/* The client's address without the port ("127.0.0.1", "::1"), copied into
 * the call's arena; "" when the core does not know it. */
const char *rpc_call_peer_address(rpc_call *call);
/* Its pure part is rpc_peer_host (rpc/addr.h). */
/* The call's trace context (rpc/trace.h); ->on is false when tracing is
 * off. Valid while the call lives. */
const struct rpc_trace *rpc_call_trace(rpc_call *call);
/* Full method path, e.g. "/scrabble.v1.Edge/GetState". */
const char *rpc_call_method(rpc_call *call);
/* Milliseconds until the call's deadline (INT64_MAX when none; <= 0 past). */
int64_t rpc_call_remaining_ms(rpc_call *call);
/* True once the client cancelled or the deadline passed. */
bool rpc_call_cancelled(rpc_call *call);
/* The underlying core call (to parent downstream calls). */
grpc_call *rpc_call_core(rpc_call *call);

/* Called once, on a worker thread, when the call ends without the handler
 * having finished it (client cancel, deadline, disconnect). Used by stream
 * handlers to unhook the call from whatever feeds it; the call stays valid
 * until the callback returns, and the handler must then finish it (the
 * finish is dropped quietly). */
typedef void (*rpc_cancel_cb)(rpc_call *call, void *arg);
void rpc_call_on_cancel(rpc_call *call, rpc_cancel_cb cb, void *arg);

/* Finishes a unary call with OK and `reply` (packed immediately; the message
 * may live in the arena). */
void rpc_call_reply(rpc_call *call, const ProtobufCMessage *reply);
/* Finishes a call with an error status, a stable reason (may be NULL) for
 * the `scrabble-reason` trailer, and a printf-style human message. */
void rpc_call_fail(rpc_call *call, grpc_status_code code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rpc_call_fail_status(rpc_call *call, const rpc_status *st);
/* Finishes a call with pre-packed reply bytes (taken over; may be NULL) and
 * a status (the gateway's forwarding path). */
void rpc_call_reply_raw(rpc_call *call, grpc_byte_buffer *reply, const rpc_status *st);

/* Server streaming: queue one message. Returns RPC_OK, RPC_EFULL when the
 * queue already holds the stream's limit (the message is not queued), or
 * RPC_ECLOSED when the call has ended. Thread-safe. */
int rpc_stream_send(rpc_call *call, const ProtobufCMessage *msg);
/* Sends the response headers now, so the client sees the stream open
 * before the first message (otherwise they go with the first message).
 * Thread-safe; does nothing once anything was sent. */
void rpc_stream_begin(rpc_call *call);
/* Per-stream queue limit (default: config stream_queue_limit). */
void rpc_stream_set_limit(rpc_call *call, int max_queued);
/* Messages queued on the stream and not yet handed to the core (the one
 * being written is not counted); what rpc_stream_send compares with the
 * limit. Thread-safe; for saturation gauges. */
int rpc_stream_queued(rpc_call *call);
/* Ends a stream after the queued messages are sent: OK when code is
 * GRPC_STATUS_OK. Thread-safe; later calls are ignored. */
void rpc_call_finish(rpc_call *call, grpc_status_code code, const char *reason, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

/* The worker thread's index (0..workers-1), or -1 off a worker. */
int rpc_current_worker(void);

/* ------------------------------------------------------------------ */
/* Client                                                              */

typedef struct rpc_channel rpc_channel;
typedef struct rpc_loop rpc_loop;

typedef struct rpc_channel_opts {
    /* Keep this channel on its own TCP connection (one per simulated
     * client); otherwise channels with the same target share one. */
    bool own_connection;
    int keepalive_ms;          /* 0: the runtime default (no pings) */
    int max_message_bytes;     /* 0: default */
    const rpc_tls_config *tls; /* NULL or empty cert/ca: plaintext */
} rpc_channel_opts;

/* A long-lived channel to `target` ("127.0.0.1:7100" or "ipv4:..." or
 * "dns:///host:port"). It connects lazily and reconnects with backoff by
 * itself. A dns: target that resolves to several addresses spreads calls
 * over all of them (round robin). Free with rpc_channel_destroy. */
rpc_channel *rpc_channel_create(const char *target, const rpc_channel_opts *opts);
void rpc_channel_destroy(rpc_channel *ch);
/* Asks the channel to connect now (it otherwise waits for the first call). */
void rpc_channel_connect(rpc_channel *ch);
/* true when the channel is READY. */
bool rpc_channel_ready(rpc_channel *ch);
/* The channel's connectivity state as a word (idle, connecting, ready,
 * transient_failure, shutdown), for messages. */
const char *rpc_channel_state(rpc_channel *ch);
const char *rpc_channel_target(const rpc_channel *ch);

/* A thread with a completion queue on which client calls complete. The
 * runtime has a shared one, started on first use; programs that drive many
 * calls (the load driver) start several. */
rpc_loop *rpc_loop_start(const char *name);
void rpc_loop_stop(rpc_loop *loop); /* waits for pending calls to complete */
/* A completion queue without a thread: the caller's own thread runs its
 * completions by calling rpc_loop_poll, e.g. between timers of its own.
 * Every completion then runs on that one thread, with no handoff from a
 * loop thread to it. Stop it with rpc_loop_stop from the polling thread
 * (it runs the completions still pending). */
rpc_loop *rpc_loop_create(const char *name);
/* Waits up to timeout_ns (<= 0: does not wait) for the first completion,
 * then runs it and any already waiting (a bounded batch) on the calling
 * thread. Returns how many ran, -1 once the queue is shut down. Another
 * thread cannot interrupt the wait: bound timeout_ns by how soon the
 * caller must look at anything else. */
int rpc_loop_poll(rpc_loop *loop, int64_t timeout_ns);

typedef struct rpc_metadata {
    const char *key; /* lower case */
    const char *value;
} rpc_metadata;

typedef struct rpc_client_opts {
    int64_t timeout_ms; /* 0: 5000 */
    rpc_call *parent;   /* the deadline is the earlier of the two */
    const rpc_metadata *md;
    size_t md_count;
    /* Decode the reply here (e.g. the inbound call's arena) so it outlives
     * the callback; NULL: the reply is freed when the callback returns. */
    rpc_arena *arena;
    rpc_loop *loop; /* NULL: as in the threading contract */
} rpc_client_opts;

/* `reply` is NULL unless st->code is OK. */
typedef void (*rpc_unary_cb)(void *arg, const rpc_status *st, ProtobufCMessage *reply);

/* Starts an async unary call. method is the full path
 * ("/scrabble.v1.Store/CommitMove"). Returns RPC_OK, or an error code (the
 * callback is then not called). */
int rpc_client_unary(rpc_channel *ch, const char *method, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *reply_desc, const rpc_client_opts *opts,
                     rpc_unary_cb cb, void *arg);

/* Raw variant: `req` is not consumed; `reply` is the callee's to destroy
 * (grpc_byte_buffer_destroy), NULL on error or when the server sent none. */
typedef void (*rpc_raw_cb)(void *arg, const rpc_status *st, grpc_byte_buffer *reply);
int rpc_client_raw(rpc_channel *ch, const char *method, grpc_byte_buffer *req,
                   const rpc_client_opts *opts, rpc_raw_cb cb, void *arg);

/* Blocking unary call, from any thread (tools, tests, start-up). On OK,
 * *reply is allocated with `alloc` (NULL: malloc; free with
 * protobuf_c_message_free_unpacked(*reply, alloc)). Returns st->code. */
grpc_status_code rpc_client_unary_sync(rpc_channel *ch, const char *method,
                                       const ProtobufCMessage *req,
                                       const ProtobufCMessageDescriptor *reply_desc,
                                       const rpc_client_opts *opts, ProtobufCAllocator *alloc,
                                       ProtobufCMessage **reply, rpc_status *st);

/* Server-streaming client call. on_msg gets each message (freed when it
 * returns); on_end is called exactly once with the final status, after which
 * the stream object is freed by the runtime. */
typedef struct rpc_client_stream rpc_client_stream;
typedef void (*rpc_stream_msg_cb)(void *arg, ProtobufCMessage *msg);
typedef void (*rpc_stream_end_cb)(void *arg, const rpc_status *st);
rpc_client_stream *rpc_client_stream_open(rpc_channel *ch, const char *method,
                                          const ProtobufCMessage *req,
                                          const ProtobufCMessageDescriptor *reply_desc,
                                          const rpc_client_opts *opts, rpc_stream_msg_cb on_msg,
                                          rpc_stream_end_cb on_end, void *arg);
/* Cancels; on_end still follows (CANCELLED). Safe until on_end has run. */
void rpc_client_stream_cancel(rpc_client_stream *st);

/* ------------------------------------------------------------------ */
/* Codec                                                               */

/* Packs a message into a new byte buffer (caller destroys). */
grpc_byte_buffer *rpc_pack(const ProtobufCMessage *msg);
/* Unpacks a byte buffer; NULL when the bytes are not a valid message. The
 * message is allocated with `alloc` (NULL: malloc). A NULL buffer decodes as
 * the empty message. */
ProtobufCMessage *rpc_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *bb,
                             ProtobufCAllocator *alloc);

/* Clears the unknown fields protobuf-c kept while decoding, in `msg` and
 * in every message nested in it, so a re-pack carries only fields of the
 * contract. Returns whether any were found. */
bool rpc_message_strip_unknown(ProtobufCMessage *msg);

/* "/<package>.<Service>/<Method>" for method `name` of `svc`, written into
 * buf; returns buf. */
const char *rpc_method_path(const ProtobufCServiceDescriptor *svc, const char *name, char *buf,
                            size_t len);

#endif

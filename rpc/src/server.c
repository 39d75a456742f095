/*
 * server.c — the server: workers, method registry, and the per-call state
 * machine.
 *
 * Every inbound call is an rpc_call whose life is:
 *
 *   REQUESTED --(arrives)--> ACTIVE --(finish batch sent)--> FINISHING --> freed
 *
 * On arrival the worker first posts the next request for that method (keeps
 * the queue stocked), posts RECV_CLOSE_ON_SERVER (so a client cancel is
 * seen), decodes the request into the call's arena and runs the handler. The
 * call is freed when both the close batch and the final status batch have
 * completed (two references). A stream's messages go one batch at a time
 * through a small queue guarded by the call's mutex, so handlers may send and
 * finish from any thread.
 */
#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "rpc/log.h"
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

static int64_t rpc__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */

void rpc_server_config_defaults(rpc_server_config *cfg, int grpc_port, int metrics_port);

rpc_server *rpc_server_create(const rpc_server_config *cfg, const char *service_label, char *err,
                              size_t errlen)
{
    rpc_server *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (s->cfg.workers < 1)
        s->cfg.workers = 1;
    if (s->cfg.stream_queue_limit < 1)
        s->cfg.stream_queue_limit = 256;
    snprintf(s->label, sizeof(s->label), "%s", service_label);

    grpc_arg args[6];
    int n = 0;
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER,
                   .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                   .value.integer = cfg->max_message_bytes > 0 ? cfg->max_message_bytes : 4 << 20};
    args[n++] = (grpc_arg){
        .type = GRPC_ARG_INTEGER,
        .key = GRPC_ARG_MAX_CONCURRENT_STREAMS,
        .value.integer = cfg->max_concurrent_streams > 0 ? cfg->max_concurrent_streams : 1000};
    /* The keepalive timer costs CPU per connection; a long interval keeps
     * idle connections nearly free while still reaping dead peers. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_KEEPALIVE_TIME_MS,
                           .value.integer = cfg->keepalive_ms > 0 ? cfg->keepalive_ms : 7200000};
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0};
    /* Clients may ping as often as their own keepalive says. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                           .value.integer = 1000};
    grpc_channel_args cargs = {.num_args = (size_t)n, .args = args};
    s->server = grpc_server_create(&cargs, NULL);
    s->shutdown_cq = grpc_completion_queue_create_for_pluck(NULL);
    s->nworkers = s->cfg.workers;
    s->workers = calloc((size_t)s->nworkers, sizeof(rpc_loop));
    for (int i = 0; i < s->nworkers; i++) {
        char name[48];
        snprintf(name, sizeof(name), "%.20s-w%d", s->label, i);
        rpc__loop_init(&s->workers[i], name, i);
        grpc_server_register_completion_queue(s->server, s->workers[i].cq, NULL);
    }
    s->metrics = metrics_registry_create();
    s->calls_live = metrics_gauge(s->metrics, "rpc_server_calls_live", NULL,
                                  "Inbound calls arrived and not yet freed");
    /* Plaintext between services is a choice an operator must see. */
    metric *insecure = metrics_gauge(s->metrics, "rpc_insecure_internal", NULL,
                                     "1 when --insecure-internal turned off mutual TLS and "
                                     "identity checks between services");
    metric_set(insecure, cfg->insecure_internal ? 1 : 0);
    s->authz = rpc__authz_create(cfg);
    if (rpc__authz_enforced(s->authz) && (cfg->tls.cert_file[0] == '\0' || !cfg->tls.ca_file[0])) {
        snprintf(err, errlen, "an internal port needs mutual TLS (rpc_identity_setup)");
        rpc_server_destroy(s);
        return NULL;
    }
    s->health = rpc__health_create();
    s->guard = rpc__guard_create(&s->cfg, s->metrics);
    s->tracer = rpc__tracer_create(&s->cfg, s->metrics);
    if (s->calls_live == NULL || s->guard == NULL || s->authz == NULL || s->tracer == NULL ||
        rpc__health_register(s, s->health) != RPC_OK ||
        (s->reflection = rpc__reflection_register(s)) == NULL) {
        snprintf(err, errlen, "could not set up metrics, health or reflection");
        rpc_server_destroy(s);
        return NULL;
    }
    return s;
}

static rpc__method *rpc__method_add(rpc_server *s, const char *path,
                                    const ProtobufCMessageDescriptor *input)
{
    if (s->nmethods >= RPC__MAX_METHODS || s->started)
        return NULL;
    rpc__method *m = &s->methods[s->nmethods++];
    memset(m, 0, sizeof(*m));
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->input = input;
    m->kind = RPC__METHOD_UNIMPLEMENTED;
    /* The request message arrives with the call: one batch saved. */
    m->registered = grpc_server_register_method(s->server, m->path, NULL,
                                                GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    char labels[200];
    snprintf(labels, sizeof(labels), "method=\"%s\"", m->path);
    m->in_flight = metrics_gauge(s->metrics, "rpc_server_in_flight", labels, "Calls being served");
    m->latency = metrics_histogram(s->metrics, "rpc_server_latency_seconds", labels,
                                   "Time from arrival to final status sent", metrics_latency_bounds,
                                   metrics_latency_bounds_count);
    return m;
}

static int rpc__service_note(rpc_server *s, const char *name)
{
    if (s->nservices >= RPC__MAX_SERVICES)
        return RPC_ERROR;
    s->service_names[s->nservices++] = name;
    return RPC_OK;
}

int rpc_server_add_service(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                           const rpc_method_impl *impls, void *svc_ctx)
{
    /* Every impl must name a method of the service. */
    for (const rpc_method_impl *im = impls; im && im->name; im++) {
        bool found = false;
        for (unsigned i = 0; i < svc->n_methods; i++)
            if (strcmp(svc->methods[i].name, im->name) == 0)
                found = true;
        if (!found) {
            log_error("unknown_method", "service=%s method=%s", svc->name, im->name);
            return RPC_ERROR;
        }
    }
    for (unsigned i = 0; i < svc->n_methods; i++) {
        char path[160];
        rpc_method_path(svc, svc->methods[i].name, path, sizeof(path));
        rpc__method *m = rpc__method_add(s, path, svc->methods[i].input);
        if (m == NULL)
            return RPC_ERROR;
        m->ctx = svc_ctx;
        for (const rpc_method_impl *im = impls; im && im->name; im++) {
            if (strcmp(im->name, svc->methods[i].name) == 0 && im->handler) {
                m->kind = RPC__METHOD_HANDLER;
                m->handler = im->handler;
                m->max_request_bytes = im->max_request_bytes;
                m->decode_later = im->decode_later;
            }
        }
    }
    rpc__health_set(s->health, svc->name, false);
    return rpc__service_note(s, svc->name);
}

int rpc__server_add_bidi(rpc_server *s, const char *path, const ProtobufCMessageDescriptor *input,
                         rpc__bidi_fn fn, void *ctx)
{
    rpc__method *m = rpc__method_add(s, path, input);
    if (m == NULL)
        return RPC_ERROR;
    m->kind = RPC__METHOD_BIDI;
    m->bidi = fn;
    m->ctx = ctx;
    /* "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo" ->
     * the service name, kept as a static string for list_services. */
    if (strstr(path, "v1alpha"))
        return rpc__service_note(s, "grpc.reflection.v1alpha.ServerReflection");
    return rpc__service_note(s, "grpc.reflection.v1.ServerReflection");
}

size_t rpc__server_service_names(rpc_server *s, const char **out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < s->nservices && n < max; i++)
        out[n++] = s->service_names[i];
    return n;
}

void rpc_server_on_drain(rpc_server *s, void (*fn)(void *arg), void *arg)
{
    s->on_drain = fn;
    s->on_drain_arg = arg;
}

void rpc_server_set_serving(rpc_server *s, const char *service, bool serving)
{
    rpc__health_set(s->health, service, serving);
}

struct metrics_registry *rpc_server_metrics(rpc_server *s)
{
    return s->metrics;
}

int rpc_server_allow(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                     const rpc_allow_rule *rules)
{
    return rpc__authz_add(s->authz, svc, rules);
}

bool rpc_call_peer_is(rpc_call *c, const char *identity)
{
    if (!rpc__authz_enforced(c->server->authz))
        return true;
    const char *who = rpc_call_peer_identity(c);
    return who && strcmp(who, identity) == 0;
}

/* ------------------------------------------------------------------ */
/* Call objects                                                        */

static void rpc__bidi_step(rpc_call *c);

/* Runs the method: the handler, the bidi step, or an error status. */
static void rpc__dispatch(rpc_call *c)
{
    /* Who the caller is, before anything of the request is looked at. */
    if (c->method == NULL)
        c->deadline = c->details.deadline;
    if (!rpc__authz_check(c->server->authz, c)) {
        /* Not one of ours: its sampled flag would let it have every
         * refused call logged (trace.c honours the flag on internal
         * ports, where callers are ours). Its call is finished already;
         * the span line is decided when it is freed, later on this loop. */
        c->trace.sampled = false;
        return;
    }
    if (c->method == NULL) {
        rpc_call_fail(c, GRPC_STATUS_UNIMPLEMENTED, "unimplemented", "unknown method");
        return;
    }
    rpc__method *m = c->method;
    switch (m->kind) {
    case RPC__METHOD_UNIMPLEMENTED:
        rpc_call_fail(c, GRPC_STATUS_UNIMPLEMENTED, "unimplemented", "%s is not implemented yet",
                      m->path);
        return;
    case RPC__METHOD_BIDI:
        rpc__bidi_step(c);
        return;
    case RPC__METHOD_HANDLER: {
        if (m->decode_later) {
            m->handler(c, NULL, m->ctx);
            return;
        }
        ProtobufCMessage *req = rpc_call_decode(c);
        if (req != NULL)
            m->handler(c, req, m->ctx);
        return;
    }
    }
}

size_t rpc_call_request_size(rpc_call *c)
{
    return c->request ? grpc_byte_buffer_length(c->request) : 0;
}

/* The size is checked on the byte buffer's length, before protobuf-c
 * allocates anything: a dense message of millions of tiny repeated entries
 * costs its decoder far more memory than its bytes, so only the bytes a
 * method can legitimately carry are ever decoded. */
ProtobufCMessage *rpc_call_decode(rpc_call *c)
{
    rpc__method *m = c->method;
    size_t len = rpc_call_request_size(c);
    if (m->max_request_bytes > 0 && len > m->max_request_bytes) {
        rpc_call_fail(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "request_too_large",
                      "request of %zu bytes; %s accepts at most %zu", len, m->path,
                      m->max_request_bytes);
        return NULL;
    }
    ProtobufCMessage *req = NULL;
    if (c->request != NULL)
        req = rpc_unpack(m->input, c->request, rpc_arena_allocator(c->arena));
    if (req == NULL)
        rpc_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "request is not a valid %s",
                      m->input->name);
    return req;
}

static void rpc__call_arrived(rpc__tag *tag, bool ok);
static void rpc__call_closed(rpc__tag *tag, bool ok);
static void rpc__call_sent(rpc__tag *tag, bool ok);
static void rpc__call_bidi_recv(rpc__tag *tag, bool ok);
static void rpc__bidi_step(rpc_call *c);

#define RPC__MAX_FREE_CALLS 256

static rpc_call *rpc__call_new(rpc_server *s, rpc_loop *loop, rpc__method *m)
{
    /* Reuse a call object this loop finished earlier: saves the allocation,
     * the arena's first block and the mutex set-up on every call. */
    rpc_call *c = (rpc__current_loop() == loop) ? loop->free_calls : NULL;
    if (c) {
        loop->free_calls = c->next_free;
        loop->nfree_calls--;
        rpc_arena *arena = c->arena;
        /* A mutex may not be copied: destroy it and set up a fresh one. */
        pthread_mutex_destroy(&c->mu);
        memset(c, 0, sizeof(*c));
        c->arena = arena;
    } else {
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->arrive_tag.fn = rpc__call_arrived;
    c->close_tag.fn = rpc__call_closed;
    c->send_tag.fn = rpc__call_sent;
    c->recv_tag.fn = rpc__call_bidi_recv;
    c->server = s;
    c->loop = loop;
    c->method = m;
    c->state = RPC__CALL_REQUESTED;
    c->queue_limit = s->cfg.stream_queue_limit;
    c->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&c->request_md);
    grpc_call_details_init(&c->details);
    return c;
}

static void rpc__call_free(rpc_call *c)
{
    rpc__outmsg *o = c->queue_head;
    while (o) {
        rpc__outmsg *next = o->next;
        grpc_byte_buffer_destroy(o->bb);
        free(o);
        o = next;
    }
    if (c->in_flight_msg)
        grpc_byte_buffer_destroy(c->in_flight_msg);
    if (c->final_msg)
        grpc_byte_buffer_destroy(c->final_msg);
    if (c->request)
        grpc_byte_buffer_destroy(c->request);
    for (size_t i = 0; i < c->trailing_count; i++) {
        grpc_slice_unref(c->trailing[i].key);
        grpc_slice_unref(c->trailing[i].value);
    }
    grpc_slice_unref(c->status_details);
    grpc_metadata_array_destroy(&c->request_md);
    grpc_call_details_destroy(&c->details);
    if (c->call)
        grpc_call_unref(c->call);
    rpc_loop *loop = c->loop;
    if (loop && rpc__current_loop() == loop && loop->nfree_calls < RPC__MAX_FREE_CALLS &&
        !c->server->stopped) {
        if (c->arena)
            rpc_arena_reset(c->arena);
        c->next_free = loop->free_calls;
        loop->free_calls = c;
        loop->nfree_calls++;
        return;
    }
    if (c->arena)
        rpc_arena_destroy(c->arena);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* Frees the loop's reusable call objects (at shutdown, on the loop's
 * thread or after it has stopped). */
static void rpc__loop_free_calls(rpc_loop *loop)
{
    rpc_call *c = loop->free_calls;
    while (c) {
        rpc_call *next = c->next_free;
        if (c->arena)
            rpc_arena_destroy(c->arena);
        pthread_mutex_destroy(&c->mu);
        free(c);
        c = next;
    }
    loop->free_calls = NULL;
    loop->nfree_calls = 0;
}

/* Posts one request for method m (or a generic one when m is NULL) on the
 * worker's queue. */
static int rpc__request(rpc_server *s, rpc_loop *loop, rpc__method *m)
{
    rpc_call *c = rpc__call_new(s, loop, m);
    if (c == NULL)
        return RPC_ERROR;
    grpc_call_error e;
    if (m) {
        e = grpc_server_request_registered_call(s->server, m->registered, &c->call, &c->deadline,
                                                &c->request_md, &c->request, loop->cq, loop->cq,
                                                &c->arrive_tag);
    } else {
        e = grpc_server_request_call(s->server, &c->call, &c->details, &c->request_md, loop->cq,
                                     loop->cq, &c->arrive_tag);
    }
    if (e != GRPC_CALL_OK) {
        rpc__call_free(c);
        return RPC_ERROR;
    }
    return RPC_OK;
}

static void rpc__call_unref(rpc_call *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    rpc_server *s = c->server;
    if (c->method) {
        metric_add(c->method->in_flight, -1);
        metric_observe(c->method->latency, (double)(rpc__now_ns() - c->started_ns) / 1e9);
        grpc_status_code code = c->sent_code;
        if (code < 0 || code >= RPC__NCODES)
            code = GRPC_STATUS_UNKNOWN;
        metric *mc = (metric *)atomic_load(&c->method->by_code[code]);
        if (mc == NULL) {
            char labels[240];
            snprintf(labels, sizeof(labels), "method=\"%s\",code=\"%s\"", c->method->path,
                     rpc_status_code_name(code));
            mc = metrics_counter(s->metrics, "rpc_server_calls_total", labels,
                                 "Calls finished, by method and status code");
            atomic_store(&c->method->by_code[code], (uintptr_t)mc);
        }
        metric_add(mc, 1);
        rpc__trace_end(s->tracer, &c->trace, c->method->path, code, rpc__now_ns() - c->started_ns);
    }
    /* Cancelled before its deadline: the client reset it (or its
     * connection died), which the guard weighs against completed calls. */
    bool reset = c->close_cancelled && c->call && rpc_call_remaining_ms(c) > 0 &&
                 !atomic_load(&s->shutting_down); /* the drain cancels calls itself */
    rpc__guard_end(s->guard, c->conn, reset, c->guard_admitted);
    rpc__call_free(c);
    metric_add(s->calls_live, -1);
}

/* ------------------------------------------------------------------ */
/* Sending (any thread; c->mu held by callers of the *_locked helpers)  */

/* Starts the final status batch (with initial metadata and a last message
 * if not sent yet). */
static void rpc__send_status_locked(rpc_call *c)
{
    const rpc_status *st = &c->final_status;
    c->state = RPC__CALL_FINISHING;
    c->sent_code = st->code;
    c->status_details = grpc_slice_from_copied_string(st->message);
    if (st->reason[0]) {
        c->trailing[0].key = grpc_slice_from_static_string(RPC_REASON_KEY);
        c->trailing[0].value = grpc_slice_from_copied_string(st->reason);
        c->trailing_count = 1;
    }
    /* The id a client quotes when it reports the failure. */
    if (st->code != GRPC_STATUS_OK && c->trace.on) {
        c->trailing[c->trailing_count].key = grpc_slice_from_static_string(RPC_TRACE_ID_KEY);
        c->trailing[c->trailing_count].value = grpc_slice_from_copied_string(c->trace.trace_id);
        c->trailing_count++;
    }
    grpc_op ops[4];
    memset(ops, 0, sizeof(ops));
    int n = 0;
    if (!c->initial_md_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->initial_md_sent = true;
    }
    if (!c->close_posted) {
        /* A handler that finishes before returning never needed to hear of
         * a cancel: its close rides in the final batch (one completion per
         * call instead of two). */
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->close_cancelled;
        c->close_posted = true;
        c->close_in_final = true;
    }
    if (c->final_msg) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->final_msg;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = st->code;
    ops[n].data.send_status_from_server.status_details = &c->status_details;
    ops[n].data.send_status_from_server.trailing_metadata_count = c->trailing_count;
    ops[n].data.send_status_from_server.trailing_metadata = c->trailing;
    n++;
    c->sending = true;
    if (grpc_call_start_batch(c->call, ops, (size_t)n, &c->send_tag, NULL) != GRPC_CALL_OK) {
        log_error("start_batch_failed", "method=%s what=status", rpc_call_method(c));
        c->sending = false;
        c->closed = true;
        /* Nothing will complete: the caller drops the finish reference (and
         * the close reference when it rode in this batch). */
    }
}

static void rpc__send_next_locked(rpc_call *c)
{
    rpc__outmsg *o = c->queue_head;
    c->queue_head = o->next;
    if (c->queue_head == NULL)
        c->queue_tail = NULL;
    c->queue_len--;
    c->in_flight_msg = o->bb;
    free(o);
    grpc_op ops[2];
    memset(ops, 0, sizeof(ops));
    int n = 0;
    if (!c->initial_md_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->initial_md_sent = true;
    }
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->in_flight_msg;
    c->sending = true;
    if (grpc_call_start_batch(c->call, ops, (size_t)n, &c->send_tag, NULL) != GRPC_CALL_OK) {
        c->sending = false;
        c->closed = true;
    }
}

static void rpc__call_sent(rpc__tag *tag, bool ok)
{
    rpc_call *c = rpc__container_of(tag, rpc_call, send_tag);
    pthread_mutex_lock(&c->mu);
    c->sending = false;
    if (c->in_flight_msg) {
        grpc_byte_buffer_destroy(c->in_flight_msg);
        c->in_flight_msg = NULL;
    }
    if (c->state == RPC__CALL_FINISHING) {
        /* The final status went out (or failed): this was the last send. */
        bool close_too = c->close_in_final;
        pthread_mutex_unlock(&c->mu);
        if (close_too)
            rpc__call_unref(c);
        rpc__call_unref(c);
        return;
    }
    if (!ok)
        c->closed = true;
    if (!c->closed && c->queue_head)
        rpc__send_next_locked(c);
    if (!c->sending && c->finish_requested) {
        rpc__send_status_locked(c);
        if (!c->sending) { /* could not start */
            bool close_too = c->close_in_final;
            pthread_mutex_unlock(&c->mu);
            if (close_too)
                rpc__call_unref(c);
            rpc__call_unref(c);
            return;
        }
    }
    pthread_mutex_unlock(&c->mu);
}

/* Finishes the call: `msg` (taken over, may be NULL) then status. */
static void rpc__finish(rpc_call *c, grpc_byte_buffer *msg, const rpc_status *st)
{
    pthread_mutex_lock(&c->mu);
    if (c->finish_requested) {
        pthread_mutex_unlock(&c->mu);
        if (msg)
            grpc_byte_buffer_destroy(msg);
        log_warn("finish_twice", "method=%s", rpc_call_method(c));
        return;
    }
    c->finish_requested = true;
    c->final_status = *st;
    c->final_msg = msg;
    if (!c->sending) {
        rpc__send_status_locked(c);
        if (!c->sending) {
            bool close_too = c->close_in_final;
            pthread_mutex_unlock(&c->mu);
            if (close_too)
                rpc__call_unref(c);
            rpc__call_unref(c);
            return;
        }
    }
    pthread_mutex_unlock(&c->mu);
}

void rpc_call_reply(rpc_call *c, const ProtobufCMessage *reply)
{
    rpc_status st = {.code = GRPC_STATUS_OK};
    rpc__finish(c, rpc_pack(reply), &st);
}

void rpc_call_fail_status(rpc_call *c, const rpc_status *st)
{
    rpc__finish(c, NULL, st);
}

void rpc_call_fail(rpc_call *c, grpc_status_code code, const char *reason, const char *fmt, ...)
{
    rpc_status st;
    va_list ap;
    va_start(ap, fmt);
    rpc_status_vset(&st, code, reason, fmt, ap);
    va_end(ap);
    rpc__finish(c, NULL, &st);
}

void rpc_call_finish(rpc_call *c, grpc_status_code code, const char *reason, const char *fmt, ...)
{
    rpc_status st;
    va_list ap;
    va_start(ap, fmt);
    rpc_status_vset(&st, code, reason, fmt, ap);
    va_end(ap);
    rpc__finish(c, NULL, &st);
}

void rpc_call_reply_raw(rpc_call *c, grpc_byte_buffer *reply, const rpc_status *st)
{
    rpc__finish(c, st->code == GRPC_STATUS_OK ? reply : NULL, st);
    if (st->code != GRPC_STATUS_OK && reply)
        grpc_byte_buffer_destroy(reply);
}

int rpc_stream_send(rpc_call *c, const ProtobufCMessage *msg)
{
    pthread_mutex_lock(&c->mu);
    if (c->closed || c->finish_requested || atomic_load(&c->cancelled)) {
        pthread_mutex_unlock(&c->mu);
        return RPC_ECLOSED;
    }
    if (c->queue_len >= c->queue_limit) {
        pthread_mutex_unlock(&c->mu);
        return RPC_EFULL;
    }
    rpc__outmsg *o = malloc(sizeof(*o));
    if (o == NULL) {
        pthread_mutex_unlock(&c->mu);
        return RPC_ERROR;
    }
    o->bb = rpc_pack(msg);
    o->next = NULL;
    if (c->queue_tail)
        c->queue_tail->next = o;
    else
        c->queue_head = o;
    c->queue_tail = o;
    c->queue_len++;
    if (!c->sending)
        rpc__send_next_locked(c);
    pthread_mutex_unlock(&c->mu);
    return RPC_OK;
}

void rpc_stream_begin(rpc_call *c)
{
    pthread_mutex_lock(&c->mu);
    if (!c->initial_md_sent && !c->sending && !c->finish_requested && !c->closed) {
        grpc_op op;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_INITIAL_METADATA;
        c->initial_md_sent = true;
        c->sending = true;
        if (grpc_call_start_batch(c->call, &op, 1, &c->send_tag, NULL) != GRPC_CALL_OK) {
            c->sending = false;
            c->closed = true;
        }
    }
    pthread_mutex_unlock(&c->mu);
}

void rpc_stream_set_limit(rpc_call *c, int max_queued)
{
    pthread_mutex_lock(&c->mu);
    c->queue_limit = max_queued > 0 ? max_queued : 1;
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------------------ */
/* Arrival, close, bidi                                                */

static void rpc__call_closed(rpc__tag *tag, bool ok)
{
    rpc_call *c = rpc__container_of(tag, rpc_call, close_tag);
    if (c->close_cancelled) {
        atomic_store(&c->cancelled, true);
        pthread_mutex_lock(&c->mu);
        bool finished = c->finish_requested;
        c->closed = true;
        pthread_mutex_unlock(&c->mu);
        if (!finished && c->on_cancel) {
            rpc_trace prev = rpc_trace_enter(&c->trace);
            c->on_cancel(c, c->on_cancel_arg);
            rpc_trace_leave(&prev);
        }
    }
    rpc__call_unref(c);
}

static void rpc__bidi_post_recv(rpc_call *c)
{
    if (c->request) {
        grpc_byte_buffer_destroy(c->request);
        c->request = NULL;
    }
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->request;
    atomic_fetch_add(&c->refs, 1);
    if (grpc_call_start_batch(c->call, &op, 1, &c->recv_tag, NULL) != GRPC_CALL_OK) {
        atomic_fetch_sub(&c->refs, 1);
        rpc_call_fail(c, GRPC_STATUS_INTERNAL, "internal", "could not read next message");
    }
}

/* Bidi: answer the message in c->request, then read the next. A NULL
 * message is the client's half-close: finish OK. */
static void rpc__bidi_step(rpc_call *c)
{
    if (c->request == NULL) {
        rpc_call_finish(c, GRPC_STATUS_OK, NULL, NULL);
        return;
    }
    rpc_arena *scratch = rpc_arena_create(0);
    ProtobufCMessage *req = rpc_unpack(c->method->input, c->request, rpc_arena_allocator(scratch));
    if (req == NULL) {
        rpc_arena_destroy(scratch);
        rpc_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "request is not a valid %s",
                      c->method->input->name);
        return;
    }
    ProtobufCMessage *reply = c->method->bidi(c, req, scratch, c->method->ctx);
    int rc = reply ? rpc_stream_send(c, reply) : RPC_ERROR;
    rpc_arena_destroy(scratch);
    if (rc != RPC_OK) {
        rpc_call_fail(c, GRPC_STATUS_INTERNAL, "internal", "could not answer");
        return;
    }
    rpc__bidi_post_recv(c);
}

static void rpc__call_bidi_recv(rpc__tag *tag, bool ok)
{
    rpc_call *c = rpc__container_of(tag, rpc_call, recv_tag);
    if (!ok) {
        if (c->request) {
            grpc_byte_buffer_destroy(c->request);
            c->request = NULL;
        }
        rpc_call_finish(c, GRPC_STATUS_CANCELLED, NULL, "stream broken");
    } else {
        rpc__bidi_step(c);
    }
    rpc__call_unref(c);
}

static void rpc__call_arrived(rpc__tag *tag, bool ok)
{
    rpc_call *c = rpc__container_of(tag, rpc_call, arrive_tag);
    rpc_server *s = c->server;
    if (!ok) {
        /* The server is shutting down: the request comes back unused. */
        rpc__call_free(c);
        return;
    }
    /* Keep the queue stocked before doing any work on this call. */
    if (!atomic_load(&s->shutting_down))
        rpc__request(s, c->loop, c->method);

    c->state = RPC__CALL_ACTIVE;
    c->started_ns = rpc__now_ns();
    atomic_store(&c->refs, 2); /* close + final status */
    metric_add(s->calls_live, 1);
    if (c->method)
        metric_add(c->method->in_flight, 1);
    if (c->arena == NULL)
        c->arena = rpc_arena_create(0);
    if (c->method == NULL)
        c->deadline = c->details.deadline;

    /* Bounds and abuse first: a refused call costs one status batch and no
     * handler work (conn_guard.c). */
    rpc__guard_reason why = rpc__guard_admit(s->guard, c->call, &c->conn);
    c->guard_admitted = why == RPC__GUARD_OK;
    if (c->request != NULL && grpc_byte_buffer_length(c->request) >= RPC__GUARD_BULK_BYTES)
        rpc__guard_note_bulk(s->guard);
    if (why == RPC__GUARD_ABUSE) {
        /* Its connection is being shut down: nobody will read a status.
         * Cancel and free it without a batch, so a backlog of such calls
         * queued in the core drains as fast as possible. */
        grpc_call_cancel_with_status(c->call, rpc__guard_reason_code(why),
                                     rpc__guard_reason_name(why), NULL);
        c->sent_code = rpc__guard_reason_code(why);
        atomic_store(&c->refs, 1);
        rpc__call_unref(c);
        return;
    }
    rpc__trace_accept(s->tracer, &c->request_md, &c->trace);
    if (why != RPC__GUARD_OK) {
        rpc_call_fail(c, rpc__guard_reason_code(why), rpc__guard_reason_name(why),
                      "call refused: %s", rpc__guard_reason_name(why));
        return;
    }
    /* No message with a unary or server-streaming call: the client reset
     * the stream before sending it (the rapid-reset shape) or half-closed
     * without one. Either way nothing to serve: answer before any admission
     * step or handler could do work (a token lookup, a downstream call) for
     * a caller that is already gone. */
    if (c->method && c->method->kind == RPC__METHOD_HANDLER && c->request == NULL) {
        rpc_call_fail(c, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "request has no message");
        return;
    }
    /* The handler's log lines and downstream calls carry the call's trace;
     * entered by copy, so a handler that finishes (and frees) the call at
     * once leaves nothing dangling. */
    rpc_trace prev = rpc_trace_enter(&c->trace);
    rpc__dispatch(c);
    rpc_trace_leave(&prev);
    /* An unfinished unary call (a deferred reply) posts no close of its
     * own: its close rides in the final batch, one completion fewer per
     * forwarded call. A handler that wants to hear of a cancel registers
     * rpc_call_on_cancel, which posts the close then. */
}

/* Posts RECV_CLOSE_ON_SERVER in its own batch unless it is already posted
 * or the final batch (which carries it) has started. Caller holds c->mu. */
static void rpc__post_close_locked(rpc_call *c)
{
    if (c->close_posted || c->finish_requested)
        return;
    c->close_posted = true;
    grpc_op op;
    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->close_cancelled;
    if (grpc_call_start_batch(c->call, &op, 1, &c->close_tag, NULL) != GRPC_CALL_OK) {
        /* Never completes: drop its reference (the finish one remains). */
        atomic_fetch_sub(&c->refs, 1);
    }
}

/* ------------------------------------------------------------------ */
/* Call accessors                                                      */

rpc_arena *rpc_call_arena(rpc_call *c)
{
    return c->arena;
}
ProtobufCAllocator *rpc_call_allocator(rpc_call *c)
{
    return rpc_arena_allocator(c->arena);
}
grpc_byte_buffer *rpc_call_request_bytes(rpc_call *c)
{
    return c->request;
}
const rpc_trace *rpc_call_trace(rpc_call *c)
{
    return &c->trace;
}
grpc_call *rpc_call_core(rpc_call *c)
{
    return c->call;
}
bool rpc_call_cancelled(rpc_call *c)
{
    return atomic_load(&c->cancelled);
}

const char *rpc_call_method(rpc_call *c)
{
    if (c->method)
        return c->method->path;
    return "(unknown)";
}

const char *rpc_call_metadata(rpc_call *c, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < c->request_md.count; i++) {
        const grpc_metadata *md = &c->request_md.metadata[i];
        if (GRPC_SLICE_LENGTH(md->key) == klen &&
            memcmp(GRPC_SLICE_START_PTR(md->key), key, klen) == 0) {
            *len = GRPC_SLICE_LENGTH(md->value);
            return (const char *)GRPC_SLICE_START_PTR(md->value);
        }
    }
    *len = 0;
    return NULL;
}

size_t rpc_peer_host(const char *peer, char *out, size_t outlen)
{
    /* The core names the peer "ipv4:1.2.3.4:port" or "ipv6:[::1]:port",
     * the brackets percent-encoded ("ipv6:%5B::1%5D:port") as in a URI. */
    const char *p = peer ? peer : "";
    if (strncmp(p, "ipv4:", 5) == 0 || strncmp(p, "ipv6:", 5) == 0)
        p += 5;
    size_t n = strlen(p);
    if (p[0] == '[' || strncmp(p, "%5B", 3) == 0) {
        p += p[0] == '[' ? 1 : 3;
        const char *close = strchr(p, ']');
        if (!close)
            close = strstr(p, "%5D");
        n = close ? (size_t)(close - p) : 0;
    } else {
        const char *port = strrchr(p, ':');
        if (port)
            n = (size_t)(port - p);
    }
    if (outlen == 0)
        return 0;
    if (n >= outlen)
        n = 0; /* not an address we know how to read */
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

const char *rpc_call_peer_address(rpc_call *c)
{
    char *peer = grpc_call_get_peer(c->call);
    char host[128];
    rpc_peer_host(peer, host, sizeof host);
    gpr_free(peer);
    const char *out = rpc_arena_strdup(c->arena, host);
    return out ? out : "";
}

const char *rpc_call_metadata_str(rpc_call *c, const char *key)
{
    size_t len;
    const char *v = rpc_call_metadata(c, key, &len);
    return v ? rpc_arena_strndup(c->arena, v, len) : NULL;
}

int64_t rpc_call_remaining_ms(rpc_call *c)
{
    gpr_timespec dl = gpr_convert_clock_type(c->deadline, GPR_CLOCK_REALTIME);
    if (gpr_time_cmp(dl, gpr_inf_future(GPR_CLOCK_REALTIME)) == 0 || dl.tv_sec == INT64_MAX)
        return INT64_MAX;
    gpr_timespec left = gpr_time_sub(dl, gpr_now(GPR_CLOCK_REALTIME));
    return (int64_t)left.tv_sec * 1000 + left.tv_nsec / 1000000;
}

void rpc_call_on_cancel(rpc_call *c, rpc_cancel_cb cb, void *arg)
{
    pthread_mutex_lock(&c->mu);
    c->on_cancel = cb;
    c->on_cancel_arg = arg;
    if (cb)
        rpc__post_close_locked(c);
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

static grpc_server_credentials *rpc__server_creds(const rpc_tls_config *tls, bool internal,
                                                  char *err, size_t errlen)
{
    if (tls->cert_file[0] == '\0')
        return grpc_insecure_server_credentials_create();
    char *cert = rpc__read_file(tls->cert_file);
    char *key = rpc__read_file(tls->key_file);
    char *ca = tls->ca_file[0] ? rpc__read_file(tls->ca_file) : NULL;
    grpc_server_credentials *creds = NULL;
    if (cert == NULL || key == NULL || (tls->ca_file[0] && ca == NULL)) {
        snprintf(err, errlen, "cannot read TLS files (cert=%s key=%s ca=%s)", tls->cert_file,
                 tls->key_file, tls->ca_file);
        goto done;
    }
    grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
    /* With a CA configured, a client must present a certificate it signed:
     * that is the mutual TLS between services. An internal port lets a TLS
     * client without a certificate through the handshake (one it presents
     * must still verify) so that the identity check can answer it
     * UNAUTHENTICATED with a reason instead of a bare handshake failure. */
    grpc_ssl_client_certificate_request_type req = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    if (ca)
        req = internal ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY
                       : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    creds = grpc_ssl_server_credentials_create_ex(ca, &pair, 1, req, NULL);
    if (creds == NULL)
        snprintf(err, errlen, "invalid TLS certificate or key");
done:
    free(cert);
    free(key);
    free(ca);
    return creds;
}

int rpc_server_start(rpc_server *s, char *err, size_t errlen)
{
    grpc_server_credentials *creds =
        rpc__server_creds(&s->cfg.tls, rpc__authz_enforced(s->authz), err, errlen);
    if (creds == NULL)
        return 0;
    int port = grpc_server_add_http2_port(s->server, s->cfg.listen, creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        snprintf(err, errlen, "cannot listen on %s (address in use or invalid)", s->cfg.listen);
        return 0;
    }
    rpc__guard_set_port(s->guard, port);
    grpc_server_start(s->server);
    s->started = true;
    for (int w = 0; w < s->nworkers; w++) {
        rpc_loop *loop = &s->workers[w];
        for (int i = 0; i < s->nmethods; i++)
            for (int k = 0; k < RPC__REQUESTS_PER_METHOD; k++)
                rpc__request(s, loop, &s->methods[i]);
        for (int k = 0; k < RPC__GENERIC_REQUESTS; k++)
            rpc__request(s, loop, NULL);
        rpc__loop_run(loop);
    }
    if (s->cfg.metrics_listen[0]) {
        char merr[128];
        metrics_http_limits lim = {.timeout_s =
                                       (unsigned)((s->cfg.metrics_timeout_ms + 999) / 1000),
                                   .per_address = (unsigned)s->cfg.metrics_conns_per_address,
                                   .total = (unsigned)s->cfg.metrics_conns};
        if (metrics_serve_limited(s->metrics, s->cfg.metrics_listen, &lim, merr, sizeof(merr)) <
            0) {
            snprintf(err, errlen, "metrics endpoint %s: %s", s->cfg.metrics_listen, merr);
            rpc_server_stop(s);
            return 0;
        }
    }
    rpc__health_set_all(s->health, true);
    log_info("server_started", "listen=%s port=%d workers=%d metrics=%s", s->cfg.listen, port,
             s->nworkers, s->cfg.metrics_listen[0] ? s->cfg.metrics_listen : "off");
    return port;
}

void rpc_server_stop(rpc_server *s)
{
    if (!s->started || s->stopped)
        return;
    s->stopped = true;
    atomic_store(&s->shutting_down, true);
    rpc__health_set_all(s->health, false);
    if (s->on_drain)
        s->on_drain(s->on_drain_arg);
    int tag = 0;
    grpc_server_shutdown_and_notify(s->server, s->shutdown_cq, &tag);
    gpr_timespec grace = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                      gpr_time_from_millis(s->cfg.shutdown_grace_ms, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_pluck(s->shutdown_cq, &tag, grace, NULL);
    if (ev.type != GRPC_OP_COMPLETE) {
        log_warn("shutdown_cancel", "live_calls=%lld", (long long)metric_value(s->calls_live));
        grpc_server_cancel_all_calls(s->server);
        grpc_completion_queue_pluck(s->shutdown_cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    }
    /* Handlers that finish later (after a downstream reply) still hold
     * calls; give them a bounded moment before the queues go away. */
    for (int i = 0; i < 200 && metric_value(s->calls_live) > 0; i++) {
        if (i == 100)
            grpc_server_cancel_all_calls(s->server);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int w = 0; w < s->nworkers; w++) {
        rpc__loop_shutdown(&s->workers[w]);
        rpc__loop_free_calls(&s->workers[w]);
    }
    log_info("server_stopped", "live_calls=%lld", (long long)metric_value(s->calls_live));
}

int rpc_server_wait(rpc_server *s)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    log_info("signal", "sig=%s draining=1", sig == SIGTERM ? "TERM" : "INT");
    rpc_server_stop(s);
    return 0;
}

void rpc_server_destroy(rpc_server *s)
{
    if (s == NULL)
        return;
    if (s->started && !s->stopped)
        rpc_server_stop(s);
    if (!s->started) {
        for (int w = 0; w < s->nworkers; w++)
            rpc__loop_shutdown(&s->workers[w]);
    }
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->shutdown_cq);
    while (
        grpc_completion_queue_pluck(s->shutdown_cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
            .type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(s->shutdown_cq);
    rpc__health_destroy(s->health);
    rpc__reflection_free(s->reflection);
    rpc__guard_destroy(s->guard);
    rpc__authz_destroy(s->authz);
    rpc__tracer_destroy(s->tracer);
    metrics_registry_destroy(s->metrics);
    free(s->workers);
    free(s);
}

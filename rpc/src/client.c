/*
 * client.c — long-lived channels and async calls.
 *
 * A unary call is one batch of six ops; its completion runs the caller's
 * callback on the loop chosen by rpc__client_loop_for (the caller's own
 * worker when called from a handler). A server-streaming call keeps one
 * RECV_MESSAGE in flight at a time.
 */
#include <ctype.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rpc/log.h"
#include "rpc/trace.h"

#define RPC__MAX_CLIENT_MD 8
#define RPC__DEFAULT_TIMEOUT_MS 5000

struct rpc_channel {
    grpc_channel *channel;
    char target[256];
};

/* ------------------------------------------------------------------ */
/* Channels                                                            */

/* "127.0.0.1:7100" -> "ipv4:127.0.0.1:7100": literal addresses skip the DNS
 * resolver (threads, memory, and a rare failed first connect). */
static void rpc__canonical_target(const char *in, char *out, size_t len)
{
    if (strchr(in, ':') != NULL && strstr(in, ":/") == NULL && strncmp(in, "ipv4:", 5) != 0 &&
        strncmp(in, "ipv6:", 5) != 0 && strncmp(in, "unix:", 5) != 0) {
        bool numeric = true;
        for (const char *p = in; *p && *p != ':'; p++)
            if (!isdigit((unsigned char)*p) && *p != '.')
                numeric = false;
        if (numeric) {
            snprintf(out, len, "ipv4:%s", in);
            return;
        }
    }
    snprintf(out, len, "%s", in);
}

rpc_channel *rpc_channel_create(const char *target, const rpc_channel_opts *opts)
{
    rpc_channel_opts defaults = {0};
    if (opts == NULL)
        opts = &defaults;
    rpc_channel *ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return NULL;
    rpc__canonical_target(target, ch->target, sizeof(ch->target));

    grpc_arg args[13];
    int n = 0;
    /* Reconnect soon after a peer restarts: the core's default backoff
     * grows to two minutes, far too long for a service we restart in
     * seconds. Jitter still spreads many channels out. Not
     * GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: in this core it is also the
     * minimum connect timeout, and 100 ms failed connects under load. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                           .value.integer = 100};
    args[n++] = (grpc_arg){
        .type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, .value.integer = 5000};
    /* Several addresses behind one name (gateways behind DNS): use them
     * all, not just the first that connects. */
    if (strncmp(ch->target, "dns:", 4) == 0)
        args[n++] = (grpc_arg){.type = GRPC_ARG_STRING,
                               .key = GRPC_ARG_SERVICE_CONFIG,
                               .value.string = "{\"loadBalancingConfig\":[{\"round_robin\":{}}]}"};
    /* Keepalive pings cost CPU per connection; off unless asked for. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_KEEPALIVE_TIME_MS,
                           .value.integer = opts->keepalive_ms > 0 ? opts->keepalive_ms : INT_MAX};
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_RETRIES, .value.integer = 0};
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0};
    args[n++] = rpc__no_bdp_probe();
    if (opts->max_message_bytes > 0) {
        args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                               .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                               .value.integer = opts->max_message_bytes};
        args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                               .key = GRPC_ARG_MAX_SEND_MESSAGE_LENGTH,
                               .value.integer = opts->max_message_bytes};
    }
    if (opts->own_connection)
        args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                               .key = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
                               .value.integer = 1};
    const rpc_tls_config *tls = opts->tls;
    bool use_tls = tls && (tls->ca_file[0] || tls->cert_file[0]);
    if (use_tls && tls->server_name[0])
        args[n++] = (grpc_arg){.type = GRPC_ARG_STRING,
                               .key = GRPC_SSL_TARGET_NAME_OVERRIDE_ARG,
                               .value.string = (char *)tls->server_name};
    grpc_channel_args cargs = {.num_args = (size_t)n, .args = args};

    grpc_channel_credentials *creds = NULL;
    if (use_tls) {
        char *ca = tls->ca_file[0] ? rpc__read_file(tls->ca_file) : NULL;
        char *cert = tls->cert_file[0] ? rpc__read_file(tls->cert_file) : NULL;
        char *key = tls->key_file[0] ? rpc__read_file(tls->key_file) : NULL;
        grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
        creds = grpc_ssl_credentials_create(ca, (cert && key) ? &pair : NULL, NULL, NULL);
        free(ca);
        free(cert);
        free(key);
    } else {
        creds = grpc_insecure_credentials_create();
    }
    ch->channel = grpc_channel_create(ch->target, creds, &cargs);
    grpc_channel_credentials_release(creds);
    if (ch->channel == NULL) {
        free(ch);
        return NULL;
    }
    return ch;
}

void rpc_channel_destroy(rpc_channel *ch)
{
    if (ch == NULL)
        return;
    grpc_channel_destroy(ch->channel);
    free(ch);
}

void rpc_channel_connect(rpc_channel *ch)
{
    grpc_channel_check_connectivity_state(ch->channel, 1);
}

bool rpc_channel_ready(rpc_channel *ch)
{
    return grpc_channel_check_connectivity_state(ch->channel, 0) == GRPC_CHANNEL_READY;
}

const char *rpc_channel_state(rpc_channel *ch)
{
    switch (grpc_channel_check_connectivity_state(ch->channel, 0)) {
    case GRPC_CHANNEL_IDLE:
        return "idle";
    case GRPC_CHANNEL_CONNECTING:
        return "connecting";
    case GRPC_CHANNEL_READY:
        return "ready";
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
        return "transient_failure";
    case GRPC_CHANNEL_SHUTDOWN:
        return "shutdown";
    }
    return "unknown";
}

const char *rpc_channel_target(const rpc_channel *ch)
{
    return ch->target;
}

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */

gpr_timespec rpc__client_deadline(const rpc_client_opts *opts)
{
    int64_t ms = (opts && opts->timeout_ms > 0) ? opts->timeout_ms : RPC__DEFAULT_TIMEOUT_MS;
    if (opts && opts->parent) {
        int64_t left = rpc_call_remaining_ms(opts->parent);
        if (left < ms)
            ms = left < 1 ? 1 : left;
    }
    return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

void rpc__status_from_core(rpc_status *st, grpc_status_code code, grpc_slice details,
                           const grpc_metadata_array *trailing)
{
    st->code = code;
    st->reason[0] = '\0';
    size_t n = GRPC_SLICE_LENGTH(details);
    if (n >= sizeof(st->message))
        n = sizeof(st->message) - 1;
    memcpy(st->message, GRPC_SLICE_START_PTR(details), n);
    st->message[n] = '\0';
    if (trailing == NULL)
        return;
    static const char key[] = RPC_REASON_KEY;
    for (size_t i = 0; i < trailing->count; i++) {
        const grpc_metadata *md = &trailing->metadata[i];
        if (GRPC_SLICE_LENGTH(md->key) == sizeof(key) - 1 &&
            memcmp(GRPC_SLICE_START_PTR(md->key), key, sizeof(key) - 1) == 0) {
            size_t m = GRPC_SLICE_LENGTH(md->value);
            if (m >= sizeof(st->reason))
                m = sizeof(st->reason) - 1;
            memcpy(st->reason, GRPC_SLICE_START_PTR(md->value), m);
            st->reason[m] = '\0';
            break;
        }
    }
}

/* Builds the outgoing metadata array (room for RPC__MAX_CLIENT_MD + 1);
 * values are copied into slices that rpc__md_release frees. A call started
 * under a trace (rpc/trace.h) carries its traceparent, unless the caller
 * set one itself (a tool speaking for a client). */
static size_t rpc__md_fill(grpc_metadata *out, const rpc_client_opts *opts, const rpc_trace *trace)
{
    size_t n = 0;
    bool own_traceparent = false;
    for (size_t i = 0; opts && i < opts->md_count && n < RPC__MAX_CLIENT_MD; i++) {
        out[n].key = grpc_slice_from_copied_string(opts->md[i].key);
        out[n].value = grpc_slice_from_copied_string(opts->md[i].value);
        if (strcmp(opts->md[i].key, RPC_TRACE_HEADER) == 0)
            own_traceparent = true;
        n++;
    }
    if (trace->on && !own_traceparent) {
        char tp[RPC_TRACEPARENT_LEN + 1];
        rpc_trace_header(trace, tp);
        out[n].key = grpc_slice_from_static_string(RPC_TRACE_HEADER);
        out[n].value = grpc_slice_from_copied_buffer(tp, RPC_TRACEPARENT_LEN);
        n++;
    }
    return n;
}

static void rpc__md_release(grpc_metadata *md, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        grpc_slice_unref(md[i].key);
        grpc_slice_unref(md[i].value);
    }
}

/* What one client call sends and receives: shared by the async unary, the
 * blocking and the streaming calls. */
typedef struct rpc__exchange {
    grpc_metadata md[RPC__MAX_CLIENT_MD + 1]; /* + traceparent */
    /* The trace the call was started under, entered again around its
     * callbacks so they log and call on under the same trace. */
    rpc_trace trace;
    size_t md_count;
    grpc_byte_buffer *send;
    grpc_byte_buffer *recv;
    grpc_metadata_array initial, trailing;
    grpc_status_code status;
    grpc_slice details;
    const char *error_string;
} rpc__exchange;

/* Takes `send` over. */
static void rpc__exchange_init(rpc__exchange *x, const rpc_client_opts *opts,
                               grpc_byte_buffer *send)
{
    const rpc_trace *cur = rpc_trace_current();
    if (cur)
        x->trace = *cur;
    else
        x->trace.on = false;
    x->md_count = rpc__md_fill(x->md, opts, &x->trace);
    x->send = send;
    x->recv = NULL;
    grpc_metadata_array_init(&x->initial);
    grpc_metadata_array_init(&x->trailing);
    x->status = GRPC_STATUS_UNKNOWN;
    x->details = grpc_empty_slice();
    x->error_string = NULL;
}

static void rpc__exchange_release(rpc__exchange *x)
{
    rpc__md_release(x->md, x->md_count);
    if (x->send)
        grpc_byte_buffer_destroy(x->send);
    if (x->recv)
        grpc_byte_buffer_destroy(x->recv);
    grpc_metadata_array_destroy(&x->initial);
    grpc_metadata_array_destroy(&x->trailing);
    grpc_slice_unref(x->details);
    if (x->error_string)
        gpr_free((void *)x->error_string);
}

/* The request half: metadata, the message, half-close, response headers.
 * Fills 4 ops. */
static void rpc__request_ops(rpc__exchange *x, grpc_op *ops)
{
    memset(ops, 0, 4 * sizeof(*ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = x->md_count;
    ops[0].data.send_initial_metadata.metadata = x->md;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = x->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &x->initial;
}

static void rpc__recv_message_op(rpc__exchange *x, grpc_op *op)
{
    memset(op, 0, sizeof(*op));
    op->op = GRPC_OP_RECV_MESSAGE;
    op->data.recv_message.recv_message = &x->recv;
}

static void rpc__status_op(rpc__exchange *x, grpc_op *op)
{
    memset(op, 0, sizeof(*op));
    op->op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    op->data.recv_status_on_client.status = &x->status;
    op->data.recv_status_on_client.status_details = &x->details;
    op->data.recv_status_on_client.trailing_metadata = &x->trailing;
    op->data.recv_status_on_client.error_string = &x->error_string;
}

/* A unary call in one batch of six ops. */
static void rpc__unary_ops(rpc__exchange *x, grpc_op ops[6])
{
    rpc__request_ops(x, ops);
    rpc__recv_message_op(x, &ops[4]);
    rpc__status_op(x, &ops[5]);
}

static grpc_call *rpc__create_call(rpc_channel *ch, grpc_completion_queue *cq, const char *method,
                                   gpr_timespec deadline)
{
    grpc_slice m = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(ch->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m,
                                               NULL, deadline, NULL);
    grpc_slice_unref(m);
    return call;
}

/* ------------------------------------------------------------------ */
/* Unary                                                               */

typedef struct rpc__unary {
    rpc__tag tag;
    rpc_loop *loop;
    grpc_call *call;
    rpc__exchange x;
    /* completion */
    const ProtobufCMessageDescriptor *reply_desc; /* NULL: raw */
    rpc_arena *arena;
    rpc_unary_cb cb;
    rpc_raw_cb raw_cb;
    void *arg;
} rpc__unary;

static void rpc__unary_free(rpc__unary *u)
{
    rpc__exchange_release(&u->x);
    if (u->call)
        grpc_call_unref(u->call);
    free(u);
}

static void rpc__unary_done(rpc__tag *tag, bool ok)
{
    rpc__unary *u = rpc__container_of(tag, rpc__unary, tag);
    rpc_status st;
    if (!ok)
        rpc_status_set(&st, GRPC_STATUS_UNAVAILABLE, "unavailable", "call failed in transport");
    else
        rpc__status_from_core(&st, u->x.status, u->x.details, &u->x.trailing);
    atomic_fetch_sub(&u->loop->pending, 1);
    rpc_trace prev = rpc_trace_enter(&u->x.trace);

    if (u->reply_desc == NULL) {
        grpc_byte_buffer *reply = u->x.recv;
        u->x.recv = NULL;
        u->raw_cb(u->arg, &st,
                  st.code == GRPC_STATUS_OK
                      ? reply
                      : (reply ? (grpc_byte_buffer_destroy(reply), NULL) : NULL));
        rpc_trace_leave(&prev);
        rpc__unary_free(u);
        return;
    }

    ProtobufCMessage *msg = NULL;
    ProtobufCAllocator *alloc = u->arena ? rpc_arena_allocator(u->arena) : NULL;
    if (st.code == GRPC_STATUS_OK) {
        if (u->x.recv == NULL) {
            rpc_status_set(&st, GRPC_STATUS_INTERNAL, "bad_reply", "server sent no reply message");
        } else if ((msg = rpc_unpack(u->reply_desc, u->x.recv, alloc)) == NULL) {
            rpc_status_set(&st, GRPC_STATUS_INTERNAL, "bad_reply", "reply is not a valid %s",
                           u->reply_desc->name);
        }
    }
    u->cb(u->arg, &st, msg);
    rpc_trace_leave(&prev);
    if (msg && u->arena == NULL)
        protobuf_c_message_free_unpacked(msg, NULL);
    rpc__unary_free(u);
}

static int rpc__unary_start(rpc_channel *ch, const char *method, grpc_byte_buffer *send,
                            const rpc_client_opts *opts, rpc__unary *u)
{
    rpc_loop *loop = rpc__client_loop_for(opts);
    if (loop == NULL) {
        if (send)
            grpc_byte_buffer_destroy(send);
        free(u);
        return RPC_ERROR;
    }
    u->tag.fn = rpc__unary_done;
    u->loop = loop;
    rpc__exchange_init(&u->x, opts, send);
    u->call = rpc__create_call(ch, loop->cq, method, rpc__client_deadline(opts));
    if (u->call == NULL)
        goto fail;

    grpc_op ops[6];
    rpc__unary_ops(&u->x, ops);
    atomic_fetch_add(&loop->pending, 1);
    if (grpc_call_start_batch(u->call, ops, 6, &u->tag, NULL) != GRPC_CALL_OK) {
        atomic_fetch_sub(&loop->pending, 1);
        goto fail;
    }
    return RPC_OK;
fail:
    rpc__unary_free(u);
    return RPC_ERROR;
}

int rpc_client_unary(rpc_channel *ch, const char *method, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *reply_desc, const rpc_client_opts *opts,
                     rpc_unary_cb cb, void *arg)
{
    rpc__unary *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return RPC_ERROR;
    u->reply_desc = reply_desc;
    u->arena = opts ? opts->arena : NULL;
    u->cb = cb;
    u->arg = arg;
    return rpc__unary_start(ch, method, rpc_pack(req), opts, u);
}

int rpc_client_raw(rpc_channel *ch, const char *method, grpc_byte_buffer *req,
                   const rpc_client_opts *opts, rpc_raw_cb cb, void *arg)
{
    rpc__unary *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return RPC_ERROR;
    u->raw_cb = cb;
    u->arg = arg;
    return rpc__unary_start(ch, method, req ? grpc_byte_buffer_copy(req) : NULL, opts, u);
}

/* ------------------------------------------------------------------ */
/* Blocking unary                                                      */

grpc_status_code rpc_client_unary_sync(rpc_channel *ch, const char *method,
                                       const ProtobufCMessage *req,
                                       const ProtobufCMessageDescriptor *reply_desc,
                                       const rpc_client_opts *opts, ProtobufCAllocator *alloc,
                                       ProtobufCMessage **reply, rpc_status *st)
{
    *reply = NULL;
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    gpr_timespec deadline = rpc__client_deadline(opts);
    grpc_call *call = rpc__create_call(ch, cq, method, deadline);
    rpc__exchange x;
    rpc__exchange_init(&x, opts, rpc_pack(req));
    grpc_op ops[6];
    rpc__unary_ops(&x, ops);

    int tag = 1;
    if (call == NULL || grpc_call_start_batch(call, ops, 6, &tag, NULL) != GRPC_CALL_OK) {
        rpc_status_set(st, GRPC_STATUS_INTERNAL, "internal", "could not start call");
    } else {
        /* The core enforces the deadline, so the event always arrives; the
         * extra second only guards against a lost event. */
        gpr_timespec guard = gpr_time_add(deadline, gpr_time_from_millis(1000, GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_pluck(cq, &tag, guard, NULL);
        if (ev.type != GRPC_OP_COMPLETE) {
            grpc_call_cancel(call, NULL);
            grpc_completion_queue_pluck(cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
            rpc_status_set(st, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline",
                           "no answer before deadline");
        } else if (!ev.success) {
            rpc_status_set(st, GRPC_STATUS_UNAVAILABLE, "unavailable", "call failed in transport");
        } else {
            rpc__status_from_core(st, x.status, x.details, &x.trailing);
            if (st->code == GRPC_STATUS_OK) {
                if (x.recv == NULL)
                    rpc_status_set(st, GRPC_STATUS_INTERNAL, "bad_reply", "server sent no reply");
                else if ((*reply = rpc_unpack(reply_desc, x.recv, alloc)) == NULL)
                    rpc_status_set(st, GRPC_STATUS_INTERNAL, "bad_reply", "reply is not a valid %s",
                                   reply_desc->name);
            }
        }
    }

    rpc__exchange_release(&x);
    if (call)
        grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return st->code;
}

/* ------------------------------------------------------------------ */
/* Server-streaming client                                             */

struct rpc_client_stream {
    rpc__tag start_tag;  /* send request + recv initial metadata */
    rpc__tag recv_tag;   /* one RECV_MESSAGE */
    rpc__tag status_tag; /* RECV_STATUS_ON_CLIENT */
    rpc_loop *loop;
    grpc_call *call;
    atomic_int refs; /* one per tag in flight */
    rpc__exchange x;
    bool status_ok;
    const ProtobufCMessageDescriptor *reply_desc;
    rpc_stream_msg_cb on_msg;
    rpc_stream_end_cb on_end;
    void *arg;
};

static void rpc__stream_unref(rpc_client_stream *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    rpc_status st;
    if (s->status_ok)
        rpc__status_from_core(&st, s->x.status, s->x.details, &s->x.trailing);
    else
        rpc_status_set(&st, GRPC_STATUS_UNAVAILABLE, "unavailable", "stream failed in transport");
    atomic_fetch_sub(&s->loop->pending, 1);
    rpc_trace prev = rpc_trace_enter(&s->x.trace);
    s->on_end(s->arg, &st);
    rpc_trace_leave(&prev);
    rpc__exchange_release(&s->x);
    grpc_call_unref(s->call);
    free(s);
}

static void rpc__stream_post_recv(rpc_client_stream *s)
{
    grpc_op op;
    rpc__recv_message_op(&s->x, &op);
    atomic_fetch_add(&s->refs, 1);
    if (grpc_call_start_batch(s->call, &op, 1, &s->recv_tag, NULL) != GRPC_CALL_OK) {
        grpc_call_cancel(s->call, NULL);
        rpc__stream_unref(s);
    }
}

static void rpc__stream_on_start(rpc__tag *tag, bool ok)
{
    rpc_client_stream *s = rpc__container_of(tag, rpc_client_stream, start_tag);
    if (!ok)
        grpc_call_cancel(s->call, NULL);
    rpc__stream_unref(s);
}

static void rpc__stream_on_recv(rpc__tag *tag, bool ok)
{
    rpc_client_stream *s = rpc__container_of(tag, rpc_client_stream, recv_tag);
    if (ok && s->x.recv != NULL) {
        ProtobufCMessage *msg = rpc_unpack(s->reply_desc, s->x.recv, NULL);
        grpc_byte_buffer_destroy(s->x.recv);
        s->x.recv = NULL;
        if (msg == NULL) {
            log_warn("stream_bad_message", "type=%s", s->reply_desc->name);
            grpc_call_cancel(s->call, NULL);
        } else {
            rpc_trace prev = rpc_trace_enter(&s->x.trace);
            s->on_msg(s->arg, msg);
            rpc_trace_leave(&prev);
            protobuf_c_message_free_unpacked(msg, NULL);
            rpc__stream_post_recv(s);
        }
    }
    /* A NULL message is the end of the stream; the status follows. */
    rpc__stream_unref(s);
}

static void rpc__stream_on_status(rpc__tag *tag, bool ok)
{
    rpc_client_stream *s = rpc__container_of(tag, rpc_client_stream, status_tag);
    s->status_ok = ok;
    rpc__stream_unref(s);
}

rpc_client_stream *rpc_client_stream_open(rpc_channel *ch, const char *method,
                                          const ProtobufCMessage *req,
                                          const ProtobufCMessageDescriptor *reply_desc,
                                          const rpc_client_opts *opts, rpc_stream_msg_cb on_msg,
                                          rpc_stream_end_cb on_end, void *arg)
{
    rpc_loop *loop = rpc__client_loop_for(opts);
    rpc_client_stream *s = calloc(1, sizeof(*s));
    if (s == NULL || loop == NULL) {
        free(s);
        return NULL;
    }
    s->start_tag.fn = rpc__stream_on_start;
    s->recv_tag.fn = rpc__stream_on_recv;
    s->status_tag.fn = rpc__stream_on_status;
    s->loop = loop;
    s->reply_desc = reply_desc;
    s->on_msg = on_msg;
    s->on_end = on_end;
    s->arg = arg;
    rpc__exchange_init(&s->x, opts, rpc_pack(req));
    /* A stream lives until cancelled: its deadline is the caller's
     * timeout_ms when given, otherwise none. */
    gpr_timespec deadline = (opts && opts->timeout_ms > 0) ? rpc__client_deadline(opts)
                                                           : gpr_inf_future(GPR_CLOCK_REALTIME);
    s->call = rpc__create_call(ch, loop->cq, method, deadline);
    if (s->call == NULL) {
        rpc__exchange_release(&s->x);
        free(s);
        return NULL;
    }
    atomic_fetch_add(&loop->pending, 1);
    /* Hold one reference until all three batches are posted. */
    atomic_store(&s->refs, 1);

    grpc_op ops[4];
    rpc__request_ops(&s->x, ops);
    atomic_fetch_add(&s->refs, 1);
    if (grpc_call_start_batch(s->call, ops, 4, &s->start_tag, NULL) != GRPC_CALL_OK)
        atomic_fetch_sub(&s->refs, 1);

    grpc_op sop;
    rpc__status_op(&s->x, &sop);
    atomic_fetch_add(&s->refs, 1);
    if (grpc_call_start_batch(s->call, &sop, 1, &s->status_tag, NULL) != GRPC_CALL_OK)
        atomic_fetch_sub(&s->refs, 1);

    rpc__stream_post_recv(s);
    rpc__stream_unref(s);
    return s;
}

void rpc_client_stream_cancel(rpc_client_stream *s)
{
    grpc_call_cancel(s->call, NULL);
}

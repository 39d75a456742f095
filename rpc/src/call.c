/*
 * call.c — the per-call state machine of the server (rpc/rpc.h's rpc_call).
 *
 * Every inbound call is an rpc_call whose life is:
 *
 *   REQUESTED --(arrives)--> ACTIVE --(finish batch sent)--> FINISHING --> freed
 *
 * On arrival the worker first posts the next request for that method (keeps
 * the queue stocked), admits the call through the abuse guard, checks the
 * caller's identity, decodes the request into the call's arena and runs the
 * handler. The call is freed when both the close and the final status
 * batch have completed (two references; a handler that finishes before
 * returning sends the close in the final batch). A stream's messages go one
 * batch at a time through a small queue guarded by the call's mutex, so
 * handlers may send and finish from any thread. Finished call objects are
 * kept on their worker for reuse.
 */
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "server_call.h"

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

void rpc__loop_free_calls(rpc_loop *loop)
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

int rpc__request(rpc_server *s, rpc_loop *loop, rpc__method *m)
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

/* The final status batch is over, or could not start: drops the
 * references its completion holds (the close's too when it rode in that
 * batch). Called with c->mu held; releases it. */
static void rpc__final_done_unlock(rpc_call *c)
{
    bool close_too = c->close_in_final;
    pthread_mutex_unlock(&c->mu);
    if (close_too)
        rpc__call_unref(c);
    rpc__call_unref(c);
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
        rpc__final_done_unlock(c);
        return;
    }
    if (!ok)
        c->closed = true;
    if (!c->closed && c->queue_head)
        rpc__send_next_locked(c);
    if (!c->sending && c->finish_requested) {
        rpc__send_status_locked(c);
        if (!c->sending) { /* could not start */
            rpc__final_done_unlock(c);
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
            rpc__final_done_unlock(c);
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

/* rpc_call_fail and rpc_call_finish: the same finish, named for a unary
 * call's failure and a stream's end. */
static void rpc__vfinish(rpc_call *c, grpc_status_code code, const char *reason, const char *fmt,
                         va_list ap)
{
    rpc_status st;
    rpc_status_vset(&st, code, reason, fmt, ap);
    rpc__finish(c, NULL, &st);
}

void rpc_call_fail(rpc_call *c, grpc_status_code code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpc__vfinish(c, code, reason, fmt, ap);
    va_end(ap);
}

void rpc_call_finish(rpc_call *c, grpc_status_code code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpc__vfinish(c, code, reason, fmt, ap);
    va_end(ap);
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

int rpc_stream_queued(rpc_call *c)
{
    pthread_mutex_lock(&c->mu);
    int n = c->queue_len;
    pthread_mutex_unlock(&c->mu);
    return n;
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

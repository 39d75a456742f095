/*
 * events.c — the event log's operations: the events a write carries
 * (checked, passed as statement parameters), AppendEvents and ReadEvents.
 *
 * The store treats an event body as opaque bytes (a packed
 * scrabble.v1.Event without its id): it bounds it, stores it, and on the
 * way out appends the row's id as Event.event_id. Protobuf lets a field be
 * appended to a packed message, so nothing here knows the event types.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "scrabble/v1/store.pb-c.h"
#include "store.h"

/* A request carries at most this many events (a move of a 4-seat game
 * ending it: 3 OPPONENT_MOVED + 4 GAME_OVER) ... */
#define STORE__EVENTS_MAX 16
/* ... each at most this large (a GAME_OVER with a full move and 4 seats is
 * under 1 kB; a CHAT holds at most 500 characters). */
#define STORE__EVENT_BYTES_MAX 4096
#define STORE__DEDUPE_MAX 64
#define STORE__READ_DEFAULT 100
#define STORE__READ_MAX 500
/* Event.event_id: field 14, length-delimited. */
#define STORE__EVENT_ID_TAG 0x72

const char *store_events_check(Scrabble__V1__EventRecord *const *ev, size_t n)
{
    if (n > STORE__EVENTS_MAX)
        return "more than 16 events";
    for (size_t i = 0; i < n; i++) {
        if (ev[i]->account_id <= 0)
            return "an event's account_id must be positive";
        if (ev[i]->body.len == 0 || ev[i]->body.len > STORE__EVENT_BYTES_MAX)
            return "an event's body must be 1..4096 bytes";
        if (strlen(ev[i]->dedupe_key) > STORE__DEDUPE_MAX)
            return "an event's dedupe_key is longer than 64 bytes";
    }
    return NULL;
}

void store_op_param_events(store_op *op, int i, Scrabble__V1__EventRecord *const *ev, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* Recipients: "{1,2,3}". Bodies: "{0a1b..,..}" (hex needs no quoting
     * in an array literal, and decode(.., 'hex') takes it as it is). */
    char *acc = rpc_arena_alloc(op->arena, 3 + n * 21);
    size_t bytes = 3;
    for (size_t k = 0; k < n; k++)
        bytes += 2 * ev[k]->body.len + 1;
    char *bod = rpc_arena_alloc(op->arena, bytes);
    if (!acc || !bod) {
        /* The arena is out of memory: an empty list fails nothing and the
         * op's own allocations will report the OOM. */
        op->params[i] = op->params[i + 1] = "{}";
        op->lengths[i] = op->lengths[i + 1] = 0;
        op->formats[i] = op->formats[i + 1] = 0;
        if (op->nparams < i + 2)
            op->nparams = i + 2;
        return;
    }
    size_t a = 0, b = 0;
    acc[a++] = '{';
    bod[b++] = '{';
    for (size_t k = 0; k < n; k++) {
        a += (size_t)sprintf(acc + a, "%s%" PRId64, k ? "," : "", ev[k]->account_id);
        if (k)
            bod[b++] = ',';
        for (size_t j = 0; j < ev[k]->body.len; j++) {
            bod[b++] = hex[ev[k]->body.data[j] >> 4];
            bod[b++] = hex[ev[k]->body.data[j] & 15];
        }
    }
    acc[a++] = '}';
    acc[a] = '\0';
    bod[b++] = '}';
    bod[b] = '\0';
    op->params[i] = acc;
    op->params[i + 1] = bod;
    op->lengths[i] = op->lengths[i + 1] = 0;
    op->formats[i] = op->formats[i + 1] = 0;
    if (op->nparams < i + 2)
        op->nparams = i + 2;
}

size_t store_event_with_id(const uint8_t *body, size_t n, int64_t id, uint8_t *out, size_t len)
{
    char digits[24];
    int d = snprintf(digits, sizeof digits, "%" PRId64, id);
    if (d <= 0 || n + 2 + (size_t)d > len)
        return 0;
    memcpy(out, body, n);
    out[n] = STORE__EVENT_ID_TAG;
    out[n + 1] = (uint8_t)d; /* at most 20 digits: a one-byte varint */
    memcpy(out + n + 2, digits, (size_t)d);
    return n + 2 + (size_t)d;
}

/* ---- AppendEvents ---- */

static store_next store__append_events_done(store_op *op, PGresult *res)
{
    (void)res;
    op->reply = (ProtobufCMessage *)RPC_ARENA_MSG(op->arena, Scrabble__V1__AppendEventsReply,
                                                  scrabble__v1__append_events_reply__init);
    return STORE_NEXT_DONE;
}

store_next store_append_events_begin(store_op *op)
{
    const Scrabble__V1__AppendEventsRequest *req = op->req;
    const char *why;
    if ((why = store_events_check(req->events, req->n_events))) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_events", "%s", why);
        return STORE_NEXT_DONE;
    }
    if (req->n_events == 0)
        return store__append_events_done(op, NULL);
    char **keys = rpc_arena_alloc(op->arena, req->n_events * sizeof *keys);
    if (!keys) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    for (size_t k = 0; k < req->n_events; k++)
        keys[k] = req->events[k]->dedupe_key;
    op->stmt = "append_events";
    store_op_param_events(op, 0, req->events, req->n_events);
    /* The statement takes (recipients, keys, bodies): move the bodies up. */
    op->params[2] = op->params[1];
    store_op_param_text_array(op, 1, keys, req->n_events);
    op->nparams = 3;
    op->writes_events = true;
    op->step = store__append_events_done;
    return STORE_NEXT_WRITE;
}

/* ---- ReadEvents ---- */

typedef struct store__read {
    int64_t account_id, after_id;
    int limit;
} store__read;

static store_next store__read_events_done(store_op *op, PGresult *res)
{
    store__read *rd = op->scratch;
    int rows = PQntuples(res);
    if (rows < 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    int64_t horizon = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    int64_t latest = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    if (rd->after_id >= 0 && rd->after_id < horizon) {
        rpc_status_set(&op->st, GRPC_STATUS_OUT_OF_RANGE, "events_expired",
                       "events after %" PRId64 " are no longer kept (the log starts after %" PRId64
                       "): resynchronise with GetState",
                       rd->after_id, horizon);
        return STORE_NEXT_DONE;
    }
    if (rd->after_id > latest) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_event_id",
                       "event id %" PRId64 " was never issued", rd->after_id);
        return STORE_NEXT_DONE;
    }
    Scrabble__V1__ReadEventsReply *r = RPC_ARENA_MSG(op->arena, Scrabble__V1__ReadEventsReply,
                                                     scrabble__v1__read_events_reply__init);
    r->latest_event_id = latest;
    r->events = rpc_arena_calloc(op->arena, (size_t)rows, sizeof *r->events);
    if (!r->events) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    int got = 0;
    for (int i = 0; i < rows; i++) {
        if (PQgetisnull(res, i, 2))
            continue; /* nothing after after_id */
        got++;
        int64_t id = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        uint8_t *body, *full;
        size_t n, m;
        if (store_bytea_decode(op->arena, PQgetvalue(res, i, 3), &body, &n) != STORE_OK ||
            !(full = rpc_arena_alloc(op->arena, n + 24)) ||
            (m = store_event_with_id(body, n, id, full, n + 24)) == 0)
            continue;
        Scrabble__V1__Event *e =
            scrabble__v1__event__unpack(rpc_arena_allocator(op->arena), m, full);
        if (!e) {
            /* Not something a writer of ours packed: skipped, not fatal
             * to the account's whole log. */
            log_warn("event_unreadable", "account=%" PRId64 " id=%" PRId64, rd->account_id, id);
            continue;
        }
        r->events[r->n_events++] = e;
    }
    r->more = rd->limit > 0 && got == rd->limit;
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_read_events_begin(store_op *op)
{
    const Scrabble__V1__ReadEventsRequest *req = op->req;
    if (req->account_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "account not found");
        return STORE_NEXT_DONE;
    }
    if (req->after_id < -1 || req->limit < 0 || req->limit > STORE__READ_MAX)
        return store_op_bad(op, "bad_request", "after_id >= -1, limit 0..500");
    store__read *rd = rpc_arena_calloc(op->arena, 1, sizeof *rd);
    if (!rd) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    rd->account_id = req->account_id;
    rd->after_id = req->after_id;
    /* after_id -1 asks only for latest_event_id: no rows. */
    rd->limit = req->after_id < 0 ? 0 : req->limit == 0 ? STORE__READ_DEFAULT : req->limit;
    op->scratch = rd;
    op->stmt = "read_events";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_i64(op, 1, req->after_id < 0 ? INT64_MAX : req->after_id);
    store_op_param_i64(op, 2, rd->limit);
    op->step = store__read_events_done;
    return STORE_NEXT_READ;
}

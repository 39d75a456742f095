/*
 * deadlines.c — the store side of time controls: StartClock, TimeoutGame,
 * ClaimDeadlines (0005_time_controls.sql has the tables and the rules).
 * game-svc computes every clock and deadline; store-svc keeps them with
 * the game and hands the due ones out, each to one caller at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__MAX_SEATS 4
#define STORE__CLAIM_MAX 256
#define STORE__LEASE_MIN_MS 1000
#define STORE__LEASE_MAX_MS 600000

const char *store_check_clock(const Scrabble__V1__GameClock *c)
{
    if (c->n_remaining_ms > STORE__MAX_SEATS)
        return "clock.remaining_ms has more than 4 seats";
    if (c->turn_started_ms < 0 || c->deadline_ms < 0 || c->warning_ms < 0)
        return "clock times must not be negative";
    if (c->deadline_ms > 0 && c->deadline_reason != SCRABBLE__V1__END_REASON__END_REASON_TIMEOUT &&
        c->deadline_reason != SCRABBLE__V1__END_REASON__END_REASON_ABANDONED)
        return "clock.deadline_reason must be TIMEOUT or ABANDONED";
    return NULL;
}

void store_op_param_clock(store_op *op, int first, const Scrabble__V1__GameClock *c)
{
    static const int64_t none[1] = {0};
    store_op_param_i64_array(op, first, c ? c->remaining_ms : none, c ? c->n_remaining_ms : 0);
    store_op_param_i64(op, first + 1, c ? c->turn_started_ms : 0);
    store_op_param_i64(op, first + 2, c ? c->deadline_ms : 0);
    store_op_param_i64(op, first + 3, c && c->deadline_ms ? c->deadline_reason : 0);
    store_op_param_i64(op, first + 4, c ? c->warning_ms : 0);
}

static store_next store__bad_clock(store_op *op, const char *why)
{
    rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_clock", "%s", why);
    return STORE_NEXT_DONE;
}

/* ---- StartClock ---- */

static store_next store__clock_done(store_op *op, PGresult *res)
{
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    if (!store_op_code(op, PQgetvalue(res, 0, 0), NULL))
        return STORE_NEXT_DONE;
    op->reply = store_op_json_col(op, res, 0, 1, store_json_clock);
    if (!op->reply)
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "bad clock record");
    return STORE_NEXT_DONE;
}

store_next store_start_clock_begin(store_op *op)
{
    const Scrabble__V1__StartClockRequest *req = op->req;
    const char *why;
    if (req->game_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "game not found");
        return STORE_NEXT_DONE;
    }
    if (!req->clock)
        return store__bad_clock(op, "clock is required");
    if ((why = store_check_clock(req->clock)))
        return store__bad_clock(op, why);
    op->stmt = "start_clock";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_clock(op, 1, req->clock);
    op->step = store__clock_done;
    return STORE_NEXT_WRITE;
}

/* ---- TimeoutGame ---- */

store_next store_timeout_game_begin(store_op *op)
{
    const Scrabble__V1__TimeoutGameRequest *req = op->req;
    const char *why;
    static const int64_t none[1] = {0};
    if (req->game_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "game not found");
        return STORE_NEXT_DONE;
    }
    if (!req->finish || (why = store_check_finish(req->finish, true))) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_finish", "%s",
                       req->finish ? why : "finish is required");
        return STORE_NEXT_DONE;
    }
    if (req->clock && (why = store_check_clock(req->clock)))
        return store__bad_clock(op, why);
    if ((why = store_events_check(req->events, req->n_events))) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_events", "%s", why);
        return STORE_NEXT_DONE;
    }
    op->stmt = "timeout_game";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_i64(op, 1, req->seq);
    store_op_param_i64(op, 2, req->finish->end_reason);
    store_op_param_int_array(op, 3, req->finish->final_scores, req->finish->n_final_scores);
    store_op_param_int_array(op, 4, req->finish->winners, req->finish->n_winners);
    store_op_param_i64_array(op, 5, req->clock ? req->clock->remaining_ms : none,
                             req->clock ? req->clock->n_remaining_ms : 0);
    store_op_param_events(op, 6, req->events, req->n_events);
    op->writes_events = req->n_events > 0;
    op->step = store_game_write_done;
    return STORE_NEXT_WRITE;
}

/* ---- ClaimDeadlines ---- */

Scrabble__V1__ClaimDeadlinesReply *store_claim_reply(store_op *op, int n)
{
    Scrabble__V1__ClaimDeadlinesReply *r = RPC_ARENA_MSG(
        op->arena, Scrabble__V1__ClaimDeadlinesReply, scrabble__v1__claim_deadlines_reply__init);
    if (r && (r->deadlines = rpc_arena_calloc(op->arena, n ? (size_t)n : 1, sizeof(*r->deadlines))))
        for (int i = 0; i < n; i++) {
            if (!(r->deadlines[i] = RPC_ARENA_MSG(op->arena, Scrabble__V1__Deadline,
                                                  scrabble__v1__deadline__init)))
                break;
            r->n_deadlines++;
        }
    if (!r || r->n_deadlines != (size_t)n) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return NULL;
    }
    return r;
}

bool store_claim_begin(store_op *op, const Scrabble__V1__ClaimDeadlinesRequest *req,
                       const char *stmt)
{
    if (req->now_ms <= 0 || req->limit < 1 || req->limit > STORE__CLAIM_MAX ||
        req->lease_ms < STORE__LEASE_MIN_MS || req->lease_ms > STORE__LEASE_MAX_MS) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                       "now_ms > 0, limit 1..%d, lease_ms %d..%d", STORE__CLAIM_MAX,
                       STORE__LEASE_MIN_MS, STORE__LEASE_MAX_MS);
        return false;
    }
    op->stmt = stmt;
    store_op_param_i64(op, 0, req->now_ms);
    store_op_param_i64(op, 1, req->limit);
    store_op_param_i64(op, 2, req->lease_ms);
    return true;
}

static store_next store__claim_done(store_op *op, PGresult *res)
{
    int n = PQntuples(res);
    Scrabble__V1__ClaimDeadlinesReply *r = store_claim_reply(op, n);
    if (!r)
        return STORE_NEXT_DONE;
    for (int i = 0; i < n; i++) {
        Scrabble__V1__Deadline *d = r->deadlines[i];
        d->kind = (Scrabble__V1__DeadlineKind)atoi(PQgetvalue(res, i, 0));
        d->game_id = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        d->seq = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        d->due_ms = strtoll(PQgetvalue(res, i, 3), NULL, 10);
        d->end_reason = (Scrabble__V1__EndReason)atoi(PQgetvalue(res, i, 4));
        d->account_id = PQgetisnull(res, i, 5) ? 0 : strtoll(PQgetvalue(res, i, 5), NULL, 10);
        d->deadline_ms = strtoll(PQgetvalue(res, i, 6), NULL, 10);
        if (!PQgetisnull(res, i, 7))
            d->invitation =
                (Scrabble__V1__Invitation *)store_op_json_col(op, res, i, 7, store_json_invitation);
        if (PQnfields(res) > 8 && !PQgetisnull(res, i, 8))
            d->seek = (Scrabble__V1__Seek *)store_op_json_col(op, res, i, 8, store_json_seek);
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_claim_deadlines_begin(store_op *op)
{
    const Scrabble__V1__ClaimDeadlinesRequest *req = op->req;
    if (!store_claim_begin(op, req, "claim_deadlines"))
        return STORE_NEXT_DONE;
    op->step = store__claim_done;
    return STORE_NEXT_WRITE;
}

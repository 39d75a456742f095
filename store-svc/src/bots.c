/*
 * bots.c — the store side of bots (0008_bots.sql): ClaimBotTurns hands
 * out the games whose bot is to move, each to one game-svc poller at a
 * time (leased). Which accounts are bots, their auto-acceptance and the
 * bot_turns rows themselves are the migration's triggers: they happen in
 * the transactions of the invitation, the game and the moves.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__BOT_CLAIM_MAX 256
#define STORE__BOT_LEASE_MIN_MS 1000
#define STORE__BOT_LEASE_MAX_MS 600000
#define STORE__BOT_PREFER_MAX 128
#define STORE__BOT_GRACE_MAX_MS 600000

bool store_handle_is_bot_reserved(const char *handle)
{
    return handle && strncasecmp(handle, STORE_BOT_PREFIX, strlen(STORE_BOT_PREFIX)) == 0;
}

static store_next store__bot_claim_done(store_op *op, PGresult *res)
{
    int n = PQntuples(res);
    Scrabble__V1__ClaimDeadlinesReply *r = RPC_ARENA_MSG(
        op->arena, Scrabble__V1__ClaimDeadlinesReply, scrabble__v1__claim_deadlines_reply__init);
    if (!r ||
        !(r->deadlines = rpc_arena_calloc(op->arena, n ? (size_t)n : 1, sizeof(*r->deadlines)))) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    for (int i = 0; i < n; i++) {
        Scrabble__V1__Deadline *d =
            RPC_ARENA_MSG(op->arena, Scrabble__V1__Deadline, scrabble__v1__deadline__init);
        if (!d)
            break;
        d->kind = SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_BOT_TURN;
        d->game_id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
        d->seq = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        d->due_ms = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        d->account_id = strtoll(PQgetvalue(res, i, 3), NULL, 10);
        d->bot_level = rpc_arena_strdup(op->arena, PQgetvalue(res, i, 4));
        if (!d->bot_level)
            break;
        r->deadlines[r->n_deadlines++] = d;
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_claim_bot_turns_begin(store_op *op)
{
    const Scrabble__V1__ClaimDeadlinesRequest *req = op->req;
    if (req->now_ms <= 0 || req->limit < 1 || req->limit > STORE__BOT_CLAIM_MAX ||
        req->lease_ms < STORE__BOT_LEASE_MIN_MS || req->lease_ms > STORE__BOT_LEASE_MAX_MS ||
        req->n_prefer_game_ids > STORE__BOT_PREFER_MAX || req->grace_ms < 0 ||
        req->grace_ms > STORE__BOT_GRACE_MAX_MS) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                       "now_ms > 0, limit 1..%d, lease_ms %d..%d, at most %d preferred games, "
                       "grace_ms 0..%d",
                       STORE__BOT_CLAIM_MAX, STORE__BOT_LEASE_MIN_MS, STORE__BOT_LEASE_MAX_MS,
                       STORE__BOT_PREFER_MAX, STORE__BOT_GRACE_MAX_MS);
        return STORE_NEXT_DONE;
    }
    op->stmt = "claim_bot_turns";
    store_op_param_i64(op, 0, req->now_ms);
    store_op_param_i64(op, 1, req->limit);
    store_op_param_i64(op, 2, req->lease_ms);
    store_op_param_i64_array(op, 3, req->prefer_game_ids, req->n_prefer_game_ids);
    store_op_param_i64(op, 4, req->grace_ms);
    op->step = store__bot_claim_done;
    return STORE_NEXT_WRITE;
}

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

#define STORE__BOT_PREFER_MAX 128
#define STORE__BOT_GRACE_MAX_MS 600000

bool store_handle_is_bot_reserved(const char *handle)
{
    return handle && strncasecmp(handle, STORE_BOT_PREFIX, strlen(STORE_BOT_PREFIX)) == 0;
}

static store_next store__bot_claim_done(store_op *op, PGresult *res)
{
    int n = PQntuples(res);
    Scrabble__V1__ClaimDeadlinesReply *r = store_claim_reply(op, n);
    if (!r)
        return STORE_NEXT_DONE;
    for (int i = 0; i < n; i++) {
        Scrabble__V1__Deadline *d = r->deadlines[i];
        d->kind = SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_BOT_TURN;
        d->game_id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
        d->seq = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        d->due_ms = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        d->account_id = strtoll(PQgetvalue(res, i, 3), NULL, 10);
        if (!(d->bot_level = rpc_arena_strdup(op->arena, PQgetvalue(res, i, 4)))) {
            rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                           "out of memory");
            return STORE_NEXT_DONE;
        }
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_claim_bot_turns_begin(store_op *op)
{
    const Scrabble__V1__ClaimDeadlinesRequest *req = op->req;
    if (!store_claim_begin(op, req, "claim_bot_turns"))
        return STORE_NEXT_DONE;
    if (req->n_prefer_game_ids > STORE__BOT_PREFER_MAX || req->grace_ms < 0 ||
        req->grace_ms > STORE__BOT_GRACE_MAX_MS) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                       "at most %d preferred games, grace_ms 0..%d", STORE__BOT_PREFER_MAX,
                       STORE__BOT_GRACE_MAX_MS);
        return STORE_NEXT_DONE;
    }
    store_op_param_i64_array(op, 3, req->prefer_game_ids, req->n_prefer_game_ids);
    store_op_param_i64(op, 4, req->grace_ms);
    op->step = store__bot_claim_done;
    return STORE_NEXT_WRITE;
}

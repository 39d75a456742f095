/*
 * watch.c — Game.WatchState: a game as an observer sees it (docs/API.md,
 * Spectators). Public games answer anyone the gateway authenticated; a
 * private game answers only its players. Whoever asks gets the observer's
 * view: no rack (my_seat = -1) until the game is over, moves without
 * exchanged tiles.
 *
 * The op waits behind a commit in flight, as a turn does (is_turn): the
 * gateway's Watch streams call this when the event of a committed move
 * reaches them, possibly before this process has applied the store's
 * reply to its cache; waiting for that commit means the answer always
 * holds the move that woke the caller.
 */
#include "game_svc.h"
#include "handlers.h"

static int watch__state_run(game_svc *svc, game_entry *e, game_op *op)
{
    const Scrabble__V1__WatchStateRequest *r = (const Scrabble__V1__WatchStateRequest *)op->req;
    rpc_arena *a = rpc_call_arena(op->call);
    if (!e->public_game && game_rules_seat_of(&e->g, op->account_id) < 0) {
        rpc_call_fail(op->call, GRPC_STATUS_PERMISSION_DENIED, "private_game",
                      "game %lld is private: only its players may see it", (long long)e->game_id);
        return GAME_OP_DONE;
    }
    /* A fallen flag not yet settled: settle it first (as GetState does),
     * so observers see the stored end. */
    if (e->g.status == GAME_STATUS_ACTIVE && !op->timeout_tried &&
        game_clock_expired(&e->clock, game_clock_now(svc)))
        return game_timeout_run(svc, e, op);
    Scrabble__V1__WatchStateReply *rep =
        RPC_ARENA_MSG(a, Scrabble__V1__WatchStateReply, scrabble__v1__watch_state_reply__init);
    Scrabble__V1__GameState *st = rep ? game_view_state(a, e, -1) : NULL;
    if (!st) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    game_view_time(a, st, e, game_clock_now(svc));
    rep->state = st;
    size_t from = r->since_seq > 0 ? (size_t)r->since_seq : 0;
    if (from > e->nmoves)
        from = e->nmoves;
    size_t n = e->nmoves - from;
    if (n > 0) {
        if (!(rep->moves = rpc_arena_alloc(a, n * sizeof *rep->moves))) {
            rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                          "out of memory");
            return GAME_OP_DONE;
        }
        for (size_t i = 0; i < n; i++) {
            /* Never the exchanged tiles, whoever asks. */
            if (!(rep->moves[i] = game_view_move(a, &e->moves[from + i], false))) {
                rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                              "out of memory");
                return GAME_OP_DONE;
            }
        }
        rep->n_moves = n;
    }
    rpc_call_reply(op->call, &rep->base);
    return GAME_OP_DONE;
}

void game_watch_state(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__WatchStateRequest *r = (const Scrabble__V1__WatchStateRequest *)req;
    if (r->since_seq < 0) {
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "since_seq must not be negative");
        return;
    }
    game_op *op = game_handlers_op(call, req, watch__state_run);
    if (!op)
        return;
    op->is_turn = true; /* ordered after a commit in flight (see above) */
    game_dispatch(svc, r->game_id, op);
}

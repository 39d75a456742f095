/*
 * turn.h — the turn path of game-svc, in one place: a seat's play, pass,
 * exchange or resign, from the request to the committed state and its
 * reply. The path, for a gRPC call and an in-process caller alike:
 *
 *   game_turn_init   the request checked and copied into an op
 *   game_dispatch    the op waits until the entry is READY and no turn is
 *                    queued before it (cache.h)
 *   game_turn_run    seat check, expected_seq (and the idempotent retry of
 *                    an acknowledged turn), the flag (a fallen one ends the
 *                    game on time first), rules, clock, then CommitMove with
 *                    the move's events; the entry is COMMITTING
 *   commit done      applied only on the store's OK; the reply is the move
 *                    and the mover's view (TurnReply); game_write_done
 *
 * A store call made for a gRPC caller is bounded by that call's deadline
 * (store_client.h); an in-process turn has no deadline of its own and gets
 * the store client's fixed bound.
 */
#ifndef GAME_TURN_H
#define GAME_TURN_H

#include <stddef.h>
#include <stdint.h>

#include "game_svc.h"

/* A turn as a seat asks for it. Nothing in it is kept: game_turn_init
 * copies what it needs into the op. */
typedef struct game_turn_request {
    int64_t game_id;
    int64_t account_id;   /* the seat's account (game_turn_submit; a call's comes from metadata) */
    int64_t expected_seq; /* the seq the caller saw (TurnRequest.expected_seq) */
    int kind;             /* GAME_MOVE_PLAY, _PASS, _EXCHANGE or _RESIGN */
    const solver_placement *placed; /* PLAY: the tiles, at most SOLVER_RACK_MAX */
    size_t nplaced;
    const char *tiles; /* EXCHANGE: the letters to put back, 1..SOLVER_RACK_MAX */
} game_turn_request;

/* Makes op a turn (run step, place in the queue behind other turns) from t.
 * Returns 0, or -1 with st set (INVALID_ARGUMENT too_many_placements,
 * bad_request or illegal_play:tile_not_on_rack) when t is malformed. */
int game_turn_init(game_op *op, const game_turn_request *t, rpc_status *st);

/* The run step of a turn (e->mu held, e READY). Returns a GAME_OP_* code. */
int game_turn_run(game_svc *svc, game_entry *e, game_op *op);

/* Submits a turn on behalf of t->account_id's seat from inside game-svc
 * (a bot): the same path as SubmitPlay/Pass/Exchange/Resign, the same
 * checks, replies and scrabble-reasons. done(arg, st, reply) gets the
 * TurnReply (as Scrabble__V1__TurnReply's base) or the failure, exactly
 * once (see game_op_done_fn: perhaps before this returns, perhaps under
 * the game's lock). Returns 0, or -1 when out of memory (done is then not
 * called). */
int game_turn_submit(game_svc *svc, const game_turn_request *t, game_op_done_fn done, void *arg);

#endif

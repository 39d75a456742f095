/*
 * rules.h — the game state machine of game-svc, on top of libsolver.
 *
 * Pure: no I/O, no locks, no allocation. A game_state is a plain value
 * (memcpy to copy, about 3.5 KB) holding everything needed to continue a
 * game: board, bag (with its PRNG state), racks, scores, whose turn, seq,
 * the scoreless-turn counter, the end and the last move. Replaying a game's
 * moves from game_rules_init(seed) rebuilds the exact state, because the bag
 * is solver_bag (xoshiro256** from the seed) and every draw and every
 * exchange reshuffle is a function of the bag's own PRNG state.
 *
 * Rules choices, where the standard leaves room:
 * - Deal: seat 0 draws 7, then seat 1, ... in seat order.
 * - Exchange: the returned tiles leave the rack, the rack is refilled from
 *   the bag, then the returned tiles go back and the bag is reshuffled.
 * - A scoreless turn is any turn scoring 0 (pass, exchange, or a 0-point
 *   play); six in a row, by any seats, end the game; every seat then loses
 *   the value of its own rack.
 * - Out: the mover's rack and the bag are both empty after a play; the mover
 *   gains the sum of the other racks, each other seat loses its own.
 * - Resignation (allowed out of turn) ends the game for every seat, without
 *   rack adjustments; the resigner cannot win; the winners are the other
 *   seats with the highest score.
 * - Winners: every eligible seat with the highest final score (ties allowed).
 */
#ifndef GAME_RULES_H
#define GAME_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solver.h"

#define GAME_MAX_SEATS 4
#define GAME_MIN_SEATS 2
#define GAME_SCORELESS_LIMIT 6
#define GAME_HANDLE_MAX 64

/* Values match scrabble.v1.GameStatus / EndReason / MoveKind. */
enum { GAME_STATUS_ACTIVE = 1, GAME_STATUS_FINISHED = 2 };
enum { GAME_END_NONE = 0, GAME_END_OUT = 1, GAME_END_SCORELESS = 2, GAME_END_RESIGN = 3 };
enum { GAME_MOVE_PLAY = 1, GAME_MOVE_PASS = 2, GAME_MOVE_EXCHANGE = 3, GAME_MOVE_RESIGN = 4 };

/* Return codes of game_rules_turn. Each maps to one gRPC status + reason. */
enum {
    GAME_RULES_OK = 0,
    GAME_RULES_ILLEGAL,       /* INVALID_ARGUMENT illegal_play:<why> */
    GAME_RULES_NOT_YOUR_TURN, /* FAILED_PRECONDITION not_your_turn */
    GAME_RULES_GAME_OVER,     /* FAILED_PRECONDITION game_over */
    GAME_RULES_BAG_TOO_SMALL, /* FAILED_PRECONDITION bag_too_small */
    GAME_RULES_BAD_REQUEST,   /* INVALID_ARGUMENT bad_request */
};

/* One committed turn, compact (no heap): what GetHistory and replay need. */
typedef struct game_move {
    int64_t seq;
    int64_t account_id;
    int64_t at_ms;
    int seat;
    int kind;    /* GAME_MOVE_* */
    int score;   /* points of the move itself */
    int nplaced; /* PLAY: new tiles, in board order */
    solver_placement placed[SOLVER_RACK_MAX];
    char exchanged[SOLVER_RACK_MAX + 1]; /* EXCHANGE: tiles returned, '?' blank */
    int nwords;                          /* PLAY: main word first */
    char words[SOLVER_MAX_WORDS][SOLVER_DIM + 1];
    char notation[40]; /* "8D WORD", "PASS", "EXCH 3", "RESIGN" */
} game_move;

typedef struct game_seat {
    int64_t account_id;
    char handle[GAME_HANDLE_MAX];
    int score;
    solver_rack rack;
} game_seat;

typedef struct game_state {
    const solver_lexicon *lex; /* borrowed; outlives the state */
    const solver_dist *dist;   /* borrowed (static) */
    uint64_t seed;
    int nseats;
    game_seat seats[GAME_MAX_SEATS];
    solver_board board;
    solver_bag bag;
    int status;     /* GAME_STATUS_* */
    int end_reason; /* GAME_END_* */
    int to_move;
    int scoreless; /* consecutive scoreless turns */
    int64_t seq;   /* seq of the last committed move, 0 before any */
    int nwinners;
    int winners[GAME_MAX_SEATS];
    int resigned_seat; /* -1 unless ended by resignation */
    /* Once finished: what the end did to each seat's score (included in
     * score): + the others' racks for the player out, - its own rack for
     * the others or after six scoreless turns, 0 on a resignation. */
    int rack_adjust[GAME_MAX_SEATS];
    bool has_last;
    game_move last; /* the last committed move (idempotent retries) */
} game_state;

/* A turn request, as decoded from the wire. Pointers are borrowed. */
typedef struct game_turn {
    int kind; /* GAME_MOVE_* */
    int seat;
    const solver_placement *placed; /* PLAY */
    size_t nplaced;
    const char *tiles; /* EXCHANGE: e.g. "QV?" */
} game_turn;

typedef struct game_rules_error {
    int code;          /* GAME_RULES_* */
    char reason[64];   /* stable token, e.g. "illegal_play:gap" */
    char message[192]; /* human story naming the word or square */
} game_rules_error;

/* Starts a game: fresh board, bag from seed, racks dealt in seat order.
 * Seats' account ids and handles are left zero for the caller to fill.
 * Returns 0, or -1 when nseats is outside 2..4. */
int game_rules_init(game_state *g, const solver_lexicon *lex, const solver_dist *dist,
                    uint64_t seed, int nseats);

/* Computes the game after `t` into *next (g is not modified; next may not
 * alias g) and the committed move into *move (seq, seat, account, at_ms set).
 * Turn-order, game-over and legality are checked here; expected_seq is the
 * caller's business. Returns GAME_RULES_OK or an error code with *err set. */
int game_rules_turn(const game_state *g, const game_turn *t, int64_t at_ms, game_state *next,
                    game_move *move, game_rules_error *err);

/* Validation and score of a tentative placement against the board and the
 * seat's rack (out of turn allowed). Returns res->reason. */
solver_reason game_rules_evaluate(const game_state *g, int seat, const solver_placement *p,
                                  size_t n, solver_result *res);

/* Re-applies a recorded move in place (cold load). Fails when the record
 * does not replay (seat, legality or score differ), which means the stored
 * game and this build of the rules disagree. */
int game_rules_replay(game_state *g, const game_move *recorded, game_rules_error *err);

/* Whether `t` asks for exactly the move `m`: the idempotent-retry test
 * ("same content", docs/API.md). Same seat and kind, and for a PLAY the same
 * set of placements (row, col, letter case-insensitively, blank flag) in any
 * order; for an EXCHANGE the same multiset of tiles ('?' a blank) in any
 * order; PASS and RESIGN have no content beyond the kind. */
bool game_rules_same_move(const game_move *m, const game_turn *t);

/* Ends g (or settles the winners again after its scores changed) with
 * end_reason: the winners are the seats with the highest score, except
 * `loser` (-1: none; else it cannot win, as a resigner). Used for the
 * time rules (clock.h): a seat out of time loses, and overtime penalties
 * change scores after a game ended. */
void game_rules_finish(game_state *g, int end_reason, int loser);

/* Seat of an account, or -1. */
int game_rules_seat_of(const game_state *g, int64_t account_id);

/* Sum of the tile values on a rack. */
int game_rules_rack_value(const solver_rack *r, const solver_dist *dist);

/* The board as 15 rows of 15 chars ('.', 'A'..'Z', 'a'..'z' for blanks),
 * each NUL-terminated, into rows[15][16]. */
void game_rules_board_rows(const game_state *g, char rows[SOLVER_DIM][SOLVER_DIM + 1]);

#endif

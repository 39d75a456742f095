/*
 * bot_play.h — how a bot chooses its move: pure (no I/O, no locks, no
 * allocation), so game-svc's bot pool, the self-play benchmark and the unit
 * test run the very same code.
 *
 * What a bot may know is exactly a bot_view: the board, its own rack, the
 * counts of the tiles it cannot see (the other racks and the bag together,
 * as a player can count them from the board) and how many are in the bag.
 * It never gets a game_state, so it cannot read another seat's rack or the
 * bag's order (bots.c builds the view under the game's lock).
 *
 * Levels, weakest first (docs/API.md, "Bots"; their measured strength is in
 * docs/BENCHMARKS-game.md, "Bots"):
 *   beginner  a random play from the middle of the list ranked by score
 *             (ranks 35%..75%), never the best; passes when it has none.
 *   club      the best play by score plus a small rack-leave heuristic
 *             (keep blanks and S, shed Q); exchanges only with no play.
 *   expert    the best by equity: score plus a leave value per tile,
 *             duplicates and the vowel/consonant balance of what stays,
 *             weighed less as the bag empties; considers exchanging; with
 *             the bag empty it values going out (the others' racks).
 */
#ifndef GAME_BOT_PLAY_H
#define GAME_BOT_PLAY_H

#include <stddef.h>
#include <stdint.h>

#include "solver.h"

enum { BOT_BEGINNER = 0, BOT_CLUB, BOT_EXPERT, BOT_NLEVELS };

/* The level named `name` ("beginner", "club", "expert"), or -1. */
int bot_level_parse(const char *name);
/* The name of a level (static storage); "?" when out of range. */
const char *bot_level_name(int level);

typedef struct bot_view {
    const solver_lexicon *lex; /* borrowed */
    const solver_dist *dist;   /* borrowed */
    solver_board board;
    solver_rack rack;   /* the bot's own */
    uint8_t unseen[27]; /* tiles neither on the board nor on its rack */
    int bag_count;      /* tiles in the bag */
    uint64_t rng;       /* seed of the bot's own randomness (beginner) */
} bot_view;

/* Scratch for one choice: the generated moves. A worker keeps one. */
#define BOT_PLAY_CAP 4096
typedef struct bot_scratch {
    solver_move moves[BOT_PLAY_CAP];
} bot_scratch;

/* Chooses the bot's move into *out (a PLAY, an EXCHANGE of out->tiles, or
 * a PASS). Always succeeds: with nothing better a bot passes. */
void bot_play_choose(const bot_view *v, int level, bot_scratch *s, solver_move *out);

/* Fills v's unseen counts from the distribution, the board and the rack. */
void bot_view_count_unseen(bot_view *v);

struct game_state;
/* The view of seat `seat` of game g: the only place a bot's knowledge is
 * taken from a game (board, that seat's rack, the bag's size; never another
 * rack or the bag's tiles). rng seeds the bot's own randomness. */
void bot_view_of_seat(const struct game_state *g, int seat, uint64_t rng, bot_view *v);

/* Storage for the tiles of a turn made from a move. */
typedef struct bot_turn_buf {
    solver_placement placed[SOLVER_RACK_MAX];
    char tiles[SOLVER_RACK_MAX + 1];
} bot_turn_buf;
struct game_turn;
/* Move m as the rules' turn (rules.h) of seat `seat`: a PLAY's new tiles
 * as placements in board order, an EXCHANGE's tiles as a rack string
 * ("QV?"), a PASS; t's pointers point into buf. */
void bot_move_turn(const solver_move *m, int seat, bot_turn_buf *buf, struct game_turn *t);

#endif

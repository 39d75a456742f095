/*
 * record.h — a game's record for GetGameRecord: the rack every move was made
 * from and the GCG text, rebuilt by replaying the game's moves from its seed
 * (the bag is a function of the seed, so the racks come back exactly).
 *
 * Pure apart from malloc: no locks, no I/O; the unit tests drive it.
 */
#ifndef GAME_RECORD_H
#define GAME_RECORD_H

#include <stddef.h>

#include "rules.h"

typedef struct game_record {
    /* racks[i]: the mover's rack before moves[i] ("AEIN?RT"). malloc'd. */
    char (*racks)[SOLVER_RACK_MAX + 1];
    size_t nracks;
    char *gcg; /* NUL-terminated GCG text, malloc'd */
} game_record;

/* Builds the record of the game whose start is (lex, dist, seed, seats of
 * `final`) and whose moves are moves[0..n), `final` being the state after
 * them (its end lines come from final's racks and rack_adjust). lexicon
 * names the #lexicon line. Returns 0, or -1 with err set (a move that does
 * not replay, or no memory). Free with game_record_free. */
int game_record_build(const game_state *final, const game_move *moves, size_t n,
                      const char *lexicon, game_record *out, char *err, size_t errlen);
void game_record_free(game_record *r);

#endif

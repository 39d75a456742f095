/* Internals of the scrabble-solver CLI shared by its source files. */
#ifndef SOLVER_CLI_H
#define SOLVER_CLI_H

#include "solver.h"

/* Static best-score self-play of one game from seed.  If gcg is non-NULL the
 * record is appended to it (caller frees with solver_gcg_free).  If snap is
 * non-NULL, snap(ud, board, rack, bag_count, turn) is called before every
 * turn.  Returns the number of turns. */
typedef void (*cli_snapshot_fn)(void *ud, const solver_board *b, const solver_rack *rack,
                                int bag_count, int turn);
int cli_selfplay(const solver_lexicon *lex, uint64_t seed, solver_move *buf, size_t cap,
                 solver_gcg *gcg, cli_snapshot_fn snap, void *ud, int final_scores[2]);

/* The figures of docs/BENCHMARKS-solver.md.  only: NULL for every section,
 * else one of "classes", "full", "best", "open", "selfplay" (then positions
 * is the number of games), "build".  export_path (may be NULL): write the
 * positions of the "classes" section there, one "class TAB cgp TAB best
 * score" line each, for the MAGPIE side of the comparison. */
int cli_bench(const solver_lexicon *lex, const char *lex_path, int positions, int reps,
              const char *only, const char *export_path);

#endif

/* libFuzzer target: move notation (solver_move_parse, shared by the solver
 * CLI, GCG reading and scrabble-cli). Every input is parsed against a board
 * with a few tiles (a blank among them); what parses must format and parse
 * back to the same move. */
#include "solver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static solver_board board;
    static int ready;
    if (!ready) {
        memset(&board, 0, sizeof board);
        const char *word = "QUIXOTIC"; /* 8D across, the X a blank */
        for (int i = 0; word[i]; i++)
            board.sq[7 * SOLVER_DIM + 3 + i] =
                (uint8_t)((word[i] - 'A' + 1) | (word[i] == 'X' ? SOLVER_BLANK : 0));
        board.ntiles = 8;
        ready = 1;
    }
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    solver_move m, again;
    char err[256];
    if (solver_move_parse(&board, s, &m, err, sizeof err) == 0) {
        char out[64];
        solver_move_format(&m, out, sizeof out);
        if (solver_move_parse(&board, out, &again, err, sizeof err) != 0 ||
            memcmp(&m, &again, sizeof m) != 0)
            abort();
    }
    free(s);
    return 0;
}

/*
 * notation.c — see notation.h. The notation itself is libsolver's
 * (solver_move_parse, solver_coord_parse): this file only turns
 * GameState's board strings into a solver board and the parsed move into
 * the placements the API takes, so the CLI and the solver can never read a
 * play differently.
 */
#include "notation.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "solver.h"

const char *cli_square_name(int row, int col, char *buf)
{
    snprintf(buf, 8, "%d%c", (row + 1) % 100, 'A' + col);
    return buf;
}

int cli_notation_coord(const char *s, size_t len, int *row, int *col, bool *across)
{
    return solver_coord_parse(s, len, row, col, across) ? 0 : -1;
}

/* GameState.board ('.' empty, 'A'..'Z' a tile, 'a'..'z' a blank; NULL or
 * short rows count as empty) into the squares of a solver board. Only the
 * squares are needed to read notation, not cross-sets or values. */
static void notation__board(const char *const *board, size_t rows, solver_board *b)
{
    memset(b, 0, sizeof *b);
    for (size_t r = 0; board && r < rows && r < SOLVER_DIM; r++) {
        if (!board[r])
            continue;
        for (size_t c = 0; c < SOLVER_DIM && board[r][c]; c++) {
            unsigned char t = (unsigned char)board[r][c];
            if (!isalpha(t) || t >= 128)
                continue;
            b->sq[r * SOLVER_DIM + c] =
                (uint8_t)((toupper(t) - 'A' + 1) | (islower(t) ? SOLVER_BLANK : 0));
            b->ntiles++;
        }
    }
}

int cli_notation_parse(const char *text, const char *const *board, size_t board_rows,
                       cli_placement *out, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '-') {
        snprintf(err, errlen, "'%s' is not a play: use the exchange or pass command", p);
        return CLI_NOTATION_ERROR;
    }
    solver_board b;
    notation__board(board, board_rows, &b);
    solver_move m;
    if (solver_move_parse(&b, text, &m, err, errlen) != 0)
        return CLI_NOTATION_ERROR;
    if (m.ntiles == 0) {
        snprintf(err, errlen, "'%s' places no new tile", p);
        return CLI_NOTATION_ERROR;
    }
    int dr = m.dir == SOLVER_DOWN, dc = m.dir == SOLVER_ACROSS;
    for (int i = 0; i < m.len; i++) {
        uint8_t t = m.tiles[i];
        if (t & SOLVER_THROUGH)
            continue;
        cli_placement *pl = &out[(*n)++];
        pl->row = m.row + dr * i;
        pl->col = m.col + dc * i;
        pl->letter = (char)('A' + SOLVER_LETTER(t) - 1);
        pl->blank = (t & SOLVER_BLANK) != 0;
    }
    return CLI_NOTATION_OK;
}

/*
 * notation.h — human play notation to board placements (a pure parser: the
 * board and a string in, placements or a message out).
 *
 *   "8D QUIXOTIC"   row number first: across, starting at row 8, column D
 *   "D8 QUIXOTIC"   column letter first: down
 *   "H8 (A)GENTIAL" letters in parentheses are already on the board
 *   "8D Q.IXOTIC"   '.' stands for whatever tile is already on that square
 *   "8D quixotic"   a lower-case letter is a blank standing for that letter
 *
 * A letter written without parentheses on an occupied square is skipped when
 * it matches the tile there (so the whole word may simply be spelled out),
 * and is an error when it does not.
 */
#ifndef CLI_NOTATION_H
#define CLI_NOTATION_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_BOARD_DIM 15

typedef struct cli_placement {
    int row, col; /* 0..14 */
    char letter;  /* 'A'..'Z' */
    bool blank;
} cli_placement;

enum { CLI_NOTATION_OK = 0, CLI_NOTATION_ERROR = -1 };

/* Parses `text` against `board` (15 strings of 15 characters as in
 * GameState.board: '.' empty, 'A'..'Z' a tile, 'a'..'z' a blank; NULL or
 * short rows count as empty). Fills out[0..*n) (out holds CLI_BOARD_DIM) with
 * the new tiles in board order. Returns CLI_NOTATION_OK, or
 * CLI_NOTATION_ERROR with a message for people in err. */
int cli_notation_parse(const char *text, const char *const *board, size_t board_rows,
                       cli_placement *out, size_t *n, char *err, size_t errlen);

/* Parses just a coordinate ("8D" across, "D8" down). Returns 0 and fills
 * row/col/across, or -1. */
int cli_notation_coord(const char *s, size_t len, int *row, int *col, bool *across);

/* Writes a square's name ("8D") into buf (at least 8 bytes); returns buf. */
const char *cli_square_name(int row, int col, char *buf);

#endif

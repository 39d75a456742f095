/*
 * notation.c — see notation.h. Board order is the direction of the play, so
 * the placements come out sorted for the server and for people alike.
 */
#include "notation.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *cli_square_name(int row, int col, char *buf)
{
    snprintf(buf, 8, "%d%c", (row + 1) % 100, 'A' + col);
    return buf;
}

int cli_notation_coord(const char *s, size_t len, int *row, int *col, bool *across)
{
    if (len < 2 || len > 3)
        return -1;
    int r = 0, c;
    if (isdigit((unsigned char)s[0])) {
        /* row first: across */
        size_t i = 0;
        while (i < len && isdigit((unsigned char)s[i]))
            r = r * 10 + (s[i++] - '0');
        if (i != len - 1 || s[0] == '0')
            return -1;
        c = toupper((unsigned char)s[i]) - 'A';
        *across = true;
    } else if (isalpha((unsigned char)s[0])) {
        c = toupper((unsigned char)s[0]) - 'A';
        if (s[1] == '0')
            return -1;
        for (size_t i = 1; i < len; i++) {
            if (!isdigit((unsigned char)s[i]))
                return -1;
            r = r * 10 + (s[i] - '0');
        }
        *across = false;
    } else {
        return -1;
    }
    if (r < 1 || r > CLI_BOARD_DIM || c < 0 || c >= CLI_BOARD_DIM)
        return -1;
    *row = r - 1;
    *col = c;
    return 0;
}

/* The tile on a square, upper-cased, or 0 when the square is empty. */
static char notation__tile(const char *const *board, size_t rows, int r, int c)
{
    if (board == NULL || (size_t)r >= rows || board[r] == NULL || strlen(board[r]) <= (size_t)c)
        return 0;
    char t = board[r][c];
    return isalpha((unsigned char)t) ? (char)toupper((unsigned char)t) : 0;
}

int cli_notation_parse(const char *text, const char *const *board, size_t board_rows,
                       cli_placement *out, size_t *n, char *err, size_t errlen)
{
    char sq[8];
    *n = 0;
    while (isspace((unsigned char)*text))
        text++;
    const char *coord = text;
    while (*text && !isspace((unsigned char)*text))
        text++;
    size_t clen = (size_t)(text - coord);
    int row, col;
    bool across;
    if (clen == 0) {
        snprintf(err, errlen, "empty play: write e.g. \"8D WORD\" (across) or \"D8 WORD\" (down)");
        return CLI_NOTATION_ERROR;
    }
    if (cli_notation_coord(coord, clen, &row, &col, &across) != 0) {
        snprintf(err, errlen,
                 "bad square '%.*s': write the row number first for across (8D) or the column "
                 "letter first for down (D8); rows 1-15, columns A-O",
                 (int)(clen > 8 ? 8 : clen), coord);
        return CLI_NOTATION_ERROR;
    }
    while (isspace((unsigned char)*text))
        text++;
    const char *word = text;
    size_t wlen = strlen(word);
    while (wlen > 0 && isspace((unsigned char)word[wlen - 1]))
        wlen--;
    if (wlen == 0) {
        snprintf(err, errlen, "no word after %.*s", (int)clen, coord);
        return CLI_NOTATION_ERROR;
    }
    int dr = across ? 0 : 1, dc = across ? 1 : 0;
    int r = row, c = col;
    bool in_paren = false;
    for (size_t i = 0; i < wlen; i++) {
        char ch = word[i];
        if (ch == '(') {
            if (in_paren) {
                snprintf(err, errlen, "nested '(' in '%.*s'", (int)wlen, word);
                return CLI_NOTATION_ERROR;
            }
            in_paren = true;
            continue;
        }
        if (ch == ')') {
            if (!in_paren) {
                snprintf(err, errlen, "')' without '(' in '%.*s'", (int)wlen, word);
                return CLI_NOTATION_ERROR;
            }
            in_paren = false;
            continue;
        }
        if (ch != '.' && !isalpha((unsigned char)ch)) {
            if (ch == '?')
                snprintf(err, errlen,
                         "'?' cannot be placed: write a blank as the lower-case "
                         "letter it stands for (e.g. 8D QUIxOTIC)");
            else if (isspace((unsigned char)ch))
                snprintf(err, errlen, "a play is one word: '%.*s' has a space", (int)wlen, word);
            else
                snprintf(err, errlen, "'%c' is not a letter", ch);
            return CLI_NOTATION_ERROR;
        }
        if (r >= CLI_BOARD_DIM || c >= CLI_BOARD_DIM) {
            snprintf(err, errlen, "'%.*s' from %.*s runs off the board", (int)wlen, word, (int)clen,
                     coord);
            return CLI_NOTATION_ERROR;
        }
        char on_board = notation__tile(board, board_rows, r, c);
        if (ch == '.' || in_paren) {
            if (!on_board) {
                snprintf(err, errlen,
                         "%s is empty: '%c' there must be a new tile, not in "
                         "parentheses or '.'",
                         cli_square_name(r, c, sq), ch);
                return CLI_NOTATION_ERROR;
            }
            if (ch != '.' && toupper((unsigned char)ch) != on_board) {
                snprintf(err, errlen, "%s holds %c, not %c", cli_square_name(r, c, sq), on_board,
                         toupper((unsigned char)ch));
                return CLI_NOTATION_ERROR;
            }
        } else if (on_board) {
            /* The whole word spelled out: the board's letter is skipped. */
            if (toupper((unsigned char)ch) != on_board) {
                snprintf(err, errlen, "%s already holds %c, not %c", cli_square_name(r, c, sq),
                         on_board, toupper((unsigned char)ch));
                return CLI_NOTATION_ERROR;
            }
        } else {
            cli_placement *p = &out[(*n)++];
            p->row = r;
            p->col = c;
            p->blank = islower((unsigned char)ch) != 0;
            p->letter = (char)toupper((unsigned char)ch);
        }
        r += dr;
        c += dc;
    }
    if (in_paren) {
        snprintf(err, errlen, "'(' without ')' in '%.*s'", (int)wlen, word);
        return CLI_NOTATION_ERROR;
    }
    if (*n == 0) {
        snprintf(err, errlen, "'%.*s' places no new tile", (int)wlen, word);
        return CLI_NOTATION_ERROR;
    }
    return CLI_NOTATION_OK;
}

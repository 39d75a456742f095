/* Move notation: "8D WORD" (row first = across), "D8 WORD" (column first =
 * down), "(AB)" for letters already on the board, lowercase for blanks,
 * "-ABC" for an exchange and "-" for a pass. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t solver_move_format(const solver_move *m, char *buf, size_t len)
{
    char tmp[64];
    size_t o = 0;
    if (m->kind == SOLVER_MOVE_PASS) {
        tmp[o++] = '-';
    } else if (m->kind == SOLVER_MOVE_EXCHANGE) {
        tmp[o++] = '-';
        for (int i = 0; i < m->len && i < SOLVER_RACK_MAX; i++)
            tmp[o++] = m->tiles[i] ? (char)('A' + m->tiles[i] - 1) : '?';
    } else {
        /* Hand-rolled rather than sprintf: top-N search formats moves to
         * break score ties, so this is on a hot path. */
        int row = m->row + 1;
        char num[3];
        size_t nd = 0;
        if (row >= 10)
            num[nd++] = (char)('0' + row / 10);
        num[nd++] = (char)('0' + row % 10);
        if (m->dir != SOLVER_ACROSS)
            tmp[o++] = (char)('A' + m->col);
        memcpy(tmp + o, num, nd);
        o += nd;
        if (m->dir == SOLVER_ACROSS)
            tmp[o++] = (char)('A' + m->col);
        tmp[o++] = ' ';
        bool in = false;
        for (int i = 0; i < m->len && i < SOLVER_DIM; i++) {
            uint8_t t = m->tiles[i];
            bool through = (t & SOLVER_THROUGH) != 0;
            if (through && !in)
                tmp[o++] = '(';
            if (!through && in)
                tmp[o++] = ')';
            in = through;
            char ch = (char)('A' + SOLVER_LETTER(t) - 1);
            tmp[o++] = (t & SOLVER_BLANK) ? (char)tolower((unsigned char)ch) : ch;
        }
        if (in)
            tmp[o++] = ')';
    }
    tmp[o] = 0;
    return solver__copy_out(buf, len, tmp, o);
}

bool solver_coord_parse(const char *s, size_t len, int *row, int *col, bool *across)
{
    if (len < 2 || len > 3)
        return false;
    int r = 0, c;
    if (isdigit((unsigned char)s[0])) { /* row first: across */
        size_t i = 0;
        while (i < len && isdigit((unsigned char)s[i]))
            r = r * 10 + (s[i++] - '0');
        if (i != len - 1 || s[0] == '0')
            return false;
        c = toupper((unsigned char)s[i]) - 'A';
        *across = true;
    } else if (isalpha((unsigned char)s[0])) { /* column first: down */
        c = toupper((unsigned char)s[0]) - 'A';
        if (s[1] == '0')
            return false;
        for (size_t i = 1; i < len; i++) {
            if (!isdigit((unsigned char)s[i]))
                return false;
            r = r * 10 + (s[i] - '0');
        }
        *across = false;
    } else {
        return false;
    }
    if (r < 1 || r > SOLVER_DIM || c < 0 || c >= SOLVER_DIM)
        return false;
    *row = r - 1;
    *col = c;
    return true;
}

/* "-ABC" (exchange, '?' a blank) or "-" (pass); s is past the '-'. */
static int notation__exchange(const char *s, solver_move *m, char *err, size_t errlen)
{
    int n = 0;
    for (; *s && !isspace((unsigned char)*s); s++) {
        if (n >= SOLVER_RACK_MAX) {
            solver__errf(err, errlen, "exchange of more than %d tiles", SOLVER_RACK_MAX);
            return -1;
        }
        if (*s == '?')
            m->tiles[n++] = 0;
        else if (isalpha((unsigned char)*s) && (unsigned char)*s < 128)
            m->tiles[n++] = (uint8_t)(toupper((unsigned char)*s) - 'A' + 1);
        else {
            solver__errf(err, errlen, "bad exchange tile '%c'", *s);
            return -1;
        }
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s) {
        solver__errf(err, errlen, "unexpected '%s' after the exchange", s);
        return -1;
    }
    m->kind = n ? SOLVER_MOVE_EXCHANGE : SOLVER_MOVE_PASS;
    m->len = m->ntiles = (uint8_t)n;
    return 0;
}

int solver_move_parse(const solver_board *b, const char *s, solver_move *m, char *err,
                      size_t errlen)
{
    char sq[16];
    memset(m, 0, sizeof *m);
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-')
        return notation__exchange(s + 1, m, err, errlen);
    const char *coord = s;
    while (*s && !isspace((unsigned char)*s))
        s++;
    size_t clen = (size_t)(s - coord);
    int row, col;
    bool across;
    if (clen == 0) {
        solver__errf(err, errlen,
                     "empty play: write e.g. \"8D WORD\" (across) or \"D8 WORD\" (down)");
        return -1;
    }
    if (!solver_coord_parse(coord, clen, &row, &col, &across)) {
        solver__errf(err, errlen,
                     "bad square '%.*s': write the row number first for across (8D) or the "
                     "column letter first for down (D8); rows 1-15, columns A-O",
                     (int)(clen > 8 ? 8 : clen), coord);
        return -1;
    }
    while (isspace((unsigned char)*s))
        s++;
    const char *word = s;
    size_t wlen = strlen(word);
    while (wlen > 0 && isspace((unsigned char)word[wlen - 1]))
        wlen--;
    if (wlen == 0) {
        solver__errf(err, errlen, "no word after %.*s", (int)clen, coord);
        return -1;
    }
    int dr = across ? 0 : 1, dc = across ? 1 : 0;
    int n = 0, ntiles = 0;
    bool in = false;
    for (size_t i = 0; i < wlen; i++) {
        char ch = word[i];
        if (ch == '(' || ch == ')') {
            if (in == (ch == '(')) {
                solver__errf(err, errlen, "%s in '%.*s'", in ? "nested '('" : "')' without '('",
                             (int)wlen, word);
                return -1;
            }
            in = ch == '(';
            continue;
        }
        if (ch != '.' && (!isalpha((unsigned char)ch) || (unsigned char)ch >= 128)) {
            if (ch == '?')
                solver__errf(err, errlen,
                             "'?' cannot be placed: write a blank as the lower-case letter it "
                             "stands for (e.g. 8D QUIxOTIC)");
            else if (isspace((unsigned char)ch))
                solver__errf(err, errlen, "a play is one word: '%.*s' has a space", (int)wlen,
                             word);
            else
                solver__errf(err, errlen, "'%c' is not a letter", ch);
            return -1;
        }
        int r = row + dr * n, c = col + dc * n;
        if (r >= SOLVER_DIM || c >= SOLVER_DIM) {
            solver__errf(err, errlen, "'%.*s' from %.*s runs off the board", (int)wlen, word,
                         (int)clen, coord);
            return -1;
        }
        snprintf(sq, sizeof sq, "%d%c", r + 1, 'A' + c);
        uint8_t bt = b->sq[solver__sq(r, c)];
        char on_board = bt ? (char)('A' + SOLVER_LETTER(bt) - 1) : 0;
        char upper = (char)toupper((unsigned char)ch);
        if (ch == '.' || in) {
            /* '.' (GCG style) or in parentheses: a tile already there. */
            if (!bt) {
                solver__errf(err, errlen,
                             "%s is empty: '%c' there must be a new tile, not in parentheses "
                             "or '.'",
                             sq, ch);
                return -1;
            }
            if (ch != '.' && upper != on_board) {
                solver__errf(err, errlen, "%s holds %c, not %c", sq, on_board, upper);
                return -1;
            }
            m->tiles[n] = (uint8_t)(bt | SOLVER_THROUGH);
        } else if (bt) {
            /* The whole word spelled out: the board's letter is played
             * through when it matches. */
            if (upper != on_board) {
                solver__errf(err, errlen, "%s already holds %c, not %c", sq, on_board, upper);
                return -1;
            }
            m->tiles[n] = (uint8_t)(bt | SOLVER_THROUGH);
        } else {
            m->tiles[n] =
                (uint8_t)((upper - 'A' + 1) | (islower((unsigned char)ch) ? SOLVER_BLANK : 0));
            ntiles++;
        }
        n++;
    }
    if (in) {
        solver__errf(err, errlen, "'(' without ')' in '%.*s'", (int)wlen, word);
        return -1;
    }
    m->kind = SOLVER_MOVE_PLAY;
    m->row = (uint8_t)row;
    m->col = (uint8_t)col;
    m->dir = (uint8_t)(across ? SOLVER_ACROSS : SOLVER_DOWN);
    m->len = (uint8_t)n;
    m->ntiles = (uint8_t)ntiles;
    return 0;
}

int solver_move_cmp(const solver_move *a, const solver_move *b)
{
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    char x[64], y[64];
    solver_move_format(a, x, sizeof x);
    solver_move_format(b, y, sizeof y);
    return strcmp(x, y);
}

static int cmp_qsort(const void *a, const void *b)
{
    return solver_move_cmp(a, b);
}

void solver_moves_sort(solver_move *moves, size_t n)
{
    qsort(moves, n, sizeof *moves, cmp_qsort);
}

/* Move notation: "8D WORD" (row first = across), "D8 WORD" (column first =
 * down), "(AB)" for letters already on the board, lowercase for blanks,
 * "-ABC" for an exchange and "-" for a pass. */
#include "internal.h"

#include <ctype.h>
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

int solver_move_parse(const solver_board *b, const char *s, solver_move *m, char *err,
                      size_t errlen)
{
    memset(m, 0, sizeof *m);
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-') {
        s++;
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
        m->kind = n ? SOLVER_MOVE_EXCHANGE : SOLVER_MOVE_PASS;
        m->len = m->ntiles = (uint8_t)n;
        return 0;
    }
    int row = -1, col = -1, dir;
    char *end;
    if (isdigit((unsigned char)*s)) {
        row = (int)strtol(s, &end, 10) - 1;
        s = end;
        if (!isalpha((unsigned char)*s)) {
            solver__errf(err, errlen, "bad coordinate: expected a column letter after the row");
            return -1;
        }
        col = toupper((unsigned char)*s++) - 'A';
        dir = SOLVER_ACROSS;
    } else if (isalpha((unsigned char)*s)) {
        col = toupper((unsigned char)*s++) - 'A';
        if (!isdigit((unsigned char)*s)) {
            solver__errf(err, errlen, "bad coordinate: expected a row number after the column");
            return -1;
        }
        row = (int)strtol(s, &end, 10) - 1;
        s = end;
        dir = SOLVER_DOWN;
    } else {
        solver__errf(err, errlen, "bad move: expected a coordinate like 8D or D8");
        return -1;
    }
    if (row < 0 || row >= SOLVER_DIM || col < 0 || col >= SOLVER_DIM) {
        solver__errf(err, errlen, "coordinate off the board");
        return -1;
    }
    if (!isspace((unsigned char)*s)) {
        solver__errf(err, errlen, "bad move: expected a space after the coordinate");
        return -1;
    }
    while (isspace((unsigned char)*s))
        s++;
    int dr = dir == SOLVER_DOWN, dc = dir == SOLVER_ACROSS;
    int n = 0, ntiles = 0;
    bool in = false;
    for (; *s && !isspace((unsigned char)*s); s++) {
        if (*s == '(' && !in) {
            in = true;
            continue;
        }
        if (*s == ')' && in) {
            in = false;
            continue;
        }
        if (*s == '.') { /* GCG style: any letter already on the board */
            int r = row + dr * n, c = col + dc * n;
            if (r >= SOLVER_DIM || c >= SOLVER_DIM || !b->sq[solver__sq(r, c)]) {
                solver__errf(err, errlen, "'.' on an empty or off-board square");
                return -1;
            }
            m->tiles[n++] = (uint8_t)(b->sq[solver__sq(r, c)] | SOLVER_THROUGH);
            continue;
        }
        if (!isalpha((unsigned char)*s) || (unsigned char)*s >= 128) {
            solver__errf(err, errlen, "bad character '%c' in word", *s);
            return -1;
        }
        int r = row + dr * n, c = col + dc * n;
        if (r >= SOLVER_DIM || c >= SOLVER_DIM) {
            solver__errf(err, errlen, "word runs off the board");
            return -1;
        }
        uint8_t letter = (uint8_t)(toupper((unsigned char)*s) - 'A' + 1);
        uint8_t bt = b->sq[solver__sq(r, c)];
        if (bt) {
            if (SOLVER_LETTER(bt) != letter) {
                solver__errf(err, errlen, "square %d%c holds %c, not %c", r + 1, 'A' + c,
                             'A' + SOLVER_LETTER(bt) - 1, *s);
                return -1;
            }
            m->tiles[n] = (uint8_t)(bt | SOLVER_THROUGH);
        } else {
            if (in) {
                solver__errf(err, errlen, "square %d%c is empty but marked as played through",
                             r + 1, 'A' + c);
                return -1;
            }
            m->tiles[n] = (uint8_t)(letter | (islower((unsigned char)*s) ? SOLVER_BLANK : 0));
            ntiles++;
        }
        n++;
    }
    if (in) {
        solver__errf(err, errlen, "unbalanced parenthesis");
        return -1;
    }
    if (n == 0) {
        solver__errf(err, errlen, "no word after the coordinate");
        return -1;
    }
    m->kind = SOLVER_MOVE_PLAY;
    m->row = (uint8_t)row;
    m->col = (uint8_t)col;
    m->dir = (uint8_t)dir;
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

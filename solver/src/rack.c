/* Rack: a multiset of tiles as counts per letter plus blanks. */
#include "internal.h"

#include <ctype.h>
#include <string.h>

int solver_rack_parse(solver_rack *r, const char *s)
{
    memset(r, 0, sizeof *r);
    for (; *s; s++) {
        int code;
        if (*s == '?')
            code = 0;
        else if (isalpha((unsigned char)*s) && (unsigned char)*s < 128)
            code = toupper((unsigned char)*s) - 'A' + 1;
        else
            return -1;
        if (r->n >= SOLVER_RACK_MAX)
            return -1;
        r->counts[code]++;
        r->n++;
    }
    return 0;
}

size_t solver_rack_format(const solver_rack *r, char *buf, size_t len)
{
    size_t o = 0;
    for (int c = 1; c <= 27; c++) {
        int code = c == 27 ? 0 : c;
        for (int k = 0; k < r->counts[code]; k++) {
            if (o + 1 < len)
                buf[o] = code ? (char)('A' + code - 1) : '?';
            o++;
        }
    }
    if (len)
        buf[o < len ? o : len - 1] = 0;
    return o;
}

int solver_rack_remove_move(solver_rack *r, const solver_move *m)
{
    solver_rack t = *r;
    if (m->kind == SOLVER_MOVE_PASS)
        return 0;
    for (int i = 0; i < m->len; i++) {
        uint8_t x = m->tiles[i];
        int code;
        if (m->kind == SOLVER_MOVE_EXCHANGE)
            code = x;
        else if (x & SOLVER_THROUGH)
            continue;
        else
            code = (x & SOLVER_BLANK) ? 0 : SOLVER_LETTER(x);
        if (code > 26 || t.counts[code] == 0)
            return -1;
        t.counts[code]--;
        t.n--;
    }
    *r = t;
    return 0;
}

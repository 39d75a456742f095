/* CGP positions: "<15 rows>/ <racks> <scores> <zero-turns> [op args;]...".
 * A pure parser (string in, struct out) so the fuzzer can drive it. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copies the next space-delimited field into buf; returns the rest or NULL. */
static const char *field(const char *s, char *buf, size_t len)
{
    s = skip_ws(s);
    size_t n = 0;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
        if (n + 1 >= len)
            return NULL;
        buf[n++] = *s++;
    }
    buf[n] = 0;
    return s;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    if (!*s || !(isdigit((unsigned char)*s) || *s == '-'))
        return -1;
    long v = strtol(s, &end, 10);
    if (*end || v < -100000 || v > 100000)
        return -1;
    *out = (int)v;
    return 0;
}

int solver_cgp_parse(const char *s, const solver_lexicon *lex, const solver_dist *dist,
                     solver_cgp *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    solver_board_init(&out->board, dist);
    char f[512];
    s = field(s, f, sizeof f);
    if (!s) {
        solver__errf(err, errlen, "board field too long");
        return -1;
    }
    if (!f[0]) {
        solver__errf(err, errlen, "empty position");
        return -1;
    }
    int used[27] = {0};
    int row = 0, col = 0;
    for (const char *p = f;; p++) {
        if (*p == '/' || *p == 0) {
            if (row >= SOLVER_DIM) {
                solver__errf(err, errlen, "board has more than %d rows", SOLVER_DIM);
                return -1;
            }
            if (col != SOLVER_DIM) {
                solver__errf(err, errlen, "row %d has %d squares, expected %d", row + 1, col,
                             SOLVER_DIM);
                return -1;
            }
            row++;
            col = 0;
            if (*p == 0)
                break;
            continue;
        }
        if (row >= SOLVER_DIM) {
            solver__errf(err, errlen, "board has more than %d rows", SOLVER_DIM);
            return -1;
        }
        if (isdigit((unsigned char)*p)) {
            int v = 0;
            while (isdigit((unsigned char)*p) && v <= SOLVER_DIM)
                v = v * 10 + (*p++ - '0');
            p--;
            if (v == 0 || col + v > SOLVER_DIM) {
                solver__errf(err, errlen, "row %d is too long (more than %d squares)", row + 1,
                             SOLVER_DIM);
                return -1;
            }
            col += v;
            continue;
        }
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            solver__errf(err, errlen, "unknown letter '%c' in row %d", isprint(c) ? c : '?',
                         row + 1);
            return -1;
        }
        if (col >= SOLVER_DIM) {
            solver__errf(err, errlen, "row %d is too long (more than %d squares)", row + 1,
                         SOLVER_DIM);
            return -1;
        }
        bool blank = c >= 'a';
        uint8_t code = (uint8_t)(toupper(c) - 'A' + 1);
        out->board.sq[solver__sq(row, col)] = (uint8_t)(code | (blank ? SOLVER_BLANK : 0));
        used[blank ? 0 : code]++;
        col++;
    }
    if (row != SOLVER_DIM) {
        solver__errf(err, errlen, "board has %d rows, expected %d", row, SOLVER_DIM);
        return -1;
    }

    s = field(s, f, sizeof f);
    if (!s || !f[0]) {
        solver__errf(err, errlen, "missing racks field (e.g. \"AEINRST/\")");
        return -1;
    }
    {
        int k = 0;
        const char *p = f;
        for (;;) {
            if (k >= 4) {
                solver__errf(err, errlen, "more than 4 racks");
                return -1;
            }
            char rk[16];
            size_t n = 0;
            while (*p && *p != '/') {
                if (n >= SOLVER_RACK_MAX) {
                    solver__errf(err, errlen, "rack %d has more than %d tiles", k + 1,
                                 SOLVER_RACK_MAX);
                    return -1;
                }
                rk[n++] = *p++;
            }
            rk[n] = 0;
            for (size_t i = 0; i < n; i++)
                if (!(rk[i] == '?' || (rk[i] >= 'A' && rk[i] <= 'Z'))) {
                    solver__errf(err, errlen, "unknown tile '%c' in rack %d",
                                 isprint((unsigned char)rk[i]) ? rk[i] : '?', k + 1);
                    return -1;
                }
            solver_rack_parse(&out->racks[k], rk);
            for (int c = 0; c < 27; c++)
                used[c] += out->racks[k].counts[c];
            k++;
            if (!*p)
                break;
            p++;
        }
        out->nracks = k;
    }
    for (int c = 0; c < 27; c++)
        if (used[c] > dist->count[c]) {
            if (c == 0)
                solver__errf(err, errlen,
                             "impossible tile counts: %d blanks on board and racks, the set has %d",
                             used[0], dist->count[0]);
            else
                solver__errf(
                    err, errlen,
                    "impossible tile counts: %d %c tiles on board and racks, the set has %d",
                    used[c], 'A' + c - 1, dist->count[c]);
            return -1;
        }

    s = field(s, f, sizeof f);
    if (!s || !f[0]) {
        solver__errf(err, errlen, "missing scores field (e.g. \"0/0\")");
        return -1;
    }
    {
        char *save = NULL, *tok;
        int k = 0;
        for (tok = strtok_r(f, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
            if (k >= 4 || parse_int(tok, &out->scores[k])) {
                solver__errf(err, errlen, "bad scores field");
                return -1;
            }
            k++;
        }
        out->nscores = k;
        if (k != out->nracks) {
            solver__errf(err, errlen, "%d scores for %d racks", k, out->nracks);
            return -1;
        }
    }
    s = field(s, f, sizeof f);
    if (!s || !f[0] || parse_int(f, &out->zero_turns) || out->zero_turns < 0) {
        solver__errf(err, errlen, "missing or bad consecutive zero-score turns field");
        return -1;
    }
    /* Operations: "name args...;" repeated.  Only lex is interpreted. */
    s = skip_ws(s);
    while (*s && *s != '\n' && *s != '\r') {
        const char *semi = strchr(s, ';');
        if (!semi) {
            solver__errf(err, errlen, "operation not terminated by ';'");
            return -1;
        }
        char name[16], arg[64];
        const char *q = field(s, name, sizeof name);
        if (!q || q > semi) {
            solver__errf(err, errlen, "bad operation");
            return -1;
        }
        if (!strcmp(name, "lex")) {
            q = skip_ws(q);
            size_t n = (size_t)(semi - q);
            while (n && q[n - 1] == ' ')
                n--;
            if (n == 0 || n >= sizeof out->lexicon || n >= sizeof arg) {
                solver__errf(err, errlen, "bad lex operation");
                return -1;
            }
            memcpy(out->lexicon, q, n);
            out->lexicon[n] = 0;
        }
        s = skip_ws(semi + 1);
    }
    out->board.ntiles = 0;
    if (lex)
        solver_board_recompute(&out->board, lex);
    else
        for (int i = 0; i < SOLVER_SQUARES; i++)
            out->board.ntiles += out->board.sq[i] != 0;
    return 0;
}

size_t solver_cgp_format(const solver_cgp *c, char *buf, size_t len)
{
    char tmp[600];
    size_t o = 0;
    for (int r = 0; r < SOLVER_DIM; r++) {
        int run = 0;
        for (int col = 0; col < SOLVER_DIM; col++) {
            uint8_t t = c->board.sq[solver__sq(r, col)];
            if (!t) {
                run++;
                continue;
            }
            if (run)
                o += (size_t)sprintf(tmp + o, "%d", run);
            run = 0;
            char ch = (char)('A' + SOLVER_LETTER(t) - 1);
            tmp[o++] = (t & SOLVER_BLANK) ? (char)tolower((unsigned char)ch) : ch;
        }
        if (run)
            o += (size_t)sprintf(tmp + o, "%d", run);
        tmp[o++] = r == SOLVER_DIM - 1 ? ' ' : '/';
    }
    int nr = c->nracks ? c->nracks : 2;
    for (int k = 0; k < nr; k++) {
        o += solver_rack_format(&c->racks[k], tmp + o, 16);
        if (k + 1 < nr)
            tmp[o++] = '/';
    }
    tmp[o++] = ' ';
    for (int k = 0; k < nr; k++)
        o += (size_t)sprintf(tmp + o, "%d%s", c->scores[k], k + 1 < nr ? "/" : "");
    o += (size_t)sprintf(tmp + o, " %d", c->zero_turns);
    if (c->lexicon[0])
        o += (size_t)snprintf(tmp + o, sizeof tmp - o, " lex %s;", c->lexicon);
    tmp[o] = 0;
    return solver__copy_out(buf, len, tmp, o);
}

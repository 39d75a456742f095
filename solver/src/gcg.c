/* GCG game records: write for export, read for import (replaying the moves
 * on a board so played-through squares written as '.' resolve). */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int solver_gcg_add(solver_gcg *g, const solver_gcg_turn *t)
{
    if (g->nturns == g->cap) {
        size_t c = g->cap ? g->cap * 2 : 32;
        solver_gcg_turn *n = realloc(g->turns, c * sizeof *n);
        if (!n)
            return -1;
        g->turns = n;
        g->cap = c;
    }
    g->turns[g->nturns++] = *t;
    return 0;
}

void solver_gcg_free(solver_gcg *g)
{
    free(g->turns);
    g->turns = NULL;
    g->nturns = g->cap = 0;
}

#define APPEND(...)                                                                                \
    do {                                                                                           \
        int w_ = snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, __VA_ARGS__);           \
        if (w_ > 0)                                                                                \
            o += (size_t)w_;                                                                       \
    } while (0)

size_t solver_gcg_format(const solver_gcg *g, char *buf, size_t len)
{
    size_t o = 0;
    if (len)
        buf[0] = 0;
    int np = g->nplayers > 0 ? g->nplayers : 2;
    if (np > SOLVER_GCG_MAX_PLAYERS)
        np = SOLVER_GCG_MAX_PLAYERS;
    APPEND("#character-encoding UTF-8\n");
    for (int p = 0; p < np; p++)
        APPEND("#player%d %s %s\n", p + 1, g->player_nick[p],
               g->player_name[p][0] ? g->player_name[p] : g->player_nick[p]);
    if (g->lexicon[0])
        APPEND("#lexicon %s\n", g->lexicon);
    for (size_t i = 0; i < g->nturns; i++) {
        const solver_gcg_turn *t = &g->turns[i];
        char rack[32], mv[64];
        solver_rack_format(&t->rack, rack, sizeof rack);
        if (t->player < 0 || t->player >= np)
            continue;
        if (t->is_end_rack) {
            /* A rack gained may hold several racks' tiles (more than 7 with
             * 3-4 seats): write it from the counts, not the 7-tile rack. */
            if (t->end_points >= 0)
                APPEND(">%s: (%s) +%d %d\n", g->player_nick[t->player], rack, t->end_points,
                       t->cumulative);
            else
                APPEND(">%s: %s (%s) %d %d\n", g->player_nick[t->player], rack, rack, t->end_points,
                       t->cumulative);
            continue;
        }
        solver_move_format(&t->move, mv, sizeof mv);
        if (t->move.kind == SOLVER_MOVE_PLAY) { /* GCG writes played-through letters as '.' */
            char *w = strchr(mv, ' ') + 1, *d = w;
            bool in = false;
            for (char *s = w; *s; s++) {
                if (*s == '(' || *s == ')') {
                    in = *s == '(';
                    continue;
                }
                *d++ = in ? '.' : *s;
            }
            *d = 0;
        }
        APPEND(">%s: %s %s %+d %d\n", g->player_nick[t->player], rack, mv, t->move.score,
               t->cumulative);
    }
    return o;
}

/* The tiles of an end line's rack: several racks' worth when 3-4 seats end
 * (more than a rack's 7).  Returns 0, or -1 on a character that is no tile. */
static int gcg__end_rack(solver_rack *r, const char *s, size_t n)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        int code;
        if (s[i] == '?')
            code = 0;
        else if (isalpha((unsigned char)s[i]) && (unsigned char)s[i] < 128)
            code = toupper((unsigned char)s[i]) - 'A' + 1;
        else
            return -1;
        if (r->n >= 4 * SOLVER_RACK_MAX)
            return -1;
        r->counts[code]++;
        r->n++;
    }
    return 0;
}

int solver_gcg_parse(const char *text, const solver_lexicon *lex, solver_gcg *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    solver_board board;
    solver_board_init(&board, solver_dist_english());
    int lineno = 0;
    const char *s = text;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char line[512];
        lineno++;
        if (n >= sizeof line) {
            solver__errf(err, errlen, "line %d: too long", lineno);
            goto fail;
        }
        memcpy(line, s, n);
        line[n] = 0;
        if (n && line[n - 1] == '\r')
            line[n - 1] = 0;
        s = e ? e + 1 : s + n;
        if (!strncmp(line, "#player", 7) && line[7] >= '1' &&
            line[7] < '1' + SOLVER_GCG_MAX_PLAYERS) {
            int p = line[7] - '1';
            char nick[32] = "", name[64] = "";
            if (sscanf(line + 8, " %31s %63[^\n]", nick, name) < 1) {
                solver__errf(err, errlen, "line %d: bad #player line", lineno);
                goto fail;
            }
            strcpy(out->player_nick[p], nick);
            strcpy(out->player_name[p], name);
            if (p + 1 > out->nplayers)
                out->nplayers = p + 1;
            continue;
        }
        if (!strncmp(line, "#lexicon ", 9)) {
            snprintf(out->lexicon, sizeof out->lexicon, "%s", line + 9);
            continue;
        }
        if (line[0] != '>')
            continue; /* other pragmas, notes */
        char *colon = strchr(line, ':');
        if (!colon) {
            solver__errf(err, errlen, "line %d: expected '>nick: ...'", lineno);
            goto fail;
        }
        *colon = 0;
        solver_gcg_turn t;
        memset(&t, 0, sizeof t);
        t.player = -1;
        for (int p = 0; p < out->nplayers && t.player < 0; p++)
            if (out->player_nick[p][0] && strcmp(line + 1, out->player_nick[p]) == 0)
                t.player = p;
        if (t.player < 0) {
            solver__errf(err, errlen, "line %d: '%s' is not a #player", lineno, line + 1);
            goto fail;
        }
        char *tok[6];
        int nt = 0;
        char *save = NULL;
        for (char *x = strtok_r(colon + 1, " \t", &save); x && nt < 6;
             x = strtok_r(NULL, " \t", &save))
            tok[nt++] = x;
        if (nt >= 3 && tok[0][0] == '(') { /* (RACK) +N cumul */
            t.is_end_rack = true;
            if (gcg__end_rack(&t.rack, tok[0] + 1, strcspn(tok[0] + 1, ")")) || tok[1][0] != '+') {
                solver__errf(err, errlen, "line %d: expected '(RACK) +N TOTAL'", lineno);
                goto fail;
            }
            t.end_points = atoi(tok[1]);
            t.cumulative = atoi(tok[2]);
        } else if (nt >= 4 && tok[1][0] == '(') { /* RACK (RACK) -N cumul */
            t.is_end_rack = true;
            if (gcg__end_rack(&t.rack, tok[0], strlen(tok[0])) || tok[2][0] != '-') {
                solver__errf(err, errlen, "line %d: expected 'RACK (RACK) -N TOTAL'", lineno);
                goto fail;
            }
            t.end_points = atoi(tok[2]);
            t.cumulative = atoi(tok[3]);
        } else {
            char mv[64];
            int k;
            if (nt == 4 && tok[1][0] == '-') {
                snprintf(mv, sizeof mv, "%s", tok[1]);
                k = 2;
            } else if (nt >= 5) {
                snprintf(mv, sizeof mv, "%s %s", tok[1], tok[2]);
                k = 3;
            } else {
                solver__errf(err, errlen, "line %d: expected 'RACK MOVE SCORE TOTAL'", lineno);
                goto fail;
            }
            if (solver_rack_parse(&t.rack, tok[0])) {
                solver__errf(err, errlen, "line %d: bad rack '%s'", lineno, tok[0]);
                goto fail;
            }
            char e2[128];
            if (solver_move_parse(&board, mv, &t.move, e2, sizeof e2)) {
                solver__errf(err, errlen, "line %d: %s", lineno, e2);
                goto fail;
            }
            t.move.score = atoi(tok[k]);
            t.cumulative = atoi(tok[k + 1]);
            solver_board_apply(&board, lex, &t.move);
        }
        if (solver_gcg_add(out, &t)) {
            solver__errf(err, errlen, "out of memory");
            goto fail;
        }
    }
    return 0;
fail:
    solver_gcg_free(out);
    return -1;
}

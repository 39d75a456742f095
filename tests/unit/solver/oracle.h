/* A deliberately simple, independent move generator for the exactness
 * tests: every word of the word list at every start square in both
 * directions, every cross-word looked up in a sorted array (not the lexicon
 * graph), every blank designation enumerated, scores computed from scratch.
 * It shares nothing with the library but the board squares and the move
 * struct it reports into. */
#ifndef SOLVER_ORACLE_H
#define SOLVER_ORACLE_H

#include "solver.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char (*w)[16];
    size_t n;
} oracle_words;

static int oracle_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Words are uppercase A-Z, 2..15 letters, deduplicated here. */
static inline void oracle_words_init(oracle_words *ow, const char *text, bool lowercase_only)
{
    size_t cap = 1024;
    ow->w = malloc(cap * 16);
    ow->n = 0;
    while (*text) {
        const char *e = strchr(text, '\n');
        size_t len = e ? (size_t)(e - text) : strlen(text);
        char w[16];
        bool ok = len >= 2 && len <= 15;
        for (size_t i = 0; i < len && ok; i++) {
            char c = text[i];
            if (c >= 'a' && c <= 'z')
                w[i] = (char)(c - 32);
            else if (c >= 'A' && c <= 'Z' && !lowercase_only)
                w[i] = c;
            else
                ok = false;
        }
        if (ok) {
            w[len] = 0;
            if (ow->n == cap)
                ow->w = realloc(ow->w, (cap *= 2) * 16);
            memcpy(ow->w[ow->n++], w, 16);
        }
        text += len + (e ? 1 : 0);
    }
    qsort(ow->w, ow->n, 16, oracle_cmp);
    size_t u = 0;
    for (size_t i = 0; i < ow->n; i++)
        if (!u || strcmp(ow->w[u - 1], ow->w[i]))
            memmove(ow->w[u++], ow->w[i], 16);
    ow->n = u;
}

static inline bool oracle_has(const oracle_words *ow, const char *w)
{
    return bsearch(w, ow->w, ow->n, 16, oracle_cmp) != NULL;
}

static inline char oracle_at(const solver_board *b, int r, int c)
{
    if (r < 0 || c < 0 || r >= 15 || c >= 15)
        return 0;
    uint8_t t = b->sq[r * 15 + c];
    return t ? (char)('A' + (t & 31) - 1) : 0;
}

static inline int oracle_val(const solver_board *b, const solver_dist *d, int r, int c)
{
    uint8_t t = b->sq[r * 15 + c];
    return (t & SOLVER_BLANK) ? 0 : d->value[t & 31];
}

/* Appends every legal play to out (up to cap); returns the count. */
static inline size_t oracle_gen(const solver_board *b, const oracle_words *ow, const solver_dist *d,
                                const solver_rack *rack, solver_move *out, size_t cap)
{
    size_t count = 0;
    bool empty = true;
    int board_count[27] = {0};
    for (int i = 0; i < 225; i++)
        if (b->sq[i]) {
            empty = false;
            board_count[b->sq[i] & 31]++;
        }
    /* Words bucketed by length, and a cheap per-word feasibility filter:
     * letters the rack lacks must come from blanks or from the board. */
    static size_t *by_len[16];
    static size_t n_len[16], cap_len[16];
    static bool *feasible;
    static size_t feasible_cap;
    if (feasible_cap < ow->n) {
        free(feasible);
        feasible = malloc(ow->n);
        feasible_cap = ow->n;
    }
    for (int l = 0; l < 16; l++)
        n_len[l] = 0;
    for (size_t wi = 0; wi < ow->n; wi++) {
        const char *w = ow->w[wi];
        int L = (int)strlen(w);
        int wc[27] = {0}, over = 0;
        for (int i = 0; i < L; i++)
            wc[w[i] - 'A' + 1]++;
        for (int l = 1; l <= 26; l++) {
            int deficit = wc[l] - rack->counts[l];
            if (deficit > board_count[l])
                over += deficit - board_count[l];
        }
        feasible[wi] = over <= rack->counts[0];
        if (n_len[L] == cap_len[L]) {
            cap_len[L] = cap_len[L] ? cap_len[L] * 2 : 1024;
            by_len[L] = realloc(by_len[L], cap_len[L] * sizeof **by_len);
        }
        by_len[L][n_len[L]++] = wi;
    }
    for (int dir = 0; dir < 2; dir++) {
        int dr = dir == SOLVER_DOWN, dc = dir == SOLVER_ACROSS;
        for (int r0 = 0; r0 < 15; r0++)
            for (int c0 = 0; c0 < 15; c0++) {
                if (oracle_at(b, r0 - dr, c0 - dc))
                    continue;
                /* A word must reach a tile, a square next to one, or (first
                 * move) the centre: skip lengths that cannot. */
                int need = 1;
                for (int i = 0;; i++) {
                    int r = r0 + dr * i, c = c0 + dc * i;
                    if (r >= 15 || c >= 15) {
                        need = 16;
                        break;
                    }
                    bool hit = empty ? (r == 7 && c == 7)
                                     : (oracle_at(b, r, c) || oracle_at(b, r - 1, c) ||
                                        oracle_at(b, r + 1, c) || oracle_at(b, r, c - 1) ||
                                        oracle_at(b, r, c + 1));
                    if (hit) {
                        need = i + 1;
                        break;
                    }
                }
                for (int L = need < 2 ? 2 : need; L <= 15; L++)
                    for (size_t q = 0; q < n_len[L]; q++) {
                        size_t wi = by_len[L][q];
                        if (!feasible[wi])
                            continue;
                        const char *w = ow->w[wi];
                        int re = r0 + dr * (L - 1), ce = c0 + dc * (L - 1);
                        if (re >= 15 || ce >= 15)
                            continue;
                        if (oracle_at(b, re + dr, ce + dc))
                            continue;
                        int newpos[15], nn = 0, short_by = 0;
                        int used[27] = {0};
                        bool ok = true, touch = false, centre = false;
                        for (int i = 0; i < L && ok; i++) {
                            int r = r0 + dr * i, c = c0 + dc * i;
                            char have = oracle_at(b, r, c);
                            if (have) {
                                ok = have == w[i];
                                continue;
                            }
                            /* Give up as soon as the rack cannot supply the tiles. */
                            int l = w[i] - 'A' + 1;
                            if (++used[l] > rack->counts[l] && ++short_by > rack->counts[0]) {
                                ok = false;
                                continue;
                            }
                            newpos[nn++] = i;
                            if (r == 7 && c == 7)
                                centre = true;
                            if (oracle_at(b, r - 1, c) || oracle_at(b, r + 1, c) ||
                                oracle_at(b, r, c - 1) || oracle_at(b, r, c + 1))
                                touch = true;
                        }
                        if (!ok || nn == 0 || nn > rack->n)
                            continue;
                        if (empty ? !centre : !touch)
                            continue;
                        /* One-tile plays are reported across when they form an across word. */
                        if (dir == SOLVER_DOWN && nn == 1) {
                            int r = r0 + dr * newpos[0], c = c0 + dc * newpos[0];
                            if (oracle_at(b, r, c - 1) || oracle_at(b, r, c + 1))
                                continue;
                        }
                        /* Cross words. */
                        int cross_base[15]; /* sum of existing letters, -1 if no cross word */
                        for (int k = 0; k < nn && ok; k++) {
                            int i = newpos[k], r = r0 + dr * i, c = c0 + dc * i;
                            int pr = dc, pc = dr;
                            int rs = r, cs = c;
                            while (oracle_at(b, rs - pr, cs - pc))
                                rs -= pr, cs -= pc;
                            char cw[16];
                            int n = 0, sum = 0;
                            for (int rr = rs, cc = cs; rr < 15 && cc < 15; rr += pr, cc += pc) {
                                if (rr == r && cc == c)
                                    cw[n++] = w[i];
                                else if (oracle_at(b, rr, cc)) {
                                    cw[n++] = oracle_at(b, rr, cc);
                                    sum += oracle_val(b, d, rr, cc);
                                } else
                                    break;
                            }
                            cw[n] = 0;
                            if (n >= 2) {
                                ok = oracle_has(ow, cw);
                                cross_base[k] = sum;
                            } else
                                cross_base[k] = -1;
                        }
                        if (!ok)
                            continue;
                        /* Blank designations: every set of at most rack->counts[0]
                         * new squares that carry blanks. */
                        int nb = rack->counts[0];
                        for (int mask = 0; mask < (1 << nn); mask++) {
                            if (__builtin_popcount((unsigned)mask) > nb)
                                continue;
                            int need[27] = {0};
                            for (int k = 0; k < nn; k++)
                                if (!(mask >> k & 1))
                                    need[w[newpos[k]] - 'A' + 1]++;
                            bool fits = true;
                            for (int l = 1; l <= 26; l++)
                                fits &= need[l] <= rack->counts[l];
                            if (!fits)
                                continue;
                            int main_sum = 0, wmul = 1, cross = 0, k = 0;
                            solver_move m;
                            memset(&m, 0, sizeof m);
                            for (int i = 0; i < L; i++) {
                                int r = r0 + dr * i, c = c0 + dc * i;
                                if (k < nn && newpos[k] == i) {
                                    bool blank = mask >> k & 1;
                                    int lm, wm;
                                    solver_board_premium(r, c, &lm, &wm);
                                    int v = blank ? 0 : d->value[w[i] - 'A' + 1] * lm;
                                    main_sum += v;
                                    wmul *= wm;
                                    if (cross_base[k] >= 0)
                                        cross += (cross_base[k] + v) * wm;
                                    m.tiles[i] =
                                        (uint8_t)((w[i] - 'A' + 1) | (blank ? SOLVER_BLANK : 0));
                                    k++;
                                } else {
                                    main_sum += oracle_val(b, d, r, c);
                                    m.tiles[i] = (uint8_t)(b->sq[r * 15 + c] | SOLVER_THROUGH);
                                }
                            }
                            m.kind = SOLVER_MOVE_PLAY;
                            m.row = (uint8_t)r0;
                            m.col = (uint8_t)c0;
                            m.dir = (uint8_t)dir;
                            m.len = (uint8_t)L;
                            m.ntiles = (uint8_t)nn;
                            m.score = main_sum * wmul + cross + (nn == 7 ? 50 : 0);
                            if (count < cap)
                                out[count] = m;
                            count++;
                        }
                    }
            }
    }
    return count;
}

#endif

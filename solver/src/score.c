/* Reference scoring of a described play, straight from the squares.  Used by
 * validation (and so by Evaluate); move generation scores incrementally from
 * the cross-score cache, and the tests check the two always agree. */
#include "internal.h"

#include <string.h>

int solver__score_move(const solver_board *b, const solver_dist *dist, const solver_move *m,
                       solver_result *res)
{
    int dr = m->dir == SOLVER_DOWN, dc = m->dir == SOLVER_ACROSS;
    int pr = dc, pc = dr; /* perpendicular step */
    int main_sum = 0, wmul = 1, cross = 0, placed = 0;
    char mainw[SOLVER_DIM + 1];
    if (res)
        res->nwords = 1;
    for (int i = 0; i < m->len; i++) {
        int r = m->row + dr * i, c = m->col + dc * i;
        uint8_t t = m->tiles[i];
        mainw[i] = (char)('A' + SOLVER_LETTER(t) - 1);
        if (t & SOLVER_THROUGH) {
            uint8_t bt = b->sq[solver__sq(r, c)];
            main_sum += (bt & SOLVER_BLANK) ? 0 : dist->value[SOLVER_LETTER(bt)];
            continue;
        }
        placed++;
        int s = solver__sq(r, c), lm = solver__lm(s), wm = solver__wm(s);
        int v = (t & SOLVER_BLANK) ? 0 : dist->value[SOLVER_LETTER(t)] * lm;
        main_sum += v;
        wmul *= wm;
        /* Perpendicular word through (r, c). */
        int r0 = r - pr, c0 = c - pc;
        while (r0 >= 0 && c0 >= 0 && b->sq[solver__sq(r0, c0)])
            r0 -= pr, c0 -= pc;
        r0 += pr, c0 += pc;
        int r1 = r + pr, c1 = c + pc;
        while (r1 < SOLVER_DIM && c1 < SOLVER_DIM && b->sq[solver__sq(r1, c1)])
            r1 += pr, c1 += pc;
        int len = (r1 - r0) + (c1 - c0);
        if (len < 2)
            continue;
        int sum = 0, k = 0;
        char w[SOLVER_DIM + 1];
        for (int rr = r0, cc = c0; rr < r1 || cc < c1; rr += pr, cc += pc, k++) {
            if (rr == r && cc == c) {
                sum += v;
                w[k] = mainw[i];
            } else {
                uint8_t bt = b->sq[solver__sq(rr, cc)];
                sum += (bt & SOLVER_BLANK) ? 0 : dist->value[SOLVER_LETTER(bt)];
                w[k] = (char)('A' + SOLVER_LETTER(bt) - 1);
            }
        }
        w[k] = 0;
        cross += sum * wm;
        if (res && res->nwords < SOLVER_MAX_WORDS) {
            memcpy(res->words[res->nwords], w, (size_t)k + 1);
            res->word_scores[res->nwords] = sum * wm;
            res->nwords++;
        }
    }
    mainw[m->len] = 0;
    int total = main_sum * wmul + cross + (placed == SOLVER_RACK_MAX ? SOLVER_BINGO_BONUS : 0);
    if (res) {
        memcpy(res->words[0], mainw, (size_t)m->len + 1);
        res->word_scores[0] = main_sum * wmul;
        res->score = total;
    }
    return total;
}

/* Board: squares, the premium layout, and incremental cross-set upkeep.
 *
 * xset[ACROSS][sq] constrains a tile placed at sq by an across play, so it is
 * derived from the vertical word the tile would join (and xset[DOWN] from the
 * horizontal one).  Placing or removing a tile changes the perpendicular
 * words of exactly the squares at the ends of the runs through it, so only
 * those (the first empty square in each of the four directions) and the
 * square itself are recomputed. */
#include "internal.h"

#include <string.h>

const char solver__layout[SOLVER_DIM][SOLVER_DIM + 1] = {
    "T..d...T...d..T", ".D...t...t...D.", "..D...d.d...D..", "d..D...d...D..d", "....D.....D....",
    ".t...t...t...t.", "..d...d.d...d..", "T..d...D...d..T", "..d...d.d...d..", ".t...t...t...t.",
    "....D.....D....", "d..D...d...D..d", "..D...d.d...D..", ".D...t...t...D.", "T..d...T...d..T",
};

void solver_board_premium(int row, int col, int *lm, int *wm)
{
    int s = solver__sq(row, col);
    *lm = solver__lm(s);
    *wm = solver__wm(s);
}

void solver_board_init(solver_board *b, const solver_dist *dist)
{
    memset(b, 0, sizeof *b);
    for (int i = 0; i < SOLVER_SQUARES; i++)
        b->xset[0][i] = b->xset[1][i] = SOLVER__ALL_LETTERS | SOLVER__TRIVIAL;
    memcpy(b->values, dist->value, sizeof b->values);
}

static inline bool occupied(const solver_board *b, int r, int c)
{
    return r >= 0 && r < SOLVER_DIM && c >= 0 && c < SOLVER_DIM && b->sq[solver__sq(r, c)];
}

static void update_square(solver_board *b, const solver_lexicon *lex, int r, int c)
{
    int s = solver__sq(r, c);
    if (b->sq[s]) {
        b->xset[0][s] = b->xset[1][s] = 0;
        b->xscore[0][s] = b->xscore[1][s] = 0;
        return;
    }
    for (int dir = 0; dir < 2; dir++) {
        int dr = dir == SOLVER_ACROSS, dc = dir == SOLVER_DOWN; /* perpendicular */
        uint8_t pre[SOLVER_DIM], suf[SOLVER_DIM];
        int pl = 0, sl = 0, score = 0;
        int rr = r - dr, cc = c - dc;
        while (occupied(b, rr, cc))
            rr -= dr, cc -= dc;
        for (rr += dr, cc += dc; rr != r || cc != c; rr += dr, cc += dc) {
            uint8_t t = b->sq[solver__sq(rr, cc)];
            pre[pl++] = SOLVER_LETTER(t);
            score += (t & SOLVER_BLANK) ? 0 : b->values[SOLVER_LETTER(t)];
        }
        for (rr = r + dr, cc = c + dc; occupied(b, rr, cc); rr += dr, cc += dc) {
            uint8_t t = b->sq[solver__sq(rr, cc)];
            suf[sl++] = SOLVER_LETTER(t);
            score += (t & SOLVER_BLANK) ? 0 : b->values[SOLVER_LETTER(t)];
        }
        if (pl == 0 && sl == 0) {
            b->xset[dir][s] = SOLVER__ALL_LETTERS | SOLVER__TRIVIAL;
            b->xscore[dir][s] = 0;
        } else {
            b->xset[dir][s] = lex ? solver__cross_set(lex, pre, pl, suf, sl) : SOLVER__ALL_LETTERS;
            b->xscore[dir][s] = (uint8_t)score;
        }
    }
}

static void update_around(solver_board *b, const solver_lexicon *lex, int r, int c)
{
    static const int d[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    update_square(b, lex, r, c);
    for (int k = 0; k < 4; k++) {
        int rr = r + d[k][0], cc = c + d[k][1];
        while (occupied(b, rr, cc))
            rr += d[k][0], cc += d[k][1];
        if (rr >= 0 && rr < SOLVER_DIM && cc >= 0 && cc < SOLVER_DIM)
            update_square(b, lex, rr, cc);
    }
}

void solver_board_place(solver_board *b, const solver_lexicon *lex, int row, int col, uint8_t code)
{
    int s = solver__sq(row, col);
    if (row < 0 || row >= SOLVER_DIM || col < 0 || col >= SOLVER_DIM || b->sq[s] ||
        SOLVER_LETTER(code) < 1 || SOLVER_LETTER(code) > 26)
        return;
    b->sq[s] = code & (SOLVER_BLANK | 0x1f);
    b->ntiles++;
    update_around(b, lex, row, col);
}

void solver_board_remove(solver_board *b, const solver_lexicon *lex, int row, int col)
{
    if (row < 0 || row >= SOLVER_DIM || col < 0 || col >= SOLVER_DIM)
        return;
    int s = solver__sq(row, col);
    if (!b->sq[s])
        return;
    b->sq[s] = 0;
    b->ntiles--;
    update_around(b, lex, row, col);
}

void solver_board_recompute(solver_board *b, const solver_lexicon *lex)
{
    b->ntiles = 0;
    for (int s = 0; s < SOLVER_SQUARES; s++)
        b->ntiles += b->sq[s] != 0;
    for (int r = 0; r < SOLVER_DIM; r++)
        for (int c = 0; c < SOLVER_DIM; c++)
            update_square(b, lex, r, c);
}

char solver_board_get(const solver_board *b, int row, int col, bool *is_blank)
{
    if (row < 0 || row >= SOLVER_DIM || col < 0 || col >= SOLVER_DIM)
        return 0;
    uint8_t t = b->sq[solver__sq(row, col)];
    if (is_blank)
        *is_blank = (t & SOLVER_BLANK) != 0;
    return t ? (char)('A' + SOLVER_LETTER(t) - 1) : 0;
}

void solver_board_apply(solver_board *b, const solver_lexicon *lex, const solver_move *m)
{
    if (m->kind != SOLVER_MOVE_PLAY)
        return;
    int dr = m->dir == SOLVER_DOWN, dc = m->dir == SOLVER_ACROSS;
    for (int i = 0; i < m->len; i++) {
        uint8_t t = m->tiles[i];
        if (t & SOLVER_THROUGH)
            continue;
        solver_board_place(b, lex, m->row + dr * i, m->col + dc * i, t & (SOLVER_BLANK | 0x1f));
    }
}

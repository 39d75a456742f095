/* Move generation on a GADDAG (KWG) with incremental scoring.
 *
 * Both directions are generated on "lanes": rows for across plays, columns
 * for down plays, each copied once into a small struct so the recursion
 * reads contiguous bytes.  From each anchor the recursion first walks left
 * (matching the reversed prefix in the GADDAG), then after the separator
 * walks right; when board letters follow the anchor, the walk starts on the
 * last of them, so they are matched before any tile is placed (gen_anchor).
 * The left part may not place a tile on another anchor, so every placement
 * is produced from exactly one anchor: the leftmost anchor it covers.  A
 * one-tile play is reported across when it forms an across word and down
 * otherwise, so it is never listed twice.  Once the rack's last blank is
 * placed, all its designations are walked together as one set (bset_t).
 *
 * The score is accumulated on the way: main-word letter sum, word
 * multiplier, and the cross words' scores from the board's cross-score
 * cache.  Nothing is allocated: moves go to the caller's buffer, or, in
 * top-N mode, into a bounded heap kept in that buffer.  Top-N mode visits
 * anchors by decreasing score upper bound (anchor_bounds, one bound per
 * number of tiles, plus the bingo bonus only where lexicon signatures say a
 * bingo may fit) and stops when the bound cannot beat the N-th best move
 * found so far; inside an anchor, plays with more tiles than any bound
 * still allows are not extended (kmax).
 *
 * The graph is read through lex->nm (node | sibling-mask << 32), so a child
 * is found by popcount and only candidate letters are visited; a step is
 * called only when it can match or place something (worth()). */
#include "internal.h"

#include <string.h>

typedef struct {
    uint8_t sq[SOLVER_DIM];
    uint8_t xscore[SOLVER_DIM];
    uint8_t lm[SOLVER_DIM], wm[SOLVER_DIM];
    uint16_t anchors; /* bit j: square j is an anchor */
    uint32_t xset[SOLVER_DIM];
} lane_t;

/* The most that tiles still to be placed in one direction can add, by the
 * number r of tiles left: main-word letters (board letters passed, and each
 * empty square's best admissible rack value x letter premium), word
 * multiplier, cross-word scores, and how many empty squares are reachable. */
typedef struct {
    int16_t m[SOLVER_RACK_MAX + 1], w[SOLVER_RACK_MAX + 1], c[SOLVER_RACK_MAX + 1];
    uint8_t k[SOLVER_RACK_MAX + 1];
} reach_t;

typedef struct {
    const uint64_t *nm;
    const uint8_t *values;
    const lane_t *lane;
    int dir, lane_idx;
    /* The walk starts at `anchor`: the anchor square (anchor_sq) or, when
     * board letters follow it, the last of them (see gen_anchor). */
    int anchor, anchor_sq, leftmost;
    uint32_t left_block; /* squares the left part may not take: other anchors */
    int placed;
    uint8_t rack[27];
    uint32_t rack_mask; /* letters playable now: nat_mask, or all if a blank is left */
    uint32_t nat_mask;  /* letters with a natural tile left */
    uint8_t cur[SOLVER_DIM];
    /* Top-N only: for the current anchor, the most a right part (tiles
     * after the separator, from the square after the anchor) can add. */
    bool prune;
    int ntiles, bingo_bonus;
    reach_t right;
    /* Top-N only: the current anchor's bounds by tile count (anchor_bounds)
     * and the most tiles a play may still use to reach the N-th best score.
     * Outside top-N, kmax is the rack size limit. */
    int16_t bk[SOLVER_RACK_MAX + 1];
    int kmax;
    /* Most tiles the GADDAG walk may place: the rack size, or six once
     * every seven-tile play has been found directly (bingo_pass). */
    int kcap;
    /* bingo_pass with two blanks: pairs[c] = letters the second blank may
     * stand for once the first stands for c (pair_ok: pairs are set). */
    uint32_t pairs[27], pair_ok;
    /* Letters the blank may stand for.  All of them, except in top-N when
     * only seven-tile plays can still reach the threshold and the rack has
     * one blank: then only letters that let rack and joined board letters
     * of one of the anchor's seven-tile windows be a word (bingo_blank). */
    uint32_t blank_ok, bingo_blank;
    int blank_pos;            /* square of the blank placed in set mode (see bset_t) */
    solver__sig_key rack_key; /* top-N: signature key of the rack's letters */
    /* sink */
    solver_move *out;
    size_t cap, count, heap_n, top;
} gen_t;

static inline uint32_t mask_of(const uint8_t *rack)
{
    if (rack[0])
        return SOLVER__ALL_LETTERS;
    uint32_t m = 0;
    for (int c = 1; c <= 26; c++)
        if (rack[c])
            m |= 1u << c;
    return m;
}

/* ---- sink: plain buffer or bounded heap (worst move at the root) ------ */

static void heap_sift_down(solver_move *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && solver_move_cmp(&h[l], &h[w]) > 0)
            w = l;
        if (r < n && solver_move_cmp(&h[r], &h[w]) > 0)
            w = r;
        if (w == i)
            return;
        solver_move t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void heap_push(gen_t *g, const solver_move *m)
{
    solver_move *h = g->out;
    if (g->heap_n < g->top) {
        size_t i = g->heap_n++;
        h[i] = *m;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (solver_move_cmp(&h[i], &h[p]) <= 0)
                break;
            solver_move t = h[i];
            h[i] = h[p];
            h[p] = t;
            i = p;
        }
    } else if (solver_move_cmp(m, &h[0]) < 0) {
        h[0] = *m;
        heap_sift_down(h, g->heap_n, 0);
    }
}

/* Score threshold a move must reach to matter (INT32_MIN if everything does). */
static inline int32_t threshold(const gen_t *g)
{
    return (g->top && g->heap_n == g->top) ? g->out[0].score : INT32_MIN;
}

/* Top-N: the largest tile count whose bound still reaches the threshold
 * (ties count: the notation breaks them). */
static void update_kmax(gen_t *g)
{
    int32_t thr = threshold(g);
    int k = g->kcap;
    while (k > 0 && g->bk[k] < thr)
        k--;
    g->kmax = k;
    int kmin = 1;
    while (kmin < SOLVER_RACK_MAX && g->bk[kmin] < thr)
        kmin++;
    g->blank_ok = kmin == SOLVER_RACK_MAX ? g->bingo_blank : SOLVER__ALL_LETTERS;
}

static void emit(gen_t *g, const solver_move *m)
{
    g->count++;
    if (g->top)
        heap_push(g, m);
    else if (g->count <= g->cap)
        g->out[g->count - 1] = *m;
}

static void record(gen_t *g, int start, int end, int main_sum, int wmul, int cross)
{
    if (g->dir == SOLVER_DOWN && g->placed == 1 && !(g->lane->xset[g->anchor_sq] & SOLVER__TRIVIAL))
        return; /* one tile forming an across word: reported across */
    int32_t score =
        main_sum * wmul + cross + (g->placed == SOLVER_RACK_MAX ? SOLVER_BINGO_BONUS : 0);
    if (g->top && score < threshold(g)) {
        g->count++;
        return;
    }
    solver_move m;
    m.kind = SOLVER_MOVE_PLAY;
    m.dir = (uint8_t)g->dir;
    m.row = (uint8_t)(g->dir == SOLVER_ACROSS ? g->lane_idx : start);
    m.col = (uint8_t)(g->dir == SOLVER_ACROSS ? start : g->lane_idx);
    m.len = (uint8_t)(end - start + 1);
    m.ntiles = (uint8_t)g->placed;
    memcpy(m.tiles, g->cur + start, m.len);
    memset(m.tiles + m.len, 0, SOLVER_DIM - m.len);
    m.score = score;
    emit(g, &m);
    if (g->prune)
        update_kmax(g);
}

/* The recursion comes in two copies: for racks without a blank (no blank
 * branch; the playable letters are exactly the natural ones) and for racks
 * with one.  The blank-free copy is smaller: 4 % fewer instructions on
 * blank-free racks. */
static void go_left(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);
static void go_right(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);
static void go_left_blank(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);
static void go_right_blank(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);

/* ---- the last blank: all designations walked at once -------------------
 * A blank scores 0 whatever it stands for, so every play that differs only
 * in the blank's letter has the same score.  Walking each designation as
 * its own branch (26 subtrees, nine tenths of the search on blank racks)
 * repeats the same squares, tiles and scores.  Once the rack's last blank
 * is placed, the walk goes on with the set of graph positions of all its
 * designations instead: a tile or board letter keeps the members that can
 * follow it, and a play is recorded once per member that ends a word.  The
 * moves found are exactly the same; only the number of steps falls. */
typedef struct {
    int n;
    uint32_t have;     /* union of the members' masks */
    uint32_t idx[26];  /* sibling list (go_set) or node (after_set) */
    uint32_t mask[26]; /* go_set: the list's tile mask */
    uint8_t des[26];   /* the blank's letter */
} bset_t;

static void go_set_left(gen_t *g, int pos, const bset_t *S, int main_sum, int wmul, int cross);
static void go_set_right(gen_t *g, int pos, const bset_t *S, int main_sum, int wmul, int cross);
static void after_set(gen_t *g, int pos, const bset_t *N, int main_sum, int wmul, int cross,
                      bool left);

/* Top-N: can no completion of the current partial play (r = tiles left)
 * reach the N-th best score, given what R says the rest may add? */
static inline bool hopeless(const gen_t *g, const reach_t *R, int main_sum, int wmul, int cross)
{
    if (!g->prune || g->heap_n < g->top)
        return false;
    int r = g->ntiles - g->placed;
    int bound = (main_sum + R->m[r]) * wmul * R->w[r] + cross + R->c[r];
    if (g->bingo_bonus && g->placed + R->k[r] >= SOLVER_RACK_MAX)
        bound += g->bingo_bonus;
    return bound < g->out[0].score;
}

/* Could go() at pos with the sibling list `list` do anything?  Checked by
 * the caller, so the many dead ends cost no call.  An empty square no
 * remaining tile may take is decided before the graph is touched (each
 * list is a likely cache miss). */
static inline __attribute__((always_inline)) bool worth(const gen_t *g, int pos, uint32_t list)
{
    const lane_t *L = g->lane;
    uint8_t sq = L->sq[pos];
    if (sq)
        return (SOLVER__NM_MASK(g->nm[list]) >> SOLVER_LETTER(sq)) & 1;
    uint32_t m = L->xset[pos] & g->rack_mask;
    return g->placed < g->kmax && m && (SOLVER__NM_MASK(g->nm[list]) & m);
}

/* After matching the tile at pos with GADDAG node `node`. */
static inline __attribute__((always_inline)) void after(gen_t *g, int pos, uint32_t node,
                                                        int main_sum, int wmul, int cross,
                                                        const bool left, const bool blanks)
{
    const lane_t *L = g->lane;
    uint32_t arc = SOLVER__ARC(node);
    if (left) {
        /* Nothing is placed yet while the walk is still on the board
         * letters after the anchor: no play ends there. */
        bool left_clear = (pos == 0 || !L->sq[pos - 1]) && g->placed;
        if ((node & SOLVER__ACCEPTS) && left_clear)
            record(g, pos, g->anchor, main_sum, wmul, cross);
        if (!arc)
            return;
        if (pos > 0 && !((g->left_block >> (pos - 1)) & 1) && worth(g, pos - 1, arc))
            (blanks ? go_left_blank : go_left)(g, pos - 1, arc, main_sum, wmul, cross);
        if (left_clear && g->anchor < SOLVER_DIM - 1) {
            uint32_t sep = SOLVER__NM_NODE(g->nm[arc]);
            if (SOLVER__TILE(sep) == SOLVER__SEP && SOLVER__ARC(sep) &&
                worth(g, g->anchor + 1, SOLVER__ARC(sep)) &&
                !hopeless(g, &g->right, main_sum, wmul, cross)) {
                int saved = g->leftmost;
                g->leftmost = pos;
                (blanks ? go_right_blank : go_right)(g, g->anchor + 1, SOLVER__ARC(sep), main_sum,
                                                     wmul, cross);
                g->leftmost = saved;
            }
        }
    } else {
        if ((node & SOLVER__ACCEPTS) && (pos == SOLVER_DIM - 1 || !L->sq[pos + 1]))
            record(g, g->leftmost, pos, main_sum, wmul, cross);
        if (arc && pos < SOLVER_DIM - 1 && worth(g, pos + 1, arc))
            (blanks ? go_right_blank : go_right)(g, pos + 1, arc, main_sum, wmul, cross);
    }
}

/* One step: match or place a tile at pos from the sibling list `list`.
 * Instantiated four times (left and right of the anchor, with and without
 * a blank on the rack) so each copy is specialised. */
static inline __attribute__((always_inline)) void go(gen_t *g, int pos, uint32_t list, int main_sum,
                                                     int wmul, int cross, const bool left,
                                                     const bool blanks)
{
    const lane_t *L = g->lane;
    const uint64_t *nm = g->nm;
    uint8_t sq = L->sq[pos];
    uint32_t xs = L->xset[pos];
    /* The caller checked worth(): a board letter is in the list, or some
     * remaining tile fits the empty square. */
    uint32_t have = SOLVER__NM_MASK(nm[list]); /* tiles present in this sibling list */
    if (sq) {
        unsigned t = SOLVER_LETTER(sq);
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        g->cur[pos] = sq | SOLVER_THROUGH;
        int v = (sq & SOLVER_BLANK) ? 0 : g->values[t];
        after(g, pos, node, main_sum + v, wmul, cross, left, blanks);
        return;
    }
    uint32_t cand = xs & g->rack_mask & have;
    int lm = L->lm[pos], wm = L->wm[pos];
    bool has_cross = !(xs & SOLVER__TRIVIAL);
    int xsc = L->xscore[pos];
    g->placed++;
    if (blanks && g->rack[0] == 1) {
        /* The last blank: its designations as one set (bset_t). */
        uint32_t d = cand & g->blank_ok;
        if (d) {
            bset_t N;
            N.n = 0;
            for (; d; d &= d - 1) {
                unsigned t = (unsigned)__builtin_ctz(d);
                N.idx[N.n] = SOLVER__NM_CHILD(nm, list, have, t);
                N.des[N.n++] = (uint8_t)(t | SOLVER_BLANK);
            }
            g->rack[0] = 0;
            g->rack_mask = g->nat_mask;
            int saved = g->blank_pos;
            g->blank_pos = pos;
            after_set(g, pos, &N, main_sum, wmul * wm, has_cross ? cross + xsc * wm : cross, left);
            g->blank_pos = saved;
            g->rack[0] = 1;
            g->rack_mask = SOLVER__ALL_LETTERS;
        }
        cand &= g->nat_mask;
        if (!cand) {
            g->placed--;
            return;
        }
    }
    do {
        unsigned t = (unsigned)__builtin_ctz(cand);
        cand &= cand - 1;
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        if (!blanks) {
            /* Without a blank every candidate is a rack tile, and only
             * rack_mask needs to follow the counts (nat_mask is read by the
             * blank copies only, which are never below this one). */
            int v = g->values[t] * lm;
            if (--g->rack[t] == 0)
                g->rack_mask &= ~(1u << t);
            g->cur[pos] = (uint8_t)t;
            after(g, pos, node, main_sum + v, wmul * wm, has_cross ? cross + (xsc + v) * wm : cross,
                  left, blanks);
            if (g->rack[t]++ == 0)
                g->rack_mask |= 1u << t;
        } else if (g->rack[t]) {
            int v = g->values[t] * lm;
            if (--g->rack[t] == 0) {
                g->nat_mask &= ~(1u << t);
                if (!blanks || !g->rack[0])
                    g->rack_mask = g->nat_mask;
            }
            g->cur[pos] = (uint8_t)t;
            after(g, pos, node, main_sum + v, wmul * wm, has_cross ? cross + (xsc + v) * wm : cross,
                  left, blanks);
            if (g->rack[t]++ == 0) {
                g->nat_mask |= 1u << t;
                if (!blanks || !g->rack[0])
                    g->rack_mask = g->nat_mask;
            }
        }
        if (blanks && g->rack[0] > 1 && ((g->blank_ok >> t) & 1)) {
            if (--g->rack[0] == 0)
                g->rack_mask = g->nat_mask;
            g->cur[pos] = (uint8_t)(t | SOLVER_BLANK);
            after(g, pos, node, main_sum, wmul * wm, has_cross ? cross + xsc * wm : cross, left,
                  blanks);
            if (g->rack[0]++ == 0)
                g->rack_mask = SOLVER__ALL_LETTERS;
        }
    } while (cand);
    g->placed--;
}

static void go_left(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, true, false);
}

static void go_right(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, false, false);
}

static void go_left_blank(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, true, true);
}

static void go_right_blank(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, false, true);
}

/* Keep the members of S (sibling lists) that have tile t, as the child
 * nodes. */
static inline __attribute__((always_inline)) void set_child(const uint64_t *nm, const bset_t *S,
                                                            unsigned t, bset_t *N)
{
    int n = 0;
    for (int i = 0; i < S->n; i++) {
        uint32_t m = S->mask[i];
        if ((m >> t) & 1) {
            N->idx[n] = SOLVER__NM_CHILD(nm, S->idx[i], m, t);
            N->des[n++] = S->des[i];
        }
    }
    N->n = n;
}

static inline __attribute__((always_inline)) bool worth_set(const gen_t *g, int pos,
                                                            const bset_t *S)
{
    const lane_t *L = g->lane;
    uint8_t sq = L->sq[pos];
    if (sq)
        return (S->have >> SOLVER_LETTER(sq)) & 1;
    return g->placed < g->kmax && (L->xset[pos] & g->rack_mask & S->have);
}

/* Record the play once per member of N that ends a word. */
static void record_set(gen_t *g, const bset_t *N, int start, int end, int main_sum, int wmul,
                       int cross)
{
    for (int i = 0; i < N->n; i++)
        if (N->idx[i] & SOLVER__ACCEPTS) {
            g->cur[g->blank_pos] = N->des[i];
            record(g, start, end, main_sum, wmul, cross);
        }
}

static inline __attribute__((always_inline)) void
go_set(gen_t *g, int pos, const bset_t *S, int main_sum, int wmul, int cross, const bool left)
{
    const lane_t *L = g->lane;
    const uint64_t *nm = g->nm;
    uint8_t sq = L->sq[pos];
    bset_t N;
    if (sq) {
        unsigned t = SOLVER_LETTER(sq);
        set_child(nm, S, t, &N);
        g->cur[pos] = sq | SOLVER_THROUGH;
        int v = (sq & SOLVER_BLANK) ? 0 : g->values[t];
        after_set(g, pos, &N, main_sum + v, wmul, cross, left);
        return;
    }
    uint32_t xs = L->xset[pos];
    uint32_t cand = xs & g->rack_mask & S->have;
    int lm = L->lm[pos], wm = L->wm[pos];
    bool has_cross = !(xs & SOLVER__TRIVIAL);
    int xsc = L->xscore[pos];
    g->placed++;
    do {
        unsigned t = (unsigned)__builtin_ctz(cand);
        cand &= cand - 1;
        set_child(nm, S, t, &N);
        int v = g->values[t] * lm;
        if (--g->rack[t] == 0)
            g->rack_mask = g->nat_mask &= ~(1u << t);
        g->cur[pos] = (uint8_t)t;
        after_set(g, pos, &N, main_sum + v, wmul * wm, has_cross ? cross + (xsc + v) * wm : cross,
                  left);
        if (g->rack[t]++ == 0)
            g->rack_mask = g->nat_mask |= 1u << t;
    } while (cand);
    g->placed--;
}

static void go_set_left(gen_t *g, int pos, const bset_t *S, int main_sum, int wmul, int cross)
{
    go_set(g, pos, S, main_sum, wmul, cross, true);
}

static void go_set_right(gen_t *g, int pos, const bset_t *S, int main_sum, int wmul, int cross)
{
    go_set(g, pos, S, main_sum, wmul, cross, false);
}

/* A set of one: the blank's letter is settled, and the blank-free walk
 * goes on (the rack holds no blank any more). */
static void after_one_left(gen_t *g, int pos, uint32_t node, int main_sum, int wmul, int cross)
{
    after(g, pos, node, main_sum, wmul, cross, true, false);
}

static void after_one_right(gen_t *g, int pos, uint32_t node, int main_sum, int wmul, int cross)
{
    after(g, pos, node, main_sum, wmul, cross, false, false);
}

/* After matching the tile at pos: N holds the members' nodes.  Mirrors
 * after(). */
static void after_set(gen_t *g, int pos, const bset_t *N, int main_sum, int wmul, int cross,
                      bool left)
{
    const lane_t *L = g->lane;
    const uint64_t *nm = g->nm;
    if (N->n <= 1) {
        if (N->n == 1) {
            g->cur[g->blank_pos] = N->des[0];
            (left ? after_one_left : after_one_right)(g, pos, N->idx[0], main_sum, wmul, cross);
        }
        return;
    }
    bset_t A;
    if (left) {
        /* The blank is placed, so a play ends here whenever the square
         * before is empty. */
        if (pos == 0 || !L->sq[pos - 1])
            record_set(g, N, pos, g->anchor, main_sum, wmul, cross);
    } else if (pos == SOLVER_DIM - 1 || !L->sq[pos + 1]) {
        record_set(g, N, g->leftmost, pos, main_sum, wmul, cross);
    }
    /* Members that go on: their child lists. */
    A.n = 0;
    A.have = 0;
    for (int i = 0; i < N->n; i++) {
        uint32_t arc = SOLVER__ARC(N->idx[i]);
        if (arc) {
            uint32_t m = SOLVER__NM_MASK(nm[arc]);
            A.idx[A.n] = arc;
            A.mask[A.n] = m;
            A.des[A.n++] = N->des[i];
            A.have |= m;
        }
    }
    if (!A.n)
        return;
    if (!left) {
        if (pos < SOLVER_DIM - 1 && worth_set(g, pos + 1, &A))
            go_set_right(g, pos + 1, &A, main_sum, wmul, cross);
        return;
    }
    if (pos > 0 && !((g->left_block >> (pos - 1)) & 1) && worth_set(g, pos - 1, &A))
        go_set_left(g, pos - 1, &A, main_sum, wmul, cross);
    bool left_clear = pos == 0 || !L->sq[pos - 1];
    /* The bound first: it costs no graph reads, and it fails most often. */
    if (left_clear && g->anchor < SOLVER_DIM - 1 && (A.have & 1u << SOLVER__SEP) &&
        !hopeless(g, &g->right, main_sum, wmul, cross)) {
        /* The separator is the first tile of a list when present. */
        bset_t B;
        B.n = 0;
        B.have = 0;
        for (int i = 0; i < A.n; i++) {
            if (!(A.mask[i] & 1u << SOLVER__SEP))
                continue;
            uint32_t arc = SOLVER__ARC(SOLVER__NM_NODE(nm[A.idx[i]]));
            if (arc) {
                uint32_t m = SOLVER__NM_MASK(nm[arc]);
                B.idx[B.n] = arc;
                B.mask[B.n] = m;
                B.des[B.n++] = A.des[i];
                B.have |= m;
            }
        }
        if (B.n && worth_set(g, g->anchor + 1, &B)) {
            int saved = g->leftmost;
            g->leftmost = pos;
            go_set_right(g, g->anchor + 1, &B, main_sum, wmul, cross);
            g->leftmost = saved;
        }
    }
}

/* Letter and word premiums of row i (and, the layout being symmetric,
 * column i), as solver__layout says; written out so building the lanes
 * copies them instead of decoding the layout square by square.  A copy
 * that drifted from the layout would show in the oracle tests, whose
 * brute-force scorer reads solver_board_premium. */
static const uint8_t premium_lm[SOLVER_DIM][SOLVER_DIM] = {
    {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1}, {1, 1, 1, 1, 1, 3, 1, 1, 1, 3, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1}, {2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 3, 1, 1, 1, 3, 1, 1, 1, 3, 1, 1, 1, 3, 1},
    {1, 1, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 2, 1, 1}, {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1},
    {1, 1, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 2, 1, 1}, {1, 3, 1, 1, 1, 3, 1, 1, 1, 3, 1, 1, 1, 3, 1},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2},
    {1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 3, 1, 1, 1, 3, 1, 1, 1, 1, 1},
    {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1},
};
static const uint8_t premium_wm[SOLVER_DIM][SOLVER_DIM] = {
    {3, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 3}, {1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1},
    {1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1}, {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1},
    {1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 3},
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1}, {1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1},
    {1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1}, {1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1},
    {3, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 3},
};

/* Lanes for both directions.  The premium layout is symmetric about the
 * main diagonal, so column i has the premiums of row i and one table serves
 * both directions.  Anchors (empty squares next to a tile) come from row
 * occupancy bit masks instead of four neighbour reads per square. */
static void build_lanes(const solver_board *b, lane_t lanes[2][SOLVER_DIM])
{
    uint32_t occ[SOLVER_DIM], anch[SOLVER_DIM];
    for (int r = 0; r < SOLVER_DIM; r++) {
        occ[r] = 0;
        for (int c = 0; c < SOLVER_DIM; c++)
            occ[r] |= (uint32_t)(b->sq[solver__sq(r, c)] != 0) << c;
    }
    for (int r = 0; r < SOLVER_DIM; r++) {
        uint32_t near = (occ[r] << 1) | (occ[r] >> 1) | (r > 0 ? occ[r - 1] : 0) |
                        (r < SOLVER_DIM - 1 ? occ[r + 1] : 0);
        anch[r] = near & ~occ[r] & ((1u << SOLVER_DIM) - 1);
    }
    if (b->ntiles == 0)
        anch[SOLVER_DIM / 2] = 1u << (SOLVER_DIM / 2);
    for (int i = 0; i < SOLVER_DIM; i++) {
        lane_t *A = &lanes[SOLVER_ACROSS][i], *D = &lanes[SOLVER_DOWN][i];
        memcpy(A->sq, b->sq + i * SOLVER_DIM, SOLVER_DIM);
        memcpy(A->xset, b->xset[SOLVER_ACROSS] + i * SOLVER_DIM, sizeof A->xset);
        memcpy(A->xscore, b->xscore[SOLVER_ACROSS] + i * SOLVER_DIM, SOLVER_DIM);
        memcpy(A->lm, premium_lm[i], SOLVER_DIM);
        memcpy(A->wm, premium_wm[i], SOLVER_DIM);
        memcpy(D->lm, premium_lm[i], SOLVER_DIM);
        memcpy(D->wm, premium_wm[i], SOLVER_DIM);
        A->anchors = (uint16_t)anch[i];
        D->anchors = 0;
        for (int j = 0; j < SOLVER_DIM; j++) {
            int s = solver__sq(j, i);
            D->sq[j] = b->sq[s];
            D->xset[j] = b->xset[SOLVER_DOWN][s];
            D->xscore[j] = b->xscore[SOLVER_DOWN][s];
            D->anchors |= (uint16_t)(((anch[j] >> i) & 1) << j);
        }
    }
}

/* The last square of the run of board letters right after anchor a, or a. */
static inline int walk_start(const lane_t *L, int a)
{
    int s = a;
    while (s < SOLVER_DIM - 1 && L->sq[s + 1])
        s++;
    return s;
}

/* Plays whose leftmost covered anchor is a.  When board letters follow the
 * anchor, every such play contains them, so the GADDAG walk starts on the
 * last of them (the split of the word after it) and matches them, reversed,
 * before the first tile is placed on the anchor: the reversed prefixes
 * walked from there are only those that can precede these letters.  Started
 * on the anchor, the walk would go through every reversed prefix the rack
 * allows and meet the letters only after the separator. */
static void gen_anchor(gen_t *g, const lane_t *L, int dir, int lane_idx, int a)
{
    int start = walk_start(L, a);
    uint32_t root = SOLVER__ARC(SOLVER__NM_NODE(g->nm[1]));
    g->lane = L;
    g->dir = dir;
    g->lane_idx = lane_idx;
    g->anchor = start;
    g->anchor_sq = a;
    g->leftmost = a;
    g->left_block = L->anchors & ~(1u << a);
    /* An anchor no rack letter fits (cross-set, graph) yields nothing. */
    if (!worth(g, a, root) || !worth(g, start, root))
        return;
    (g->rack[0] ? go_left_blank : go_left)(g, start, root, 0, 1, 0);
}

/* Sums over the squares of a window (anchor_bounds): tiles, word
 * multiplier, cross words' board letters, and how many letter premiums are
 * >= 2, >= 3 and cross coefficients >= 1, 2, 3. */
typedef struct {
    int k, w, c, lm2, lm3, x1, x2, x3;
} acc_t;

static inline void acc_add(acc_t *s, const lane_t *L, int j)
{
    int lm = L->lm[j], x = 0;
    s->k++;
    s->w *= L->wm[j];
    if (!(L->xset[j] & SOLVER__TRIVIAL)) {
        x = lm * L->wm[j];
        s->c += L->xscore[j] * L->wm[j];
    }
    s->lm2 += lm >= 2, s->lm3 += lm >= 3;
    s->x1 += x >= 1, s->x2 += x >= 2, s->x3 += x >= 3;
}

/* Upper bounds on the score of plays from anchor a, by number of new tiles:
 * bk[k] for k = 1..n, or -1 where no k-tile play can cover the anchor.  A
 * play whose leftmost new tile is at l puts its k tiles on exactly the first
 * k empty squares from l (plays stop before a square no rack tile may take),
 * so for each l and k the squares, the word multiplier, the board letters
 * joined and the cross words are known; only the letters are not.  Their
 * part is bounded by the rack's highest values paired with the highest
 * coefficients, separately for the letter premiums (main word) and the
 * cross-word coefficients; since both are 1..3, pairing the sorted values
 * with them is a sum of prefix sums (S[i] = the i highest rack values): the
 * letter part is S[k] + S[#lm >= 2] + S[#lm >= 3], and likewise for the
 * cross part.  (A second bound, each square's best admissible value times
 * its coefficient, was also taken until the fourth round: it was seldom the
 * smaller one, and computing it cost more than the searches it saved.)
 * The bingo bonus is left to the caller, which checks the seven-tile
 * windows reported in *seven. */
static void anchor_bounds(const lane_t *L, int a, const int *S, int n, const uint8_t *vbest,
                          const uint8_t *run_before, const uint8_t *run_after,
                          int bk[SOLVER_RACK_MAX + 1], uint32_t *seven)
{
    *seven = 0; /* bit l: a seven-tile window from l covers the anchor */
    for (int k = 0; k <= SOLVER_RACK_MAX; k++)
        bk[k] = -1;
    /* Leftmost square the leftmost tile may take: the left part never
     * covers another anchor or a square no rack tile may take, and leaves
     * at least the anchor's tile for the anchor. */
    int lo = a;
    for (int p = a - 1, room = n - 1; p >= 0; p--) {
        if (L->sq[p])
            continue;
        if (room == 0 || ((L->anchors >> p) & 1) || vbest[p] == 0xff)
            break;
        room--;
        lo = p;
    }
    /* The squares left of the anchor are the same for every window that
     * starts further left, so their sums grow by one square per leftmost
     * square instead of being walked again for each. */
    acc_t left = {.w = 1};
    int left_after = 0; /* board letters after each tile left of the anchor */
    for (int l = a; l >= lo; l--) {
        if (L->sq[l])
            continue;
        if (l < a) {
            acc_add(&left, L, l);
            left_after += run_after[l];
        }
        acc_t x = left;
        int joined = run_before[l] + left_after; /* board letters of the word so far */
        for (int j = a; j < SOLVER_DIM && x.k < n; j++) {
            if (L->sq[j])
                continue; /* counted in run_after of the square before */
            if (vbest[j] == 0xff)
                break; /* no rack tile may go here: plays from l stop before it */
            acc_add(&x, L, j);
            int k = x.k, wmul = x.w;
            int after = run_after[j]; /* board letters right after the k-th tile */
            int paired = wmul * (S[k] + S[x.lm2] + S[x.lm3]) + S[x.x1] + S[x.x2] + S[x.x3];
            int bound = (joined + after) * wmul + x.c + paired;
            if (bound > bk[k])
                bk[k] = bound;
            joined += after;
            if (k == SOLVER_RACK_MAX)
                *seven |= 1u << l;
        }
    }
}

typedef struct {
    int bound;                       /* max of bk */
    int16_t bk[SOLVER_RACK_MAX + 1]; /* anchor_bounds, bingo bonus included in bk[7] */
    uint8_t dir, lane, anchor;
    bool bingo;
    uint16_t seven; /* leftmost squares of seven-tile windows (anchor_bounds) */
} anchor_t;

/* ---- bingo feasibility, for pruning only ------------------------------
 * Nearly every anchor has room for seven tiles, so a bound that lets every
 * play use the whole rack, reach the farthest premium squares and earn the
 * bingo bonus is far too loose.  A bound assumes seven tiles only if some
 * window of seven empty squares reachable from the anchor could take the
 * whole rack: every square must admit some rack letter, and the rack plus
 * the board letters the play would join must be the letter multiset of a
 * word (lexicon signatures, which ignore order, so "maybe" is the safe
 * answer).  Answers are cached per set of joined board letters. */
typedef struct {
    solver__sig_key key[32]; /* board letters joined (product of their primes) */
    bool may[32];
    int n;
} bingo_cache;

/* The board letters a seven-tile play whose leftmost tile is at l joins
 * (the window is the first seven empty squares from l), as a signature
 * key: the product of their primes, which does not depend on their order,
 * so it serves as the cache key too. */
static solver__sig_key window_key(const lane_t *L, int l)
{
    int k = 0, e = l;
    for (; k < SOLVER_RACK_MAX; e++)
        k += !L->sq[e];
    e--; /* last new tile */
    int s0 = l;
    while (s0 > 0 && L->sq[s0 - 1])
        s0--;
    while (e < SOLVER_DIM - 1 && L->sq[e + 1])
        e++;
    solver__sig_key key = 1;
    for (int j = s0; j <= e; j++)
        if (L->sq[j])
            key *= solver__sig_primes[SOLVER_LETTER(L->sq[j])];
    return key;
}

/* Could the whole rack make a word on the seven-tile window whose leftmost
 * tile is at l, together with the board letters it joins?  g->rack_key is
 * the product for the rack's letters.  Answers are cached per set of board
 * letters. */
static bool window_bingo(const gen_t *g, const solver_lexicon *lex, bingo_cache *bc,
                         const lane_t *L, int l)
{
    solver__sig_key key = window_key(L, l);
    for (int i = 0; i < bc->n; i++)
        if (bc->key[i] == key)
            return bc->may[i];
    bool may = solver__sig_may_spell_key(lex, g->rack_key * key, g->rack[0]);
    if (bc->n < 32) {
        bc->key[bc->n] = key;
        bc->may[bc->n++] = may;
    }
    return may;
}

/* bingo_blank for an anchor whose seven-tile windows start at the squares
 * in `seven` (see gen_t). */
static uint32_t bingo_blank_letters(const gen_t *g, const solver_lexicon *lex, const lane_t *L,
                                    uint32_t seven)
{
    uint32_t set = 0;
    for (; seven; seven &= seven - 1)
        set |= solver__sig_blank_letters_key(lex, g->rack_key * window_key(L, __builtin_ctz(seven)),
                                             g->rack[0]);
    return set;
}

static void gen_exchanges(gen_t *g, const solver_rack *rack)
{
    int codes[27], nc = 0;
    for (int c = 0; c < 27; c++)
        if (rack->counts[c])
            codes[nc++] = c;
    uint8_t take[27] = {0};
    for (;;) {
        int k = 0; /* odometer over the count of each distinct tile */
        while (k < nc && take[k] == rack->counts[codes[k]])
            take[k++] = 0;
        if (k == nc)
            return;
        take[k]++;
        solver_move m;
        memset(&m, 0, sizeof m);
        m.kind = SOLVER_MOVE_EXCHANGE;
        for (int j = 0; j < nc; j++)
            for (int t = 0; t < take[j]; t++)
                m.tiles[m.len++] = (uint8_t)codes[j];
        m.ntiles = m.len;
        emit(g, &m);
    }
}

/* What tiles placed from square p rightwards may add at most (see
 * reach_t).  The walk stops before a square no rack tile may take.  Values
 * for r tiles include the board letters that follow the r-th tile, since
 * they join the word. */
static void reach(const lane_t *L, const uint8_t *vb, const uint8_t *values, int p, reach_t *R)
{
    int m = 0, w = 1, c = 0, used = 0;
    for (;; p++) {
        if (p < SOLVER_DIM && L->sq[p]) {
            m += (L->sq[p] & SOLVER_BLANK) ? 0 : values[SOLVER_LETTER(L->sq[p])];
            continue;
        }
        R->m[used] = (int16_t)m, R->w[used] = (int16_t)w, R->c[used] = (int16_t)c;
        R->k[used] = (uint8_t)used;
        if (p >= SOLVER_DIM || used == SOLVER_RACK_MAX || vb[p] == 0xff)
            break;
        used++;
        m += vb[p] * L->lm[p];
        w *= L->wm[p];
        if (!(L->xset[p] & SOLVER__TRIVIAL))
            c += (L->xscore[p] + vb[p] * L->lm[p]) * L->wm[p];
    }
    for (int r = used + 1; r <= SOLVER_RACK_MAX; r++)
        R->m[r] = R->m[used], R->w[r] = R->w[used], R->c[r] = R->c[used], R->k[r] = R->k[used];
}

static inline int letter_value(uint8_t sq, const uint8_t *values)
{
    return (sq & SOLVER_BLANK) ? 0 : values[SOLVER_LETTER(sq)];
}

static void key_sift_down(uint32_t *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && h[l] > h[w])
            w = l;
        if (r < n && h[r] > h[w])
            w = r;
        if (w == i)
            return;
        uint32_t t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

/* ---- seven-tile plays found directly (top-N) ---------------------------
 * A seven-tile play puts the whole rack on the first seven empty squares
 * from its leftmost tile, so the squares of its word are fixed by the lane
 * and that square alone: the words are those of the letter multiset "rack
 * plus the board letters joined", read along the squares.  So instead of
 * the GADDAG walk from every anchor (one walk per split of each word, and
 * with blanks 26 designations per split), each such window is checked with
 * the signature table (may the multiset spell a word at all?) and, if it
 * may, its words are read off the DAWG left to right, each square
 * restricted to its board letter, or to the rack tiles its cross-set
 * admits.  With one blank, the signature table also says which letters
 * it may stand for in that window.  Every seven-tile play is found here
 * exactly once (one window per leftmost square and lane), so the GADDAG
 * walk afterwards places at most six tiles (kcap) and anchors are bounded
 * without the bingo bonus: on open boards and blank racks most anchors
 * then fall below the best bingo and are never walked. */
static void bingo_square(gen_t *g, int pos, int end, uint32_t list, int main_sum, int wmul,
                         int cross);

static inline void bingo_after(gen_t *g, int pos, int end, uint32_t node, int main_sum, int wmul,
                               int cross)
{
    if (pos == end) {
        if (node & SOLVER__ACCEPTS)
            record(g, g->leftmost, end, main_sum, wmul, cross);
        return;
    }
    uint32_t arc = SOLVER__ARC(node);
    if (!arc)
        return;
    /* The next square is checked here, so the many dead ends cost no call. */
    uint32_t have = SOLVER__NM_MASK(g->nm[arc]);
    uint8_t sq = g->lane->sq[pos + 1];
    if (sq ? (have >> SOLVER_LETTER(sq)) & 1
           : (have & g->lane->xset[pos + 1] & (g->nat_mask | (g->rack[0] ? g->blank_ok : 0))) != 0)
        bingo_square(g, pos + 1, end, arc, main_sum, wmul, cross);
}

static void bingo_square(gen_t *g, int pos, int end, uint32_t list, int main_sum, int wmul,
                         int cross)
{
    const lane_t *L = g->lane;
    const uint64_t *nm = g->nm;
    uint32_t have = SOLVER__NM_MASK(nm[list]);
    uint8_t sq = L->sq[pos];
    if (sq) {
        unsigned t = SOLVER_LETTER(sq);
        if (!((have >> t) & 1))
            return;
        g->cur[pos] = sq | SOLVER_THROUGH;
        bingo_after(g, pos, end, SOLVER__NM_CHILD(nm, list, have, t),
                    main_sum + ((sq & SOLVER_BLANK) ? 0 : g->values[t]), wmul, cross);
        return;
    }
    uint32_t xs = L->xset[pos];
    uint32_t cand = xs & have & (g->nat_mask | (g->rack[0] ? g->blank_ok : 0));
    int lm = L->lm[pos], wm = L->wm[pos];
    bool has_cross = !(xs & SOLVER__TRIVIAL);
    int xsc = L->xscore[pos];
    for (; cand; cand &= cand - 1) {
        unsigned t = (unsigned)__builtin_ctz(cand);
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        if (g->rack[t]) {
            int v = g->values[t] * lm;
            if (--g->rack[t] == 0)
                g->nat_mask &= ~(1u << t);
            g->cur[pos] = (uint8_t)t;
            bingo_after(g, pos, end, node, main_sum + v, wmul * wm,
                        has_cross ? cross + (xsc + v) * wm : cross);
            if (g->rack[t]++ == 0)
                g->nat_mask |= 1u << t;
        }
        if (g->rack[0] && ((g->blank_ok >> t) & 1)) {
            uint32_t saved = g->blank_ok;
            if (g->rack[0] == 2 && g->pair_ok)
                g->blank_ok = g->pairs[t]; /* what the other blank may be now */
            g->rack[0]--;
            g->cur[pos] = (uint8_t)(t | SOLVER_BLANK);
            bingo_after(g, pos, end, node, main_sum, wmul * wm,
                        has_cross ? cross + xsc * wm : cross);
            g->rack[0]++;
            g->blank_ok = saved;
        }
    }
}

/* Every seven-tile play (rack of seven tiles) that can still matter, into
 * the sink.  Windows are visited by decreasing score bound (the rack's
 * values sorted on the window's premiums, as in anchor_bounds, plus the
 * board letters joined and the bonus), and the visit stops when the bound
 * falls below the N-th best score found: for top-1 usually after a few
 * windows.  S: prefix sums of the rack values sorted descending. */
typedef struct {
    int bound;
    uint32_t letters;         /* see window_letters */
    unsigned __int128 counts; /* board letters joined: 4-bit count per letter */
    uint8_t dir, lane, l, start, end;
} window_t;

/* Racks with at most one blank: the letters the blank may stand for in a
 * seven-tile play on the window whose leftmost tile is at l (no blank:
 * every letter if the rack may make a word there, else none), cached per
 * set of board letters joined like window_bingo. */
typedef struct {
    unsigned __int128 key[64]; /* letter counts; 0: empty (never a real key) */
    uint32_t letters[64];
} letters_cache;

static uint32_t window_letters(const gen_t *g, const solver_lexicon *lex, letters_cache *lc,
                               unsigned __int128 counts, const lane_t *L, int l)
{
    counts += 1; /* a window joining no board letter is a valid key too */
    uint64_t folded = (uint64_t)counts ^ (uint64_t)(counts >> 64);
    unsigned h = (unsigned)((folded * 0x9e3779b97f4a7c15ull) >> 58);
    if (lc->key[h] == counts)
        return lc->letters[h];
    solver__sig_key key = g->rack_key * window_key(L, l);
    uint32_t letters = g->rack[0]
                           ? solver__sig_blank_letters_key(lex, key, 1)
                           : (solver__sig_may_spell_key(lex, key, 0) ? SOLVER__ALL_LETTERS : 0);
    lc->key[h] = counts;
    lc->letters[h] = letters;
    return letters;
}

/* Two blanks with the pair index: the window's words are listed directly
 * (the index's words whose letters are the natural tiles, the board letters
 * joined and two more), each checked against the window's board letters
 * and cross-sets, and scored for every choice of squares for the blanks:
 * the letters left over after the natural tiles are the blanks', and when
 * a natural tile has the same letter the blank may take any of its
 * squares.  The cross-sets are per letter, so a placement that fits, fits
 * with any choice of blank squares. */
static void pair_window(gen_t *g, const solver_lexicon *lex, int l, int start, int end)
{
    const lane_t *L = g->lane;
    int len = end - start + 1;
    uint32_t want, stop;
    uint32_t i = solver__pw_bucket(lex, g->rack_key * window_key(L, l), len, &want, &stop);
    uint32_t prev = UINT32_MAX;
    for (; i < stop; i++) {
        uint32_t e = solver__pw_ent(lex, i);
        if ((e & 0x7fu) != want || e >> 7 == prev)
            continue;
        prev = e >> 7;
        const uint8_t *wd = lex->pw_word[prev];
        uint8_t need[27] = {0};
        int main_sum = 0, wmul = 1, cross = 0;
        int mv[SOLVER_DIM], cv[SOLVER_DIM];
        bool ok = true;
        for (int q = start; q <= end && ok; q++) {
            unsigned t = wd[q - start];
            uint8_t sq = L->sq[q];
            if (sq) {
                ok = SOLVER_LETTER(sq) == t;
                g->cur[q] = sq | SOLVER_THROUGH;
                main_sum += (sq & SOLVER_BLANK) ? 0 : g->values[t];
                continue;
            }
            uint32_t xs = L->xset[q];
            if (!((xs >> t) & 1) || ++need[t] > g->rack[t] + 2) {
                ok = false;
                break;
            }
            g->cur[q] = (uint8_t)t;
            int v = g->values[t] * L->lm[q], wm = L->wm[q];
            mv[q] = v;
            cv[q] = (xs & SOLVER__TRIVIAL) ? 0 : v * wm;
            main_sum += v;
            wmul *= wm;
            if (!(xs & SOLVER__TRIVIAL))
                cross += (L->xscore[q] + v) * wm;
        }
        if (!ok)
            continue;
        /* The blanks' letters: what the word needs beyond the natural
         * tiles (seven squares, seven tiles, so exactly two letters). */
        unsigned a = 0, b = 0;
        for (unsigned t = 1; t <= 26 && ok; t++) {
            if (need[t] < g->rack[t])
                ok = false;
            for (int k = g->rack[t]; k < need[t]; k++) {
                if (a)
                    b = t;
                else
                    a = t;
            }
        }
        if (!ok || !a || !b)
            continue;
        for (int p = start; p <= end; p++) {
            if (L->sq[p] || g->cur[p] != a)
                continue;
            g->cur[p] = (uint8_t)(a | SOLVER_BLANK);
            for (int r = a == b ? p + 1 : start; r <= end; r++) {
                if (L->sq[r] || g->cur[r] != b)
                    continue;
                g->cur[r] = (uint8_t)(b | SOLVER_BLANK);
                record(g, start, end, main_sum - mv[p] - mv[r], wmul, cross - cv[p] - cv[r]);
                g->cur[r] = (uint8_t)b;
            }
            g->cur[p] = (uint8_t)a;
        }
    }
}

static void bingo_pass(gen_t *g, lane_t lanes[2][SOLVER_DIM], const solver_lexicon *lex, int ndir,
                       const int *S)
{
    uint32_t dawg = SOLVER__ARC(SOLVER__NM_NODE(g->nm[0]));
    uint32_t fits = g->rack[0] ? SOLVER__ALL_LETTERS : g->nat_mask;
    window_t w[2 * SOLVER_DIM * (SOLVER_DIM - SOLVER_RACK_MAX + 1)];
    int nw = 0;
    letters_cache lc;
    memset(lc.key, 0, sizeof lc.key);
    for (int dir = 0; dir < ndir; dir++)
        for (int i = 0; i < SOLVER_DIM; i++) {
            const lane_t *L = &lanes[dir][i];
            if (!L->anchors)
                continue;
            /* The lane's empty squares (e[]), those some rack tile may
             * take (fit), and prefix sums of the board letters: values,
             * and letter counts (4 bits per letter), which identify the
             * multiset of board letters a window joins exactly. */
            uint32_t empty = 0, fit = 0;
            int pre[SOLVER_DIM + 1], e[SOLVER_DIM], ne = 0;
            unsigned __int128 cnt[SOLVER_DIM + 1];
            pre[0] = 0;
            cnt[0] = 0;
            for (int q = 0; q < SOLVER_DIM; q++) {
                uint8_t sq = L->sq[q];
                if (!sq) {
                    empty |= 1u << q;
                    fit |= (uint32_t)((L->xset[q] & fits) != 0) << q;
                    e[ne++] = q;
                }
                pre[q + 1] = pre[q] + (sq ? letter_value(sq, g->values) : 0);
                cnt[q + 1] = cnt[q] + (sq ? (unsigned __int128)1 << (4 * SOLVER_LETTER(sq)) : 0);
            }
            for (int t = 0; t + SOLVER_RACK_MAX <= ne; t++) {
                /* The window: the first seven empty squares from l. */
                int l = e[t], last = e[t + SOLVER_RACK_MAX - 1];
                uint32_t win = empty & ((2u << last) - (1u << l));
                if ((win & ~fit) || !(win & L->anchors))
                    continue;
                int end = last, start = l;
                while (end < SOLVER_DIM - 1 && L->sq[end + 1])
                    end++;
                while (start > 0 && L->sq[start - 1])
                    start--;
                /* Windows the rack cannot spell a word in are dropped
                 * now (cheap with the cache); with two blanks the check
                 * costs 351 look-ups, so it waits for the visit. */
                uint32_t letters = SOLVER__ALL_LETTERS;
                if (g->rack[0] < 2 &&
                    !(letters = window_letters(g, lex, &lc, cnt[end + 1] - cnt[start], L, l)))
                    continue;
                acc_t x = {.w = 1};
                for (uint32_t b = win; b; b &= b - 1)
                    acc_add(&x, L, __builtin_ctz(b));
                int joined = pre[end + 1] - pre[start];
                window_t *v = &w[nw++];
                v->letters = letters;
                v->counts = cnt[end + 1] - cnt[start];
                v->bound = joined * x.w + x.c + x.w * (S[SOLVER_RACK_MAX] + S[x.lm2] + S[x.lm3]) +
                           S[x.x1] + S[x.x2] + S[x.x3] + SOLVER_BINGO_BONUS;
                v->dir = (uint8_t)dir, v->lane = (uint8_t)i, v->l = (uint8_t)l;
                v->start = (uint8_t)start, v->end = (uint8_t)end;
            }
        }
    /* Selection by bound, one window at a time: most calls stop early. */
    unsigned __int128 pc_key[8];
    uint32_t pc_any[8], pc_pairs[8][27];
    int npc = 0;
    g->placed = SOLVER_RACK_MAX;
    for (int left = nw; left > 0; left--) {
        int b = 0;
        for (int k = 1; k < left; k++)
            if (w[k].bound > w[b].bound)
                b = k;
        window_t v = w[b];
        w[b] = w[left - 1];
        if (v.bound < threshold(g))
            break;
        const lane_t *L = &lanes[v.dir][v.lane];
        g->lane = L;
        g->dir = v.dir;
        g->lane_idx = v.lane;
        g->pair_ok = 0;
        g->blank_ok = v.letters;
        if (g->rack[0] == 2 && lex->pw_ent) {
            pair_window(g, lex, v.l, v.start, v.end);
            continue;
        }
        if (g->rack[0] == 2) {
            /* Two blanks: the pairs of letters they may stand for
             * together; the first one placed narrows the second.  Kept
             * per set of board letters joined (windows share them). */
            int c = 0;
            while (c < npc && pc_key[c] != v.counts)
                c++;
            if (c == npc) {
                c = npc < 8 ? npc++ : 7;
                pc_key[c] = v.counts;
                pc_any[c] =
                    solver__sig_blank_pairs(lex, g->rack_key * window_key(L, v.l), pc_pairs[c]);
            }
            memcpy(g->pairs, pc_pairs[c], sizeof g->pairs);
            g->blank_ok = g->pair_ok = pc_any[c];
            if (!g->blank_ok)
                continue;
        }
        g->leftmost = v.start;
        bingo_square(g, v.start, v.end, dawg, 0, 1, 0); /* record() adds the bonus */
    }
    g->placed = 0;
    g->pair_ok = 0;
    g->blank_ok = SOLVER__ALL_LETTERS;
}

/* ---- the empty board (top-N) --------------------------------------------
 * Every play crosses the centre square of row 8 (or of column H, the
 * mirror image), and no cross word or board letter constrains it, so a play
 * is a word the rack spells plus where it starts.  The GADDAG walk from the
 * centre finds each word once per square it may start on (once per split);
 * here the DAWG is walked once over the words the rack spells, and each
 * word is scored at every start that covers the centre.  Scores depend on
 * the start only through the row's premiums, so this is cheap arithmetic. */
static void empty_walk(gen_t *g, uint32_t list, int depth, uint8_t *word, int ndir)
{
    const uint64_t *nm = g->nm;
    uint32_t have = SOLVER__NM_MASK(nm[list]);
    uint32_t cand = have & (g->nat_mask | (g->rack[0] ? SOLVER__ALL_LETTERS : 0));
    const int centre = SOLVER_DIM / 2;
    for (; cand; cand &= cand - 1) {
        unsigned t = (unsigned)__builtin_ctz(cand);
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        for (int as_blank = 0; as_blank < 2; as_blank++) {
            if (as_blank ? !g->rack[0] : !g->rack[t])
                continue;
            if (as_blank) {
                g->rack[0]--;
                word[depth] = (uint8_t)(t | SOLVER_BLANK);
            } else {
                if (--g->rack[t] == 0)
                    g->nat_mask &= ~(1u << t);
                word[depth] = (uint8_t)t;
            }
            int len = depth + 1;
            if ((node & SOLVER__ACCEPTS) && len >= 2) {
                g->placed = len;
                for (int l = centre - len + 1 < 0 ? 0 : centre - len + 1; l <= centre; l++) {
                    if (l + len > SOLVER_DIM)
                        break;
                    int sum = 0, wmul = 1;
                    for (int i = 0; i < len; i++) {
                        uint8_t w = word[i];
                        sum += ((w & SOLVER_BLANK) ? 0 : g->values[w]) * premium_lm[centre][l + i];
                        wmul *= premium_wm[centre][l + i];
                        g->cur[l + i] = w;
                    }
                    for (int dir = 0; dir < ndir; dir++) {
                        g->dir = dir;
                        record(g, l, l + len - 1, sum, wmul, 0);
                    }
                }
            }
            if (SOLVER__ARC(node) && len < SOLVER_RACK_MAX)
                empty_walk(g, SOLVER__ARC(node), len, word, ndir);
            if (as_blank)
                g->rack[0]++;
            else if (g->rack[t]++ == 0)
                g->nat_mask |= 1u << t;
        }
    }
}

/* Top-N search: anchors in decreasing order of their score bound, until
 * the bound falls below the N-th best score found (ties still visited, since
 * the notation breaks them). */
static void gen_best(gen_t *g, lane_t lanes[2][SOLVER_DIM], const solver_lexicon *lex,
                     const solver_dist *dist, const solver_rack *rack, bool empty_board)
{
    /* On the empty board every down play mirrors an across play with the
     * same score (the layout is symmetric), and across notation ("8D")
     * sorts before down notation ("D8"), so the single best move is always
     * across: for top-1 the down direction is not searched. */
    int ndir = empty_board && g->top == 1 ? 1 : 2;
    if (empty_board) {
        uint8_t word[SOLVER_RACK_MAX];
        g->lane = &lanes[SOLVER_ACROSS][SOLVER_DIM / 2];
        g->lane_idx = SOLVER_DIM / 2;
        empty_walk(g, SOLVER__ARC(SOLVER__NM_NODE(g->nm[0])), 0, word, ndir);
        g->placed = 0;
        return;
    }
    uint8_t vals[SOLVER_RACK_MAX + 1];
    int n = 0;
    for (int c = 0; c < 27; c++)
        for (int k = 0; k < rack->counts[c] && n < SOLVER_RACK_MAX; k++) {
            uint8_t v = dist->value[c], p = (uint8_t)n++;
            while (p > 0 && vals[p - 1] < v) {
                vals[p] = vals[p - 1];
                p--;
            }
            vals[p] = v;
        }
    /* Best rack value each square's cross-set admits (0xff: none; 0 when
     * only a blank fits).  Rack letters are tried best value first. */
    int by_value[SOLVER_RACK_MAX], nl = 0;
    for (int c = 1; c <= 26; c++)
        if (rack->counts[c] && nl < SOLVER_RACK_MAX) {
            int p = nl++;
            while (p > 0 && dist->value[by_value[p - 1]] < dist->value[c]) {
                by_value[p] = by_value[p - 1];
                p--;
            }
            by_value[p] = c;
        }
    /* Only lanes with anchors are read.  A square without a perpendicular
     * word admits the whole rack, so its value is the best natural one. */
    int v_any = nl ? dist->value[by_value[0]] : 0;
    uint8_t vbest[2][SOLVER_DIM][SOLVER_DIM];
    for (int dir = 0; dir < 2; dir++)
        for (int i = 0; i < SOLVER_DIM; i++)
            for (int j = 0; j < SOLVER_DIM && lanes[dir][i].anchors; j++) {
                uint32_t xs = lanes[dir][i].xset[j], ok = xs & g->rack_mask;
                if (xs & SOLVER__TRIVIAL) {
                    vbest[dir][i][j] = (uint8_t)v_any;
                    continue;
                }
                int v = ok ? 0 : 0xff;
                for (int k = 0; k < nl && ok; k++)
                    if ((ok >> by_value[k]) & 1) {
                        v = dist->value[by_value[k]];
                        break;
                    }
                vbest[dir][i][j] = (uint8_t)v;
            }
    /* Signature key of the rack's letters, for the bingo windows. */
    g->rack_key = n == SOLVER_RACK_MAX ? solver__sig_key_of(rack->counts) : 1;

    int S[SOLVER_RACK_MAX + 1] = {0};
    for (int k = 1; k <= SOLVER_RACK_MAX; k++)
        S[k] = S[k - 1] + (k <= n ? vals[k - 1] : 0);
    /* Seven-tile plays first, directly: the best of them usually sets a
     * threshold most anchors cannot reach with six tiles. */
    bool direct = n == SOLVER_RACK_MAX && (rack->counts[0] || empty_board);
    if (direct) {
        bingo_pass(g, lanes, lex, ndir, S);
        g->kcap = SOLVER_RACK_MAX - 1;
    }
    /* Anchors are visited through a max-heap of 32-bit keys (bound, then
     * discovery order): usually only a third of them are visited, so a
     * full sort would be wasted. */
    anchor_t anchors[2 * SOLVER_SQUARES];
    uint32_t order[2 * SOLVER_SQUARES];
    bingo_cache bc;
    bc.n = 0;
    uint8_t window_known[2][SOLVER_DIM][SOLVER_DIM]; /* 0 unknown, 1 no bingo, 2 maybe */
    memset(window_known, 0, sizeof window_known);
    int na = 0;
    for (int dir = 0; dir < ndir; dir++)
        for (int i = 0; i < SOLVER_DIM; i++) {
            const lane_t *L = &lanes[dir][i];
            if (!L->anchors)
                continue;
            /* Values of the board letters in the run just before / after
             * each square, shared by the lane's anchors. */
            uint8_t run_before[SOLVER_DIM], run_after[SOLVER_DIM];
            run_before[0] = 0;
            for (int j = 1; j < SOLVER_DIM; j++)
                run_before[j] =
                    L->sq[j - 1]
                        ? (uint8_t)(run_before[j - 1] + letter_value(L->sq[j - 1], dist->value))
                        : 0;
            run_after[SOLVER_DIM - 1] = 0;
            for (int j = SOLVER_DIM - 2; j >= 0; j--)
                run_after[j] =
                    L->sq[j + 1]
                        ? (uint8_t)(run_after[j + 1] + letter_value(L->sq[j + 1], dist->value))
                        : 0;
            for (uint32_t am = L->anchors; am; am &= am - 1) {
                int a = __builtin_ctz(am);
                if (vbest[dir][i][a] != 0xff) {
                    int bk[SOLVER_RACK_MAX + 1];
                    uint32_t seven;
                    anchor_bounds(L, a, S, n, vbest[dir][i], run_before, run_after, bk, &seven);
                    /* A seven-tile play needs a window the whole rack may
                     * spell a word in; then it earns the bingo bonus.  A
                     * window depends only on its leftmost square, and
                     * anchors of a lane share windows: answers are kept. */
                    bool bingo = false;
                    for (uint32_t w = n == SOLVER_RACK_MAX && !direct ? seven : 0; w && !bingo;
                         w &= w - 1) {
                        int l = __builtin_ctz(w);
                        if (!window_known[dir][i][l])
                            window_known[dir][i][l] = window_bingo(g, lex, &bc, L, l) ? 2 : 1;
                        bingo = window_known[dir][i][l] == 2;
                    }
                    if (n == SOLVER_RACK_MAX) /* with direct: found already */
                        bk[SOLVER_RACK_MAX] = bingo ? bk[SOLVER_RACK_MAX] + SOLVER_BINGO_BONUS : -1;
                    anchor_t x = {.dir = (uint8_t)dir,
                                  .lane = (uint8_t)i,
                                  .anchor = (uint8_t)a,
                                  .bingo = bingo,
                                  .seven = (uint16_t)seven};
                    x.bound = -1;
                    for (int k = 0; k <= SOLVER_RACK_MAX; k++) {
                        x.bk[k] = (int16_t)bk[k];
                        if (bk[k] > x.bound)
                            x.bound = bk[k];
                    }
                    if (x.bound < 0)
                        continue; /* no play can cover this anchor */
                    order[na] = (uint32_t)x.bound << 10 | (uint32_t)(1023 - na);
                    anchors[na++] = x;
                }
            }
        }
    for (int i = na / 2 - 1; i >= 0; i--)
        key_sift_down(order, na, i);
    g->prune = true;
    g->ntiles = rack->n;
    for (int left = na; left > 0; left--) {
        const anchor_t *x = &anchors[1023 - (order[0] & 1023)];
        if (x->bound < threshold(g))
            break;
        order[0] = order[left - 1];
        key_sift_down(order, left - 1, 0);
        const lane_t *L = &lanes[x->dir][x->lane];
        const uint8_t *vb = vbest[x->dir][x->lane];
        reach(L, vb, dist->value, walk_start(L, x->anchor) + 1, &g->right);
        g->bingo_bonus = x->bingo ? SOLVER_BINGO_BONUS : 0;
        g->bingo_blank = x->bingo && rack->counts[0] == 1 ? bingo_blank_letters(g, lex, L, x->seven)
                                                          : SOLVER__ALL_LETTERS;
        memcpy(g->bk, x->bk, sizeof g->bk);
        update_kmax(g);
        gen_anchor(g, L, x->dir, x->lane, x->anchor);
    }
    g->prune = false;
    g->kmax = g->kcap = SOLVER_RACK_MAX;
    g->blank_ok = g->bingo_blank = SOLVER__ALL_LETTERS;
}

size_t solver_gen(const solver_board *b, const solver_lexicon *lex, const solver_dist *dist,
                  const solver_rack *rack, const solver_gen_opts *opts, solver_move *out,
                  size_t cap)
{
    static const solver_gen_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    gen_t g;
    memset(&g, 0, sizeof g);
    g.nm = lex->nm;
    g.values = dist->value;
    memcpy(g.rack, rack->counts, sizeof g.rack);
    g.rack_mask = mask_of(g.rack);
    for (int c = 1; c <= 26; c++)
        if (g.rack[c])
            g.nat_mask |= 1u << c;
    g.out = out;
    g.cap = cap;
    g.kmax = g.kcap = SOLVER_RACK_MAX;
    g.blank_ok = g.bingo_blank = SOLVER__ALL_LETTERS;
    g.top = opts->top_n < cap ? opts->top_n : cap;
    if (opts->top_n && g.top == 0)
        return 0;

    lane_t lanes[2][SOLVER_DIM];
    build_lanes(b, lanes);

    if (rack->n > 0) {
        if (!g.top) {
            for (int dir = 0; dir < 2; dir++)
                for (int i = 0; i < SOLVER_DIM; i++)
                    for (int a = 0; a < SOLVER_DIM; a++)
                        if ((lanes[dir][i].anchors >> a) & 1)
                            gen_anchor(&g, &lanes[dir][i], dir, i, a);
        } else {
            gen_best(&g, lanes, lex, dist, rack, b->ntiles == 0);
        }
    }
    if (opts->with_exchanges && opts->bag_count >= SOLVER_RACK_MAX && rack->n > 0)
        gen_exchanges(&g, rack);
    if (opts->with_pass) {
        solver_move m;
        memset(&m, 0, sizeof m);
        m.kind = SOLVER_MOVE_PASS;
        emit(&g, &m);
    }
    if (g.top) {
        /* Heap to sorted order: repeatedly move the worst to the end. */
        size_t n = g.heap_n;
        for (size_t k = n; k > 1; k--) {
            solver_move t = out[0];
            out[0] = out[k - 1];
            out[k - 1] = t;
            heap_sift_down(out, k - 1, 0);
        }
        return n;
    }
    return g.count;
}

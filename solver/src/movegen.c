/* Move generation on a GADDAG (KWG) with incremental scoring.
 *
 * Both directions are generated on "lanes": rows for across plays, columns
 * for down plays, each copied once into a small struct so the recursion
 * reads contiguous bytes.  From each anchor the recursion first walks left
 * (matching the reversed prefix in the GADDAG), then after the separator
 * walks right.  The left part may not place a tile on another anchor, so
 * every placement is produced from exactly one anchor: the leftmost anchor
 * it covers.  A one-tile play is reported across when it forms an across
 * word and down otherwise, so it is never listed twice.
 *
 * The score is accumulated on the way: main-word letter sum, word
 * multiplier, and the cross words' scores from the board's cross-score
 * cache.  Nothing is allocated: moves go to the caller's buffer, or, in
 * top-N mode, into a bounded heap kept in that buffer.  Top-N mode visits
 * anchors by decreasing score upper bound (anchor_bound, plus the bingo
 * bonus only where lexicon signatures say a bingo may fit) and stops when
 * the bound cannot beat the N-th best move found so far.
 *
 * The graph is read through lex->nm (node | sibling-mask << 32), so a child
 * is found by popcount and only candidate letters are visited. */
#include "internal.h"

#include <string.h>

typedef struct {
    uint8_t sq[SOLVER_DIM];
    uint8_t xscore[SOLVER_DIM];
    uint8_t lm[SOLVER_DIM], wm[SOLVER_DIM];
    uint8_t anchor[SOLVER_DIM];
    uint32_t xset[SOLVER_DIM];
} lane_t;

typedef struct {
    const uint64_t *nm;
    const uint8_t *values;
    const lane_t *lane;
    int dir, lane_idx;
    int anchor, leftmost;
    int placed;
    uint8_t rack[27];
    uint32_t rack_mask; /* letters playable now: nat_mask, or all if a blank is left */
    uint32_t nat_mask;  /* letters with a natural tile left */
    uint8_t cur[SOLVER_DIM];
    /* Top-N only: for the current anchor, the most the right part (after
     * the separator) can add with r tiles left: board letters passed, best
     * admissible rack value x letter premium, word multiplier, cross words. */
    bool prune;
    int ntiles, bingo_bonus;
    int16_t right_m[SOLVER_RACK_MAX + 1], right_w[SOLVER_RACK_MAX + 1], right_c[SOLVER_RACK_MAX + 1];
    uint8_t right_k[SOLVER_RACK_MAX + 1]; /* empty squares actually reachable */
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
    if (g->dir == SOLVER_DOWN && g->placed == 1 && !(g->lane->xset[g->anchor] & SOLVER__TRIVIAL))
        return; /* one tile forming an across word: reported across */
    int32_t score = main_sum * wmul + cross + (g->placed == SOLVER_RACK_MAX ? SOLVER_BINGO_BONUS : 0);
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
}

static void go_left(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);
static void go_right(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross);

/* Top-N: can no right part on this left part reach the N-th best score? */
static inline bool right_hopeless(const gen_t *g, int main_sum, int wmul, int cross)
{
    if (!g->prune || g->heap_n < g->top)
        return false;
    int r = g->ntiles - g->placed;
    int bound = (main_sum + g->right_m[r]) * wmul * g->right_w[r] + cross + g->right_c[r];
    if (g->bingo_bonus && g->right_k[r] == r)
        bound += g->bingo_bonus;
    return bound < g->out[0].score;
}

/* After matching the tile at pos with GADDAG node `node`. */
static inline __attribute__((always_inline)) void after(gen_t *g, int pos, uint32_t node, int main_sum, int wmul, int cross,
                         bool left)
{
    const lane_t *L = g->lane;
    uint32_t arc = SOLVER__ARC(node);
    if (left) {
        bool left_clear = pos == 0 || !L->sq[pos - 1];
        bool right_clear = g->anchor == SOLVER_DIM - 1 || !L->sq[g->anchor + 1];
        if ((node & SOLVER__ACCEPTS) && left_clear && right_clear)
            record(g, pos, g->anchor, main_sum, wmul, cross);
        if (!arc)
            return;
        if (pos > 0 && (L->sq[pos - 1] || !L->anchor[pos - 1]))
            go_left(g, pos - 1, arc, main_sum, wmul, cross);
        if (left_clear && g->anchor < SOLVER_DIM - 1) {
            uint32_t sep = SOLVER__NM_NODE(g->nm[arc]);
            if (SOLVER__TILE(sep) == SOLVER__SEP && SOLVER__ARC(sep) && !right_hopeless(g, main_sum, wmul, cross)) {
                int saved = g->leftmost;
                g->leftmost = pos;
                go_right(g, g->anchor + 1, SOLVER__ARC(sep), main_sum, wmul, cross);
                g->leftmost = saved;
            }
        }
    } else {
        if ((node & SOLVER__ACCEPTS) && (pos == SOLVER_DIM - 1 || !L->sq[pos + 1]))
            record(g, g->leftmost, pos, main_sum, wmul, cross);
        if (arc && pos < SOLVER_DIM - 1)
            go_right(g, pos + 1, arc, main_sum, wmul, cross);
    }
}

/* One step: match or place a tile at pos from the sibling list `list`.
 * Instantiated twice (left and right of the anchor) so each copy is
 * specialised for its direction. */
static inline __attribute__((always_inline)) void go(gen_t *g, int pos, uint32_t list, int main_sum, int wmul,
                                                      int cross, const bool left)
{
    const lane_t *L = g->lane;
    const uint64_t *nm = g->nm;
    uint8_t sq = L->sq[pos];
    uint32_t xs = L->xset[pos];
    /* An empty square no remaining tile may take ends this branch before
     * the graph is touched (each list is a likely cache miss). */
    if (!sq && !(xs & g->rack_mask))
        return;
    uint32_t have = SOLVER__NM_MASK(nm[list]); /* tiles present in this sibling list */
    if (sq) {
        unsigned t = SOLVER_LETTER(sq);
        if (!((have >> t) & 1))
            return;
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        g->cur[pos] = sq | SOLVER_THROUGH;
        int v = (sq & SOLVER_BLANK) ? 0 : g->values[t];
        after(g, pos, node, main_sum + v, wmul, cross, left);
        return;
    }
    uint32_t cand = xs & g->rack_mask & have;
    if (!cand)
        return;
    int lm = L->lm[pos], wm = L->wm[pos];
    bool has_cross = !(xs & SOLVER__TRIVIAL);
    int xsc = L->xscore[pos];
    g->placed++;
    do {
        unsigned t = (unsigned)__builtin_ctz(cand);
        cand &= cand - 1;
        uint32_t node = SOLVER__NM_CHILD(nm, list, have, t);
        if (g->rack[t]) {
            int v = g->values[t] * lm;
            if (--g->rack[t] == 0) {
                g->nat_mask &= ~(1u << t);
                if (!g->rack[0])
                    g->rack_mask = g->nat_mask;
            }
            g->cur[pos] = (uint8_t)t;
            after(g, pos, node, main_sum + v, wmul * wm, has_cross ? cross + (xsc + v) * wm : cross, left);
            if (g->rack[t]++ == 0) {
                g->nat_mask |= 1u << t;
                if (!g->rack[0])
                    g->rack_mask = g->nat_mask;
            }
        }
        if (g->rack[0]) {
            if (--g->rack[0] == 0)
                g->rack_mask = g->nat_mask;
            g->cur[pos] = (uint8_t)(t | SOLVER_BLANK);
            after(g, pos, node, main_sum, wmul * wm, has_cross ? cross + xsc * wm : cross, left);
            if (g->rack[0]++ == 0)
                g->rack_mask = SOLVER__ALL_LETTERS;
        }
    } while (cand);
    g->placed--;
}

static void go_left(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, true);
}

static void go_right(gen_t *g, int pos, uint32_t list, int main_sum, int wmul, int cross)
{
    go(g, pos, list, main_sum, wmul, cross, false);
}

static void build_lanes(const solver_board *b, lane_t lanes[2][SOLVER_DIM])
{
    bool empty = b->ntiles == 0;
    for (int dir = 0; dir < 2; dir++)
        for (int i = 0; i < SOLVER_DIM; i++) {
            lane_t *L = &lanes[dir][i];
            for (int j = 0; j < SOLVER_DIM; j++) {
                int r = dir == SOLVER_ACROSS ? i : j, c = dir == SOLVER_ACROSS ? j : i;
                int s = solver__sq(r, c);
                L->sq[j] = b->sq[s];
                L->xset[j] = b->xset[dir][s];
                L->xscore[j] = b->xscore[dir][s];
                L->lm[j] = (uint8_t)solver__lm(s);
                L->wm[j] = (uint8_t)solver__wm(s);
                bool a;
                if (b->sq[s])
                    a = false;
                else if (empty)
                    a = r == SOLVER_DIM / 2 && c == SOLVER_DIM / 2;
                else
                    a = (r > 0 && b->sq[s - SOLVER_DIM]) || (r < SOLVER_DIM - 1 && b->sq[s + SOLVER_DIM]) ||
                        (c > 0 && b->sq[s - 1]) || (c < SOLVER_DIM - 1 && b->sq[s + 1]);
                L->anchor[j] = a;
            }
        }
}

static void gen_anchor(gen_t *g, const lane_t *L, int dir, int lane_idx, int a)
{
    g->lane = L;
    g->dir = dir;
    g->lane_idx = lane_idx;
    g->anchor = a;
    g->leftmost = a;
    /* An anchor whose cross-set admits no rack letter yields nothing. */
    if (!(L->xset[a] & g->rack_mask))
        return;
    go_left(g, a, SOLVER__ARC(SOLVER__NM_NODE(g->nm[1])), 0, 1, 0);
}

/* Upper bound on the score of any play generated from anchor a.  For each
 * square l where the leftmost new tile could go, the new tiles lie among the
 * first n empty squares from l, up to the first square no rack tile may
 * take.  Letting every one of them be used and every multiplier apply, the
 * new tiles' part is bounded twice, and the smaller bound kept: the highest
 * rack values paired with the highest per-square coefficients, and each
 * square's best admissible rack value times its coefficient.  The bingo
 * bonus is left to the caller (bingo_window says whether seven fit). */
static int anchor_bound(const lane_t *L, int a, const uint8_t *vals_desc, int n, const uint8_t *values,
                        const uint8_t *vbest, bool *bingo_window)
{
    *bingo_window = false;
    int lo = a;
    while (lo > 0 && (L->sq[lo - 1] || (!L->anchor[lo - 1] && vbest[lo - 1] != 0xff)))
        lo--;
    int best = 0;
    for (int l = a; l >= lo; l--) {
        if (L->sq[l])
            continue;
        int k = 0, wmul = 1, consts = 0, e = l;
        int coef_lm[SOLVER_RACK_MAX], coef_x[SOLVER_RACK_MAX], vb[SOLVER_RACK_MAX];
        for (int j = l; j < SOLVER_DIM && k < n; j++) {
            if (L->sq[j])
                continue;
            if (vbest[j] == 0xff)
                break; /* no rack tile may go here: plays from l stop before it */
            coef_lm[k] = L->lm[j];
            if (!(L->xset[j] & SOLVER__TRIVIAL)) {
                coef_x[k] = L->lm[j] * L->wm[j];
                consts += L->xscore[j] * L->wm[j];
            } else
                coef_x[k] = 0;
            vb[k] = vbest[j];
            wmul *= L->wm[j];
            e = j;
            k++;
        }
        if (e < a)
            continue; /* cannot reach the anchor */
        int s0 = l, e0 = e, through = 0;
        while (s0 > 0 && L->sq[s0 - 1])
            s0--;
        while (e0 < SOLVER_DIM - 1 && L->sq[e0 + 1])
            e0++;
        for (int j = s0; j <= e0; j++)
            if (L->sq[j] && !(L->sq[j] & SOLVER_BLANK))
                through += values[SOLVER_LETTER(L->sq[j])];
        int coef[SOLVER_RACK_MAX], per_square = 0;
        for (int j = 0; j < k; j++) { /* insertion sort, descending */
            int c = coef_lm[j] * wmul + coef_x[j], p = j;
            per_square += vb[j] * c;
            while (p > 0 && coef[p - 1] < c) {
                coef[p] = coef[p - 1];
                p--;
            }
            coef[p] = c;
        }
        int paired = 0;
        for (int j = 0; j < k; j++)
            paired += vals_desc[j] * coef[j];
        int bound = through * wmul + consts + (paired < per_square ? paired : per_square);
        if (k == SOLVER_RACK_MAX)
            *bingo_window = true;
        if (bound > best)
            best = bound;
    }
    return best;
}

typedef struct {
    int bound; /* including the bingo bonus if a bingo may fit */
    uint8_t dir, lane, anchor;
    bool bingo;
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
    uint64_t key[32]; /* board letters joined, sorted and packed */
    bool may[32];
    int n;
} bingo_cache;

static bool window_may_bingo(const gen_t *g, const solver_lexicon *lex, bingo_cache *bc, const uint8_t *through,
                             int nt)
{
    uint8_t t[SOLVER_DIM];
    memcpy(t, through, (size_t)nt);
    for (int i = 1; i < nt; i++) /* insertion sort: at most 8 letters */
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            uint8_t x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    uint64_t key = (uint64_t)(nt + 1) << 59;
    for (int i = 0; i < nt; i++)
        key |= (uint64_t)t[i] << (5 * i);
    for (int i = 0; i < bc->n; i++)
        if (bc->key[i] == key)
            return bc->may[i];
    uint8_t counts[27];
    memcpy(counts, g->rack, sizeof counts);
    for (int i = 0; i < nt; i++)
        counts[t[i]]++;
    bool may = solver__sig_may_spell(lex, counts);
    if (bc->n < 32) {
        bc->key[bc->n] = key;
        bc->may[bc->n++] = may;
    }
    return may;
}

static bool bingo_possible(const gen_t *g, const solver_lexicon *lex, bingo_cache *bc, const lane_t *L,
                           const uint8_t *vbest, int a)
{
    int lo = a;
    while (lo > 0 && (L->sq[lo - 1] || (!L->anchor[lo - 1] && vbest[lo - 1] != 0xff)))
        lo--;
    for (int l = a; l >= lo; l--) {
        if (L->sq[l])
            continue;
        int k = 0, e = l;
        for (int j = l; j < SOLVER_DIM && k < SOLVER_RACK_MAX; j++)
            if (!L->sq[j]) {
                if (vbest[j] == 0xff)
                    break;
                e = j;
                k++;
            }
        if (k < SOLVER_RACK_MAX || e < a)
            continue;
        int s0 = l, e0 = e, nt = 0;
        uint8_t through[SOLVER_DIM];
        while (s0 > 0 && L->sq[s0 - 1])
            s0--;
        while (e0 < SOLVER_DIM - 1 && L->sq[e0 + 1])
            e0++;
        for (int j = s0; j <= e0; j++)
            if (L->sq[j])
                through[nt++] = SOLVER_LETTER(L->sq[j]);
        if (window_may_bingo(g, lex, bc, through, nt))
            return true;
    }
    return false;
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

/* Top-N search: anchors in decreasing order of their score bound, until
 * the bound falls below the N-th best score found (ties still visited, since
 * the notation breaks them). */
static void gen_best(gen_t *g, lane_t lanes[2][SOLVER_DIM], const solver_lexicon *lex, const solver_dist *dist,
                     const solver_rack *rack)
{
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
    uint8_t vbest[2][SOLVER_DIM][SOLVER_DIM];
    for (int dir = 0; dir < 2; dir++)
        for (int i = 0; i < SOLVER_DIM; i++)
            for (int j = 0; j < SOLVER_DIM; j++) {
                uint32_t ok = lanes[dir][i].xset[j] & g->rack_mask;
                int v = ok ? 0 : 0xff;
                for (int k = 0; k < nl && ok; k++)
                    if ((ok >> by_value[k]) & 1) {
                        v = dist->value[by_value[k]];
                        break;
                    }
                vbest[dir][i][j] = (uint8_t)v;
            }
    anchor_t anchors[2 * SOLVER_SQUARES];
    bingo_cache bc;
    bc.n = 0;
    int na = 0;
    for (int dir = 0; dir < 2; dir++)
        for (int i = 0; i < SOLVER_DIM; i++)
            for (int a = 0; a < SOLVER_DIM; a++)
                if (lanes[dir][i].anchor[a] && vbest[dir][i][a] != 0xff) {
                    const lane_t *L = &lanes[dir][i];
                    /* Without a possible bingo a play here uses at most six
                     * tiles, which keeps far premium squares out of the bound. */
                    bool bw, bingo = n == SOLVER_RACK_MAX && bingo_possible(g, lex, &bc, L, vbest[dir][i], a);
                    int bound = anchor_bound(L, a, vals, bingo || n < SOLVER_RACK_MAX ? n : n - 1, dist->value,
                                             vbest[dir][i], &bw);
                    if (bingo)
                        bound += SOLVER_BINGO_BONUS;
                    anchor_t x = {bound, (uint8_t)dir, (uint8_t)i, (uint8_t)a, bingo};
                    int p = na++;
                    while (p > 0 && anchors[p - 1].bound < x.bound) {
                        anchors[p] = anchors[p - 1];
                        p--;
                    }
                    anchors[p] = x;
                }
    g->prune = true;
    g->ntiles = rack->n;
    for (int k = 0; k < na && anchors[k].bound >= threshold(g); k++) {
        const anchor_t *x = &anchors[k];
        const lane_t *L = &lanes[x->dir][x->lane];
        const uint8_t *vb = vbest[x->dir][x->lane];
        int m = 0, w = 1, c = 0, used = 0, p = x->anchor + 1;
        for (; p < SOLVER_DIM && used <= SOLVER_RACK_MAX; p++) {
            if (L->sq[p]) {
                m += (L->sq[p] & SOLVER_BLANK) ? 0 : dist->value[SOLVER_LETTER(L->sq[p])];
                continue;
            }
            g->right_m[used] = (int16_t)m, g->right_w[used] = (int16_t)w, g->right_c[used] = (int16_t)c;
            g->right_k[used] = (uint8_t)used;
            if (vb[p] == 0xff || used == SOLVER_RACK_MAX)
                break; /* no tile fits here: the play ends before it */
            used++;
            m += vb[p] * L->lm[p];
            w *= L->wm[p];
            if (!(L->xset[p] & SOLVER__TRIVIAL))
                c += (L->xscore[p] + vb[p] * L->lm[p]) * L->wm[p];
        }
        if (p == SOLVER_DIM) { /* reached the edge with `used` tiles */
            g->right_m[used] = (int16_t)m, g->right_w[used] = (int16_t)w, g->right_c[used] = (int16_t)c;
            g->right_k[used] = (uint8_t)used;
        }
        for (int r = used + 1; r <= SOLVER_RACK_MAX; r++) {
            g->right_m[r] = g->right_m[used], g->right_w[r] = g->right_w[used], g->right_c[r] = g->right_c[used];
            g->right_k[r] = g->right_k[used];
        }
        g->bingo_bonus = x->bingo ? SOLVER_BINGO_BONUS : 0;
        gen_anchor(g, L, x->dir, x->lane, x->anchor);
    }
    g->prune = false;
}

size_t solver_gen(const solver_board *b, const solver_lexicon *lex, const solver_dist *dist,
                  const solver_rack *rack, const solver_gen_opts *opts, solver_move *out, size_t cap)
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
                        if (lanes[dir][i].anchor[a])
                            gen_anchor(&g, &lanes[dir][i], dir, i, a);
        } else {
            gen_best(&g, lanes, lex, dist, rack);
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

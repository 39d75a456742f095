/*
 * bot_play.c — the bots' move choice (bot_play.h has the levels).
 *
 * Equity is the usual measure of a play for a program that looks one move
 * ahead: its score plus the value of the tiles it keeps (the "leave"),
 * since the leave is what the next draw builds on. The values below are
 * our own estimates in points (a blank is worth most, an S a lot, a Q or
 * a V costs), refined by the self-play benchmark (bench/bot_selfplay.c),
 * which is also what shows the levels ordered.
 */
#include "bot_play.h"

#include <string.h>

#include "rules.h"

static const char *const bot__names[BOT_NLEVELS] = {"beginner", "club", "expert"};

int bot_level_parse(const char *name)
{
    for (int i = 0; name && i < BOT_NLEVELS; i++)
        if (strcmp(name, bot__names[i]) == 0)
            return i;
    return -1;
}

const char *bot_level_name(int level)
{
    return level >= 0 && level < BOT_NLEVELS ? bot__names[level] : "?";
}

void bot_view_count_unseen(bot_view *v)
{
    for (int c = 0; c < 27; c++)
        v->unseen[c] = v->dist->count[c];
    for (int i = 0; i < SOLVER_SQUARES; i++) {
        uint8_t t = v->board.sq[i];
        if (!t)
            continue;
        int c = (t & SOLVER_BLANK) ? 0 : SOLVER_LETTER(t);
        if (v->unseen[c])
            v->unseen[c]--;
    }
    for (int c = 0; c < 27; c++)
        v->unseen[c] =
            v->unseen[c] > v->rack.counts[c] ? (uint8_t)(v->unseen[c] - v->rack.counts[c]) : 0;
}

void bot_view_of_seat(const game_state *g, int seat, uint64_t rng, bot_view *v)
{
    memset(v, 0, sizeof *v);
    v->lex = g->lex;
    v->dist = g->dist;
    v->board = g->board;
    v->rack = g->seats[seat].rack;
    v->bag_count = g->bag.n;
    v->rng = rng;
    bot_view_count_unseen(v);
}

static size_t bot__placements(const solver_move *m, solver_placement *out)
{
    size_t n = 0;
    for (int i = 0; i < m->len && n < SOLVER_RACK_MAX; i++) {
        uint8_t t = m->tiles[i];
        if (t & SOLVER_THROUGH)
            continue;
        out[n].row = m->row + (m->dir == SOLVER_DOWN ? i : 0);
        out[n].col = m->col + (m->dir == SOLVER_ACROSS ? i : 0);
        out[n].letter = (char)('A' + SOLVER_LETTER(t) - 1);
        out[n].is_blank = (t & SOLVER_BLANK) != 0;
        n++;
    }
    return n;
}

static void bot__exchange_tiles(const solver_move *m, char *out)
{
    int n = 0;
    for (int i = 0; i < m->len && n < SOLVER_RACK_MAX; i++)
        out[n++] = m->tiles[i] ? (char)('A' + m->tiles[i] - 1) : '?';
    out[n] = 0;
}

void bot_move_turn(const solver_move *m, int seat, bot_turn_buf *buf, game_turn *t)
{
    memset(t, 0, sizeof *t);
    t->seat = seat;
    t->kind = GAME_MOVE_PASS;
    if (m->kind == SOLVER_MOVE_PLAY) {
        t->kind = GAME_MOVE_PLAY;
        t->placed = buf->placed;
        t->nplaced = bot__placements(m, buf->placed);
    } else if (m->kind == SOLVER_MOVE_EXCHANGE) {
        t->kind = GAME_MOVE_EXCHANGE;
        bot__exchange_tiles(m, buf->tiles);
        t->tiles = buf->tiles;
    }
}

/* splitmix64: the beginner's choice, from the view's seed. */
static uint64_t bot__rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool bot__is_vowel(int c)
{
    return c == 1 || c == 5 || c == 9 || c == 15 || c == 21; /* A E I O U */
}

/* The expert's value of keeping each tile, [0] the blank. */
static const double bot__tile_value[27] = {
    25.0,                                    /* ? */
    1.0,  -2.0, 0.5,  0.5,  3.0, -2.0, -2.0, /* A B C D E F G */
    1.0,  -1.0, -2.0, -1.5, 0.0, 0.5,  0.5,  /* H I J K L M N */
    -1.5, -0.5, -7.0, 1.5,  8.0, 0.5,  -3.0, /* O P Q R S T U */
    -5.0, -3.0, 3.0,  -0.5, 2.0,             /* V W X Y Z */
};

/* The expert's leave value: tile values, a cost for every duplicate
 * (more for vowels: two Is rarely both fit), the vowel/consonant balance
 * (about 40% vowels is easiest to draw to) and a Q without a U. */
static double bot__leave_expert(const solver_rack *leave)
{
    double v = 0;
    int vowels = 0, n = 0;
    for (int c = 0; c < 27; c++) {
        int k = leave->counts[c];
        if (!k)
            continue;
        v += k * bot__tile_value[c];
        if (c && k > 1)
            v -= (k - 1) * (bot__is_vowel(c) ? 4.0 : 3.0);
        if (c && bot__is_vowel(c))
            vowels += k;
        if (c)
            n += k;
    }
    if (n > 0) {
        double off = vowels - 0.4 * n;
        v -= 1.5 * off * off;
    }
    if (leave->counts[17] && !leave->counts[21])
        v -= 3.0;
    return v;
}

/* The club player's rule of thumb: keep blanks and an S, do not keep a Q. */
static double bot__leave_club(const solver_rack *leave)
{
    return 10.0 * leave->counts[0] + 4.0 * (leave->counts[19] ? 1 : 0) - 5.0 * leave->counts[17];
}

static int bot__rack_value(const solver_rack *r, const solver_dist *d)
{
    int v = 0;
    for (int c = 1; c < 27; c++)
        v += r->counts[c] * d->value[c];
    return v;
}

static int bot__unseen_value(const bot_view *v)
{
    int s = 0;
    for (int c = 1; c < 27; c++)
        s += v->unseen[c] * v->dist->value[c];
    return s;
}

/* The expert's equity of leaving `leave` after scoring `score`. With the
 * bag empty the leave is not drawn to but counted: going out gains the
 * others' racks (all the unseen tiles, then), keeping tiles risks losing
 * their value. Before that the leave counts fully while the bag is deep
 * and less as it empties (there is less left to draw to it). */
static double bot__equity_expert(const bot_view *v, const solver_rack *leave, int score)
{
    if (v->bag_count == 0) {
        if (leave->n == 0)
            return score + 2.0 * bot__unseen_value(v);
        return score - 2.0 * bot__rack_value(leave, v->dist);
    }
    double w = v->bag_count >= 20 ? 1.0 : 0.3 + 0.7 * v->bag_count / 20.0;
    return score + w * bot__leave_expert(leave);
}

static void bot__pass(solver_move *out)
{
    memset(out, 0, sizeof *out);
    out->kind = SOLVER_MOVE_PASS;
}

/* The expert's best exchange when the bag allows one: every subset of the
 * rack (at most 127), valued by what it keeps. Returns its equity, or a
 * very low one when there is none. */
static double bot__best_exchange(const bot_view *v, solver_move *out)
{
    uint8_t tiles[SOLVER_RACK_MAX];
    int n = 0;
    double best = -1e9;
    if (v->bag_count < SOLVER_RACK_MAX)
        return best;
    for (int c = 0; c < 27; c++)
        for (int k = 0; k < v->rack.counts[c] && n < SOLVER_RACK_MAX; k++)
            tiles[n++] = (uint8_t)c;
    for (int mask = 1; mask < (1 << n); mask++) {
        solver_rack leave = v->rack;
        solver_move m;
        memset(&m, 0, sizeof m);
        m.kind = SOLVER_MOVE_EXCHANGE;
        for (int i = 0; i < n; i++)
            if (mask & (1 << i)) {
                m.tiles[m.len++] = tiles[i];
                leave.counts[tiles[i]]--;
                leave.n--;
            }
        double eq = bot__leave_expert(&leave);
        if (eq > best) {
            best = eq;
            *out = m;
        }
    }
    return best;
}

static void bot__beginner(const bot_view *v, bot_scratch *s, solver_move *out)
{
    size_t n = solver_gen(&v->board, v->lex, v->dist, &v->rack, NULL, s->moves, BOT_PLAY_CAP);
    if (n > BOT_PLAY_CAP)
        n = BOT_PLAY_CAP;
    if (n == 0) {
        bot__pass(out);
        return;
    }
    solver_moves_sort(s->moves, n);
    size_t lo = n * 35 / 100, hi = n * 75 / 100;
    if (hi <= lo)
        hi = lo + 1;
    uint64_t r = v->rng;
    *out = s->moves[lo + bot__rand(&r) % (hi - lo)];
}

/* The expert looks one reply ahead for its few best plays: on the board
 * each leaves, what could an opponent score with a rack drawn from the
 * tiles it cannot see? The same sampled racks for every candidate (so the
 * comparison is between boards, not between draws). The play with the best
 * equity minus the mean best reply wins. Only the unseen counts are used:
 * the real racks stay unknown to the bot. */
#define BOT__DEFEND_CANDIDATES 12
#define BOT__DEFEND_SAMPLES 8
static int bot__defend(const bot_view *v, bot_scratch *s, size_t n, int bi)
{
    int cand[BOT__DEFEND_CANDIDATES];
    double eq[BOT__DEFEND_CANDIDATES];
    int nc = 0;
    /* The best candidates by equity (a small insertion list). */
    for (size_t i = 0; i < n; i++) {
        solver_rack leave = v->rack;
        if (solver_rack_remove_move(&leave, &s->moves[i]) != 0)
            continue;
        double e = bot__equity_expert(v, &leave, s->moves[i].score);
        int k = nc < BOT__DEFEND_CANDIDATES ? nc++ : BOT__DEFEND_CANDIDATES;
        if (k == BOT__DEFEND_CANDIDATES) {
            if (e <= eq[k - 1])
                continue;
            k--;
        }
        while (k > 0 && eq[k - 1] < e) {
            eq[k] = eq[k - 1];
            cand[k] = cand[k - 1];
            k--;
        }
        eq[k] = e;
        cand[k] = (int)i;
    }
    if (nc < 2)
        return bi;
    /* Sampled opponent racks from the unseen pool. */
    uint8_t pool[128];
    int np = 0;
    for (int c = 0; c < 27; c++)
        for (int k = 0; k < v->unseen[c] && np < 128; k++)
            pool[np++] = (uint8_t)c;
    if (np == 0)
        return bi;
    solver_rack racks[BOT__DEFEND_SAMPLES];
    uint64_t r = v->rng ^ 0x5bd1e995u;
    for (int k = 0; k < BOT__DEFEND_SAMPLES; k++) {
        memset(&racks[k], 0, sizeof racks[k]);
        for (int t = 0; t < SOLVER_RACK_MAX && t < np; t++) {
            int j = t + (int)(bot__rand(&r) % (uint64_t)(np - t));
            uint8_t x = pool[j];
            pool[j] = pool[t];
            pool[t] = x;
            racks[k].counts[x]++;
            racks[k].n++;
        }
    }
    double best = -1e9;
    int pick = bi;
    solver_gen_opts o = {.top_n = 1};
    for (int c = 0; c < nc; c++) {
        solver_board b = v->board;
        solver_board_apply(&b, v->lex, &s->moves[cand[c]]);
        double reply = 0;
        for (int k = 0; k < BOT__DEFEND_SAMPLES; k++) {
            solver_move m;
            if (solver_gen(&b, v->lex, v->dist, &racks[k], &o, &m, 1) == 1)
                reply += m.score;
        }
        double val = eq[c] - reply / BOT__DEFEND_SAMPLES;
        if (val > best) {
            best = val;
            pick = cand[c];
        }
    }
    return pick;
}

/* club and expert: the best of the top plays by score under their equity. */
static void bot__best(const bot_view *v, int level, bot_scratch *s, solver_move *out)
{
    solver_gen_opts o = {.top_n = BOT_PLAY_CAP, .bag_count = v->bag_count};
    size_t n = solver_gen(&v->board, v->lex, v->dist, &v->rack, &o, s->moves, BOT_PLAY_CAP);
    double best = -1e9;
    int bi = -1;
    for (size_t i = 0; i < n; i++) {
        solver_rack leave = v->rack;
        if (solver_rack_remove_move(&leave, &s->moves[i]) != 0)
            continue;
        double eq = level == BOT_EXPERT ? bot__equity_expert(v, &leave, s->moves[i].score)
                                        : s->moves[i].score + bot__leave_club(&leave);
        if (eq > best) {
            best = eq;
            bi = (int)i;
        }
    }
    if (level == BOT_EXPERT && bi >= 0 && v->bag_count > 0)
        bi = bot__defend(v, s, n, bi);
    if (level == BOT_EXPERT) {
        solver_move ex;
        /* An exchange scores nothing: it wins only on a much better leave
         * than the best play's equity. */
        if (bot__best_exchange(v, &ex) > best) {
            *out = ex;
            return;
        }
    }
    if (bi >= 0) {
        *out = s->moves[bi];
        return;
    }
    /* No play: the club player trades in everything if it may. */
    if (v->bag_count >= SOLVER_RACK_MAX && v->rack.n > 0) {
        memset(out, 0, sizeof *out);
        out->kind = SOLVER_MOVE_EXCHANGE;
        for (int c = 0; c < 27; c++)
            for (int k = 0; k < v->rack.counts[c]; k++)
                out->tiles[out->len++] = (uint8_t)c;
        return;
    }
    bot__pass(out);
}

void bot_play_choose(const bot_view *v, int level, bot_scratch *s, solver_move *out)
{
    if (level == BOT_BEGINNER)
        bot__beginner(v, s, out);
    else
        bot__best(v, level, s, out);
}

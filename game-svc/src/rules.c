/*
 * rules.c — the game state machine (see rules.h for the rule choices).
 * Pure functions over plain values; the unit tests drive it directly.
 */
#include "rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int rules__fail(game_rules_error *err, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int rules__fail(game_rules_error *err, int code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    snprintf(err->reason, sizeof err->reason, "%s", reason);
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int game_rules_rack_value(const solver_rack *r, const solver_dist *dist)
{
    int v = 0;
    for (int c = 0; c < 27; c++)
        v += r->counts[c] * dist->value[c];
    return v;
}

int game_rules_seat_of(const game_state *g, int64_t account_id)
{
    if (account_id <= 0)
        return -1;
    for (int s = 0; s < g->nseats; s++)
        if (g->seats[s].account_id == account_id)
            return s;
    return -1;
}

int game_rules_init(game_state *g, const solver_lexicon *lex, const solver_dist *dist,
                    uint64_t seed, int nseats)
{
    if (nseats < GAME_MIN_SEATS || nseats > GAME_MAX_SEATS)
        return -1;
    memset(g, 0, sizeof *g);
    g->lex = lex;
    g->dist = dist;
    g->seed = seed;
    g->nseats = nseats;
    g->status = GAME_STATUS_ACTIVE;
    g->resigned_seat = -1;
    solver_board_init(&g->board, dist);
    solver_bag_init(&g->bag, dist, seed);
    for (int s = 0; s < nseats; s++)
        solver_bag_fill_rack(&g->bag, &g->seats[s].rack);
    return 0;
}

/* Winners among the seats that may win: highest score, ties included. */
static void rules__finish(game_state *g, int end_reason)
{
    g->status = GAME_STATUS_FINISHED;
    g->end_reason = end_reason;
    int best = 0;
    bool any = false;
    for (int s = 0; s < g->nseats; s++) {
        if (s == g->resigned_seat)
            continue;
        if (!any || g->seats[s].score > best)
            best = g->seats[s].score;
        any = true;
    }
    g->nwinners = 0;
    for (int s = 0; s < g->nseats; s++)
        if (s != g->resigned_seat && g->seats[s].score == best)
            g->winners[g->nwinners++] = s;
}

void game_rules_finish(game_state *g, int end_reason, int loser)
{
    if (loser >= 0)
        g->resigned_seat = loser;
    rules__finish(g, end_reason);
}

/* Letter code of a rack/exchange character ('?' blank = 0), or -1. */
static int rules__tile_code(char ch)
{
    if (ch == '?')
        return 0;
    if (ch >= 'a' && ch <= 'z')
        ch = (char)(ch - 'a' + 'A');
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A' + 1;
    return -1;
}

static int rules__play(const game_state *g, const game_turn *t, game_state *next, game_move *mv,
                       game_rules_error *err)
{
    solver_result res;
    game_seat *me = &next->seats[t->seat];
    if (game_rules_evaluate(g, t->seat, t->placed, t->nplaced, &res) != SOLVER_OK) {
        char reason[64];
        snprintf(reason, sizeof reason, "illegal_play:%s", solver_reason_token(res.reason));
        return rules__fail(err, GAME_RULES_ILLEGAL, reason, "%s", res.message);
    }
    solver_board_apply(&next->board, g->lex, &res.move);
    if (solver_rack_remove_move(&me->rack, &res.move) != 0) /* validated above: cannot happen */
        return rules__fail(err, GAME_RULES_ILLEGAL, "illegal_play:tile_not_on_rack",
                           "tiles are not on the rack");
    me->score += res.score;
    solver_bag_fill_rack(&next->bag, &me->rack);

    mv->kind = GAME_MOVE_PLAY;
    mv->score = res.score;
    mv->nplaced = 0;
    const solver_move *m = &res.move;
    for (int i = 0; i < m->len && mv->nplaced < SOLVER_RACK_MAX; i++) {
        uint8_t x = m->tiles[i];
        if (x & SOLVER_THROUGH)
            continue;
        solver_placement *p = &mv->placed[mv->nplaced++];
        p->row = m->row + (m->dir == SOLVER_DOWN ? i : 0);
        p->col = m->col + (m->dir == SOLVER_ACROSS ? i : 0);
        p->letter = (char)('A' + SOLVER_LETTER(x) - 1);
        p->is_blank = (x & SOLVER_BLANK) != 0;
    }
    mv->nwords = res.nwords < SOLVER_MAX_WORDS ? res.nwords : SOLVER_MAX_WORDS;
    for (int w = 0; w < mv->nwords; w++)
        snprintf(mv->words[w], sizeof mv->words[w], "%s", res.words[w]);
    snprintf(mv->notation, sizeof mv->notation, "%s", res.notation);
    next->scoreless = res.score == 0 ? g->scoreless + 1 : 0;

    if (me->rack.n == 0 && next->bag.n == 0) {
        int gained = 0;
        for (int s = 0; s < next->nseats; s++) {
            if (s == t->seat)
                continue;
            int v = game_rules_rack_value(&next->seats[s].rack, g->dist);
            next->seats[s].score -= v;
            next->rack_adjust[s] = -v;
            gained += v;
        }
        me->score += gained;
        next->rack_adjust[t->seat] = gained;
        rules__finish(next, GAME_END_OUT);
    }
    return GAME_RULES_OK;
}

static int rules__exchange(const game_state *g, const game_turn *t, game_state *next, game_move *mv,
                           game_rules_error *err)
{
    game_seat *me = &next->seats[t->seat];
    size_t n = t->tiles ? strlen(t->tiles) : 0;
    uint8_t codes[SOLVER_RACK_MAX];
    if (n == 0)
        return rules__fail(err, GAME_RULES_BAD_REQUEST, "bad_request", "no tiles to exchange");
    if (n > SOLVER_RACK_MAX)
        return rules__fail(err, GAME_RULES_ILLEGAL, "illegal_play:tile_not_on_rack",
                           "%zu tiles to exchange, a rack holds %d", n, SOLVER_RACK_MAX);
    if (g->bag.n < SOLVER_RACK_MAX)
        return rules__fail(err, GAME_RULES_BAG_TOO_SMALL, "bag_too_small",
                           "exchange needs %d tiles in the bag, it holds %d", SOLVER_RACK_MAX,
                           g->bag.n);
    solver_rack r = me->rack;
    for (size_t i = 0; i < n; i++) {
        int c = rules__tile_code(t->tiles[i]);
        if (c < 0)
            return rules__fail(err, GAME_RULES_ILLEGAL, "illegal_play:bad_letter",
                               "'%c' is not a tile", t->tiles[i]);
        if (r.counts[c] == 0)
            return rules__fail(err, GAME_RULES_ILLEGAL, "illegal_play:tile_not_on_rack",
                               "tile %c is not on the rack", c ? 'A' + c - 1 : '?');
        r.counts[c]--;
        r.n--;
        codes[i] = (uint8_t)c;
        mv->exchanged[i] = c ? (char)('A' + c - 1) : '?';
    }
    mv->exchanged[n] = 0;
    me->rack = r;
    solver_bag_fill_rack(&next->bag, &me->rack);
    solver_bag_return(&next->bag, codes, (int)n);
    mv->kind = GAME_MOVE_EXCHANGE;
    snprintf(mv->notation, sizeof mv->notation, "EXCH %zu", n);
    next->scoreless = g->scoreless + 1;
    return GAME_RULES_OK;
}

int game_rules_turn(const game_state *g, const game_turn *t, int64_t at_ms, game_state *next,
                    game_move *mv, game_rules_error *err)
{
    int rc;
    memset(err, 0, sizeof *err);
    if (g->status != GAME_STATUS_ACTIVE)
        return rules__fail(err, GAME_RULES_GAME_OVER, "game_over", "the game is over");
    if (t->seat < 0 || t->seat >= g->nseats)
        return rules__fail(err, GAME_RULES_BAD_REQUEST, "not_a_player", "no such seat");
    if (t->kind != GAME_MOVE_RESIGN && t->seat != g->to_move)
        return rules__fail(err, GAME_RULES_NOT_YOUR_TURN, "not_your_turn", "it is seat %d's turn",
                           g->to_move);

    *next = *g;
    memset(mv, 0, sizeof *mv);
    mv->seq = g->seq + 1;
    mv->seat = t->seat;
    mv->account_id = g->seats[t->seat].account_id;
    mv->at_ms = at_ms;

    switch (t->kind) {
    case GAME_MOVE_PLAY:
        if ((rc = rules__play(g, t, next, mv, err)) != GAME_RULES_OK)
            return rc;
        break;
    case GAME_MOVE_PASS:
        mv->kind = GAME_MOVE_PASS;
        snprintf(mv->notation, sizeof mv->notation, "PASS");
        next->scoreless = g->scoreless + 1;
        break;
    case GAME_MOVE_EXCHANGE:
        if ((rc = rules__exchange(g, t, next, mv, err)) != GAME_RULES_OK)
            return rc;
        break;
    case GAME_MOVE_RESIGN:
        mv->kind = GAME_MOVE_RESIGN;
        snprintf(mv->notation, sizeof mv->notation, "RESIGN");
        next->resigned_seat = t->seat;
        rules__finish(next, GAME_END_RESIGN);
        break;
    default:
        return rules__fail(err, GAME_RULES_BAD_REQUEST, "bad_request", "unknown move kind %d",
                           t->kind);
    }

    if (next->status == GAME_STATUS_ACTIVE && next->scoreless >= GAME_SCORELESS_LIMIT) {
        for (int s = 0; s < next->nseats; s++) {
            next->rack_adjust[s] = -game_rules_rack_value(&next->seats[s].rack, g->dist);
            next->seats[s].score += next->rack_adjust[s];
        }
        rules__finish(next, GAME_END_SCORELESS);
    }
    if (next->status == GAME_STATUS_ACTIVE)
        next->to_move = (g->to_move + 1) % g->nseats;
    next->seq = mv->seq;
    next->last = *mv;
    next->has_last = true;
    return GAME_RULES_OK;
}

solver_reason game_rules_evaluate(const game_state *g, int seat, const solver_placement *p,
                                  size_t n, solver_result *res)
{
    const solver_rack *rack = seat >= 0 && seat < g->nseats ? &g->seats[seat].rack : NULL;
    return solver_validate(&g->board, g->lex, g->dist, rack, p, n, res);
}

int game_rules_replay(game_state *g, const game_move *rec, game_rules_error *err)
{
    game_turn t = {
        .kind = rec->kind,
        .seat = rec->seat,
        .placed = rec->placed,
        .nplaced = (size_t)rec->nplaced,
        .tiles = rec->exchanged,
    };
    game_state next;
    game_move mv;
    int rc;
    if (rec->seq != g->seq + 1)
        return rules__fail(err, GAME_RULES_BAD_REQUEST, "bad_request",
                           "move seq %lld does not follow %lld", (long long)rec->seq,
                           (long long)g->seq);
    rc = game_rules_turn(g, &t, rec->at_ms, &next, &mv, err);
    if (rc != GAME_RULES_OK)
        return rc;
    if (rec->kind == GAME_MOVE_PLAY && mv.score != rec->score)
        return rules__fail(err, GAME_RULES_BAD_REQUEST, "bad_request",
                           "move %lld scores %d on replay, %d recorded", (long long)rec->seq,
                           mv.score, rec->score);
    next.last.account_id = rec->account_id;
    *g = next;
    return GAME_RULES_OK;
}

bool game_rules_same_move(const game_move *m, const game_turn *t)
{
    if (m->seat != t->seat || m->kind != t->kind)
        return false;
    if (m->kind == GAME_MOVE_PLAY) {
        /* The same set of (square, letter, blank) in any order; each
         * committed tile matches at most one requested one, so a request
         * naming one tile twice never passes for a different move. */
        unsigned used = 0;
        if ((size_t)m->nplaced != t->nplaced)
            return false;
        for (size_t i = 0; i < t->nplaced; i++) {
            const solver_placement *q = &t->placed[i];
            char ql = q->letter >= 'a' && q->letter <= 'z' ? (char)(q->letter - 32) : q->letter;
            bool found = false;
            for (int j = 0; j < m->nplaced && !found; j++) {
                found = !(used & (1u << j)) && m->placed[j].row == q->row &&
                        m->placed[j].col == q->col && m->placed[j].letter == ql &&
                        m->placed[j].is_blank == q->is_blank;
                if (found)
                    used |= 1u << j;
            }
            if (!found)
                return false;
        }
        return true;
    }
    if (m->kind == GAME_MOVE_EXCHANGE) {
        int want[27] = {0};
        size_t n = t->tiles ? strlen(t->tiles) : 0;
        if (n != strlen(m->exchanged))
            return false;
        for (size_t i = 0; i < n; i++) {
            int c = rules__tile_code(t->tiles[i]);
            if (c < 0)
                return false;
            want[c]++;
        }
        for (size_t i = 0; m->exchanged[i]; i++) {
            int c = rules__tile_code(m->exchanged[i]);
            if (c < 0 || --want[c] < 0)
                return false;
        }
        return true;
    }
    return true;
}

void game_rules_board_rows(const game_state *g, char rows[SOLVER_DIM][SOLVER_DIM + 1])
{
    for (int r = 0; r < SOLVER_DIM; r++) {
        for (int c = 0; c < SOLVER_DIM; c++) {
            uint8_t x = g->board.sq[r * SOLVER_DIM + c];
            if (!x)
                rows[r][c] = '.';
            else
                rows[r][c] = (char)(((x & SOLVER_BLANK) ? 'a' : 'A') + SOLVER_LETTER(x) - 1);
        }
        rows[r][SOLVER_DIM] = 0;
    }
}

/*
 * record.c — GetGameRecord's GCG and racks (see record.h). Line by line:
 * a play "RACK 8D W.RD +S TOTAL" (played-through letters as '.'), an
 * exchange "RACK -TILES +0 TOTAL", a pass "RACK - +0 TOTAL"; a resignation
 * has no GCG form and writes nothing. The end lines follow macondo's and
 * MAGPIE's readers: the player who went out "(RACKS) +N TOTAL", every seat
 * that lost its rack "RACK (RACK) -N TOTAL", so every seat's last total is
 * its final score.
 */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void game_record_free(game_record *r)
{
    free(r->racks);
    free(r->gcg);
    memset(r, 0, sizeof *r);
}

/* A GCG nick is one token: the handle when it is plain ASCII, else pN. */
static void record__nick(const char *handle, int seat, char *out, size_t len)
{
    size_t n = strlen(handle);
    bool plain = n > 0 && n < len && n <= 31;
    for (size_t i = 0; plain && i < n; i++) {
        char c = handle[i];
        plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
    }
    if (plain)
        snprintf(out, len, "%s", handle);
    else
        snprintf(out, len, "p%d", seat + 1);
}

/* The GCG line of one committed move, made from state g (before it). */
static int record__turn(const game_state *g, const game_move *m, solver_gcg_turn *t)
{
    memset(t, 0, sizeof *t);
    t->player = m->seat;
    t->rack = g->seats[m->seat].rack;
    t->cumulative = g->seats[m->seat].score + m->score;
    switch (m->kind) {
    case GAME_MOVE_PLAY: {
        solver_result res;
        if (game_rules_evaluate(g, m->seat, m->placed, (size_t)m->nplaced, &res) != SOLVER_OK)
            return -1;
        t->move = res.move;
        t->move.score = m->score;
        return 0;
    }
    case GAME_MOVE_EXCHANGE: {
        size_t k = strlen(m->exchanged);
        t->move.kind = SOLVER_MOVE_EXCHANGE;
        for (size_t i = 0; i < k && i < SOLVER_RACK_MAX; i++) {
            char c = m->exchanged[i];
            t->move.tiles[i] = c == '?' ? 0 : (uint8_t)((c | 0x20) - 'a' + 1);
        }
        t->move.len = t->move.ntiles = (uint8_t)(k < SOLVER_RACK_MAX ? k : SOLVER_RACK_MAX);
        return 0;
    }
    case GAME_MOVE_PASS:
        t->move.kind = SOLVER_MOVE_PASS;
        return 0;
    default:
        return 1; /* a resignation: no line */
    }
}

/* The end lines from the final state: the player out first, then every
 * seat that lost its rack, in seat order. */
static int record__end_lines(const game_state *f, solver_gcg *gcg)
{
    if (f->status != GAME_STATUS_FINISHED)
        return 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int s = 0; s < f->nseats; s++) {
            int adj = f->rack_adjust[s];
            if ((pass == 0) != (adj > 0) || adj == 0)
                continue;
            solver_gcg_turn t = {.player = s,
                                 .is_end_rack = true,
                                 .end_points = adj,
                                 .cumulative = f->seats[s].score};
            if (adj > 0) { /* gains every other rack */
                for (int o = 0; o < f->nseats; o++) {
                    if (o == s)
                        continue;
                    for (int c = 0; c < 27; c++)
                        t.rack.counts[c] += f->seats[o].rack.counts[c];
                    t.rack.n += f->seats[o].rack.n;
                }
            } else {
                t.rack = f->seats[s].rack;
            }
            if (solver_gcg_add(gcg, &t) != 0)
                return -1;
        }
    }
    return 0;
}

int game_record_build(const game_state *final, const game_move *moves, size_t n,
                      const char *lexicon, game_record *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    solver_gcg gcg;
    memset(&gcg, 0, sizeof gcg);
    game_state *g = malloc(sizeof *g);
    out->racks = calloc(n ? n : 1, sizeof *out->racks);
    if (!g || !out->racks) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (game_rules_init(g, final->lex, final->dist, final->seed, final->nseats) != 0) {
        snprintf(err, errlen, "%d seats", final->nseats);
        goto fail;
    }
    gcg.nplayers = final->nseats;
    for (int s = 0; s < final->nseats; s++) {
        g->seats[s].account_id = final->seats[s].account_id;
        memcpy(g->seats[s].handle, final->seats[s].handle, sizeof g->seats[s].handle);
        record__nick(final->seats[s].handle, s, gcg.player_nick[s], sizeof gcg.player_nick[s]);
        snprintf(gcg.player_name[s], sizeof gcg.player_name[s], "%s", final->seats[s].handle);
    }
    snprintf(gcg.lexicon, sizeof gcg.lexicon, "%s", lexicon ? lexicon : "");
    for (size_t i = 0; i < n; i++) {
        const game_move *m = &moves[i];
        game_rules_error e;
        solver_gcg_turn t;
        if (m->seat < 0 || m->seat >= g->nseats) {
            snprintf(err, errlen, "move %lld: seat %d", (long long)m->seq, m->seat);
            goto fail;
        }
        solver_rack_format(&g->seats[m->seat].rack, out->racks[i], sizeof out->racks[i]);
        int rc = record__turn(g, m, &t);
        if (rc < 0) {
            snprintf(err, errlen, "move %lld does not replay", (long long)m->seq);
            goto fail;
        }
        if (rc == 0 && solver_gcg_add(&gcg, &t) != 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (game_rules_replay(g, m, &e) != GAME_RULES_OK) {
            snprintf(err, errlen, "move %lld: %s", (long long)m->seq, e.message);
            goto fail;
        }
    }
    out->nracks = n;
    if (record__end_lines(final, &gcg) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    size_t need = solver_gcg_format(&gcg, NULL, 0);
    out->gcg = malloc(need + 1);
    if (!out->gcg) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    solver_gcg_format(&gcg, out->gcg, need + 1);
    solver_gcg_free(&gcg);
    free(g);
    return 0;
fail:
    solver_gcg_free(&gcg);
    free(g);
    game_record_free(out);
    return -1;
}

/* Static self-play: each side plays its highest-scoring move (no leave
 * evaluation); with no play it exchanges all if the bag allows, else passes. */
#include "cli.h"

#include <string.h>

static int rack_value(const solver_rack *r, const solver_dist *d)
{
    int v = 0;
    for (int c = 0; c < 27; c++)
        v += r->counts[c] * d->value[c];
    return v;
}

int cli_selfplay(const solver_lexicon *lex, uint64_t seed, solver_move *buf, size_t cap,
                 solver_gcg *gcg, cli_snapshot_fn snap, void *ud, int final_scores[2])
{
    const solver_dist *d = solver_dist_english();
    solver_board b;
    solver_board_init(&b, d);
    solver_bag bag;
    solver_bag_init(&bag, d, seed);
    solver_rack racks[2];
    memset(racks, 0, sizeof racks);
    solver_bag_fill_rack(&bag, &racks[0]);
    solver_bag_fill_rack(&bag, &racks[1]);
    int scores[2] = {0, 0}, zero = 0, turn = 0, p = 0;
    solver_gen_opts opts = {.top_n = 1};
    for (;; turn++, p ^= 1) {
        if (snap)
            snap(ud, &b, &racks[p], bag.n, turn);
        solver_gcg_turn t;
        memset(&t, 0, sizeof t);
        t.player = p;
        t.rack = racks[p];
        size_t n = solver_gen(&b, lex, d, &racks[p], &opts, buf, cap);
        if (n > 0) {
            t.move = buf[0];
            solver_board_apply(&b, lex, &buf[0]);
            solver_rack_remove_move(&racks[p], &buf[0]);
            scores[p] += buf[0].score;
            zero = buf[0].score ? 0 : zero + 1;
            solver_bag_fill_rack(&bag, &racks[p]);
        } else if (bag.n >= SOLVER_RACK_MAX) {
            solver_move *m = &t.move;
            m->kind = SOLVER_MOVE_EXCHANGE;
            uint8_t old[SOLVER_RACK_MAX];
            int k = 0;
            for (int c = 0; c < 27; c++)
                for (int j = 0; j < racks[p].counts[c]; j++)
                    old[k++] = (uint8_t)c;
            memcpy(m->tiles, old, (size_t)k);
            m->len = m->ntiles = (uint8_t)k;
            memset(&racks[p], 0, sizeof racks[p]);
            solver_bag_fill_rack(&bag, &racks[p]);
            solver_bag_return(&bag, old, k);
            zero++;
        } else {
            t.move.kind = SOLVER_MOVE_PASS;
            zero++;
        }
        t.cumulative = scores[p];
        if (gcg)
            solver_gcg_add(gcg, &t);
        if (racks[p].n == 0 && bag.n == 0) { /* went out */
            int v = rack_value(&racks[p ^ 1], d);
            scores[p] += v;
            scores[p ^ 1] -= v;
            if (gcg) {
                /* Both seats' lines (macondo/MAGPIE conventions): the
                 * player out gains the other rack, the other loses it, so
                 * each seat's last total is its final score. */
                solver_gcg_turn e = {.player = p,
                                     .rack = racks[p ^ 1],
                                     .is_end_rack = true,
                                     .end_points = v,
                                     .cumulative = scores[p]};
                solver_gcg_add(gcg, &e);
                solver_gcg_turn o = {.player = p ^ 1,
                                     .rack = racks[p ^ 1],
                                     .is_end_rack = true,
                                     .end_points = -v,
                                     .cumulative = scores[p ^ 1]};
                solver_gcg_add(gcg, &o);
            }
            turn++;
            break;
        }
        if (zero >= 6) {
            for (int q = 0; q < 2; q++) {
                int v = rack_value(&racks[q], d);
                scores[q] -= v;
                if (gcg) {
                    solver_gcg_turn e = {.player = q,
                                         .rack = racks[q],
                                         .is_end_rack = true,
                                         .end_points = -v,
                                         .cumulative = scores[q]};
                    solver_gcg_add(gcg, &e);
                }
            }
            turn++;
            break;
        }
    }
    if (final_scores) {
        final_scores[0] = scores[0];
        final_scores[1] = scores[1];
    }
    return turn;
}

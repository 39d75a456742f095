/*
 * view.c — protobuf messages built from the cached game, in a call's arena.
 * Only the caller's own rack is ever written (GameState.my_rack); exchanged
 * tiles only in the mover's own view.
 */
#include <string.h>

#include "game_svc.h"

Scrabble__V1__Move *game_view_move(rpc_arena *a, const game_move *m, bool reveal_exchange)
{
    Scrabble__V1__Move *mv = RPC_ARENA_MSG(a, Scrabble__V1__Move, scrabble__v1__move__init);
    if (!mv)
        return NULL;
    mv->seq = m->seq;
    mv->seat = m->seat;
    mv->kind = (Scrabble__V1__MoveKind)m->kind;
    mv->score = m->score;
    mv->at_ms = m->at_ms;
    mv->account_id = m->account_id;
    mv->notation = rpc_arena_strdup(a, m->notation);
    if (m->kind == GAME_MOVE_EXCHANGE) {
        mv->exchanged_count = (int32_t)strlen(m->exchanged);
        if (reveal_exchange)
            mv->exchanged_tiles = rpc_arena_strdup(a, m->exchanged);
    }
    if (m->nplaced > 0) {
        mv->placements = rpc_arena_alloc(a, (size_t)m->nplaced * sizeof *mv->placements);
        Scrabble__V1__Placement *ps = rpc_arena_alloc(a, (size_t)m->nplaced * sizeof *ps);
        if (!mv->placements || !ps)
            return NULL;
        for (int i = 0; i < m->nplaced; i++) {
            scrabble__v1__placement__init(&ps[i]);
            ps[i].row = m->placed[i].row;
            ps[i].col = m->placed[i].col;
            ps[i].letter = rpc_arena_strndup(a, &m->placed[i].letter, 1);
            ps[i].blank = m->placed[i].is_blank;
            mv->placements[i] = &ps[i];
        }
        mv->n_placements = (size_t)m->nplaced;
    }
    if (m->nwords > 0) {
        mv->words = rpc_arena_alloc(a, (size_t)m->nwords * sizeof(char *));
        if (!mv->words)
            return NULL;
        for (int w = 0; w < m->nwords; w++)
            mv->words[w] = rpc_arena_strdup(a, m->words[w]);
        mv->n_words = (size_t)m->nwords;
    }
    return mv;
}

Scrabble__V1__Seat **game_view_seats(rpc_arena *a, const game_state *g)
{
    Scrabble__V1__Seat **out = rpc_arena_alloc(a, (size_t)g->nseats * sizeof *out);
    Scrabble__V1__Seat *seats = rpc_arena_alloc(a, (size_t)g->nseats * sizeof *seats);
    if (!out || !seats)
        return NULL;
    for (int s = 0; s < g->nseats; s++) {
        scrabble__v1__seat__init(&seats[s]);
        seats[s].seat = s;
        seats[s].account_id = g->seats[s].account_id;
        seats[s].handle = rpc_arena_strdup(a, g->seats[s].handle);
        seats[s].score = g->seats[s].score;
        seats[s].rack_count = g->seats[s].rack.n;
        /* Over: every rack is public, with what it did to the score. */
        if (g->status == GAME_STATUS_FINISHED) {
            char rack[16];
            solver_rack_format(&g->seats[s].rack, rack, sizeof rack);
            seats[s].final_rack = rpc_arena_strdup(a, rack);
            seats[s].rack_adjustment = g->rack_adjust[s];
        }
        out[s] = &seats[s];
    }
    return out;
}

Scrabble__V1__GameState *game_view_state(rpc_arena *a, const game_entry *e, int my_seat)
{
    const game_state *g = &e->g;
    Scrabble__V1__GameState *st =
        RPC_ARENA_MSG(a, Scrabble__V1__GameState, scrabble__v1__game_state__init);
    if (!st)
        return NULL;
    st->game_id = e->game_id;
    st->status = (Scrabble__V1__GameStatus)g->status;
    char rows[SOLVER_DIM][SOLVER_DIM + 1];
    game_rules_board_rows(g, rows);
    st->board = rpc_arena_alloc(a, SOLVER_DIM * sizeof(char *));
    if (!st->board)
        return NULL;
    for (int r = 0; r < SOLVER_DIM; r++)
        st->board[r] = rpc_arena_strdup(a, rows[r]);
    st->n_board = SOLVER_DIM;
    st->seats = game_view_seats(a, g);
    st->n_seats = (size_t)g->nseats;
    st->to_move = g->to_move;
    st->seq = g->seq;
    st->bag_count = g->bag.n;
    st->my_seat = my_seat;
    if (my_seat >= 0 && my_seat < g->nseats) {
        char rack[16];
        solver_rack_format(&g->seats[my_seat].rack, rack, sizeof rack);
        st->my_rack = rpc_arena_strdup(a, rack);
    }
    st->scoreless_turns = g->scoreless;
    st->end_reason = (Scrabble__V1__EndReason)g->end_reason;
    if (g->nwinners > 0) {
        st->winners = rpc_arena_alloc(a, (size_t)g->nwinners * sizeof(int32_t));
        for (int i = 0; st->winners && i < g->nwinners; i++)
            st->winners[i] = g->winners[i];
        st->n_winners = st->winners ? (size_t)g->nwinners : 0;
    }
    st->lexicon = rpc_arena_strdup(a, e->lexicon);
    if (g->has_last)
        st->last_move = game_view_move(a, &g->last, g->last.seat == my_seat);
    st->created_at_ms = e->created_at_ms;
    st->updated_at_ms = e->updated_at_ms;
    st->rated = e->rated;
    st->public_game = e->public_game;
    return st;
}

Scrabble__V1__GameClock *game_view_clock_record(rpc_arena *a, const game_clock *c, int nseats)
{
    Scrabble__V1__GameClock *m =
        RPC_ARENA_MSG(a, Scrabble__V1__GameClock, scrabble__v1__game_clock__init);
    if (!m || !(m->remaining_ms = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof(int64_t))))
        return NULL;
    for (int s = 0; s < nseats && s < GAME_MAX_SEATS; s++)
        m->remaining_ms[s] = c->remaining_ms[s];
    m->n_remaining_ms = c->tc.kind == GAME_TC_REALTIME ? (size_t)nseats : 0;
    m->turn_started_ms = c->turn_started_ms;
    m->deadline_ms = c->deadline_ms;
    m->deadline_reason = (Scrabble__V1__EndReason)c->deadline_reason;
    m->warning_ms = c->warning_ms;
    return m;
}

void game_view_time(rpc_arena *a, Scrabble__V1__GameState *st, const game_entry *e, int64_t now)
{
    const game_clock *c = &e->clock;
    Scrabble__V1__TimeControl *tc =
        RPC_ARENA_MSG(a, Scrabble__V1__TimeControl, scrabble__v1__time_control__init);
    if (tc) {
        tc->kind = (Scrabble__V1__TimeControlKind)(c->tc.kind ? c->tc.kind : GAME_TC_UNTIMED);
        tc->days_per_move = c->tc.days_per_move;
        tc->initial_seconds = c->tc.initial_s;
        tc->increment_seconds = c->tc.increment_s;
        tc->max_overtime_minutes = c->tc.max_overtime_min;
        st->time_control = tc;
    }
    bool active = e->g.status == GAME_STATUS_ACTIVE;
    int64_t *ms = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof *ms);
    if (ms) {
        st->clock_ms = ms;
        st->n_clock_ms = (size_t)game_clock_view(c, e->g.nseats, e->g.to_move, active, now, ms);
    }
    st->deadline_ms = active ? c->deadline_ms : 0;
}

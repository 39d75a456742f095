/*
 * turn.c — the turn path (turn.h): a turn's checks and run step, the
 * idempotent retry of a turn already made, the CommitMove that carries the
 * move with its events, and what follows the store's answer.
 */
#include "turn.h"

#include <stdio.h>
#include <string.h>

#include "rpc/log.h"

int game_turn_init(game_op *op, const game_turn_request *t, rpc_status *st)
{
    if (t->kind == GAME_MOVE_PLAY && t->nplaced > SOLVER_RACK_MAX) {
        rpc_status_set(st, GRPC_STATUS_INVALID_ARGUMENT, "too_many_placements",
                       "%zu placements; at most %d", t->nplaced, SOLVER_RACK_MAX);
        return -1;
    }
    if (t->kind == GAME_MOVE_EXCHANGE) {
        if (!t->tiles || !t->tiles[0]) {
            rpc_status_set(st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "no tiles to exchange");
            return -1;
        }
        if (strlen(t->tiles) > SOLVER_RACK_MAX) {
            rpc_status_set(st, GRPC_STATUS_INVALID_ARGUMENT, "illegal_play:tile_not_on_rack",
                           "%zu tiles to exchange, a rack holds %d", strlen(t->tiles),
                           SOLVER_RACK_MAX);
            return -1;
        }
    }
    op->run = game_turn_run;
    op->is_turn = true;
    op->expected_seq = t->expected_seq;
    op->turn.kind = t->kind;
    op->turn.placed = op->placed;
    op->turn.tiles = op->tiles;
    if (t->kind == GAME_MOVE_PLAY && t->nplaced > 0) {
        memcpy(op->placed, t->placed, t->nplaced * sizeof *op->placed);
        op->turn.nplaced = t->nplaced;
    }
    if (t->kind == GAME_MOVE_EXCHANGE)
        snprintf(op->tiles, sizeof op->tiles, "%s", t->tiles);
    return 0;
}

int game_turn_submit(game_svc *svc, const game_turn_request *t, game_op_done_fn done, void *arg)
{
    rpc_arena *a = rpc_arena_create(0);
    game_op *op = a ? rpc_arena_calloc(a, 1, sizeof *op) : NULL;
    rpc_status st;
    if (!op) {
        if (a)
            rpc_arena_destroy(a);
        return -1;
    }
    op->arena = a;
    op->done = done;
    op->done_arg = arg;
    op->account_id = t->account_id;
    op->seat = -1;
    if (game_turn_init(op, t, &st) != 0)
        game_op_fail_status(op, &st);
    else
        game_dispatch(svc, t->game_id, op);
    return 0;
}

/* What follows a committed move m (e->mu held): the mover's draft is
 * dropped. Run by the attempt that committed m, and again by a retry of m
 * while m is the last move (turn__retry): a delete is harmless twice.
 * Its events need nothing here: they were committed with m. */
static void turn__after_commit(game_svc *svc, game_entry *e, const game_move *m)
{
    game_drafts_delete(svc->drafts, e->game_id, m->account_id);
    game_bots_after_commit(svc, e);
}

/* Answers op with move m and the mover's view of e (TurnReply); when the
 * arena cannot hold them, RESOURCE_EXHAUSTED out_of_memory instead of a
 * reply with a field missing. The op is gone after this. */
static void turn__reply(game_op *op, const game_entry *e, const game_move *m)
{
    rpc_arena *a = game_op_arena(op);
    Scrabble__V1__TurnReply *r =
        RPC_ARENA_MSG(a, Scrabble__V1__TurnReply, scrabble__v1__turn_reply__init);
    if (r) {
        r->move = game_view_move(a, m, true);
        r->state = game_view_state(a, e, op->seat);
    }
    if (!r || !r->move || !r->state) {
        game_op_fail(op, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    /* The time control only: a repeat of this turn must get this very
     * reply (docs/API.md, Retries), and running clocks never repeat. */
    game_view_time(a, r->state, e, 0);
    r->state->n_clock_ms = 0;
    r->state->deadline_ms = 0;
    game_op_reply(op, &r->base);
}

static void turn__commit_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);

static Scrabble__V1__CommitMoveRequest *turn__commit_request(rpc_arena *a, const game_entry *e,
                                                             const game_op *op)
{
    const game_state *n = &op->pending->next_state;
    Scrabble__V1__CommitMoveRequest *req =
        RPC_ARENA_MSG(a, Scrabble__V1__CommitMoveRequest, scrabble__v1__commit_move_request__init);
    int32_t *scores = rpc_arena_alloc(a, (size_t)n->nseats * sizeof *scores);
    if (!req || !scores)
        return NULL;
    req->game_id = e->game_id;
    req->move = game_view_move(a, &op->pending->move, true);
    if (!req->move)
        return NULL;
    req->to_move = n->to_move;
    for (int s = 0; s < n->nseats; s++)
        scores[s] = n->seats[s].score;
    req->scores = scores;
    req->n_scores = (size_t)n->nseats;
    if (!(req->clock = game_view_clock_record(a, &op->pending->clock, n->nseats)))
        return NULL;
    game_event_list ev = {0};
    if (game_move_events(a, e->game_id, n, &op->pending->clock, game_clock_now(op->svc),
                         &op->pending->move, &ev) != 0)
        return NULL;
    req->events = ev.v;
    req->n_events = ev.n;
    if (n->status == GAME_STATUS_FINISHED) {
        Scrabble__V1__GameFinish *f =
            RPC_ARENA_MSG(a, Scrabble__V1__GameFinish, scrabble__v1__game_finish__init);
        int32_t *w = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof *w);
        if (!f || !w)
            return NULL;
        f->end_reason = (Scrabble__V1__EndReason)n->end_reason;
        f->final_scores = scores;
        f->n_final_scores = (size_t)n->nseats;
        for (int i = 0; i < n->nwinners; i++)
            w[i] = n->winners[i];
        f->winners = w;
        f->n_winners = (size_t)n->nwinners;
        req->finish = f;
    }
    return req;
}

static grpc_status_code turn__rules_code(int rc)
{
    switch (rc) {
    case GAME_RULES_ILLEGAL:
    case GAME_RULES_BAD_REQUEST:
        return GRPC_STATUS_INVALID_ARGUMENT;
    default:
        return GRPC_STATUS_FAILED_PRECONDITION;
    }
}

/* The committed move with this seq, from the history (which a cold load
 * rebuilds from the store's moves table, so it holds every move of the game
 * whatever this process saw), or NULL when the history lacks it (after an
 * out-of-memory on append; the last move is then still in e->g.last). */
static const game_move *turn__move_at(const game_entry *e, int64_t seq)
{
    if (seq >= 1 && (size_t)seq <= e->nmoves && e->moves[seq - 1].seq == seq)
        return &e->moves[seq - 1];
    if (e->g.has_last && e->g.last.seq == seq)
        return &e->g.last;
    return NULL;
}

/* The game right after move `seq` (1..e->g.seq), as the turn that made it
 * saw it: replayed from the seed through the history, since the rules are a
 * pure function of (seed, moves). Returns 0, or -1 with st set. */
static int turn__state_after(const game_entry *e, int64_t seq, game_state *out, rpc_status *st)
{
    game_rules_error err;
    if (seq == e->g.seq) {
        *out = e->g;
        return 0;
    }
    if (game_rules_init(out, e->g.lex, e->g.dist, e->g.seed, e->g.nseats) != 0)
        goto fail;
    for (int s = 0; s < e->g.nseats; s++) {
        out->seats[s].account_id = e->g.seats[s].account_id;
        memcpy(out->seats[s].handle, e->g.seats[s].handle, sizeof out->seats[s].handle);
    }
    for (int64_t q = 1; q <= seq; q++) {
        const game_move *m = turn__move_at(e, q);
        if (!m || game_rules_replay(out, m, &err) != GAME_RULES_OK)
            goto fail;
    }
    return 0;
fail:
    rpc_status_set(st, GRPC_STATUS_INTERNAL, "replay_failed",
                   "game %lld: the state after move %lld cannot be rebuilt", (long long)e->game_id,
                   (long long)seq);
    return -1;
}

/* A turn at a seq already taken (op->expected_seq < e->g.seq). When the move
 * that took it is this request's (same seat, same content: see
 * game_rules_same_move), this is a retry of an acknowledged or possibly
 * acknowledged turn: it gets the original reply, the move and the state
 * right after it as the caller saw it then, however many moves came since
 * and whether or not the game has ended. Its events need nothing: they
 * were committed with the move (event_log.h), whatever became of the
 * attempt that made it. Any other request at a taken seq is stale_seq, the
 * game over or not. */
static int turn__retry(game_svc *svc, game_entry *e, game_op *op)
{
    int64_t seq = op->expected_seq + 1;
    const game_move *m = turn__move_at(e, seq);
    rpc_arena *a = game_op_arena(op);
    rpc_status st;
    if (!m || !game_rules_same_move(m, &op->turn)) {
        game_op_fail(op, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq",
                     "expected_seq %lld is taken (the game is at seq %lld) by another move",
                     (long long)op->expected_seq, (long long)e->g.seq);
        return GAME_OP_DONE;
    }
    if (seq == e->g.seq) {
        log_info("turn_retry", "game=%lld seq=%lld last=1", (long long)e->game_id, (long long)seq);
        turn__after_commit(svc, e, m);
        turn__reply(op, e, m);
        return GAME_OP_DONE;
    }
    /* The original reply showed the game as it was then: rebuild that in a
     * throw-away entry in the call's arena (game_view_state reads only the
     * game, its id, lexicon and times). */
    game_entry *then = rpc_arena_alloc(a, sizeof *then);
    if (!then) {
        game_op_fail(op, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    memset(then, 0, sizeof *then);
    if (turn__state_after(e, seq, &then->g, &st) != 0) {
        log_error("turn_retry_failed", "game=%lld seq=%lld msg=\"%s\"", (long long)e->game_id,
                  (long long)seq, st.message);
        game_op_fail_status(op, &st);
        return GAME_OP_DONE;
    }
    then->game_id = e->game_id;
    then->clock.tc = e->clock.tc;
    memcpy(then->lexicon, e->lexicon, sizeof then->lexicon);
    then->invitation_id = e->invitation_id;
    then->rated = e->rated;
    then->public_game = e->public_game;
    then->created_at_ms = e->created_at_ms;
    then->updated_at_ms = m->at_ms;
    log_info("turn_retry", "game=%lld seq=%lld last=0 at_seq=%lld", (long long)e->game_id,
             (long long)seq, (long long)e->g.seq);
    turn__reply(op, then, m);
    return GAME_OP_DONE;
}

int game_turn_run(game_svc *svc, game_entry *e, game_op *op)
{
    const game_state *g = &e->g;
    game_rules_error err;
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    op->turn.seat = op->seat;
    if (op->expected_seq >= 0 && op->expected_seq < g->seq)
        return turn__retry(svc, e, op);
    if (op->expected_seq != g->seq) {
        if (g->status != GAME_STATUS_ACTIVE) {
            game_op_fail(op, GRPC_STATUS_FAILED_PRECONDITION, "game_over", "the game is over");
            return GAME_OP_DONE;
        }
        game_op_fail(op, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq",
                     "expected_seq %lld, the game is at seq %lld", (long long)op->expected_seq,
                     (long long)g->seq);
        return GAME_OP_DONE;
    }
    /* The seat to move is out of time: the game ends on time instead, and
     * this turn gets game_over once the store has recorded that. */
    int64_t now = game_clock_now(svc);
    if (g->status == GAME_STATUS_ACTIVE && !op->timeout_tried && game_clock_expired(&e->clock, now))
        return game_timeout_run(svc, e, op);
    op->pending = rpc_arena_alloc(game_op_arena(op), sizeof *op->pending);
    if (!op->pending) {
        game_op_fail(op, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    int rc = game_rules_turn(g, &op->turn, game_now_ms(), &op->pending->next_state,
                             &op->pending->move, &err);
    if (rc != GAME_RULES_OK) {
        game_op_fail(op, turn__rules_code(rc), err.reason, "%s", err.message);
        return GAME_OP_DONE;
    }
    /* The clock after the turn (clock.h): the elapsed time charged to the
     * seat to move, the increment to the mover, overtime penalties settled
     * when the game ends, the next turn's deadline. A game whose clock
     * never started (made before time controls) starts it now. */
    game_clock *ck = &op->pending->clock;
    game_state *n = &op->pending->next_state;
    int64_t abandon_ms = svc->cfg.abandon_after_us / 1000;
    *ck = e->clock;
    if (ck->turn_started_ms <= 0)
        game_clock_start(ck, g->nseats, g->to_move, now, abandon_ms);
    game_clock_charge(ck, g->to_move, op->seat, now);
    if (n->status != GAME_STATUS_ACTIVE) {
        bool penalised = false;
        for (int s = 0; s < n->nseats; s++) {
            int p = game_clock_penalty(ck, s);
            n->seats[s].score -= p;
            penalised |= p != 0;
        }
        if (penalised)
            game_rules_finish(n, n->end_reason, -1);
    }
    game_clock_next_turn(ck, n->to_move, n->status == GAME_STATUS_ACTIVE, now, abandon_ms);
    Scrabble__V1__CommitMoveRequest *req = turn__commit_request(game_op_arena(op), e, op);
    if (!req) {
        game_op_fail(op, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    e->state = GAME_ENTRY_COMMITTING;
    if (game_store_call(&svc->store, op->call, GAME_STORE_COMMIT_MOVE, &req->base, NULL,
                        turn__commit_done, op) != RPC_OK) {
        e->state = GAME_ENTRY_READY;
        game_op_fail(op, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed to start");
        return GAME_OP_DONE;
    }
    return GAME_OP_PENDING;
}

static void turn__commit_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    game_entry *e = op->entry;
    game_svc *svc = op->svc;
    bool applied = st->code == GRPC_STATUS_OK;

    pthread_mutex_lock(&e->mu);
    if (applied) {
        /* The store's commit time is the move's time, as every later load
         * reads it back: so a retry's reply, answered from a reloaded
         * history, is the same as this one to the millisecond. */
        const Scrabble__V1__CommitMoveReply *cr = (const Scrabble__V1__CommitMoveReply *)reply;
        if (cr && cr->move && cr->move->at_ms > 0) {
            op->pending->move.at_ms = cr->move->at_ms;
            op->pending->next_state.last.at_ms = cr->move->at_ms;
        }
        e->g = op->pending->next_state;
        e->clock = op->pending->clock;
        e->updated_at_ms = op->pending->move.at_ms;
        if (game_cache_append_move(svc->cache, e, &op->pending->move) != 0)
            log_error("history_oom", "game=%lld seq=%lld", (long long)e->game_id,
                      (long long)op->pending->move.seq);
        if (svc->m_turns)
            metric_add(svc->m_turns, 1);
        turn__after_commit(svc, e, &op->pending->move);
        if (e->g.status == GAME_STATUS_FINISHED)
            game_cache_demote(svc->cache, e);
        turn__reply(op, e, &op->pending->move);
    } else {
        /* Whether the move was committed is unknown (or the store is ahead
         * of us: stale_seq); game_write_done has the entry reloaded before
         * the next turn. The caller gets the store's status as it is. */
        log_warn("commit_failed", "game=%lld seq=%lld code=%s reason=%s", (long long)e->game_id,
                 (long long)op->pending->move.seq, rpc_status_code_name(st->code), st->reason);
        game_op_fail_status(op, st);
    }
    game_write_done(svc, e, applied); /* op is gone: answered above */
}

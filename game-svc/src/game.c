/*
 * game.c — how operations meet the cache: dispatch, cold load + replay from
 * store-svc, the state of an entry across a store write, an op's outcome
 * (its call's, or an in-process caller's), and the events of a move.
 *
 * Reference discipline: every op holds one reference on its entry from
 * dispatch until it is finished (or handed to a post step, which releases it
 * once it has started). References are released only after e->mu is dropped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "game_svc.h"
#include "rpc/log.h"

int64_t game_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t game_clock_now(game_svc *svc)
{
    return game_now_ms() + atomic_load_explicit(&svc->clock_offset_ms, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* An operation's outcome and its caller                               */

rpc_arena *game_op_arena(game_op *op)
{
    return op->call ? rpc_call_arena(op->call) : op->arena;
}

/* An op without a call (a poller's, or an in-process caller's with a done
 * function) ends by freeing its own arena, and the op with it. */
static void game__op_end(game_op *op, const rpc_status *st, const ProtobufCMessage *reply)
{
    if (op->done)
        op->done(op->done_arg, st, reply);
    rpc_arena_destroy(op->arena);
}

void game_op_reply(game_op *op, const ProtobufCMessage *reply)
{
    rpc_status ok;
    if (op->call) {
        rpc_call_reply(op->call, reply);
        return;
    }
    rpc_status_set(&ok, GRPC_STATUS_OK, NULL, NULL);
    game__op_end(op, &ok, reply);
}

void game_op_fail_status(game_op *op, const rpc_status *st)
{
    if (op->call)
        rpc_call_fail_status(op->call, st);
    else
        game__op_end(op, st, NULL);
}

void game_op_fail(game_op *op, grpc_status_code code, const char *reason, const char *fmt, ...)
{
    rpc_status st;
    va_list ap;
    va_start(ap, fmt);
    rpc_status_vset(&st, code, reason, fmt, ap);
    va_end(ap);
    game_op_fail_status(op, &st);
}

bool game_op_seated(const game_entry *e, game_op *op)
{
    op->seat = game_rules_seat_of(&e->g, op->account_id);
    if (op->seat >= 0)
        return true;
    game_op_fail(op, GRPC_STATUS_PERMISSION_DENIED, "not_a_player",
                 "account %lld has no seat in game %lld", (long long)op->account_id,
                 (long long)e->game_id);
    return false;
}

/* ------------------------------------------------------------------ */
/* Wait queue and draining                                             */

/* Every op that enters or leaves a wait queue passes here, so
 * game_ops_waiting is the sum of the queues' lengths. */
void game_ops_waiting_add(game_svc *svc, int64_t delta)
{
    if (svc->m_ops_waiting)
        metric_add(svc->m_ops_waiting, delta);
}

static void game__enqueue(game_entry *e, game_op *op)
{
    game_ops_waiting_add(op->svc, 1);
    op->next = NULL;
    if (e->wait_tail)
        e->wait_tail->next = op;
    else
        e->wait_head = op;
    e->wait_tail = op;
}

static game_op *game__dequeue(game_entry *e)
{
    game_op *op = e->wait_head;
    if (op) {
        game_ops_waiting_add(op->svc, -1);
        e->wait_head = op->next;
        if (!e->wait_head)
            e->wait_tail = NULL;
        op->next = NULL;
    }
    return op;
}

/* What to do once e->mu is dropped. */
typedef struct game__after {
    game_op *posts; /* ops whose post step runs next (each holds a ref) */
    int releases;   /* refs of finished ops to drop */
} game__after;

static void game__run_one(game_svc *svc, game_entry *e, game_op *op, game__after *af)
{
    int r = op->run(svc, e, op);
    if (r == GAME_OP_POST) {
        op->next = af->posts;
        af->posts = op;
    } else if (r == GAME_OP_DONE) {
        af->releases++;
    }
}

/* Runs waiting ops in order while the entry is READY (e->mu held). */
static void game__drain(game_svc *svc, game_entry *e, game__after *af)
{
    while (e->state == GAME_ENTRY_READY && e->wait_head)
        game__run_one(svc, e, game__dequeue(e), af);
}

/* After unlocking: post steps, then reference drops. e must not be touched
 * after the last release. */
static void game__finish_after(game_svc *svc, game_entry *e, game__after *af)
{
    game_op *op = af->posts;
    while (op) {
        game_op *n = op->next;
        op->post(svc, op);
        af->releases++;
        op = n;
    }
    for (int i = 0; i < af->releases; i++)
        game_cache_release(svc->cache, e);
}

static void game__update_metrics(game_svc *svc)
{
    game_cache_stats cs;
    game_cache_stats_get(svc->cache, &cs);
    if (svc->m_cache_entries)
        metric_set(svc->m_cache_entries, (int64_t)cs.entries);
    if (svc->m_cache_bytes)
        metric_set(svc->m_cache_bytes, (int64_t)cs.bytes);
    /* The cache counts evictions since start; the counter follows it. */
    if (svc->m_evictions && (int64_t)cs.evictions > metric_value(svc->m_evictions))
        metric_add(svc->m_evictions, (int64_t)cs.evictions - metric_value(svc->m_evictions));
}

/* ------------------------------------------------------------------ */
/* Cold load                                                           */

/* The load's callback argument (malloc'd by load_start, freed by load_done). */
typedef struct game__load {
    game_svc *svc;
    game_entry *e;
    bool reload; /* refreshing a resident (stale) entry rather than a cold load */
} game__load;

static void game__load_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);
static void game__load_fail(game__load *ld, const rpc_status *st);

static void game__load_start(game_svc *svc, game_entry *e, bool reload)
{
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    game__load *ld = malloc(sizeof *ld);
    rpc_status st;
    ref.game_id = e->game_id;
    if (svc->m_cache_misses)
        metric_add(svc->m_cache_misses, 1);
    if (!ld) {
        game__load stack = {svc, e, reload};
        rpc_status_set(&st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        game__load_fail(&stack, &st);
        return;
    }
    ld->svc = svc;
    ld->e = e;
    ld->reload = reload;
    if (game_store_call(&svc->store, NULL, GAME_STORE_LOAD_GAME, &ref.base, NULL, game__load_done,
                        ld) != RPC_OK) {
        rpc_status_set(&st, GRPC_STATUS_UNAVAILABLE, "unavailable",
                       "store-svc call failed to start");
        game__load_done(ld, &st, NULL);
    }
}

/* Converts a stored move to the compact form replay takes. */
static void game__move_from_proto(const Scrabble__V1__Move *pm, game_move *m)
{
    memset(m, 0, sizeof *m);
    m->seq = pm->seq;
    m->seat = pm->seat;
    m->kind = (int)pm->kind;
    m->score = pm->score;
    m->at_ms = pm->at_ms;
    m->account_id = pm->account_id;
    for (size_t i = 0; i < pm->n_placements && m->nplaced < SOLVER_RACK_MAX; i++) {
        const Scrabble__V1__Placement *p = pm->placements[i];
        solver_placement *q = &m->placed[m->nplaced++];
        q->row = p->row;
        q->col = p->col;
        q->letter = p->letter && p->letter[0] ? p->letter[0] : 0;
        q->is_blank = p->blank;
    }
    if (pm->exchanged_tiles)
        snprintf(m->exchanged, sizeof m->exchanged, "%s", pm->exchanged_tiles);
}

int game_entry_init_from_record(game_svc *svc, game_entry *e, const Scrabble__V1__GameRecord *rec,
                                rpc_status *st)
{
    const char *lexname = rec->lexicon && rec->lexicon[0] ? rec->lexicon : svc->cfg.default_lexicon;
    const solver_lexicon *lex = game_lexicons_get(&svc->lexicons, lexname);
    game_rules_error err;
    /* A game whose lexicon this server lacks (one created before Invite
     * checked lexicons, or a lexicon file since removed) cannot be played
     * until the file is put back: a precondition the caller can read, not
     * a fault of ours. */
    if (!lex) {
        rpc_status_set(st, GRPC_STATUS_FAILED_PRECONDITION, "lexicon_unavailable",
                       "game %lld uses lexicon %s, which this server does not have",
                       (long long)e->game_id, lexname);
        return -1;
    }
    if (game_rules_init(&e->g, lex, solver_dist_english(), rec->seed, (int)rec->n_seats) != 0) {
        rpc_status_set(st, GRPC_STATUS_INTERNAL, "bad_record", "game %lld has %zu seats",
                       (long long)e->game_id, rec->n_seats);
        return -1;
    }
    snprintf(e->lexicon, sizeof e->lexicon, "%s", lexname);
    e->invitation_id = rec->invitation_id;
    e->rated = rec->rated;
    e->public_game = rec->public_game;
    e->created_at_ms = rec->created_at_ms;
    e->updated_at_ms = rec->updated_at_ms;
    for (size_t s = 0; s < rec->n_seats; s++) {
        const Scrabble__V1__Seat *seat = rec->seats[s];
        int idx = seat->seat >= 0 && seat->seat < (int)rec->n_seats ? seat->seat : (int)s;
        e->g.seats[idx].account_id = seat->account_id;
        snprintf(e->g.seats[idx].handle, sizeof e->g.seats[idx].handle, "%s",
                 seat->handle ? seat->handle : "");
    }
    e->nmoves = 0;
    for (size_t i = 0; i < rec->n_moves; i++) {
        game_move m;
        game__move_from_proto(rec->moves[i], &m);
        if (game_rules_replay(&e->g, &m, &err) != GAME_RULES_OK) {
            log_error("replay_failed", "game=%lld seq=%lld reason=%s msg=\"%s\"",
                      (long long)e->game_id, (long long)m.seq, err.reason, err.message);
            rpc_status_set(st, GRPC_STATUS_INTERNAL, "replay_failed", "game %lld: move %lld: %s",
                           (long long)e->game_id, (long long)m.seq, err.message);
            return -1;
        }
        if (game_cache_append_move(svc->cache, e, &e->g.last) != 0) {
            rpc_status_set(st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
            return -1;
        }
    }
    if (e->g.seq != rec->seq)
        log_warn("replay_seq_mismatch", "game=%lld replayed=%lld stored=%lld",
                 (long long)e->game_id, (long long)e->g.seq, (long long)rec->seq);
    game_clock_from_record(e, rec);
    bool finished = rec->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED;
    for (size_t s = 0; s < rec->n_seats; s++) {
        const Scrabble__V1__Seat *seat = rec->seats[s];
        if (!finished && seat->seat >= 0 && seat->seat < e->g.nseats &&
            seat->score != e->g.seats[seat->seat].score)
            log_warn("replay_score_mismatch", "game=%lld seat=%d replayed=%d stored=%d",
                     (long long)e->game_id, seat->seat, e->g.seats[seat->seat].score, seat->score);
    }
    /* A finished game's record is its result: ended without a move (on time,
     * or an administrator's FinishGame), or with overtime penalties that no
     * move carries. */
    if (finished) {
        if (e->g.status == GAME_STATUS_ACTIVE) {
            e->g.status = GAME_STATUS_FINISHED;
            e->g.end_reason = (int)rec->end_reason;
        }
        e->g.nwinners = 0;
        for (size_t i = 0; i < rec->n_winners && i < GAME_MAX_SEATS; i++)
            e->g.winners[e->g.nwinners++] = rec->winners[i];
        for (size_t s = 0; s < rec->n_seats; s++)
            if (rec->seats[s]->seat >= 0 && rec->seats[s]->seat < e->g.nseats)
                e->g.seats[rec->seats[s]->seat].score = rec->seats[s]->score;
    }
    return 0;
}

/* Fails the detached waiter list w with st, each dropping the reference
 * to e it held (e->mu not held). */
static void game__fail_waiters(game_svc *svc, game_entry *e, game_op *w, const rpc_status *st)
{
    while (w) {
        game_op *n = w->next;
        game_ops_waiting_add(svc, -1);
        game_op_fail_status(w, st); /* a poller's op tries again after its lease */
        game_cache_release(svc->cache, e);
        w = n;
    }
}

static void game__load_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game__load *ld = arg;
    game_svc *svc = ld->svc;
    game_entry *e = ld->e;
    game__after af = {0};
    rpc_status fail = *st;
    bool reload = ld->reload;
    free(ld);
    pthread_mutex_lock(&e->mu);
    if (st->code == GRPC_STATUS_OK &&
        game_entry_init_from_record(svc, e, (const Scrabble__V1__GameRecord *)reply, &fail) == 0) {
        e->state = GAME_ENTRY_READY;
        log_debug("game_loaded", "game=%lld seq=%lld moves=%zu", (long long)e->game_id,
                  (long long)e->g.seq, e->nmoves);
        if (e->g.status == GAME_STATUS_FINISHED)
            game_cache_demote(svc->cache, e);
        game__drain(svc, e, &af);
        pthread_mutex_unlock(&e->mu);
        game__finish_after(svc, e, &af);
        game__update_metrics(svc);
        return;
    }
    if (reload && st->code != GRPC_STATUS_OK) {
        /* The store is still out of reach: the resident state keeps serving
         * reads; the waiting turns fail and the next one tries again. */
        game_op *w = e->wait_head;
        e->wait_head = e->wait_tail = NULL;
        e->state = GAME_ENTRY_STALE;
        pthread_mutex_unlock(&e->mu);
        game__fail_waiters(svc, e, w, &fail);
        return;
    }
    pthread_mutex_unlock(&e->mu);
    game__load stack = {svc, e, reload};
    game__load_fail(&stack, &fail);
}

/* Every waiter gets the failure status; the entry goes (e->mu not held). */
static void game__load_fail(game__load *ld, const rpc_status *st)
{
    game_svc *svc = ld->svc;
    game_entry *e = ld->e;
    rpc_status fail = *st;
    pthread_mutex_lock(&e->mu);
    if (fail.code == GRPC_STATUS_OK)
        rpc_status_set(&fail, GRPC_STATUS_INTERNAL, "internal", "load failed");
    if (fail.code == GRPC_STATUS_DEADLINE_EXCEEDED || fail.code == GRPC_STATUS_UNAVAILABLE)
        log_warn("game_load_failed", "game=%lld code=%s reason=%s", (long long)e->game_id,
                 rpc_status_code_name(fail.code), fail.reason);
    e->state = GAME_ENTRY_DEAD;
    game_cache_remove(svc->cache, e);
    game_op *w = e->wait_head;
    e->wait_head = e->wait_tail = NULL;
    pthread_mutex_unlock(&e->mu);
    game__fail_waiters(svc, e, w, &fail);
}

void game_reload(game_svc *svc, game_entry *e)
{
    game__load_start(svc, e, true);
}

void game_rerun(game_svc *svc, game_entry *e, game_op *op)
{
    game__after af = {0};
    pthread_mutex_lock(&e->mu);
    game__run_one(svc, e, op, &af);
    game__drain(svc, e, &af);
    pthread_mutex_unlock(&e->mu);
    game__finish_after(svc, e, &af);
}

void game_write_done(game_svc *svc, game_entry *e, bool applied)
{
    game__after af = {0};
    bool reload = !applied && e->wait_head;
    /* Not applied: whether the store holds the write is unknown (or the
     * store is ahead of us). The resident state is still one the store
     * holds or held a moment ago, so reads go on from it; before the next
     * turn the game is reloaded, at once when turns already wait. */
    e->state = applied ? GAME_ENTRY_READY : reload ? GAME_ENTRY_RELOADING : GAME_ENTRY_STALE;
    if (applied)
        game__drain(svc, e, &af);
    pthread_mutex_unlock(&e->mu);
    if (reload)
        game__load_start(svc, e, true); /* the waiters' references keep e alive */
    af.releases++;                      /* the writer's own reference */
    game__finish_after(svc, e, &af);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */

void game_dispatch(game_svc *svc, int64_t game_id, game_op *op)
{
    bool created;
    game__after af = {0};
    op->svc = svc;
    if (game_id <= 0) {
        game_op_fail(op, GRPC_STATUS_NOT_FOUND, "not_found", "no game %lld", (long long)game_id);
        return;
    }
    op->game_id = game_id;
    game_entry *e = game_cache_acquire(svc->cache, game_id, &created);
    if (!e) {
        game_op_fail(op, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    op->entry = e;
    pthread_mutex_lock(&e->mu);
    if (e->state == GAME_ENTRY_DEAD) {
        /* Invalidated between our acquire and our lock: start over. */
        pthread_mutex_unlock(&e->mu);
        game_cache_release(svc->cache, e);
        game_dispatch(svc, game_id, op);
        return;
    }
    if (e->state == GAME_ENTRY_LOADING || (op->is_turn && !game_entry_turns_open(e))) {
        bool reload = op->is_turn && e->state == GAME_ENTRY_STALE;
        if (reload)
            e->state = GAME_ENTRY_RELOADING;
        game__enqueue(e, op);
        pthread_mutex_unlock(&e->mu);
        if (created || reload) {
            game__load_start(svc, e, reload);
            game__update_metrics(svc);
        }
        return;
    }
    game__run_one(svc, e, op, &af);
    pthread_mutex_unlock(&e->mu);
    game__finish_after(svc, e, &af);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */

static void game__event_init(Scrabble__V1__Event *ev, int64_t game_id, const game_state *g,
                             int type)
{
    scrabble__v1__event__init(ev);
    ev->type = (Scrabble__V1__EventType)type;
    ev->game_id = game_id;
    ev->seq = g->seq;
    ev->to_move = g->to_move;
    ev->at_ms = game_now_ms();
}

/* The clocks and deadline of game g with clock c as of now, on a game
 * event (as GameState.clock_ms / deadline_ms). */
static void game__event_time(rpc_arena *a, Scrabble__V1__Event *ev, const game_state *g,
                             const game_clock *c, int64_t now)
{
    bool active = g->status == GAME_STATUS_ACTIVE;
    int64_t *ms = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof *ms);
    if (ms) {
        ev->clock_ms = ms;
        ev->n_clock_ms = (size_t)game_clock_view(c, g->nseats, g->to_move, active, now, ms);
    }
    ev->deadline_ms = active ? c->deadline_ms : 0;
}

int game_move_events(rpc_arena *a, int64_t game_id, const game_state *g, const game_clock *c,
                     int64_t now, const game_move *m, game_event_list *l)
{
    Scrabble__V1__Event ev;
    Scrabble__V1__Move *pub = m ? game_view_move(a, m, false) : NULL;
    int rc = m && !pub ? -1 : 0;
    int from = m ? m->seat : g->to_move;
    if (m) {
        game__event_init(&ev, game_id, g, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED);
        game__event_time(a, &ev, g, c, now);
        ev.move = pub;
        ev.from_account_id = m->account_id;
        ev.from_handle = (char *)g->seats[m->seat].handle;
        for (int s = 0; s < g->nseats && rc == 0; s++)
            if (s != m->seat)
                rc = game_event_add(a, l, g->seats[s].account_id, &ev, NULL);
        if (rc != 0)
            return -1;
        if (g->status == GAME_STATUS_ACTIVE) {
            game__event_init(&ev, game_id, g, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN);
            game__event_time(a, &ev, g, c, now);
            ev.from_account_id = m->account_id;
            ev.from_handle = (char *)g->seats[m->seat].handle;
            return game_event_add(a, l, g->seats[g->to_move].account_id, &ev, NULL);
        }
    }
    game__event_init(&ev, game_id, g, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER);
    game__event_time(a, &ev, g, c, now);
    ev.move = pub;
    ev.from_account_id = g->seats[from].account_id;
    ev.from_handle = (char *)g->seats[from].handle;
    int32_t penalties[GAME_MAX_SEATS];
    bool any = false;
    for (int s = 0; s < g->nseats; s++)
        any |= (penalties[s] = game_clock_penalty(c, s)) != 0;
    ev.overtime_penalties = penalties;
    ev.n_overtime_penalties = any ? (size_t)g->nseats : 0;
    ev.seats = game_view_seats(a, g);
    ev.n_seats = ev.seats ? (size_t)g->nseats : 0;
    int32_t winners[GAME_MAX_SEATS];
    for (int i = 0; i < g->nwinners; i++)
        winners[i] = g->winners[i];
    ev.winners = winners;
    ev.n_winners = (size_t)g->nwinners;
    ev.end_reason = (Scrabble__V1__EndReason)g->end_reason;
    for (int s = 0; s < g->nseats && rc == 0; s++)
        rc = game_event_add(a, l, g->seats[s].account_id, &ev, NULL);
    return rc;
}

/* GAME_STARTED to every seat and YOUR_TURN to seat 0, by AppendEvents
 * with dedupe keys: a repeated CreateGame (the invitee's retry) announces
 * again, and the log keeps one of each. */
int game_announce_start(game_svc *svc, rpc_call *caller, game_entry *e, rpc_arena *a,
                        rpc_unary_cb done, void *arg)
{
    const game_state *g = &e->g;
    Scrabble__V1__Event ev;
    Scrabble__V1__Invitation inv = SCRABBLE__V1__INVITATION__INIT;
    Scrabble__V1__Invitee invitees[GAME_MAX_SEATS];
    Scrabble__V1__Invitee *pinv[GAME_MAX_SEATS];
    Scrabble__V1__AppendEventsRequest req = SCRABBLE__V1__APPEND_EVENTS_REQUEST__INIT;
    game_event_list l = {0};
    char key[48];
    int rc = 0;
    for (int s = 0; s < g->nseats; s++) {
        scrabble__v1__invitee__init(&invitees[s]);
        invitees[s].account_id = g->seats[s].account_id;
        invitees[s].handle = (char *)g->seats[s].handle;
        invitees[s].answer = SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_ACCEPTED;
        pinv[s] = &invitees[s];
    }
    inv.invitation_id = e->invitation_id;
    inv.inviter_id = g->seats[0].account_id;
    inv.inviter_handle = (char *)g->seats[0].handle;
    inv.seats = pinv;
    inv.n_seats = (size_t)g->nseats;
    inv.status = SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED;
    inv.game_id = e->game_id;
    inv.lexicon = e->lexicon;
    inv.created_at_ms = e->created_at_ms;
    Scrabble__V1__TimeControl tc = SCRABBLE__V1__TIME_CONTROL__INIT;
    tc.kind =
        (Scrabble__V1__TimeControlKind)(e->clock.tc.kind ? e->clock.tc.kind : GAME_TC_UNTIMED);
    tc.days_per_move = e->clock.tc.days_per_move;
    tc.initial_seconds = e->clock.tc.initial_s;
    tc.increment_seconds = e->clock.tc.increment_s;
    tc.max_overtime_minutes = e->clock.tc.max_overtime_min;
    inv.time_control = &tc;
    int64_t clock_ms[GAME_MAX_SEATS];
    int nclock =
        game_clock_view(&e->clock, g->nseats, g->to_move, true, e->clock.turn_started_ms, clock_ms);
    game__event_init(&ev, e->game_id, g, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED);
    ev.clock_ms = clock_ms;
    ev.n_clock_ms = (size_t)nclock;
    ev.deadline_ms = e->clock.deadline_ms;
    ev.invitation = &inv;
    ev.from_account_id = g->seats[0].account_id;
    ev.from_handle = (char *)g->seats[0].handle;
    snprintf(key, sizeof key, "started:%lld", (long long)e->game_id);
    for (int s = 0; s < g->nseats && rc == 0; s++)
        rc = game_event_add(a, &l, g->seats[s].account_id, &ev, key);
    game__event_init(&ev, e->game_id, g, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN);
    ev.clock_ms = clock_ms;
    ev.n_clock_ms = (size_t)nclock;
    ev.deadline_ms = e->clock.deadline_ms;
    snprintf(key, sizeof key, "turn:%lld:0", (long long)e->game_id);
    if (rc == 0)
        rc = game_event_add(a, &l, g->seats[g->to_move].account_id, &ev, key);
    if (rc != 0) {
        log_error("announce_failed", "game=%lld err=\"out of memory\"", (long long)e->game_id);
        return -1;
    }
    req.events = l.v;
    req.n_events = l.n;
    if (game_store_call(&svc->store, caller, GAME_STORE_APPEND_EVENTS, &req.base, NULL, done,
                        arg) != RPC_OK) {
        log_warn("announce_failed", "game=%lld err=\"store-svc call failed to start\"",
                 (long long)e->game_id);
        return -1;
    }
    return 0;
}

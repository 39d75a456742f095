/*
 * game.c — how operations meet the cache: dispatch, cold load + replay from
 * store-svc, turns (validate, CommitMove, apply only after the store's
 * acknowledgement) and the events that follow a committed turn.
 *
 * Reference discipline: every op holds one reference on its entry from
 * dispatch until it is finished (or handed to a post step, which releases it
 * once it has started). References are released only after e->mu is dropped.
 */
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
/* Wait queue and draining                                             */

static void game__enqueue(game_entry *e, game_op *op)
{
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

/* Runs waiting ops in order while no commit is in flight (e->mu held). */
static void game__drain(game_svc *svc, game_entry *e, game__after *af)
{
    while (e->phase == GAME_ENTRY_READY && !e->committing && !e->reloading && !e->stale &&
           e->wait_head)
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
    if (game_store_call(&svc->store, GAME_STORE_LOAD_GAME, &ref.base, NULL, game__load_done, ld) !=
        RPC_OK) {
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
        if (w->call)
            rpc_call_fail_status(w->call, st);
        else /* the deadline poller's: it tries again after its lease */
            rpc_arena_destroy(w->arena);
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
        e->phase = GAME_ENTRY_READY;
        e->stale = e->reloading = false;
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
        e->reloading = false;
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
    e->phase = GAME_ENTRY_DEAD;
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

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */

void game_dispatch(game_svc *svc, int64_t game_id, game_op *op)
{
    bool created;
    game__after af = {0};
    op->svc = svc;
    if (game_id <= 0) {
        rpc_call_fail(op->call, GRPC_STATUS_NOT_FOUND, "not_found", "no game %lld",
                      (long long)game_id);
        return;
    }
    op->game_id = game_id;
    game_entry *e = game_cache_acquire(svc->cache, game_id, &created);
    if (!e) {
        if (op->call)
            rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                          "out of memory");
        else
            rpc_arena_destroy(op->arena);
        return;
    }
    op->entry = e;
    pthread_mutex_lock(&e->mu);
    if (e->phase == GAME_ENTRY_DEAD) {
        /* Invalidated between our acquire and our lock: start over. */
        pthread_mutex_unlock(&e->mu);
        game_cache_release(svc->cache, e);
        game_dispatch(svc, game_id, op);
        return;
    }
    if (e->phase == GAME_ENTRY_LOADING ||
        (op->is_turn && (e->committing || e->reloading || e->stale || e->wait_head))) {
        bool reload = op->is_turn && e->phase == GAME_ENTRY_READY && e->stale && !e->reloading &&
                      !e->committing;
        if (reload)
            e->reloading = true;
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

/* What follows a committed move m (e->mu held): the mover's draft is
 * dropped. Run by the attempt that committed m, and again by a retry of m
 * while m is the last move (game__turn_retry): a delete is harmless twice.
 * Its events need nothing here: they were committed with m. */
static void game__after_commit(game_svc *svc, game_entry *e, const game_move *m)
{
    game_drafts_delete(svc->drafts, e->game_id, m->account_id);
    game_bots_after_commit(svc, e);
}

/* GAME_STARTED to every seat and YOUR_TURN to seat 0, by AppendEvents
 * with dedupe keys: a repeated CreateGame (the invitee's retry) announces
 * again, and the log keeps one of each. */
int game_announce_start(game_svc *svc, game_entry *e, rpc_arena *a, rpc_unary_cb done, void *arg)
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
    if (game_store_call(&svc->store, GAME_STORE_APPEND_EVENTS, &req.base, NULL, done, arg) !=
        RPC_OK) {
        log_warn("announce_failed", "game=%lld err=\"store-svc call failed to start\"",
                 (long long)e->game_id);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Turns                                                               */

static void game__reply_turn(rpc_call *call, const game_entry *e, const game_move *m, int seat)
{
    rpc_arena *a = rpc_call_arena(call);
    Scrabble__V1__TurnReply *r =
        RPC_ARENA_MSG(a, Scrabble__V1__TurnReply, scrabble__v1__turn_reply__init);
    if (!r) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    r->move = game_view_move(a, m, true);
    r->state = game_view_state(a, e, seat);
    /* The time control only: a repeat of this turn must get this very
     * reply (docs/API.md, Retries), and running clocks never repeat. */
    if (r->state) {
        game_view_time(a, r->state, e, 0);
        r->state->n_clock_ms = 0;
        r->state->deadline_ms = 0;
    }
    rpc_call_reply(call, &r->base);
}

static void game__commit_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);

static Scrabble__V1__CommitMoveRequest *game__commit_request(rpc_arena *a, const game_entry *e,
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

static grpc_status_code game__rules_code(int rc)
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
static const game_move *game__move_at(const game_entry *e, int64_t seq)
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
static int game__state_after(const game_entry *e, int64_t seq, game_state *out, rpc_status *st)
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
        const game_move *m = game__move_at(e, q);
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
static int game__turn_retry(game_svc *svc, game_entry *e, game_op *op)
{
    int64_t seq = op->expected_seq + 1;
    const game_move *m = game__move_at(e, seq);
    rpc_arena *a = rpc_call_arena(op->call);
    rpc_status st;
    if (!m || !game_rules_same_move(m, &op->turn)) {
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq",
                      "expected_seq %lld is taken (the game is at seq %lld) by another move",
                      (long long)op->expected_seq, (long long)e->g.seq);
        return GAME_OP_DONE;
    }
    if (seq == e->g.seq) {
        log_info("turn_retry", "game=%lld seq=%lld last=1", (long long)e->game_id, (long long)seq);
        game__after_commit(svc, e, m);
        game__reply_turn(op->call, e, m, op->seat);
        return GAME_OP_DONE;
    }
    /* The original reply showed the game as it was then: rebuild that in a
     * throw-away entry in the call's arena (game_view_state reads only the
     * game, its id, lexicon and times). */
    game_entry *then = rpc_arena_alloc(a, sizeof *then);
    if (!then) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    memset(then, 0, sizeof *then);
    if (game__state_after(e, seq, &then->g, &st) != 0) {
        log_error("turn_retry_failed", "game=%lld seq=%lld msg=\"%s\"", (long long)e->game_id,
                  (long long)seq, st.message);
        rpc_call_fail_status(op->call, &st);
        return GAME_OP_DONE;
    }
    then->game_id = e->game_id;
    then->clock.tc = e->clock.tc;
    memcpy(then->lexicon, e->lexicon, sizeof then->lexicon);
    then->invitation_id = e->invitation_id;
    then->rated = e->rated;
    then->created_at_ms = e->created_at_ms;
    then->updated_at_ms = m->at_ms;
    log_info("turn_retry", "game=%lld seq=%lld last=0 at_seq=%lld", (long long)e->game_id,
             (long long)seq, (long long)e->g.seq);
    game__reply_turn(op->call, then, m, op->seat);
    return GAME_OP_DONE;
}

int game_turn_run(game_svc *svc, game_entry *e, game_op *op)
{
    const game_state *g = &e->g;
    game_rules_error err;
    op->seat = game_rules_seat_of(g, op->account_id);
    if (op->seat < 0) {
        rpc_call_fail(op->call, GRPC_STATUS_PERMISSION_DENIED, "not_a_player",
                      "account %lld has no seat in game %lld", (long long)op->account_id,
                      (long long)e->game_id);
        return GAME_OP_DONE;
    }
    op->turn.seat = op->seat;
    if (op->expected_seq >= 0 && op->expected_seq < g->seq)
        return game__turn_retry(svc, e, op);
    if (op->expected_seq != g->seq) {
        if (g->status != GAME_STATUS_ACTIVE) {
            rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "game_over",
                          "the game is over");
            return GAME_OP_DONE;
        }
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq",
                      "expected_seq %lld, the game is at seq %lld", (long long)op->expected_seq,
                      (long long)g->seq);
        return GAME_OP_DONE;
    }
    /* The seat to move is out of time: the game ends on time instead, and
     * this turn gets game_over once the store has recorded that. */
    int64_t now = game_clock_now(svc);
    if (g->status == GAME_STATUS_ACTIVE && !op->timeout_tried && game_clock_expired(&e->clock, now))
        return game_timeout_run(svc, e, op);
    op->pending = rpc_arena_alloc(rpc_call_arena(op->call), sizeof *op->pending);
    if (!op->pending) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    int rc = game_rules_turn(g, &op->turn, game_now_ms(), &op->pending->next_state,
                             &op->pending->move, &err);
    if (rc != GAME_RULES_OK) {
        rpc_call_fail(op->call, game__rules_code(rc), err.reason, "%s", err.message);
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
    Scrabble__V1__CommitMoveRequest *req = game__commit_request(rpc_call_arena(op->call), e, op);
    if (!req) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    e->committing = true;
    if (game_store_call(&svc->store, GAME_STORE_COMMIT_MOVE, &req->base, NULL, game__commit_done,
                        op) != RPC_OK) {
        e->committing = false;
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable",
                      "store-svc call failed to start");
        return GAME_OP_DONE;
    }
    return GAME_OP_PENDING;
}

static void game__commit_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    game_entry *e = op->entry;
    game_svc *svc = op->svc;
    game__after af = {0};
    bool reload = false;
    int64_t game_id = e->game_id;
    rpc_call *call = op->call;

    pthread_mutex_lock(&e->mu);
    e->committing = false;
    if (st->code == GRPC_STATUS_OK) {
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
            log_error("history_oom", "game=%lld seq=%lld", (long long)game_id,
                      (long long)op->pending->move.seq);
        if (svc->m_turns)
            metric_add(svc->m_turns, 1);
        game__after_commit(svc, e, &op->pending->move);
        if (e->g.status == GAME_STATUS_FINISHED)
            game_cache_demote(svc->cache, e);
        game__reply_turn(call, e, &op->pending->move, op->seat); /* op is gone after this */
        game__drain(svc, e, &af);
        pthread_mutex_unlock(&e->mu);
    } else {
        /* Whether the move was committed is unknown (or the store is ahead of
         * us: stale_seq). The resident state is still a state the store
         * holds (or held a moment ago), so reads and Evaluate go on from it;
         * before the next turn the game is reloaded from the store, the
         * source of truth (at once when turns are already waiting). */
        log_warn("commit_failed", "game=%lld seq=%lld code=%s reason=%s", (long long)game_id,
                 (long long)op->pending->move.seq, rpc_status_code_name(st->code), st->reason);
        e->stale = true;
        reload = e->wait_head != NULL;
        if (reload)
            e->reloading = true;
        pthread_mutex_unlock(&e->mu);
        if (st->code == GRPC_STATUS_FAILED_PRECONDITION && strcmp(st->reason, "stale_seq") == 0)
            rpc_call_fail(call, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq", "%s", st->message);
        else
            rpc_call_fail_status(call, st);
        if (reload)
            game__load_start(svc, e, true); /* the waiters' references keep e alive */
    }
    af.releases++; /* the committing op's own reference */
    game__finish_after(svc, e, &af);
}

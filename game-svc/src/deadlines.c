/*
 * deadlines.c — time controls in game-svc: ending a game whose seat to
 * move ran out of time, and the poller that takes due deadlines from the
 * store (store-svc's ClaimDeadlines) on every instance.
 *
 * Exactly once: a deadline row is leased to one poller at a time (SKIP
 * LOCKED), and whoever ends the game — that poller, or the instance that
 * owns the game and noticed the fallen flag on a turn or a read — does it
 * with TimeoutGame, which the store applies only while the game is still
 * active at the deadline's seq, writing the GAME_OVER events it carries to
 * the event log in the same transaction (so only the caller that got OK
 * announces it); the others reload the game and answer from the stored
 * result.
 *
 * TIME_WARNING and INVITATION_EXPIRED follow a claim that has already
 * taken the warning row / expired the invitation: they go to the log by
 * AppendEvents with dedupe keys ("warn:<game>:<due>",
 * "expired:<invitation>"), retried by nobody — a game-svc that dies
 * between the claim and the append loses them (a warning is advisory; the
 * expired invitation reads EXPIRED from ListInvitations).
 *
 * An instance that ends a game it does not own (the poller takes any due
 * deadline) loads it into its own cache like any cold game; the owner, if
 * it holds the game, finds the flag fallen on its next call about it, its
 * own TimeoutGame fails game_over, and it reloads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "game_svc.h"
#include "rpc/log.h"

#define DEADLINES__CLAIM_LIMIT 64
#define DEADLINES__LEASE_MS 30000

void game_clock_from_record(game_entry *e, const Scrabble__V1__GameRecord *rec)
{
    game_clock *c = &e->clock;
    memset(c, 0, sizeof *c);
    c->tc.kind = GAME_TC_UNTIMED;
    if (rec->time_control) {
        const Scrabble__V1__TimeControl *tc = rec->time_control;
        c->tc.kind = tc->kind ? (int)tc->kind : GAME_TC_UNTIMED;
        c->tc.days_per_move = tc->days_per_move;
        c->tc.initial_s = tc->initial_seconds;
        c->tc.increment_s = tc->increment_seconds;
        c->tc.max_overtime_min = tc->max_overtime_minutes;
    }
    if (rec->clock) {
        const Scrabble__V1__GameClock *k = rec->clock;
        for (size_t s = 0; s < k->n_remaining_ms && s < GAME_MAX_SEATS; s++)
            c->remaining_ms[s] = k->remaining_ms[s];
        c->turn_started_ms = k->turn_started_ms;
        c->deadline_ms = k->deadline_ms;
        c->deadline_reason = (int)k->deadline_reason;
        c->warning_ms = k->warning_ms;
    }
}

/* ------------------------------------------------------------------ */
/* Ending a game on time                                               */

typedef struct deadlines__timeout {
    game_state next;
    game_clock clock;
} deadlines__timeout;

/* Ends op: a poller's op frees its own arena (and itself with it). */
static int deadlines__op_done(game_op *op)
{
    if (!op->call)
        rpc_arena_destroy(op->arena);
    return GAME_OP_DONE;
}

static void deadlines__timeout_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);

int game_timeout_run(game_svc *svc, game_entry *e, game_op *op)
{
    const game_state *g = &e->g;
    op->timeout_tried = true;
    /* A store write starts only from READY (cache.h). Another commit or
     * timeout in flight, or a resident state known to be stale: this op (a
     * read; a turn would not be here, turns run only in READY) goes on with
     * the state as it is, and the poller or the next turn ends the game. */
    if (e->state != GAME_ENTRY_READY || g->status != GAME_STATUS_ACTIVE)
        return op->run(svc, e, op);
    rpc_arena *a = game_op_arena(op);
    deadlines__timeout *t = rpc_arena_alloc(a, sizeof *t);
    Scrabble__V1__TimeoutGameRequest *req = RPC_ARENA_MSG(a, Scrabble__V1__TimeoutGameRequest,
                                                          scrabble__v1__timeout_game_request__init);
    Scrabble__V1__GameFinish *f =
        RPC_ARENA_MSG(a, Scrabble__V1__GameFinish, scrabble__v1__game_finish__init);
    int32_t *scores = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof *scores);
    int32_t *winners = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof *winners);
    if (!t || !req || !f || !scores || !winners)
        return op->run(svc, e, op);
    /* The seat to move loses (clock.h): its elapsed time charged, every
     * seat's overtime penalty taken, then the winners among the others. */
    int out = g->to_move;
    t->next = *g;
    t->clock = e->clock;
    game_clock_charge(&t->clock, out, -1, game_clock_now(svc));
    for (int s = 0; s < g->nseats; s++)
        t->next.seats[s].score -= game_clock_penalty(&t->clock, s);
    game_rules_finish(&t->next,
                      e->clock.deadline_reason ? e->clock.deadline_reason : GAME_END_TIMEOUT, out);
    game_clock_next_turn(&t->clock, out, false, t->clock.turn_started_ms, 0);
    for (int s = 0; s < g->nseats; s++)
        scores[s] = t->next.seats[s].score;
    for (int i = 0; i < t->next.nwinners; i++)
        winners[i] = t->next.winners[i];
    f->end_reason = (Scrabble__V1__EndReason)t->next.end_reason;
    f->final_scores = scores;
    f->n_final_scores = (size_t)g->nseats;
    f->winners = winners;
    f->n_winners = (size_t)t->next.nwinners;
    req->game_id = e->game_id;
    req->seq = g->seq;
    req->finish = f;
    req->clock = game_view_clock_record(a, &t->clock, g->nseats);
    /* GAME_OVER rides in the TimeoutGame: written only if it applies. */
    game_event_list ev = {0};
    if (!req->clock ||
        game_move_events(a, e->game_id, &t->next, &t->clock, game_clock_now(svc), NULL, &ev) != 0)
        return op->run(svc, e, op);
    req->events = ev.v;
    req->n_events = ev.n;
    op->scratch = t;
    e->state = GAME_ENTRY_COMMITTING;
    if (game_store_call(&svc->store, op->call, GAME_STORE_TIMEOUT_GAME, &req->base, NULL,
                        deadlines__timeout_done, op) != RPC_OK) {
        e->state = GAME_ENTRY_READY;
        return op->run(svc, e, op);
    }
    log_info("timeout_started", "game=%lld seq=%lld seat=%d", (long long)e->game_id,
             (long long)g->seq, out);
    return GAME_OP_PENDING;
}

static void deadlines__timeout_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    game_entry *e = op->entry;
    game_svc *svc = op->svc;
    deadlines__timeout *t = op->scratch;
    bool reload = false;
    (void)reply;
    pthread_mutex_lock(&e->mu);
    op->scratch = NULL;
    if (st->code == GRPC_STATUS_OK) {
        e->state = GAME_ENTRY_READY;
        e->g = t->next;
        e->clock = t->clock;
        e->updated_at_ms = game_now_ms();
        if (svc->m_timeouts)
            metric_add(svc->m_timeouts, 1);
        log_info("game_timed_out", "game=%lld seq=%lld seat=%d reason=%d", (long long)e->game_id,
                 (long long)e->g.seq, e->g.to_move, e->g.end_reason);
        game_cache_demote(svc->cache, e);
    } else {
        /* Someone else ended it or moved first (game_over, stale_seq), or
         * the store is out of reach: the stored game is the truth. The op
         * waits at the head of the queue for the reload and then runs
         * again (timeout_tried: no second attempt). */
        log_info("timeout_not_applied", "game=%lld code=%s reason=%s", (long long)e->game_id,
                 rpc_status_code_name(st->code), st->reason);
        e->state = GAME_ENTRY_RELOADING;
        reload = true;
        game_ops_waiting_add(svc, 1);
        op->next = e->wait_head;
        e->wait_head = op;
        if (!e->wait_tail)
            e->wait_tail = op;
    }
    pthread_mutex_unlock(&e->mu);
    if (reload) {
        game_reload(svc, e);
        return;
    }
    game_rerun(svc, e, op);
}

/* ------------------------------------------------------------------ */
/* The poller                                                          */

/* A poller's op on a claimed game deadline: is the game, as this instance
 * holds it, due by this instance's clock too? Then end it (TimeoutGame
 * checks the seq it saw). The row's seq is not compared: a deadline that
 * several moves left in place (an untimed game's) carries an older one. */
static int deadlines__fire_run(game_svc *svc, game_entry *e, game_op *op)
{
    if (op->timeout_tried || e->g.status != GAME_STATUS_ACTIVE ||
        !game_clock_expired(&e->clock, game_clock_now(svc)))
        return deadlines__op_done(op);
    return game_timeout_run(svc, e, op);
}

static void deadlines__fire(game_svc *svc, const Scrabble__V1__Deadline *d)
{
    rpc_arena *a = rpc_arena_create(0);
    game_op *op = a ? rpc_arena_calloc(a, 1, sizeof *op) : NULL;
    if (!op) {
        if (a)
            rpc_arena_destroy(a);
        log_warn("deadline_dropped", "game=%lld reason=oom", (long long)d->game_id);
        return;
    }
    op->arena = a;
    op->run = deadlines__fire_run;
    op->is_turn = true;
    op->seat = -1;
    game_dispatch(svc, d->game_id, op);
}

/* Writes the poll's TIME_WARNING / INVITATION_EXPIRED events to the log
 * (one AppendEvents; dedupe keys make a repeat harmless) and empties l. */
static void deadlines__flush(game_svc *svc, rpc_arena *a, game_event_list *l)
{
    Scrabble__V1__AppendEventsRequest req = SCRABBLE__V1__APPEND_EVENTS_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    rpc_status st;
    rpc_client_opts opts = {.timeout_ms = svc->store.timeout_ms};
    if (l->n == 0)
        return;
    req.events = l->v;
    req.n_events = l->n;
    if (rpc_client_unary_sync(svc->store.ch, game_store_path(&svc->store, GAME_STORE_APPEND_EVENTS),
                              &req.base, &scrabble__v1__append_events_reply__descriptor, &opts,
                              rpc_arena_allocator(a), &reply, &st) != GRPC_STATUS_OK)
        log_warn("deadline_events_lost", "n=%zu code=%s reason=%s", l->n,
                 rpc_status_code_name(st.code), st.reason);
    l->v = NULL;
    l->n = 0;
}

/* Adds one record to l, flushing a full list first. */
static void deadlines__add(game_svc *svc, rpc_arena *a, game_event_list *l, int64_t account_id,
                           const Scrabble__V1__Event *ev, const char *key)
{
    if (l->n >= GAME_EVENT_LIST_MAX)
        deadlines__flush(svc, a, l);
    if (game_event_add(a, l, account_id, ev, key) != 0)
        log_warn("deadline_event_dropped", "account=%lld key=%s reason=oom", (long long)account_id,
                 key);
}

static void deadlines__warn(game_svc *svc, rpc_arena *a, game_event_list *l,
                            const Scrabble__V1__Deadline *d)
{
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    char key[64];
    if (d->account_id <= 0)
        return;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_TIME_WARNING;
    ev.game_id = d->game_id;
    ev.seq = d->seq;
    ev.deadline_ms = d->deadline_ms;
    ev.at_ms = game_now_ms();
    snprintf(key, sizeof key, "warn:%lld:%lld", (long long)d->game_id, (long long)d->due_ms);
    deadlines__add(svc, a, l, d->account_id, &ev, key);
    if (svc->m_warnings)
        metric_add(svc->m_warnings, 1);
}

static void deadlines__expired(game_svc *svc, rpc_arena *a, game_event_list *l,
                               const Scrabble__V1__Deadline *d)
{
    const Scrabble__V1__Invitation *inv = d->invitation;
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    char key[64];
    if (!inv)
        return;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION_EXPIRED;
    ev.invitation = (Scrabble__V1__Invitation *)inv;
    ev.at_ms = game_now_ms();
    snprintf(key, sizeof key, "expired:%lld", (long long)inv->invitation_id);
    for (size_t i = 0; i < inv->n_seats; i++)
        deadlines__add(svc, a, l, inv->seats[i]->account_id, &ev, key);
    if (svc->m_invitations_expired)
        metric_add(svc->m_invitations_expired, 1);
    log_info("invitation_expired", "invitation=%lld", (long long)inv->invitation_id);
}

/* A seek expired unmatched (the claim made it EXPIRED): SEEK_EXPIRED to
 * its owner, dedupe key "seek_expired:<id>". Lost like the warnings if
 * this instance dies before the append; the seek reads EXPIRED. */
static void deadlines__seek_expired(game_svc *svc, rpc_arena *a, game_event_list *l,
                                    const Scrabble__V1__Deadline *d)
{
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    char key[64];
    if (!d->seek || d->seek->account_id <= 0)
        return;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_SEEK_EXPIRED;
    ev.seek = d->seek;
    ev.at_ms = game_now_ms();
    snprintf(key, sizeof key, "seek_expired:%lld", (long long)d->seek->seek_id);
    deadlines__add(svc, a, l, d->seek->account_id, &ev, key);
    log_info("seek_expired", "seek=%lld account=%lld", (long long)d->seek->seek_id,
             (long long)d->seek->account_id);
}

/* The test-only clock offset: the file's first line, in ms (missing or
 * unreadable: unchanged). */
static void deadlines__read_offset(game_svc *svc)
{
    if (!svc->cfg.clock_offset_file[0])
        return;
    FILE *f = fopen(svc->cfg.clock_offset_file, "r");
    long long v;
    if (!f)
        return;
    if (fscanf(f, "%lld", &v) == 1 && atomic_load(&svc->clock_offset_ms) != v) {
        atomic_store(&svc->clock_offset_ms, (int64_t)v);
        if (svc->m_clock_offset)
            metric_set(svc->m_clock_offset, (int64_t)(v / 1000));
        log_warn("clock_offset", "ms=%lld file=%s", v, svc->cfg.clock_offset_file);
    }
    fclose(f);
}

const Scrabble__V1__ClaimDeadlinesReply *
game_store_claim(game_svc *svc, int method, Scrabble__V1__ClaimDeadlinesRequest *req, rpc_arena *a)
{
    ProtobufCMessage *reply = NULL;
    rpc_status st;
    rpc_client_opts opts = {.timeout_ms = svc->store.timeout_ms};
    req->now_ms = game_clock_now(svc);
    if (rpc_client_unary_sync(svc->store.ch, game_store_path(&svc->store, method), &req->base,
                              &scrabble__v1__claim_deadlines_reply__descriptor, &opts,
                              rpc_arena_allocator(a), &reply, &st) != GRPC_STATUS_OK) {
        log_debug("claim_failed", "method=%d code=%s reason=%s", method,
                  rpc_status_code_name(st.code), st.reason);
        return NULL;
    }
    return (const Scrabble__V1__ClaimDeadlinesReply *)reply;
}

void game_poll_sleep(pthread_mutex_t *mu, pthread_cond_t *cv, const bool *stop, bool *poke, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + (int64_t)ms * 1000000;
    ts.tv_sec += ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    while (!*stop && !(poke && *poke) && pthread_cond_timedwait(cv, mu, &ts) != ETIMEDOUT)
        ;
    if (poke)
        *poke = false;
}

static void deadlines__poll_once(game_svc *svc, rpc_arena *a)
{
    Scrabble__V1__ClaimDeadlinesRequest req = SCRABBLE__V1__CLAIM_DEADLINES_REQUEST__INIT;
    req.limit = DEADLINES__CLAIM_LIMIT;
    req.lease_ms = DEADLINES__LEASE_MS;
    const Scrabble__V1__ClaimDeadlinesReply *r =
        game_store_claim(svc, GAME_STORE_CLAIM_DEADLINES, &req, a);
    if (!r)
        return;
    game_event_list l = {0};
    for (size_t i = 0; i < r->n_deadlines; i++) {
        const Scrabble__V1__Deadline *d = r->deadlines[i];
        switch (d->kind) {
        case SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_GAME:
            deadlines__fire(svc, d);
            break;
        case SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_WARNING:
            deadlines__warn(svc, a, &l, d);
            break;
        case SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_INVITATION:
            deadlines__expired(svc, a, &l, d);
            break;
        case SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_SEEK_MATCH:
            game_seek_create(svc, a, d);
            break;
        case SCRABBLE__V1__DEADLINE_KIND__DEADLINE_KIND_SEEK_EXPIRED:
            deadlines__seek_expired(svc, a, &l, d);
            break;
        default:
            break;
        }
    }
    deadlines__flush(svc, a, &l);
}

static void *deadlines__main(void *arg)
{
    game_svc *svc = arg;
    rpc_arena *a = rpc_arena_create(0);
    pthread_mutex_lock(&svc->poll_mu);
    while (!svc->poll_stop) {
        pthread_mutex_unlock(&svc->poll_mu);
        deadlines__read_offset(svc);
        if (a) {
            deadlines__poll_once(svc, a);
            rpc_arena_reset(a);
        }
        pthread_mutex_lock(&svc->poll_mu);
        game_poll_sleep(&svc->poll_mu, &svc->poll_cv, &svc->poll_stop, NULL,
                        svc->cfg.deadline_poll_ms);
    }
    pthread_mutex_unlock(&svc->poll_mu);
    if (a)
        rpc_arena_destroy(a);
    return NULL;
}

int game_deadlines_start(game_svc *svc)
{
    pthread_mutex_init(&svc->poll_mu, NULL);
    pthread_cond_init(&svc->poll_cv, NULL);
    svc->poll_stop = false;
    deadlines__read_offset(svc);
    if (pthread_create(&svc->poller, NULL, deadlines__main, svc) != 0)
        return -1;
    svc->poller_started = true;
    return 0;
}

void game_deadlines_stop(game_svc *svc)
{
    if (!svc->poller_started)
        return;
    pthread_mutex_lock(&svc->poll_mu);
    svc->poll_stop = true;
    pthread_cond_signal(&svc->poll_cv);
    pthread_mutex_unlock(&svc->poll_mu);
    pthread_join(svc->poller, NULL);
    svc->poller_started = false;
}

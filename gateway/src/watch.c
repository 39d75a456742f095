/*
 * watch.c — the Watch streams and ListPublicGames (see watch.h).
 *
 * Records: a gw_watch_game per watched game (malloc'd; freed when it has
 * no observer and no shared read in flight), a gw_watcher per stream (in
 * its call's arena, in its game's list exactly while the call is usable),
 * a gw_watch_acct per account with streams open (malloc'd, for the
 * per-account bound). A read in flight names its observer by (game,
 * serial), or its game alone for a shared read, and finds it again when it
 * returns, or finds it gone.
 */
#include "watch.h"

#include "gateway.h"
#include "route.h"
#include "rpc/log.h"
#include "scrabble/v1/edge.pb-c.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GW_WATCH_BUCKETS 1024 /* power of two */

enum { GW_WATCHER_READING = 0, GW_WATCHER_LIVE = 1 };

typedef struct gw_watch_game gw_watch_game;

typedef struct gw_watcher {
    struct gw_watcher *prev, *next; /* in its game's list */
    gw_watch *w;                    /* the registry (outlives every stream) */
    gw_watch_game *game;
    rpc_call *call;
    int64_t account_id;
    uint64_t serial; /* names the stream to its reads (never 0) */
    int64_t cursor;  /* seq of the last move sent (or after_seq) */
    int state;       /* GW_WATCHER_* */
    bool linked;     /* in its game's list: the call is usable */
    bool dirty;      /* woken while READING: read again */
    bool began;      /* response headers sent */
} gw_watcher;

struct gw_watch_game {
    gw_watch_game *hnext;
    int64_t game_id;
    gw_watcher *head, *tail;
    int observers, live;
    bool polling;     /* a shared read is in flight */
    int64_t poll_seq; /* ... started after the commit of this seq (0: unknown) */
    bool dirty;       /* woken during it: read once more */
    int64_t seen_seq; /* the highest seq a read of this game returned */
};

typedef struct gw_watch_acct {
    struct gw_watch_acct *hnext;
    int64_t account_id;
    int streams;
} gw_watch_acct;

struct gw_watch {
    gw_ctx *gw;
    pthread_mutex_t mu;
    uint64_t next_serial;
    size_t observers;
    gw_watch_game *games[GW_WATCH_BUCKETS];
    gw_watch_acct *accounts[GW_WATCH_BUCKETS];
};

/* A WatchState in flight: malloc'd by whoever starts it, freed by its
 * callback (or passed on to the next read). serial 0: the game's shared
 * read. The metadata names the account the read is made for. */
typedef struct gw_watch_read {
    gw_watch *w;
    int64_t game_id;
    uint64_t serial;
    int64_t since;
    char account[24];
    rpc_metadata md;
} gw_watch_read;

static size_t gw_watch__bucket(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
    return (size_t)((x ^ (x >> 29)) & (GW_WATCH_BUCKETS - 1));
}

gw_watch *gw_watch_create(gw_ctx *gw)
{
    gw_watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->gw = gw;
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

void gw_watch_destroy(gw_watch *w)
{
    if (!w)
        return;
    /* Only records without streams can remain (a shared read that returned
     * after the drain freed its own); free whatever is left. */
    for (size_t b = 0; b < GW_WATCH_BUCKETS; b++) {
        for (gw_watch_game *g = w->games[b], *n; g; g = n) {
            n = g->hnext;
            free(g);
        }
        for (gw_watch_acct *a = w->accounts[b], *n; a; a = n) {
            n = a->hnext;
            free(a);
        }
    }
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* ---- the registry (w->mu held) ----------------------------------- */

static gw_watch_game *gw_watch__game(gw_watch *w, int64_t game_id)
{
    gw_watch_game *g = w->games[gw_watch__bucket(game_id)];
    while (g && g->game_id != game_id)
        g = g->hnext;
    return g;
}

/* Frees g when nothing refers to it any more. */
static void gw_watch__game_release(gw_watch *w, gw_watch_game *g)
{
    if (g->head || g->polling)
        return;
    gw_watch_game **pp = &w->games[gw_watch__bucket(g->game_id)];
    while (*pp != g)
        pp = &(*pp)->hnext;
    *pp = g->hnext;
    free(g);
}

/* The account's stream count after adding delta (0 on OOM when adding: the
 * caller refuses the stream). */
static int gw_watch__acct_add(gw_watch *w, int64_t account_id, int delta)
{
    gw_watch_acct **pp = &w->accounts[gw_watch__bucket(account_id)];
    while (*pp && (*pp)->account_id != account_id)
        pp = &(*pp)->hnext;
    gw_watch_acct *a = *pp;
    if (!a) {
        if (delta <= 0 || !(a = calloc(1, sizeof *a)))
            return 0;
        a->account_id = account_id;
        *pp = a;
    }
    a->streams += delta;
    int n = a->streams;
    if (n <= 0) {
        *pp = a->hnext;
        free(a);
    }
    return n;
}

static int gw_watch__acct_streams(gw_watch *w, int64_t account_id)
{
    gw_watch_acct *a = w->accounts[gw_watch__bucket(account_id)];
    while (a && a->account_id != account_id)
        a = a->hnext;
    return a ? a->streams : 0;
}

/* Takes the stream out of the registry: from now on nothing touches its
 * call or its record. Its game may be freed. */
static void gw_watch__unlink(gw_watch *w, gw_watcher *s)
{
    if (!s->linked)
        return;
    gw_watch_game *g = s->game;
    if (s->prev)
        s->prev->next = s->next;
    else
        g->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        g->tail = s->prev;
    s->prev = s->next = NULL;
    s->linked = false;
    g->observers--;
    if (s->state == GW_WATCHER_LIVE)
        g->live--;
    w->observers--;
    gw_watch__acct_add(w, s->account_id, -1);
    metric_add(w->gw->m.observers, -1);
    gw_watch__game_release(w, g);
}

/* Finishes the stream (s may be freed on return: its arena goes with the
 * call). */
static void gw_watch__end(gw_watch *w, gw_watcher *s, grpc_status_code code, const char *reason,
                          const char *msg)
{
    if (!s->linked)
        return;
    rpc_call *call = s->call;
    gw_watch__unlink(w, s);
    rpc_call_finish(call, code, reason, "%s", msg);
}

/* Queues one event. false: the stream was ended (too slow, or closed). */
static bool gw_watch__send(gw_watch *w, gw_watcher *s, const Scrabble__V1__Event *e)
{
    int rc = rpc_stream_send(s->call, &e->base);
    if (rc == RPC_OK)
        return true;
    if (rc == RPC_EFULL) {
        log_info("slow_consumer", "stream=watch game=%lld account=%lld", (long long)e->game_id,
                 (long long)s->account_id);
        metric_add(w->gw->m.slow_consumers, 1);
        gw_watch__end(w, s, GRPC_STATUS_RESOURCE_EXHAUSTED, "slow_consumer",
                      "watch stream fell too far behind: watch again with after_seq");
    } else {
        gw_watch__unlink(w, s); /* ended under us */
    }
    return false;
}

static void gw_watch__blank(char *s)
{
    /* Truncated in place: the reply is freed by protobuf-c, which frees
     * each string it decoded (and never the shared empty string). */
    if (s && s[0])
        s[0] = '\0';
}

/* What game-svc returned, made safe for any observer whatever game-svc
 * sent: no rack and no exchanged tiles while the game is on (it never
 * sends them to an observer; the gateway does not rely on it). */
static void gw_watch__scrub(Scrabble__V1__WatchStateReply *r)
{
    Scrabble__V1__GameState *st = r->state;
    bool over = st->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED;
    gw_watch__blank(st->my_rack);
    st->my_seat = -1;
    for (size_t i = 0; i < st->n_seats; i++)
        if (!over)
            gw_watch__blank(st->seats[i]->final_rack);
    for (size_t i = 0; i < r->n_moves; i++)
        gw_watch__blank(r->moves[i]->exchanged_tiles);
    if (st->last_move)
        gw_watch__blank(st->last_move->exchanged_tiles);
}

/* Sends s the moves of r above its cursor, then, when the game is over
 * and s has every move, GAME_OVER, and ends the stream OK. false: the
 * stream was ended (s may be gone). */
static bool gw_watch__deliver(gw_watch *w, gw_watcher *s, const Scrabble__V1__WatchStateReply *r)
{
    const Scrabble__V1__GameState *st = r->state;
    bool over = st->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED;
    int sent = 0;
    for (size_t i = 0; i < r->n_moves; i++) {
        Scrabble__V1__Move *m = r->moves[i];
        if (m->seq <= s->cursor)
            continue;
        Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
        ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_WATCHED_MOVE;
        ev.game_id = st->game_id;
        ev.seq = m->seq;
        ev.move = m;
        ev.from_account_id = m->account_id;
        if (m->seat >= 0 && (size_t)m->seat < st->n_seats)
            ev.from_handle = st->seats[m->seat]->handle;
        ev.at_ms = m->at_ms;
        if (m->seq == st->seq) {
            /* The latest move: whose turn and the clocks are known. */
            ev.to_move = st->to_move;
            if (!over) {
                ev.n_clock_ms = st->n_clock_ms;
                ev.clock_ms = st->clock_ms;
                ev.deadline_ms = st->deadline_ms;
            }
        } else {
            /* Seats take turns in order (a resignation ends the game). */
            ev.to_move = st->n_seats ? (int32_t)((m->seat + 1) % (int)st->n_seats) : 0;
        }
        if (!gw_watch__send(w, s, &ev))
            return false;
        s->cursor = m->seq;
        sent++;
    }
    if (sent)
        metric_add(w->gw->m.watch_events, sent);
    if (over && s->cursor >= st->seq) {
        Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
        ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER;
        ev.game_id = st->game_id;
        ev.seq = st->seq;
        ev.to_move = st->to_move;
        ev.n_seats = st->n_seats;
        ev.seats = st->seats; /* final racks and adjustments: the game is over */
        ev.n_winners = st->n_winners;
        ev.winners = st->winners;
        ev.end_reason = st->end_reason;
        ev.move = st->last_move;
        ev.at_ms = st->updated_at_ms;
        if (!gw_watch__send(w, s, &ev))
            return false;
        metric_add(w->gw->m.watch_events, 1);
        gw_watch__end(w, s, GRPC_STATUS_OK, NULL, "game over");
        return false;
    }
    return true;
}

/* ---- reads ------------------------------------------------------- */

static gw_watch_read *gw_watch__new_read(gw_watch *w, int64_t game_id, uint64_t serial,
                                         int64_t since, int64_t account_id)
{
    gw_watch_read *rd = malloc(sizeof *rd);
    if (!rd)
        return NULL;
    rd->w = w;
    rd->game_id = game_id;
    rd->serial = serial;
    rd->since = since;
    snprintf(rd->account, sizeof rd->account, "%" PRId64, account_id);
    rd->md.key = "scrabble-account-id";
    rd->md.value = rd->account;
    return rd;
}

static void gw_watch__read_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);

/* Starts a WatchState for rd on the game's owner (without w->mu); rd is
 * taken over. */
static void gw_watch__read(gw_watch_read *rd)
{
    gw_ctx *gw = rd->w->gw;
    Scrabble__V1__WatchStateRequest req = SCRABBLE__V1__WATCH_STATE_REQUEST__INIT;
    req.game_id = rd->game_id;
    req.since_seq = rd->since;
    rpc_client_opts o = {.timeout_ms = gw->cfg.downstream_timeout_ms, .md = &rd->md, .md_count = 1};
    int inst = gw_route_pick(rd->game_id, gw->game_hash, (size_t)gw->ngames);
    metric_add(gw->m.watch_reads, 1);
    if (inst < 0 || rpc_client_unary(gw->games[inst], "/scrabble.v1.Game/WatchState", &req.base,
                                     &scrabble__v1__watch_state_reply__descriptor, &o,
                                     gw_watch__read_done, rd) != RPC_OK) {
        rpc_status fail;
        rpc_status_set(&fail, GRPC_STATUS_UNAVAILABLE, "unavailable", "game-svc call failed");
        gw_watch__read_done(rd, &fail, NULL);
    }
}

/* The game's next shared read, for its LIVE observers (w->mu held; g has
 * LIVE observers and no shared read in flight): the moves after the lowest
 * LIVE cursor, on behalf of the first LIVE observer (every LIVE observer
 * passed game-svc's privacy check with its own read). NULL on OOM (the
 * game stays dirty: the next wake-up tries again). */
static gw_watch_read *gw_watch__poll(gw_watch *w, gw_watch_game *g)
{
    int64_t since = INT64_MAX, account = 0;
    for (gw_watcher *s = g->head; s; s = s->next) {
        if (s->state != GW_WATCHER_LIVE)
            continue;
        if (!account)
            account = s->account_id;
        if (s->cursor < since)
            since = s->cursor;
    }
    if (!account)
        return NULL;
    gw_watch_read *rd = gw_watch__new_read(w, g->game_id, 0, since, account);
    if (!rd) {
        g->dirty = true;
        return NULL;
    }
    g->polling = true;
    g->dirty = false;
    g->poll_seq = 0;
    return rd;
}

/* How a failed read ends an observer: the caller's own refusals as they
 * are; anything else says "resume". */
static void gw_watch__fail(gw_watch *w, gw_watcher *s, const rpc_status *st)
{
    switch (st->code) {
    case GRPC_STATUS_PERMISSION_DENIED:
    case GRPC_STATUS_NOT_FOUND:
    case GRPC_STATUS_INVALID_ARGUMENT:
    case GRPC_STATUS_FAILED_PRECONDITION:
    case GRPC_STATUS_UNAUTHENTICATED:
        gw_watch__end(w, s, st->code, st->reason, st->message);
        break;
    default:
        log_warn("watch_read_failed", "game=%lld code=%s reason=%s", (long long)s->game->game_id,
                 rpc_status_code_name(st->code), st->reason);
        gw_watch__end(w, s, GRPC_STATUS_UNAVAILABLE, "unavailable",
                      "the game could not be read: watch again with after_seq");
    }
}

/* An observer's own read returned (w->mu held). Returns a read to start
 * after the unlock, or NULL. */
static gw_watch_read *gw_watch__own_done(gw_watch *w, gw_watch_read *rd, const rpc_status *st,
                                         Scrabble__V1__WatchStateReply *r)
{
    gw_watch_game *g = gw_watch__game(w, rd->game_id);
    gw_watcher *s = g ? g->head : NULL;
    while (s && s->serial != rd->serial)
        s = s->next;
    if (!s)
        return NULL; /* the client left, or the stream was ended */
    if (st->code != GRPC_STATUS_OK) {
        gw_watch__fail(w, s, st);
        return NULL;
    }
    if (r->state->seq > g->seen_seq)
        g->seen_seq = r->state->seq;
    if (!gw_watch__deliver(w, s, r))
        return NULL;
    if (s->dirty) {
        /* Woken while reading: the read may predate the move. */
        s->dirty = false;
        rd->since = s->cursor;
        return rd;
    }
    s->state = GW_WATCHER_LIVE;
    g->live++;
    if (!s->began) {
        /* Headers go once the catch-up is sent: a client that has them
         * knows every later move will reach it. */
        rpc_stream_begin(s->call);
        s->began = true;
    }
    return NULL;
}

/* The game's shared read returned (w->mu held). Returns the next shared
 * read to start after the unlock, or NULL. */
static gw_watch_read *gw_watch__shared_done(gw_watch *w, gw_watch_read *rd, const rpc_status *st,
                                            Scrabble__V1__WatchStateReply *r)
{
    gw_watch_game *g = gw_watch__game(w, rd->game_id);
    if (!g)
        return NULL; /* cannot happen: polling keeps it */
    if (st->code == GRPC_STATUS_OK && r->state->seq > g->seen_seq)
        g->seen_seq = r->state->seq;
    for (gw_watcher *s = g->head, *next; s; s = next) {
        next = s->next;
        if (s->state != GW_WATCHER_LIVE)
            continue;
        if (st->code != GRPC_STATUS_OK) {
            gw_watch__fail(w, s, st);
        } else if (s->cursor < rd->since) {
            /* Became LIVE after this read was asked for, further back than
             * it reached: the next shared read starts lower. */
            g->dirty = true;
        } else {
            gw_watch__deliver(w, s, r);
        }
    }
    g->polling = false;
    gw_watch_read *next = NULL;
    if (g->dirty && g->live > 0)
        next = gw_watch__poll(w, g);
    else
        gw_watch__game_release(w, g);
    return next;
}

static void gw_watch__read_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_watch_read *rd = arg;
    gw_watch *w = rd->w;
    Scrabble__V1__WatchStateReply *r = (Scrabble__V1__WatchStateReply *)reply;
    rpc_status bad;
    if (st->code == GRPC_STATUS_OK && (!r || !r->state)) {
        rpc_status_set(&bad, GRPC_STATUS_UNAVAILABLE, "unavailable", "empty WatchState reply");
        st = &bad;
    }
    if (st->code == GRPC_STATUS_OK)
        gw_watch__scrub(r);
    pthread_mutex_lock(&w->mu);
    gw_watch_read *again =
        rd->serial ? gw_watch__own_done(w, rd, st, r) : gw_watch__shared_done(w, rd, st, r);
    pthread_mutex_unlock(&w->mu);
    if (again != rd)
        free(rd);
    if (again)
        gw_watch__read(again);
}

/* ---- wake-ups ---------------------------------------------------- */

void gw_watch_wake(gw_watch *w, int64_t game_id, int64_t seq, bool game_over)
{
    if (game_id <= 0)
        return;
    gw_watch_read *rd = NULL;
    pthread_mutex_lock(&w->mu);
    gw_watch_game *g = gw_watch__game(w, game_id);
    if (g) {
        for (gw_watcher *s = g->head; s; s = s->next)
            if (s->state == GW_WATCHER_READING)
                s->dirty = true;
        /* A move's events reach each player (two or more per move): the
         * first wakes the game, the rest find its seq already read. An end
         * without a move (a timeout) keeps the seq, so GAME_OVER always
         * wakes. */
        bool news = game_over || seq > g->seen_seq;
        /* A read started by the event of seq N holds N (game-svc orders it
         * after the commit), so the other events of that move need no
         * second read. An end without a move keeps the seq: GAME_OVER
         * always reads again. */
        if (news && g->polling && !game_over && seq <= g->poll_seq)
            news = false;
        if (news && g->live > 0) {
            if (g->polling) {
                g->dirty = true;
            } else if ((rd = gw_watch__poll(w, g))) {
                g->poll_seq = game_over ? 0 : seq;
            }
        }
    }
    pthread_mutex_unlock(&w->mu);
    if (rd)
        gw_watch__read(rd);
}

size_t gw_watch_wake_all(gw_watch *w)
{
    size_t n = 0, cap = 0, woken = 0;
    gw_watch_read **todo = NULL;
    pthread_mutex_lock(&w->mu);
    for (size_t b = 0; b < GW_WATCH_BUCKETS; b++)
        for (gw_watch_game *g = w->games[b]; g; g = g->hnext) {
            for (gw_watcher *s = g->head; s; s = s->next)
                if (s->state == GW_WATCHER_READING)
                    s->dirty = true;
            woken++;
            if (g->live == 0)
                continue;
            if (g->polling) {
                g->dirty = true;
                continue;
            }
            if (n == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                void *t = realloc(todo, ncap * sizeof *todo);
                if (!t) {
                    g->dirty = true; /* read at its next wake-up */
                    continue;
                }
                todo = t;
                cap = ncap;
            }
            gw_watch_read *rd = gw_watch__poll(w, g);
            if (rd)
                todo[n++] = rd;
        }
    pthread_mutex_unlock(&w->mu);
    for (size_t i = 0; i < n; i++)
        gw_watch__read(todo[i]);
    free(todo);
    return woken;
}

size_t gw_watch_close_all(gw_watch *w)
{
    size_t n = 0;
    pthread_mutex_lock(&w->mu);
    for (size_t b = 0; b < GW_WATCH_BUCKETS; b++) {
        gw_watch_game *g = w->games[b];
        while (g) {
            gw_watch_game *next = g->hnext;
            /* Ending the last observer may free g: stop at that one. */
            while (g) {
                gw_watcher *s = g->head;
                if (!s)
                    break;
                bool last = !s->next && !g->polling;
                gw_watch__end(w, s, GRPC_STATUS_UNAVAILABLE, "shutting_down",
                              "the gateway is restarting: watch again with after_seq");
                n++;
                if (last)
                    break;
            }
            g = next;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return n;
}

size_t gw_watch_count(gw_watch *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = w->observers;
    pthread_mutex_unlock(&w->mu);
    return n;
}

/* ---- the Edge actions -------------------------------------------- */

static void gw_watch__cancelled(rpc_call *call, void *arg)
{
    gw_watcher *s = arg; /* in the call's arena: valid until this returns */
    gw_watch *w = s->w;
    pthread_mutex_lock(&w->mu);
    gw_watch__unlink(w, s);
    pthread_mutex_unlock(&w->mu);
    rpc_call_finish(call, GRPC_STATUS_CANCELLED, NULL, "client went away");
}

void gw_watch_stream(gw_req *r)
{
    const Scrabble__V1__WatchRequest *in = (const Scrabble__V1__WatchRequest *)r->msg;
    gw_watch *w = r->gw->watch;
    const gw_config *cfg = &r->gw->cfg;
    if (in->game_id <= 0 || in->after_seq < 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "game_id must be positive and after_seq not negative");
        return;
    }
    gw_watcher *s = rpc_arena_calloc(rpc_call_arena(r->call), 1, sizeof *s);
    gw_watch_read *rd = NULL;
    if (!s) {
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    rpc_stream_set_limit(r->call, cfg->subscriber_queue);
    pthread_mutex_lock(&w->mu);
    if (gw_watch__acct_streams(w, r->who.account_id) >= cfg->max_watch_streams_per_account) {
        pthread_mutex_unlock(&w->mu);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "rate_limited",
                      "too many open watch streams for this account (at most %d)",
                      cfg->max_watch_streams_per_account);
        return;
    }
    gw_watch_game *g = gw_watch__game(w, in->game_id);
    if (g && g->observers >= cfg->max_observers_per_game) {
        pthread_mutex_unlock(&w->mu);
        metric_add(r->gw->m.observers_refused, 1);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "too_many_observers",
                      "game %lld already has %d observers on this gateway", (long long)in->game_id,
                      cfg->max_observers_per_game);
        return;
    }
    bool fresh = !g;
    if (fresh && (g = calloc(1, sizeof *g))) {
        g->game_id = in->game_id;
        size_t b = gw_watch__bucket(in->game_id);
        g->hnext = w->games[b];
        w->games[b] = g;
    }
    s->serial = ++w->next_serial;
    if (!g ||
        !(rd = gw_watch__new_read(w, in->game_id, s->serial, in->after_seq, r->who.account_id)) ||
        gw_watch__acct_add(w, r->who.account_id, 1) == 0) {
        if (g && fresh)
            gw_watch__game_release(w, g);
        pthread_mutex_unlock(&w->mu);
        free(rd);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    s->w = w;
    s->game = g;
    s->call = r->call;
    s->account_id = r->who.account_id;
    s->cursor = in->after_seq;
    s->state = GW_WATCHER_READING;
    /* Joined before its first read (the seam: watch.h). */
    s->prev = g->tail;
    if (g->tail)
        g->tail->next = s;
    else
        g->head = s;
    g->tail = s;
    s->linked = true;
    g->observers++;
    w->observers++;
    metric_add(r->gw->m.observers, 1);
    /* The cancel callback runs on this call's worker (this thread), so
     * not before this handler returns. */
    rpc_call_on_cancel(r->call, gw_watch__cancelled, s);
    pthread_mutex_unlock(&w->mu);
    gw_watch__read(rd);
}

void gw_watch_list_public(gw_req *r)
{
    const Scrabble__V1__PublicGameListRequest *in =
        (const Scrabble__V1__PublicGameListRequest *)r->msg;
    if (in->page_size < 0 || in->page_size > 100) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "page_size must be 0..100");
        return;
    }
    gw_store_call(r, GW_STORE(ListPublicGames), r->msg,
                  &scrabble__v1__public_game_list_reply__descriptor, gw_store_relay);
}

/*
 * subscribe.c — the Subscribe registry, the per-stream replay and catch-up
 * (see subscribe.h), and the Subscribe handler.
 *
 * Locking: a stream's fields are guarded by its shard's mutex. Messages are
 * queued on a stream (rpc_stream_send, thread-safe and non-blocking) under
 * that mutex, so the replay and live delivery of one stream never
 * interleave. ReadEvents calls are started after the mutex is dropped.
 */
#include "subscribe.h"

#include "gateway.h"
#include "rpc/log.h"
#include "scrabble/v1/store.pb-c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GW_SUBS_SHARDS 64    /* power of two */
#define GW_SUBS_BUCKETS 4096 /* per shard, power of two */
/* Events per ReadEvents page: a quarter of the default stream queue, so a
 * page fits in the queue of a client that keeps up. */
#define GW_SUBS_PAGE 64

typedef struct gw_subs_shard {
    pthread_mutex_t mu;
    gw_sub *buckets[GW_SUBS_BUCKETS];
} gw_subs_shard;

struct gw_subs {
    int max_per_account;
    gw_ctx *gw;
    atomic_uint_fast64_t next_serial;
    gw_subs_shard shards[GW_SUBS_SHARDS];
};

/* A read in flight: the stream it is for, by name (see subscribe.h).
 * malloc'd by whoever starts the read, freed by its callback. */
typedef struct gw_subs_read {
    gw_subs *subs;
    int64_t account_id;
    uint64_t serial;
} gw_subs_read;

static uint64_t gw_subs__hash(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 29);
}

gw_subs *gw_subs_create(int max_per_account, gw_ctx *gw)
{
    gw_subs *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->max_per_account = max_per_account;
    s->gw = gw;
    for (int i = 0; i < GW_SUBS_SHARDS; i++)
        pthread_mutex_init(&s->shards[i].mu, NULL);
    return s;
}

void gw_subs_destroy(gw_subs *s)
{
    if (!s)
        return;
    for (int i = 0; i < GW_SUBS_SHARDS; i++)
        pthread_mutex_destroy(&s->shards[i].mu);
    free(s);
}

static gw_subs_shard *gw_subs__shard(gw_subs *s, int64_t account_id, gw_sub ***bucket)
{
    uint64_t h = gw_subs__hash(account_id);
    gw_subs_shard *sh = &s->shards[h & (GW_SUBS_SHARDS - 1)];
    *bucket = &sh->buckets[(h >> 6) & (GW_SUBS_BUCKETS - 1)];
    return sh;
}

/* Unlinks the stream (shard lock held): from now on nothing touches its
 * call or its record. */
static void gw_subs__unlink(gw_subs *s, gw_sub **bucket, gw_sub *sub)
{
    if (!sub->linked)
        return;
    if (sub->prev)
        sub->prev->next = sub->next;
    else
        *bucket = sub->next;
    if (sub->next)
        sub->next->prev = sub->prev;
    sub->prev = sub->next = NULL;
    sub->linked = false;
    metric_add(s->gw->m.subscribers, -1);
}

/* Finishes the stream with a status that tells the client to resume
 * (shard lock held). sub may be freed on return: touch it no more. */
static void gw_subs__end(gw_subs *s, gw_sub **bucket, gw_sub *sub, grpc_status_code code,
                         const char *reason, const char *msg)
{
    if (!sub->linked)
        return;
    /* Unlinked first: a call that has already closed is freed inside
     * rpc_call_finish, and the record with it (it lives in the arena). */
    rpc_call *call = sub->call;
    gw_subs__unlink(s, bucket, sub);
    rpc_call_finish(call, code, reason, "%s", msg);
}

/* Queues one event on the stream (shard lock held). false: the stream was
 * ended (too slow, or closed under us). */
static bool gw_subs__send(gw_subs *s, gw_sub **bucket, gw_sub *sub, const Scrabble__V1__Event *e)
{
    int rc = rpc_stream_send(sub->call, &e->base);
    if (rc == RPC_OK)
        return true;
    if (rc == RPC_EFULL) {
        /* Cut it off rather than let its backlog grow: the client resumes
         * from the last event it got and reads the rest from the log. */
        log_info("slow_consumer", "account=%lld", (long long)sub->account_id);
        metric_add(s->gw->m.slow_consumers, 1);
        gw_subs__end(s, bucket, sub, GRPC_STATUS_RESOURCE_EXHAUSTED, "slow_consumer",
                     "event stream fell too far behind: subscribe again with after_event_id");
    } else {
        gw_subs__unlink(s, bucket, sub); /* ended under us */
    }
    return false;
}

/* ---- reads from the log ------------------------------------------ */

static void gw_subs__read_done(void *arg, const rpc_status *st, ProtobufCMessage *reply);

/* Starts a ReadEvents for the stream rd names, after `after`. Called
 * without the shard lock; rd is taken over. */
static void gw_subs__read(gw_subs_read *rd, int64_t after)
{
    Scrabble__V1__ReadEventsRequest req = SCRABBLE__V1__READ_EVENTS_REQUEST__INIT;
    req.account_id = rd->account_id;
    req.after_id = after;
    /* A page fits in half the stream's queue, so a client that keeps up
     * is never cut off by its own replay. */
    int half = rd->subs->gw->cfg.subscriber_queue / 2;
    req.limit = half < 1 ? 1 : half < GW_SUBS_PAGE ? half : GW_SUBS_PAGE;
    rpc_client_opts opts = {.timeout_ms = rd->subs->gw->cfg.downstream_timeout_ms};
    if (rpc_client_unary(rd->subs->gw->store, "/scrabble.v1.Store/ReadEvents", &req.base,
                         &scrabble__v1__read_events_reply__descriptor, &opts, gw_subs__read_done,
                         rd) != RPC_OK) {
        rpc_status fail;
        rpc_status_set(&fail, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
        gw_subs__read_done(rd, &fail, NULL);
    }
}

/* A read for sub (shard lock held), or NULL on OOM (the stream is then
 * ended: it cannot catch up, so it must not stay open looking live). */
static gw_subs_read *gw_subs__new_read(gw_subs *s, gw_sub **bucket, gw_sub *sub)
{
    gw_subs_read *rd = malloc(sizeof *rd);
    if (!rd) {
        gw_subs__end(s, bucket, sub, GRPC_STATUS_UNAVAILABLE, "unavailable",
                     "out of memory: subscribe again with after_event_id");
        return NULL;
    }
    rd->subs = s;
    rd->account_id = sub->account_id;
    rd->serial = sub->serial;
    return rd;
}

static void gw_subs__read_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_subs_read *rd = arg;
    gw_subs *s = rd->subs;
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, rd->account_id, &bucket);
    int64_t after = 0;
    pthread_mutex_lock(&sh->mu);
    gw_sub *sub = *bucket;
    while (sub && !(sub->account_id == rd->account_id && sub->serial == rd->serial))
        sub = sub->next;
    if (!sub)
        goto done; /* the client left, or the stream was ended */
    if (st->code != GRPC_STATUS_OK) {
        if (st->code == GRPC_STATUS_OUT_OF_RANGE || st->code == GRPC_STATUS_INVALID_ARGUMENT) {
            gw_subs__end(s, bucket, sub, st->code, st->reason, st->message);
        } else {
            /* The log cannot be read now: end the stream, never leave it
             * silently behind; the client resumes from its last id. */
            log_warn("subscribe_read_failed", "account=%lld code=%s reason=%s",
                     (long long)sub->account_id, rpc_status_code_name(st->code), st->reason);
            gw_subs__end(s, bucket, sub, GRPC_STATUS_UNAVAILABLE, "unavailable",
                         "the event log is unavailable: subscribe again with after_event_id");
        }
        goto done;
    }
    const Scrabble__V1__ReadEventsReply *r = (const Scrabble__V1__ReadEventsReply *)reply;
    if (sub->cursor < 0)
        sub->cursor = r->latest_event_id; /* a fresh stream starts at "now" */
    int sent = 0;
    for (size_t i = 0; i < r->n_events; i++) {
        int64_t id;
        if (gw_event_id_parse(r->events[i]->event_id, &id) != 0 || id <= sub->cursor)
            continue;
        if (!gw_subs__send(s, bucket, sub, r->events[i]))
            goto done;
        sub->cursor = id;
        sent++;
    }
    if (sent)
        metric_add(s->gw->m.events_replayed, sent);
    if (r->more || sub->dirty) {
        sub->dirty = false;
        after = sub->cursor;
        pthread_mutex_unlock(&sh->mu);
        gw_subs__read(rd, after); /* rd goes on to the next page */
        return;
    }
    if (sub->state == GW_SUB_READING && !sub->began) {
        /* Headers go once the stream is caught up: a client that has them
         * knows every later event will reach it. */
        rpc_stream_begin(sub->call);
        sub->began = true;
    }
    sub->state = GW_SUB_LIVE;
done:
    pthread_mutex_unlock(&sh->mu);
    free(rd);
}

/* ---- live delivery ----------------------------------------------- */

int gw_subs_deliver(gw_subs *s, int64_t account_id, int64_t id, const Scrabble__V1__Event *e)
{
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, account_id, &bucket);
    int delivered = 0;
    pthread_mutex_lock(&sh->mu);
    gw_sub *p = *bucket;
    while (p) {
        gw_sub *next = p->next;
        if (p->account_id == account_id) {
            if (p->state == GW_SUB_READING) {
                p->dirty = true; /* the read in flight may predate it */
            } else if (id <= p->cursor) {
                metric_add(s->gw->m.events_repeated, 1);
            } else if (gw_subs__send(s, bucket, p, e)) {
                p->cursor = id;
                delivered++;
            }
        }
        p = next;
    }
    pthread_mutex_unlock(&sh->mu);
    return delivered;
}

size_t gw_subs_catch_up_all(gw_subs *s)
{
    size_t started = 0;
    for (int i = 0; i < GW_SUBS_SHARDS; i++) {
        gw_subs_shard *sh = &s->shards[i];
        /* Switch the shard's LIVE streams to READING under the lock (each
         * read takes a reference), then start their reads without it. */
        size_t n = 0, cap = 0;
        struct {
            gw_subs_read *rd;
            int64_t after;
        } *todo = NULL;
        pthread_mutex_lock(&sh->mu);
        for (int b = 0; b < GW_SUBS_BUCKETS; b++)
            for (gw_sub *p = sh->buckets[b]; p; p = p->next) {
                if (p->state == GW_SUB_READING) {
                    p->dirty = true; /* its read will go round once more */
                    continue;
                }
                if (n == cap) {
                    size_t ncap = cap ? 2 * cap : 64;
                    void *t = realloc(todo, ncap * sizeof *todo);
                    if (!t) {
                        gw_subs__end(s, &sh->buckets[b], p, GRPC_STATUS_UNAVAILABLE, "unavailable",
                                     "out of memory: subscribe again with after_event_id");
                        break; /* p is unlinked: this bucket is done */
                    }
                    todo = t;
                    cap = ncap;
                }
                gw_subs_read *rd = gw_subs__new_read(s, &sh->buckets[b], p);
                if (!rd)
                    break;
                p->state = GW_SUB_READING;
                p->dirty = false;
                todo[n].rd = rd;
                todo[n].after = p->cursor;
                n++;
            }
        pthread_mutex_unlock(&sh->mu);
        for (size_t k = 0; k < n; k++)
            gw_subs__read(todo[k].rd, todo[k].after);
        started += n;
        free(todo);
    }
    if (started)
        metric_add(s->gw->m.catch_ups, (int64_t)started);
    return started;
}

size_t gw_subs_count(gw_subs *s)
{
    size_t n = 0;
    for (int i = 0; i < GW_SUBS_SHARDS; i++) {
        pthread_mutex_lock(&s->shards[i].mu);
        for (int b = 0; b < GW_SUBS_BUCKETS; b++)
            for (gw_sub *p = s->shards[i].buckets[b]; p; p = p->next)
                n++;
        pthread_mutex_unlock(&s->shards[i].mu);
    }
    return n;
}

void gw_subs_queued(gw_subs *s, size_t *total, size_t *max)
{
    size_t sum = 0, top = 0;
    for (int i = 0; i < GW_SUBS_SHARDS; i++) {
        pthread_mutex_lock(&s->shards[i].mu);
        /* A linked stream's call is usable (see subscribe.h). */
        for (int b = 0; b < GW_SUBS_BUCKETS; b++)
            for (gw_sub *p = s->shards[i].buckets[b]; p; p = p->next) {
                size_t n = (size_t)rpc_stream_queued(p->call);
                sum += n;
                if (n > top)
                    top = n;
            }
        pthread_mutex_unlock(&s->shards[i].mu);
    }
    *total = sum;
    *max = top;
}

size_t gw_subs_close_all(gw_subs *s)
{
    size_t n = 0;
    for (int i = 0; i < GW_SUBS_SHARDS; i++) {
        gw_subs_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->mu);
        for (int b = 0; b < GW_SUBS_BUCKETS; b++) {
            while (sh->buckets[b]) {
                gw_subs__end(s, &sh->buckets[b], sh->buckets[b], GRPC_STATUS_UNAVAILABLE,
                             "shutting_down",
                             "the gateway is restarting: subscribe again with after_event_id");
                n++;
            }
        }
        pthread_mutex_unlock(&sh->mu);
    }
    return n;
}

void gw_subs_close_all_cb(void *subs)
{
    gw_subs_close_all(subs);
}

/* ---- the Subscribe handler --------------------------------------- */

static void gw_subscribe__cancelled(rpc_call *call, void *arg)
{
    gw_sub *sub = arg; /* in the call's arena: valid until this returns */
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(sub->subs, sub->account_id, &bucket);
    pthread_mutex_lock(&sh->mu);
    gw_subs__unlink(sub->subs, bucket, sub);
    pthread_mutex_unlock(&sh->mu);
    rpc_call_finish(call, GRPC_STATUS_CANCELLED, NULL, "client went away");
}

void gw_subscribe(gw_req *r)
{
    const Scrabble__V1__SubscribeRequest *in = (const Scrabble__V1__SubscribeRequest *)r->msg;
    gw_subs *s = r->gw->subs;
    int64_t after;
    if (gw_event_id_parse(in->after_event_id, &after) != 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_event_id",
                      "after_event_id is not an event id this service issued");
        return;
    }
    gw_sub *sub = rpc_arena_calloc(rpc_call_arena(r->call), 1, sizeof *sub);
    gw_subs_read *rd = malloc(sizeof *rd);
    if (!sub || !rd) {
        free(rd);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    sub->call = r->call;
    sub->subs = s;
    sub->account_id = r->who.account_id;
    sub->serial = atomic_fetch_add(&s->next_serial, 1) + 1;
    sub->cursor = after;
    sub->state = GW_SUB_READING;
    rd->subs = s;
    rd->account_id = sub->account_id;
    rd->serial = sub->serial;
    rpc_stream_set_limit(r->call, r->gw->cfg.subscriber_queue);

    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, sub->account_id, &bucket);
    pthread_mutex_lock(&sh->mu);
    int n = 0;
    gw_sub *tail = NULL;
    for (gw_sub *p = *bucket; p; p = p->next) {
        if (p->account_id == sub->account_id)
            n++;
        tail = p;
    }
    if (n >= s->max_per_account) {
        pthread_mutex_unlock(&sh->mu);
        free(rd);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "rate_limited",
                      "too many open event streams for this account");
        return;
    }
    /* Linked before the first read (the seam: see subscribe.h); appended,
     * so delivery across one account's streams is in open order. */
    sub->prev = tail;
    if (tail)
        tail->next = sub;
    else
        *bucket = sub;
    sub->linked = true;
    metric_add(r->gw->m.subscribers, 1);
    /* The cancel callback runs on this call's worker (this thread), so
     * not before this handler returns. */
    rpc_call_on_cancel(r->call, gw_subscribe__cancelled, sub);
    pthread_mutex_unlock(&sh->mu);
    gw_subs__read(rd, after);
}

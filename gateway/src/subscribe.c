/*
 * subscribe.c — the Subscribe registry (see subscribe.h) and the Subscribe
 * handler.
 *
 * Lifetimes: a gw_sub lives in its call's arena, which the runtime frees
 * only after the call has ended and its cancel callback (if any) has
 * returned. The cancel callback takes the shard lock to unlink, so while the
 * events thread holds that lock every linked call is alive.
 */
#include "subscribe.h"

#include "gateway.h"

#include <pthread.h>
#include <stdlib.h>

#define GW_SUBS_SHARDS 64    /* power of two */
#define GW_SUBS_BUCKETS 4096 /* per shard, power of two */

typedef struct gw_subs_shard {
    pthread_mutex_t mu;
    gw_sub *buckets[GW_SUBS_BUCKETS];
} gw_subs_shard;

struct gw_subs {
    int max_per_account;
    gw_subs_ops ops;
    metric *subscribers, *slow;
    gw_subs_shard shards[GW_SUBS_SHARDS];
};

static void gw_subs__finish_runtime(rpc_call *call, grpc_status_code code, const char *reason,
                                    const char *msg)
{
    rpc_call_finish(call, code, reason, "%s", msg);
}

static uint64_t gw_subs__hash(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 29);
}

gw_subs *gw_subs_create(int max_per_account, const gw_subs_ops *ops, metric *subscribers,
                        metric *slow)
{
    gw_subs *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->max_per_account = max_per_account;
    if (ops) {
        s->ops = *ops;
    } else {
        s->ops.send = rpc_stream_send;
        s->ops.finish = gw_subs__finish_runtime;
    }
    s->subscribers = subscribers;
    s->slow = slow;
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

/* Caller holds the shard lock. */
static void gw_subs__unlink(gw_subs *s, gw_sub **bucket, gw_sub *sub)
{
    if (sub->prev)
        sub->prev->next = sub->next;
    else
        *bucket = sub->next;
    if (sub->next)
        sub->next->prev = sub->prev;
    sub->prev = sub->next = NULL;
    sub->linked = false;
    if (s->subscribers)
        metric_add(s->subscribers, -1);
}

int gw_subs_add(gw_subs *s, gw_sub *sub)
{
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, sub->account_id, &bucket);
    int rc = GW_SUBS_OK;
    pthread_mutex_lock(&sh->mu);
    if (sub->cancelled) {
        rc = GW_SUBS_GONE;
        goto out;
    }
    int n = 0;
    gw_sub *tail = NULL;
    for (gw_sub *p = *bucket; p; p = p->next) {
        if (p->account_id == sub->account_id)
            n++;
        tail = p;
    }
    if (n >= s->max_per_account) {
        rc = GW_SUBS_LIMIT;
        goto out;
    }
    /* Append: delivery order across one account's streams is open order. */
    sub->next = NULL;
    sub->prev = tail;
    if (tail)
        tail->next = sub;
    else
        *bucket = sub;
    sub->linked = true;
    if (s->subscribers)
        metric_add(s->subscribers, 1);
out:
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

bool gw_subs_remove(gw_subs *s, gw_sub *sub)
{
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, sub->account_id, &bucket);
    pthread_mutex_lock(&sh->mu);
    bool was = sub->linked;
    if (was)
        gw_subs__unlink(s, bucket, sub);
    sub->cancelled = true;
    pthread_mutex_unlock(&sh->mu);
    return was;
}

int gw_subs_deliver(gw_subs *s, int64_t account_id, const ProtobufCMessage *msg, int *slow_out)
{
    gw_sub **bucket;
    gw_subs_shard *sh = gw_subs__shard(s, account_id, &bucket);
    int delivered = 0, slow = 0;
    pthread_mutex_lock(&sh->mu);
    gw_sub *p = *bucket;
    while (p) {
        gw_sub *next = p->next;
        if (p->account_id == account_id) {
            int rc = s->ops.send(p->call, msg);
            if (rc == RPC_OK) {
                delivered++;
            } else if (rc == RPC_EFULL) {
                /* Cut it off rather than let its backlog grow: the client
                 * reconnects and catches up with GetState/GetHistory. */
                gw_subs__unlink(s, bucket, p);
                s->ops.finish(p->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "slow_consumer",
                              "event stream fell too far behind");
                slow++;
                if (s->slow)
                    metric_add(s->slow, 1);
            } else {
                gw_subs__unlink(s, bucket, p); /* ended under us */
            }
        }
        p = next;
    }
    pthread_mutex_unlock(&sh->mu);
    if (slow_out)
        *slow_out = slow;
    return delivered;
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

/* ---- the Subscribe handler --------------------------------------- */

static void gw_subscribe__cancelled(rpc_call *call, void *arg)
{
    gw_req *r = arg;
    gw_subs_remove(r->gw->subs, r->sub);
    rpc_call_finish(call, GRPC_STATUS_CANCELLED, NULL, "client went away");
}

size_t gw_subs_close_all(gw_subs *s)
{
    size_t n = 0;
    for (int i = 0; i < GW_SUBS_SHARDS; i++) {
        gw_subs_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->mu);
        for (int b = 0; b < GW_SUBS_BUCKETS; b++) {
            while (sh->buckets[b]) {
                gw_sub *sub = sh->buckets[b];
                gw_subs__unlink(s, &sh->buckets[b], sub);
                sub->cancelled = true;
                s->ops.finish(sub->call, GRPC_STATUS_UNAVAILABLE, "shutting_down",
                              "the gateway is restarting; subscribe again");
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

void gw_subscribe(gw_req *r)
{
    gw_sub *sub = rpc_arena_calloc(rpc_call_arena(r->call), 1, sizeof *sub);
    if (!sub) {
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    sub->call = r->call;
    sub->account_id = r->who.account_id;
    r->sub = sub;
    rpc_stream_set_limit(r->call, r->gw->cfg.subscriber_queue);
    /* Hook the cancel first: a cancel that lands before the add marks the
     * sub cancelled and the add then refuses it. */
    rpc_call_on_cancel(r->call, gw_subscribe__cancelled, r);
    int rc = gw_subs_add(r->gw->subs, sub);
    if (rc == GW_SUBS_LIMIT)
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "rate_limited",
                      "too many open event streams for this account");
    else if (rc == GW_SUBS_OK)
        rpc_stream_begin(r->call); /* the client learns at once that it is subscribed */
    /* GW_SUBS_GONE: the cancel callback already finished the call. The
     * stream otherwise stays open until the client cancels. */
}

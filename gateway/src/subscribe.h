/*
 * subscribe.h — the Subscribe streams of this gateway: a registry (account
 * id -> its open streams) and, per stream, a cursor into the account's
 * durable event log (store-svc, ReadEvents).
 *
 * A stream is in one of two states:
 *   READING  a ReadEvents is in flight (the replay after after_event_id,
 *            or a catch-up); live events for it are not sent, they only
 *            mark it dirty, and a dirty stream reads again from its cursor
 *            when the read returns;
 *   LIVE     live events from Redis are sent when their id is above the
 *            cursor (repeats are dropped), and the cursor follows.
 * Why this closes the seam with no gap and no reorder: the stream is
 * registered before its first read, so every event committed after that
 * read's snapshot either arrives live while the stream is READING (it marks
 * it dirty: read again) or after it is LIVE (sent in order, since the relay
 * publishes in id order over one connection). Whenever the gateway's Redis
 * subscription comes back (events.h), every stream is set READING and
 * catches up from its cursor, so pub/sub messages lost while the link was
 * down are read from the log instead.
 *
 * Layout: a fixed array of buckets (hash of the account id), each a doubly
 * linked list of subscribers, in shards under one mutex each; each stream's
 * state is guarded by its shard's mutex. A subscriber record lives in its
 * call's arena and is in the registry exactly while its call is usable: it
 * is unlinked under the shard lock by the cancel callback (the call is
 * still valid then) or when the gateway ends the stream itself. A read in
 * flight holds no pointer to it: it names the stream by (account, serial)
 * and finds it in the registry when it returns, or finds it gone.
 */
#ifndef GW_SUBSCRIBE_H
#define GW_SUBSCRIBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_id.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "scrabble/v1/common.pb-c.h"

typedef struct gw_subs gw_subs;
typedef struct gw_ctx gw_ctx;

enum { GW_SUB_READING = 0, GW_SUB_LIVE = 1 };

typedef struct gw_sub {
    struct gw_sub *prev, *next;
    gw_subs *subs; /* the registry (outlives every stream) */
    rpc_call *call;
    int64_t account_id;
    uint64_t serial; /* names the stream to its reads */
    int64_t cursor;  /* the last event id sent or skipped; -1: not known yet */
    int state;       /* GW_SUB_* */
    bool linked;     /* in the registry: the call is usable */
    bool dirty;      /* something may have been missed while READING */
    bool began;      /* response headers sent (after the first read) */
} gw_sub;

/* The registry. max_per_account bounds the streams of one account. NULL on
 * OOM. gw gives the store channel and metrics to the reads. */
gw_subs *gw_subs_create(int max_per_account, gw_ctx *gw);
void gw_subs_destroy(gw_subs *s);

/* Hands a live event (its event_id parsed into id) to the account's
 * streams. Returns how many streams were sent it. */
int gw_subs_deliver(gw_subs *s, int64_t account_id, int64_t id, const Scrabble__V1__Event *e);

/* Every stream catches up from the log (the Redis subscription was (re)made:
 * messages may have been lost). Returns how many streams started a read. */
size_t gw_subs_catch_up_all(gw_subs *s);

size_t gw_subs_count(gw_subs *s);

/* Messages queued on this gateway's streams and not yet written: *total
 * over every stream, *max the fullest one's (compare with
 * --subscriber-queue: a stream at it is cut off as a slow consumer).
 * Walks the registry under each shard's lock (for the metrics watchdog). */
void gw_subs_queued(gw_subs *s, size_t *total, size_t *max);

/* Ends every stream with UNAVAILABLE shutting_down (the gateway is
 * draining). Returns how many were ended. */
size_t gw_subs_close_all(gw_subs *s);
/* The same, shaped as an rpc_server_on_drain callback (arg: the gw_subs). */
void gw_subs_close_all_cb(void *subs);

#endif

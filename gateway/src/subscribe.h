/*
 * subscribe.h — the registry of open Subscribe streams: account id -> the
 * streams open for it on this gateway. The events thread delivers through
 * it; the Subscribe handler adds streams; a client that goes away is
 * unhooked by its cancel callback.
 *
 * Layout: a fixed array of buckets (hash of the account id), each a doubly
 * linked list of subscribers, in shards under one mutex each. A subscriber
 * record lives in its call's arena, so the registry itself never allocates
 * or frees per stream.
 */
#ifndef GW_SUBSCRIBE_H
#define GW_SUBSCRIBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/metrics.h"
#include "rpc/rpc.h"

typedef struct gw_subs gw_subs;

typedef struct gw_sub {
    struct gw_sub *prev, *next;
    rpc_call *call;
    int64_t account_id;
    bool linked;    /* in the registry (guarded by the shard lock) */
    bool cancelled; /* the client went away (guarded by the shard lock) */
} gw_sub;

/* The stream primitives the registry drives; the runtime's by default,
 * replaceable in unit tests. */
typedef struct gw_subs_ops {
    int (*send)(rpc_call *call, const ProtobufCMessage *msg);
    void (*finish)(rpc_call *call, grpc_status_code code, const char *reason, const char *msg);
} gw_subs_ops;

/* max_per_account bounds the streams of one account. `subscribers`,
 * `slow` may be NULL (metrics). NULL on OOM. */
gw_subs *gw_subs_create(int max_per_account, const gw_subs_ops *ops, metric *subscribers,
                        metric *slow);
void gw_subs_destroy(gw_subs *s);

enum { GW_SUBS_OK = 0, GW_SUBS_LIMIT = -2, GW_SUBS_GONE = -3 };

/* Links sub (call and account_id set, other fields zero). GW_SUBS_LIMIT:
 * the account has max_per_account streams; GW_SUBS_GONE: sub was already
 * cancelled. */
int gw_subs_add(gw_subs *s, gw_sub *sub);

/* Unlinks sub if linked and marks it cancelled. Returns whether it was
 * linked. */
bool gw_subs_remove(gw_subs *s, gw_sub *sub);

/* Queues msg on every stream of account_id, in registry order. A stream
 * whose queue is full is ended RESOURCE_EXHAUSTED slow_consumer and
 * unlinked; one already closed is unlinked. Returns the number of streams
 * that took the message. */
int gw_subs_deliver(gw_subs *s, int64_t account_id, const ProtobufCMessage *msg, int *slow_out);

size_t gw_subs_count(gw_subs *s);

/* Ends every stream with UNAVAILABLE shutting_down and unlinks it (the
 * gateway is draining). Returns how many were ended. */
size_t gw_subs_close_all(gw_subs *s);
/* The same, shaped as an rpc_server_on_drain callback (arg: the gw_subs). */
void gw_subs_close_all_cb(void *subs);

#endif

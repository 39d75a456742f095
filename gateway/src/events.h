/*
 * events.h — the gateway's one Redis subscriber: a thread with a blocking
 * rpc/redis.h connection (ACL user `subscriber`, authenticated on every
 * reconnect) doing PSUBSCRIBE ev:* and handing each event to the
 * local Subscribe streams of its account (subscribe.h).
 *
 * Why one pattern subscription per gateway and not a SUBSCRIBE per account:
 * at tens of thousands of streams per gateway, per-account subscriptions
 * mean a Redis round-trip on every stream open and close, a subscription
 * set to rebuild after every reconnect, and a second bookkeeping structure
 * that must agree with the stream registry under races (a stream closing
 * while its SUBSCRIBE is in flight). With PSUBSCRIBE every gateway sees
 * every event and drops those with no local stream: the extra cost is one
 * hash lookup per event per gateway, and events are few (a handful per
 * move across the whole system) while gateways are 1..N. Past a few
 * gateways times thousands of events per second, shard the channels
 * (ev:<shard>:<account>) and subscribe each gateway to its shards.
 */
#ifndef GW_EVENTS_H
#define GW_EVENTS_H

#include "rpc/metrics.h"
#include "subscribe.h"

typedef struct gw_events gw_events;
struct gw_watch;

/* Starts the subscriber thread on redis_addr ("host:port"), with the ACL
 * passwords in redis_secrets (empty: no AUTH); it connects, and reconnects
 * with rpc/redis.h's backoff (100 ms doubling to 1 s) for as long as it
 * runs. `delivered`, `unrouted` may be NULL. NULL on error (logged). */
gw_events *gw_events_start(const char *redis_addr, const char *redis_secrets, gw_subs *subs,
                           metric *delivered, metric *unrouted);
/* Also wakes the game's observers (watch.h) with every game event, and
 * every watched game when the subscription is (re)made. Set once, before
 * the server starts. NULL: none. */
void gw_events_set_watch(gw_events *ev, struct gw_watch *watch);
/* Stops the thread (wakes its blocking read) and frees. */
void gw_events_stop(gw_events *ev);
/* true while subscribed (for health and tests). */
bool gw_events_connected(gw_events *ev);

#endif

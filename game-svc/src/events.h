/*
 * events.h — fire-and-forget Redis writes: draft deletions after a turn.
 * (Events are no longer published here: they are written to the durable
 * event log with the store write they announce, and store-svc relays them:
 * event_log.h.)
 *
 * Gameplay never waits on Redis: callers only enqueue into a bounded queue
 * (a mutex held for a pointer swap); one thread drains it over one
 * rpc/redis.h connection as ACL user `drafts`. When Redis is down or the
 * queue is full the item is dropped and counted (game_events_dropped_total).
 */
#ifndef GAME_EVENTS_H
#define GAME_EVENTS_H

#include <stdint.h>

#include "rpc/metrics.h"
#include "scrabble/v1/common.pb-c.h"

typedef struct game_events game_events;

/* Starts the thread for Redis at addr ("host:port"), with the ACL password
 * in secrets_dir (see rpc/redis.h; empty: no AUTH). NULL on error. Free
 * with game_events_stop. */
game_events *game_events_start(const char *addr, const char *secrets_dir, int queue_limit,
                               metrics_registry *reg);
/* Flushes what it can within ~1 s, stops the thread, frees everything. */
void game_events_stop(game_events *ev);

/* Queues DEL of the draft of (game_id, account_id). Thread-safe, never
 * blocks. */
void game_events_del_draft(game_events *ev, int64_t game_id, int64_t account_id);

#endif

/*
 * events.h — fire-and-forget Redis writes: live events (PUBLISH
 * ev:<account_id> <packed scrabble.v1.Event>). Draft deletions are the
 * drafts module's (drafts.h), retried until done.
 *
 * Gameplay never waits on Redis: callers only enqueue into a bounded queue
 * (a mutex held for a pointer swap); one publisher thread drains it over
 * an rpc/redis.h connection as the ACL user `publisher`. When Redis is
 * down or the queue is full the item is dropped and counted (game_events_dropped_total): events are
 * a live convenience, clients resynchronise from GetState / GetHistory.
 */
#ifndef GAME_EVENTS_H
#define GAME_EVENTS_H

#include <stdint.h>

#include "rpc/metrics.h"
#include "scrabble/v1/common.pb-c.h"

typedef struct game_events game_events;

/* Starts the publisher thread for Redis at addr ("host:port"), with the ACL
 * passwords in secrets_dir (see rpc/redis.h; empty: no AUTH). NULL on error.
 * Free with game_events_stop. */
game_events *game_events_start(const char *addr, const char *secrets_dir, int queue_limit,
                               metrics_registry *reg);
/* Flushes what it can within ~1 s, stops the thread, frees everything. */
void game_events_stop(game_events *ev);

/* Packs `e` and queues PUBLISH ev:<account_id>. Thread-safe, never blocks. */
void game_events_publish(game_events *ev, int64_t account_id, const Scrabble__V1__Event *e);

/* Items published so far (tests). */
uint64_t game_events_published(game_events *ev);

#endif

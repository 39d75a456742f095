/*
 * event_log.h — the events game-svc writes to the durable per-account
 * event log (store-svc, migration 0004), as scrabble.v1.EventRecord lists
 * that ride in the store request that commits what they announce
 * (CommitMove, AppendChat) or in an AppendEvents of their own (nudges,
 * game starts). store-svc assigns the ids and relays the events to Redis;
 * game-svc publishes nothing itself, so no crash of game-svc between a
 * COMMIT and a publish can lose an event.
 */
#ifndef GAME_EVENT_LOG_H
#define GAME_EVENT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "rpc/arena.h"
#include "scrabble/v1/store.pb-c.h"

/* At most this many records per list (the store's bound too). */
#define GAME_EVENT_LIST_MAX 16

typedef struct game_event_list {
    Scrabble__V1__EventRecord **v; /* in the arena */
    size_t n;
} game_event_list;

/* Packs e into the arena as a record for account_id, with an optional
 * dedupe_key (NULL: none; copied). Returns 0, or -1 on OOM or a full list
 * (the list is unchanged). */
int game_event_add(rpc_arena *a, game_event_list *l, int64_t account_id,
                   const Scrabble__V1__Event *e, const char *dedupe_key);

#endif

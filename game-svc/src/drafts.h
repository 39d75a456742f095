/*
 * drafts.h — players' drafts in Redis: key draft:<game_id>:<account_id>,
 * value a packed scrabble.v1.Draft, TTL 7 days.
 *
 * A small pool of synchronous connections (rpc/redis.h, ACL user `drafts`),
 * one slot per worker thread plus one for everyone else, each with its own
 * mutex. Connect and command timeouts are 200 ms, and after a failure a
 * slot waits out rpc/redis.h's backoff (100 ms doubling to 1 s) before it
 * reconnects: with Redis down a draft call fails UNAVAILABLE
 * drafts_unavailable at once (or within 200 ms), and nothing else waits.
 */
#ifndef GAME_DRAFTS_H
#define GAME_DRAFTS_H

#include <stddef.h>
#include <stdint.h>

#include "rpc/arena.h"
#include "scrabble/v1/common.pb-c.h"

#define GAME_DRAFT_TTL_S (7 * 24 * 3600)

enum { GAME_DRAFTS_OK = 0, GAME_DRAFTS_UNAVAILABLE = -1, GAME_DRAFTS_CORRUPT = -2 };

typedef struct game_drafts game_drafts;

/* Redis at addr ("host:port"), ACL passwords in secrets_dir (empty: no
 * AUTH). NULL on a bad address or OOM. Free with game_drafts_destroy. */
game_drafts *game_drafts_create(const char *addr, const char *secrets_dir, int slots);
void game_drafts_destroy(game_drafts *d);

/* SET draft:<game>:<account> with the TTL. */
int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft);
/* GET; *out is decoded into `arena` (NULL when no draft is stored). */
int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, rpc_arena *arena,
                    Scrabble__V1__Draft **out);

#endif

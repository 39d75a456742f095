/*
 * drafts.h — players' drafts in Redis: key draft:<game_id>:<account_id>,
 * value a packed scrabble.v1.Draft, TTL 7 days.
 *
 * A small pool of synchronous hiredis connections, one slot per worker
 * thread plus one for everyone else, each with its own mutex. Connect and
 * command timeouts are 200 ms, and after a failure a slot does not try to
 * reconnect for 1 s: with Redis down a draft call fails UNAVAILABLE
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

/* NULL on OOM. Free with game_drafts_destroy. */
game_drafts *game_drafts_create(const char *host, int port, int slots);
void game_drafts_destroy(game_drafts *d);

/* SET draft:<game>:<account> with the TTL. */
int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft);
/* GET; *out is decoded into `arena` (NULL when no draft is stored). */
int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, rpc_arena *arena,
                    Scrabble__V1__Draft **out);
/* The key of a draft, into buf (64 bytes is enough). */
void game_drafts_key(char *buf, size_t len, int64_t game_id, int64_t account_id);

#endif

/*
 * drafts.h — players' drafts in Redis: key draft:<game_id>:<account_id>
 * (rpc_redis_draft_key), value a packed scrabble.v1.Draft, TTL 7 days.
 *
 * No gRPC worker ever waits on Redis. One drafts thread owns the one
 * connection (rpc/redis.h, ACL user `drafts`: AUTH on every connect, its
 * reconnect policy, a stale connection retried once); SaveDraft and
 * GetDraft queue a job and return, and the thread runs the command (jobs
 * queued together share one pipelined round trip) and calls
 * the job's callback, which finishes the gRPC call (the runtime lets a call
 * be finished later from any thread, as a turn is finished from the store's
 * reply). A command is bounded by a 500 ms timeout; while rpc/redis.h waits
 * out its backoff after a failure, jobs fail at once (UNAVAILABLE): nothing
 * queues for long behind a dead or hung Redis, and Evaluate never does.
 *
 * Deletion after a committed turn (game_drafts_delete) is owed until Redis
 * confirms it: the key goes into a set (delset.h) that the thread flushes
 * with multi-key DELs, retrying after each failure when the connection's
 * backoff allows. While a key is owed a delete, GetDraft answers it empty
 * without asking Redis, and a successful SaveDraft of it (a draft for the
 * next turn) settles the debt. The set is bounded (GAME_DRAFTS_DELETES_MAX);
 * past it, or at shutdown, a delete is dropped and counted, and the key's
 * TTL removes the draft instead.
 *
 * Jobs are done in the order they were queued, so a player's own calls
 * (save, then get; a commit's delete, then the next save) never overtake
 * each other.
 */
#ifndef GAME_DRAFTS_H
#define GAME_DRAFTS_H

#include <stddef.h>
#include <stdint.h>

#include "rpc/metrics.h"
#include "scrabble/v1/common.pb-c.h"

#define GAME_DRAFT_TTL_S (7 * 24 * 3600)
/* Owed deletions kept for retry (16 bytes each in the set). */
#define GAME_DRAFTS_DELETES_MAX 100000
/* SaveDraft / GetDraft jobs waiting for the thread; more: UNAVAILABLE. */
#define GAME_DRAFTS_QUEUE_MAX 4096

enum {
    GAME_DRAFTS_OK = 0,
    GAME_DRAFTS_UNAVAILABLE = -1, /* Redis unreachable, refused, or the queue is full */
    GAME_DRAFTS_EXPIRED = -2,     /* the call's deadline passed while the job waited */
};

typedef struct game_drafts game_drafts;

/* A job's completion, on the drafts thread. For a get, value/len are the
 * stored bytes (NULL when there is no draft), valid only during the
 * callback; for a save, NULL. */
typedef void (*game_drafts_cb)(void *arg, int rc, const uint8_t *value, size_t len);

/* Starts the drafts thread for Redis at addr ("host:port"), ACL passwords
 * in secrets_dir (empty: no AUTH); metrics into reg (may be NULL). NULL on a
 * bad address, a missing password file or OOM. Stop with game_drafts_stop
 * once no call can queue a job any more (after the server has drained). */
game_drafts *game_drafts_start(const char *addr, const char *secrets_dir, metrics_registry *reg);
/* Runs what is queued, tries the owed deletes once more, stops the
 * thread, frees everything. */
void game_drafts_stop(game_drafts *d);

/* Queues SET draft:<game>:<account> with the TTL (the draft is packed
 * now). timeout_ms: how long the job may wait for the thread (the call's
 * remaining time, rpc_call_remaining_ms; INT64_MAX: no limit); a job whose
 * time is up when the thread reaches it gets GAME_DRAFTS_EXPIRED. GAME_DRAFTS_OK when queued: cb
 * will be called exactly once. GAME_DRAFTS_UNAVAILABLE when not (queue full, stopping, OOM): cb is
 * not called. Thread-safe, never blocks. */
int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft, int64_t timeout_ms, game_drafts_cb cb,
                     void *arg);
/* Queues GET of the draft; same contract. */
int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, int64_t timeout_ms,
                    game_drafts_cb cb, void *arg);
/* Queues the deletion of the draft, retried until Redis confirms it (see
 * above). Thread-safe, never blocks. */
void game_drafts_delete(game_drafts *d, int64_t game_id, int64_t account_id);

#endif

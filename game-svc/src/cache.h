/*
 * cache.h — the live-game cache: game id -> entry, LRU by a memory budget.
 *
 * Concurrency design (why a per-entry mutex rather than routing each game to
 * one worker): the runtime hands a call to whichever worker polled its
 * connection, and one gateway connection carries calls for many games, so
 * "one game, one thread" would need a cross-thread hand-off queue per worker
 * (an extra wake-up and a context switch on every Evaluate). A mutex held for
 * a few microseconds per call is cheaper and simpler. What must not run
 * twice at once is a *turn*, which spans an asynchronous CommitMove round
 * trip: that is serialised with the entry's state (GAME_ENTRY_COMMITTING)
 * and its queue of waiting operations, not by holding the mutex across I/O. Nothing blocks
 * while holding an entry's mutex.
 *
 * Lock order: entry->mu, then the cache lock. game_cache_release must be
 * called without holding entry->mu (an entry whose last reference goes may be
 * evicted and its mutex destroyed at once).
 *
 * Memory: the cache owns its entries (malloc) and their move history; an
 * entry is freed on eviction, on game_cache_remove + last release, or by
 * game_cache_destroy.
 */
#ifndef GAME_CACHE_H
#define GAME_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "rules.h"

struct game_op;

/* Where an entry is in its life, and so what may run on it. Reads (every
 * operation but a turn) run in any state but LOADING and DEAD; a turn runs
 * only in READY, with no operation queued before it; a store write (a
 * CommitMove, a TimeoutGame) starts only from READY. The one test of "may a
 * turn run now" is game_entry_turns_open(). */
typedef enum game_entry_state {
    GAME_ENTRY_LOADING = 0, /* cold load in flight: everything waits */
    GAME_ENTRY_READY,       /* resident, nothing in flight: everything runs */
    GAME_ENTRY_COMMITTING,  /* a CommitMove or TimeoutGame in flight: turns wait */
    GAME_ENTRY_STALE,       /* a write failed: the next turn reloads from the store first */
    GAME_ENTRY_RELOADING,   /* that reload is in flight: turns wait, reads go on */
    GAME_ENTRY_DEAD,        /* the load failed: out of the table, freed at the last release */
} game_entry_state;

typedef struct game_entry {
    int64_t game_id;
    pthread_mutex_t mu; /* guards everything below but the cache-owned part */
    game_entry_state state;
    game_state g;
    game_move *moves; /* history: moves[i].seq == i + 1; malloc'd, cache frees */
    size_t nmoves, cap;
    char lexicon[32];
    int64_t invitation_id;
    int64_t created_at_ms, updated_at_ms;
    bool rated;                            /* invited as rated (GameRecord.rated) */
    bool public_game;                      /* observers may watch (GameRecord.public_game) */
    int64_t last_nudge_ms[GAME_MAX_SEATS]; /* by nudger seat */
    game_clock clock;                      /* as of the last commit (clock.h) */
    struct game_op *wait_head, *wait_tail; /* FIFO of operations waiting */

    /* Owned by the cache, under its lock. */
    int refs;
    bool in_table;
    size_t bytes;
    struct game_entry *hnext, *lru_prev, *lru_next;
} game_entry;

/* True when a turn may run on e now (e->mu held): READY and nobody queued. */
static inline bool game_entry_turns_open(const game_entry *e)
{
    return e->state == GAME_ENTRY_READY && !e->wait_head;
}

typedef struct game_cache game_cache;

typedef struct game_cache_stats {
    size_t entries;
    size_t bytes;
    uint64_t hits, misses, evictions;
} game_cache_stats;

/* A cache holding at most budget_bytes of entries (idle ones beyond it are
 * evicted, least recently used first). NULL on OOM. */
game_cache *game_cache_create(size_t budget_bytes);
/* Frees every entry; no reference may be outstanding. */
void game_cache_destroy(game_cache *c);

/* Returns the entry for id with one more reference, creating it in state
 * LOADING (and *created = true) when absent. NULL on OOM. */
game_entry *game_cache_acquire(game_cache *c, int64_t id, bool *created);
/* Drops one reference; must not hold e->mu. May evict. */
void game_cache_release(game_cache *c, game_entry *e);
/* Takes the entry out of the table (it is freed at its last release); a
 * later acquire of the same id creates a fresh entry. Safe under e->mu. */
void game_cache_remove(game_cache *c, game_entry *e);
/* Appends a move to e's history (under e->mu) and re-accounts its memory.
 * Returns 0, -1 on OOM. */
int game_cache_append_move(game_cache *c, game_entry *e, const game_move *m);
/* Moves e to the cold end of the LRU (a finished game goes first). */
void game_cache_demote(game_cache *c, game_entry *e);
void game_cache_stats_get(game_cache *c, game_cache_stats *out);

#endif

/*
 * ratelimit.h — per-account token buckets, one per method class.
 *
 * A bucket holds up to `burst` tokens and refills at `rate` tokens per
 * second; a call takes one token or is rejected. The table is sharded by
 * account id, each shard a small open-addressing hash under its own mutex,
 * so a check is one hash, one uncontended lock and a few arithmetic
 * operations: a rejection costs well under a microsecond and allocates
 * nothing.
 *
 * Memory is bounded: a shard never holds more than its share of
 * `max_accounts`. When a shard is full it drops the entries whose buckets
 * have all refilled (forgetting a full bucket changes nothing: a new entry
 * starts full); if every entry is still draining, the new account takes its
 * home slot's place — under such pressure an account may get a fresh burst,
 * which is the safe direction for honest users.
 *
 * Pure: the caller passes the time, so tests drive the clock.
 */
#ifndef GW_RATELIMIT_H
#define GW_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gw_rate_class {
    GW_RATE_READ = 0, /* state, history, evaluate, profile, drafts read */
    GW_RATE_WRITE,    /* turns, chat, nudge, drafts, invitations */
    GW_RATE_LIST,     /* ListGames: strict */
    GW_RATE_LOOKUP,   /* CheckWord: strict */
    GW_RATE_CLASSES
} gw_rate_class;

typedef struct gw_rate_rule {
    int rate;  /* tokens per second; 0: the class is not limited */
    int burst; /* bucket size (>= 1 when rate > 0) */
} gw_rate_rule;

typedef struct gw_ratelimit gw_ratelimit;

/* A table for at most max_accounts accounts (rounded up to the shard
 * layout). NULL on OOM. Free with gw_ratelimit_destroy. */
gw_ratelimit *gw_ratelimit_create(const gw_rate_rule rules[GW_RATE_CLASSES], size_t max_accounts);
void gw_ratelimit_destroy(gw_ratelimit *rl);

/* Takes a token from the account's bucket of class `cls` at time now_ns
 * (a monotonic clock). true: allowed; false: over the limit. Thread-safe. */
bool gw_ratelimit_allow(gw_ratelimit *rl, int64_t account_id, gw_rate_class cls, int64_t now_ns);

/* Accounts currently tracked (for tests and metrics). */
size_t gw_ratelimit_size(gw_ratelimit *rl);

const char *gw_rate_class_name(gw_rate_class cls);

#endif

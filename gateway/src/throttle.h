/*
 * throttle.h — the throttles on authentication: token buckets and a
 * failed-login backoff keyed by a short string (a client address, or a
 * handle), in a bounded table.
 *
 * Keys are never stored: an entry holds a 64-bit keyed hash of (kind, key)
 * under a random per-process secret, so an entry is 48 bytes whatever the
 * key's length and an attacker cannot aim collisions at someone else's
 * entry. Two keys that do collide (2^-64) share a bucket: the failure mode
 * is a throttle applied to the wrong key, never a login.
 *
 * Memory is fixed at creation: a set-associative table of `entries` slots
 * (calloc, so untouched sets cost no resident memory), GW_THROTTLE_WAYS per
 * set. A new key takes an empty slot of its set, else one whose state is
 * back to neutral (bucket full, no failures), else the least recently
 * touched slot without a block in force, else the least recently touched.
 * An attacker who varies keys can therefore push out a block only by
 * filling that key's whole set with fresher blocks — each earned by failed
 * logins that store-svc confirmed and the per-address bucket counted.
 *
 * Pure: the caller passes the time (monotonic ns), so tests drive the
 * clock. Thread-safe (one mutex per shard of sets).
 */
#ifndef GW_THROTTLE_H
#define GW_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_THROTTLE_WAYS 8

typedef struct gw_throttle gw_throttle;

/* A bucket: `per_min` tokens a minute up to `burst`; per_min 0: no limit. */
typedef struct gw_throttle_rule {
    int per_min;
    int burst;
} gw_throttle_rule;

/* Failed-login backoff: the first `free_fails` failures cost nothing; the
 * n-th after them blocks the key for base_ms * 2^(n-1), at most max_ms. A
 * key with no failure for max_ms starts over. base_ms 0: no backoff. */
typedef struct gw_backoff_rule {
    int free_fails;
    int64_t base_ms;
    int64_t max_ms;
} gw_backoff_rule;

enum {
    GW_THROTTLE_OK = 0,
    GW_THROTTLE_RATE = 1,    /* the key's bucket is empty */
    GW_THROTTLE_BACKOFF = 2, /* the key is blocked after failures */
};

/* A table of at least `entries` slots (rounded up to a power of two, at
 * least one set per shard). NULL on OOM. Free with gw_throttle_destroy. */
gw_throttle *gw_throttle_create(size_t entries);
void gw_throttle_destroy(gw_throttle *t);

/* Checks key (kind separates e.g. Login from Register buckets of one
 * address) at now_ns: a blocked key answers GW_THROTTLE_BACKOFF; else a
 * token is taken from its bucket (rule may be NULL: no bucket) or
 * GW_THROTTLE_RATE answered. *retry_ms (may be NULL) gets how long until
 * the next attempt could pass. */
int gw_throttle_check(gw_throttle *t, int kind, const char *key, size_t len,
                      const gw_throttle_rule *rule, int64_t now_ns, int64_t *retry_ms);

/* Records a failed attempt for key; returns the backoff now in force, in
 * ms (0 while the failures are free). */
int64_t gw_throttle_fail(gw_throttle *t, int kind, const char *key, size_t len,
                         const gw_backoff_rule *rule, int64_t now_ns);

/* Forgets key's failures (a successful login). */
void gw_throttle_succeed(gw_throttle *t, int kind, const char *key, size_t len);

/* Slots in use; walks the table (tests, metrics). */
size_t gw_throttle_count(gw_throttle *t);
/* The table's fixed size in slots. */
size_t gw_throttle_capacity(const gw_throttle *t);

#endif

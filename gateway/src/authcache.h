/*
 * authcache.h — bearer token -> account, cached with a TTL in a bounded,
 * fixed-size table. Pure (the caller passes the time), thread-safe.
 *
 * Layout: a set-associative cache. The token's hash picks one set of
 * GW_AUTH_WAYS entries; a lookup compares the full token (never just the
 * hash: a collision must not log anyone in as someone else); an insert takes
 * an empty or expired way, else the one that expires first. The table is
 * allocated once (calloc, so untouched sets cost no resident memory) and
 * never grows: its size is the --auth-cache-size bound.
 *
 * Negative entries (account_id 0) remember tokens store-svc rejected, for a
 * short time, so a client hammering with a forged token costs one store call
 * per negative TTL instead of one per call.
 *
 * Outage grace: a positive entry has two times. Until `expires_at` it is
 * trusted; after it, until `stale_until`, it is STALE: the caller must ask
 * store-svc again, and may fall back on the cached identity only when
 * store-svc cannot answer (down, or Postgres down). So a session the
 * gateway has seen survives a store or database outage up to the grace,
 * while a revoked session is refused as soon as the store answers again.
 */
#ifndef GW_AUTHCACHE_H
#define GW_AUTHCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_AUTH_TOKEN_MAX 128  /* longer tokens are never cached */
#define GW_AUTH_HANDLE_MAX 132 /* 32 UTF-8 characters + NUL */
#define GW_AUTH_WAYS 4

typedef struct gw_authcache gw_authcache;

/* What a token resolves to. account_id 0: a known-bad token. */
typedef struct gw_identity {
    int64_t account_id;
    char handle[GW_AUTH_HANDLE_MAX];
} gw_identity;

enum { GW_AUTH_MISS = 0, GW_AUTH_HIT = 1, GW_AUTH_BAD = 2, GW_AUTH_STALE = 3 };

/* A cache of at least `capacity` entries. NULL on OOM. Free with
 * gw_authcache_destroy. */
gw_authcache *gw_authcache_create(size_t capacity);
void gw_authcache_destroy(gw_authcache *c);

/* Looks the token up at now_ms. GW_AUTH_HIT fills *out; GW_AUTH_BAD: the
 * token was recently rejected; GW_AUTH_MISS: ask store-svc. GW_AUTH_STALE
 * fills *out (the fallback) and trusts the entry again until
 * now_ms + recheck_ms (never past its stale_until), so that while one call
 * asks store-svc the token's other calls do not all ask too: ask store-svc,
 * and use *out only if it cannot answer. */
int gw_authcache_get(gw_authcache *c, const char *token, size_t token_len, int64_t now_ms,
                     int64_t recheck_ms, gw_identity *out);

/* Remembers token -> id: trusted until expires_at_ms, a fallback during a
 * store outage until stale_until_ms (the caller bounds both by the session's
 * own expiry; stale_until_ms <= expires_at_ms: no fallback). id->account_id
 * 0 records a bad token (never a fallback). Tokens longer than
 * GW_AUTH_TOKEN_MAX-1 are not stored. */
void gw_authcache_put(gw_authcache *c, const char *token, size_t token_len, const gw_identity *id,
                      int64_t expires_at_ms, int64_t stale_until_ms);

/* Entries still of use at now_ms (trusted or within their grace); walks
 * the table (tests, metrics). */
size_t gw_authcache_count(gw_authcache *c, int64_t now_ms);
/* The table's fixed size in entries. */
size_t gw_authcache_capacity(const gw_authcache *c);

#endif

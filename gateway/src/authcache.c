/*
 * authcache.c — the bounded token cache (see authcache.h).
 */
#include "authcache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GW_AUTH_LOCKS 64 /* power of two; a set's lock is set index % LOCKS */

typedef struct gw_auth_entry {
    uint64_t hash;          /* 0: empty */
    int64_t expires_at_ms;  /* trusted until */
    int64_t stale_until_ms; /* then a fallback until (>= expires_at_ms) */
    gw_identity id;
    uint8_t token_len;
    char token[GW_AUTH_TOKEN_MAX];
} gw_auth_entry;

struct gw_authcache {
    size_t nsets;           /* power of two */
    gw_auth_entry *entries; /* nsets * GW_AUTH_WAYS */
    struct {
        pthread_mutex_t mu;
        char pad[64 - sizeof(pthread_mutex_t) % 64];
    } locks[GW_AUTH_LOCKS];
};

/* FNV-1a with a final mix; never 0 (0 marks an empty way). */
static uint64_t gw_auth__hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h ? h : 1;
}

gw_authcache *gw_authcache_create(size_t capacity)
{
    gw_authcache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    size_t nsets = 1;
    while (nsets * GW_AUTH_WAYS < capacity)
        nsets <<= 1;
    c->nsets = nsets;
    c->entries = calloc(nsets * GW_AUTH_WAYS, sizeof(gw_auth_entry));
    if (!c->entries) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < GW_AUTH_LOCKS; i++)
        pthread_mutex_init(&c->locks[i].mu, NULL);
    return c;
}

void gw_authcache_destroy(gw_authcache *c)
{
    if (!c)
        return;
    for (int i = 0; i < GW_AUTH_LOCKS; i++)
        pthread_mutex_destroy(&c->locks[i].mu);
    free(c->entries);
    free(c);
}

int gw_authcache_get(gw_authcache *c, const char *token, size_t token_len, int64_t now_ms,
                     int64_t recheck_ms, gw_identity *out)
{
    if (token_len == 0 || token_len >= GW_AUTH_TOKEN_MAX)
        return GW_AUTH_MISS;
    uint64_t h = gw_auth__hash(token, token_len);
    size_t set = (h >> 8) & (c->nsets - 1);
    pthread_mutex_t *mu = &c->locks[set & (GW_AUTH_LOCKS - 1)].mu;
    gw_auth_entry *ways = &c->entries[set * GW_AUTH_WAYS];
    int rc = GW_AUTH_MISS;
    pthread_mutex_lock(mu);
    for (int w = 0; w < GW_AUTH_WAYS; w++) {
        gw_auth_entry *e = &ways[w];
        if (e->hash != h || e->token_len != token_len || memcmp(e->token, token, token_len) != 0)
            continue;
        if (e->stale_until_ms <= now_ms) {
            e->hash = 0; /* expired: free the way */
            break;
        }
        if (e->expires_at_ms <= now_ms) {
            /* Within the outage grace: the caller asks the store; the
             * token's other calls trust the entry meanwhile. */
            e->expires_at_ms =
                now_ms + recheck_ms < e->stale_until_ms ? now_ms + recheck_ms : e->stale_until_ms;
            *out = e->id;
            rc = GW_AUTH_STALE;
        } else if (e->id.account_id == 0) {
            rc = GW_AUTH_BAD;
        } else {
            *out = e->id;
            rc = GW_AUTH_HIT;
        }
        break;
    }
    pthread_mutex_unlock(mu);
    return rc;
}

void gw_authcache_put(gw_authcache *c, const char *token, size_t token_len, const gw_identity *id,
                      int64_t expires_at_ms, int64_t stale_until_ms)
{
    if (token_len == 0 || token_len >= GW_AUTH_TOKEN_MAX)
        return;
    uint64_t h = gw_auth__hash(token, token_len);
    size_t set = (h >> 8) & (c->nsets - 1);
    pthread_mutex_t *mu = &c->locks[set & (GW_AUTH_LOCKS - 1)].mu;
    gw_auth_entry *ways = &c->entries[set * GW_AUTH_WAYS];
    pthread_mutex_lock(mu);
    gw_auth_entry *victim = NULL;
    for (int w = 0; w < GW_AUTH_WAYS; w++) {
        gw_auth_entry *e = &ways[w];
        if (e->hash == h && e->token_len == token_len && memcmp(e->token, token, token_len) == 0) {
            victim = e; /* refresh in place */
            break;
        }
        if (!victim || e->hash == 0 ||
            (victim->hash != 0 && e->stale_until_ms < victim->stale_until_ms))
            victim = e;
    }
    victim->hash = h;
    victim->expires_at_ms = expires_at_ms;
    /* A rejected token is never a fallback. */
    victim->stale_until_ms =
        id->account_id != 0 && stale_until_ms > expires_at_ms ? stale_until_ms : expires_at_ms;
    victim->id = *id;
    victim->id.handle[GW_AUTH_HANDLE_MAX - 1] = '\0';
    victim->token_len = (uint8_t)token_len;
    memcpy(victim->token, token, token_len);
    pthread_mutex_unlock(mu);
}

size_t gw_authcache_count(gw_authcache *c, int64_t now_ms)
{
    size_t n = 0;
    for (size_t set = 0; set < c->nsets; set++) {
        pthread_mutex_t *mu = &c->locks[set & (GW_AUTH_LOCKS - 1)].mu;
        pthread_mutex_lock(mu);
        for (int w = 0; w < GW_AUTH_WAYS; w++) {
            const gw_auth_entry *e = &c->entries[set * GW_AUTH_WAYS + w];
            if (e->hash != 0 && e->stale_until_ms > now_ms)
                n++;
        }
        pthread_mutex_unlock(mu);
    }
    return n;
}

size_t gw_authcache_capacity(const gw_authcache *c)
{
    return c->nsets * GW_AUTH_WAYS;
}

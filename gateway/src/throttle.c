/*
 * throttle.c — the bounded throttle table (see throttle.h).
 */
#include "throttle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define GW_TH_LOCKS 64        /* power of two; a set's lock is set index % LOCKS */
#define GW_TH_SCALE 1000000LL /* tokens are held in millionths */

typedef struct gw_th_entry {
    uint64_t hash;       /* 0: empty */
    int64_t tokens;      /* millionths of a token */
    int64_t last_ns;     /* bucket brought up to date; also "last touched" */
    int64_t fail_ns;     /* last failure */
    int64_t blocked_ns;  /* blocked until */
    int32_t fails;       /* failures since the last success or reset */
    int32_t bucket_used; /* the entry's bucket has been initialised */
    int32_t per_min;     /* the rule its bucket was last checked with */
    int32_t burst;
} gw_th_entry;

struct gw_throttle {
    uint64_t secret[2];
    size_t nsets; /* power of two */
    gw_th_entry *entries;
    struct {
        pthread_mutex_t mu;
        char pad[64 - sizeof(pthread_mutex_t) % 64];
    } locks[GW_TH_LOCKS];
};

static uint64_t gw_th__mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A keyed hash of (kind, key): each 8-byte chunk is folded into a state
 * seeded with the process secret and mixed, so without the secret an
 * attacker cannot choose keys that land in one set. Never 0. */
static uint64_t gw_th__hash(const gw_throttle *t, int kind, const char *key, size_t len)
{
    uint64_t h = t->secret[0] ^ gw_th__mix((uint64_t)kind + t->secret[1]);
    h = gw_th__mix(h ^ len);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t chunk = 0;
        memcpy(&chunk, key + i, len - i < 8 ? len - i : 8);
        h = gw_th__mix(h ^ chunk) + t->secret[1];
    }
    h = gw_th__mix(h);
    return h ? h : 1;
}

gw_throttle *gw_throttle_create(size_t entries)
{
    gw_throttle *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    if (getrandom(t->secret, sizeof t->secret, 0) != (ssize_t)sizeof t->secret) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        t->secret[0] = gw_th__mix((uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)t);
        t->secret[1] = gw_th__mix(t->secret[0] + (uint64_t)ts.tv_sec);
    }
    size_t nsets = GW_TH_LOCKS;
    while (nsets * GW_THROTTLE_WAYS < entries)
        nsets <<= 1;
    t->nsets = nsets;
    t->entries = calloc(nsets * GW_THROTTLE_WAYS, sizeof(gw_th_entry));
    if (!t->entries) {
        free(t);
        return NULL;
    }
    for (int i = 0; i < GW_TH_LOCKS; i++)
        pthread_mutex_init(&t->locks[i].mu, NULL);
    return t;
}

void gw_throttle_destroy(gw_throttle *t)
{
    if (!t)
        return;
    for (int i = 0; i < GW_TH_LOCKS; i++)
        pthread_mutex_destroy(&t->locks[i].mu);
    free(t->entries);
    free(t);
}

/* Brings the bucket up to date at now_ns (a fresh one starts full). */
static void gw_th__refill(gw_th_entry *e, const gw_throttle_rule *r, int64_t now_ns)
{
    int64_t cap = (int64_t)r->burst * GW_TH_SCALE;
    e->per_min = r->per_min;
    e->burst = r->burst;
    if (!e->bucket_used) {
        e->bucket_used = 1;
        e->tokens = cap;
        e->last_ns = now_ns;
        return;
    }
    int64_t dt = now_ns - e->last_ns;
    if (dt <= 0)
        return;
    /* Capped so the product cannot overflow (per_min <= 1e6). */
    if (dt > 3600 * 1000000000LL)
        dt = 3600 * 1000000000LL;
    /* per_min tokens a minute = per_min * 1e6 millionths per 6e10 ns. */
    int64_t add = dt * r->per_min / 60000;
    e->tokens = e->tokens + add > cap ? cap : e->tokens + add;
    e->last_ns = now_ns;
}

/* Whether forgetting e changes nothing a caller could see: no failure on
 * record or block in force, and a bucket that would be full by now (a
 * fresh entry starts full). */
static bool gw_th__neutral(gw_th_entry *e, int64_t now_ns)
{
    if (e->fails > 0 || e->blocked_ns > now_ns)
        return false;
    if (!e->bucket_used || e->per_min <= 0)
        return true;
    gw_throttle_rule r = {e->per_min, e->burst};
    gw_th__refill(e, &r, now_ns);
    return e->tokens >= (int64_t)e->burst * GW_TH_SCALE;
}

/* Finds key's slot in its set, or claims one. Caller holds the set lock. */
static gw_th_entry *gw_th__slot(gw_throttle *t, uint64_t h, int64_t now_ns, bool create)
{
    size_t set = (h >> 8) & (t->nsets - 1);
    gw_th_entry *ways = &t->entries[set * GW_THROTTLE_WAYS];
    gw_th_entry *free_way = NULL, *oldest = NULL, *oldest_blocked = NULL;
    for (int w = 0; w < GW_THROTTLE_WAYS; w++) {
        gw_th_entry *e = &ways[w];
        if (e->hash == h)
            return e;
        if (!create)
            continue;
        if (e->hash == 0 || gw_th__neutral(e, now_ns)) {
            if (!free_way)
                free_way = e;
        } else if (e->blocked_ns > now_ns) {
            if (!oldest_blocked || e->last_ns < oldest_blocked->last_ns)
                oldest_blocked = e;
        } else if (!oldest || e->last_ns < oldest->last_ns) {
            oldest = e;
        }
    }
    if (!create)
        return NULL;
    /* A block in force goes last: it was earned by failures store-svc
     * confirmed, each of which cost its maker an attempt, while a drained
     * bucket is what any flood of fresh keys leaves behind. */
    gw_th_entry *e = free_way ? free_way : oldest ? oldest : oldest_blocked;
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->last_ns = now_ns;
    return e;
}

static pthread_mutex_t *gw_th__lock(gw_throttle *t, uint64_t h)
{
    size_t set = (h >> 8) & (t->nsets - 1);
    pthread_mutex_t *mu = &t->locks[set & (GW_TH_LOCKS - 1)].mu;
    pthread_mutex_lock(mu);
    return mu;
}

int gw_throttle_check(gw_throttle *t, int kind, const char *key, size_t len,
                      const gw_throttle_rule *rule, int64_t now_ns, int64_t *retry_ms)
{
    uint64_t h = gw_th__hash(t, kind, key, len);
    pthread_mutex_t *mu = gw_th__lock(t, h);
    bool limited = rule && rule->per_min > 0;
    /* Without a bucket only a block matters: do not claim a slot for it. */
    gw_th_entry *e = gw_th__slot(t, h, now_ns, limited);
    int rc = GW_THROTTLE_OK;
    int64_t wait_ns = 0;
    if (e && e->blocked_ns > now_ns) {
        rc = GW_THROTTLE_BACKOFF;
        wait_ns = e->blocked_ns - now_ns;
    } else if (limited) {
        gw_th__refill(e, rule, now_ns);
        if (e->tokens >= GW_TH_SCALE) {
            e->tokens -= GW_TH_SCALE;
        } else {
            rc = GW_THROTTLE_RATE;
            /* Time for the missing millionths at per_min a minute. */
            wait_ns = (GW_TH_SCALE - e->tokens) * 60000 / rule->per_min;
        }
    }
    pthread_mutex_unlock(mu);
    if (retry_ms)
        *retry_ms = (wait_ns + 999999) / 1000000;
    return rc;
}

int64_t gw_throttle_fail(gw_throttle *t, int kind, const char *key, size_t len,
                         const gw_backoff_rule *rule, int64_t now_ns)
{
    if (!rule || rule->base_ms <= 0)
        return 0;
    uint64_t h = gw_th__hash(t, kind, key, len);
    pthread_mutex_t *mu = gw_th__lock(t, h);
    gw_th_entry *e = gw_th__slot(t, h, now_ns, true);
    /* A key quiet for max_ms has served its time: start over. */
    if (e->fails > 0 && now_ns - e->fail_ns > rule->max_ms * 1000000)
        e->fails = 0;
    if (e->fails < 1000000)
        e->fails++;
    e->fail_ns = now_ns;
    if (!e->bucket_used)
        e->last_ns = now_ns;
    int64_t block_ms = 0;
    int over = e->fails - rule->free_fails;
    if (over > 0) {
        block_ms = rule->base_ms;
        for (int i = 1; i < over && block_ms < rule->max_ms; i++)
            block_ms *= 2;
        if (block_ms > rule->max_ms)
            block_ms = rule->max_ms;
        e->blocked_ns = now_ns + block_ms * 1000000;
    }
    pthread_mutex_unlock(mu);
    return block_ms;
}

void gw_throttle_succeed(gw_throttle *t, int kind, const char *key, size_t len)
{
    uint64_t h = gw_th__hash(t, kind, key, len);
    pthread_mutex_t *mu = gw_th__lock(t, h);
    gw_th_entry *e = gw_th__slot(t, h, 0, false);
    if (e) {
        e->fails = 0;
        e->blocked_ns = 0;
    }
    pthread_mutex_unlock(mu);
}

size_t gw_throttle_count(gw_throttle *t)
{
    size_t n = 0;
    for (size_t s = 0; s < t->nsets; s++) {
        pthread_mutex_t *mu = &t->locks[s & (GW_TH_LOCKS - 1)].mu;
        pthread_mutex_lock(mu);
        for (int w = 0; w < GW_THROTTLE_WAYS; w++)
            n += t->entries[s * GW_THROTTLE_WAYS + w].hash != 0;
        pthread_mutex_unlock(mu);
    }
    return n;
}

size_t gw_throttle_capacity(const gw_throttle *t)
{
    return t->nsets * GW_THROTTLE_WAYS;
}

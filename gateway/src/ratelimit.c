/*
 * ratelimit.c — sharded per-account token buckets (see ratelimit.h).
 */
#include "ratelimit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GW_RL_SHARDS 64       /* power of two */
#define GW_RL_SCALE 1000000LL /* tokens are held in millionths */

typedef struct gw_rl_bucket {
    int64_t tokens;  /* millionths of a token */
    int64_t last_ns; /* when tokens was last brought up to date */
} gw_rl_bucket;

typedef struct gw_rl_entry {
    int64_t account_id; /* 0: empty slot */
    gw_rl_bucket b[GW_RATE_CLASSES];
} gw_rl_entry;

typedef struct gw_rl_shard {
    pthread_mutex_t mu;
    gw_rl_entry *slots; /* capacity slots, linear probing */
    size_t capacity;    /* power of two */
    size_t count;
    size_t max_count; /* this shard's share of max_accounts */
    char pad[64];     /* keep shards' locks on separate cache lines */
} gw_rl_shard;

struct gw_ratelimit {
    gw_rate_rule rules[GW_RATE_CLASSES];
    gw_rl_shard shards[GW_RL_SHARDS];
};

static const char *const gw_rate_class_names[GW_RATE_CLASSES] = {"read", "write", "list", "lookup"};

const char *gw_rate_class_name(gw_rate_class cls)
{
    return (unsigned)cls < GW_RATE_CLASSES ? gw_rate_class_names[cls] : "unknown";
}

static uint64_t gw_rl__hash(int64_t id)
{
    uint64_t x = (uint64_t)id;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

gw_ratelimit *gw_ratelimit_create(const gw_rate_rule rules[GW_RATE_CLASSES], size_t max_accounts)
{
    gw_ratelimit *rl = calloc(1, sizeof(*rl));
    if (!rl)
        return NULL;
    memcpy(rl->rules, rules, sizeof(rl->rules));
    size_t per_shard = (max_accounts + GW_RL_SHARDS - 1) / GW_RL_SHARDS;
    if (per_shard < 8)
        per_shard = 8;
    /* Load factor at most one half when full. */
    size_t cap = 16;
    while (cap < per_shard * 2)
        cap <<= 1;
    for (int i = 0; i < GW_RL_SHARDS; i++) {
        gw_rl_shard *s = &rl->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->capacity = cap;
        s->max_count = per_shard;
        /* calloc: untouched pages cost no RSS until accounts arrive. */
        s->slots = calloc(cap, sizeof(gw_rl_entry));
        if (!s->slots) {
            gw_ratelimit_destroy(rl);
            return NULL;
        }
    }
    return rl;
}

void gw_ratelimit_destroy(gw_ratelimit *rl)
{
    if (!rl)
        return;
    for (int i = 0; i < GW_RL_SHARDS; i++) {
        free(rl->shards[i].slots);
        pthread_mutex_destroy(&rl->shards[i].mu);
    }
    free(rl);
}

/* Brings a bucket up to date at now_ns. */
static void gw_rl__refill(gw_rl_bucket *b, const gw_rate_rule *r, int64_t now_ns)
{
    int64_t cap = (int64_t)r->burst * GW_RL_SCALE;
    int64_t dt = now_ns - b->last_ns;
    if (dt > 0) {
        /* rate tokens/s = rate * 1e6 millionths per 1e9 ns = rate/1000 per
         * ns. Cap dt first so the product cannot overflow. */
        if (dt > 3600LL * 1000000000LL)
            dt = 3600LL * 1000000000LL;
        int64_t add = dt * r->rate / 1000;
        b->tokens = b->tokens + add > cap ? cap : b->tokens + add;
        b->last_ns = now_ns;
    }
}

/* Whether every bucket of an entry would be full at now_ns. */
static bool gw_rl__idle(const gw_ratelimit *rl, gw_rl_entry *e, int64_t now_ns)
{
    for (int c = 0; c < GW_RATE_CLASSES; c++) {
        const gw_rate_rule *r = &rl->rules[c];
        if (r->rate <= 0)
            continue;
        gw_rl__refill(&e->b[c], r, now_ns);
        if (e->b[c].tokens < (int64_t)r->burst * GW_RL_SCALE)
            return false;
    }
    return true;
}

/* Rebuilds a full shard without its idle entries. Linear probing cannot
 * delete in place, so the survivors are reinserted into a scratch copy;
 * this runs at most once per max_count/2 insertions. Returns whether room
 * was made. */
static bool gw_rl__sweep(const gw_ratelimit *rl, gw_rl_shard *s, int64_t now_ns)
{
    gw_rl_entry *fresh = calloc(s->capacity, sizeof(gw_rl_entry));
    if (!fresh)
        return false;
    size_t mask = s->capacity - 1, kept = 0;
    for (size_t i = 0; i < s->capacity; i++) {
        gw_rl_entry *e = &s->slots[i];
        if (e->account_id == 0 || gw_rl__idle(rl, e, now_ns))
            continue;
        size_t j = (gw_rl__hash(e->account_id) >> 6) & mask; /* as in allow() */
        while (fresh[j].account_id != 0)
            j = (j + 1) & mask;
        fresh[j] = *e;
        kept++;
    }
    free(s->slots);
    s->slots = fresh;
    s->count = kept;
    return kept < s->max_count;
}

bool gw_ratelimit_allow(gw_ratelimit *rl, int64_t account_id, gw_rate_class cls, int64_t now_ns)
{
    if ((unsigned)cls >= GW_RATE_CLASSES)
        return false;
    const gw_rate_rule *r = &rl->rules[cls];
    if (r->rate <= 0)
        return true;
    uint64_t h = gw_rl__hash(account_id);
    gw_rl_shard *s = &rl->shards[h & (GW_RL_SHARDS - 1)];
    h >>= 6; /* the low bits chose the shard */

    pthread_mutex_lock(&s->mu);
    size_t mask = s->capacity - 1, i = h & mask;
    gw_rl_entry *e = NULL;
    for (;;) {
        gw_rl_entry *slot = &s->slots[i];
        if (slot->account_id == account_id) {
            e = slot;
            break;
        }
        if (slot->account_id == 0)
            break;
        i = (i + 1) & mask;
    }
    if (!e) {
        if (s->count >= s->max_count && !gw_rl__sweep(rl, s, now_ns)) {
            /* Every entry is still draining. Take the home slot: replacing
             * its occupant keeps every probe chain intact, and an empty home
             * slot may be filled while a quarter of the table stays empty
             * (so probes always end). Past that, fail open for this call:
             * limiting honest users for an attacker's volume is worse. */
            mask = s->capacity - 1;
            e = &s->slots[h & mask];
            if (e->account_id == 0) {
                if (s->count >= s->capacity - s->capacity / 4) {
                    pthread_mutex_unlock(&s->mu);
                    return true;
                }
                s->count++;
            }
        } else {
            mask = s->capacity - 1;
            i = h & mask;
            while (s->slots[i].account_id != 0)
                i = (i + 1) & mask;
            e = &s->slots[i];
            s->count++;
        }
        e->account_id = account_id;
        for (int c = 0; c < GW_RATE_CLASSES; c++) {
            e->b[c].tokens = (int64_t)rl->rules[c].burst * GW_RL_SCALE;
            e->b[c].last_ns = now_ns;
        }
    }
    gw_rl_bucket *b = &e->b[cls];
    gw_rl__refill(b, r, now_ns);
    bool ok = b->tokens >= GW_RL_SCALE;
    if (ok)
        b->tokens -= GW_RL_SCALE;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

size_t gw_ratelimit_size(gw_ratelimit *rl)
{
    size_t n = 0;
    for (int i = 0; i < GW_RL_SHARDS; i++) {
        pthread_mutex_lock(&rl->shards[i].mu);
        n += rl->shards[i].count;
        pthread_mutex_unlock(&rl->shards[i].mu);
    }
    return n;
}

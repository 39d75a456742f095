/*
 * cache.c — game id -> entry hash table with an LRU list and a byte budget.
 * One lock (the cache lock) guards the table, the LRU links, reference
 * counts and the accounting; each entry's own mutex guards its game.
 */
#include "cache.h"

#include <stdlib.h>
#include <string.h>

#define CACHE__BUCKETS 4096 /* power of two */

struct game_cache {
    pthread_mutex_t mu;
    size_t budget;
    size_t bytes;
    size_t entries;
    uint64_t hits, misses, evictions;
    game_entry *buckets[CACHE__BUCKETS];
    game_entry *lru_head, *lru_tail; /* head: most recently used */
};

static size_t cache__bucket(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 52) & (CACHE__BUCKETS - 1);
}

static size_t cache__entry_bytes(const game_entry *e)
{
    return sizeof *e + e->cap * sizeof(game_move);
}

static void cache__lru_unlink(game_cache *c, game_entry *e)
{
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else if (c->lru_head == e)
        c->lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else if (c->lru_tail == e)
        c->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void cache__lru_push_head(game_cache *c, game_entry *e)
{
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    if (c->lru_head)
        c->lru_head->lru_prev = e;
    c->lru_head = e;
    if (!c->lru_tail)
        c->lru_tail = e;
}

static void cache__lru_push_tail(game_cache *c, game_entry *e)
{
    e->lru_next = NULL;
    e->lru_prev = c->lru_tail;
    if (c->lru_tail)
        c->lru_tail->lru_next = e;
    c->lru_tail = e;
    if (!c->lru_head)
        c->lru_head = e;
}

static void cache__table_unlink(game_cache *c, game_entry *e)
{
    game_entry **pp = &c->buckets[cache__bucket(e->game_id)];
    while (*pp && *pp != e)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = e->hnext;
    e->hnext = NULL;
    e->in_table = false;
    cache__lru_unlink(c, e);
    c->entries--;
    c->bytes -= e->bytes;
}

static void cache__free_entry(game_entry *e)
{
    pthread_mutex_destroy(&e->mu);
    free(e->moves);
    free(e);
}

/* Evicts idle entries from the cold end until under budget. Cache lock held.
 * An entry with no references has no operation running, waiting, loading or
 * committing (each of those holds a reference), so nobody can hold its mutex. */
static void cache__evict(game_cache *c)
{
    game_entry *e = c->lru_tail;
    while (c->bytes > c->budget && e) {
        game_entry *prev = e->lru_prev;
        if (e->refs == 0) {
            cache__table_unlink(c, e);
            cache__free_entry(e);
            c->evictions++;
        }
        e = prev;
    }
}

game_cache *game_cache_create(size_t budget_bytes)
{
    game_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->budget = budget_bytes;
    return c;
}

void game_cache_destroy(game_cache *c)
{
    if (!c)
        return;
    for (size_t b = 0; b < CACHE__BUCKETS; b++) {
        game_entry *e = c->buckets[b];
        while (e) {
            game_entry *n = e->hnext;
            cache__free_entry(e);
            e = n;
        }
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

game_entry *game_cache_acquire(game_cache *c, int64_t id, bool *created)
{
    game_entry *e;
    *created = false;
    pthread_mutex_lock(&c->mu);
    for (e = c->buckets[cache__bucket(id)]; e; e = e->hnext)
        if (e->game_id == id)
            break;
    if (e) {
        e->refs++;
        c->hits++;
        if (c->lru_head != e) {
            cache__lru_unlink(c, e);
            cache__lru_push_head(c, e);
        }
        pthread_mutex_unlock(&c->mu);
        return e;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    pthread_mutex_init(&e->mu, NULL);
    e->game_id = id;
    e->state = GAME_ENTRY_LOADING;
    e->refs = 1;
    e->in_table = true;
    e->bytes = cache__entry_bytes(e);
    size_t b = cache__bucket(id);
    e->hnext = c->buckets[b];
    c->buckets[b] = e;
    cache__lru_push_head(c, e);
    c->entries++;
    c->bytes += e->bytes;
    c->misses++;
    *created = true;
    cache__evict(c);
    pthread_mutex_unlock(&c->mu);
    return e;
}

void game_cache_release(game_cache *c, game_entry *e)
{
    bool free_it = false;
    pthread_mutex_lock(&c->mu);
    e->refs--;
    if (e->refs == 0) {
        if (!e->in_table)
            free_it = true;
        else if (c->bytes > c->budget)
            cache__evict(c);
    }
    pthread_mutex_unlock(&c->mu);
    if (free_it)
        cache__free_entry(e);
}

void game_cache_remove(game_cache *c, game_entry *e)
{
    pthread_mutex_lock(&c->mu);
    if (e->in_table)
        cache__table_unlink(c, e);
    pthread_mutex_unlock(&c->mu);
}

int game_cache_append_move(game_cache *c, game_entry *e, const game_move *m)
{
    if (e->nmoves == e->cap) {
        size_t ncap = e->cap ? e->cap * 2 : 8;
        game_move *nm = realloc(e->moves, ncap * sizeof *nm);
        if (!nm)
            return -1;
        e->moves = nm;
        e->cap = ncap;
        pthread_mutex_lock(&c->mu);
        size_t nb = cache__entry_bytes(e);
        if (e->in_table)
            c->bytes = c->bytes - e->bytes + nb;
        e->bytes = nb;
        pthread_mutex_unlock(&c->mu);
    }
    e->moves[e->nmoves++] = *m;
    return 0;
}

void game_cache_demote(game_cache *c, game_entry *e)
{
    pthread_mutex_lock(&c->mu);
    if (e->in_table) {
        cache__lru_unlink(c, e);
        cache__lru_push_tail(c, e);
    }
    pthread_mutex_unlock(&c->mu);
}

void game_cache_stats_get(game_cache *c, game_cache_stats *out)
{
    pthread_mutex_lock(&c->mu);
    out->entries = c->entries;
    out->bytes = c->bytes;
    out->hits = c->hits;
    out->misses = c->misses;
    out->evictions = c->evictions;
    pthread_mutex_unlock(&c->mu);
}

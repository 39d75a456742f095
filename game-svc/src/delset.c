/*
 * delset.c — the set of owed draft deletions (see delset.h).
 */
#include "delset.h"

#include <stdlib.h>

#define DELSET__MIN_SLOTS 64

struct game_delset {
    size_t max_entries;
    size_t count;
    size_t mask;          /* slots - 1; slots is a power of two */
    game_draft_ref *slot; /* game_id 0: empty */
};

/* splitmix64's finaliser over both ids: neighbouring ids spread out. */
static size_t delset__hash(int64_t game_id, int64_t account_id)
{
    uint64_t x = (uint64_t)game_id * 0x9e3779b97f4a7c15ull ^ (uint64_t)account_id;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x;
}

game_delset *game_delset_create(size_t max_entries)
{
    game_delset *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->slot = calloc(DELSET__MIN_SLOTS, sizeof *s->slot);
    if (!s->slot) {
        free(s);
        return NULL;
    }
    s->mask = DELSET__MIN_SLOTS - 1;
    s->max_entries = max_entries;
    return s;
}

void game_delset_destroy(game_delset *s)
{
    if (!s)
        return;
    free(s->slot);
    free(s);
}

/* The slot holding the pair, or the empty slot where it would go. */
static size_t delset__find(const game_delset *s, int64_t game_id, int64_t account_id)
{
    size_t i = delset__hash(game_id, account_id) & s->mask;
    while (s->slot[i].game_id != 0 &&
           (s->slot[i].game_id != game_id || s->slot[i].account_id != account_id))
        i = (i + 1) & s->mask;
    return i;
}

static int delset__grow(game_delset *s)
{
    size_t slots = (s->mask + 1) * 2;
    game_draft_ref *old = s->slot;
    size_t old_slots = s->mask + 1;
    game_draft_ref *fresh = calloc(slots, sizeof *fresh);
    if (!fresh)
        return -1;
    s->slot = fresh;
    s->mask = slots - 1;
    for (size_t i = 0; i < old_slots; i++)
        if (old[i].game_id != 0)
            s->slot[delset__find(s, old[i].game_id, old[i].account_id)] = old[i];
    free(old);
    return 0;
}

int game_delset_add(game_delset *s, int64_t game_id, int64_t account_id)
{
    if (game_id <= 0 || account_id <= 0)
        return GAME_DELSET_FULL;
    size_t i = delset__find(s, game_id, account_id);
    if (s->slot[i].game_id != 0)
        return GAME_DELSET_PRESENT;
    if (s->count >= s->max_entries)
        return GAME_DELSET_FULL;
    /* At most half full keeps probe runs short. */
    if ((s->count + 1) * 2 > s->mask + 1) {
        if (delset__grow(s) != 0)
            return GAME_DELSET_FULL;
        i = delset__find(s, game_id, account_id);
    }
    s->slot[i].game_id = game_id;
    s->slot[i].account_id = account_id;
    s->count++;
    return GAME_DELSET_ADDED;
}

bool game_delset_remove(game_delset *s, int64_t game_id, int64_t account_id)
{
    if (game_id <= 0)
        return false;
    size_t i = delset__find(s, game_id, account_id);
    if (s->slot[i].game_id == 0)
        return false;
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot is not between the hole and themselves. */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & s->mask;
        if (s->slot[j].game_id == 0)
            break;
        size_t home = delset__hash(s->slot[j].game_id, s->slot[j].account_id) & s->mask;
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (stays)
            continue;
        s->slot[hole] = s->slot[j];
        hole = j;
    }
    s->slot[hole].game_id = 0;
    s->slot[hole].account_id = 0;
    s->count--;
    return true;
}

bool game_delset_contains(const game_delset *s, int64_t game_id, int64_t account_id)
{
    if (game_id <= 0 || s->count == 0)
        return false;
    return s->slot[delset__find(s, game_id, account_id)].game_id != 0;
}

size_t game_delset_count(const game_delset *s)
{
    return s->count;
}

size_t game_delset_peek(const game_delset *s, game_draft_ref *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i <= s->mask && n < max && n < s->count; i++)
        if (s->slot[i].game_id != 0)
            out[n++] = s->slot[i];
    return n;
}

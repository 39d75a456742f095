/* Deterministic bag: xoshiro256** seeded by splitmix64, so game-svc and the
 * load driver draw identical tiles from the same seed on any machine. */
#include "internal.h"

#include <string.h>

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t solver_rng_next(uint64_t s[4])
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Unbiased index in [0, n) by rejection. */
static uint32_t below(uint64_t s[4], uint32_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = solver_rng_next(s);
    while (x >= limit);
    return (uint32_t)(x % n);
}

static void shuffle(solver_bag *bag)
{
    for (int i = bag->n - 1; i > 0; i--) {
        int j = (int)below(bag->rng, (uint32_t)i + 1);
        uint8_t t = bag->tiles[i];
        bag->tiles[i] = bag->tiles[j];
        bag->tiles[j] = t;
    }
}

void solver_bag_init(solver_bag *bag, const solver_dist *dist, uint64_t seed)
{
    memset(bag, 0, sizeof *bag);
    for (int c = 0; c < 27; c++)
        for (int k = 0; k < dist->count[c] && bag->n < (int)sizeof bag->tiles; k++)
            bag->tiles[bag->n++] = (uint8_t)c;
    uint64_t z = seed;
    for (int i = 0; i < 4; i++) { /* splitmix64 */
        z += 0x9e3779b97f4a7c15ull;
        uint64_t x = z;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        bag->rng[i] = x ^ (x >> 31);
    }
    shuffle(bag);
}

int solver_bag_fill_rack(solver_bag *bag, solver_rack *r)
{
    int drawn = 0;
    while (r->n < SOLVER_RACK_MAX && bag->n > 0) {
        uint8_t t = bag->tiles[--bag->n];
        r->counts[t]++;
        r->n++;
        drawn++;
    }
    return drawn;
}

void solver_bag_return(solver_bag *bag, const uint8_t *codes, int n)
{
    for (int i = 0; i < n && bag->n < (int)sizeof bag->tiles; i++)
        bag->tiles[bag->n++] = codes[i];
    shuffle(bag);
}

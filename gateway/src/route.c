/*
 * route.c — rendezvous hashing (see route.h).
 */
#include "route.h"

/* FNV-1a over the name, then a final mix so names differing only in their
 * last byte still land far apart. */
uint64_t gw_route_instance_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* splitmix64's finaliser: a bijection with full avalanche. */
static uint64_t gw_route__mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t gw_route_weight(int64_t key, uint64_t instance_hash)
{
    return gw_route__mix(gw_route__mix((uint64_t)key) ^ instance_hash);
}

int gw_route_pick(int64_t key, const uint64_t *instance_hashes, size_t n)
{
    int best = -1;
    uint64_t best_w = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = gw_route_weight(key, instance_hashes[i]);
        if (best < 0 || w > best_w) {
            best = (int)i;
            best_w = w;
        }
    }
    return best;
}

void gw_route_rank(int64_t key, const uint64_t *instance_hashes, size_t n, int *order)
{
    /* Insertion sort: n is a handful. */
    uint64_t w[n ? n : 1];
    for (size_t i = 0; i < n; i++) {
        uint64_t wi = gw_route_weight(key, instance_hashes[i]);
        size_t j = i;
        while (j > 0 && w[j - 1] < wi) {
            w[j] = w[j - 1];
            order[j] = order[j - 1];
            j--;
        }
        w[j] = wi;
        order[j] = (int)i;
    }
}

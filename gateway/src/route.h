/*
 * route.h — which game-svc instance owns a game: rendezvous (highest random
 * weight) hashing of the game id over the configured instance list. Pure:
 * no I/O, no state, so the unit test and any other component that must agree
 * on ownership can call it directly.
 *
 * Why rendezvous and not a ring: the instance list is short (1..M), so
 * scoring every instance per call costs M multiplications; removing one
 * instance moves only the games it owned, and no ring has to be built.
 */
#ifndef GW_ROUTE_H
#define GW_ROUTE_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit hash of an instance's name (its "host:port" address as written
 * in the configuration). Computed once per instance at start. */
uint64_t gw_route_instance_hash(const char *name);

/* The weight of (key, instance): a well-mixed function of both, so every key
 * ranks the instances in an independent random order. */
uint64_t gw_route_weight(int64_t key, uint64_t instance_hash);

/* Index of the instance with the highest weight for `key` among the n
 * instance hashes (ties, practically impossible, go to the lower index);
 * -1 when n is 0. */
int gw_route_pick(int64_t key, const uint64_t *instance_hashes, size_t n);

/* The instance ranking for `key`: writes the n indexes into order[] by
 * descending weight (order[0] == gw_route_pick). Used to fall over to the
 * next instance for calls that any instance can serve (CheckWord). */
void gw_route_rank(int64_t key, const uint64_t *instance_hashes, size_t n, int *order);

#endif

/*
 * seed.h — the seeded player population: accounts and live sessions written
 * straight into Postgres with COPY (100,000 players in seconds), tagged so
 * that cleanup removes exactly them and the games they played.
 *
 * Player i of tag T has handle "T-i" and bearer token
 * "lt1." + hex(HMAC-SHA256(secret, "T:i"))[0..32], so a later `run` knows
 * every token without storing any; sessions hold only the token's SHA-256
 * (as store-svc does). With the default secret the tokens are guessable:
 * fine on a private loopback stack, set --secret anywhere else.
 */
#ifndef LT_SEED_H
#define LT_SEED_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#define LT_TOKEN_LEN 36 /* "lt1." + 32 hex */

void lt_seed_handle(const char *tag, int idx, char *out, size_t len);
void lt_seed_token(const char *secret, const char *tag, int idx, char out[LT_TOKEN_LEN + 1]);

/* Connects when every host of CONNINFO passes the network policy
 * (netpolicy.h; allow_private is --allow-private); NULL with err on failure. */
PGconn *lt_pg_connect(const char *conninfo, bool allow_private, char *err, size_t errlen);

/* Makes sure players 0..n-1 of `tag` exist with live sessions (reseeding
 * the whole tag when they do not). Returns 0 or -1 (err). *created tells
 * whether it wrote anything. */
int lt_seed_ensure(PGconn *pg, const char *tag, const char *secret, int n, int ttl_hours,
                   int *created, char *err, size_t errlen);
/* Removes the tag's accounts, sessions, stats, invitations and every game
 * one of them sat in. *removed: accounts deleted. */
int lt_seed_cleanup(PGconn *pg, const char *tag, long long *removed, char *err, size_t errlen);
/* Wipes all game data (games, moves, players, chat, invitations, stats);
 * accounts and sessions stay. */
int lt_seed_reset_games(PGconn *pg, char *err, size_t errlen);

#endif

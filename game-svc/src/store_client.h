/*
 * store_client.h — game-svc's calls to store-svc over one long-lived
 * channel, each counted in game_store_calls_total{method} so the benchmark
 * can show that a warm Evaluate makes none.
 */
#ifndef GAME_STORE_CLIENT_H
#define GAME_STORE_CLIENT_H

#include "rpc/metrics.h"
#include "rpc/rpc.h"

enum {
    GAME_STORE_CREATE_GAME = 0,
    GAME_STORE_LOAD_GAME,
    GAME_STORE_COMMIT_MOVE,
    GAME_STORE_APPEND_CHAT,
    GAME_STORE_LIST_CHAT,
    GAME_STORE_START_CLOCK,
    GAME_STORE_TIMEOUT_GAME,
    GAME_STORE_CLAIM_DEADLINES, /* the poller's: a blocking call (game_store_path) */
    GAME_STORE_APPEND_EVENTS,
    GAME_STORE_CLAIM_BOT_TURNS, /* bots.c's poller: blocking, like ClaimDeadlines */
    GAME_STORE_NMETHODS
};

/* A store call made for a caller gets the caller's remaining time, so the
 * store's work does not outlive a client's short deadline; at most
 * GAME_STORE_TIMEOUT_MS (also the bound of work no caller waits for: the
 * deadline poller, cold loads), and at least GAME_STORE_TIMEOUT_MIN_MS, so
 * a call whose deadline is all but spent still gets a round trip's time
 * and a definite answer (a write the store applied and nobody heard of
 * costs the game a reload). */
#define GAME_STORE_TIMEOUT_MS 5000
#define GAME_STORE_TIMEOUT_MIN_MS 50

typedef struct game_store {
    rpc_channel *ch;                    /* owned */
    metric *calls[GAME_STORE_NMETHODS]; /* owned by the registry */
    int64_t timeout_ms;                 /* GAME_STORE_TIMEOUT_MS */
} game_store;

/* Opens the channel (lazily connecting) and registers the metrics.
 * Returns 0 or -1. Free with game_store_close. */
/* `tls` (may be NULL or empty: plaintext) is this process's peer identity. */
int game_store_open(game_store *st, const char *target, const rpc_tls_config *tls,
                    metrics_registry *reg);
void game_store_close(game_store *st);

/* Starts one async call of `method` (GAME_STORE_*) on behalf of `caller`,
 * the inbound call it serves (NULL: work no single caller waits for, e.g.
 * the deadline poller's, a cold load shared by every waiter), which bounds
 * its deadline (game_store_timeout_ms). The reply is decoded into `arena`
 * when not NULL (it then outlives the callback), else freed when the
 * callback returns. The callback runs on the calling worker thread.
 * Returns RPC_OK or an error (the callback is then not called). */
int game_store_call(game_store *st, rpc_call *caller, int method, const ProtobufCMessage *req,
                    rpc_arena *arena, rpc_unary_cb cb, void *arg);

/* The timeout of a store call for a caller with remaining_ms left
 * (INT64_MAX: no deadline; <= 0: already past): remaining_ms within
 * [GAME_STORE_TIMEOUT_MIN_MS, bound_ms]. Pure, for the unit tests. */
int64_t game_store_timeout_ms(int64_t remaining_ms, int64_t bound_ms);

/* The full path of a method, counting one call of it (for callers that
 * make the call themselves, e.g. blocking). */
const char *game_store_path(game_store *st, int method);

#endif

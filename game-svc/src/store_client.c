/*
 * store_client.c — async calls to scrabble.v1.Store with a per-method
 * counter. The channel reconnects with backoff on its own.
 */
#include "store_client.h"

#include <stdio.h>

#include "scrabble/v1/store.pb-c.h"

static const struct {
    const char *name;
    const char *path;
    const ProtobufCMessageDescriptor *reply;
} store__methods[GAME_STORE_NMETHODS] = {
    [GAME_STORE_CREATE_GAME] = {"CreateGame", "/scrabble.v1.Store/CreateGame",
                                &scrabble__v1__game_record__descriptor},
    [GAME_STORE_LOAD_GAME] = {"LoadGame", "/scrabble.v1.Store/LoadGame",
                              &scrabble__v1__game_record__descriptor},
    [GAME_STORE_COMMIT_MOVE] = {"CommitMove", "/scrabble.v1.Store/CommitMove",
                                &scrabble__v1__commit_move_reply__descriptor},
    [GAME_STORE_APPEND_CHAT] = {"AppendChat", "/scrabble.v1.Store/AppendChat",
                                &scrabble__v1__chat_message__descriptor},
    [GAME_STORE_LIST_CHAT] = {"ListChat", "/scrabble.v1.Store/ListChat",
                              &scrabble__v1__list_chat_reply__descriptor},
    [GAME_STORE_START_CLOCK] = {"StartClock", "/scrabble.v1.Store/StartClock",
                                &scrabble__v1__game_clock__descriptor},
    [GAME_STORE_TIMEOUT_GAME] = {"TimeoutGame", "/scrabble.v1.Store/TimeoutGame",
                                 &scrabble__v1__game_record__descriptor},
    [GAME_STORE_CLAIM_DEADLINES] = {"ClaimDeadlines", "/scrabble.v1.Store/ClaimDeadlines",
                                    &scrabble__v1__claim_deadlines_reply__descriptor},
    [GAME_STORE_APPEND_EVENTS] = {"AppendEvents", "/scrabble.v1.Store/AppendEvents",
                                  &scrabble__v1__append_events_reply__descriptor},
    [GAME_STORE_CLAIM_BOT_TURNS] = {"ClaimBotTurns", "/scrabble.v1.Store/ClaimBotTurns",
                                    &scrabble__v1__claim_deadlines_reply__descriptor},
};

const char *game_store_path(game_store *st, int method)
{
    if (st->calls[method])
        metric_add(st->calls[method], 1);
    return store__methods[method].path;
}

int game_store_open(game_store *st, const char *target, const rpc_tls_config *tls,
                    metrics_registry *reg)
{
    rpc_channel_opts opts = {.tls = tls};
    st->ch = rpc_channel_create(target, &opts);
    if (!st->ch)
        return -1;
    st->timeout_ms = GAME_STORE_TIMEOUT_MS;
    for (int i = 0; i < GAME_STORE_NMETHODS; i++) {
        char labels[64];
        snprintf(labels, sizeof labels, "method=\"%s\"", store__methods[i].name);
        st->calls[i] = reg ? metrics_counter(reg, "game_store_calls_total", labels,
                                             "Calls from game-svc to store-svc, by method")
                           : NULL;
    }
    rpc_channel_connect(st->ch);
    return 0;
}

void game_store_close(game_store *st)
{
    if (st->ch)
        rpc_channel_destroy(st->ch);
    st->ch = NULL;
}

int64_t game_store_timeout_ms(int64_t remaining_ms, int64_t bound_ms)
{
    if (remaining_ms > bound_ms)
        return bound_ms;
    return remaining_ms < GAME_STORE_TIMEOUT_MIN_MS ? GAME_STORE_TIMEOUT_MIN_MS : remaining_ms;
}

int game_store_call(game_store *st, rpc_call *caller, int method, const ProtobufCMessage *req,
                    rpc_arena *arena, rpc_unary_cb cb, void *arg)
{
    /* Not rpc_client_opts.parent: that would cut the floor back to the
     * caller's remaining time. */
    int64_t ms = caller ? game_store_timeout_ms(rpc_call_remaining_ms(caller), st->timeout_ms)
                        : st->timeout_ms;
    rpc_client_opts opts = {.timeout_ms = ms, .arena = arena};
    if (st->calls[method])
        metric_add(st->calls[method], 1);
    return rpc_client_unary(st->ch, store__methods[method].path, req, store__methods[method].reply,
                            &opts, cb, arg);
}

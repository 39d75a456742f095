/*
 * handlers.h — the scrabble.v1.Game method table (handlers.c).
 */
#ifndef GAME_HANDLERS_H
#define GAME_HANDLERS_H

#include "rpc/rpc.h"

/* Terminated by {NULL, NULL}; the service context is a game_svc. */
extern const rpc_method_impl game_handlers[];
/* Who may call each method (rpc_server_allow): the gateway only. */
extern const rpc_allow_rule game_allow[];

struct game_op;
struct game_svc;
struct game_entry;
/* A game op for call (its caller from scrabble-account-id, its request
 * stripped of unknown fields) with run step `run`, in the call's arena;
 * NULL when the call was failed (no caller, OOM). For handlers in other
 * files (watch.c). */
struct game_op *game_handlers_op(rpc_call *call, const ProtobufCMessage *req,
                                 int (*run)(struct game_svc *, struct game_entry *,
                                            struct game_op *));

/* Game.WatchState (watch.c). */
void game_watch_state(rpc_call *call, const ProtobufCMessage *req, void *svc);

#endif

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

#endif

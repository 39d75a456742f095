/*
 * handlers.c — the gRPC face of store-svc: each Store method becomes a
 * store_op in the call's arena, validated by its domain's begin function and
 * submitted to the writer or the reader pool. The op's done callback
 * finishes the call (from whichever thread ran the last stage: the runtime
 * allows finishing a call from any thread).
 */
#include <stdint.h>

#include "rpc/wire_check.h"
#include "scrabble/v1/store.pb-c.h"
#include "store.h"

/* Finishes the gRPC call the op was made from. */
/* What only game-svc may see: a game's bag seed (the whole future draw
 * order) and the tiles a player exchanged. Any other caller gets the record
 * without them, whatever method produced it. */
static void store__redact(rpc_call *call, ProtobufCMessage *reply)
{
    Scrabble__V1__Move **moves = NULL;
    size_t n = 0;
    if (reply->descriptor == &scrabble__v1__game_record__descriptor) {
        Scrabble__V1__GameRecord *g = (Scrabble__V1__GameRecord *)reply;
        if (rpc_call_peer_is(call, "game-svc"))
            return;
        g->seed = 0;
        moves = g->moves;
        n = g->n_moves;
    } else if (reply->descriptor == &scrabble__v1__commit_move_reply__descriptor) {
        Scrabble__V1__CommitMoveReply *r = (Scrabble__V1__CommitMoveReply *)reply;
        if (r->move == NULL || rpc_call_peer_is(call, "game-svc"))
            return;
        moves = &r->move;
        n = 1;
    }
    for (size_t i = 0; i < n; i++)
        if (moves[i])
            moves[i]->exchanged_tiles = (char *)protobuf_c_empty_string;
}

static void store__call_done(store_op *op)
{
    rpc_call *call = op->done_arg;
    if (op->st.code == GRPC_STATUS_OK && op->reply)
        store__redact(call, op->reply);
    if (op->st.code == GRPC_STATUS_OK && op->reply)
        rpc_call_reply(call, op->reply);
    else if (op->st.code == GRPC_STATUS_OK)
        rpc_call_fail(call, GRPC_STATUS_INTERNAL, "internal", "%s produced no reply", op->name);
    else
        rpc_call_fail_status(call, &op->st);
}

static void store__dispatch(rpc_call *call, const ProtobufCMessage *req, store_server *srv,
                            const char *name, store_begin_fn begin)
{
    /* The string gate (rpc/wire_check.h) on the bytes as they arrived:
     * whatever calls store-svc, nothing it persists was cut at a NUL or
     * holds invalid UTF-8 or control characters. */
    rpc_wire_result chk;
    if (rpc_wire_check_buffer(rpc_call_request_bytes(call), req->descriptor, &chk) != RPC_WIRE_OK) {
        char msg[200];
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, rpc_wire_reason(chk.verdict), "%s",
                      rpc_wire_message(&chk, msg, sizeof msg));
        return;
    }
    rpc_arena *a = rpc_call_arena(call);
    store_op *op = rpc_arena_calloc(a, 1, sizeof(*op));
    if (!op) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    op->name = name;
    op->trace = rpc_call_trace(call);
    op->srv = srv;
    op->arena = a;
    /* Unknown fields are dropped: nothing outside the contract is stored
     * or passed on. */
    rpc_message_strip_unknown((ProtobufCMessage *)req);
    op->req = req;
    int64_t left = rpc_call_remaining_ms(call);
    op->deadline_ms = left == INT64_MAX ? 0 : store_now_ms() + left;
    op->done = store__call_done;
    op->done_arg = call;
    store_submit(srv, op, begin(op));
}

#define STORE__HANDLER(fn, name, begin)                                                            \
    static void fn(rpc_call *call, const ProtobufCMessage *req, void *svc)                         \
    {                                                                                              \
        store__dispatch(call, req, svc, name, begin);                                              \
    }

STORE__HANDLER(store__h_resolve_session, "ResolveSession", store_resolve_session_begin)
STORE__HANDLER(store__h_register, "Register", store_register_begin)
STORE__HANDLER(store__h_login, "Login", store_login_begin)
STORE__HANDLER(store__h_get_account, "GetAccount", store_get_account_begin)
STORE__HANDLER(store__h_update_profile, "UpdateProfile", store_update_profile_begin)
STORE__HANDLER(store__h_get_stats, "GetStats", store_get_stats_begin)
STORE__HANDLER(store__h_create_invitation, "CreateInvitation", store_create_invitation_begin)
STORE__HANDLER(store__h_respond_invitation, "RespondInvitation", store_respond_invitation_begin)
STORE__HANDLER(store__h_list_invitations, "ListInvitations", store_list_invitations_begin)
STORE__HANDLER(store__h_get_invitation, "GetInvitation", store_get_invitation_begin)
STORE__HANDLER(store__h_create_game, "CreateGame", store_create_game_begin)
STORE__HANDLER(store__h_load_game, "LoadGame", store_load_game_begin)
STORE__HANDLER(store__h_list_games, "ListGames", store_list_games_begin)
STORE__HANDLER(store__h_commit_move, "CommitMove", store_commit_move_begin)
STORE__HANDLER(store__h_finish_game, "FinishGame", store_finish_game_begin)
STORE__HANDLER(store__h_append_chat, "AppendChat", store_append_chat_begin)
STORE__HANDLER(store__h_list_chat, "ListChat", store_list_chat_begin)
STORE__HANDLER(store__h_cancel_invitation, "CancelInvitation", store_cancel_invitation_begin)
STORE__HANDLER(store__h_start_clock, "StartClock", store_start_clock_begin)
STORE__HANDLER(store__h_timeout_game, "TimeoutGame", store_timeout_game_begin)
STORE__HANDLER(store__h_claim_deadlines, "ClaimDeadlines", store_claim_deadlines_begin)
STORE__HANDLER(store__h_append_events, "AppendEvents", store_append_events_begin)
STORE__HANDLER(store__h_read_events, "ReadEvents", store_read_events_begin)
STORE__HANDLER(store__h_get_leaderboard, "GetLeaderboard", store_get_leaderboard_begin)
STORE__HANDLER(store__h_post_seek, "PostSeek", store_post_seek_begin)
STORE__HANDLER(store__h_cancel_seek, "CancelSeek", store_cancel_seek_begin)
STORE__HANDLER(store__h_list_seeks, "ListSeeks", store_list_seeks_begin)
STORE__HANDLER(store__h_list_public_games, "ListPublicGames", store_list_public_games_begin)
STORE__HANDLER(store__h_claim_bot_turns, "ClaimBotTurns", store_claim_bot_turns_begin)

/* Request size bounds: what each method can legitimately carry (a handle
 * is at most 128 bytes of UTF-8, a password 1024 bytes, a bio 280
 * characters, a chat line 500, a move 7 placements and 8 words), checked by
 * the runtime before anything is decoded. */
#define STORE__SMALL 1024
static const rpc_method_impl store__methods[] = {
    {"ResolveSession", store__h_resolve_session, STORE__SMALL},
    {"Register", store__h_register, 2048},
    {"Login", store__h_login, 2048},
    {"GetAccount", store__h_get_account, STORE__SMALL},
    {"UpdateProfile", store__h_update_profile, 2048},
    {"GetStats", store__h_get_stats, STORE__SMALL},
    {"CreateInvitation", store__h_create_invitation, STORE__SMALL},
    {"RespondInvitation", store__h_respond_invitation, STORE__SMALL},
    {"ListInvitations", store__h_list_invitations, STORE__SMALL},
    {"GetInvitation", store__h_get_invitation, STORE__SMALL},
    {"CreateGame", store__h_create_game, STORE__SMALL},
    {"LoadGame", store__h_load_game, STORE__SMALL},
    {"ListGames", store__h_list_games, STORE__SMALL},
    /* Writes that carry events: up to 16 of at most 4 kB each, in
     * practice a move's 2-8 events of a few hundred bytes. */
    {"CommitMove", store__h_commit_move, 32768},
    {"FinishGame", store__h_finish_game, 32768},
    {"AppendChat", store__h_append_chat, 32768},
    {"ListChat", store__h_list_chat, STORE__SMALL},
    {"CancelInvitation", store__h_cancel_invitation, STORE__SMALL},
    {"StartClock", store__h_start_clock, STORE__SMALL},
    {"TimeoutGame", store__h_timeout_game, STORE__SMALL},
    {"ClaimDeadlines", store__h_claim_deadlines, STORE__SMALL},
    {"AppendEvents", store__h_append_events, 32768},
    {"ReadEvents", store__h_read_events, STORE__SMALL},
    {"GetLeaderboard", store__h_get_leaderboard, STORE__SMALL},
    {"PostSeek", store__h_post_seek, STORE__SMALL},
    {"CancelSeek", store__h_cancel_seek, STORE__SMALL},
    {"ListSeeks", store__h_list_seeks, STORE__SMALL},
    {"ListPublicGames", store__h_list_public_games, STORE__SMALL},
    /* Up to 128 preferred game ids: 10 bytes each at most. */
    {"ClaimBotTurns", store__h_claim_bot_turns, 2048},
    {NULL, NULL, 0, false},
};

/* Who may call what, read from the callers' code: the gateway resolves
 * sessions, runs accounts, profiles, invitations and game lists
 * (gateway/src/auth.c, accounts.c); game-svc creates, loads and commits
 * games, keeps their clocks and deadlines (deadlines.c) and their chat
 * (game-svc/src/store_client.c). GetInvitation and FinishGame have no caller among our services:
 * they are an operator's (the admin identity). */
static const rpc_allow_rule store__allow[] = {
    {"ResolveSession", "gateway"},
    {"Register", "gateway"},
    {"Login", "gateway"},
    {"GetAccount", "gateway"},
    {"UpdateProfile", "gateway"},
    {"GetStats", "gateway"},
    {"CreateInvitation", "gateway"},
    {"RespondInvitation", "gateway"},
    {"ListInvitations", "gateway"},
    {"ListGames", "gateway"},
    {"GetLeaderboard", "gateway"},
    {"CreateGame", "game-svc"},
    {"LoadGame", "game-svc"},
    {"CommitMove", "game-svc"},
    {"AppendChat", "game-svc"},
    {"ListChat", "game-svc"},
    {"CancelInvitation", "gateway"},
    {"StartClock", "game-svc"},
    {"TimeoutGame", "game-svc"},
    {"ClaimDeadlines", "game-svc"},
    /* Nudges and game starts (game-svc), invitations (the gateway). */
    {"AppendEvents", "game-svc gateway"},
    {"ReadEvents", "gateway"},
    {"GetInvitation", "admin"},
    {"FinishGame", "admin"},
    /* The lobby (gateway/src/seeks.c). */
    {"PostSeek", "gateway"},
    {"CancelSeek", "gateway"},
    {"ListSeeks", "gateway"},
    {"ListPublicGames", "gateway"},
    {"ClaimBotTurns", "game-svc"},
    {NULL, NULL},
};

int store_handlers_register(rpc_server *rs, store_server *srv)
{
    if (rpc_server_allow(rs, &scrabble__v1__store__descriptor, store__allow) != 0)
        return -1;
    return rpc_server_add_service(rs, &scrabble__v1__store__descriptor, store__methods, srv);
}

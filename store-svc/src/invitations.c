/*
 * invitations.c — CreateInvitation, RespondInvitation, ListInvitations,
 * GetInvitation. An invitation seats the inviter (seat 0, accepted by
 * inviting) and 1..3 invitees named by handle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"
#include "time_control.h"

#define STORE__DEFAULT_LEXICON "wamerican"

static store_next store__invitation_done(store_op *op, PGresult *res)
{
    /* Write functions return (code, [detail,] invitation json). */
    int ncols = PQnfields(res);
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    const char *detail = ncols == 3 && !PQgetisnull(res, 0, 1) ? PQgetvalue(res, 0, 1) : NULL;
    /* A missing invitee whose handle has the bot prefix asked for a bot
     * level that does not exist (the prefix is reserved, so it names no
     * person either): a reason of its own, so a client can tell a typo in
     * a level from an unknown player. */
    if (strcmp(PQgetvalue(res, 0, 0), "not_found") == 0 && detail &&
        store_handle_is_bot_reserved(detail)) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "unknown_bot_level",
                       "no bot named %s (levels: bot-beginner, bot-club, bot-expert)", detail);
        return STORE_NEXT_DONE;
    }
    if (!store_op_code(op, PQgetvalue(res, 0, 0), detail))
        return STORE_NEXT_DONE;
    op->reply = store_op_json_col(op, res, 0, ncols - 1, store_json_invitation);
    if (!op->reply)
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "bad invitation record");
    return STORE_NEXT_DONE;
}

store_next store_create_invitation_begin(store_op *op)
{
    const Scrabble__V1__CreateInvitationRequest *req = op->req;
    const char *why;
    if (req->inviter_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "inviter not found");
        return STORE_NEXT_DONE;
    }
    if (req->n_invitee_handles == 0)
        return store_op_bad(op, "empty", "invitee_handles");
    if (req->n_invitee_handles > 3) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "too_many_seats",
                       "a game has at most 4 seats (3 invitees)");
        return STORE_NEXT_DONE;
    }
    char *folded[3];
    for (size_t i = 0; i < req->n_invitee_handles; i++) {
        if ((why = store_check_handle(req->invitee_handles[i])))
            return store_op_bad(op, why, "invitee handle");
        char f[STORE_HANDLE_BYTES];
        if (store_handle_fold(req->invitee_handles[i], f, sizeof f) != 0)
            snprintf(f, sizeof f, "%s", req->invitee_handles[i]);
        if (!(folded[i] = rpc_arena_strdup(op->arena, f))) {
            rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                           "out of memory");
            return STORE_NEXT_DONE;
        }
    }
    const char *lexicon = req->lexicon[0] ? req->lexicon : STORE__DEFAULT_LEXICON;
    if ((why = store_check_handle(lexicon)))
        return store_op_bad(op, why, "lexicon");
    if ((why = store_check_request_id(req->request_id)))
        return store_op_bad(op, why, "request_id");
    char tcmsg[128];
    if (store_time_control_check(req->time_control, tcmsg, sizeof tcmsg)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_time_control", "%s", tcmsg);
        return STORE_NEXT_DONE;
    }
    const Scrabble__V1__TimeControl *tc = req->time_control;
    int kind = store_time_control_kind(tc);
    op->stmt = "create_invitation_tc";
    store_op_param_i64(op, 0, req->inviter_id);
    store_op_param_text_array(op, 1, req->invitee_handles, req->n_invitee_handles);
    store_op_param_text_array(op, 2, folded, req->n_invitee_handles);
    store_op_param_text(op, 3, lexicon);
    store_op_param_text(op, 4, req->request_id);
    store_op_param_i64(op, 5, kind);
    store_op_param_i64(op, 6, tc ? tc->days_per_move : 0);
    store_op_param_i64(op, 7, tc ? tc->initial_seconds : 0);
    store_op_param_i64(op, 8, tc ? tc->increment_seconds : 0);
    store_op_param_i64(op, 9, tc ? tc->max_overtime_minutes : 0);
    store_op_param_text(op, 10, store_time_family(kind));
    store_op_param_i64(op, 11, op->srv->cfg.invitation_ttl_us / 1000);
    store_op_param_bool(op, 12, req->rated);
    store_op_param_bool(op, 13, req->public_game);
    op->step = store__invitation_done;
    return STORE_NEXT_WRITE;
}

store_next store_respond_invitation_begin(store_op *op)
{
    const Scrabble__V1__StoreRespondInvitationRequest *req = op->req;
    if (req->invitation_id <= 0 || req->account_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "invitation not found");
        return STORE_NEXT_DONE;
    }
    op->stmt = "respond_invitation";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_i64(op, 1, req->invitation_id);
    store_op_param_bool(op, 2, req->accept);
    op->step = store__invitation_done;
    return STORE_NEXT_WRITE;
}

store_next store_cancel_invitation_begin(store_op *op)
{
    const Scrabble__V1__StoreCancelInvitationRequest *req = op->req;
    if (req->invitation_id <= 0 || req->account_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "invitation not found");
        return STORE_NEXT_DONE;
    }
    op->stmt = "cancel_invitation";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_i64(op, 1, req->invitation_id);
    op->step = store__invitation_done;
    return STORE_NEXT_WRITE;
}

static store_next store__list_done(store_op *op, PGresult *res)
{
    int n = PQntuples(res);
    if (n == 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "account not found");
        return STORE_NEXT_DONE;
    }
    Scrabble__V1__ListInvitationsReply *r = RPC_ARENA_MSG(
        op->arena, Scrabble__V1__ListInvitationsReply, scrabble__v1__list_invitations_reply__init);
    r->invitations = rpc_arena_calloc(op->arena, (size_t)n, sizeof(*r->invitations));
    for (int i = 0; i < n; i++) {
        ProtobufCMessage *m = store_op_json_col(op, res, i, 1, store_json_invitation);
        if (m) /* NULL: the one empty row of an account with none */
            r->invitations[r->n_invitations++] = (Scrabble__V1__Invitation *)m;
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_list_invitations_begin(store_op *op)
{
    const Scrabble__V1__AccountRef *req = op->req;
    op->stmt = "list_invitations";
    store_op_param_i64(op, 0, req->account_id);
    op->step = store__list_done;
    return STORE_NEXT_READ;
}

static store_next store__get_done(store_op *op, PGresult *res)
{
    op->reply = store_op_json_col(op, res, 0, 0, store_json_invitation);
    if (!op->reply)
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "invitation not found");
    return STORE_NEXT_DONE;
}

store_next store_get_invitation_begin(store_op *op)
{
    const Scrabble__V1__InvitationRef *req = op->req;
    op->stmt = "get_invitation";
    store_op_param_i64(op, 0, req->invitation_id);
    op->step = store__get_done;
    return STORE_NEXT_READ;
}

/*
 * chat.c — AppendChat and ListChat. Chat text is stored verbatim (it is only
 * ever a statement parameter): 1..500 characters of valid UTF-8.
 */
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__CHAT_MAX_CHARS 500
#define STORE__CHAT_PAGE_DEFAULT 50
#define STORE__CHAT_PAGE_MAX 200

static store_next store__append_done(store_op *op, PGresult *res)
{
    const Scrabble__V1__AppendChatRequest *req = op->req;
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    if (!store_op_code(op, PQgetvalue(res, 0, 0), NULL))
        return STORE_NEXT_DONE;
    Scrabble__V1__ChatMessage *m =
        RPC_ARENA_MSG(op->arena, Scrabble__V1__ChatMessage, scrabble__v1__chat_message__init);
    m->message_id = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    m->game_id = req->game_id;
    m->account_id = req->account_id;
    m->handle = rpc_arena_strdup(op->arena, PQgetvalue(res, 0, 2));
    /* A repeat of a request id gets the line first stored, not its own. */
    m->text = rpc_arena_strdup(op->arena, PQgetvalue(res, 0, 4));
    m->at_ms = strtoll(PQgetvalue(res, 0, 3), NULL, 10);
    op->reply = &m->base;
    return STORE_NEXT_DONE;
}

store_next store_append_chat_begin(store_op *op)
{
    const Scrabble__V1__AppendChatRequest *req = op->req;
    const char *why;
    if (req->game_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "game not found");
        return STORE_NEXT_DONE;
    }
    if ((why = store_check_text(req->text, 1, STORE__CHAT_MAX_CHARS)))
        return store_op_bad(op, why, "text");
    if ((why = store_check_request_id(req->request_id)))
        return store_op_bad(op, why, "request_id");
    if ((why = store_events_check(req->events, req->n_events))) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_events", "%s", why);
        return STORE_NEXT_DONE;
    }
    op->stmt = "append_chat";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_i64(op, 1, req->account_id);
    store_op_param_text(op, 2, req->text);
    store_op_param_text(op, 3, req->request_id);
    store_op_param_events(op, 4, req->events, req->n_events);
    op->writes_events = req->n_events > 0;
    op->step = store__append_done;
    return STORE_NEXT_WRITE;
}

static store_next store__list_done(store_op *op, PGresult *res)
{
    int rows = PQntuples(res);
    if (rows == 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "game not found");
        return STORE_NEXT_DONE;
    }
    Scrabble__V1__ListChatReply *r =
        RPC_ARENA_MSG(op->arena, Scrabble__V1__ListChatReply, scrabble__v1__list_chat_reply__init);
    r->messages = rpc_arena_calloc(op->arena, rows, sizeof(*r->messages));
    for (int i = 0; i < rows; i++) {
        if (PQgetisnull(res, i, 1))
            continue; /* a game without messages */
        Scrabble__V1__ChatMessage *m =
            RPC_ARENA_MSG(op->arena, Scrabble__V1__ChatMessage, scrabble__v1__chat_message__init);
        m->game_id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
        m->message_id = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        m->account_id = strtoll(PQgetvalue(res, i, 2), NULL, 10);
        m->handle = rpc_arena_strdup(op->arena, PQgetvalue(res, i, 3));
        m->text = rpc_arena_strdup(op->arena, PQgetvalue(res, i, 4));
        m->at_ms = strtoll(PQgetvalue(res, i, 5), NULL, 10);
        r->messages[r->n_messages++] = m;
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_list_chat_begin(store_op *op)
{
    const Scrabble__V1__ListChatRequest *req = op->req;
    if (req->game_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "game not found");
        return STORE_NEXT_DONE;
    }
    int limit = req->limit <= 0                     ? STORE__CHAT_PAGE_DEFAULT
                : req->limit > STORE__CHAT_PAGE_MAX ? STORE__CHAT_PAGE_MAX
                                                    : req->limit;
    op->stmt = "list_chat";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_i64(op, 1, req->after_id < 0 ? 0 : req->after_id);
    store_op_param_i64(op, 2, limit);
    op->step = store__list_done;
    return STORE_NEXT_READ;
}

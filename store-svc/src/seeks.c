/*
 * seeks.c — PostSeek, CancelSeek, ListSeeks (0010_seeks.sql has the tables
 * and why a seek is matched exactly once). The gateway validated the
 * request already; store-svc checks again, since every port is treated as
 * reachable by someone hostile.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"
#include "time_control.h"

#define STORE__DEFAULT_LEXICON "wamerican"
#define STORE__LIST_DEFAULT 20
#define STORE__LIST_MAX 100
/* A match's game is normally created by the poster's gateway within
 * milliseconds; after this long a game-svc poller creates it instead. */
#define STORE__SEEK_RETRY_MS 5000

static store_next store__seek_done(store_op *op, PGresult *res)
{
    /* (code, [detail,] seek json) */
    return store_op_code_json(op, res, store_json_seek, "seek");
}

store_next store_post_seek_begin(store_op *op)
{
    const Scrabble__V1__StorePostSeekRequest *req = op->req;
    const store_config *cfg = &op->srv->cfg;
    const char *why;
    if (req->account_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "account not found");
        return STORE_NEXT_DONE;
    }
    /* The gateway refused these already; checked again for any caller. */
    if (req->seats != 0 && (req->seats < 2 || req->seats > 4)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_seats",
                       "seats must be 2..4 (0 means 2)");
        return STORE_NEXT_DONE;
    }
    if (req->min_rating < 0 || req->min_rating > STORE_SEEK_RATING_MAX || req->max_rating < 0 ||
        req->max_rating > STORE_SEEK_RATING_MAX ||
        (req->min_rating > 0 && req->max_rating > 0 && req->min_rating > req->max_rating)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_rating_range",
                       "min_rating and max_rating must be 0..%d (0: no bound), min <= max",
                       STORE_SEEK_RATING_MAX);
        return STORE_NEXT_DONE;
    }
    /* The client may ask for a shorter life, never a longer one. */
    if (req->expires_in_seconds < 0 || req->expires_in_seconds > cfg->seek_ttl_us / 1000000) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_expiry",
                       "expires_in_seconds must be 0..%lld (the server's --seek-ttl; 0: that)",
                       (long long)(cfg->seek_ttl_us / 1000000));
        return STORE_NEXT_DONE;
    }
    const char *lexicon = req->lexicon[0] ? req->lexicon : STORE__DEFAULT_LEXICON;
    if ((why = store_check_handle(lexicon)))
        return store_op_bad(op, why, "lexicon");
    char tcmsg[128];
    if (store_time_control_check(req->time_control, tcmsg, sizeof tcmsg)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_time_control", "%s", tcmsg);
        return STORE_NEXT_DONE;
    }
    const Scrabble__V1__TimeControl *tc = req->time_control;
    int kind = store_time_control_kind(tc);
    int64_t ttl_ms =
        req->expires_in_seconds ? (int64_t)req->expires_in_seconds * 1000 : cfg->seek_ttl_us / 1000;
    op->stmt = "seek_post";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_text(op, 1, lexicon);
    store_op_param_i64(op, 2, req->seats ? req->seats : 2);
    store_op_param_i64(op, 3, kind);
    store_op_param_i64(op, 4, tc ? tc->days_per_move : 0);
    store_op_param_i64(op, 5, tc ? tc->initial_seconds : 0);
    store_op_param_i64(op, 6, tc ? tc->increment_seconds : 0);
    store_op_param_i64(op, 7, tc ? tc->max_overtime_minutes : 0);
    store_op_param_text(op, 8, store_time_family(kind));
    store_op_param_bool(op, 9, req->rated);
    store_op_param_i64(op, 10, req->min_rating);
    store_op_param_i64(op, 11, req->max_rating);
    store_op_param_i64(op, 12, ttl_ms);
    store_op_param_i64(op, 13, cfg->seek_max_open);
    store_op_param_i64(op, 14, STORE__SEEK_RETRY_MS);
    op->step = store__seek_done;
    return STORE_NEXT_WRITE;
}

store_next store_cancel_seek_begin(store_op *op)
{
    const Scrabble__V1__StoreCancelSeekRequest *req = op->req;
    if (req->seek_id <= 0 || req->account_id <= 0) {
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "seek not found");
        return STORE_NEXT_DONE;
    }
    op->stmt = "seek_cancel";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_i64(op, 1, req->seek_id);
    op->step = store__seek_done;
    return STORE_NEXT_WRITE;
}

/* The page token: the last seek id of the page, as 16 lower-case hex
 * digits (opaque to clients); the next page starts after it (the lobby,
 * oldest first) or before it (mine, newest first). */
static store_next store__list_done(store_op *op, PGresult *res)
{
    int n = PQntuples(res);
    int want = (int)(intptr_t)op->scratch;
    Scrabble__V1__ListSeeksReply *r = RPC_ARENA_MSG(op->arena, Scrabble__V1__ListSeeksReply,
                                                    scrabble__v1__list_seeks_reply__init);
    if (!r || !(r->seeks = rpc_arena_calloc(op->arena, n ? (size_t)n : 1, sizeof(*r->seeks)))) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    for (int i = 0; i < n && i < want; i++) {
        ProtobufCMessage *m = store_op_json_col(op, res, i, 0, store_json_seek);
        if (m)
            r->seeks[r->n_seeks++] = (Scrabble__V1__Seek *)m;
    }
    /* One row more than the page was read: there is a next page. */
    if (n > want && r->n_seeks > 0) {
        char tok[17];
        snprintf(tok, sizeof tok, "%016" PRIx64, (uint64_t)r->seeks[r->n_seeks - 1]->seek_id);
        r->next_page_token = rpc_arena_strdup(op->arena, tok);
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_list_seeks_begin(store_op *op)
{
    const Scrabble__V1__StoreListSeeksRequest *req = op->req;
    const char *why;
    uint64_t after = 0;
    if (req->page_size < 0 || req->page_size > STORE__LIST_MAX) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                       "page_size must be 0..%d", STORE__LIST_MAX);
        return STORE_NEXT_DONE;
    }
    if (req->page_token[0] &&
        (strlen(req->page_token) != 16 || store_hex_u64(req->page_token, 16, &after) != 0 ||
         after > INT64_MAX)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_page_token",
                       "page_token is not one this server issued");
        return STORE_NEXT_DONE;
    }
    if (req->lexicon[0] && (why = store_check_handle(req->lexicon)))
        return store_op_bad(op, why, "lexicon");
    int want = req->page_size ? req->page_size : STORE__LIST_DEFAULT;
    op->scratch = (void *)(intptr_t)want;
    if (req->mine) {
        op->stmt = "seek_list_mine";
        store_op_param_i64(op, 0, req->account_id);
    } else {
        op->stmt = "seek_list";
        store_op_param_text(op, 0, req->lexicon);
    }
    store_op_param_i64(op, 1, (int64_t)after);
    store_op_param_i64(op, 2, want + 1);
    op->step = store__list_done;
    return STORE_NEXT_READ;
}

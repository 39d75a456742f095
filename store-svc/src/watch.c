/*
 * watch.c — ListPublicGames: the live public games (migration 0009), newest
 * first, paged with the page-token scheme of ListGames (pagetoken.c) on the
 * key (created_at, id), which never changes while a game lives, so paging
 * neither repeats nor skips a game (docs/API.md, Spectators).
 */
#include <stdlib.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__WATCH_PAGE_DEFAULT 20
#define STORE__WATCH_PAGE_MAX 100

static ProtobufCMessage *store__watch_game_conv(rpc_arena *a, const struct cJSON *j)
{
    return store_json_game(a, j, NULL);
}

static store_next store__watch_list_done(store_op *op, PGresult *res)
{
    const int *page_size = op->scratch;
    int rows = PQntuples(res);
    Scrabble__V1__PublicGameListReply *r = RPC_ARENA_MSG(
        op->arena, Scrabble__V1__PublicGameListReply, scrabble__v1__public_game_list_reply__init);
    if (!r || !(r->games = rpc_arena_calloc(op->arena, (size_t)rows + 1, sizeof(*r->games)))) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    r->next_page_token = "";
    for (int i = 0; i < rows && i < *page_size; i++) {
        Scrabble__V1__GameRecord *g =
            (Scrabble__V1__GameRecord *)store_op_json_col(op, res, i, 2, store__watch_game_conv);
        Scrabble__V1__GameSummary *s = g ? store_game_summary(op->arena, g) : NULL;
        if (s)
            r->games[r->n_games++] = s;
    }
    /* One row more than a page: there is a next page, after the last row
     * shown. */
    if (rows > *page_size) {
        int last = *page_size - 1;
        char tok[64];
        store_page_token_encode(strtoll(PQgetvalue(res, last, 1), NULL, 10),
                                strtoll(PQgetvalue(res, last, 0), NULL, 10), tok, sizeof tok);
        r->next_page_token = rpc_arena_strdup(op->arena, tok);
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_list_public_games_begin(store_op *op)
{
    const Scrabble__V1__PublicGameListRequest *req = op->req;
    if (req->page_size < 0 || req->page_size > STORE__WATCH_PAGE_MAX) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                       "page_size must be 0..%d", STORE__WATCH_PAGE_MAX);
        return STORE_NEXT_DONE;
    }
    int *page_size = rpc_arena_alloc(op->arena, sizeof *page_size);
    if (!page_size) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    *page_size = req->page_size ? req->page_size : STORE__WATCH_PAGE_DEFAULT;
    op->scratch = page_size;
    /* No token: start after a far-future key (year ~2255), as ListGames. */
    int64_t after_us = 9000000000000000LL, after_id = INT64_MAX;
    if (req->page_token[0] && store_page_token_decode(req->page_token, &after_us, &after_id) != 0) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_page_token",
                       "page_token is not one this service issued");
        return STORE_NEXT_DONE;
    }
    op->stmt = "list_public_games";
    store_op_param_i64(op, 0, after_us);
    store_op_param_i64(op, 1, after_id);
    store_op_param_i64(op, 2, *page_size + 1);
    op->step = store__watch_list_done;
    return STORE_NEXT_READ;
}

/*
 * ratings.c — the read side of ratings (0006_ratings.sql does the writing,
 * in the transaction that finishes a game): the ratings and rating history
 * columns of GetAccount / GetStats, and GetLeaderboard.
 *
 * The leaderboard's page token is the keyset of the last row of a page and
 * the rank it had: "l1." + 16 hex (the rating's IEEE-754 bits, so the next
 * page resumes at exactly that value) + "." + 16 hex (account id) + "." +
 * 8 hex (rank). Clients treat it as opaque.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__LEADERBOARD_MAX 100
#define STORE__LEADERBOARD_DEFAULT 20
#define STORE__DEFAULT_LEXICON "wamerican"

int store_ratings_col(store_op *op, PGresult *res, int col, Scrabble__V1__Rating ***ratings,
                      size_t *nratings, Scrabble__V1__RatingChange ***history, size_t *nhistory)
{
    if (PQnfields(res) <= col || PQgetisnull(res, 0, col))
        return STORE_OK;
    cJSON *j = store_json_parse(PQgetvalue(res, 0, col));
    if (!cJSON_IsArray(j)) {
        cJSON_Delete(j);
        return STORE_ERROR;
    }
    int rc = ratings ? store_json_ratings(op->arena, j, ratings, nratings)
                     : store_json_rating_history(op->arena, j, history, nhistory);
    cJSON_Delete(j);
    return rc;
}

static void store__board_token(double rating, int64_t account_id, int32_t rank, char *out,
                               size_t outlen)
{
    uint64_t bits;
    memcpy(&bits, &rating, sizeof bits);
    snprintf(out, outlen, "l1.%016" PRIx64 ".%016" PRIx64 ".%08" PRIx32, bits, (uint64_t)account_id,
             (uint32_t)rank);
}

/* 0 and the keyset, or -1 when tok is not a token this code wrote. */
static int store__board_token_decode(const char *tok, double *rating, int64_t *account_id,
                                     int32_t *rank)
{
    uint64_t bits, id, r;
    if (strlen(tok) != 3 + 16 + 1 + 16 + 1 + 8 || memcmp(tok, "l1.", 3) != 0 || tok[19] != '.' ||
        tok[36] != '.')
        return -1;
    if (store_hex_u64(tok + 3, 16, &bits) || store_hex_u64(tok + 20, 16, &id) ||
        store_hex_u64(tok + 37, 8, &r))
        return -1;
    memcpy(rating, &bits, sizeof bits);
    if (!isfinite(*rating) || (int64_t)id <= 0 || r == 0 || r > INT32_MAX)
        return -1;
    *account_id = (int64_t)id;
    *rank = (int32_t)r;
    return 0;
}

typedef struct store__board {
    int32_t rank; /* of the row before this page */
    int32_t want;
    const char *lexicon, *family;
} store__board;

static store_next store__board_done(store_op *op, PGresult *res)
{
    store__board *b = op->scratch;
    int n = PQntuples(res);
    Scrabble__V1__GetLeaderboardReply *r = RPC_ARENA_MSG(
        op->arena, Scrabble__V1__GetLeaderboardReply, scrabble__v1__get_leaderboard_reply__init);
    if (!r)
        goto oom;
    r->lexicon = (char *)b->lexicon;
    r->family = (char *)b->family;
    r->entries = rpc_arena_calloc(op->arena, n ? (size_t)n : 1, sizeof *r->entries);
    if (!r->entries)
        goto oom;
    for (int i = 0; i < n; i++) {
        Scrabble__V1__LeaderboardEntry *e = RPC_ARENA_MSG(op->arena, Scrabble__V1__LeaderboardEntry,
                                                          scrabble__v1__leaderboard_entry__init);
        Scrabble__V1__Rating *rt =
            RPC_ARENA_MSG(op->arena, Scrabble__V1__Rating, scrabble__v1__rating__init);
        if (!e || !rt)
            goto oom;
        e->rank = b->rank + i + 1;
        e->account_id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
        e->handle = rpc_arena_strdup(op->arena, PQgetvalue(res, i, 1));
        rt->lexicon = (char *)b->lexicon;
        rt->family = (char *)b->family;
        rt->rating = strtod(PQgetvalue(res, i, 2), NULL);
        rt->deviation = strtod(PQgetvalue(res, i, 3), NULL);
        rt->volatility = strtod(PQgetvalue(res, i, 4), NULL);
        rt->games = atoi(PQgetvalue(res, i, 5));
        rt->updated_at_ms = strtoll(PQgetvalue(res, i, 6), NULL, 10);
        e->rating = rt;
        r->entries[r->n_entries++] = e;
    }
    if (n == b->want && n > 0) {
        const Scrabble__V1__LeaderboardEntry *last = r->entries[n - 1];
        char tok[64];
        store__board_token(last->rating->rating, last->account_id, last->rank, tok, sizeof tok);
        r->next_page_token = rpc_arena_strdup(op->arena, tok);
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
oom:
    rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
    return STORE_NEXT_DONE;
}

store_next store_get_leaderboard_begin(store_op *op)
{
    const Scrabble__V1__GetLeaderboardRequest *req = op->req;
    store__board *b = rpc_arena_calloc(op->arena, 1, sizeof *b);
    if (!b) {
        rpc_status_set(&op->st, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return STORE_NEXT_DONE;
    }
    b->lexicon = req->lexicon[0] ? req->lexicon : STORE__DEFAULT_LEXICON;
    b->family = req->family[0] ? req->family : "untimed";
    if (strcmp(b->family, "untimed") != 0 && strcmp(b->family, "correspondence") != 0 &&
        strcmp(b->family, "realtime") != 0) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_family",
                       "family must be untimed, correspondence or realtime");
        return STORE_NEXT_DONE;
    }
    if (strlen(b->lexicon) > 31)
        return store_op_bad(op, "too_long", "lexicon");
    if (req->page_size < 0 || req->page_size > STORE__LEADERBOARD_MAX) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_page_size",
                       "page_size must be 0..%d", STORE__LEADERBOARD_MAX);
        return STORE_NEXT_DONE;
    }
    b->want = req->page_size ? req->page_size : STORE__LEADERBOARD_DEFAULT;
    double after_rating = INFINITY;
    int64_t after_id = 0;
    if (req->page_token[0] &&
        store__board_token_decode(req->page_token, &after_rating, &after_id, &b->rank) != 0) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_page_token",
                       "page_token is not one this server issued");
        return STORE_NEXT_DONE;
    }
    char rating[40];
    if (isinf(after_rating))
        snprintf(rating, sizeof rating, "Infinity");
    else
        snprintf(rating, sizeof rating, "%.17g", after_rating);
    op->scratch = b;
    op->stmt = "leaderboard";
    store_op_param_text(op, 0, b->lexicon);
    store_op_param_text(op, 1, b->family);
    store_op_param_text(op, 2, rating);
    store_op_param_i64(op, 3, after_id);
    store_op_param_i64(op, 4, b->want);
    op->step = store__board_done;
    return STORE_NEXT_READ;
}

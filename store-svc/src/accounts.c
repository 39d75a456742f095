/*
 * accounts.c — Register, Login, ResolveSession, GetAccount, UpdateProfile,
 * GetStats.
 *
 * Register and Login do their PBKDF2 work in a local step on the reader
 * pool (never on a gRPC worker, never on the batcher), then hand the insert
 * to the batcher: a new session is acknowledged only once committed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__PASSWORD_MAX 1024

typedef struct store__auth {
    char token[65];
    char token_hash[65];
    int64_t account_id;
    const char *handle;
    /* Register: the handle's stored (NFKC) and folded forms. */
    char norm[STORE_HANDLE_BYTES];
    char folded[STORE_HANDLE_BYTES];
} store__auth;

static store__auth *store__auth_new(store_op *op)
{
    store__auth *a = rpc_arena_calloc(op->arena, 1, sizeof(*a));
    op->scratch = a;
    return a;
}

/* The new session's lifetime, in the milliseconds the SQL takes. */
static int64_t store__session_ttl_ms(const store_op *op)
{
    return op->srv->cfg.session_ttl_us / 1000;
}

static store_next store__internal(store_op *op, const char *what)
{
    rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "%s", what);
    return STORE_NEXT_DONE;
}

static ProtobufCMessage *store__auth_reply(store_op *op, const store__auth *a, int64_t expires)
{
    Scrabble__V1__AuthReply *r =
        RPC_ARENA_MSG(op->arena, Scrabble__V1__AuthReply, scrabble__v1__auth_reply__init);
    r->account_id = a->account_id;
    r->handle = rpc_arena_strdup(op->arena, a->handle);
    r->token = rpc_arena_strdup(op->arena, a->token);
    r->expires_at_ms = expires;
    return &r->base;
}

static const char *store__check_password(const char *pw)
{
    size_t n = strlen(pw);
    if (n == 0)
        return "empty";
    if (n > STORE__PASSWORD_MAX)
        return "too_long";
    return NULL;
}

/* A handle to look up, as parameters i (as typed) and i + 1 (folded):
 * store_account_by_handle tries the exact handle first, then the folded
 * form. Lookups fold without the rules of a new handle, so accounts made
 * under older rules are still found. */
static void store__param_handle(store_op *op, int i, const char *handle)
{
    char folded[STORE_HANDLE_BYTES];
    if (store_handle_fold(handle, folded, sizeof folded) != 0)
        snprintf(folded, sizeof folded, "%s", handle);
    store_op_param_text(op, i, handle);
    store_op_param_text(op, i + 1, folded);
}

/* ---- Register ---- */

static store_next store__register_done(store_op *op, PGresult *res)
{
    store__auth *a = op->scratch;
    if (PQntuples(res) != 1)
        return store__internal(op, "register: no result row");
    if (!store_op_code(op, PQgetvalue(res, 0, 0), NULL))
        return STORE_NEXT_DONE;
    a->account_id = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    op->reply = store__auth_reply(op, a, strtoll(PQgetvalue(res, 0, 2), NULL, 10));
    return STORE_NEXT_DONE;
}

static store_next store__register_hash(store_op *op, PGresult *res)
{
    const Scrabble__V1__RegisterRequest *req = op->req;
    store__auth *a = op->scratch;
    char hash[192];
    metric_add(op->srv->m.kdf_runs, 1);
    if (store_password_hash(req->password, op->srv->cfg.kdf_iterations, hash, sizeof(hash)) ||
        store_token_new(a->token, a->token_hash))
        return store__internal(op, "password hashing failed");
    op->stmt = "register";
    store_op_param_text(op, 0, a->norm);
    store_op_param_text(op, 1, a->folded);
    store_op_param_text(op, 2, hash);
    store_op_param_text(op, 3, a->token_hash);
    store_op_param_i64(op, 4, store__session_ttl_ms(op));
    op->step = store__register_done;
    return STORE_NEXT_WRITE;
}

store_next store_register_begin(store_op *op)
{
    const Scrabble__V1__RegisterRequest *req = op->req;
    const char *why;
    store__auth *a = store__auth_new(op);
    if (!a)
        return store__internal(op, "out of memory");
    if ((why = store_handle_new(req->handle, a->norm, a->folded)))
        return store_op_bad(op, why, "handle");
    /* "bot-..." names a bot or nothing (0008_bots.sql): checked on the
     * folded form, which is what makes handles unique. */
    if (store_handle_is_bot_reserved(a->folded)) {
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "handle_reserved",
                       "handles beginning with \"%s\" are reserved for bots", STORE_BOT_PREFIX);
        return STORE_NEXT_DONE;
    }
    if ((why = store__check_password(req->password)))
        return store_op_bad(op, why, "password");
    a->handle = a->norm;
    op->stmt = NULL; /* a local step first: the KDF */
    op->step = store__register_hash;
    return STORE_NEXT_READ;
}

/* ---- Login ---- */

static store_next store__login_done(store_op *op, PGresult *res)
{
    store__auth *a = op->scratch;
    if (PQntuples(res) != 1)
        return store__internal(op, "open_session: no result row");
    if (!store_op_code(op, PQgetvalue(res, 0, 0), NULL))
        return STORE_NEXT_DONE;
    op->reply = store__auth_reply(op, a, strtoll(PQgetvalue(res, 0, 1), NULL, 10));
    return STORE_NEXT_DONE;
}

static store_next store__bad_credentials(store_op *op)
{
    rpc_status_set(&op->st, GRPC_STATUS_UNAUTHENTICATED, "bad_credentials",
                   "unknown handle or wrong password");
    return STORE_NEXT_DONE;
}

static store_next store__login_verify(store_op *op, PGresult *res)
{
    const Scrabble__V1__LoginRequest *req = op->req;
    store__auth *a = op->scratch;
    metric_add(op->srv->m.kdf_runs, 1);
    if (PQntuples(res) != 1) {
        /* An unknown handle costs the same KDF as a wrong password: the
         * answer's timing says nothing about which handles exist. */
        metric_add(op->srv->m.kdf_unknown, 1);
        (void)store_password_verify(req->password, op->srv->dummy_hash);
        return store__bad_credentials(op);
    }
    /* "!": an account nobody may log in as (a bot, 0008_bots.sql). It
     * costs the KDF all the same, like an unknown handle. */
    if (strcmp(PQgetvalue(res, 0, 2), STORE_LOCKED_PW_HASH) == 0) {
        (void)store_password_verify(req->password, op->srv->dummy_hash);
        return store__bad_credentials(op);
    }
    int ok = store_password_verify(req->password, PQgetvalue(res, 0, 2));
    if (ok < 0)
        return store__internal(op, "stored password hash is malformed");
    if (!ok)
        return store__bad_credentials(op);
    a->account_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    a->handle = rpc_arena_strdup(op->arena, PQgetvalue(res, 0, 1));
    if (store_token_new(a->token, a->token_hash))
        return store__internal(op, "no randomness");
    op->stmt = "open_session";
    op->nparams = 0;
    store_op_param_i64(op, 0, a->account_id);
    store_op_param_text(op, 1, a->token_hash);
    store_op_param_i64(op, 2, store__session_ttl_ms(op));
    op->step = store__login_done;
    return STORE_NEXT_WRITE;
}

store_next store_login_begin(store_op *op)
{
    const Scrabble__V1__LoginRequest *req = op->req;
    const char *why;
    if ((why = store_check_handle(req->handle)))
        return store_op_bad(op, why, "handle");
    if ((why = store__check_password(req->password)))
        return store_op_bad(op, why, "password");
    store__auth_new(op);
    op->stmt = "login_lookup";
    store__param_handle(op, 0, req->handle);
    op->step = store__login_verify;
    return STORE_NEXT_READ;
}

/* ---- ResolveSession ---- */

static store_next store__resolve_done(store_op *op, PGresult *res)
{
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_UNAUTHENTICATED, "unauthenticated",
                       "unknown or expired session");
        return STORE_NEXT_DONE;
    }
    Scrabble__V1__SessionInfo *r =
        RPC_ARENA_MSG(op->arena, Scrabble__V1__SessionInfo, scrabble__v1__session_info__init);
    r->account_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    r->handle = rpc_arena_strdup(op->arena, PQgetvalue(res, 0, 1));
    r->expires_at_ms = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_resolve_session_begin(store_op *op)
{
    const Scrabble__V1__ResolveSessionRequest *req = op->req;
    size_t n = strlen(req->token);
    if (n == 0 || n > 512) {
        rpc_status_set(&op->st, GRPC_STATUS_UNAUTHENTICATED, "unauthenticated",
                       "missing or malformed token");
        return STORE_NEXT_DONE;
    }
    char hash[65];
    store_sha256_hex(req->token, n, hash);
    op->stmt = "resolve_session";
    store_op_param_text(op, 0, hash);
    op->step = store__resolve_done;
    return STORE_NEXT_READ;
}

/* ---- GetAccount, UpdateProfile ---- */

static store_next store__not_found(store_op *op, const char *what)
{
    rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "%s not found", what);
    return STORE_NEXT_DONE;
}

static store_next store__profile_done(store_op *op, PGresult *res)
{
    op->reply = store_op_json_col(op, res, 0, 0, store_json_profile);
    if (!op->reply)
        return store__not_found(op, "account");
    Scrabble__V1__Profile *p = (Scrabble__V1__Profile *)op->reply;
    if (store_ratings_col(op, res, 1, &p->ratings, &p->n_ratings, NULL, NULL) != STORE_OK)
        return store__internal(op, "get_account: bad ratings");
    return STORE_NEXT_DONE;
}

store_next store_get_account_begin(store_op *op)
{
    const Scrabble__V1__GetProfileRequest *req = op->req;
    if (req->account_id > 0) {
        op->stmt = "account_by_id";
        store_op_param_i64(op, 0, req->account_id);
    } else {
        const char *why = store_check_handle(req->handle);
        if (why)
            return store_op_bad(op, why, "handle");
        op->stmt = "account_by_handle";
        store__param_handle(op, 0, req->handle);
    }
    op->step = store__profile_done;
    return STORE_NEXT_READ;
}

static store_next store__update_profile_done(store_op *op, PGresult *res)
{
    if (PQntuples(res) != 1)
        return store__internal(op, "update_profile: no result row");
    if (!store_op_code(op, PQgetvalue(res, 0, 0), "account"))
        return STORE_NEXT_DONE;
    op->reply = store_op_json_col(op, res, 0, 1, store_json_profile);
    return op->reply ? STORE_NEXT_DONE : store__internal(op, "update_profile: bad profile");
}

store_next store_update_profile_begin(store_op *op)
{
    const Scrabble__V1__StoreUpdateProfileRequest *req = op->req;
    const char *why;
    if (req->account_id <= 0)
        return store__not_found(op, "account");
    if ((why = store_check_text(req->display_name, 0, 64)))
        return store_op_bad(op, why, "display_name");
    if ((why = store_check_text(req->bio, 0, 280)))
        return store_op_bad(op, why, "bio");
    op->stmt = "update_profile";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_text(op, 1, req->display_name);
    store_op_param_text(op, 2, req->bio);
    op->step = store__update_profile_done;
    return STORE_NEXT_WRITE;
}

/* ---- GetStats ---- */

static store_next store__stats_done(store_op *op, PGresult *res)
{
    if (PQntuples(res) != 1)
        return store__not_found(op, "account");
    Scrabble__V1__Stats *s =
        RPC_ARENA_MSG(op->arena, Scrabble__V1__Stats, scrabble__v1__stats__init);
    s->account_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    s->games_played = atoi(PQgetvalue(res, 0, 1));
    s->wins = atoi(PQgetvalue(res, 0, 2));
    s->losses = atoi(PQgetvalue(res, 0, 3));
    s->draws = atoi(PQgetvalue(res, 0, 4));
    s->total_score = strtoll(PQgetvalue(res, 0, 5), NULL, 10);
    s->best_game_score = atoi(PQgetvalue(res, 0, 6));
    s->best_move_score = atoi(PQgetvalue(res, 0, 7));
    if (store_ratings_col(op, res, 8, &s->ratings, &s->n_ratings, NULL, NULL) != STORE_OK ||
        store_ratings_col(op, res, 9, NULL, NULL, &s->rating_history, &s->n_rating_history) !=
            STORE_OK)
        return store__internal(op, "get_stats: bad ratings");
    op->reply = &s->base;
    return STORE_NEXT_DONE;
}

store_next store_get_stats_begin(store_op *op)
{
    const Scrabble__V1__GetStatsRequest *req = op->req;
    if (req->account_id <= 0)
        return store__not_found(op, "account");
    op->stmt = "get_stats";
    store_op_param_i64(op, 0, req->account_id);
    op->step = store__stats_done;
    return STORE_NEXT_READ;
}

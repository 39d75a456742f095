/*
 * op.c — helpers for store_op: statement parameters (copied into the op's
 * arena, so they live as long as the call) and the mapping from reasons and
 * Postgres errors to gRPC statuses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "rpc/log.h"
#include "store.h"

int64_t store_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t store_now_ms(void)
{
    return store_now_us() / 1000;
}

static void store__param(store_op *op, int i, const char *v, int len, int fmt)
{
    op->params[i] = v;
    op->lengths[i] = len;
    op->formats[i] = fmt;
    if (op->nparams < i + 1)
        op->nparams = i + 1;
}

void store_op_param_text(store_op *op, int i, const char *s)
{
    store__param(op, i, rpc_arena_strdup(op->arena, s ? s : ""), 0, 0);
}

void store_op_param_i64(store_op *op, int i, int64_t v)
{
    store__param(op, i, rpc_arena_printf(op->arena, "%" PRId64, v), 0, 0);
}

void store_op_param_bool(store_op *op, int i, bool v)
{
    store__param(op, i, v ? "t" : "f", 0, 0);
}

void store_op_param_bytes(store_op *op, int i, const void *p, size_t n)
{
    /* Binary format: the bytes go over the wire as they are, no escaping. */
    char *copy = rpc_arena_alloc(op->arena, n ? n : 1);
    if (copy && n)
        memcpy(copy, p, n);
    store__param(op, i, copy, (int)n, 1);
}

void store_op_param_int_array(store_op *op, int i, const int32_t *v, size_t n)
{
    char *buf = rpc_arena_alloc(op->arena, 2 + n * 12 + 1);
    size_t off = 0;
    buf[off++] = '{';
    for (size_t k = 0; k < n; k++)
        off += (size_t)sprintf(buf + off, "%s%d", k ? "," : "", v[k]);
    buf[off++] = '}';
    buf[off] = '\0';
    store__param(op, i, buf, 0, 0);
}

void store_op_param_i64_array(store_op *op, int i, const int64_t *v, size_t n)
{
    char *buf = rpc_arena_alloc(op->arena, 2 + n * 21 + 1);
    size_t off = 0;
    buf[off++] = '{';
    for (size_t k = 0; k < n; k++)
        off += (size_t)sprintf(buf + off, "%s%lld", k ? "," : "", (long long)v[k]);
    buf[off++] = '}';
    buf[off] = '\0';
    store__param(op, i, buf, 0, 0);
}

void store_op_param_text_array(store_op *op, int i, char *const *v, size_t n)
{
    /* Each element is double-quoted with " and \ escaped: the array literal
     * is a parameter value, never SQL, so this is the whole escaping job. */
    size_t cap = 3;
    for (size_t k = 0; k < n; k++)
        cap += 2 * strlen(v[k]) + 3;
    char *buf = rpc_arena_alloc(op->arena, cap);
    size_t off = 0;
    buf[off++] = '{';
    for (size_t k = 0; k < n; k++) {
        if (k)
            buf[off++] = ',';
        buf[off++] = '"';
        for (const char *s = v[k]; *s; s++) {
            if (*s == '"' || *s == '\\')
                buf[off++] = '\\';
            buf[off++] = *s;
        }
        buf[off++] = '"';
    }
    buf[off++] = '}';
    buf[off] = '\0';
    store__param(op, i, buf, 0, 0);
}

/* Reasons the SQL functions return, and their gRPC codes. */
static const struct {
    const char *reason;
    grpc_status_code code;
    const char *message;
} store__reasons[] = {
    {"not_found", GRPC_STATUS_NOT_FOUND, "not found"},
    {"handle_taken", GRPC_STATUS_ALREADY_EXISTS, "handle already taken"},
    {"stale_seq", GRPC_STATUS_FAILED_PRECONDITION, "seq is taken or not the next one"},
    {"game_over", GRPC_STATUS_FAILED_PRECONDITION, "the game is over"},
    {"invitation_closed", GRPC_STATUS_FAILED_PRECONDITION, "the invitation is closed"},
    {"invitation_pending", GRPC_STATUS_FAILED_PRECONDITION, "not every invitee has accepted"},
    {"not_invited", GRPC_STATUS_PERMISSION_DENIED, "not an invitee of this invitation"},
    {"not_inviter", GRPC_STATUS_PERMISSION_DENIED, "only the inviter may cancel an invitation"},
    {"not_a_player", GRPC_STATUS_PERMISSION_DENIED, "not a player of this game"},
    {"duplicate_invitee", GRPC_STATUS_INVALID_ARGUMENT, "an account is invited twice"},
    {"bad_seat", GRPC_STATUS_INVALID_ARGUMENT, "move.seat and move.account_id do not match a seat"},
    {"lexicon_not_rated", GRPC_STATUS_FAILED_PRECONDITION,
     "rated games of this time-control family are not played with this lexicon; family"},
    {"seek_limit", GRPC_STATUS_RESOURCE_EXHAUSTED,
     "too many open seeks: cancel one or wait for a match; the limit is"},
    {"not_seeker", GRPC_STATUS_PERMISSION_DENIED, "only the seeker may cancel a seek"},
    {"seek_closed", GRPC_STATUS_FAILED_PRECONDITION, "the seek is matched or expired"},
};

bool store_op_code(store_op *op, const char *code, const char *detail)
{
    if (strcmp(code, "ok") == 0 || strcmp(code, "duplicate") == 0)
        return true;
    for (size_t i = 0; i < sizeof(store__reasons) / sizeof(store__reasons[0]); i++) {
        if (strcmp(code, store__reasons[i].reason) == 0) {
            if (detail && *detail)
                rpc_status_set(&op->st, store__reasons[i].code, code, "%s: %s",
                               store__reasons[i].message, detail);
            else
                rpc_status_set(&op->st, store__reasons[i].code, code, "%s",
                               store__reasons[i].message);
            return false;
        }
    }
    rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "unexpected result code %s", code);
    return false;
}

store_next store_op_code_json(store_op *op, PGresult *res,
                              ProtobufCMessage *(*conv)(rpc_arena *, const struct cJSON *),
                              const char *what)
{
    int ncols = PQnfields(res);
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    const char *detail = ncols == 3 && !PQgetisnull(res, 0, 1) ? PQgetvalue(res, 0, 1) : NULL;
    if (!store_op_code(op, PQgetvalue(res, 0, 0), detail))
        return STORE_NEXT_DONE;
    op->reply = store_op_json_col(op, res, 0, ncols - 1, conv);
    if (!op->reply)
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "bad %s record", what);
    return STORE_NEXT_DONE;
}

void store_op_fail_pg(store_op *op, const PGresult *res, PGconn *pg)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorMessage(res) : (pg ? PQerrorMessage(pg) : "");
    char clean[200];
    snprintf(clean, sizeof(clean), "%s", msg ? msg : "");
    for (char *c = clean; *c; c++)
        if (*c == '\n' || *c == '\t')
            *c = ' ';
        else if (*c == '"')
            *c = '\'';
    if (!state)
        state = "";
    /* Class 22 (data exception) and 23 (integrity) come from bad input that
     * slipped past validation; class 08 and 57 (connection, shutdown) from
     * a database going away; anything else is our bug. */
    if (strcmp(state, "22021") == 0)
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8", "%s", clean);
    else if (strcmp(state, "22001") == 0)
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "too_long", "%s", clean);
    else if (strcmp(state, "23503") == 0)
        rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "%s", clean);
    else if (strcmp(state, "23505") == 0)
        rpc_status_set(&op->st, GRPC_STATUS_ALREADY_EXISTS, "already_exists", "%s", clean);
    else if (strncmp(state, "22", 2) == 0)
        rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "%s", clean);
    else if (strncmp(state, "08", 2) == 0 || strncmp(state, "57", 2) == 0 ||
             strncmp(state, "53", 2) == 0)
        rpc_status_set(&op->st, GRPC_STATUS_UNAVAILABLE, "db_unavailable", "%s", clean);
    else {
        rpc_trace prev = rpc_trace_enter(op->trace);
        log_error("db_error", "op=%s sqlstate=%s msg=\"%s\"", op->name, state, clean);
        rpc_trace_leave(&prev);
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "db_error", "database error %s", state);
    }
}

void store_op_finish(store_op *op)
{
    op->done(op);
}

store_next store_op_bad(store_op *op, const char *reason, const char *field)
{
    static const struct {
        const char *reason, *what;
    } words[] = {
        {"empty", "must not be empty"},
        {"too_long", "is too long"},
        {"bad_utf8", "is not valid UTF-8"},
        {"bad_handle", "is not an allowed handle (spaces, control, invisible or format characters, "
                       "or letters of mixed scripts)"},
        {"bad_request_id", "must be at most 64 characters of A-Z a-z 0-9 _ -"},
    };
    const char *what = "is invalid";
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(words[i].reason, reason) == 0)
            what = words[i].what;
    rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, reason, "%s %s", field, what);
    return STORE_NEXT_DONE;
}

ProtobufCMessage *store_op_json_col(store_op *op, PGresult *res, int row, int col,
                                    ProtobufCMessage *(*conv)(rpc_arena *, const struct cJSON *))
{
    if (row >= PQntuples(res) || PQgetisnull(res, row, col))
        return NULL;
    struct cJSON *j = store_json_parse(PQgetvalue(res, row, col));
    ProtobufCMessage *m = j ? conv(op->arena, j) : NULL;
    cJSON_Delete(j);
    return m;
}

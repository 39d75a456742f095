/*
 * games.c — CreateGame, LoadGame, ListGames, CommitMove, FinishGame.
 *
 * A move is stored as its packed scrabble.v1.Move with at_ms = 0: that
 * byte string is CommitMove's idempotency key (the same move again returns
 * the original with duplicate=true; different bytes at a taken seq are
 * stale_seq), and at_ms is restored from created_at when read back.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

#define STORE__MAX_SEATS 4
#define STORE__PAGE_DEFAULT 20
#define STORE__PAGE_MAX 100

static store_next store__not_found(store_op *op, const char *what)
{
    rpc_status_set(&op->st, GRPC_STATUS_NOT_FOUND, "not_found", "%s not found", what);
    return STORE_NEXT_DONE;
}

static store_next store__bad(store_op *op, const char *reason, const char *msg)
{
    rpc_status_set(&op->st, GRPC_STATUS_INVALID_ARGUMENT, reason, "%s", msg);
    return STORE_NEXT_DONE;
}

static ProtobufCMessage *store__game_conv(rpc_arena *a, const struct cJSON *j)
{
    return store_json_game(a, j, NULL);
}

store_next store_game_write_done(store_op *op, PGresult *res)
{
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    if (!store_op_code(op, PQgetvalue(res, 0, 0), NULL))
        return STORE_NEXT_DONE;
    op->reply = store_op_json_col(op, res, 0, 1, store__game_conv);
    if (!op->reply)
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "bad game record");
    return STORE_NEXT_DONE;
}

/* ---- CreateGame ---- */

store_next store_create_game_begin(store_op *op)
{
    const Scrabble__V1__StoreCreateGameRequest *req = op->req;
    if (req->invitation_id <= 0)
        return store__not_found(op, "invitation");
    op->stmt = "create_game";
    store_op_param_i64(op, 0, req->invitation_id);
    store_op_param_i64(op, 1, (int64_t)req->seed); /* the bits, in a bigint */
    op->step = store_game_write_done;
    return STORE_NEXT_WRITE;
}

/* ---- FinishGame and the finish part of CommitMove ---- */

const char *store_check_finish(const Scrabble__V1__GameFinish *f, bool on_time)
{
    if (on_time && f->end_reason != SCRABBLE__V1__END_REASON__END_REASON_TIMEOUT &&
        f->end_reason != SCRABBLE__V1__END_REASON__END_REASON_ABANDONED)
        return "finish.end_reason must be TIMEOUT or ABANDONED";
    if (!on_time && (f->end_reason < SCRABBLE__V1__END_REASON__END_REASON_OUT ||
                     f->end_reason > SCRABBLE__V1__END_REASON__END_REASON_RESIGN))
        return "finish.end_reason must be OUT, SCORELESS or RESIGN";
    if (f->n_final_scores > STORE__MAX_SEATS || f->n_winners > STORE__MAX_SEATS)
        return "finish has more than 4 scores or winners";
    for (size_t i = 0; i < f->n_winners; i++)
        if (f->winners[i] < 0 || f->winners[i] >= STORE__MAX_SEATS)
            return "finish.winners holds a seat out of range";
    return NULL;
}

store_next store_finish_game_begin(store_op *op)
{
    const Scrabble__V1__FinishGameRequest *req = op->req;
    const char *why;
    if (req->game_id <= 0)
        return store__not_found(op, "game");
    if (!req->finish)
        return store__bad(op, "bad_finish", "finish is required");
    if ((why = store_check_finish(req->finish, false)))
        return store__bad(op, "bad_finish", why);
    if ((why = store_events_check(req->events, req->n_events)))
        return store__bad(op, "bad_events", why);
    op->stmt = "finish_game";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_i64(op, 1, req->finish->end_reason);
    store_op_param_int_array(op, 2, req->finish->final_scores, req->finish->n_final_scores);
    store_op_param_int_array(op, 3, req->finish->winners, req->finish->n_winners);
    store_op_param_events(op, 4, req->events, req->n_events);
    op->writes_events = req->n_events > 0;
    op->step = store_game_write_done;
    return STORE_NEXT_WRITE;
}

/* ---- CommitMove ---- */

typedef struct store__commit {
    Scrabble__V1__Move move; /* the request's move, at_ms normalized to 0 */
} store__commit;

static store_next store__commit_done(store_op *op, PGresult *res)
{
    store__commit *c = op->scratch;
    if (PQntuples(res) != 1) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "no result row");
        return STORE_NEXT_DONE;
    }
    const char *code = PQgetvalue(res, 0, 0);
    if (!store_op_code(op, code, NULL))
        return STORE_NEXT_DONE;
    Scrabble__V1__CommitMoveReply *r = RPC_ARENA_MSG(op->arena, Scrabble__V1__CommitMoveReply,
                                                     scrabble__v1__commit_move_reply__init);
    int64_t at_ms = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    if (strcmp(code, "duplicate") == 0) {
        /* Answer with the stored original, not the request. */
        uint8_t *bytes;
        size_t n;
        if (store_bytea_decode(op->arena, PQgetvalue(res, 0, 2), &bytes, &n) != STORE_OK ||
            !(r->move = scrabble__v1__move__unpack(rpc_arena_allocator(op->arena), n, bytes))) {
            rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "stored move unreadable");
            return STORE_NEXT_DONE;
        }
        r->duplicate = 1;
    } else {
        r->move = rpc_arena_alloc(op->arena, sizeof(*r->move));
        *r->move = c->move;
    }
    r->move->at_ms = at_ms;
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

static const char *store__check_move(const Scrabble__V1__CommitMoveRequest *req)
{
    const Scrabble__V1__Move *m = req->move;
    if (!m)
        return "move is required";
    if (m->seq < 1)
        return "move.seq must be >= 1";
    if (m->seat < 0 || m->seat >= STORE__MAX_SEATS)
        return "move.seat out of range";
    if (m->kind < SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY ||
        m->kind > SCRABBLE__V1__MOVE_KIND__MOVE_KIND_RESIGN)
        return "move.kind must be PLAY, PASS, EXCHANGE or RESIGN";
    /* A rack holds 7 tiles; a play forms its main word and at most one
     * cross word per tile. */
    if (m->n_placements > 7 || m->n_words > 8 || strlen(m->exchanged_tiles) > 7)
        return "move has too many placements, words or exchanged tiles";
    if (req->to_move < 0 || req->to_move >= STORE__MAX_SEATS)
        return "to_move out of range";
    if (req->n_scores > STORE__MAX_SEATS)
        return "more than 4 scores";
    return NULL;
}

store_next store_commit_move_begin(store_op *op)
{
    const Scrabble__V1__CommitMoveRequest *req = op->req;
    const char *why;
    if (req->game_id <= 0)
        return store__not_found(op, "game");
    if ((why = store__check_move(req)))
        return store__bad(op, "bad_move", why);
    if ((why = store_check_text(req->move->notation, 0, 64)))
        return store_op_bad(op, why, "move.notation");
    for (size_t i = 0; i < req->move->n_words; i++)
        if ((why = store_check_text(req->move->words[i], 1, 15)))
            return store_op_bad(op, why, "move.words");
    if (req->finish && (why = store_check_finish(req->finish, false)))
        return store__bad(op, "bad_finish", why);
    if ((why = store_events_check(req->events, req->n_events)))
        return store__bad(op, "bad_events", why);

    store__commit *c = rpc_arena_calloc(op->arena, 1, sizeof(*c));
    op->scratch = c;
    c->move = *req->move;
    c->move.at_ms = 0;
    size_t n = scrabble__v1__move__get_packed_size(&c->move);
    uint8_t *packed = rpc_arena_alloc(op->arena, n ? n : 1);
    scrabble__v1__move__pack(&c->move, packed);

    static const int32_t none[1] = {0};
    const Scrabble__V1__GameFinish *f = req->finish;
    op->stmt = "commit_move";
    store_op_param_i64(op, 0, req->game_id);
    store_op_param_i64(op, 1, c->move.seq);
    store_op_param_i64(op, 2, c->move.seat);
    store_op_param_i64(op, 3, c->move.account_id);
    store_op_param_i64(op, 4, c->move.kind);
    store_op_param_i64(op, 5, c->move.score);
    store_op_param_text(op, 6, c->move.notation);
    /* The packed bytes are passed as they are (binary), already in the
     * arena: no copy. */
    op->params[7] = (const char *)packed;
    op->lengths[7] = (int)n;
    op->formats[7] = 1;
    store_op_param_i64(op, 8, req->to_move);
    store_op_param_int_array(op, 9, req->scores, req->n_scores);
    store_op_param_bool(op, 10, f != NULL);
    store_op_param_i64(op, 11, f ? f->end_reason : 0);
    store_op_param_int_array(op, 12, f ? f->final_scores : none, f ? f->n_final_scores : 0);
    store_op_param_int_array(op, 13, f ? f->winners : none, f ? f->n_winners : 0);
    store_op_param_events(op, 14, req->events, req->n_events);
    op->writes_events = req->n_events > 0;
    if (req->clock) {
        if ((why = store_check_clock(req->clock)))
            return store__bad(op, "bad_clock", why);
        /* The clock after the events ($17..$21; migration 0007). */
        op->stmt = "commit_move_clock";
        store_op_param_clock(op, 16, req->clock);
    }
    op->step = store__commit_done;
    return STORE_NEXT_WRITE;
}

/* ---- LoadGame ---- */

static store_next store__load_done(store_op *op, PGresult *res)
{
    int rows = PQntuples(res);
    if (rows == 0 || strcmp(PQgetvalue(res, 0, 0), "0") != 0)
        return store__not_found(op, "game");
    Scrabble__V1__GameRecord *g =
        (Scrabble__V1__GameRecord *)store_op_json_col(op, res, 0, 1, store__game_conv);
    if (!g) {
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "bad game record");
        return STORE_NEXT_DONE;
    }
    g->moves = rpc_arena_calloc(op->arena, rows, sizeof(*g->moves));
    for (int i = 1; i < rows; i++) {
        uint8_t *bytes;
        size_t n;
        Scrabble__V1__Move *m = NULL;
        if (store_bytea_decode(op->arena, PQgetvalue(res, i, 2), &bytes, &n) == STORE_OK)
            m = scrabble__v1__move__unpack(rpc_arena_allocator(op->arena), n, bytes);
        if (!m) {
            rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "stored move unreadable");
            return STORE_NEXT_DONE;
        }
        m->at_ms = strtoll(PQgetvalue(res, i, 3), NULL, 10);
        g->moves[g->n_moves++] = m;
    }
    op->reply = &g->base;
    return STORE_NEXT_DONE;
}

store_next store_load_game_begin(store_op *op)
{
    const Scrabble__V1__GameRef *req = op->req;
    if (req->game_id <= 0)
        return store__not_found(op, "game");
    op->stmt = "load_game";
    store_op_param_i64(op, 0, req->game_id);
    op->step = store__load_done;
    return STORE_NEXT_READ;
}

/* ---- ListGames ---- */

Scrabble__V1__GameSummary *store_game_summary(rpc_arena *a, Scrabble__V1__GameRecord *g)
{
    Scrabble__V1__GameSummary *s =
        RPC_ARENA_MSG(a, Scrabble__V1__GameSummary, scrabble__v1__game_summary__init);
    if (!s)
        return NULL;
    s->game_id = g->game_id;
    s->status = g->status;
    s->n_seats = g->n_seats;
    s->seats = g->seats;
    s->to_move = g->to_move;
    s->seq = g->seq;
    s->end_reason = g->end_reason;
    s->n_winners = g->n_winners;
    s->winners = g->winners;
    s->updated_at_ms = g->updated_at_ms;
    s->lexicon = g->lexicon;
    return s;
}

typedef struct store__list {
    int page_size;
} store__list;

static store_next store__list_done(store_op *op, PGresult *res)
{
    store__list *l = op->scratch;
    int rows = PQntuples(res);
    if (rows == 0)
        return store__not_found(op, "account");
    Scrabble__V1__ListGamesReply *r = RPC_ARENA_MSG(op->arena, Scrabble__V1__ListGamesReply,
                                                    scrabble__v1__list_games_reply__init);
    r->games = rpc_arena_calloc(op->arena, rows, sizeof(*r->games));
    r->next_page_token = "";
    for (int i = 0; i < rows && i < l->page_size; i++) {
        if (PQgetisnull(res, i, 1))
            continue; /* the account has no games */
        Scrabble__V1__GameRecord *g =
            (Scrabble__V1__GameRecord *)store_op_json_col(op, res, i, 3, store__game_conv);
        if (!g)
            continue;
        Scrabble__V1__GameSummary *s = store_game_summary(op->arena, g);
        if (s)
            r->games[r->n_games++] = s;
    }
    /* One row more than a page was asked for: there is a next page, and
     * it starts after the last row shown. */
    if (rows > l->page_size) {
        int last = l->page_size - 1;
        char tok[64];
        store_page_token_encode(strtoll(PQgetvalue(res, last, 2), NULL, 10),
                                strtoll(PQgetvalue(res, last, 1), NULL, 10), tok, sizeof(tok));
        r->next_page_token = rpc_arena_strdup(op->arena, tok);
    }
    op->reply = &r->base;
    return STORE_NEXT_DONE;
}

store_next store_list_games_begin(store_op *op)
{
    const Scrabble__V1__StoreListGamesRequest *req = op->req;
    if (req->account_id <= 0)
        return store__not_found(op, "account");
    if (req->status < 0 || req->status > SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED)
        return store__bad(op, "bad_status", "status must be UNSPECIFIED, ACTIVE or FINISHED");
    if (req->page_size < 0)
        return store__bad(op, "bad_page_size", "page_size must not be negative");
    store__list *l = rpc_arena_calloc(op->arena, 1, sizeof(*l));
    op->scratch = l;
    l->page_size = req->page_size == 0                ? STORE__PAGE_DEFAULT
                   : req->page_size > STORE__PAGE_MAX ? STORE__PAGE_MAX
                                                      : req->page_size;
    /* No token: start after a far-future key (year ~2255). */
    int64_t after_us = 9000000000000000LL, after_id = INT64_MAX;
    if (req->page_token[0] && store_page_token_decode(req->page_token, &after_us, &after_id) != 0)
        return store__bad(op, "bad_page_token", "page_token is not one this service issued");
    op->stmt = "list_games";
    store_op_param_i64(op, 0, req->account_id);
    store_op_param_i64(op, 1, req->status);
    store_op_param_i64(op, 2, after_us);
    store_op_param_i64(op, 3, after_id);
    store_op_param_i64(op, 4, l->page_size + 1);
    op->step = store__list_done;
    return STORE_NEXT_READ;
}

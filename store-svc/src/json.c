/*
 * json.c — turns the JSON the store_*_json() SQL functions produce into
 * protobuf-c messages allocated in a call arena (strings copied there too,
 * so the cJSON tree can be freed at once). Also the text-form bytea decoder.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

cJSON *store_json_parse(const char *text)
{
    return text ? cJSON_Parse(text) : NULL;
}

static int64_t store__ji(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v))
        return (int64_t)v->valuedouble;
    if (cJSON_IsString(v))
        return strtoll(v->valuestring, NULL, 10);
    return 0;
}

static double store__jd(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static bool store__jb(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static char *store__js(rpc_arena *a, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return rpc_arena_strdup(a, cJSON_IsString(v) ? v->valuestring : "");
}

ProtobufCMessage *store_json_profile(rpc_arena *a, const cJSON *j)
{
    if (!cJSON_IsObject(j))
        return NULL;
    Scrabble__V1__Profile *p = RPC_ARENA_MSG(a, Scrabble__V1__Profile, scrabble__v1__profile__init);
    if (!p)
        return NULL;
    p->account_id = store__ji(j, "account_id");
    p->handle = store__js(a, j, "handle");
    p->display_name = store__js(a, j, "display_name");
    p->bio = store__js(a, j, "bio");
    p->created_at_ms = store__ji(j, "created_at_ms");
    return &p->base;
}

/* The TimeControl object of store_time_control_json(); an absent one
 * (a row from before time controls) is UNTIMED. */
static Scrabble__V1__TimeControl *store__json_tc(rpc_arena *a, const cJSON *o)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "time_control");
    Scrabble__V1__TimeControl *tc =
        RPC_ARENA_MSG(a, Scrabble__V1__TimeControl, scrabble__v1__time_control__init);
    if (!tc)
        return NULL;
    tc->kind = SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_UNTIMED;
    if (!cJSON_IsObject(j))
        return tc;
    tc->kind = (Scrabble__V1__TimeControlKind)store__ji(j, "kind");
    tc->days_per_move = (int32_t)store__ji(j, "days_per_move");
    tc->initial_seconds = (int32_t)store__ji(j, "initial_seconds");
    tc->increment_seconds = (int32_t)store__ji(j, "increment_seconds");
    tc->max_overtime_minutes = (int32_t)store__ji(j, "max_overtime_minutes");
    return tc;
}

ProtobufCMessage *store_json_clock(rpc_arena *a, const cJSON *j)
{
    if (!cJSON_IsObject(j))
        return NULL;
    Scrabble__V1__GameClock *c =
        RPC_ARENA_MSG(a, Scrabble__V1__GameClock, scrabble__v1__game_clock__init);
    if (!c)
        return NULL;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "remaining_ms"), *x;
    int n = cJSON_IsArray(r) ? cJSON_GetArraySize(r) : 0;
    c->remaining_ms = rpc_arena_calloc(a, n ? (size_t)n : 1, sizeof(int64_t));
    cJSON_ArrayForEach(x, r) c->remaining_ms[c->n_remaining_ms++] = (int64_t)x->valuedouble;
    c->turn_started_ms = store__ji(j, "turn_started_ms");
    c->deadline_ms = store__ji(j, "deadline_ms");
    c->deadline_reason = (Scrabble__V1__EndReason)store__ji(j, "deadline_reason");
    c->warning_ms = store__ji(j, "warning_ms");
    return &c->base;
}

ProtobufCMessage *store_json_invitation(rpc_arena *a, const cJSON *j)
{
    if (!cJSON_IsObject(j))
        return NULL;
    Scrabble__V1__Invitation *inv =
        RPC_ARENA_MSG(a, Scrabble__V1__Invitation, scrabble__v1__invitation__init);
    if (!inv)
        return NULL;
    inv->invitation_id = store__ji(j, "invitation_id");
    inv->inviter_id = store__ji(j, "inviter_id");
    inv->inviter_handle = store__js(a, j, "inviter_handle");
    inv->status = (Scrabble__V1__InvitationStatus)store__ji(j, "status");
    inv->game_id = store__ji(j, "game_id");
    inv->lexicon = store__js(a, j, "lexicon");
    inv->created_at_ms = store__ji(j, "created_at_ms");
    inv->time_control = store__json_tc(a, j);
    inv->expires_at_ms = store__ji(j, "expires_at_ms");
    inv->rated = store__jb(j, "rated");
    inv->public_game = store__jb(j, "public");
    const cJSON *seats = cJSON_GetObjectItemCaseSensitive(j, "seats");
    int n = cJSON_IsArray(seats) ? cJSON_GetArraySize(seats) : 0;
    inv->seats = rpc_arena_calloc(a, n ? (size_t)n : 1, sizeof(*inv->seats));
    const cJSON *s;
    cJSON_ArrayForEach(s, seats)
    {
        Scrabble__V1__Invitee *e =
            RPC_ARENA_MSG(a, Scrabble__V1__Invitee, scrabble__v1__invitee__init);
        e->account_id = store__ji(s, "account_id");
        e->handle = store__js(a, s, "handle");
        e->answer = (Scrabble__V1__InviteeAnswer)store__ji(s, "answer");
        inv->seats[inv->n_seats++] = e;
    }
    return &inv->base;
}

ProtobufCMessage *store_json_seek(rpc_arena *a, const cJSON *j)
{
    if (!cJSON_IsObject(j))
        return NULL;
    Scrabble__V1__Seek *k = RPC_ARENA_MSG(a, Scrabble__V1__Seek, scrabble__v1__seek__init);
    if (!k)
        return NULL;
    k->seek_id = store__ji(j, "seek_id");
    k->account_id = store__ji(j, "account_id");
    k->handle = store__js(a, j, "handle");
    k->lexicon = store__js(a, j, "lexicon");
    k->seats = (int32_t)store__ji(j, "seats");
    k->time_control = store__json_tc(a, j);
    k->rated = store__jb(j, "rated");
    k->min_rating = (int32_t)store__ji(j, "min_rating");
    k->max_rating = (int32_t)store__ji(j, "max_rating");
    k->rating = (int32_t)store__ji(j, "rating");
    k->status = (Scrabble__V1__SeekStatus)store__ji(j, "status");
    k->invitation_id = store__ji(j, "invitation_id");
    k->game_id = store__ji(j, "game_id");
    k->created_at_ms = store__ji(j, "created_at_ms");
    k->expires_at_ms = store__ji(j, "expires_at_ms");
    return &k->base;
}

ProtobufCMessage *store_json_game(rpc_arena *a, const cJSON *j, int64_t *updated_us)
{
    if (!cJSON_IsObject(j))
        return NULL;
    Scrabble__V1__GameRecord *g =
        RPC_ARENA_MSG(a, Scrabble__V1__GameRecord, scrabble__v1__game_record__init);
    if (!g)
        return NULL;
    g->game_id = store__ji(j, "game_id");
    g->invitation_id = store__ji(j, "invitation_id");
    g->lexicon = store__js(a, j, "lexicon");
    /* The seed's bits were stored in a signed bigint and travel as text. */
    g->seed = (uint64_t)store__ji(j, "seed");
    g->status = (Scrabble__V1__GameStatus)store__ji(j, "status");
    g->to_move = (int32_t)store__ji(j, "to_move");
    g->seq = store__ji(j, "seq");
    g->end_reason = (Scrabble__V1__EndReason)store__ji(j, "end_reason");
    g->created_at_ms = store__ji(j, "created_at_ms");
    g->updated_at_ms = store__ji(j, "updated_at_ms");
    g->rated = store__jb(j, "rated");
    g->public_game = store__jb(j, "public");
    if (updated_us)
        *updated_us = store__ji(j, "updated_at_us");
    g->time_control = store__json_tc(a, j);
    g->time_family = store__js(a, j, "time_family");
    g->clock = (Scrabble__V1__GameClock *)store_json_clock(
        a, cJSON_GetObjectItemCaseSensitive(j, "clock"));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "winners");
    int nw = cJSON_IsArray(w) ? cJSON_GetArraySize(w) : 0;
    g->winners = rpc_arena_calloc(a, nw ? (size_t)nw : 1, sizeof(int32_t));
    const cJSON *x;
    cJSON_ArrayForEach(x, w) g->winners[g->n_winners++] = (int32_t)x->valuedouble;
    const cJSON *seats = cJSON_GetObjectItemCaseSensitive(j, "seats");
    int n = cJSON_IsArray(seats) ? cJSON_GetArraySize(seats) : 0;
    g->seats = rpc_arena_calloc(a, n ? (size_t)n : 1, sizeof(*g->seats));
    cJSON_ArrayForEach(x, seats)
    {
        Scrabble__V1__Seat *s = RPC_ARENA_MSG(a, Scrabble__V1__Seat, scrabble__v1__seat__init);
        s->seat = (int32_t)store__ji(x, "seat");
        s->account_id = store__ji(x, "account_id");
        s->handle = store__js(a, x, "handle");
        s->score = (int32_t)store__ji(x, "score");
        g->seats[g->n_seats++] = s;
    }
    return &g->base;
}

int store_json_ratings(rpc_arena *a, const cJSON *j, Scrabble__V1__Rating ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int len = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 0;
    if (len == 0)
        return STORE_OK;
    Scrabble__V1__Rating **v = rpc_arena_calloc(a, (size_t)len, sizeof *v);
    if (!v)
        return STORE_ERROR;
    const cJSON *x;
    cJSON_ArrayForEach(x, j)
    {
        Scrabble__V1__Rating *r =
            RPC_ARENA_MSG(a, Scrabble__V1__Rating, scrabble__v1__rating__init);
        if (!r)
            return STORE_ERROR;
        r->lexicon = store__js(a, x, "lexicon");
        r->family = store__js(a, x, "family");
        r->rating = store__jd(x, "rating");
        r->deviation = store__jd(x, "deviation");
        r->volatility = store__jd(x, "volatility");
        r->games = (int32_t)store__ji(x, "games");
        r->updated_at_ms = store__ji(x, "updated_at_ms");
        v[(*n)++] = r;
    }
    *out = v;
    return STORE_OK;
}

int store_json_rating_history(rpc_arena *a, const cJSON *j, Scrabble__V1__RatingChange ***out,
                              size_t *n)
{
    *out = NULL;
    *n = 0;
    int len = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : 0;
    if (len == 0)
        return STORE_OK;
    Scrabble__V1__RatingChange **v = rpc_arena_calloc(a, (size_t)len, sizeof *v);
    if (!v)
        return STORE_ERROR;
    const cJSON *x;
    cJSON_ArrayForEach(x, j)
    {
        Scrabble__V1__RatingChange *c =
            RPC_ARENA_MSG(a, Scrabble__V1__RatingChange, scrabble__v1__rating_change__init);
        if (!c)
            return STORE_ERROR;
        c->game_id = store__ji(x, "game_id");
        c->lexicon = store__js(a, x, "lexicon");
        c->family = store__js(a, x, "family");
        c->rating_before = store__jd(x, "rating_before");
        c->rating_after = store__jd(x, "rating_after");
        c->deviation_before = store__jd(x, "deviation_before");
        c->deviation_after = store__jd(x, "deviation_after");
        c->volatility_after = store__jd(x, "volatility_after");
        c->score = store__jd(x, "score");
        c->at_ms = store__ji(x, "at_ms");
        v[(*n)++] = c;
    }
    *out = v;
    return STORE_OK;
}

static int store__hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int store_bytea_decode(rpc_arena *a, const char *text, uint8_t **out, size_t *n)
{
    size_t len = strlen(text);
    if (len < 2 || text[0] != '\\' || text[1] != 'x' || (len & 1))
        return STORE_ERROR;
    size_t m = (len - 2) / 2;
    uint8_t *buf = rpc_arena_alloc(a, m ? m : 1);
    if (!buf)
        return STORE_ERROR;
    for (size_t i = 0; i < m; i++) {
        int hi = store__hexval(text[2 + 2 * i]), lo = store__hexval(text[3 + 2 * i]);
        if (hi < 0 || lo < 0)
            return STORE_ERROR;
        buf[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = buf;
    *n = m;
    return STORE_OK;
}

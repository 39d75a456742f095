/*
 * store_it.c — store-svc against a real, private Postgres, through gRPC.
 * Started by store_it.sh, which brings up the cluster and store-svc and
 * passes STORE_TARGET, STORE_METRICS_PORT, PG_DIR, PG_PORT, REPO_ROOT.
 *
 * Covers: accounts and sessions, invitations and games, CommitMove
 * idempotency and seq ordering, LoadGame, ListGames paging, finishing and
 * stats, chat, every bad input of the contract, batching (read from the
 * metrics), and a Postgres restart in the middle of a stream of writes.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpc/arena.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "../lib/it_identity.h"
#include "scrabble/v1/store.pb-c.h"
#include "scrape.h"

/* One channel per identity that store-svc grants methods to; calls go out
 * on the identity the method belongs to (store__allow in
 * store-svc/src/handlers.c), as the real callers would make them. */
static rpc_channel *g_gw, *g_game, *g_admin;
static rpc_arena *g_arena;
static int g_metrics_port;
static char g_uniq[32];

#define SVC "/scrabble.v1.Store/"

/* The channel of the identity store-svc grants `method` to. */
static rpc_channel *ch_for(const char *method)
{
    static const char *const game_methods[] = {"CreateGame", "LoadGame", "CommitMove", "AppendChat",
                                               "ListChat"};
    for (size_t i = 0; i < sizeof game_methods / sizeof game_methods[0]; i++)
        if (strcmp(method, game_methods[i]) == 0)
            return g_game;
    if (strcmp(method, "FinishGame") == 0 || strcmp(method, "GetInvitation") == 0)
        return g_admin;
    return g_gw;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A blocking call; the reply lives in g_arena. */
static grpc_status_code call_t(const char *method, const void *req,
                               const ProtobufCMessageDescriptor *rd, void *reply_out,
                               rpc_status *st, int64_t timeout_ms)
{
    char path[128];
    snprintf(path, sizeof(path), SVC "%s", method);
    rpc_client_opts o = {.timeout_ms = timeout_ms};
    ProtobufCMessage *reply = NULL;
    rpc_status local;
    if (!st)
        st = &local;
    grpc_status_code c = rpc_client_unary_sync(ch_for(method), path, req, rd, &o,
                                               rpc_arena_allocator(g_arena), &reply, st);
    if (reply_out)
        *(ProtobufCMessage **)reply_out = reply;
    return c;
}

static grpc_status_code call(const char *method, const void *req,
                             const ProtobufCMessageDescriptor *rd, void *reply_out, rpc_status *st)
{
    return call_t(method, req, rd, reply_out, st, 5000);
}

#define EXPECT_FAIL(code_, reason_, method, req, rd)                                               \
    do {                                                                                           \
        rpc_status st_;                                                                            \
        grpc_status_code c_ = call(method, req, rd, NULL, &st_);                                   \
        if (c_ != (code_) || strcmp(st_.reason, reason_) != 0)                                     \
            fail_msg("%s: got %s/%s (%s), want %s/%s", method, rpc_status_code_name(c_),           \
                     st_.reason, st_.message, rpc_status_code_name(code_), reason_);               \
    } while (0)

/* ---- helpers ---- */

static char *uniq(const char *prefix)
{
    static int n;
    return rpc_arena_printf(g_arena, "%s%s%d", prefix, g_uniq, ++n);
}

static Scrabble__V1__AuthReply *do_register(const char *handle, const char *pw)
{
    Scrabble__V1__RegisterRequest r = SCRABBLE__V1__REGISTER_REQUEST__INIT;
    r.handle = (char *)handle;
    r.password = (char *)pw;
    Scrabble__V1__AuthReply *a = NULL;
    rpc_status st;
    if (call("Register", &r, &scrabble__v1__auth_reply__descriptor, &a, &st) != GRPC_STATUS_OK)
        fail_msg("Register %s: %s %s", handle, st.reason, st.message);
    return a;
}

/* Two fresh accounts, an accepted invitation and a game between them. */
static Scrabble__V1__GameRecord *new_game(int64_t *a_out, int64_t *b_out)
{
    Scrabble__V1__AuthReply *a = do_register(uniq("a"), "pw-a");
    Scrabble__V1__AuthReply *b = do_register(uniq("b"), "pw-b");
    Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
    ci.inviter_id = a->account_id;
    char *handles[1] = {b->handle};
    ci.invitee_handles = handles;
    ci.n_invitee_handles = 1;
    Scrabble__V1__Invitation *inv = NULL;
    assert_int_equal(
        call("CreateInvitation", &ci, &scrabble__v1__invitation__descriptor, &inv, NULL), 0);
    assert_int_equal(inv->n_seats, 2);
    assert_string_equal(inv->lexicon, "wamerican");
    Scrabble__V1__StoreRespondInvitationRequest ri =
        SCRABBLE__V1__STORE_RESPOND_INVITATION_REQUEST__INIT;
    ri.account_id = b->account_id;
    ri.invitation_id = inv->invitation_id;
    ri.accept = 1;
    assert_int_equal(
        call("RespondInvitation", &ri, &scrabble__v1__invitation__descriptor, &inv, NULL), 0);
    assert_int_equal(inv->seats[1]->answer, SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_ACCEPTED);
    Scrabble__V1__StoreCreateGameRequest cg = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    cg.invitation_id = inv->invitation_id;
    cg.seed = 0xF00DFACEDEADBEEFull;
    Scrabble__V1__GameRecord *g = NULL;
    assert_int_equal(call("CreateGame", &cg, &scrabble__v1__game_record__descriptor, &g, NULL), 0);
    assert_int_equal(g->seed, 0xF00DFACEDEADBEEFull);
    assert_int_equal(g->n_seats, 2);
    assert_int_equal(g->seq, 0);
    if (a_out)
        *a_out = a->account_id;
    if (b_out)
        *b_out = b->account_id;
    return g;
}

static Scrabble__V1__Move *make_move(int64_t seq, int seat, int64_t account, int score)
{
    Scrabble__V1__Move *m = RPC_ARENA_MSG(g_arena, Scrabble__V1__Move, scrabble__v1__move__init);
    m->seq = seq;
    m->seat = seat;
    m->account_id = account;
    m->kind = SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY;
    Scrabble__V1__Placement **ps = rpc_arena_calloc(g_arena, 2, sizeof(*ps));
    for (int i = 0; i < 2; i++) {
        ps[i] = RPC_ARENA_MSG(g_arena, Scrabble__V1__Placement, scrabble__v1__placement__init);
        ps[i]->row = 7;
        ps[i]->col = (int)(seq % 13) + i;
        ps[i]->letter = i ? "T" : "A";
    }
    m->placements = ps;
    m->n_placements = 2;
    m->score = score;
    m->notation = rpc_arena_printf(g_arena, "8%c AT", 'A' + (int)(seq % 13));
    return m;
}

static grpc_status_code commit(int64_t game, Scrabble__V1__Move *m, int to_move,
                               Scrabble__V1__CommitMoveReply **reply, rpc_status *st)
{
    Scrabble__V1__CommitMoveRequest r = SCRABBLE__V1__COMMIT_MOVE_REQUEST__INIT;
    r.game_id = game;
    r.move = m;
    r.to_move = to_move;
    int32_t scores[2] = {(int32_t)m->seq * 10, (int32_t)m->seq * 5};
    r.scores = scores;
    r.n_scores = 2;
    return call("CommitMove", &r, &scrabble__v1__commit_move_reply__descriptor, reply, st);
}

static Scrabble__V1__GameRecord *load(int64_t game)
{
    Scrabble__V1__GameRef r = SCRABBLE__V1__GAME_REF__INIT;
    r.game_id = game;
    Scrabble__V1__GameRecord *g = NULL;
    rpc_status st;
    if (call("LoadGame", &r, &scrabble__v1__game_record__descriptor, &g, &st) != 0)
        fail_msg("LoadGame: %s %s", st.reason, st.message);
    return g;
}

/* The value of an unlabelled metric from the service's /metrics. */
static double metric_scraped(const char *name)
{
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", g_metrics_port);
    double v = scrape_metric_sum(addr, name);
    if (v < 0)
        fail_msg("metric %s not found", name);
    return v;
}

/* ---- accounts and sessions ---- */

static void test_accounts(void **state)
{
    /* SQL metacharacters are stored verbatim. */
    const char *evil = rpc_arena_printf(g_arena, "R');DROP/**/TABLE--\\%s", g_uniq);
    Scrabble__V1__AuthReply *a = do_register(evil, "s3cret 'quoted' \"pw\"");
    assert_true(a->account_id > 0);
    assert_string_equal(a->handle, evil);
    assert_int_equal(strlen(a->token), 64);

    Scrabble__V1__GetProfileRequest gp = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
    gp.handle = (char *)evil;
    Scrabble__V1__Profile *p = NULL;
    assert_int_equal(call("GetAccount", &gp, &scrabble__v1__profile__descriptor, &p, NULL), 0);
    assert_int_equal(p->account_id, a->account_id);
    assert_string_equal(p->handle, evil);

    /* Same handle again. */
    Scrabble__V1__RegisterRequest rr = SCRABBLE__V1__REGISTER_REQUEST__INIT;
    rr.handle = (char *)evil;
    rr.password = "x";
    EXPECT_FAIL(GRPC_STATUS_ALREADY_EXISTS, "handle_taken", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);

    /* Login, then the token resolves; a wrong password does not log in. */
    Scrabble__V1__LoginRequest lr = SCRABBLE__V1__LOGIN_REQUEST__INIT;
    lr.handle = (char *)evil;
    lr.password = "s3cret 'quoted' \"pw\"";
    Scrabble__V1__AuthReply *l = NULL;
    assert_int_equal(call("Login", &lr, &scrabble__v1__auth_reply__descriptor, &l, NULL), 0);
    assert_int_equal(l->account_id, a->account_id);
    assert_string_not_equal(l->token, a->token);
    Scrabble__V1__ResolveSessionRequest rs = SCRABBLE__V1__RESOLVE_SESSION_REQUEST__INIT;
    rs.token = l->token;
    Scrabble__V1__SessionInfo *si = NULL;
    assert_int_equal(
        call("ResolveSession", &rs, &scrabble__v1__session_info__descriptor, &si, NULL), 0);
    assert_int_equal(si->account_id, a->account_id);
    assert_string_equal(si->handle, evil);
    assert_true(si->expires_at_ms > 0);
    rs.token = a->token;
    assert_int_equal(
        call("ResolveSession", &rs, &scrabble__v1__session_info__descriptor, &si, NULL), 0);
    rs.token = "0000000000000000000000000000000000000000000000000000000000000000";
    EXPECT_FAIL(GRPC_STATUS_UNAUTHENTICATED, "unauthenticated", "ResolveSession", &rs,
                &scrabble__v1__session_info__descriptor);
    lr.password = "wrong";
    EXPECT_FAIL(GRPC_STATUS_UNAUTHENTICATED, "bad_credentials", "Login", &lr,
                &scrabble__v1__auth_reply__descriptor);
    lr.handle = uniq("nobody");
    EXPECT_FAIL(GRPC_STATUS_UNAUTHENTICATED, "bad_credentials", "Login", &lr,
                &scrabble__v1__auth_reply__descriptor);

    /* Profile update, read back; stats start at zero. */
    Scrabble__V1__StoreUpdateProfileRequest up = SCRABBLE__V1__STORE_UPDATE_PROFILE_REQUEST__INIT;
    up.account_id = a->account_id;
    up.display_name = "Zoë \"the\" Bobby; --";
    up.bio = "héllo world";
    assert_int_equal(call("UpdateProfile", &up, &scrabble__v1__profile__descriptor, &p, NULL), 0);
    assert_string_equal(p->display_name, up.display_name);
    gp.handle = "";
    gp.account_id = a->account_id;
    assert_int_equal(call("GetAccount", &gp, &scrabble__v1__profile__descriptor, &p, NULL), 0);
    assert_string_equal(p->bio, up.bio);
    Scrabble__V1__GetStatsRequest gs = SCRABBLE__V1__GET_STATS_REQUEST__INIT;
    gs.account_id = a->account_id;
    Scrabble__V1__Stats *s = NULL;
    assert_int_equal(call("GetStats", &gs, &scrabble__v1__stats__descriptor, &s, NULL), 0);
    assert_int_equal(s->games_played, 0);
}

/* ---- bad input ---- */

static void test_bad_input(void **state)
{
    Scrabble__V1__RegisterRequest rr = SCRABBLE__V1__REGISTER_REQUEST__INIT;
    rr.password = "pw";
    rr.handle = "";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "empty", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    rr.handle = "abcdefghijklmnopqrstuvwxyz0123456"; /* 33 */
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "too_long", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    rr.handle = "bad\xc3\x28utf8";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    rr.handle = "has space";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_handle", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    /* Control characters are refused by the string gate before any handle
     * rule (rpc/wire_check.h). */
    rr.handle = "tab\there";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_text", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    rr.handle = uniq("ok");
    rr.password = "";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "empty", "Register", &rr,
                &scrabble__v1__auth_reply__descriptor);
    /* 32 code points of 2 bytes each is fine. */
    rr.handle =
        rpc_arena_printf(g_arena, "%.*s", 32 * 2, "éééééééééééééééééééééééééééééééééééééééééééé");
    rr.password = "pw";
    Scrabble__V1__AuthReply *a = NULL;
    rpc_status st;
    grpc_status_code c = call("Register", &rr, &scrabble__v1__auth_reply__descriptor, &a, &st);
    assert_true(c == GRPC_STATUS_OK || c == GRPC_STATUS_ALREADY_EXISTS);

    Scrabble__V1__StoreUpdateProfileRequest up = SCRABBLE__V1__STORE_UPDATE_PROFILE_REQUEST__INIT;
    Scrabble__V1__AuthReply *me = do_register(uniq("prof"), "pw");
    up.account_id = me->account_id;
    up.display_name = "0123456789012345678901234567890123456789012345678901234567890123X"; /* 65 */
    up.bio = "";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "too_long", "UpdateProfile", &up,
                &scrabble__v1__profile__descriptor);
    up.display_name = "\xff";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8", "UpdateProfile", &up,
                &scrabble__v1__profile__descriptor);
    up.display_name = "ok";
    char *bio = rpc_arena_alloc(g_arena, 282);
    memset(bio, 'b', 281);
    bio[281] = '\0';
    up.bio = bio;
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "too_long", "UpdateProfile", &up,
                &scrabble__v1__profile__descriptor);

    /* Chat: too long, empty, bad UTF-8 (on a real game, so only the text is
     * wrong). */
    int64_t pa;
    Scrabble__V1__GameRecord *g = new_game(&pa, NULL);
    Scrabble__V1__AppendChatRequest ac = SCRABBLE__V1__APPEND_CHAT_REQUEST__INIT;
    ac.game_id = g->game_id;
    ac.account_id = pa;
    char *text = rpc_arena_alloc(g_arena, 502);
    memset(text, 'x', 501);
    text[501] = '\0';
    ac.text = text;
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "too_long", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    ac.text = "";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "empty", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    ac.text = "caf\xe9";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    ac.text = "\xed\xa0\x80 surrogate";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    text[500] = '\0'; /* exactly 500 is fine */
    ac.text = text;
    assert_int_equal(call("AppendChat", &ac, &scrabble__v1__chat_message__descriptor, NULL, NULL),
                     0);

    /* A malformed move and a bad page token. */
    Scrabble__V1__CommitMoveRequest cm = SCRABBLE__V1__COMMIT_MOVE_REQUEST__INIT;
    cm.game_id = g->game_id;
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_move", "CommitMove", &cm,
                &scrabble__v1__commit_move_reply__descriptor);
    Scrabble__V1__StoreListGamesRequest lg = SCRABBLE__V1__STORE_LIST_GAMES_REQUEST__INIT;
    lg.account_id = pa;
    lg.page_token = "'; DROP TABLE games; --";
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "bad_page_token", "ListGames", &lg,
                &scrabble__v1__list_games_reply__descriptor);
}

static void test_not_found(void **state)
{
    const int64_t nope = 999999999;
    Scrabble__V1__GameRef gr = SCRABBLE__V1__GAME_REF__INIT;
    gr.game_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "LoadGame", &gr,
                &scrabble__v1__game_record__descriptor);
    Scrabble__V1__CommitMoveReply *cr;
    rpc_status st;
    assert_int_equal(commit(nope, make_move(1, 0, 1, 5), 1, &cr, &st), GRPC_STATUS_NOT_FOUND);
    assert_string_equal(st.reason, "not_found");
    Scrabble__V1__AppendChatRequest ac = SCRABBLE__V1__APPEND_CHAT_REQUEST__INIT;
    ac.game_id = nope;
    ac.account_id = 1;
    ac.text = "hi";
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    Scrabble__V1__ListChatRequest lc = SCRABBLE__V1__LIST_CHAT_REQUEST__INIT;
    lc.game_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "ListChat", &lc,
                &scrabble__v1__list_chat_reply__descriptor);
    Scrabble__V1__FinishGameRequest fg = SCRABBLE__V1__FINISH_GAME_REQUEST__INIT;
    Scrabble__V1__GameFinish fin = SCRABBLE__V1__GAME_FINISH__INIT;
    fin.end_reason = SCRABBLE__V1__END_REASON__END_REASON_RESIGN;
    fg.game_id = nope;
    fg.finish = &fin;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "FinishGame", &fg,
                &scrabble__v1__game_record__descriptor);

    Scrabble__V1__GetProfileRequest gp = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
    gp.account_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "GetAccount", &gp,
                &scrabble__v1__profile__descriptor);
    gp.account_id = 0;
    gp.handle = uniq("ghost");
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "GetAccount", &gp,
                &scrabble__v1__profile__descriptor);
    Scrabble__V1__GetStatsRequest gs = SCRABBLE__V1__GET_STATS_REQUEST__INIT;
    gs.account_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "GetStats", &gs,
                &scrabble__v1__stats__descriptor);
    Scrabble__V1__StoreListGamesRequest lg = SCRABBLE__V1__STORE_LIST_GAMES_REQUEST__INIT;
    lg.account_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "ListGames", &lg,
                &scrabble__v1__list_games_reply__descriptor);
    Scrabble__V1__AccountRef ar = SCRABBLE__V1__ACCOUNT_REF__INIT;
    ar.account_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "ListInvitations", &ar,
                &scrabble__v1__list_invitations_reply__descriptor);
    Scrabble__V1__StoreUpdateProfileRequest up = SCRABBLE__V1__STORE_UPDATE_PROFILE_REQUEST__INIT;
    up.account_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "UpdateProfile", &up,
                &scrabble__v1__profile__descriptor);
    Scrabble__V1__InvitationRef ir = SCRABBLE__V1__INVITATION_REF__INIT;
    ir.invitation_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "GetInvitation", &ir,
                &scrabble__v1__invitation__descriptor);
    Scrabble__V1__StoreCreateGameRequest cg = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    cg.invitation_id = nope;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "CreateGame", &cg,
                &scrabble__v1__game_record__descriptor);
    Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
    Scrabble__V1__AuthReply *a = do_register(uniq("inv"), "pw");
    ci.inviter_id = a->account_id;
    char *h[1] = {uniq("ghost")};
    ci.invitee_handles = h;
    ci.n_invitee_handles = 1;
    EXPECT_FAIL(GRPC_STATUS_NOT_FOUND, "not_found", "CreateInvitation", &ci,
                &scrabble__v1__invitation__descriptor);
}

/* ---- games ---- */

static void test_invitations(void **state)
{
    Scrabble__V1__AuthReply *a = do_register(uniq("ia"), "pw");
    Scrabble__V1__AuthReply *b = do_register(uniq("ib"), "pw");
    Scrabble__V1__AuthReply *c = do_register(uniq("ic"), "pw");
    Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
    ci.inviter_id = a->account_id;
    char *h[2] = {b->handle, c->handle};
    ci.invitee_handles = h;
    ci.n_invitee_handles = 2;
    ci.lexicon = "wamerican";
    Scrabble__V1__Invitation *inv = NULL;
    assert_int_equal(
        call("CreateInvitation", &ci, &scrabble__v1__invitation__descriptor, &inv, NULL), 0);
    assert_int_equal(inv->n_seats, 3);
    assert_int_equal(inv->seats[2]->account_id, c->account_id);
    assert_int_equal(inv->status, SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN);

    Scrabble__V1__AccountRef ar = SCRABBLE__V1__ACCOUNT_REF__INIT;
    ar.account_id = c->account_id;
    Scrabble__V1__ListInvitationsReply *li = NULL;
    assert_int_equal(
        call("ListInvitations", &ar, &scrabble__v1__list_invitations_reply__descriptor, &li, NULL),
        0);
    assert_int_equal(li->n_invitations, 1);
    assert_int_equal(li->invitations[0]->invitation_id, inv->invitation_id);

    /* Not every invitee has accepted: no game yet. */
    Scrabble__V1__StoreCreateGameRequest cg = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    cg.invitation_id = inv->invitation_id;
    EXPECT_FAIL(GRPC_STATUS_FAILED_PRECONDITION, "invitation_pending", "CreateGame", &cg,
                &scrabble__v1__game_record__descriptor);
    /* A stranger cannot answer; a decline closes it. */
    Scrabble__V1__StoreRespondInvitationRequest ri =
        SCRABBLE__V1__STORE_RESPOND_INVITATION_REQUEST__INIT;
    ri.invitation_id = inv->invitation_id;
    ri.account_id = a->account_id;
    ri.accept = 1;
    EXPECT_FAIL(GRPC_STATUS_PERMISSION_DENIED, "not_invited", "RespondInvitation", &ri,
                &scrabble__v1__invitation__descriptor);
    ri.account_id = b->account_id;
    ri.accept = 0;
    assert_int_equal(
        call("RespondInvitation", &ri, &scrabble__v1__invitation__descriptor, &inv, NULL), 0);
    assert_int_equal(inv->status, SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_DECLINED);
    ri.account_id = c->account_id;
    ri.accept = 1;
    EXPECT_FAIL(GRPC_STATUS_FAILED_PRECONDITION, "invitation_closed", "RespondInvitation", &ri,
                &scrabble__v1__invitation__descriptor);
    EXPECT_FAIL(GRPC_STATUS_FAILED_PRECONDITION, "invitation_closed", "CreateGame", &cg,
                &scrabble__v1__game_record__descriptor);
    /* Self-invitation. */
    h[0] = a->handle;
    ci.n_invitee_handles = 1;
    EXPECT_FAIL(GRPC_STATUS_INVALID_ARGUMENT, "duplicate_invitee", "CreateInvitation", &ci,
                &scrabble__v1__invitation__descriptor);
}

static void test_commit_move(void **state)
{
    int64_t pa, pb;
    Scrabble__V1__GameRecord *g = new_game(&pa, &pb);

    /* CreateGame is idempotent on the invitation. */
    Scrabble__V1__StoreCreateGameRequest cg = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    cg.invitation_id = g->invitation_id;
    Scrabble__V1__GameRecord *g2 = NULL;
    assert_int_equal(call("CreateGame", &cg, &scrabble__v1__game_record__descriptor, &g2, NULL), 0);
    assert_int_equal(g2->game_id, g->game_id);

    Scrabble__V1__Move *moves[6];
    Scrabble__V1__CommitMoveReply *r;
    rpc_status st;
    for (int i = 1; i <= 5; i++) {
        moves[i] = make_move(i, (i - 1) % 2, (i % 2) ? pa : pb, 10 + i);
        assert_int_equal(commit(g->game_id, moves[i], i % 2, &r, &st), 0);
        assert_false(r->duplicate);
        assert_int_equal(r->move->seq, i);
        assert_true(r->move->at_ms > 0);
    }
    /* The same move again: the original, duplicate=true (at_ms differs in
     * the request and is ignored). */
    int64_t at3;
    {
        Scrabble__V1__GameRecord *l = load(g->game_id);
        at3 = l->moves[2]->at_ms;
    }
    moves[3]->at_ms = 123456;
    assert_int_equal(commit(g->game_id, moves[3], 1, &r, &st), 0);
    assert_true(r->duplicate);
    assert_int_equal(r->move->seq, 3);
    assert_int_equal(r->move->at_ms, at3);
    assert_string_equal(r->move->notation, moves[3]->notation);
    /* A different move at a taken seq, and a gap. */
    Scrabble__V1__Move *other = make_move(3, 0, pa, 99);
    assert_int_equal(commit(g->game_id, other, 1, &r, &st), GRPC_STATUS_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "stale_seq");
    assert_int_equal(commit(g->game_id, make_move(7, 0, pa, 1), 1, &r, &st),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "stale_seq");

    /* The mover must hold the seat. */
    assert_int_equal(commit(g->game_id, make_move(6, 1, pa, 1), 0, &r, &st),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "bad_seat");

    /* LoadGame: every move, in order, as committed. */
    Scrabble__V1__GameRecord *l = load(g->game_id);
    assert_int_equal(l->seq, 5);
    assert_int_equal(l->to_move, 1);
    assert_int_equal(l->n_moves, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(l->moves[i]->seq, i + 1);
        assert_string_equal(l->moves[i]->notation, moves[i + 1]->notation);
        assert_int_equal(l->moves[i]->n_placements, 2);
        assert_string_equal(l->moves[i]->placements[1]->letter, "T");
    }
    assert_int_equal(l->seats[0]->score, 50);
    assert_int_equal(l->seats[1]->score, 25);
    assert_int_equal(l->seed, 0xF00DFACEDEADBEEFull);

    /* Finish with the last move; stats follow; the game is over. */
    Scrabble__V1__CommitMoveRequest cm = SCRABBLE__V1__COMMIT_MOVE_REQUEST__INIT;
    Scrabble__V1__GameFinish fin = SCRABBLE__V1__GAME_FINISH__INIT;
    int32_t finals[2] = {80, 20}, winners[1] = {0}, scores[2] = {70, 25};
    fin.end_reason = SCRABBLE__V1__END_REASON__END_REASON_OUT;
    fin.final_scores = finals;
    fin.n_final_scores = 2;
    fin.winners = winners;
    fin.n_winners = 1;
    cm.game_id = g->game_id;
    cm.move = make_move(6, 1, pb, 20);
    cm.scores = scores;
    cm.n_scores = 2;
    cm.finish = &fin;
    assert_int_equal(
        call("CommitMove", &cm, &scrabble__v1__commit_move_reply__descriptor, &r, NULL), 0);
    l = load(g->game_id);
    assert_int_equal(l->status, SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED);
    assert_int_equal(l->end_reason, SCRABBLE__V1__END_REASON__END_REASON_OUT);
    assert_int_equal(l->n_winners, 1);
    assert_int_equal(l->seats[0]->score, 80);
    Scrabble__V1__GetStatsRequest gs = SCRABBLE__V1__GET_STATS_REQUEST__INIT;
    Scrabble__V1__Stats *s = NULL;
    gs.account_id = pa;
    assert_int_equal(call("GetStats", &gs, &scrabble__v1__stats__descriptor, &s, NULL), 0);
    assert_int_equal(s->games_played, 1);
    assert_int_equal(s->wins, 1);
    assert_int_equal(s->total_score, 80);
    assert_int_equal(s->best_game_score, 80);
    assert_int_equal(s->best_move_score, 15);
    gs.account_id = pb;
    assert_int_equal(call("GetStats", &gs, &scrabble__v1__stats__descriptor, &s, NULL), 0);
    assert_int_equal(s->losses, 1);
    assert_int_equal(s->best_move_score, 20);
    assert_int_equal(commit(g->game_id, make_move(7, 0, pa, 1), 1, &r, &st),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "game_over");
    Scrabble__V1__FinishGameRequest fg = SCRABBLE__V1__FINISH_GAME_REQUEST__INIT;
    fg.game_id = g->game_id;
    fg.finish = &fin;
    EXPECT_FAIL(GRPC_STATUS_FAILED_PRECONDITION, "game_over", "FinishGame", &fg,
                &scrabble__v1__game_record__descriptor);
}

static void test_finish_game_and_list(void **state)
{
    int64_t pa, pb;
    Scrabble__V1__GameRecord *games[5];
    games[0] = new_game(&pa, &pb);
    /* Four more games for pa against new opponents. */
    for (int i = 1; i < 5; i++) {
        Scrabble__V1__AuthReply *o = do_register(uniq("opp"), "pw");
        Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
        ci.inviter_id = pa;
        char *h[1] = {o->handle};
        ci.invitee_handles = h;
        ci.n_invitee_handles = 1;
        Scrabble__V1__Invitation *inv = NULL;
        assert_int_equal(
            call("CreateInvitation", &ci, &scrabble__v1__invitation__descriptor, &inv, NULL), 0);
        Scrabble__V1__StoreRespondInvitationRequest ri =
            SCRABBLE__V1__STORE_RESPOND_INVITATION_REQUEST__INIT;
        ri.account_id = o->account_id;
        ri.invitation_id = inv->invitation_id;
        ri.accept = 1;
        assert_int_equal(
            call("RespondInvitation", &ri, &scrabble__v1__invitation__descriptor, NULL, NULL), 0);
        Scrabble__V1__StoreCreateGameRequest cg = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
        cg.invitation_id = inv->invitation_id;
        assert_int_equal(
            call("CreateGame", &cg, &scrabble__v1__game_record__descriptor, &games[i], NULL), 0);
    }
    /* Abandon game 0 (a tie: both draw). */
    Scrabble__V1__FinishGameRequest fg = SCRABBLE__V1__FINISH_GAME_REQUEST__INIT;
    Scrabble__V1__GameFinish fin = SCRABBLE__V1__GAME_FINISH__INIT;
    int32_t finals[2] = {0, 0}, winners[2] = {0, 1};
    fin.end_reason = SCRABBLE__V1__END_REASON__END_REASON_SCORELESS;
    fin.final_scores = finals;
    fin.n_final_scores = 2;
    fin.winners = winners;
    fin.n_winners = 2;
    fg.game_id = games[0]->game_id;
    fg.finish = &fin;
    Scrabble__V1__GameRecord *fr = NULL;
    assert_int_equal(call("FinishGame", &fg, &scrabble__v1__game_record__descriptor, &fr, NULL), 0);
    assert_int_equal(fr->status, SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED);
    Scrabble__V1__GetStatsRequest gs = SCRABBLE__V1__GET_STATS_REQUEST__INIT;
    Scrabble__V1__Stats *s = NULL;
    gs.account_id = pb;
    assert_int_equal(call("GetStats", &gs, &scrabble__v1__stats__descriptor, &s, NULL), 0);
    assert_int_equal(s->draws, 1);

    /* Active games of pa, two per page: 4 games over pages 2+2, newest
     * first, no repeats. */
    Scrabble__V1__StoreListGamesRequest lg = SCRABBLE__V1__STORE_LIST_GAMES_REQUEST__INIT;
    lg.account_id = pa;
    lg.status = SCRABBLE__V1__GAME_STATUS__GAME_STATUS_ACTIVE;
    lg.page_size = 2;
    lg.page_token = "";
    int seen = 0;
    int64_t ids[8];
    for (int page = 0; page < 4; page++) {
        Scrabble__V1__ListGamesReply *r = NULL;
        assert_int_equal(
            call("ListGames", &lg, &scrabble__v1__list_games_reply__descriptor, &r, NULL), 0);
        for (size_t i = 0; i < r->n_games; i++) {
            assert_int_equal(r->games[i]->status, SCRABBLE__V1__GAME_STATUS__GAME_STATUS_ACTIVE);
            for (int k = 0; k < seen; k++)
                assert_true(ids[k] != r->games[i]->game_id);
            ids[seen++] = r->games[i]->game_id;
        }
        if (!r->next_page_token[0])
            break;
        lg.page_token = r->next_page_token;
    }
    assert_int_equal(seen, 4);
    assert_int_equal(ids[0], games[4]->game_id);
    /* All statuses: 5. */
    lg.status = 0;
    lg.page_size = 10;
    lg.page_token = "";
    Scrabble__V1__ListGamesReply *r = NULL;
    assert_int_equal(call("ListGames", &lg, &scrabble__v1__list_games_reply__descriptor, &r, NULL),
                     0);
    assert_int_equal(r->n_games, 5);
    assert_string_equal(r->next_page_token, "");
}

static void test_chat(void **state)
{
    int64_t pa, pb;
    Scrabble__V1__GameRecord *g = new_game(&pa, &pb);
    const char *texts[3] = {"hello; DROP TABLE chat_messages; --", "it's \"quoted\" \\ back",
                            "ünïcödé 🎉"};
    Scrabble__V1__AppendChatRequest ac = SCRABBLE__V1__APPEND_CHAT_REQUEST__INIT;
    ac.game_id = g->game_id;
    for (int i = 0; i < 3; i++) {
        ac.account_id = i % 2 ? pb : pa;
        ac.text = (char *)texts[i];
        Scrabble__V1__ChatMessage *m = NULL;
        assert_int_equal(call("AppendChat", &ac, &scrabble__v1__chat_message__descriptor, &m, NULL),
                         0);
        assert_string_equal(m->text, texts[i]);
    }
    ac.account_id = do_register(uniq("lurker"), "pw")->account_id;
    EXPECT_FAIL(GRPC_STATUS_PERMISSION_DENIED, "not_a_player", "AppendChat", &ac,
                &scrabble__v1__chat_message__descriptor);
    Scrabble__V1__ListChatRequest lc = SCRABBLE__V1__LIST_CHAT_REQUEST__INIT;
    lc.game_id = g->game_id;
    Scrabble__V1__ListChatReply *r = NULL;
    assert_int_equal(call("ListChat", &lc, &scrabble__v1__list_chat_reply__descriptor, &r, NULL),
                     0);
    assert_int_equal(r->n_messages, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(r->messages[i]->text, texts[i]);
    lc.after_id = r->messages[1]->message_id;
    assert_int_equal(call("ListChat", &lc, &scrabble__v1__list_chat_reply__descriptor, &r, NULL),
                     0);
    assert_int_equal(r->n_messages, 1);
    /* An empty game's chat is an empty list, not NOT_FOUND. */
    Scrabble__V1__GameRecord *g2 = new_game(NULL, NULL);
    lc.game_id = g2->game_id;
    lc.after_id = 0;
    assert_int_equal(call("ListChat", &lc, &scrabble__v1__list_chat_reply__descriptor, &r, NULL),
                     0);
    assert_int_equal(r->n_messages, 0);
}

/* ---- batching: many concurrent CommitMoves share few transactions ---- */

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending, ok, failed;
} waiter;

static void on_commit(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    waiter *w = arg;
    pthread_mutex_lock(&w->mu);
    if (st->code == GRPC_STATUS_OK)
        w->ok++;
    else
        w->failed++;
    if (--w->pending == 0)
        pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void test_batching(void **state)
{
    enum { GAMES = 100, ROUNDS = 4 };
    int64_t ids[GAMES], pa[GAMES], pb[GAMES];
    for (int i = 0; i < GAMES; i++)
        ids[i] = new_game(&pa[i], &pb[i])->game_id;
    double b0 = metric_scraped("store_batches_total"), o0 = metric_scraped("store_batch_ops_total");
    double t0 = metric_scraped("store_tx_total");
    waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    for (int round = 1; round <= ROUNDS; round++) {
        w.pending = GAMES;
        for (int i = 0; i < GAMES; i++) {
            Scrabble__V1__CommitMoveRequest *r = RPC_ARENA_MSG(
                g_arena, Scrabble__V1__CommitMoveRequest, scrabble__v1__commit_move_request__init);
            r->game_id = ids[i];
            r->move = make_move(round, (round - 1) % 2, round % 2 ? pa[i] : pb[i], 3);
            r->to_move = round % 2;
            rpc_client_opts o = {.timeout_ms = 10000};
            assert_int_equal(rpc_client_unary(g_game, SVC "CommitMove", &r->base,
                                              &scrabble__v1__commit_move_reply__descriptor, &o,
                                              on_commit, &w),
                             RPC_OK);
        }
        pthread_mutex_lock(&w.mu);
        while (w.pending > 0)
            pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
    }
    assert_int_equal(w.failed, 0);
    assert_int_equal(w.ok, GAMES * ROUNDS);
    double batches = metric_scraped("store_batches_total") - b0;
    double ops = metric_scraped("store_batch_ops_total") - o0;
    double tx = metric_scraped("store_tx_total") - t0;
    print_message("batching: %.0f commits in %.0f batches, %.0f transactions (%.1f ops/tx)\n", ops,
                  batches, tx, ops / tx);
    assert_true(ops == GAMES * ROUNDS);
    /* "Far fewer": at least 5 ops per transaction on average. */
    assert_true(tx * 5 <= ops);
    for (int i = 0; i < GAMES; i += 17) {
        Scrabble__V1__GameRecord *l = load(ids[i]);
        assert_int_equal(l->seq, ROUNDS);
        assert_int_equal(l->n_moves, ROUNDS);
    }
}

/* ---- Postgres goes away ---- */

static int pg_ctl(const char *what)
{
    char cmd[1024];
    if (strcmp(what, "stop") == 0)
        snprintf(cmd, sizeof(cmd), "%s/scripts/pg.sh stop %s >/dev/null 2>&1", getenv("REPO_ROOT"),
                 getenv("PG_DIR"));
    else
        snprintf(cmd, sizeof(cmd), "%s/scripts/pg.sh start %s %s >/dev/null 2>&1",
                 getenv("REPO_ROOT"), getenv("PG_DIR"), getenv("PG_PORT"));
    return system(cmd);
}

static void test_db_down_fails_fast(void **state)
{
    Scrabble__V1__GameRecord *g = new_game(NULL, NULL);
    assert_int_equal(pg_ctl("stop"), 0);
    /* Reads and writes: UNAVAILABLE db_unavailable well before the 5 s
     * deadline. */
    for (int i = 0; i < 3; i++) {
        Scrabble__V1__GameRef gr = SCRABBLE__V1__GAME_REF__INIT;
        gr.game_id = g->game_id;
        rpc_status st;
        int64_t t = now_ms();
        assert_int_equal(call("LoadGame", &gr, &scrabble__v1__game_record__descriptor, NULL, &st),
                         GRPC_STATUS_UNAVAILABLE);
        assert_string_equal(st.reason, "db_unavailable");
        assert_true(now_ms() - t < 1000);
        Scrabble__V1__CommitMoveReply *r;
        t = now_ms();
        assert_int_equal(commit(g->game_id, make_move(1, 0, 1, 1), 1, &r, &st),
                         GRPC_STATUS_UNAVAILABLE);
        assert_string_equal(st.reason, "db_unavailable");
        assert_true(now_ms() - t < 1000);
    }
    assert_int_equal(pg_ctl("start"), 0);
    /* It comes back by itself (backoff is at most 5 s). */
    int64_t until = now_ms() + 15000;
    grpc_status_code c;
    do {
        Scrabble__V1__GameRef gr = SCRABBLE__V1__GAME_REF__INIT;
        gr.game_id = g->game_id;
        c = call("LoadGame", &gr, &scrabble__v1__game_record__descriptor, NULL, NULL);
        if (c != 0)
            usleep(100 * 1000);
    } while (c != 0 && now_ms() < until);
    assert_int_equal(c, 0);
    Scrabble__V1__CommitMoveReply *r;
    until = now_ms() + 15000;
    do {
        c = commit(g->game_id, make_move(1, 0, g->seats[0]->account_id, 1), 1, &r, NULL);
        if (c != 0)
            usleep(100 * 1000);
    } while (c != 0 && now_ms() < until);
    assert_int_equal(c, 0);
}

typedef struct stream_arg {
    int64_t game, account[2];
    volatile int *stop;
    int64_t acked;   /* highest seq acknowledged */
    int unavailable; /* UNAVAILABLE replies seen */
    int duplicates;  /* acks that were duplicate=true (a retry of an in-doubt write) */
    int other_errors;
} stream_arg;

/* Commits seq 1, 2, ... on one game as fast as acknowledgements come,
 * retrying the same move after UNAVAILABLE (as game-svc would). */
static void *stream_main(void *p)
{
    stream_arg *s = p;
    rpc_arena *a = rpc_arena_create(0);
    int64_t seq = 1;
    while (!*s->stop) {
        Scrabble__V1__Move m = SCRABBLE__V1__MOVE__INIT;
        m.seq = seq;
        m.seat = (int)((seq - 1) % 2);
        m.account_id = s->account[m.seat];
        m.kind = SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PASS;
        m.notation = "PASS";
        Scrabble__V1__CommitMoveRequest r = SCRABBLE__V1__COMMIT_MOVE_REQUEST__INIT;
        r.game_id = s->game;
        r.move = &m;
        r.to_move = (int)(seq % 2);
        rpc_client_opts o = {.timeout_ms = 3000};
        ProtobufCMessage *reply = NULL;
        rpc_status st;
        grpc_status_code c = rpc_client_unary_sync(g_game, SVC "CommitMove", &r.base,
                                                   &scrabble__v1__commit_move_reply__descriptor, &o,
                                                   rpc_arena_allocator(a), &reply, &st);
        if (c == GRPC_STATUS_OK) {
            if (((Scrabble__V1__CommitMoveReply *)reply)->duplicate)
                s->duplicates++;
            s->acked = seq++;
        } else if (c == GRPC_STATUS_UNAVAILABLE || c == GRPC_STATUS_DEADLINE_EXCEEDED) {
            s->unavailable++;
            usleep(20 * 1000);
        } else {
            s->other_errors++;
            print_message("stream game %ld seq %ld: %s %s %s\n", (long)s->game, (long)seq,
                          rpc_status_code_name(c), st.reason, st.message);
            usleep(20 * 1000);
        }
        rpc_arena_reset(a);
    }
    rpc_arena_destroy(a);
    return NULL;
}

static void test_pg_restart_mid_stream(void **state)
{
    enum { STREAMS = 8 };
    stream_arg s[STREAMS];
    pthread_t th[STREAMS];
    volatile int stop = 0;
    double r0 = metric_scraped("store_db_reconnects_total");
    for (int i = 0; i < STREAMS; i++) {
        memset(&s[i], 0, sizeof(s[i]));
        s[i].game = new_game(&s[i].account[0], &s[i].account[1])->game_id;
        s[i].stop = &stop;
        pthread_create(&th[i], NULL, stream_main, &s[i]);
    }
    usleep(1000 * 1000);
    int64_t before = 0;
    for (int i = 0; i < STREAMS; i++)
        before += s[i].acked;
    /* A fast shutdown kills the connections mid-stream; then it is back. */
    assert_int_equal(pg_ctl("stop"), 0);
    usleep(500 * 1000);
    assert_int_equal(pg_ctl("start"), 0);
    usleep(3000 * 1000);
    stop = 1;
    int64_t after = 0;
    int unavailable = 0, dups = 0;
    for (int i = 0; i < STREAMS; i++) {
        pthread_join(th[i], NULL);
        after += s[i].acked;
        unavailable += s[i].unavailable;
        dups += s[i].duplicates;
        assert_int_equal(s[i].other_errors, 0);
    }
    print_message("restart: %ld acks before, %ld after; %d UNAVAILABLE retried, %d acks were "
                  "duplicates of in-doubt writes; reconnects %.0f\n",
                  (long)before, (long)after, unavailable, dups,
                  metric_scraped("store_db_reconnects_total") - r0);
    assert_true(unavailable > 0); /* the outage was seen */
    assert_true(after > before);  /* and writes resumed */
    assert_true(metric_scraped("store_db_reconnects_total") > r0);
    /* Every acknowledged move is there, exactly once, in order, nothing
     * beyond the last ack. */
    for (int i = 0; i < STREAMS; i++) {
        Scrabble__V1__GameRecord *l = load(s[i].game);
        assert_int_equal(l->seq, s[i].acked);
        assert_int_equal(l->n_moves, s[i].acked);
        for (size_t k = 0; k < l->n_moves; k++)
            assert_int_equal(l->moves[k]->seq, (int64_t)k + 1);
    }
}

int main(void)
{
    const char *target = getenv("STORE_TARGET");
    const char *mport = getenv("STORE_METRICS_PORT");
    if (!target || !mport || !getenv("PG_DIR") || !getenv("PG_PORT") || !getenv("REPO_ROOT")) {
        fprintf(stderr, "run me through store_it.sh\n");
        return 2;
    }
    g_metrics_port = atoi(mport);
    snprintf(g_uniq, sizeof(g_uniq), "_%ld_", (long)getpid());
    rpc_init();
    g_gw = it_channel_as(target, "store-svc", "gateway");
    g_game = it_channel_as(target, "store-svc", "game-svc");
    g_admin = it_channel_as(target, "store-svc", "admin");
    g_arena = rpc_arena_create(1 << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accounts),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_invitations),
        cmocka_unit_test(test_commit_move),
        cmocka_unit_test(test_finish_game_and_list),
        cmocka_unit_test(test_chat),
        cmocka_unit_test(test_batching),
        cmocka_unit_test(test_db_down_fails_fast),
        cmocka_unit_test(test_pg_restart_mid_stream),
    };
    int rc = cmocka_run_group_tests_name("store-svc integration", tests, NULL, NULL);
    rpc_channel_destroy(g_gw);
    rpc_channel_destroy(g_game);
    rpc_channel_destroy(g_admin);
    rpc_arena_destroy(g_arena);
    return rc;
}

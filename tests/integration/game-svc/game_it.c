/*
 * game_it.c — the integration client of game-svc (cmocka), run by
 * test_game_svc.sh against real Postgres, Redis, store-svc and game-svc.
 *
 *   game_it games                 full 2/3/4-player games, bad input, races,
 *                                 drafts, events, chat, nudge, history
 *   game_it crash-before FILE     plays half a game, writes what was acked
 *   game_it crash-after FILE      (after kill -9 + restart) compares, then
 *                                 plays the game to its end
 *   game_it store-up|store-down|store-back FILE
 *                                 a turn while store-svc is down fails
 *                                 UNAVAILABLE, reads stay up, the game
 *                                 continues once the store is back
 *   game_it redis-down            (Redis stopped) drafts UNAVAILABLE fast,
 *                                 gameplay unaffected
 *
 * Env: GAME_ADDR, STORE_ADDR, REDIS_PORT, GAME_TEST_LEXICON.
 *
 * Every game is mirrored locally: the client fetches the seed from store-svc
 * (LoadGame) and replays each acknowledged move with the same rules engine,
 * then checks the mover's new rack and the bag count against the server's
 * reply, so a bag or rack divergence anywhere fails the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/it_identity.h"
#include <time.h>
#include <unistd.h>

#include "rpc/rpc.h"
#include "rules.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

/* game_ch and store_ch present the gateway identity (the account metadata
 * and the account calls are the gateway's); store_game_ch is game-svc's,
 * for LoadGame. */
static rpc_channel *game_ch, *store_ch, *store_game_ch;
static solver_lexicon *lex;
static int redis_port;

/* A connection to the test's Redis as the ACL user subscriber (what the
 * gateway uses), authenticated with the password scripts/redis.sh made in
 * $SECRETS_DIR; no AUTH when SECRETS_DIR is unset. */
static redisContext *it_redis_subscriber(void)
{
    redisContext *rc = redisConnect("127.0.0.1", redis_port);
    assert_non_null(rc);
    assert_int_equal(rc->err, 0);
    const char *dir = getenv("SECRETS_DIR");
    if (dir && dir[0]) {
        char path[512], pw[256] = "";
        snprintf(path, sizeof path, "%s/redis-subscriber.pass", dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        assert_non_null(fgets(pw, sizeof pw, f));
        fclose(f);
        pw[strcspn(pw, "\r\n")] = '\0';
        redisReply *r = redisCommand(rc, "AUTH subscriber %s", pw);
        assert_non_null(r);
        assert_int_equal(r->type, REDIS_REPLY_STATUS);
        freeReplyObject(r);
    }
    return rc;
}
static int uniq;

/* ------------------------------------------------------------------ */
/* Calls                                                               */

typedef struct reply {
    rpc_status st;
    ProtobufCMessage *msg;
} reply;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One blocking call to game-svc as `account` (0: no metadata) with a
 * deadline of timeout_ms. The reply is malloc'd; free with done(). */
static grpc_status_code gcall_within(int64_t account, const char *method,
                                     const ProtobufCMessage *req,
                                     const ProtobufCMessageDescriptor *rd, int64_t timeout_ms,
                                     reply *r)
{
    char path[128], id[32];
    snprintf(path, sizeof path, "/scrabble.v1.Game/%s", method);
    snprintf(id, sizeof id, "%lld", (long long)account);
    rpc_metadata md[1] = {{"scrabble-account-id", id}};
    rpc_client_opts o = {.timeout_ms = timeout_ms, .md = md, .md_count = account ? 1 : 0};
    return rpc_client_unary_sync(game_ch, path, req, rd, &o, NULL, &r->msg, &r->st);
}

static grpc_status_code gcall(int64_t account, const char *method, const ProtobufCMessage *req,
                              const ProtobufCMessageDescriptor *rd, reply *r)
{
    return gcall_within(account, method, req, rd, 10000, r);
}

static grpc_status_code scall(const char *method, const ProtobufCMessage *req,
                              const ProtobufCMessageDescriptor *rd, reply *r)
{
    char path[128];
    snprintf(path, sizeof path, "/scrabble.v1.Store/%s", method);
    rpc_client_opts o = {.timeout_ms = 10000};
    rpc_channel *ch = strcmp(method, "LoadGame") == 0 ? store_game_ch : store_ch;
    return rpc_client_unary_sync(ch, path, req, rd, &o, NULL, &r->msg, &r->st);
}

static void done(reply *r)
{
    if (r->msg)
        protobuf_c_message_free_unpacked(r->msg, NULL);
    r->msg = NULL;
}

#define EXPECT_OK(rc_, r)                                                                          \
    do {                                                                                           \
        if ((rc_) != GRPC_STATUS_OK)                                                               \
            fail_msg("%s:%d: %s %s: %s", __FILE__, __LINE__, rpc_status_code_name((r)->st.code),   \
                     (r)->st.reason, (r)->st.message);                                             \
    } while (0)

#define EXPECT_FAIL(rc_, r, want_code, want_reason)                                                \
    do {                                                                                           \
        if ((rc_) != (want_code) || strcmp((r)->st.reason, (want_reason)) != 0)                    \
            fail_msg("%s:%d: got %s %s (%s), want %s %s", __FILE__, __LINE__,                      \
                     rpc_status_code_name((r)->st.code), (r)->st.reason, (r)->st.message,          \
                     rpc_status_code_name(want_code), (want_reason));                              \
    } while (0)

/* ------------------------------------------------------------------ */
/* Accounts, invitations, games                                        */

static int64_t register_account(char *handle_out)
{
    Scrabble__V1__RegisterRequest req = SCRABBLE__V1__REGISTER_REQUEST__INIT;
    char handle[40];
    reply r = {0};
    snprintf(handle, sizeof handle, "it%d_%d_%d", (int)getpid(), uniq++, rand() % 100000);
    req.handle = handle;
    req.password = "password123";
    EXPECT_OK(scall("Register", &req.base, &scrabble__v1__auth_reply__descriptor, &r), &r);
    int64_t id = ((Scrabble__V1__AuthReply *)r.msg)->account_id;
    if (handle_out)
        strcpy(handle_out, handle);
    done(&r);
    return id;
}

/* A mirror of one game, replayed locally from the seed. */
typedef struct game {
    int64_t id;
    int nseats;
    int64_t acc[GAME_MAX_SEATS];
    char handle[GAME_MAX_SEATS][40];
    game_state mirror;
    int64_t seq;
} game;

static void mirror_init(game *g)
{
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    reply r = {0};
    ref.game_id = g->id;
    EXPECT_OK(scall("LoadGame", &ref.base, &scrabble__v1__game_record__descriptor, &r), &r);
    Scrabble__V1__GameRecord *rec = (Scrabble__V1__GameRecord *)r.msg;
    assert_int_equal(rec->n_seats, g->nseats);
    assert_int_equal(game_rules_init(&g->mirror, lex, solver_dist_english(), rec->seed, g->nseats),
                     0);
    for (int s = 0; s < g->nseats; s++)
        g->mirror.seats[s].account_id = g->acc[s];
    /* Moves already made (crash-after): replay them too. */
    for (size_t i = 0; i < rec->n_moves; i++) {
        const Scrabble__V1__Move *pm = rec->moves[i];
        game_move m = {.seq = pm->seq, .seat = pm->seat, .kind = pm->kind, .score = pm->score};
        for (size_t k = 0; k < pm->n_placements; k++) {
            m.placed[k].row = pm->placements[k]->row;
            m.placed[k].col = pm->placements[k]->col;
            m.placed[k].letter = pm->placements[k]->letter[0];
            m.placed[k].is_blank = pm->placements[k]->blank;
        }
        m.nplaced = (int)pm->n_placements;
        snprintf(m.exchanged, sizeof m.exchanged, "%s", pm->exchanged_tiles);
        game_rules_error err;
        if (game_rules_replay(&g->mirror, &m, &err) != GAME_RULES_OK)
            fail_msg("mirror replay: %s", err.message);
    }
    g->seq = g->mirror.seq;
    done(&r);
}

/* Registers n accounts, invites, accepts, creates the game in game-svc. */
static void new_game(game *g, int n)
{
    memset(g, 0, sizeof *g);
    g->nseats = n;
    for (int s = 0; s < n; s++)
        g->acc[s] = register_account(g->handle[s]);
    Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
    char *handles[3];
    for (int s = 1; s < n; s++)
        handles[s - 1] = g->handle[s];
    ci.inviter_id = g->acc[0];
    ci.invitee_handles = handles;
    ci.n_invitee_handles = (size_t)n - 1;
    reply r = {0};
    EXPECT_OK(scall("CreateInvitation", &ci.base, &scrabble__v1__invitation__descriptor, &r), &r);
    int64_t inv = ((Scrabble__V1__Invitation *)r.msg)->invitation_id;
    done(&r);

    /* Before everyone accepted: no game yet. */
    Scrabble__V1__CreateGameRequest cg = SCRABBLE__V1__CREATE_GAME_REQUEST__INIT;
    cg.invitation_id = inv;
    grpc_status_code c =
        gcall(g->acc[0], "CreateGame", &cg.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "invitation_closed");
    done(&r);

    for (int s = 1; s < n; s++) {
        Scrabble__V1__StoreRespondInvitationRequest ri =
            SCRABBLE__V1__STORE_RESPOND_INVITATION_REQUEST__INIT;
        ri.account_id = g->acc[s];
        ri.invitation_id = inv;
        ri.accept = true;
        EXPECT_OK(scall("RespondInvitation", &ri.base, &scrabble__v1__invitation__descriptor, &r),
                  &r);
        done(&r);
    }
    c = gcall(g->acc[n - 1], "CreateGame", &cg.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_OK(c, &r);
    Scrabble__V1__GameState *st = (Scrabble__V1__GameState *)r.msg;
    g->id = st->game_id;
    assert_true(g->id > 0);
    assert_int_equal(st->seq, 0);
    assert_int_equal(st->n_seats, n);
    assert_int_equal(st->my_seat, n - 1);
    assert_int_equal(strlen(st->my_rack), 7);
    assert_int_equal(st->bag_count, 100 - 7 * n);
    assert_int_equal(st->n_board, 15);
    done(&r);
    /* Idempotent: a second call returns the same game. */
    c = gcall(g->acc[0], "CreateGame", &cg.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_int_equal(((Scrabble__V1__GameState *)r.msg)->game_id, g->id);
    done(&r);
    mirror_init(g);
}

static Scrabble__V1__GameState *get_state(game *g, int seat, reply *r)
{
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    ref.game_id = g->id;
    EXPECT_OK(gcall(g->acc[seat], "GetState", &ref.base, &scrabble__v1__game_state__descriptor, r),
              r);
    return (Scrabble__V1__GameState *)r->msg;
}

/* The server's view must equal the mirror's for that seat. */
static void check_state(game *g, int seat)
{
    reply r = {0};
    Scrabble__V1__GameState *st = get_state(g, seat, &r);
    char rows[15][16], rack[16];
    game_rules_board_rows(&g->mirror, rows);
    for (int i = 0; i < 15; i++)
        assert_string_equal(st->board[i], rows[i]);
    solver_rack_format(&g->mirror.seats[seat].rack, rack, sizeof rack);
    assert_string_equal(st->my_rack, rack);
    assert_int_equal(st->bag_count, g->mirror.bag.n);
    assert_int_equal(st->seq, g->mirror.seq);
    assert_int_equal(st->to_move, g->mirror.to_move);
    assert_int_equal(st->status, g->mirror.status);
    assert_int_equal(st->scoreless_turns, g->mirror.scoreless);
    for (int s = 0; s < g->nseats; s++) {
        assert_int_equal(st->seats[s]->score, g->mirror.seats[s].score);
        assert_int_equal(st->seats[s]->rack_count, g->mirror.seats[s].rack.n);
        assert_int_equal(st->seats[s]->account_id, g->acc[s]);
    }
    done(&r);
}

/* Applies an acknowledged move to the mirror and checks the reply. */
static void mirror_apply(game *g, const Scrabble__V1__TurnReply *tr)
{
    const Scrabble__V1__Move *pm = tr->move;
    game_move m = {.seq = pm->seq, .seat = pm->seat, .kind = pm->kind, .score = pm->score};
    for (size_t k = 0; k < pm->n_placements; k++) {
        m.placed[k].row = pm->placements[k]->row;
        m.placed[k].col = pm->placements[k]->col;
        m.placed[k].letter = pm->placements[k]->letter[0];
        m.placed[k].is_blank = pm->placements[k]->blank;
    }
    m.nplaced = (int)pm->n_placements;
    snprintf(m.exchanged, sizeof m.exchanged, "%s", pm->exchanged_tiles);
    game_rules_error err;
    if (game_rules_replay(&g->mirror, &m, &err) != GAME_RULES_OK)
        fail_msg("mirror replay seq %lld: %s", (long long)pm->seq, err.message);
    char rack[16];
    solver_rack_format(&g->mirror.seats[pm->seat].rack, rack, sizeof rack);
    assert_string_equal(tr->state->my_rack, rack);
    assert_int_equal(tr->state->bag_count, g->mirror.bag.n);
    assert_int_equal(tr->state->seq, g->mirror.seq);
    assert_int_equal(tr->state->status, g->mirror.status);
    for (int s = 0; s < g->nseats; s++)
        assert_int_equal(tr->state->seats[s]->score, g->mirror.seats[s].score);
    g->seq = g->mirror.seq;
}

/* ------------------------------------------------------------------ */
/* Turns                                                               */

static void fill_placements(Scrabble__V1__Placement *ps, Scrabble__V1__Placement **pp,
                            char letters[][2], const solver_placement *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        scrabble__v1__placement__init(&ps[i]);
        ps[i].row = p[i].row;
        ps[i].col = p[i].col;
        letters[i][0] = p[i].letter;
        letters[i][1] = 0;
        ps[i].letter = letters[i];
        ps[i].blank = p[i].is_blank;
        pp[i] = &ps[i];
    }
}

static grpc_status_code submit(game *g, int seat, int64_t seq, const solver_placement *p, size_t n,
                               reply *r)
{
    Scrabble__V1__SubmitPlayRequest req = SCRABBLE__V1__SUBMIT_PLAY_REQUEST__INIT;
    Scrabble__V1__Placement ps[16], *pp[16];
    char letters[16][2];
    fill_placements(ps, pp, letters, p, n);
    req.game_id = g->id;
    req.expected_seq = seq;
    req.placements = pp;
    req.n_placements = n;
    return gcall(g->acc[seat], "SubmitPlay", &req.base, &scrabble__v1__turn_reply__descriptor, r);
}

static grpc_status_code turn_simple(game *g, int seat, const char *method, int64_t seq, reply *r)
{
    Scrabble__V1__TurnRequest req = SCRABBLE__V1__TURN_REQUEST__INIT;
    req.game_id = g->id;
    req.expected_seq = seq;
    return gcall(g->acc[seat], method, &req.base, &scrabble__v1__turn_reply__descriptor, r);
}

static grpc_status_code exchange(game *g, int seat, int64_t seq, const char *tiles, reply *r)
{
    Scrabble__V1__ExchangeRequest req = SCRABBLE__V1__EXCHANGE_REQUEST__INIT;
    req.game_id = g->id;
    req.expected_seq = seq;
    req.tiles = (char *)tiles;
    return gcall(g->acc[seat], "Exchange", &req.base, &scrabble__v1__turn_reply__descriptor, r);
}

static grpc_status_code evaluate(game *g, int seat, const solver_placement *p, size_t n, reply *r)
{
    Scrabble__V1__EvaluateRequest req = SCRABBLE__V1__EVALUATE_REQUEST__INIT;
    Scrabble__V1__Placement ps[16], *pp[16];
    char letters[16][2];
    fill_placements(ps, pp, letters, p, n);
    req.game_id = g->id;
    req.placements = pp;
    req.n_placements = n;
    return gcall(g->acc[seat], "Evaluate", &req.base, &scrabble__v1__evaluate_reply__descriptor, r);
}

/* The best move for the seat to move, computed from its own GetState (board
 * and my_rack only, as a client would). Returns the number of tiles, 0 when
 * there is no play. */
static size_t best_play(game *g, solver_placement *p, int *score)
{
    reply r = {0};
    int seat = g->mirror.to_move;
    Scrabble__V1__GameState *st = get_state(g, seat, &r);
    solver_board b;
    solver_rack rack;
    solver_board_init(&b, solver_dist_english());
    for (int row = 0; row < 15; row++)
        for (int col = 0; col < 15; col++) {
            char c = st->board[row][col];
            if (c >= 'A' && c <= 'Z')
                b.sq[row * 15 + col] = (uint8_t)(c - 'A' + 1);
            else if (c >= 'a' && c <= 'z')
                b.sq[row * 15 + col] = (uint8_t)((c - 'a' + 1) | SOLVER_BLANK);
            if (b.sq[row * 15 + col])
                b.ntiles++;
        }
    solver_board_recompute(&b, lex);
    assert_int_equal(solver_rack_parse(&rack, st->my_rack), 0);
    solver_move mv[4];
    solver_gen_opts o = {.top_n = 1, .bag_count = st->bag_count};
    size_t n = solver_gen(&b, lex, solver_dist_english(), &rack, &o, mv, 4);
    done(&r);
    if (n == 0 || mv[0].kind != SOLVER_MOVE_PLAY)
        return 0;
    size_t k = 0;
    for (int i = 0; i < mv[0].len; i++) {
        uint8_t x = mv[0].tiles[i];
        if (x & SOLVER_THROUGH)
            continue;
        p[k].row = mv[0].row + (mv[0].dir == SOLVER_DOWN ? i : 0);
        p[k].col = mv[0].col + (mv[0].dir == SOLVER_ACROSS ? i : 0);
        p[k].letter = (char)('A' + SOLVER_LETTER(x) - 1);
        p[k].is_blank = (x & SOLVER_BLANK) != 0;
        k++;
    }
    *score = mv[0].score;
    return k;
}

/* One turn by whoever is to move: the best play (checked first with
 * Evaluate), else an exchange of two tiles while the bag allows, else a
 * pass. Returns the move kind. */
static int play_one(game *g, bool allow_exchange)
{
    solver_placement p[8];
    int score = 0, seat = g->mirror.to_move;
    size_t n = best_play(g, p, &score);
    reply r = {0};
    grpc_status_code c;
    int kind;
    if (n > 0) {
        c = evaluate(g, seat, p, n, &r);
        EXPECT_OK(c, &r);
        Scrabble__V1__EvaluateReply *ev = (Scrabble__V1__EvaluateReply *)r.msg;
        if (!ev->legal)
            fail_msg("evaluate says %s: %s", ev->reason, ev->message);
        assert_int_equal(ev->score, score);
        done(&r);
        c = submit(g, seat, g->seq, p, n, &r);
        kind = GAME_MOVE_PLAY;
    } else if (allow_exchange && g->mirror.bag.n >= 7) {
        char rack[16];
        solver_rack_format(&g->mirror.seats[seat].rack, rack, sizeof rack);
        rack[2] = 0;
        c = exchange(g, seat, g->seq, rack, &r);
        kind = GAME_MOVE_EXCHANGE;
    } else {
        if (g->mirror.bag.n < 7) {
            char rack[16];
            solver_rack_format(&g->mirror.seats[seat].rack, rack, sizeof rack);
            rack[1] = 0;
            c = exchange(g, seat, g->seq, rack, &r);
            EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "bag_too_small");
            done(&r);
        }
        c = turn_simple(g, seat, "Pass", g->seq, &r);
        kind = GAME_MOVE_PASS;
    }
    EXPECT_OK(c, &r);
    Scrabble__V1__TurnReply *tr = (Scrabble__V1__TurnReply *)r.msg;
    assert_int_equal(tr->move->kind, kind);
    assert_int_equal(tr->move->seat, seat);
    if (kind == GAME_MOVE_PLAY)
        assert_int_equal(tr->move->score, score);
    mirror_apply(g, tr);
    done(&r);
    return kind;
}

static void play_to_end(game *g, bool allow_exchange)
{
    int turns = 0;
    bool small_bag_checked = false;
    reply r = {0};
    while (g->mirror.status == GAME_STATUS_ACTIVE && turns++ < 400) {
        if (!small_bag_checked && g->mirror.bag.n < 7) {
            /* Exchange with fewer than 7 tiles in the bag. */
            char rack[16];
            solver_rack_format(&g->mirror.seats[g->mirror.to_move].rack, rack, sizeof rack);
            rack[1] = 0;
            grpc_status_code c = exchange(g, g->mirror.to_move, g->seq, rack, &r);
            EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "bag_too_small");
            done(&r);
            small_bag_checked = true;
        }
        play_one(g, allow_exchange);
    }
    assert_int_equal(g->mirror.status, GAME_STATUS_FINISHED);
    if (g->mirror.end_reason == GAME_END_OUT)
        assert_true(small_bag_checked);
    for (int s = 0; s < g->nseats; s++)
        check_state(g, s);
    /* A finished game: game_over. */
    grpc_status_code c = turn_simple(g, 0, "Pass", g->seq, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "game_over");
    done(&r);
    /* The store agrees. */
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    ref.game_id = g->id;
    EXPECT_OK(scall("LoadGame", &ref.base, &scrabble__v1__game_record__descriptor, &r), &r);
    Scrabble__V1__GameRecord *rec = (Scrabble__V1__GameRecord *)r.msg;
    assert_int_equal(rec->status, GAME_STATUS_FINISHED);
    assert_int_equal(rec->seq, g->seq);
    assert_int_equal(rec->n_moves, g->seq);
    assert_int_equal(rec->end_reason, g->mirror.end_reason);
    assert_int_equal(rec->n_winners, g->mirror.nwinners);
    done(&r);
}

/* ------------------------------------------------------------------ */
/* Events: a Redis subscriber thread                                    */

typedef struct subscriber {
    pthread_t th;
    redisContext *rc;
    int64_t acc[GAME_MAX_SEATS];
    int n;
    pthread_mutex_t mu;
    int counts[GAME_MAX_SEATS][8]; /* [seat][event type] */
    volatile int stop;
} subscriber;

static void *sub_main(void *arg)
{
    subscriber *s = arg;
    while (!s->stop) {
        redisReply *r = NULL;
        if (redisGetReply(s->rc, (void **)&r) != REDIS_OK) {
            if (s->rc->err == REDIS_ERR_IO) { /* timeout: poll stop */
                s->rc->err = 0;
                memset(s->rc->errstr, 0, sizeof s->rc->errstr);
                continue;
            }
            break;
        }
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
            strcmp(r->element[0]->str, "message") == 0) {
            int64_t acc = atoll(r->element[1]->str + 3);
            Scrabble__V1__Event *ev = scrabble__v1__event__unpack(NULL, r->element[2]->len,
                                                                  (uint8_t *)r->element[2]->str);
            pthread_mutex_lock(&s->mu);
            for (int i = 0; ev && i < s->n; i++)
                if (s->acc[i] == acc && ev->type < 8)
                    s->counts[i][ev->type]++;
            pthread_mutex_unlock(&s->mu);
            if (ev)
                scrabble__v1__event__free_unpacked(ev, NULL);
        }
        if (r)
            freeReplyObject(r);
    }
    return NULL;
}

static void sub_start(subscriber *s, const int64_t *acc, int n)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->n = n;
    memcpy(s->acc, acc, (size_t)n * sizeof *acc);
    s->rc = it_redis_subscriber();
    for (int i = 0; i < n; i++) {
        redisReply *r = redisCommand(s->rc, "SUBSCRIBE ev:%lld", (long long)acc[i]);
        assert_non_null(r);
        freeReplyObject(r);
    }
    struct timeval tv = {0, 100000};
    redisSetTimeout(s->rc, tv);
    pthread_create(&s->th, NULL, sub_main, s);
}

static int sub_count(subscriber *s, int seat, int type)
{
    pthread_mutex_lock(&s->mu);
    int n = s->counts[seat][type];
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void sub_wait(subscriber *s, int seat, int type, int at_least)
{
    double t0 = now_s();
    while (sub_count(s, seat, type) < at_least && now_s() - t0 < 5)
        usleep(10000);
    if (sub_count(s, seat, type) < at_least)
        fail_msg("seat %d got %d events of type %d, want >= %d", seat, sub_count(s, seat, type),
                 type, at_least);
}

static void sub_stop(subscriber *s)
{
    s->stop = 1;
    pthread_join(s->th, NULL);
    redisFree(s->rc);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

static void test_full_game_2(void **state)
{
    game g;
    new_game(&g, 2);
    check_state(&g, 0);
    check_state(&g, 1);
    play_to_end(&g, false);
}

static void test_full_game_3(void **state)
{
    game g;
    new_game(&g, 3);
    play_to_end(&g, true);
}

static void test_full_game_4(void **state)
{
    game g;
    new_game(&g, 4);
    play_to_end(&g, true);
}

static void test_resign(void **state)
{
    game g;
    new_game(&g, 3);
    for (int i = 0; i < 4; i++)
        play_one(&g, false);
    reply r = {0};
    /* Out of turn is allowed for a resignation. */
    int seat = (g.mirror.to_move + 1) % 3;
    grpc_status_code c = turn_simple(&g, seat, "Resign", g.seq, &r);
    EXPECT_OK(c, &r);
    Scrabble__V1__TurnReply *tr = (Scrabble__V1__TurnReply *)r.msg;
    assert_int_equal(tr->state->status, GAME_STATUS_FINISHED);
    assert_int_equal(tr->state->end_reason, GAME_END_RESIGN);
    for (size_t i = 0; i < tr->state->n_winners; i++)
        assert_int_not_equal(tr->state->winners[i], seat);
    mirror_apply(&g, tr);
    done(&r);
    c = turn_simple(&g, g.mirror.to_move, "Pass", g.seq, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "game_over");
    done(&r);
}

/* A pair of rack tiles that is not a word, for the phony test. */
static bool phony_pair(const char *rack, char *a, char *b)
{
    for (int i = 0; rack[i]; i++)
        for (int j = 0; rack[j]; j++) {
            if (i == j || rack[i] == '?' || rack[j] == '?')
                continue;
            char w[3] = {(char)(rack[i] + 32), (char)(rack[j] + 32), 0};
            if (!solver_lexicon_has(lex, w)) {
                *a = rack[i];
                *b = rack[j];
                return true;
            }
        }
    return false;
}

static void expect_illegal(game *g, int seat, const solver_placement *p, size_t n,
                           const char *reason)
{
    reply r = {0};
    char want[64];
    snprintf(want, sizeof want, "illegal_play:%s", reason);
    grpc_status_code c = submit(g, seat, g->seq, p, n, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_INVALID_ARGUMENT, want);
    done(&r);
    /* Evaluate says the same without an error status. */
    c = evaluate(g, seat, p, n, &r);
    EXPECT_OK(c, &r);
    Scrabble__V1__EvaluateReply *ev = (Scrabble__V1__EvaluateReply *)r.msg;
    assert_false(ev->legal);
    assert_string_equal(ev->reason, reason);
    assert_true(strlen(ev->message) > 0);
    done(&r);
}

static void test_bad_input(void **state)
{
    game g;
    reply r = {0};
    grpc_status_code c;
    new_game(&g, 2);
    char rack[16];
    solver_rack_format(&g.mirror.seats[0].rack, rack, sizeof rack);
    char l0 = rack[0] == '?' ? 'E' : rack[0];

    /* Authentication and seats. */
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    ref.game_id = g.id;
    c = gcall(0, "GetState", &ref.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_UNAUTHENTICATED, "unauthenticated");
    done(&r);
    int64_t stranger = register_account(NULL);
    c = gcall(stranger, "GetState", &ref.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_PERMISSION_DENIED, "not_a_player");
    done(&r);
    game other = g;
    other.acc[0] = stranger;
    c = turn_simple(&other, 0, "Pass", 0, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_PERMISSION_DENIED, "not_a_player");
    done(&r);
    ref.game_id = 999999999;
    c = gcall(g.acc[0], "GetState", &ref.base, &scrabble__v1__game_state__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_NOT_FOUND, "not_found");
    done(&r);

    /* First-move geometry. */
    solver_placement off[1] = {{7, 15, l0, false}};
    expect_illegal(&g, 0, off, 1, "off_board");
    solver_placement neg[1] = {{-1, 7, l0, false}};
    expect_illegal(&g, 0, neg, 1, "off_board");
    solver_placement bad[1] = {{7, 7, '3', false}};
    expect_illegal(&g, 0, bad, 1, "bad_letter");
    char missing = 'A';
    while (strchr(rack, missing))
        missing++;
    solver_placement notrack[2] = {{7, 7, missing, false}, {7, 8, l0, false}};
    expect_illegal(&g, 0, notrack, 2, "tile_not_on_rack");
    solver_placement corner[2] = {{0, 0, rack[0], false}, {0, 1, rack[1], false}};
    if (rack[0] != '?' && rack[1] != '?')
        expect_illegal(&g, 0, corner, 2, "misses_centre");
    char a = 0, b = 0;
    if (!phony_pair(rack, &a, &b))
        fail_msg("every pair of %s is a word", rack);
    solver_placement ph[2] = {{7, 7, a, false}, {7, 8, b, false}};
    expect_illegal(&g, 0, ph, 2, "invalid_words");
    /* Out of turn, stale seq. */
    solver_placement any[1] = {{7, 7, l0, false}};
    c = submit(&g, 1, 0, any, 1, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "not_your_turn");
    done(&r);
    c = turn_simple(&g, 1, "Pass", 0, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "not_your_turn");
    done(&r);
    c = turn_simple(&g, 0, "Pass", 5, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq");
    done(&r);
    /* Exchange of a tile not on the rack. */
    char ex[2] = {missing, 0};
    c = exchange(&g, 0, 0, ex, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_INVALID_ARGUMENT, "illegal_play:tile_not_on_rack");
    done(&r);

    /* A real first move, then later-move geometry. */
    while (g.mirror.board.ntiles == 0)
        play_one(&g, false);
    int seat = g.mirror.to_move;
    solver_rack_format(&g.mirror.seats[seat].rack, rack, sizeof rack);
    char t0 = rack[0] == '?' ? 'E' : rack[0], t1 = rack[1] == '?' ? 'E' : rack[1];
    int occ_r = -1, occ_c = -1;
    for (int i = 0; i < 225 && occ_r < 0; i++)
        if (g.mirror.board.sq[i]) {
            occ_r = i / 15;
            occ_c = i % 15;
        }
    solver_placement occ[1] = {{occ_r, occ_c, t0, rack[0] == '?'}};
    expect_illegal(&g, seat, occ, 1, "occupied");
    solver_placement far[2] = {{0, 0, t0, rack[0] == '?'}, {0, 1, t1, rack[1] == '?'}};
    expect_illegal(&g, seat, far, 2, "not_connected");
    solver_placement diag[2] = {{0, 0, t0, rack[0] == '?'}, {1, 1, t1, rack[1] == '?'}};
    expect_illegal(&g, seat, diag, 2, "not_in_line");
    solver_placement gap[2] = {{0, 0, t0, rack[0] == '?'}, {0, 2, t1, rack[1] == '?'}};
    expect_illegal(&g, seat, gap, 2, "gap");
    /* Nothing of that changed the game. */
    for (int s = 0; s < 2; s++)
        check_state(&g, s);
}

static void test_idempotent_retry(void **state)
{
    game g;
    reply r = {0}, r2 = {0};
    new_game(&g, 2);
    solver_placement p[8];
    int score;
    size_t n = best_play(&g, p, &score);
    assert_true(n > 0);
    int seat = g.mirror.to_move;
    int64_t seq = g.seq;
    EXPECT_OK(submit(&g, seat, seq, p, n, &r), &r);
    Scrabble__V1__TurnReply *tr = (Scrabble__V1__TurnReply *)r.msg;
    mirror_apply(&g, tr);
    /* The same request again (a lost reply): the original result. */
    EXPECT_OK(submit(&g, seat, seq, p, n, &r2), &r2);
    Scrabble__V1__TurnReply *tr2 = (Scrabble__V1__TurnReply *)r2.msg;
    assert_int_equal(tr2->move->seq, tr->move->seq);
    assert_int_equal(tr2->move->score, tr->move->score);
    assert_string_equal(tr2->move->notation, tr->move->notation);
    assert_int_equal(tr2->state->seq, seq + 1);
    done(&r2);
    /* A different move at the old seq: stale. */
    grpc_status_code c = turn_simple(&g, seat, "Pass", seq, &r2);
    EXPECT_FAIL(c, &r2, GRPC_STATUS_FAILED_PRECONDITION, "stale_seq");
    done(&r2);
    done(&r);
    check_state(&g, 0);
    check_state(&g, 1);
    /* Pass retried is idempotent as well. */
    seat = g.mirror.to_move;
    seq = g.seq;
    EXPECT_OK(turn_simple(&g, seat, "Pass", seq, &r), &r);
    mirror_apply(&g, (Scrabble__V1__TurnReply *)r.msg);
    done(&r);
    EXPECT_OK(turn_simple(&g, seat, "Pass", seq, &r), &r);
    assert_int_equal(((Scrabble__V1__TurnReply *)r.msg)->move->seq, seq + 1);
    done(&r);
    check_state(&g, seat);
}

typedef struct racer {
    game *g;
    int seat;
    int64_t seq;
    int kind; /* GAME_MOVE_PLAY or PASS */
    solver_placement p[8];
    size_t n;
    pthread_barrier_t *bar;
    reply r;
    grpc_status_code code;
} racer;

static void *race_main(void *arg)
{
    racer *x = arg;
    pthread_barrier_wait(x->bar);
    if (x->kind == GAME_MOVE_PLAY)
        x->code = submit(x->g, x->seat, x->seq, x->p, x->n, &x->r);
    else
        x->code = turn_simple(x->g, x->seat, "Pass", x->seq, &x->r);
    return NULL;
}

/* Two different submits for the same turn: exactly one wins, the other gets
 * stale_seq; two identical ones: both see the one committed move. */
static void test_concurrent_submits(void **state)
{
    game g;
    new_game(&g, 2);
    for (int round = 0; round < 6; round++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, 2);
        racer x[2];
        memset(x, 0, sizeof x);
        bool identical = round % 2 == 1;
        for (int i = 0; i < 2; i++) {
            x[i].g = &g;
            x[i].seat = g.mirror.to_move;
            x[i].seq = g.seq;
            x[i].bar = &bar;
            int score;
            x[i].n = (i == 0 || identical) ? best_play(&g, x[i].p, &score) : 0;
            x[i].kind = x[i].n > 0 ? GAME_MOVE_PLAY : GAME_MOVE_PASS;
        }
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, race_main, &x[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        int ok = 0, stale = 0, winner = -1;
        for (int i = 0; i < 2; i++) {
            if (x[i].code == GRPC_STATUS_OK) {
                ok++;
                winner = i;
            } else if (x[i].code == GRPC_STATUS_FAILED_PRECONDITION &&
                       strcmp(x[i].r.st.reason, "stale_seq") == 0) {
                stale++;
            } else {
                fail_msg("racer %d: %s %s", i, rpc_status_code_name(x[i].code), x[i].r.st.reason);
            }
        }
        bool same = x[0].kind == x[1].kind && (x[0].kind == GAME_MOVE_PASS || identical);
        if (same) {
            assert_int_equal(ok, 2);
            assert_int_equal(((Scrabble__V1__TurnReply *)x[0].r.msg)->move->seq,
                             ((Scrabble__V1__TurnReply *)x[1].r.msg)->move->seq);
        } else {
            assert_int_equal(ok, 1);
            assert_int_equal(stale, 1);
        }
        mirror_apply(&g, (Scrabble__V1__TurnReply *)x[winner].r.msg);
        for (int i = 0; i < 2; i++)
            done(&x[i].r);
        pthread_barrier_destroy(&bar);
        check_state(&g, 0);
        check_state(&g, 1);
        if (g.mirror.status != GAME_STATUS_ACTIVE)
            break;
    }
}

static void test_drafts_events_social(void **state)
{
    game g;
    reply r = {0};
    grpc_status_code c;
    /* Accounts first, so the subscriber listens before the game starts. */
    memset(&g, 0, sizeof g);
    new_game(&g, 2); /* GAME_STARTED is checked by test_game_started_events */
    subscriber sub;
    sub_start(&sub, g.acc, 2);
    usleep(100000);

    /* Drafts. */
    Scrabble__V1__SaveDraftRequest sd = SCRABBLE__V1__SAVE_DRAFT_REQUEST__INIT;
    Scrabble__V1__Placement ps[1], *pp[1];
    char letters[1][2];
    solver_placement dp[1] = {{7, 7, 'Q', false}};
    fill_placements(ps, pp, letters, dp, 1);
    sd.game_id = g.id;
    sd.placements = pp;
    sd.n_placements = 1;
    sd.rack_order = "QWERTYU";
    int seat = g.mirror.to_move;
    c = gcall(g.acc[seat], "SaveDraft", &sd.base, &scrabble__v1__draft__descriptor, &r);
    EXPECT_OK(c, &r);
    done(&r);
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    ref.game_id = g.id;
    c = gcall(g.acc[seat], "GetDraft", &ref.base, &scrabble__v1__draft__descriptor, &r);
    EXPECT_OK(c, &r);
    Scrabble__V1__Draft *d = (Scrabble__V1__Draft *)r.msg;
    assert_int_equal(d->n_placements, 1);
    assert_string_equal(d->rack_order, "QWERTYU");
    assert_string_equal(d->placements[0]->letter, "Q");
    done(&r);
    /* The other seat has no draft. */
    c = gcall(g.acc[1 - seat], "GetDraft", &ref.base, &scrabble__v1__draft__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_int_equal(((Scrabble__V1__Draft *)r.msg)->n_placements, 0);
    done(&r);

    /* Nudge: the waiting seat nudges the mover; once only; never oneself. */
    Scrabble__V1__GameRef nref = SCRABBLE__V1__GAME_REF__INIT;
    nref.game_id = g.id;
    c = gcall(g.acc[seat], "Nudge", &nref.base, &scrabble__v1__nudge_reply__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_FAILED_PRECONDITION, "your_turn");
    done(&r);
    c = gcall(g.acc[1 - seat], "Nudge", &nref.base, &scrabble__v1__nudge_reply__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_int_equal(((Scrabble__V1__NudgeReply *)r.msg)->account_id, g.acc[seat]);
    done(&r);
    c = gcall(g.acc[1 - seat], "Nudge", &nref.base, &scrabble__v1__nudge_reply__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_RESOURCE_EXHAUSTED, "nudge_too_soon");
    done(&r);
    sub_wait(&sub, seat, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_NUDGE, 1);

    /* A committed turn deletes the mover's draft and raises events. */
    play_one(&g, false);
    sub_wait(&sub, 1 - seat, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED, 1);
    sub_wait(&sub, 1 - seat, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN, 1);
    assert_int_equal(sub_count(&sub, seat, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED), 0);
    double t0 = now_s();
    for (;;) {
        c = gcall(g.acc[seat], "GetDraft", &ref.base, &scrabble__v1__draft__descriptor, &r);
        EXPECT_OK(c, &r);
        size_t left = ((Scrabble__V1__Draft *)r.msg)->n_placements;
        done(&r);
        if (left == 0)
            break;
        if (now_s() - t0 > 3)
            fail_msg("draft not deleted after the turn");
        usleep(20000);
    }

    /* Chat. */
    Scrabble__V1__SendChatRequest sc = SCRABBLE__V1__SEND_CHAT_REQUEST__INIT;
    sc.game_id = g.id;
    sc.text = "good luck, ünïcode";
    c = gcall(g.acc[0], "SendChat", &sc.base, &scrabble__v1__chat_message__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_string_equal(((Scrabble__V1__ChatMessage *)r.msg)->text, sc.text);
    done(&r);
    sub_wait(&sub, 1, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_CHAT, 1);
    sc.text = "   ";
    c = gcall(g.acc[0], "SendChat", &sc.base, &scrabble__v1__chat_message__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_INVALID_ARGUMENT, "empty");
    done(&r);
    char longtext[600];
    memset(longtext, 'x', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = 0;
    sc.text = longtext;
    c = gcall(g.acc[0], "SendChat", &sc.base, &scrabble__v1__chat_message__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_INVALID_ARGUMENT, "too_long");
    done(&r);
    sc.text = "\xff\xfe";
    c = gcall(g.acc[0], "SendChat", &sc.base, &scrabble__v1__chat_message__descriptor, &r);
    EXPECT_FAIL(c, &r, GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8");
    done(&r);
    Scrabble__V1__ListChatRequest lc = SCRABBLE__V1__LIST_CHAT_REQUEST__INIT;
    lc.game_id = g.id;
    c = gcall(g.acc[1], "ListChat", &lc.base, &scrabble__v1__list_chat_reply__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_int_equal(((Scrabble__V1__ListChatReply *)r.msg)->n_messages, 1);
    done(&r);

    /* CheckWord. */
    Scrabble__V1__CheckWordRequest cw = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
    cw.word = "retains";
    c = gcall(g.acc[0], "CheckWord", &cw.base, &scrabble__v1__check_word_reply__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_true(((Scrabble__V1__CheckWordReply *)r.msg)->valid);
    assert_string_equal(((Scrabble__V1__CheckWordReply *)r.msg)->word, "RETAINS");
    done(&r);
    cw.word = "xqzzv";
    c = gcall(g.acc[0], "CheckWord", &cw.base, &scrabble__v1__check_word_reply__descriptor, &r);
    EXPECT_OK(c, &r);
    assert_false(((Scrabble__V1__CheckWordReply *)r.msg)->valid);
    done(&r);

    /* History, with exchanged tiles only in the mover's own view. */
    while (g.mirror.status == GAME_STATUS_ACTIVE && g.mirror.bag.n >= 7 && g.mirror.seq < 3) {
        play_one(&g, false);
    }
    if (g.mirror.bag.n >= 7) {
        int s = g.mirror.to_move;
        char rack[16];
        solver_rack_format(&g.mirror.seats[s].rack, rack, sizeof rack);
        rack[3] = 0;
        EXPECT_OK(exchange(&g, s, g.seq, rack, &r), &r);
        mirror_apply(&g, (Scrabble__V1__TurnReply *)r.msg);
        done(&r);
        Scrabble__V1__GetHistoryRequest gh = SCRABBLE__V1__GET_HISTORY_REQUEST__INIT;
        gh.game_id = g.id;
        EXPECT_OK(gcall(g.acc[s], "GetHistory", &gh.base,
                        &scrabble__v1__get_history_reply__descriptor, &r),
                  &r);
        Scrabble__V1__GetHistoryReply *h = (Scrabble__V1__GetHistoryReply *)r.msg;
        assert_int_equal(h->n_moves, g.seq);
        assert_int_equal(h->seq, g.seq);
        assert_string_equal(h->moves[h->n_moves - 1]->exchanged_tiles, rack);
        assert_int_equal(h->moves[h->n_moves - 1]->exchanged_count, 3);
        done(&r);
        EXPECT_OK(gcall(g.acc[1 - s], "GetHistory", &gh.base,
                        &scrabble__v1__get_history_reply__descriptor, &r),
                  &r);
        h = (Scrabble__V1__GetHistoryReply *)r.msg;
        assert_string_equal(h->moves[h->n_moves - 1]->exchanged_tiles, "");
        assert_int_equal(h->moves[h->n_moves - 1]->exchanged_count, 3);
        done(&r);
        gh.since_seq = g.seq - 1;
        EXPECT_OK(gcall(g.acc[s], "GetHistory", &gh.base,
                        &scrabble__v1__get_history_reply__descriptor, &r),
                  &r);
        assert_int_equal(((Scrabble__V1__GetHistoryReply *)r.msg)->n_moves, 1);
        done(&r);
    }
    /* To the end: everyone gets GAME_OVER. */
    play_to_end(&g, false);
    sub_wait(&sub, 0, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER, 1);
    sub_wait(&sub, 1, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER, 1);
    sub_stop(&sub);
}

/* GAME_STARTED and the first YOUR_TURN reach subscribers of a new game. */
static void test_game_started_events(void **state)
{
    game g;
    memset(&g, 0, sizeof g);
    g.nseats = 2;
    /* new_game registers its own accounts: listen to every account. */
    redisContext *rc = it_redis_subscriber();
    redisReply *rr = redisCommand(rc, "PSUBSCRIBE ev:*");
    freeReplyObject(rr);
    struct timeval tv = {2, 0};
    redisSetTimeout(rc, tv);
    new_game(&g, 2);
    int started = 0, yourturn = 0;
    double t0 = now_s();
    while ((started < 2 || yourturn < 1) && now_s() - t0 < 5) {
        redisReply *m = NULL;
        if (redisGetReply(rc, (void **)&m) != REDIS_OK)
            break;
        if (m->type == REDIS_REPLY_ARRAY && m->elements == 4) {
            Scrabble__V1__Event *ev = scrabble__v1__event__unpack(NULL, m->element[3]->len,
                                                                  (uint8_t *)m->element[3]->str);
            if (ev && ev->game_id == g.id) {
                if (ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED) {
                    started++;
                    assert_non_null(ev->invitation);
                    assert_int_equal(ev->invitation->game_id, g.id);
                } else if (ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN) {
                    yourturn++;
                    assert_int_equal(atoll(m->element[2]->str + 3), g.acc[0]);
                }
            }
            if (ev)
                scrabble__v1__event__free_unpacked(ev, NULL);
        }
        freeReplyObject(m);
    }
    redisFree(rc);
    assert_int_equal(started, 2);
    assert_int_equal(yourturn, 1);
}

/* ------------------------------------------------------------------ */
/* Crash test halves and Redis-down                                     */

static const char *state_file;

/* Plays a 3-seat game, recording after every acknowledged move the game
 * and the acknowledged seq (atomically: write + rename), until game-svc is
 * killed under it (the shell kills it -9 while turns are in flight; this
 * process then fails, which the shell expects). */
static void save_acked(const game *g)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", state_file);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f, "%lld %lld %lld %lld %lld\n", (long long)g->id, (long long)g->seq,
            (long long)g->acc[0], (long long)g->acc[1], (long long)g->acc[2]);
    fflush(f);
    fsync(fileno(f));
    fclose(f);
    assert_int_equal(rename(tmp, state_file), 0);
}

static void test_crash_before(void **state)
{
    game g;
    new_game(&g, 3);
    save_acked(&g);
    while (g.mirror.status == GAME_STATUS_ACTIVE) {
        play_one(&g, true);
        save_acked(&g);
        usleep(30000);
    }
}

static void test_crash_after(void **state)
{
    game g;
    long long id, seq, a0, a1, a2;
    FILE *f = fopen(state_file, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lld %lld %lld %lld %lld", &id, &seq, &a0, &a1, &a2), 5);
    fclose(f);
    memset(&g, 0, sizeof g);
    g.id = id;
    g.nseats = 3;
    g.acc[0] = a0;
    g.acc[1] = a1;
    g.acc[2] = a2;
    mirror_init(&g); /* replays the stored moves locally from the seed */
    /* No acknowledged move is lost; the turn in flight at the kill may or
     * may not have been committed (its client never got an answer). */
    printf("acknowledged seq %lld, stored seq %lld\n", seq, (long long)g.seq);
    assert_true(g.seq == seq || g.seq == seq + 1);
    /* The restarted game-svc rebuilt exactly that: board, racks, bag count,
     * scores, seq, turn. */
    for (int s = 0; s < 3; s++)
        check_state(&g, s);
    /* And the bag itself: every later draw matches the local replay. */
    play_to_end(&g, true);
}

/* store-svc down: the warm game still answers reads and Evaluate from
 * memory; a turn fails UNAVAILABLE and changes nothing; once the store is
 * back (store-back) the game reloads and continues. */
static void read_state_file(game *g)
{
    long long id, seq, a0, a1, a2;
    FILE *f = fopen(state_file, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lld %lld %lld %lld %lld", &id, &seq, &a0, &a1, &a2), 5);
    fclose(f);
    memset(g, 0, sizeof *g);
    g->id = id;
    g->seq = seq;
    g->nseats = a2 ? 3 : 2;
    g->acc[0] = a0;
    g->acc[1] = a1;
    g->acc[2] = a2;
}

static void test_store_up(void **state)
{
    game g;
    new_game(&g, 2);
    for (int i = 0; i < 3; i++)
        play_one(&g, false);
    FILE *f = fopen(state_file, "w");
    assert_non_null(f);
    fprintf(f, "%lld %lld %lld %lld 0\n", (long long)g.id, (long long)g.seq, (long long)g.acc[0],
            (long long)g.acc[1]);
    fclose(f);
}

/* The mover at the state file's seq, kept beside it by store-stalled for
 * store-resumed. */
static void mover_file(char *path, size_t len)
{
    snprintf(path, len, "%s.mover", state_file);
}

/* store-svc is stopped (SIGSTOP: its socket accepts, nothing answers). A
 * turn whose caller allows 1 s fails DEADLINE_EXCEEDED; game-svc bounds
 * its CommitMove by that deadline (store_client.h), so the commit fails
 * too and the game goes stale, which the shell waits for in the log. Reads
 * go on from memory meanwhile. */
static void test_store_stalled(void **state)
{
    game g;
    reply r = {0};
    char path[600];
    read_state_file(&g);
    Scrabble__V1__GameState *st = get_state(&g, 0, &r);
    assert_int_equal(st->seq, g.seq);
    int mover = st->to_move;
    done(&r);
    Scrabble__V1__TurnRequest req = SCRABBLE__V1__TURN_REQUEST__INIT;
    req.game_id = g.id;
    req.expected_seq = g.seq;
    grpc_status_code c = gcall_within(g.acc[mover], "Pass", &req.base,
                                      &scrabble__v1__turn_reply__descriptor, 1000, &r);
    assert_int_equal(c, GRPC_STATUS_DEADLINE_EXCEEDED);
    done(&r);
    st = get_state(&g, 1 - mover, &r);
    assert_int_equal(st->seq, g.seq);
    done(&r);
    mover_file(path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%d\n", mover);
    fclose(f);
}

/* store-svc answers again. The store may or may not have applied the
 * abandoned Pass (its request was on the wire when the caller gave up):
 * the caller's retry at the same seq gets exactly one Pass either way
 * (the original reply, or a fresh commit after game-svc reloads the
 * stale game), and the state file moves on to the new seq. */
static void test_store_resumed(void **state)
{
    game g;
    reply r = {0};
    char path[600];
    int mover = -1;
    read_state_file(&g);
    mover_file(path, sizeof path);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &mover), 1);
    fclose(f);
    /* One more attempt if the abandoned commit lands while the first
     * attempt's reload reads the store (stale_seq): a client retries. */
    grpc_status_code c = turn_simple(&g, mover, "Pass", g.seq, &r);
    if (c == GRPC_STATUS_FAILED_PRECONDITION && strcmp(r.st.reason, "stale_seq") == 0) {
        done(&r);
        c = turn_simple(&g, mover, "Pass", g.seq, &r);
    }
    EXPECT_OK(c, &r);
    Scrabble__V1__TurnReply *tr = (Scrabble__V1__TurnReply *)r.msg;
    assert_int_equal(tr->move->seq, g.seq + 1);
    assert_int_equal(tr->move->seat, mover);
    assert_int_equal(tr->move->kind, SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PASS);
    done(&r);
    Scrabble__V1__GameState *st = get_state(&g, 0, &r);
    assert_int_equal(st->seq, g.seq + 1);
    assert_int_equal(st->to_move, 1 - mover);
    done(&r);
    f = fopen(state_file, "w");
    assert_non_null(f);
    fprintf(f, "%lld %lld %lld %lld 0\n", (long long)g.id, (long long)g.seq + 1,
            (long long)g.acc[0], (long long)g.acc[1]);
    fclose(f);
}

static void test_store_down(void **state)
{
    game g;
    reply r = {0};
    read_state_file(&g);
    Scrabble__V1__GameState *st = get_state(&g, 0, &r);
    assert_int_equal(st->seq, g.seq);
    int mover = st->to_move;
    done(&r);
    g.mirror.to_move = mover;
    solver_placement p[8];
    int score;
    size_t n = best_play(&g, p, &score);
    if (n > 0) {
        EXPECT_OK(evaluate(&g, mover, p, n, &r), &r);
        assert_true(((Scrabble__V1__EvaluateReply *)r.msg)->legal);
        done(&r);
    }
    grpc_status_code c = turn_simple(&g, mover, "Pass", g.seq, &r);
    assert_int_equal(c, GRPC_STATUS_UNAVAILABLE);
    done(&r);
    /* Reads and Evaluate still come from memory after the failed commit. */
    for (int s = 0; s < 2; s++) {
        st = get_state(&g, s, &r);
        assert_int_equal(st->seq, g.seq);
        done(&r);
    }
    if (n > 0) {
        EXPECT_OK(evaluate(&g, mover, p, n, &r), &r);
        assert_true(((Scrabble__V1__EvaluateReply *)r.msg)->legal);
        done(&r);
    }
    /* The next turn tries to reload from the store: still UNAVAILABLE. */
    c = turn_simple(&g, mover, "Pass", g.seq, &r);
    assert_int_equal(c, GRPC_STATUS_UNAVAILABLE);
    done(&r);
    st = get_state(&g, 0, &r);
    assert_int_equal(st->seq, g.seq);
    done(&r);
}

static void test_store_back(void **state)
{
    game g;
    reply r = {0};
    read_state_file(&g);
    mirror_init(&g);
    /* game-svc's channel to the store may still be in its reconnect
     * backoff: UNAVAILABLE until then, which a client retries. */
    Scrabble__V1__ListChatRequest lc = SCRABBLE__V1__LIST_CHAT_REQUEST__INIT;
    lc.game_id = g.id; /* ListChat goes through to the store */
    double t0 = now_s();
    while (gcall(g.acc[0], "ListChat", &lc.base, &scrabble__v1__list_chat_reply__descriptor, &r) ==
               GRPC_STATUS_UNAVAILABLE &&
           now_s() - t0 < 20) {
        done(&r);
        usleep(100000);
    }
    done(&r);
    printf("store-svc reachable again from game-svc after %.2f s\n", now_s() - t0);
    for (int s = 0; s < g.nseats; s++)
        check_state(&g, s); /* the failed Pass left no trace */
    play_to_end(&g, false);
}

static void test_redis_down(void **state)
{
    game g;
    reply r = {0};
    new_game(&g, 2); /* game creation works without Redis (events dropped) */
    Scrabble__V1__SaveDraftRequest sd = SCRABBLE__V1__SAVE_DRAFT_REQUEST__INIT;
    sd.game_id = g.id;
    for (int i = 0; i < 3; i++) {
        double t0 = now_s();
        grpc_status_code c =
            gcall(g.acc[0], "SaveDraft", &sd.base, &scrabble__v1__draft__descriptor, &r);
        double dt = now_s() - t0;
        EXPECT_FAIL(c, &r, GRPC_STATUS_UNAVAILABLE, "drafts_unavailable");
        done(&r);
        if (dt > 0.5)
            fail_msg("SaveDraft took %.3f s with Redis down", dt);
        Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
        ref.game_id = g.id;
        t0 = now_s();
        c = gcall(g.acc[0], "GetDraft", &ref.base, &scrabble__v1__draft__descriptor, &r);
        EXPECT_FAIL(c, &r, GRPC_STATUS_UNAVAILABLE, "drafts_unavailable");
        done(&r);
        if (now_s() - t0 > 0.5)
            fail_msg("GetDraft slow with Redis down");
    }
    /* Gameplay is unaffected. */
    for (int i = 0; i < 6; i++)
        play_one(&g, false);
    check_state(&g, 0);
    check_state(&g, 1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "games";
    state_file = argc > 2 ? argv[2] : "/tmp/game_it.state";
    const char *gaddr = getenv("GAME_ADDR"), *saddr = getenv("STORE_ADDR");
    const char *lexpath = getenv("GAME_TEST_LEXICON");
    redis_port = getenv("REDIS_PORT") ? atoi(getenv("REDIS_PORT")) : 0;
    if (!gaddr || !saddr || !lexpath) {
        fprintf(stderr, "game_it: set GAME_ADDR, STORE_ADDR, REDIS_PORT, GAME_TEST_LEXICON\n");
        return 2;
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    char err[256];
    lex = solver_lexicon_load(lexpath, err, sizeof err);
    if (!lex) {
        fprintf(stderr, "game_it: %s\n", err);
        return 2;
    }
    rpc_init();
    game_ch = it_channel_as(gaddr, "game-svc", "gateway");
    store_ch = it_channel_as(saddr, "store-svc", "gateway");
    store_game_ch = it_channel_as(saddr, "store-svc", "game-svc");
    int rc;
    if (strcmp(mode, "games") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_game_2),         cmocka_unit_test(test_full_game_3),
            cmocka_unit_test(test_full_game_4),         cmocka_unit_test(test_resign),
            cmocka_unit_test(test_bad_input),           cmocka_unit_test(test_idempotent_retry),
            cmocka_unit_test(test_concurrent_submits),  cmocka_unit_test(test_drafts_events_social),
            cmocka_unit_test(test_game_started_events),
        };
        rc = cmocka_run_group_tests_name("game-svc games", tests, NULL, NULL);
    } else {
        /* The single-test modes: the shell script restarts or stops a
         * process between them. */
        static const struct {
            const char *mode, *name;
            CMUnitTestFunction fn;
        } single[] = {
            {"crash-before", "game-svc crash (before)", test_crash_before},
            {"crash-after", "game-svc crash (after)", test_crash_after},
            {"store-up", "game-svc store (up)", test_store_up},
            {"store-stalled", "game-svc store (stalled)", test_store_stalled},
            {"store-resumed", "game-svc store (resumed)", test_store_resumed},
            {"store-down", "game-svc store (down)", test_store_down},
            {"store-back", "game-svc store (back)", test_store_back},
            {"redis-down", "game-svc redis down", test_redis_down},
        };
        rc = -1;
        for (size_t k = 0; k < sizeof(single) / sizeof(single[0]); k++) {
            if (strcmp(mode, single[k].mode) == 0) {
                const struct CMUnitTest tests[] = {
                    {single[k].mode, single[k].fn, NULL, NULL, NULL}};
                rc = cmocka_run_group_tests_name(single[k].name, tests, NULL, NULL);
            }
        }
    }
    if (rc == -1) {
        fprintf(stderr, "game_it: unknown mode %s\n", mode);
        rc = 2;
    }
    rpc_channel_destroy(game_ch);
    rpc_channel_destroy(store_ch);
    rpc_channel_destroy(store_game_ch);
    solver_lexicon_free(lex);
    rpc_shutdown();
    return rc;
}

/*
 * batch_it.c — the batcher and reader pool without gRPC, against a real,
 * private Postgres (batch_it.sh passes PG_CONNINFO). Ops are built by the
 * same begin functions the handlers use and finished through a test `done`.
 *
 * Checks that ops arriving within one window share one transaction, that a
 * logical failure (stale_seq) inside a batch does not disturb the others,
 * that an op that raises inside a batch fails alone (the batch is retried
 * op by op), and that --batch-max 1 means one transaction per write.
 * Streaming: ops arriving at different times in the window share one
 * transaction and are executed by Postgres before the window closes; a bad
 * op in the middle of a streamed transaction fails alone; a connection
 * killed while the transaction is open fails its ops UNAVAILABLE (nothing
 * written) and the writer reconnects; an op whose deadline passed while
 * queued is not written. The --batch-window parser.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpc/cfg.h"
#include "scrabble/v1/store.pb-c.h"
#include "store.h"

static const char *g_conninfo;
static int g_next_game;

typedef struct tracker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
} tracker;

static tracker g_t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static void test_done(store_op *op)
{
    pthread_mutex_lock(&g_t.mu);
    g_t.pending--;
    pthread_cond_broadcast(&g_t.cv);
    pthread_mutex_unlock(&g_t.mu);
}

static void wait_all(void)
{
    pthread_mutex_lock(&g_t.mu);
    while (g_t.pending > 0)
        pthread_cond_wait(&g_t.cv, &g_t.mu);
    pthread_mutex_unlock(&g_t.mu);
}

static void sql(const char *q)
{
    char err[256];
    PGconn *pg = store_db_connect_plain(g_conninfo, err, sizeof(err));
    if (!pg)
        fail_msg("connect: %s", err);
    PGresult *r = PQexec(pg, q);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", q, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(pg);
}

static long sql_count(const char *q)
{
    char err[256];
    PGconn *pg = store_db_connect_plain(g_conninfo, err, sizeof(err));
    PGresult *r = PQexec(pg, q);
    long v = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    PQfinish(pg);
    return v;
}

/* n games (ids first..first+n-1) between accounts 1 and 2, seq 0. */
static int seed_games(int n)
{
    int first = g_next_game + 1;
    char q[512];
    snprintf(q, sizeof(q),
             "INSERT INTO accounts (id, handle, pw_hash) VALUES (1, 'one', 'x'), (2, 'two', 'x') "
             "ON CONFLICT DO NOTHING;"
             "INSERT INTO games (id, lexicon, seed) SELECT g, 'wamerican', g "
             "FROM generate_series(%d, %d) g;"
             "INSERT INTO game_players (game_id, seat, account_id) SELECT g, s, s + 1 "
             "FROM generate_series(%d, %d) g, generate_series(0, 1) s;",
             first, first + n - 1, first, first + n - 1);
    sql(q);
    g_next_game += n;
    return first;
}

static void start(store_server *srv, int window_ms, int max)
{
    store_config cfg;
    char err[256];
    char *argv[] = {"t", NULL};
    assert_int_equal(store_config_load(&cfg, 1, argv, 1, NULL, NULL, err, sizeof(err)), CFG_OK);
    snprintf(cfg.pg, sizeof(cfg.pg), "%s", g_conninfo);
    cfg.batch_window_us = (int64_t)window_ms * 1000;
    cfg.batch_max = max;
    cfg.read_pool = 2;
    assert_int_equal(store_server_start(srv, &cfg, NULL), STORE_OK);
}

/* A CommitMove op for (game, seq), built by the handlers' begin function. */
static store_op *commit_op(store_server *srv, rpc_arena *a, int64_t game, int64_t seq, int score)
{
    Scrabble__V1__CommitMoveRequest *r =
        RPC_ARENA_MSG(a, Scrabble__V1__CommitMoveRequest, scrabble__v1__commit_move_request__init);
    Scrabble__V1__Move *m = RPC_ARENA_MSG(a, Scrabble__V1__Move, scrabble__v1__move__init);
    m->seq = seq;
    m->seat = (int)((seq - 1) % 2);
    m->account_id = 1 + m->seat;
    m->kind = SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PASS;
    m->score = score;
    m->notation = "PASS";
    r->game_id = game;
    r->move = m;
    r->to_move = (int)(seq % 2);
    store_op *op = rpc_arena_calloc(a, 1, sizeof(*op));
    op->name = "CommitMove";
    op->srv = srv;
    op->arena = a;
    op->req = r;
    op->deadline_ms = store_now_ms() + 10000;
    op->done = test_done;
    assert_int_equal(store_commit_move_begin(op), STORE_NEXT_WRITE);
    return op;
}

static void submit_all(store_server *srv, store_op **ops, int n)
{
    pthread_mutex_lock(&g_t.mu);
    g_t.pending += n;
    pthread_mutex_unlock(&g_t.mu);
    for (int i = 0; i < n; i++)
        store_submit(srv, ops[i], STORE_NEXT_WRITE);
    wait_all();
}

/* Queues one op without waiting for it (wait_all does). */
static void submit_one(store_server *srv, store_op *op)
{
    pthread_mutex_lock(&g_t.mu);
    g_t.pending++;
    pthread_mutex_unlock(&g_t.mu);
    store_submit(srv, op, STORE_NEXT_WRITE);
}

static void test_one_window_one_transaction(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(20);
    start(&srv, 200, 256);
    store_op *ops[21];
    for (int i = 0; i < 20; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 0);
    /* A stale seq inside the batch: a logical failure, not an error. */
    ops[20] = commit_op(&srv, a, first, 5, 0);
    submit_all(&srv, ops, 21);
    for (int i = 0; i < 20; i++)
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_OK);
    assert_int_equal(ops[20]->st.code, GRPC_STATUS_FAILED_PRECONDITION);
    assert_string_equal(ops[20]->st.reason, "stale_seq");
    assert_int_equal(metric_value(srv.m.batches), 1);
    assert_int_equal(metric_value(srv.m.tx), 1);
    assert_int_equal(metric_value(srv.m.batch_ops), 21);
    assert_int_equal(metric_value(srv.m.retries), 0);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

static void test_bad_op_fails_alone(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(10);
    start(&srv, 200, 256);
    store_op *ops[11];
    for (int i = 0; i < 10; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 0);
    /* An op whose statement raises inside the transaction (a malformed
     * array parameter: the kind of bug validation exists to prevent). */
    ops[10] = commit_op(&srv, a, first, 2, 0);
    ops[10]->params[9] = "{not-an-int}";
    submit_all(&srv, ops, 11);
    for (int i = 0; i < 10; i++)
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_OK);
    assert_int_equal(ops[10]->st.code, GRPC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(metric_value(srv.m.batches), 1);
    assert_int_equal(metric_value(srv.m.retries), 1);
    /* The failed batch, then each op alone. */
    assert_int_equal(metric_value(srv.m.tx), 1 + 11);
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id BETWEEN %d AND %d", first,
             first + 9);
    assert_int_equal(sql_count(q), 10);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

static void test_batch_max_one(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(10);
    start(&srv, 200, 1);
    store_op *ops[10];
    for (int i = 0; i < 10; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 7);
    submit_all(&srv, ops, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_OK);
    assert_int_equal(metric_value(srv.m.batches), 10);
    assert_int_equal(metric_value(srv.m.tx), 10);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

/* Ops arriving 100 ms apart within a 600 ms window: one transaction, and
 * the first op has been executed (the writer's backend holds a transaction
 * id) long before the window closes. */
static void test_streamed_window(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(3);
    start(&srv, 600, 256);
    int64_t t0 = store_now_ms();
    store_op *ops[3];
    for (int i = 0; i < 3; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 0);
    submit_one(&srv, ops[0]);
    usleep(150 * 1000);
    /* Executed, not committed: a write has a transaction id, and no other
     * session sees the move yet. Both hold only while the window is open:
     * on a loaded machine the sleep, the writer and the queries may outlast
     * it, and then the checks say nothing (the rest of the test still
     * runs); on a quiet one the op is executed within a few ms. */
    int in_tx = 0;
    while (store_now_ms() - t0 < 500 &&
           (in_tx = sql_count("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                              "'store-svc' AND backend_xid IS NOT NULL")) == 0)
        usleep(10 * 1000);
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id = %d", first);
    int visible = sql_count(q);
    if (store_now_ms() - t0 < 600 && in_tx != 0) {
        assert_int_equal(in_tx, 1);
        assert_int_equal(visible, 0);
    }
    submit_one(&srv, ops[1]);
    usleep(100 * 1000);
    submit_one(&srv, ops[2]);
    int64_t last_submit_ms = store_now_ms() - t0;
    wait_all();
    /* The window runs from the first op's arrival. */
    assert_true(store_now_ms() - t0 >= 600);
    for (int i = 0; i < 3; i++)
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_OK);
    assert_int_equal(metric_value(srv.m.batch_ops), 3);
    assert_int_equal(metric_value(srv.m.tx), metric_value(srv.m.batches));
    /* One transaction when all three arrived well inside the window (a
     * loaded machine may stretch the sleeps past it: then a second batch
     * is right). */
    if (last_submit_ms < 500)
        assert_int_equal(metric_value(srv.m.batches), 1);
    assert_int_equal(sql_count(q), 1);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

/* A statement that raises in the middle of a streamed transaction (after
 * some ops were executed, before others were sent): it fails alone, the
 * others are committed by the op-by-op retry. */
static void test_bad_op_mid_stream(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(6);
    start(&srv, 600, 256);
    store_op *ops[7];
    for (int i = 0; i < 6; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 0);
    ops[6] = commit_op(&srv, a, first, 2, 0);
    ops[6]->params[9] = "{not-an-int}";
    for (int i = 0; i < 3; i++)
        submit_one(&srv, ops[i]);
    usleep(100 * 1000);
    submit_one(&srv, ops[6]);
    usleep(100 * 1000);
    for (int i = 3; i < 6; i++)
        submit_one(&srv, ops[i]);
    wait_all();
    for (int i = 0; i < 6; i++)
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_OK);
    assert_int_equal(ops[6]->st.code, GRPC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(metric_value(srv.m.batches), 1);
    assert_int_equal(metric_value(srv.m.retries), 1);
    assert_int_equal(metric_value(srv.m.tx), 1 + 7);
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id BETWEEN %d AND %d", first,
             first + 5);
    assert_int_equal(sql_count(q), 6);
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id = %d AND seq = 2", first);
    assert_int_equal(sql_count(q), 0);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

/* The writer's backend is killed while its transaction is open: every op
 * sent into it fails UNAVAILABLE db_unavailable, nothing of it is written,
 * and the next write goes through a new connection. */
static void test_conn_killed_mid_stream(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(3);
    start(&srv, 800, 256);
    store_op *ops[3];
    for (int i = 0; i < 3; i++)
        ops[i] = commit_op(&srv, a, first + i, 1, 0);
    submit_one(&srv, ops[0]);
    usleep(150 * 1000);
    assert_int_equal(sql_count("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM "
                               "pg_stat_activity WHERE application_name = 'store-svc' AND "
                               "backend_xid IS NOT NULL) t"),
                     1);
    usleep(100 * 1000);
    submit_one(&srv, ops[1]);
    wait_all();
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ops[i]->st.code, GRPC_STATUS_UNAVAILABLE);
        assert_string_equal(ops[i]->st.reason, "db_unavailable");
    }
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id BETWEEN %d AND %d", first,
             first + 2);
    assert_int_equal(sql_count(q), 0);
    /* The writer reconnects by itself (the first retry is immediate);
     * until it has, writes fail fast. */
    for (int i = 0; i < 500 && !atomic_load(&srv.writer_up); i++)
        usleep(10 * 1000);
    submit_one(&srv, ops[2]);
    wait_all();
    assert_int_equal(ops[2]->st.code, GRPC_STATUS_OK);
    assert_int_equal(metric_value(srv.m.reconnects), 1);
    assert_int_equal(sql_count(q), 1);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

/* An op whose deadline passed while it was queued is finished
 * DEADLINE_EXCEEDED without being sent; the live one beside it commits. */
static void test_expired_op_not_sent(void **state)
{
    static store_server srv;
    rpc_arena *a = rpc_arena_create(0);
    int first = seed_games(2);
    start(&srv, 100, 256);
    store_op *ops[2];
    ops[0] = commit_op(&srv, a, first, 1, 0);
    ops[1] = commit_op(&srv, a, first + 1, 1, 0);
    ops[0]->deadline_ms = store_now_ms() - 1;
    submit_all(&srv, ops, 2);
    assert_int_equal(ops[0]->st.code, GRPC_STATUS_DEADLINE_EXCEEDED);
    assert_string_equal(ops[0]->st.reason, "deadline_exceeded");
    assert_int_equal(ops[1]->st.code, GRPC_STATUS_OK);
    assert_int_equal(metric_value(srv.m.batch_ops), 1);
    assert_int_equal(metric_value(srv.m.tx), 1);
    char q[256];
    snprintf(q, sizeof(q), "SELECT count(*) FROM game_moves WHERE game_id = %d", first);
    assert_int_equal(sql_count(q), 0);
    store_server_stop(&srv);
    rpc_arena_destroy(a);
}

/* --batch-window and --session-ttl through the config loader: fractions
 * and microseconds for the window, days for the TTL, bounds enforced. */
static void test_window_parse(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t us; /* -1: rejected */
    } cases[] = {
        {"2ms", 2000},   {"9.5ms", 9500}, {"9500us", 9500}, {"0.01s", 10000}, {"2", 2000},
        {"0", 0},        {"1s", 1000000}, {"9.25", 9250},   {"0.0005ms", 0},  {"1.5us", 1},
        {"1001ms", -1},  {"2s", -1},      {"", -1},         {"ms", -1},       {".", -1},
        {"1.2.3ms", -1}, {"-1ms", -1},    {"1e3us", -1},    {"2 ms", -1},     {"2h", -1},
    };
    store_config cfg;
    char err[256], flag[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(flag, sizeof(flag), "--batch-window=%s", cases[i].s);
        char *argv[] = {"t", flag, NULL};
        int rc = store_config_load(&cfg, 2, argv, 1, NULL, NULL, err, sizeof(err));
        if (cases[i].us < 0) {
            if (rc != CFG_ERROR)
                fail_msg("'%s' accepted as %lld us", cases[i].s, (long long)cfg.batch_window_us);
            if (strstr(err, "--batch-window") == NULL)
                fail_msg("'%s': the error does not name the flag: %s", cases[i].s, err);
        } else if (rc != CFG_OK || cfg.batch_window_us != cases[i].us) {
            fail_msg("'%s': rc %d, %lld us, want %lld (%s)", cases[i].s, rc,
                     (long long)cfg.batch_window_us, (long long)cases[i].us, err);
        }
    }
    char *dflt[] = {"t", NULL};
    assert_int_equal(store_config_load(&cfg, 1, dflt, 1, NULL, NULL, err, sizeof(err)), CFG_OK);
    assert_int_equal(cfg.batch_window_us, 2000);
    assert_int_equal(cfg.session_ttl_us, 720LL * 3600 * 1000000);
    char *days[] = {"t", "--session-ttl=30d", NULL};
    assert_int_equal(store_config_load(&cfg, 2, days, 1, NULL, NULL, err, sizeof(err)), CFG_OK);
    assert_int_equal(cfg.session_ttl_us, 30LL * 86400 * 1000000);
    char *zero[] = {"t", "--session-ttl=0", NULL};
    assert_int_equal(store_config_load(&cfg, 2, zero, 1, NULL, NULL, err, sizeof(err)), CFG_ERROR);
    char *long_ttl[] = {"t", "--session-ttl=3651d", NULL};
    assert_int_equal(store_config_load(&cfg, 2, long_ttl, 1, NULL, NULL, err, sizeof(err)),
                     CFG_ERROR);
}

int main(void)
{
    g_conninfo = getenv("PG_CONNINFO");
    if (!g_conninfo) {
        fprintf(stderr, "run me through batch_it.sh\n");
        return 2;
    }
    char err[256];
    /* The schema owner migrates (as store-svc does with --pg-migrate); the
     * tests then run as the application role. */
    const char *owner = getenv("PG_OWNER_CONNINFO");
    PGconn *pg = store_db_connect_plain(owner ? owner : g_conninfo, err, sizeof(err));
    if (!pg || store_migrate(pg, NULL, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "migrate: %s\n", err);
        return 1;
    }
    PQfinish(pg);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_window_one_transaction),
        cmocka_unit_test(test_bad_op_fails_alone),
        cmocka_unit_test(test_batch_max_one),
        cmocka_unit_test(test_streamed_window),
        cmocka_unit_test(test_bad_op_mid_stream),
        cmocka_unit_test(test_conn_killed_mid_stream),
        cmocka_unit_test(test_expired_op_not_sent),
        cmocka_unit_test(test_window_parse),
    };
    return cmocka_run_group_tests_name("store-svc batcher", tests, NULL, NULL);
}

/*
 * batch_it.c — the batcher and reader pool without gRPC, against a real,
 * private Postgres (batch_it.sh passes PG_CONNINFO). Ops are built by the
 * same begin functions the handlers use and finished through a test `done`.
 *
 * Checks that ops arriving within one window share one transaction, that a
 * logical failure (stale_seq) inside a batch does not disturb the others,
 * that an op that raises inside a batch fails alone (the batch is retried
 * op by op), and that --batch-max 1 means one transaction per write.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    cfg.batch_window_ms = window_ms;
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

int main(void)
{
    g_conninfo = getenv("PG_CONNINFO");
    if (!g_conninfo) {
        fprintf(stderr, "run me through batch_it.sh\n");
        return 2;
    }
    char err[256];
    PGconn *pg = store_db_connect_plain(g_conninfo, err, sizeof(err));
    if (!pg || store_migrate(pg, NULL, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "migrate: %s\n", err);
        return 1;
    }
    PQfinish(pg);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_window_one_transaction),
        cmocka_unit_test(test_bad_op_fails_alone),
        cmocka_unit_test(test_batch_max_one),
    };
    return cmocka_run_group_tests_name("store-svc batcher", tests, NULL, NULL);
}

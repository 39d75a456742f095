/*
 * batcher.c — the writer thread: group commit.
 *
 * Every write is one prepared statement calling a store_* SQL function that
 * reports expected failures (stale_seq, not_found, ...) as data instead of
 * raising. The writer takes the ops queued within the batch window (or up to
 * batch_max), and sends, in one pipeline and one round-trip,
 *     BEGIN; op1; op2; ... opN; COMMIT; Sync
 * It answers every op only after that COMMIT succeeded. If anything in the
 * batch raised (a bug, or bad data that slipped through validation) or the
 * COMMIT failed, the transaction is rolled back and each op is run again
 * alone, in its own implicit transaction, so one bad write fails alone.
 *
 * Connection loss: before a batch the idle connection is checked (a server
 * that restarted has closed it), so ops are not sent into a dead socket. If
 * the connection breaks while a batch is in flight, its COMMIT may or may
 * not have happened: every op of that batch gets UNAVAILABLE db_unavailable
 * (never an acknowledgement), and the client's retry is safe because
 * CommitMove is idempotent on (game_id, seq).
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "store.h"

#define STORE__MAX_WAIT_MS 30000

/* A dead idle connection has something to read: the server's FATAL
 * message, then EOF (often in two reads, so PQconsumeInput alone may not
 * notice yet). store-svc never LISTENs, so anything readable on an idle
 * connection means it is gone. */
static bool store__idle_conn_ok(store_db *db)
{
    if (!db->pg)
        return false;
    struct pollfd pfd = {.fd = PQsocket(db->pg), .events = POLLIN};
    return poll(&pfd, 1, 0) == 0;
}

bool store__db_usable(store_db *db)
{
    if (db->pg && !store__idle_conn_ok(db))
        store_db_drop(db, "connection closed by the server");
    return store_db_ensure(db) == STORE_OK;
}

static void store__set_writer_up(store_server *srv)
{
    bool up = store_db_up(&srv->writer_db);
    atomic_store(&srv->writer_up, up);
    metric_set(srv->m.db_up, up ? 1 : 0);
}

static int64_t store__op_deadline(const store_op *op, int64_t now)
{
    int64_t cap = now + STORE__MAX_WAIT_MS;
    return op->deadline_ms > 0 && op->deadline_ms < cap ? op->deadline_ms : cap;
}

static void store__reset(store_op *op)
{
    memset(&op->st, 0, sizeof(op->st));
    op->st.code = GRPC_STATUS_OK;
    op->reply = NULL;
}

/* Applies a write step to its statement's result. */
static void store__apply(store_op *op, PGresult *res, PGconn *pg)
{
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        store_op_fail_pg(op, res, pg);
        return;
    }
    if (op->step(op, res) != STORE_NEXT_DONE)
        rpc_status_set(&op->st, GRPC_STATUS_INTERNAL, "internal", "write step chained");
}

/* Runs one op alone: one statement, one implicit transaction. Finishes
 * the op. */
static void store__run_alone(store_server *srv, store_op *op)
{
    store_db *db = &srv->writer_db;
    store__reset(op);
    if (!store_db_up(db) && store_db_ensure(db) != STORE_OK) {
        store__op_unavailable(srv, op, "db_unavailable");
        return;
    }
    metric_add(srv->m.tx, 1);
    PGresult *res;
    if (store_db_run_one(db, op, store__op_deadline(op, store_now_ms()), &res) != STORE_OK) {
        store_db_drop(db, db->errstr);
        store__op_unavailable(srv, op, "db_unavailable");
        return;
    }
    store__apply(op, res, db->pg);
    PQclear(res);
    store_op_finish(op);
}

static void store__fail_all(store_server *srv, store_op **ops, int n)
{
    for (int i = 0; i < n; i++)
        store__op_unavailable(srv, ops[i], "db_unavailable");
}

/* Reads the next result of a pipelined query and the NULL that ends it. */
static int store__pipeline_result(store_db *db, int64_t deadline, PGresult **out)
{
    PGresult *end;
    if (store_db_next_result(db, deadline, out) != STORE_OK || !*out)
        return STORE_ECONN;
    if (store_db_next_result(db, deadline, &end) != STORE_OK) {
        PQclear(*out);
        *out = NULL;
        return STORE_ECONN;
    }
    PQclear(end);
    return STORE_OK;
}

static int store__send_simple(PGconn *pg, const char *sql)
{
    return PQsendQueryParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0);
}

/* Runs ops[0..n) in one transaction. Returns STORE_OK when committed (each
 * op's status and reply are set), STORE_ERROR when the batch failed and
 * must be retried op by op (the connection is idle again), STORE_ECONN when
 * the connection broke (outcome unknown). */
static int store__run_batch(store_server *srv, store_op **ops, int n)
{
    store_db *db = &srv->writer_db;
    PGconn *pg = db->pg;
    int64_t now = store_now_ms(), deadline = now;
    for (int i = 0; i < n; i++) {
        int64_t d = store__op_deadline(ops[i], now);
        if (d > deadline)
            deadline = d;
    }
    metric_add(srv->m.tx, 1);
    if (!store__send_simple(pg, "BEGIN"))
        return STORE_ECONN;
    for (int i = 0; i < n; i++) {
        store__reset(ops[i]);
        if (!PQsendQueryPrepared(pg, ops[i]->stmt, ops[i]->nparams, ops[i]->params, ops[i]->lengths,
                                 ops[i]->formats, 0))
            return STORE_ECONN;
    }
    if (!store__send_simple(pg, "COMMIT") || !PQpipelineSync(pg))
        return STORE_ECONN;

    PGresult *r;
    int failed = -1;
    if (store__pipeline_result(db, deadline, &r) != STORE_OK)
        return STORE_ECONN;
    bool begun = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    for (int i = 0; i < n; i++) {
        if (store__pipeline_result(db, deadline, &r) != STORE_OK)
            return STORE_ECONN;
        ExecStatusType t = PQresultStatus(r);
        if (t == PGRES_TUPLES_OK) {
            store__apply(ops[i], r, pg);
        } else if (t != PGRES_PIPELINE_ABORTED && failed < 0) {
            failed = i;
            store_op_fail_pg(ops[i], r, pg);
        }
        PQclear(r);
    }
    if (store__pipeline_result(db, deadline, &r) != STORE_OK)
        return STORE_ECONN;
    bool committed = begun && failed < 0 && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!committed && failed < 0 && PQresultStatus(r) == PGRES_FATAL_ERROR)
        log_warn("batch_commit_failed", "ops=%d err=\"%s\"", n, PQresultErrorMessage(r));
    PQclear(r);
    if (store_db_next_result(db, deadline, &r) != STORE_OK || !r)
        return STORE_ECONN;
    bool synced = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
    PQclear(r);
    if (!synced)
        return STORE_ECONN;
    if (committed)
        return STORE_OK;
    if (failed >= 0)
        log_warn("batch_failed", "ops=%d failed_op=%s err=\"%s\"", n, ops[failed]->name,
                 ops[failed]->st.message);
    /* An error inside BEGIN..COMMIT leaves the transaction aborted after
     * the sync; end it before retrying. */
    if (PQtransactionStatus(pg) != PQTRANS_IDLE) {
        if (!store__send_simple(pg, "ROLLBACK") || !PQpipelineSync(pg))
            return STORE_ECONN;
        if (store__pipeline_result(db, deadline, &r) != STORE_OK)
            return STORE_ECONN;
        PQclear(r);
        if (store_db_next_result(db, deadline, &r) != STORE_OK || !r)
            return STORE_ECONN;
        PQclear(r);
    }
    return STORE_ERROR;
}

static void store__handle_batch(store_server *srv, store_op **ops, int n)
{
    store_db *db = &srv->writer_db;
    if (!store__db_usable(db)) {
        store__fail_all(srv, ops, n);
        return;
    }
    metric_add(srv->m.batches, 1);
    metric_add(srv->m.batch_ops, n);
    metric_observe(srv->m.batch_size, n);
    if (n == 1) {
        /* No BEGIN/COMMIT needed: a single statement is its own
         * transaction. */
        store__run_alone(srv, ops[0]);
        return;
    }
    int rc = store__run_batch(srv, ops, n);
    if (rc == STORE_OK) {
        for (int i = 0; i < n; i++)
            store_op_finish(ops[i]);
        return;
    }
    if (rc == STORE_ECONN) {
        log_warn("batch_in_doubt", "ops=%d err=\"%s\"", n, db->errstr);
        store_db_drop(db, db->errstr);
        store__fail_all(srv, ops, n);
        return;
    }
    metric_add(srv->m.retries, 1);
    for (int i = 0; i < n; i++)
        store__run_alone(srv, ops[i]);
}

void *store_writer_main(void *arg)
{
    store_server *srv = arg;
    store_queue *q = &srv->writeq;
    store_db *db = &srv->writer_db;
    int max = srv->cfg.batch_max;
    store_op **batch = calloc((size_t)max, sizeof(*batch));
    if (!batch)
        abort(); /* start-up allocation of a few KB */

    store_db_ensure(db);
    store__set_writer_up(srv);
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->head && !q->stopping) {
            if (!store_db_up(db)) {
                /* Down: sleep until the next reconnect attempt. */
                int64_t at = db->next_try_ms;
                if (at > store_now_ms())
                    store_queue_wait(q, at);
                pthread_mutex_unlock(&q->mu);
                store_db_ensure(db);
                store__set_writer_up(srv);
                pthread_mutex_lock(&q->mu);
                continue;
            }
            store_queue_wait(q, -1);
        }
        if (!q->head) { /* stopping and drained */
            pthread_mutex_unlock(&q->mu);
            break;
        }
        /* The window runs from the oldest op's arrival: under load the
         * queue filled while the previous batch ran and nobody waits. */
        int64_t until = q->head->enqueued_ms + srv->cfg.batch_window_ms;
        while (q->len < max && !q->stopping && store_now_ms() < until)
            store_queue_wait(q, until);
        int n = 0;
        while (n < max && q->head)
            batch[n++] = store_queue_pop_locked(q);
        pthread_mutex_unlock(&q->mu);

        store__handle_batch(srv, batch, n);
        store__set_writer_up(srv);
    }
    free(batch);
    return NULL;
}

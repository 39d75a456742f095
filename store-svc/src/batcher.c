/*
 * batcher.c — the writer thread: group commit, streamed.
 *
 * Every write is one prepared statement calling a store_* SQL function that
 * reports expected failures (stale_seq, not_found, ...) as data instead of
 * raising. When a write reaches the idle writer, it sends
 *     BEGIN; op1
 * at once (libpq pipeline mode: nothing waits for results), then sends each
 * further write into that open transaction as soon as it is queued, so
 * Postgres executes the batch while its window is still open. When the
 * window closes (batch_window after the oldest op's arrival, timed in
 * microseconds) or batch_max ops are in, it sends
 *     COMMIT; Sync
 * and reads every result: after the window only the COMMIT (its WAL flush)
 * is left to wait for. It answers every op only after that COMMIT
 * succeeded. If anything in the batch raised (a bug, or bad data that
 * slipped through validation) or the COMMIT failed, the transaction is
 * rolled back and each op is run again alone, in its own implicit
 * transaction, so one bad write fails alone.
 *
 * Connection loss: before a transaction the idle connection is checked (a
 * server that restarted has closed it), so ops are not sent into a dead
 * socket. If the connection breaks while a transaction is open or its
 * COMMIT is in flight, the COMMIT may or may not have happened: every op
 * sent into it (or taken from the queue for it) gets UNAVAILABLE
 * db_unavailable (never an acknowledgement), and the client's retry is safe
 * because CommitMove is idempotent on (game_id, seq). An op whose deadline
 * has passed before it is sent is finished DEADLINE_EXCEEDED unsent.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

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

/* After each reconnect attempt while idle. */
static void store__writer_tried(store_db *db, int rc)
{
    (void)rc;
    store__set_writer_up(db->owner);
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
    bool kick = op->writes_events && op->st.code == GRPC_STATUS_OK;
    store_op_finish(op); /* op may be gone after this */
    if (kick && srv->events_committed)
        srv->events_committed(srv->events_committed_arg);
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

/* The transaction being streamed: the ops sent into it, in order. */
typedef struct store_tx {
    store_op **ops; /* batch_max slots, the writer's */
    int n, max;
    int64_t deadline_ms; /* the latest of its ops' deadlines: how long results may take */
    bool begun;          /* BEGIN sent */
} store_tx;

/* Pushes libpq's output to the socket now: in pipeline mode libpq keeps
 * queries until a sync or 64 kB, and a streamed op is worth nothing there.
 * Then reads whatever has come back into libpq's buffer (one non-blocking
 * recv): Postgres holds results until the Sync unless its 8 kB output
 * buffer fills, and then it must not block on us; and a connection the
 * server closed is noticed mid-window, not at the COMMIT. */
static int store__flush(store_db *db, int64_t deadline_ms)
{
    PGconn *pg = db->pg;
    int f;
    while ((f = PQflush(pg)) == 1) {
        /* The socket is full: Postgres is busy, or blocked on its own
         * output to us. Wait for either side to move. */
        int64_t left = deadline_ms - store_now_ms();
        if (left <= 0) {
            snprintf(db->errstr, sizeof(db->errstr), "timed out sending to Postgres");
            return STORE_ECONN;
        }
        struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN | POLLOUT};
        int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR) {
            snprintf(db->errstr, sizeof(db->errstr), "poll: %s", strerror(errno));
            return STORE_ECONN;
        }
        if (n > 0 && (pfd.revents & (POLLIN | POLLERR | POLLHUP)) && !PQconsumeInput(pg))
            f = -1;
        if (f < 0)
            break;
    }
    if (f < 0 || !PQconsumeInput(pg) || PQstatus(pg) == CONNECTION_BAD) {
        snprintf(db->errstr, sizeof(db->errstr), "send: %s", PQerrorMessage(pg));
        return STORE_ECONN;
    }
    return STORE_OK;
}

/* Sends ops (a chain linked by ->next, taken from the queue) into the open
 * transaction, BEGIN first if it is the first. Every op that is sent, or
 * would have been when the connection broke, is in tx->ops: on STORE_ECONN
 * the caller fails them all. Expired ops are finished here, unsent. */
static int store__tx_send(store_server *srv, store_tx *tx, store_op *chain)
{
    store_db *db = &srv->writer_db;
    PGconn *pg = db->pg;
    int64_t now = store_now_ms();
    bool ok = true;
    for (store_op *op = chain, *next; op; op = next) {
        next = op->next;
        op->next = NULL;
        if (op->deadline_ms > 0 && now >= op->deadline_ms) {
            rpc_status_set(&op->st, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline_exceeded",
                           "deadline passed while queued");
            op->reply = NULL;
            store_op_finish(op);
            continue;
        }
        int64_t d = store__op_deadline(op, now);
        if (d > tx->deadline_ms)
            tx->deadline_ms = d;
        store__reset(op);
        tx->ops[tx->n++] = op;
        if (ok && !tx->begun) {
            metric_add(srv->m.tx, 1);
            tx->begun = true;
            ok = store__send_simple(pg, "BEGIN");
        }
        if (ok)
            ok = PQsendQueryPrepared(pg, op->stmt, op->nparams, op->params, op->lengths,
                                     op->formats, 0);
    }
    if (!ok) {
        snprintf(db->errstr, sizeof(db->errstr), "send: %s", PQerrorMessage(pg));
        return STORE_ECONN;
    }
    return tx->begun ? store__flush(db, tx->deadline_ms) : STORE_OK;
}

/* Streams queued ops into a new transaction until until_us (monotonic µs),
 * until tx->max ops are in, or until the queue stops. Each op is sent as
 * soon as it is seen; the writer sleeps on the queue in between (a push
 * onto the queue it emptied wakes it). STORE_ECONN: the connection broke;
 * tx->ops are in doubt. */
static int store__tx_stream(store_server *srv, store_tx *tx, int64_t until_us)
{
    store_queue *q = &srv->writeq;
    int rc = STORE_OK;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (q->head && tx->n < tx->max) {
            /* Take what fits, then send it without holding the queue: a
             * send is a syscall, and handlers push meanwhile. */
            store_op *chain = NULL, **tail = &chain;
            for (int room = tx->max - tx->n; room > 0 && q->head; room--) {
                *tail = store_queue_pop_locked(q);
                tail = &(*tail)->next;
            }
            pthread_mutex_unlock(&q->mu);
            rc = store__tx_send(srv, tx, chain);
            pthread_mutex_lock(&q->mu);
            if (rc != STORE_OK)
                break;
            continue;
        }
        if (tx->n >= tx->max || q->stopping || store_now_us() >= until_us)
            break;
        store_queue_wait_us(q, until_us);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

/* Ends the streamed transaction: COMMIT; Sync, then reads every result.
 * Returns STORE_OK when committed (each op's status and reply are set),
 * STORE_ERROR when the batch failed and must be retried op by op (the
 * connection is idle again), STORE_ECONN when the connection broke
 * (outcome unknown). */
static int store__tx_commit(store_server *srv, store_tx *tx)
{
    store_db *db = &srv->writer_db;
    PGconn *pg = db->pg;
    store_op **ops = tx->ops;
    int n = tx->n;
    int64_t deadline = tx->deadline_ms;
    if (!store__send_simple(pg, "COMMIT") || !PQpipelineSync(pg)) {
        snprintf(db->errstr, sizeof(db->errstr), "send: %s", PQerrorMessage(pg));
        return STORE_ECONN;
    }

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
    if (failed >= 0) {
        rpc_trace prev = rpc_trace_enter(ops[failed]->trace);
        log_warn("batch_failed", "ops=%d failed_op=%s err=\"%s\"", n, ops[failed]->name,
                 ops[failed]->st.message);
        rpc_trace_leave(&prev);
    }
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

/* One batch: streams the queued ops into a transaction until the window
 * closes, commits it and finishes every op. */
static void store__run_tx(store_server *srv, store_tx *tx, int64_t until_us)
{
    store_db *db = &srv->writer_db;
    tx->n = 0;
    tx->deadline_ms = 0;
    tx->begun = false;
    int rc = store__tx_stream(srv, tx, until_us);
    if (tx->n == 0) /* every op had expired */
        return;
    metric_add(srv->m.batches, 1);
    metric_add(srv->m.batch_ops, tx->n);
    metric_observe(srv->m.batch_size, tx->n);
    if (rc == STORE_OK) {
        int64_t t0 = store_now_us();
        metric_observe(srv->m.batch_window, (double)(t0 - tx->ops[0]->enqueued_us) / 1e6);
        rc = store__tx_commit(srv, tx);
        if (rc == STORE_OK)
            metric_observe(srv->m.commit_seconds, (double)(store_now_us() - t0) / 1e6);
    }
    if (rc == STORE_OK) {
        bool kick = false;
        for (int i = 0; i < tx->n; i++) {
            kick = kick || tx->ops[i]->writes_events;
            store_op_finish(tx->ops[i]);
        }
        /* After the replies: the relay's publish can only follow them. */
        if (kick && srv->events_committed)
            srv->events_committed(srv->events_committed_arg);
        return;
    }
    if (rc == STORE_ECONN) {
        log_warn("batch_in_doubt", "ops=%d err=\"%s\"", tx->n, db->errstr);
        store_db_drop(db, db->errstr);
        store__fail_all(srv, tx->ops, tx->n);
        return;
    }
    metric_add(srv->m.retries, 1);
    for (int i = 0; i < tx->n; i++)
        store__run_alone(srv, tx->ops[i]);
}

/* Takes up to max queued ops and fails them UNAVAILABLE: the database is
 * down (the writer keeps reconnecting with backoff). */
static void store__fail_queued(store_server *srv, int max)
{
    store_queue *q = &srv->writeq;
    pthread_mutex_lock(&q->mu);
    store_op *chain = NULL, **tail = &chain;
    for (int i = 0; i < max && q->head; i++) {
        *tail = store_queue_pop_locked(q);
        tail = &(*tail)->next;
    }
    pthread_mutex_unlock(&q->mu);
    for (store_op *op = chain, *next; op; op = next) {
        next = op->next;
        op->next = NULL;
        store__op_unavailable(srv, op, "db_unavailable");
    }
}

/* --batch-max 1: no batching, each op is its own implicit transaction. */
static void store__run_single(store_server *srv)
{
    store_queue *q = &srv->writeq;
    pthread_mutex_lock(&q->mu);
    store_op *op = store_queue_pop_locked(q);
    pthread_mutex_unlock(&q->mu);
    if (!op)
        return;
    metric_add(srv->m.batches, 1);
    metric_add(srv->m.batch_ops, 1);
    metric_observe(srv->m.batch_size, 1);
    store__run_alone(srv, op);
}

void *store_writer_main(void *arg)
{
    store_server *srv = arg;
    store_queue *q = &srv->writeq;
    store_db *db = &srv->writer_db;
    store_tx tx = {.max = srv->cfg.batch_max};
    tx.ops = calloc((size_t)tx.max, sizeof(*tx.ops));
    if (!tx.ops)
        abort(); /* start-up allocation of a few KB */

#ifdef __linux__
    /* The window is timed in microseconds; the kernel's default timer slack
     * (50 µs) would add to every window that ends on its timer. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
#endif
    store_db_ensure(db);
    store__set_writer_up(srv);
    for (;;) {
        pthread_mutex_lock(&q->mu);
        store_db_wait_work(db, q, store__writer_tried);
        if (!q->head) { /* stopping and drained */
            pthread_mutex_unlock(&q->mu);
            break;
        }
        /* The window runs from the oldest op's arrival: under load the
         * queue filled while the previous batch committed, and its window
         * has partly run already. */
        int64_t until = q->head->enqueued_us + srv->cfg.batch_window_us;
        pthread_mutex_unlock(&q->mu);

        if (!store__db_usable(db))
            store__fail_queued(srv, tx.max);
        else if (tx.max == 1)
            store__run_single(srv);
        else
            store__run_tx(srv, &tx, until);
        store__set_writer_up(srv);
    }
    free(tx.ops);
    return NULL;
}

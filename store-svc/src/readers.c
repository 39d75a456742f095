/*
 * readers.c — the reader pool: a few threads, each owning one connection,
 * taking read ops from one queue. A read is one prepared statement and one
 * round-trip (LoadGame included); a step may then hand the op on (Login's
 * password check runs here, and its session insert goes to the writer).
 * Local steps (op->stmt NULL: password hashing) also run here, keeping KDF
 * work off the gRPC workers and off the batcher.
 */
#include <string.h>

#include "rpc/log.h"
#include "store.h"

bool store__db_usable(store_db *db);

static void store__run_read(store_server *srv, store_db *db, store_op *op)
{
    if (!op->stmt) {
        store_submit(srv, op, op->step(op, NULL));
        return;
    }
    if (!store__db_usable(db)) {
        atomic_store(&srv->readers_up, false);
        store__op_unavailable(srv, op, "db_unavailable");
        return;
    }
    atomic_store(&srv->readers_up, true);
    int64_t now = store_now_ms();
    if (op->deadline_ms > 0 && now >= op->deadline_ms) {
        rpc_status_set(&op->st, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline_exceeded",
                       "deadline passed while queued");
        store_op_finish(op);
        return;
    }
    int64_t deadline = op->deadline_ms > 0 ? op->deadline_ms : now + 30000;
    PGresult *res;
    metric_add(srv->m.read_ops, 1);
    if (store_db_run_one(db, op, deadline, &res) != STORE_OK) {
        /* A read is safe to run again: once, on a fresh connection. */
        store_db_drop(db, db->errstr);
        if (store_db_ensure(db) != STORE_OK ||
            store_db_run_one(db, op, deadline, &res) != STORE_OK) {
            store_db_drop(db, db->errstr);
            atomic_store(&srv->readers_up, false);
            store__op_unavailable(srv, op, "db_unavailable");
            return;
        }
    }
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        store_op_fail_pg(op, res, db->pg);
        PQclear(res);
        store_op_finish(op);
        return;
    }
    store_next next = op->step(op, res);
    PQclear(res);
    store_submit(srv, op, next);
}

static void store__reader_tried(store_db *db, int rc)
{
    if (rc == STORE_OK)
        atomic_store(&((store_server *)db->owner)->readers_up, true);
}

void *store_reader_main(void *arg)
{
    store_db *db = arg;
    store_server *srv = db->owner;
    store_queue *q = &srv->readq;

    if (store_db_ensure(db) != STORE_OK)
        atomic_store(&srv->readers_up, false);
    for (;;) {
        pthread_mutex_lock(&q->mu);
        store_db_wait_work(db, q, store__reader_tried);
        store_op *op = store_queue_pop_locked(q);
        pthread_mutex_unlock(&q->mu);
        if (!op)
            break; /* stopping and drained */
        store__run_read(srv, db, op);
    }
    return NULL;
}

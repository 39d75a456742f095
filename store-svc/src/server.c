/*
 * server.c — the store server context: metrics, the writer thread, the
 * reader pool, and store_submit, the one place an op enters a queue.
 */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "store.h"

static const double store__batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};

void store_metrics_init(store_metrics *m, metrics_registry *r)
{
    m->batches = metrics_counter(r, "store_batches_total", NULL,
                                 "Write transactions run by the batcher (one per batch)");
    m->batch_ops =
        metrics_counter(r, "store_batch_ops_total", NULL, "Write operations run by the batcher");
    m->batch_size = metrics_histogram(r, "store_batch_size", NULL, "Write operations per batch",
                                      store__batch_bounds,
                                      sizeof(store__batch_bounds) / sizeof(store__batch_bounds[0]));
    m->commit_seconds = metrics_histogram(
        r, "store_commit_seconds", NULL,
        "From sending a batch's COMMIT to its result (the durable WAL flush), per batch",
        metrics_latency_bounds, metrics_latency_bounds_count);
    m->tx = metrics_counter(r, "store_tx_total", NULL,
                            "Write transactions sent to Postgres, retries included");
    m->retries = metrics_counter(r, "store_batch_retries_total", NULL,
                                 "Batches that failed and were retried op by op");
    m->reconnects = metrics_counter(r, "store_db_reconnects_total", NULL,
                                    "Postgres connections re-established after a loss");
    m->db_up = metrics_gauge(r, "store_db_up", NULL, "1 while the writer's connection is up");
    m->read_ops =
        metrics_counter(r, "store_read_ops_total", NULL, "Read operations run by the reader pool");
    m->kdf_runs = metrics_counter(r, "store_kdf_runs_total", NULL,
                                  "Password KDF runs (Register, Login, and Login's dummy run)");
    m->kdf_unknown = metrics_counter(r, "store_kdf_unknown_handle_total", NULL,
                                     "Dummy KDF runs for Logins of unknown handles");
    m->failed_unavailable = metrics_counter(r, "store_ops_unavailable_total", NULL,
                                            "Operations failed UNAVAILABLE (database down)");
    /* Saturation: how long batches actually wait, how much waits behind
     * the writer and the readers, and which connections are up. */
    m->batch_window = metrics_histogram(
        r, "store_batch_window_seconds", NULL,
        "From a batch's first operation arriving to its COMMIT being sent (the window as it ran)",
        metrics_latency_bounds, metrics_latency_bounds_count);
    const char *depth_help = "Operations queued for the writer (batcher) or the reader pool";
    m->write_depth = metrics_gauge(r, "store_queue_depth", "queue=\"write\"", depth_help);
    m->read_depth = metrics_gauge(r, "store_queue_depth", "queue=\"read\"", depth_help);
    const char *conns_help = STORE_DB_CONNS_HELP;
    m->writer_conns_up = metrics_gauge(r, "store_db_connections_up", "role=\"writer\"", conns_help);
    m->reader_conns_up = metrics_gauge(r, "store_db_connections_up", "role=\"reader\"", conns_help);
}

static void store__fail_unavailable(store_server *srv, store_op *op, const char *reason)
{
    metric_add(srv->m.failed_unavailable, 1);
    rpc_status_set(&op->st, GRPC_STATUS_UNAVAILABLE, reason, "%s",
                   strcmp(reason, "db_unavailable") == 0 ? "the database is unavailable"
                                                         : "store-svc is shutting down");
    op->reply = NULL;
    store_op_finish(op);
}

void store_submit(store_server *srv, store_op *op, store_next where)
{
    op->srv = srv;
    if (where == STORE_NEXT_DONE) {
        store_op_finish(op);
        return;
    }
    bool write = where == STORE_NEXT_WRITE;
    /* A database known to be down fails the call now instead of letting it
     * wait for its deadline; the owning thread keeps reconnecting. Local
     * steps (password hashing) need no connection. */
    if (op->stmt && !atomic_load(write ? &srv->writer_up : &srv->readers_up)) {
        store__fail_unavailable(srv, op, "db_unavailable");
        return;
    }
    if (!store_queue_push(write ? &srv->writeq : &srv->readq, op))
        store__fail_unavailable(srv, op, "shutting_down");
}

/* Used by the threads for ops they cannot run. */
void store__op_unavailable(store_server *srv, store_op *op, const char *reason)
{
    store__fail_unavailable(srv, op, reason);
}

/* Stops and joins what store_server_start got going: the first `nreaders`
 * reader threads and, when `writer` is set, the writer; then frees what it
 * allocated. The one teardown for both a failed start and a normal stop, so
 * a failure half-way never frees memory a running thread still uses. */
static void store__teardown(store_server *srv, int nreaders, bool writer)
{
    store_queue *qs[2] = {&srv->writeq, &srv->readq};
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&qs[i]->mu);
        qs[i]->stopping = true;
        pthread_cond_broadcast(&qs[i]->cv);
        pthread_mutex_unlock(&qs[i]->mu);
    }
    /* Readers first: a reader may still hand an op to the writer. */
    for (int i = 0; i < nreaders; i++)
        pthread_join(srv->readers[i], NULL);
    if (writer)
        pthread_join(srv->writer, NULL);
    store_db_close(&srv->writer_db);
    for (int i = 0; srv->reader_dbs && i < srv->nreaders; i++) {
        store_db_close(&srv->reader_dbs[i]);
        free((char *)srv->reader_dbs[i].label);
    }
    free(srv->readers);
    free(srv->reader_dbs);
    srv->readers = NULL;
    srv->reader_dbs = NULL;
    store_queue_destroy(&srv->writeq);
    store_queue_destroy(&srv->readq);
    if (srv->own_registry)
        metrics_registry_destroy(srv->own_registry);
    srv->own_registry = NULL;
}

int store_server_start(store_server *srv, const store_config *cfg, metrics_registry *r)
{
    memset(srv, 0, sizeof(*srv));
    srv->cfg = *cfg;
    /* The dummy hash first: nothing is set up yet that a failure would
     * have to undo. */
    unsigned char raw[24];
    char pw[2 * sizeof raw + 1];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return STORE_ERROR;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(pw + 2 * i, 3, "%02x", raw[i]);
    if (store_password_hash(pw, cfg->kdf_iterations > 0 ? cfg->kdf_iterations : 1, srv->dummy_hash,
                            sizeof srv->dummy_hash) != STORE_OK)
        return STORE_ERROR;
    if (!r) {
        srv->own_registry = metrics_registry_create();
        r = srv->own_registry;
    }
    store_metrics_init(&srv->m, r);
    store_queue_init(&srv->writeq, cfg->batch_max);
    store_queue_init(&srv->readq, 0);
    srv->writeq.depth = srv->m.write_depth;
    srv->readq.depth = srv->m.read_depth;
    atomic_store(&srv->writer_up, true);
    atomic_store(&srv->readers_up, true);

    store_db_init(&srv->writer_db, srv->cfg.pg, "writer", true, srv->m.reconnects);
    srv->writer_db.owner = srv;
    srv->writer_db.up = srv->m.writer_conns_up;
    srv->nreaders = srv->cfg.read_pool;
    srv->readers = calloc((size_t)srv->nreaders, sizeof(*srv->readers));
    srv->reader_dbs = calloc((size_t)srv->nreaders, sizeof(*srv->reader_dbs));
    bool writer = false;
    int started = 0;
    if (!srv->readers || !srv->reader_dbs)
        goto fail;
    for (int i = 0; i < srv->nreaders; i++) {
        char label[24];
        snprintf(label, sizeof label, "reader-%d", i);
        char *owned = strdup(label); /* freed in store__teardown */
        if (!owned)
            goto fail;
        store_db_init(&srv->reader_dbs[i], srv->cfg.pg, owned, false, srv->m.reconnects);
        srv->reader_dbs[i].owner = srv;
        srv->reader_dbs[i].up = srv->m.reader_conns_up;
    }
    if (pthread_create(&srv->writer, NULL, store_writer_main, srv) != 0)
        goto fail;
    writer = true;
    for (; started < srv->nreaders; started++)
        if (pthread_create(&srv->readers[started], NULL, store_reader_main,
                           &srv->reader_dbs[started]) != 0)
            goto fail;
    srv->started = true;
    return STORE_OK;
fail:
    log_error("store-svc: could not start its %s", writer ? "reader threads" : "writer or memory");
    store__teardown(srv, started, writer);
    return STORE_ERROR;
}

void store_server_stop(store_server *srv)
{
    if (!srv->started)
        return;
    store__teardown(srv, srv->nreaders, true);
    srv->started = false;
}

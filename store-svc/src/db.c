/*
 * db.c — one Postgres connection owned by one thread: connect with timeouts,
 * prepare every statement, reconnect with backoff (100 ms doubling to 5 s),
 * and wait for results with a deadline by polling the socket, so a dead or
 * hung server turns into STORE_ECONN instead of a hang.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "rpc/log.h"
#include "store.h"

#define STORE__BACKOFF_MIN_MS 100
#define STORE__BACKOFF_MAX_MS 5000
#define STORE__PREPARE_TIMEOUT_MS 10000

PGconn *store_db_connect_plain(const char *conninfo, char *err, size_t errlen)
{
    /* Later keywords override earlier ones, and dbname is expanded as a
     * conninfo string: the operator's --pg wins over these defaults. */
    const char *keys[] = {
        "connect_timeout",     "application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "dbname",     NULL};
    const char *vals[] = {"2", "store-svc", "1", "10", "2", "3", conninfo, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (!pg) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (PQstatus(pg) != CONNECTION_OK) {
        snprintf(err, errlen, "%s", PQerrorMessage(pg));
        for (char *c = err; *c; c++)
            if (*c == '\n' || *c == '\t')
                *c = ' ';
            else if (*c == '"')
                *c = '\'';
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

void store_db_init(store_db *db, const char *conninfo, const char *label, bool pipeline,
                   metric *reconnects)
{
    memset(db, 0, sizeof(*db));
    db->conninfo = conninfo;
    db->label = label;
    db->pipeline = pipeline;
    db->backoff_ms = STORE__BACKOFF_MIN_MS;
    db->reconnects = reconnects;
}

bool store_db_up(const store_db *db)
{
    return db->pg != NULL;
}

void store_db_close(store_db *db)
{
    if (db->pg) {
        PQfinish(db->pg);
        if (db->up)
            metric_add(db->up, -1);
    }
    db->pg = NULL;
}

void store_db_drop(store_db *db, const char *why)
{
    if (!db->pg)
        return;
    char clean[256];
    snprintf(clean, sizeof(clean), "%s", why);
    for (char *c = clean; *c; c++)
        if (*c == '\n' || *c == '\t' || *c == '"')
            *c = ' ';
    log_warn("db_down", "conn=%s why=\"%s\"", db->label, clean);
    store_db_close(db);
    db->next_try_ms = store_now_ms(); /* the first retry is immediate */
    db->backoff_ms = STORE__BACKOFF_MIN_MS;
}

int store_db_next_result(store_db *db, int64_t deadline_ms, PGresult **out)
{
    PGconn *pg = db->pg;
    *out = NULL;
    if (!pg)
        return STORE_ECONN;
    for (;;) {
        int f = PQflush(pg);
        if (f < 0) {
            snprintf(db->errstr, sizeof(db->errstr), "flush: %s", PQerrorMessage(pg));
            return STORE_ECONN;
        }
        if (f == 0 && !PQisBusy(pg)) {
            PGresult *r = PQgetResult(pg);
            if (PQstatus(pg) == CONNECTION_BAD) {
                snprintf(db->errstr, sizeof(db->errstr), "%s", PQerrorMessage(pg));
                PQclear(r);
                return STORE_ECONN;
            }
            *out = r;
            return STORE_OK;
        }
        int64_t left = deadline_ms - store_now_ms();
        if (left <= 0) {
            snprintf(db->errstr, sizeof(db->errstr), "timed out waiting for Postgres");
            return STORE_ECONN;
        }
        struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN | (f == 1 ? POLLOUT : 0)};
        int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR) {
            snprintf(db->errstr, sizeof(db->errstr), "poll: %s", strerror(errno));
            return STORE_ECONN;
        }
        if (n > 0 && (pfd.revents & (POLLIN | POLLERR | POLLHUP))) {
            if (!PQconsumeInput(pg)) {
                snprintf(db->errstr, sizeof(db->errstr), "%s", PQerrorMessage(pg));
                return STORE_ECONN;
            }
        }
    }
}

/* Reads results until the pipeline's sync marker (pipeline mode) or the end
 * of the current query (otherwise), clearing them. */
static int store__db_drain(store_db *db, int64_t deadline_ms)
{
    for (;;) {
        PGresult *r;
        if (store_db_next_result(db, deadline_ms, &r) != STORE_OK)
            return STORE_ECONN;
        if (!r) {
            if (!db->pipeline)
                return STORE_OK;
            continue;
        }
        ExecStatusType t = PQresultStatus(r);
        PQclear(r);
        if (t == PGRES_PIPELINE_SYNC)
            return STORE_OK;
    }
}

int store_db_run_one(store_db *db, const store_op *op, int64_t deadline_ms, PGresult **out)
{
    *out = NULL;
    if (!db->pg)
        return STORE_ECONN;
    if (!PQsendQueryPrepared(db->pg, op->stmt, op->nparams, op->params, op->lengths, op->formats,
                             0) ||
        (db->pipeline && !PQpipelineSync(db->pg))) {
        snprintf(db->errstr, sizeof(db->errstr), "send: %s", PQerrorMessage(db->pg));
        return STORE_ECONN;
    }
    PGresult *r;
    if (store_db_next_result(db, deadline_ms, &r) != STORE_OK)
        return STORE_ECONN;
    if (!r) {
        snprintf(db->errstr, sizeof(db->errstr), "no result");
        return STORE_ECONN;
    }
    if (store__db_drain(db, deadline_ms) != STORE_OK) {
        PQclear(r);
        return STORE_ECONN;
    }
    *out = r;
    return STORE_OK;
}

/* Prepares every statement in one round-trip (pipeline), so a reconnect
 * costs one connect plus one exchange. */
static int store__db_prepare(store_db *db)
{
    PGconn *pg = db->pg;
    int64_t deadline = store_now_ms() + STORE__PREPARE_TIMEOUT_MS;
    int n = 0;
    if (!PQenterPipelineMode(pg))
        goto fail;
    for (const store_stmt *s = store_statements; s->name; s++, n++)
        if (!PQsendPrepare(pg, s->name, s->sql, s->nparams, NULL))
            goto fail;
    if (!PQpipelineSync(pg))
        goto fail;
    for (int i = 0; i < n; i++) {
        PGresult *r;
        if (store_db_next_result(db, deadline, &r) != STORE_OK || !r)
            goto fail;
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            snprintf(db->errstr, sizeof(db->errstr), "prepare %s: %s", store_statements[i].name,
                     PQresultErrorMessage(r));
            PQclear(r);
            store__db_drain(db, deadline);
            return STORE_ERROR;
        }
        PQclear(r);
        if (store_db_next_result(db, deadline, &r) != STORE_OK) /* the NULL after it */
            goto fail;
        PQclear(r);
    }
    if (store__db_drain(db, deadline) != STORE_OK)
        goto fail;
    if (!db->pipeline && !PQexitPipelineMode(pg))
        goto fail;
    return STORE_OK;
fail:
    if (!db->errstr[0])
        snprintf(db->errstr, sizeof(db->errstr), "prepare: %s", PQerrorMessage(pg));
    return STORE_ERROR;
}

void store_db_wait_work(store_db *db, store_queue *q, void (*after_try)(store_db *db, int rc))
{
    while (!q->head && !q->stopping) {
        if (store_db_up(db)) {
            store_queue_wait(q, -1);
            continue;
        }
        /* Down: sleep until the next reconnect attempt. */
        if (db->next_try_ms > store_now_ms())
            store_queue_wait(q, db->next_try_ms);
        pthread_mutex_unlock(&q->mu);
        after_try(db, store_db_ensure(db));
        pthread_mutex_lock(&q->mu);
    }
}

int store_db_ensure(store_db *db)
{
    if (db->pg)
        return STORE_OK;
    int64_t now = store_now_ms();
    if (now < db->next_try_ms)
        return STORE_ECONN;
    char err[256];
    db->errstr[0] = '\0';
    db->pg = store_db_connect_plain(db->conninfo, err, sizeof(err));
    if (db->pg && PQsetnonblocking(db->pg, 1) == 0 && store__db_prepare(db) == STORE_OK) {
        log_info("db_up", "conn=%s reconnect=%d", db->label, db->connected_once);
        if (db->reconnects && db->connected_once)
            metric_add(db->reconnects, 1);
        db->connected_once = true;
        db->backoff_ms = STORE__BACKOFF_MIN_MS;
        if (db->up)
            metric_add(db->up, 1);
        return STORE_OK;
    }
    if (db->pg) {
        snprintf(err, sizeof(err), "%s", db->errstr[0] ? db->errstr : PQerrorMessage(db->pg));
        PQfinish(db->pg);
        db->pg = NULL;
    }
    log_warn("db_connect_failed", "conn=%s retry_ms=%d err=\"%s\"", db->label, db->backoff_ms, err);
    db->next_try_ms = now + db->backoff_ms;
    db->backoff_ms =
        db->backoff_ms * 2 > STORE__BACKOFF_MAX_MS ? STORE__BACKOFF_MAX_MS : db->backoff_ms * 2;
    return STORE_ECONN;
}

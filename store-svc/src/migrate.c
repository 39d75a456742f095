/*
 * migrate.c — applies the SQL migrations embedded at build time
 * (migrations/NNNN_name.sql -> store_migrations[]) in version order, each in
 * its own transaction together with its schema_migrations row. A session
 * advisory lock serializes concurrent store-svc instances: the second one
 * waits, then finds nothing left to do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "store.h"

/* Arbitrary, fixed: "store-svc migrations". */
#define STORE__MIGRATE_LOCK_KEY "7201000001"

static int store__exec(PGconn *pg, const char *sql, char *err, size_t errlen)
{
    PGresult *r = PQexec(pg, sql);
    ExecStatusType t = PQresultStatus(r);
    if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK) {
        snprintf(err, errlen, "%s", PQresultErrorMessage(r));
        PQclear(r);
        return STORE_ERROR;
    }
    PQclear(r);
    return STORE_OK;
}

static int store__applied(PGconn *pg, int version, int *yes, char *err, size_t errlen)
{
    char v[16];
    snprintf(v, sizeof(v), "%d", version);
    const char *params[1] = {v};
    PGresult *r = PQexecParams(pg, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, NULL,
                               params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        snprintf(err, errlen, "%s", PQresultErrorMessage(r));
        PQclear(r);
        return STORE_ERROR;
    }
    *yes = PQntuples(r) > 0;
    PQclear(r);
    return STORE_OK;
}

/* Postgres NOTICEs ("already exists, skipping") are expected here. */
static void store__quiet_notice(void *arg, const char *msg)
{
    log_debug("pg_notice", "msg=\"%.*s\"", (int)strcspn(msg, "\n"), msg);
}

/* Fills accounts.handle_folded where it is NULL (0002_handle_folded.sql
 * explains who has none). Oldest first; a row whose folded form an older
 * account holds keeps NULL (the unique index refuses it) and still logs in
 * by its exact handle. Runs under the migration lock, one autocommit UPDATE
 * per row: usually there are none. */
static int store__fold_handles(PGconn *pg, char *err, size_t errlen)
{
    PGresult *r = PQexec(pg, "SELECT id, handle FROM accounts WHERE handle_folded IS NULL "
                             "ORDER BY id");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        snprintf(err, errlen, "%s", PQresultErrorMessage(r));
        PQclear(r);
        return STORE_ERROR;
    }
    int folded = 0, kept = 0, rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        char f[STORE_HANDLE_BYTES];
        if (store_handle_fold(PQgetvalue(r, i, 1), f, sizeof f) != 0) {
            kept++;
            continue;
        }
        const char *params[2] = {PQgetvalue(r, i, 0), f};
        PGresult *u = PQexecParams(pg, "UPDATE accounts SET handle_folded = $2 WHERE id = $1", 2,
                                   NULL, params, NULL, NULL, 0);
        if (PQresultStatus(u) == PGRES_COMMAND_OK) {
            folded++;
        } else {
            const char *state = PQresultErrorField(u, PG_DIAG_SQLSTATE);
            if (!state || strcmp(state, "23505") != 0) {
                snprintf(err, errlen, "folding handles: %s", PQresultErrorMessage(u));
                PQclear(u);
                PQclear(r);
                return STORE_ERROR;
            }
            log_warn("handle_fold_collision", "account=%s folded=\"%s\"", params[0], f);
            kept++;
        }
        PQclear(u);
    }
    PQclear(r);
    if (rows > 0)
        log_info("handles_folded", "folded=%d unfolded=%d", folded, kept);
    return STORE_OK;
}

int store_migrate(PGconn *pg, int *applied, char *err, size_t errlen)
{
    int count = 0, locked = 0;
    char *sql = NULL;
    PQsetNoticeProcessor(pg, store__quiet_notice, NULL);
    if (store__exec(pg, "SELECT pg_advisory_lock(" STORE__MIGRATE_LOCK_KEY ")", err, errlen))
        goto fail;
    locked = 1;
    if (store__exec(pg,
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version int PRIMARY KEY, name text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())",
                    err, errlen))
        goto fail;
    for (size_t i = 0; i < store_migrations_count; i++) {
        const store_migration *m = &store_migrations[i];
        int done;
        if (store__applied(pg, m->version, &done, err, errlen))
            goto fail;
        if (done)
            continue;
        /* The embedded bytes are not NUL-terminated. */
        sql = malloc(m->len + 1);
        if (!sql) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        memcpy(sql, m->sql, m->len);
        sql[m->len] = '\0';
        if (store__exec(pg, "BEGIN", err, errlen))
            goto fail;
        if (store__exec(pg, sql, err, errlen)) {
            char why[256];
            snprintf(why, sizeof(why), "%s", err);
            snprintf(err, errlen, "migration %s: %s", m->name, why);
            store__exec(pg, "ROLLBACK", why, sizeof(why));
            goto fail;
        }
        char v[16];
        snprintf(v, sizeof(v), "%d", m->version);
        const char *params[2] = {v, m->name};
        PGresult *r =
            PQexecParams(pg, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", 2,
                         NULL, params, NULL, NULL, 0);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            snprintf(err, errlen, "%s", PQresultErrorMessage(r));
        PQclear(r);
        if (!ok || store__exec(pg, "COMMIT", err, errlen)) {
            char why[256];
            store__exec(pg, "ROLLBACK", why, sizeof(why));
            goto fail;
        }
        free(sql);
        sql = NULL;
        log_info("migration_applied", "version=%d name=%s", m->version, m->name);
        count++;
    }
    if (store__fold_handles(pg, err, errlen))
        goto fail;
    store__exec(pg, "SELECT pg_advisory_unlock(" STORE__MIGRATE_LOCK_KEY ")", err, errlen);
    if (applied)
        *applied = count;
    return STORE_OK;
fail:
    free(sql);
    if (locked) {
        char ignore[64];
        store__exec(pg, "SELECT pg_advisory_unlock(" STORE__MIGRATE_LOCK_KEY ")", ignore,
                    sizeof(ignore));
    }
    return STORE_ERROR;
}

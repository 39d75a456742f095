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

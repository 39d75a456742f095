/*
 * main.c — store-svc: `store-svc [flags]` serves the Store API;
 * `store-svc migrate [flags]` applies the schema migrations and exits.
 * Migrations are also applied at every start, so a fresh database works.
 */
#include <stdio.h>
#include <string.h>

#include "rpc/cfg.h"
#include "rpc/log.h"
#include "rpc/rpc.h"
#include "store.h"

int store_handlers_register(rpc_server *rs, store_server *srv);

static int store__migrate(const store_config *cfg)
{
    char err[512];
    int applied = 0;
    /* Migrations run as the schema owner, on a connection of their own that
     * is closed before serving: the long-lived connections hold the
     * application role, which cannot change the schema. */
    PGconn *pg =
        store_db_connect_plain(cfg->pg_migrate[0] ? cfg->pg_migrate : cfg->pg, err, sizeof(err));
    if (!pg) {
        log_error("migrate_failed", "err=\"%s\"", err);
        return -1;
    }
    int rc = store_migrate(pg, &applied, err, sizeof(err));
    PQfinish(pg);
    if (rc != STORE_OK) {
        log_error("migrate_failed", "err=\"%s\"", err);
        return -1;
    }
    log_info("migrate_done", "applied=%d known=%zu", applied, store_migrations_count);
    return 0;
}

int main(int argc, char **argv)
{
    static store_config cfg; /* static: a few KB, lives for the process */
    static store_server srv;
    char err[512];
    int pos[4], npos = 4;

    rpc_init();
    log_set_service("store");
    int rc = store_config_load(&cfg, argc, argv, 1, pos, &npos, err, sizeof(err));
    if (rc == CFG_HELP)
        return 0;
    if (rc != CFG_OK) {
        fprintf(stderr, "store-svc: %s\n", err);
        return 2;
    }
    bool migrate_only = false;
    for (int i = 0; i < npos; i++) {
        if (strcmp(argv[pos[i]], "migrate") == 0) {
            migrate_only = true;
        } else {
            fprintf(stderr,
                    "store-svc: unknown command '%s' (usage: store-svc [migrate] [flags])\n",
                    argv[pos[i]]);
            return 2;
        }
    }
    /* Refuse to start without our identity before touching the database. */
    if (!migrate_only && rpc_identity_setup(&cfg.rpc, "store-svc", true, err, sizeof(err)) != 0) {
        fprintf(stderr, "store-svc: %s\n", err);
        return 2;
    }
    if (store__migrate(&cfg) != 0)
        return 1;
    if (migrate_only)
        return 0;

    rpc_server *rs = rpc_server_create(&cfg.rpc, "store", err, sizeof(err));
    if (!rs) {
        log_error("start_failed", "err=\"%s\"", err);
        return 1;
    }
    if (store_server_start(&srv, &cfg, rpc_server_metrics(rs)) != STORE_OK ||
        store_handlers_register(rs, &srv) != 0) {
        log_error("start_failed", "err=\"could not start the store\"");
        return 1;
    }
    store_relay *relay = store_relay_start(&srv, rpc_server_metrics(rs));
    if (!relay) {
        log_error("start_failed", "err=\"could not start the event relay\"");
        store_server_stop(&srv);
        return 1;
    }
    int port = rpc_server_start(rs, err, sizeof(err));
    if (port == 0) {
        log_error("start_failed", "err=\"%s\"", err);
        store_server_stop(&srv);
        store_relay_stop(relay);
        return 1;
    }
    log_info("listening", "port=%d metrics=%s batch_window_us=%lld batch_max=%d read_pool=%d", port,
             cfg.rpc.metrics_listen, (long long)cfg.batch_window_us, cfg.batch_max, cfg.read_pool);
    rpc_server_wait(rs);
    /* In-flight calls are drained: now the threads can go. */
    store_server_stop(&srv);
    store_relay_stop(relay);
    rpc_server_destroy(rs);
    rpc_shutdown();
    log_info("stopped", "%s", "");
    return 0;
}

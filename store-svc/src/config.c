/*
 * config.c — store-svc's options: the shared server options plus the
 * Postgres and batching knobs. Every flag has a SCRABBLE_STORE_* twin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/cfg.h"
#include "rpc/log.h"
#include "store.h"

#define STORE_ENV_PREFIX "SCRABBLE_STORE_"

static const cfg_option store__options[] = {
    CFG_STR_OPT(store_config, log_level, "log-level", "info", "debug, info, warn, error or off"),
    CFG_STR_OPT(store_config, pg, "pg", "host=127.0.0.1 port=55432 dbname=scrabble user=scrabble",
                "libpq connection string of the Postgres store-svc owns (the application "
                "role: reads and writes rows, no DDL)"),
    CFG_STR_OPT(store_config, pg_migrate, "pg-migrate", "",
                "libpq connection string of the schema owner role, used by one connection "
                "at start to apply migrations and then closed (empty: --pg)"),
    /* In microseconds: the window needs sub-millisecond steps. */
    CFG_DURUS_OPT(store_config, batch_window_us, "batch-window", 0, 1000000, "2ms",
                  "how long a write transaction stays open for more writes, from its first "
                  "write's arrival (e.g. 2ms, 9.5ms, 9500us)"),
    CFG_INT_OPT(store_config, batch_max, "batch-max", 1, 4096, "256",
                "most writes in one transaction (1 turns batching off)"),
    CFG_INT_OPT(store_config, read_pool, "read-pool", 1, 64, "4",
                "reader threads, each with its own Postgres connection"),
    CFG_DURUS_OPT(store_config, session_ttl_us, "session-ttl", 1000, 3650LL * 86400 * 1000000,
                  "720h", "lifetime of a new session (e.g. 720h, 30d, 90m)"),
    /* 100k rounds cost ~30-40 ms of CPU per Register/Login here: logins are
     * rare (clients keep their token for the session TTL, the load driver
     * seeds sessions directly) and the work runs on the reader pool, never
     * on the batcher. Stored hashes carry their own count, so raising it
     * later does not invalidate old ones. */
    CFG_INT_OPT(store_config, kdf_iterations, "kdf-iterations", 10000, 10000000, "100000",
                "PBKDF2-HMAC-SHA256 rounds for new password hashes"),
    CFG_DURUS_OPT(store_config, invitation_ttl_us, "invitation-ttl", 1000000,
                  3650LL * 86400 * 1000000, "168h",
                  "an invitation still waiting for answers expires this long after Invite "
                  "(its seats get INVITATION_EXPIRED; e.g. 168h, 7d, 90s)"),
    /* Seeks: a lobby offer is short-lived by nature (a player waits for an
     * opponent now), and a few open ones per account are enough to seek in
     * several pools at once while keeping one account from filling the
     * lobby. docs/API.md, Seeks. */
    CFG_DURUS_OPT(store_config, seek_ttl_us, "seek-ttl", 1000000, 7LL * 86400 * 1000000, "1h",
                  "an unmatched seek expires this long after Seek (its owner gets "
                  "SEEK_EXPIRED); also the longest expires_in_seconds a client may ask"),
    CFG_INT_OPT(store_config, seek_max_open, "seek-max-open", 1, 100, "3",
                "open seeks one account may hold; one more fails RESOURCE_EXHAUSTED seek_limit"),
    CFG_STR_OPT(store_config, redis, "redis", "127.0.0.1:56379",
                "Redis the event relay publishes committed events to, as ACL user publisher "
                "(empty: no relay; events stay readable by Subscribe's replay)"),
    CFG_STR_OPT(store_config, redis_secrets, "redis-secrets", "var/secrets",
                "directory holding the Redis ACL password redis-publisher.pass (empty: no AUTH, "
                "for a Redis without ACLs)"),
    CFG_DUR_OPT(store_config, events_max_age_ms, "events-max-age", 60000, 20 * 86400000, "24h",
                "the event log keeps an account's events this long (a resume from older "
                "gets events_expired)"),
    CFG_INT_OPT(store_config, events_keep, "events-keep", 10, 1000000, "1000",
                "and at most this many events per account"),
    CFG_DUR_OPT(store_config, events_prune_ms, "events-prune-interval", 1000, 86400000, "1m",
                "how often the event log is pruned to those bounds"),
};

int store_config_load(store_config *cfg, int argc, char **argv, int first, int *positional,
                      int *npositional, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof(*cfg));
    rpc_server_config_defaults(&cfg->rpc, 7200, 9200);

    cfg_table tables[2] = {
        {rpc_server_cfg_options, rpc_server_cfg_options_count, &cfg->rpc},
        {store__options, sizeof(store__options) / sizeof(store__options[0]), cfg},
    };
    int rc = cfg_load(tables, 2, STORE_ENV_PREFIX, "store-svc", argc, argv, first, positional,
                      npositional, err, errlen);
    if (rc != CFG_OK)
        return rc;
    int lvl = log_level_parse(cfg->log_level);
    if (lvl < 0) {
        snprintf(err, errlen, "--log-level: '%s' is not one of debug, info, warn, error, off",
                 cfg->log_level);
        return CFG_ERROR;
    }
    log_threshold = lvl;
    return CFG_OK;
}

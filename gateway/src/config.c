/*
 * config.c — the gateway's option table (see config.h).
 */
#include "config.h"

#include "list.h"
#include "ratelimit.h"
#include "rpc/cfg.h"

#include <stdio.h>
#include <string.h>

#define GW_OPT_INT(field, name, min, max, def, help)                                               \
    CFG_INT_OPT(gw_config, field, name, min, max, def, help)
#define GW_OPT_DUR(field, name, min, max, def, help)                                               \
    CFG_DUR_OPT(gw_config, field, name, min, max, def, help)
#define GW_OPT_STR(field, name, def, help) CFG_STR_OPT(gw_config, field, name, def, help)

/* Rates are tokens per second per account; 0 turns a class's limit off.
 * ListGames (a database query per call) and CheckWord (the cheapest way to
 * mine the lexicon) are strict. */
static const cfg_option gw_options[] = {
    GW_OPT_STR(store, "store", "127.0.0.1:7200", "store-svc target host:port"),
    GW_OPT_STR(games, "games", "127.0.0.1:7100",
               "comma-separated game-svc targets; a game is owned by the rendezvous-hash winner"),
    GW_OPT_STR(redis, "redis", "127.0.0.1:56379", "Redis host:port for live events"),
    GW_OPT_STR(redis_secrets, "redis-secrets", "var/secrets",
               "directory holding the Redis ACL password redis-subscriber.pass (empty: no "
               "AUTH, for a Redis without ACLs)"),
    GW_OPT_DUR(auth_ttl_ms, "auth-ttl", 1000, 3600000, "30s",
               "how long a resolved token is trusted"),
    GW_OPT_DUR(
        auth_negative_ttl_ms, "auth-negative-ttl", 0, 600000, "2s",
        "how long a rejected token is remembered (saves store calls under forged-token floods)"),
    GW_OPT_DUR(auth_outage_grace_ms, "auth-outage-grace", 0, 86400000, "15m",
               "how long past --auth-ttl a session the gateway has seen stays valid while "
               "store-svc cannot answer (store or Postgres down); 0: off"),
    GW_OPT_INT(auth_cache_size, "auth-cache-size", 16, 10000000, "100000", "token cache entries"),
    GW_OPT_INT(rate[GW_RATE_READ], "rate-read", 0, 1000000, "50",
               "reads per second per account (0: unlimited)"),
    GW_OPT_INT(burst[GW_RATE_READ], "burst-read", 1, 1000000, "100", "read bucket size"),
    GW_OPT_INT(rate[GW_RATE_WRITE], "rate-write", 0, 1000000, "20",
               "writes per second per account"),
    GW_OPT_INT(burst[GW_RATE_WRITE], "burst-write", 1, 1000000, "40", "write bucket size"),
    GW_OPT_INT(rate[GW_RATE_LIST], "rate-list", 0, 1000000, "2",
               "ListGames calls per second per account"),
    GW_OPT_INT(burst[GW_RATE_LIST], "burst-list", 1, 1000000, "5", "ListGames bucket size"),
    GW_OPT_INT(rate[GW_RATE_LOOKUP], "rate-lookup", 0, 1000000, "2",
               "CheckWord calls per second per account"),
    GW_OPT_INT(burst[GW_RATE_LOOKUP], "burst-lookup", 1, 1000000, "10", "CheckWord bucket size"),
    GW_OPT_INT(ratelimit_accounts, "ratelimit-accounts", 64, 100000000, "1000000",
               "accounts the limiter tracks at once (idle ones are forgotten first)"),
    GW_OPT_INT(subscriber_queue, "subscriber-queue", 1, 100000, "256",
               "events queued per Subscribe stream before it is ended slow_consumer"),
    GW_OPT_INT(max_streams_per_account, "max-streams-per-account", 1, 1000, "16",
               "open Subscribe streams per account"),
    GW_OPT_INT(max_observers_per_game, "max-observers-per-game", 1, 100000, "500",
               "Watch streams of one game on this gateway (more: too_many_observers)"),
    GW_OPT_INT(max_watch_streams_per_account, "max-watch-streams-per-account", 1, 1000, "8",
               "open Watch streams per account on this gateway (more: rate_limited)"),
    GW_OPT_DUR(downstream_timeout_ms, "downstream-timeout", 10, 600000, "5s",
               "deadline of a downstream call (the client's own deadline wins when earlier)"),
    /* Login and Register are the only calls without a token: these
     * throttles stand where the per-account limiter cannot. */
    GW_OPT_INT(login_per_address, "login-per-address", 0, 1000000, "30",
               "Login attempts per minute per client address (0: unlimited)"),
    GW_OPT_INT(login_burst_per_address, "login-burst-per-address", 1, 1000000, "10",
               "Login bucket size per client address"),
    GW_OPT_INT(register_per_address, "register-per-address", 0, 1000000, "6",
               "Register calls per minute per client address (0: unlimited)"),
    GW_OPT_INT(register_burst_per_address, "register-burst-per-address", 1, 1000000, "5",
               "Register bucket size per client address"),
    GW_OPT_INT(login_per_handle, "login-per-handle", 0, 1000000, "10",
               "Login attempts per minute per handle (0: unlimited)"),
    GW_OPT_INT(login_burst_per_handle, "login-burst-per-handle", 1, 1000000, "5",
               "Login bucket size per handle"),
    GW_OPT_INT(register_per_handle, "register-per-handle", 0, 1000000, "6",
               "Register calls per minute per handle (0: unlimited)"),
    GW_OPT_INT(register_burst_per_handle, "register-burst-per-handle", 1, 1000000, "3",
               "Register bucket size per handle"),
    GW_OPT_INT(login_free_failures, "login-free-failures", 0, 1000, "3",
               "failed logins per handle before the backoff starts"),
    GW_OPT_DUR(login_backoff_base_ms, "login-backoff", 0, 3600000, "1s",
               "first backoff after the free failures; doubles with each failure (0: off)"),
    GW_OPT_DUR(login_backoff_max_ms, "login-backoff-max", 1000, 86400000, "5m",
               "longest backoff; a handle without failures this long starts over"),
    GW_OPT_INT(throttle_entries, "throttle-entries", 1024, 10000000, "65536",
               "slots of each throttle table (addresses, handles; 56 bytes each)"),
    /* Behind a balancer every peer is the balancer: only peers in these
     * CIDRs may name the client with x-real-ip (proxy.h). */
    GW_OPT_STR(trusted_proxies, "trusted-proxies", "",
               "comma list of up to 16 IPv4/IPv6 CIDRs (a bare address is /32 or /128) whose "
               "x-real-ip header names the client for the per-address throttles (empty: trust "
               "nobody)"),
    GW_OPT_STR(log_level, "log-level", "info", "debug | info | warn | error | off"),
};

int gw_config_load(gw_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof(*cfg));
    rpc_server_config_defaults(&cfg->rpc, 7000, 9000);
    /* The public port keeps two workers, unlike the internal services: with
     * one, a single connection's rapid-reset flood keeps the only poller
     * thread busy and well-behaved clients time out behind it
     * (integration.edge-abuse.stream_abuse); the second thread serves them.
     * Under human-paced players two cost about 3 switches and 7 syscalls per
     * call more than one (issue 18, docs/REPORT.md): an operator whose
     * gateway sits behind a balancer that absorbs such floods may choose
     * --workers=1. */
    cfg->rpc.workers = 2;
    const cfg_table tables[] = {
        {rpc_server_cfg_options, rpc_server_cfg_options_count, &cfg->rpc},
        {gw_options, sizeof(gw_options) / sizeof(gw_options[0]), cfg},
    };
    int rc =
        cfg_load(tables, 2, "SCRABBLE_GATEWAY_", "gateway", argc, argv, 1, NULL, NULL, err, errlen);
    if (rc == CFG_HELP)
        return GW_CFG_HELP;
    if (rc != CFG_OK)
        return GW_CFG_ERROR;
    char names[GW_MAX_GAME_INSTANCES][128];
    if (gw_config_game_targets(cfg, names, GW_MAX_GAME_INSTANCES) <= 0) {
        snprintf(err, errlen, "--games: 1..%d comma-separated host:port targets expected",
                 GW_MAX_GAME_INSTANCES);
        return GW_CFG_ERROR;
    }
    if (gw_proxy_parse(cfg->trusted_proxies, &cfg->proxies, err, errlen) != 0)
        return GW_CFG_ERROR;
    return GW_CFG_OK;
}

int gw_config_game_targets(const gw_config *cfg, char names[][128], int max)
{
    int n = 0;
    const char *cursor = cfg->games;
    while (cursor) {
        size_t len;
        const char *p = gw_list_item(&cursor, &len);
        if (len == 0 || len >= 128 || n >= max)
            return -1;
        memcpy(names[n], p, len);
        names[n][len] = '\0';
        n++;
    }
    return n;
}

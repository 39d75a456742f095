/*
 * config.h — the gateway's settings: the shared server options (listen,
 * workers, HTTP/2 streams per connection, keepalive, message size, ...)
 * plus its own, all from one declarative table with SCRABBLE_GATEWAY_*
 * environment twins.
 */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include "proxy.h"
#include "rpc/rpc.h"

#define GW_MAX_GAME_INSTANCES 32

typedef struct gw_config {
    rpc_server_config rpc;
    char store[256];          /* store-svc target */
    char games[2048];         /* comma-separated game-svc targets */
    char redis[256];          /* host:port */
    char redis_secrets[512];  /* dir of redis-<user>.pass; "" = no AUTH */
    int auth_ttl_ms;          /* positive cache entries live this long */
    int auth_negative_ttl_ms; /* rejected tokens are remembered this long */
    int auth_outage_grace_ms; /* seen sessions outlive the TTL this long in a store outage */
    int auth_cache_size;      /* entries */
    int rate[4], burst[4];    /* by gw_rate_class */
    int ratelimit_accounts;   /* accounts tracked by the limiter */
    int subscriber_queue;     /* events queued per Subscribe stream */
    int max_streams_per_account;
    int max_observers_per_game;        /* Watch streams of one game on this gateway */
    int max_watch_streams_per_account; /* Watch streams of one account on this gateway */
    int downstream_timeout_ms;
    /* Throttles on authentication (per minute, bucket size). */
    int login_per_address, login_burst_per_address;
    int register_per_address, register_burst_per_address;
    int login_per_handle, login_burst_per_handle;
    int register_per_handle, register_burst_per_handle;
    int login_free_failures;
    int login_backoff_base_ms, login_backoff_max_ms;
    int throttle_entries;       /* slots per throttle table (addresses, handles) */
    char trusted_proxies[1024]; /* --trusted-proxies as given */
    gw_proxy_list proxies;      /* ... parsed: who may send x-real-ip */
    char log_level[16];
} gw_config;

enum { GW_CFG_OK = 0, GW_CFG_ERROR = -1, GW_CFG_HELP = 1 };

/* Fills cfg from defaults, SCRABBLE_GATEWAY_* and argv. Returns GW_CFG_OK,
 * GW_CFG_HELP (usage printed) or GW_CFG_ERROR (message in err). */
int gw_config_load(gw_config *cfg, int argc, char **argv, char *err, size_t errlen);

/* Splits cfg->games into at most `max` trimmed targets written into
 * names[i] (each 128 bytes). Returns the count, or -1 when an entry is
 * empty or too long or there are too many. */
int gw_config_game_targets(const gw_config *cfg, char names[][128], int max);

#endif

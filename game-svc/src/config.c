/*
 * config.c — game-svc's options (env prefix SCRABBLE_GAME_). The instance
 * number is read first because it picks the default ports (7100 + i for
 * gRPC, 9100 + i for metrics); the shared server table then overrides them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game_svc.h"
#include "rpc/cfg.h"

#ifndef GAME_DEFAULT_LEXICON_DIR
#define GAME_DEFAULT_LEXICON_DIR "share"
#endif

static const cfg_option config__options[] = {
    CFG_INT_OPT(game_config, instance, "instance", 0, 63, "0",
                "instance number; default ports are 7100+i (gRPC) and 9100+i (metrics)"),
    CFG_STR_OPT(game_config, store, "store", "127.0.0.1:7200", "store-svc address host:port"),
    CFG_STR_OPT(game_config, redis, "redis", "127.0.0.1:56379", "Redis address host:port (drafts)"),
    CFG_STR_OPT(game_config, redis_secrets, "redis-secrets", "var/secrets",
                "directory holding the Redis ACL password redis-drafts.pass (empty: no "
                "AUTH, for a Redis without ACLs)"),
    CFG_STR_OPT(game_config, lexicon_dir, "lexicon-dir", GAME_DEFAULT_LEXICON_DIR,
                "directory of lexicon files <name>.kwg"),
    CFG_STR_OPT(game_config, default_lexicon, "lexicon", "wamerican",
                "lexicon of games that name none"),
    CFG_INT_OPT(game_config, cache_mb, "cache-mb", 1, 1 << 20, "256",
                "memory budget of the live-game cache in MiB"),
    CFG_DUR_OPT(game_config, nudge_interval_ms, "nudge-interval", 0, 7 * 86400000, "1h",
                "least time between two nudges by one player in one game"),
    CFG_STR_OPT(game_config, log_level, "log-level", "info", "debug, info, warn, error or off"),
    CFG_DURUS_OPT(game_config, abandon_after_us, "abandon-after", 0, 3650LL * 86400 * 1000000,
                  "30d",
                  "an untimed game whose seat to move stays away this long ends, that seat "
                  "losing (END_REASON_ABANDONED); 0: never"),
    CFG_DUR_OPT(game_config, deadline_poll_ms, "deadline-poll", 50, 60000, "1s",
                "how often due deadlines (timeouts, warnings, invitation expiries) are claimed "
                "from store-svc"),
    CFG_INT_OPT(game_config, bot_threads, "bot-threads", 0, 64, "1",
                "threads choosing bot moves (off the gRPC workers); 0: this instance plays no "
                "bots (another instance must)"),
    CFG_INT_OPT(game_config, bot_queue, "bot-queue", 1, 4096, "64",
                "bot turns claimed and not yet committed, at most; the rest wait in the store"),
    CFG_DUR_OPT(game_config, bot_poll_ms, "bot-poll", 20, 60000, "200ms",
                "how often due bot turns are claimed from store-svc (a bot moves within about "
                "this plus its thinking time)"),
    CFG_DUR_OPT(game_config, bot_takeover_ms, "bot-takeover", 0, 600000, "5s",
                "a bot turn of a game another instance holds (it committed the move before) is "
                "taken by this one only after it has been due this long (that instance died or "
                "fell behind); the holder moves it at once"),
    CFG_STR_OPT(game_config, clock_offset_file, "clock-offset-file", "",
                "TESTS ONLY: a file whose number (ms) is added to the game clock, re-read at "
                "each deadline poll, so tests can move time forward; empty: off"),
};

/* --instance (flag or env) before anything else. */
static int config__instance(int argc, char **argv)
{
    const char *v = getenv("SCRABBLE_GAME_INSTANCE");
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--instance=", 11) == 0)
            v = argv[i] + 11;
        else if (strcmp(argv[i], "--instance") == 0 && i + 1 < argc)
            v = argv[i + 1];
    }
    int n = v ? atoi(v) : 0;
    return n >= 0 && n <= 63 ? n : 0;
}

int game_config_load(game_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    int inst = config__instance(argc, argv);
    rpc_server_config_defaults(&cfg->rpc, 7100 + inst, 9100 + inst);
    cfg_table tables[] = {
        {rpc_server_cfg_options, rpc_server_cfg_options_count, &cfg->rpc},
        {config__options, sizeof config__options / sizeof config__options[0], cfg},
    };
    return cfg_load(tables, 2, "SCRABBLE_GAME_", "game-svc", argc, argv, 1, NULL, NULL, err,
                    errlen);
}

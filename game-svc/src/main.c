/*
 * main.c — game-svc: the rules, the live-game cache and drafts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game_svc.h"
#include "handlers.h"
#include "rpc/cfg.h"
#include "rpc/log.h"
#include "rpc/redis.h"

int main(int argc, char **argv)
{
    static game_svc svc; /* the server context: the process's only mutable state */
    char err[256], rhost[128];
    int rport, rc = 1;
    rpc_server *server = NULL;

    rpc_init();
    log_set_service("game");
    int cr = game_config_load(&svc.cfg, argc, argv, err, sizeof err);
    if (cr == CFG_HELP)
        return 0;
    if (cr != CFG_OK) {
        fprintf(stderr, "game-svc: %s\n", err);
        return 2;
    }
    int lvl = log_level_parse(svc.cfg.log_level);
    if (lvl < 0) {
        fprintf(stderr, "game-svc: --log-level: unknown level %s\n", svc.cfg.log_level);
        return 2;
    }
    log_threshold = lvl;
    if (rpc_redis_parse_addr(svc.cfg.redis, rhost, sizeof rhost, &rport) != 0) {
        fprintf(stderr, "game-svc: --redis: expected host:port, got %s\n", svc.cfg.redis);
        return 2;
    }

    if (rpc_identity_setup(&svc.cfg.rpc, "game-svc", true, err, sizeof err) != 0) {
        fprintf(stderr, "game-svc: %s\n", err);
        return 2;
    }
    rpc_tls_config store_tls;
    rpc_identity_peer_tls(&svc.cfg.rpc, "store-svc", &store_tls);

    game_lexicons_init(&svc.lexicons, svc.cfg.lexicon_dir);
    if (!game_lexicons_get(&svc.lexicons, svc.cfg.default_lexicon)) {
        log_error("start_failed", "reason=lexicon dir=%s name=%s", svc.cfg.lexicon_dir,
                  svc.cfg.default_lexicon);
        goto out;
    }
    server = rpc_server_create(&svc.cfg.rpc, "game", err, sizeof err);
    if (!server) {
        log_error("start_failed", "err=\"%s\"", err);
        goto out;
    }
    metrics_registry *reg = rpc_server_metrics(server);
    svc.cache = game_cache_create((size_t)svc.cfg.cache_mb << 20);
    svc.drafts = game_drafts_start(svc.cfg.redis, svc.cfg.redis_secrets, reg);
    if (!svc.cache || !svc.drafts ||
        game_store_open(&svc.store, svc.cfg.store, &store_tls, reg) != 0) {
        log_error("start_failed", "reason=oom");
        goto out;
    }
    if (reg) {
        svc.m_evaluate =
            metrics_counter(reg, "game_evaluate_total", NULL, "Evaluate calls answered");
        svc.m_turns = metrics_counter(reg, "game_turns_committed_total", NULL, "Turns committed");
        svc.m_cache_entries =
            metrics_gauge(reg, "game_cache_entries", NULL, "Games resident in the cache");
        svc.m_cache_bytes =
            metrics_gauge(reg, "game_cache_bytes", NULL, "Bytes accounted to cached games");
        svc.m_cache_misses =
            metrics_counter(reg, "game_cache_misses_total", NULL, "Cold loads from store-svc");
        svc.m_evictions = metrics_counter(reg, "game_cache_evictions_total", NULL,
                                          "Games evicted from the cache to stay within --cache-mb");
        svc.m_timeouts = metrics_counter(reg, "game_timeouts_total", NULL,
                                         "Games this instance ended on time (timeout, abandoned)");
        svc.m_warnings =
            metrics_counter(reg, "game_time_warnings_total", NULL, "TIME_WARNING events sent");
        svc.m_invitations_expired = metrics_counter(reg, "game_invitations_expired_total", NULL,
                                                    "INVITATION_EXPIRED sweeps published");
        svc.m_clock_offset =
            metrics_gauge(reg, "game_clock_offset_seconds", NULL,
                          "seconds added to the game clock by --clock-offset-file (tests only; 0)");
        svc.m_ops_waiting = metrics_gauge(reg, "game_ops_waiting", NULL,
                                          "Calls queued behind a game's load, reload or commit "
                                          "in flight");
    }
    if (rpc_server_allow(server, &scrabble__v1__game__descriptor, game_allow) != 0 ||
        rpc_server_add_service(server, &scrabble__v1__game__descriptor, game_handlers, &svc) != 0) {
        log_error("start_failed", "reason=add_service");
        goto out;
    }
    int port = rpc_server_start(server, err, sizeof err);
    if (port == 0) {
        log_error("start_failed", "err=\"%s\"", err);
        goto out;
    }
    if (game_deadlines_start(&svc) != 0) {
        log_error("start_failed", "reason=deadline_poller");
        goto out;
    }
    if (game_bots_start(&svc, reg) != 0) {
        log_error("start_failed", "reason=bots");
        goto out;
    }
    log_info("started", "port=%d instance=%d store=%s redis=%s cache_mb=%d lexicon_dir=%s", port,
             svc.cfg.instance, svc.cfg.store, svc.cfg.redis, svc.cfg.cache_mb, svc.cfg.lexicon_dir);
    rpc_server_wait(server);
    log_info("stopped", "%s", "");
    rc = 0;
out:
    /* The store client first (its callbacks may still queue draft
     * deletions), then the drafts thread (it makes a last try at owed
     * deletes, counting in the server's metrics), and only then the
     * server, whose destroy frees those metrics: the other way round a
     * thread still counting at SIGTERM wrote to freed memory (seen under
     * ASan in integration.idempotency). The deadline poller goes first: it
     * dispatches operations that call the store. */
    game_bots_stop(&svc);
    game_deadlines_stop(&svc);
    game_store_close(&svc.store);
    game_drafts_stop(svc.drafts);
    if (server)
        rpc_server_destroy(server);
    game_cache_destroy(svc.cache);
    game_bots_free(&svc);
    game_lexicons_free(&svc.lexicons);
    rpc_shutdown();
    return rc;
}

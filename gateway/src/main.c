/*
 * main.c — the gateway process: configuration, the server context, the
 * long-lived downstream channels, the event threads, and an orderly
 * shutdown on SIGTERM/SIGINT.
 */
#include "config.h"
#include "events.h"
#include "gateway.h"
#include "route.h"
#include "rpc/log.h"
#include "subscribe.h"
#include "watch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A small watchdog: a channel whose backend went away stays idle until the
 * next call; asking idle or failed channels to connect every second means
 * the first call after a backend restart finds the channel ready. */
typedef struct gw_watchdog {
    gw_ctx *gw;
    pthread_t thread;
    atomic_bool stop;
    metric *ready[GW_MAX_GAME_INSTANCES + 1];
} gw_watchdog;

static void *gw_watchdog__main(void *arg)
{
    gw_watchdog *w = arg;
    gw_ctx *gw = w->gw;
    unsigned tick = 0;
    while (!atomic_load(&w->stop)) {
        for (int i = 0; i <= gw->ngames; i++) {
            rpc_channel *ch = i < gw->ngames ? gw->games[i] : gw->store;
            bool ready = rpc_channel_ready(ch);
            if (!ready)
                rpc_channel_connect(ch);
            metric_set(w->ready[i], ready);
        }
        /* The throttle tables never grow; these show how full they are. */
        metric_set(gw->m.throttle_entries[0], (int64_t)gw_throttle_count(gw->th_address));
        metric_set(gw->m.throttle_entries[1], (int64_t)gw_throttle_count(gw->th_handle));
        metric_set(gw->m.redis_subscribed, gw->events && gw_events_connected(gw->events));
        /* Saturation: how full the token cache is (a full one sends more
         * lookups to store-svc; counting walks the whole table, up to
         * 2.5M sets at the largest --auth-cache-size, so every 10 s), and
         * how far behind the event streams are (one at --subscriber-queue
         * is cut off as a slow consumer). */
        if (tick++ % 10 == 0)
            metric_set(gw->m.auth_entries, (int64_t)gw_authcache_count(gw->auth, gw_now_ms()));
        size_t queued, queued_max;
        gw_subs_queued(gw->subs, &queued, &queued_max);
        metric_set(gw->m.stream_queued, (int64_t)queued);
        metric_set(gw->m.stream_queued_max, (int64_t)queued_max);
        for (int t = 0; t < 20 && !atomic_load(&w->stop); t++) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void gw_metrics_init(gw_ctx *gw)
{
    metrics_registry *reg = rpc_server_metrics(gw->server);
    for (int c = 0; c < GW_RATE_CLASSES; c++) {
        char labels[64];
        snprintf(labels, sizeof labels, "class=\"%s\"", gw_rate_class_name((gw_rate_class)c));
        gw->m.rate_limited[c] = metrics_counter(reg, "gateway_rate_limited_total", labels,
                                                "Calls rejected by the per-account limiter");
    }
    gw->m.auth_hit = metrics_counter(reg, "gateway_auth_cache_hits_total", NULL,
                                     "Token lookups answered by the cache");
    gw->m.auth_miss = metrics_counter(reg, "gateway_auth_cache_misses_total", NULL,
                                      "Token lookups sent to store-svc");
    gw->m.auth_rejected =
        metrics_counter(reg, "gateway_auth_rejected_total", NULL, "Calls failed UNAUTHENTICATED");
    gw->m.auth_outage_served =
        metrics_counter(reg, "gateway_auth_outage_served_total", NULL,
                        "Calls let through on a cached session while store-svc could not answer");
    gw->m.forwarded =
        metrics_counter(reg, "gateway_forwarded_total", NULL, "Game calls forwarded to game-svc");
    gw->m.downstream_unavailable = metrics_counter(reg, "gateway_downstream_unavailable_total",
                                                   NULL, "Calls failed because a backend was down");
    gw->m.subscribers = metrics_gauge(reg, "gateway_subscribers", NULL, "Open Subscribe streams");
    gw->m.events_delivered = metrics_counter(reg, "gateway_events_delivered_total", NULL,
                                             "Events queued on Subscribe streams");
    gw->m.events_unrouted = metrics_counter(reg, "gateway_events_unrouted_total", NULL,
                                            "Events with no local subscriber");
    gw->m.slow_consumers = metrics_counter(reg, "gateway_slow_consumers_total", NULL,
                                           "Streams ended RESOURCE_EXHAUSTED slow_consumer");
    gw->m.events_replayed = metrics_counter(reg, "gateway_events_replayed_total", NULL,
                                            "Events read from the log and queued on streams "
                                            "(resume and catch-up)");
    gw->m.events_repeated = metrics_counter(reg, "gateway_events_repeated_total", NULL,
                                            "Live events dropped: the stream already had them");
    gw->m.catch_ups = metrics_counter(reg, "gateway_event_catch_ups_total", NULL,
                                      "Streams that read the log after the Redis subscription "
                                      "was (re)made");
    static const char *const methods[2] = {"login", "register"};
    static const char *const bys[GW_TH_BY_COUNT] = {"address", "handle", "backoff"};
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < GW_TH_BY_COUNT; b++) {
            if (k == 1 && b == GW_TH_BY_BACKOFF)
                continue; /* no backoff on Register */
            char labels[64];
            snprintf(labels, sizeof labels, "method=\"%s\",reason=\"%s\"", methods[k], bys[b]);
            gw->m.throttled[k][b] = metrics_counter(
                reg, "gateway_auth_throttled_total", labels,
                "Login/Register calls refused by a throttle, never sent downstream");
        }
    static const char *const sources[GW_ADDR_COUNT] = {"peer", "forwarded", "forwarded_invalid"};
    for (int i = 0; i < GW_ADDR_COUNT; i++) {
        char labels[64];
        snprintf(labels, sizeof labels, "source=\"%s\"", sources[i]);
        gw->m.client_address[i] = metrics_counter(
            reg, "gateway_client_address_total", labels,
            "Login/Register client addresses by source: the peer, a trusted proxy's x-real-ip, "
            "or the peer because a trusted proxy's x-real-ip was malformed");
    }
    gw->m.login_failures = metrics_counter(reg, "gateway_login_failures_total", NULL,
                                           "Logins store-svc answered bad_credentials");
    gw->m.throttle_entries[0] = metrics_gauge(reg, "gateway_throttle_entries", "class=\"address\"",
                                              "Slots in use in a throttle table");
    gw->m.throttle_entries[1] = metrics_gauge(reg, "gateway_throttle_entries", "class=\"handle\"",
                                              "Slots in use in a throttle table");
    gw->m.unknown_stripped =
        metrics_counter(reg, "gateway_unknown_fields_stripped_total", NULL,
                        "Requests whose unknown fields were dropped before going downstream");
    gw->m.too_many_items = metrics_counter(reg, "gateway_repeated_refused_total", NULL,
                                           "Requests refused for too many placements or invitees");
    gw->m.observers = metrics_gauge(reg, "gateway_observers", NULL,
                                    "Watch streams (observers of public games) open");
    gw->m.observers_refused =
        metrics_counter(reg, "gateway_observers_refused_total", NULL,
                        "Watch streams refused too_many_observers (--max-observers-per-game)");
    gw->m.watch_reads = metrics_counter(
        reg, "gateway_watch_reads_total", NULL,
        "Game.WatchState calls made for Watch streams (catch-ups and shared reads)");
    gw->m.watch_events =
        metrics_counter(reg, "gateway_watch_events_total", NULL, "Events sent on Watch streams");
    /* Events reach this gateway's streams only while it is subscribed. */
    gw->m.redis_subscribed = metrics_gauge(reg, "gateway_redis_subscribed", NULL,
                                           "1 while the event subscriber's Redis connection is "
                                           "subscribed");
    gw->m.auth_entries = metrics_gauge(reg, "gateway_auth_cache_entries", NULL,
                                       "Tokens in the auth cache, trusted or within the outage "
                                       "grace (bad tokens included)");
    gw->m.auth_capacity = metrics_gauge(reg, "gateway_auth_cache_capacity_entries", NULL,
                                        "The auth cache's fixed size (--auth-cache-size, "
                                        "rounded up)");
    gw->m.stream_queued = metrics_gauge(reg, "gateway_subscriber_queued_messages", NULL,
                                        "Events queued on this gateway's Subscribe streams, "
                                        "not yet written");
    gw->m.stream_queued_max =
        metrics_gauge(reg, "gateway_subscriber_queued_max_messages", NULL,
                      "Events queued on the fullest Subscribe stream (cut off at the limit)");
    gw->m.stream_queue_limit =
        metrics_gauge(reg, "gateway_subscriber_queue_limit_messages", NULL,
                      "Per-stream queue bound (--subscriber-queue): a stream that reaches it is "
                      "ended as a slow consumer");
    metric_set(gw->m.stream_queue_limit, gw->cfg.subscriber_queue);
}

/* Drain: every event stream and every watch stream ends now. */
static void gw_main__close_streams(void *arg)
{
    gw_ctx *gw = arg;
    gw_subs_close_all(gw->subs);
    gw_watch_close_all(gw->watch);
}

int main(int argc, char **argv)
{
    rpc_init();
    static gw_ctx gw; /* the server context; large, so not on the stack */
    gw_watchdog wd = {.gw = &gw};
    char err[256];
    int status = 1;
    bool watchdog_started = false;

    int rc = gw_config_load(&gw.cfg, argc, argv, err, sizeof err);
    if (rc == GW_CFG_HELP) {
        rpc_shutdown();
        return 0;
    }
    if (rc != GW_CFG_OK) {
        fprintf(stderr, "gateway: %s\n", err);
        rpc_shutdown();
        return 2;
    }
    log_set_service("gateway");
    int lvl = log_level_parse(gw.cfg.log_level);
    if (lvl < 0) {
        fprintf(stderr, "gateway: --log-level: unknown level '%s'\n", gw.cfg.log_level);
        rpc_shutdown();
        return 2;
    }
    log_threshold = lvl;

    if (rpc_identity_setup(&gw.cfg.rpc, "gateway", false, err, sizeof err) != 0) {
        fprintf(stderr, "gateway: %s\n", err);
        rpc_shutdown();
        return 2;
    }
    gw.server = rpc_server_create(&gw.cfg.rpc, "gateway", err, sizeof err);
    if (!gw.server) {
        log_error("server_create_failed", "err=\"%s\"", err);
        goto fail;
    }
    gw_metrics_init(&gw);

    gw_rate_rule rules[GW_RATE_CLASSES];
    for (int c = 0; c < GW_RATE_CLASSES; c++) {
        rules[c].rate = gw.cfg.rate[c];
        rules[c].burst = gw.cfg.burst[c];
    }
    gw.limiter = gw_ratelimit_create(rules, (size_t)gw.cfg.ratelimit_accounts);
    gw.auth = gw_authcache_create((size_t)gw.cfg.auth_cache_size);
    gw.th_address = gw_throttle_create((size_t)gw.cfg.throttle_entries);
    gw.th_handle = gw_throttle_create((size_t)gw.cfg.throttle_entries);
    gw.subs = gw_subs_create(gw.cfg.max_streams_per_account, &gw);
    gw.watch = gw_watch_create(&gw);
    if (!gw.limiter || !gw.auth || !gw.subs || !gw.watch || !gw.th_address || !gw.th_handle) {
        log_error("start_failed", "err=\"out of memory\"");
        goto fail;
    }
    metric_set(gw.m.auth_capacity, (int64_t)gw_authcache_capacity(gw.auth));

    /* One long-lived channel per downstream instance, opened now. */
    rpc_tls_config store_tls, game_tls;
    rpc_identity_peer_tls(&gw.cfg.rpc, "store-svc", &store_tls);
    rpc_identity_peer_tls(&gw.cfg.rpc, "game-svc", &game_tls);
    rpc_channel_opts copts = {.max_message_bytes = gw.cfg.rpc.max_message_bytes, .tls = &store_tls};
    gw.store = rpc_channel_create(gw.cfg.store, &copts);
    copts.tls = &game_tls;
    gw.ngames = gw_config_game_targets(&gw.cfg, gw.game_names, GW_MAX_GAME_INSTANCES);
    for (int i = 0; i < gw.ngames; i++) {
        gw.games[i] = rpc_channel_create(gw.game_names[i], &copts);
        gw.game_hash[i] = gw_route_instance_hash(gw.game_names[i]);
        if (!gw.games[i])
            goto fail;
        rpc_channel_connect(gw.games[i]);
    }
    if (!gw.store)
        goto fail;
    rpc_channel_connect(gw.store);

    metrics_registry *reg = rpc_server_metrics(gw.server);
    for (int i = 0; i <= gw.ngames; i++) {
        char labels[320];
        snprintf(labels, sizeof labels, "target=\"%s\"",
                 i < gw.ngames ? gw.game_names[i] : gw.cfg.store);
        wd.ready[i] =
            metrics_gauge(reg, "gateway_downstream_ready", labels, "1 when the channel is READY");
    }

    gw.events = gw_events_start(gw.cfg.redis, gw.cfg.redis_secrets, gw.subs, gw.m.events_delivered,
                                gw.m.events_unrouted);
    if (!gw.events) /* the module has logged why */
        goto fail;
    gw_events_set_watch(gw.events, gw.watch);

    if (gw_edge_register(&gw) != 0) {
        log_error("start_failed", "err=\"cannot register scrabble.v1.Edge\"");
        goto fail;
    }
    /* On SIGTERM, end the event streams at once: they would otherwise hold
     * the drain for the whole grace period. */
    rpc_server_on_drain(gw.server, gw_main__close_streams, &gw);
    int port = rpc_server_start(gw.server, err, sizeof err);
    if (port == 0) {
        log_error("server_start_failed", "err=\"%s\"", err);
        goto fail;
    }
    if (pthread_create(&wd.thread, NULL, gw_watchdog__main, &wd) == 0)
        watchdog_started = true;
    log_info("started", "port=%d store=%s games=%s redis=%s workers=%d", port, gw.cfg.store,
             gw.cfg.games, gw.cfg.redis, gw.cfg.rpc.workers);
    rpc_server_wait(gw.server);
    log_info("stopping", "subscribers=%zu", gw_subs_count(gw.subs));
    status = 0;

fail:
    if (watchdog_started) {
        atomic_store(&wd.stop, true);
        pthread_join(wd.thread, NULL);
    }
    /* The server is drained first (no handler runs any more), then what
     * its handlers used. */
    if (gw.server)
        rpc_server_destroy(gw.server);
    gw_events_stop(gw.events);
    for (int i = 0; i < gw.ngames; i++)
        if (gw.games[i])
            rpc_channel_destroy(gw.games[i]);
    if (gw.store)
        rpc_channel_destroy(gw.store);
    gw_subs_destroy(gw.subs);
    gw_watch_destroy(gw.watch);
    gw_authcache_destroy(gw.auth);
    gw_ratelimit_destroy(gw.limiter);
    gw_throttle_destroy(gw.th_address);
    gw_throttle_destroy(gw.th_handle);
    rpc_shutdown();
    return status;
}

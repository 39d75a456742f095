/*
 * events.c — the Redis subscriber thread (see events.h).
 */
#include "events.h"

#include "publish.h"
#include "rpc/log.h"
#include "scrabble/v1/common.pb-c.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct gw_events {
    char host[256];
    int port;
    gw_subs *subs;
    metric *delivered, *unrouted;
    pthread_t thread;
    pthread_mutex_t mu; /* guards ctx against the stopper */
    redisContext *ctx;  /* the live connection, or NULL */
    atomic_bool stopping;
    atomic_bool connected;
};

int64_t gw_events_channel_account(const char *channel, size_t len)
{
    if (len < 4 || len > 3 + 19 || memcmp(channel, "ev:", 3) != 0)
        return 0;
    int64_t v = 0;
    for (size_t i = 3; i < len; i++) {
        if (channel[i] < '0' || channel[i] > '9')
            return 0;
        if (v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (channel[i] - '0');
    }
    return v;
}

bool gw_events_connected(gw_events *ev)
{
    return atomic_load(&ev->connected);
}

static void gw_events__sleep_ms(gw_events *ev, int ms)
{
    /* Sleep in slices so a stop is noticed promptly. */
    while (ms > 0 && !atomic_load(&ev->stopping)) {
        int step = ms > 50 ? 50 : ms;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static void gw_events__dispatch(gw_events *ev, const redisReply *r)
{
    /* pmessage: ["pmessage", pattern, channel, payload] */
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 4 ||
        r->element[2]->type != REDIS_REPLY_STRING || r->element[3]->type != REDIS_REPLY_STRING)
        return;
    int64_t account = gw_events_channel_account(r->element[2]->str, r->element[2]->len);
    if (account <= 0)
        return;
    /* Decode once, check it is an Event, and let the stream re-pack it. */
    Scrabble__V1__Event *e =
        scrabble__v1__event__unpack(NULL, r->element[3]->len, (const uint8_t *)r->element[3]->str);
    if (!e) {
        log_warn("bad_event", "channel=%.*s bytes=%zu", (int)r->element[2]->len, r->element[2]->str,
                 (size_t)r->element[3]->len);
        return;
    }
    int slow = 0;
    int n = gw_subs_deliver(ev->subs, account, &e->base, &slow);
    if (n > 0 && ev->delivered)
        metric_add(ev->delivered, n);
    else if (n == 0 && slow == 0 && ev->unrouted)
        metric_add(ev->unrouted, 1);
    if (slow)
        log_info("slow_consumer", "account=%lld streams=%d", (long long)account, slow);
    log_debug("event", "account=%lld type=%d game=%lld seq=%lld streams=%d", (long long)account,
              e->type, (long long)e->game_id, (long long)e->seq, n);
    scrabble__v1__event__free_unpacked(e, NULL);
}

static void *gw_events__main(void *arg)
{
    gw_events *ev = arg;
    int backoff_ms = 100;
    while (!atomic_load(&ev->stopping)) {
        struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
        redisContext *c = redisConnectWithTimeout(ev->host, ev->port, tv);
        if (!c || c->err) {
            log_warn("redis_connect_failed", "role=subscriber addr=%s:%d err=\"%s\" retry_ms=%d",
                     ev->host, ev->port, c ? c->errstr : "oom", backoff_ms);
            if (c)
                redisFree(c);
            gw_events__sleep_ms(ev, backoff_ms);
            backoff_ms = backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2;
            continue;
        }
        /* Blocking reads with no timeout: an idle pub/sub connection is
         * normal. The stopper wakes the read by shutting the socket down. */
        struct timeval none = {0, 0};
        redisSetTimeout(c, none);
        pthread_mutex_lock(&ev->mu);
        ev->ctx = c;
        pthread_mutex_unlock(&ev->mu);
        if (atomic_load(&ev->stopping))
            goto drop;
        redisReply *r = redisCommand(c, "PSUBSCRIBE ev:*");
        if (!r || r->type == REDIS_REPLY_ERROR) {
            log_warn("redis_psubscribe_failed", "err=\"%s\"", r ? r->str : c->errstr);
            if (r)
                freeReplyObject(r);
            goto drop;
        }
        freeReplyObject(r);
        atomic_store(&ev->connected, true);
        backoff_ms = 100;
        log_info("redis_subscribed", "addr=%s:%d pattern=ev:*", ev->host, ev->port);
        for (;;) {
            void *reply = NULL;
            if (redisGetReply(c, &reply) != REDIS_OK || !reply)
                break;
            gw_events__dispatch(ev, reply);
            freeReplyObject(reply);
        }
        if (!atomic_load(&ev->stopping))
            log_warn("redis_disconnected", "role=subscriber err=\"%s\"", c->errstr);
    drop:
        atomic_store(&ev->connected, false);
        pthread_mutex_lock(&ev->mu);
        ev->ctx = NULL;
        pthread_mutex_unlock(&ev->mu);
        redisFree(c);
        gw_events__sleep_ms(ev, backoff_ms);
        backoff_ms = backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2;
    }
    return NULL;
}

gw_events *gw_events_start(const char *redis_addr, gw_subs *subs, metric *delivered,
                           metric *unrouted)
{
    gw_events *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return NULL;
    if (gw_redis_addr(redis_addr, ev->host, sizeof ev->host, &ev->port) != 0) {
        free(ev);
        return NULL;
    }
    ev->subs = subs;
    ev->delivered = delivered;
    ev->unrouted = unrouted;
    pthread_mutex_init(&ev->mu, NULL);
    if (pthread_create(&ev->thread, NULL, gw_events__main, ev) != 0) {
        pthread_mutex_destroy(&ev->mu);
        free(ev);
        return NULL;
    }
    return ev;
}

void gw_events_stop(gw_events *ev)
{
    if (!ev)
        return;
    atomic_store(&ev->stopping, true);
    pthread_mutex_lock(&ev->mu);
    if (ev->ctx)
        shutdown(ev->ctx->fd, SHUT_RDWR);
    pthread_mutex_unlock(&ev->mu);
    pthread_join(ev->thread, NULL);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

/*
 * events.c — the Redis subscriber thread (see events.h).
 */
#include "events.h"
#include "watch.h"

#include "rpc/log.h"
#include "rpc/redis.h"
#include "scrabble/v1/common.pb-c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

struct gw_events {
    rpc_redis *conn; /* the thread's; ACL user subscriber */
    gw_subs *subs;
    _Atomic(gw_watch *) watch; /* spectators: woken by game events */
    metric *delivered, *unrouted;
    pthread_t thread;
    pthread_mutex_t mu; /* guards fd against the stopper */
    int fd;             /* the live connection's socket, or -1 */
    atomic_bool stopping;
    atomic_bool connected;
};

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
    int64_t account = rpc_redis_event_channel_account(r->element[2]->str, r->element[2]->len);
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
    int64_t id;
    if (gw_event_id_parse(e->event_id, &id) != 0 || id <= 0) {
        /* Not from the relay (every logged event has an id): refused, as
         * it could not be resumed from. */
        log_warn("event_without_id", "channel=%.*s", (int)r->element[2]->len, r->element[2]->str);
        scrabble__v1__event__free_unpacked(e, NULL);
        return;
    }
    int n = gw_subs_deliver(ev->subs, account, id, e);
    if (n > 0 && ev->delivered)
        metric_add(ev->delivered, n);
    else if (n == 0 && ev->unrouted)
        metric_add(ev->unrouted, 1);
    /* Every gateway sees every game event: the observers of the game, if
     * any are here, read its new moves. */
    gw_watch *watch = atomic_load(&ev->watch);
    if (watch && (e->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED ||
                  e->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN ||
                  e->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER))
        gw_watch_wake(watch, e->game_id, e->seq,
                      e->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER);
    log_debug("event", "account=%lld type=%d game=%lld seq=%lld streams=%d", (long long)account,
              e->type, (long long)e->game_id, (long long)e->seq, n);
    scrabble__v1__event__free_unpacked(e, NULL);
}

static void gw_events__set_fd(gw_events *ev, int fd)
{
    pthread_mutex_lock(&ev->mu);
    ev->fd = fd;
    pthread_mutex_unlock(&ev->mu);
}

static void *gw_events__main(void *arg)
{
    gw_events *ev = arg;
    while (!atomic_load(&ev->stopping)) {
        if (rpc_redis_ensure(ev->conn) != 0) {
            /* rpc/redis.h logged the outage and set the backoff. */
            int wait_ms = rpc_redis_retry_in_ms(ev->conn);
            gw_events__sleep_ms(ev, wait_ms > 0 ? wait_ms : 1);
            continue;
        }
        redisContext *c = rpc_redis_context(ev->conn);
        gw_events__set_fd(ev, c->fd);
        if (atomic_load(&ev->stopping))
            break;
        const char *argv[2] = {"PSUBSCRIBE", RPC_REDIS_EVENTS_PATTERN};
        size_t argvlen[2] = {10, strlen(RPC_REDIS_EVENTS_PATTERN)};
        redisReply *r = redisCommandArgv(c, 2, argv, argvlen);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            log_warn("redis_psubscribe_failed", "err=\"%s\"", r ? r->str : c->errstr);
            if (r)
                freeReplyObject(r);
            goto drop;
        }
        freeReplyObject(r);
        /* Blocking reads with no timeout: an idle pub/sub connection is
         * normal. The stopper wakes the read by shutting the socket down. */
        struct timeval none = {0, 0};
        redisSetTimeout(c, none);
        atomic_store(&ev->connected, true);
        /* Whatever was published while this subscription was not in place
         * never reached us: every stream reads it from the log. */
        size_t n = gw_subs_catch_up_all(ev->subs);
        gw_watch *watch = atomic_load(&ev->watch);
        if (watch)
            gw_watch_wake_all(watch);
        log_info("redis_subscribed", "pattern=%s catch_ups=%zu", RPC_REDIS_EVENTS_PATTERN, n);
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
        gw_events__set_fd(ev, -1);
        rpc_redis_broken(ev->conn);
    }
    gw_events__set_fd(ev, -1);
    return NULL;
}

gw_events *gw_events_start(const char *redis_addr, const char *redis_secrets, gw_subs *subs,
                           metric *delivered, metric *unrouted)
{
    char err[160];
    gw_events *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return NULL;
    ev->conn = rpc_redis_create(redis_addr, RPC_REDIS_USER_SUBSCRIBER, redis_secrets, 1000, err,
                                sizeof err);
    if (!ev->conn) {
        log_error("start_failed", "role=subscriber err=\"%s\"", err);
        free(ev);
        return NULL;
    }
    ev->fd = -1;
    ev->subs = subs;
    ev->delivered = delivered;
    ev->unrouted = unrouted;
    pthread_mutex_init(&ev->mu, NULL);
    if (pthread_create(&ev->thread, NULL, gw_events__main, ev) != 0) {
        pthread_mutex_destroy(&ev->mu);
        rpc_redis_destroy(ev->conn);
        free(ev);
        return NULL;
    }
    return ev;
}

void gw_events_set_watch(gw_events *ev, gw_watch *watch)
{
    atomic_store(&ev->watch, watch);
}

void gw_events_stop(gw_events *ev)
{
    if (!ev)
        return;
    atomic_store(&ev->stopping, true);
    pthread_mutex_lock(&ev->mu);
    if (ev->fd >= 0)
        shutdown(ev->fd, SHUT_RDWR);
    pthread_mutex_unlock(&ev->mu);
    pthread_join(ev->thread, NULL);
    rpc_redis_destroy(ev->conn);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

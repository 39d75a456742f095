/*
 * events.c — the publisher thread behind game_events_publish/del.
 */
#include "events.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/log.h"
#include "rpc/redis.h"

typedef struct ev__item {
    struct ev__item *next;
    char key[RPC_REDIS_NAME_MAX];
    size_t len;
    uint8_t data[]; /* payload of PUBLISH */
} ev__item;

struct game_events {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ev__item *head, *tail;
    int queued, limit;
    bool stopping;
    pthread_t thread;
    rpc_redis *pub; /* publisher thread only: ACL user publisher */
    atomic_uint_fast64_t published;
    metric *m_published, *m_dropped;
};

static void ev__enqueue(game_events *ev, ev__item *it)
{
    pthread_mutex_lock(&ev->mu);
    if (ev->queued >= ev->limit || ev->stopping) {
        pthread_mutex_unlock(&ev->mu);
        free(it);
        if (ev->m_dropped)
            metric_add(ev->m_dropped, 1);
        return;
    }
    it->next = NULL;
    if (ev->tail)
        ev->tail->next = it;
    else
        ev->head = it;
    ev->tail = it;
    ev->queued++;
    pthread_cond_signal(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
}

void game_events_publish(game_events *ev, int64_t account_id, const Scrabble__V1__Event *e)
{
    if (!ev || account_id <= 0)
        return;
    size_t len = scrabble__v1__event__get_packed_size(e);
    ev__item *it = malloc(sizeof *it + len);
    if (!it)
        return;
    rpc_redis_event_channel(it->key, sizeof it->key, account_id);
    it->len = scrabble__v1__event__pack(e, it->data);
    ev__enqueue(ev, it);
}

/* One item (rpc/redis.h applies the reconnect policy and retries a stale
 * connection once). */
static void ev__send(game_events *ev, ev__item *it)
{
    const char *argv[3] = {"PUBLISH", it->key, (const char *)it->data};
    size_t argvlen[3] = {7, strlen(it->key), it->len};
    redisReply *r = rpc_redis_command_argv(ev->pub, 3, argv, argvlen);
    if (!r)
        goto dropped; /* rpc/redis.h has logged the outage */
    if (r->type == REDIS_REPLY_ERROR) {
        log_warn("events_redis_refused", "kind=publish err=\"%.*s\"",
                 (int)(r->len > 100 ? 100 : r->len), r->str);
        freeReplyObject(r);
        goto dropped;
    }
    freeReplyObject(r);
    atomic_fetch_add(&ev->published, 1);
    if (ev->m_published)
        metric_add(ev->m_published, 1);
    return;
dropped:
    if (ev->m_dropped)
        metric_add(ev->m_dropped, 1);
}

static void *ev__main(void *arg)
{
    game_events *ev = arg;
    pthread_mutex_lock(&ev->mu);
    for (;;) {
        while (!ev->head && !ev->stopping)
            pthread_cond_wait(&ev->cv, &ev->mu);
        if (!ev->head && ev->stopping)
            break;
        ev__item *batch = ev->head;
        ev->head = ev->tail = NULL;
        ev->queued = 0;
        pthread_mutex_unlock(&ev->mu);
        while (batch) {
            ev__item *n = batch->next;
            ev__send(ev, batch);
            free(batch);
            batch = n;
        }
        pthread_mutex_lock(&ev->mu);
    }
    pthread_mutex_unlock(&ev->mu);
    return NULL;
}

game_events *game_events_start(const char *addr, const char *secrets_dir, int queue_limit,
                               metrics_registry *reg)
{
    char err[160];
    game_events *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    /* 200 ms bounds a command: the queue waits behind it, nothing else. */
    ev->pub = rpc_redis_create(addr, RPC_REDIS_USER_PUBLISHER, secrets_dir, 200, err, sizeof err);
    if (!ev->pub) {
        log_error("events_start_failed", "err=\"%s\"", err);
        free(ev);
        return NULL;
    }
    pthread_mutex_init(&ev->mu, NULL);
    pthread_cond_init(&ev->cv, NULL);
    ev->limit = queue_limit > 0 ? queue_limit : 100000;
    if (reg) {
        ev->m_published =
            metrics_counter(reg, "game_events_published_total", NULL, "Events published to Redis");
        ev->m_dropped = metrics_counter(reg, "game_events_dropped_total", NULL,
                                        "Events dropped (Redis down or queue full)");
    }
    if (pthread_create(&ev->thread, NULL, ev__main, ev) != 0) {
        pthread_cond_destroy(&ev->cv);
        pthread_mutex_destroy(&ev->mu);
        rpc_redis_destroy(ev->pub);
        free(ev);
        return NULL;
    }
    return ev;
}

void game_events_stop(game_events *ev)
{
    if (!ev)
        return;
    pthread_mutex_lock(&ev->mu);
    ev->stopping = true;
    pthread_cond_signal(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
    pthread_join(ev->thread, NULL);
    rpc_redis_destroy(ev->pub);
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

uint64_t game_events_published(game_events *ev)
{
    return atomic_load(&ev->published);
}

/*
 * events.c — the publisher thread behind game_events_publish/del.
 */
#include "events.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/log.h"

enum { EV__PUBLISH = 0, EV__DEL };

typedef struct ev__item {
    struct ev__item *next;
    int kind;
    char key[64];
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
    char host[128];
    int port;
    redisContext *rc;        /* publisher thread only */
    int64_t next_connect_ms; /* publisher thread only: reconnect backoff */
    bool down_logged;        /* publisher thread only: one warning per outage */
    atomic_uint_fast64_t published;
    metric *m_published, *m_dropped;
};

static int64_t ev__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
    it->kind = EV__PUBLISH;
    snprintf(it->key, sizeof it->key, "ev:%lld", (long long)account_id);
    it->len = scrabble__v1__event__pack(e, it->data);
    ev__enqueue(ev, it);
}

void game_events_del(game_events *ev, const char *key)
{
    if (!ev)
        return;
    ev__item *it = malloc(sizeof *it);
    if (!it)
        return;
    it->kind = EV__DEL;
    snprintf(it->key, sizeof it->key, "%s", key);
    it->len = 0;
    ev__enqueue(ev, it);
}

/* Publisher thread: a connection, dropped on any error and re-made at most
 * every 500 ms. */
static bool ev__connect(game_events *ev)
{
    if (ev->rc)
        return true;
    int64_t now = ev__now_ms();
    if (now < ev->next_connect_ms)
        return false;
    struct timeval tv = {0, 200 * 1000};
    ev->rc = redisConnectWithTimeout(ev->host, ev->port, tv);
    if (!ev->rc || ev->rc->err) {
        if (!ev->down_logged)
            log_warn("events_redis_down", "addr=%s:%d err=\"%s\"", ev->host, ev->port,
                     ev->rc ? ev->rc->errstr : "oom");
        ev->down_logged = true;
        if (ev->rc)
            redisFree(ev->rc);
        ev->rc = NULL;
        ev->next_connect_ms = now + 500;
        return false;
    }
    redisSetTimeout(ev->rc, tv);
    if (ev->down_logged)
        log_info("events_redis_up", "addr=%s:%d", ev->host, ev->port);
    ev->down_logged = false;
    return true;
}

static void ev__send(game_events *ev, ev__item *it)
{
    redisReply *r = NULL;
    if (!ev__connect(ev))
        goto dropped;
    if (it->kind == EV__PUBLISH)
        r = redisCommand(ev->rc, "PUBLISH %s %b", it->key, it->data, it->len);
    else
        r = redisCommand(ev->rc, "DEL %s", it->key);
    if (!r) {
        log_warn("events_redis_error", "err=\"%s\"", ev->rc->errstr);
        redisFree(ev->rc);
        ev->rc = NULL;
        ev->next_connect_ms = ev__now_ms() + 500;
        goto dropped;
    }
    freeReplyObject(r);
    if (it->kind == EV__PUBLISH) {
        atomic_fetch_add(&ev->published, 1);
        if (ev->m_published)
            metric_add(ev->m_published, 1);
    }
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

game_events *game_events_start(const char *host, int port, int queue_limit, metrics_registry *reg)
{
    game_events *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    pthread_mutex_init(&ev->mu, NULL);
    pthread_cond_init(&ev->cv, NULL);
    snprintf(ev->host, sizeof ev->host, "%s", host);
    ev->port = port;
    ev->limit = queue_limit > 0 ? queue_limit : 100000;
    if (reg) {
        ev->m_published =
            metrics_counter(reg, "game_events_published_total", NULL, "Events published to Redis");
        ev->m_dropped =
            metrics_counter(reg, "game_events_dropped_total", NULL,
                            "Events and draft deletions dropped (Redis down or queue full)");
    }
    if (pthread_create(&ev->thread, NULL, ev__main, ev) != 0) {
        pthread_cond_destroy(&ev->cv);
        pthread_mutex_destroy(&ev->mu);
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
    if (ev->rc)
        redisFree(ev->rc);
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
    free(ev);
}

uint64_t game_events_published(game_events *ev)
{
    return atomic_load(&ev->published);
}

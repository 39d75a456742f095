/*
 * publish.c — the publisher thread (see publish.h).
 */
#include "publish.h"

#include "rpc/log.h"
#include "rpc/status.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct gw_pub_item {
    struct gw_pub_item *next;
    int64_t account_id;
    size_t len;
    uint8_t data[]; /* the packed event */
} gw_pub_item;

struct gw_publisher {
    char host[256];
    int port;
    int max_queued;
    metric *published, *dropped;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gw_pub_item *head, *tail; /* guarded by mu; items malloc'd, freed by the thread */
    int queued;
    bool stopping;
};

int gw_redis_addr(const char *addr, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    if (n == 0 || n >= hostlen)
        return -1;
    memcpy(host, addr, n);
    host[n] = '\0';
    *port = 6379;
    if (colon) {
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end || p <= 0 || p > 65535)
            return -1;
        *port = (int)p;
    }
    return 0;
}

static redisContext *gw_pub__connect(gw_publisher *p)
{
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    redisContext *c = redisConnectWithTimeout(p->host, p->port, tv);
    if (!c || c->err) {
        log_warn("redis_connect_failed", "role=publisher addr=%s:%d err=\"%s\"", p->host, p->port,
                 c ? c->errstr : "oom");
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    log_info("redis_connected", "role=publisher addr=%s:%d", p->host, p->port);
    return c;
}

static void *gw_pub__main(void *arg)
{
    gw_publisher *p = arg;
    redisContext *c = NULL;
    int backoff_ms = 100;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->head && p->stopping) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        gw_pub_item *it = p->head;
        p->head = it->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        bool stopping = p->stopping;
        pthread_mutex_unlock(&p->mu);

        /* One attempt to reconnect per item while Redis is down; an event
         * that cannot be published is dropped (the state it announces is
         * durable in store-svc and visible to the next poll). */
        if (!c) {
            c = gw_pub__connect(p);
            if (!c && !stopping) {
                struct timespec ts = {backoff_ms / 1000, (backoff_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
                backoff_ms = backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2;
            }
        }
        bool ok = false;
        if (c) {
            redisReply *rep =
                redisCommand(c, "PUBLISH ev:%lld %b", (long long)it->account_id, it->data, it->len);
            if (rep && rep->type != REDIS_REPLY_ERROR) {
                ok = true;
                backoff_ms = 100;
            } else {
                log_warn("redis_publish_failed", "account=%lld err=\"%s\"",
                         (long long)it->account_id, rep ? rep->str : c->errstr);
            }
            if (rep)
                freeReplyObject(rep);
            if (!rep) {
                redisFree(c);
                c = NULL;
            }
        }
        metric_add(ok ? p->published : p->dropped, 1);
        free(it);
    }
    if (c)
        redisFree(c);
    return NULL;
}

gw_publisher *gw_publisher_start(const char *redis_addr, int max_queued, metric *published,
                                 metric *dropped)
{
    gw_publisher *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    if (gw_redis_addr(redis_addr, p->host, sizeof p->host, &p->port) != 0) {
        free(p);
        return NULL;
    }
    p->max_queued = max_queued;
    p->published = published;
    p->dropped = dropped;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, gw_pub__main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

void gw_publisher_stop(gw_publisher *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    while (p->head) {
        gw_pub_item *n = p->head->next;
        free(p->head);
        p->head = n;
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int gw_publish_event(gw_publisher *p, int64_t account_id, const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    pthread_mutex_lock(&p->mu);
    bool full = p->queued >= p->max_queued || p->stopping;
    pthread_mutex_unlock(&p->mu);
    if (full) {
        metric_add(p->dropped, 1);
        return RPC_EFULL;
    }
    gw_pub_item *it = malloc(sizeof(*it) + len);
    if (!it) {
        metric_add(p->dropped, 1);
        return RPC_EFULL;
    }
    it->next = NULL;
    it->account_id = account_id;
    it->len = protobuf_c_message_pack(msg, it->data);
    pthread_mutex_lock(&p->mu);
    if (p->tail)
        p->tail->next = it;
    else
        p->head = it;
    p->tail = it;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return RPC_OK;
}

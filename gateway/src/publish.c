/*
 * publish.c — the publisher thread (see publish.h).
 */
#include "publish.h"

#include "rpc/log.h"
#include "rpc/redis.h"
#include "rpc/status.h"

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
    rpc_redis *conn; /* the thread's; ACL user publisher */
    int max_queued;
    metric *published, *dropped;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gw_pub_item *head, *tail; /* guarded by mu; items malloc'd, freed by the thread */
    int queued;
    bool stopping;
};

static void *gw_pub__main(void *arg)
{
    gw_publisher *p = arg;
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

        /* While Redis is down, each item waits out the connection's backoff
         * for one more attempt (so a short outage delays events instead of
         * dropping them); an event that still cannot be published is dropped
         * (the state it announces is durable in store-svc and visible to the
         * next poll). */
        int wait_ms = rpc_redis_retry_in_ms(p->conn);
        if (wait_ms > 0 && !stopping) {
            struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        char channel[RPC_REDIS_NAME_MAX];
        bool ok = false;
        if (rpc_redis_event_channel(channel, sizeof channel, it->account_id) > 0) {
            const char *argv[3] = {"PUBLISH", channel, (const char *)it->data};
            size_t argvlen[3] = {7, strlen(channel), it->len};
            redisReply *rep = rpc_redis_command_argv(p->conn, 3, argv, argvlen);
            if (rep && rep->type != REDIS_REPLY_ERROR)
                ok = true;
            else if (rep)
                log_warn("redis_publish_failed", "account=%lld err=\"%.*s\"",
                         (long long)it->account_id, (int)(rep->len > 100 ? 100 : rep->len),
                         rep->str);
            if (rep)
                freeReplyObject(rep);
        }
        metric_add(ok ? p->published : p->dropped, 1);
        free(it);
    }
    return NULL;
}

gw_publisher *gw_publisher_start(const char *redis_addr, const char *redis_secrets, int max_queued,
                                 metric *published, metric *dropped)
{
    char err[160];
    gw_publisher *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->conn = rpc_redis_create(redis_addr, RPC_REDIS_USER_PUBLISHER, redis_secrets, 1000, err,
                               sizeof err);
    if (!p->conn) {
        log_error("start_failed", "role=publisher err=\"%s\"", err);
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
        rpc_redis_destroy(p->conn);
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
    rpc_redis_destroy(p->conn);
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

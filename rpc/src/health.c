/*
 * health.c — grpc.health.v1.Health: Check answers from a small table of
 * service statuses; Watch streams the current status, then every change,
 * until the client hangs up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "internal.h"

#define RPC__HEALTH_MAX 32

typedef struct rpc__watch {
    struct rpc__watch *next;
    rpc_call *call;
    char service[128];
} rpc__watch;

struct rpc__health {
    pthread_mutex_t mu;
    char names[RPC__HEALTH_MAX][128];
    bool serving[RPC__HEALTH_MAX];
    int n;
    rpc__watch *watchers;
};

typedef Grpc__Health__V1__HealthCheckResponse__ServingStatus rpc__serving_status;

rpc__health *rpc__health_create(void)
{
    rpc__health *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    pthread_mutex_init(&h->mu, NULL);
    /* "" is the whole server. */
    h->n = 1;
    return h;
}

void rpc__health_destroy(rpc__health *h)
{
    if (h == NULL)
        return;
    rpc__watch *w = h->watchers;
    while (w) {
        rpc__watch *next = w->next;
        free(w);
        w = next;
    }
    pthread_mutex_destroy(&h->mu);
    free(h);
}

static int rpc__health_find(rpc__health *h, const char *service)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->names[i], service) == 0)
            return i;
    return -1;
}

static rpc__serving_status rpc__health_status_locked(rpc__health *h, const char *service)
{
    int i = rpc__health_find(h, service);
    if (i < 0)
        return GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN;
    return h->serving[i] ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                         : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
}

static void rpc__health_send(rpc_call *call, rpc__serving_status st)
{
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = st;
    rpc_stream_send(call, &resp.base);
}

/* Tells the watchers of `service` (all of them when NULL) its status. */
static void rpc__health_notify_locked(rpc__health *h, const char *service)
{
    for (rpc__watch *w = h->watchers; w; w = w->next)
        if (service == NULL || strcmp(w->service, service) == 0)
            rpc__health_send(w->call, rpc__health_status_locked(h, w->service));
}

void rpc__health_set(rpc__health *h, const char *service, bool serving)
{
    pthread_mutex_lock(&h->mu);
    int i = rpc__health_find(h, service);
    if (i < 0 && h->n < RPC__HEALTH_MAX) {
        i = h->n++;
        snprintf(h->names[i], sizeof(h->names[i]), "%s", service);
    }
    if (i >= 0 && h->serving[i] != serving) {
        h->serving[i] = serving;
        rpc__health_notify_locked(h, service);
    }
    pthread_mutex_unlock(&h->mu);
}

void rpc__health_set_all(rpc__health *h, bool serving)
{
    pthread_mutex_lock(&h->mu);
    for (int i = 0; i < h->n; i++)
        h->serving[i] = serving;
    rpc__health_notify_locked(h, NULL);
    /* Shutting down: end the Watch streams so the drain is not held up. */
    if (!serving) {
        rpc__watch *w = h->watchers;
        h->watchers = NULL;
        while (w) {
            rpc__watch *next = w->next;
            rpc_call_on_cancel(w->call, NULL, NULL);
            rpc_call_finish(w->call, GRPC_STATUS_UNAVAILABLE, "shutting_down",
                            "server is stopping");
            free(w);
            w = next;
        }
    }
    pthread_mutex_unlock(&h->mu);
}

static void rpc__health_check(rpc_call *call, const ProtobufCMessage *request, void *ctx)
{
    rpc__health *h = ctx;
    const Grpc__Health__V1__HealthCheckRequest *req = (const void *)request;
    pthread_mutex_lock(&h->mu);
    rpc__serving_status st = rpc__health_status_locked(h, req->service);
    pthread_mutex_unlock(&h->mu);
    if (st == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN) {
        rpc_call_fail(call, GRPC_STATUS_NOT_FOUND, "not_found", "unknown service %s", req->service);
        return;
    }
    Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
    resp.status = st;
    rpc_call_reply(call, &resp.base);
}

static void rpc__health_unwatch(rpc_call *call, void *arg)
{
    rpc__health *h = arg;
    pthread_mutex_lock(&h->mu);
    for (rpc__watch **pp = &h->watchers; *pp; pp = &(*pp)->next) {
        if ((*pp)->call == call) {
            rpc__watch *w = *pp;
            *pp = w->next;
            free(w);
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    rpc_call_finish(call, GRPC_STATUS_CANCELLED, NULL, "watch ended");
}

static void rpc__health_watch(rpc_call *call, const ProtobufCMessage *request, void *ctx)
{
    rpc__health *h = ctx;
    const Grpc__Health__V1__HealthCheckRequest *req = (const void *)request;
    rpc__watch *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "no_memory", "out of memory");
        return;
    }
    w->call = call;
    snprintf(w->service, sizeof(w->service), "%s", req->service);
    rpc_call_on_cancel(call, rpc__health_unwatch, h);
    pthread_mutex_lock(&h->mu);
    w->next = h->watchers;
    h->watchers = w;
    rpc__health_send(call, rpc__health_status_locked(h, w->service));
    pthread_mutex_unlock(&h->mu);
}

int rpc__health_register(rpc_server *s, rpc__health *h)
{
    static const rpc_method_impl impls[] = {
        {"Check", rpc__health_check},
        {"Watch", rpc__health_watch},
        {NULL, NULL},
    };
    return rpc_server_add_service(s, &grpc__health__v1__health__descriptor, impls, h);
}

/*
 * publish.h — events the gateway itself publishes (INVITATION), handed to
 * a publisher thread through a bounded queue so a worker never waits on
 * Redis. The thread owns one hiredis connection (not the subscriber's: a
 * subscribed connection cannot PUBLISH) and reconnects with backoff.
 */
#ifndef GW_PUBLISH_H
#define GW_PUBLISH_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "rpc/metrics.h"

typedef struct gw_publisher gw_publisher;

/* Starts the thread. `published` and `dropped` may be NULL. NULL on error.
 * Stop and free with gw_publisher_stop. */
gw_publisher *gw_publisher_start(const char *redis_addr, int max_queued, metric *published,
                                 metric *dropped);
/* Publishes what is queued (for up to a second), stops the thread, frees. */
void gw_publisher_stop(gw_publisher *p);

/* Packs msg and queues PUBLISH ev:<account_id>. Returns 0, or -2
 * (RPC_EFULL) when the queue is full (the event is dropped and counted).
 * Thread-safe. */
int gw_publish_event(gw_publisher *p, int64_t account_id, const ProtobufCMessage *msg);

/* Splits "host:port" (port defaults to 6379). Returns 0 or -1. */
int gw_redis_addr(const char *addr, char *host, size_t hostlen, int *port);

#endif

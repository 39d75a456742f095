/*
 * publish.h — events the gateway itself publishes (INVITATION), handed to
 * a publisher thread through a bounded queue so a worker never waits on
 * Redis. The thread owns one rpc/redis.h connection as ACL user
 * `publisher` (not the subscriber's: a subscribed connection cannot
 * PUBLISH), with the runtime's one reconnect policy.
 */
#ifndef GW_PUBLISH_H
#define GW_PUBLISH_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "rpc/metrics.h"

typedef struct gw_publisher gw_publisher;

/* Starts the thread; redis_secrets is the ACL password directory (empty:
 * no AUTH). `published` and `dropped` may be NULL. NULL on error (logged).
 * Stop and free with gw_publisher_stop. */
gw_publisher *gw_publisher_start(const char *redis_addr, const char *redis_secrets, int max_queued,
                                 metric *published, metric *dropped);
/* Lets the thread publish everything already queued (an item Redis
 * refuses or cannot take is dropped and counted), then stops it and frees
 * everything. No time bound of its own: once stopping, the thread skips the
 * reconnect backoff waits, and each PUBLISH waits at most the
 * connection's 1 s command timeout. */
void gw_publisher_stop(gw_publisher *p);

/* Packs msg and queues PUBLISH ev:<account_id>. Returns 0, or -2
 * (RPC_EFULL) when the queue is full (the event is dropped and counted).
 * Thread-safe. */
int gw_publish_event(gw_publisher *p, int64_t account_id, const ProtobufCMessage *msg);

#endif

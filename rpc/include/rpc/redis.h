/*
 * redis.h — the one Redis client every service uses: the key and channel
 * names, the ACL users, and a connection with one reconnect policy that
 * authenticates on every (re)connect.
 *
 * Why in rpc/: gateway and game-svc both talk to Redis (events, drafts) and
 * must agree on names and on how a connection authenticates and recovers,
 * but services never include each other's code. The runtime is the one
 * library both already link; this module knows nothing of games beyond the
 * name formats, which are the contract between the two services.
 *
 * Users (Redis ACL, see scripts/redis.sh): each connection authenticates as
 * exactly one role, with the password read from
 * <secrets_dir>/redis-<user>.pass (mode 0600). The file is read again on
 * every (re)connect, so a rotated password is picked up without a restart.
 *
 * A connection (rpc_redis) belongs to one thread at a time; it is not
 * locked. Reconnect policy, the same for every caller: a failed connect
 * (or AUTH) waits 100 ms before the next attempt, doubling to 1 s; calls in
 * between fail at once. A command that fails with an I/O error on a
 * connection that was up (a stale connection: Redis restarted, an idle
 * connection cut) is retried once on a fresh connection before the call
 * fails.
 */
#ifndef RPC_REDIS_H
#define RPC_REDIS_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ACL users, one per role. */
#define RPC_REDIS_USER_PUBLISHER "publisher"   /* PUBLISH ev:<account> */
#define RPC_REDIS_USER_SUBSCRIBER "subscriber" /* PSUBSCRIBE ev:* */
#define RPC_REDIS_USER_DRAFTS "drafts"         /* GET/SET/DEL draft:<game>:<account> */

/* The pattern every gateway subscribes to: every account's channel. */
#define RPC_REDIS_EVENTS_PATTERN "ev:*"
/* Enough for every name below (the longest, a draft key of two 19-digit
 * ids, is 45 bytes and its NUL). */
#define RPC_REDIS_NAME_MAX 64

/* "ev:<account>": the pub/sub channel of an account's live events. Writes
 * into buf (RPC_REDIS_NAME_MAX is enough); returns the length, or -1 when
 * the id is not positive or buf is too small. Pure. */
int rpc_redis_event_channel(char *buf, size_t len, int64_t account_id);
/* "draft:<game>:<account>": a player's draft. Same contract. Pure. */
int rpc_redis_draft_key(char *buf, size_t len, int64_t game_id, int64_t account_id);
/* Parses "ev:<decimal>" (not NUL-terminated) into an account id; 0 when
 * malformed, not positive or out of range. Pure. */
int64_t rpc_redis_event_channel_account(const char *channel, size_t len);

/* Splits "host:port" (the port defaults to 6379) into host (hostlen bytes)
 * and *port. Returns 0, or -1 when malformed. Pure. */
int rpc_redis_parse_addr(const char *addr, char *host, size_t hostlen, int *port);

typedef struct rpc_redis rpc_redis;

/* A connection to `addr` ("host:port") as ACL user `user`, with the
 * password in <secrets_dir>/redis-<user>.pass; an empty or NULL
 * secrets_dir means no AUTH (a Redis without ACLs). `timeout_ms` bounds
 * connect, AUTH and each command. Nothing is connected yet. NULL (and err
 * set) when addr is malformed or on OOM. Free with rpc_redis_destroy. */
rpc_redis *rpc_redis_create(const char *addr, const char *user, const char *secrets_dir,
                            int timeout_ms, char *err, size_t errlen);
void rpc_redis_destroy(rpc_redis *r);

/* Connects and authenticates unless connected, or fails at once while the
 * backoff after a failure runs. Returns 0 when connected, -1 otherwise. */
int rpc_redis_ensure(rpc_redis *r);
/* Milliseconds until the next connect attempt is allowed (0: now). */
int rpc_redis_retry_in_ms(const rpc_redis *r);
/* Drops the connection after an I/O error the caller saw on it (a
 * subscriber's blocking read); the next attempt waits the backoff. */
void rpc_redis_broken(rpc_redis *r);
/* The live connection (NULL when down), for a subscriber's blocking read
 * loop; owned by r. */
redisContext *rpc_redis_context(rpc_redis *r);

/* Runs one command (argv form: binary-safe) under the policy above.
 * Returns the reply (free with freeReplyObject; an error reply such as
 * NOPERM is a reply, not a failure), or NULL when Redis cannot be reached. */
redisReply *rpc_redis_command_argv(rpc_redis *r, int argc, const char **argv,
                                   const size_t *argvlen);

/* One command of a pipeline (argv form, binary-safe). */
typedef struct rpc_redis_cmd {
    int argc;
    const char **argv;
    const size_t *argvlen;
} rpc_redis_cmd;

/* Runs n commands in one round trip (all written, then the replies read in
 * order) under the policy above: when an I/O error hits a connection that
 * was up, the whole pipeline is sent once more on a fresh connection, so
 * use it only for commands that are safe to repeat (GET, SET, DEL).
 * Returns 0 with replies[i] set (free each with freeReplyObject; an error
 * reply is a reply), or -1 when Redis cannot be reached (every replies[i]
 * NULL). */
int rpc_redis_pipeline(rpc_redis *r, int n, const rpc_redis_cmd *cmds, redisReply **replies);

/* Asks Redis whether the connection works: PING under the policy above
 * (connecting first when the backoff allows; every role's ACL grants
 * +ping). Returns 1 when Redis answered (any reply, even an error, proves
 * the link), 0 when it could not be reached. For a connection state gauge
 * kept by a thread that owns r and is otherwise idle: a connection is
 * only known dead once something is sent on it. */
int rpc_redis_probe(rpc_redis *r);

/* Human text of the last failure ("" when none); owned by r. */
const char *rpc_redis_errstr(const rpc_redis *r);

#endif

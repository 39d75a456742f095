/*
 * redis_conn.c — names, AUTH and the reconnect policy of every Redis
 * connection (see rpc/redis.h).
 */
#include "rpc/redis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/addr.h"
#include "rpc/log.h"

#define REDIS__BACKOFF_MIN_MS 100
#define REDIS__BACKOFF_MAX_MS 1000
#define REDIS__PASSWORD_MAX 256

struct rpc_redis {
    char host[256];
    int port;
    char user[64];
    char password_file[512]; /* "" = no AUTH */
    int timeout_ms;
    redisContext *ctx;       /* NULL while down */
    int64_t next_connect_ms; /* monotonic; no attempt before this */
    int backoff_ms;          /* the wait after the next failure */
    bool down_logged;        /* one warning per outage */
    char errstr[160];
};

int rpc_redis_event_channel(char *buf, size_t len, int64_t account_id)
{
    if (account_id <= 0)
        return -1;
    int n = snprintf(buf, len, "ev:%lld", (long long)account_id);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

int rpc_redis_draft_key(char *buf, size_t len, int64_t game_id, int64_t account_id)
{
    if (game_id <= 0 || account_id <= 0)
        return -1;
    int n = snprintf(buf, len, "draft:%lld:%lld", (long long)game_id, (long long)account_id);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

int64_t rpc_redis_event_channel_account(const char *channel, size_t len)
{
    if (len < 4 || len > 3 + 19 || memcmp(channel, "ev:", 3) != 0)
        return 0;
    int64_t v = 0;
    for (size_t i = 3; i < len; i++) {
        if (channel[i] < '0' || channel[i] > '9')
            return 0;
        int d = channel[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    return v;
}

int rpc_redis_parse_addr(const char *addr, char *host, size_t hostlen, int *port)
{
    /* Port 0 means "any free port" to a listener; a client cannot use it. */
    return rpc_addr_split(addr, 6379, host, hostlen, port) == 0 && *port > 0 ? 0 : -1;
}

static int64_t redis__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int redis__read_password(rpc_redis *r, char *buf, size_t len);

rpc_redis *rpc_redis_create(const char *addr, const char *user, const char *secrets_dir,
                            int timeout_ms, char *err, size_t errlen)
{
    rpc_redis *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (rpc_redis_parse_addr(addr, r->host, sizeof r->host, &r->port) != 0) {
        snprintf(err, errlen, "redis address '%s' is not host:port", addr);
        free(r);
        return NULL;
    }
    snprintf(r->user, sizeof r->user, "%s", user);
    if (secrets_dir && secrets_dir[0]) {
        int n = snprintf(r->password_file, sizeof r->password_file, "%s/redis-%s.pass", secrets_dir,
                         user);
        if (n < 0 || (size_t)n >= sizeof r->password_file) {
            snprintf(err, errlen, "redis secrets directory path is too long");
            free(r);
            return NULL;
        }
    }
    if (r->password_file[0]) {
        /* Fail at start, not at the first reconnect, on a missing secret. */
        char password[REDIS__PASSWORD_MAX];
        int rc = redis__read_password(r, password, sizeof password);
        memset(password, 0, sizeof password);
        if (rc != 0) {
            snprintf(err, errlen, "%s", r->errstr);
            free(r);
            return NULL;
        }
    }
    r->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
    r->backoff_ms = REDIS__BACKOFF_MIN_MS;
    return r;
}

void rpc_redis_destroy(rpc_redis *r)
{
    if (!r)
        return;
    if (r->ctx)
        redisFree(r->ctx);
    free(r);
}

const char *rpc_redis_errstr(const rpc_redis *r)
{
    return r->errstr;
}

redisContext *rpc_redis_context(rpc_redis *r)
{
    return r->ctx;
}

int rpc_redis_retry_in_ms(const rpc_redis *r)
{
    if (r->ctx)
        return 0;
    int64_t wait = r->next_connect_ms - redis__now_ms();
    return wait > 0 ? (int)wait : 0;
}

/* Reads the password (first line, without its newline) into buf. The file
 * is read on every connect so that a rotated password needs no restart. */
static int redis__read_password(rpc_redis *r, char *buf, size_t len)
{
    FILE *f = fopen(r->password_file, "r");
    if (!f) {
        snprintf(r->errstr, sizeof r->errstr, "cannot read %s: %s", r->password_file,
                 strerror(errno));
        return -1;
    }
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!buf[0]) {
        snprintf(r->errstr, sizeof r->errstr, "%s is empty", r->password_file);
        return -1;
    }
    return 0;
}

/* Sends AUTH <user> <password> on the fresh connection. */
static int redis__auth(rpc_redis *r)
{
    char password[REDIS__PASSWORD_MAX];
    if (redis__read_password(r, password, sizeof password) != 0)
        return -1;
    const char *argv[3] = {"AUTH", r->user, password};
    size_t argvlen[3] = {4, strlen(r->user), strlen(password)};
    redisReply *rep = redisCommandArgv(r->ctx, 3, argv, argvlen);
    /* The password leaves memory as soon as it has been sent. */
    memset(password, 0, sizeof password);
    if (!rep) {
        snprintf(r->errstr, sizeof r->errstr, "AUTH: %s", r->ctx->errstr);
        return -1;
    }
    int rc = 0;
    if (rep->type == REDIS_REPLY_ERROR) {
        snprintf(r->errstr, sizeof r->errstr, "AUTH as %s refused: %.*s", r->user,
                 (int)(rep->len > 100 ? 100 : rep->len), rep->str);
        rc = -1;
    }
    freeReplyObject(rep);
    return rc;
}

static void redis__fail(rpc_redis *r)
{
    if (r->ctx) {
        redisFree(r->ctx);
        r->ctx = NULL;
    }
    if (!r->down_logged)
        log_warn("redis_down", "user=%s addr=%s:%d err=\"%s\" retry_ms=%d", r->user, r->host,
                 r->port, r->errstr, r->backoff_ms);
    r->down_logged = true;
    r->next_connect_ms = redis__now_ms() + r->backoff_ms;
    r->backoff_ms =
        r->backoff_ms * 2 > REDIS__BACKOFF_MAX_MS ? REDIS__BACKOFF_MAX_MS : r->backoff_ms * 2;
}

/* One connect + AUTH attempt, regardless of the backoff. */
static int redis__connect(rpc_redis *r)
{
    struct timeval tv = {r->timeout_ms / 1000, (r->timeout_ms % 1000) * 1000};
    r->ctx = redisConnectWithTimeout(r->host, r->port, tv);
    if (!r->ctx || r->ctx->err) {
        snprintf(r->errstr, sizeof r->errstr, "%s", r->ctx ? r->ctx->errstr : "out of memory");
        goto fail;
    }
    redisSetTimeout(r->ctx, tv);
    if (r->password_file[0] && redis__auth(r) != 0)
        goto fail;
    if (r->down_logged)
        log_info("redis_up", "user=%s addr=%s:%d", r->user, r->host, r->port);
    r->down_logged = false;
    r->backoff_ms = REDIS__BACKOFF_MIN_MS;
    r->errstr[0] = '\0';
    return 0;
fail:
    redis__fail(r);
    return -1;
}

int rpc_redis_ensure(rpc_redis *r)
{
    if (r->ctx)
        return 0;
    if (redis__now_ms() < r->next_connect_ms) {
        if (!r->errstr[0])
            snprintf(r->errstr, sizeof r->errstr, "redis %s:%d is down", r->host, r->port);
        return -1;
    }
    return redis__connect(r);
}

void rpc_redis_broken(rpc_redis *r)
{
    snprintf(r->errstr, sizeof r->errstr, "%s",
             r->ctx && r->ctx->errstr[0] ? r->ctx->errstr : "connection lost");
    redis__fail(r);
}

/* Writes the n commands and reads their replies on the live connection.
 * Returns 0, or -1 (errstr set, every reply freed and NULL) on an I/O
 * error; the caller decides what happens to the connection. */
static int redis__pipeline_once(rpc_redis *r, int n, const rpc_redis_cmd *cmds,
                                redisReply **replies)
{
    int got = 0;
    for (int i = 0; i < n; i++) {
        replies[i] = NULL;
        if (redisAppendCommandArgv(r->ctx, cmds[i].argc, cmds[i].argv, cmds[i].argvlen) != REDIS_OK)
            goto fail;
    }
    for (; got < n; got++) {
        void *rep = NULL;
        if (redisGetReply(r->ctx, &rep) != REDIS_OK)
            goto fail;
        replies[got] = rep;
    }
    return 0;
fail:
    snprintf(r->errstr, sizeof r->errstr, "%s",
             r->ctx->errstr[0] ? r->ctx->errstr : "out of memory");
    for (int i = 0; i < got; i++) {
        freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
    return -1;
}

int rpc_redis_pipeline(rpc_redis *r, int n, const rpc_redis_cmd *cmds, redisReply **replies)
{
    /* A connection that was up may be stale; a fresh one gets no retry. */
    bool was_up = r->ctx != NULL;
    for (int i = 0; i < n; i++)
        replies[i] = NULL;
    if (rpc_redis_ensure(r) != 0)
        return -1;
    if (n <= 0 || redis__pipeline_once(r, n, cmds, replies) == 0)
        return 0;
    redisFree(r->ctx);
    r->ctx = NULL;
    if (!was_up) {
        redis__fail(r);
        return -1;
    }
    if (redis__connect(r) != 0) /* it has started the backoff */
        return -1;
    if (redis__pipeline_once(r, n, cmds, replies) == 0)
        return 0;
    redis__fail(r);
    return -1;
}

redisReply *rpc_redis_command_argv(rpc_redis *r, int argc, const char **argv, const size_t *argvlen)
{
    rpc_redis_cmd cmd = {argc, argv, argvlen};
    redisReply *rep;
    return rpc_redis_pipeline(r, 1, &cmd, &rep) == 0 ? rep : NULL;
}

int rpc_redis_probe(rpc_redis *r)
{
    static const char *const argv[1] = {"PING"};
    static const size_t argvlen[1] = {4};
    redisReply *rep = rpc_redis_command_argv(r, 1, (const char **)argv, argvlen);
    if (!rep)
        return 0;
    freeReplyObject(rep);
    return 1;
}

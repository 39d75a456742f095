/*
 * drafts.c — the drafts thread behind SaveDraft, GetDraft and the deletion
 * that follows a committed turn (see drafts.h).
 */
#include "drafts.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delset.h"
#include "rpc/log.h"
#include "rpc/redis.h"

/* Bounds one command (and connect, AUTH): a hung Redis costs the thread at
 * most this long per attempt before rpc/redis.h's backoff makes the next
 * jobs fail at once. It only holds up draft calls (no worker waits on
 * it), so it is set well above a healthy round trip: at 200 ms a Redis
 * starved of CPU for a moment on a loaded host failed healthy calls. */
#define DRAFTS__TIMEOUT_MS 500
/* SET/GET commands sent in one round trip (a batch holds what queued
 * while the previous one was out). */
#define DRAFTS__PIPELINE_MAX 64
/* Keys per DEL command when flushing owed deletes. */
#define DRAFTS__DEL_BATCH 256
/* Wait before retrying owed deletes that Redis refused outright (an error
 * reply, e.g. NOPERM after an ACL mistake): the connection itself is fine,
 * so its backoff does not apply. */
#define DRAFTS__REFUSED_RETRY_MS 1000
/* An idle drafts thread PINGs Redis this often, so game_drafts_redis_up
 * tells the truth between draft calls (a connection is only known dead
 * once something is sent on it). */
#define DRAFTS__PROBE_MS 1000

enum { DRAFTS__GET = 0, DRAFTS__SET, DRAFTS__DEL };

typedef struct drafts__job {
    struct drafts__job *next;
    int kind;
    int64_t game_id, account_id;
    int64_t deadline_ms; /* monotonic; 0: none */
    game_drafts_cb cb;
    void *arg;
    size_t len;
    uint8_t data[]; /* SET: the packed draft */
} drafts__job;

struct game_drafts {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    drafts__job *head, *tail;
    int queued;      /* SET/GET jobs in the queue */
    int queued_dels; /* DEL jobs in the queue */
    bool stopping;
    pthread_t thread;
    /* The drafts thread's own. */
    rpc_redis *conn;
    game_delset *owed;
    int64_t next_flush_ms; /* monotonic; no flush before this */
    int64_t next_probe_ms; /* monotonic; PING when idle until this */
    bool full_logged;
    metric *m_pending, *m_deleted, *m_dropped;
    metric *m_redis_up, *m_queued; /* game_drafts_redis_up, game_drafts_queued_jobs */
};

static int64_t drafts__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* Queueing (any thread)                                               */

/* Appends job; false (job not taken) when stopping or over the bound. */
static bool drafts__enqueue(game_drafts *d, drafts__job *job)
{
    bool is_del = job->kind == DRAFTS__DEL;
    pthread_mutex_lock(&d->mu);
    if (d->stopping ||
        (is_del ? d->queued_dels >= GAME_DRAFTS_DELETES_MAX : d->queued >= GAME_DRAFTS_QUEUE_MAX)) {
        pthread_mutex_unlock(&d->mu);
        return false;
    }
    job->next = NULL;
    if (d->tail)
        d->tail->next = job;
    else
        d->head = job;
    d->tail = job;
    if (is_del)
        d->queued_dels++;
    else
        d->queued++;
    if (d->m_queued)
        metric_set(d->m_queued, d->queued);
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return true;
}

static drafts__job *drafts__job_new(int kind, int64_t game_id, int64_t account_id,
                                    int64_t timeout_ms, size_t len)
{
    drafts__job *job = malloc(sizeof *job + len);
    if (!job)
        return NULL;
    job->kind = kind;
    job->game_id = game_id;
    job->account_id = account_id;
    /* A call without a deadline (INT64_MAX) may wait; one past its
     * deadline expires at once. */
    job->deadline_ms =
        timeout_ms >= INT64_MAX / 2 ? 0 : drafts__now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    job->cb = NULL;
    job->arg = NULL;
    job->len = len;
    return job;
}

/* Queues a save or get job with its completion (see drafts.h). */
static int drafts__submit(game_drafts *d, drafts__job *job, game_drafts_cb cb, void *arg)
{
    if (!job)
        return GAME_DRAFTS_UNAVAILABLE;
    job->cb = cb;
    job->arg = arg;
    if (!drafts__enqueue(d, job)) {
        free(job);
        return GAME_DRAFTS_UNAVAILABLE;
    }
    return GAME_DRAFTS_OK;
}

int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft, int64_t timeout_ms, game_drafts_cb cb,
                     void *arg)
{
    size_t len = scrabble__v1__draft__get_packed_size(draft);
    drafts__job *job = drafts__job_new(DRAFTS__SET, game_id, account_id, timeout_ms, len);
    if (job)
        scrabble__v1__draft__pack(draft, job->data);
    return drafts__submit(d, job, cb, arg);
}

int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, int64_t timeout_ms,
                    game_drafts_cb cb, void *arg)
{
    return drafts__submit(d, drafts__job_new(DRAFTS__GET, game_id, account_id, timeout_ms, 0), cb,
                          arg);
}

void game_drafts_delete(game_drafts *d, int64_t game_id, int64_t account_id)
{
    drafts__job *job = drafts__job_new(DRAFTS__DEL, game_id, account_id, INT64_MAX, 0);
    if (!job || !drafts__enqueue(d, job)) {
        free(job);
        if (d->m_dropped)
            metric_add(d->m_dropped, 1);
        log_warn("draft_delete_dropped", "game=%lld account=%lld why=queue_full",
                 (long long)game_id, (long long)account_id);
    }
}

/* ------------------------------------------------------------------ */
/* The drafts thread                                                   */

static void drafts__pending_changed(game_drafts *d)
{
    if (d->m_pending)
        metric_set(d->m_pending, (int64_t)game_delset_count(d->owed));
}

/* After every exchange with Redis: the connection's state as it left it,
 * and the next idle PING a full interval away. */
static void drafts__redis_seen(game_drafts *d)
{
    if (d->m_redis_up)
        metric_set(d->m_redis_up, rpc_redis_context(d->conn) != NULL);
    d->next_probe_ms = drafts__now_ms() + DRAFTS__PROBE_MS;
}

/* ---- the pipeline: SET/GET jobs of a batch, one round trip ---------- */

/* Jobs waiting to be sent together, with their keys and argument vectors
 * (the drafts thread's; lives on its stack). */
typedef struct drafts__pipe {
    int n;
    drafts__job *jobs[DRAFTS__PIPELINE_MAX];
    char keys[DRAFTS__PIPELINE_MAX][RPC_REDIS_NAME_MAX];
    const char *argv[DRAFTS__PIPELINE_MAX][5];
    size_t argvlen[DRAFTS__PIPELINE_MAX][5];
    rpc_redis_cmd cmds[DRAFTS__PIPELINE_MAX];
    redisReply *replies[DRAFTS__PIPELINE_MAX];
} drafts__pipe;

static const char drafts__ttl[] = "604800"; /* GAME_DRAFT_TTL_S */
_Static_assert(GAME_DRAFT_TTL_S == 604800, "drafts__ttl must spell GAME_DRAFT_TTL_S");

/* Completes one sent job from its reply (NULL: Redis unreachable). */
static void drafts__complete(game_drafts *d, drafts__job *job, redisReply *r)
{
    if (r && r->type == REDIS_REPLY_ERROR) {
        log_warn("drafts_redis_refused", "cmd=%s err=\"%.*s\"",
                 job->kind == DRAFTS__SET ? "SET" : "GET", (int)(r->len > 100 ? 100 : r->len),
                 r->str);
        r = NULL;
    }
    if (!r)
        job->cb(job->arg, GAME_DRAFTS_UNAVAILABLE, NULL, 0);
    else if (job->kind == DRAFTS__GET && r->type == REDIS_REPLY_STRING)
        job->cb(job->arg, GAME_DRAFTS_OK, (const uint8_t *)r->str, r->len);
    else if (job->kind == DRAFTS__GET)
        job->cb(job->arg, GAME_DRAFTS_OK, NULL, 0); /* nil: no draft */
    else {
        /* The new draft replaced the one a commit wanted gone. */
        if (game_delset_remove(d->owed, job->game_id, job->account_id))
            drafts__pending_changed(d);
        job->cb(job->arg, GAME_DRAFTS_OK, NULL, 0);
    }
}

/* Sends what the pipeline holds and completes every job in it, in order. */
static void drafts__pipe_run(game_drafts *d, drafts__pipe *p)
{
    if (p->n == 0)
        return;
    rpc_redis_pipeline(d->conn, p->n, p->cmds, p->replies); /* NULLs when unreachable */
    drafts__redis_seen(d);
    for (int i = 0; i < p->n; i++) {
        drafts__complete(d, p->jobs[i], p->replies[i]);
        if (p->replies[i])
            freeReplyObject(p->replies[i]);
        free(p->jobs[i]);
    }
    p->n = 0;
}

/* Adds a SET or GET job to the pipeline (sending it first when full). */
static void drafts__pipe_add(game_drafts *d, drafts__pipe *p, drafts__job *job)
{
    if (p->n == DRAFTS__PIPELINE_MAX)
        drafts__pipe_run(d, p);
    int i = p->n;
    int klen = rpc_redis_draft_key(p->keys[i], sizeof p->keys[i], job->game_id, job->account_id);
    if (klen < 0) { /* handlers check the ids first */
        job->cb(job->arg, GAME_DRAFTS_UNAVAILABLE, NULL, 0);
        free(job);
        return;
    }
    const char **argv = p->argv[i];
    size_t *argvlen = p->argvlen[i];
    argv[1] = p->keys[i];
    argvlen[1] = (size_t)klen;
    if (job->kind == DRAFTS__SET) {
        argv[0] = "SET";
        argv[2] = (const char *)job->data;
        argv[3] = "EX";
        argv[4] = drafts__ttl;
        argvlen[0] = 3;
        argvlen[2] = job->len;
        argvlen[3] = 2;
        argvlen[4] = sizeof drafts__ttl - 1;
        p->cmds[i].argc = 5;
    } else {
        argv[0] = "GET";
        argvlen[0] = 3;
        p->cmds[i].argc = 2;
    }
    p->cmds[i].argv = argv;
    p->cmds[i].argvlen = argvlen;
    p->jobs[i] = job;
    p->n++;
}

/* Takes one job of a batch, in queue order. A delete waits for what the
 * pipeline holds (a save queued before it must not undo it); a get of a
 * key owed a delete waits too, since a save just before it in the
 * pipeline may settle the debt; otherwise the answer is "no draft". */
static void drafts__take(game_drafts *d, drafts__pipe *p, drafts__job *job)
{
    if (job->kind == DRAFTS__DEL) {
        drafts__pipe_run(d, p);
        int rc = game_delset_add(d->owed, job->game_id, job->account_id);
        if (rc == GAME_DELSET_FULL) {
            if (d->m_dropped)
                metric_add(d->m_dropped, 1);
            if (!d->full_logged)
                log_warn("draft_delete_dropped", "game=%lld account=%lld why=owed_set_full max=%d",
                         (long long)job->game_id, (long long)job->account_id,
                         GAME_DRAFTS_DELETES_MAX);
            d->full_logged = true;
        } else if (rc == GAME_DELSET_ADDED) {
            d->full_logged = false;
            drafts__pending_changed(d);
        }
        free(job);
        return;
    }
    if (job->deadline_ms > 0 && drafts__now_ms() >= job->deadline_ms) {
        job->cb(job->arg, GAME_DRAFTS_EXPIRED, NULL, 0);
        free(job);
        return;
    }
    if (job->kind == DRAFTS__GET && game_delset_contains(d->owed, job->game_id, job->account_id)) {
        drafts__pipe_run(d, p);
        if (game_delset_contains(d->owed, job->game_id, job->account_id)) {
            /* Deleted as far as anyone may know: its turn was committed. */
            job->cb(job->arg, GAME_DRAFTS_OK, NULL, 0);
            free(job);
            return;
        }
    }
    drafts__pipe_add(d, p, job);
}

/* Runs one command (a DEL of owed deletes); NULL when Redis cannot be
 * reached or refused it (an error reply is logged here). */
static redisReply *drafts__command(game_drafts *d, int argc, const char **argv,
                                   const size_t *argvlen)
{
    redisReply *r = rpc_redis_command_argv(d->conn, argc, argv, argvlen);
    drafts__redis_seen(d);
    if (r && r->type == REDIS_REPLY_ERROR) {
        log_warn("drafts_redis_refused", "cmd=%s err=\"%.*s\"", argv[0],
                 (int)(r->len > 100 ? 100 : r->len), r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* Sends the owed deletes, DRAFTS__DEL_BATCH keys a command, until none is
 * left or one command fails; then the next try waits for the connection's
 * backoff. */
static void drafts__flush(game_drafts *d)
{
    game_draft_ref refs[DRAFTS__DEL_BATCH];
    char keys[DRAFTS__DEL_BATCH][RPC_REDIS_NAME_MAX];
    const char *argv[DRAFTS__DEL_BATCH + 1];
    size_t argvlen[DRAFTS__DEL_BATCH + 1];
    size_t n;
    while ((n = game_delset_peek(d->owed, refs, DRAFTS__DEL_BATCH)) > 0) {
        argv[0] = "DEL";
        argvlen[0] = 3;
        for (size_t i = 0; i < n; i++) {
            int len =
                rpc_redis_draft_key(keys[i], sizeof keys[i], refs[i].game_id, refs[i].account_id);
            argv[i + 1] = keys[i];
            argvlen[i + 1] = len > 0 ? (size_t)len : 0;
        }
        redisReply *r = drafts__command(d, (int)n + 1, argv, argvlen);
        if (!r) {
            int wait = rpc_redis_retry_in_ms(d->conn);
            d->next_flush_ms = drafts__now_ms() + (wait > 0 ? wait : DRAFTS__REFUSED_RETRY_MS);
            log_debug("draft_deletes_deferred", "owed=%zu retry_ms=%lld",
                      game_delset_count(d->owed), (long long)(d->next_flush_ms - drafts__now_ms()));
            return;
        }
        freeReplyObject(r);
        for (size_t i = 0; i < n; i++)
            game_delset_remove(d->owed, refs[i].game_id, refs[i].account_id);
        if (d->m_deleted)
            metric_add(d->m_deleted, (int64_t)n);
        drafts__pending_changed(d);
    }
}

static void *drafts__main(void *arg)
{
    game_drafts *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        if (d->head) {
            drafts__job *batch = d->head;
            d->head = d->tail = NULL;
            d->queued = d->queued_dels = 0;
            if (d->m_queued)
                metric_set(d->m_queued, 0);
            pthread_mutex_unlock(&d->mu);
            drafts__pipe pipe;
            pipe.n = 0;
            while (batch) {
                drafts__job *next = batch->next;
                drafts__take(d, &pipe, batch);
                batch = next;
            }
            drafts__pipe_run(d, &pipe);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        bool owed = game_delset_count(d->owed) > 0;
        if (d->stopping)
            break;
        int64_t now = drafts__now_ms();
        if (owed && now >= d->next_flush_ms) {
            pthread_mutex_unlock(&d->mu);
            drafts__flush(d);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        if (now >= d->next_probe_ms) {
            /* Idle: is Redis still there? (Within its backoff the probe
             * fails at once, without a connect attempt.) */
            pthread_mutex_unlock(&d->mu);
            rpc_redis_probe(d->conn);
            drafts__redis_seen(d);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        int64_t wake =
            owed && d->next_flush_ms < d->next_probe_ms ? d->next_flush_ms : d->next_probe_ms;
        struct timespec until = {(time_t)(wake / 1000), (long)(wake % 1000) * 1000000};
        pthread_cond_timedwait(&d->cv, &d->mu, &until);
    }
    pthread_mutex_unlock(&d->mu);
    /* Stopping: one last try for what is owed (a restart loses the set;
     * the drafts' TTL is the backstop). */
    if (game_delset_count(d->owed) > 0) {
        d->next_flush_ms = 0;
        drafts__flush(d);
        size_t left = game_delset_count(d->owed);
        if (left > 0) {
            log_warn("draft_deletes_lost", "owed=%zu why=stopping", left);
            if (d->m_dropped)
                metric_add(d->m_dropped, (int64_t)left);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                      */

game_drafts *game_drafts_start(const char *addr, const char *secrets_dir, metrics_registry *reg)
{
    char err[160];
    pthread_condattr_t ca;
    game_drafts *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->conn = rpc_redis_create(addr, RPC_REDIS_USER_DRAFTS, secrets_dir, DRAFTS__TIMEOUT_MS, err,
                               sizeof err);
    if (!d->conn) {
        log_error("drafts_start_failed", "err=\"%s\"", err);
        goto fail;
    }
    d->owed = game_delset_create(GAME_DRAFTS_DELETES_MAX);
    if (!d->owed)
        goto fail;
    if (reg) {
        d->m_pending = metrics_gauge(reg, "game_drafts_deletes_owed", NULL,
                                     "Draft deletions waiting for Redis (retried until done)");
        d->m_deleted = metrics_counter(reg, "game_drafts_deleted_total", NULL,
                                       "Drafts deleted after their turn was committed");
        d->m_dropped = metrics_counter(reg, "game_drafts_deletes_dropped_total", NULL,
                                       "Draft deletions given up (bound reached or shutdown); "
                                       "the draft's TTL removes it");
        d->m_redis_up = metrics_gauge(reg, "game_drafts_redis_up", NULL,
                                      "1 while the drafts connection to Redis works (checked "
                                      "by every command, and by a PING each second when idle)");
        d->m_queued = metrics_gauge(reg, "game_drafts_queued_jobs", NULL,
                                    "SaveDraft/GetDraft jobs waiting for the drafts thread "
                                    "(refused UNAVAILABLE past 4096)");
    }
    pthread_mutex_init(&d->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->thread, NULL, drafts__main, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        goto fail;
    }
    return d;
fail:
    game_delset_destroy(d->owed);
    rpc_redis_destroy(d->conn);
    free(d);
    return NULL;
}

void game_drafts_stop(game_drafts *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    game_delset_destroy(d->owed);
    rpc_redis_destroy(d->conn);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/*
 * drafts.c — the hiredis connection pool behind SaveDraft / GetDraft.
 */
#include "drafts.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/log.h"
#include "rpc/rpc.h"

#define DRAFTS__TIMEOUT_US (200 * 1000)
#define DRAFTS__RETRY_MS 1000

typedef struct drafts__slot {
    pthread_mutex_t mu;
    redisContext *rc;
    int64_t next_connect_ms;
    bool down_logged; /* one warning per outage and slot */
} drafts__slot;

struct game_drafts {
    char host[128];
    int port;
    int nslots;
    drafts__slot slots[];
};

static int64_t drafts__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

game_drafts *game_drafts_create(const char *host, int port, int slots)
{
    if (slots < 1)
        slots = 1;
    game_drafts *d = calloc(1, sizeof *d + (size_t)slots * sizeof(drafts__slot));
    if (!d)
        return NULL;
    snprintf(d->host, sizeof d->host, "%s", host);
    d->port = port;
    d->nslots = slots;
    for (int i = 0; i < slots; i++)
        pthread_mutex_init(&d->slots[i].mu, NULL);
    return d;
}

void game_drafts_destroy(game_drafts *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nslots; i++) {
        if (d->slots[i].rc)
            redisFree(d->slots[i].rc);
        pthread_mutex_destroy(&d->slots[i].mu);
    }
    free(d);
}

void game_drafts_key(char *buf, size_t len, int64_t game_id, int64_t account_id)
{
    snprintf(buf, len, "draft:%lld:%lld", (long long)game_id, (long long)account_id);
}

/* The calling thread's slot, locked; its connection made if needed.
 * Returns NULL (slot unlocked) when Redis cannot be reached now. */
static drafts__slot *drafts__take(game_drafts *d)
{
    int w = rpc_current_worker();
    drafts__slot *s = &d->slots[w >= 0 && w < d->nslots - 1 ? w : d->nslots - 1];
    pthread_mutex_lock(&s->mu);
    if (s->rc)
        return s;
    int64_t now = drafts__now_ms();
    if (now < s->next_connect_ms)
        goto fail;
    struct timeval tv = {0, DRAFTS__TIMEOUT_US};
    s->rc = redisConnectWithTimeout(d->host, d->port, tv);
    if (!s->rc || s->rc->err) {
        if (!s->down_logged)
            log_warn("drafts_redis_down", "addr=%s:%d err=\"%s\"", d->host, d->port,
                     s->rc ? s->rc->errstr : "oom");
        s->down_logged = true;
        if (s->rc)
            redisFree(s->rc);
        s->rc = NULL;
        s->next_connect_ms = now + DRAFTS__RETRY_MS;
        goto fail;
    }
    redisSetTimeout(s->rc, tv);
    s->down_logged = false;
    return s;
fail:
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Drops a broken connection; the slot reconnects after the retry delay. */
static void drafts__broken(drafts__slot *s)
{
    log_warn("drafts_redis_error", "err=\"%s\"", s->rc ? s->rc->errstr : "");
    if (s->rc)
        redisFree(s->rc);
    s->rc = NULL;
    s->next_connect_ms = drafts__now_ms() + DRAFTS__RETRY_MS;
}

int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft)
{
    char key[64];
    uint8_t stackbuf[1024];
    uint8_t *buf = stackbuf;
    int rc = GAME_DRAFTS_UNAVAILABLE;
    size_t len = scrabble__v1__draft__get_packed_size(draft);
    if (len > sizeof stackbuf && !(buf = malloc(len)))
        return GAME_DRAFTS_UNAVAILABLE;
    scrabble__v1__draft__pack(draft, buf);
    game_drafts_key(key, sizeof key, game_id, account_id);
    drafts__slot *s = drafts__take(d);
    if (!s)
        goto out;
    redisReply *r = redisCommand(s->rc, "SET %s %b EX %d", key, buf, len, GAME_DRAFT_TTL_S);
    if (!r) {
        drafts__broken(s);
    } else {
        rc = r->type == REDIS_REPLY_ERROR ? GAME_DRAFTS_UNAVAILABLE : GAME_DRAFTS_OK;
        freeReplyObject(r);
    }
    pthread_mutex_unlock(&s->mu);
out:
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, rpc_arena *arena,
                    Scrabble__V1__Draft **out)
{
    char key[64];
    int rc = GAME_DRAFTS_UNAVAILABLE;
    *out = NULL;
    game_drafts_key(key, sizeof key, game_id, account_id);
    drafts__slot *s = drafts__take(d);
    if (!s)
        return GAME_DRAFTS_UNAVAILABLE;
    redisReply *r = redisCommand(s->rc, "GET %s", key);
    if (!r) {
        drafts__broken(s);
    } else {
        if (r->type == REDIS_REPLY_NIL) {
            rc = GAME_DRAFTS_OK;
        } else if (r->type == REDIS_REPLY_STRING) {
            *out = scrabble__v1__draft__unpack(rpc_arena_allocator(arena), r->len,
                                               (const uint8_t *)r->str);
            rc = *out ? GAME_DRAFTS_OK : GAME_DRAFTS_CORRUPT;
        }
        freeReplyObject(r);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

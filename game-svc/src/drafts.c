/*
 * drafts.c — the connection pool behind SaveDraft / GetDraft.
 */
#include "drafts.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/log.h"
#include "rpc/redis.h"
#include "rpc/rpc.h"

#define DRAFTS__TIMEOUT_MS 200

typedef struct drafts__slot {
    pthread_mutex_t mu;
    rpc_redis *conn;
} drafts__slot;

struct game_drafts {
    int nslots;
    drafts__slot slots[];
};

game_drafts *game_drafts_create(const char *addr, const char *secrets_dir, int slots)
{
    char err[160];
    if (slots < 1)
        slots = 1;
    game_drafts *d = calloc(1, sizeof *d + (size_t)slots * sizeof(drafts__slot));
    if (!d)
        return NULL;
    for (int i = 0; i < slots; i++) {
        d->slots[i].conn = rpc_redis_create(addr, RPC_REDIS_USER_DRAFTS, secrets_dir,
                                            DRAFTS__TIMEOUT_MS, err, sizeof err);
        if (!d->slots[i].conn) {
            log_error("drafts_start_failed", "err=\"%s\"", err);
            d->nslots = i;
            game_drafts_destroy(d);
            return NULL;
        }
        pthread_mutex_init(&d->slots[i].mu, NULL);
        d->nslots = i + 1;
    }
    return d;
}

void game_drafts_destroy(game_drafts *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nslots; i++) {
        rpc_redis_destroy(d->slots[i].conn);
        pthread_mutex_destroy(&d->slots[i].mu);
    }
    free(d);
}

/* The calling thread's slot, locked. */
static drafts__slot *drafts__take(game_drafts *d)
{
    int w = rpc_current_worker();
    drafts__slot *s = &d->slots[w >= 0 && w < d->nslots - 1 ? w : d->nslots - 1];
    pthread_mutex_lock(&s->mu);
    return s;
}

/* Runs one command on the caller's slot. Returns the reply (NULL when Redis
 * cannot be reached: rpc/redis.h has logged it); an error reply (NOPERM
 * after a misconfigured ACL) is logged here and returned as NULL. */
static redisReply *drafts__command(game_drafts *d, int argc, const char **argv,
                                   const size_t *argvlen)
{
    drafts__slot *s = drafts__take(d);
    redisReply *r = rpc_redis_command_argv(s->conn, argc, argv, argvlen);
    pthread_mutex_unlock(&s->mu);
    if (r && r->type == REDIS_REPLY_ERROR) {
        log_warn("drafts_redis_refused", "cmd=%s err=\"%.*s\"", argv[0],
                 (int)(r->len > 100 ? 100 : r->len), r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

int game_drafts_save(game_drafts *d, int64_t game_id, int64_t account_id,
                     const Scrabble__V1__Draft *draft)
{
    char key[RPC_REDIS_NAME_MAX], ttl[16];
    uint8_t stackbuf[1024];
    uint8_t *buf = stackbuf;
    int rc = GAME_DRAFTS_UNAVAILABLE;
    if (rpc_redis_draft_key(key, sizeof key, game_id, account_id) < 0)
        return GAME_DRAFTS_UNAVAILABLE;
    size_t len = scrabble__v1__draft__get_packed_size(draft);
    if (len > sizeof stackbuf && !(buf = malloc(len)))
        return GAME_DRAFTS_UNAVAILABLE;
    scrabble__v1__draft__pack(draft, buf);
    int ttllen = snprintf(ttl, sizeof ttl, "%d", GAME_DRAFT_TTL_S);
    const char *argv[5] = {"SET", key, (const char *)buf, "EX", ttl};
    size_t argvlen[5] = {3, strlen(key), len, 2, (size_t)ttllen};
    redisReply *r = drafts__command(d, 5, argv, argvlen);
    if (r) {
        rc = GAME_DRAFTS_OK;
        freeReplyObject(r);
    }
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int game_drafts_get(game_drafts *d, int64_t game_id, int64_t account_id, rpc_arena *arena,
                    Scrabble__V1__Draft **out)
{
    char key[RPC_REDIS_NAME_MAX];
    int rc = GAME_DRAFTS_UNAVAILABLE;
    *out = NULL;
    if (rpc_redis_draft_key(key, sizeof key, game_id, account_id) < 0)
        return GAME_DRAFTS_UNAVAILABLE;
    const char *argv[2] = {"GET", key};
    size_t argvlen[2] = {3, strlen(key)};
    redisReply *r = drafts__command(d, 2, argv, argvlen);
    if (!r)
        return GAME_DRAFTS_UNAVAILABLE;
    if (r->type == REDIS_REPLY_NIL) {
        rc = GAME_DRAFTS_OK;
    } else if (r->type == REDIS_REPLY_STRING) {
        *out = scrabble__v1__draft__unpack(rpc_arena_allocator(arena), r->len,
                                           (const uint8_t *)r->str);
        rc = *out ? GAME_DRAFTS_OK : GAME_DRAFTS_CORRUPT;
    }
    freeReplyObject(r);
    return rc;
}

/*
 * event_log.c — building the event records (see event_log.h).
 */
#include "event_log.h"

#include <string.h>

int game_event_add(rpc_arena *a, game_event_list *l, int64_t account_id,
                   const Scrabble__V1__Event *e, const char *dedupe_key)
{
    if (account_id <= 0 || l->n >= GAME_EVENT_LIST_MAX)
        return -1;
    if (!l->v && !(l->v = rpc_arena_calloc(a, GAME_EVENT_LIST_MAX, sizeof *l->v)))
        return -1;
    Scrabble__V1__EventRecord *r =
        RPC_ARENA_MSG(a, Scrabble__V1__EventRecord, scrabble__v1__event_record__init);
    size_t n = scrabble__v1__event__get_packed_size(e);
    uint8_t *buf = rpc_arena_alloc(a, n ? n : 1);
    if (!r || !buf)
        return -1;
    r->account_id = account_id;
    r->body.len = scrabble__v1__event__pack(e, buf);
    r->body.data = buf;
    if (dedupe_key && !(r->dedupe_key = rpc_arena_strdup(a, dedupe_key)))
        return -1;
    l->v[l->n++] = r;
    return 0;
}

/*
 * seeks.c — the game of a seek match whose poster's gateway did not create
 * it (docs/API.md, Seeks; store-svc's 0010_seeks.sql). A match commits in
 * store-svc with its invitation (every seat accepted); the poster's
 * gateway then calls CreateGame, and if that never happens (the gateway
 * died, game-svc was unreachable), the match comes back to some poller
 * from ClaimDeadlines as DEADLINE_KIND_SEEK_MATCH a few seconds later,
 * leased like a timeout. This file does what CreateGame does for it, on
 * the poller thread: store CreateGame (idempotent per invitation), the
 * first clock (StartClock: set once), then GAME_STARTED / YOUR_TURN
 * (AppendEvents, dedupe keys "started:<game>", "turn:<game>:0"). Each
 * step is safe to repeat, so a race with a late gateway, or a poller
 * that dies half way (the lease hands the match out again), still makes
 * one game with one set of events. The store drops the match once its
 * game exists.
 *
 * Like the gateway's CreateGame, it builds the opening state from the
 * record without caching it: the game's owner (by game id) loads it on
 * its first call.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "game_svc.h"
#include "rpc/log.h"

static void seeks__announced(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    (void)reply;
    if (st->code != GRPC_STATUS_OK)
        log_warn("seek_game_announce_failed", "game=%lld code=%s reason=%s",
                 (long long)(intptr_t)arg, rpc_status_code_name(st->code), st->reason);
}

/* One blocking store call on the poller thread, its reply in a. */
static int seeks__call(game_svc *svc, rpc_arena *a, int method, const ProtobufCMessage *req,
                       const ProtobufCMessageDescriptor *desc, ProtobufCMessage **reply)
{
    rpc_status st;
    rpc_client_opts opts = {.timeout_ms = svc->store.timeout_ms};
    if (rpc_client_unary_sync(svc->store.ch, game_store_path(&svc->store, method), req, desc, &opts,
                              rpc_arena_allocator(a), reply, &st) != GRPC_STATUS_OK) {
        log_warn("seek_game_store_failed", "method=%s code=%s reason=%s",
                 game_store_path(&svc->store, method), rpc_status_code_name(st.code), st.reason);
        return -1;
    }
    return 0;
}

void game_seek_create(game_svc *svc, rpc_arena *a, const Scrabble__V1__Deadline *d)
{
    const Scrabble__V1__Invitation *inv = d->invitation;
    Scrabble__V1__StoreCreateGameRequest creq = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    ProtobufCMessage *reply = NULL;
    uint64_t seed = 0;
    if (!inv || inv->invitation_id <= 0)
        return;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
        seed = (uint64_t)game_now_ms() * 0x9e3779b97f4a7c15ull;
    creq.invitation_id = inv->invitation_id;
    creq.seed = seed & INT64_MAX; /* fits a Postgres bigint */
    if (seeks__call(svc, a, GAME_STORE_CREATE_GAME, &creq.base,
                    &scrabble__v1__game_record__descriptor, &reply) != 0)
        return;
    Scrabble__V1__GameRecord *rec = (Scrabble__V1__GameRecord *)reply;
    log_info("seek_game_created", "game=%lld invitation=%lld by=poller", (long long)rec->game_id,
             (long long)inv->invitation_id);
    /* Moves were made: whoever created it announced it first. */
    if (rec->seq != 0 || rec->n_moves != 0)
        return;
    game_entry *tmp = calloc(1, sizeof *tmp);
    rpc_status st;
    if (!tmp)
        return;
    tmp->game_id = rec->game_id;
    if (game_entry_init_from_record(svc, tmp, rec, &st) != 0) {
        log_warn("seek_game_load_failed", "game=%lld reason=%s", (long long)rec->game_id,
                 st.reason);
        goto done;
    }
    if (!rec->clock || rec->clock->turn_started_ms == 0) {
        /* The first clock, as CreateGame sets it (handlers.c). */
        Scrabble__V1__StartClockRequest sreq = SCRABBLE__V1__START_CLOCK_REQUEST__INIT;
        game_clock_start(&tmp->clock, (int)rec->n_seats, 0, game_clock_now(svc),
                         svc->cfg.abandon_after_us / 1000);
        sreq.game_id = rec->game_id;
        if (!(sreq.clock = game_view_clock_record(a, &tmp->clock, (int)rec->n_seats)) ||
            seeks__call(svc, a, GAME_STORE_START_CLOCK, &sreq.base,
                        &scrabble__v1__game_clock__descriptor, &reply) != 0)
            goto done;
        Scrabble__V1__GameRecord with = *rec;
        with.clock = (Scrabble__V1__GameClock *)reply;
        game_clock_from_record(tmp, &with);
    }
    /* No caller: the poller's work keeps the fixed store deadline. */
    if (game_announce_start(svc, NULL, tmp, a, seeks__announced, (void *)(intptr_t)rec->game_id) !=
        0)
        log_warn("seek_game_announce_failed", "game=%lld reason=not_started",
                 (long long)rec->game_id);
done:
    free(tmp->moves);
    free(tmp);
}

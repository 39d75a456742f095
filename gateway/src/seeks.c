/*
 * seeks.c — the lobby (docs/API.md, Seeks). PostSeek checks the request and
 * the lexicon (with every game-svc, as Invite does), has store-svc post
 * and match it in one transaction (PostSeek, 0010_seeks.sql: a seek is
 * matched once, whichever gateways race), and when it matched, has the
 * owning game-svc create the game exactly as the last acceptance of an
 * invitation does (CreateGame on the instance picked by the invitation id:
 * GAME_STARTED to every seat, YOUR_TURN to the first mover). CreateGame is
 * idempotent per invitation, so this call and store-svc's fallback (a
 * game-svc poller creates the game of a match that has none after a few
 * seconds: this gateway may die between the two calls) make one game.
 * CancelSeek and ListSeeks are store calls.
 */
#include "gateway.h"

#include "scrabble/v1/edge.pb-c.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

#define GW_SEEK__RATING_MAX 4000

/* The game exists: the reply is the seek with its game. */
static void gw_seek__game_created(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Seek *k = r->seek;
    k->game_id = ((const Scrabble__V1__GameState *)reply)->game_id;
    rpc_call_reply(r->call, &k->base);
}

static void gw_seek__posted(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Seek *k = (Scrabble__V1__Seek *)reply;
    if (k->status != SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_MATCHED || k->invitation_id <= 0 ||
        k->game_id != 0) {
        rpc_call_reply(r->call, reply);
        return;
    }
    r->seek = k;
    gw_create_game(r, k->invitation_id, gw_seek__game_created);
}

static void gw_seek__store_post(gw_req *r)
{
    const Scrabble__V1__SeekRequest *in = (const Scrabble__V1__SeekRequest *)r->msg;
    Scrabble__V1__StorePostSeekRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StorePostSeekRequest,
                      scrabble__v1__store_post_seek_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->lexicon = in->lexicon;
    q->seats = in->seats;
    q->time_control = in->time_control; /* store-svc checks its ranges */
    q->rated = in->rated;
    q->min_rating = in->min_rating;
    q->max_rating = in->max_rating;
    q->expires_in_seconds = in->expires_in_seconds; /* bounded by store-svc's --seek-ttl */
    gw_store_call(r, GW_STORE(PostSeek), &q->base, &scrabble__v1__seek__descriptor,
                  gw_seek__posted);
}

void gw_seek_post(gw_req *r)
{
    const Scrabble__V1__SeekRequest *in = (const Scrabble__V1__SeekRequest *)r->msg;
    /* The shape is refused here, before any downstream call; store-svc
     * checks it again (and the expiry against its --seek-ttl). */
    if (in->seats != 0 && (in->seats < 2 || in->seats > 4)) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_seats",
                      "seats must be 2..4 (0 means 2)");
        return;
    }
    if (in->min_rating < 0 || in->min_rating > GW_SEEK__RATING_MAX || in->max_rating < 0 ||
        in->max_rating > GW_SEEK__RATING_MAX) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_rating_range",
                      "min_rating and max_rating must be 0..%d (0: no bound)", GW_SEEK__RATING_MAX);
        return;
    }
    if (in->min_rating > 0 && in->max_rating > 0 && in->min_rating > in->max_rating) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_rating_range",
                      "min_rating %d is above max_rating %d: no opponent could match",
                      in->min_rating, in->max_rating);
        return;
    }
    if (in->expires_in_seconds < 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_expiry",
                      "expires_in_seconds must not be negative");
        return;
    }
    gw_lexicon_check(r, in->lexicon, gw_seek__store_post);
}

void gw_seek_cancel(gw_req *r)
{
    const Scrabble__V1__CancelSeekRequest *in = (const Scrabble__V1__CancelSeekRequest *)r->msg;
    if (in->seek_id <= 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "seek_id must be positive");
        return;
    }
    Scrabble__V1__StoreCancelSeekRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreCancelSeekRequest,
                      scrabble__v1__store_cancel_seek_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->seek_id = in->seek_id;
    gw_store_call(r, GW_STORE(CancelSeek), &q->base, &scrabble__v1__seek__descriptor,
                  gw_store_relay);
}

void gw_seek_list(gw_req *r)
{
    const Scrabble__V1__ListSeeksRequest *in = (const Scrabble__V1__ListSeeksRequest *)r->msg;
    Scrabble__V1__StoreListSeeksRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreListSeeksRequest,
                      scrabble__v1__store_list_seeks_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->page_size = in->page_size;
    q->page_token = in->page_token;
    q->lexicon = in->lexicon;
    q->mine = in->mine;
    gw_store_call(r, GW_STORE(ListSeeks), &q->base, &scrabble__v1__list_seeks_reply__descriptor,
                  gw_store_relay);
}

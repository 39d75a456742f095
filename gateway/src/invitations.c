/*
 * invitations.c — how a game comes to be. Invite checks the lexicon with
 * every game-svc instance, has store-svc create the invitation and append
 * an INVITATION event to each invitee's log; RespondInvitation stores the answer
 * and, on the last acceptance, has the owning game-svc create the game
 * (CreateGame), which announces it to the seats; ListInvitations lists the
 * caller's. The store calls go through accounts.c's gw_store_call.
 */
#include "gateway.h"

#include "route.h"
#include "scrabble/v1/edge.pb-c.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

#include <stdio.h>
#include <string.h>

/* ---- Invite ------------------------------------------------------ */

/* Store created the invitation: every invitee (seats 1..) gets an
 * INVITATION event in its log (AppendEvents, dedupe key "invited:<id>"), and
 * the reply waits for that commit, so an acknowledged invitation has its
 * events. A failure of the append fails the call: the client's retry with
 * its request_id finds the same invitation and appends again (the dedupe
 * key keeps one event per invitee). Once answered, an invitation has
 * nothing left to invite to, and only its reply is repeated. */
static void gw_inv__invite_logged(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    (void)reply;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    rpc_call_reply(r->call, &r->invited->base);
}

/* Writes event `type` about inv to the log of every seat but the
 * caller's (when inv is in status `when`), with the dedupe key
 * "<key>:<invitation id>", then replies with inv (gw_inv__invite_logged).
 * A retry appends again and the key keeps one event per seat. */
static void gw_inv__reply_telling_invitees(gw_req *r, Scrabble__V1__Invitation *inv, int type,
                                           int when, const char *key_prefix)
{
    rpc_arena *a = rpc_call_arena(r->call);
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    ev.type = (Scrabble__V1__EventType)type;
    ev.invitation = inv;
    ev.from_account_id = r->who.account_id;
    ev.from_handle = r->who.handle;
    ev.at_ms = gw_now_ms();
    size_t n = (int)inv->status == when ? inv->n_seats : 0;
    Scrabble__V1__AppendEventsRequest *q = RPC_ARENA_MSG(a, Scrabble__V1__AppendEventsRequest,
                                                         scrabble__v1__append_events_request__init);
    size_t len = scrabble__v1__event__get_packed_size(&ev);
    uint8_t *body = rpc_arena_alloc(a, len ? len : 1);
    char *key = rpc_arena_printf(a, "%s:%lld", key_prefix, (long long)inv->invitation_id);
    if (gw_out_of_memory(r, q) || gw_out_of_memory(r, body) || gw_out_of_memory(r, key))
        return;
    q->events = rpc_arena_calloc(a, n ? n : 1, sizeof *q->events);
    if (gw_out_of_memory(r, q->events))
        return;
    len = scrabble__v1__event__pack(&ev, body);
    for (size_t i = 0; i < n; i++) {
        int64_t to = inv->seats[i]->account_id;
        if (to <= 0 || to == r->who.account_id)
            continue;
        Scrabble__V1__EventRecord *rec =
            RPC_ARENA_MSG(a, Scrabble__V1__EventRecord, scrabble__v1__event_record__init);
        if (gw_out_of_memory(r, rec))
            return;
        rec->account_id = to;
        rec->body.data = body;
        rec->body.len = len;
        rec->dedupe_key = key;
        q->events[q->n_events++] = rec;
    }
    if (q->n_events == 0) {
        rpc_call_reply(r->call, &inv->base);
        return;
    }
    r->invited = inv;
    gw_store_call(r, GW_STORE(AppendEvents), &q->base,
                  &scrabble__v1__append_events_reply__descriptor, gw_inv__invite_logged);
}

static bool gw_inv__all_accepted(const Scrabble__V1__Invitation *inv);
static void gw_inv__start_game(gw_req *r, Scrabble__V1__Invitation *inv);

static void gw_inv__invited(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    /* Bots accept as they are invited (0008_bots.sql): an invitation of
     * bots only is accepted by every seat already, and its game starts
     * now, as on a last acceptance. A retry (same request_id) finds it
     * open and accepted again until the game exists, then started with its
     * game id; CreateGame is idempotent per invitation. */
    if (gw_inv__all_accepted((Scrabble__V1__Invitation *)reply)) {
        gw_inv__start_game(r, (Scrabble__V1__Invitation *)reply);
        return;
    }
    gw_inv__reply_telling_invitees(
        r, (Scrabble__V1__Invitation *)reply, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION,
        SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN, "invited");
}

static void gw_inv__create_invitation(gw_req *r)
{
    const Scrabble__V1__InviteRequest *in = (const Scrabble__V1__InviteRequest *)r->msg;
    Scrabble__V1__CreateInvitationRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__CreateInvitationRequest,
                      scrabble__v1__create_invitation_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->inviter_id = r->who.account_id;
    q->n_invitee_handles = in->n_invitee_handles;
    q->invitee_handles = in->invitee_handles;
    q->lexicon = in->lexicon;
    q->request_id = in->request_id;
    q->time_control = in->time_control; /* store-svc checks its ranges */
    q->rated = in->rated;
    q->public_game = in->public_game;
    gw_store_call(r, GW_STORE(CreateInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_inv__invited);
}

/* Validate before you create: only game-svc knows which lexicons exist (it
 * loads <name>.kwg from its --lexicon-dir), and the game an invitation (or
 * a seek) becomes may be owned by any game-svc instance (rendezvous hash of
 * ids that do not exist yet). So the gateway asks every instance, in
 * parallel, CheckWord("", lexicon): the lexicon is refused NOT_FOUND
 * unknown_lexicon when any instance lacks it (a game that instance would
 * own could never load), accepted when every instance that answered has
 * it, and the call fails UNAVAILABLE only when no instance answered. The
 * callbacks all run on this call's worker thread, so the tally needs no
 * lock. */
typedef struct gw_inv__lexicon_check {
    gw_req *r;
    const char *lexicon;
    gw_action next;
    int pending, have, lack;
    rpc_status failure; /* the last answer that was neither yes nor no */
} gw_inv__lexicon_check;

static void gw_inv__lexicon_done(gw_inv__lexicon_check *lc)
{
    gw_req *r = lc->r;
    if (lc->lack > 0)
        rpc_call_fail(r->call, GRPC_STATUS_NOT_FOUND, "unknown_lexicon", "no lexicon named %s",
                      lc->lexicon);
    else if (lc->have == 0)
        gw_fail_downstream(r, &lc->failure);
    else
        lc->next(r);
}

static void gw_inv__lexicon_answer(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_inv__lexicon_check *lc = arg;
    if (st->code == GRPC_STATUS_OK)
        lc->have++;
    else if (st->code == GRPC_STATUS_NOT_FOUND)
        lc->lack++;
    else
        lc->failure = *st;
    if (--lc->pending == 0)
        gw_inv__lexicon_done(lc);
}

void gw_lexicon_check(gw_req *r, const char *lexicon, gw_action next)
{
    /* No lexicon named: game-svc's default, which it loads at start. */
    if (!lexicon || !lexicon[0]) {
        next(r);
        return;
    }
    gw_ctx *gw = r->gw;
    rpc_arena *a = rpc_call_arena(r->call);
    gw_inv__lexicon_check *lc = rpc_arena_calloc(a, 1, sizeof *lc);
    Scrabble__V1__CheckWordRequest *q =
        RPC_ARENA_MSG(a, Scrabble__V1__CheckWordRequest, scrabble__v1__check_word_request__init);
    if (gw_out_of_memory(r, lc) || gw_out_of_memory(r, q))
        return;
    q->word = "";
    q->lexicon = (char *)lexicon;
    lc->r = r;
    lc->lexicon = lexicon;
    lc->next = next;
    rpc_status_set(&lc->failure, GRPC_STATUS_UNAVAILABLE, "unavailable",
                   "no game service answered");
    /* One extra count held while the calls start, so that a callback run
     * before the loop ends cannot finish the tally early. */
    lc->pending = gw->ngames + 1;
    for (int i = 0; i < gw->ngames; i++) {
        rpc_client_opts o = gw_downstream_opts(r);
        if (rpc_client_unary(gw->games[i], "/scrabble.v1.Game/CheckWord", &q->base,
                             &scrabble__v1__check_word_reply__descriptor, &o,
                             gw_inv__lexicon_answer, lc) != RPC_OK) {
            rpc_status st;
            rpc_status_set(&st, GRPC_STATUS_UNAVAILABLE, "unavailable", "game service unreachable");
            gw_inv__lexicon_answer(lc, &st, NULL);
        }
    }
    if (--lc->pending == 0)
        gw_inv__lexicon_done(lc);
}

void gw_inv_invite(gw_req *r)
{
    const Scrabble__V1__InviteRequest *in = (const Scrabble__V1__InviteRequest *)r->msg;
    if (in->n_invitee_handles < 1 || in->n_invitee_handles > 3) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_seats",
                      "invite 1 to 3 other players");
        return;
    }
    gw_lexicon_check(r, in->lexicon, gw_inv__create_invitation);
}

/* ---- RespondInvitation, and the game it may start -------------------- */

static void gw_inv__game_created(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Invitation *inv = r->accepted;
    inv->status = SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED;
    inv->game_id = ((const Scrabble__V1__GameState *)reply)->game_id;
    rpc_call_reply(r->call, &inv->base);
}

static bool gw_inv__all_accepted(const Scrabble__V1__Invitation *inv)
{
    if (inv->status != SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN ||
        inv->game_id != 0 || inv->n_seats < 2)
        return false;
    /* Seat 0 is the inviter, who accepted by inviting; store may record
     * that seat's answer either way. */
    for (size_t i = 1; i < inv->n_seats; i++)
        if (inv->seats[i]->answer != SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_ACCEPTED)
            return false;
    return true;
}

/* The answer is stored; if it was the last acceptance, game-svc (the
 * instance chosen by the invitation id) creates the game, publishes
 * GAME_STARTED to every seat and YOUR_TURN to seat 0, and the reply carries
 * the game id. CreateGame is idempotent per invitation, so a retry after a
 * lost reply starts nothing twice. */
static void gw_inv__responded(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Invitation *inv = (Scrabble__V1__Invitation *)reply;
    if (!gw_inv__all_accepted(inv)) {
        rpc_call_reply(r->call, reply);
        return;
    }
    gw_inv__start_game(r, inv);
}

/* Has the owning game-svc create the game of fully accepted invitation
 * inv; the reply is inv, started, with the game id. */
static void gw_inv__start_game(gw_req *r, Scrabble__V1__Invitation *inv)
{
    r->accepted = inv;
    gw_create_game(r, inv->invitation_id, gw_inv__game_created);
}

void gw_create_game(gw_req *r, int64_t invitation_id, rpc_unary_cb done)
{
    Scrabble__V1__CreateGameRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__CreateGameRequest,
                      scrabble__v1__create_game_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->invitation_id = invitation_id;
    gw_ctx *gw = r->gw;
    int owner = gw_route_pick(invitation_id, gw->game_hash, (size_t)gw->ngames);
    rpc_client_opts o = gw_downstream_opts(r);
    if (rpc_client_unary(gw->games[owner], "/scrabble.v1.Game/CreateGame", &q->base,
                         &scrabble__v1__game_state__descriptor, &o, done, r) != RPC_OK)
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "game service unreachable");
}

void gw_inv_respond(gw_req *r)
{
    const Scrabble__V1__RespondInvitationRequest *in =
        (const Scrabble__V1__RespondInvitationRequest *)r->msg;
    if (in->invitation_id <= 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "invitation_id must be positive");
        return;
    }
    Scrabble__V1__StoreRespondInvitationRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreRespondInvitationRequest,
                      scrabble__v1__store_respond_invitation_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->invitation_id = in->invitation_id;
    q->accept = in->accept;
    gw_store_call(r, GW_STORE(RespondInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_inv__responded);
}

/* Cancelled (or already cancelled: a retry): every invitee gets
 * INVITATION_CANCELLED in its log before the reply; a retry appends again
 * (the first attempt may have died before appending) and the dedupe key
 * "cancelled:<id>" keeps one per invitee. */
static void gw_inv__cancelled(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    gw_inv__reply_telling_invitees(r, (Scrabble__V1__Invitation *)reply,
                                   SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION_CANCELLED,
                                   SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_CANCELLED,
                                   "cancelled");
}

void gw_inv_cancel(gw_req *r)
{
    const Scrabble__V1__CancelInvitationRequest *in =
        (const Scrabble__V1__CancelInvitationRequest *)r->msg;
    if (in->invitation_id <= 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "invitation_id must be positive");
        return;
    }
    Scrabble__V1__StoreCancelInvitationRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreCancelInvitationRequest,
                      scrabble__v1__store_cancel_invitation_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->invitation_id = in->invitation_id;
    gw_store_call(r, GW_STORE(CancelInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_inv__cancelled);
}

void gw_inv_list(gw_req *r)
{
    Scrabble__V1__AccountRef *q = RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__AccountRef,
                                                scrabble__v1__account_ref__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    gw_store_call(r, GW_STORE(ListInvitations), &q->base,
                  &scrabble__v1__list_invitations_reply__descriptor, gw_store_relay);
}

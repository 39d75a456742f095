/*
 * accounts.c — the Edge methods store-svc answers: sessions, profiles,
 * stats, invitations, the game list. Each translates the Edge request into
 * the Store one where they differ (the caller's account id is added from
 * the authenticated identity, never taken from the client), calls store-svc
 * asynchronously on its long-lived channel, and relays the reply.
 *
 * Replies are decoded into the call's arena (gw_downstream_opts) so a
 * callback may keep them across a second downstream call.
 */
#include "gateway.h"

#include "route.h"
#include "scrabble/v1/edge.pb-c.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define GW_STORE(M) "/scrabble.v1.Store/" #M

static void gw_acc__relay(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    rpc_call_reply(r->call, reply);
}

static void gw_acc__store(gw_req *r, const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *reply_desc, rpc_unary_cb cb)
{
    rpc_client_opts o = gw_downstream_opts(r);
    if (rpc_client_unary(r->gw->store, method, req, reply_desc, &o, cb, r) != RPC_OK)
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store service unreachable");
}

static bool gw_acc__oom(gw_req *r, const void *p)
{
    if (p)
        return false;
    rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
    return true;
}

/* ---- sessions ---------------------------------------------------- */

/* Register and Login are the only calls without a token, so they carry
 * their own throttles (throttle.h), all answered from gateway memory: a
 * rejected attempt costs a hash and a lock, allocates nothing outside the
 * call's arena and never reaches store-svc.
 *   1. per client address, before the body is decoded;
 *   2. per handle (and, for Login, the failed-login backoff) once decoded.
 * The handle key is ASCII-lower-cased so case variants share one bucket. */

static int64_t gw_acc__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Finishes r's call RESOURCE_EXHAUSTED login_throttled or
 * register_throttled after a throttle said rc (GW_THROTTLE_RATE or
 * _BACKOFF) for `by`. */
static void gw_acc__throttled(gw_req *r, int kind, int by, int rc, int64_t retry_ms)
{
    if (rc == GW_THROTTLE_BACKOFF)
        by = GW_TH_BY_BACKOFF;
    static const char *const what[GW_TH_BY_COUNT] = {"from this address", "for this handle",
                                                     "after failed logins for this handle"};
    long long s = (long long)(retry_ms / 1000), ms = (long long)(retry_ms % 1000);
    if (kind == GW_TH_LOGIN) {
        metric_add(r->gw->m.throttled[0][by], 1);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "login_throttled",
                      "too many login attempts %s; retry in %lld.%03lld s", what[by], s, ms);
    } else {
        metric_add(r->gw->m.throttled[1][by], 1);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "register_throttled",
                      "too many registrations %s; retry in %lld.%03lld s", what[by], s, ms);
    }
}

/* The throttle key of a client address: the 4 bytes of an IPv4 address
 * (also when IPv4-mapped), the /64 prefix of an IPv6 one (one host
 * commonly holds a whole /64, so a finer key would give an attacker 2^64
 * buckets), the text itself for anything else. Returns its length. */
static size_t gw_acc__address_key(const char *addr, unsigned char key[16])
{
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, key) == 1)
        return 4;
    if (inet_pton(AF_INET6, addr, &a6) == 1) {
        if (IN6_IS_ADDR_V4MAPPED(&a6)) {
            memcpy(key, a6.s6_addr + 12, 4);
            return 4;
        }
        memcpy(key, a6.s6_addr, 8);
        return 8;
    }
    size_t n = strlen(addr);
    n = n < 16 ? n : 16;
    memcpy(key, addr, n);
    return n;
}

static bool gw_acc__address_ok(gw_req *r, int kind)
{
    const gw_config *cfg = &r->gw->cfg;
    gw_throttle_rule rule =
        kind == GW_TH_LOGIN
            ? (gw_throttle_rule){cfg->login_per_address, cfg->login_burst_per_address}
            : (gw_throttle_rule){cfg->register_per_address, cfg->register_burst_per_address};
    if (rule.per_min <= 0)
        return true;
    unsigned char key[16];
    size_t klen = gw_acc__address_key(rpc_call_peer_address(r->call), key);
    int64_t retry = 0;
    int rc = gw_throttle_check(r->gw->th_address, kind, (const char *)key, klen, &rule,
                               gw_acc__mono_ns(), &retry);
    if (rc == GW_THROTTLE_OK)
        return true;
    gw_acc__throttled(r, kind, GW_TH_BY_ADDRESS, rc, retry);
    return false;
}

static bool gw_acc__handle_ok(gw_req *r, int kind, const char *handle)
{
    const gw_config *cfg = &r->gw->cfg;
    size_t n = handle ? strlen(handle) : 0;
    char *key = rpc_arena_alloc(rpc_call_arena(r->call), n + 1);
    if (!key) {
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++)
        key[i] = handle[i] >= 'A' && handle[i] <= 'Z' ? (char)(handle[i] + 32) : handle[i];
    key[n] = '\0';
    r->handle_key = key;
    gw_throttle_rule rule =
        kind == GW_TH_LOGIN
            ? (gw_throttle_rule){cfg->login_per_handle, cfg->login_burst_per_handle}
            : (gw_throttle_rule){cfg->register_per_handle, cfg->register_burst_per_handle};
    int64_t retry = 0;
    int rc = gw_throttle_check(r->gw->th_handle, kind, key, n, &rule, gw_acc__mono_ns(), &retry);
    if (rc == GW_THROTTLE_OK)
        return true;
    gw_acc__throttled(r, kind, GW_TH_BY_HANDLE, rc, retry);
    return false;
}

/* A fresh token is put in the cache at once: the client's next call is a
 * cache hit rather than a store round-trip. */
static void gw_acc__session_opened(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code == GRPC_STATUS_OK) {
        const Scrabble__V1__AuthReply *a = (const Scrabble__V1__AuthReply *)reply;
        gw_auth_remember(r->gw, a->token, a->account_id, a->handle, a->expires_at_ms);
    }
    gw_acc__relay(arg, st, reply);
}

/* A failed login (unknown handle or wrong password alike: store-svc does
 * the same work for both) moves the handle along its backoff; a success
 * clears it. */
static void gw_acc__logged_in(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    gw_ctx *gw = r->gw;
    const char *key = r->handle_key;
    if (st->code == GRPC_STATUS_OK) {
        gw_throttle_succeed(gw->th_handle, GW_TH_LOGIN, key, strlen(key));
    } else if (st->code == GRPC_STATUS_UNAUTHENTICATED &&
               strcmp(st->reason, "bad_credentials") == 0) {
        gw_backoff_rule rule = {gw->cfg.login_free_failures, gw->cfg.login_backoff_base_ms,
                                gw->cfg.login_backoff_max_ms};
        metric_add(gw->m.login_failures, 1);
        gw_throttle_fail(gw->th_handle, GW_TH_LOGIN, key, strlen(key), &rule, gw_acc__mono_ns());
    }
    gw_acc__session_opened(arg, st, reply);
}

void gw_acc_register(gw_req *r)
{
    if (!gw_acc__address_ok(r, GW_TH_REGISTER) || !gw_request_decode(r))
        return;
    const Scrabble__V1__RegisterRequest *in = (const Scrabble__V1__RegisterRequest *)r->msg;
    if (!gw_acc__handle_ok(r, GW_TH_REGISTER, in->handle))
        return;
    gw_acc__store(r, GW_STORE(Register), r->msg, &scrabble__v1__auth_reply__descriptor,
                  gw_acc__session_opened);
}

void gw_acc_login(gw_req *r)
{
    if (!gw_acc__address_ok(r, GW_TH_LOGIN) || !gw_request_decode(r))
        return;
    const Scrabble__V1__LoginRequest *in = (const Scrabble__V1__LoginRequest *)r->msg;
    if (!gw_acc__handle_ok(r, GW_TH_LOGIN, in->handle))
        return;
    gw_acc__store(r, GW_STORE(Login), r->msg, &scrabble__v1__auth_reply__descriptor,
                  gw_acc__logged_in);
}

/* ---- profiles and stats ------------------------------------------ */

void gw_acc_get_profile(gw_req *r)
{
    const Scrabble__V1__GetProfileRequest *in = (const Scrabble__V1__GetProfileRequest *)r->msg;
    if (in->account_id < 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "account_id must not be negative");
        return;
    }
    Scrabble__V1__GetProfileRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__GetProfileRequest,
                      scrabble__v1__get_profile_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->account_id = in->account_id;
    q->handle = in->handle;
    if (in->account_id == 0 && (!in->handle || !in->handle[0]))
        q->account_id = r->who.account_id;
    gw_acc__store(r, GW_STORE(GetAccount), &q->base, &scrabble__v1__profile__descriptor,
                  gw_acc__relay);
}

void gw_acc_update_profile(gw_req *r)
{
    const Scrabble__V1__UpdateProfileRequest *in =
        (const Scrabble__V1__UpdateProfileRequest *)r->msg;
    Scrabble__V1__StoreUpdateProfileRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreUpdateProfileRequest,
                      scrabble__v1__store_update_profile_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->account_id = r->who.account_id;
    q->display_name = in->display_name;
    q->bio = in->bio;
    gw_acc__store(r, GW_STORE(UpdateProfile), &q->base, &scrabble__v1__profile__descriptor,
                  gw_acc__relay);
}

void gw_acc_get_stats(gw_req *r)
{
    const Scrabble__V1__GetStatsRequest *in = (const Scrabble__V1__GetStatsRequest *)r->msg;
    if (in->account_id < 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "account_id must not be negative");
        return;
    }
    Scrabble__V1__GetStatsRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__GetStatsRequest,
                      scrabble__v1__get_stats_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->account_id = in->account_id ? in->account_id : r->who.account_id;
    gw_acc__store(r, GW_STORE(GetStats), &q->base, &scrabble__v1__stats__descriptor, gw_acc__relay);
}

/* ---- invitations ------------------------------------------------- */

/* Store created the invitation: every invitee (seats 1..) gets an
 * INVITATION event in its log (AppendEvents, dedupe key "invited:<id>"), and
 * the reply waits for that commit, so an acknowledged invitation has its
 * events. A failure of the append fails the call: the client's retry with
 * its request_id finds the same invitation and appends again (the dedupe
 * key keeps one event per invitee). Once answered, an invitation has
 * nothing left to invite to, and only its reply is repeated. */
static void gw_acc__invite_logged(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    (void)reply;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    rpc_call_reply(r->call, r->step);
}

/* Writes event `type` about inv to the log of every seat but the
 * caller's (when inv is in status `when`), with the dedupe key
 * "<key>:<invitation id>", then replies with inv (gw_acc__invite_logged).
 * A retry appends again and the key keeps one event per seat. */
static void gw_acc__reply_telling_invitees(gw_req *r, Scrabble__V1__Invitation *inv, int type,
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
    if (gw_acc__oom(r, q) || gw_acc__oom(r, body) || gw_acc__oom(r, key))
        return;
    q->events = rpc_arena_calloc(a, n ? n : 1, sizeof *q->events);
    if (gw_acc__oom(r, q->events))
        return;
    len = scrabble__v1__event__pack(&ev, body);
    for (size_t i = 0; i < n; i++) {
        int64_t to = inv->seats[i]->account_id;
        if (to <= 0 || to == r->who.account_id)
            continue;
        Scrabble__V1__EventRecord *rec =
            RPC_ARENA_MSG(a, Scrabble__V1__EventRecord, scrabble__v1__event_record__init);
        if (gw_acc__oom(r, rec))
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
    r->step = &inv->base;
    gw_acc__store(r, GW_STORE(AppendEvents), &q->base,
                  &scrabble__v1__append_events_reply__descriptor, gw_acc__invite_logged);
}

static void gw_acc__invited(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    gw_acc__reply_telling_invitees(
        r, (Scrabble__V1__Invitation *)reply, SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION,
        SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN, "invited");
}

static void gw_acc__create_invitation(gw_req *r)
{
    const Scrabble__V1__InviteRequest *in = (const Scrabble__V1__InviteRequest *)r->msg;
    Scrabble__V1__CreateInvitationRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__CreateInvitationRequest,
                      scrabble__v1__create_invitation_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->inviter_id = r->who.account_id;
    q->n_invitee_handles = in->n_invitee_handles;
    q->invitee_handles = in->invitee_handles;
    q->lexicon = in->lexicon;
    q->request_id = in->request_id;
    q->time_control = in->time_control; /* store-svc checks its ranges */
    q->rated = in->rated;
    gw_acc__store(r, GW_STORE(CreateInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_acc__invited);
}

/* Validate before you create: only game-svc knows which lexicons exist (it
 * loads <name>.kwg from its --lexicon-dir), and the game an invitation
 * becomes may be owned by any game-svc instance (rendezvous hash of ids
 * that do not exist yet). So Invite asks every instance, in parallel,
 * CheckWord("", lexicon): the lexicon is refused NOT_FOUND unknown_lexicon
 * when any instance lacks it (a game that instance would own could never
 * load), accepted when every instance that answered has it, and the call
 * fails UNAVAILABLE only when no instance answered. The callbacks all run
 * on this call's worker thread, so the tally needs no lock. */
typedef struct gw_acc__lexicon_check {
    gw_req *r;
    int pending, have, lack;
    rpc_status failure; /* the last answer that was neither yes nor no */
} gw_acc__lexicon_check;

static void gw_acc__lexicon_done(gw_acc__lexicon_check *lc)
{
    gw_req *r = lc->r;
    const Scrabble__V1__InviteRequest *in = (const Scrabble__V1__InviteRequest *)r->msg;
    if (lc->lack > 0)
        rpc_call_fail(r->call, GRPC_STATUS_NOT_FOUND, "unknown_lexicon", "no lexicon named %s",
                      in->lexicon);
    else if (lc->have == 0)
        gw_fail_downstream(r, &lc->failure);
    else
        gw_acc__create_invitation(r);
}

static void gw_acc__lexicon_answer(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_acc__lexicon_check *lc = arg;
    if (st->code == GRPC_STATUS_OK)
        lc->have++;
    else if (st->code == GRPC_STATUS_NOT_FOUND)
        lc->lack++;
    else
        lc->failure = *st;
    if (--lc->pending == 0)
        gw_acc__lexicon_done(lc);
}

void gw_acc_invite(gw_req *r)
{
    const Scrabble__V1__InviteRequest *in = (const Scrabble__V1__InviteRequest *)r->msg;
    if (in->n_invitee_handles < 1 || in->n_invitee_handles > 3) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_seats",
                      "invite 1 to 3 other players");
        return;
    }
    /* No lexicon named: game-svc's default, which it loads at start. */
    if (!in->lexicon || !in->lexicon[0]) {
        gw_acc__create_invitation(r);
        return;
    }
    gw_ctx *gw = r->gw;
    rpc_arena *a = rpc_call_arena(r->call);
    gw_acc__lexicon_check *lc = rpc_arena_calloc(a, 1, sizeof *lc);
    Scrabble__V1__CheckWordRequest *q =
        RPC_ARENA_MSG(a, Scrabble__V1__CheckWordRequest, scrabble__v1__check_word_request__init);
    if (gw_acc__oom(r, lc) || gw_acc__oom(r, q))
        return;
    q->word = "";
    q->lexicon = in->lexicon;
    lc->r = r;
    rpc_status_set(&lc->failure, GRPC_STATUS_UNAVAILABLE, "unavailable",
                   "no game service answered");
    /* One extra count held while the calls start, so that a callback run
     * before the loop ends cannot finish the tally early. */
    lc->pending = gw->ngames + 1;
    for (int i = 0; i < gw->ngames; i++) {
        rpc_client_opts o = gw_downstream_opts(r);
        if (rpc_client_unary(gw->games[i], "/scrabble.v1.Game/CheckWord", &q->base,
                             &scrabble__v1__check_word_reply__descriptor, &o,
                             gw_acc__lexicon_answer, lc) != RPC_OK) {
            rpc_status st;
            rpc_status_set(&st, GRPC_STATUS_UNAVAILABLE, "unavailable", "game service unreachable");
            gw_acc__lexicon_answer(lc, &st, NULL);
        }
    }
    if (--lc->pending == 0)
        gw_acc__lexicon_done(lc);
}

static void gw_acc__game_created(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Invitation *inv = r->step;
    inv->status = SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED;
    inv->game_id = ((const Scrabble__V1__GameState *)reply)->game_id;
    rpc_call_reply(r->call, &inv->base);
}

static bool gw_acc__all_accepted(const Scrabble__V1__Invitation *inv)
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
static void gw_acc__responded(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    Scrabble__V1__Invitation *inv = (Scrabble__V1__Invitation *)reply;
    if (!gw_acc__all_accepted(inv)) {
        rpc_call_reply(r->call, reply);
        return;
    }
    Scrabble__V1__CreateGameRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__CreateGameRequest,
                      scrabble__v1__create_game_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->invitation_id = inv->invitation_id;
    r->step = inv;
    gw_ctx *gw = r->gw;
    int owner = gw_route_pick(inv->invitation_id, gw->game_hash, (size_t)gw->ngames);
    rpc_client_opts o = gw_downstream_opts(r);
    if (rpc_client_unary(gw->games[owner], "/scrabble.v1.Game/CreateGame", &q->base,
                         &scrabble__v1__game_state__descriptor, &o, gw_acc__game_created,
                         r) != RPC_OK)
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "game service unreachable");
}

void gw_acc_respond_invitation(gw_req *r)
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
    if (gw_acc__oom(r, q))
        return;
    q->account_id = r->who.account_id;
    q->invitation_id = in->invitation_id;
    q->accept = in->accept;
    gw_acc__store(r, GW_STORE(RespondInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_acc__responded);
}

/* Cancelled (or already cancelled: a retry): every invitee gets
 * INVITATION_CANCELLED in its log before the reply; a retry appends again
 * (the first attempt may have died before appending) and the dedupe key
 * "cancelled:<id>" keeps one per invitee. */
static void gw_acc__cancelled(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    gw_acc__reply_telling_invitees(r, (Scrabble__V1__Invitation *)reply,
                                   SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION_CANCELLED,
                                   SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_CANCELLED,
                                   "cancelled");
}

void gw_acc_cancel_invitation(gw_req *r)
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
    if (gw_acc__oom(r, q))
        return;
    q->account_id = r->who.account_id;
    q->invitation_id = in->invitation_id;
    gw_acc__store(r, GW_STORE(CancelInvitation), &q->base, &scrabble__v1__invitation__descriptor,
                  gw_acc__cancelled);
}

void gw_acc_list_invitations(gw_req *r)
{
    Scrabble__V1__AccountRef *q = RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__AccountRef,
                                                scrabble__v1__account_ref__init);
    if (gw_acc__oom(r, q))
        return;
    q->account_id = r->who.account_id;
    gw_acc__store(r, GW_STORE(ListInvitations), &q->base,
                  &scrabble__v1__list_invitations_reply__descriptor, gw_acc__relay);
}

/* ---- games list -------------------------------------------------- */

void gw_acc_list_games(gw_req *r)
{
    const Scrabble__V1__ListGamesRequest *in = (const Scrabble__V1__ListGamesRequest *)r->msg;
    if (in->page_size < 0 || in->page_size > 100) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "page_size must be 0..100");
        return;
    }
    if ((int)in->status < 0 || in->status > SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request", "unknown game status");
        return;
    }
    Scrabble__V1__StoreListGamesRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreListGamesRequest,
                      scrabble__v1__store_list_games_request__init);
    if (gw_acc__oom(r, q))
        return;
    q->account_id = r->who.account_id;
    q->status = in->status;
    q->page_size = in->page_size ? in->page_size : 20;
    q->page_token = in->page_token;
    gw_acc__store(r, GW_STORE(ListGames), &q->base, &scrabble__v1__list_games_reply__descriptor,
                  gw_acc__relay);
}

/* ---- leaderboards ------------------------------------------------ */

void gw_acc_get_leaderboard(gw_req *r)
{
    const Scrabble__V1__GetLeaderboardRequest *in =
        (const Scrabble__V1__GetLeaderboardRequest *)r->msg;
    if (in->page_size < 0 || in->page_size > 100) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "page_size must be 0..100");
        return;
    }
    const char *f = in->family;
    if (f[0] && strcmp(f, "untimed") != 0 && strcmp(f, "correspondence") != 0 &&
        strcmp(f, "realtime") != 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_family",
                      "family must be untimed, correspondence or realtime");
        return;
    }
    gw_acc__store(r, GW_STORE(GetLeaderboard), r->msg,
                  &scrabble__v1__get_leaderboard_reply__descriptor, gw_acc__relay);
}

/*
 * accounts.c — the Edge methods store-svc answers about accounts: sessions
 * (Register, Login), profiles, stats, and the game list. Each translates
 * the Edge request into the Store one where they differ (the caller's
 * account id is added from the authenticated identity, never taken from
 * the client), calls store-svc asynchronously on its long-lived channel,
 * and relays the reply. Invitations and the games they start are
 * invitations.c.
 *
 * Replies are decoded into the call's arena (gw_downstream_opts) so a
 * callback may keep them across a second downstream call.
 */
#include "gateway.h"

#include "scrabble/v1/edge.pb-c.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void gw_store_relay(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        gw_fail_downstream(r, st);
        return;
    }
    rpc_call_reply(r->call, reply);
}

void gw_store_call(gw_req *r, const char *method, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *reply_desc, rpc_unary_cb cb)
{
    rpc_client_opts o = gw_downstream_opts(r);
    if (rpc_client_unary(r->gw->store, method, req, reply_desc, &o, cb, r) != RPC_OK)
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store service unreachable");
}

bool gw_out_of_memory(gw_req *r, const void *p)
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

/* The client address the per-address throttles key on: the peer, unless
 * the peer is a trusted proxy (--trusted-proxies) that sent x-real-ip
 * holding exactly one address literal. A trusted peer without the header,
 * or with a malformed one, keys on itself (fail closed: its clients share
 * a bucket rather than an unparsed string choosing one); an untrusted
 * peer's header is ignored, so a client cannot pick its own bucket. */
static const char *gw_acc__client_address(gw_req *r)
{
    const char *peer = rpc_call_peer_address(r->call);
    if (!gw_proxy_trusted(&r->gw->cfg.proxies, peer)) {
        metric_add(r->gw->m.client_address[GW_ADDR_PEER], 1);
        return peer;
    }
    size_t len = 0;
    const char *v = rpc_call_metadata(r->call, "x-real-ip", &len);
    if (!v) {
        /* a trusted host calling for itself (not through the balancer) */
        metric_add(r->gw->m.client_address[GW_ADDR_PEER], 1);
        return peer;
    }
    char *fwd = rpc_arena_alloc(rpc_call_arena(r->call), GW_PROXY_ADDR_MAX);
    if (!fwd || !gw_proxy_forwarded_ok(v, len, fwd)) {
        metric_add(r->gw->m.client_address[GW_ADDR_FORWARDED_INVALID], 1);
        return peer;
    }
    metric_add(r->gw->m.client_address[GW_ADDR_FORWARDED], 1);
    return fwd;
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
    size_t klen = gw_acc__address_key(gw_acc__client_address(r), key);
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
    gw_store_relay(arg, st, reply);
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
    gw_store_call(r, GW_STORE(Register), r->msg, &scrabble__v1__auth_reply__descriptor,
                  gw_acc__session_opened);
}

void gw_acc_login(gw_req *r)
{
    if (!gw_acc__address_ok(r, GW_TH_LOGIN) || !gw_request_decode(r))
        return;
    const Scrabble__V1__LoginRequest *in = (const Scrabble__V1__LoginRequest *)r->msg;
    if (!gw_acc__handle_ok(r, GW_TH_LOGIN, in->handle))
        return;
    gw_store_call(r, GW_STORE(Login), r->msg, &scrabble__v1__auth_reply__descriptor,
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
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = in->account_id;
    q->handle = in->handle;
    if (in->account_id == 0 && (!in->handle || !in->handle[0]))
        q->account_id = r->who.account_id;
    gw_store_call(r, GW_STORE(GetAccount), &q->base, &scrabble__v1__profile__descriptor,
                  gw_store_relay);
}

void gw_acc_update_profile(gw_req *r)
{
    const Scrabble__V1__UpdateProfileRequest *in =
        (const Scrabble__V1__UpdateProfileRequest *)r->msg;
    Scrabble__V1__StoreUpdateProfileRequest *q =
        RPC_ARENA_MSG(rpc_call_arena(r->call), Scrabble__V1__StoreUpdateProfileRequest,
                      scrabble__v1__store_update_profile_request__init);
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->display_name = in->display_name;
    q->bio = in->bio;
    gw_store_call(r, GW_STORE(UpdateProfile), &q->base, &scrabble__v1__profile__descriptor,
                  gw_store_relay);
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
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = in->account_id ? in->account_id : r->who.account_id;
    gw_store_call(r, GW_STORE(GetStats), &q->base, &scrabble__v1__stats__descriptor,
                  gw_store_relay);
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
    if (gw_out_of_memory(r, q))
        return;
    q->account_id = r->who.account_id;
    q->status = in->status;
    q->page_size = in->page_size ? in->page_size : 20;
    q->page_token = in->page_token;
    gw_store_call(r, GW_STORE(ListGames), &q->base, &scrabble__v1__list_games_reply__descriptor,
                  gw_store_relay);
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
    gw_store_call(r, GW_STORE(GetLeaderboard), r->msg,
                  &scrabble__v1__get_leaderboard_reply__descriptor, gw_store_relay);
}

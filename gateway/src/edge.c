/*
 * edge.c — the scrabble.v1.Edge service: the method table (class, action,
 * downstream path, request size bound) and the dispatch every call goes
 * through: authenticate -> rate-limit -> decode (size bound first, then
 * the string gate, repeated-field bounds, unknown fields dropped) -> act. Until the caller
 * is authenticated the body is raw bytes nobody has looked at.
 */
#include "gateway.h"

#include "rpc/log.h"
#include "watch.h"
#include "rpc/wire_check.h"
#include "scrabble/v1/edge.pb-c.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t gw_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t gw_edge__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void gw_fail_downstream(gw_req *r, const rpc_status *st)
{
    if (st->code == GRPC_STATUS_UNAVAILABLE && st->reason[0] == '\0') {
        rpc_status s = *st;
        snprintf(s.reason, sizeof s.reason, "unavailable");
        metric_add(r->gw->m.downstream_unavailable, 1);
        rpc_call_fail_status(r->call, &s);
        return;
    }
    rpc_call_fail_status(r->call, st);
}

rpc_client_opts gw_downstream_opts(gw_req *r)
{
    rpc_client_opts o;
    memset(&o, 0, sizeof o);
    o.timeout_ms = r->gw->cfg.downstream_timeout_ms;
    o.parent = r->call;
    o.md = r->md;
    o.md_count = r->who.account_id > 0 ? 2 : 0;
    o.arena = rpc_call_arena(r->call);
    return o;
}

/* Repeated fields of the Edge requests and their bounds: a rack holds 7
 * tiles, a game 4 seats. gw_edge_register refuses to start when an Edge
 * request has a repeated field missing here, so a new one cannot slip in
 * unbounded. */
static const struct gw_edge_bound {
    const char *reason;
    grpc_status_code code;
    size_t max;
    const char *field;
} gw_edge__bounds[] = {
    {"too_many_placements", GRPC_STATUS_INVALID_ARGUMENT, 7, "placements"},
    {"bad_seats", GRPC_STATUS_INVALID_ARGUMENT, 3, "invitee_handles"},
};

static const struct gw_edge_bound *gw_edge__bound_of(const char *field)
{
    for (size_t i = 0; i < sizeof gw_edge__bounds / sizeof gw_edge__bounds[0]; i++)
        if (strcmp(gw_edge__bounds[i].field, field) == 0)
            return &gw_edge__bounds[i];
    return NULL;
}

/* Whether every repeated field of d (and of the messages it holds) has a
 * bound; logs the first that has none. */
static bool gw_edge__all_bounded(const ProtobufCMessageDescriptor *d, int depth)
{
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REPEATED && (depth > 0 || !gw_edge__bound_of(f->name))) {
            log_error("unbounded_repeated_field", "message=%s field=%s", d->name, f->name);
            return false;
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < 4 &&
            !gw_edge__all_bounded(f->descriptor, depth + 1))
            return false;
    }
    return true;
}

/* The string gate (rpc/wire_check.h) reads the request's raw bytes, since
 * the decoded message has lost what followed a NUL. It runs once the size
 * bound has passed (a 4 MiB body is never scanned), after authentication
 * (a call without a valid token is UNAUTHENTICATED whatever its body
 * holds) and before anything is forwarded, so no downstream service sees
 * a string that fails it. */
static bool gw_edge__strings_ok(gw_req *r)
{
    const ProtobufCMethodDescriptor *md = protobuf_c_service_descriptor_get_method_by_name(
        &scrabble__v1__edge__descriptor, r->method->name);
    rpc_wire_result chk;
    if (md &&
        rpc_wire_check_buffer(rpc_call_request_bytes(r->call), md->input, &chk) != RPC_WIRE_OK) {
        char msg[200];
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, rpc_wire_reason(chk.verdict), "%s",
                      rpc_wire_message(&chk, msg, sizeof msg));
        return false;
    }
    return true;
}

bool gw_request_decode(gw_req *r)
{
    ProtobufCMessage *msg = rpc_call_decode(r->call);
    if (!msg || !gw_edge__strings_ok(r))
        return false;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label != PROTOBUF_C_LABEL_REPEATED)
            continue;
        size_t n = *(const size_t *)((const char *)msg + f->quantifier_offset);
        const struct gw_edge_bound *b = gw_edge__bound_of(f->name);
        if (b && n > b->max) {
            metric_add(r->gw->m.too_many_items, 1);
            rpc_call_fail(r->call, b->code, b->reason, "%zu %s; at most %zu", n, f->name, b->max);
            return false;
        }
    }
    /* A newer client's extra fields are ignored, never passed on: the
     * services behind see only the contract. The walk costs a few loads
     * per message; only a request that had some is re-packed. */
    if (rpc_message_strip_unknown(msg)) {
        metric_add(r->gw->m.unknown_stripped, 1);
        r->stripped = true;
    }
    r->msg = msg;
    return true;
}

/* Runs once the caller is known: the limiter, then the decode, then the
 * action. Nothing of the body is looked at before this point. */
static void gw_edge__authed(gw_req *r)
{
    gw_ctx *gw = r->gw;
    const gw_method *m = r->method;
    if (!gw_ratelimit_allow(gw->limiter, r->who.account_id, m->cls, gw_edge__mono_ns())) {
        metric_add(gw->m.rate_limited[m->cls], 1);
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "rate_limited",
                      "too many %s calls; slow down", gw_rate_class_name(m->cls));
        return;
    }
    if (!gw_request_decode(r))
        return;
    m->action(r);
}

/* Every Edge method is registered decode_later: the body is still raw
 * bytes here. Methods with a token authenticate first; Register and Login
 * run their own throttles and then decode (accounts.c). */
static void gw_edge__dispatch(gw_ctx *gw, rpc_call *call, const gw_method *m)
{
    gw_req *r = rpc_arena_calloc(rpc_call_arena(call), 1, sizeof *r);
    if (!r) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    r->gw = gw;
    r->call = call;
    r->method = m;
    if (!m->needs_auth) {
        m->action(r);
        return;
    }
    gw_auth_begin(r, gw_edge__authed);
}

#define GW_GAME(M) "/scrabble.v1.Game/" #M

/* Request size bounds, from what each method can carry: a handle is at
 * most 32 characters (128 bytes of UTF-8), a password 1024 bytes, a
 * display name 64 and a bio 280 characters, a chat line 500 characters, a
 * play 7 placements of a few bytes each. The rest leaves room for fields
 * a newer client may add (they are dropped, not forwarded). */
#define GW_KIB(n) ((size_t)(n)*1024)
#define GW_MAX_SMALL GW_KIB(1)

/* The Edge methods: name, token needed, rate class, action, downstream
 * path, request size bound. */
#define GW_EDGE_METHODS(X)                                                                         \
    X(Register, false, GW_RATE_WRITE, gw_acc_register, NULL, GW_KIB(2))                            \
    X(Login, false, GW_RATE_WRITE, gw_acc_login, NULL, GW_KIB(2))                                  \
    X(GetProfile, true, GW_RATE_READ, gw_acc_get_profile, NULL, GW_MAX_SMALL)                      \
    X(UpdateProfile, true, GW_RATE_WRITE, gw_acc_update_profile, NULL, GW_KIB(2))                  \
    X(GetStats, true, GW_RATE_READ, gw_acc_get_stats, NULL, GW_MAX_SMALL)                          \
    X(Invite, true, GW_RATE_WRITE, gw_inv_invite, NULL, GW_MAX_SMALL)                              \
    X(RespondInvitation, true, GW_RATE_WRITE, gw_inv_respond, NULL, GW_MAX_SMALL)                  \
    X(CancelInvitation, true, GW_RATE_WRITE, gw_inv_cancel, NULL, GW_MAX_SMALL)                    \
    X(ListInvitations, true, GW_RATE_READ, gw_inv_list, NULL, GW_MAX_SMALL)                        \
    X(ListGames, true, GW_RATE_LIST, gw_acc_list_games, NULL, GW_MAX_SMALL)                        \
    X(GetState, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetState), GW_MAX_SMALL)              \
    X(GetHistory, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetHistory), GW_MAX_SMALL)          \
    X(Evaluate, true, GW_RATE_READ, gw_forward_game, GW_GAME(Evaluate), GW_MAX_SMALL)              \
    X(SubmitPlay, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SubmitPlay), GW_MAX_SMALL)         \
    X(Pass, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Pass), GW_MAX_SMALL)                     \
    X(Exchange, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Exchange), GW_MAX_SMALL)             \
    X(Resign, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Resign), GW_MAX_SMALL)                 \
    X(SaveDraft, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SaveDraft), GW_MAX_SMALL)           \
    X(GetDraft, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetDraft), GW_MAX_SMALL)              \
    X(CheckWord, true, GW_RATE_LOOKUP, gw_forward_any, GW_GAME(CheckWord), GW_MAX_SMALL)           \
    X(Nudge, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Nudge), GW_MAX_SMALL)                   \
    X(SendChat, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SendChat), GW_KIB(4))                \
    X(ListChat, true, GW_RATE_READ, gw_forward_game, GW_GAME(ListChat), GW_MAX_SMALL)              \
    X(GetGameRecord, true, GW_RATE_LIST, gw_forward_game, GW_GAME(GetGameRecord), GW_MAX_SMALL)    \
    X(GetRules, true, GW_RATE_LOOKUP, gw_forward_any, GW_GAME(GetRules), GW_MAX_SMALL)             \
    X(GetLeaderboard, true, GW_RATE_LIST, gw_acc_get_leaderboard, NULL, GW_MAX_SMALL)              \
    X(Subscribe, true, GW_RATE_READ, gw_subscribe, NULL, GW_MAX_SMALL)                             \
    X(PostSeek, true, GW_RATE_WRITE, gw_seek_post, NULL, GW_MAX_SMALL)                             \
    X(CancelSeek, true, GW_RATE_WRITE, gw_seek_cancel, NULL, GW_MAX_SMALL)                         \
    X(ListSeeks, true, GW_RATE_LIST, gw_seek_list, NULL, GW_MAX_SMALL)                             \
    X(ListPublicGames, true, GW_RATE_LIST, gw_watch_list_public, NULL, GW_MAX_SMALL)               \
    X(WatchState, true, GW_RATE_READ, gw_forward_game, GW_GAME(WatchState), GW_MAX_SMALL)          \
    X(Watch, true, GW_RATE_READ, gw_watch_stream, NULL, GW_MAX_SMALL)

/* One thin handler per method: the runtime's handler signature carries no
 * method, and a static descriptor costs nothing per call. */
#define GW_METHOD(Name, auth, cls, action, downstream, max)                                        \
    static void gw_edge__##Name(rpc_call *call, const ProtobufCMessage *msg, void *svc)            \
    {                                                                                              \
        (void)msg; /* NULL: decode_later */                                                        \
        static const gw_method m = {#Name, auth, cls, action, downstream, max};                    \
        gw_edge__dispatch(svc, call, &m);                                                          \
    }
GW_EDGE_METHODS(GW_METHOD)

#define GW_IMPL(Name, auth, cls, action, downstream, max) {#Name, gw_edge__##Name, max, true},

int gw_edge_register(gw_ctx *gw)
{
    static const rpc_method_impl impls[] = {GW_EDGE_METHODS(GW_IMPL){NULL, NULL, 0, false}};
    const ProtobufCServiceDescriptor *svc = &scrabble__v1__edge__descriptor;
    for (unsigned i = 0; i < svc->n_methods; i++)
        if (!gw_edge__all_bounded(svc->methods[i].input, 0))
            return -1;
    return rpc_server_add_service(gw->server, svc, impls, gw);
}

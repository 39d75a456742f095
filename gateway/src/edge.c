/*
 * edge.c — the scrabble.v1.Edge service: the method table (class, action,
 * downstream path) and the dispatch every call goes through:
 * authenticate -> rate-limit -> act.
 */
#include "gateway.h"

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

/* The string gate (rpc/wire_check.h), then the action. It reads the
 * request's raw bytes, since the decoded message has lost what followed a
 * NUL. It runs after authentication (a call without a valid token is
 * UNAUTHENTICATED whatever its body holds) and before anything is
 * forwarded, so no downstream service sees a string that fails it. */
static void gw_edge__act(gw_req *r)
{
    const ProtobufCMethodDescriptor *md = protobuf_c_service_descriptor_get_method_by_name(
        &scrabble__v1__edge__descriptor, r->method->name);
    rpc_wire_result chk;
    if (md &&
        rpc_wire_check_buffer(rpc_call_request_bytes(r->call), md->input, &chk) != RPC_WIRE_OK) {
        char msg[200];
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, rpc_wire_reason(chk.verdict), "%s",
                      rpc_wire_message(&chk, msg, sizeof msg));
        return;
    }
    r->method->action(r);
}

/* Runs once the caller is known: the limiter, then the action. */
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
    gw_edge__act(r);
}

static void gw_edge__dispatch(gw_ctx *gw, rpc_call *call, const ProtobufCMessage *msg,
                              const gw_method *m)
{
    gw_req *r = rpc_arena_calloc(rpc_call_arena(call), 1, sizeof *r);
    if (!r) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    r->gw = gw;
    r->call = call;
    r->msg = msg;
    r->method = m;
    if (!m->needs_auth) {
        gw_edge__act(r);
        return;
    }
    gw_auth_begin(r, gw_edge__authed);
}

#define GW_GAME(M) "/scrabble.v1.Game/" #M

/* One thin handler per method: the runtime's handler signature carries no
 * method, and a static descriptor costs nothing per call. */
#define GW_METHOD(Name, auth, cls, action, downstream)                                             \
    static void gw_edge__##Name(rpc_call *call, const ProtobufCMessage *msg, void *svc)            \
    {                                                                                              \
        static const gw_method m = {#Name, auth, cls, action, downstream};                         \
        gw_edge__dispatch(svc, call, msg, &m);                                                     \
    }

GW_METHOD(Register, false, GW_RATE_WRITE, gw_acc_register, NULL)
GW_METHOD(Login, false, GW_RATE_WRITE, gw_acc_login, NULL)
GW_METHOD(GetProfile, true, GW_RATE_READ, gw_acc_get_profile, NULL)
GW_METHOD(UpdateProfile, true, GW_RATE_WRITE, gw_acc_update_profile, NULL)
GW_METHOD(GetStats, true, GW_RATE_READ, gw_acc_get_stats, NULL)
GW_METHOD(Invite, true, GW_RATE_WRITE, gw_acc_invite, NULL)
GW_METHOD(RespondInvitation, true, GW_RATE_WRITE, gw_acc_respond_invitation, NULL)
GW_METHOD(ListInvitations, true, GW_RATE_READ, gw_acc_list_invitations, NULL)
GW_METHOD(ListGames, true, GW_RATE_LIST, gw_acc_list_games, NULL)
GW_METHOD(GetState, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetState))
GW_METHOD(GetHistory, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetHistory))
GW_METHOD(Evaluate, true, GW_RATE_READ, gw_forward_game, GW_GAME(Evaluate))
GW_METHOD(SubmitPlay, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SubmitPlay))
GW_METHOD(Pass, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Pass))
GW_METHOD(Exchange, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Exchange))
GW_METHOD(Resign, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Resign))
GW_METHOD(SaveDraft, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SaveDraft))
GW_METHOD(GetDraft, true, GW_RATE_READ, gw_forward_game, GW_GAME(GetDraft))
GW_METHOD(CheckWord, true, GW_RATE_LOOKUP, gw_forward_any, GW_GAME(CheckWord))
GW_METHOD(Nudge, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(Nudge))
GW_METHOD(SendChat, true, GW_RATE_WRITE, gw_forward_game, GW_GAME(SendChat))
GW_METHOD(ListChat, true, GW_RATE_READ, gw_forward_game, GW_GAME(ListChat))
GW_METHOD(Subscribe, true, GW_RATE_READ, gw_subscribe, NULL)

#define GW_IMPL(Name)                                                                              \
    {                                                                                              \
#Name, gw_edge__##Name                                                                     \
    }

int gw_edge_register(gw_ctx *gw)
{
    static const rpc_method_impl impls[] = {
        GW_IMPL(Register),          GW_IMPL(Login),
        GW_IMPL(GetProfile),        GW_IMPL(UpdateProfile),
        GW_IMPL(GetStats),          GW_IMPL(Invite),
        GW_IMPL(RespondInvitation), GW_IMPL(ListInvitations),
        GW_IMPL(ListGames),         GW_IMPL(GetState),
        GW_IMPL(GetHistory),        GW_IMPL(Evaluate),
        GW_IMPL(SubmitPlay),        GW_IMPL(Pass),
        GW_IMPL(Exchange),          GW_IMPL(Resign),
        GW_IMPL(SaveDraft),         GW_IMPL(GetDraft),
        GW_IMPL(CheckWord),         GW_IMPL(Nudge),
        GW_IMPL(SendChat),          GW_IMPL(ListChat),
        GW_IMPL(Subscribe),         {NULL, NULL},
    };
    return rpc_server_add_service(gw->server, &scrabble__v1__edge__descriptor, impls, gw);
}

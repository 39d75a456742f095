/*
 * gateway.h — the gateway's server context and the per-call request state
 * every handler module shares.
 *
 * A call flows: edge.c dispatch -> auth.c (token -> account, cached; on a
 * miss an async store call, continuing in its callback) -> rate limit ->
 * the method's action: forward.c (game methods, bytes forwarded unchanged
 * to the owning game-svc), accounts.c (store-backed account methods),
 * invitations.c (invitations and the games they start) or subscribe.c
 * (the event stream). No step blocks a worker thread.
 */
#ifndef GW_GATEWAY_H
#define GW_GATEWAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "authcache.h"
#include "config.h"
#include "ratelimit.h"
#include "rpc/metrics.h"
#include "throttle.h"
#include "rpc/rpc.h"

typedef struct gw_subs gw_subs;
typedef struct gw_events gw_events;
typedef struct gw_watch gw_watch;
typedef struct gw_req gw_req;

typedef void (*gw_action)(gw_req *r);

/* One Edge method: how it is limited and what it does. Static tables. */
typedef struct gw_method {
    const char *name; /* "GetState" */
    bool needs_auth;
    gw_rate_class cls;
    gw_action action;
    const char *downstream; /* full path of the downstream method, or NULL */
    size_t max_bytes;       /* largest request body it can legitimately carry */
} gw_method;

/* Keys of the throttle tables: which bucket of an address or handle. */
enum { GW_TH_LOGIN = 1, GW_TH_REGISTER = 2 };
enum { GW_TH_BY_ADDRESS, GW_TH_BY_HANDLE, GW_TH_BY_BACKOFF, GW_TH_BY_COUNT };
/* Where the per-address throttles took the client address from. */
enum { GW_ADDR_PEER, GW_ADDR_FORWARDED, GW_ADDR_FORWARDED_INVALID, GW_ADDR_COUNT };

/* The server context: everything the gateway owns, created in main and
 * destroyed there; handlers reach it through the svc pointer. */
typedef struct gw_ctx {
    gw_config cfg;
    rpc_server *server;
    rpc_channel *store;
    int ngames;
    rpc_channel *games[GW_MAX_GAME_INSTANCES];
    uint64_t game_hash[GW_MAX_GAME_INSTANCES];
    char game_names[GW_MAX_GAME_INSTANCES][128];
    gw_authcache *auth;
    gw_ratelimit *limiter;
    gw_throttle *th_address; /* Login/Register buckets per client address */
    gw_throttle *th_handle;  /* ... per handle, and the failed-login backoff */
    gw_subs *subs;
    gw_events *events;
    gw_watch *watch; /* spectators (watch.h) */

    struct {
        metric *rate_limited[GW_RATE_CLASSES];
        metric *auth_hit, *auth_miss, *auth_rejected, *auth_outage_served;
        metric *forwarded, *downstream_unavailable;
        metric *subscribers, *events_delivered, *events_unrouted, *slow_consumers;
        metric *events_replayed, *events_repeated, *catch_ups;
        metric *throttled[2][GW_TH_BY_COUNT]; /* [login, register][by] */
        metric *login_failures, *throttle_entries[2];
        metric *client_address[GW_ADDR_COUNT]; /* by GW_ADDR_* */
        metric *unknown_stripped, *too_many_items;
        metric *redis_subscribed; /* gateway_redis_subscribed, set by the watchdog */
        metric *observers, *observers_refused, *watch_reads, *watch_events; /* watch.c */
        /* Saturation, set by the watchdog: */
        metric *auth_entries, *auth_capacity;
        metric *stream_queued, *stream_queued_max, *stream_queue_limit;
    } m;
} gw_ctx;

/* Per-call state, allocated in the call's arena (freed with the call). */
struct gw_req {
    gw_ctx *gw;
    rpc_call *call;
    const ProtobufCMessage *msg;
    const gw_method *method;
    gw_identity who;
    gw_identity fallback; /* auth.c: a STALE entry's identity, for a store outage */
    bool has_fallback;
    char account_str[24];
    rpc_metadata md[2]; /* scrabble-account-id, scrabble-handle */
    gw_action next;     /* auth.c: what runs once authenticated */
    /* What a flow of several steps keeps between them, a field a flow: */
    const char *token;                         /* auth.c: while ResolveSession runs */
    struct Scrabble__V1__Invitation *invited;  /* invitations.c: while AppendEvents runs */
    struct Scrabble__V1__Invitation *accepted; /* invitations.c: while CreateGame runs */
    struct Scrabble__V1__Seek *seek;           /* seeks.c: while CreateGame runs */
    bool stripped;          /* the request had unknown fields: forward r->msg re-packed */
    const char *handle_key; /* accounts.c: the throttle key of a Login/Register */
};

/* edge.c: registers scrabble.v1.Edge on the server. Returns 0 or -1 (also
 * when an Edge request has a repeated field without a bound). */
int gw_edge_register(gw_ctx *gw);

/* edge.c: decodes r's request (the runtime checks the method's size bound
 * before protobuf-c allocates), runs the string gate on its raw bytes
 * (rpc/wire_check.h), bounds its repeated fields and drops any
 * unknown fields, so nothing outside the contract travels downstream. On
 * success r->msg is set; false: the call was finished with the error. Every
 * action runs after it: methods with a token decode once authenticated
 * and within their rate, Register and Login once their address throttle
 * passed. */
bool gw_request_decode(gw_req *r);

/* auth.c: authenticates r->call, fills r->who and r->md, then runs `next`
 * (now or from a store callback), or finishes the call UNAUTHENTICATED /
 * UNAVAILABLE. */
void gw_auth_begin(gw_req *r, gw_action next);
/* Remembers a token a Register/Login reply just issued. */
void gw_auth_remember(gw_ctx *gw, const char *token, int64_t account_id, const char *handle,
                      int64_t expires_at_ms);

/* forward.c */
void gw_forward_game(gw_req *r); /* by the request's game_id */
void gw_forward_any(gw_req *r);  /* CheckWord: any live instance */

/* accounts.c */
void gw_acc_register(gw_req *r);
void gw_acc_login(gw_req *r);
void gw_acc_get_profile(gw_req *r);
void gw_acc_update_profile(gw_req *r);
void gw_acc_get_stats(gw_req *r);
void gw_acc_list_games(gw_req *r);
void gw_acc_get_leaderboard(gw_req *r);
/* accounts.c, for the actions that call store-svc: */
#define GW_STORE(M) "/scrabble.v1.Store/" #M
/* Calls store-svc's `method` for r (gw_downstream_opts), cb(r, ...) with
 * the answer; finishes r UNAVAILABLE when the call cannot start. */
void gw_store_call(gw_req *r, const char *method, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *reply_desc, rpc_unary_cb cb);
/* An rpc_unary_cb (arg: the gw_req) that relays store-svc's answer. */
void gw_store_relay(void *arg, const rpc_status *st, ProtobufCMessage *reply);
/* false when p is set; else finishes r RESOURCE_EXHAUSTED out_of_memory
 * and returns true. */
bool gw_out_of_memory(gw_req *r, const void *p);

/* invitations.c: Invite, RespondInvitation (and CreateGame on the last
 * acceptance), ListInvitations. */
void gw_inv_invite(gw_req *r);
void gw_inv_respond(gw_req *r);
void gw_inv_cancel(gw_req *r);
void gw_inv_list(gw_req *r);
/* Runs next(r) once every game-svc instance has `lexicon` (empty: the
 * default, at once); else finishes r NOT_FOUND unknown_lexicon, or with
 * the failure when no instance answered. lexicon must live as long as r. */
void gw_lexicon_check(gw_req *r, const char *lexicon, gw_action next);

/* Has the game-svc instance picked by the invitation id create the game of
 * a fully accepted invitation (CreateGame: idempotent per invitation; it
 * announces GAME_STARTED / YOUR_TURN); done(r, status, GameState). Finishes
 * r UNAVAILABLE when the call cannot start. */
void gw_create_game(gw_req *r, int64_t invitation_id, rpc_unary_cb done);

/* seeks.c: PostSeek (and CreateGame when it matched), CancelSeek, ListSeeks. */
void gw_seek_post(gw_req *r);
void gw_seek_cancel(gw_req *r);
void gw_seek_list(gw_req *r);

/* subscribe.c: the Subscribe action. */
void gw_subscribe(gw_req *r);

/* Shared helpers (edge.c). */
/* Finishes r's call with a downstream status; an UNAVAILABLE without a
 * reason gets `unavailable`. */
void gw_fail_downstream(gw_req *r, const rpc_status *st);
/* Client options for a downstream call on behalf of r: deadline min(the
 * inbound call's, --downstream-timeout), the caller's identity metadata,
 * replies decoded into the call's arena. */
rpc_client_opts gw_downstream_opts(gw_req *r);
int64_t gw_now_ms(void);

#endif

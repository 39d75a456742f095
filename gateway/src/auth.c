/*
 * auth.c — `authorization: Bearer <token>` -> account. The cache answers
 * nearly every call; a miss asks store-svc ResolveSession asynchronously
 * and the call continues in the callback, so no worker ever waits on the
 * network. Concurrent misses on one token each ask store-svc (rare: a
 * token's first calls after login are primed by gw_auth_remember).
 *
 * Store outages: a session the gateway has resolved (or issued) within
 * --auth-ttl + --auth-outage-grace stays valid while store-svc cannot
 * answer (UNAVAILABLE, e.g. db_unavailable, or no answer in time). Past
 * the TTL every call of such a token still asks store-svc first, at most
 * one call per GW_AUTH__RECHECK_MS (authcache.h, STALE), so a revoked
 * session is refused as soon as the store answers again; the cached
 * identity is used only when it cannot. A token the gateway has not seen
 * (or seen too long ago) fails UNAVAILABLE unavailable, as before.
 */
#include "gateway.h"

#include "rpc/log.h"
#include "scrabble/v1/store.pb-c.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* During an outage, how often one token's calls ask store-svc again. */
#define GW_AUTH__RECHECK_MS 1000

static void gw_auth__set_identity(gw_req *r, const gw_identity *id)
{
    r->who = *id;
    snprintf(r->account_str, sizeof r->account_str, "%lld", (long long)id->account_id);
    r->md[0].key = "scrabble-account-id";
    r->md[0].value = r->account_str;
    r->md[1].key = "scrabble-handle";
    r->md[1].value = r->who.handle;
}

void gw_auth_remember(gw_ctx *gw, const char *token, int64_t account_id, const char *handle,
                      int64_t expires_at_ms)
{
    if (!token || account_id <= 0)
        return;
    gw_identity id = {.account_id = account_id};
    snprintf(id.handle, sizeof id.handle, "%s", handle ? handle : "");
    int64_t until = gw_now_ms() + gw->cfg.auth_ttl_ms;
    int64_t grace = until + gw->cfg.auth_outage_grace_ms;
    /* The session's own expiry bounds both: an outage never extends it. */
    if (expires_at_ms > 0 && expires_at_ms < until)
        until = expires_at_ms;
    if (expires_at_ms > 0 && expires_at_ms < grace)
        grace = expires_at_ms;
    gw_authcache_put(gw->auth, token, strlen(token), &id, until, grace);
}

static void gw_auth__unauthenticated(gw_req *r, const char *why)
{
    metric_add(r->gw->m.auth_rejected, 1);
    rpc_call_fail(r->call, GRPC_STATUS_UNAUTHENTICATED, "unauthenticated", "%s", why);
}

static void gw_auth__resolved(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    gw_req *r = arg;
    gw_ctx *gw = r->gw;
    const char *token = r->step;
    if (st->code == GRPC_STATUS_OK) {
        const Scrabble__V1__SessionInfo *si = (const Scrabble__V1__SessionInfo *)reply;
        if (si->account_id <= 0) {
            gw_auth__unauthenticated(r, "invalid session");
            return;
        }
        gw_auth_remember(gw, token, si->account_id, si->handle, si->expires_at_ms);
        gw_identity id = {.account_id = si->account_id};
        snprintf(id.handle, sizeof id.handle, "%s", si->handle ? si->handle : "");
        gw_auth__set_identity(r, &id);
        r->next(r);
        return;
    }
    if (st->code == GRPC_STATUS_UNAUTHENTICATED || st->code == GRPC_STATUS_NOT_FOUND) {
        gw_identity bad = {.account_id = 0};
        int64_t until = gw_now_ms() + gw->cfg.auth_negative_ttl_ms;
        /* Also when negative caching is off: the rejection must replace a
         * fallback entry (a revoked session), so it is stored briefly. */
        gw_authcache_put(gw->auth, token, strlen(token), &bad,
                         gw->cfg.auth_negative_ttl_ms > 0 ? until : gw_now_ms() + 1, 0);
        gw_auth__unauthenticated(r, "invalid or expired token");
        return;
    }
    if (r->has_fallback &&
        (st->code == GRPC_STATUS_UNAVAILABLE || st->code == GRPC_STATUS_DEADLINE_EXCEEDED) &&
        !rpc_call_cancelled(r->call)) {
        /* The store cannot say: the session was valid when last resolved,
         * within the outage grace. */
        metric_add(gw->m.auth_outage_served, 1);
        log_debug("auth_outage_fallback", "account=%lld code=%s reason=%s",
                  (long long)r->fallback.account_id, rpc_status_code_name(st->code), st->reason);
        gw_auth__set_identity(r, &r->fallback);
        r->next(r);
        return;
    }
    /* The session store is down or slow: the caller may retry. */
    rpc_status s = *st;
    if (s.code != GRPC_STATUS_DEADLINE_EXCEEDED && s.code != GRPC_STATUS_CANCELLED) {
        s.code = GRPC_STATUS_UNAVAILABLE;
        snprintf(s.reason, sizeof s.reason, "unavailable");
    }
    gw_fail_downstream(r, &s);
}

void gw_auth_begin(gw_req *r, gw_action next)
{
    gw_ctx *gw = r->gw;
    size_t len = 0;
    const char *v = rpc_call_metadata(r->call, "authorization", &len);
    if (!v) {
        gw_auth__unauthenticated(r, "missing authorization: Bearer <token>");
        return;
    }
    if (len < 7 || strncasecmp(v, "bearer ", 7) != 0) {
        gw_auth__unauthenticated(r, "authorization must be 'Bearer <token>'");
        return;
    }
    const char *tok = v + 7;
    size_t tlen = len - 7;
    while (tlen > 0 && *tok == ' ') {
        tok++;
        tlen--;
    }
    while (tlen > 0 && tok[tlen - 1] == ' ')
        tlen--;
    /* Real tokens are short: a long one is forged, and is not worth a
     * store call. */
    if (tlen == 0 || tlen >= GW_AUTH_TOKEN_MAX) {
        gw_auth__unauthenticated(r, "malformed bearer token");
        return;
    }
    gw_identity id;
    switch (gw_authcache_get(gw->auth, tok, tlen, gw_now_ms(), GW_AUTH__RECHECK_MS, &id)) {
    case GW_AUTH_HIT:
        metric_add(gw->m.auth_hit, 1);
        gw_auth__set_identity(r, &id);
        next(r);
        return;
    case GW_AUTH_BAD:
        metric_add(gw->m.auth_hit, 1);
        gw_auth__unauthenticated(r, "invalid or expired token");
        return;
    case GW_AUTH_STALE:
        r->fallback = id;
        r->has_fallback = true;
        break;
    default:
        break;
    }
    metric_add(gw->m.auth_miss, 1);
    rpc_arena *a = rpc_call_arena(r->call);
    Scrabble__V1__ResolveSessionRequest *req = RPC_ARENA_MSG(
        a, Scrabble__V1__ResolveSessionRequest, scrabble__v1__resolve_session_request__init);
    char *token = rpc_arena_strndup(a, tok, tlen);
    if (!req || !token) {
        rpc_call_fail(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    req->token = token;
    r->step = token;
    r->next = next;
    rpc_client_opts o = gw_downstream_opts(r); /* no identity yet: md_count 0 */
    if (rpc_client_unary(gw->store, "/scrabble.v1.Store/ResolveSession", &req->base,
                         &scrabble__v1__session_info__descriptor, &o, gw_auth__resolved,
                         r) != RPC_OK)
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "session store unreachable");
}

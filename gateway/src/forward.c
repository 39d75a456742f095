/*
 * forward.c — game methods. The request was decoded so the game id can be
 * read and its bounds checked; the inbound bytes go downstream unchanged
 * (rpc_client_raw; re-packed only when they held unknown fields) to the
 * owning game-svc instance over its long-lived channel, with the caller's
 * identity in metadata and the inbound call as parent (deadline), and the
 * downstream reply bytes and status (code, message, scrabble-reason) go
 * back unchanged. Permission (not_a_player) is game-svc's to enforce: it
 * alone knows the seats, and the gateway never forwards any client-supplied
 * identity metadata — only the one it authenticated.
 */
#include "gateway.h"

#include "route.h"

#include <string.h>

/* The request's int64 game_id field (every game request has one), or 0. */
static int64_t gw_forward__game_id(const ProtobufCMessage *msg)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, "game_id");
    if (!f || f->type != PROTOBUF_C_TYPE_INT64 || f->label == PROTOBUF_C_LABEL_REPEATED)
        return 0;
    return *(const int64_t *)((const char *)msg + f->offset);
}

static void gw_forward__done(void *arg, const rpc_status *st, grpc_byte_buffer *reply)
{
    gw_req *r = arg;
    if (st->code != GRPC_STATUS_OK) {
        if (reply)
            grpc_byte_buffer_destroy(reply);
        gw_fail_downstream(r, st);
        return;
    }
    rpc_call_reply_raw(r->call, reply, st); /* takes reply over */
}

static void gw_forward__to(gw_req *r, int instance)
{
    gw_ctx *gw = r->gw;
    rpc_client_opts o = gw_downstream_opts(r);
    o.arena = NULL;
    metric_add(gw->m.forwarded, 1);
    /* The inbound bytes go on unchanged, unless they carried fields outside
     * the contract: then the decoded message, stripped of them, is packed
     * anew (rpc_client_raw takes its own reference). */
    grpc_byte_buffer *repacked = r->stripped ? rpc_pack(r->msg) : NULL;
    int rc = rpc_client_raw(gw->games[instance], r->method->downstream,
                            repacked ? repacked : rpc_call_request_bytes(r->call), &o,
                            gw_forward__done, r);
    if (repacked)
        grpc_byte_buffer_destroy(repacked);
    if (rc != RPC_OK) {
        metric_add(gw->m.downstream_unavailable, 1);
        rpc_call_fail(r->call, GRPC_STATUS_UNAVAILABLE, "unavailable",
                      "game service %s unreachable", gw->game_names[instance]);
    }
}

void gw_forward_game(gw_req *r)
{
    int64_t game_id = gw_forward__game_id(r->msg);
    if (game_id <= 0) {
        rpc_call_fail(r->call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "game_id must be positive");
        return;
    }
    gw_forward__to(r, gw_route_pick(game_id, r->gw->game_hash, (size_t)r->gw->ngames));
}

/* CheckWord needs no game: any instance with the lexicon answers. Spread
 * callers by account id, skipping instances whose channel is not ready. */
void gw_forward_any(gw_req *r)
{
    gw_ctx *gw = r->gw;
    int order[GW_MAX_GAME_INSTANCES];
    gw_route_rank(r->who.account_id, gw->game_hash, (size_t)gw->ngames, order);
    int pick = order[0];
    for (int i = 0; i < gw->ngames; i++) {
        if (rpc_channel_ready(gw->games[order[i]])) {
            pick = order[i];
            break;
        }
    }
    gw_forward__to(r, pick);
}

#!/usr/bin/python3
"""Minimal stand-ins for store-svc and game-svc, for testing the gateway
alone (smoke_gateway.sh) while the real services are not available.

usage: fake_backends.py STORE_PORT GAME_PORT [GAME_PORT...]
Store: Register/Login/ResolveSession/GetAccount/ListGames/CreateInvitation/
RespondInvitation/ListInvitations (in memory). Game: CreateGame, GetState
(PERMISSION_DENIED not_a_player unless the caller is one of the game's two
seats), everything else echoes an empty reply.
"""
import itertools
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
from edge_client import common_pb2 as C, edge_pb2 as E  # noqa: E402
from scrabble.v1 import game_pb2 as G, store_pb2 as S  # noqa: E402

ids = itertools.count(1)
lock = threading.Lock()
accounts, tokens, invitations, games = {}, {}, {}, {}


def abort(ctx, code, reason, msg):
    ctx.set_trailing_metadata((("scrabble-reason", reason),))
    ctx.abort(code, msg)


def open_session(acct):
    tok = os.urandom(32).hex()
    tokens[tok] = acct
    return E.AuthReply(account_id=acct, handle=accounts[acct], token=tok, expires_at_ms=2**62)


def register(req, ctx):
    with lock:
        if req.handle in accounts.values():
            abort(ctx, grpc.StatusCode.ALREADY_EXISTS, "handle_taken", "taken")
        acct = next(ids)
        accounts[acct] = req.handle
        return open_session(acct)


def login(req, ctx):
    with lock:
        for a, h in accounts.items():
            if h == req.handle and req.password == "correct horse battery":
                return open_session(a)
    abort(ctx, grpc.StatusCode.UNAUTHENTICATED, "bad_credentials", "no")


def resolve(req, ctx):
    a = tokens.get(req.token)
    if not a:
        abort(ctx, grpc.StatusCode.UNAUTHENTICATED, "unauthenticated", "unknown token")
    return S.SessionInfo(account_id=a, handle=accounts[a])


def by_handle(h):
    for a, x in accounts.items():
        if x == h:
            return a
    return 0


def create_inv(req, ctx):
    seats = [C.Invitee(account_id=req.inviter_id, handle=accounts[req.inviter_id],
                       answer=C.INVITEE_ANSWER_ACCEPTED)]
    for h in req.invitee_handles:
        a = by_handle(h)
        if not a:
            abort(ctx, grpc.StatusCode.NOT_FOUND, "not_found", h)
        seats.append(C.Invitee(account_id=a, handle=h, answer=C.INVITEE_ANSWER_PENDING))
    inv = C.Invitation(invitation_id=next(ids), inviter_id=req.inviter_id, seats=seats,
                       status=C.INVITATION_STATUS_OPEN)
    invitations[inv.invitation_id] = inv
    return inv


def respond_inv(req, ctx):
    inv = invitations.get(req.invitation_id)
    if not inv:
        abort(ctx, grpc.StatusCode.NOT_FOUND, "not_found", "no")
    for s in inv.seats:
        if s.account_id == req.account_id:
            s.answer = C.INVITEE_ANSWER_ACCEPTED if req.accept else C.INVITEE_ANSWER_DECLINED
    return inv


def create_game(req, ctx):
    inv = invitations[req.invitation_id]
    if not inv.game_id:
        inv.game_id = next(ids)
        inv.status = C.INVITATION_STATUS_STARTED
        games[inv.game_id] = [s.account_id for s in inv.seats]
    return C.GameState(game_id=inv.game_id)


def caller(ctx):
    for k, v in ctx.invocation_metadata():
        if k == "scrabble-account-id":
            return int(v)
    return 0


def get_state(req, ctx):
    seats = games.get(req.game_id)
    if not seats:
        abort(ctx, grpc.StatusCode.NOT_FOUND, "not_found", "no game")
    me = caller(ctx)
    if me not in seats:
        abort(ctx, grpc.StatusCode.PERMISSION_DENIED, "not_a_player", "not yours")
    return C.GameState(game_id=req.game_id, my_seat=seats.index(me), my_rack="ABCDEFG")


def H(fn, req_cls, rep_cls=None):
    return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=req_cls.FromString,
                                               response_serializer=lambda m: m.SerializeToString())


STORE = {
    "Register": H(register, E.RegisterRequest),
    "Login": H(login, E.LoginRequest),
    "ResolveSession": H(resolve, S.ResolveSessionRequest),
    "GetAccount": H(lambda r, c: C.Profile(account_id=r.account_id, handle=accounts.get(r.account_id, "")),
                    E.GetProfileRequest),
    "ListGames": H(lambda r, c: E.ListGamesReply(), S.StoreListGamesRequest),
    "CreateInvitation": H(create_inv, S.CreateInvitationRequest),
    "RespondInvitation": H(respond_inv, S.StoreRespondInvitationRequest),
    "ListInvitations": H(lambda r, c: E.ListInvitationsReply(), S.AccountRef),
}
GAME = {
    "CreateGame": H(create_game, G.CreateGameRequest),
    "GetState": H(get_state, E.GameRef),
}


class Generic(grpc.GenericRpcHandler):
    def __init__(self, svc, table):
        self.prefix, self.table = f"/scrabble.v1.{svc}/", table

    def service(self, d):
        if d.method.startswith(self.prefix):
            return self.table.get(d.method[len(self.prefix):])
        if d.method == "/grpc.health.v1.Health/Check":
            return grpc.unary_unary_rpc_method_handler(lambda r, c: b"\x08\x01")
        return None


servers = []
for i, port in enumerate(sys.argv[1:]):
    s = grpc.server(futures.ThreadPoolExecutor(8))
    s.add_generic_rpc_handlers((Generic("Store", STORE) if i == 0 else Generic("Game", GAME),))
    s.add_insecure_port(f"127.0.0.1:{port}")
    s.start()
    servers.append(s)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
stop.wait()

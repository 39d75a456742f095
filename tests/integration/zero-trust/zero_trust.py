#!/usr/bin/python3
"""Impersonation attempts against game-svc and store-svc (run by
test_zero_trust.sh on a private stack with mutual TLS on).

Every attempt comes from a caller that must not be trusted for it: another
service identity, the end-user `client` certificate of gen-certs.sh (signed
by the same CA), a TLS connection without a certificate, or plaintext. Each
must be refused with the stable status and reason, and the victim's game,
chat, draft and profile must be unchanged afterwards, as seen through the
gateway.

environment: GATEWAY_PORT, GAME_PORT, STORE_PORT, STACK_CERTS (ca.crt,
<identity>.crt/.key), METRICS_PORTS (comma list).
"""
import os
import sys
import urllib.request
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import Edge, CallError  # noqa: E402

from scrabble.v1 import common_pb2, edge_pb2, game_pb2, store_pb2  # noqa: E402

GW = f"127.0.0.1:{os.environ['GATEWAY_PORT']}"
GAME = f"127.0.0.1:{os.environ['GAME_PORT'].split(',')[0]}"
STORE = f"127.0.0.1:{os.environ['STORE_PORT']}"
CERTS = os.environ["STACK_CERTS"]
SC = grpc.StatusCode
ET = common_pb2
checks = 0


def read(name):
    with open(os.path.join(CERTS, name), "rb") as f:
        return f.read()


def channel(target, server, who):
    """who: an identity name (its certificate), 'client' (the end user's
    certificate), 'nocert' (TLS, no certificate) or 'plaintext'."""
    opts = [("grpc.use_local_subchannel_pool", 1), ("grpc.ssl_target_name_override", server)]
    if who == "plaintext":
        return grpc.insecure_channel(target, options=opts[:1])
    if who == "nocert":
        creds = grpc.ssl_channel_credentials(read("ca.crt"))
    else:
        creds = grpc.ssl_channel_credentials(read("ca.crt"), read(f"{who}.key"), read(f"{who}.crt"))
    return grpc.secure_channel(target, creds, options=opts)


# What each kind of caller must get: (code, reason). Plaintext never gets
# past the TLS handshake, so the client sees UNAVAILABLE and no reason.
WANT = {
    "client": (SC.PERMISSION_DENIED, "unknown_identity"),
    "nocert": (SC.UNAUTHENTICATED, "no_client_certificate"),
    "plaintext": (SC.UNAVAILABLE, ""),
}


def want_for(who):
    return WANT.get(who, (SC.PERMISSION_DENIED, "identity_not_allowed"))


def reason_of(err):
    for k, v in (err.trailing_metadata() or ()):
        if k == "scrabble-reason":
            return v
    return ""


def call(ch, path, req, reply_cls, md=()):
    f = ch.unary_unary(path, request_serializer=type(req).SerializeToString,
                       response_deserializer=reply_cls.FromString)
    return f(req, timeout=10, metadata=list(md))


def expect_refused(what, who, ch, path, req, reply_cls, md=()):
    global checks
    code, reason = want_for(who)
    try:
        r = call(ch, path, req, reply_cls, md)
    except grpc.RpcError as e:
        got = (e.code(), reason_of(e))
        assert got == (code, reason), f"{what} as {who}: got {got} {e.details()}, want {(code, reason)}"
        checks += 1
        return
    raise AssertionError(f"{what} as {who}: accepted ({r}), want {code.name} {reason}")


def new_player(prefix):
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(GW)
    r = e.call("Register", handle=handle, password="correct horse battery")
    e.token, e.account_id, e.handle = r.token, r.account_id, handle
    return e


def start_game(a, b):
    inv = a.call("Invite", invitee_handles=[b.handle])
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.game_id > 0, r
    return r.game_id, inv.invitation_id


def snapshot(victim, other, game_id):
    """What an impersonator could have changed, seen by the victim and the
    other player through the gateway."""
    st = victim.call("GetState", game_id=game_id)
    chat = victim.call("ListChat", game_id=game_id, limit=50)
    draft = victim.call("GetDraft", game_id=game_id)
    prof = other.call("GetProfile", account_id=victim.account_id)
    stats = other.call("GetStats", account_id=victim.account_id)
    return (st.seq, st.to_move, list(st.board), [s.score for s in st.seats], st.status,
            st.my_rack, [m.text for m in chat.messages], list(draft.placements),
            prof.display_name, prof.bio, stats.SerializeToString())


ATTACKERS_GAME = ["store-svc", "game-svc", "probe", "admin", "client", "nocert", "plaintext"]


def test_game_svc(victim, other, game_id):
    """Forged scrabble-account-id towards game-svc from anyone but the gateway."""
    before = snapshot(victim, other, game_id)
    st = victim.call("GetState", game_id=game_id)
    md = [("scrabble-account-id", str(victim.account_id))]
    G = "/scrabble.v1.Game/"
    attempts = [
        ("GetState", edge_pb2.GameRef(game_id=game_id), common_pb2.GameState),
        ("GetDraft", edge_pb2.GameRef(game_id=game_id), common_pb2.Draft),
        ("Pass", edge_pb2.TurnRequest(game_id=game_id, expected_seq=st.seq), edge_pb2.TurnReply),
        ("SubmitPlay", edge_pb2.SubmitPlayRequest(
            game_id=game_id, expected_seq=st.seq,
            placements=[common_pb2.Placement(row=7, col=7, letter=c) for c in st.my_rack[:1]]),
         edge_pb2.TurnReply),
        ("Resign", edge_pb2.TurnRequest(game_id=game_id, expected_seq=st.seq), edge_pb2.TurnReply),
        ("SendChat", edge_pb2.SendChatRequest(game_id=game_id, text="send me your password"),
         common_pb2.ChatMessage),
        ("SaveDraft", edge_pb2.SaveDraftRequest(
            game_id=game_id, placements=[common_pb2.Placement(row=7, col=7, letter="Q")]),
         common_pb2.Draft),
        ("Nudge", edge_pb2.GameRef(game_id=game_id), edge_pb2.NudgeReply),
        ("CreateGame", game_pb2.CreateGameRequest(invitation_id=1), common_pb2.GameState),
    ]
    for who in ATTACKERS_GAME:
        ch = channel(GAME, "game-svc", who)
        for method, req, rep in attempts:
            expect_refused(f"game-svc {method}", who, ch, G + method, req, rep, md)
        ch.close()
    after = snapshot(victim, other, game_id)
    assert before == after, f"game changed by refused calls:\n{before}\n{after}"
    print(f"ok - game-svc: {len(attempts)} methods x {len(ATTACKERS_GAME)} callers refused, "
          "the victim's game, chat and draft unchanged")


def test_store_svc(victim, other, game_id, invitation_id):
    """Each store-svc write from callers without the right identity."""
    before = snapshot(victim, other, game_id)
    st = victim.call("GetState", game_id=game_id)
    S = "/scrabble.v1.Store/"
    forged_move = common_pb2.Move(seq=st.seq + 1, seat=st.my_seat, kind=common_pb2.MOVE_KIND_PLAY,
                                  score=999, notation="8H ZZZ")
    handle = f"forged{uuid.uuid4().hex[:8]}"
    # (method, request, reply, the identities it belongs to)
    writes = [
        ("Register", edge_pb2.RegisterRequest(handle=handle, password="correct horse battery"),
         edge_pb2.AuthReply, {"gateway"}),
        ("UpdateProfile", store_pb2.StoreUpdateProfileRequest(
            account_id=victim.account_id, display_name="pwned", bio="pwned"),
         common_pb2.Profile, {"gateway"}),
        ("CreateInvitation", store_pb2.CreateInvitationRequest(
            inviter_id=victim.account_id, invitee_handles=[other.handle]),
         common_pb2.Invitation, {"gateway"}),
        ("RespondInvitation", store_pb2.StoreRespondInvitationRequest(
            account_id=victim.account_id, invitation_id=invitation_id, accept=False),
         common_pb2.Invitation, {"gateway"}),
        ("CreateGame", store_pb2.StoreCreateGameRequest(invitation_id=invitation_id, seed=1),
         store_pb2.GameRecord, {"game-svc"}),
        ("CommitMove", store_pb2.CommitMoveRequest(
            game_id=game_id, move=forged_move, to_move=1 - st.my_seat,
            scores=[999, 0], finish=store_pb2.GameFinish(
                end_reason=common_pb2.END_REASON_RESIGN, final_scores=[999, 0],
                winners=[st.my_seat])),
         store_pb2.CommitMoveReply, {"game-svc"}),
        ("AppendChat", store_pb2.AppendChatRequest(
            game_id=game_id, account_id=victim.account_id, text="send me your password"),
         common_pb2.ChatMessage, {"game-svc"}),
        ("FinishGame", store_pb2.FinishGameRequest(game_id=game_id, finish=store_pb2.GameFinish(
            end_reason=common_pb2.END_REASON_RESIGN, final_scores=[999, 0], winners=[0])),
         store_pb2.GameRecord, {"admin"}),
    ]
    callers = ["gateway", "game-svc", "store-svc", "probe", "admin", "client", "nocert", "plaintext"]
    n = 0
    for who in callers:
        ch = channel(STORE, "store-svc", who)
        for method, req, rep, owners in writes:
            if who in owners:
                continue
            expect_refused(f"store-svc {method}", who, ch, S + method, req, rep)
            n += 1
        ch.close()
    after = snapshot(victim, other, game_id)
    assert before == after, f"store changed by refused calls:\n{before}\n{after}"
    try:
        Edge(GW).call("Login", handle=handle, password="correct horse battery")
        raise AssertionError("the refused Register created an account")
    except CallError as e:
        assert e.code == SC.UNAUTHENTICATED, e
    print(f"ok - store-svc: {n} writes from callers without the identity refused, nothing changed")


def test_load_game(game_id):
    """The bag seed and exchanged tiles reach game-svc only."""
    ref = edge_pb2.GameRef(game_id=game_id)
    for who in ("gateway", "store-svc", "probe", "client"):
        ch = channel(STORE, "store-svc", who)
        expect_refused("store-svc LoadGame", who, ch, "/scrabble.v1.Store/LoadGame", ref,
                       store_pb2.GameRecord)
        ch.close()
    ch = channel(STORE, "store-svc", "game-svc")
    g = call(ch, "/scrabble.v1.Store/LoadGame", ref, store_pb2.GameRecord)
    ch.close()
    assert g.game_id == game_id and g.seed != 0, g
    print("ok - LoadGame: refused to the gateway and every other identity; game-svc gets the seed")
    return g.seed


def test_redaction():
    """A game record sent to anyone but game-svc has no seed: the admin
    identity may end a game (FinishGame returns the record), and gets it
    without the seed that game-svc still reads."""
    a, b = new_player("redact"), new_player("redact")
    game_id, _ = start_game(a, b)
    ref = edge_pb2.GameRef(game_id=game_id)
    ch = channel(STORE, "store-svc", "game-svc")
    seed = call(ch, "/scrabble.v1.Store/LoadGame", ref, store_pb2.GameRecord).seed
    assert seed != 0
    adm = channel(STORE, "store-svc", "admin")
    g = call(adm, "/scrabble.v1.Store/FinishGame", store_pb2.FinishGameRequest(
        game_id=game_id, finish=store_pb2.GameFinish(end_reason=common_pb2.END_REASON_RESIGN,
                                                     final_scores=[0, 0], winners=[1])),
        store_pb2.GameRecord)
    assert g.game_id == game_id and g.status == common_pb2.GAME_STATUS_FINISHED, g
    assert g.seed == 0, f"FinishGame gave the admin identity the seed {g.seed}"
    again = call(ch, "/scrabble.v1.Store/LoadGame", ref, store_pb2.GameRecord)
    assert again.seed == seed, (again.seed, seed)
    ch.close()
    adm.close()
    print("ok - a game record to the admin identity carries no seed; game-svc still gets it")


def test_reflection():
    """Reflection answers every identity of ours, nobody else."""
    body = b"\x3a\x00"  # ServerReflectionRequest{list_services: ""}
    for target, server in ((GAME, "game-svc"), (STORE, "store-svc")):
        for who in ("probe", "gateway", "client", "nocert"):
            ch = channel(target, server, who)
            f = ch.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                 request_serializer=lambda b: b, response_deserializer=lambda b: b)
            try:
                replies = list(f(iter([body]), timeout=10))
                assert who in ("probe", "gateway"), f"reflection on {server} answered {who}"
                assert any(server.replace("-svc", "").capitalize().encode() in r for r in replies), replies
            except grpc.RpcError as e:
                code, reason = want_for(who)
                assert (e.code(), reason_of(e)) == (code, reason), (server, who, e)
            ch.close()
    print("ok - reflection: identities of ours list the services; the end-user certificate and "
          "no certificate are refused")


def test_builtins():
    req = b""  # HealthCheckRequest{} serializes to nothing
    for target, server in ((GAME, "game-svc"), (STORE, "store-svc")):
        for who in ("probe", "gateway", "game-svc", "store-svc", "admin"):
            ch = channel(target, server, who)
            f = ch.unary_unary("/grpc.health.v1.Health/Check", request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)
            assert f(req, timeout=10) == b"\x08\x01", (server, who)
            ch.close()
        for who in ("client", "nocert", "plaintext"):
            ch = channel(target, server, who)
            f = ch.unary_unary("/grpc.health.v1.Health/Check", request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)
            code, reason = want_for(who)
            try:
                f(req, timeout=10)
                raise AssertionError(f"health on {server} answered {who}")
            except grpc.RpcError as e:
                assert (e.code(), reason_of(e)) == (code, reason), (server, who, e)
            ch.close()
    print("ok - health: every identity of ours, not the end-user certificate, nor no certificate")


def test_metrics(victim, seed):
    """Nothing in /metrics identifies a player or leaks a secret."""
    secrets = [victim.token, victim.handle, str(seed), "correct horse", "scrabble-account-id"]
    for port in os.environ["METRICS_PORTS"].split(","):
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        for s in secrets:
            assert s not in body, f"/metrics on :{port} shows {s!r}"
        for line in body.splitlines():
            if line.startswith("#") or "{" not in line:
                continue
            labels = line[line.index("{") + 1:line.index("}")]
            for kv in labels.split('",'):
                key = kv.split("=", 1)[0]
                # Every allowed key takes a small fixed set of values (the
                # trace, queue and connection ones included): never an id.
                assert key in ("method", "code", "target", "le", "op", "class", "reason", "stage",
                               "result", "outcome", "queue", "role", "source", "level"), \
                    f"/metrics on :{port}: unexpected label {key} in {line}"
    print("ok - /metrics of every process: no token, handle, seed or per-account label")


def main():
    victim, other = new_player("victim"), new_player("other")
    game_id, invitation_id = start_game(other, victim)
    victim.call("SaveDraft", game_id=game_id,
                placements=[common_pb2.Placement(row=7, col=7, letter="A")])
    victim.call("SendChat", game_id=game_id, text="hello")
    test_game_svc(victim, other, game_id)
    test_store_svc(victim, other, game_id, invitation_id)
    seed = test_load_game(game_id)
    test_builtins()
    test_reflection()
    test_redaction()
    test_metrics(victim, seed)
    print(f"zero_trust.py: {checks} refusals checked, all passed")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Full-stack tests of the gateway through its public API (scrabble.v1.Edge).

Run by test_gateway.sh, which starts Postgres, Redis, store-svc, two
game-svc instances and the gateway on free ports and passes them in the
environment: GATEWAY_PORT, GATEWAY_METRICS_PORT, REDIS_PORT, GAME_TARGETS
(the gateway's --games list), GAME_PIDS, SOLVER, LEXICON, RATE_LIST,
BURST_LIST.
"""
import os
import subprocess
import sys
import threading
import time
import traceback
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2, edge_pb2  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
REDIS_PORT = int(os.environ["REDIS_PORT"])
GAMES = os.environ["GAME_TARGETS"].split(",")
GAME_PIDS = [int(p) for p in os.environ.get("GAME_PIDS", "").split(",") if p]
SOLVER = os.environ.get("SOLVER", "")
LEXICON = os.environ.get("LEXICON", "")
ET = common_pb2
OK = grpc.StatusCode


def expect_error(code, reason, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except CallError as e:
        assert e.code == code, f"want {code.name}, got {e}"
        if reason is not None:
            assert e.reason == reason or e.reason.startswith(reason), f"want reason {reason}, got {e}"
        return e
    raise AssertionError(f"want {code.name} {reason}, call succeeded")


def new_player(prefix):
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(TARGET)
    r = e.call("Register", handle=handle, password="correct horse battery")
    assert r.account_id > 0 and r.token, r
    e.token, e.account_id, e.handle = r.token, r.account_id, handle
    return e


def subscribers():
    return ec.metric(MPORT, "gateway_subscribers") or 0


def open_subs(*edges):
    base = subscribers()
    subs = [e.subscribe() for e in edges]
    # The stream is live once the gateway counts it: only then may the test
    # cause events.
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= base + len(edges))
    return subs


def start_game(a, b):
    sa, sb = open_subs(a, b)
    inv = a.call("Invite", invitee_handles=[b.handle])
    assert inv.invitation_id > 0 and inv.status == ET.INVITATION_STATUS_OPEN, inv
    ev = sb.next(want=ET.EVENT_TYPE_INVITATION)
    assert ev.invitation.invitation_id == inv.invitation_id and ev.from_account_id == a.account_id, ev
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    for s in (sa, sb):
        ev = s.next(want=ET.EVENT_TYPE_GAME_STARTED)
        assert ev.game_id == r.game_id, ev
    return r.game_id, sa, sb


# ---- the solver (edge_client.solver_moves) ----------------------------------

def solver_moves(state, top=5):
    return ec.solver_moves(SOLVER, LEXICON, state, top) if SOLVER else []


def take_turn(e, game_id, ev):
    st = e.call("GetState", game_id=game_id)
    assert st.my_seat >= 0 and st.seats[st.my_seat].account_id == e.account_id, st
    assert st.to_move == st.my_seat, f"YOUR_TURN but to_move={st.to_move} my_seat={st.my_seat}"
    assert st.seq == ev.seq, f"event seq {ev.seq} != state seq {st.seq}"
    for notation, placements, score in solver_moves(st):
        ev_reply = e.call("Evaluate", game_id=game_id, placements=placements)
        if not ev_reply.legal:
            continue
        assert ev_reply.score == score, f"{notation}: evaluate {ev_reply.score} != solver {score}"
        try:
            r = e.call("SubmitPlay", game_id=game_id, expected_seq=st.seq, placements=placements)
        except CallError as err:
            if err.reason.startswith("illegal_play"):
                continue
            raise
        assert r.move.seq == st.seq + 1 and r.move.score == score, r.move
        return "play"
    if st.bag_count >= 7 and st.my_rack:
        e.call("Exchange", game_id=game_id, expected_seq=st.seq, tiles=st.my_rack)
        return "exchange"
    e.call("Pass", game_id=game_id, expected_seq=st.seq)
    return "pass"


# ---- tests ----------------------------------------------------------------

def test_full_game():
    """Two players play a game to game_over; whose turn it is comes only
    from each player's Subscribe events."""
    a, b = new_player("alice"), new_player("bob")
    game_id, sa, sb = start_game(a, b)
    by_account = {a.account_id: (a, sa), b.account_id: (b, sb)}
    kinds = {"play": 0, "exchange": 0, "pass": 0}
    over = set()
    turns = 0
    while len(over) < 2:
        assert turns < 400, "game does not end"
        progressed = False
        for acct, (e, s) in by_account.items():
            if acct in over:
                continue
            try:
                ev = s.next(timeout=0.2)
            except Exception as err:
                if isinstance(err, CallError):
                    raise
                continue
            progressed = True
            assert ev.game_id == game_id, ev
            if ev.type == ET.EVENT_TYPE_YOUR_TURN:
                kinds[take_turn(e, game_id, ev)] += 1
                turns += 1
            elif ev.type == ET.EVENT_TYPE_GAME_OVER:
                over.add(acct)
        if not progressed:
            time.sleep(0.05)
    st = a.call("GetState", game_id=game_id)
    assert st.status == ET.GAME_STATUS_FINISHED, st
    hist = b.call("GetHistory", game_id=game_id, since_seq=0)
    assert len(hist.moves) == st.seq and hist.seq == st.seq, (len(hist.moves), st.seq)
    print(f"  game {game_id}: {turns} turns {kinds}, end_reason={st.end_reason}, "
          f"scores={[s.score for s in st.seats]}")
    assert kinds["play"] > 0, "no play was made"
    for s in (sa, sb):
        s.cancel()
    return game_id, a, b


def test_auth():
    anon = Edge(TARGET)
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.call, "GetProfile", metadata=[])
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.call, "GetProfile",
                 metadata=[("authorization", "Basic abc")])
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.call, "GetProfile",
                 metadata=[("authorization", "Bearer " + uuid.uuid4().hex * 2)])
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.call, "GetProfile",
                 metadata=[("authorization", "Bearer " + "x" * 500)])
    # A forged token hammered: the negative cache spares store-svc.
    forged = [("authorization", "Bearer " + "f" * 64)]
    misses0 = ec.metric(MPORT, "gateway_auth_cache_misses_total") or 0
    for _ in range(50):
        expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.call, "ListGames", metadata=forged)
    misses = (ec.metric(MPORT, "gateway_auth_cache_misses_total") or 0) - misses0
    assert misses <= 2, f"{misses} store lookups for one forged token"
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", anon.subscribe().next, timeout=5)
    # Login opens a second session; a wrong password is bad_credentials.
    p = new_player("carol")
    r = anon.call("Login", metadata=[], handle=p.handle, password="correct horse battery")
    assert r.account_id == p.account_id and r.token != p.token
    expect_error(OK.UNAUTHENTICATED, "bad_credentials", anon.call, "Login", metadata=[], handle=p.handle,
                 password="wrong password!")
    prof = Edge(TARGET, r.token).call("GetProfile")
    assert prof.account_id == p.account_id and prof.handle == p.handle, prof
    prof = p.call("UpdateProfile", display_name="Carol C", bio="hi")
    assert prof.display_name == "Carol C"
    assert p.call("GetStats").account_id == p.account_id
    expect_error(OK.ALREADY_EXISTS, "handle_taken", anon.call, "Register", metadata=[], handle=p.handle,
                 password="correct horse battery")


def test_expired_token():
    """A session that store-svc says is expired is refused once the cache
    entry lapses (here: a token store-svc never issued, and an expired row
    forced in Postgres when PG_PORT is given)."""
    pg = os.environ.get("PG_PORT")
    if not pg:
        print("  (skipped the Postgres-forced expiry: no PG_PORT)")
        return
    p = new_player("dave")
    other = Edge(TARGET)
    # Use a fresh login so the gateway has not cached this token yet.
    r = other.call("Login", metadata=[], handle=p.handle, password="correct horse battery")
    sql = "UPDATE sessions SET expires_at = now() - interval '1 hour' WHERE account_id = %d" % p.account_id
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", pg, "-U", "scrabble", "-d", "scrabble", "-qc", sql],
                   check=True, capture_output=True)
    # Login primed the cache; wait out the test's short --auth-ttl.
    time.sleep(float(os.environ.get("AUTH_TTL_S", "1")) + 0.3)
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", Edge(TARGET, r.token).call, "GetProfile")


def test_privacy(game_id, a, b):
    """A non-player never sees a game's state, draft or chat."""
    c = new_player("eve")
    for method, fields in (("GetState", {}), ("GetDraft", {}), ("ListChat", {}), ("GetHistory", {}),
                           ("SendChat", {"text": "hi"}), ("Nudge", {}),
                           ("Pass", {"expected_seq": 0})):
        expect_error(OK.PERMISSION_DENIED, "not_a_player", c.call, method, game_id=game_id, **fields)
    # The players see only their own rack.
    sa = a.call("GetState", game_id=game_id)
    sb = b.call("GetState", game_id=game_id)
    assert sa.my_seat != sb.my_seat


def test_bad_input():
    p = new_player("frank")
    for method in ("GetState", "Evaluate", "SubmitPlay", "GetDraft", "SendChat", "ListChat"):
        expect_error(OK.INVALID_ARGUMENT, "bad_request", p.call, method, game_id=0)
    expect_error(OK.INVALID_ARGUMENT, "bad_request", p.call, "GetState", game_id=-5)
    expect_error(OK.INVALID_ARGUMENT, "bad_request", p.call, "RespondInvitation", invitation_id=0)
    expect_error(OK.INVALID_ARGUMENT, "bad_request", p.call, "ListGames", page_size=1000)
    expect_error(OK.INVALID_ARGUMENT, "bad_seats", p.call, "Invite", invitee_handles=[])
    # Bytes that are not a valid message.
    for body in (b"\xff\xff\xff", b"\x08", b"\x0a\x05ab"):
        expect_error(OK.INVALID_ARGUMENT, "bad_request", p.raw, "GetState", body)
    expect_error(OK.UNIMPLEMENTED, None, p.raw, "NoSuchMethod", b"")
    # The gateway is still fine.
    assert p.call("GetProfile").account_id == p.account_id


def test_rate_limit():
    rate, burst = int(os.environ["RATE_LIST"]), int(os.environ["BURST_LIST"])
    p, q = new_player("greg"), new_player("hana")
    n, results = 200, []
    lock = threading.Lock()
    t0 = time.time()

    def one():
        try:
            p.call("ListGames")
            r = "ok"
        except CallError as e:
            r = (e.code, e.reason)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    ok = results.count("ok")
    rejected = [r for r in results if r != "ok"]
    assert all(r == (OK.RESOURCE_EXHAUSTED, "rate_limited") for r in rejected), set(rejected)
    assert burst <= ok <= burst + rate * elapsed + 1, f"{ok} passed in {elapsed:.2f}s"
    print(f"  {n} ListGames in {elapsed:.2f}s: {ok} passed, {len(rejected)} rate_limited")
    # Another account is not affected; the budget comes back.
    q.call("ListGames")
    time.sleep(1.0 / rate + 0.1)
    p.call("ListGames")


def test_events_fanout_and_order():
    """Several streams of one account all get every event, in order."""
    p = new_player("ivan")
    s1, s2, s3 = open_subs(p, p, p)
    # Bursts stay within --subscriber-queue (a burst larger than the queue
    # is what slow_consumer is for); 30 bursts of 10.
    n, batch = 300, 10
    got = {id(s): [] for s in (s1, s2, s3)}
    for start in range(1, n + 1, batch):
        items = []
        for i in range(start, start + batch):
            # Published straight to Redis, as the relay would: with an
            # id above anything the log holds, so the streams take it.
            ev = common_pb2.Event(type=ET.EVENT_TYPE_CHAT, game_id=777, seq=i, from_account_id=1,
                                  event_id=str(10**12 + i))
            items.append((f"ev:{p.account_id}", ev.SerializeToString()))
        ec.redis_publish_many(REDIS_PORT, items)
        for s in (s1, s2, s3):
            got[id(s)] += [s.next(timeout=10).seq for _ in range(batch)]
    for seqs in got.values():
        assert seqs == list(range(1, n + 1)), seqs[:20]
    s2.cancel()
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= 0)
    for s in (s1, s3):
        s.cancel()


def test_slow_consumer():
    """A subscriber that stops reading is ended RESOURCE_EXHAUSTED
    slow_consumer, and the others keep getting events."""
    p = new_player("judy")
    base = subscribers()
    slow = ec.Subscription(p, read=False)
    fast = p.subscribe()
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= base + 2)
    slow0 = ec.metric(MPORT, "gateway_slow_consumers_total") or 0
    big = "x" * 4000
    # Paced bursts the reading stream keeps up with; the one that does not
    # read fills its HTTP/2 window, then its queue, then is cut off.
    seq, batch = 0, 8
    while (ec.metric(MPORT, "gateway_slow_consumers_total") or 0) < slow0 + 1:
        assert seq < 20000, "the non-reading stream was never cut off"
        items = [(f"ev:{p.account_id}", common_pb2.Event(type=ET.EVENT_TYPE_CHAT, seq=i, from_handle=big,
                                                         event_id=str(10**12 + i))
                  .SerializeToString()) for i in range(seq + 1, seq + batch + 1)]
        ec.redis_publish_many(REDIS_PORT, items)
        got = [fast.next(timeout=20).seq for _ in range(batch)]
        assert got == list(range(seq + 1, seq + batch + 1)), got
        seq += batch
    print(f"  cut off after {seq} events of 4 KB")
    try:
        for _ in slow.call:
            pass
        raise AssertionError("slow stream ended OK")
    except grpc.RpcError as e:
        assert e.code() == OK.RESOURCE_EXHAUSTED and ec.reason_of(e) == "slow_consumer", e
    fast.cancel()


def test_downstream_down():
    """With one game-svc instance down its games fail UNAVAILABLE at once,
    and games owned by the other instance keep working."""
    if len(GAMES) < 2 or not GAME_PIDS:
        print("  (skipped: needs two game-svc instances)")
        return
    a, b = new_player("kim"), new_player("lee")
    sa, sb = open_subs(a, b)
    games = {}
    for _ in range(12):
        inv = a.call("Invite", invitee_handles=[b.handle])
        r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
        games.setdefault(ec.owner(r.game_id, GAMES), []).append(r.game_id)
        if len(games) == 2:
            break
    assert len(games) == 2, f"all games on one instance: {games}"
    os.kill(GAME_PIDS[1], 15)
    time.sleep(1.0)
    for g in games[1]:
        t0 = time.time()
        expect_error(OK.UNAVAILABLE, "unavailable", a.call, "GetState", game_id=g, timeout=10)
        assert time.time() - t0 < 2.0, f"UNAVAILABLE took {time.time() - t0:.2f}s"
    for g in games[0]:
        st = a.call("GetState", game_id=g)
        assert st.game_id == g
    sa.cancel()
    sb.cancel()


def main():
    only = sys.argv[1:]
    failures = 0
    state = {}
    plan = [
        ("full_game", lambda: state.update(game=test_full_game())),
        ("auth", test_auth),
        ("expired_token", test_expired_token),
        ("privacy", lambda: test_privacy(*state["game"]) if "game" in state else None),
        ("bad_input", test_bad_input),
        ("rate_limit", test_rate_limit),
        ("events_fanout_and_order", test_events_fanout_and_order),
        ("slow_consumer", test_slow_consumer),
        ("downstream_down", test_downstream_down),  # last: kills an instance
    ]
    for name, fn in plan:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
            print(f"PASS {name} ({time.time() - t0:.1f}s)", flush=True)
        except Exception:
            failures += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

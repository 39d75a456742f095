#!/usr/bin/python3
"""Spectators through the public API (scrabble.v1.Edge), on the real
binaries, with a python3-grpcio client. Run by test_watch.sh, which passes
GW1_PORT, GW1_METRICS (gateway 1: default bounds), GW2_PORT, GW2_METRICS
(gateway 2: at most 2 observers per game, 3 Watch streams per account),
PG_CONNINFO, SOLVER, LEXICON.

Players play through gateway 1; observers watch through gateway 1 and 2.
Every wait is a bounded wait for a state (an event, a metric), never a
fixed sleep.
"""
import os
import subprocess
import sys

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import common_pb2  # noqa: E402

GW1 = "127.0.0.1:" + os.environ["GW1_PORT"]
GW2 = "127.0.0.1:" + os.environ["GW2_PORT"]
M1, M2 = int(os.environ["GW1_METRICS"]), int(os.environ["GW2_METRICS"])
PG = os.environ["PG_CONNINFO"]
TMP = os.environ["STACK_TMP"]
SOLVER, LEXICON = os.environ["SOLVER"], os.environ["LEXICON"]
ET = common_pb2
S = grpc.StatusCode


# ---- helpers ----------------------------------------------------------------

def player(prefix, target=GW1):
    return ec.new_player(target, prefix)


def start_game(a, others, public):
    inv = a.call("Invite", invitee_handles=[o.handle for o in others], public_game=public)
    assert inv.public_game == public, inv
    r = None
    for o in others:
        r = o.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    assert r.public_game == public, r
    return r.game_id


def drain(stream, timeout=60):
    """Every event of a Watch stream until it ends; returns (events, error):
    error None when it ended OK."""
    out = []
    while True:
        ev = stream.events.get(timeout=timeout)
        if ev is None:
            return out, stream.error
        out.append(ev)


def no_secret(ev):
    """An observer's event during play: no rack and no exchanged tiles."""
    assert not ev.move.exchanged_tiles, ev
    for s in ev.seats:
        assert not s.final_rack, ev


def play_out(players, game_id, exchange_at=(2, 3)):
    """Plays to the end (edge_client.play_out), the moves after the seqs in
    exchange_at being exchanges of two tiles, and each mover saving a draft
    first (observers must never see it). Returns the exchanged tiles by
    the exchange's seq."""
    exchanged = {}

    def turn(me, st, moves):
        if moves:
            me.call("SaveDraft", game_id=game_id, placements=moves[0][1], rack_order=st.my_rack)
        if st.seq not in exchange_at or st.bag_count < 7:
            return False
        r = me.call("Exchange", game_id=game_id, expected_seq=st.seq, tiles=st.my_rack[:2])
        assert r.move.exchanged_tiles == st.my_rack[:2], r.move  # the mover's own view
        exchanged[st.seq + 1] = st.my_rack[:2]
        return True
    ec.play_out(players, game_id, SOLVER, LEXICON, turn)
    return exchanged


def public_ids(edge, page_size):
    """Every game id ListPublicGames lists, page by page."""
    ids, token = [], ""
    for _ in range(1000):
        r = edge.call("ListPublicGames", page_size=page_size, page_token=token)
        assert len(r.games) <= page_size, r
        ids += [g.game_id for g in r.games]
        token = r.next_page_token
        if not token:
            return ids
    raise AssertionError("paging did not end")


def restart_gateway2():
    """SIGTERM gateway 2, wait until it is gone, start it again with the
    same command line and port; returns once it answers."""
    ec.restart_process(TMP, "gateway-2", int(os.environ["GW2_PORT"]))


def same_move(a, b):
    return (a.seq, a.seat, a.kind, list(a.placements), a.exchanged_count, a.score,
            list(a.words), a.notation, a.account_id) == \
           (b.seq, b.seat, b.kind, list(b.placements), b.exchanged_count, b.score,
            list(b.words), b.notation, b.account_id)


# ---- tests ------------------------------------------------------------------

def test_observer_vs_player_stream():
    """A whole public game with exchanges and drafts: two observers (one
    per gateway) see every move in order, exactly as the players' streams
    carry them, never a rack, an exchanged tile or a draft; then GAME_OVER
    with every final rack, as the players got it, and the stream ends OK.
    WatchState shows no rack while the game is on. A watch resumed with
    after_seq gets exactly the moves after it."""
    a, b, o1, o2 = player("wa"), player("wb"), player("wo"), player("wp", GW2)
    sa, sb = a.subscribe(), b.subscribe()
    gid = start_game(a, [b], public=True)
    assert a.call("GetState", game_id=gid).public_game
    w1 = o1.watch(gid)
    w2 = o2.watch(gid)
    st = o1.call("WatchState", game_id=gid)
    assert st.state.my_seat == -1 and not st.state.my_rack and st.state.public_game, st
    exchanged = play_out([a, b], gid)
    assert exchanged, "the game had no exchange"

    # The players' view of every move: each move reaches the other seat as
    # OPPONENT_MOVED (exchanged tiles never included).
    def moves_of(sub, want_over):
        got, over = {}, None
        while over is None:
            ev = sub.next(timeout=30)
            if ev.type == ET.EVENT_TYPE_OPPONENT_MOVED:
                got[ev.move.seq] = ev.move
            elif ev.type == ET.EVENT_TYPE_GAME_OVER:
                over = ev
                if ev.HasField("move"):
                    got[ev.move.seq] = ev.move
        return got, over
    ma, over_a = moves_of(sa, True)
    mb, over_b = moves_of(sb, True)
    played = {**ma, **mb}
    final = a.call("GetState", game_id=gid)
    assert sorted(played) == list(range(1, final.seq + 1)), sorted(played)

    for w in (w1, w2):
        evs, err = drain(w)
        assert err is None, err
        moves = [e for e in evs if e.type == ET.EVENT_TYPE_WATCHED_MOVE]
        assert [e.type for e in evs[:-1]] == [ET.EVENT_TYPE_WATCHED_MOVE] * len(moves)
        assert [m.seq for m in moves] == list(range(1, final.seq + 1))
        for e in moves:
            no_secret(e)
            assert e.game_id == gid and not e.event_id
            assert same_move(e.move, played[e.seq]), (e.move, played[e.seq])
            if e.move.kind == ET.MOVE_KIND_EXCHANGE:
                assert e.move.exchanged_count == len(exchanged[e.seq])
        over = evs[-1]
        assert over.type == ET.EVENT_TYPE_GAME_OVER and over.seq == final.seq, over
        assert list(over.seats) == list(over_a.seats) == list(over_b.seats), over
        assert list(over.winners) == list(over_a.winners) and over.end_reason == over_a.end_reason

    # Once over, WatchState shows the final racks.
    st = o1.call("WatchState", game_id=gid, since_seq=final.seq - 2)
    assert [m.seq for m in st.moves] == [final.seq - 1, final.seq]
    assert list(st.state.seats) == list(final.seats) and not st.state.my_rack
    assert all(not m.exchanged_tiles for m in st.moves)
    # A resume: exactly the moves after after_seq, then GAME_OVER.
    evs, err = drain(o2.watch(gid, after_seq=3))
    assert err is None, err
    assert [e.seq for e in evs[:-1]] == list(range(4, final.seq + 1))
    assert evs[-1].type == ET.EVENT_TYPE_GAME_OVER
    ec.wait_metric(M1, "gateway_observers", lambda v: v == 0)
    ec.wait_metric(M2, "gateway_observers", lambda v: v == 0)


def test_watch_racks_hidden_during_play():
    """Mid-game, an observer's WatchState has no rack anywhere and no
    exchanged tiles, while a player's GetState has its own rack."""
    a, b, o = player("ha"), player("hb"), player("ho")
    gid = start_game(a, [b], public=True)
    st = a.call("GetState", game_id=gid)
    r = a.call("Exchange", game_id=gid, expected_seq=st.seq, tiles=st.my_rack[:3])
    assert r.move.exchanged_tiles
    w = o.call("WatchState", game_id=gid)
    assert w.state.my_seat == -1 and not w.state.my_rack
    assert all(not s.final_rack for s in w.state.seats), w.state.seats
    assert all(s.rack_count == 7 for s in w.state.seats)
    assert len(w.moves) == 1 and not w.moves[0].exchanged_tiles and w.moves[0].exchanged_count == 3
    assert not w.state.last_move.exchanged_tiles
    assert w.state.board == st.board and w.state.bag_count == st.bag_count


def test_private_game_refused():
    """The default is private: an outsider's WatchState and Watch are
    PERMISSION_DENIED private_game; the game is not listed; a player of it
    may still read it through WatchState (racks hidden)."""
    a, b, o = player("pa"), player("pb"), player("po")
    gid = start_game(a, [b], public=False)
    assert not a.call("GetState", game_id=gid).public_game
    ec.expect_error(S.PERMISSION_DENIED, "private_game", o.call, "WatchState", game_id=gid)
    w = o.watch(gid, wait_headers=False)
    evs, err = drain(w)
    assert not evs and err.code == S.PERMISSION_DENIED and err.reason == "private_game", err
    assert gid not in public_ids(o, 100)
    st = b.call("WatchState", game_id=gid)
    assert st.state.my_seat == -1 and not st.state.my_rack
    ec.expect_error(S.NOT_FOUND, "not_found", o.call, "WatchState", game_id=gid + 100000)
    ec.expect_error(S.INVALID_ARGUMENT, "bad_request", o.call, "WatchState", game_id=0)
    evs, err = drain(o.watch(0, wait_headers=False))
    assert err.code == S.INVALID_ARGUMENT and err.reason == "bad_request", err


def test_observer_turn_refused():
    """An observer of a public game holds no seat: every turn method, and
    Evaluate, drafts, Nudge and chat, are PERMISSION_DENIED not_a_player,
    and nothing changes."""
    a, b, o = player("ta"), player("tb"), player("to")
    gid = start_game(a, [b], public=True)
    w = o.watch(gid)
    st = a.call("GetState", game_id=gid)
    moves = ec.solver_moves(SOLVER, LEXICON, st, 1)
    P = S.PERMISSION_DENIED
    ec.expect_error(P, "not_a_player", o.call, "SubmitPlay", game_id=gid, expected_seq=0,
                    placements=moves[0][1])
    ec.expect_error(P, "not_a_player", o.call, "Pass", game_id=gid, expected_seq=0)
    ec.expect_error(P, "not_a_player", o.call, "Exchange", game_id=gid, expected_seq=0, tiles="A")
    ec.expect_error(P, "not_a_player", o.call, "Resign", game_id=gid, expected_seq=0)
    ec.expect_error(P, "not_a_player", o.call, "Evaluate", game_id=gid, placements=moves[0][1])
    ec.expect_error(P, "not_a_player", o.call, "SaveDraft", game_id=gid, placements=moves[0][1])
    ec.expect_error(P, "not_a_player", o.call, "GetDraft", game_id=gid)
    ec.expect_error(P, "not_a_player", o.call, "GetState", game_id=gid)
    ec.expect_error(P, "not_a_player", o.call, "Nudge", game_id=gid)
    ec.expect_error(P, "not_a_player", o.call, "SendChat", game_id=gid, text="hi")
    assert a.call("GetState", game_id=gid).seq == 0
    # The watch goes on: the next real move reaches it.
    a.call("Pass", game_id=gid, expected_seq=0)
    ev = w.next(want=ET.EVENT_TYPE_WATCHED_MOVE)
    assert ev.seq == 1 and ev.move.kind == ET.MOVE_KIND_PASS and ev.to_move == 1
    w.cancel()


def test_observer_bounds():
    """Gateway 2 holds at most 2 observers of one game
    (RESOURCE_EXHAUSTED too_many_observers) and 3 Watch streams per
    account (RESOURCE_EXHAUSTED rate_limited); a place freed is usable
    again."""
    a, b = player("ba"), player("bb")
    g1 = start_game(a, [b], public=True)
    g2 = start_game(a, [b], public=True)
    x, y, z = player("bx", GW2), player("by", GW2), player("bz", GW2)
    base = ec.metric(M2, "gateway_observers") or 0
    wx, wy = x.watch(g1), y.watch(g1)
    ec.wait_metric(M2, "gateway_observers", lambda v: v == base + 2)
    evs, err = drain(z.watch(g1, wait_headers=False))
    assert err.code == S.RESOURCE_EXHAUSTED and err.reason == "too_many_observers", err
    assert ec.metric(M2, "gateway_observers_refused_total") >= 1
    # Gateway 1 has its own bound: the game is watched there too.
    z1 = ec.Edge(GW1, token=z.token)
    wz1 = z1.watch(g1)
    wy.cancel()
    ec.wait_metric(M2, "gateway_observers", lambda v: v == base + 1)
    wz = z.watch(g1)
    # Per account: x holds one (g1); two more on g2 fit, a fourth does not.
    wx2, wx3 = x.watch(g2), x.watch(g2)
    evs, err = drain(x.watch(g2, wait_headers=False))
    assert err.code == S.RESOURCE_EXHAUSTED and err.reason == "rate_limited", err
    # Every admitted stream is live: one move reaches them all.
    a.call("Pass", game_id=g1, expected_seq=0)
    a.call("Pass", game_id=g2, expected_seq=0)
    for w in (wx, wz, wz1, wx2, wx3):
        assert w.next(want=ET.EVENT_TYPE_WATCHED_MOVE).seq == 1
    for w in (wx, wz, wz1, wx2, wx3):
        w.cancel()
    ec.wait_metric(M2, "gateway_observers", lambda v: v == base)


def test_public_list_paging():
    """ListPublicGames lists every live public game once, newest first,
    across pages of every size; never a private or finished game. Bad
    tokens and sizes are refused."""
    a, b = player("la"), player("lb")
    pub = [start_game(a, [b], public=True) for _ in range(5)]
    priv = start_game(a, [b], public=False)
    done = start_game(a, [b], public=True)
    a.call("Resign", game_id=done, expected_seq=0)
    for size in (1, 2, 3, 100):
        ids = public_ids(b, size)
        assert len(ids) == len(set(ids)), ids
        assert ids == sorted(ids, reverse=True), ids
        assert set(pub) <= set(ids) and priv not in ids and done not in ids, (ids, pub)
    r = b.call("ListPublicGames", page_size=0)
    assert 0 < len(r.games) <= 20
    g = [s for s in r.games if s.game_id == pub[-1]][0]
    assert g.status == ET.GAME_STATUS_ACTIVE and len(g.seats) == 2
    assert {s.handle for s in g.seats} == {a.handle, b.handle}
    assert all(not s.final_rack for s in g.seats)
    ec.expect_error(S.INVALID_ARGUMENT, "bad_page_token", b.call, "ListPublicGames",
                    page_token="nonsense")
    ec.expect_error(S.INVALID_ARGUMENT, "bad_request", b.call, "ListPublicGames", page_size=101)
    ec.expect_error(S.UNAUTHENTICATED, "unauthenticated", b.call, "ListPublicGames", metadata=[])


def test_watch_finished_game():
    """Watching a game that is already over: its moves, GAME_OVER with the
    final racks, and the stream ends OK."""
    a, b, o = player("fa"), player("fb"), player("fo")
    gid = start_game(a, [b], public=True)
    a.call("Pass", game_id=gid, expected_seq=0)
    b.call("Resign", game_id=gid, expected_seq=1)
    evs, err = drain(o.watch(gid))
    assert err is None, err
    assert [e.type for e in evs] == [ET.EVENT_TYPE_WATCHED_MOVE] * 2 + [ET.EVENT_TYPE_GAME_OVER]
    assert evs[1].move.kind == ET.MOVE_KIND_RESIGN
    over = evs[2]
    assert over.end_reason == ET.END_REASON_RESIGN and list(over.winners) == [0]
    assert all(len(s.final_rack) == 7 for s in over.seats), over.seats


def test_resume_after_gateway_restart():
    """The gateway holding an observer's stream restarts while the game
    goes on: the stream ends UNAVAILABLE shutting_down; a Watch with
    after_seq = the last seq seen gets exactly the moves missed, then live
    moves, none twice."""
    a, b, o = player("ra"), player("rb"), player("ro", GW2)
    gid = start_game(a, [b], public=True)
    w = o.watch(gid)
    a.call("Pass", game_id=gid, expected_seq=0)
    last = w.next(want=ET.EVENT_TYPE_WATCHED_MOVE).seq
    assert last == 1
    restart_gateway2()
    evs, err = drain(w)
    assert not evs and err.code == S.UNAVAILABLE and err.reason == "shutting_down", (evs, err)
    b.call("Pass", game_id=gid, expected_seq=1)
    st = a.call("GetState", game_id=gid)
    a.call("Exchange", game_id=gid, expected_seq=2, tiles=st.my_rack[:1])
    o2 = ec.Edge(GW2, token=o.token)
    w = o2.watch(gid, after_seq=last)
    got = [w.next(want=ET.EVENT_TYPE_WATCHED_MOVE) for _ in range(2)]
    assert [e.seq for e in got] == [2, 3], got
    assert got[1].move.kind == ET.MOVE_KIND_EXCHANGE and not got[1].move.exchanged_tiles
    b.call("Pass", game_id=gid, expected_seq=3)
    ev = w.next(want=ET.EVENT_TYPE_WATCHED_MOVE)
    assert ev.seq == 4, ev
    w.cancel()


def bench_fanout():
    """Figures, no assertion on time: one public game watched by
    WATCH_BENCH_OBSERVERS observers (default 200) on gateway 1, each on its
    own connection; the players make WATCH_BENCH_MOVES moves (default 20).
    Prints, per move, the time from the mover's reply to the last observer
    holding the move (p50, p99, max), the game-svc reads the gateway made
    per move (the fan-out: 1 whatever the observer count) and the
    gateway's CPU per move (from /proc)."""
    import threading
    import time
    n = int(os.environ.get("WATCH_BENCH_OBSERVERS", "200"))
    moves = int(os.environ.get("WATCH_BENCH_MOVES", "20"))
    a, b = player("xa"), player("xb")
    gid = start_game(a, [b], public=True)
    observers = [player("xo%d_" % i) for i in range(n)]
    seen = {}  # seq -> times each observer received it
    lock = threading.Lock()
    streams = [o.watch(gid) for o in observers]

    def reader(w):
        while True:
            ev = w.events.get()
            if ev is None:
                return
            if ev.type == ET.EVENT_TYPE_WATCHED_MOVE:
                with lock:
                    seen.setdefault(ev.seq, []).append(time.monotonic())
    threads = [threading.Thread(target=reader, args=(w,), daemon=True) for w in streams]
    for t in threads:
        t.start()
    clk = os.sysconf("SC_CLK_TCK")

    def cpu():
        f = open(f"/proc/{os.environ['GW1_PID']}/stat").read().split(") ")[1].split()
        return (int(f[11]) + int(f[12])) / clk
    reads0, cpu0 = ec.metric(M1, "gateway_watch_reads_total"), cpu()
    lat, players = [], [a, b]
    for _ in range(moves):
        st = a.call("GetState", game_id=gid)
        if st.status == ET.GAME_STATUS_FINISHED:
            break
        me = players[st.to_move]
        st = me.call("GetState", game_id=gid)
        found = ec.solver_moves(SOLVER, LEXICON, st, 1)
        if found:
            me.call("SubmitPlay", game_id=gid, expected_seq=st.seq, placements=found[0][1])
        else:
            me.call("Exchange", game_id=gid, expected_seq=st.seq, tiles=st.my_rack[:1])
        t0 = time.monotonic()
        seq = st.seq + 1
        ec.poll(f"move {seq} at every observer", lambda: len(seen.get(seq, ())) >= n, timeout=60)
        with lock:
            lat.append(max(seen[seq]) - t0)
    done = len(lat)
    reads, used = ec.metric(M1, "gateway_watch_reads_total") - reads0, cpu() - cpu0
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    print(f"bench_fanout: {n} observers, {done} moves: reply -> last observer p50 {pct(0.5):.1f} ms, "
          f"p99 {pct(0.99):.1f} ms, max {lat[-1] * 1000:.1f} ms; game-svc reads per move "
          f"{reads / done:.2f}; gateway CPU per move {used / done * 1000:.1f} ms "
          f"({used / done / n * 1e6:.0f} us per observer-event)")
    for w in streams:
        w.cancel()


if __name__ == "__main__":
    ec.run_tests([test_observer_vs_player_stream, test_watch_racks_hidden_during_play,
                  test_private_game_refused, test_observer_turn_refused, test_observer_bounds,
                  test_public_list_paging, test_watch_finished_game,
                  test_resume_after_gateway_restart], benches=[bench_fanout])

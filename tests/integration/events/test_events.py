#!/usr/bin/python3
"""The durable event log through the public API (scrabble.v1.Edge), on the
real binaries, with a python3-grpcio client. Run by test_events.sh, which
passes in the environment: GW1_PORT, GW1_METRICS, GW2_PORT, GW2_METRICS,
STACK_TMP (gateway-1.cmd / gateway-1.pid: its command line and pid),
PG_CONNINFO, REDIS_SH, REDIS_DIR, REDIS_PORT.

Players subscribe through gateway 1 and play through gateway 2, so gateway 1
can be restarted while the game goes on. Every wait is a bounded poll for a
state (a port answering, a row, a metric, an event), never a fixed sleep.
"""
import os
import random
import subprocess
import sys
import threading
import time
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import Edge, common_pb2, poll  # noqa: E402

GW1 = "127.0.0.1:" + os.environ["GW1_PORT"]
GW2 = "127.0.0.1:" + os.environ["GW2_PORT"]
M1 = int(os.environ["GW1_METRICS"])
TMP = os.environ["STACK_TMP"]
PG = os.environ["PG_CONNINFO"]
ET = common_pb2
S = grpc.StatusCode


# ---- helpers ----------------------------------------------------------------

def psql(sql):
    p = subprocess.run(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def log_ids(account_id, after=0):
    """The account's event ids in the log after `after`, in order."""
    out = psql(f"SELECT id FROM events WHERE account_id = {account_id} AND id > {after} ORDER BY id")
    return [int(x) for x in out.split()] if out else []


class Player:
    """One account with a connection to each gateway."""

    def __init__(self, prefix):
        self.handle = f"{prefix}{uuid.uuid4().hex[:8]}"
        self.play = Edge(GW2)
        r = self.play.call("Register", handle=self.handle, password="correct horse battery")
        self.play.token, self.account_id = r.token, r.account_id
        self.sub_edge = Edge(GW1)
        self.sub_edge.token = r.token

    def subscribe(self, after=""):
        return self.sub_edge.subscribe(after_event_id=after)


def start_game(a, b, sb):
    inv = a.play.call("Invite", invitee_handles=[b.handle])
    assert sb.next(want=ET.EVENT_TYPE_INVITATION).invitation.invitation_id == inv.invitation_id
    r = b.play.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.game_id > 0, r
    sb.next(want=ET.EVENT_TYPE_GAME_STARTED)
    return r.game_id


def ended(sub):
    """The status that ended a stream (waits for it)."""
    while True:
        ev = sub.events.get(timeout=30)
        if ev is None:
            return sub.error


def restart_gateway1():
    """SIGTERM gateway 1, wait for it to go, start it again (same flags and
    port); returns once it answers."""
    ec.restart_process(TMP, "gateway-1", int(os.environ["GW1_PORT"]), M1)


def redis(cmd):
    args = [os.environ["REDIS_SH"], cmd, os.environ["REDIS_DIR"]]
    if cmd == "start":
        args.append(os.environ["REDIS_PORT"])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def ids_of(events):
    return [int(e.event_id) for e in events]


# ---- tests ------------------------------------------------------------------

def test_resume_after_gateway_restart():
    """The gateway holding B's stream restarts while the game goes on: the
    stream ends UNAVAILABLE shutting_down, and a resume with the last id
    gets exactly the events missed, then live ones, nothing twice."""
    a, b = Player("ra"), Player("rb")
    sb = b.subscribe()
    gid = start_game(a, b, sb)
    last = log_ids(b.account_id)[-1]
    restart = threading.Thread(target=restart_gateway1)
    restart.start()
    err = ended(sb)
    assert err.code == S.UNAVAILABLE and err.reason == "shutting_down", err
    # The game goes on through gateway 2 while gateway 1 is away.
    a.play.call("Pass", game_id=gid, expected_seq=0)
    b.play.call("Pass", game_id=gid, expected_seq=1)
    a.play.call("Pass", game_id=gid, expected_seq=2)
    restart.join(timeout=60)
    assert not restart.is_alive()
    missed = log_ids(b.account_id, last)
    assert len(missed) == 4, missed  # OPPONENT_MOVED + YOUR_TURN, twice
    sb2 = b.subscribe(after=str(last))
    got = [sb2.next() for _ in missed]
    assert ids_of(got) == missed, (ids_of(got), missed)
    assert [(e.type, e.seq) for e in got] == [
        (ET.EVENT_TYPE_OPPONENT_MOVED, 1), (ET.EVENT_TYPE_YOUR_TURN, 1),
        (ET.EVENT_TYPE_OPPONENT_MOVED, 3), (ET.EVENT_TYPE_YOUR_TURN, 3)], got
    # Then live, starting right after the boundary.
    b.play.call("Pass", game_id=gid, expected_seq=3)
    a.play.call("Pass", game_id=gid, expected_seq=4)
    ev = sb2.next()
    assert ev.type == ET.EVENT_TYPE_OPPONENT_MOVED and ev.seq == 5, ev
    assert int(ev.event_id) == log_ids(b.account_id, missed[-1])[0], ev
    sb2.cancel()


def test_resume_races_live_events():
    """Chat lines keep arriving while B drops and resumes its stream again
    and again at arbitrary points: what B collects is the log, in order,
    with no gap and no repeat. (18 lines: the stack keeps 20 events per
    account, and a resume point must stay in the window.)"""
    a, b = Player("sa"), Player("sb")
    sb = b.subscribe()
    gid = start_game(a, b, sb)
    first = log_ids(b.account_id)[-1]
    n = 18
    done = threading.Event()

    def chatter():
        for i in range(n):
            a.play.call("SendChat", game_id=gid, text=f"line {i}")
        done.set()

    got = []
    sb.cancel()
    sub = b.subscribe(after=str(first))
    t = threading.Thread(target=chatter)
    t.start()
    rng = random.Random(14)
    while len(got) < n:
        # Take a few events, then drop the stream and resume from the last.
        for _ in range(rng.randint(1, 4)):
            if len(got) == n:
                break
            ev = sub.next(timeout=30)
            assert ev.type == ET.EVENT_TYPE_CHAT, ev
            got.append(ev)
        sub.cancel()
        sub = b.subscribe(after=got[-1].event_id if got else str(first))
    t.join(timeout=60)
    assert done.is_set()
    want = log_ids(b.account_id, first)
    assert ids_of(got) == want, (ids_of(got)[:10], want[:10])
    assert [e.chat.text for e in got] == [f"line {i}" for i in range(n)]
    assert all(e.chat.message_id > 0 and e.chat.at_ms > 0 for e in got), got[0]
    sub.cancel()


def test_redis_outage():
    """Redis stops while B's stream is open and moves are made: the moves
    work, and once Redis is back B's stream (still open) gets every event,
    in order."""
    a, b = Player("oa"), Player("ob")
    sb = b.subscribe()
    gid = start_game(a, b, sb)
    last = log_ids(b.account_id)[-1]
    catch0 = ec.metric(M1, "gateway_event_catch_ups_total") or 0
    redis("stop")
    try:
        a.play.call("Pass", game_id=gid, expected_seq=0)
        b.play.call("Pass", game_id=gid, expected_seq=1)
        a.play.call("Pass", game_id=gid, expected_seq=2)
        a.play.call("SendChat", game_id=gid, text="during the outage")
    finally:
        redis("start")
    want = log_ids(b.account_id, last)
    assert len(want) == 5, want
    got = [sb.next(timeout=60) for _ in want]
    assert ids_of(got) == want, (ids_of(got), want)
    assert [e.type for e in got] == [ET.EVENT_TYPE_OPPONENT_MOVED, ET.EVENT_TYPE_YOUR_TURN,
                                     ET.EVENT_TYPE_OPPONENT_MOVED, ET.EVENT_TYPE_YOUR_TURN,
                                     ET.EVENT_TYPE_CHAT], got
    # The gateway caught its streams up from the log when it resubscribed.
    ec.wait_metric(M1, "gateway_event_catch_ups_total", lambda v: v > catch0, timeout=30)
    # And live delivery works again.
    b.play.call("Pass", game_id=gid, expected_seq=3)
    a.play.call("Pass", game_id=gid, expected_seq=4)
    ev = sb.next(want=ET.EVENT_TYPE_OPPONENT_MOVED)
    assert ev.seq == 5, ev
    sb.cancel()


def test_out_of_window():
    """A resume from an id the log no longer keeps (the stack keeps 20
    events per account) gets OUT_OF_RANGE events_expired; a malformed or
    never-issued id gets INVALID_ARGUMENT bad_event_id; a resume from the
    window's edge gets what is kept."""
    a, c = Player("wa"), Player("wc")
    sc = c.subscribe()
    gid = start_game(a, c, sc)
    oldest = log_ids(c.account_id)[0]
    for i in range(30):
        a.play.call("SendChat", game_id=gid, text=f"flood {i}")
    # The prune runs on a period: one pass may land inside the flood, so wait
    # for a pass after it (the log back within the window), not just any.
    poll("the prune to pass over C's whole log", lambda: psql(
        f"SELECT pruned_upto FROM event_horizon WHERE account_id = {c.account_id}")
        and len(log_ids(c.account_id)) <= 20 + 2)
    horizon = int(psql(f"SELECT pruned_upto FROM event_horizon WHERE account_id = {c.account_id}"))
    kept = log_ids(c.account_id)
    assert len(kept) <= 20 + 2 and kept[0] > horizon >= oldest, (len(kept), horizon)
    err = ended(c.subscribe(after=str(oldest)))
    assert err.code == S.OUT_OF_RANGE and err.reason == "events_expired", err
    for bad in ("abc", "-1", "12345678901234567890", "1e9", " 1"):
        err = ended(c.subscribe(after=bad))
        assert err.code == S.INVALID_ARGUMENT and err.reason == "bad_event_id", (bad, err)
    future = int(psql("SELECT max(id) FROM events")) + 1000
    err = ended(c.subscribe(after=str(future)))
    assert err.code == S.INVALID_ARGUMENT and err.reason == "bad_event_id", err
    s = c.subscribe(after=str(horizon))
    got = [s.next() for _ in kept]
    assert ids_of(got) == kept
    s.cancel()
    sc.cancel()


TESTS = [test_resume_after_gateway_restart, test_resume_races_live_events, test_redis_outage,
         test_out_of_window]


if __name__ == "__main__":
    ec.run_tests(TESTS)

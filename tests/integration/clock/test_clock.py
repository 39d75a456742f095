#!/usr/bin/python3
"""Time controls through the public API (docs/API.md, Time controls).

Run by test_clock.sh: two gateways (GATEWAYS), two game-svc instances
(GAME_PORTS, GAME_METRICS, restartable from $STACK_TMP/game-svc-<i>.cmd and
.pid), game-svc's clock moved by writing ms into CLOCK_OFFSET_FILE (each
instance re-reads it every 100 ms), invitations expiring after 6 s.

Nothing waits a fixed time for a thing to happen: every wait is a bounded
poll for a state or an event. The real-time game uses a real 2-second
clock; every longer time is the offset moving forward.
"""
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2 as ET  # noqa: E402

GATEWAYS = os.environ["GATEWAYS"].split(",")
GW_METRICS = [int(p) for p in os.environ["GW_METRICS"].split(",")]
GAME_PORTS = [int(p) for p in os.environ["GAME_PORTS"].split(",")]
GAME_METRICS = [int(p) for p in os.environ["GAME_METRICS"].split(",")]
OFFSET_FILE = os.environ["CLOCK_OFFSET_FILE"]
TMP = os.environ["STACK_TMP"]
S = grpc.StatusCode
HOUR = 3600 * 1000
DAY = 24 * HOUR

TC = ET.TimeControl
UNTIMED = TC(kind=ET.TIME_CONTROL_KIND_UNTIMED)


def corr(days):
    return TC(kind=ET.TIME_CONTROL_KIND_CORRESPONDENCE, days_per_move=days)


def realtime(initial, increment=0, overtime=0):
    return TC(kind=ET.TIME_CONTROL_KIND_REALTIME, initial_seconds=initial,
              increment_seconds=increment, max_overtime_minutes=overtime)


# ---- helpers ----------------------------------------------------------------

def until(what, cond, timeout=30):
    """cond() until it returns something true (returned), at most timeout s."""
    end = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def refused(code, reason, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except CallError as e:
        assert (e.code, e.reason) == (code, reason), \
            f"want {code.name} {reason}, got {e.code.name} {e.reason}: {e.details}"
        return
    raise AssertionError(f"want {code.name} {reason}, the call succeeded")


class Player:
    """An account with a connection to one gateway and a live Subscribe."""

    def __init__(self, gw=0):
        self.handle = f"ck{uuid.uuid4().hex[:10]}"
        self.edge = Edge(GATEWAYS[gw % len(GATEWAYS)])
        r = self.edge.call("Register", handle=self.handle, password="correct horse battery")
        self.edge.token, self.id = r.token, r.account_id
        self.gw = gw % len(GATEWAYS)
        base = ec.metric(GW_METRICS[self.gw], "gateway_subscribers") or 0
        self.sub = self.edge.subscribe()
        ec.wait_metric(GW_METRICS[self.gw], "gateway_subscribers", lambda v: v >= base + 1)

    def call(self, method, **kw):
        return self.edge.call(method, **kw)

    def event(self, kind, game_id=None, timeout=30):
        while True:
            ev = self.sub.next(timeout=timeout, want=kind)
            if game_id is None or ev.game_id == game_id:
                return ev


def offset():
    with open(OFFSET_FILE) as f:
        return int(f.read().split()[0])


def offset_seen(port, want):
    try:
        return ec.metric(port, "game_clock_offset_seconds") == want // 1000
    except OSError:  # an instance (re)starting
        return False


def advance(ms, wait=True):
    """Moves every game-svc's clock forward by ms: they re-read the file at
    each poll (and show it in game_clock_offset_seconds); the next poll claims
    what became due. wait: until every instance runs on the new clock."""
    new = offset() + ms
    tmp = OFFSET_FILE + ".new"
    with open(tmp, "w") as f:
        f.write(f"{new}\n")
    os.replace(tmp, OFFSET_FILE)
    if wait:
        for p in GAME_METRICS:
            until(f"offset {new} on :{p}", lambda: offset_seen(p, new))


def start_game(a, b, tc):
    inv = a.call("Invite", invitee_handles=[b.handle], time_control=tc)
    assert inv.time_control == (tc or UNTIMED), inv
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    for p in (a, b):
        p.event(ET.EVENT_TYPE_GAME_STARTED, r.game_id)
    return r.game_id


def timeouts_fired():
    return sum(ec.metric(p, "game_timeouts_total") or 0 for p in GAME_METRICS)


def game_restart_all():
    """SIGKILLs every game-svc, waits until they are gone, starts them again
    with the same command lines (same ports: the gateways reconnect)."""
    pids = []
    for i in range(len(GAME_PORTS)):
        with open(f"{TMP}/game-svc-{i}.pid") as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGKILL)
        pids.append(pid)
    for pid in pids:
        until(f"pid {pid} gone", lambda: not os.path.exists(f"/proc/{pid}") or
              open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z")
    return pids


def game_start_all():
    for i, port in enumerate(GAME_PORTS):
        with open(f"{TMP}/game-svc-{i}.cmd") as f:
            cmd = f.read().splitlines()
        log = open(f"{TMP}/game-svc-{i}-restarted.log", "ab")
        p = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
        with open(f"{TMP}/game-svc-{i}.pid", "w") as f:
            f.write(str(p.pid))
        until(f"game-svc-{i} listening", lambda: _connects(port))


def _connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def retry_unavailable(fn, *a, **kw):
    end = time.time() + 30
    while True:
        try:
            return fn(*a, **kw)
        except CallError as e:
            if e.code not in (S.UNAVAILABLE, S.DEADLINE_EXCEEDED) or time.time() > end:
                raise
            time.sleep(0.2)


# ---- tests ------------------------------------------------------------------

def test_bad_time_controls():
    """Out-of-range time controls: INVALID_ARGUMENT bad_time_control, and
    nothing is created (the invitee sees no invitation)."""
    a, b = Player(0), Player(1)
    bad = [corr(0), corr(15), realtime(0), realtime(10801), realtime(60, increment=61),
           realtime(60, overtime=11), TC(kind=ET.TIME_CONTROL_KIND_UNTIMED, days_per_move=3),
           TC(kind=ET.TIME_CONTROL_KIND_CORRESPONDENCE, days_per_move=2, initial_seconds=5),
           TC(kind=ET.TIME_CONTROL_KIND_REALTIME, initial_seconds=60, days_per_move=1),
           TC(kind=9)]
    for tc in bad:
        refused(S.INVALID_ARGUMENT, "bad_time_control", a.call, "Invite",
                invitee_handles=[b.handle], time_control=tc)
    assert len(b.call("ListInvitations").invitations) == 0
    # The edges of the ranges are accepted; no time control is untimed.
    for tc in (corr(1), corr(14), realtime(1), realtime(10800, 60, 10), None):
        inv = a.call("Invite", invitee_handles=[b.handle], time_control=tc)
        want = tc or UNTIMED
        assert inv.time_control == want and inv.expires_at_ms > inv.created_at_ms, inv
    assert len(b.call("ListInvitations").invitations) == 5


def test_cancel_invitation():
    a, b, c = Player(0), Player(1), Player(0)
    inv = a.call("Invite", invitee_handles=[b.handle, c.handle], time_control=corr(3))
    b.event(ET.EVENT_TYPE_INVITATION)
    # Someone else's invitation: an invitee, or a stranger.
    refused(S.PERMISSION_DENIED, "not_inviter", b.call, "CancelInvitation",
            invitation_id=inv.invitation_id)
    stranger = Player(1)
    refused(S.PERMISSION_DENIED, "not_inviter", stranger.call, "CancelInvitation",
            invitation_id=inv.invitation_id)
    refused(S.NOT_FOUND, "not_found", a.call, "CancelInvitation", invitation_id=inv.invitation_id + 10**9)
    refused(S.INVALID_ARGUMENT, "bad_request", a.call, "CancelInvitation", invitation_id=0)
    # ... changed nothing.
    b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    [open_inv] = [i for i in c.call("ListInvitations").invitations if i.invitation_id == inv.invitation_id]
    assert open_inv.status == ET.INVITATION_STATUS_OPEN
    r = a.call("CancelInvitation", invitation_id=inv.invitation_id)
    assert r.status == ET.INVITATION_STATUS_CANCELLED, r
    for p in (b, c):
        ev = p.event(ET.EVENT_TYPE_INVITATION_CANCELLED)
        assert ev.invitation.invitation_id == inv.invitation_id and ev.from_account_id == a.id
        assert ev.event_id, ev  # written to the log before the reply
    # A cancelled invitation is closed: to the last invitee, and to the one
    # who had accepted (even repeating the same answer).
    refused(S.FAILED_PRECONDITION, "invitation_closed", c.call, "RespondInvitation",
            invitation_id=inv.invitation_id, accept=True)
    refused(S.FAILED_PRECONDITION, "invitation_closed", b.call, "RespondInvitation",
            invitation_id=inv.invitation_id, accept=True)
    # Cancelling again is a harmless retry.
    assert a.call("CancelInvitation", invitation_id=inv.invitation_id).status == \
        ET.INVITATION_STATUS_CANCELLED
    assert not [i for i in c.call("ListInvitations").invitations if i.invitation_id == inv.invitation_id]
    # A started invitation cannot be cancelled; accepting it again is a
    # retry that answers with the game.
    gid = start_game(a, b, corr(2))
    [started] = [i for i in a.call("ListGames").games if i.game_id == gid]
    assert started.status == ET.GAME_STATUS_ACTIVE
    inv2 = a.call("Invite", invitee_handles=[b.handle])
    b.call("RespondInvitation", invitation_id=inv2.invitation_id, accept=True)
    again = b.call("RespondInvitation", invitation_id=inv2.invitation_id, accept=True)
    assert again.status == ET.INVITATION_STATUS_STARTED and again.game_id > 0, again
    refused(S.FAILED_PRECONDITION, "invitation_closed", b.call, "RespondInvitation",
            invitation_id=inv2.invitation_id, accept=False)
    refused(S.FAILED_PRECONDITION, "invitation_closed", a.call, "CancelInvitation",
            invitation_id=inv2.invitation_id)


def test_invitation_expires():
    """--invitation-ttl=6s: the invitation expires, every seat gets
    INVITATION_EXPIRED, and it can be neither accepted nor cancelled."""
    a, b = Player(0), Player(1)
    inv = a.call("Invite", invitee_handles=[b.handle], time_control=realtime(60))
    assert 5000 <= inv.expires_at_ms - inv.created_at_ms <= 7000, inv
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_INVITATION_EXPIRED, timeout=60)
        assert ev.invitation.invitation_id == inv.invitation_id
        assert ev.invitation.status == ET.INVITATION_STATUS_EXPIRED, ev
        assert ev.event_id, ev  # from the durable log (AppendEvents by the poller)
    refused(S.FAILED_PRECONDITION, "invitation_closed", b.call, "RespondInvitation",
            invitation_id=inv.invitation_id, accept=True)
    refused(S.FAILED_PRECONDITION, "invitation_closed", a.call, "CancelInvitation",
            invitation_id=inv.invitation_id)
    assert not b.call("ListInvitations").invitations


def test_realtime_flag_falls():
    """A real 2-second clock: seat 0 never moves, its flag falls, GAME_OVER
    timeout; seat 0 loses (0 to 0), and a move after it is game_over."""
    a, b = Player(0), Player(1)
    gid = start_game(a, b, realtime(2))
    st = a.call("GetState", game_id=gid)
    assert st.time_control == realtime(2) and len(st.clock_ms) == 2, st
    if st.status == ET.GAME_STATUS_ACTIVE:  # else the flag fell already (a slow machine)
        assert st.clock_ms[0] <= 2000 and st.clock_ms[1] == 2000 and st.deadline_ms > 0, st
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid)
        assert ev.end_reason == ET.END_REASON_TIMEOUT, ev
        assert list(ev.winners) == [1] and [s.score for s in ev.seats] == [0, 0], ev
        assert ev.from_account_id == a.id, ev
    st = b.call("GetState", game_id=gid)
    assert st.status == ET.GAME_STATUS_FINISHED and st.end_reason == ET.END_REASON_TIMEOUT
    assert st.deadline_ms == 0 and st.clock_ms[0] <= 0, st
    refused(S.FAILED_PRECONDITION, "game_over", a.call, "Pass", game_id=gid, expected_seq=0)
    refused(S.FAILED_PRECONDITION, "game_over", b.call, "Pass", game_id=gid, expected_seq=0)
    assert b.call("GetState", game_id=gid).seq == 0
    [g] = [x for x in b.call("ListGames").games if x.game_id == gid]
    assert g.end_reason == ET.END_REASON_TIMEOUT and list(g.winners) == [1]


def test_realtime_overtime_penalty():
    """60 s + 1 min overtime, time moved by the test: seat 1 moves 10 s into
    overtime (10 points, at the end), seat 0's flag then falls: seat 0 loses,
    each seat loses 10 for its started overtime minute."""
    a, b = Player(1), Player(0)
    gid = start_game(a, b, realtime(60, overtime=1))
    a.call("Pass", game_id=gid, expected_seq=0)
    ev = b.event(ET.EVENT_TYPE_YOUR_TURN, gid)
    assert len(ev.clock_ms) == 2 and ev.deadline_ms > 0, ev
    advance(70 * 1000)
    r = b.call("Pass", game_id=gid, expected_seq=1)
    assert r.state.time_control == realtime(60, overtime=1) and not r.state.clock_ms, r.state
    st = b.call("GetState", game_id=gid)
    assert st.status == ET.GAME_STATUS_ACTIVE and st.clock_ms[1] < 0, st
    advance(200 * 1000)
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid)
        assert ev.end_reason == ET.END_REASON_TIMEOUT and list(ev.winners) == [1], ev
        assert list(ev.overtime_penalties) == [10, 10], ev
        assert [s.score for s in ev.seats] == [-10, -10], ev
    st = a.call("GetState", game_id=gid)
    assert [s.score for s in st.seats] == [-10, -10] and list(st.winners) == [1], st


def test_correspondence_deadline():
    """1 day per move: seat 0 passes; seat 1 gets TIME_WARNING 12 h before
    its deadline, then GAME_OVER timeout; seat 1's move after it and a
    repeat are refused and change nothing."""
    a, b = Player(0), Player(1)
    gid = start_game(a, b, corr(1))
    st = a.call("GetState", game_id=gid)
    assert st.clock_ms == [] and st.deadline_ms > 0, st
    a.call("Pass", game_id=gid, expected_seq=0)
    turn = b.event(ET.EVENT_TYPE_YOUR_TURN, gid)
    assert turn.deadline_ms > st.deadline_ms, (turn, st)
    advance(13 * HOUR)
    warn = b.event(ET.EVENT_TYPE_TIME_WARNING, gid)
    assert warn.deadline_ms == turn.deadline_ms and warn.seq == 1, warn
    assert warn.event_id, warn
    assert b.call("GetState", game_id=gid).status == ET.GAME_STATUS_ACTIVE
    advance(12 * HOUR)
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid)
        assert ev.end_reason == ET.END_REASON_TIMEOUT and list(ev.winners) == [0], ev
        assert ev.from_account_id == b.id, ev
    refused(S.FAILED_PRECONDITION, "game_over", b.call, "Pass", game_id=gid, expected_seq=1)
    refused(S.FAILED_PRECONDITION, "game_over", b.call, "Resign", game_id=gid, expected_seq=1)
    st = b.call("GetState", game_id=gid)
    assert st.status == ET.GAME_STATUS_FINISHED and st.seq == 1 and st.deadline_ms == 0, st


def test_restart_keeps_deadline():
    """Every game-svc killed with a deadline pending; the time passes while
    they are down; started again, they end the game from the store alone."""
    a, b = Player(0), Player(1)
    gid = start_game(a, b, corr(2))
    game_restart_all()
    advance(3 * DAY, wait=False)  # read by the instances as they start
    game_start_all()
    for p in GAME_METRICS:
        until("the restarted instances on the new clock", lambda: offset_seen(p, offset()))
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid, timeout=60)
        assert ev.end_reason == ET.END_REASON_TIMEOUT and list(ev.winners) == [1], ev
    st = retry_unavailable(a.call, "GetState", game_id=gid)
    assert st.status == ET.GAME_STATUS_FINISHED and st.end_reason == ET.END_REASON_TIMEOUT


def test_each_deadline_fires_once():
    """Games on both instances, players on both gateways, all deadlines due
    at once: every game ends exactly once (both pollers claim; the store
    hands each deadline to one, and TimeoutGame commits only once)."""
    before = timeouts_fired()
    pairs, gids = [], []
    for i in range(8):
        a, b = Player(i), Player(i + 1)
        gids.append(start_game(a, b, corr(1)))
        pairs.append((a, b))
    advance(DAY + HOUR)
    for (a, b), gid in zip(pairs, gids):
        for p in (a, b):
            assert p.event(ET.EVENT_TYPE_GAME_OVER, gid).end_reason == ET.END_REASON_TIMEOUT
    until("every timeout counted", lambda: timeouts_fired() >= before + len(gids))
    # One more poll round of both instances: nothing is fired twice.
    polls = [ec.metric(p, "game_store_calls_total") for p in GAME_METRICS]
    until("a later poll on both", lambda: all(
        ec.metric(p, "game_store_calls_total") > n + 1 for p, n in zip(GAME_METRICS, polls)))
    assert timeouts_fired() == before + len(gids), (timeouts_fired(), before, len(gids))
    for (a, b), gid in zip(pairs, gids):
        for p in (a, b):
            again = [e for e in list(p.sub.events.queue)
                     if e.type == ET.EVENT_TYPE_GAME_OVER and e.game_id == gid]
            assert not again, again


def test_abandoned_untimed():
    """An untimed game has no clock but ends when its seat to move stays
    away past --abandon-after (30 days): END_REASON_ABANDONED."""
    a, b = Player(1), Player(0)
    gid = start_game(a, b, None)
    st = a.call("GetState", game_id=gid)
    assert st.time_control == UNTIMED and st.clock_ms == [], st
    assert st.deadline_ms >= 29 * DAY + time.time() * 1000 + offset(), st
    a.call("Pass", game_id=gid, expected_seq=0)
    advance(30 * DAY + HOUR)
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid)
        assert ev.end_reason == ET.END_REASON_ABANDONED and list(ev.winners) == [0], ev


def test_rated_realtime_game():
    """Time control and `rated` together: the invitation and the game carry
    both, the timeout's GAME_OVER comes from the event log (it rides in
    TimeoutGame's transaction), and the game is rated in the realtime
    family (ratings_family_of_game reads the game's time_family)."""
    a, b = Player(0), Player(1)
    inv = a.call("Invite", invitee_handles=[b.handle], time_control=realtime(60), rated=True)
    assert inv.time_control == realtime(60) and inv.rated and inv.expires_at_ms > 0, inv
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.rated and r.time_control == realtime(60), r
    gid = r.game_id
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_STARTED, gid)
        assert ev.event_id and len(ev.clock_ms) == 2, ev
    st = a.call("GetState", game_id=gid)
    assert st.rated and st.time_control == realtime(60), st
    advance(120 * 1000)
    for p in (a, b):
        ev = p.event(ET.EVENT_TYPE_GAME_OVER, gid)
        assert ev.end_reason == ET.END_REASON_TIMEOUT and list(ev.winners) == [1], ev
        assert ev.event_id, ev
    # Rated in the finishing transaction, which the event followed.
    for p in (a, b):
        fam = {(x.lexicon, x.family) for x in p.call("GetStats", account_id=p.id).ratings}
        assert ("wamerican", "realtime") in fam and len(fam) == 1, fam


TESTS = [test_bad_time_controls, test_cancel_invitation, test_invitation_expires,
         test_realtime_flag_falls, test_realtime_overtime_penalty, test_correspondence_deadline,
         test_restart_keeps_deadline, test_each_deadline_fires_once, test_abandoned_untimed,
         test_rated_realtime_game]


def main():
    want = set(sys.argv[1:])
    results = {True: 0, False: 0}
    for t in TESTS:
        if want and t.__name__ not in want:
            continue
        t0 = time.time()
        try:
            t()
            ok = True
        except Exception:
            ok = False
            traceback.print_exc()
        results[ok] += 1
        print(f"{'ok  ' if ok else 'FAIL'} {t.__name__} ({time.time() - t0:.1f}s)", flush=True)
    print(f"{results[True]} passed, {results[False]} failed", flush=True)
    sys.exit(1 if results[False] else 0)


if __name__ == "__main__":
    main()

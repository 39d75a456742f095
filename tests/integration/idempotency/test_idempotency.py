#!/usr/bin/python3
"""Idempotent retries through the public API (scrabble.v1.Edge), on the
real binaries. Run by test_idempotency.sh, which passes in the environment:
GATEWAY_PORT, GATEWAY_METRICS_PORT, GAME_PORT, GAME_CMD_FILE (game-svc's
command line, one argument a line), GAME_PID_FILE, GAME_LOG, PG_CONNINFO,
SOLVER, LEXICON.

Nothing here waits a fixed time for something to happen: every wait is a
bounded poll for a state (a port answering, a row committed, a backend
waiting on a lock, an event arriving).
"""
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2, expect_error, poll  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
GAME_PORT = int(os.environ["GAME_PORT"])
PG = os.environ["PG_CONNINFO"]
SOLVER, LEXICON = os.environ["SOLVER"], os.environ["LEXICON"]
ET = common_pb2
S = grpc.StatusCode


# ---- helpers ----------------------------------------------------------------

def open_subs(*edges):
    base = ec.metric(MPORT, "gateway_subscribers") or 0
    subs = [e.subscribe() for e in edges]
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= base + len(edges))
    return subs


def start_game(a, b):
    sa, sb = open_subs(a, b)
    inv = a.call("Invite", invitee_handles=[b.handle])
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    for s in (sa, sb):
        s.next(want=ET.EVENT_TYPE_GAME_STARTED)
    return r.game_id, sa, sb


def a_play(e, game_id):
    """A legal play for e (whose turn it is): (placements, state before)."""
    st = e.call("GetState", game_id=game_id)
    for _, placements, _ in ec.solver_moves(SOLVER, LEXICON, st, 5):
        if len(placements) >= 2 and e.call("Evaluate", game_id=game_id, placements=placements).legal:
            return placements, st
    raise AssertionError(f"no legal play of 2+ tiles for rack {st.my_rack}")


def retry_unavailable(fn, *a, **kw):
    """fn until it stops answering UNAVAILABLE (a restarting game-svc), at
    most 30 s; what a client with a backoff policy does."""
    deadline = time.time() + 30
    while True:
        try:
            return fn(*a, **kw)
        except CallError as e:
            if e.code not in (S.UNAVAILABLE, S.DEADLINE_EXCEEDED) or time.time() > deadline:
                raise
            time.sleep(0.2)


def game_pid():
    with open(os.environ["GAME_PID_FILE"]) as f:
        return int(f.read())


def game_restart(sig=signal.SIGKILL):
    """Kills game-svc with sig, waits for it to go, starts it again with the
    same command line (same port, so the gateway reconnects to it)."""
    pid = game_pid()
    os.kill(pid, sig)
    if sig == signal.SIGKILL:
        os.kill(pid, signal.SIGCONT)  # a stopped process dies only once continued
    deadline = time.time() + 30
    while os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split(") ")[1][0] != "Z":
        assert time.time() < deadline, "game-svc did not exit"
        time.sleep(0.05)
    with open(os.environ["GAME_CMD_FILE"]) as f:
        cmd = f.read().splitlines()
    log = open(os.environ["GAME_LOG"], "ab")
    p = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    with open(os.environ["GAME_PID_FILE"], "w") as f:
        f.write(str(p.pid))
    # Listening is enough: the calls that follow retry while it warms up.
    poll("game-svc listening", lambda: _connects("127.0.0.1", GAME_PORT))


def _connects(host, port):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return True
    except OSError:
        return False


def psql(sql):
    p = subprocess.run(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def same_reply(got, want, what):
    assert got == want, f"{what}: the repeat's reply differs\n--- original\n{want}\n--- repeat\n{got}"


# ---- turns ------------------------------------------------------------------

def test_turn_repeat_after_opponent_moved():
    """A's play at seq 0, B passes (seq 2), A repeats its play: the original
    reply (move and state right after it), placements in any order or case;
    other content at seq 0 is stale_seq; nothing is applied twice."""
    a, b = new_player("ia"), new_player("ib")
    gid, sa, sb = start_game(a, b)
    placements, st = a_play(a, gid)
    r1 = a.call("SubmitPlay", game_id=gid, expected_seq=0, placements=placements)
    assert r1.move.seq == 1 and r1.state.seq == 1
    sb.next(want=ET.EVENT_TYPE_YOUR_TURN)
    rb = b.call("Pass", game_id=gid, expected_seq=1)
    assert rb.move.seq == 2

    same_reply(a.call("SubmitPlay", game_id=gid, expected_seq=0, placements=placements), r1, "play")
    shuffled = list(placements)
    random.Random(7).shuffle(shuffled)
    shuffled.reverse()
    lower = [common_pb2.Placement(row=p.row, col=p.col, letter=p.letter.lower(), blank=p.blank)
             for p in shuffled]
    same_reply(a.call("SubmitPlay", game_id=gid, expected_seq=0, placements=lower), r1, "reordered play")
    # B's repeat of its pass, now that it is A's turn again.
    same_reply(b.call("Pass", game_id=gid, expected_seq=1), rb, "pass")

    # Same seq, other content: stale_seq, whatever the difference.
    expect_error(S.FAILED_PRECONDITION, "stale_seq", a.call, "SubmitPlay", game_id=gid,
                 expected_seq=0, placements=placements[:-1])
    expect_error(S.FAILED_PRECONDITION, "stale_seq", a.call, "SubmitPlay", game_id=gid,
                 expected_seq=0, placements=[placements[0]] * len(placements))
    expect_error(S.FAILED_PRECONDITION, "stale_seq", a.call, "Pass", game_id=gid, expected_seq=0)
    expect_error(S.FAILED_PRECONDITION, "stale_seq", b.call, "SubmitPlay", game_id=gid,
                 expected_seq=0, placements=placements)
    expect_error(S.FAILED_PRECONDITION, "stale_seq", a.call, "Pass", game_id=gid, expected_seq=1)
    hist = a.call("GetHistory", game_id=gid, since_seq=0)
    assert [m.seq for m in hist.moves] == [1, 2], hist


def test_turn_repeat_after_game_over_and_restart():
    """Exchange, pass, resign; then the game is over and game-svc restarts
    (cold reload from the store): every repeat still gets its original
    reply; a different request at a taken seq is stale_seq, one at the
    final seq is game_over."""
    a, b = new_player("ja"), new_player("jb")
    gid, sa, sb = start_game(a, b)
    st = a.call("GetState", game_id=gid)
    tiles = st.my_rack[:3]
    r1 = a.call("Exchange", game_id=gid, expected_seq=0, tiles=tiles)
    r2 = b.call("Pass", game_id=gid, expected_seq=1)
    r3 = a.call("Resign", game_id=gid, expected_seq=2)
    assert r3.state.status == ET.GAME_STATUS_FINISHED, r3.state

    def check(when):
        same_reply(retry_unavailable(a.call, "Exchange", game_id=gid, expected_seq=0,
                                     tiles=tiles[::-1]), r1, f"exchange {when}")
        same_reply(b.call("Pass", game_id=gid, expected_seq=1), r2, f"pass {when}")
        same_reply(a.call("Resign", game_id=gid, expected_seq=2), r3, f"resign {when}")
        expect_error(S.FAILED_PRECONDITION, "stale_seq", a.call, "Exchange", game_id=gid,
                     expected_seq=0, tiles=tiles[:2])
        expect_error(S.FAILED_PRECONDITION, "stale_seq", b.call, "Resign", game_id=gid, expected_seq=2)
        expect_error(S.FAILED_PRECONDITION, "game_over", b.call, "Pass", game_id=gid, expected_seq=3)

    check("after game over")
    game_restart(signal.SIGTERM)
    check("after a game-svc restart")


def test_crash_between_commit_and_publish():
    """game-svc is stopped while store-svc waits to commit A's move, the
    commit lands, then game-svc is killed: it never saw the answer. The
    move's events were committed with it (the event log), so B's open
    Subscribe stream receives OPPONENT_MOVED and YOUR_TURN with no retry
    from A; A's retry against the restarted game-svc gets the original
    reply and adds no event."""
    a, b = new_player("ka"), new_player("kb")
    gid, sa, sb = start_game(a, b)
    # Hold the game's row so store-svc's CommitMove waits on it.
    locker = subprocess.Popen(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    locker.stdin.write(f"BEGIN;\nSELECT 'locked' FROM games WHERE id = {gid} FOR UPDATE;\n")
    locker.stdin.flush()
    assert locker.stdout.readline().strip() == "locked"
    first = {}

    def submit():
        try:
            first["reply"] = a.call("Pass", game_id=gid, expected_seq=0, timeout=60)
        except CallError as e:
            first["error"] = e

    t = threading.Thread(target=submit, daemon=True)
    t.start()
    # store-svc is inside CommitMove, waiting for the row: game-svc has sent
    # it and waits for the answer. Stop game-svc there.
    poll("store-svc waiting on the game row", lambda: psql(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND pid <> pg_backend_pid()") not in ("", "0"))
    pid = game_pid()
    os.kill(pid, signal.SIGSTOP)
    locker.stdin.write("COMMIT;\n")
    locker.stdin.close()
    locker.wait(timeout=30)
    poll("the move committed", lambda: psql(f"SELECT seq FROM games WHERE id = {gid}") == "1")
    game_restart(signal.SIGKILL)  # game-svc never saw the commit's answer
    t.join(timeout=90)
    assert not t.is_alive()
    assert "error" in first, f"the first attempt cannot have succeeded: {first}"
    # No retry yet: the events came with the commit.
    moved = sb.next(want=ET.EVENT_TYPE_OPPONENT_MOVED)
    assert moved.game_id == gid and moved.seq == 1 and moved.move.kind == ET.MOVE_KIND_PASS, moved
    turn = sb.next(want=ET.EVENT_TYPE_YOUR_TURN)
    assert turn.game_id == gid and turn.seq == 1 and turn.to_move == 1, turn
    assert int(turn.event_id) > int(moved.event_id), (moved.event_id, turn.event_id)

    r = retry_unavailable(a.call, "Pass", game_id=gid, expected_seq=0)
    assert r.move.seq == 1 and r.move.kind == ET.MOVE_KIND_PASS and r.state.seq == 1, r
    # The retry added nothing to B's log: a resume from before the move
    # replays exactly those two.
    resumed = b.subscribe(after_event_id=str(int(moved.event_id) - 1))
    got = [resumed.next(), resumed.next()]
    assert [e.event_id for e in got] == [moved.event_id, turn.event_id], got
    resumed.cancel()
    # The game goes on from there.
    assert b.call("Pass", game_id=gid, expected_seq=1).move.seq == 2


# ---- SendChat and Invite request ids ---------------------------------------

def test_chat_request_id():
    a, b = new_player("ca"), new_player("cb")
    gid, sa, sb = start_game(a, b)
    rid = str(uuid.uuid4())
    m1 = a.call("SendChat", game_id=gid, text="hello once", request_id=rid)
    m2 = a.call("SendChat", game_id=gid, text="hello once", request_id=rid)
    same_reply(m2, m1, "chat repeat")
    # The id alone names the request: other text still gets the first line.
    same_reply(a.call("SendChat", game_id=gid, text="other", request_id=rid), m1, "chat other text")
    # Ids are per account: B's same id is B's own line.
    mb = b.call("SendChat", game_id=gid, text="hello from b", request_id=rid)
    assert mb.message_id != m1.message_id
    # No id: no deduplication.
    n1 = a.call("SendChat", game_id=gid, text="twice")
    n2 = a.call("SendChat", game_id=gid, text="twice")
    assert n1.message_id != n2.message_id
    lines = a.call("ListChat", game_id=gid, after_id=0).messages
    assert [m.text for m in lines] == ["hello once", "hello from b", "twice", "twice"], lines
    # The repeats add no CHAT event (the log keeps one per line): B gets
    # the first line once, its own line (every seat's streams get every
    # line, the sender's included), then the two lines without an id.
    ids = [sb.next(want=ET.EVENT_TYPE_CHAT).chat.message_id for _ in range(4)]
    assert ids == [m1.message_id, mb.message_id, n1.message_id, n2.message_id], ids
    assert psql(f"SELECT count(*) FROM events WHERE account_id = {b.account_id} "
                f"AND dedupe = 'chat:{m1.message_id}'") == "1"
    for bad in ("x" * 65, "has space", "é", "a/b", "a.b"):
        expect_error(S.INVALID_ARGUMENT, "bad_request_id", a.call, "SendChat", game_id=gid,
                     text="hi", request_id=bad)
    assert a.call("SendChat", game_id=gid, text="max", request_id="A-z_9" + "x" * 59).message_id > 0


def test_invite_request_id():
    a, b, c = new_player("va"), new_player("vb"), new_player("vc")
    (sb,) = open_subs(b)
    rid = uuid.uuid4().hex
    i1 = a.call("Invite", invitee_handles=[b.handle], request_id=rid)
    i2 = a.call("Invite", invitee_handles=[b.handle], request_id=rid)
    same_reply(i2, i1, "invite repeat")
    # The invitee's log holds one INVITATION, whatever the repeats.
    assert sb.next(want=ET.EVENT_TYPE_INVITATION).invitation.invitation_id == i1.invitation_id
    assert psql(f"SELECT count(*) FROM events WHERE account_id = {b.account_id} "
                f"AND dedupe = 'invited:{i1.invitation_id}'") == "1"
    # Other content, same id: still the first invitation.
    assert a.call("Invite", invitee_handles=[c.handle], request_id=rid).invitation_id == i1.invitation_id
    # Separate namespace from chat ids, and per account.
    ib = b.call("Invite", invitee_handles=[a.handle], request_id=rid)
    assert ib.invitation_id != i1.invitation_id
    mine = [i.invitation_id for i in a.call("ListInvitations").invitations if i.inviter_id == a.account_id]
    assert mine == [i1.invitation_id], mine
    # A refused Invite claims nothing: the id still works once it is fixed.
    rid2 = uuid.uuid4().hex
    expect_error(S.NOT_FOUND, "not_found", a.call, "Invite", invitee_handles=["nobody" + rid2[:8]],
                 request_id=rid2)
    assert a.call("Invite", invitee_handles=[c.handle], request_id=rid2).invitation_id > i1.invitation_id
    # Accepting makes the game; the repeat shows the invitation as it is now.
    r = b.call("RespondInvitation", invitation_id=i1.invitation_id, accept=True)
    i3 = a.call("Invite", invitee_handles=[b.handle], request_id=rid)
    assert i3.invitation_id == i1.invitation_id and i3.game_id == r.game_id, i3
    expect_error(S.INVALID_ARGUMENT, "bad_request_id", a.call, "Invite", invitee_handles=[b.handle],
                 request_id="../etc")


# ---- figures (not run by ctest; name it: test_idempotency.sh bench_retry) ----

def bench_retry(moves=24, reps=200):
    """Latency through the gateway of a turn repeat that is answered by
    replaying the game to an older move, against the last move's repeat
    (no replay, events republished) and GetState (a plain read)."""
    a, b = new_player("ba"), new_player("bb")
    gid, sa, sb = start_game(a, b)
    players = {a.account_id: a, b.account_id: b}
    made = []  # (player, method, fields) per seq
    while len(made) < moves:
        st = a.call("GetState", game_id=gid)
        if st.status != ET.GAME_STATUS_ACTIVE:
            break
        e = players[st.seats[st.to_move].account_id]
        st = e.call("GetState", game_id=gid)
        req = ("Pass", dict(game_id=gid, expected_seq=st.seq))
        for _, placements, _ in ec.solver_moves(SOLVER, LEXICON, st, 3):
            if e.call("Evaluate", game_id=gid, placements=placements).legal:
                req = ("SubmitPlay", dict(game_id=gid, expected_seq=st.seq, placements=placements))
                break
        e.call(req[0], **req[1])
        made.append((e, req[0], req[1]))
    n = len(made)

    def timed(label, fn):
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t0) * 1000)
        ts.sort()
        print(f"  {label:<42} p50 {ts[len(ts) // 2]:6.2f} ms  p99 {ts[int(len(ts) * 0.99) - 1]:6.2f} ms",
              flush=True)

    print(f"bench_retry: game of {n} moves, {reps} calls each, one client, through the gateway")
    timed("GetState", lambda: a.call("GetState", game_id=gid))
    for seq in sorted({1, n // 2, n - 1, n}):
        e, method, fields = made[seq - 1]
        what = "last move (republish)" if seq == n else f"replay to move {seq}"
        timed(f"repeat of move {seq}: {what}", lambda: e.call(method, **fields))


BENCHES = [bench_retry]

TESTS = [test_turn_repeat_after_opponent_moved, test_turn_repeat_after_game_over_and_restart,
         test_crash_between_commit_and_publish, test_chat_request_id, test_invite_request_id]


def new_player(prefix):
    return ec.new_player(TARGET, prefix)


def main():
    ec.run_tests(TESTS, BENCHES)


if __name__ == "__main__":
    main()

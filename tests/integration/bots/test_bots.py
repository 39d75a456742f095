#!/usr/bin/python3
"""Bots through the public API (docs/API.md, "Bots").

Run by test_bots.sh: one gateway (GATEWAY), one game-svc (GAME_PORTS,
GAME_METRICS; restartable from $STACK_TMP/game-svc-0.cmd and .pid) polling
bot turns every 50 ms, scrabble-solver (SOLVER, LEXICON) to find the human's
plays.

Nothing waits a fixed time: every wait is a bounded poll for a state.
"""
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, common_pb2 as ET  # noqa: E402

GATEWAY = os.environ["GATEWAY"]
GAME_PORT = int(os.environ["GAME_PORTS"].split(",")[0])
GAME_METRICS = int(os.environ["GAME_METRICS"].split(",")[0])
TMP = os.environ["STACK_TMP"]
SOLVER = os.environ["SOLVER"]
LEXICON = os.environ["LEXICON"]
S = grpc.StatusCode
LEVELS = ["beginner", "club", "expert"]
ACTIVE, FINISHED = ET.GAME_STATUS_ACTIVE, ET.GAME_STATUS_FINISHED


def retry_unavailable(fn, *a, **kw):
    """fn, retried while game-svc is (re)starting behind the gateway."""
    end = time.time() + 60
    while True:
        try:
            return fn(*a, **kw)
        except CallError as e:
            if e.code != S.UNAVAILABLE or time.time() > end:
                raise
            time.sleep(0.1)


def state(p, game_id):
    return retry_unavailable(p.call, "GetState", game_id=game_id)


def invite(p, handles, **kw):
    return p.call("Invite", invitee_handles=handles, request_id=uuid.uuid4().hex, **kw)


def my_turn_or_over(p, game_id):
    """Polls until it is p's turn or the game is over; returns the state."""
    def ready():
        st = state(p, game_id)
        return st if st.status != ACTIVE or st.to_move == st.my_seat else None
    return ec.poll(f"game {game_id}: {p.handle}'s turn or the end", ready, timeout=120)


def human_turn(p, st):
    """p's best play by score (scrabble-solver), else a pass."""
    moves = ec.solver_moves(SOLVER, LEXICON, st, 1)
    if moves:
        p.call("SubmitPlay", game_id=st.game_id, expected_seq=st.seq, placements=moves[0][1])
    else:
        p.call("Pass", game_id=st.game_id, expected_seq=st.seq)


def bot_moves(p, game_id, bot_ids):
    h = p.call("GetHistory", game_id=game_id, since_seq=0)
    return [m for m in h.moves if m.account_id in bot_ids]


def profile_id(p, handle):
    return p.call("GetProfile", handle=handle).account_id


# ---- tests ------------------------------------------------------------------

def test_full_game_each_level():
    """A whole game, human against each level: the bot accepts at once (the
    Invite itself starts the game), moves on its turn through the same turn
    path (its moves are in the history under its account, the seqs follow
    each other), and the game ends normally with the bot's score counted."""
    for level in LEVELS:
        p = ec.new_player(GATEWAY, "hb")
        inv = invite(p, [f"bot-{level}"])
        assert inv.status == ET.INVITATION_STATUS_STARTED and inv.game_id > 0, inv
        bot = profile_id(p, f"bot-{level}")
        st = None
        for _ in range(200):
            st = my_turn_or_over(p, inv.game_id)
            if st.status != ACTIVE:
                break
            human_turn(p, st)
        assert st.status == FINISHED, f"{level}: game {inv.game_id} did not finish"
        moved = bot_moves(p, inv.game_id, {bot})
        assert len(moved) >= 3, f"{level}: the bot made {len(moved)} moves"
        assert all(m.seat == 1 for m in moved)
        assert st.seats[1].handle == f"bot-{level}"
        hist = p.call("GetHistory", game_id=inv.game_id, since_seq=0).moves
        assert [m.seq for m in hist] == list(range(1, len(hist) + 1))
        print(f"  {level}: {len(hist)} moves, final {st.seats[0].score}-{st.seats[1].score}")


def test_bots_in_every_seat():
    """Three bots in a four-seat game (they move in turn after the human),
    and a bot beside a human invitee (the bot has accepted; the game starts
    when the human does)."""
    p = ec.new_player(GATEWAY, "hb")
    inv = invite(p, [f"bot-{lv}" for lv in LEVELS])
    assert inv.status == ET.INVITATION_STATUS_STARTED, inv
    st = my_turn_or_over(p, inv.game_id)
    human_turn(p, st)
    st = my_turn_or_over(p, inv.game_id)
    assert st.seq == 4 and st.to_move == 0, st
    hist = p.call("GetHistory", game_id=inv.game_id, since_seq=0).moves
    assert [m.seat for m in hist] == [0, 1, 2, 3]
    p.call("Resign", game_id=inv.game_id, expected_seq=st.seq)

    q = ec.new_player(GATEWAY, "hq")
    inv = invite(p, [q.handle, "bot-club"])
    assert inv.status == ET.INVITATION_STATUS_OPEN, inv
    answers = {s.handle: s.answer for s in inv.seats}
    assert answers["bot-club"] == ET.INVITEE_ANSWER_ACCEPTED, inv
    assert answers[q.handle] == ET.INVITEE_ANSWER_PENDING, inv
    r = q.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    st = my_turn_or_over(p, r.game_id)
    human_turn(p, st)
    st = my_turn_or_over(q, r.game_id)
    human_turn(q, st)
    st = my_turn_or_over(p, r.game_id)
    assert st.seq == 3, st  # seat 2, the bot, moved after q


def test_timed_game():
    """A real-time game: the bot moves well inside its clock (the game goes
    on, nobody flagged)."""
    p = ec.new_player(GATEWAY, "hb")
    tc = ET.TimeControl(kind=ET.TIME_CONTROL_KIND_REALTIME, initial_seconds=120)
    inv = invite(p, ["bot-expert"], time_control=tc)
    st = my_turn_or_over(p, inv.game_id)
    human_turn(p, st)
    st = my_turn_or_over(p, inv.game_id)
    assert st.status == ACTIVE and st.seq == 2, st


def test_reserved_handles():
    """Nobody can register a bot's handle, or any handle with the bot
    prefix in any case; nobody can log in as a bot."""
    e = ec.Edge(GATEWAY)
    for h in ["bot-club", "BOT-expert", "Bot-grandmaster", "bot-"]:
        ec.expect_error(S.INVALID_ARGUMENT, "handle_reserved", e.call, "Register", handle=h,
                        password=ec.PASSWORD)
    ec.expect_error(S.UNAUTHENTICATED, "bad_credentials", e.call, "Login", handle="bot-club",
                    password=ec.PASSWORD)
    # Handles merely containing "bot" are anyone's.
    ec.new_player(GATEWAY, "robot-")


def test_unknown_level():
    """An invitation to a bot level that does not exist."""
    p = ec.new_player(GATEWAY, "hb")
    for h in ["bot-grandmaster", "BOT-Master"]:
        ec.expect_error(S.NOT_FOUND, "unknown_bot_level", invite, p, [h])
    ec.expect_error(S.NOT_FOUND, "unknown_bot_level", invite, p, ["bot-club", "bot-nobody"])
    # A person's unknown handle keeps its own reason.
    ec.expect_error(S.NOT_FOUND, "not_found", invite, p, ["nobody" + uuid.uuid4().hex[:8]])


# ---- restart ----------------------------------------------------------------

def game_svc_kill():
    with open(f"{TMP}/game-svc-0.pid") as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGKILL)
    ec.poll(f"pid {pid} gone", lambda: not os.path.exists(f"/proc/{pid}") or
            open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z")


def game_svc_start(extra):
    with open(f"{TMP}/game-svc-0.cmd") as f:
        cmd = f.read().splitlines() + extra
    log = open(f"{TMP}/game-svc-0-restarted.log", "ab")
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    with open(f"{TMP}/game-svc-0.pid", "w") as f:
        f.write(str(proc.pid))

    def connects():
        try:
            socket.create_connection(("127.0.0.1", GAME_PORT), timeout=1).close()
            return True
        except OSError:
            return False
    ec.poll("game-svc listening", connects)


def test_restart_with_bot_to_move():
    """The bot's turn is pending when game-svc dies: the restarted process
    moves it. To make the turn certainly pending at the kill, game-svc first
    runs with --bot-threads=0 (it plays no bots), so the bot cannot have
    moved; after a SIGKILL it starts with bots on again."""
    game_svc_kill()
    game_svc_start(["--bot-threads=0"])
    p = ec.new_player(GATEWAY, "hb")
    inv = retry_unavailable(invite, p, ["bot-club"])
    st = my_turn_or_over(p, inv.game_id)
    human_turn(p, st)
    st = state(p, inv.game_id)
    assert st.seq == 1 and st.to_move == 1, st
    game_svc_kill()
    game_svc_start([])
    st = my_turn_or_over(p, inv.game_id)
    assert st.seq == 2 and st.status == ACTIVE, st
    moved = ec.poll("bot metric", lambda: ec.metric(GAME_METRICS, "game_bot_moves_total",
                                                    'level="club"'))
    assert moved >= 1


def test_two_instances():
    """(test_bots_two.sh) Games spread over two instances: every bot move
    is made by the instance that holds the game (the gateway's owner), so
    its reads show the bot's moves at once and the human plays on."""
    games = os.environ["GAME_TARGETS"].split(",")
    metrics = [int(m) for m in os.environ["GAME_METRICS"].split(",")]
    p = ec.new_player(GATEWAY, "h2")
    ids = [invite(p, [f"bot-{LEVELS[i % 3]}"]).game_id for i in range(8)]
    for _ in range(3):
        for gid in ids:
            human_turn(p, my_turn_or_over(p, gid))
    want = [0] * len(games)
    for gid in ids:
        st = my_turn_or_over(p, gid)
        assert st.seq == 6, st
        want[ec.owner(gid, games)] += 3
    got = [int(ec.metric(m, "game_bot_moves_total") or 0) for m in metrics]
    assert got == want, f"bot moves by instance {got}, owners {want}"


if __name__ == "__main__":
    ec.run_tests([test_reserved_handles, test_unknown_level, test_full_game_each_level,
                  test_bots_in_every_seat, test_timed_game, test_restart_with_bot_to_move])

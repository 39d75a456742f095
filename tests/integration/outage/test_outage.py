#!/usr/bin/python3
"""Store and Redis outages through the public API (scrabble.v1.Edge), on
the real binaries. Run by test_outage.sh, which passes in the environment:
GATEWAY_PORT, GATEWAY_METRICS_PORT, GAME_METRICS_PORT, PG_CONNINFO, PG_DIR,
PG_PORT, REDIS_DIR, REDIS_PORT, REPO_ROOT, SOLVER, LEXICON (the gateway runs
with --auth-ttl=1s).

Nothing here waits a fixed time for something to happen: every wait is a
bounded poll for a state (a metric, a key gone, a status).
"""
import os
import signal
import subprocess
import sys
import threading
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2, expect_error, poll  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
GW_METRICS = int(os.environ["GATEWAY_METRICS_PORT"])
GAME_METRICS = int(os.environ["GAME_METRICS_PORT"])
STORE_METRICS = int(os.environ["STORE_METRICS_PORT"])
PG = os.environ["PG_CONNINFO"]
REPO = os.environ["REPO_ROOT"]
REDIS_DIR, REDIS_PORT = os.environ["REDIS_DIR"], int(os.environ["REDIS_PORT"])
SOLVER, LEXICON = os.environ["SOLVER"], os.environ["LEXICON"]
S = grpc.StatusCode


# ---- helpers ----------------------------------------------------------------

def new_player(prefix):
    return ec.new_player(TARGET, prefix)


def new_game(prefix):
    """Two players and a started game: (game_id, mover, other)."""
    a, b = new_player(prefix + "a"), new_player(prefix + "b")
    inv = a.call("Invite", invitee_handles=[b.handle])
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == common_pb2.INVITATION_STATUS_STARTED and r.game_id > 0, r
    st = a.call("GetState", game_id=r.game_id)
    mover = a if st.seats[st.to_move].account_id == a.account_id else b
    return r.game_id, mover, (b if mover is a else a)


def a_play(e, game_id):
    """A legal play for e (whose turn it is): (placements, state before)."""
    st = e.call("GetState", game_id=game_id)
    for _, placements, _ in ec.solver_moves(SOLVER, LEXICON, st, 5):
        if e.call("Evaluate", game_id=game_id, placements=placements).legal:
            return placements, st
    raise AssertionError(f"no legal play for rack {st.my_rack}")


def psql(sql):
    p = subprocess.run(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def script(*args):
    p = subprocess.run([os.path.join(REPO, "scripts", args[0])] + list(args[1:]),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{args}: {p.stderr}"


def redis_pid():
    with open(os.path.join(REDIS_DIR, "redis.pid")) as f:
        return int(f.read())


def draft_in_redis(game_id, account_id):
    """Whether Redis holds the draft key (asked as the admin user)."""
    reply = ec.redis_cmd(REDIS_PORT, "EXISTS", f"draft:{game_id}:{account_id}")
    return reply.endswith(b":1\r\n")


def owed_deletes():
    return ec.metric(GAME_METRICS, "game_drafts_deletes_owed") or 0


DRAFT = [common_pb2.Placement(row=7, col=7, letter="Q")]


# ---- Postgres down ------------------------------------------------------------

def test_sessions_survive_postgres_down():
    """Postgres stops while the gateway knows three sessions whose trust TTL
    (1 s here) then passes: Evaluate, GetState (game-svc's cache) and
    CheckWord still work for them; an unknown token fails UNAVAILABLE
    unavailable. Once Postgres is back a revoked session is refused."""
    gid, mover, other = new_game("pg")
    revoked = new_player("pgc")
    for e in (mover, other):
        e.call("GetState", game_id=gid)  # resident in game-svc
    revoked.call("CheckWord", word="quiz")
    before = ec.metric(GW_METRICS, "gateway_auth_outage_served_total") or 0
    script("pg.sh", "stop", os.environ["PG_DIR"])
    try:
        # Calls keep working; once the TTL has passed they go through the
        # outage fallback, which the metric shows.
        poll("a call served on a cached session during the outage",
             lambda: mover.call("GetState", game_id=gid) and
             (ec.metric(GW_METRICS, "gateway_auth_outage_served_total") or 0) > before)
        placements, st = a_play(mover, gid)
        assert st.seq == 0
        for e in (mover, other):
            assert e.call("GetState", game_id=gid).game_id == gid
            assert e.call("CheckWord", word="quiz").valid
        assert revoked.call("CheckWord", word="quiz").valid
        # A token this gateway never resolved: the store cannot say.
        stranger = Edge(TARGET, token="t" + uuid.uuid4().hex)
        expect_error(S.UNAVAILABLE, "unavailable", stranger.call, "CheckWord", word="quiz")
        # Writes need the database: the turn fails, nothing is lost.
        try:
            mover.call("SubmitPlay", game_id=gid, expected_seq=0, placements=placements)
            raise AssertionError("a turn committed with Postgres down")
        except CallError as e:
            assert e.code == S.UNAVAILABLE, e
    finally:
        script("pg.sh", "start", os.environ["PG_DIR"], os.environ["PG_PORT"])
    # store-svc reconnects by itself (backoff up to 5 s).
    def store_back():
        try:
            return mover.call("GetProfile", handle=mover.handle)
        except CallError as e:
            assert e.code == S.UNAVAILABLE, e
            return None
    poll("store-svc answering again", store_back)
    # A read answering says a reader is back; the writer reconnects on its
    # own backoff (up to 5 s), and the turn below needs it.
    poll("store-svc's writer connected again", lambda: (ec.metric(
        STORE_METRICS, "store_db_connections_up", 'role="writer"') or 0) >= 1)
    psql(f"DELETE FROM sessions WHERE account_id = {revoked.account_id}")

    def refused():
        try:
            revoked.call("CheckWord", word="quiz")
            return False
        except CallError as e:
            assert e.code == S.UNAUTHENTICATED and e.reason == "unauthenticated", e
            return True
    poll("the revoked session refused", refused, timeout=20)
    # The others go on, and the game with them.
    assert other.call("GetState", game_id=gid).seq == 0
    placements, st = a_play(mover, gid)
    mover.call("SubmitPlay", game_id=gid, expected_seq=st.seq, placements=placements)
    # Every call that waited on the game (behind the failed commit's
    # reload) left the wait queue.
    poll("no call left waiting", lambda: ec.metric(GAME_METRICS, "game_ops_waiting") == 0)


# ---- Redis hung, Redis restarted ---------------------------------------------

def test_draft_deleted_after_hung_redis():
    """A turn commits while Redis is hung (SIGSTOP): the turn and Evaluate
    answer, the mover's draft reads as deleted at once, and Redis really
    loses it once it answers again (SIGCONT)."""
    gid, mover, other = new_game("hung")
    mover.call("SaveDraft", game_id=gid, placements=DRAFT, rack_order="QWERTYU")
    assert len(mover.call("GetDraft", game_id=gid).placements) == 1
    assert draft_in_redis(gid, mover.account_id)
    placements, st = a_play(mover, gid)
    pid = redis_pid()
    os.kill(pid, signal.SIGSTOP)
    stop = threading.Event()

    def drafts_load():
        # Draft calls queue up behind the hung Redis meanwhile.
        while not stop.is_set():
            for m, kw in (("SaveDraft", {"placements": DRAFT}), ("GetDraft", {})):
                try:
                    other.call(m, game_id=gid, timeout=2, **kw)
                except CallError as e:
                    assert e.code in (S.UNAVAILABLE, S.DEADLINE_EXCEEDED), e
    load = threading.Thread(target=drafts_load, daemon=True)
    load.start()
    try:
        tr = mover.call("SubmitPlay", game_id=gid, expected_seq=st.seq, placements=placements)
        assert tr.state.seq == st.seq + 1
        # Evaluate answers while Redis hangs (how fast is the benchmark's
        # business, scripts/bench/drafts_hung.sh).
        for _ in range(20):
            a_play(other, gid)
        # The delete is owed; meanwhile the draft reads as gone.
        poll("the delete owed", lambda: owed_deletes() >= 1)
        assert len(mover.call("GetDraft", game_id=gid).placements) == 0
        # A hung Redis answers nothing, so both connections read as down
        # (commands and idle PINGs time out).
        poll("game_drafts_redis_up 0 while Redis hangs",
             lambda: ec.metric(GAME_METRICS, "game_drafts_redis_up") == 0)
        poll("store_events_redis_up 0 while Redis hangs",
             lambda: ec.metric(STORE_METRICS, "store_events_redis_up") == 0)
    finally:
        stop.set()
        load.join(timeout=30)
        os.kill(pid, signal.SIGCONT)
    poll("the draft deleted in Redis", lambda: not draft_in_redis(gid, mover.account_id))
    poll("no delete owed", lambda: owed_deletes() == 0)
    poll("game_drafts_redis_up 1 again", lambda: ec.metric(GAME_METRICS, "game_drafts_redis_up") == 1)
    poll("store_events_redis_up 1 again", lambda: ec.metric(STORE_METRICS, "store_events_redis_up") == 1)
    # Drafts work again.
    mover.call("SaveDraft", game_id=gid, placements=DRAFT)
    assert len(mover.call("GetDraft", game_id=gid).placements) == 1


def test_first_getdraft_after_redis_restart():
    """Redis restarts between two draft calls: the first GetDraft after it
    succeeds (the stale connection is retried once on a fresh one)."""
    gid, mover, _ = new_game("restart")
    mover.call("SaveDraft", game_id=gid, placements=DRAFT)
    assert len(mover.call("GetDraft", game_id=gid).placements) == 1
    poll("no delete owed", lambda: owed_deletes() == 0)
    script("redis.sh", "stop", REDIS_DIR)
    script("redis.sh", "start", REDIS_DIR, str(REDIS_PORT))
    # Redis keeps nothing across a restart here (no persistence): empty.
    assert len(mover.call("GetDraft", game_id=gid).placements) == 0
    mover.call("SaveDraft", game_id=gid, placements=DRAFT)
    assert len(mover.call("GetDraft", game_id=gid).placements) == 1


TESTS = [test_sessions_survive_postgres_down, test_draft_deleted_after_hung_redis,
         test_first_getdraft_after_redis_restart]


if __name__ == "__main__":
    ec.run_tests(TESTS)

#!/usr/bin/python3
"""Evaluate latency with Redis healthy, then hung (SIGSTOP). Run by
drafts_hung.sh (environment: GATEWAY_PORT, REDIS_DIR, SOLVER, LEXICON)."""
import os
import signal
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
PHASE_S = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
EVALUATORS, DRAFTERS = 4, 4
DRAFT = [common_pb2.Placement(row=7, col=7, letter="Q")]


def player(prefix):
    e = Edge(TARGET)
    r = e.call("Register", handle=f"{prefix}{uuid.uuid4().hex[:8]}", password="correct horse battery")
    e.token, e.account_id = r.token, r.account_id
    return e


def game():
    """A started game: (game_id, mover edge, other edge, a legal play)."""
    a, b = player("ba"), player("bb")
    inv = a.call("Invite", invitee_handles=[b.call("GetProfile").handle])
    g = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True).game_id
    st = a.call("GetState", game_id=g)
    mover, other = (a, b) if st.seats[st.to_move].account_id == a.account_id else (b, a)
    st = mover.call("GetState", game_id=g)
    for _, placements, _ in ec.solver_moves(os.environ["SOLVER"], os.environ["LEXICON"], st, 5):
        if mover.call("Evaluate", game_id=g, placements=placements).legal:
            return g, mover, other, placements
    raise RuntimeError("no legal play")


def pct(xs, p):
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def phase(name, games):
    stop = threading.Event()
    lat, drafts, dlat = [], {}, []
    lock = threading.Lock()

    def evaluator(i):
        g, mover, _, placements = games[i % len(games)]
        mine = []
        while not stop.is_set():
            t0 = time.perf_counter()
            mover.call("Evaluate", game_id=g, placements=placements, timeout=30)
            mine.append((time.perf_counter() - t0) * 1000)
        with lock:
            lat.extend(mine)

    def drafter(i):
        g, _, other, _ = games[i % len(games)]
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                other.call("SaveDraft", game_id=g, placements=DRAFT, timeout=5)
                what = "OK"
            except CallError as e:
                what = f"{e.code.name} {e.reason}"
            with lock:
                drafts[what] = drafts.get(what, 0) + 1
                dlat.append((time.perf_counter() - t0) * 1000)

    ts = [threading.Thread(target=evaluator, args=(i,)) for i in range(EVALUATORS)]
    ts += [threading.Thread(target=drafter, args=(i,)) for i in range(DRAFTERS)]
    for t in ts:
        t.start()
    time.sleep(PHASE_S)  # the measurement window itself, not a wait for a state
    stop.set()
    for t in ts:
        t.join()
    lat.sort()
    dlat.sort()
    print(f"  {name:<14} Evaluate n={len(lat):6d}  p50 {pct(lat, 0.5):7.2f} ms  p99 {pct(lat, 0.99):7.2f} ms"
          f"  p99.9 {pct(lat, 0.999):7.2f} ms  max {lat[-1] if lat else float('nan'):7.2f} ms   SaveDraft: "
          + ", ".join(f"{k} {v}" for k, v in sorted(drafts.items()))
          + f" (p50 {pct(dlat, 0.5):.2f} ms, p99 {pct(dlat, 0.99):.2f} ms)", flush=True)


def main():
    games = [game() for _ in range(EVALUATORS)]
    print(f"drafts_hung: {EVALUATORS} Evaluate loops + {DRAFTERS} SaveDraft loops through one gateway, "
          f"{PHASE_S:.0f} s a phase")
    phase("Redis healthy", games)
    with open(os.path.join(os.environ["REDIS_DIR"], "redis.pid")) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGSTOP)
    try:
        phase("Redis hung", games)
    finally:
        os.kill(pid, signal.SIGCONT)


if __name__ == "__main__":
    main()

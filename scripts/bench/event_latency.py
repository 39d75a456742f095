#!/usr/bin/python3
"""Commit -> opponent event latency through a running stack, one move at a
time (no load besides it): A passes, B's Subscribe stream receives
OPPONENT_MOVED. For each move it records the mover's call latency (the
reply leaves game-svc right after store-svc's COMMIT) and the time until B
has the event, both from the moment A sends. Games are restarted every 5
passes (six scoreless turns would end them).

Usage: scripts/bench/event_latency.py HOST:PORT [MOVES]   (default 300)
Prints p50/p90/p99/max of each, in ms.
"""
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "interop"))
from edge_client import Edge, common_pb2  # noqa: E402

ET = common_pb2


def player(target, prefix):
    e = Edge(target)
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    r = e.call("Register", handle=handle, password="correct horse battery")
    e.token, e.handle = r.token, handle
    return e


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    target = sys.argv[1]
    moves = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    a, b = player(target, "la"), player(target, "lb")
    sb = b.subscribe()
    reply_ms, event_ms = [], []
    while len(event_ms) < moves:
        inv = a.call("Invite", invitee_handles=[b.handle])
        gid = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True).game_id
        sb.next(want=ET.EVENT_TYPE_GAME_STARTED)
        for seq in range(5):
            mover = a if seq % 2 == 0 else b
            t0 = time.perf_counter()
            mover.call("Pass", game_id=gid, expected_seq=seq)
            t1 = time.perf_counter()
            if mover is a:
                sb.next(want=ET.EVENT_TYPE_OPPONENT_MOVED)
                t2 = time.perf_counter()
                reply_ms.append((t1 - t0) * 1000)
                event_ms.append((t2 - t0) * 1000)
            time.sleep(0.06)  # within the gateway's default write rate (20/s)
    sb.cancel()
    for name, xs in (("mover's reply", reply_ms), ("opponent's event", event_ms)):
        print(f"{name:18} n={len(xs)} p50={pct(xs, .5):.2f} p90={pct(xs, .9):.2f} "
              f"p99={pct(xs, .99):.2f} max={max(xs):.2f} ms")


if __name__ == "__main__":
    main()

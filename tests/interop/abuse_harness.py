"""What the stream-abuse test (tests/integration/edge-abuse/abuse.py) and
the attack benchmark (scripts/bench/attack.py) share: the hostile HTTP/2
client run as a subprocess (h2_attack.py, one JSON object out), the
well-behaved player whose calls measure what an attack costs others, and
the gateway's RSS and CPU from /proc. Loopback only; every loop bounded.
"""
import collections
import json
import os
import subprocess
import sys
import threading
import time

import edge_client as ec
from edge_client import CallError

ATTACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration",
                      "edge-abuse", "h2_attack.py")

# One call of the good client: when it started and ended (monotonic s),
# whether it succeeded, and the error text when not.
Result = collections.namedtuple("Result", "start end ok error")


def attack(target, *args, timeout=120, script=ATTACK):
    """Runs h2_attack.py against target to the end; its JSON report."""
    out = subprocess.run([sys.executable, script, "--target", target, *args], capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, f"h2_attack.py failed: {out.stderr[-2000:]}"
    return json.loads(out.stdout)


def attack_bg(target, *args, script=ATTACK):
    """Starts h2_attack.py; the caller waits for it."""
    return subprocess.Popen([sys.executable, script, "--target", target, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    """utime + stime of pid, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class GoodClient(threading.Thread):
    """A well-behaved player on 127.0.0.1: two fresh players start a game,
    then one calls GetState on it in a loop (each call with a 5 s
    deadline, `pause` seconds apart, at most max_calls), recording a
    Result per call."""

    def __init__(self, target, prefix="good", pause=0.005, max_calls=100000):
        super().__init__(daemon=True)
        a, b = ec.new_player(target, prefix), ec.new_player(target, prefix + "peer")
        inv = a.call("Invite", invitee_handles=[b.handle])
        r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
        self.edge, self.game_id = a, r.game_id
        self.pause, self.max_calls = pause, max_calls
        self.stop = threading.Event()
        self.results = []
        self.lock = threading.Lock()

    def run(self):
        n = 0
        while not self.stop.is_set() and n < self.max_calls:
            n += 1
            t0 = time.monotonic()
            try:
                self.edge.call("GetState", game_id=self.game_id, timeout=5)
                ok, err = True, None
            except CallError as e:
                ok, err = False, f"{e.code.name} {e.reason} {e.details}"
            with self.lock:
                self.results.append(Result(t0, time.monotonic(), ok, err))
            time.sleep(self.pause)

    def ended_between(self, t0, t1):
        with self.lock:
            return [r for r in self.results if t0 <= r.end <= t1]

    def started_between(self, t0, t1):
        with self.lock:
            return [r for r in self.results if t0 <= r.start < t1]

    def finish(self):
        self.stop.set()
        self.join(10)


def latency_ms(results, p):
    """The p-quantile (0..1) of the results' latencies in ms; NaN when none."""
    lat = sorted(r.end - r.start for r in results)
    return lat[min(len(lat) - 1, int(len(lat) * p))] * 1000 if lat else float("nan")

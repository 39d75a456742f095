#!/usr/bin/python3
"""attack.py — figures for HTTP/2 rapid reset against a running gateway
(driven by scripts/bench/attack.sh; prints figures, asserts nothing).

One run: a well-behaved player calls GetState in a loop (python3-grpcio,
127.0.0.1) for BASE seconds with no attack, then for DUR seconds while one
attacking process (tests/integration/edge-abuse/h2_attack.py, --mode flood
from 127.0.0.2: HEADERS + RST_STREAM on stream after stream, reconnecting
whenever the gateway closes the connection) runs, then 10 s more. The
gateway's RSS and CPU (/proc) are sampled every 250 ms.

Env: TARGET (gateway host:port), MPORT (its metrics port), GW_PID, BASE,
DUR, ATTACK (path of h2_attack.py).
"""
import json
import os
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge  # noqa: E402

TARGET = os.environ["TARGET"]
MPORT = int(os.environ["MPORT"])
PID = int(os.environ["GW_PID"])
BASE = float(os.environ.get("BASE", "10"))
DUR = min(float(os.environ.get("DUR", "15")), 30.0)
ATTACK = os.environ["ATTACK"]
HZ = os.sysconf("SC_CLK_TCK")


def rss_mb():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s():
    with open(f"/proc/{PID}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def player(prefix, rate_ok=True):
    e = Edge(TARGET)
    h = f"{prefix}{uuid.uuid4().hex[:8]}"
    r = e.call("Register", handle=h, password="correct horse battery")
    e.token, e.handle = r.token, h
    return e


class Good(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        a, b = player("benchgood"), player("benchpeer")
        inv = a.call("Invite", invitee_handles=[b.handle])
        r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
        self.e, self.game = a, r.game_id
        self.stop = threading.Event()
        self.res = []  # (t_start, latency_s, ok)

    def run(self):
        n = 0
        while not self.stop.is_set() and n < 200000:
            n += 1
            t0 = time.monotonic()
            try:
                self.e.call("GetState", game_id=self.game, timeout=5)
                ok = True
            except CallError:
                ok = False
            self.res.append((t0, time.monotonic() - t0, ok))
            time.sleep(0.025)  # ~35 calls/s: a busy human client, under its read limit (50/s)

    def window(self, t0, t1):
        return [r for r in self.res if t0 <= r[0] < t1]


def pct(rs, p):
    lat = sorted(r[1] for r in rs)
    return lat[min(len(lat) - 1, int(len(lat) * p))] * 1000 if lat else float("nan")


def sampler(samples, stop):
    while not stop.is_set():
        samples.append((time.monotonic(), rss_mb(), cpu_s()))
        time.sleep(0.25)


def main():
    good = Good()
    good.start()
    samples, stop = [], threading.Event()
    threading.Thread(target=sampler, args=(samples, stop), daemon=True).start()
    time.sleep(1.0)  # warm: the game is loaded, the channel is up
    t_base0, cpu_base0, rss_base = time.monotonic(), cpu_s(), rss_mb()
    time.sleep(BASE)
    t_att0, cpu_att0 = time.monotonic(), cpu_s()
    resets0 = ec.metric(MPORT, "rpc_server_calls_reset_total") or 0
    refused0 = ec.metric(MPORT, "rpc_server_calls_refused_total") or 0
    out = subprocess.run([sys.executable, ATTACK, "--target", TARGET, "--mode", "flood",
                          "--source", "127.0.0.2", "--duration", str(DUR), "--max-conns", "100000"],
                         capture_output=True, text=True, timeout=DUR + 60)
    t_att1, cpu_att1 = time.monotonic(), cpu_s()
    att = json.loads(out.stdout)
    resets = (ec.metric(MPORT, "rpc_server_calls_reset_total") or 0) - resets0
    refused = (ec.metric(MPORT, "rpc_server_calls_refused_total") or 0) - refused0
    closed = ec.metric(MPORT, "rpc_server_conns_closed_abuse_total") or 0
    rss_end = rss_mb()
    time.sleep(10)
    rss_after = rss_mb()
    stop.set()
    good.stop.set()
    good.join(10)

    base = good.window(t_base0, t_att0)
    during = good.window(t_att0, t_att1)
    peak = max((s[1] for s in samples if t_att0 <= s[0] <= t_att1), default=rss_end)
    base_rate = (cpu_att0 - cpu_base0) / (t_att0 - t_base0)  # the good client's own load
    attack_cpu = (cpu_att1 - cpu_att0) - base_rate * (t_att1 - t_att0)
    first = att["conns"][0] if att["conns"] else {}
    print(f"attack: {att['streams']} streams (HEADERS+RST_STREAM, no token) on {att['connections']} "
          f"connections in {t_att1 - t_att0:.1f} s from one process")
    print(f"  attacker connection survived: first {first.get('survived_ms')} ms "
          f"({first.get('streams')} streams sent), median {att['survived_ms_median']} ms, "
          f"max {att['survived_ms_max']} ms; ended {att['ended']}")
    print(f"  gateway: {resets:.0f} calls reached the runtime cancelled, {refused:.0f} refused, "
          f"{closed:.0f} connections closed for abuse")
    print(f"  gateway RSS: {rss_base:.1f} MB before, {peak:.1f} MB peak during "
          f"(+{peak - rss_base:.1f}), {rss_end:.1f} MB at the end, {rss_after:.1f} MB 10 s after "
          f"(+{rss_after - rss_base:.1f})")
    print(f"  good client GetState: no attack p50 {pct(base, .5):.2f} ms p99 {pct(base, .99):.2f} ms "
          f"({len(base)} calls, {sum(not r[2] for r in base)} failed); during the attack "
          f"p50 {pct(during, .5):.2f} ms p99 {pct(during, .99):.2f} ms "
          f"({len(during)} calls, {sum(not r[2] for r in during)} failed); "
          f"p99 ratio {pct(during, .99) / pct(base, .99):.2f}x")
    if att["streams"]:
        print(f"  gateway CPU for the attack: {attack_cpu:.2f} s = "
              f"{attack_cpu / att['streams'] * 1e6:.1f} us per attack stream sent")


if __name__ == "__main__":
    main()

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
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "interop"))
import abuse_harness as ah  # noqa: E402
import edge_client as ec  # noqa: E402

TARGET = os.environ["TARGET"]
MPORT = int(os.environ["MPORT"])
PID = int(os.environ["GW_PID"])
BASE = float(os.environ.get("BASE", "10"))
DUR = min(float(os.environ.get("DUR", "15")), 30.0)
ATTACK = os.environ["ATTACK"]


def rss_mb():
    return ah.rss_kb(PID) / 1024


def cpu_s():
    return ah.cpu_s(PID)


def pct(rs, p):
    return ah.latency_ms(rs, p)


def sampler(samples, stop):
    while not stop.is_set():
        samples.append((time.monotonic(), rss_mb(), cpu_s()))
        time.sleep(0.25)


def main():
    # ~35 calls/s: a busy human client, under its read limit (50/s).
    good = ah.GoodClient(TARGET, prefix="benchgood", pause=0.025, max_calls=200000)
    good.start()
    samples, stop = [], threading.Event()
    threading.Thread(target=sampler, args=(samples, stop), daemon=True).start()
    time.sleep(1.0)  # warm: the game is loaded, the channel is up
    t_base0, cpu_base0, rss_base = time.monotonic(), cpu_s(), rss_mb()
    time.sleep(BASE)
    t_att0, cpu_att0 = time.monotonic(), cpu_s()
    resets0 = ec.metric(MPORT, "rpc_server_calls_reset_total") or 0
    refused0 = ec.metric(MPORT, "rpc_server_calls_refused_total") or 0
    att = ah.attack(TARGET, "--mode", "flood", "--source", "127.0.0.2", "--duration", str(DUR),
                    "--max-conns", "100000", timeout=DUR + 60, script=ATTACK)
    t_att1, cpu_att1 = time.monotonic(), cpu_s()
    resets = (ec.metric(MPORT, "rpc_server_calls_reset_total") or 0) - resets0
    refused = (ec.metric(MPORT, "rpc_server_calls_refused_total") or 0) - refused0
    closed = ec.metric(MPORT, "rpc_server_conns_closed_abuse_total") or 0
    rss_end = rss_mb()
    time.sleep(10)
    rss_after = rss_mb()
    stop.set()
    good.finish()

    base = good.started_between(t_base0, t_att0)
    during = good.started_between(t_att0, t_att1)
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
          f"({len(base)} calls, {sum(not r.ok for r in base)} failed); during the attack "
          f"p50 {pct(during, .5):.2f} ms p99 {pct(during, .99):.2f} ms "
          f"({len(during)} calls, {sum(not r.ok for r in during)} failed); "
          f"p99 ratio {pct(during, .99) / pct(base, .99):.2f}x")
    if att["streams"]:
        print(f"  gateway CPU for the attack: {attack_cpu:.2f} s = "
              f"{attack_cpu / att['streams'] * 1e6:.1f} us per attack stream sent")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Figures for docs/SECURITY.md "Input bounds and login throttles", run by
edge_input.sh against a private stack (ports and pids in the environment).

  dense  — 8 concurrent 4 MiB Logins of ~2M tiny entries each (no token,
           one address),
           then 8 concurrent authenticated Evaluates of 2M empty placements,
           ATTACK_S seconds each: RSS of gateway, game-svc, store-svc before,
           peak during, and 10 s after; a well-behaved client's GetState p99
           without and during the attack.
  control — the Login attack of `dense` against bare-echo fail (the C core
           alone), with a good client's Health/Check p99 on it.
  flood  — 8 clients at one address send wrong-password Logins as fast as
           they can for ATTACK_S seconds: what reached store-svc, store-svc
           CPU, and a good client's Login latency (another address) without
           and during the flood.

The dense attacker is h2load; the login flood runs in a child process
(multiprocessing), so the measuring client's latencies are not skewed by
the attackers' Python threads.
"""
import multiprocessing as mp
import os
import subprocess
import sys
import threading
import time
import urllib.request

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration", "edge-input"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge  # noqa: E402
import edge_input as ei  # noqa: E402  (wire helpers, Relay, metric)

GW = f"127.0.0.1:{os.environ['GATEWAY_PORT']}"
PIDS = {n: int(os.environ[v]) for n, v in (("gateway", "GATEWAY_PID"), ("game-svc", "GAME_PID"),
                                           ("store-svc", "STORE_PID"))}
ATTACK_S = float(os.environ.get("ATTACK_S", "10"))
TOKEN, GAME = os.environ["TOKEN"], int(os.environ["GAME"])
HZ = os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / HZ


def p(vals, q):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(q * len(vals)))] if vals else float("nan")


def get_state_latencies(seconds):
    e = Edge(GW, TOKEN)
    out, end = [], time.time() + seconds
    while time.time() < end:
        t0 = time.perf_counter()
        e.call("GetState", game_id=GAME)
        out.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.01)
    e.close()
    return out


# ---- attackers -------------------------------------------------------------------

def frame(body):
    return b"\x00" + len(body).to_bytes(4, "big") + body


def check_latencies(port, seconds):
    """Health/Check on bare-echo fail every 10 ms (the control); its
    answer is always the error status, which is the reply timed here."""
    ch = grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
    f = ch.unary_unary("/grpc.health.v1.Health/Check", request_serializer=lambda b: b,
                       response_deserializer=lambda b: b)
    out, end = [], time.time() + seconds
    while time.time() < end:
        t0 = time.perf_counter()
        try:
            f(b"", timeout=10)
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
        out.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.01)
    ch.close()
    return out


def dense_attack(kind, seconds, target=None):
    """8 connections, one 4 MiB call in flight on each, for `seconds`, from
    h2load (a C client: the attacker's own cost does not starve the machine
    the way 8 Python senders would). Returns the Popen."""
    if kind == "login":
        body = ei.dense(ei.f_bytes(1, b"alice"), b"\x78\x00")
        path, hdr = "/scrabble.v1.Edge/Login", []
    else:
        body = ei.dense(ei.f_varint(1, GAME), b"\x12\x00")
        path, hdr = "/scrabble.v1.Edge/Evaluate", ["-H", "authorization: Bearer " + TOKEN]
    fn = os.path.join(os.environ["STACK_TMP"], f"dense_{kind}.bin")
    with open(fn, "wb") as f:
        f.write(frame(body))
    if target:
        path = "/grpc.health.v1.Health/Check"
    return subprocess.Popen(["h2load", "-D", str(int(seconds)), "-c", "8", "-m", "1", "-t", "2", "-d", fn,
                             "-H", "content-type: application/grpc", "-H", "te: trailers", *hdr,
                             f"http://{target or GW}{path}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def codes(method):
    """rpc_server_calls_total of an Edge method by code."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{os.environ['GATEWAY_METRICS_PORT']}/metrics",
                                  timeout=5).read().decode()
    out = {}
    for line in body.splitlines():
        if line.startswith(f'rpc_server_calls_total{{method="/scrabble.v1.Edge/{method}"'):
            code = line.split('code="')[1].split('"')[0]
            out[code] = float(line.split()[-1])
    return out


def _flood_proc(target, stop_at, q):
    counts = {}

    def worker(i):
        e = Edge(target)
        n = 0
        while time.time() < stop_at:
            try:
                e.call("Login", metadata=[], handle=f"victim{i}", password=f"guess{n}")
                k = "ok"
            except CallError as err:
                k = err.reason or err.code.name
            counts[k] = counts.get(k, 0) + 1
            n += 1
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    q.put(counts)


def run_attack(start, collect, measure, pids=None):
    """start() launches the attacker; RSS of pids (default: the stack's) is
    sampled every 100 ms while measure() runs here; collect(handle) waits for
    the attacker and returns its counts. Returns (counts, measure's result,
    peak RSS)."""
    pids = PIDS if pids is None else pids
    peak = {n: rss_mb(pid) for n, pid in pids.items()}
    done = threading.Event()

    def sample():
        while not done.is_set():
            for n, pid in pids.items():
                peak[n] = max(peak[n], rss_mb(pid))
            time.sleep(0.1)
    s = threading.Thread(target=sample, daemon=True)
    s.start()
    handle = start()
    result = measure()
    counts = collect(handle)
    done.set()
    s.join()
    return counts, result, peak


def in_child(target, args):
    """Runs target(*args, queue) in a child process; collect with
    from_child."""
    q = mp.Queue()
    child = mp.Process(target=target, args=args + (q,))
    child.start()
    return child, q


def from_child(handle):
    child, q = handle
    counts = q.get(timeout=120)
    child.join(60)
    return counts


def dense():
    print(f"dense messages, {ATTACK_S:.0f} s each; a good client's GetState every 10 ms")
    base = get_state_latencies(ATTACK_S)
    print(f"  no attack: GetState p50 {p(base, .5):.2f} ms  p99 {p(base, .99):.2f} ms  (n={len(base)})")
    for kind, what in (("login", "8 x 4 MiB Login, no token, ~2M entries each"),
                       ("evaluate", "8 x 4 MiB Evaluate with a token, 2M empty placements each")):
        method = "Login" if kind == "login" else "Evaluate"
        before = {n: rss_mb(pid) for n, pid in PIDS.items()}
        cpu0 = {n: cpu_s(pid) for n, pid in PIDS.items()}
        c0 = codes(method)

        def collect(proc):
            proc.wait(ATTACK_S + 60)
            c1 = codes(method)
            return {k: int(v - c0.get(k, 0)) for k, v in c1.items() if v - c0.get(k, 0)}
        counts, lat, peak = run_attack(lambda: dense_attack(kind, ATTACK_S), collect,
                                       lambda: get_state_latencies(ATTACK_S))
        cpu1 = {n: cpu_s(pid) for n, pid in PIDS.items()}
        time.sleep(10)
        after = {n: rss_mb(pid) for n, pid in PIDS.items()}
        calls = sum(counts.values())
        print(f"  {what}: {calls} calls answered {counts}")
        for n in PIDS:
            print(f"    {n:9s} RSS before {before[n]:6.1f} MB  peak {peak[n]:6.1f} (+{peak[n] - before[n]:.1f})"
                  f"  10 s after {after[n]:6.1f} (+{after[n] - before[n]:.1f})  CPU {cpu1[n] - cpu0[n]:.2f} s")
        print(f"    gateway CPU per rejected call: {(cpu1['gateway'] - cpu0['gateway']) / max(calls, 1) * 1e6:.0f} us")
        print(f"    good client GetState during: p50 {p(lat, .5):.2f} ms  p99 {p(lat, .99):.2f} ms"
              f"  (n={len(lat)}; p99 without: {p(base, .99):.2f} ms)")


def dense_control():
    """The same Login attack against bare-echo fail (the C core alone,
    answering every call with an error): how much of the good client's
    latency the machine and the core cost without any gateway code."""
    port = int(os.environ["BARE_PORT"])
    pids = {"bare-echo": int(os.environ["BARE_PID"])}
    base = check_latencies(port, ATTACK_S)
    before = rss_mb(pids["bare-echo"])
    _, lat, peak = run_attack(lambda: dense_attack("login", ATTACK_S, target=f"127.0.0.1:{port}"),
                              lambda proc: proc.wait(ATTACK_S + 60),
                              lambda: check_latencies(port, ATTACK_S), pids)
    time.sleep(10)
    after = rss_mb(pids["bare-echo"])
    print(f"  control, the same 8 x 4 MiB Login attack on bare-echo fail: a good client's Health/Check "
          f"p99 {p(lat, .99):.2f} ms during, {p(base, .99):.2f} ms without (p50 {p(lat, .5):.2f} / "
          f"{p(base, .5):.2f} ms)")
    print(f"    bare-echo RSS before {before:6.1f} MB  peak {peak['bare-echo']:6.1f} "
          f"(+{peak['bare-echo'] - before:.1f})  10 s after {after:6.1f} (+{after - before:.1f})")


def login_latencies(edge, handles, seconds):
    """A good client at its own address: one Login every 2 s, rotating over
    its handles (within every default throttle)."""
    out, end, i = [], time.time() + seconds, 0
    while time.time() < end:
        t0 = time.perf_counter()
        edge.call("Login", metadata=[], handle=handles[i % len(handles)], password="good-pass-123")
        out.append((time.perf_counter() - t0) * 1000)
        i += 1
        time.sleep(2.0)
    return out


def flood():
    print(f"login flood: 8 clients at one address, wrong passwords as fast as they can, {ATTACK_S:.0f} s")
    good = Edge(ei.Relay("127.0.8.2", int(GW.split(":")[1])).target)
    handles = os.environ["GOOD_HANDLES"].split(",")
    base = login_latencies(good, handles, ATTACK_S)
    print(f"  no flood: good Login median {p(base, .5):.1f} ms  max {max(base):.1f} ms  (n={len(base)})")
    attacker = ei.Relay("127.0.8.3", int(GW.split(":")[1]))
    store_cpu0, gw_cpu0 = cpu_s(PIDS["store-svc"]), cpu_s(PIDS["gateway"])
    reached0 = ei.metric(int(os.environ["STORE_METRICS_PORT"]), "rpc_server_calls_total",
                         'method="/scrabble.v1.Store/Login"')
    t0 = time.time()
    counts, lat, _ = run_attack(lambda: in_child(_flood_proc, (attacker.target, time.time() + ATTACK_S)),
                                from_child, lambda: login_latencies(good, handles, ATTACK_S))
    dt = time.time() - t0
    store_cpu, gw_cpu = cpu_s(PIDS["store-svc"]) - store_cpu0, cpu_s(PIDS["gateway"]) - gw_cpu0
    reached = ei.metric(int(os.environ["STORE_METRICS_PORT"]), "rpc_server_calls_total",
                        'method="/scrabble.v1.Store/Login"') - reached0
    calls = sum(counts.values())
    print(f"  attacker: {calls} Logins in {dt:.1f} s ({calls / dt:.0f}/s) answered {counts}")
    print(f"  store-svc: {reached:.0f} Login calls (the good client's included), CPU {store_cpu:.2f} s"
          f" = {store_cpu / dt * 100:.1f}% of a core; gateway CPU {gw_cpu:.2f} s"
          f" ({gw_cpu / max(calls, 1) * 1e6:.0f} us per attacker call)")
    print(f"  good Login during: median {p(lat, .5):.1f} ms  max {max(lat):.1f} ms  (n={len(lat)})")


if __name__ == "__main__":
    # grpcio is not fork-safe once a channel exists: children start fresh.
    mp.set_start_method("spawn")
    for what in sys.argv[1:] or ["dense", "flood"]:
        {"dense": dense, "control": dense_control, "flood": flood}[what]()

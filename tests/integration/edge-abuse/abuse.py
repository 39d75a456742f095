#!/usr/bin/python3
"""Stream abuse and the HTTP endpoints, against the real gateway.

Run by test_edge_abuse.sh, which passes in the environment: GATEWAY_PORT,
GATEWAY_METRICS_PORT, GATEWAY_PID (default bounds, --abuse-penalty=60s),
TIGHT_PORT, TIGHT_METRICS_PORT (--max-calls-per-connection=20
--max-calls=30), ATTACK (h2_attack.py). Attackers bind 127.0.0.2.. as their
source address, so the penalty box they earn never touches the
well-behaved client on 127.0.0.1. No timed assertions: waits are bounded,
figures are printed.
"""
import os
import socket
import sys
import time
import traceback
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import abuse_harness as ah  # noqa: E402
import edge_client as ec  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
GW_PID = int(os.environ["GATEWAY_PID"])
TIGHT = "127.0.0.1:" + os.environ["TIGHT_PORT"]
TIGHT_MPORT = int(os.environ["TIGHT_METRICS_PORT"])
ATTACK = os.environ["ATTACK"]
WATCH = "/grpc.health.v1.Health/Watch"
RESOURCE_EXHAUSTED = "8"


def attack(target, *args, timeout=120):
    r = ah.attack(target, *args, timeout=timeout, script=ATTACK)
    print("#   attacker:", {k: v for k, v in r.items() if k != "conns"})
    return r


def attack_bg(target, *args):
    return ah.attack_bg(target, *args, script=ATTACK)


def metric(port, name):
    return ec.metric(port, name) or 0


rss_kb = ah.rss_kb


def asan(pid):
    with open(f"/proc/{pid}/maps") as f:
        return "libasan" in f.read()


def p99_ms(rs):
    return round(ah.latency_ms(rs, 0.99), 1) if rs else None


GOOD = None


def good_client():
    global GOOD
    if GOOD is None:
        GOOD = ah.GoodClient(TARGET)
        GOOD.start()
        deadline = time.monotonic() + 10
        while not GOOD.results and time.monotonic() < deadline:
            time.sleep(0.05)
        assert GOOD.results and GOOD.results[-1].ok, f"good client never served: {GOOD.results[-1:]}"
    return GOOD


def assert_good_served(t0, t1):
    # A short attack may fall between two of its calls: count the first
    # call that ends after the attack too (bounded wait, not a timing).
    g = good_client()
    deadline = time.monotonic() + 15
    while not g.ended_between(t1, deadline) and time.monotonic() < deadline:
        time.sleep(0.02)
    after = g.ended_between(t1, deadline)[:1]
    rs = g.ended_between(t0, t1) + after
    bad = [r for r in rs if not r.ok]
    assert rs, "the good client finished no call during the attack"
    assert not bad, f"good client failed during the attack: {bad[:3]}"
    print(f"#   good client: {len(rs)} GetState calls during the attack (and the first after), "
          f"all OK, p99 {p99_ms(rs)} ms")


# ---- tests ----------------------------------------------------------------

def test_rapid_reset():
    """HEADERS then RST_STREAM on one connection, no token: the connection
    is shut down, live calls return to baseline, RSS stays bounded, and the
    good client is served throughout."""
    good_client()
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1)
    rss0 = rss_kb(GW_PID)
    closed0 = metric(MPORT, "rpc_server_conns_closed_abuse_total")
    t0 = time.monotonic()
    # Bounded, then held open: the guard acts on what the core hands over,
    # which a starved (loaded, ASan) server may do only once a flood pauses.
    r = attack(TARGET, "--mode", "reset", "--source", "127.0.0.2", "--duration", "30",
               "--max-streams", "20000", "--linger", "20")
    t1 = time.monotonic()
    c = r["conns"][0]
    # Ended by the server (end of stream or reset), not by the attacker's
    # own time limit.
    assert c["closed"] in ("eof",) or str(c["closed"]).startswith(("reset", "goaway")), c
    assert metric(MPORT, "rpc_server_conns_closed_abuse_total") >= closed0 + 1
    assert metric(MPORT, "rpc_server_calls_reset_total") > 100
    assert_good_served(t0, t1)
    # Every call of the attack is freed: back to the good client's one.
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1, timeout=30)
    grown = (rss_kb(GW_PID) - rss0) // 1024
    print(f"#   connection survived {c['survived_ms']} ms after {c['streams']} streams; "
          f"gateway RSS grew {grown} MB")
    # The target is 64 MB. Under AddressSanitizer freed memory sits in its
    # quarantine (up to 256 MB) before it can be reused, so RSS there says
    # little beyond "bounded"; the benchmark measures the release build.
    bound = 64 + (256 if asan(GW_PID) else 0)
    assert grown < bound, f"gateway RSS grew {grown} MB (bound {bound} MB)"


def test_rapid_reset_tls():
    """The same attack over mutual TLS (rpc-ping-server with --tls-ca, a
    client certificate from the same CA): the guard shuts the TLS
    connection down the same way, and a TLS client from another address
    is served."""
    certs = os.environ["CERTS"]
    tls = ["--tls-ca", f"{certs}/ca.crt", "--tls-cert", f"{certs}/client.crt",
           "--tls-key", f"{certs}/client.key"]
    target = "127.0.0.1:" + os.environ["TLS_PORT"]
    # A bounded burst, then the connection is held open: on a loaded
    # machine the core can read a TLS flood faster than it hands the calls
    # over, so the guard may see them only after the burst (the survival
    # time printed says which).
    r = attack(target, "--mode", "reset", "--source", "127.0.0.11", "--duration", "30",
               "--max-streams", "5000", "--linger", "20",
               "--path", "/grpc.health.v1.Health/Check", *tls)
    c = r["conns"][0]
    assert c["closed"] == "eof" or str(c["closed"]).startswith(("reset", "goaway")), c
    r = attack(target, "--mode", "calls", "--source", "127.0.0.1", "--max-streams", "1",
               "--path", "/grpc.health.v1.Health/Check", "--hold", "1", *tls)
    assert r["statuses"] == {"0": 1} and r["with_data"] == 1, r


def test_penalty_box():
    """After the rapid reset, a new connection from the same address is
    shut down (a call that reaches the server first is refused with
    RESOURCE_EXHAUSTED penalty_box); the good client (another address) is
    not affected."""
    good_client()
    closed0 = metric(MPORT, "rpc_server_conns_closed_abuse_total")
    t0 = time.monotonic()
    r = attack(TARGET, "--mode", "calls", "--source", "127.0.0.2", "--max-streams", "1",
               "--path", "/grpc.health.v1.Health/Check", "--hold", "5")
    t1 = time.monotonic()
    # Either the call reached the server first (refused, with the reason)
    # or the periodic search for penalised connections cut it before.
    if r["statuses"]:
        assert r["statuses"] == {RESOURCE_EXHAUSTED: 1}, r
        assert r["reasons"] == {"penalty_box": 1}, r
    assert r["with_data"] == 0, r
    assert r["ended"].get("alive", 0) == 0, r  # the server ended it
    assert metric(MPORT, "rpc_server_conns_closed_abuse_total") > closed0
    assert metric(MPORT, "rpc_server_penalty_box_addresses") >= 1
    assert_good_served(t0, t1)


def test_reset_flood():
    """Reconnecting after every close from one address: each connection
    is cut at once (penalty box), the good client is served."""
    good_client()
    t0 = time.monotonic()
    r = attack(TARGET, "--mode", "flood", "--source", "127.0.0.6", "--duration", "30",
               "--max-streams", "30000", "--max-conns", "300", "--linger", "10")
    t1 = time.monotonic()
    assert r["connections"] >= 2, r
    # Every connection was ended by the server (the last one too, while the
    # attacker held it open after its last stream).
    assert r["ended"].get("alive", 0) == 0, r
    assert metric(MPORT, "rpc_server_calls_refused_total") > 0
    assert_good_served(t0, t1)
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1, timeout=30)


def test_reset_after_message():
    """The cousin that reaches the handler: HEADERS, a whole message, then
    RST_STREAM, on Health/Check (no token needed). A call whose reset the
    server reads before it answers counts as a reset and the connection is
    shut down as for the plain rapid reset (seen every time on the release
    build); a call answered before its reset arrives was a complete call,
    so on a starved server this is a plain request flood. Either way: the
    good client is served and every call is freed."""
    good_client()
    t0 = time.monotonic()
    r = attack(TARGET, "--mode", "reset", "--with-message", "--source", "127.0.0.10",
               "--path", "/grpc.health.v1.Health/Check", "--duration", "5")
    t1 = time.monotonic()
    c = r["conns"][0]
    print(f"#   connection ended: {c['closed'] or 'no (attacker stopped)'} after {c['survived_ms']} ms")
    assert_good_served(t0, t1)
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1, timeout=30)


def test_abandoned_streams():
    """The cousin the runtime cannot see: HEADERS without a message, never
    completed nor reset. The core holds such a call until its message
    comes, so HTTP/2's own bound applies: the server's
    MAX_CONCURRENT_STREAMS (1000) stops the client at 1000 open streams;
    the good client is served meanwhile, and nothing is left once the
    client goes."""
    good_client()
    t0 = time.monotonic()
    r = attack(TARGET, "--mode", "abandon", "--source", "127.0.0.9", "--max-streams", "1500",
               "--hold", "3", "--duration", "20")
    t1 = time.monotonic()
    c = r["conns"][0]
    assert r["streams"] == 1000 and c["stream_limit"] and c["closed"] is None, r
    assert_good_served(t0, t1)
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1, timeout=30)


def test_connection_bound():
    """25 Health/Watch streams on one connection of the tight gateway
    (--max-calls-per-connection=20): 20 are served, 5 are refused with
    RESOURCE_EXHAUSTED conn_calls_limit."""
    ec.wait_metric(TIGHT_MPORT, "rpc_server_calls_live", lambda v: v == 0)
    r = attack(TIGHT, "--mode", "calls", "--source", "127.0.0.3", "--max-streams", "25",
               "--path", WATCH, "--hold", "2")
    assert r["with_data"] == 20, r
    assert r["statuses"] == {RESOURCE_EXHAUSTED: 5}, r
    assert r["reasons"] == {"conn_calls_limit": 5}, r
    ec.wait_metric(TIGHT_MPORT, "rpc_server_calls_live", lambda v: v == 0, timeout=30)


def test_process_bound():
    """20 Watch streams held on one connection, then 15 on another: the
    tight gateway (--max-calls=30) serves 10 of those and refuses 5 with
    RESOURCE_EXHAUSTED server_calls_limit."""
    ec.wait_metric(TIGHT_MPORT, "rpc_server_calls_live", lambda v: v == 0)
    holder = attack_bg(TIGHT, "--mode", "calls", "--source", "127.0.0.4", "--max-streams", "20",
                       "--path", WATCH, "--hold", "20")
    try:
        ec.wait_metric(TIGHT_MPORT, "rpc_server_calls_live", lambda v: v >= 20, timeout=20)
        r = attack(TIGHT, "--mode", "calls", "--source", "127.0.0.5", "--max-streams", "15",
                   "--path", WATCH, "--hold", "2")
        assert r["with_data"] == 10, r
        assert r["statuses"] == {RESOURCE_EXHAUSTED: 5}, r
        assert r["reasons"] == {"server_calls_limit": 5}, r
    finally:
        holder.kill()
        holder.wait()
    ec.wait_metric(TIGHT_MPORT, "rpc_server_calls_live", lambda v: v == 0, timeout=30)


def test_disconnect_not_penalised():
    """A client that goes away with 150 calls in flight (all cancelled at
    once, like a burst of resets) is not an abuser: its address is not
    penalised and its next connection is served."""
    closed0 = metric(MPORT, "rpc_server_conns_closed_abuse_total")
    holder = attack_bg(TARGET, "--mode", "calls", "--source", "127.0.0.8", "--max-streams", "150",
                       "--path", WATCH, "--hold", "30")
    try:
        ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v >= 150, timeout=20)
    finally:
        holder.kill()
        holder.wait()
    ec.wait_metric(MPORT, "rpc_server_calls_live", lambda v: v <= 1, timeout=30)
    r = attack(TARGET, "--mode", "calls", "--source", "127.0.0.8", "--max-streams", "1",
               "--path", "/grpc.health.v1.Health/Check", "--hold", "2")
    assert r["statuses"] == {"0": 1} and r["with_data"] == 1, r
    assert metric(MPORT, "rpc_server_conns_closed_abuse_total") == closed0


def scrape(port, timeout=5):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as resp:
        assert resp.status == 200
        return resp.read().decode()


def test_metrics_slowloris():
    """64 connections from one address, each sending one byte of a request
    every 3 s: the address gets its few connections (the others are closed
    as they are accepted), and a scrape from another address succeeds
    throughout."""
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
    socks, closed = [], 0
    for _ in range(64):
        s = socket.socket()
        s.bind(("127.0.0.7", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", MPORT))
        socks.append(s)
    try:
        scrapes = 0
        for rnd in range(4):  # 4 bytes, 3 s apart: 12 s of slow-loris
            for s in socks:
                if s.fileno() < 0:
                    continue
                try:
                    s.send(request[rnd:rnd + 1])
                except OSError:
                    s.close()
                    closed += 1
            text = scrape(MPORT)  # raises if the endpoint is blinded
            assert "rpc_server_calls_live" in text
            scrapes += 1
            time.sleep(3)
        # Those still open: did the server close them? (EOF or reset.)
        for s in socks:
            if s.fileno() < 0:
                continue
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print(f"#   slow-loris: {closed} of 64 connections closed by the endpoint; "
              f"{scrapes} scrapes from 127.0.0.1 all succeeded")
        assert closed >= 64 - 8, f"only {closed} of 64 slow connections were closed"
    finally:
        for s in socks:
            s.close()
    scrape(MPORT)


TESTS = [test_rapid_reset, test_rapid_reset_tls, test_penalty_box, test_reset_flood, test_reset_after_message,
         test_abandoned_streams, test_connection_bound,
         test_process_bound, test_disconnect_not_penalised, test_metrics_slowloris]


def main():
    only = set(sys.argv[1:])
    passed = failed = 0
    try:
        for t in TESTS:
            if only and t.__name__ not in only:
                continue
            try:
                t()
                print(f"ok - {t.__name__}")
                passed += 1
            except Exception:
                print(f"not ok - {t.__name__}")
                traceback.print_exc()
                failed += 1
            sys.stdout.flush()
    finally:
        if GOOD is not None:
            GOOD.finish()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

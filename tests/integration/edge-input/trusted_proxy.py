#!/usr/bin/python3
"""x-real-ip from a trusted proxy keys the per-address Login throttle
(test_trusted_proxy.sh starts the gateways and passes their ports).

The test client connects from 127.0.0.1 and so stands in for the balancer:
- on the gateway with --trusted-proxies=127.0.0.1/32, Logins forwarded for
  client A exhaust A's bucket while client B is still served;
- a malformed x-real-ip falls back to the peer's own bucket;
- on the gateway without --trusted-proxies the header is ignored: A and B
  share the peer's bucket.
Every Login names a fresh unknown handle, so store-svc answers
bad_credentials (served) unless a throttle answers login_throttled first;
the budget is one token a minute, so no bucket refills while this runs.
"""
import os
import sys
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, run_tests  # noqa: E402

TRUSTED = f"127.0.0.1:{os.environ['TRUSTED_PORT']}"
TRUSTED_M = int(os.environ["TRUSTED_METRICS_PORT"])
UNTRUSTED = f"127.0.0.1:{os.environ['UNTRUSTED_PORT']}"
UNTRUSTED_M = int(os.environ["UNTRUSTED_METRICS_PORT"])
BURST = int(os.environ["LOGIN_BURST"])
SC = grpc.StatusCode


def login(target, real_ip):
    """One Login for a fresh unknown handle, x-real-ip set when real_ip is
    not None; returns 'served' (store-svc answered) or the throttle reason."""
    md = [] if real_ip is None else [("x-real-ip", real_ip)]
    e = Edge(target)
    try:
        e.call("Login", metadata=md, handle="tp" + uuid.uuid4().hex[:12], password="not this one")
        raise AssertionError("a Login for an unknown handle succeeded")
    except CallError as err:
        if err.code == SC.UNAUTHENTICATED and err.reason == "bad_credentials":
            return "served"
        assert err.code == SC.RESOURCE_EXHAUSTED and err.reason == "login_throttled", err
        return "login_throttled"
    finally:
        e.close()


def exhaust(target, real_ip):
    """Logins until the bucket says no: exactly BURST are served first."""
    got = [login(target, real_ip) for _ in range(BURST + 1)]
    assert got == ["served"] * BURST + ["login_throttled"], (real_ip, got)


def metric(port, source):
    return ec.metric(port, "gateway_client_address_total", f'source="{source}"') or 0.0


def test_trusted_forwarded_buckets():
    before = metric(TRUSTED_M, "forwarded")
    exhaust(TRUSTED, "203.0.113.10")
    assert login(TRUSTED, "203.0.113.10") == "login_throttled"
    # B, and an IPv6 client, have buckets of their own
    assert login(TRUSTED, "203.0.113.11") == "served"
    assert login(TRUSTED, "2001:db8::11") == "served"
    # an IPv4-mapped literal is the same client as its IPv4 address
    assert login(TRUSTED, "::ffff:203.0.113.10") == "login_throttled"
    assert metric(TRUSTED_M, "forwarded") - before == BURST + 5


def test_trusted_malformed_falls_back_to_peer():
    before = metric(TRUSTED_M, "forwarded_invalid")
    peer_before = metric(TRUSTED_M, "peer")
    bad = ["203.0.113.12:443", "203.0.113.12, 203.0.113.13", " 203.0.113.12", "unknown", ""]
    # the peer's bucket (127.0.0.1), whatever malformed value is sent
    got = [login(TRUSTED, bad[i % len(bad)]) for i in range(BURST + 1)]
    assert got == ["served"] * BURST + ["login_throttled"], got
    for v in bad:
        assert login(TRUSTED, v) == "login_throttled", v
    # the peer's bucket is the one that is empty: no header is throttled
    # too, while a well-formed forwarded client is still served
    assert login(TRUSTED, None) == "login_throttled"
    assert login(TRUSTED, "203.0.113.14") == "served"
    invalid = metric(TRUSTED_M, "forwarded_invalid") - before
    assert invalid == BURST + 1 + len(bad), invalid
    # a trusted peer without the header is counted as itself
    assert metric(TRUSTED_M, "peer") - peer_before == 1


def test_untrusted_ignores_header():
    before = metric(UNTRUSTED_M, "peer")
    exhaust(UNTRUSTED, "203.0.113.20")
    # B shares the peer's bucket: the header was not believed
    assert login(UNTRUSTED, "203.0.113.21") == "login_throttled"
    assert login(UNTRUSTED, None) == "login_throttled"
    assert metric(UNTRUSTED_M, "peer") - before == BURST + 3
    assert metric(UNTRUSTED_M, "forwarded") == 0
    assert metric(UNTRUSTED_M, "forwarded_invalid") == 0


if __name__ == "__main__":
    run_tests([test_trusted_forwarded_buckets, test_trusted_malformed_falls_back_to_peer,
               test_untrusted_ignores_header])

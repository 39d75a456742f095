#!/usr/bin/python3
"""A stand-in service for testing scripts/stack.sh without the real binaries.

Accepts the services' `--name=value` flags, answers grpc.health.v1.Health/Check
with SERVING on --listen, serves HTTP on --metrics-listen, exits 0 on SIGTERM.
FAKE_NAME sets the process name (what /proc/PID/comm shows).
"""
import ctypes
import http.server
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

if os.environ.get("FAKE_NAME"):
    ctypes.CDLL(None).prctl(15, os.environ["FAKE_NAME"].encode(), 0, 0, 0)
FAKE = os.environ.get("FAKE_NAME", "")
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
print("fake-svc args:", " ".join(sys.argv[1:]), flush=True)


class Health(grpc.GenericRpcHandler):
    def service(self, details):
        if details.method == "/grpc.health.v1.Health/Check":
            return grpc.unary_unary_rpc_method_handler(lambda req, ctx: b"\x08\x01")
        return None


server = grpc.server(futures.ThreadPoolExecutor(2))
server.add_generic_rpc_handlers((Health(),))
certs = flags.get("certs-dir")
internal = os.environ.get("FAKE_NAME") in ("game-svc", "store-svc") and "--insecure-internal" not in sys.argv
if certs and internal:
    # Like the real internal ports: mutual TLS with the service's identity.
    def read(name):
        with open(f"{certs}/{name}", "rb") as f:
            return f.read()
    creds = grpc.ssl_server_credentials([(read(f"{FAKE}.key"), read(f"{FAKE}.crt"))],
                                        root_certificates=read("ca.crt"), require_client_auth=True)
    bound = server.add_secure_port(flags["listen"], creds)
else:
    bound = server.add_insecure_port(flags["listen"])
if not bound:
    sys.exit(f"cannot listen on {flags['listen']}")
server.start()
host, port = flags["metrics-listen"].rsplit(":", 1)
metrics = http.server.HTTPServer((host, int(port)), http.server.BaseHTTPRequestHandler)
threading.Thread(target=metrics.serve_forever, daemon=True).start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
stop.wait()
server.stop(1)
print("fake-svc: SIGTERM, bye", flush=True)

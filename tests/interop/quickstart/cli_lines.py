#!/usr/bin/python3
"""Runs the grpcurl and ghz command lines of docs/quickstart/README.md
without grpcurl or ghz (neither is a Debian package), so the documented
lines cannot rot:

  - `grpcurl ... list` / `describe`: server reflection must list and
    describe the service (tests/interop/rpc_interop.py --expect);
  - `grpcurl [-H h] -d JSON ADDR pkg.Service/Method`: the JSON is parsed
    into the request message with protobuf's json_format (the same mapping
    grpcurl uses), the call is made with Debian's grpcio, and it must
    succeed; for a server stream, the stream must open;
  - `ghz ...`: run as `loadtest ghz` with the same flags; every call in
    its JSON report must be OK.

    cli_lines.py --readme FILE --addr HOST:PORT --token TOKEN --loadtest BIN

TOKEN belongs to a player of game 1 (the lines call GetState on it).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import grpc
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import edge_client as ec  # noqa: E402

DOC_ADDR = "127.0.0.1:7000"
MARKER = "tests/interop/quickstart/cli_lines.py"


def documented_lines(readme):
    """The command lines of the fenced block that follows the marker."""
    text = open(readme).read()
    at = text.index(MARKER)
    block = re.search(r"```sh\n(.*?)```", text[at:], re.S)
    return [ln.strip() for ln in block.group(1).splitlines() if ln.strip() and not ln.startswith("#")]


def parse_grpcurl(argv):
    opts = {"headers": [], "data": None, "rest": []}
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "-plaintext":
            pass
        elif a == "-H":
            i += 1
            opts["headers"].append(argv[i])
        elif a == "-d":
            i += 1
            opts["data"] = argv[i]
        elif a.startswith("-"):
            raise ValueError(f"the test does not know grpcurl flag {a}")
        else:
            opts["rest"].append(a)
        i += 1
    return opts


def message_class(name):
    """`AuthReply` or `common:Profile` (edge_client's table) -> class."""
    return getattr(ec.common_pb2, name[7:]) if name.startswith("common:") else getattr(ec.edge_pb2, name)


def run_grpcurl(line, argv, addr, state):
    o = parse_grpcurl(argv)
    if o["rest"][1:2] == ["list"] or o["rest"][1:2] == ["describe"]:
        if not state.get("reflection_checked"):
            p = subprocess.run([sys.executable, os.path.join(HERE, "..", "rpc_interop.py"), "--addr", addr,
                                "--expect", "scrabble.v1.Edge"], capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                raise AssertionError(f"reflection check failed:\n{p.stdout}{p.stderr}")
            state["reflection_checked"] = True
        return "reflection lists and describes scrabble.v1.Edge"
    target, full = o["rest"]
    service, method = full.split("/")
    if service != "scrabble.v1.Edge":
        raise ValueError(f"the test only knows scrabble.v1.Edge, not {service}")
    md = [tuple(x.strip() for x in h.split(":", 1)) for h in o["headers"]]
    md = [(k.lower(), v) for k, v in md]
    ch = grpc.insecure_channel(target)
    try:
        if method == "Subscribe":
            f = ch.unary_stream("/scrabble.v1.Edge/Subscribe",
                                request_serializer=ec.edge_pb2.SubscribeRequest.SerializeToString,
                                response_deserializer=ec.common_pb2.Event.FromString)
            req = json_format.Parse(o["data"] or "{}", ec.edge_pb2.SubscribeRequest())
            call = f(req, metadata=md)
            call.initial_metadata()  # the stream is registered
            if call.done() and call.code() != grpc.StatusCode.OK:
                raise AssertionError(f"{line}: {call.code().name} {call.details()}")
            call.cancel()
            return "stream opened"
        req_name, rep_name = ec.METHODS[method]
        req = json_format.Parse(o["data"] or "{}", message_class(req_name)())
        f = ch.unary_unary(f"/scrabble.v1.Edge/{method}", request_serializer=req.SerializeToString,
                           response_deserializer=message_class(rep_name).FromString)
        try:
            reply = f(req, metadata=md, timeout=10)
        except grpc.RpcError as e:
            raise AssertionError(f"{line}\n  -> {e.code().name} reason={ec.reason_of(e)} {e.details()}") from None
        return json.dumps(json_format.MessageToDict(reply, preserving_proto_field_name=True))[:160]
    finally:
        ch.close()


def run_ghz(argv, loadtest, tmp):
    out = os.path.join(tmp, "ghz.json")
    p = subprocess.run([loadtest, "ghz"] + argv + ["-O", "json", "-o", out], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"loadtest ghz exit {p.returncode}:\n{p.stdout}{p.stderr}")
    d = json.load(open(out))
    if set(d["statusCodeDistribution"]) != {"OK"}:
        raise AssertionError(f"not every call OK: {d['statusCodeDistribution']} {d['errorDistribution']}")
    return f"{d['count']} calls OK"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True)
    ap.add_argument("--addr", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--loadtest", required=True)
    a = ap.parse_args()
    state, failures = {}, 0
    tmp = tempfile.mkdtemp(prefix="cli-lines-")
    lines = documented_lines(a.readme)
    assert lines, "no documented command lines found"
    for line in lines:
        concrete = line.replace(DOC_ADDR, a.addr).replace("$TOKEN", a.token)
        argv = shlex.split(concrete)
        try:
            if argv[0] == "grpcurl":
                what = run_grpcurl(line, argv, a.addr, state)
            elif argv[0] == "ghz":
                what = run_ghz(argv[1:], a.loadtest, tmp)
            else:
                raise ValueError(f"unknown command {argv[0]}")
            print(f"ok   {line}\n       {what}")
        except (AssertionError, ValueError, KeyError) as e:
            failures += 1
            print(f"FAIL {line}\n       {e}")
    print(f"cli lines: {len(lines) - failures} ok, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

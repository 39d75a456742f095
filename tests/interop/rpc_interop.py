#!/usr/bin/python3
"""Interop check of one of our gRPC servers with a third-party client.

Debian's python3-grpcio (a different gRPC implementation from the C core
our servers use at the HTTP/2 layer's edges) checks, with no generated stubs:
health Check, server reflection (list_services, file_containing_symbol,
parsed with protobuf's own descriptor classes), an unknown method
(UNIMPLEMENTED), a body that is not a valid message (INVALID_ARGUMENT with
the scrabble-reason trailer), and -- when it starts the server itself --
that SIGTERM drains and exits 0.

    rpc_interop.py --server BINARY [ARGS...]   # starts it on a free port
    rpc_interop.py --addr 127.0.0.1:7000 --expect scrabble.v1.Edge
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

import grpc
from google.protobuf import descriptor_pb2

IDENT = dict(request_serializer=lambda b: b, response_deserializer=lambda b: b)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def parse_fields(data):
    """Yields (field, wiretype, value) of one protobuf message."""
    i = 0
    while i < len(data):
        key = 0
        shift = 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        f, wt = key >> 3, key & 7
        if wt == 0:
            v = 0
            shift = 0
            while True:
                b = data[i]
                i += 1
                v |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            yield f, wt, v
        elif wt == 2:
            n = 0
            shift = 0
            while True:
                b = data[i]
                i += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            yield f, wt, data[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type %d" % wt)


def reason_of(err):
    for md in err.trailing_metadata() or ():
        if md.key == "scrabble-reason":
            return md.value
    return None


def run_checks(addr, expect):
    ch = grpc.insecure_channel(addr)
    grpc.channel_ready_future(ch).result(timeout=10)

    health = ch.unary_unary("/grpc.health.v1.Health/Check", **IDENT)
    resp = health(b"", timeout=5)
    check(list(parse_fields(resp)) == [(1, 0, 1)], "health Check says SERVING")

    refl = ch.stream_stream(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", **IDENT)
    reqs = [field_bytes(7, b"*")]  # list_services
    for svc in expect:
        reqs.append(field_bytes(4, svc.encode()))  # file_containing_symbol
    answers = list(refl(iter(reqs), timeout=10))
    check(len(answers) == len(reqs), "reflection answers every request")
    services = []
    for f, _, v in parse_fields(answers[0]):
        if f == 6:  # list_services_response
            for f2, _, svc in parse_fields(v):
                if f2 == 1:
                    services.append(dict((a, c) for a, _, c in parse_fields(svc))[1].decode())
    check("grpc.health.v1.Health" in services, "list_services names grpc.health.v1.Health")
    for svc, answer in zip(expect, answers[1:]):
        check(svc in services, "list_services names " + svc)
        files = []
        for f, _, v in parse_fields(answer):
            if f == 4:  # file_descriptor_response
                for f2, _, fd in parse_fields(v):
                    if f2 == 1:
                        p = descriptor_pb2.FileDescriptorProto()
                        p.ParseFromString(fd)
                        files.append(p)
        pkg, name = svc.rsplit(".", 1)
        found = any(p.package == pkg and name in [s.name for s in p.service] for p in files)
        check(found, "file_containing_symbol(%s) returns its descriptor" % svc)
        check(any(p.name == "scrabble/v1/common.proto" for p in files) or "grpc" in svc,
              "dependencies of %s are included" % svc)

    try:
        ch.unary_unary("/no.such.Service/Nope", **IDENT)(b"", timeout=5)
        check(False, "unknown method fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNIMPLEMENTED, "unknown method -> UNIMPLEMENTED")

    try:
        health(b"\x0a\x7f\x61", timeout=5)  # a string field running past the end
        check(False, "invalid body fails")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and reason_of(e) == "bad_request",
              "invalid body -> INVALID_ARGUMENT bad_request")
    ch.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", nargs=argparse.REMAINDER)
    ap.add_argument("--addr")
    ap.add_argument("--expect", action="append", default=[])
    args = ap.parse_args()
    if args.addr:
        run_checks(args.addr, args.expect)
    elif args.server:
        port = free_port()
        cmd = args.server + ["--listen=127.0.0.1:%d" % port, "--metrics-listen="]
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
        try:
            run_checks("127.0.0.1:%d" % port, args.expect)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = -9
        check(rc == 0, "SIGTERM drains and exits 0")
    else:
        ap.error("--server or --addr")
    print("interop: %s" % ("all checks passed" if not failures else "%d failed" % len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

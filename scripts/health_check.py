#!/usr/bin/python3
"""grpc.health.v1.Health/Check against ADDR, without generated stubs.

usage: health_check.py HOST:PORT [SERVICE] [--timeout SECONDS] [--certs-dir DIR]
With --certs-dir, mutual TLS as the probe identity (DIR/probe.{crt,key},
DIR/ca.crt), as internal ports require. Exit 0 when the status is SERVING, 1 otherwise (prints the status or error).
"""
import sys


def encode_request(service: str) -> bytes:
    # HealthCheckRequest { string service = 1; }
    if not service:
        return b""
    data = service.encode()
    assert len(data) < 128
    return b"\x0a" + bytes([len(data)]) + data


def decode_status(resp: bytes) -> int:
    # HealthCheckResponse { ServingStatus status = 1; } (varint)
    i = 0
    while i < len(resp):
        key = resp[i]
        i += 1
        if key == 0x08:
            value, shift = 0, 0
            while True:
                b = resp[i]
                i += 1
                value |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    return value
        return -1  # unexpected field
    return 0  # status omitted: UNKNOWN


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    certs = None
    if "--certs-dir" in argv:
        certs = argv[argv.index("--certs-dir") + 1]
        args = [a for a in args if a != certs]
    timeout = 2.0
    if "--timeout" in argv:
        timeout = float(argv[argv.index("--timeout") + 1])
        args = [a for a in args if a != argv[argv.index("--timeout") + 1]]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    addr, service = args[0], (args[1] if len(args) > 1 else "")
    import grpc

    names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
    try:
        if certs:
            def read(name):
                with open(f"{certs}/{name}", "rb") as f:
                    return f.read()
            creds = grpc.ssl_channel_credentials(read("ca.crt"), read("probe.key"), read("probe.crt"))
            channel = grpc.secure_channel(addr, creds)
        else:
            channel = grpc.insecure_channel(addr)
        with channel:
            check = channel.unary_unary("/grpc.health.v1.Health/Check")
            status = decode_status(check(encode_request(service), timeout=timeout))
    except grpc.RpcError as e:
        print(f"{addr}: {e.code().name}: {e.details()}")
        return 1
    print(f"{addr}: {names.get(status, status)}")
    return 0 if status == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env bash
# Instructions per call of the runtime vs a bare C-core server, counted by
# valgrind's callgrind: unlike CPU seconds, the count does not depend on
# what else the machine is doing.
#
#   scripts/bench/rpc_instructions.sh [BUILD_DIR]
#
# Each server runs under callgrind twice, serving N1 and then N2 calls of
# /grpc.health.v1.Health/Check (h2load -c 4 -m 16); (Ir(N2) - Ir(N1)) /
# (N2 - N1) is the cost of one call with start-up and shutdown cancelled
# out. Loopback only; bounded by N2 calls per run.
set -euo pipefail
build=${1:-build}
bin=$build/bin
n1=${N1:-5000}
n2=${N2:-15000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '\x00\x00\x00\x00\x00' >"$tmp/body"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# measure NAME N CMD... -> prints total instructions; "PORT" in CMD is
# replaced by a free port.
measure() {
    local name=$1 n=$2 port
    shift 2
    port=$(free_port)
    local out="$tmp/$name.$n.out"
    local cmd=("${@//PORT/$port}")
    valgrind --tool=callgrind --callgrind-out-file="$out" "${cmd[@]}" >/dev/null 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.2
    done
    h2load -n "$n" -c 4 -m 16 -d "$tmp/body" -H 'content-type: application/grpc' -H 'te: trailers' \
        "http://127.0.0.1:$port/grpc.health.v1.Health/Check" >"$tmp/h2load.$name.$n" 2>&1
    grep -q "$n succeeded" "$tmp/h2load.$name.$n" || { echo "$name: not every call succeeded" >&2; cat "$tmp/h2load.$name.$n" >&2; }
    kill -TERM "$pid"
    wait "$pid" || true
    awk '/^(summary|totals):/ {print $2; exit}' "$out"
}

echo "instructions per call (callgrind, (Ir($n2) - Ir($n1)) / $((n2 - n1)))"
for name in bare runtime; do
    if [ $name = bare ]; then
        cmd=("$bin/bare-echo" PORT 1)
    else
        cmd=("$bin/rpc-ping-server" --workers=1 --metrics-listen= --listen=127.0.0.1:PORT)
    fi
    i1=$(measure "$name" "$n1" "${cmd[@]}")
    i2=$(measure "$name" "$n2" "${cmd[@]}")
    echo "$name $(( (i2 - i1) / (n2 - n1) ))"
done

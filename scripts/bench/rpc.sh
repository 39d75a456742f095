#!/usr/bin/env bash
# Runtime cost per call, side by side with a bare C-core server, in one run.
#
#   scripts/bench/rpc.sh [BUILD_DIR] [REQUESTS] [ROUNDS]
#
# Both servers answer /grpc.health.v1.Health/Check (empty request, 2-byte
# reply) on one worker thread: bare-echo straight on the batch API,
# rpc-ping-server through rpc/ (state machine, arena, decode/encode,
# metrics). h2load drives each with the same load (-c 16 -m 64); CPU comes
# from /proc/PID/stat (utime+stime) of the server process. Rounds alternate
# the two servers so machine noise hits both alike. Loopback only; every
# round is bounded by REQUESTS.
set -euo pipefail
build=${1:-build}
n=${2:-200000}
rounds=${3:-3}
bin=$build/bin
hz=$(getconf CLK_TCK)
body=$(mktemp)
printf '\x00\x00\x00\x00\x00' >"$body"
trap 'rm -f "$body"; kill $bare_pid $rt_pid 2>/dev/null || true' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

p1=$(free_port); p2=$(free_port)
"$bin/bare-echo" "$p1" 1 >/dev/null &
bare_pid=$!
"$bin/rpc-ping-server" --listen="127.0.0.1:$p2" --workers=1 --metrics-listen= 2>/dev/null &
rt_pid=$!
sleep 1

run() { # name port pid
    local t0 t1 out rps
    t0=$(cpu_ticks "$3")
    out=$(h2load -n "$n" -c 16 -m 64 -d "$body" -H 'content-type: application/grpc' -H 'te: trailers' \
        "http://127.0.0.1:$2/grpc.health.v1.Health/Check" 2>&1)
    t1=$(cpu_ticks "$3")
    rps=$(echo "$out" | awk '/finished in/ {print $4}')
    ok=$(echo "$out" | awk '/^requests:/ {print $8}')
    awk -v name="$1" -v rps="$rps" -v ticks=$((t1 - t0)) -v hz="$hz" -v n="$n" -v ok="$ok" \
        'BEGIN { printf "%-8s req/s=%9.0f  cpu_us_per_call=%6.2f  succeeded=%s\n", name, rps, ticks / hz * 1e6 / n, ok }'
}

echo "requests per round: $n, h2load -c 16 -m 64, one server worker thread"
for r in $(seq "$rounds"); do
    run bare "$p1" "$bare_pid"
    run runtime "$p2" "$rt_pid"
done

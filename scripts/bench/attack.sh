#!/usr/bin/env bash
# HTTP/2 rapid reset (CVE-2023-44487) against the gateway, figures only
# (docs/SECURITY.md, "Stream abuse and the HTTP endpoints"):
#
#  1. against a stack started with scripts/stack.sh at PORT_OFFSET (started
#     here if it is not running): a well-behaved GetState client for BASE
#     seconds with no attack, then DUR seconds (10..30) of one attacking
#     process (flood: HEADERS + RST_STREAM without a token, reconnecting
#     whenever the gateway closes the connection), then 10 s more; prints
#     RSS growth during and 10 s after, the good client's p99 with and
#     without the attack, how long the attacker's connections survived,
#     and the gateway's CPU per attack stream (scripts/bench/attack.py);
#  2. the same single-connection reset stream, a fixed number of streams,
#     against a gateway with the guard off (--max-resets=0
#     --abuse-penalty=0) and against bare-echo (the C core alone, 2
#     threads): CPU per reset stream, and RSS growth, where nothing closes
#     the connection.
#
#   PORT_OFFSET=1000 VAR_DIR=$PWD/var BUILD_DIR=build-rel scripts/bench/attack.sh
#
# Env: BASE (10 s), DUR (15 s), STREAMS (100000, part 2). Loopback only;
# every attack is bounded in time and streams.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$REPO/scripts/lib.sh"
: "${PORT_OFFSET:?set PORT_OFFSET (the stack to attack; e.g. 1000)}"
export PORT_OFFSET BUILD_DIR=$(abspath "${BUILD_DIR:-$REPO/build-rel}") VAR_DIR=${VAR_DIR:-$REPO/var}
export SKIP_BUILD=${SKIP_BUILD:-1}
ATTACK=$REPO/tests/integration/edge-abuse/h2_attack.py
STREAMS=${STREAMS:-100000}
/usr/bin/python3 -c 'import h2' || die "python3-h2 is missing (scripts/install-deps.sh)"

"$REPO/scripts/stack.sh" start >/dev/null
gw_port=$((7000 + PORT_OFFSET)) gw_mport=$((9000 + PORT_OFFSET))
gw_pid=$(cat "$VAR_DIR/run/gateway-0.pid")
echo "== 1. flood of rapid-reset connections against gateway-0 (127.0.0.1:$gw_port, pid $gw_pid, $BUILD_DIR)"
TARGET=127.0.0.1:$gw_port MPORT=$gw_mport GW_PID=$gw_pid ATTACK=$ATTACK \
    /usr/bin/python3 "$HERE/attack.py"

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss_kb() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# One connection, STREAMS resets, nothing closing it; $1 label, $2 pid, $3 port, $4 path.
one_conn() {
    local c0 r0 out c1 r1 n
    c0=$(cpu_ticks "$2") r0=$(rss_kb "$2")
    out=$(/usr/bin/python3 "$ATTACK" --target "127.0.0.1:$3" --mode reset --source 127.0.0.3 \
        --duration 30 --max-streams "$STREAMS" --path "$4")
    sleep 2 # let the server retire what it queued
    c1=$(cpu_ticks "$2") r1=$(rss_kb "$2")
    n=$(echo "$out" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["streams"])')
    echo "$1: $n streams on one connection; CPU $(((c1 - c0) * 1000 / hz)) ms =" \
        "$(((c1 - c0) * 1000000 / hz / (n > 0 ? n : 1))) us per stream; RSS +$(((r1 - r0) / 1024)) MB"
}

echo "== 2. one connection, $STREAMS reset streams, nothing closing it"
bare_port=$(free_port)
"$BUILD_DIR/bin/bare-echo" "$bare_port" 2 >/dev/null &
pids+=($!)
bare_pid=$!
open_port=$(free_port) open_mport=$(free_port)
mapfile -t args < <(svc_args_gateway "$open_port" "$open_mport" $((7200 + PORT_OFFSET)) $((56379 + PORT_OFFSET)) $((7100 + PORT_OFFSET)))
"$BUILD_DIR/bin/gateway" "${args[@]}" --max-resets=0 --abuse-penalty=0 --log-level=warn \
    2>/dev/null &
pids+=($!)
open_pid=$!
wait_healthy "$BUILD_DIR" "$bare_port" 10 "$bare_pid" 2>/dev/null || sleep 1
wait_healthy "$BUILD_DIR" "$open_port" 20 "$open_pid"
one_conn "bare-echo (C core alone)      " "$bare_pid" "$bare_port" /grpc.health.v1.Health/Check
one_conn "gateway, guard off            " "$open_pid" "$open_port" /scrabble.v1.Edge/GetState
echo "(the stack stays up: PORT_OFFSET=$PORT_OFFSET VAR_DIR=$VAR_DIR scripts/stack.sh stop)"

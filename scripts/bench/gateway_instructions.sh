#!/usr/bin/env bash
# The gateway's figures 1 and 2 as instructions per call, counted by
# valgrind's callgrind: unlike CPU seconds, the count does not depend on
# what else the shared machine is doing. Same stack and same peers as
# gateway.sh, one worker thread each:
#
#   - a second gateway (the one under callgrind) on the stack's store-svc,
#     game-svc and Redis;
#   - bare-echo (OK reply), bare-echo fail (the limiter's RESOURCE_EXHAUSTED
#     status, details and trailer), bare-forward (the same GetState bytes to
#     the same game-svc).
#
#   BUILD_DIR=build-rel scripts/bench/gateway_instructions.sh [CALLS]
#
# Each server is warmed with 1,000 calls, its counters zeroed
# (callgrind_control -z), then CALLS calls are made (h2load -c 4 -m 4, the
# same headers for every server, alice's token included) and the counters
# dumped: instructions / CALLS is the cost of one call. Loopback only;
# bounded by CALLS + 1,000 calls per server.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
calls=${1:-10000}
GATEWAY_WORKERS=1
. "$HERE/gateway_setup.sh"

# start NAME PORT CMD... : CMD under callgrind, waits for PORT to listen.
start() {
    local name=$1 port=$2
    shift 2
    svc_start "$name" "$(command -v valgrind)" --tool=callgrind \
        --callgrind-out-file="$STACK_TMP/cg.$name" "$@"
    eval "pid_${name//-/_}=$SVC_PID"
    wait_port 127.0.0.1 "$port" 60 || {
        echo "$name did not start" >&2
        exit 1
    }
}
# count NAME PORT PATH BODY -> instructions per call
count() {
    local pid_var="pid_${1//-/_}" out
    local h=(-H 'content-type: application/grpc' -H 'te: trailers' -H "authorization: Bearer $token")
    h2load -n 1000 -c 4 -m 4 -t 1 -d "$4" "${h[@]}" "http://127.0.0.1:$2$3" >/dev/null 2>&1
    callgrind_control -z "${!pid_var}" >/dev/null 2>&1
    out=$(h2load -n "$calls" -c 4 -m 4 -t 1 -d "$4" "${h[@]}" "http://127.0.0.1:$2$3" 2>&1)
    grep -q "$calls succeeded" <<<"$out" || echo "$1: not every call succeeded" >&2
    callgrind_control -d "${!pid_var}" >/dev/null 2>&1
    sleep 1
    awk -v n="$calls" '/^(summary|totals):/ {t = $2} END {printf "%.0f", t / n}' "$STACK_TMP"/cg."$1".*
    rm -f "$STACK_TMP"/cg."$1".*
}

gw_port=$(free_port) gw_metrics=$(free_port)
bare_port=$(free_port) fail_port=$(free_port) fwd_port=$(free_port)
start gateway "$gw_port" "$BUILD_DIR/bin/gateway" "--listen=127.0.0.1:$gw_port" \
    "--metrics-listen=127.0.0.1:$gw_metrics" "--store=127.0.0.1:$STORE_PORT" \
    "--games=127.0.0.1:${GAME_PORTS%%,*}" "--redis=127.0.0.1:$REDIS_PORT" "--redis-secrets=$SECRETS_DIR" \
    --rate-read=1000000 --burst-read=1000000 --workers=1 --log-level=warn
start bare-echo "$bare_port" "$BUILD_DIR/bin/bare-echo" "$bare_port" 1
start bare-fail "$fail_port" "$BUILD_DIR/bin/bare-echo" "$fail_port" 1 fail
start bare-forward "$fwd_port" "$BUILD_DIR/bin/bare-forward" "$fwd_port" \
    "127.0.0.1:${GAME_PORTS%%,*}" /scrabble.v1.Edge/GetState /scrabble.v1.Game/GetState 1 \
    "scrabble-account-id=$alice_id" scrabble-handle=alice

echo "instructions per call (callgrind, $calls calls after 1,000 to warm up; one worker thread each)"
hammer=$(count gateway "$gw_port" /scrabble.v1.Edge/ListGames "$body_list")
fail=$(count bare-fail "$fail_port" /grpc.health.v1.Health/Check "$body_list")
echo=$(count bare-echo "$bare_port" /grpc.health.v1.Health/Check "$body_list")
fwd_gw=$(count gateway "$gw_port" /scrabble.v1.Edge/GetState "$state")
fwd_bare=$(count bare-forward "$fwd_port" /scrabble.v1.Edge/GetState "$state")
awk -v h="$hammer" -v f="$fail" -v e="$echo" -v g="$fwd_gw" -v b="$fwd_bare" 'BEGIN {
    printf "1. gateway ListGames rejected    %7d\n", h
    printf "   bare-echo fail (same reply)    %7d   gateway / bare-echo fail = %.3f\n", f, h / f
    printf "   bare-echo (OK reply)           %7d   gateway / bare-echo = %.3f\n", e, h / e
    printf "2. gateway GetState forwarded    %7d   gateway / bare-echo = %.3f (target <= 2)\n", g, g / e
    printf "   bare-forward GetState          %7d   bare-forward / bare-echo = %.3f\n", b, b / e
    printf "   gateway / bare-forward = %.3f\n", g / b
}'

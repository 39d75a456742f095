#!/usr/bin/env bash
# Gateway figures on a private full stack (Postgres, Redis, store-svc,
# game-svc, gateway), each side by side in one round with the smallest C-core
# server doing the same wire exchange, so the gateway's own cost shows apart
# from the C core's:
#
#  1. the hammer path: ListGames far over one account's budget from many
#     streams -> rejected calls per gateway CPU-second (target >= 50,000),
#     against `bare-echo ... fail` (the core answering every call with the
#     same RESOURCE_EXHAUSTED status, details and trailer) and plain
#     bare-echo (an OK reply);
#  2. a forwarded call: GetState on a warm game -> gateway CPU per call
#     against bare-echo's CPU per call (target: within 2x) and against
#     bare-forward (the core forwarding the same bytes to the same game-svc
#     with nothing else), at a fixed 16,000 calls/s (16 clients x 1,000/s)
#     and saturated (queueing adds cost to a forwarder that a fixed rate
#     below capacity does not).
#
#   BUILD_DIR=build-rel scripts/bench/gateway.sh [REQUESTS] [ROUNDS]
#
# CPU is utime+stime of each server from /proc. Every server runs 2 worker
# threads. Loopback only; every h2load run is bounded by REQUESTS.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
n=${1:-200000}
rounds=${2:-2}
. "$HERE/gateway_setup.sh"
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

# The C-core peers, 2 threads each like the gateway. bare-forward sends
# the identity metadata the gateway would add for alice.
bare_port=$(free_port) fail_port=$(free_port) fwd_port=$(free_port)
"$BUILD_DIR/bin/bare-echo" "$bare_port" 2 >/dev/null &
bare_pid=$!
"$BUILD_DIR/bin/bare-echo" "$fail_port" 2 fail >/dev/null &
fail_pid=$!
"$BUILD_DIR/bin/bare-forward" "$fwd_port" "127.0.0.1:${GAME_PORTS%%,*}" /scrabble.v1.Edge/GetState \
    /scrabble.v1.Game/GetState 2 "scrabble-account-id=$alice_id" scrabble-handle=alice >/dev/null &
fwd_pid=$!
stack_defer "kill $bare_pid $fail_pid $fwd_pid"
sleep 0.5

RATE_ARGS=(-c 32 -m 64 -t 2) # saturated; the fixed-rate rounds switch this
# Every server gets the same request headers, alice's token included: h2load
# never indexes `authorization` in HPACK, so each request carries it
# Huffman-coded and decoding it is part of every server's cost.
h2() { # port path body -> "rps succeeded failed"
    h2load -n "$n" "${RATE_ARGS[@]}" -d "$3" -H 'content-type: application/grpc' -H 'te: trailers' \
        -H "authorization: Bearer $token" "http://127.0.0.1:$1$2" 2>&1 |
        awk '/finished in/ {rps=$4} /^requests:/ {ok=$8; f=$10} END {print rps, ok, f}'
}
measure() { # name pid port path body -> a line; LAST_US = CPU µs per call
    local t0 t1 r
    t0=$(cpu_ticks "$2")
    r=$(h2 "$3" "$4" "$5")
    t1=$(cpu_ticks "$2")
    set -- "$1" $r $((t1 - t0))
    LAST_US=$(awk -v ticks="$5" -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", ticks / hz * 1e6 / n }')
    awk -v name="$1" -v rps="$2" -v ok="$3" -v ticks="$5" -v hz="$hz" -v n="$n" \
        'BEGIN { cpu = ticks / hz; printf "  %-24s req/s=%7.0f  answered=%s  cpu_s=%6.2f  calls_per_cpu_s=%7.0f  cpu_us_per_call=%6.1f\n", name, rps, ok, cpu, n / cpu, cpu * 1e6 / n }'
}
ratio() { awk -v a="$2" -v b="$3" -v name="$1" 'BEGIN { printf "    %s = %.2f\n", name, a / b }'; }

metric() { curl -s "127.0.0.1:$GATEWAY_METRICS_PORT/metrics" | awk -v m="$1" 'index($0, m) == 1 {s += $NF} END {print s + 0}'; }
# measure_gateway NAME PATH BODY SERIES WHAT: measure the gateway, then say
# how many calls the SERIES counter saw (proof of what the calls did).
measure_gateway() {
    local before after
    before=$(metric "$4")
    measure "$1" "$gw_pid" "$GATEWAY_PORT" "$2" "$3"
    after=$(metric "$4")
    echo "    $5: $((after - before)) of $n"
}

echo "game $game; $n calls per run; gateway 2 workers, every C-core peer 2 threads; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1. hammer: ListGames over budget, h2load -c 32 -m 64 -t 2 (saturated)"
for r in $(seq "$rounds"); do
    measure_gateway "gateway ListGames" /scrabble.v1.Edge/ListGames "$body_list" \
        gateway_rate_limited_total "rejected by the limiter"
    gw=$LAST_US
    # The same status, details and trailer, from the bare core.
    measure "bare-echo fail" "$fail_pid" "$fail_port" /grpc.health.v1.Health/Check "$body_list"
    fail=$LAST_US
    measure "bare-echo" "$bare_pid" "$bare_port" /grpc.health.v1.Health/Check "$body_list"
    ratio "gateway rejection / bare-echo fail" "$gw" "$fail"
    ratio "gateway rejection / bare-echo" "$gw" "$LAST_US"
done

forward_rounds() { # label
    for r in $(seq "$rounds"); do
        measure_gateway "gateway GetState $1" /scrabble.v1.Edge/GetState "$state" \
            'rpc_server_calls_total{method="/scrabble.v1.Edge/GetState",code="OK"}' \
            "forwarded and answered OK"
        gw=$LAST_US
        measure "bare-forward GetState $1" "$fwd_pid" "$fwd_port" /scrabble.v1.Edge/GetState "$state"
        fwd=$LAST_US
        measure "bare-echo $1" "$bare_pid" "$bare_port" /grpc.health.v1.Health/Check "$body_list"
        ratio "gateway / bare-echo (target <= 2)" "$gw" "$LAST_US"
        ratio "gateway / bare-forward" "$gw" "$fwd"
        ratio "bare-forward / bare-echo" "$fwd" "$LAST_US"
    done
}
echo "2a. forwarded GetState at a fixed 16,000 calls/s (h2load -c 16 -m 8 -t 2 --rps=1000)"
RATE_ARGS=(-c 16 -m 8 -t 2 --rps=1000)
forward_rounds @16k
echo "2b. forwarded GetState saturated (h2load -c 32 -m 64 -t 2)"
RATE_ARGS=(-c 32 -m 64 -t 2)
forward_rounds saturated

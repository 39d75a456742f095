#!/usr/bin/env bash
# The cost of trace context (rpc/trace.h) per forwarded call, side by side:
# three gateways on one private full stack (gateway_setup.sh), identical but
# for their tracing flags, forwarding the same GetState to the same game-svc:
#
#   off    --trace=false                    no ids, no traceparent, no trailer
#   ids    --trace=true --trace-sample=0    ids made and propagated, no span lines
#   spans  --trace=true --trace-sample=1    ids, and a span line for every call
#
# plus "ids, client sends traceparent" (the header parsed and continued).
# Span export to a collector is not built, so there is no export row.
#
#   BUILD_DIR=build-rel scripts/bench/trace.sh [CALLS] [ROUNDS]
#
# 1. Instructions per call (callgrind, one worker each): CALLS calls after
#    1,000 to warm up; independent of the machine's load.
# 2. CPU µs per call (/proc utime+stime of the gateway, 2 workers) at a
#    fixed 16,000 calls/s (h2load -c 16 -m 8 --rps=1000), 4*CALLS calls per
#    run, the three gateways one after the other in each of ROUNDS rounds.
# Loopback only; every h2load run is bounded by its call count.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
calls=${1:-5000}
rounds=${2:-3}
GATEWAY_WORKERS=2
. "$HERE/gateway_setup.sh"
hz=$(getconf CLK_TCK)
tp="00-$(openssl rand -hex 16)-$(openssl rand -hex 8)-01"
H=(-H 'content-type: application/grpc' -H 'te: trailers' -H "authorization: Bearer $token")

# gateway NAME WRAPPER... -- FLAGS...: a gateway on the stack's backends.
gateway() {
    local name=$1 port mport
    shift
    local wrap=()
    while [ "$1" != "--" ]; do
        wrap+=("$1")
        shift
    done
    shift
    port=$(free_port) mport=$(free_port)
    svc_start "gw-$name" "${wrap[@]}" "$BUILD_DIR/bin/gateway" "--listen=127.0.0.1:$port" \
        "--metrics-listen=127.0.0.1:$mport" "--store=127.0.0.1:$STORE_PORT" \
        "--games=127.0.0.1:${GAME_PORTS%%,*}" "--redis=127.0.0.1:$REDIS_PORT" \
        "--redis-secrets=$SECRETS_DIR" --rate-read=1000000 --burst-read=1000000 --log-level=info "$@"
    wait_port 127.0.0.1 "$port" 60 || {
        echo "gateway $name did not start" >&2
        exit 1
    }
    eval "port_$name=$port pid_$name=$SVC_PID"
}
VARIANTS=(off ids spans)
flags_off=(--trace=false)
flags_ids=(--trace=true --trace-sample=0)
flags_spans=(--trace=true --trace-sample=1)

echo "game $game; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1. instructions per forwarded GetState (callgrind, $calls calls after 1,000; one worker each)"
cg_count() { # name port [extra headers...] -> instructions per call
    local name=$1 port=$2 pid_var="pid_$1" out
    shift 2
    h2load -n 1000 -c 4 -m 4 -t 1 -d "$state" "${H[@]}" "$@" "http://127.0.0.1:$port/scrabble.v1.Edge/GetState" >/dev/null 2>&1
    callgrind_control -z "${!pid_var}" >/dev/null 2>&1
    out=$(h2load -n "$calls" -c 4 -m 4 -t 1 -d "$state" "${H[@]}" "$@" "http://127.0.0.1:$port/scrabble.v1.Edge/GetState" 2>&1)
    grep -q "$calls succeeded" <<<"$out" || echo "$name: not every call succeeded" >&2
    callgrind_control -d "${!pid_var}" >/dev/null 2>&1
    sleep 1
    awk -v n="$calls" '/^(summary|totals):/ {t = $2} END {printf "%.0f", t / n}' "$STACK_TMP"/cg."$name".*
    rm -f "$STACK_TMP"/cg."$name".*
}
if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null; then
    for v in "${VARIANTS[@]}"; do
        fl="flags_$v[@]"
        gateway "cg$v" "$(command -v valgrind)" --tool=callgrind "--callgrind-out-file=$STACK_TMP/cg.cg$v" -- \
            --workers=1 "${!fl}"
    done
    ins_off=$(cg_count cgoff "$port_cgoff")
    ins_ids=$(cg_count cgids "$port_cgids")
    ins_tp=$(cg_count cgids "$port_cgids" -H "traceparent: $tp")
    ins_spans=$(cg_count cgspans "$port_cgspans")
    for v in "${VARIANTS[@]}"; do
        p="pid_cg$v"
        stop_pid "${!p}" 10 || true
    done
    awk -v o="$ins_off" -v i="$ins_ids" -v t="$ins_tp" -v s="$ins_spans" 'BEGIN {
        printf "   off                          %7d\n", o
        printf "   ids                          %7d   +%d (+%.1f%%)\n", i, i - o, (i - o) * 100 / o
        printf "   ids, client traceparent      %7d   +%d (+%.1f%%)\n", t, t - o, (t - o) * 100 / o
        printf "   spans (a line every call)    %7d   +%d (+%.1f%%)\n", s, s - o, (s - o) * 100 / o
    }'
else
    echo "   (valgrind missing: skipped)"
fi

echo "2. gateway CPU per forwarded GetState at a fixed 16,000 calls/s (h2load -c 16 -m 8 -t 2 --rps=1000), $((4 * calls)) calls per run, 2 workers"
for v in "${VARIANTS[@]}"; do
    fl="flags_$v[@]"
    gateway "$v" -- --workers=2 "${!fl}"
done
n=$((4 * calls))
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
declare -A total
for r in $(seq "$rounds"); do
    line="   round $r:"
    for v in "${VARIANTS[@]}"; do
        p="pid_$v" port="port_$v"
        t0=$(cpu_ticks "${!p}")
        out=$(h2load -n "$n" -c 16 -m 8 -t 2 --rps=1000 -d "$state" "${H[@]}" \
            "http://127.0.0.1:${!port}/scrabble.v1.Edge/GetState" 2>&1)
        t1=$(cpu_ticks "${!p}")
        grep -q "$n succeeded" <<<"$out" || echo "$v: not every call succeeded" >&2
        us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
        total[$v]=$(awk -v a="${total[$v]:-0}" -v b="$us" 'BEGIN { print a + b }')
        line+=$(printf '  %s %5.1f µs' "$v" "$us")
    done
    echo "$line"
done
awk -v o="${total[off]}" -v i="${total[ids]}" -v s="${total[spans]}" -v r="$rounds" 'BEGIN {
    printf "   mean: off %.1f µs, ids %.1f µs (%+.1f%%), spans %.1f µs (%+.1f%%)\n", o / r, i / r, (i - o) * 100 / o, s / r, (s - o) * 100 / o
}'
echo "   span lines written by the spans gateway: $(grep -c 'event=span' "$STACK_TMP/gw-spans.log")"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

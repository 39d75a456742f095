#!/usr/bin/env bash
# The floor under the stack's cost per call at player-like concurrency
# (issue 18): many quiet connections, each calling about 0.6 times a second
# and each holding one open server stream, as human-paced players do.
# sparse-drive (rpc/bench/sparse_drive.c) drives, side by side in one run:
#
#   bare-echo     the C core alone answering Health/Check (THREADS threads)
#   bare-forward  the C core forwarding each call to a bare-echo (THREADS each),
#                 the floor under the gateway's forwarding
#   runtime       rpc-ping-server: the same Health/Check through rpc/ (THREADS workers)
#
# and prints, per server process and for the driver, over a measured window
# after a warm-up: CPU per call (/proc/PID/stat), context switches, wakeups
# caused (the sched:sched_wakeup tracepoint, counted in the waker) and
# syscalls per call (perf stat -p). Streams are held by each server itself
# (bare_watch in rpc/bench/bare_server.h; the runtime's health Watch).
#
#   BUILD_DIR=build-rel scripts/bench/floor.sh [CONNS...]
#   knobs: RATE=0.6 WARM=5 WINDOW=15 (seconds) SERVERS="bare-echo bare-forward runtime"
#          THREADS=2 (server threads / runtime workers)
#          RUNTIME_BEFORE=path/to/another/rpc-ping-server: adds the server
#          "runtime-before", to compare two builds of the runtime in one run
#
# Loopback only; each run is bounded by WARM+WINDOW.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_DIR=${BUILD_DIR:-build-rel}
bin=$(cd "$BUILD_DIR/bin" && pwd)
RATE=${RATE:-0.6}
WARM=${WARM:-5}
WINDOW=${WINDOW:-15}
THREADS=${THREADS:-2}
RUNTIME_BEFORE=${RUNTIME_BEFORE:-}
SERVERS=${SERVERS:-"bare-echo bare-forward runtime${RUNTIME_BEFORE:+ runtime-before}"}
conns_list=("$@")
[ ${#conns_list[@]} -gt 0 ] || conns_list=(1000 2000 5000)
hz=$(getconf CLK_TCK)
command -v perf >/dev/null || { echo "floor.sh: perf is required (apt-get install linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "floor.sh: nothing listens on $1" >&2
    return 1
}

# start_server KIND: sets port and spids (the processes to measure).
start_server() {
    port=$(free_port)
    case $1 in
    bare-echo)
        "$bin/bare-echo" "$port" "$THREADS" >/dev/null &
        spids=("$!")
        ;;
    bare-forward)
        local down
        down=$(free_port)
        "$bin/bare-echo" "$down" "$THREADS" >/dev/null &
        local echo_pid=$!
        wait_port "$down"
        "$bin/bare-forward" "$port" "127.0.0.1:$down" /grpc.health.v1.Health/Check \
            /grpc.health.v1.Health/Check "$THREADS" >/dev/null &
        spids=("$!" "$echo_pid")
        ;;
    runtime)
        "$bin/rpc-ping-server" --listen="127.0.0.1:$port" --workers="$THREADS" --metrics-listen= 2>/dev/null &
        spids=("$!")
        ;;
    runtime-before)
        "$RUNTIME_BEFORE" --listen="127.0.0.1:$port" --workers="$THREADS" --metrics-listen= 2>/dev/null &
        spids=("$!")
        ;;
    esac
    pids+=("${spids[@]}")
    wait_port "$port"
}

# perf_counts PID: starts perf stat on PID for the window, output in $tmp/perf.PID
perf_counts() {
    perf stat -x, -e task-clock,context-switches,sched:sched_wakeup,raw_syscalls:sys_enter \
        -p "$1" -o "$tmp/perf.$1" -- sleep "$WINDOW" &
}
perf_value() { # PID EVENT
    awk -F, -v ev="$2" '$3 == ev {print ($1 ~ /^[0-9.]+$/) ? $1 : 0}' "$tmp/perf.$1"
}

printf '%s\n' "rate $RATE calls/s per connection, one held stream each; warm-up ${WARM}s, window ${WINDOW}s; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-13s %6s %-13s %8s %9s %9s %9s %9s %8s\n' server conns process calls/s "cpu_us" "ctxsw" "wakeups" "syscalls" "p99_ms"
for conns in "${conns_list[@]}"; do
    for kind in $SERVERS; do
        start_server "$kind"
        "$bin/sparse-drive" "127.0.0.1:$port" "$conns" "$RATE" "$((WARM + WINDOW))" \
            /grpc.health.v1.Health/Check /grpc.health.v1.Health/Watch >"$tmp/drive.out" &
        dpid=$!
        sleep "$WARM"
        declare -A t0=()
        for p in "${spids[@]}" "$dpid"; do
            t0[$p]=$(cpu_ticks "$p")
            perf_counts "$p"
        done
        sleep "$WINDOW"
        declare -A t1=()
        for p in "${spids[@]}" "$dpid"; do t1[$p]=$(cpu_ticks "$p"); done
        wait "$dpid" || echo "  (sparse-drive reported failed calls or streams: $(cat "$tmp/drive.out"))"
        sleep 0.5 # the perf stats finish with the window
        p99=$(grep -o 'p99_ms=[0-9.]*' "$tmp/drive.out" | cut -d= -f2)
        # Calls in the window: the driver's fixed schedule (it reports
        # failures above), i.e. conns x rate x window.
        calls=$(awk -v c="$conns" -v r="$RATE" -v s="$WINDOW" 'BEGIN {printf "%d", c * r * s}')
        names=()
        for i in "${!spids[@]}"; do
            if [ "$kind" = bare-forward ] && [ "$i" = 1 ]; then names+=("(its bare-echo)"); else names+=("$kind"); fi
        done
        names+=("driver")
        all=("${spids[@]}" "$dpid")
        for i in "${!all[@]}"; do
            p=${all[$i]}
            cs=$(perf_value "$p" context-switches)
            wk=$(perf_value "$p" sched:sched_wakeup)
            sc=$(perf_value "$p" raw_syscalls:sys_enter)
            awk -v k="$kind" -v n="$conns" -v who="${names[$i]}" -v calls="$calls" -v s="$WINDOW" \
                -v ticks=$((t1[$p] - t0[$p])) -v hz="$hz" -v cs="${cs:-0}" -v wk="${wk:-0}" -v sc="${sc:-0}" -v p99="$p99" \
                'BEGIN { printf "%-13s %6d %-13s %8.0f %9.1f %9.2f %9.2f %9.2f %8s\n", k, n, who, calls / s,
                         ticks / hz * 1e6 / calls, cs / calls, wk / calls, sc / calls, (who == "driver") ? p99 : "" }'
        done
        for p in "${spids[@]}"; do kill "$p" 2>/dev/null || true; done
        wait "${spids[@]}" 2>/dev/null || true
        unset t0 t1
    done
done

#!/usr/bin/env bash
# What each process of the real stack costs per call under human-paced
# players (issue 18): the load driver's `run` with --tick 3s --think 8s
# (docs/REPORT.md, run 4) against `make run`'s topology, everything
# co-resident. After the players have joined and a warm-up, a measured
# window prints per process (gateway, game-svc, store-svc, Postgres with all
# its backends, Redis, the driver itself):
#
#   cpu_us     CPU per call (/proc/PID/stat utime+stime, every thread)
#   vol, invol voluntary / involuntary context switches per call, summed
#              over /proc/PID/task/*/status (a thread blocks / is preempted)
#   wakeups    sched:sched_wakeup per call, counted in the waker (perf stat)
#   syscalls   raw_syscalls:sys_enter per call (perf stat)
#
# "Per call" is per client call the gateway answered in the window (its
# rpc_server_latency_seconds_count over scrabble.v1.Edge, Subscribe
# excluded), the same denominator as issue 18's table.
#
#   BUILD_DIRS="build-lt" scripts/bench/stack_wakeups.sh [PLAYERS...]
#   knobs: BUILD_DIRS (one or more release builds; with several, each round
#          restarts the stack on each build in turn, so two builds are
#          measured side by side, alternating), ROUNDS=1, RAMP=20 WARM=15
#          WINDOW=30 (seconds), TICK=3s THINK=8s, PORT_OFFSET=1600,
#          VAR_DIR=var, THREADS=1 (adds per-thread-name switches per
#          call for the gateway, game-svc and the driver),
#          STACK_ENV (extra environment for scripts/stack.sh start, e.g.
#          "SCRABBLE_GATEWAY_WORKERS=1"), DRIVER_ARGS (extra loadtest flags).
#          A BUILD_DIRS entry may carry its own settings after '+':
#          "build-lt+SCRABBLE_GATEWAY_WORKERS=1+SCRABBLE_LOADTEST_LOOPS=1" runs
#          that build with those variables set for the stack and the driver,
#          so two configurations of one build alternate like two builds.
#
# The stack is started and stopped by this script (scripts/stack.sh with
# SKIP_BUILD=1). Loopback only; each run is bounded by RAMP+WARM+WINDOW+20 s
# (the driver's step, which outlasts the window) plus the driver's own hard
# bound.
# STACK_ENV, run_env, DRIVER_ARGS and the pid lists are word lists on purpose.
# shellcheck disable=SC2086,SC2046
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD_DIRS=${BUILD_DIRS:-build-lt}
ROUNDS=${ROUNDS:-1}
RAMP=${RAMP:-20}
WARM=${WARM:-15}
WINDOW=${WINDOW:-30}
TICK=${TICK:-3s}
THINK=${THINK:-8s}
PORT_OFFSET=${PORT_OFFSET:-1600}
VAR_DIR=${VAR_DIR:-$REPO/var}
THREADS=${THREADS:-0}
STACK_ENV=${STACK_ENV:-}
DRIVER_ARGS=${DRIVER_ARGS:-}
players_list=("$@")
[ ${#players_list[@]} -gt 0 ] || players_list=(1000 2000)
command -v perf >/dev/null || { echo "stack_wakeups.sh: perf is required (apt-get install linux-perf)" >&2; exit 1; }
hz=$(getconf CLK_TCK)
PG_PORT=$((55432 + PORT_OFFSET)) REDIS_PORT=$((56379 + PORT_OFFSET))
GW_PORT=$((7000 + PORT_OFFSET)) GW_METRICS=$((9000 + PORT_OFFSET))
GAME_PORT=$((7100 + PORT_OFFSET)) STORE_PORT=$((7200 + PORT_OFFSET))
tmp=$(mktemp -d)
dpid=
stack() { # BUILD CMD
    env SKIP_BUILD=1 BUILD_DIR="$1" VAR_DIR="$VAR_DIR" PORT_OFFSET="$PORT_OFFSET" $STACK_ENV $run_env \
        "$REPO/scripts/stack.sh" "$2" >"$tmp/stack.log" 2>&1
}
cleanup() {
    [ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true
    wait 2>/dev/null || true
    [ -z "${cur_build:-}" ] || stack "$cur_build" stop || true
    rm -rf "$tmp"
}
trap cleanup EXIT

listener() { ss -ltnpH "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
# The pids of a group: Postgres is its postmaster and every child.
group_pids() {
    case $1 in
    postgres)
        local pm
        pm=$(listener "$PG_PORT")
        echo "$pm" $(pgrep -P "$pm" || true)
        ;;
    gateway) listener "$GW_PORT" ;;
    game-svc) listener "$GAME_PORT" ;;
    store-svc) listener "$STORE_PORT" ;;
    redis) listener "$REDIS_PORT" ;;
    driver) echo "$dpid" ;;
    esac
}
# counters PIDS...: "ticks vol invol" summed over the processes and their threads
counters() {
    local p ticks=0 vol=0 invol=0 t
    for p in "$@"; do
        t=$(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null) || continue
        ticks=$((ticks + t))
        read -r v i < <(cat /proc/"$p"/task/*/status 2>/dev/null |
            awk '/^voluntary_ctxt/ {v += $2} /^nonvoluntary_ctxt/ {i += $2} END {print v + 0, i + 0}')
        vol=$((vol + v)) invol=$((invol + i))
    done
    echo "$ticks $vol $invol"
}
# thread_switches PID: "comm vol invol" per thread name, summed
thread_switches() {
    for t in /proc/"$1"/task/*; do
        printf '%s ' "$(tr ' ' '_' <"$t/comm")"
        awk '/^voluntary_ctxt/ {v = $2} /^nonvoluntary_ctxt/ {i = $2} END {print v + 0, i + 0}' "$t/status"
    done 2>/dev/null | awk '{v[$1] += $2; i[$1] += $3} END {for (k in v) print k, v[k], i[k]}' | sort
}
edge_calls() {
    curl -s "http://127.0.0.1:$GW_METRICS/metrics" |
        awk '/^rpc_server_latency_seconds_count\{method="\/scrabble.v1.Edge\// && !/Subscribe/ {n += $2} END {printf "%d\n", n}'
}
perf_value() { # FILE EVENT
    awk -F, -v ev="$2" '$3 == ev {print ($1 ~ /^[0-9.]+$/) ? $1 : 0}' "$1"
}

groups=(gateway game-svc store-svc postgres redis driver)
printf 'human-paced players (--tick %s --think %s), ramp %ss, warm-up %ss, window %ss\n' "$TICK" "$THINK" "$RAMP" "$WARM" "$WINDOW"
printf '%-18s %6s %-10s %7s %8s %7s %7s %8s %9s %s\n' build players process calls/s cpu_us vol invol wakeups syscalls load
for ((round = 1; round <= ROUNDS; round++)); do
    for players in "${players_list[@]}"; do
        for entry in $BUILD_DIRS; do
            build=${entry%%+*}
            run_env=
            [ "$build" = "$entry" ] || run_env=${entry#*+}
            run_env=${run_env//+/ }
            bdir=$(cd "$build" && pwd)
            bname=$(basename "$(dirname "$bdir")")/$(basename "$bdir")
            [ -z "$run_env" ] || bname+="+$(echo "$run_env" | sed -E 's/SCRABBLE_//g; s/=/:/g; s/ /+/g' | tr '[:upper:]' '[:lower:]')"
            cur_build=$bdir
            stack "$bdir" start || { cat "$tmp/stack.log" >&2; exit 1; }
            env PGPASSFILE="$VAR_DIR/secrets/pg-scrabble_loadtest.pgpass" $run_env \
                "$bdir/bin/loadtest" run --target "127.0.0.1:$GW_PORT" \
                --pg "host=127.0.0.1 port=$PG_PORT dbname=scrabble user=scrabble_loadtest" \
                --procs "gateway=$GW_PORT,game-svc=$GAME_PORT,store-svc=$STORE_PORT,postgres+=$PG_PORT,redis=$REDIS_PORT,self,machine" \
                --steps "$players" --step-duration "$((RAMP + WARM + WINDOW + 20))s" --ramp "${RAMP}s" \
                --tick "$TICK" --think "$THINK" --reset --progress 60s --out "$tmp/lt.json" --html "$tmp/lt.html" \
                $DRIVER_ARGS >"$tmp/lt.out" 2>&1 &
            dpid=$!
            sleep "$((RAMP + WARM))"
            # Pids first, then the perf counters, then the /proc snapshot and
            # the call count as close together as the shell allows.
            declare -A c0=() pp=()
            for g in "${groups[@]}"; do pp[$g]=$(group_pids "$g" | xargs); done
            for g in "${groups[@]}"; do
                perf stat -x, -e sched:sched_wakeup,raw_syscalls:sys_enter -p "${pp[$g]// /,}" \
                    -o "$tmp/perf.$g" -- sleep "$WINDOW" 2>/dev/null &
            done
            for g in "${groups[@]}"; do
                c0[$g]=$(counters ${pp[$g]})
                if [ "$THREADS" = 1 ] && [[ $g =~ ^(gateway|game-svc|driver)$ ]]; then
                    thread_switches "${pp[$g]}" >"$tmp/thr0.$g"
                fi
            done
            n0=$(edge_calls)
            load0=$(cut -d' ' -f1 /proc/loadavg)
            sleep "$WINDOW"
            n1=$(edge_calls)
            declare -A c1=()
            for g in "${groups[@]}"; do
                c1[$g]=$(counters ${pp[$g]})
                if [ "$THREADS" = 1 ] && [[ $g =~ ^(gateway|game-svc|driver)$ ]]; then
                    thread_switches "${pp[$g]}" >"$tmp/thr1.$g"
                fi
            done
            load1=$(cut -d' ' -f1 /proc/loadavg)
            wait "$dpid" || true
            dpid=
            sleep 0.5
            calls=$((n1 - n0))
            [ "$calls" -gt 0 ] || { echo "stack_wakeups.sh: no calls in the window" >&2; cat "$tmp/lt.out" >&2; exit 1; }
            for g in "${groups[@]}"; do
                read -r t0 v0 i0 <<<"${c0[$g]}"
                read -r t1 v1 i1 <<<"${c1[$g]}"
                wk=$(perf_value "$tmp/perf.$g" sched:sched_wakeup)
                sc=$(perf_value "$tmp/perf.$g" raw_syscalls:sys_enter)
                awk -v b="$bname" -v n="$players" -v g="$g" -v calls="$calls" -v s="$WINDOW" -v hz="$hz" \
                    -v ticks=$((t1 - t0)) -v vol=$((v1 - v0)) -v inv=$((i1 - i0)) -v wk="${wk:-0}" -v sc="${sc:-0}" \
                    -v load="$load0-$load1" \
                    'BEGIN { printf "%-18s %6d %-10s %7.0f %8.1f %7.2f %7.2f %8.2f %9.2f %s\n", b, n, g, calls / s,
                             ticks / hz * 1e6 / calls, vol / calls, inv / calls, wk / calls, sc / calls, load }'
                if [ "$THREADS" = 1 ] && [ -f "$tmp/thr0.$g" ]; then
                    join "$tmp/thr0.$g" "$tmp/thr1.$g" | awk -v calls="$calls" \
                        '{ v = ($4 - $2) / calls; i = ($5 - $3) / calls; if (v + i >= 0.05) printf "%30s  %-18s vol %5.2f invol %5.2f\n", "", $1, v, i }'
                fi
            done
            verdict=$(grep -m1 '^verdict' "$tmp/lt.out" || echo "verdict: (none; driver output follows)")
            echo "  $verdict"
            grep -q '^verdict' "$tmp/lt.out" || tail -20 "$tmp/lt.out"
            unset c0 c1 pp
            stack "$bdir" stop || true
            cur_build=
        done
    done
done

#!/usr/bin/env bash
# Figures for docs/SECURITY.md "Input bounds and login throttles" on a
# private full stack (Postgres, Redis, store-svc with its default KDF cost,
# one game-svc, a gateway with its default Login throttles):
#
#  1. dense messages (edge_input.py dense): 8 concurrent 4 MiB Logins, then
#     8 concurrent authenticated 2M-placement Evaluates; RSS growth during
#     and 10 s after, a good client's GetState p99 during vs without; and
#     the control: the same attack on the bare C core (bare-echo fail);
#  2. CPU per rejected call (h2load, bounded by N calls) next to the C
#     core's own cost of the same rejection (bare-echo fail, same body);
#  3. a login flood (edge_input.py flood): store-svc CPU and a good client's
#     Login latency during it.
#
#   BUILD_DIR=build-rel scripts/bench/edge_input.sh [ATTACK_S] [N] [N_SMALL]
#   PARTS=flood GATEWAY_FLAGS="--login-per-address=0 --login-per-handle=0
#     --login-backoff=0" ...   (the flood alone, with the throttles off)
#
# N bounds each h2load run with a 4 MiB body, N_SMALL each with a small one.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
export ATTACK_S=${1:-10}
n=${2:-400}
n_small=${3:-20000}
. "$HERE/../../tests/integration/lib/stack.sh"

stack_init
pg_up
redis_up
store_up
game_up 1
# Registrations are not what is measured (the setup registers six players
# from one address); every Login throttle keeps its default.
# GATEWAY_FLAGS: extra gateway flags, to compare settings.
# shellcheck disable=SC2086
gateway_up --login-per-address=30 --register-per-address=0 --rate-read=1000000 --burst-read=1000000 ${GATEWAY_FLAGS:-}
gw_pid=$SVC_PID
addr=127.0.0.1:$GATEWAY_PORT
for i in "${!STACK_NAMES[@]}"; do
    case ${STACK_NAMES[i]} in
    game-svc-0) GAME_PID=${STACK_PIDS[i]} ;;
    store-svc) STORE_PID=${STACK_PIDS[i]} ;;
    esac
done

cli() { SCRABBLE_CLI_TOKEN_FILE="$STACK_TMP/$1.token" "$BUILD_DIR/bin/scrabble-cli" --addr "$addr" "${@:2}"; }
cli alice register alice "bench-pass-1" >/dev/null
cli bob register bob "bench-pass-2" >/dev/null
good=""
for i in 1 2 3 4; do
    cli "good$i" register "good$i" "good-pass-123" >/dev/null
    good+="${good:+,}good$i"
done
inv=$(cli alice invite bob | grep -oE '[0-9]+' | head -1)
game=$(cli bob accept "$inv" | grep -oiE 'game[^0-9]*[0-9]+' | grep -oE '[0-9]+' | head -1)
token=$(head -n1 "$STACK_TMP/alice.token")
cli alice show "$game" >/dev/null

export GATEWAY_PORT GATEWAY_METRICS_PORT GATEWAY_PID=$gw_pid GAME_PID STORE_PID STORE_PORT
export STORE_METRICS_PORT GAME_PORT=${GAME_PORTS%%,*} REDIS_PORT STACK_TMP TOKEN=$token GAME=$game
export GOOD_HANDLES=$good
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); build $BUILD_DIR"
# The C core alone, answering every call with an error status (the
# control and the CPU comparison).
fail_port=$(free_port)
"$BUILD_DIR/bin/bare-echo" "$fail_port" 2 fail >/dev/null &
fail_pid=$!
stack_defer "kill $fail_pid"
export BARE_PORT=$fail_port BARE_PID=$fail_pid
sleep 0.5
if [ -n "${PARTS:-}" ]; then
    # shellcheck disable=SC2086
    /usr/bin/python3 "$HERE/edge_input.py" $PARTS
    exit 0
fi
/usr/bin/python3 "$HERE/edge_input.py" dense control

# 2. CPU per rejected call, gateway vs the bare core answering the same body
# with an error status (bare-echo fail), h2load -c 8 -m 1, N calls each.
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
frame() { # out.bin python-expr-for-body
    python3 -c "import sys; b = $2; open('$1', 'wb').write(b'\\x00' + len(b).to_bytes(4, 'big') + b)"
}
frame "$STACK_TMP/dense_login.bin" "b'\\x0a\\x05alice' + b'\\x78\\x00' * (2 * 1024 * 1024 - 40)"
frame "$STACK_TMP/dense_eval.bin" "b'\\x08' + bytes([$game & 127 | 128, $game >> 7]) + b'\\x12\\x00' * (2 * 1024 * 1024 - 40)"
frame "$STACK_TMP/small_bad.bin" "b'\\xff\\xff\\xff'"
frame "$STACK_TMP/login_wrong.bin" "b'\\x0a\\x05alice\\x12\\x0bwrong-guess'"
measure() { # name pid port path body calls [auth] -> a line
    local t0 t1 extra=() m=1
    [ "${7:-}" = auth ] && extra=(-H "authorization: Bearer $token")
    [ "$6" -gt 1000 ] && m=16 # small bodies: keep the server busy
    t0=$(cpu_ticks "$2")
    h2load -n "$6" -c 8 -m "$m" -t 2 -d "$5" -H 'content-type: application/grpc' -H 'te: trailers' \
        "${extra[@]}" "http://127.0.0.1:$3$4" >/dev/null 2>&1
    t1=$(cpu_ticks "$2")
    awk -v name="$1" -v t="$((t1 - t0))" -v hz="$hz" -v n="$6" \
        'BEGIN { printf "  %-50s calls=%6d cpu_us_per_call=%7.1f\n", name, n, t / hz * 1e6 / n }'
}
reasons() { curl -s "127.0.0.1:$GATEWAY_METRICS_PORT/metrics" | grep -E '^(rpc_server_calls_total\{method="/scrabble.v1.Edge/(Login|Evaluate|GetState)"|gateway_auth_throttled_total)' || true; }
echo "CPU per rejected call (h2load -c 8 -t 2; -m 16 for small bodies, -m 1 for 4 MiB ones)"
measure "gateway GetState 3 B garbage, no token" "$gw_pid" "$GATEWAY_PORT" /scrabble.v1.Edge/GetState "$STACK_TMP/small_bad.bin" "$n_small"
measure "gateway Login, one address (login_throttled)" "$gw_pid" "$GATEWAY_PORT" /scrabble.v1.Edge/Login "$STACK_TMP/login_wrong.bin" "$n_small"
measure "bare-echo fail, same Login body" "$fail_pid" "$fail_port" /grpc.health.v1.Health/Check "$STACK_TMP/login_wrong.bin" "$n_small"
measure "gateway Login 4 MiB dense, one address" "$gw_pid" "$GATEWAY_PORT" /scrabble.v1.Edge/Login "$STACK_TMP/dense_login.bin" "$n"
measure "gateway GetState 4 MiB dense, no token" "$gw_pid" "$GATEWAY_PORT" /scrabble.v1.Edge/GetState "$STACK_TMP/dense_login.bin" "$n"
measure "gateway Evaluate 4 MiB dense, token" "$gw_pid" "$GATEWAY_PORT" /scrabble.v1.Edge/Evaluate "$STACK_TMP/dense_eval.bin" "$n" auth
measure "bare-echo fail, same 4 MiB body" "$fail_pid" "$fail_port" /grpc.health.v1.Health/Check "$STACK_TMP/dense_login.bin" "$n"
reasons

/usr/bin/python3 "$HERE/edge_input.py" flood

#!/usr/bin/env bash
# Full stack on free loopback ports with TWO game-svc instances and TWO
# gateways; test_clock.py drives the public API. The game clock is moved by
# the test through game-svc's test-only --clock-offset-file (a number of
# ms, re-read at each deadline poll); invitations expire after a short
# --invitation-ttl. test_clock.py restarts the game-svc instances itself
# (same binary, flags and port), so it gets their command lines and pids.
# Usage: BUILD_DIR=build-asan bash test_clock.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg

stack_init
pg_up
redis_up
store_up --invitation-ttl=6s

export CLOCK_OFFSET_FILE=$STACK_TMP/clock-offset
echo 0 >"$CLOCK_OFFSET_FILE"
GAME_PORTS=""
for i in 0 1; do
    port=$(free_port)
    mport=$(free_port)
    mapfile -t game_args < <(svc_args_game "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" "$i" "$BUILD_DIR/share")
    game_args+=(--deadline-poll=100ms "--clock-offset-file=$CLOCK_OFFSET_FILE")
    svc_up "game-svc-$i" "$BUILD_DIR/bin/game-svc" "$port" "${game_args[@]}"
    printf '%s\n' "$BUILD_DIR/bin/game-svc" "${game_args[@]}" >"$STACK_TMP/game-svc-$i.cmd"
    echo "$SVC_PID" >"$STACK_TMP/game-svc-$i.pid"
    # A restarted instance is only in its pid file.
    stack_defer "p=\$(cat '$STACK_TMP/game-svc-$i.pid' 2>/dev/null) && stop_pid \"\$p\" 10"
    GAME_PORTS+="${GAME_PORTS:+,}$port"
    GAME_METRICS+="${GAME_METRICS:+,}$mport"
done

limits=(--rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000)
gateway_up "${limits[@]}"
GATEWAYS=127.0.0.1:$GATEWAY_PORT
GW_METRICS=$GATEWAY_METRICS_PORT
port=$(free_port)
mport=$(free_port)
mapfile -t gw_args < <(svc_args_gateway "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
svc_up gateway-1 "$BUILD_DIR/bin/gateway" "$port" "${gw_args[@]}" \
    --login-per-address=0 --register-per-address=0 "${limits[@]}"
GATEWAYS+=",127.0.0.1:$port"
GW_METRICS+=",$mport"

export GATEWAYS GW_METRICS GAME_PORTS GAME_METRICS STACK_TMP
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_clock.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

#!/usr/bin/env bash
# Full stack on free loopback ports: Postgres, Redis, store-svc (a small
# event window: --events-keep=20, pruned every second), one game-svc and two
# gateways. test_events.py subscribes through gateway 1 and plays through
# gateway 2, restarts gateway 1 (same command line, same port) and stops
# and restarts Redis (same directory, port and passwords).
# Usage: BUILD_DIR=build-asan bash test_events.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway cmd:psql

stack_init
pg_up
redis_up
store_up --events-keep=20 --events-prune-interval=1s
game_up 1

start_gateway() { # N: starts gateway N, writes its command line and pid
    local port mport args
    port=$(free_port)
    mport=$(free_port)
    mapfile -t args < <(svc_args_gateway "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
    args+=(--login-per-address=0 --register-per-address=0 --rate-write=1000 --burst-write=1000
        --rate-read=1000 --burst-read=1000)
    svc_up "gateway-$1" "$BUILD_DIR/bin/gateway" "$port" "${args[@]}"
    printf '%s\n' "$BUILD_DIR/bin/gateway" "${args[@]}" >"$STACK_TMP/gateway-$1.cmd"
    echo "$SVC_PID" >"$STACK_TMP/gateway-$1.pid"
    printf -v "GW$1_PORT" '%s' "$port"
    printf -v "GW$1_METRICS" '%s' "$mport"
}
start_gateway 1
start_gateway 2
# A restarted gateway is only in its pid file.
stack_defer 'p=$(cat "$STACK_TMP/gateway-1.pid" 2>/dev/null) && stop_pid "$p" 10'

export GW1_PORT GW1_METRICS GW2_PORT GW2_METRICS STACK_TMP PG_CONNINFO REDIS_DIR REDIS_PORT SECRETS_DIR
export REDIS_SH=$REPO_ROOT/scripts/redis.sh
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_events.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

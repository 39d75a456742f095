#!/usr/bin/env bash
# Full stack (Postgres, Redis, store-svc, one game-svc, two gateways) on
# free loopback ports; test_watch.py plays through gateway 1 and watches
# through both, so an observer's wake-up comes from events another gateway
# never handled. Gateway 2 has small observer bounds (2 per game, 3 per
# account) for the bound tests, and is restarted once (observers resume by
# seq).
# Usage: BUILD_DIR=build-asan bash test_watch.sh [test names...]
#        BUILD_DIR=build-rel bash test_watch.sh bench_fanout   (figures only)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg cmd:psql

stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up "${STACK_NO_RATE_LIMITS[@]}"
GW1_PORT=$GATEWAY_PORT GW1_METRICS=$GATEWAY_METRICS_PORT GW1_PID=$SVC_PID
GW2_PORT=$(free_port) GW2_METRICS=$(free_port)
mapfile -t args < <(svc_args_gateway "$GW2_PORT" "$GW2_METRICS" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
args+=(--login-per-address=0 --register-per-address=0 "${STACK_NO_RATE_LIMITS[@]}" --max-observers-per-game=2
    --max-watch-streams-per-account=3)
svc_up gateway-2 "$BUILD_DIR/bin/gateway" "$GW2_PORT" "${args[@]}"
# test_watch.py restarts gateway 2 (same command line and port): a restarted
# gateway is only in the pid file.
printf '%s\n' "$BUILD_DIR/bin/gateway" "${args[@]}" >"$STACK_TMP/gateway-2.cmd"
echo "$SVC_PID" >"$STACK_TMP/gateway-2.pid"
stack_defer 'p=$(cat "$STACK_TMP/gateway-2.pid" 2>/dev/null) && stop_pid "$p" 10'

export GW1_PORT GW1_METRICS GW1_PID GW2_PORT GW2_METRICS PG_CONNINFO STACK_TMP
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_watch.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

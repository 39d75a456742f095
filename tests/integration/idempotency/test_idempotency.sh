#!/usr/bin/env bash
# Full stack (Postgres, Redis, store-svc, one game-svc, gateway) on free
# loopback ports; test_idempotency.py drives the public API and restarts
# game-svc itself (same binary, same flags, same port), so it is handed the
# game-svc command line and pid. A game-svc it starts writes its pid to
# $STACK_TMP/game-svc.pid, which teardown stops.
# Usage: BUILD_DIR=build-asan bash test_idempotency.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg cmd:psql

stack_init
pg_up
redis_up
store_up

GAME_PORT=$(free_port)
GAME_METRICS_PORT=$(free_port)
mapfile -t game_args < <(svc_args_game "$GAME_PORT" "$GAME_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" 0 "$BUILD_DIR/share")
svc_up game-svc "$BUILD_DIR/bin/game-svc" "$GAME_PORT" "${game_args[@]}"
GAME_PORTS=$GAME_PORT
printf '%s\n' "$BUILD_DIR/bin/game-svc" "${game_args[@]}" >"$STACK_TMP/game-svc.cmd"
echo "$SVC_PID" >"$STACK_TMP/game-svc.pid"
# The first game-svc is in STACK_PIDS; a restarted one only in the pid file.
stack_defer 'p=$(cat "$STACK_TMP/game-svc.pid" 2>/dev/null) && stop_pid "$p" 10'

gateway_up --rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000

export GATEWAY_PORT GATEWAY_METRICS_PORT GAME_PORT STACK_TMP PG_CONNINFO
export GAME_CMD_FILE=$STACK_TMP/game-svc.cmd GAME_PID_FILE=$STACK_TMP/game-svc.pid
# A restarted game-svc logs apart, so a failure shows the tail of each.
export GAME_LOG=$STACK_TMP/game-svc-restarted.log
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_idempotency.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
# game-svc is stopped and restarted on purpose here: a sanitizer report at
# its shutdown would not fail the calls, so the logs are checked.
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

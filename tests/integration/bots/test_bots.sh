#!/usr/bin/env bash
# Full stack on free loopback ports (one gateway, one game-svc); test_bots.py
# drives the public API. It restarts game-svc itself (same command line but
# for --bot-threads), so it gets the command line and pid from $STACK_TMP.
# Usage: BUILD_DIR=build-asan bash test_bots.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg

stack_init
pg_up
redis_up
store_up

port=$(free_port)
mport=$(free_port)
mapfile -t game_args < <(svc_args_game "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" 0 "$BUILD_DIR/share")
game_args+=(--bot-poll=50ms)
svc_up game-svc-0 "$BUILD_DIR/bin/game-svc" "$port" "${game_args[@]}"
printf '%s\n' "$BUILD_DIR/bin/game-svc" "${game_args[@]}" >"$STACK_TMP/game-svc-0.cmd"
echo "$SVC_PID" >"$STACK_TMP/game-svc-0.pid"
stack_defer "p=\$(cat '$STACK_TMP/game-svc-0.pid' 2>/dev/null) && stop_pid \"\$p\" 10"
GAME_PORTS=$port
GAME_METRICS=$mport

gateway_up --rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000

export GATEWAY="127.0.0.1:$GATEWAY_PORT" GAME_PORTS GAME_METRICS STACK_TMP
export SOLVER="$BUILD_DIR/bin/scrabble-solver" LEXICON="$BUILD_DIR/share/wamerican.kwg"
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_bots.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

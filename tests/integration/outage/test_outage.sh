#!/usr/bin/env bash
# Full stack (Postgres, Redis, store-svc, one game-svc, gateway) on free
# loopback ports; test_outage.py drives the public API and stops, hangs
# (SIGSTOP) and restarts Postgres and Redis itself.
# Usage: BUILD_DIR=build-asan bash test_outage.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg cmd:psql

stack_init
pg_up
redis_up
# A Redis left stopped by a failed test would not die on SIGTERM.
stack_defer 'p=$(cat "$REDIS_DIR/redis.pid" 2>/dev/null) && kill -CONT "$p" 2>/dev/null'
store_up
game_up 1
# A short trust TTL, so the test reaches "the TTL has passed" quickly; the
# outage grace is the default.
gateway_up --auth-ttl=1s "${STACK_NO_RATE_LIMITS[@]}"

export GATEWAY_PORT GATEWAY_METRICS_PORT GAME_METRICS_PORT=$GAME_METRICS_PORTS STORE_METRICS_PORT
export PG_CONNINFO PG_DIR PG_PORT REDIS_DIR REDIS_PORT REPO_ROOT
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_outage.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

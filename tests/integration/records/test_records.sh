#!/usr/bin/env bash
# Full stack (Postgres, Redis, store-svc, one game-svc, gateway) on free
# loopback ports; test_records.py drives the public API with python3-grpcio
# (ratings, records, rules, chat echo) and Postgres with psql (concurrent
# rated finishes, the rated-lexicon table).
# Usage: BUILD_DIR=build-asan bash test_records.sh [test names...]
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

export GATEWAY_PORT GATEWAY_METRICS_PORT PG_CONNINFO
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_records.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"

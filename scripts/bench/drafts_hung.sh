#!/usr/bin/env bash
# Evaluate latency while Redis hangs: a private full stack (Postgres, Redis,
# store-svc, one game-svc, gateway), players calling Evaluate in closed loops
# while others save drafts, first with Redis healthy, then with Redis
# stopped by SIGSTOP (hung: connections open, no answer). Prints p50, p99
# and max of Evaluate in each phase, and how the draft calls ended. Figures
# only, nothing asserted.
#
#   BUILD_DIR=build-rel scripts/bench/drafts_hung.sh [SECONDS_PER_PHASE]
#
# Run it once per build (e.g. main's and a branch's) to compare them side by
# side. Loopback only; every loop is bounded by the phase time.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
. "$HERE/../../tests/integration/lib/stack.sh"
stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg
stack_init
pg_up
redis_up
stack_defer 'p=$(cat "$REDIS_DIR/redis.pid" 2>/dev/null) && kill -CONT "$p" 2>/dev/null'
store_up
game_up 1
gateway_up --rate-write=100000 --burst-write=100000 --rate-read=100000 --burst-read=100000
export GATEWAY_PORT REDIS_DIR
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
echo "build: $BUILD_DIR ($(git -C "$BUILD_DIR/.." rev-parse --short HEAD 2>/dev/null || echo '?'))"
/usr/bin/python3 "$HERE/drafts_hung.py" "${1:-10}"

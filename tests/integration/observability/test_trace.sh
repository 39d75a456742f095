#!/usr/bin/env bash
# Trace context through the real stack (Postgres, Redis, store-svc, one
# game-svc, gateway; mutual TLS between services as in make run), every
# service sampling every trace and logging at debug level: trace.py sends
# valid, malformed and oversized traceparent headers through the gateway and
# reads the scrabble-trace-id trailer and every service's span lines; then
# it plays a full game and scans every log of the run (the services',
# Postgres's and Redis's) for the session tokens, the passwords and every
# rack the clients saw.
# Usage: BUILD_DIR=build-asan bash test_trace.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg

# Every call of the run is sampled and every debug line written: the scan
# for secrets sees the most the services can log.
export SCRABBLE_GATEWAY_TRACE_SAMPLE=1 SCRABBLE_GAME_TRACE_SAMPLE=1 SCRABBLE_STORE_TRACE_SAMPLE=1
export SCRABBLE_GATEWAY_LOG_LEVEL=debug SCRABBLE_GAME_LOG_LEVEL=debug SCRABBLE_STORE_LOG_LEVEL=debug

stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up --rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000

export GATEWAY_PORT GATEWAY_METRICS_PORT STACK_TMP
export GATEWAY_LOG=$STACK_TMP/gateway.log GAME_LOG=$STACK_TMP/game-svc-0.log STORE_LOG=$STACK_TMP/store-svc.log
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
/usr/bin/python3 "$here/trace.py" "$@"

#!/usr/bin/env bash
# Runs evaluate-bench against a private stack (Postgres, Redis, store-svc,
# one game-svc) started from BUILD_DIR on free loopback ports.
# Usage: [GAME_FLAGS="--cache-mb=1"] BUILD_DIR=$PWD/build-game \
#          bash game-svc/bench/run_evaluate_bench.sh [bench flags...]
#   e.g. --games=500 --rate=5000 --duration=10 --conns=32
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../tests/integration/lib/stack.sh"

stack_init
pg_up
redis_up
store_up
GAME_PORT=$(free_port)
GAME_METRICS_PORT=$(free_port)
mapfile -t args < <(svc_args_game "$GAME_PORT" "$GAME_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" 0 "$BUILD_DIR/share")
_svc_up game-svc "$BUILD_DIR/bin/game-svc" "$GAME_PORT" "${args[@]}" ${GAME_FLAGS:-}
GAME_PID=$SVC_PID
echo "game-svc pid $GAME_PID on 127.0.0.1:$GAME_PORT (extra flags: ${GAME_FLAGS:-none})"
"$BUILD_DIR/bin/evaluate-bench" --game=127.0.0.1:$GAME_PORT --store=127.0.0.1:$STORE_PORT \
    --metrics=127.0.0.1:$GAME_METRICS_PORT --pid=$GAME_PID \
    --lexicon="$BUILD_DIR/share/wamerican.kwg" "$@"
echo "-- game-svc metrics"
curl -fsS "http://127.0.0.1:$GAME_METRICS_PORT/metrics" | grep -E '^game_(store_calls_total|evaluate_total|cache_)'
ps -o pid,rss,vsz,pcpu,cputime,nlwp,comm -p "$GAME_PID"

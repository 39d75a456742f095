#!/usr/bin/env bash
# Integration test of game-svc: real Postgres, Redis, store-svc and game-svc
# on free loopback ports; the cmocka client game_it plays complete 2-, 3- and
# 4-player games, the bad inputs, the races, drafts and events; then the
# crash test (kill -9 mid-game, restart, identical state, play to the end)
# the store-stalled test (a turn with a short deadline against a store that
# does not answer; its retry afterwards makes exactly one move),
# the store-down test (a turn fails UNAVAILABLE, reads and Evaluate stay up,
# the game continues once the store is back) and the Redis-down test (drafts UNAVAILABLE at once, gameplay unaffected).
# Usage: BUILD_DIR=build-game bash test_game_svc.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc game_it

stack_init
pg_up
redis_up
store_up

GAME_PORT=$(free_port)
GAME_METRICS_PORT=$(free_port)
mapfile -t game_args < <(svc_args_game "$GAME_PORT" "$GAME_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" 0 "$BUILD_DIR/share")
start_game() {
    _svc_up game-svc "$BUILD_DIR/bin/game-svc" "$GAME_PORT" "${game_args[@]}" --nudge-interval=1h "$@"
    GAME_PID=$SVC_PID
}
start_game

export GAME_ADDR=127.0.0.1:$GAME_PORT STORE_ADDR=127.0.0.1:$STORE_PORT REDIS_PORT
export GAME_TEST_LEXICON=$BUILD_DIR/share/wamerican.kwg
it=$BUILD_DIR/bin/game_it

echo "== games"
"$it" games

echo "== crash: kill -9 mid-game (turns in flight), restart, compare"
"$it" crash-before "$STACK_TMP/crash.state" > "$STACK_TMP/crash-before.out" 2>&1 &
player=$!
for _ in $(seq 1 100); do # until a few moves are acknowledged
    [ -f "$STACK_TMP/crash.state" ] && [ "$(cut -d' ' -f2 "$STACK_TMP/crash.state")" -ge 6 ] && break
    sleep 0.1
done
kill -9 "$GAME_PID"
wait "$GAME_PID" 2>/dev/null || true
wait "$player" && { echo "the player finished its game before the kill"; cat "$STACK_TMP/crash-before.out"; exit 1; }
echo "killed game-svc at acknowledged seq $(cut -d' ' -f2 "$STACK_TMP/crash.state")"
mv "$STACK_TMP/game-svc.log" "$STACK_TMP/game-svc-before-crash.log"
start_game
"$it" crash-after "$STACK_TMP/crash.state"

echo "== store-svc down and back"
"$it" store-up "$STACK_TMP/store.state"
for i in "${!STACK_NAMES[@]}"; do
    [ "${STACK_NAMES[i]}" = store-svc ] && STORE_PID=${STACK_PIDS[i]}
done

echo "== store-svc stalled: a turn's short deadline bounds its CommitMove"
kill -STOP "$STORE_PID"
"$it" store-stalled "$STACK_TMP/store.state"
# game-svc gives the commit up when the caller's deadline has passed and
# marks the game stale: wait for that, not for a time.
for _ in $(seq 1 300); do
    grep -q 'commit_failed.*code=DEADLINE_EXCEEDED' "$STACK_TMP/game-svc.log" && break
    sleep 0.1
done
grep 'commit_failed.*code=DEADLINE_EXCEEDED' "$STACK_TMP/game-svc.log" || {
    kill -CONT "$STORE_PID"
    echo "game-svc never gave up the stalled commit"
    exit 1
}
kill -CONT "$STORE_PID"
"$it" store-resumed "$STACK_TMP/store.state"

stop_pid "$STORE_PID" 10
"$it" store-down "$STACK_TMP/store.state"
mv "$STACK_TMP/store-svc.log" "$STACK_TMP/store-svc-first.log"
mapfile -t store_args < <(svc_args_store "$STORE_PORT" "$STORE_METRICS_PORT" "$PG_PORT")
_svc_up store-svc "$BUILD_DIR/bin/store-svc" "$STORE_PORT" "${store_args[@]}"
"$it" store-back "$STACK_TMP/store.state"

echo "== Redis down"
"$REPO_ROOT/scripts/redis.sh" stop "$REDIS_DIR" >/dev/null
"$it" redis-down

echo "== metrics"
curl -fsS "http://127.0.0.1:$GAME_METRICS_PORT/metrics" | grep -E '^game_(store_calls_total|evaluate_total|cache_)' || true
echo "game-svc integration: all passed"

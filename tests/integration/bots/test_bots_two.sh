#!/usr/bin/env bash
# Two game-svc instances behind one gateway: each moves the bots of the
# games it holds, so the instance that answers a game's reads is never
# behind its bot's moves. --bot-takeover=10m keeps the other instance away
# for the whole test (what it waits for is a dead or stuck holder, which
# this test does not make), so who moves which bot is deterministic.
# Usage: BUILD_DIR=build-asan bash test_bots_two.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg

stack_init
pg_up
redis_up
store_up
game_up 2 --bot-poll=50ms --bot-takeover=10m
gateway_up --rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000

targets=""
for p in ${GAME_PORTS//,/ }; do targets+="${targets:+,}127.0.0.1:$p"; done
export GATEWAY="127.0.0.1:$GATEWAY_PORT" GAME_PORTS GAME_METRICS="$GAME_METRICS_PORTS" \
    GAME_TARGETS="$targets" STACK_TMP
export SOLVER="$BUILD_DIR/bin/scrabble-solver" LEXICON="$BUILD_DIR/share/wamerican.kwg"
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_bots.py" test_two_instances
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

#!/usr/bin/env bash
# scrabble-cli through pseudo-terminals on a private full stack: two players
# register, one invites and the other accepts (each sees the other's events
# live in `scrabble-cli shell`), a legal first move found with
# scrabble-solver is previewed and played, and an illegal move shows the
# server's reason in words. The session itself is cli_session.py.
#
# Env: BUILD_DIR (ctest sets it), KEEP_TMP=1 keeps logs and transcripts.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/stack.sh
. "$HERE/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-cli scrabble-solver share/wamerican.kwg

stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up
echo "stack up: gateway 127.0.0.1:$GATEWAY_PORT (logs in $STACK_TMP)"

/usr/bin/python3 "$HERE/cli_session.py" \
    --cli "$BUILD_DIR/bin/scrabble-cli" \
    --solver "$BUILD_DIR/bin/scrabble-solver" \
    --lexicon "$BUILD_DIR/share/wamerican.kwg" \
    --addr "127.0.0.1:$GATEWAY_PORT" \
    --tmp "$STACK_TMP"

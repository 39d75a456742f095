#!/usr/bin/env bash
# The quick starts of docs/quickstart/ against a private full stack
# (Postgres, Redis, store-svc, game-svc, gateway on free loopback ports), so
# that they never rot:
#   1. C: docs/quickstart/cli/session.sh (scrabble-cli, two players, game 1);
#   2. Python: docs/quickstart/python/quickstart.py (Debian's grpcio);
#   3. grpcurl / ghz: every documented command line, run by cli_lines.py
#      without those tools (grpcio + json_format, and `loadtest ghz`).
# Env: BUILD_DIR (ctest sets it), KEEP_TMP=1 keeps logs.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../integration/lib/stack.sh
. "$HERE/../../integration/lib/stack.sh"
QS=$REPO_ROOT/docs/quickstart

stack_require store-svc game-svc gateway scrabble-cli scrabble-solver loadtest share/wamerican.kwg

stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up
ADDR=127.0.0.1:$GATEWAY_PORT
echo "stack up: gateway $ADDR (logs in $STACK_TMP)"

echo "== C: scrabble-cli session"
mkdir -p "$STACK_TMP/cli"
BIN=$BUILD_DIR/bin SCRABBLE_CLI_ADDR=$ADDR SESSION_DIR=$STACK_TMP/cli \
    SCRABBLE_LEXICON=$BUILD_DIR/share/wamerican.kwg bash "$QS/cli/session.sh"

echo "== Python quick start"
/usr/bin/python3 "$QS/python/quickstart.py" --target "$ADDR"

echo "== grpcurl / ghz lines"
# The session file's first line is the token; alice plays in game 1.
TOKEN=$(head -n 1 "$STACK_TMP/cli/alice.token")
/usr/bin/python3 "$HERE/cli_lines.py" --readme "$QS/README.md" --addr "$ADDR" --token "$TOKEN" \
    --loadtest "$BUILD_DIR/bin/loadtest"
echo "quick starts: ok"

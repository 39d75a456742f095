#!/usr/bin/env bash
# Bad strings and bad values at the edge: real Postgres, Redis, store-svc,
# two game-svc instances and the gateway on free loopback ports; a
# python3-grpcio client (test_strings.py) sends the hostile requests.
# Usage: BUILD_DIR=build-x bash test_strings.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway

stack_init
pg_up
redis_up
store_up
game_up 2
# This test is about what each call says, not about rates.
gateway_up "${STACK_NO_RATE_LIMITS[@]}"

export GATEWAY_PORT PG_PORT
/usr/bin/python3 "$here/test_strings.py" "$@"

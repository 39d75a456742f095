#!/usr/bin/env bash
# store-svc integration test: a private Postgres (initdb into a temp dir, a
# free port), store-svc on free ports, then the cmocka client store-svc-it,
# which also stops and restarts that Postgres. Everything is torn down on exit.
#   BUILD_DIR=build-store bash tests/integration/store-svc/store_it.sh
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"

stack_init
pg_up
STORE_PORT=$(free_port)
STORE_METRICS_PORT=$(free_port)
mapfile -t args < <(svc_args_store "$STORE_PORT" "$STORE_METRICS_PORT" "$PG_PORT")
_svc_up store-svc "$BUILD_DIR/bin/store-svc" "$STORE_PORT" "${args[@]}" --kdf-iterations=10000

STORE_TARGET=127.0.0.1:$STORE_PORT STORE_METRICS_PORT=$STORE_METRICS_PORT \
PG_DIR=$PG_DIR PG_PORT=$PG_PORT REPO_ROOT=$REPO_ROOT \
    "$BUILD_DIR/bin/store-svc-it"

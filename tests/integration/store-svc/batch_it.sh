#!/usr/bin/env bash
# The batcher against a private Postgres (temp dir, free port), no gRPC.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"
stack_init
pg_up
PG_CONNINFO=$PG_CONNINFO PG_OWNER_CONNINFO=$PG_OWNER_CONNINFO "$BUILD_DIR/bin/store-batch-it"

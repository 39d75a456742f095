#!/usr/bin/env bash
# Full-stack integration test of the gateway: real Postgres, Redis,
# store-svc, two game-svc instances and the gateway on free loopback ports;
# a python3-grpcio client (test_edge.py) drives the public API.
# Usage: BUILD_DIR=build-gw bash test_gateway.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway

stack_init
pg_up
redis_up
store_up
game_up 2

RATE_LIST=2 BURST_LIST=5 AUTH_TTL_S=1
GATEWAY_PORT=$(free_port)
GATEWAY_METRICS_PORT=$(free_port)
mapfile -t args < <(svc_args_gateway "$GATEWAY_PORT" "$GATEWAY_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
_svc_up gateway "$BUILD_DIR/bin/gateway" "$GATEWAY_PORT" "${args[@]}" \
    --rate-list=$RATE_LIST --burst-list=$BURST_LIST --auth-ttl=${AUTH_TTL_S}s \
    --rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000 --rate-lookup=1000 \
    --subscriber-queue=16 --log-level=info --login-per-address=0 --register-per-address=0

game_pids=""
for i in "${!STACK_NAMES[@]}"; do
    case ${STACK_NAMES[i]} in game-svc-*) game_pids+="${game_pids:+,}${STACK_PIDS[i]}" ;; esac
done
games=""
for p in ${GAME_PORTS//,/ }; do games+="${games:+,}127.0.0.1:$p"; done

export GATEWAY_PORT GATEWAY_METRICS_PORT REDIS_PORT PG_PORT RATE_LIST BURST_LIST AUTH_TTL_S
export GAME_TARGETS=$games GAME_PIDS=$game_pids
export SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
# Every scrabble-reason the run meets must be allowed for its method by the
# reason table (the contract): edge_client.py records them here.
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_edge.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"

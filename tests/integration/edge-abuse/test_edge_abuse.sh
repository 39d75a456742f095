#!/usr/bin/env bash
# Stream abuse against the real gateway: Postgres, Redis, store-svc, one
# game-svc and two gateways on free loopback ports. The main gateway runs
# with the default bounds; a second, "tight" one with small live-call
# bounds to reach them with a handful of streams. abuse.py drives the
# attacks (h2_attack.py, python3-h2) from other loopback addresses
# (127.0.0.2..) and a well-behaved python3-grpcio client from 127.0.0.1.
# Usage: BUILD_DIR=build-asan bash test_edge_abuse.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway rpc-ping-server
/usr/bin/python3 -c 'import h2' 2>/dev/null || { echo "SKIP: python3-h2 is not installed (scripts/install-deps.sh)"; exit 77; }

stack_init
pg_up
redis_up
store_up
game_up 1

# The good client makes many calls; the per-account limits are not what is
# under test. The penalty is long enough to outlast a slow (ASan) run.
LIMITS=(--rate-read=1000 --burst-read=1000 --rate-write=1000 --burst-write=1000 --log-level=info)
gateway_up "${LIMITS[@]}" --abuse-penalty=60s
GATEWAY_PID=$SVC_PID

TIGHT_PORT=$(free_port)
TIGHT_METRICS_PORT=$(free_port)
mapfile -t args < <(svc_args_gateway "$TIGHT_PORT" "$TIGHT_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
svc_up gateway-tight "$BUILD_DIR/bin/gateway" "$TIGHT_PORT" "${args[@]}" "${LIMITS[@]}" \
    --max-calls-per-connection=20 --max-calls=30

# A mutual-TLS port (the services' own kind): the guard must cut a TLS
# connection the same way. rpc-ping-server is the runtime with nothing but
# its built-in services.
CERTS=$STACK_TMP/certs
"$REPO_ROOT/scripts/gen-certs.sh" "$CERTS" >"$STACK_TMP/gen-certs.log" 2>&1
TLS_PORT=$(free_port)
svc_start ping-tls "$BUILD_DIR/bin/rpc-ping-server" --listen=127.0.0.1:$TLS_PORT --metrics-listen= \
    --tls-cert="$CERTS/store-svc.crt" --tls-key="$CERTS/store-svc.key" --tls-ca="$CERTS/ca.crt"
wait_port 127.0.0.1 "$TLS_PORT" 20

export GATEWAY_PORT GATEWAY_METRICS_PORT GATEWAY_PID TIGHT_PORT TIGHT_METRICS_PORT TLS_PORT CERTS
export ATTACK="$here/h2_attack.py"
timeout -k 10 240 /usr/bin/python3 "$here/abuse.py" "$@"

#!/usr/bin/env bash
# Bad input at the edge, against the real binaries: Postgres, Redis,
# store-svc, one game-svc and a gateway with its Login/Register throttles on
# (short backoff so the test need not wait), on free loopback ports.
# edge_input.py drives it with python3-grpcio; attackers reach the gateway
# from other loopback addresses (127.0.0.0/8) through a relay, so the
# per-address throttles can tell them from the well-behaved client.
# Usage: BUILD_DIR=build-asan bash test_edge_input.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway

# The dense-message test measures RSS: keep a sanitizer build's quarantine
# of freed memory small so it measures what the services hold, not ASan.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8

stack_init
pg_up
redis_up
store_up
game_up 1

export LOGIN_PER_ADDRESS=60 LOGIN_BURST_PER_ADDRESS=8
export REGISTER_PER_ADDRESS=6 REGISTER_BURST_PER_ADDRESS=3
export LOGIN_FREE_FAILURES=3 LOGIN_BACKOFF_MS=400
gateway_up --rate-read=1000 --burst-read=1000 --rate-write=1000 --burst-write=1000 \
    --login-per-address=$LOGIN_PER_ADDRESS --login-burst-per-address=$LOGIN_BURST_PER_ADDRESS \
    --register-per-address=$REGISTER_PER_ADDRESS --register-burst-per-address=$REGISTER_BURST_PER_ADDRESS \
    --login-per-handle=600 --login-burst-per-handle=100 \
    --register-per-handle=600 --register-burst-per-handle=100 \
    --login-free-failures=$LOGIN_FREE_FAILURES --login-backoff=${LOGIN_BACKOFF_MS}ms --login-backoff-max=10s

for i in "${!STACK_NAMES[@]}"; do
    case ${STACK_NAMES[i]} in
    gateway) GATEWAY_PID=${STACK_PIDS[i]} ;;
    game-svc-0) GAME_PID=${STACK_PIDS[i]} ;;
    store-svc) STORE_PID=${STACK_PIDS[i]} ;;
    esac
done
export GATEWAY_PORT GATEWAY_METRICS_PORT GATEWAY_PID GAME_PID STORE_PID STORE_PORT STORE_METRICS_PORT
export GAME_PORT=${GAME_PORTS%%,*} REDIS_PORT BUILD_DIR STACK_TMP STACK_CERTS
/usr/bin/python3 "$here/edge_input.py" "$@"

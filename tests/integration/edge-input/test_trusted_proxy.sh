#!/usr/bin/env bash
# x-real-ip behind a trusted proxy (issue #17), against the real binaries:
# one gateway that trusts 127.0.0.1/32 (the test client stands in for the
# balancer) and one that trusts nobody, both with a small per-address Login
# budget; trusted_proxy.py drives them with python3-grpcio.
# Usage: BUILD_DIR=build-asan bash test_trusted_proxy.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway

stack_init
pg_up
redis_up
store_up
game_up 1

# One token a minute: a bucket the test empties does not refill while it
# runs, so what is served and what is throttled does not depend on timing.
export LOGIN_BURST=3
throttles=(--login-per-address=1 --login-burst-per-address=$LOGIN_BURST
    --login-per-handle=600 --login-burst-per-handle=100 --login-free-failures=1000)

gateway_up "${throttles[@]}" --trusted-proxies=127.0.0.1/32
export TRUSTED_PORT=$GATEWAY_PORT TRUSTED_METRICS_PORT=$GATEWAY_METRICS_PORT

# The second gateway: the same flags but no --trusted-proxies.
UNTRUSTED_PORT=$(free_port)
UNTRUSTED_METRICS_PORT=$(free_port)
mapfile -t args < <(svc_args_gateway "$UNTRUSTED_PORT" "$UNTRUSTED_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
svc_up gateway-untrusted "$BUILD_DIR/bin/gateway" "$UNTRUSTED_PORT" "${args[@]}" "${throttles[@]}"
export UNTRUSTED_PORT UNTRUSTED_METRICS_PORT

# A bad entry is refused at start, naming it.
if out=$("$BUILD_DIR/bin/gateway" "${args[@]}" --trusted-proxies=10.0.0.0/8,10.0.0.0/33 2>&1); then
    echo "FAIL: the gateway started with --trusted-proxies=10.0.0.0/8,10.0.0.0/33" >&2
    exit 1
fi
case $out in
*'"10.0.0.0/33"'*) echo "ok   bad --trusted-proxies entry refused: $out" ;;
*) echo "FAIL: the refusal does not name the bad entry: $out" >&2; exit 1 ;;
esac

/usr/bin/python3 "$here/trusted_proxy.py" "$@"

#!/usr/bin/env bash
# Full stack on free loopback ports: TWO game-svc instances, TWO gateways
# that reach them, and a THIRD gateway whose --games names a port nobody
# listens on (its Seek matches in store-svc and then cannot create the
# game: the game-svc pollers must). test_seeks.py drives the public API.
# Usage: BUILD_DIR=build-asan bash test_seeks.sh [test names...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"

stack_require store-svc game-svc gateway scrabble-cli share/wamerican.kwg

stack_init
pg_up
redis_up
store_up --seek-max-open=3 --seek-ttl=10m
# A short poll so the expiry and fallback tests wait less (they wait for
# events, never for a fixed time).
game_up 2 --deadline-poll=200ms

limits=(--rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000
    --rate-list=1000 --burst-list=1000)
gateway_up "${limits[@]}"
GATEWAYS=127.0.0.1:$GATEWAY_PORT
for which in second blind; do
    games=$GAME_PORTS
    [ "$which" = blind ] && games=$(free_port)
    port=$(free_port)
    mport=$(free_port)
    mapfile -t gw_args < <(svc_args_gateway "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" "$games")
    svc_up "gateway-$which" "$BUILD_DIR/bin/gateway" "$port" "${gw_args[@]}" \
        --login-per-address=0 --register-per-address=0 "${limits[@]}"
    if [ "$which" = blind ]; then BLIND_GATEWAY=127.0.0.1:$port; else GATEWAYS+=",127.0.0.1:$port"; fi
done

export GATEWAYS BLIND_GATEWAY STACK_TMP CLI=$BUILD_DIR/bin/scrabble-cli
export SCRABBLE_REASONS_SEEN=$STACK_TMP/reasons.seen
: >"$SCRABBLE_REASONS_SEEN"
/usr/bin/python3 "$here/test_seeks.py" "$@"
/usr/bin/python3 "$REPO_ROOT/proto/contract/check.py" observed \
    --table "$REPO_ROOT/proto/scrabble/v1/reasons.txt" --seen "$SCRABBLE_REASONS_SEEN"
if grep -l "ERROR: AddressSanitizer\|runtime error:" "$STACK_TMP"/*.log; then
    echo "a sanitizer report is in the logs above" >&2
    exit 1
fi

#!/usr/bin/env bash
# Zero trust between services, on a private stack (real Postgres, Redis,
# store-svc, game-svc, gateway; mutual TLS on as in make run):
#  - zero_trust.py: forged account metadata to game-svc from a non-gateway
#    identity, from gen-certs.sh's end-user `client` certificate, with no
#    certificate and over plaintext is refused and changes nothing; every
#    store-svc write from a caller without the right identity is refused
#    and changes nothing; LoadGame from the gateway identity gets no seed;
#    /metrics of every process shows no token, handle or seed.
#  - a service without its certificate files refuses to start, naming the
#    missing file; --insecure-internal is logged and exported as a gauge.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"
stack_require store-svc game-svc gateway share/wamerican.kwg

stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up

export GATEWAY_PORT STORE_PORT GAME_PORT=$GAME_PORTS STACK_CERTS STACK_TMP
export METRICS_PORTS="$GATEWAY_METRICS_PORT,$GAME_METRICS_PORTS,$STORE_METRICS_PORT"
/usr/bin/python3 "$here/zero_trust.py"

fail() { echo "not ok - $*" >&2; exit 1; }

echo "== a service without its certificates refuses to start"
for bin in game-svc store-svc gateway; do
    extra=()
    case $bin in
    game-svc) extra=(--lexicon-dir="$BUILD_DIR/share") ;;
    store-svc) extra=(--pg="$PG_CONNINFO") ;;
    esac
    set +e
    out=$(env -u SCRABBLE_GATEWAY_CERTS_DIR -u SCRABBLE_GAME_CERTS_DIR -u SCRABBLE_STORE_CERTS_DIR \
        "$BUILD_DIR/bin/$bin" --listen=127.0.0.1:0 --metrics-listen= --certs-dir="$STACK_TMP/no-such-dir" \
        "${extra[@]}" 2>&1)
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "$bin without certificates: exit $rc, want 2 ($out)"
    grep -q "missing certificate file $STACK_TMP/no-such-dir/ca.crt" <<<"$out" ||
        fail "$bin does not name the missing file: $out"
    echo "ok - $bin refuses to start: $(head -c 120 <<<"$out")"
done
# One file missing of three: that one is named.
mkdir "$STACK_TMP/partial"
cp "$STACK_CERTS/ca.crt" "$STACK_CERTS/game-svc.crt" "$STACK_TMP/partial/"
set +e
out=$("$BUILD_DIR/bin/game-svc" --listen=127.0.0.1:0 --metrics-listen= --certs-dir="$STACK_TMP/partial" 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "missing certificate file $STACK_TMP/partial/game-svc.key" <<<"$out" ||
    fail "game-svc with no key: exit $rc: $out"
echo "ok - a missing key is named"

echo "== the escape hatch is loud"
port=$(free_port)
mport=$(free_port)
svc_up game-svc-insecure "$BUILD_DIR/bin/game-svc" "$port" --listen="127.0.0.1:$port" \
    --metrics-listen="127.0.0.1:$mport" --store="127.0.0.1:$STORE_PORT" --redis="127.0.0.1:$REDIS_PORT" \
    --redis-secrets="$SECRETS_DIR" --lexicon-dir="$BUILD_DIR/share" --insecure-internal
grep -q "event=insecure_internal" "$STACK_TMP/game-svc-insecure.log" || fail "no insecure_internal log line"
# (grep reads a variable, not curl's pipe: grep -q would close it early.)
m=$(curl -fsS "http://127.0.0.1:$mport/metrics")
grep -qx "rpc_insecure_internal 1" <<<"$m" || fail "gauge not 1"
m=$(curl -fsS "http://127.0.0.1:$GATEWAY_METRICS_PORT/metrics")
grep -qx "rpc_insecure_internal 0" <<<"$m" || fail "gateway gauge not 0"
echo "ok - --insecure-internal: logged, rpc_insecure_internal 1 (0 elsewhere)"
echo "zero trust: all passed"

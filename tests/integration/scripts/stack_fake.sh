#!/usr/bin/env bash
# scripts/stack.sh with stand-in services (fake_svc.py): start with a topology,
# re-run, topology change refused, crash recovery, port conflicts, stop.
# Runs on the default ports shifted by a random free PORT_OFFSET, in a temp
# VAR_DIR, so it never touches a developer's running `make run` stack.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/stack.sh"
. "$here/../lib/assert.sh"
stack_init

# A fake build tree: bin/{store-svc,game-svc,gateway} run fake_svc.py.
FAKE_BUILD=$STACK_TMP/build
mkdir -p "$FAKE_BUILD/bin"
for b in store-svc game-svc gateway; do
    printf '#!/bin/sh\nFAKE_NAME=%s exec /usr/bin/python3 %q "$@"\n' "$b" "$here/fake_svc.py" >"$FAKE_BUILD/bin/$b"
    chmod +x "$FAKE_BUILD/bin/$b"
done

ports_of() { # every port the stack uses at offset $1 with 2 games, 2 gateways
    local o=$1
    echo $((55432 + o)) $((56379 + o)) $((7000 + o)) $((7001 + o)) $((7100 + o)) $((7101 + o)) \
        $((7200 + o)) $((9000 + o)) $((9001 + o)) $((9100 + o)) $((9101 + o)) $((9200 + o))
}
for try in $(seq 1 50); do
    OFF=$((1000 + RANDOM % 8000))
    busy=0
    for p in $(ports_of "$OFF"); do port_in_use "$p" && busy=1; done
    [ "$busy" = 0 ] && break
done
export PORT_OFFSET=$OFF BUILD_DIR=$FAKE_BUILD VAR_DIR=$STACK_TMP/var SKIP_BUILD=1 HEALTH_TIMEOUT=20
S=$REPO_ROOT/scripts/stack.sh
stack_defer "$S stop >/dev/null 2>&1"
echo "# PORT_OFFSET=$OFF"

expect_ok "start GAMES=2 GATEWAYS=2" env GAMES=2 GATEWAYS=2 "$S" start
expect_output "prints the stop hint" 'stop with: make stop'
expect_output "prints gateway-1's endpoint" "gateway-1 +127\.0\.0\.1:$((7001 + OFF))"
expect_ok "status: all SERVING" env GAMES=2 GATEWAYS=2 "$S" status
expect_output "game-svc-1 SERVING" "game-svc-1: running .*SERVING"
expect_ok "gateway got both game-svc instances" \
    grep -q -- "--games=127.0.0.1:$((7100 + OFF)),127.0.0.1:$((7101 + OFF))" "$VAR_DIR/log/gateway-0.log"
expect_ok "game-svc-1 got --instance=1" grep -q -- "--instance=1 " "$VAR_DIR/log/game-svc-1.log"
expect_ok "store-svc got the Postgres conninfo" \
    grep -q -- "--pg=host=127.0.0.1 port=$((55432 + OFF)) dbname=scrabble user=scrabble" "$VAR_DIR/log/store-svc.log"
expect_ok "re-run while running is harmless" env GAMES=2 GATEWAYS=2 "$S" start
expect_output "says already running" 'gateway-1 already running'
expect_fail "a different topology while running is refused" 'make stop' env GAMES=1 GATEWAYS=1 "$S" start

# Crash: kill -9 a game-svc, Postgres and Redis; start recovers all three.
kill -9 "$(cat "$VAR_DIR/run/game-svc-1.pid")" "$(head -n 1 "$VAR_DIR/pg/postmaster.pid")" "$(cat "$VAR_DIR/redis/redis.pid")"
expect_fail "status after the crash reports it" 'game-svc-1: not running' env GAMES=2 GATEWAYS=2 "$S" status
expect_ok "start after kill -9 recovers" env GAMES=2 GATEWAYS=2 "$S" start
expect_output "restarted game-svc-1" 'started game-svc-1'
expect_ok "all SERVING again" env GAMES=2 GATEWAYS=2 "$S" status

pids=$(cat "$VAR_DIR"/run/*.pid)
expect_ok "stop" "$S" stop
none_alive() {
    local p
    for p in "$@"; do ! pid_alive "$p" || return 1; done
}
expect_ok "no service process left" none_alive $pids
expect_ok "services exited on SIGTERM" grep -q 'SIGTERM, bye' "$VAR_DIR/log/gateway-1.log"
expect_ok "stop again is harmless" "$S" stop

hold_port $((7100 + OFF))
expect_fail "a taken service port is named" "port $((7100 + OFF))" "$S" start
expect_ok "and nothing was left running" bash -c "! ls '$VAR_DIR'/run/*.pid 2>/dev/null | grep -q ."
expect_rc "postgres not started either" 3 "$REPO_ROOT/scripts/pg.sh" status "$VAR_DIR/pg"
finish

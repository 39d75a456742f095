#!/usr/bin/env bash
# scripts/redis.sh: start, idempotent re-start, kill -9 recovery (stale
# pidfile), port conflicts, idempotent stop, status codes, bound to loopback.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/stack.sh"
. "$here/../lib/assert.sh"
stack_init
R=$REPO_ROOT/scripts/redis.sh
D=$STACK_TMP/redis
P=$(free_port)
REDIS_DIR=$D

cli() { redis-cli -h 127.0.0.1 -p "$P" "$@"; }

expect_rc "status before start: 3" 3 "$R" status "$D"
expect_ok "start" "$R" start "$D" "$P"
expect_ok "ping" cli ping
expect_output "PONG" '^PONG$'
expect_ok "config get appendonly" cli config get appendonly
expect_output "appendonly no" '^no$'
expect_ok "save is empty (no RDB snapshots)" test -z "$(cli config get save | sed -n 2p)"
expect_ok "bound to 127.0.0.1 only" cli config get bind
expect_output "bind is 127.0.0.1" '^127\.0\.0\.1$'
expect_ok "start again is harmless" "$R" start "$D" "$P"
expect_output "says already running" 'already running'
expect_fail "start on another port while running" "$P" "$R" start "$D" "$((P + 1))"

kill -9 "$(cat "$D/redis.pid")"
expect_ok "start after kill -9 recovers (stale pidfile)" "$R" start "$D" "$P"
expect_output "reports the stale pid file" 'stale'
expect_ok "answers after recovery" cli ping

expect_fail "second redis on a taken port names the port" "port $P" "$R" start "$STACK_TMP/redis2" "$P"
expect_ok "stop" "$R" stop "$D"
expect_ok "stop again is harmless" "$R" stop "$D"
expect_rc "status after stop: 3" 3 "$R" status "$D"

P2=$(free_port)
hold_port "$P2"
expect_fail "port held by another process: error names the port" "port $P2" "$R" start "$D" "$P2"
finish

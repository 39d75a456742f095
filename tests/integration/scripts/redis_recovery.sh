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

# As the ACL user admin (its password from $SECRETS_DIR, through the env).
cli() { redis_cli_admin "$P" "$@"; }

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
admin_pw=$(cat "$(creds_redis_file admin)")
expect_ok "password files are mode 0600" test "$(stat -c %a "$(creds_redis_file admin)")" = 600
expect_fail "start on another port while running" "$P" "$R" start "$D" "$((P + 1))"

kill -9 "$(cat "$D/redis.pid")"
expect_ok "start after kill -9 recovers (stale pidfile)" "$R" start "$D" "$P"
expect_output "reports the stale pid file" 'stale'
expect_ok "answers after recovery" cli ping
expect_ok "the default user is still off after recovery" redis-cli -h 127.0.0.1 -p "$P" get draft:1:1
expect_output "NOAUTH without credentials" 'NOAUTH'
expect_ok "the admin password is the same one" test "$(cat "$(creds_redis_file admin)")" = "$admin_pw"

# Rotation: a new password file, then start (already running) reloads the ACL.
cp "$(creds_redis_file drafts)" "$STACK_TMP/drafts.old"
creds_new_password >"$(creds_redis_file drafts)"
expect_ok "start again reloads the ACL" "$R" start "$D" "$P"
drafts_auth() { REDISCLI_AUTH=$(cat "$1") redis-cli --user drafts -h 127.0.0.1 -p "$P" get draft:1:1; }
expect_ok "the rotated drafts password works" drafts_auth "$(creds_redis_file drafts)"
no_auth_error() { ! grep -Eq 'WRONGPASS|NOAUTH' <<<"$ASSERT_OUT"; }
expect_ok "no error with it" no_auth_error
expect_ok "the old drafts password is refused" drafts_auth "$STACK_TMP/drafts.old"
expect_output "WRONGPASS" 'WRONGPASS'

expect_fail "second redis on a taken port names the port" "port $P" "$R" start "$STACK_TMP/redis2" "$P"
expect_ok "stop" "$R" stop "$D"
expect_ok "stop again is harmless" "$R" stop "$D"
expect_rc "status after stop: 3" 3 "$R" status "$D"

P2=$(free_port)
hold_port "$P2"
expect_fail "port held by another process: error names the port" "port $P2" "$R" start "$D" "$P2"
finish

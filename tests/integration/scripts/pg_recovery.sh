#!/usr/bin/env bash
# scripts/pg.sh: start, idempotent re-start, kill -9 recovery (stale
# postmaster.pid), port conflicts, idempotent stop, status codes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/stack.sh"
. "$here/../lib/assert.sh"
stack_init
PG=$REPO_ROOT/scripts/pg.sh
D=$STACK_TMP/pg
P=$(free_port)
PG_DIR=$D # stack_down stops it whatever happens

# As the application role, and as the schema owner (the only one allowed DDL).
q() { PGPASSFILE=$(creds_pg_passfile scrabble) psql -X -h 127.0.0.1 -p "$P" -U scrabble -d scrabble -tAc "$1"; }
q_owner() { PGPASSFILE=$(creds_pg_passfile scrabble_owner) psql -X -h 127.0.0.1 -p "$P" -U scrabble_owner -d scrabble -tAc "$1"; }

expect_rc "status before init: not running (3)" 3 "$PG" status "$D"
expect_ok "start initializes and starts" "$PG" start "$D" "$P"
expect_ok "role and database scrabble exist" q "SELECT current_user || '@' || current_database()"
expect_output "connected as scrabble@scrabble" '^scrabble@scrabble$'
expect_ok "cluster owned by postgres" test "$(stat -c %U "$D")" = postgres
expect_ok "start again is harmless" "$PG" start "$D" "$P"
expect_output "says already running" 'already running'
expect_ok "status running" "$PG" status "$D"
expect_fail "start on another port while running names both ports" "$P" "$PG" start "$D" "$((P + 1))"

expect_ok "password files are mode 0600" test "$(stat -c %a "$(creds_pg_passfile scrabble)")" = 600
pw_before=$(creds_pg_password scrabble)
q_owner "CREATE TABLE t(x int); INSERT INTO t VALUES (7)" >/dev/null
pid=$(head -n 1 "$D/postmaster.pid")
kill -9 "$pid"
expect_ok "start after kill -9 recovers (stale postmaster.pid)" "$PG" start "$D" "$P"
expect_output "reports the stale pid file" 'stale'
expect_ok "committed data survived the crash" q "SELECT x FROM t"
expect_output "row is there" '^7$'
expect_ok "the password survives a restart" test "$(creds_pg_password scrabble)" = "$pw_before"
expect_ok "and still logs in" q "SELECT 1"

# A cluster made before the roles were split: scrabble a superuser owning
# the schema. Starting again (already running) upgrades it in place.
"$PG" psql "$D" -c "ALTER ROLE scrabble SUPERUSER" -c "REASSIGN OWNED BY scrabble_owner TO scrabble" >/dev/null
expect_ok "start upgrades an old-style cluster" "$PG" start "$D" "$P"
expect_ok "scrabble is no longer a superuser" q "SELECT rolsuper FROM pg_roles WHERE rolname = 'scrabble'"
expect_output "rolsuper f" '^f$'
expect_ok "its tables now belong to scrabble_owner" q "SELECT tableowner FROM pg_tables WHERE tablename = 't'"
expect_output "owner" '^scrabble_owner$'
expect_fail "and the application role lost DDL" "must be owner" q "DROP TABLE t"

D2=$STACK_TMP/pg2
expect_fail "second cluster on a taken port names the port" "port $P" "$PG" start "$D2" "$P"

expect_ok "stop" "$PG" stop "$D"
expect_ok "stop again is harmless" "$PG" stop "$D"
expect_rc "status after stop: 3" 3 "$PG" status "$D"
expect_ok "stop of a directory without cluster is harmless" "$PG" stop "$STACK_TMP/none"

P2=$(free_port)
hold_port "$P2"
expect_fail "port held by another process: error names the port" "port $P2" "$PG" start "$D" "$P2"

mkdir -p "$STACK_TMP/junk" && touch "$STACK_TMP/junk/file"
expect_fail "non-empty non-cluster dir is refused" "not empty" "$PG" start "$STACK_TMP/junk" "$P"
finish

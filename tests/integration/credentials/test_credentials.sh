#!/usr/bin/env bash
# Postgres and Redis credentials, end to end on a private stack:
#   Postgres: no password, a wrong password and the superuser over TCP are
#     refused; the application role reads and writes rows but has no DDL,
#     TRUNCATE or GRANT; the load driver's role has no DDL; the owner is no
#     superuser; the superuser is reachable on the local socket (operators).
#   Redis: without credentials PUBLISH and GET of a draft get NOAUTH; each
#     ACL user gets NOPERM for the other roles' commands and keys.
#   Services: store-svc, game-svc and the gateway run with credentials; a
#     missing password file stops a service at start with a message naming
#     it; after a Redis restart they re-authenticate (reauth.py).
#   No password appears on any process's command line.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/stack.sh"
. "$here/../lib/assert.sh"
stack_require store-svc game-svc gateway share/wamerican.kwg
stack_init
pg_up || exit 1
redis_up || exit 1

# ---- Postgres ---------------------------------------------------------------

# psql_as ROLE PASSFILE SQL: over TCP, never prompting (-w).
psql_as() { PGPASSFILE=$2 psql -X -w -h 127.0.0.1 -p "$PG_PORT" -U "$1" -d scrabble -tAc "$3"; }
app() { psql_as scrabble "$(creds_pg_passfile scrabble)" "$1"; }
owner() { psql_as scrabble_owner "$(creds_pg_passfile scrabble_owner)" "$1"; }
loadtest() { psql_as scrabble_loadtest "$(creds_pg_passfile scrabble_loadtest)" "$1"; }

expect_ok "secrets directory is mode 0700" test "$(stat -c %a "$SECRETS_DIR")" = 700
for f in "$SECRETS_DIR"/*; do
    expect_ok "$(basename "$f") is mode 0600" test "$(stat -c %a "$f")" = 600
done
expect_ok "pg_hba.conf has no trust line" bash -c "! grep -Ev '^[[:space:]]*#' '$PG_DIR/pg_hba.conf' | grep -qw trust"

expect_fail "application role without a password is refused" "no password supplied" \
    psql_as scrabble "$STACK_TMP/no-such-passfile" "SELECT 1"
echo "*:*:*:scrabble:wrong-password" >"$STACK_TMP/wrong.pgpass" && chmod 600 "$STACK_TMP/wrong.pgpass"
expect_fail "application role with a wrong password is refused" "password authentication failed" \
    psql_as scrabble "$STACK_TMP/wrong.pgpass" "SELECT 1"
expect_fail "superuser over TCP is refused" "pg_hba.conf rejects connection.*postgres" \
    psql_as postgres "$STACK_TMP/no-such-passfile" "SELECT 1"
expect_fail "superuser over TCP is refused even with a password offered" "pg_hba.conf rejects" \
    env PGPASSWORD=anything psql -X -w -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -tAc "SELECT 1"
expect_fail "another role's passfile does not log in as the application role" "no password supplied|authentication failed" \
    psql_as scrabble "$(creds_pg_passfile scrabble_loadtest)" "SELECT 1"
expect_ok "superuser on the local socket (operators: scripts/pg.sh psql)" \
    "$REPO_ROOT/scripts/pg.sh" psql "$PG_DIR" -c "SELECT current_user"
expect_output "as postgres" '^postgres$'

# store-svc migrates as the owner at start, then serves as the application role.
store_up --kdf-iterations=10000 || exit 1
expect_ok "schema owned by scrabble_owner" owner "SELECT tableowner FROM pg_tables WHERE tablename = 'accounts'"
expect_output "owner" '^scrabble_owner$'
expect_ok "store-svc's connections are the application role" \
    "$REPO_ROOT/scripts/pg.sh" psql "$PG_DIR" -c "SELECT DISTINCT usename FROM pg_stat_activity WHERE application_name = 'store-svc'"
expect_output "only scrabble" '^scrabble$'
expect_ok "application role reads rows" app "SELECT count(*) FROM accounts"
expect_fail "application role cannot CREATE TABLE" "permission denied for schema public" \
    app "CREATE TABLE intruder (x int)"
expect_fail "application role cannot DROP a table" "must be owner of table accounts" \
    app "DROP TABLE accounts"
expect_fail "application role cannot ALTER a table" "must be owner of table accounts" \
    app "ALTER TABLE accounts ADD COLUMN x int"
expect_fail "application role cannot TRUNCATE" "permission denied for table accounts" \
    app "TRUNCATE accounts CASCADE"
# GRANT without the grant option is not an error, only a warning: check the result.
expect_ok "application role's GRANT is a no-op" app "GRANT ALL ON accounts TO scrabble_loadtest"
expect_output "warned" 'no privileges were granted'
expect_ok "nothing was granted" owner "SELECT has_table_privilege('scrabble_loadtest', 'accounts', 'REFERENCES')"
expect_output "false" '^f$'
expect_fail "application role cannot create a function" "permission denied for schema public" \
    app "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'"
expect_fail "application role cannot drop the migration history" "permission denied|must be owner" \
    app "DROP TABLE schema_migrations"
expect_fail "load driver role cannot CREATE TABLE" "permission denied for schema public" \
    loadtest "CREATE TABLE intruder (x int)"
expect_ok "load driver role may TRUNCATE (loadtest --reset)" loadtest "TRUNCATE chat_messages"
expect_ok "no role of ours is a superuser or may create roles or databases" \
    owner "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'scrabble%' AND (rolsuper OR rolcreaterole OR rolcreatedb)"
expect_output "none" '^0$'

# ---- Redis ------------------------------------------------------------------

# rc_as USER PASSWORD_FILE ARGS...: redis-cli as USER (password via the env).
rc_as() {
    local user=$1 file=$2
    shift 2
    REDISCLI_AUTH=$(cat "$file") redis-cli --user "$user" -h 127.0.0.1 -p "$REDIS_PORT" "$@" 2>&1
}
rc_none() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@" 2>&1; }
pw() { creds_redis_file "$1"; }

redis_cli_admin "$REDIS_PORT" set draft:1:2 secret-draft >/dev/null
expect_ok "PUBLISH without credentials" rc_none publish ev:1 forged
expect_output "NOAUTH" 'NOAUTH'
expect_ok "GET of a draft without credentials" rc_none get draft:1:2
expect_output "NOAUTH" 'NOAUTH'
expect_ok "AUTH as the default user" rc_none auth default ""
expect_output "refused" 'WRONGPASS|ERR'
expect_ok "a wrong password" rc_as publisher "$STACK_TMP/wrong.pgpass" publish ev:1 forged
expect_output "WRONGPASS" 'WRONGPASS'
expect_ok "drafts user cannot PUBLISH" rc_as drafts "$(pw drafts)" publish ev:1 forged
expect_output "NOPERM" 'NOPERM'
expect_ok "subscriber user cannot PUBLISH" rc_as subscriber "$(pw subscriber)" publish ev:1 forged
expect_output "NOPERM" 'NOPERM'
expect_ok "publisher user cannot GET a draft" rc_as publisher "$(pw publisher)" get draft:1:2
expect_output "NOPERM" 'NOPERM'
expect_ok "subscriber user cannot GET a draft" rc_as subscriber "$(pw subscriber)" get draft:1:2
expect_output "NOPERM" 'NOPERM'
expect_ok "publisher user cannot SET a draft" rc_as publisher "$(pw publisher)" set draft:1:2 x
expect_output "NOPERM" 'NOPERM'
expect_ok "drafts user cannot read other keys" rc_as drafts "$(pw drafts)" get ev:1
expect_output "NOPERM" 'NOPERM'
expect_ok "drafts user cannot list keys" rc_as drafts "$(pw drafts)" keys '*'
expect_output "NOPERM" 'NOPERM'
expect_ok "publisher user cannot publish outside ev:*" rc_as publisher "$(pw publisher)" publish other 1
expect_output "NOPERM" 'NOPERM'
expect_ok "publisher user cannot change the config" rc_as publisher "$(pw publisher)" config set appendonly yes
expect_output "NOPERM" 'NOPERM'
expect_ok "drafts user reads its draft" rc_as drafts "$(pw drafts)" get draft:1:2
expect_output "the draft" '^secret-draft$'
expect_ok "publisher user publishes" rc_as publisher "$(pw publisher)" publish ev:1 x
expect_output "an integer reply" '^[0-9]+$'

# ---- services ---------------------------------------------------------------

expect_fail "game-svc without its Redis password file does not start" "redis-drafts.pass" \
    "$BUILD_DIR/bin/game-svc" --listen=127.0.0.1:0 --metrics-listen= --store=127.0.0.1:$STORE_PORT \
    --redis=127.0.0.1:$REDIS_PORT --redis-secrets="$STACK_TMP/empty" --lexicon-dir="$BUILD_DIR/share"
expect_fail "gateway without its Redis password files does not start" "redis-(publisher|subscriber).pass" \
    "$BUILD_DIR/bin/gateway" --listen=127.0.0.1:0 --metrics-listen= --store=127.0.0.1:$STORE_PORT \
    --games=127.0.0.1:1 --redis=127.0.0.1:$REDIS_PORT --redis-secrets="$STACK_TMP/empty"

game_up 1 || exit 1
gateway_up --rate-write=1000 --burst-write=1000 || exit 1

# No secret on any command line: every password file's content against the
# argv of every process of this test.
leaked=""
for f in "$SECRETS_DIR"/*; do
    secret=$(cut -d: -f5- "$f" | head -n 1)
    [ -n "$secret" ] || secret=$(cat "$f")
    for p in /proc/[0-9]*; do
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$secret"; then leaked+=" $(basename "$f")@${p#/proc/}"; fi
    done
done
expect_ok "no password on any command line${leaked:+ (leaked:$leaked)}" test -z "$leaked"

export GATEWAY_PORT GATEWAY_METRICS_PORT REDIS_DIR REDIS_PORT GATEWAY_LOG=$STACK_TMP/gateway.log
expect_ok "services work with credentials and re-authenticate after a Redis restart" \
    /usr/bin/python3 "$here/reauth.py"
echo "$ASSERT_OUT" | sed 's/^/    /'
expect_ok "no AUTH refusal in the service logs" bash -c "! grep -h 'AUTH as' '$STACK_TMP'/game-svc-0.log '$STACK_TMP'/gateway.log"

# ---- compose/secrets.sh -----------------------------------------------------
# Its Postgres init SQL carries SCRAM verifiers made without Postgres: applied
# to this cluster (last: it changes the roles' passwords), compose's
# passfiles log in and the previous password no longer does.
CS=$STACK_TMP/compose-secrets
expect_ok "compose/secrets.sh makes the compose secrets" env SECRETS_DIR="$CS" "$REPO_ROOT/compose/secrets.sh"
expect_ok "its ACL file holds no password" bash -c "! grep -qF \"\$(cat '$CS/redis-drafts.pass')\" '$CS/redis-users.acl'"
expect_ok "its init SQL holds no password" bash -c "! grep -qF \"\$(cut -d: -f5 '$CS/pg-scrabble.pgpass')\" '$CS/postgres-init.sql'"
expect_ok "its init SQL applies (idempotent on an existing cluster)" \
    "$REPO_ROOT/scripts/pg.sh" psql "$PG_DIR" -f - <"$CS/postgres-init.sql"
expect_ok "the compose passfile logs in through the SCRAM verifier" psql_as scrabble "$CS/pg-scrabble.pgpass" "SELECT 1"
expect_fail "the old password is refused after the change" "password authentication failed" \
    psql_as scrabble "$(creds_pg_passfile scrabble)" "SELECT 1"
finish

#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for development and tests.
#
#   scripts/pg.sh start  DATADIR PORT   initdb if needed, start, ensure roles + db `scrabble`
#   scripts/pg.sh stop   DATADIR        fast shutdown (idempotent)
#   scripts/pg.sh status DATADIR        exit 0 when running, 3 when not
#   scripts/pg.sh psql   DATADIR ARGS.. psql as the superuser over the local socket
#
# initdb and postgres refuse to run as root, so the cluster runs as the
# unprivileged `postgres` system user (through runuser) and DATADIR is owned by
# it. Listens on 127.0.0.1:PORT only, with a Unix socket in DATADIR.
#
# Credentials (docs/SECURITY.md, "Database and Redis credentials"): the
# superuser is reachable only over the Unix socket, as the postgres OS user
# (peer); TCP refuses it. The roles scrabble (application: rows only),
# scrabble_owner (owns the schema: migrations) and scrabble_loadtest (rows +
# TRUNCATE: the load driver's seed/cleanup) log in with SCRAM passwords
# generated into $SECRETS_DIR/pg-<role>.pgpass (0600). Every start writes
# pg_hba.conf and sets the passwords from those files, so replacing a file and
# starting again rotates that password.
# Env: PG_BIN (default /usr/lib/postgresql/15/bin), PG_USER (default postgres),
#      PG_FSYNC (on|off, default on; tests may turn it off for speed),
#      SECRETS_DIR (default: secrets/ beside DATADIR).
set -euo pipefail
LOG_TAG=pg.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=${PG_USER:-postgres}
PG_FSYNC=${PG_FSYNC:-on}
# The roles and the SQL that sets them up are in scripts/lib.sh (creds_pg_*),
# shared with compose/secrets.sh.
DB_NAME=scrabble
DB_ROLE=scrabble
DB_OWNER=scrabble_owner
DB_LOADTEST=scrabble_loadtest

usage() {
    echo "usage: $0 start DATADIR PORT | stop DATADIR | status DATADIR | psql DATADIR [PSQL ARGS]" >&2
    exit 2
}

as_pg() { (cd / && runuser -u "$PG_USER" -- "$@"); }

# Pid of the running postmaster of $DATADIR, or nothing. A postmaster.pid whose
# pid is dead (or is not a postgres process) is stale: it and the socket lock
# files are removed, and orphaned backends still sitting in DATADIR are killed.
running_pid() {
    local pidfile=$DATADIR/postmaster.pid pid
    pid=$(read_pidfile "$pidfile")
    [ -n "$pid" ] || return 0
    if pid_alive "$pid" postgres; then
        echo "$pid"
        return 0
    fi
    log "removing stale $pidfile (pid $pid is not running)"
    kill_orphans
    rm -f "$pidfile" "$DATADIR"/.s.PGSQL.*.lock
}

kill_orphans() {
    local p pid
    for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = postgres ] || continue
        [ "$(readlink "$p/cwd" 2>/dev/null)" = "$DATADIR" ] || continue
        pid=${p#/proc/}
        log "killing orphaned postgres process $pid of $DATADIR"
        kill -KILL "$pid" 2>/dev/null || true
    done
}

running_port() { sed -n 4p "$DATADIR/postmaster.pid" 2>/dev/null; }

# The Unix socket directory: DATADIR, or (when its path is too long for a
# socket name) a directory under /tmp named after it. The superuser has no
# other way in, so there is always a socket.
sock_dir() {
    if [ ${#DATADIR} -le 90 ]; then
        echo "$DATADIR"
    else
        echo "/tmp/scrabble-pg.$(printf '%s' "$DATADIR" | md5sum | cut -c1-16)"
    fi
}

# psql_admin_db DB ARGS...: psql as the superuser over the local socket (peer
# authentication as the postgres OS user); SQL on stdin or -c.
psql_admin_db() {
    local db=$1
    shift
    as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$(sock_dir)" -p "$PORT" -U "$PG_USER" -d "$db" -tA "$@"
}
psql_admin() { psql_admin_db postgres "$@"; }

# Only the local socket lets the superuser in; the application roles need
# their SCRAM password, over TCP or the socket; nothing else is accepted.
write_hba() {
    cat >"$DATADIR/pg_hba.conf" <<EOF
# Written by scripts/pg.sh at every start (docs/SECURITY.md); edits are lost.
# TYPE  DATABASE  USER                                        ADDRESS       METHOD
local   all       $PG_USER                                                  peer
local   replication $PG_USER                                                peer
host    all       $PG_USER                                    0.0.0.0/0     reject
host    all       $PG_USER                                    ::/0          reject
local   $DB_NAME  $DB_ROLE,$DB_OWNER,$DB_LOADTEST                           scram-sha-256
host    $DB_NAME  $DB_ROLE,$DB_OWNER,$DB_LOADTEST             127.0.0.1/32  scram-sha-256
EOF
    chown "$PG_USER:" "$DATADIR/pg_hba.conf"
    chmod 600 "$DATADIR/pg_hba.conf"
}

init_cluster() {
    mkdir -p "$DATADIR"
    if [ -n "$(ls -A "$DATADIR")" ]; then
        die "$DATADIR is not empty but holds no PostgreSQL cluster (no PG_VERSION); remove it or choose another directory"
    fi
    chown "$PG_USER:" "$DATADIR"
    chmod 700 "$DATADIR"
    make_reachable_by "$PG_USER" "$DATADIR"
    log "initdb $DATADIR"
    local nosync=()
    [ "$PG_FSYNC" = off ] && nosync=(--no-sync)
    as_pg "$PG_BIN/initdb" -D "$DATADIR" -U "$PG_USER" --auth-local=peer \
        --auth-host=scram-sha-256 --encoding=UTF8 \
        --no-locale "${nosync[@]}" >"$DATADIR.initdb.log" 2>&1 || {
        cat "$DATADIR.initdb.log" >&2
        die "initdb failed for $DATADIR"
    }
    rm -f "$DATADIR.initdb.log"
    # Port and socket dir are given on the command line at each start, so the
    # same cluster can be restarted on another port.
    cat >>"$DATADIR/postgresql.conf" <<EOF

# --- scripts/pg.sh ---
listen_addresses = '127.0.0.1'
max_connections = 200
shared_buffers = 128MB
fsync = $PG_FSYNC
synchronous_commit = on
full_page_writes = on
log_line_prefix = '%m [%p] %q%u@%d '
log_min_duration_statement = -1
password_encryption = scram-sha-256
EOF
}

cmd_start() {
    [ -x "$PG_BIN/postgres" ] || die "$PG_BIN/postgres not found: run scripts/install-deps.sh (postgresql-15)"
    id -u "$PG_USER" >/dev/null 2>&1 || die "system user $PG_USER does not exist (it comes with the postgresql-15 package)"
    [[ $PORT =~ ^[0-9]+$ ]] || die "bad port: $PORT"

    if [ -f "$DATADIR/PG_VERSION" ]; then
        # Directories copied around or created by root: give them back.
        [ "$(stat -c %U "$DATADIR")" = "$PG_USER" ] || chown -R "$PG_USER:" "$DATADIR"
        chmod 700 "$DATADIR"
        make_reachable_by "$PG_USER" "$DATADIR"
        local pid rport
        pid=$(running_pid)
        if [ -n "$pid" ]; then
            rport=$(running_port)
            if [ "$rport" = "$PORT" ]; then
                log "already running (pid $pid) on 127.0.0.1:$PORT, data $DATADIR"
                write_hba
                as_pg "$PG_BIN/pg_ctl" -D "$DATADIR" -s reload
                ensure_db
                return 0
            fi
            die "the cluster in $DATADIR is already running (pid $pid) on port $rport, not $PORT; stop it first: $0 stop $DATADIR"
        fi
        require_port_free "$PORT" "PostgreSQL ($DATADIR)"
    else
        require_port_free "$PORT" "PostgreSQL ($DATADIR)"
        init_cluster
    fi

    local sockdir
    sockdir=$(sock_dir)
    if [ "$sockdir" != "$DATADIR" ]; then
        mkdir -p "$sockdir"
        chown "$PG_USER:" "$sockdir"
        chmod 700 "$sockdir"
    fi
    write_hba
    local logfile=$DATADIR/postgres.log
    log "starting PostgreSQL on 127.0.0.1:$PORT (data $DATADIR, log $logfile)"
    if ! as_pg "$PG_BIN/pg_ctl" -D "$DATADIR" -l "$logfile" -w -t 60 -s \
        -o "-p $PORT -k '$sockdir' -c listen_addresses=127.0.0.1" start; then
        tail -n 20 "$logfile" >&2 || true
        if port_in_use "$PORT" && [ -z "$(running_pid)" ]; then
            die "port $PORT is already in use by another process: $(port_owner "$PORT")"
        fi
        die "PostgreSQL failed to start on port $PORT; see $logfile"
    fi
    ensure_db
    log "ready: postgresql://$DB_ROLE@127.0.0.1:$PORT/$DB_NAME (passfile $(creds_pg_passfile "$DB_ROLE"))"
}

# The roles, their passwords (from $SECRETS_DIR, generated when missing),
# the database and the privileges. Idempotent: runs at every start, and
# upgrades a cluster made before the roles were split (where scrabble was a
# superuser owning the schema). SQL goes on stdin, so no password is ever on
# a command line.
ensure_db() {
    local role
    for role in $CREDS_PG_ROLES; do creds_ensure_pg "$role"; done
    creds_pg_roles_sql creds_pg_password | psql_admin -f - >/dev/null
    creds_pg_grants_sql | psql_admin_db "$DB_NAME" -f - >/dev/null
}

cmd_stop() {
    if [ ! -f "$DATADIR/PG_VERSION" ]; then
        log "no cluster in $DATADIR; nothing to stop"
        return 0
    fi
    local pid
    pid=$(running_pid)
    if [ -z "$pid" ]; then
        log "not running ($DATADIR)"
        return 0
    fi
    log "stopping PostgreSQL (pid $pid, $DATADIR)"
    if ! as_pg "$PG_BIN/pg_ctl" -D "$DATADIR" -m fast -w -t 60 -s stop; then
        log "fast shutdown failed; sending SIGQUIT (immediate)"
        kill -QUIT "$pid" 2>/dev/null || true
        stop_pid "$pid" 10 postgres || die "could not stop postgres pid $pid"
    fi
}

cmd_status() {
    local pid=""
    [ -f "$DATADIR/PG_VERSION" ] && pid=$(running_pid)
    if [ -n "$pid" ]; then
        echo "postgres: running (pid $pid) on 127.0.0.1:$(running_port), data $DATADIR"
        return 0
    fi
    echo "postgres: not running (data $DATADIR)"
    return 3
}

[ $# -ge 2 ] || usage
CMD=$1
DATADIR=$(abspath "$2")
SECRETS_DIR=$(abspath "${SECRETS_DIR:-$(dirname "$DATADIR")/secrets}")
case "$CMD" in
start)
    [ $# -eq 3 ] || usage
    PORT=$3
    cmd_start
    ;;
stop) cmd_stop ;;
status) cmd_status ;;
psql)
    shift 2
    PORT=$(running_port)
    [ -n "$PORT" ] || die "PostgreSQL in $DATADIR is not running"
    psql_admin_db "$DB_NAME" "$@"
    ;;
*) usage ;;
esac

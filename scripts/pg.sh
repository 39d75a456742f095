#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for development and tests.
#
#   scripts/pg.sh start  DATADIR PORT   initdb if needed, start, ensure role+db `scrabble`
#   scripts/pg.sh stop   DATADIR        fast shutdown (idempotent)
#   scripts/pg.sh status DATADIR        exit 0 when running, 3 when not
#
# initdb and postgres refuse to run as root, so the cluster runs as the
# unprivileged `postgres` system user (through runuser) and DATADIR is owned by
# it. Listens on 127.0.0.1:PORT only, with a Unix socket in DATADIR; trust auth.
# Env: PG_BIN (default /usr/lib/postgresql/15/bin), PG_USER (default postgres),
#      PG_FSYNC (on|off, default on; tests may turn it off for speed).
set -euo pipefail
LOG_TAG=pg.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=${PG_USER:-postgres}
PG_FSYNC=${PG_FSYNC:-on}
DB_NAME=scrabble
DB_ROLE=scrabble

usage() {
    echo "usage: $0 start DATADIR PORT | stop DATADIR | status DATADIR" >&2
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

psql_admin() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$PG_USER" -d postgres -tA "$@"
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
    as_pg "$PG_BIN/initdb" -D "$DATADIR" -U "$PG_USER" --auth=trust --encoding=UTF8 \
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

    local sockdir=$DATADIR
    if [ ${#DATADIR} -gt 90 ]; then
        log "warning: $DATADIR is too long for a Unix socket path; TCP only"
        sockdir=""
    fi
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
    log "ready: postgresql://$DB_ROLE@127.0.0.1:$PORT/$DB_NAME"
}

ensure_db() {
    if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_ROLE'")" != 1 ]; then
        psql_admin -c "CREATE ROLE $DB_ROLE LOGIN SUPERUSER"
    fi
    if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != 1 ]; then
        psql_admin -c "CREATE DATABASE $DB_NAME OWNER $DB_ROLE"
    fi
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
case "$CMD" in
start)
    [ $# -eq 3 ] || usage
    PORT=$3
    cmd_start
    ;;
stop) cmd_stop ;;
status) cmd_status ;;
*) usage ;;
esac

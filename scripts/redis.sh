#!/usr/bin/env bash
# A private Redis for development and tests (never the Debian system service).
#
#   scripts/redis.sh start  DIR PORT   daemonized redis-server on 127.0.0.1:PORT
#   scripts/redis.sh stop   DIR        SIGTERM, wait (idempotent)
#   scripts/redis.sh status DIR        exit 0 when running, 3 when not
#   scripts/redis.sh cli    DIR ARGS   redis-cli as the ACL user admin
#
# DIR holds redis.pid, redis.log, redis.port and users.acl. No persistence
# (appendonly no, save "").
#
# Credentials (docs/SECURITY.md, "Database and Redis credentials"): the
# default user is off; each role is an ACL user with a generated password in
# $SECRETS_DIR/redis-<user>.pass (0600), allowed only what the role does:
#   publisher   PUBLISH on ev:*            (game-svc events, gateway invitations)
#   subscriber  (P)SUBSCRIBE on ev:*       (the gateway's event subscriber)
#   drafts      GET, SET, DEL on draft:*   (game-svc drafts)
#   admin       everything                 (operators, these scripts)
# users.acl holds only SHA-256 hashes of the passwords. Every start rewrites
# it from the password files and (when Redis already runs) reloads it, so
# replacing a password file and starting again rotates that password.
# Env: SECRETS_DIR (default: secrets/ beside DIR).
set -euo pipefail
LOG_TAG=redis.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REDIS_SERVER=${REDIS_SERVER:-redis-server}

usage() {
    echo "usage: $0 start DIR PORT | stop DIR | status DIR | cli DIR [REDIS-CLI ARGS]" >&2
    exit 2
}

# Pid of our running redis-server, or nothing; a stale pidfile is removed.
running_pid() {
    local pid
    pid=$(read_pidfile "$DIR/redis.pid")
    [ -n "$pid" ] || return 0
    if pid_alive "$pid" redis-server; then
        echo "$pid"
        return 0
    fi
    log "removing stale $DIR/redis.pid (pid $pid is not running)"
    rm -f "$DIR/redis.pid"
}

running_port() { cat "$DIR/redis.port" 2>/dev/null || echo '?'; }

ping() {
    if command -v redis-cli >/dev/null 2>&1; then
        [ "$(redis_cli_admin "$1" ping 2>/dev/null)" = PONG ]
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

# Writes DIR/users.acl from the password files (generated when missing).
write_acl() {
    local user tmp=$DIR/users.acl.tmp
    for user in $CREDS_REDIS_USERS; do creds_ensure_redis "$user"; done
    (umask 077 && creds_redis_acl >"$tmp")
    mv -f "$tmp" "$DIR/users.acl"
}

cmd_start() {
    command -v "$REDIS_SERVER" >/dev/null 2>&1 || die "redis-server not found: run scripts/install-deps.sh"
    [[ $PORT =~ ^[0-9]+$ ]] || die "bad port: $PORT"
    mkdir -p "$DIR"
    local pid
    pid=$(running_pid)
    if [ -n "$pid" ]; then
        local rport
        rport=$(running_port)
        [ "$rport" = "$PORT" ] || die "redis in $DIR is already running (pid $pid) on port $rport, not $PORT; stop it first: $0 stop $DIR"
        log "already running (pid $pid) on 127.0.0.1:$PORT, dir $DIR"
        write_acl
        if ! redis_cli_admin "$PORT" acl load >/dev/null 2>&1; then
            log "warning: could not reload $DIR/users.acl as admin; if this Redis was started before ACLs, restart it: $0 stop $DIR; $0 start $DIR $PORT"
        fi
        return 0
    fi
    require_port_free "$PORT" "Redis ($DIR)"
    log "starting Redis on 127.0.0.1:$PORT (dir $DIR, log $DIR/redis.log)"
    echo "$PORT" >"$DIR/redis.port"
    write_acl
    "$REDIS_SERVER" --bind 127.0.0.1 --port "$PORT" --protected-mode yes \
        --aclfile "$DIR/users.acl" \
        --daemonize yes --pidfile "$DIR/redis.pid" --logfile "$DIR/redis.log" \
        --dir "$DIR" --appendonly no --save "" ||
        die "redis-server failed to start; see $DIR/redis.log"
    local deadline=$((SECONDS + 15))
    until ping "$PORT"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 20 "$DIR/redis.log" >&2 || true
            die "Redis did not answer on 127.0.0.1:$PORT; see $DIR/redis.log"
        fi
        sleep 0.1
    done
    log "ready: redis://127.0.0.1:$PORT (pid $(read_pidfile "$DIR/redis.pid"))"
}

cmd_stop() {
    local pid
    pid=$(running_pid)
    if [ -z "$pid" ]; then
        log "not running ($DIR)"
        return 0
    fi
    log "stopping Redis (pid $pid, $DIR)"
    stop_pid "$pid" 10 redis-server || die "could not stop redis pid $pid"
    rm -f "$DIR/redis.pid"
}

cmd_status() {
    local pid
    pid=$(running_pid)
    if [ -n "$pid" ]; then
        echo "redis: running (pid $pid) on 127.0.0.1:$(running_port), dir $DIR"
        return 0
    fi
    echo "redis: not running (dir $DIR)"
    return 3
}

[ $# -ge 2 ] || usage
CMD=$1
DIR=$(abspath "$2")
SECRETS_DIR=$(abspath "${SECRETS_DIR:-$(dirname "$DIR")/secrets}")
case "$CMD" in
start)
    [ $# -eq 3 ] || usage
    PORT=$3
    cmd_start
    ;;
stop) cmd_stop ;;
status)
    [ -d "$DIR" ] || {
        echo "redis: not running (dir $DIR)"
        exit 3
    }
    cmd_status
    ;;
cli)
    shift 2
    redis_cli_admin "$(running_port)" "$@"
    ;;
*) usage ;;
esac

#!/usr/bin/env bash
# The local development stack: private Postgres + Redis + store-svc, GAMES
# game-svc instances and GATEWAYS gateways, all on 127.0.0.1.
#
#   scripts/stack.sh build     install deps, configure + build build/ (RelWithDebInfo)
#   scripts/stack.sh start     build, then start everything (harmless when running)
#   scripts/stack.sh stop      SIGTERM the services (SIGKILL after 10 s), stop Redis, Postgres
#   scripts/stack.sh status    what runs, with health
#   scripts/stack.sh gateways  the running gateways' addresses, comma-separated
#
# Knobs (environment): GAMES=1 GATEWAYS=1 BUILD_DIR=build VAR_DIR=var PORT_OFFSET=0
#   SKIP_BUILD=1 (start without building), HEALTH_TIMEOUT=30 (seconds per service),
#   INSECURE_INTERNAL=1 (benchmarks only: plaintext between services).
# Services call each other over mutual TLS with the identities in
# $VAR_DIR/certs, made on the first start (scripts/gen-certs.sh).
# Service flags live in scripts/lib.sh (svc_args_*), shared with the
# integration-test helpers; ports are below.
set -euo pipefail
LOG_TAG=stack
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

BUILD_DIR=$(abspath "${BUILD_DIR:-build}")
VAR_DIR=$(abspath "${VAR_DIR:-var}")
# Unset GAMES/GATEWAYS mean: those of the running stack, else 1.
if [ -z "${GAMES:-}${GATEWAYS:-}" ] && [ -f "$VAR_DIR/run/topology" ]; then
    eval "$(grep -E '^GAMES=[0-9]+ GATEWAYS=[0-9]+$' "$VAR_DIR/run/topology")"
fi
GAMES=${GAMES:-1}
GATEWAYS=${GATEWAYS:-1}
HEALTH_TIMEOUT=${HEALTH_TIMEOUT:-30}

# Ports (DESIGN.md, "Defaults"). PORT_OFFSET shifts them all, so a second
# stack can run beside the first on the same machine.
PORT_OFFSET=${PORT_OFFSET:-0}
PG_PORT=$((55432 + PORT_OFFSET))
REDIS_PORT=$((56379 + PORT_OFFSET))
GATEWAY_PORT=$((7000 + PORT_OFFSET)) GATEWAY_METRICS=$((9000 + PORT_OFFSET)) # + j
GAME_PORT=$((7100 + PORT_OFFSET)) GAME_METRICS=$((9100 + PORT_OFFSET))       # + i
STORE_PORT=$((7200 + PORT_OFFSET)) STORE_METRICS=$((9200 + PORT_OFFSET))

PG_DIR=$VAR_DIR/pg
REDIS_DIR=$VAR_DIR/redis
# Database and Redis passwords (scripts/lib.sh, creds_*), made by pg.sh and
# redis.sh on first start.
export SECRETS_DIR=$VAR_DIR/secrets
RUN_DIR=$VAR_DIR/run
LOG_DIR=$VAR_DIR/log
CERTS_DIR=$VAR_DIR/certs
INSECURE_INTERNAL=${INSECURE_INTERNAL:-0}

[[ $GAMES =~ ^[1-9][0-9]*$ ]] && [ "$GAMES" -le 100 ] || die "GAMES must be 1..100 (got '$GAMES')"
[[ $GATEWAYS =~ ^[1-9][0-9]*$ ]] && [ "$GATEWAYS" -le 100 ] || die "GATEWAYS must be 1..100 (got '$GATEWAYS')"

cmd_build() {
    "$REPO_ROOT/scripts/install-deps.sh"
    if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
        cmake -S "$REPO_ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    fi
    cmake --build "$BUILD_DIR" -j2
}

# The services of this topology, in start order: "name binary grpc metrics".
services() {
    local i game_ports=""
    echo "store-svc store-svc $STORE_PORT $STORE_METRICS"
    for ((i = 0; i < GAMES; i++)); do
        echo "game-svc-$i game-svc $((GAME_PORT + i)) $((GAME_METRICS + i))"
    done
    for ((i = 0; i < GATEWAYS; i++)); do
        echo "gateway-$i gateway $((GATEWAY_PORT + i)) $((GATEWAY_METRICS + i))"
    done
}

game_ports() {
    local i out=""
    for ((i = 0; i < GAMES; i++)); do out+="${out:+,}$((GAME_PORT + i))"; done
    echo "$out"
}

# svc_args NAME GRPC METRICS: the service's flags, one per line.
svc_args() {
    case "$1" in
    store-svc) svc_args_store "$2" "$3" "$PG_PORT" "$REDIS_PORT" ;;
    game-svc-*) svc_args_game "$2" "$3" "$STORE_PORT" "$REDIS_PORT" "${1#game-svc-}" "$BUILD_DIR/share" ;;
    gateway-*) svc_args_gateway "$2" "$3" "$STORE_PORT" "$REDIS_PORT" "$(game_ports)" ;;
    esac
    svc_args_identity
}

# The service identity flags (mutual TLS between services), one per line.
svc_args_identity() {
    echo "--certs-dir=$CERTS_DIR"
    [ "$INSECURE_INTERNAL" != 1 ] || echo "--insecure-internal"
}

# probe_certs NAME: the certificates directory the health probe needs for
# service NAME (its gRPC port takes mutual TLS only), or nothing.
probe_certs() {
    local args
    mapfile -t args < <(svc_args_identity)
    if svc_internal_port "$(bin_of "$1")" "${args[@]}"; then echo "$CERTS_DIR"; fi
}

# Pid of a running service NAME (binary BIN), or nothing; stale pidfiles go.
svc_pid() {
    local name=$1 bin=$2 pidfile=$RUN_DIR/$1.pid pid
    pid=$(read_pidfile "$pidfile")
    [ -n "$pid" ] || return 0
    if pid_alive "$pid" "${bin:0:15}"; then
        echo "$pid"
    else
        log "removing stale $pidfile (pid $pid is not running)"
        rm -f "$pidfile"
    fi
}

topology() { echo "GAMES=$GAMES GATEWAYS=$GATEWAYS"; }

running_services() {
    local f
    for f in "$RUN_DIR"/*.pid; do
        [ -f "$f" ] || continue
        local name=${f##*/}
        name=${name%.pid}
        [ -n "$(svc_pid "$name" "$(bin_of "$name")")" ] && echo "$name"
    done
    return 0
}

bin_of() {
    case "$1" in
    store-svc) echo store-svc ;;
    game-svc-*) echo game-svc ;;
    gateway-*) echo gateway ;;
    *) echo "$1" ;;
    esac
}

cmd_start() {
    mkdir -p "$RUN_DIR" "$LOG_DIR"
    local running
    running=$(running_services)
    if [ -n "$running" ] && [ -f "$RUN_DIR/topology" ] && [ "$(cat "$RUN_DIR/topology")" != "$(topology)" ]; then
        die "the stack is running with $(cat "$RUN_DIR/topology"), not $(topology): 'make stop' first to change the topology"
    fi

    [ "${SKIP_BUILD:-0}" = 1 ] || cmd_build

    # Every port of a service we are about to start must be free, checked
    # before anything starts so that a conflict leaves nothing half-started.
    local name bin port mport pid missing=() args
    while read -r name bin port mport; do
        [ -x "$BUILD_DIR/bin/$bin" ] && [ -z "$(svc_pid "$name" "$bin")" ] || continue
        require_port_free "$port" "$name gRPC"
        require_port_free "$mport" "$name metrics"
    done < <(services)

    "$REPO_ROOT/scripts/pg.sh" start "$PG_DIR" "$PG_PORT"
    "$REPO_ROOT/scripts/redis.sh" start "$REDIS_DIR" "$REDIS_PORT"
    certs_ensure "$CERTS_DIR" || die "no service identities in $CERTS_DIR: see the message above"
    [ "$INSECURE_INTERNAL" != 1 ] || log "warning: INSECURE_INTERNAL=1: plaintext between services, no identity checks (benchmarks only)"
    topology >"$RUN_DIR/topology"

    while read -r name bin port mport; do
        if [ ! -x "$BUILD_DIR/bin/$bin" ]; then
            missing+=("$name")
            continue
        fi
        pid=$(svc_pid "$name" "$bin")
        if [ -n "$pid" ]; then
            log "$name already running (pid $pid)"
            continue
        fi
        mapfile -t args < <(svc_args "$name" "$port" "$mport")
        {
            echo
            echo "==== $(date -Is) starting $BUILD_DIR/bin/$bin ${args[*]}"
        } >>"$LOG_DIR/$name.log"
        # setsid: the service outlives the shell (and terminal) that started it.
        setsid "$BUILD_DIR/bin/$bin" "${args[@]}" </dev/null >>"$LOG_DIR/$name.log" 2>&1 &
        echo $! >"$RUN_DIR/$name.pid"
        log "started $name (pid $!) on 127.0.0.1:$port, metrics :$mport, log ${LOG_DIR#"$REPO_ROOT"/}/$name.log"
        # A game-svc must be up before the gateways connect; store before games.
        wait_service "$name" "$bin" "$port"
    done < <(services)

    echo
    echo "Stack is up ($(topology)):"
    echo "  postgres   postgresql://scrabble@127.0.0.1:$PG_PORT/scrabble   (data ${PG_DIR#"$REPO_ROOT"/})"
    echo "  redis      redis://127.0.0.1:$REDIS_PORT"
    echo "  passwords  ${SECRETS_DIR#"$REPO_ROOT"/}/ (pg-<role>.pgpass, redis-<user>.pass; docs/SECURITY.md)"
    while read -r name bin port mport; do
        [ -x "$BUILD_DIR/bin/$bin" ] || continue
        printf '  %-10s 127.0.0.1:%s (gRPC)   http://127.0.0.1:%s/metrics\n' "$name" "$port" "$mport"
    done < <(services)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "  not started (binary not built yet): ${missing[*]}"
    fi
    echo "  logs in ${LOG_DIR#"$REPO_ROOT"/}/, pids in ${RUN_DIR#"$REPO_ROOT"/}/"
    echo "stop with: make stop"
}

wait_service() {
    local name=$1 bin=$2 port=$3 pid rc=0
    pid=$(read_pidfile "$RUN_DIR/$name.pid")
    wait_healthy "$BUILD_DIR" "$port" "$HEALTH_TIMEOUT" "$pid" "$(probe_certs "$name")" || rc=$?
    case $rc in
    0) log "$name is SERVING" ;;
    2)
        tail -n 20 "$LOG_DIR/$name.log" >&2
        rm -f "$RUN_DIR/$name.pid"
        die "$name exited during start-up; see ${LOG_DIR}/$name.log (the rest stays up: make stop)"
        ;;
    *)
        tail -n 20 "$LOG_DIR/$name.log" >&2
        die "$name (pid $pid) did not report SERVING on 127.0.0.1:$port within ${HEALTH_TIMEOUT}s; see $LOG_DIR/$name.log"
        ;;
    esac
}

cmd_stop() {
    local name pid f
    # Every service that has a pidfile, whatever the topology: gateways first.
    for f in "$RUN_DIR"/gateway-*.pid "$RUN_DIR"/game-svc-*.pid "$RUN_DIR"/store-svc.pid; do
        [ -f "$f" ] || continue
        name=${f##*/}
        name=${name%.pid}
        pid=$(svc_pid "$name" "$(bin_of "$name")")
        if [ -n "$pid" ]; then
            log "stopping $name (pid $pid)"
            stop_pid "$pid" 10 || log "warning: $name (pid $pid) did not stop"
        fi
        rm -f "$RUN_DIR/$name.pid"
    done
    rm -f "$RUN_DIR/topology"
    "$REPO_ROOT/scripts/redis.sh" stop "$REDIS_DIR"
    "$REPO_ROOT/scripts/pg.sh" stop "$PG_DIR"
}

# status_certs NAME PID: as probe_certs, for a running service (its own flags).
status_certs() {
    local args
    mapfile -t args < <(tr '\0' '\n' <"/proc/$2/cmdline" 2>/dev/null)
    if svc_internal_port "$(bin_of "$1")" "${args[@]}"; then echo "$CERTS_DIR"; fi
}

cmd_status() {
    local rc=0 name pid port
    "$REPO_ROOT/scripts/pg.sh" status "$PG_DIR" || rc=1
    "$REPO_ROOT/scripts/redis.sh" status "$REDIS_DIR" || rc=1
    [ -f "$RUN_DIR/topology" ] && echo "topology: $(cat "$RUN_DIR/topology")"
    for name in $(ls "$RUN_DIR" 2>/dev/null | sed -n 's/\.pid$//p' | sort); do
        pid=$(svc_pid "$name" "$(bin_of "$name")")
        port=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 's/^--listen=127\.0\.0\.1://p' | head -n 1 || true)
        if [ -z "$pid" ]; then
            echo "$name: not running"
            rc=1
        elif [ -n "$port" ] && health_check "$BUILD_DIR" "$port" "$(status_certs "$name" "$pid")"; then
            echo "$name: running (pid $pid), SERVING on 127.0.0.1:$port"
        else
            echo "$name: running (pid $pid), NOT SERVING on 127.0.0.1:${port:-?}"
            rc=1
        fi
    done
    return $rc
}

cmd_gateways() {
    local f pid addrs=""
    for f in "$RUN_DIR"/gateway-*.pid; do
        [ -f "$f" ] || continue
        pid=$(read_pidfile "$f")
        pid_alive "$pid" gateway || continue
        addrs+="${addrs:+,}$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n 's/^--listen=//p')"
    done
    echo "${addrs:-127.0.0.1:$GATEWAY_PORT}"
}

case "${1:-}" in
build) cmd_build ;;
gateways) cmd_gateways ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
    echo "usage: $0 build|start|stop|status|gateways   (env: GAMES=N GATEWAYS=N)" >&2
    exit 2
    ;;
esac

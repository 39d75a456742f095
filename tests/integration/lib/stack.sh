# shellcheck shell=bash
# Helpers for integration tests: private Postgres/Redis/services on free
# loopback ports, all torn down when the test's shell exits.
#
#   . "$REPO/tests/integration/lib/stack.sh"
#   stack_init                 # temp dir $STACK_TMP, cleanup trap on EXIT,
#                              # service identities in $STACK_CERTS (mTLS on)
#   pg_up                      # -> PG_PORT, PG_DIR, PG_CONNINFO (application role),
#                              #    PG_LOADTEST_CONNINFO, PG_OWNER_CONNINFO (schema owner);
#                              #    exports PGPASSFILE (application role)
#   redis_up                   # -> REDIS_PORT, REDIS_DIR
#   (passwords: $SECRETS_DIR = $STACK_TMP/secrets, see scripts/lib.sh creds_*;
#    redis_cli_admin PORT ARGS... runs redis-cli as the ACL admin)
#   store_up [FLAGS...]        # -> STORE_PORT, STORE_METRICS_PORT   (needs pg_up)
#   game_up [N [FLAGS...]]     # N instances -> GAME_PORTS (comma list), GAME_METRICS_PORTS
#   gateway_up [FLAGS...]      # -> GATEWAY_PORT, GATEWAY_METRICS_PORT
#       (FLAGS are extra --name=value flags after the standard ones)
#   svc_up NAME BIN PORT ARGS... # start any binary, wait for SERVING on PORT
#   svc_start NAME BIN ARGS... # start any binary; its log is $STACK_TMP/NAME.log
#   stack_require BIN|PATH...  # exit 77 (skipped) unless built in $BUILD_DIR
#   stack_defer 'CMD'          # extra teardown, run first
#   free_port                  # a free loopback TCP port
#   wait_port HOST PORT SECS   # until a TCP connect succeeds (1 on timeout)
#
# Env: BUILD_DIR (default <repo>/build; ctest passes the build tree in use),
#      KEEP_TMP=1 keeps $STACK_TMP (logs, data) after the test,
#      PG_FSYNC (default off here: throwaway clusters).
# Service flags come from scripts/lib.sh (svc_args_*), shared with scripts/stack.sh.
# Services call each other over mutual TLS, as in make run: stack_init puts
# a private CA and the identities in $STACK_CERTS and exports the services'
# SCRABBLE_*_CERTS_DIR, so every service a test starts has its identity. A
# test client that stands in for a service presents $STACK_CERTS/<name>.crt.

_stack_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$_stack_lib_dir/../../.." && pwd)
# shellcheck source=../../../scripts/lib.sh
. "$REPO_ROOT/scripts/lib.sh"
BUILD_DIR=${BUILD_DIR:-$REPO_ROOT/build}
export PG_FSYNC=${PG_FSYNC:-off}

STACK_PIDS=()
STACK_NAMES=()
STACK_DEFERRED=()

# stack_require ARTIFACT...: each a binary name in $BUILD_DIR/bin, a path
# under $BUILD_DIR (share/wamerican.kwg) or cmd:TOOL (a command on PATH);
# exits 77 (ctest: skipped) naming what is missing, for components CMake
# left out of this build or tools not installed.
stack_require() {
    local a missing=() absent=()
    for a in "$@"; do
        case "$a" in
        cmd:*) command -v "${a#cmd:}" >/dev/null || absent+=("${a#cmd:}") ;;
        */*) [ -f "$BUILD_DIR/$a" ] || missing+=("$a") ;;
        *) [ -x "$BUILD_DIR/bin/$a" ] || missing+=("bin/$a") ;;
        esac
    done
    [ ${#missing[@]} -eq 0 ] || { echo "SKIP: not built in $BUILD_DIR: ${missing[*]}"; exit 77; }
    [ ${#absent[@]} -eq 0 ] || { echo "SKIP: not installed: ${absent[*]}"; exit 77; }
}

# Rate limits no test client reaches: for tests about what calls answer,
# not about rates (edge-input and the gateway test set their own).
STACK_NO_RATE_LIMITS=(--rate-write=1000 --burst-write=1000 --rate-read=1000 --burst-read=1000
    --rate-list=1000 --burst-list=1000 --rate-lookup=1000 --burst-lookup=1000)

# stack_defer CMD: run CMD (eval'ed) first thing at teardown.
stack_defer() { STACK_DEFERRED+=("$1"); }

stack_init() {
    STACK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/scrabble-it.XXXXXX")
    export SECRETS_DIR=$STACK_TMP/secrets
    trap stack_down EXIT
    trap 'exit 130' INT TERM
    stack_identities
}

# stack_identities: the service identities for this test in
# $STACK_CERTS, exported to every service it starts and to its clients.
# Making a CA and six leaves costs ~60 openssl runs (seconds on a loaded
# 2-core box), so one set is made per build tree ($BUILD_DIR/it-certs, under
# a mkdir lock: ctest runs tests in parallel) and each test gets a copy;
# a newer gen-certs.sh makes a new set.
stack_identities() {
    local cache=$BUILD_DIR/it-certs i
    [ -d "$BUILD_DIR" ] && [ -w "$BUILD_DIR" ] || cache=$STACK_TMP/certs-cache
    # A lock left by a test killed while making the set: gone after 2 min.
    find "$cache.lock" -maxdepth 0 -mmin +2 -exec rmdir {} + 2>/dev/null || true
    if [ ! -f "$cache/.complete" ] || [ "$REPO_ROOT/scripts/gen-certs.sh" -nt "$cache/.complete" ]; then
        for ((i = 0; i < 600; i++)); do
            if mkdir "$cache.lock" 2>/dev/null; then
                if [ ! -f "$cache/.complete" ] || [ "$REPO_ROOT/scripts/gen-certs.sh" -nt "$cache/.complete" ]; then
                    rm -rf "$cache"
                    certs_ensure "$cache" 2>/dev/null && touch "$cache/.complete"
                fi
                rmdir "$cache.lock"
                break
            fi
            [ -f "$cache/.complete" ] && ! [ "$REPO_ROOT/scripts/gen-certs.sh" -nt "$cache/.complete" ] && break
            sleep 0.1
        done
    fi
    STACK_CERTS=$STACK_TMP/certs
    if [ -f "$cache/.complete" ]; then
        cp -a "$cache" "$STACK_CERTS"
    else
        certs_ensure "$STACK_CERTS" 2>/dev/null || return 1 # the lock was stuck: make our own
    fi
    export STACK_CERTS
    export SCRABBLE_GATEWAY_CERTS_DIR=$STACK_CERTS SCRABBLE_GAME_CERTS_DIR=$STACK_CERTS \
        SCRABBLE_STORE_CERTS_DIR=$STACK_CERTS
}

stack_down() {
    local rc=$? i
    for ((i = ${#STACK_DEFERRED[@]} - 1; i >= 0; i--)); do
        eval "${STACK_DEFERRED[i]}" || true
    done
    for ((i = ${#STACK_PIDS[@]} - 1; i >= 0; i--)); do
        stop_pid "${STACK_PIDS[i]}" 10 || true
    done
    [ -n "${REDIS_DIR:-}" ] && "$REPO_ROOT/scripts/redis.sh" stop "$REDIS_DIR" >/dev/null 2>&1
    [ -n "${PG_DIR:-}" ] && "$REPO_ROOT/scripts/pg.sh" stop "$PG_DIR" >/dev/null 2>&1
    if [ "$rc" -ne 0 ] && [ -n "${STACK_TMP:-}" ]; then
        # Show the tail of every log: ctest --output-on-failure prints it.
        for f in "$STACK_TMP"/*.log "${PG_DIR:-/nonexistent}/postgres.log"; do
            [ -f "$f" ] || continue
            echo "---- tail $f" >&2
            tail -n 30 "$f" >&2
        done
    fi
    if [ -n "${STACK_TMP:-}" ] && [ "${KEEP_TMP:-0}" != 1 ]; then
        rm -rf "$STACK_TMP"
    elif [ -n "${STACK_TMP:-}" ]; then
        echo "kept $STACK_TMP" >&2
    fi
    return "$rc"
}

pg_up() {
    PG_DIR=$STACK_TMP/pg
    PG_PORT=$(free_port)
    "$REPO_ROOT/scripts/pg.sh" start "$PG_DIR" "$PG_PORT" >/dev/null 2>"$STACK_TMP/pg.sh.log" || {
        cat "$STACK_TMP/pg.sh.log" >&2
        return 1
    }
    stack_pg_creds
}

# The test's Postgres credentials: conninfos with passfiles, and PGPASSFILE
# for plain `psql -U scrabble` calls.
stack_pg_creds() {
    PG_CONNINFO=$(pg_conninfo "$PG_PORT" scrabble)
    PG_LOADTEST_CONNINFO=$(pg_conninfo "$PG_PORT" scrabble_loadtest)
    PG_OWNER_CONNINFO=$(pg_conninfo "$PG_PORT" scrabble_owner)
    export PGPASSFILE
    PGPASSFILE=$(creds_pg_passfile scrabble)
}

redis_up() {
    REDIS_DIR=$STACK_TMP/redis
    REDIS_PORT=$(free_port)
    "$REPO_ROOT/scripts/redis.sh" start "$REDIS_DIR" "$REDIS_PORT" >/dev/null 2>"$STACK_TMP/redis.sh.log" || {
        cat "$STACK_TMP/redis.sh.log" >&2
        return 1
    }
}

# svc_start NAME BIN ARGS...: start in the background, remember the pid.
svc_start() {
    local name=$1 bin=$2
    shift 2
    [ -x "$bin" ] || {
        echo "missing binary: $bin" >&2
        return 1
    }
    "$bin" "$@" >"$STACK_TMP/$name.log" 2>&1 &
    STACK_PIDS+=($!)
    STACK_NAMES+=("$name")
    SVC_PID=$!
}

# svc_up NAME BIN GRPC_PORT ARGS...: start and wait for the health check.
svc_up() {
    local name=$1 bin=$2 port=$3
    shift 3
    svc_start "$name" "$bin" "$@" || return 1
    local certs=""
    svc_internal_port "$bin" "$@" && certs=${STACK_CERTS:-}
    wait_healthy "$BUILD_DIR" "$port" "${SVC_TIMEOUT:-30}" "$SVC_PID" "$certs" || {
        echo "$name did not become healthy on 127.0.0.1:$port; log $STACK_TMP/$name.log:" >&2
        tail -n 30 "$STACK_TMP/$name.log" >&2
        return 1
    }
}
_svc_up() { svc_up "$@"; }

store_up() {
    STORE_PORT=$(free_port)
    STORE_METRICS_PORT=$(free_port)
    local args
    mapfile -t args < <(svc_args_store "$STORE_PORT" "$STORE_METRICS_PORT" "$PG_PORT" "${REDIS_PORT:-}")
    svc_up store-svc "$BUILD_DIR/bin/store-svc" "$STORE_PORT" "${args[@]}" "$@"
}

game_up() {
    local n=${1:-1} i port mport args
    shift || true
    GAME_PORTS=""
    GAME_METRICS_PORTS=""
    for ((i = 0; i < n; i++)); do
        port=$(free_port)
        mport=$(free_port)
        mapfile -t args < <(svc_args_game "$port" "$mport" "$STORE_PORT" "$REDIS_PORT" "$i" "$BUILD_DIR/share")
        svc_up "game-svc-$i" "$BUILD_DIR/bin/game-svc" "$port" "${args[@]}" "$@" || return 1
        GAME_PORTS+="${GAME_PORTS:+,}$port"
        GAME_METRICS_PORTS+="${GAME_METRICS_PORTS:+,}$mport"
    done
}

gateway_up() {
    GATEWAY_PORT=$(free_port)
    GATEWAY_METRICS_PORT=$(free_port)
    local args
    mapfile -t args < <(svc_args_gateway "$GATEWAY_PORT" "$GATEWAY_METRICS_PORT" "$STORE_PORT" "$REDIS_PORT" "$GAME_PORTS")
    # Every test client comes from 127.0.0.1: the per-address Login and
    # Register throttles would make tests that open many sessions depend on
    # timing. tests/integration/edge-input turns them on (later flags win).
    svc_up gateway "$BUILD_DIR/bin/gateway" "$GATEWAY_PORT" "${args[@]}" \
        --login-per-address=0 --register-per-address=0 "$@"
}

# shellcheck shell=bash
# Shared shell helpers for scripts/*.sh and tests/integration/lib/*.sh.
# Source it; it defines functions only (no side effects besides REPO_ROOT).

REPO_ROOT=${REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

log() { printf '%s: %s\n' "${LOG_TAG:-$(basename "$0")}" "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# pid_alive PID [COMM]: the process exists (and, if COMM is given, its
# /proc/PID/comm is COMM, so a recycled pid is not mistaken for ours).
# A zombie (killed but not yet reaped by its parent or init) counts as dead.
pid_alive() {
    local pid=$1 comm=${2:-} stat
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat:0:1}" != Z ] || return 1
    [ -z "$comm" ] && return 0
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ]
}

# read_pidfile FILE: prints the first line's pid (empty when absent).
read_pidfile() {
    [ -f "$1" ] && head -n 1 "$1" 2>/dev/null | tr -dc '0-9'
    return 0
}

# port_in_use PORT [HOST]: something listens on (or accepts connections to)
# PORT on the loopback address.
port_in_use() {
    local port=$1 host=${2:-127.0.0.1}
    if command -v ss >/dev/null 2>&1; then
        [ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && return 0
    fi
    (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}

# port_owner PORT: a short description of who listens on PORT (best effort).
port_owner() {
    local users=""
    if command -v ss >/dev/null 2>&1; then
        users=$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'users:(([^)]*))' | head -n 1)
    fi
    printf '%s' "${users:-unknown process}"
}

# require_port_free PORT WHAT: exit 1 with a message naming the port if taken.
require_port_free() {
    if port_in_use "$1"; then
        die "port $1 (127.0.0.1:$1, wanted for $2) is already in use by another process: $(port_owner "$1")"
    fi
}

# wait_port HOST PORT TIMEOUT_SECONDS: wait until a TCP connect succeeds.
wait_port() {
    local host=$1 port=$2 timeout=${3:-10}
    local deadline=$((SECONDS + timeout))
    while ! (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

# free_port: print a loopback TCP port nobody listens on. Picked at random in
# 20000-32767 (below Linux's ephemeral range and away from the stack's fixed
# ports). Each port handed out is reserved for 10 minutes (an atomic mkdir in
# $PORT_RESERVATIONS), so parallel tests and calls in a row never get the same
# port before its user has bound it.
PORT_RESERVATIONS=${PORT_RESERVATIONS:-/tmp/scrabble-port-reservations}
free_port() {
    local i port
    mkdir -p "$PORT_RESERVATIONS" 2>/dev/null
    find "$PORT_RESERVATIONS" -mindepth 1 -maxdepth 1 -mmin +10 -exec rmdir {} + 2>/dev/null
    for i in $(seq 1 500); do
        port=$((20000 + (RANDOM % 12768)))
        port_in_use "$port" && continue
        mkdir "$PORT_RESERVATIONS/$port" 2>/dev/null || continue
        echo "$port"
        return 0
    done
    return 1
}

# stop_pid PID [TIMEOUT] [COMM]: SIGTERM, wait up to TIMEOUT seconds (10),
# then SIGKILL. Returns 0 once the process is gone.
stop_pid() {
    local pid=$1 timeout=${2:-10} comm=${3:-}
    pid_alive "$pid" "$comm" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + timeout))
    while pid_alive "$pid" "$comm"; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "pid $pid did not exit within ${timeout}s after SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.2
            break
        fi
        sleep 0.1
    done
    ! pid_alive "$pid" "$comm"
}

# abspath PATH: absolute path without requiring it to exist.
abspath() {
    case "$1" in
    /*) realpath -m "$1" ;;
    *) realpath -m "$PWD/$1" ;;
    esac
}

# make_reachable_by USER DIR: make sure USER can traverse every parent of DIR
# (adds o+x to the parents that lack it) and verify it.
make_reachable_by() {
    local user=$1 dir=$2 d
    if runuser -u "$user" -- test -x "$dir" 2>/dev/null; then
        return 0
    fi
    d=$(dirname "$dir")
    while [ "$d" != "/" ]; do
        if [ -d "$d" ] && [ "$(($(stat -c '%a' "$d" | sed 's/^.*\(.\)$/\1/') & 1))" -eq 0 ]; then
            log "chmod o+x $d (so that $user can reach $dir)"
            chmod o+x "$d"
        fi
        d=$(dirname "$d")
    done
    runuser -u "$user" -- test -x "$dir" ||
        die "user $user still cannot reach $dir: check the permissions of its parent directories"
}

# ---------------------------------------------------------------------------
# Service command lines: the one place that knows each service's flags. Used
# by scripts/stack.sh (the dev stack) and tests/integration/lib/stack.sh (the
# private per-test stacks). Each prints one argument per line.
#   svc_args_store   GRPC_PORT METRICS_PORT PG_PORT [REDIS_PORT]
#                    (without REDIS_PORT the event relay is off: --redis=)
#   svc_args_game    GRPC_PORT METRICS_PORT STORE_PORT REDIS_PORT INSTANCE LEXICON_DIR
#   svc_args_gateway GRPC_PORT METRICS_PORT STORE_PORT REDIS_PORT GAME_PORTS(comma list)
#   (the credentials flags come from creds_args_*, below; SECRETS_DIR must be set)
svc_args_store() {
    printf '%s\n' "--listen=127.0.0.1:$1" "--metrics-listen=127.0.0.1:$2"
    creds_args_store "$3"
    if [ -n "${4:-}" ]; then
        printf '%s\n' "--redis=127.0.0.1:$4"
        creds_args_redis
    else
        printf '%s\n' "--redis="
    fi
}
svc_args_game() {
    printf '%s\n' "--listen=127.0.0.1:$1" "--metrics-listen=127.0.0.1:$2" \
        "--store=127.0.0.1:$3" "--redis=127.0.0.1:$4" "--instance=$5" "--lexicon-dir=$6"
    creds_args_redis
}
svc_args_gateway() {
    local games="" p
    for p in ${5//,/ }; do games+="${games:+,}127.0.0.1:$p"; done
    printf '%s\n' "--listen=127.0.0.1:$1" "--metrics-listen=127.0.0.1:$2" \
        "--store=127.0.0.1:$3" "--games=$games" "--redis=127.0.0.1:$4"
    creds_args_redis
}

# ---------------------------------------------------------------------------
# Database and Redis credentials (docs/SECURITY.md, "Database and Redis
# credentials"). Every secret is a file in SECRETS_DIR (var/secrets for the
# dev stack, $STACK_TMP/secrets in tests), mode 0600, generated on first use
# by scripts/pg.sh and scripts/redis.sh, never committed:
#   pg-<role>.pgpass    a libpq passfile line "*:*:*:<role>:<password>" for
#                       each Postgres role: scrabble (the application),
#                       scrabble_owner (schema owner: migrations),
#                       scrabble_loadtest (loadtest seed/cleanup)
#   redis-<user>.pass   the password of each Redis ACL user: publisher,
#                       subscriber, drafts (the services), admin (operators)
# Passwords reach programs through these files (libpq passfile=, the
# services' --redis-secrets, REDISCLI_AUTH), never on a command line.
CREDS_PG_ROLES="scrabble scrabble_owner scrabble_loadtest"
CREDS_REDIS_USERS="publisher subscriber drafts admin"

# creds_new_password: 32 random hex digits (no character that a passfile,
# a conninfo or an ACL rule would need to escape).
creds_new_password() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

# creds_ensure_dir: create SECRETS_DIR (mode 0700).
creds_ensure_dir() {
    [ -n "${SECRETS_DIR:-}" ] || die "SECRETS_DIR is not set"
    (umask 077 && mkdir -p "$SECRETS_DIR")
    chmod 700 "$SECRETS_DIR"
}

# creds_pg_passfile ROLE / creds_redis_file USER: the secret's path.
creds_pg_passfile() { echo "$SECRETS_DIR/pg-$1.pgpass"; }
creds_redis_file() { echo "$SECRETS_DIR/redis-$1.pass"; }

# creds_ensure_pg ROLE: the role's passfile, generated when missing; the
# mode is forced to 0600 (libpq ignores a passfile others can read).
creds_ensure_pg() {
    local f
    creds_ensure_dir
    f=$(creds_pg_passfile "$1")
    [ -s "$f" ] || (umask 077 && echo "*:*:*:$1:$(creds_new_password)" >"$f")
    chmod 600 "$f"
}
# creds_pg_password ROLE: the password in the role's passfile.
creds_pg_password() { cut -d: -f5- "$(creds_pg_passfile "$1")" | head -n 1; }

# creds_ensure_redis USER: the user's password file, generated when missing.
creds_ensure_redis() {
    local f
    creds_ensure_dir
    f=$(creds_redis_file "$1")
    [ -s "$f" ] || (umask 077 && creds_new_password >"$f")
    chmod 600 "$f"
}

# creds_pg_roles_sql PASSWORD_FN: SQL (for the postgres database, as the
# superuser) creating or updating the roles and the database; PASSWORD_FN
# ROLE prints the role's password, or its SCRAM verifier. Idempotent.
creds_pg_roles_sql() {
    local role
    for role in $CREDS_PG_ROLES; do
        echo "SELECT 'CREATE ROLE $role' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$role') \\gexec"
        echo "ALTER ROLE $role LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '$("$1" "$role")';"
    done
    echo "SELECT 'CREATE DATABASE scrabble OWNER scrabble_owner' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'scrabble') \\gexec"
}

# creds_pg_grants_sql: SQL (for the scrabble database, as the superuser)
# giving each role only what it needs. scrabble_owner owns the schema and
# every object migrations create; scrabble gets rows (no DDL, no TRUNCATE,
# no TEMP); scrabble_loadtest gets rows, TRUNCATE and TEMP (loadtest
# seed/cleanup/--reset). Default privileges extend this to every table a
# later migration creates. REASSIGN OWNED upgrades a cluster made when
# scrabble was a superuser owning everything.
creds_pg_grants_sql() {
    cat <<'EOF'
REASSIGN OWNED BY scrabble TO scrabble_owner;
ALTER DATABASE scrabble OWNER TO scrabble_owner;
REVOKE ALL ON DATABASE scrabble FROM PUBLIC;
GRANT CONNECT ON DATABASE scrabble TO scrabble, scrabble_loadtest;
GRANT TEMPORARY ON DATABASE scrabble TO scrabble_loadtest;
ALTER SCHEMA public OWNER TO scrabble_owner;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO scrabble, scrabble_loadtest;
ALTER DEFAULT PRIVILEGES FOR ROLE scrabble_owner IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO scrabble;
ALTER DEFAULT PRIVILEGES FOR ROLE scrabble_owner IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO scrabble_loadtest;
ALTER DEFAULT PRIVILEGES FOR ROLE scrabble_owner IN SCHEMA public
    GRANT USAGE, SELECT ON SEQUENCES TO scrabble, scrabble_loadtest;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO scrabble;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO scrabble_loadtest;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO scrabble, scrabble_loadtest;
EOF
}

# creds_redis_acl_rules USER: what each Redis ACL user may do (its role).
creds_redis_acl_rules() {
    case "$1" in
    publisher) echo "resetkeys resetchannels &ev:* -@all +publish +ping" ;;
    subscriber) echo "resetkeys resetchannels &ev:* -@all +psubscribe +subscribe +punsubscribe +unsubscribe +ping" ;;
    drafts) echo "resetkeys resetchannels ~draft:* -@all +get +set +del +ping" ;;
    admin) echo "~* &* +@all" ;;
    esac
}

# creds_redis_acl: a Redis ACL file (aclfile) from the password files: the
# default user off, each user with the SHA-256 of its password (the file
# holds no password).
creds_redis_acl() {
    local user hash
    echo "user default off resetkeys resetchannels -@all"
    for user in $CREDS_REDIS_USERS; do
        hash=$(tr -d '\n' <"$(creds_redis_file "$user")" | sha256sum | cut -c1-64)
        echo "user $user on #$hash $(creds_redis_acl_rules "$user")"
    done
}

# pg_conninfo PORT ROLE: the libpq conninfo of ROLE with its passfile.
pg_conninfo() {
    echo "host=127.0.0.1 port=$1 dbname=scrabble user=$2 passfile=$(creds_pg_passfile "$2")"
}

# redis_cli_admin PORT ARGS...: redis-cli as the ACL user admin (the
# password goes through the environment, not argv).
redis_cli_admin() {
    local port=$1
    shift
    REDISCLI_AUTH=$(cat "$(creds_redis_file admin)") redis-cli --no-auth-warning --user admin \
        -h 127.0.0.1 -p "$port" "$@"
}

# creds_args_store PG_PORT: store-svc serves as the application role and
# migrates as the schema owner.
creds_args_store() {
    printf '%s\n' "--pg=$(pg_conninfo "$1" scrabble)" "--pg-migrate=$(pg_conninfo "$1" scrabble_owner)"
}
# creds_args_redis: the Redis ACL passwords (gateway, game-svc, store-svc).
creds_args_redis() { printf '%s\n' "--redis-secrets=$SECRETS_DIR"; }

# health_check BUILD_DIR PORT [CERTS_DIR]: 0 when grpc.health.v1.Health/Check
# says SERVING. With CERTS_DIR (an internal port: game-svc, store-svc) the
# probe presents the probe identity over mutual TLS.
health_check() {
    if [ -x "$1/bin/grpc-health-probe" ]; then
        "$1/bin/grpc-health-probe" -addr "127.0.0.1:$2" ${3:+-certs-dir "$3"} >/dev/null 2>&1
    else
        /usr/bin/python3 "$REPO_ROOT/scripts/health_check.py" "127.0.0.1:$2" ${3:+--certs-dir "$3"} >/dev/null 2>&1
    fi
}

# wait_healthy BUILD_DIR PORT TIMEOUT PID [CERTS_DIR]: wait for SERVING while PID lives.
wait_healthy() {
    local deadline=$(($SECONDS + $3))
    until health_check "$1" "$2" "${5:-}"; do
        pid_alive "$4" || return 2
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.2
    done
}

# ---------------------------------------------------------------------------
# Service identities: mutual TLS between the services, on by default
# (docs/SECURITY.md, "Service identities"). Used by scripts/stack.sh and
# tests/integration/lib/stack.sh.
#   certs_ensure DIR            the private CA and one certificate per identity
#                               in DIR (scripts/gen-certs.sh): made on first
#                               use, reused while valid; keys mode 0600
#   svc_internal_port BIN ARGS  0 when BIN started with ARGS serves its gRPC
#                               port over mutual TLS only (game-svc, store-svc
#                               without --insecure-internal)
certs_ensure() {
    local out
    if ! out=$("$REPO_ROOT/scripts/gen-certs.sh" "$1" 2>&1); then
        printf '%s\n' "$out" >&2
        log "error: cannot make the service certificates in $1"
        return 1
    fi
    # Say so when something was made (first start, expiry, a new CA).
    printf '%s\n' "$out" | grep -E 'new CA|issued' >&2 || true
}
svc_internal_port() {
    local bin=${1##*/} a
    shift
    case "$bin" in game-svc | store-svc) ;; *) return 1 ;; esac
    for a in "$@"; do
        case "$a" in --insecure-internal | --insecure-internal=true | --insecure-internal=1) return 1 ;; esac
    done
    case "${SCRABBLE_GAME_INSECURE_INTERNAL:-}${SCRABBLE_STORE_INSECURE_INTERNAL:-}" in
    *1* | *true* | *yes* | *on*) return 1 ;;
    esac
    return 0
}

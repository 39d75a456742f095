#!/bin/bash
# The stand-in's entrypoint (see Dockerfile): first start initialises the
# cluster and runs the init scripts on a socket-only server; every start
# then execs the command (postgres ARGS...) so it is PID 1 and gets signals.
set -euo pipefail
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    user=${POSTGRES_USER:-postgres}
    pwfile=$(mktemp)
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then cat "$POSTGRES_PASSWORD_FILE" >"$pwfile"; fi
    [ -s "$pwfile" ] || { echo "stand-in postgres: POSTGRES_PASSWORD_FILE is missing or empty" >&2; exit 1; }
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=peer --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
    for f in /docker-entrypoint-initdb.d/*.sh; do
        [ -e "$f" ] || continue
        echo "stand-in postgres: running $f" >&2
        POSTGRES_USER=$user PGHOST=/var/run/postgresql bash "$f"
    done
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
if [ "${1:-}" = postgres ]; then
    shift
    exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"

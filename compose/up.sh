#!/usr/bin/env bash
# up.sh [docker-compose up options] — brings the stack up and waits until it
# is healthy: checks first what would otherwise fail obscurely, then
# `docker-compose up -d`, then ./wait.sh. Same project as docker-compose in
# compose/ (compose/.env, COMPOSE_FILE, COMPOSE_PROJECT_NAME).
#
# Checked first, each with a message that says what to do:
#   - every secret file exists and is not empty (a missing one would be
#     bind-mounted by the engine as an empty directory);
#   - each host port the stack publishes is free (or already ours).
# Exit 0 up and healthy; 1 otherwise, saying why.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
die() { echo "up.sh: $*" >&2; exit 1; }

cfg=$(docker-compose config) || die "docker-compose config failed (see above)"

# Secrets: the `file:` entries of the rendered top-level secrets.
missing=""
while read -r f; do
    [ -s "$f" ] || missing+=" $f"
done < <(printf '%s\n' "$cfg" | awk '/^secrets:/{s=1; next} /^[^ ]/{s=0} s && $1=="file:"{print $2}')
[ -z "$missing" ] || die "missing secret file(s):$missing — run ./secrets.sh (or set SCRABBLE_SECRETS_DIR)"

# Published ports: the rendered "- IP:PORT:TARGET/tcp" entries.
while read -r ip port; do
    [ -n "$port" ] || continue
    # Ours already (the stack is up): docker-proxy holds it for us.
    if docker-compose ps -q balancer 2>/dev/null | grep -q . &&
        docker-compose port balancer 7000 2>/dev/null | grep -qx "$ip:$port"; then
        continue
    fi
    if ss -Hltn "( sport = :$port )" 2>/dev/null | grep -q .; then
        die "host port $ip:$port is already in use (by: $(ss -Hltnp "( sport = :$port )" 2>/dev/null | grep -o 'users:(("[^"]*"' | head -1 | cut -d'"' -f2)); set SCRABBLE_PORT to a free port in compose/.env, or stop what holds it"
    fi
done < <(printf '%s\n' "$cfg" | sed -nE 's/^ *- "?([0-9.]+):([0-9]+):[0-9]+(\/tcp)?"?$/\1 \2/p')

out=$(docker-compose up -d "$@" 2>&1) || {
    printf '%s\n' "$out" >&2
    if printf '%s' "$out" | grep -qE 'port is already allocated|address already in use'; then
        die "a host port the stack publishes was taken while it started; set SCRABBLE_PORT in compose/.env"
    fi
    die "docker-compose up -d failed"
}
printf '%s\n' "$out" >&2
exec ./wait.sh

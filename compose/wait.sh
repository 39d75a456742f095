#!/usr/bin/env bash
# wait.sh [SECONDS] — waits until every container of the stack is healthy
# (or, for one-shots such as `certs`, exited 0), at most SECONDS (default
# 240). Debian's docker-compose (v1) has no `up --wait`: its `up -d`
# returns once each service has started, and only waits for the health of
# the services others depend on. Run from anywhere; it uses the same
# project as docker-compose in compose/ (compose/.env, COMPOSE_FILE,
# COMPOSE_PROJECT_NAME).
#
# Exit 0 all healthy; 1 a service failed or is not healthy in time: the
# message names each one, with its last log lines (a service that refuses
# to start says why there, e.g. which certificate or secret is missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
limit=${1:-240}
[[ $limit =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }
deadline=$((SECONDS + limit))
fmt='{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}} {{.RestartCount}}'

report() {
    echo "wait.sh: $1" >&2
    for n in $2; do
        echo "--- $n (last log lines)" >&2
        docker logs --tail 5 "$n" 2>&1 | sed 's/^/    /' >&2
    done
}

while :; do
    ids=$(docker-compose ps -q)
    bad="" failed=""
    for id in $ids; do
        read -r name state health code restarts < <(docker inspect -f "$fmt" "$id")
        name=${name#/}
        case "$state/$health" in
        running/healthy | running/none) ;;
        exited/none)
            # A one-shot that finished; anything else that exited failed.
            [ "$code" = 0 ] || failed+=" $name"
            ;;
        *)
            bad+=" $name"
            # A service that keeps exiting will not become healthy: say so
            # now instead of at the deadline.
            [ "$restarts" -lt 3 ] || failed+=" $name"
            ;;
        esac
    done
    if [ -n "$failed" ]; then
        report "failed:$failed" "$failed"
        exit 1
    fi
    if [ -n "$ids" ] && [ -z "$bad" ]; then
        echo "wait.sh: all $(echo "$ids" | wc -l) containers healthy" >&2
        exit 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        [ -n "$ids" ] || { echo "wait.sh: the stack has no containers (docker-compose up -d first)" >&2; exit 1; }
        report "not healthy after ${limit}s:$bad" "$bad"
        exit 1
    fi
    sleep 2
done

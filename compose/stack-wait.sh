#!/usr/bin/env bash
# stack-wait.sh STACK [SECONDS] — waits until every service of the swarm
# stack STACK runs its desired number of tasks (a task with a health check
# counts once it is healthy), at most SECONDS (default 300). On time out it
# names the services that are short, with the last error of their tasks.
# The `./wait.sh` of `docker stack deploy` (compose/docker-stack.yml).
set -euo pipefail
stack=${1:-}
limit=${2:-300}
[ -n "$stack" ] && [[ $limit =~ ^[0-9]+$ ]] || { echo "usage: $0 STACK [SECONDS]" >&2; exit 2; }
deadline=$((SECONDS + limit))
while :; do
    short=""
    lines=$(docker service ls --filter "label=com.docker.stack.namespace=$stack" --format '{{.Name}} {{.Replicas}}')
    [ -n "$lines" ] || short=" (no services)"
    while read -r name replicas; do
        [ -n "$name" ] || continue
        running=${replicas%%/*}
        desired=${replicas#*/}
        desired=${desired%% *}
        [ "$running" = "$desired" ] || short+=" $name($replicas)"
    done <<<"$lines"
    if [ -z "$short" ]; then
        echo "stack-wait.sh: every service of $stack runs all its tasks" >&2
        exit 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        echo "stack-wait.sh: not ready after ${limit}s:$short" >&2
        for s in $short; do
            s=${s%%(*}
            docker service ps --no-trunc --format '    {{.Name}} {{.CurrentState}} {{.Error}}' "$s" 2>/dev/null | head -3 >&2 || true
        done
        exit 1
    fi
    sleep 2
done

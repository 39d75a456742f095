#!/usr/bin/env bash
# `promtool check metrics` against the /metrics of every process of a real
# stack (Postgres, Redis, store-svc, game-svc, gateway; mutual TLS on as in
# make run; svc_up's health checks leave per-method rpc_server_* series).
# promtool flags names without a unit suffix, counters not ending _total,
# missing HELP and the like; any finding fails the test. Then every metric
# the alert/recording rules and the Grafana dashboards in
# compose/observability/ query must be one these processes export. Last,
# saturation.py: the saturation gauges move with what they measure (the
# auth cache's entries, a non-reading stream's queue, the Redis connection
# states of game-svc's drafts and store-svc's relay through a Redis stop
# and start).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../lib/stack.sh"
command -v promtool >/dev/null || { echo "SKIP: promtool missing (apt-get install prometheus)"; exit 77; }
stack_require store-svc game-svc gateway share/wamerican.kwg

# The lint must bite: a counter without _total is a finding.
if printf '# HELP x_count c\n# TYPE x_count counter\nx_count 1\n' | promtool check metrics >/dev/null 2>&1; then
    echo "not ok - promtool check metrics accepts a counter without _total"
    exit 1
fi

stack_init
pg_up
redis_up
store_up
game_up 1
# A stream that stops reading is never cut off (saturation.py measures
# its backlog).
gateway_up --subscriber-queue=100000

fails=0
all=$STACK_TMP/all-metrics
: >"$all"
for pair in "gateway:$GATEWAY_METRICS_PORT" "game-svc:$GAME_METRICS_PORTS" "store-svc:$STORE_METRICS_PORT"; do
    name=${pair%%:*} port=${pair#*:}
    body=$(/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$port/metrics") || {
        echo "not ok - $name: no /metrics on :$port"
        fails=$((fails + 1))
        continue
    }
    sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' <<<"$body" >>"$all"
    n=$(grep -c '^# TYPE' <<<"$body" || true)
    if out=$(promtool check metrics <<<"$body" 2>&1); then
        echo "ok - $name: $n metric families pass promtool check metrics:" $(sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' <<<"$body")
    else
        echo "not ok - $name: promtool check metrics:"
        sed 's/^/    /' <<<"$out"
        fails=$((fails + 1))
    fi
done

obs=$REPO_ROOT/compose/observability
if /usr/bin/python3 - "$all" "$obs" <<'PY'; then :; else fails=$((fails + 1)); fi
import glob, re, sys
have = set(open(sys.argv[1]).read().split())
text = "".join(open(f).read() for f in glob.glob(sys.argv[2] + "/rules/*.yml") + glob.glob(sys.argv[2] + "/grafana/dashboards/*.json"))
used = {re.sub(r"_(bucket|count|sum)$", "", m) for m in re.findall(r"\b((?:rpc|gateway|game|store)_[a-z_]+)", text)}
missing = sorted(used - have)
if missing:
    print("not ok - rules/dashboards query metrics no process exports:", " ".join(missing))
    sys.exit(1)
print(f"ok - the {len(used)} metrics the rules and dashboards query all exist")
PY

GAME_METRICS_PORT=${GAME_METRICS_PORTS%%,*} SECRETS_DIR=$SECRETS_DIR \
    GATEWAY_PORT=$GATEWAY_PORT GATEWAY_METRICS_PORT=$GATEWAY_METRICS_PORT \
    STORE_METRICS_PORT=$STORE_METRICS_PORT REDIS_PORT=$REDIS_PORT REDIS_DIR=$REDIS_DIR \
    /usr/bin/python3 "$here/saturation.py" || fails=$((fails + 1))
[ "$fails" = 0 ]

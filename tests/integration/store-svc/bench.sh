#!/usr/bin/env bash
# The store benchmark (a figure, not a test): a private Postgres with fsync
# ON (durable commits, as in production), store-svc with batching on and
# off, store-bench offering CommitMove at fixed rates to each. Prints one
# line per (config, rate); docs/BENCHMARKS-store.md records a run.
#   BUILD_DIR=build-store RATES="1000 5000" SECS=10 bash tests/integration/store-svc/bench.sh
# CONFIGS: space-separated name=flags pairs (flags comma-separated).
# BENCH_BIN: the store-bench binary (default $BUILD_DIR/bin/store-bench), so
# an older store-svc build can be driven by the same client.
# PG_SETTINGS: space-separated name=value Postgres settings applied with
# ALTER SYSTEM and a reload once the cluster is up (e.g.
# "wal_writer_delay=1ms wal_writer_flush_after=0").
# BENCH_FLAGS: extra store-bench flags, e.g. "--clock 1" (moves carry their
# clock, as game-svc sends them since time controls).
set -euo pipefail
export PG_FSYNC=${PG_FSYNC:-on}
. "$(dirname "${BASH_SOURCE[0]}")/../lib/stack.sh"

RATES=${RATES:-"1000 5000"}
SECS=${SECS:-10}
GAMES=${GAMES:-2000}
BENCH_BIN=${BENCH_BIN:-$BUILD_DIR/bin/store-bench}
CONFIGS=${CONFIGS:-"batched=--batch-max=256 unbatched=--batch-max=1"}

stack_init
pg_up
for kv in ${PG_SETTINGS:-}; do
    "$REPO_ROOT/scripts/pg.sh" psql "$PG_DIR" -c "ALTER SYSTEM SET ${kv%%=*} = '${kv#*=}'"
done
[ -z "${PG_SETTINGS:-}" ] || "$REPO_ROOT/scripts/pg.sh" psql "$PG_DIR" -c "SELECT pg_reload_conf()" >/dev/null
PG_PID=$(head -n1 "$PG_DIR/postmaster.pid")
echo "postgres pid $PG_PID fsync=$PG_FSYNC ${PG_SETTINGS:-}; $(nproc) cores; rates: $RATES; ${SECS}s each"

for cfg in $CONFIGS; do
    name=${cfg%%=*}
    IFS=, read -r -a flags <<<"${cfg#*=}"
    port=$(free_port)
    mport=$(free_port)
    mapfile -t args < <(svc_args_store "$port" "$mport" "$PG_PORT")
    _svc_up "store-svc-$name" "$BUILD_DIR/bin/store-svc" "$port" "${args[@]}" \
        --log-level=warn "${flags[@]}"
    svc_pid=$SVC_PID
    for rate in $RATES; do
        "$BENCH_BIN" --target "127.0.0.1:$port" --metrics-port "$mport" \
            --pg "$PG_CONNINFO" --pg-pid "$PG_PID" --svc-pid "$svc_pid" \
            --rate "$rate" --seconds "$SECS" --games "$GAMES" --label "$name" ${BENCH_FLAGS:-} || true
    done
    stop_pid "$svc_pid" 10
done

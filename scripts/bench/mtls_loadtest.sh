#!/usr/bin/env bash
# The 1,000-player human-paced load step (docs/REPORT.md, run 4's model:
# --tick 3s --think 8s) with mutual TLS between services on, then off
# (INSECURE_INTERNAL=1), one after the other on the same build and machine,
# each on a fresh stack (scripts/stack.sh with its own VAR_DIR).
#
#   BUILD_DIR=build-rel PORT_OFFSET=4000 scripts/bench/mtls_loadtest.sh [STEP_DURATION]
#
# Prints each run's loadtest report (per-operation table, CPU per process);
# the JSON reports go to $OUT_DIR (default /tmp/mtls-loadtest).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD_DIR=$(cd "${BUILD_DIR:-build-rel}" && pwd)
OFF=${PORT_OFFSET:-4000}
DUR=${1:-2m}
OUT_DIR=${OUT_DIR:-/tmp/mtls-loadtest}
mkdir -p "$OUT_DIR"
for mode in mtls plaintext; do
    insecure=0
    [ "$mode" = plaintext ] && insecure=1
    var=$OUT_DIR/var-$mode
    export SKIP_BUILD=1 BUILD_DIR VAR_DIR=$var PORT_OFFSET=$OFF INSECURE_INTERNAL=$insecure
    "$REPO/scripts/stack.sh" start >"$OUT_DIR/$mode-stack.log" 2>&1 ||
        { cat "$OUT_DIR/$mode-stack.log"; exit 1; }
    echo "== $mode (INSECURE_INTERNAL=$insecure); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$BUILD_DIR/bin/loadtest" run --target "127.0.0.1:$((7000 + OFF))" \
        --pg "host=127.0.0.1 port=$((55432 + OFF)) dbname=scrabble user=scrabble" \
        --procs "gateway=$((7000 + OFF)),game-svc=$((7100 + OFF)),store-svc=$((7200 + OFF)),postgres+=$((55432 + OFF)),redis=$((56379 + OFF)),self,machine" \
        --steps 1000 --step-duration "$DUR" --tick 3s --think 8s --ramp 60s --reset --cleanup \
        --out "$OUT_DIR/$mode.json" --html "$OUT_DIR/$mode.html" --quiet || echo "loadtest exited $?"
    curl -s "127.0.0.1:$((9100 + OFF))/metrics" | grep '^rpc_insecure_internal' | sed 's/^/  game-svc /'
    "$REPO/scripts/stack.sh" stop >>"$OUT_DIR/$mode-stack.log" 2>&1
done

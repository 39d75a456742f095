#!/usr/bin/env bash
# Scale-out: the real stack through scripts/stack.sh with THREE game-svc
# instances and TWO gateways (private PORT_OFFSET and VAR_DIR, so it never
# touches `make run` or other tests), then scaleout.py plays games through
# both gateways, SIGKILLs one game-svc mid-game, checks its games fail
# UNAVAILABLE promptly while the others play on, restarts it with
# `stack.sh start` and checks nothing acknowledged was lost or applied twice,
# then plays every game to its end. Ends with "N passed, N failed".
#
# Usage: BUILD_DIR=build-scale bash test_scaleout.sh     (KEEP_TMP=1 keeps logs)
# Env: VICTIM=i (default 1) picks the instance killed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$here/../../.." && pwd)
# shellcheck source=../lib/stack.sh
. "$REPO_ROOT/tests/integration/lib/stack.sh" # the one skip rule; scripts/lib.sh
BUILD_DIR=$(abspath "${BUILD_DIR:-$REPO_ROOT/build}")
stack_require store-svc game-svc gateway scrabble-solver share/wamerican.kwg

NGAMES=3 NGATEWAYS=2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/scrabble-scaleout.XXXXXX")
export BUILD_DIR VAR_DIR=$TMP/var GAMES=$NGAMES GATEWAYS=$NGATEWAYS SKIP_BUILD=1 HEALTH_TIMEOUT=30
export PG_FSYNC=off # a throwaway cluster; Postgres itself is never killed here
# The test makes many calls per account; the default per-account limits
# are not what is under test.
export SCRABBLE_GATEWAY_RATE_READ=2000 SCRABBLE_GATEWAY_BURST_READ=2000
export SCRABBLE_GATEWAY_RATE_WRITE=2000 SCRABBLE_GATEWAY_BURST_WRITE=2000
S=$REPO_ROOT/scripts/stack.sh
RESERVED=()

cleanup() {
    local rc=$? f
    trap - EXIT INT TERM
    "$S" stop >"$TMP/stop.log" 2>&1 || { echo "stack.sh stop failed:" >&2; cat "$TMP/stop.log" >&2; }
    for f in "${RESERVED[@]}"; do rmdir "$f" 2>/dev/null; done
    if [ "$rc" -ne 0 ]; then
        for f in "$VAR_DIR"/log/*.log "$TMP"/start*.log; do
            [ -f "$f" ] || continue
            echo "---- tail $f" >&2
            tail -n 25 "$f" >&2
        done
    fi
    if [ "${KEEP_TMP:-0}" = 1 ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every port of the stack at offset $1 (DESIGN.md defaults + offset).
ports_of() {
    local o=$1 i
    echo $((55432 + o)) $((56379 + o)) $((7200 + o)) $((9200 + o))
    for ((i = 0; i < NGAMES; i++)); do echo $((7100 + o + i)) $((9100 + o + i)); done
    for ((i = 0; i < NGATEWAYS; i++)); do echo $((7000 + o + i)) $((9000 + o + i)); done
}

# An offset in 5600..9099 puts the service ports in 12600..18300 (below the
# 20000.. range of free_port) and Postgres/Redis in 61032..65478 (above the
# kernel's ephemeral range), far from the defaults. Every port must be free
# and is reserved like free_port's (a mkdir under $PORT_RESERVATIONS).
pick_offset() {
    local _ off p ok
    mkdir -p "$PORT_RESERVATIONS"
    for _ in $(seq 1 100); do
        off=$((5600 + RANDOM % 3500))
        ok=1
        for p in $(ports_of "$off"); do
            if port_in_use "$p" || [ -e "$PORT_RESERVATIONS/$p" ]; then ok=0 && break; fi
        done
        [ "$ok" = 1 ] || continue
        for p in $(ports_of "$off"); do
            if mkdir "$PORT_RESERVATIONS/$p" 2>/dev/null; then RESERVED+=("$PORT_RESERVATIONS/$p"); else ok=0; fi
        done
        [ "$ok" = 1 ] && { echo "$off" >"$TMP/offset"; return 0; }
    done
    return 1
}

started=0
for attempt in 1 2 3; do
    pick_offset || { echo "no free PORT_OFFSET found" >&2; exit 1; }
    export PORT_OFFSET
    PORT_OFFSET=$(cat "$TMP/offset")
    echo "# PORT_OFFSET=$PORT_OFFSET VAR_DIR=$VAR_DIR (attempt $attempt)"
    if "$S" start >"$TMP/start$attempt.log" 2>&1; then
        started=1
        break
    fi
    echo "# stack.sh start failed (attempt $attempt):" && tail -n 5 "$TMP/start$attempt.log"
    "$S" stop >/dev/null 2>&1
done
[ "$started" = 1 ] || { echo "not ok - the stack started"; echo "0 passed, 1 failed"; exit 1; }
echo "ok - stack.sh start: $NGAMES game-svc, $NGATEWAYS gateways"

targets() { # BASE N: 127.0.0.1:BASE..BASE+N-1, comma-separated
    local i out=""
    for ((i = 0; i < $2; i++)); do out+="${out:+,}127.0.0.1:$(($1 + i))"; done
    echo "$out"
}
ports() { seq -s, "$1" $(($1 + $2 - 1)); }
export GATEWAY_TARGETS GAME_TARGETS GATEWAY_METRICS GAME_METRICS
GATEWAY_TARGETS=$("$S" gateways)
GAME_TARGETS=$(targets $((7100 + PORT_OFFSET)) $NGAMES)
GATEWAY_METRICS=$(ports $((9000 + PORT_OFFSET)) $NGATEWAYS)
GAME_METRICS=$(ports $((9100 + PORT_OFFSET)) $NGAMES)
# The gateways must route with exactly the instance list scaleout.py hashes.
for ((j = 0; j < NGATEWAYS; j++)); do
    grep -q -- "--games=$GAME_TARGETS " "$VAR_DIR/log/gateway-$j.log" ||
        { echo "not ok - gateway-$j runs with --games=$GAME_TARGETS"; exit 1; }
done
[ "$GATEWAY_TARGETS" = "$(targets $((7000 + PORT_OFFSET)) $NGATEWAYS)" ] ||
    { echo "not ok - stack.sh gateways: $GATEWAY_TARGETS"; exit 1; }

export STACK_SH=$S SOLVER=$BUILD_DIR/bin/scrabble-solver LEXICON=$BUILD_DIR/share/wamerican.kwg
# Bounded on its own too (ctest's TIMEOUT is the outer bound).
timeout -k 10 480 /usr/bin/python3 "$here/scaleout.py"

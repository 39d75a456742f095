#!/usr/bin/env bash
# The cost of mutual TLS between services, side by side in one run
# (docs/BENCHMARKS.md, "mTLS between services"):
#
#  1. CPU per forwarded call: two full paths on one Postgres and Redis,
#       secure:    gateway -> game-svc -> store-svc over mutual TLS (the default)
#       plaintext: the same three with --insecure-internal
#     the same warm game's GetState through each gateway, alternating,
#     at a fixed rate and saturated; CPU (utime+stime from /proc) of the
#     gateway and of game-svc per call. Channels are persistent (opened at
#     start), so the handshake is paid once, not per call.
#  2. RSS per downstream channel: channel-rss opens N channels the way the
#     gateway does, to the secure game-svc with the gateway identity and to
#     the plaintext one, and prints the growth per channel.
#
#   BUILD_DIR=build-rel scripts/bench/mtls.sh [REQUESTS] [ROUNDS] [CHANNELS]
#
# Loopback only; every h2load run is bounded by REQUESTS calls.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BUILD_DIR=${BUILD_DIR:-build-rel}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
n=${1:-80000}
rounds=${2:-2}
nch=${3:-200}
. "$HERE/../../tests/integration/lib/stack.sh"
stack_require store-svc game-svc gateway scrabble-cli channel-rss share/wamerican.kwg
command -v h2load >/dev/null || { echo "h2load not found (apt-get install nghttp2-client)" >&2; exit 1; }
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

stack_init
pg_up
redis_up
# The secure path: the defaults (identities from $STACK_CERTS).
store_up --kdf-iterations=10000
game_up 1
sec_game_port=$GAME_PORTS
sec_game_pid=$SVC_PID
gateway_up --rate-read=1000000 --burst-read=1000000
sec_gw_port=$GATEWAY_PORT sec_gw_pid=$SVC_PID

# The plaintext path: the same binaries and flags plus --insecure-internal.
p_store=$(free_port) p_store_m=$(free_port)
mapfile -t a < <(svc_args_store "$p_store" "$p_store_m" "$PG_PORT")
svc_up store-plain "$BUILD_DIR/bin/store-svc" "$p_store" "${a[@]}" --kdf-iterations=10000 --insecure-internal
p_game=$(free_port) p_game_m=$(free_port)
mapfile -t a < <(svc_args_game "$p_game" "$p_game_m" "$p_store" "$REDIS_PORT" 0 "$BUILD_DIR/share")
svc_up game-plain "$BUILD_DIR/bin/game-svc" "$p_game" "${a[@]}" --insecure-internal
plain_game_pid=$SVC_PID
p_gw=$(free_port) p_gw_m=$(free_port)
mapfile -t a < <(svc_args_gateway "$p_gw" "$p_gw_m" "$p_store" "$REDIS_PORT" "$p_game")
svc_up gateway-plain "$BUILD_DIR/bin/gateway" "$p_gw" "${a[@]}" --rate-read=1000000 --burst-read=1000000 \
    --insecure-internal
plain_gw_pid=$SVC_PID

# Two players and a started game, through the secure gateway; warm on both.
cli() { SCRABBLE_CLI_TOKEN_FILE="$STACK_TMP/$1.token" "$BUILD_DIR/bin/scrabble-cli" --addr "127.0.0.1:$2" "${@:3}"; }
cli alice "$sec_gw_port" register alice "bench-pass-1" >/dev/null
cli bob "$sec_gw_port" register bob "bench-pass-2" >/dev/null
inv=$(cli alice "$sec_gw_port" invite bob | grep -oE '[0-9]+' | head -1)
game=$(cli bob "$sec_gw_port" accept "$inv" | grep -oiE 'game[^0-9]*[0-9]+' | grep -oE '[0-9]+' | head -1)
token=$(head -n1 "$STACK_TMP/alice.token")
cli alice "$sec_gw_port" show "$game" >/dev/null
cli alice "$p_gw" show "$game" >/dev/null
state=$STACK_TMP/state.bin
python3 - "$game" "$state" <<'PY'
import sys
gid = int(sys.argv[1]); v = b""
while True:
    b = gid & 0x7F; gid >>= 7
    v += bytes([b | (0x80 if gid else 0)])
    if not gid: break
msg = b"\x08" + v
open(sys.argv[2], "wb").write(b"\x00" + len(msg).to_bytes(4, "big") + msg)
PY

RATE_ARGS=()
# measure NAME GW_PORT GW_PID GAME_PID: one bounded h2load run of GetState.
measure() {
    local g0 s0 g1 s1 out ok
    g0=$(cpu_ticks "$3") s0=$(cpu_ticks "$4")
    out=$(h2load -n "$n" "${RATE_ARGS[@]}" -d "$state" -H 'content-type: application/grpc' -H 'te: trailers' \
        -H "authorization: Bearer $token" "http://127.0.0.1:$2/scrabble.v1.Edge/GetState" 2>&1)
    g1=$(cpu_ticks "$3") s1=$(cpu_ticks "$4")
    ok=$(awk '/^requests:/ {print $8}' <<<"$out")
    awk -v name="$1" -v rps="$(awk '/finished in/ {print $4}' <<<"$out")" -v ok="$ok" -v n="$n" -v hz="$hz" \
        -v g="$((g1 - g0))" -v s="$((s1 - s0))" 'BEGIN {
            gu = g / hz * 1e6 / n; su = s / hz * 1e6 / n
            printf "  %-20s req/s=%7.0f answered=%s  gateway_us_per_call=%6.1f  game_svc_us_per_call=%6.1f  both=%6.1f\n",
                name, rps, ok, gu, su, gu + su }'
}
echo "game $game; $n calls per run; every server 2 workers; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1a. forwarded GetState at a fixed 8,000 calls/s (h2load -c 16 -m 8 -t 2 --rps=500)"
RATE_ARGS=(-c 16 -m 8 -t 2 --rps=500)
for r in $(seq "$rounds"); do
    measure "plaintext @8k" "$p_gw" "$plain_gw_pid" "$plain_game_pid"
    measure "mtls @8k" "$sec_gw_port" "$sec_gw_pid" "$sec_game_pid"
done
echo "1b. forwarded GetState saturated (h2load -c 32 -m 64 -t 2)"
RATE_ARGS=(-c 32 -m 64 -t 2)
for r in $(seq "$rounds"); do
    measure "plaintext saturated" "$p_gw" "$plain_gw_pid" "$plain_game_pid"
    measure "mtls saturated" "$sec_gw_port" "$sec_gw_pid" "$sec_game_pid"
done
echo "   gateway RSS after the runs: plaintext $(rss_kb "$plain_gw_pid") kB, mtls $(rss_kb "$sec_gw_pid") kB (2 downstream channels each)"

echo "2. RSS per downstream channel ($nch channels, each its own connection, all READY)"
"$BUILD_DIR/bin/channel-rss" "127.0.0.1:$p_game" "$nch" | sed 's/^/  plaintext  /'
"$BUILD_DIR/bin/channel-rss" "127.0.0.1:$sec_game_port" "$nch" "$STACK_CERTS" gateway game-svc | sed 's/^/  mtls       /'
echo "   game-svc RSS (the server side of those channels, now closed): plaintext $(rss_kb "$plain_game_pid") kB, mtls $(rss_kb "$sec_game_pid") kB"

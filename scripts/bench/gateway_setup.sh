# shellcheck shell=bash
# Sourced by the gateway benchmarks (gateway.sh, gateway_instructions.sh)
# with BUILD_DIR set: a private full stack (Postgres, Redis, store-svc, one
# game-svc, a gateway with GATEWAY_WORKERS workers, default 2), two players
# with a started game, and the request bodies. Sets gw_pid, addr, game,
# token (alice's), alice_id, body_list (an empty ListGamesRequest frame),
# state (a GameRef{game_id} frame), STACK_TMP and the stack's ports.
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/integration/lib/stack.sh"

stack_init
# The C-core peers the gateway is measured against (bare-forward) speak
# plaintext to game-svc, so this stack runs without mutual TLS between
# services (benchmarks only; its cost is scripts/bench/mtls.sh's figure).
export SCRABBLE_GATEWAY_INSECURE_INTERNAL=1 SCRABBLE_GAME_INSECURE_INTERNAL=1 \
    SCRABBLE_STORE_INSECURE_INTERNAL=1
pg_up
redis_up
store_up --kdf-iterations=10000
game_up 1
# Reads unlimited for the forwarding figure; lists keep their strict budget.
gateway_up --rate-read=1000000 --burst-read=1000000 --workers="${GATEWAY_WORKERS:-2}"
gw_pid=$SVC_PID
addr=127.0.0.1:$GATEWAY_PORT

# Two players and a started game, through the public API.
cli() { SCRABBLE_CLI_TOKEN_FILE="$STACK_TMP/$1.token" "$BUILD_DIR/bin/scrabble-cli" --addr "$addr" "${@:2}"; }
cli alice register alice "bench-pass-1" >/dev/null
cli bob register bob "bench-pass-2" >/dev/null
inv=$(cli alice invite bob | grep -oE '[0-9]+' | head -1)
game=$(cli bob accept "$inv" | grep -oiE 'game[^0-9]*[0-9]+' | grep -oE '[0-9]+' | head -1)
token=$(head -n1 "$STACK_TMP/alice.token")
cli alice show "$game" >/dev/null # warm: the owning game-svc has it cached
alice_id=$(psql -At "$PG_CONNINFO" -c "SELECT id FROM accounts WHERE handle = 'alice'")

body_list=$STACK_TMP/list.bin
printf '\x00\x00\x00\x00\x00' >"$body_list"
# GameRef{game_id} as a gRPC frame.
state=$STACK_TMP/state.bin
python3 - "$game" "$state" <<'EOF'
import sys
gid = int(sys.argv[1]); v = b""
while True:
    b = gid & 0x7F; gid >>= 7
    v += bytes([b | (0x80 if gid else 0)])
    if not gid: break
msg = b"\x08" + v
open(sys.argv[2], "wb").write(b"\x00" + len(msg).to_bytes(4, "big") + msg)
EOF

#!/usr/bin/env bash
# The scenario end to end on a private full stack: Postgres, Redis,
# store-svc, game-svc, gateway on free loopback ports, then
#   loadtest run --steps N --step-duration D (seeded, --reset, --cleanup)
# Checks: zero transport errors, at least one finished game, >= 99% of turns
# accepted, the JSON report parses and its counts add up, spectators
# (--spectators) watched moves, and the cleanup removed exactly the seeded
# population.
#
# Env: LT_PLAYERS (20), LT_DURATION (30s), LT_TICK (800ms), KEEP_TMP=1.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/stack.sh"
stack_init
pg_up
redis_up
store_up
game_up 1
gateway_up

PLAYERS=${LT_PLAYERS:-20}
DURATION=${LT_DURATION:-30s}
OUT=$STACK_TMP/report.json
"$BUILD_DIR/bin/loadtest" run --target "127.0.0.1:$GATEWAY_PORT" --pg "$PG_LOADTEST_CONNINFO" \
    --steps "$PLAYERS" --step-duration "$DURATION" --tick "${LT_TICK:-200ms}" --debounce "${LT_DEBOUNCE:-30ms}" --ramp 2s \
    --reset --cleanup --tag lt-smoke --hammer --hammer-rps 50 --social 20 --bot-games "${LT_BOT_GAMES:-30}" --spectators 30 \
    --procs "gateway=$GATEWAY_PORT,game-svc=${GAME_PORTS%%,*},store-svc=$STORE_PORT,postgres+=$PG_PORT,redis=$REDIS_PORT,self" \
    --out "$OUT" --html "$STACK_TMP/report.html" --progress 5s | tee "$STACK_TMP/table.txt"

python3 - "$OUT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["steps"], "no steps"
fails = []
for s in d["steps"]:
    calls = 0
    for op in s["ops"]:
        n = sum(o["count"] for o in op["outcomes"])
        if n != op["count"]:
            fails.append(f'{op["name"]}: outcomes sum {n} != count {op["count"]}')
        ok = sum(o["count"] for o in op["outcomes"] if o["code"] == 0)
        if ok != op["ok"]:
            fails.append(f'{op["name"]}: ok {op["ok"]} != OK outcomes {ok}')
        if op["corrected"]["count"] != op["count"] or op["service"]["count"] != op["count"]:
            fails.append(f'{op["name"]}: histogram counts differ from count')
        calls += op["count"]
    if calls != s["calls"]:
        fails.append(f'step calls {s["calls"]} != sum of ops {calls}')
    if s["transport_errors"] != 0:
        fails.append(f'{s["transport_errors"]} transport errors')
    t = s["turns"]
    if t["total"] == 0 or t["accepted_pct"] < 99.0:
        fails.append(f'turns accepted {t["accepted"]}/{t["total"]} (< 99%)')
    if t["accepted"] + t["rejected"] != t["total"]:
        fails.append("turn counts do not add up")
fin = sum(s["games_finished"] for s in d["steps"])
# --bot-games 30 (20 players: 3 of the 10 pairs play bots): their games start
# in the Invite, and the bots answer.
if sum(s["bot_games_started"] for s in d["steps"]) < 1:
    fails.append("no bot game started")
if sum(s["bot_reply"]["count"] for s in d["steps"]) < 1:
    fails.append("no bot reply seen")
if fin < 1:
    fails.append("no game finished")
ev = {op["name"] for s in d["steps"] for op in s["ops"]}
for need in ("GetState", "GetHistory", "Evaluate", "SaveDraft", "SubmitPlay", "Invite", "RespondInvitation",
             "ListPublicGames", "Watch"):
    if need not in ev:
        fails.append(f"no {need} calls")
# Spectators (--spectators 30): some watch streams opened and carried moves.
if sum(s["spectators"]["watch_events"] for s in d["steps"]) < 1:
    fails.append("no event reached a watch stream")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print(f"ok: {sum(s['calls'] for s in d['steps'])} calls, {fin} games finished, "
      f"turns {sum(s['turns']['accepted'] for s in d['steps'])}/{sum(s['turns']['total'] for s in d['steps'])}")
PY
grep -q "<svg" "$STACK_TMP/report.html"
n=$(runuser -u postgres -- psql -h 127.0.0.1 -p "$PG_PORT" -U scrabble -d scrabble -Atc "SELECT count(*) FROM accounts WHERE tag = 'lt-smoke'" 2>/dev/null || psql "$PG_CONNINFO" -Atc "SELECT count(*) FROM accounts WHERE tag = 'lt-smoke'")
[ "$n" = 0 ] || { echo "FAIL: cleanup left $n accounts"; exit 1; }
echo "smoke: PASS"

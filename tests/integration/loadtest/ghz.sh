#!/usr/bin/env bash
# `loadtest ghz` and the driver's bad-input paths, on a private full stack:
#  - unknown method / malformed -d / malformed -m: exit 2 before any traffic
#  - unreachable target: a clear error and exit 1 within the connect timeout
#  - a server that rejects everything: the report shows it, with codes
#    (ghz mode without a token; the scenario with wrong tokens)
#  - ghz against the stack: the JSON report parses, its keys are ghz's,
#    counts add up, durations are nanoseconds; csv and summary outputs.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../lib/stack.sh"
stack_init
LT=$BUILD_DIR/bin/loadtest
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- bad input, before any traffic (the target is a closed port: had the
# driver tried to connect, it would exit 1 after the connect timeout) ---
DEAD=$(free_port)
set +e
"$LT" ghz --insecure --call scrabble.v1.Edge/NoSuchMethod -n 1 "127.0.0.1:$DEAD" 2>"$STACK_TMP/e1"; rc=$?
set -e
[ "$rc" = 2 ] || fail "unknown method: exit $rc"
grep -q "unknown method 'NoSuchMethod'" "$STACK_TMP/e1" || fail "unknown method: $(cat "$STACK_TMP/e1")"
set +e
"$LT" ghz --insecure --call nope.Svc/X -n 1 "127.0.0.1:$DEAD" 2>"$STACK_TMP/e1b"; rc=$?
[ "$rc" = 2 ] || fail "unknown service: exit $rc"
"$LT" ghz --insecure --call scrabble.v1.Edge/GetState -d '{"game_id": 1' -n 1 "127.0.0.1:$DEAD" 2>"$STACK_TMP/e2"; rc=$?
[ "$rc" = 2 ] || fail "malformed data: exit $rc"
grep -q "malformed JSON" "$STACK_TMP/e2" || fail "malformed data: $(cat "$STACK_TMP/e2")"
"$LT" ghz --insecure --call scrabble.v1.Edge/GetState -d '{"gameid": 1}' -n 1 "127.0.0.1:$DEAD" 2>"$STACK_TMP/e3"; rc=$?
[ "$rc" = 2 ] || fail "unknown field: exit $rc"
"$LT" ghz --insecure --call scrabble.v1.Edge/GetState -m '{"authorization": 5}' -n 1 "127.0.0.1:$DEAD" 2>"$STACK_TMP/e4"; rc=$?
[ "$rc" = 2 ] || fail "bad metadata: exit $rc"
"$LT" ghz --insecure --call grpc.health.v1.Health/Check -n 1 10.1.2.3:80 2>"$STACK_TMP/e5"; rc=$?
[ "$rc" = 2 ] || fail "non-loopback target: exit $rc"
# run and seed: loopback only; --allow-private admits private networks (a
# compose stack's service names), never a public address. Refused before
# any connection.
"$LT" run --target 10.1.2.3:7000 --steps 2 --step-duration 1s 2>"$STACK_TMP/e7"; rc=$?
[ "$rc" = 2 ] || fail "run, private target without --allow-private: exit $rc"
grep -q "host '10.1.2.3' is not loopback (--allow-private admits private networks)" "$STACK_TMP/e7" ||
    fail "run, private target: $(cat "$STACK_TMP/e7")"
"$LT" run --allow-private --target 192.0.2.1:7000 --steps 2 --step-duration 1s 2>"$STACK_TMP/e8"; rc=$?
[ "$rc" = 2 ] || fail "run, public target with --allow-private: exit $rc"
grep -q "host '192.0.2.1' is not loopback or private" "$STACK_TMP/e8" || fail "run, public target: $(cat "$STACK_TMP/e8")"
"$LT" seed --pg "host=10.1.2.3 dbname=scrabble" --players 2 2>"$STACK_TMP/e9"; rc=$?
[ "$rc" = 1 ] || fail "seed, private Postgres without --allow-private: exit $rc"
grep -q "postgres host '10.1.2.3' is not loopback" "$STACK_TMP/e9" || fail "seed, private Postgres: $(cat "$STACK_TMP/e9")"
"$LT" seed --allow-private --pg "host=127.0.0.1,192.0.2.1 dbname=scrabble" --players 2 2>"$STACK_TMP/e10"; rc=$?
[ "$rc" = 1 ] || fail "seed, public Postgres with --allow-private: exit $rc"
grep -q "postgres host '192.0.2.1' is not loopback or private" "$STACK_TMP/e10" ||
    fail "seed, public Postgres: $(cat "$STACK_TMP/e10")"
# --- unreachable: a clear error, bounded in time ---
start=$(date +%s)
"$LT" ghz --insecure --call grpc.health.v1.Health/Check -n 5 --connect-timeout 2s "127.0.0.1:$DEAD" 2>"$STACK_TMP/e6"; rc=$?
set -e
[ "$rc" = 1 ] || fail "unreachable: exit $rc"
grep -q "cannot connect" "$STACK_TMP/e6" || fail "unreachable: $(cat "$STACK_TMP/e6")"
[ $(( $(date +%s) - start )) -le 6 ] || fail "unreachable took too long"
echo "bad input: ok"

pg_up
redis_up
store_up
game_up 1
gateway_up
GW=127.0.0.1:$GATEWAY_PORT
"$LT" seed --pg "$PG_LOADTEST_CONNINFO" --tag lt-ghz --players 4
TOKEN=$(python3 -c 'import hmac,hashlib;print("lt1."+hmac.new(b"loadtest-local",b"lt-ghz:0",hashlib.sha256).hexdigest()[:32])')

check_ghz_json() { # FILE N CODE
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); code = sys.argv[3]
ghz_keys = ["date", "endReason", "options", "count", "total", "average", "fastest", "slowest", "rps",
            "errorDistribution", "statusCodeDistribution", "latencyDistribution", "histogram", "details"]
missing = [k for k in ghz_keys if k not in d]
assert not missing, f"missing ghz keys {missing}"
assert d["count"] == n, (d["count"], n)
assert sum(d["statusCodeDistribution"].values()) == n, d["statusCodeDistribution"]
allowed = code.split("|")
assert set(d["statusCodeDistribution"]) <= set(allowed), d["statusCodeDistribution"]
assert d["statusCodeDistribution"].get(allowed[0], 0) > 0, d["statusCodeDistribution"]
assert len(d["details"]) == n
assert all(set(x) == {"timestamp", "latency", "error", "status"} for x in d["details"])
assert sum(b["count"] for b in d["histogram"]) == n
assert 0 < d["fastest"] <= d["average"] <= d["slowest"] < d["total"] * 10, "durations not in ns"
assert d["total"] > 1e6, "total must be nanoseconds"
assert [p["percentage"] for p in d["latencyDistribution"]][:7] == [10, 25, 50, 75, 90, 95, 99]
assert d["options"]["call"] and d["endReason"] in ("normal", "timeout", "cancel")
assert sum(d["errorDistribution"].values()) == n - d["statusCodeDistribution"].get("OK", 0)
if code != "OK":
    assert all(k.startswith("rpc error: code = ") for k in d["errorDistribution"])
print("ghz json ok:", sys.argv[1], d["statusCodeDistribution"])
PY
}

"$LT" ghz --insecure --call grpc.health.v1.Health/Check -n 500 -c 10 -O json -o "$STACK_TMP/h.json" "$GW"
check_ghz_json "$STACK_TMP/h.json" 500 OK
"$LT" ghz --insecure --call scrabble.v1.Edge/GetProfile -d '{"handle": "lt-ghz-1"}' \
    -m "{\"authorization\": \"Bearer $TOKEN\"}" -n 300 -c 8 --connections 2 --rps 500 -O json -o "$STACK_TMP/p.json" "$GW"
# The gateway's per-account limiter answers part of a flood from one
# account: OK and ResourceExhausted/rate_limited, nothing else.
check_ghz_json "$STACK_TMP/p.json" 300 "OK|ResourceExhausted"
# A server that rejects everything: no token.
"$LT" ghz --insecure --call scrabble.v1.Edge/GetProfile -d '{}' -n 50 -c 5 -O json -o "$STACK_TMP/u.json" "$GW"
check_ghz_json "$STACK_TMP/u.json" 50 Unauthenticated
"$LT" ghz --insecure --call grpc.health.v1.Health/Check -z 1s --rps 200 -c 4 -O csv -o "$STACK_TMP/h.csv" "$GW"
head -1 "$STACK_TMP/h.csv" | grep -qx 'duration (ms),status,error' || fail "csv header"
lines=$(($(wc -l <"$STACK_TMP/h.csv") - 1))
[ "$lines" -ge 150 ] && [ "$lines" -le 250 ] || fail "csv rows $lines for 1s at 200 rps"
"$LT" ghz --insecure --call grpc.health.v1.Health/Check -n 100 "$GW" | grep -q "Status code distribution" || fail summary

# The scenario against a gateway that rejects every token.
"$LT" run --target "$GW" --pg "$PG_LOADTEST_CONNINFO" --tag lt-ghz --seed=false --secret wrong-secret \
    --steps 4 --step-duration 4s --tick 200ms --ramp 0 --procs self --out "$STACK_TMP/rej.json" --html "" --quiet \
    >"$STACK_TMP/rej.txt"
python3 - "$STACK_TMP/rej.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["steps"][0]
assert s["calls"] > 0 and s["errors"] == s["calls"], (s["calls"], s["errors"])
codes = {(o["code_name"], o["reason"]) for op in s["ops"] for o in op["outcomes"]}
assert codes == {("UNAUTHENTICATED", "unauthenticated")}, codes
assert not s["held"] or s["transport_errors"] == 0
print("rejecting server ok:", s["calls"], "calls, all", codes)
PY
grep -q "UNAUTHENTICATED/unauthenticated" "$STACK_TMP/rej.txt" || fail "table does not show the codes"
"$LT" cleanup --pg "$PG_LOADTEST_CONNINFO" --tag lt-ghz
echo "ghz: PASS"

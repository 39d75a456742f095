#!/usr/bin/python3
"""Trace context and log hygiene on the real binaries (docs/OPERATIONS.md,
"Tracing"). Run by test_trace.sh, which passes in the environment:
GATEWAY_PORT, GATEWAY_METRICS_PORT, STACK_TMP (every log of the run is
under it), GATEWAY_LOG, GAME_LOG, STORE_LOG, SOLVER, LEXICON.

Every service samples every trace, so each hop of a call writes an
`event=span` line with the trace id, its own span id and its caller's.
Nothing waits a fixed time: a span line is written when the call is freed,
just after the reply went out, so log checks poll (bounded) for it.
"""
import glob
import os
import re
import secrets
import sys
import time
import traceback
import urllib.request
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
TMP = os.environ["STACK_TMP"]
LOGS = {"gateway": os.environ["GATEWAY_LOG"], "game-svc": os.environ["GAME_LOG"],
        "store-svc": os.environ["STORE_LOG"]}
SOLVER, LEXICON = os.environ["SOLVER"], os.environ["LEXICON"]
ET = common_pb2
HEX32 = re.compile(r"^[0-9a-f]{32}$")

# What the clients of this run saw that must never reach a log.
SECRETS = {"token": set(), "password": set(), "rack": set()}


def password():
    pw = "pw-" + secrets.token_hex(12)
    SECRETS["password"].add(pw)
    return pw


def new_player(prefix):
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(TARGET)
    pw = password()
    r = e.call("Register", handle=handle, password=pw)
    e.token, e.account_id, e.handle, e.password = r.token, r.account_id, handle, pw
    SECRETS["token"].add(r.token)
    return e


def labelled(name, label):
    """The sample of `name` whose labels contain `label` (e.g. 'result="malformed"')."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{MPORT}/metrics", timeout=5).read().decode()
    for line in body.splitlines():
        if line.startswith(name + "{") and label in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def failing_call(e, traceparents):
    """GetState of a game that does not exist (gateway -> game-svc ->
    store-svc, NOT_FOUND) with the given traceparent headers; the
    scrabble-trace-id trailer."""
    md = e.metadata() + [("traceparent", tp) for tp in traceparents]
    req, rep = (ec._cls(n) for n in ec.METHODS["GetState"])
    stub = e.channel.unary_unary("/scrabble.v1.Edge/GetState", request_serializer=req.SerializeToString,
                                 response_deserializer=rep.FromString)
    try:
        stub(req(game_id=987654321), metadata=md, timeout=10)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND, f"{err.code()} {err.details()}"
        trailers = dict(err.trailing_metadata() or ())
        tid = trailers.get("scrabble-trace-id", "")
        assert HEX32.match(tid), f"no scrabble-trace-id trailer: {trailers}"
        return tid
    raise AssertionError("GetState of a missing game succeeded")


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def span(svc, trace_id, method_part, timeout=10):
    """The fields of `svc`'s span line for `trace_id` whose method contains
    method_part, waiting for it to be written."""
    deadline = time.time() + timeout
    while True:
        for line in read(LOGS[svc]).splitlines():
            if "event=span" in line and f"trace_id={trace_id}" in line and method_part in line:
                return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if time.time() > deadline:
            raise AssertionError(f"{svc}: no span line for trace {trace_id} {method_part}")
        time.sleep(0.05)


def all_logs():
    """Every log file of the run: the services', Postgres's, Redis's."""
    paths = sorted(set(glob.glob(os.path.join(TMP, "**", "*.log"), recursive=True)))
    assert any(p.endswith("gateway.log") for p in paths), paths
    return {p: read(p) for p in paths}


def in_no_log(needle, what):
    for path, text in all_logs().items():
        assert needle not in text, f"{what} {needle!r} appears in {path}"


# ---- tests ----------------------------------------------------------------

def test_valid_traceparent_propagates():
    """A valid traceparent is continued at every hop: the trailer and every
    service's span line carry the client's trace id, each hop's parent is
    the hop before it."""
    e = new_player("tv")
    tid, parent = secrets.token_hex(16), secrets.token_hex(8)
    got = failing_call(e, [f"00-{tid}-{parent}-00"])
    assert got == tid, f"trailer {got}, sent {tid}"
    gw = span("gateway", tid, "Edge/GetState")
    assert gw["parent_id"] == parent, gw
    game = span("game-svc", tid, "/GetState")
    assert game["parent_id"] == gw["span_id"], (gw, game)
    store = span("store-svc", tid, "/LoadGame")
    assert store["parent_id"] == game["span_id"], (game, store)
    # The gateway samples for itself: the client's 00 flag did not stop it.
    assert gw["sampled"] == "1", gw


def test_malformed_traceparent_replaced():
    """Each malformed header starts a fresh trace at the gateway; the
    client's id is never propagated (no log of any service holds it) and
    downstream services log the fresh one."""
    e = new_player("tm")
    before = labelled("rpc_trace_contexts_total", 'result="malformed"')
    cases = []
    for shape in ["01-{t}-{p}-01",            # a version we do not speak
                  "ff-{t}-{p}-01",            # the invalid version
                  "00-{T}-{p}-01",            # uppercase
                  "00-{t}-0000000000000000-01",  # zero parent id
                  "00-{t}-{p}-01-extra",      # trailing data
                  "00-{t}-{p}",               # no flags
                  "00-{t}-{p}-0x",            # flags not hex
                  "00-{t}{p}--01",            # misplaced dashes
                  "00-{t}-{p}-010"]:          # one byte too many
        t, p = secrets.token_hex(16), secrets.token_hex(8)
        cases.append((t, [shape.format(t=t, T=t.upper(), p=p)]))
    # Two headers at once: which is meant is anybody's guess.
    t1, t2 = secrets.token_hex(16), secrets.token_hex(16)
    cases.append((t1, [f"00-{t1}-{secrets.token_hex(8)}-01", f"00-{t2}-{secrets.token_hex(8)}-01"]))
    fresh = []
    for sent, headers in cases:
        got = failing_call(e, headers)
        assert got != sent and got.upper() != sent.upper(), f"{headers}: trailer kept the client's id"
        fresh.append((sent, got, headers))
    for sent, got, headers in fresh:
        game = span("game-svc", got, "/GetState")
        assert game["trace_id"] == got, game
        span("store-svc", got, "/LoadGame")
        in_no_log(sent, f"the malformed header's trace id ({headers})")
        in_no_log(sent.upper(), "the malformed header's trace id")
    assert t2 not in "".join(all_logs().values()), "the second header's id was propagated"
    after = labelled("rpc_trace_contexts_total", 'result="malformed"')
    assert after - before == len(cases), f"malformed counted {after - before}, sent {len(cases)}"


def test_oversized_traceparent_replaced_or_refused():
    """A header past RPC_TRACEPARENT_OVERSIZED (256 bytes) that the
    transport still lets through is replaced like a malformed one and
    counted as oversized; one past the transport's own header limit is
    refused by the core before any handler runs. Neither id reaches a log."""
    e = new_player("to")
    before = labelled("rpc_trace_contexts_total", 'result="oversized"')
    t = secrets.token_hex(16)
    big = f"00-{t}-{secrets.token_hex(8)}-01" + "-" + "a" * 4000
    got = failing_call(e, [big])
    assert got != t
    span("game-svc", got, "/GetState")
    assert labelled("rpc_trace_contexts_total", 'result="oversized"') - before == 1
    in_no_log(t, "the oversized header's trace id")
    # Far past the 8 KiB header list the core accepts: refused by it.
    t = secrets.token_hex(16)
    huge = f"00-{t}-{secrets.token_hex(8)}-01" + "-" + "a" * 20000
    stub = e.channel.unary_unary("/scrabble.v1.Edge/GetProfile", request_serializer=lambda b: b,
                                 response_deserializer=lambda b: b)
    try:
        stub(b"", metadata=e.metadata() + [("traceparent", huge)], timeout=10)
        raise AssertionError("a 20 KB traceparent was served")
    except grpc.RpcError as err:
        print(f"  a 20 KB traceparent: {err.code().name} {err.details()!r}")
    in_no_log(t, "the huge header's trace id")
    # The core may close the connection that sent it (then the next call
    # on it fails UNAVAILABLE while it reconnects); the gateway still serves
    # a fresh one.
    assert Edge(TARGET, e.token).call("GetProfile").account_id == e.account_id


def test_error_trailer_without_traceparent():
    """A call without a traceparent gets a fresh trace; its error carries
    the id, and the log of every hop shows it."""
    e = new_player("tn")
    got = failing_call(e, [])
    span("gateway", got, "Edge/GetState")
    span("game-svc", got, "/GetState")
    span("store-svc", got, "/LoadGame")


def take_turn(e, game_id):
    """One turn of the player to move: the best legal solver play, else an
    exchange, else a pass. Records every rack the client sees."""
    st = e.call("GetState", game_id=game_id)
    SECRETS["rack"].add(st.my_rack)
    # The draft holds the rack order the player arranged: it goes through
    # game-svc to Redis and back.
    e.call("SaveDraft", game_id=game_id, placements=[], rack_order=st.my_rack[::-1])
    SECRETS["rack"].add(e.call("GetDraft", game_id=game_id).rack_order)
    # The first solver play game-svc's own Evaluate calls legal is made;
    # SubmitPlay checks the same rules, so it must go through.
    legal = (p for _, p, _ in ec.solver_moves(SOLVER, LEXICON, st, 5)
             if e.call("Evaluate", game_id=game_id, placements=p).legal)
    placements = next(legal, None)
    if placements is not None:
        r = e.call("SubmitPlay", game_id=game_id, expected_seq=st.seq, placements=placements)
        SECRETS["rack"].add(r.state.my_rack)
        return r.state
    if st.bag_count >= 7 and st.my_rack:
        r = e.call("Exchange", game_id=game_id, expected_seq=st.seq, tiles=st.my_rack[:3])
        SECRETS["rack"].add(r.move.exchanged_tiles)
    else:
        r = e.call("Pass", game_id=game_id, expected_seq=st.seq)
    SECRETS["rack"].add(r.state.my_rack)
    return r.state


# Upper-case words the services legitimately log (status code names and
# the like): a short rack that happens to spell one is not a leak.
LOG_WORDS = set()
for code in grpc.StatusCode:
    LOG_WORDS.update(code.name.split("_"))
LOG_WORDS.update({"TERM", "INT", "GET", "SCRAM", "SHA", "UTF", "ACL", "AUTH", "NOAUTH", "PING", "PONG",
                  "OK", "LOG", "WAL", "UTC", "HTTP"})


def test_full_game_logs_hold_no_secrets():
    """A whole game through the gateway (second logins, drafts, plays,
    exchanges or passes, to game over), then every log of the run is
    scanned for every token, password and rack the clients saw."""
    a, b = new_player("la"), new_player("lb")
    # A second session for each, and a wrong password, through Login.
    for p in (a, b):
        r = Edge(TARGET).call("Login", metadata=[], handle=p.handle, password=p.password)
        SECRETS["token"].add(r.token)
    wrong = password()
    try:
        Edge(TARGET).call("Login", metadata=[], handle=a.handle, password=wrong)
        raise AssertionError("a wrong password logged in")
    except CallError as err:
        assert err.reason == "bad_credentials", err
    inv = a.call("Invite", invitee_handles=[b.handle])
    game_id = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True).game_id
    players = {a.account_id: a, b.account_id: b}
    turns = 0
    while True:
        st = a.call("GetState", game_id=game_id)
        SECRETS["rack"].add(st.my_rack)
        if st.status == ET.GAME_STATUS_FINISHED:
            break
        assert turns < 200, "the game does not end"
        take_turn(players[st.seats[st.to_move].account_id], game_id)
        turns += 1
    SECRETS["rack"].add(b.call("GetState", game_id=game_id).my_rack)
    print(f"  game {game_id}: {turns} turns, end_reason={st.end_reason}")
    logs = all_logs()
    # Racks of one or two tiles are left out: "T" or "AD" occur in any log
    # (timestamps, hex ids) and say nothing about a leak; every longer rack
    # the game went through is still scanned.
    racks = {r for r in SECRETS["rack"] if len(r) >= 3 and r not in LOG_WORDS}
    checked = 0
    for path, text in logs.items():
        for kind in ("token", "password"):
            for s in SECRETS[kind]:
                assert s not in text, f"a {kind} appears in {path}"
                checked += 1
        # A rack as a token of its own: bounded by anything but a rack
        # character (letters and '?').
        for r in racks:
            m = re.search(r"(?<![A-Za-z?])" + re.escape(r) + r"(?![A-Za-z?])", text)
            assert not m, f"rack {r!r} appears in {path}: ...{text[max(0, m.start() - 80):m.end() + 80]}..."
            checked += 1
    print(f"  {len(logs)} logs, {sum(len(t) for t in logs.values())} bytes: none holds any of "
          f"{len(SECRETS['token'])} tokens, {len(SECRETS['password'])} passwords, {len(racks)} racks")
    assert len(racks) > 10, racks


TESTS = [test_valid_traceparent_propagates, test_malformed_traceparent_replaced,
         test_oversized_traceparent_replaced_or_refused, test_error_trailer_without_traceparent,
         test_full_game_logs_hold_no_secrets]


def main():
    want = set(sys.argv[1:])
    fails = 0
    for t in TESTS:
        if want and t.__name__ not in want:
            continue
        try:
            t()
            print(f"ok - {t.__name__}")
        except Exception:
            fails += 1
            print(f"not ok - {t.__name__}")
            traceback.print_exc()
    if fails:
        for name, path in LOGS.items():
            print(f"--- tail of {name} log")
            print("".join(read(path).splitlines(True)[-20:]))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

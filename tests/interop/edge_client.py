"""A small client of scrabble.v1.Edge for tests, on Debian's python3-grpcio.

No grpc stubs are needed: the protobuf message classes are generated at
test time with `protoc --python_out` into a temp dir, and calls go through
grpc's generic channel.unary_unary / unary_stream with the message
classes' serializers.
"""
import os
import queue
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
import uuid

import grpc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load_protos():
    """Generates the *_pb2 modules into a temp dir and imports them."""
    out = tempfile.mkdtemp(prefix="edge-pb2-")
    protos = ["scrabble/v1/common.proto", "scrabble/v1/edge.proto", "scrabble/v1/game.proto",
              "scrabble/v1/store.proto"]
    subprocess.run(["protoc", "-I" + os.path.join(REPO, "proto"), "--python_out=" + out] + protos,
                   check=True)
    sys.path.insert(0, out)
    from scrabble.v1 import common_pb2, edge_pb2  # noqa: E402
    return common_pb2, edge_pb2


common_pb2, edge_pb2 = load_protos()

# Edge method -> (request class, reply class); Subscribe is a stream.
METHODS = {
    "Register": ("RegisterRequest", "AuthReply"),
    "Login": ("LoginRequest", "AuthReply"),
    "GetProfile": ("GetProfileRequest", "common:Profile"),
    "UpdateProfile": ("UpdateProfileRequest", "common:Profile"),
    "GetStats": ("GetStatsRequest", "common:Stats"),
    "Invite": ("InviteRequest", "common:Invitation"),
    "RespondInvitation": ("RespondInvitationRequest", "common:Invitation"),
    "CancelInvitation": ("CancelInvitationRequest", "common:Invitation"),
    "ListInvitations": ("ListInvitationsRequest", "ListInvitationsReply"),
    "ListGames": ("ListGamesRequest", "ListGamesReply"),
    "GetState": ("GameRef", "common:GameState"),
    "GetHistory": ("GetHistoryRequest", "GetHistoryReply"),
    "Evaluate": ("EvaluateRequest", "EvaluateReply"),
    "SubmitPlay": ("SubmitPlayRequest", "TurnReply"),
    "Pass": ("TurnRequest", "TurnReply"),
    "Exchange": ("ExchangeRequest", "TurnReply"),
    "Resign": ("TurnRequest", "TurnReply"),
    "SaveDraft": ("SaveDraftRequest", "common:Draft"),
    "GetDraft": ("GameRef", "common:Draft"),
    "CheckWord": ("CheckWordRequest", "CheckWordReply"),
    "Nudge": ("GameRef", "NudgeReply"),
    "SendChat": ("SendChatRequest", "common:ChatMessage"),
    "ListChat": ("ListChatRequest", "ListChatReply"),
    "GetGameRecord": ("GameRef", "GetGameRecordReply"),
    "GetRules": ("GetRulesRequest", "Rules"),
    "GetLeaderboard": ("GetLeaderboardRequest", "GetLeaderboardReply"),
    "PostSeek": ("SeekRequest", "common:Seek"),
    "CancelSeek": ("CancelSeekRequest", "common:Seek"),
    "ListSeeks": ("ListSeeksRequest", "ListSeeksReply"),
    "ListPublicGames": ("PublicGameListRequest", "PublicGameListReply"),
    "WatchState": ("WatchStateRequest", "WatchStateReply"),
}


def _cls(name):
    if name.startswith("common:"):
        return getattr(common_pb2, name[7:])
    return getattr(edge_pb2, name)


class CallError(Exception):
    def __init__(self, code, reason, details):
        super().__init__(f"{code.name} reason={reason} {details}")
        self.code, self.reason, self.details = code, reason, details


def record_reason(method, code_name, reason):
    """Appends `method code reason` to $SCRABBLE_REASONS_SEEN when set, so a
    test run can be checked against proto/scrabble/v1/reasons.txt
    (proto/contract/check.py observed)."""
    path = os.environ.get("SCRABBLE_REASONS_SEEN")
    if path and reason:
        with open(path, "a") as f:
            f.write(f"{method} {code_name} {reason}\n")


def reason_of(err):
    for k, v in (err.trailing_metadata() or ()):
        if k == "scrabble-reason":
            return v
    return ""


class Edge:
    """One client connection (its own channel) and, optionally, a token."""

    def __init__(self, target, token=None):
        # A distinct channel argument keeps each Edge on its own connection.
        self.channel = grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        self.token = token
        self._calls = {}

    def close(self):
        self.channel.close()

    def metadata(self, token=None):
        tok = self.token if token is None else token
        return [("authorization", "Bearer " + tok)] if tok else []

    def _stub(self, method):
        if method not in self._calls:
            req, rep = METHODS[method]
            self._calls[method] = self.channel.unary_unary(
                "/scrabble.v1.Edge/" + method,
                request_serializer=_cls(req).SerializeToString,
                response_deserializer=_cls(rep).FromString)
        return self._calls[method]

    def call(self, method, timeout=10, metadata=None, **fields):
        req = _cls(METHODS[method][0])(**fields)
        try:
            reply = self._stub(method)(req, timeout=timeout,
                                       metadata=self.metadata() if metadata is None else metadata)
        except grpc.RpcError as e:
            record_reason(method, e.code().name, reason_of(e))
            raise CallError(e.code(), reason_of(e), e.details()) from None
        if method == "Evaluate" and reply.reason:
            record_reason(method, "OK", reply.reason)
        return reply

    def raw(self, method, body, timeout=10, metadata=None):
        """Sends raw request bytes (for malformed-input tests)."""
        f = self.channel.unary_unary("/scrabble.v1.Edge/" + method, request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)
        try:
            return f(body, timeout=timeout, metadata=self.metadata() if metadata is None else metadata)
        except grpc.RpcError as e:
            record_reason(method, e.code().name, reason_of(e))
            raise CallError(e.code(), reason_of(e), e.details()) from None

    def subscribe(self, after_event_id=""):
        return Subscription(self, after_event_id=after_event_id)

    def watch(self, game_id, after_seq=0, wait_headers=True):
        """An observer's Watch stream (spectators) of a public game."""
        return Subscription(self, method="Watch", wait_headers=wait_headers,
                            request=edge_pb2.WatchRequest(game_id=game_id, after_seq=after_seq))


PASSWORD = "correct horse battery"


def expect_error(code, reason, fn, *a, **kw):
    """Runs fn(*a, **kw), which must fail with status `code` and, unless
    reason is None, exactly the scrabble-reason `reason`. Returns the
    CallError."""
    try:
        fn(*a, **kw)
    except CallError as e:
        assert e.code == code, f"want {code.name} {reason}, got {e}"
        if reason is not None:
            assert e.reason == reason, f"want reason {reason}, got {e}"
        return e
    raise AssertionError(f"want {code.name} {reason}, the call succeeded")


def new_player(target, prefix="p", password=PASSWORD):
    """Registers a fresh handle (prefix + 8 hex digits) and returns an Edge
    on its own connection holding the token, with .account_id and
    .handle."""
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(target)
    r = e.call("Register", handle=handle, password=password)
    assert r.account_id > 0 and r.token, r
    e.token, e.account_id, e.handle = r.token, r.account_id, handle
    return e


class Subscription:
    """An open Subscribe stream whose events a thread puts on a queue."""

    def __init__(self, edge, read=True, after_event_id="", method="Subscribe", request=None,
                 wait_headers=True):
        if request is None:
            request = edge_pb2.SubscribeRequest(after_event_id=after_event_id)
        self.method = method
        f = edge.channel.unary_stream("/scrabble.v1.Edge/" + method,
                                      request_serializer=type(request).SerializeToString,
                                      response_deserializer=common_pb2.Event.FromString)
        self.call = f(request, metadata=edge.metadata())
        # The gateway sends the response headers once the stream has
        # replayed what it missed and takes live events: wait for them, so
        # what the caller does next is seen live. (A stream refused at once
        # ends without them: its status is read from the events.)
        if wait_headers:
            self.call.initial_metadata()
        self.events = queue.Queue()
        self.error = None
        if read:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self):
        try:
            for ev in self.call:
                self.events.put(ev)
            self.events.put(None)  # ended OK (a Watch stream after GAME_OVER)
        except grpc.RpcError as e:
            record_reason(self.method, e.code().name, reason_of(e))
            self.error = CallError(e.code(), reason_of(e), e.details())
            self.events.put(None)

    def next(self, timeout=15, want=None):
        """The next event (of type `want` if given, skipping others)."""
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError(f"no event {want} within {timeout}s")
            ev = self.events.get(timeout=left)
            if ev is None:
                self.events.put(None)  # stays ended for the next reader
                raise self.error if self.error else EOFError("the stream ended OK")
            if want is None or ev.type == want:
                return ev

    def cancel(self):
        self.call.cancel()


# ---- test helpers shared by the integration tests ---------------------------

def poll(what, fn, timeout=30):
    """fn() until it returns something true (returned), at most timeout s."""
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def restart_process(tmp, name, port, metrics_port=None):
    """SIGTERM the process whose pid is in tmp/<name>.pid, wait until it is
    gone, start it again with the command line in tmp/<name>.cmd (one
    argument a line; output to tmp/<name>-restarted.log), write its new pid
    and return once it accepts connections on port (and metrics_port)."""
    import signal
    with open(os.path.join(tmp, name + ".pid")) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGTERM)

    def gone():
        try:
            return open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
        except FileNotFoundError:
            return True
    poll(f"{name} (pid {pid}) to exit", gone)
    with open(os.path.join(tmp, name + ".cmd")) as f:
        cmd = f.read().splitlines()
    log = open(os.path.join(tmp, name + "-restarted.log"), "ab")
    p = subprocess.Popen(cmd, stdout=log, stderr=log, start_new_session=True)
    with open(os.path.join(tmp, name + ".pid"), "w") as f:
        f.write(str(p.pid))

    def connects(port):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    for p_ in (port, metrics_port):
        if p_:
            poll(f"{name} listening on {p_}", lambda: connects(p_))


def run_tests(tests, benches=()):
    """The main of a test script: runs the tests named on the command line
    (all tests when none; a bench only when named), prints ok/FAIL per test
    with the traceback of each failure and a summary, exits 1 on any
    failure. An entry is a function (named by its __name__) or a (name,
    function) pair."""
    def named(t):
        return t if isinstance(t, tuple) else (t.__name__, t)
    want = set(sys.argv[1:])
    passed = failed = 0
    bench_names = {named(b)[0] for b in benches}
    for name, fn in [named(t) for t in list(tests) + list(benches)]:
        if (want and name not in want) or (not want and name in bench_names):
            continue
        t0 = time.time()
        try:
            fn()
            passed += 1
            print(f"ok   {name} ({time.time() - t0:.1f}s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


def metric(port, name, labels=""):
    """Sum of a Prometheus metric's samples on 127.0.0.1:port/metrics whose
    label text contains `labels`; None when there is no such sample."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    total, seen = 0.0, False
    for line in body.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m and m.group(1) == name and labels in (m.group(2) or ""):
            total += float(m.group(3))
            seen = True
    return total if seen else None


def wait_metric(port, name, pred, timeout=10):
    deadline = time.time() + timeout
    v = None
    while time.time() < deadline:
        v = metric(port, name)
        if v is not None and pred(v):
            return v
        time.sleep(0.05)
    raise TimeoutError(f"metric {name}={v} never satisfied the condition")


def _resp(*args):
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


def redis_auth(user):
    """AUTH as the Redis ACL user `user`, with its password from
    $SECRETS_DIR/redis-<user>.pass (scripts/lib.sh); b"" when SECRETS_DIR is
    unset (a Redis without ACLs)."""
    d = os.environ.get("SECRETS_DIR")
    if not d:
        return b""
    with open(os.path.join(d, "redis-%s.pass" % user)) as f:
        return _resp("AUTH", user, f.readline().strip())


def redis_cmd(port, *args, user="admin"):
    """One Redis command over RESP (no redis module needed), as ACL user
    `user`. Returns the raw reply line(s), the AUTH reply first."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(redis_auth(user) + _resp(*args))
        return s.recv(4096)


def redis_publish_many(port, items):
    """PUBLISH each (channel, payload) in one pipelined connection, as the
    ACL user publisher."""
    auth = redis_auth("publisher")
    buf = [auth]
    for ch, payload in items:
        buf.append(_resp("PUBLISH", ch, payload))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"".join(buf))
        want, got = len(items) + (1 if auth else 0), b""
        while got.count(b"\r\n") < want:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk


# ---- routing (must agree with gateway/src/route.c) ------------------------

M64 = (1 << 64) - 1


def _mix(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def instance_hash(name):
    h = 0xCBF29CE484222325
    for b in name.encode():
        h ^= b
        h = (h * 0x100000001B3) & M64
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    return h


def owner(game_id, names):
    ws = [_mix(_mix(game_id & M64) ^ instance_hash(n)) for n in names]
    return max(range(len(names)), key=lambda i: (ws[i], -i))


# ---- the solver: legal moves for a python client ---------------------------

def cgp(state):
    """The CGP of a GameState as its player sees it (own rack only)."""
    rows = []
    for row in state.board:
        out, run = "", 0
        for ch in row:
            if ch == ".":
                run += 1
                continue
            if run:
                out += str(run)
                run = 0
            out += ch
        if run:
            out += str(run)
        rows.append(out)
    scores = "/".join(str(s.score) for s in state.seats)
    return f"{'/'.join(rows)} {state.my_rack}/ {scores} {state.scoreless_turns}"


def play_out(players, game_id, solver, lexicon, turn=None):
    """Plays a game to its end and returns its final state (as players[0]
    sees it): each turn the solver's best play, else an exchange while the
    bag allows, else a pass. players: Edge by seat. turn(mover, state,
    moves), when given, runs first on each turn and returns True when it
    made the turn itself."""
    for _ in range(200):
        st = players[0].call("GetState", game_id=game_id)
        if st.status == common_pb2.GAME_STATUS_FINISHED:
            return st
        me = players[st.to_move]
        st = me.call("GetState", game_id=game_id)
        moves = solver_moves(solver, lexicon, st, 1)
        if turn and turn(me, st, moves):
            continue
        if moves:
            me.call("SubmitPlay", game_id=game_id, expected_seq=st.seq, placements=moves[0][1])
        elif st.bag_count >= 7:
            me.call("Exchange", game_id=game_id, expected_seq=st.seq, tiles=st.my_rack[:1])
        else:
            me.call("Pass", game_id=game_id, expected_seq=st.seq)
    raise AssertionError("game did not end in 200 turns")


def solver_moves(solver, lexicon, state, top):
    """Up to `top` legal plays from `scrabble-solver gen`, best first, as
    (notation line, [Placement], score); played-through letters are skipped."""
    p = subprocess.run([solver, "gen", "--cgp", cgp(state), "--top", str(top), "--lexicon", lexicon],
                       capture_output=True, text=True, timeout=30)
    moves = []
    for line in p.stdout.splitlines():
        m = re.match(r"^(\d+)([A-O]) (\S+) (-?\d+)$", line) or re.match(r"^([A-O])(\d+) (\S+) (-?\d+)$", line)
        if not m:
            continue
        if m.group(1).isdigit():
            row, col, dr, dc = int(m.group(1)) - 1, ord(m.group(2)) - 65, 0, 1
        else:
            col, row, dr, dc = ord(m.group(1)) - 65, int(m.group(2)) - 1, 1, 0
        placements, through = [], False
        for ch in m.group(3):
            if ch in "()":
                through = ch == "("
                continue
            if not through:
                placements.append(common_pb2.Placement(row=row, col=col, letter=ch.upper(), blank=ch.islower()))
            row, col = row + dr, col + dc
        moves.append((line, placements, int(m.group(4))))
    return moves

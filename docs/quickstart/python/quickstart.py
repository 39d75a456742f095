#!/usr/bin/python3
"""A first client of scrabble.v1.Edge in Python, on Debian's packages only:

    apt-get install python3-grpcio python3-protobuf protobuf-compiler
    python3 quickstart.py --target 127.0.0.1:7000

Two players register, follow their events with Subscribe, one invites the
other, the invitee accepts, the first mover plays a word (found by asking
Evaluate, the server's own preview) or passes, and both see the move arrive
as events. Then the second player drops its event stream, misses a chat
line, and resumes from the last event id it saw: the missed line arrives
first (docs/API.md, "Reconnecting"). It prints what happens and exits 0, or names the failed call with
its status code and `scrabble-reason` and exits 1.

The message classes are generated from the .proto files at start with
`protoc --python_out` (no grpcio-tools needed); calls go through grpc's
generic unary_unary / unary_stream. In your own project, generate once and
import edge_pb2 / common_pb2 instead.
"""
import argparse
import itertools
import os
import queue
import subprocess
import sys
import tempfile
import threading
import uuid

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))


def load_messages(proto_dir):
    """Generates edge_pb2 and common_pb2 into a temp dir and imports them."""
    out = tempfile.mkdtemp(prefix="scrabble-pb2-")
    subprocess.run(["protoc", "-I" + proto_dir, "--python_out=" + out,
                    "scrabble/v1/common.proto", "scrabble/v1/edge.proto"], check=True)
    sys.path.insert(0, out)
    from scrabble.v1 import common_pb2, edge_pb2
    return common_pb2, edge_pb2


class EdgeError(Exception):
    """A failed call: the gRPC code and the stable reason to branch on."""

    def __init__(self, method, err):
        self.code = err.code()
        self.reason = dict(err.trailing_metadata() or ()).get("scrabble-reason", "")
        super().__init__(f"{method}: {self.code.name} {self.reason}: {err.details()}")


class Player:
    """One account with its own connection to the gateway."""

    # The channel settings docs/API.md recommends: back within seconds of a
    # gateway restart, dead connections noticed within a minute or two.
    CHANNEL_OPTIONS = [("grpc.initial_reconnect_backoff_ms", 250),
                       ("grpc.min_reconnect_backoff_ms", 250),
                       ("grpc.max_reconnect_backoff_ms", 5000),
                       ("grpc.keepalive_time_ms", 60000),
                       ("grpc.keepalive_timeout_ms", 20000),
                       ("grpc.keepalive_permit_without_calls", 1),
                       ("grpc.http2.max_pings_without_data", 0)]

    def __init__(self, target, pb):
        self.common, self.edge = pb
        self.channel = grpc.insecure_channel(target, options=self.CHANNEL_OPTIONS)
        self.token = None

    def call(self, method, request, reply_type):
        rpc = self.channel.unary_unary(f"/scrabble.v1.Edge/{method}",
                                       request_serializer=request.SerializeToString,
                                       response_deserializer=reply_type.FromString)
        metadata = [("authorization", "Bearer " + self.token)] if self.token else []
        try:
            return rpc(request, metadata=metadata, timeout=10)
        except grpc.RpcError as e:
            raise EdgeError(method, e) from None

    def register(self, handle, password):
        r = self.call("Register", self.edge.RegisterRequest(handle=handle, password=password),
                      self.edge.AuthReply)
        self.token, self.account_id, self.handle = r.token, r.account_id, r.handle
        return r

    def follow_events(self, after_event_id=""):
        """Opens Subscribe; a thread puts each Event on self.events (None
        when the stream ends). self.last_event remembers the last one seen.

        Resume: a client that lost its stream (any status: the gateway
        restarted, the network dropped) calls
        follow_events(after_event_id=self.last_event.event_id) and first
        receives what it missed, then live events. OUT_OF_RANGE
        events_expired means it was away longer than the log keeps events:
        resynchronise with GetState, then follow_events() afresh.
        """
        request = self.edge.SubscribeRequest(after_event_id=after_event_id)
        rpc = self.channel.unary_stream("/scrabble.v1.Edge/Subscribe",
                                        request_serializer=self.edge.SubscribeRequest.SerializeToString,
                                        response_deserializer=self.common.Event.FromString)
        self.stream = rpc(request, metadata=[("authorization", "Bearer " + self.token)])
        self.events = queue.Queue()
        if not after_event_id:
            self.last_event = None
        # The gateway sends the stream's headers once it has replayed what
        # was missed and takes live events: from then on nothing is missed.
        self.stream.initial_metadata()

        def read():
            try:
                for ev in self.stream:
                    self.events.put(ev)
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.CANCELLED:
                    print(f"  {self.handle}: stream ended: {EdgeError('Subscribe', e)}")
            self.events.put(None)

        threading.Thread(target=read, daemon=True).start()

    def wait_event(self, kind, timeout=15):
        """The next event of one type (others are printed and skipped)."""
        want = self.common.EventType.Name(kind)
        while True:
            try:
                ev = self.events.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"{self.handle}: no {want} within {timeout}s") from None
            if ev is None:
                raise RuntimeError(f"{self.handle}: the event stream ended before {want}")
            self.last_event = ev
            print(f"  {self.handle} <- {self.common.EventType.Name(ev.type)} game={ev.game_id} seq={ev.seq}")
            if ev.type == kind:
                return ev

    def close(self):
        if getattr(self, "stream", None) is not None:
            self.stream.cancel()
        self.channel.close()


def find_play(player, state):
    """A legal first play from the rack, asking Evaluate (a cheap server-side
    preview): words of 2..4 tiles across the centre square. None if none."""
    common, edge = player.common, player.edge
    rack = [t for t in state.my_rack if t != "?"]
    tried = set()
    for n in (2, 3, 4):
        for letters in itertools.permutations(rack, n):
            if letters in tried:
                continue
            tried.add(letters)
            tiles = [common.Placement(row=7, col=7 + i, letter=ch) for i, ch in enumerate(letters)]
            r = player.call("Evaluate", edge.EvaluateRequest(game_id=state.game_id, placements=tiles),
                            edge.EvaluateReply)
            if r.legal:
                return tiles, r
            if len(tried) >= 60:  # Evaluate is rate-limited like any read
                return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="127.0.0.1:7000", help="the gateway (host:port)")
    ap.add_argument("--proto-dir", default=os.path.join(HERE, "..", "..", "..", "proto"),
                    help="directory holding scrabble/v1/*.proto")
    args = ap.parse_args()
    pb = load_messages(os.path.abspath(args.proto_dir))
    common, edge = pb

    alice, bob = Player(args.target, pb), Player(args.target, pb)
    try:
        suffix = uuid.uuid4().hex[:6]
        for p, name in ((alice, "alice"), (bob, "bob")):
            r = p.register(f"{name}-{suffix}", "correct horse battery staple")
            print(f"registered {r.handle} (account {r.account_id})")
            p.follow_events()
        inv = alice.call("Invite", edge.InviteRequest(invitee_handles=[bob.handle]), common.Invitation)
        ev = bob.wait_event(common.EVENT_TYPE_INVITATION)
        assert ev.invitation.invitation_id == inv.invitation_id, ev
        inv_id = ev.invitation.invitation_id
        print(f"{alice.handle} invited {bob.handle}: invitation {inv_id}")

        started = bob.call("RespondInvitation",
                           edge.RespondInvitationRequest(invitation_id=inv_id, accept=True), common.Invitation)
        game_id = started.game_id
        print(f"{bob.handle} accepted: game {game_id} started")
        alice.wait_event(common.EVENT_TYPE_YOUR_TURN)

        state = alice.call("GetState", edge.GameRef(game_id=game_id), common.GameState)
        print(f"{alice.handle} holds {state.my_rack}; bag {state.bag_count}; seq {state.seq}")
        found = find_play(alice, state)
        if found:
            tiles, preview = found
            reply = alice.call("SubmitPlay", edge.SubmitPlayRequest(game_id=game_id, expected_seq=state.seq,
                                                                     placements=tiles), edge.TurnReply)
            print(f"{alice.handle} played {reply.move.notation} for {reply.move.score} "
                  f"(Evaluate said {preview.score})")
        else:
            reply = alice.call("Pass", edge.TurnRequest(game_id=game_id, expected_seq=state.seq), edge.TurnReply)
            print(f"{alice.handle} found no short word and passed")

        moved = bob.wait_event(common.EVENT_TYPE_OPPONENT_MOVED)
        print(f"{bob.handle} saw move {moved.move.seq}: {moved.move.notation}")
        bob.wait_event(common.EVENT_TYPE_YOUR_TURN)

        # Errors are a code plus a stable reason: branch on those.
        try:
            alice.call("Pass", edge.TurnRequest(game_id=game_id, expected_seq=reply.state.seq), edge.TurnReply)
        except EdgeError as e:
            print(f"{alice.handle} passing out of turn: {e.code.name} {e.reason}")
            assert e.reason == "not_your_turn", e
        # Reconnecting: bob's stream goes away (here on purpose; in life a
        # gateway restart or a network drop), a chat line comes meanwhile,
        # and bob resumes from the last event id he saw.
        last = bob.last_event.event_id
        bob.stream.cancel()
        while bob.events.get(timeout=15) is not None:  # until the reader sees the end
            pass
        alice.call("SendChat", edge.SendChatRequest(game_id=game_id, text="good luck!"), common.ChatMessage)
        bob.follow_events(after_event_id=last)
        chat = bob.wait_event(common.EVENT_TYPE_CHAT)
        assert int(chat.event_id) > int(last), (chat.event_id, last)
        print(f"{bob.handle} resumed after event {last} and got the missed line: {chat.chat.text!r}")
        print("quickstart: ok")
        return 0
    except (EdgeError, RuntimeError, TimeoutError, AssertionError) as e:
        print(f"quickstart: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        alice.close()
        bob.close()


if __name__ == "__main__":
    sys.exit(main())

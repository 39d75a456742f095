#!/usr/bin/python3
"""Scale-out test through the public API: three game-svc instances, two
gateways, one instance SIGKILLed mid-game and restarted.

Run by test_scaleout.sh, which starts the stack with scripts/stack.sh
(GAMES=3 GATEWAYS=2, a private PORT_OFFSET and VAR_DIR) and passes in the
environment: GATEWAY_TARGETS and GAME_TARGETS (host:port lists, the latter
in the gateways' --games order), GAME_METRICS (metrics ports, same order),
GATEWAY_METRICS, VAR_DIR, STACK_SH (scripts/stack.sh; the rest of its
environment is inherited), SOLVER, LEXICON.

Every check prints "ok - ..." or "not ok - ..."; the last line is
"N passed, N failed" and the exit status is non-zero on any failure.
"""
import os
import queue
import re
import signal
import subprocess
import sys
import time
import traceback
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import CallError, Edge, common_pb2 as ET  # noqa: E402

import grpc  # noqa: E402

GATEWAYS = os.environ["GATEWAY_TARGETS"].split(",")
GW_METRICS = [int(p) for p in os.environ["GATEWAY_METRICS"].split(",")]
GAMES = os.environ["GAME_TARGETS"].split(",")
GAME_METRICS = [int(p) for p in os.environ["GAME_METRICS"].split(",")]
VAR_DIR = os.environ["VAR_DIR"]
STACK_SH = os.environ["STACK_SH"]
SOLVER = os.environ["SOLVER"]
LEXICON = os.environ["LEXICON"]
VICTIM = int(os.environ.get("VICTIM", "1"))  # the game-svc instance killed

NPLAYERS = 6
MIN_GAMES, MAX_GAMES, MIN_PER_INSTANCE = 9, 30, 2
MOVES_BEFORE_KILL = 4     # per game
ROUNDS_WHILE_DOWN = 2     # moves per surviving game while the victim is down
DOWN_AT_LEAST_S = 4.0     # keep the victim down at least this long
PROMPT_S = 2.0            # "promptly": an UNAVAILABLE answer within this
RECOVER_S = 60            # the gateways must reach the restarted instance within this
MAX_TURNS = 200           # per game, to the end

OK = grpc.StatusCode
passed = failed = 0


def check(cond, desc, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok - {desc}", flush=True)
    else:
        failed += 1
        print(f"not ok - {desc}" + (f": {detail}" if detail else ""), flush=True)
    return cond


def note(msg):
    print(f"# {msg}", flush=True)


# ---- players: each has a connection to both gateways and alternates -------

class Player:
    def __init__(self, idx):
        self.idx = idx
        self.handle = f"so{idx}_{uuid.uuid4().hex[:8]}"
        self.edges = [Edge(t) for t in GATEWAYS]
        r = self.edges[idx % 2].call("Register", handle=self.handle, password="correct horse battery")
        for e in self.edges:
            e.token = r.token
        self.account_id = r.account_id
        self.turn = 0
        self.events = []          # every event received, in order
        self.sub = None
        self.sub_gw = idx % 2     # the gateway holding this player's stream

    def call(self, method, gw=None, **kw):
        """A call through the next gateway in turn (or gateway `gw`)."""
        if gw is None:
            gw = self.turn % 2
            self.turn += 1
        calls_per_gw[gw] += 1
        return self.edges[gw].call(method, **kw)

    def subscribe(self):
        self.sub = self.edges[self.sub_gw].subscribe()

    def drain(self):
        while True:
            try:
                ev = self.sub.events.get_nowait()
            except queue.Empty:
                return
            if ev is None:
                raise self.sub.error
            self.events.append(ev)


calls_per_gw = [0, 0]


class Game:
    def __init__(self, gid, players):
        self.id = gid
        self.players = players            # by seat
        self.owner = ec.owner(gid, GAMES)
        self.moves = []                   # acknowledged moves (TurnReply.move), in order
        self.finished = False

    def player_of(self, account_id):
        return next(p for p in self.players if p.account_id == account_id)


# ---- the solver (edge_client.solver_moves) ----------------------------------

def solver_moves(state, top=4):
    return ec.solver_moves(SOLVER, LEXICON, state, top)


# ---- turns ----------------------------------------------------------------

def to_move_player(g):
    st = g.players[0].call("GetState", game_id=g.id)
    if st.status == ET.GAME_STATUS_FINISHED:
        return None, st
    return g.player_of(st.seats[st.to_move].account_id), st


def take_turn(g):
    """One turn by whoever is to move, through alternating gateways; the
    acknowledged move is recorded. Returns False when the game is over."""
    p, st = to_move_player(g)
    if p is None:
        g.finished = True
        return False
    st = p.call("GetState", game_id=g.id)
    assert st.my_seat >= 0 and st.seats[st.my_seat].account_id == p.account_id, st
    assert st.to_move == st.my_seat and st.seq == len(g.moves), \
        f"game {g.id}: to_move={st.to_move} my_seat={st.my_seat} seq={st.seq} recorded={len(g.moves)}"
    reply = None
    for notation, placements, score in solver_moves(st):
        ev = p.call("Evaluate", game_id=g.id, placements=placements)
        if not ev.legal:
            continue
        assert ev.score == score, f"{notation}: Evaluate {ev.score} != solver {score}"
        try:
            reply = p.call("SubmitPlay", game_id=g.id, expected_seq=st.seq, placements=placements)
        except CallError as err:
            if err.reason.startswith("illegal_play"):
                continue
            raise
        assert reply.move.score == score, (notation, reply.move)
        break
    if reply is None:
        if st.bag_count >= 7 and st.my_rack:
            reply = p.call("Exchange", game_id=g.id, expected_seq=st.seq, tiles=st.my_rack)
        else:
            reply = p.call("Pass", game_id=g.id, expected_seq=st.seq)
    m = reply.move
    assert m.seq == st.seq + 1 and reply.state.seq == m.seq and m.account_id == p.account_id, reply
    g.moves.append(m)
    if reply.state.status == ET.GAME_STATUS_FINISHED:
        g.finished = True
    return not g.finished


def play_round(games, n):
    """n turns in each unfinished game, interleaved across games."""
    before = sum(len(g.moves) for g in games)
    for _ in range(n):
        for g in games:
            if not g.finished:
                take_turn(g)
    return sum(len(g.moves) for g in games) - before


# ---- what a game must look like -------------------------------------------

def move_key(m):
    """The fields of a move every viewer sees identically."""
    return (m.seq, m.seat, m.kind, tuple((p.row, p.col, p.letter, p.blank) for p in m.placements),
            m.exchanged_count, m.score, tuple(m.words), m.notation, m.account_id)


def verify_game(g, label, racks_before=None):
    """GetState/GetHistory (through both gateways) against the recorded
    acknowledged moves; racks against `racks_before` (account -> rack)."""
    n = len(g.moves)
    ok = True
    for p in g.players:
        for gw in (0, 1):
            st = p.call("GetState", gw=gw, game_id=g.id)
            h = p.call("GetHistory", gw=gw, game_id=g.id, since_seq=0)
            ok &= st.seq == n and h.seq == n
            got = [move_key(m) for m in h.moves]
            want = [move_key(m) for m in g.moves]
            if got != want:
                first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                check(False, f"{label}: game {g.id} history == acknowledged moves (seat {st.my_seat} via gw{gw})",
                      f"{len(got)} vs {len(want)} moves, first difference at index {first}: "
                      f"{got[first] if first < len(got) else None} vs {want[first] if first < len(want) else None}")
                return False
            # exchanged tiles are visible to the exchanger only
            for hm, rm in zip(h.moves, g.moves):
                if rm.kind == ET.MOVE_KIND_EXCHANGE:
                    want_tiles = rm.exchanged_tiles if hm.account_id == p.account_id else ""
                    ok &= hm.exchanged_tiles == want_tiles
            # tiles are conserved: board + racks + bag = 100
            on_board = sum(ch != "." for row in st.board for ch in row)
            ok &= on_board + sum(s.rack_count for s in st.seats) + st.bag_count == 100
            ok &= len(st.my_rack) == st.seats[st.my_seat].rack_count
            if st.status == ET.GAME_STATUS_ACTIVE:
                # no end-of-game adjustments yet: each score is the sum of its moves
                for s in st.seats:
                    ok &= s.score == sum(m.score for m in g.moves if m.seat == s.seat)
                ok &= not g.finished
            else:
                ok &= g.finished
            if racks_before is not None:
                ok &= sorted(st.my_rack) == sorted(racks_before[p.account_id])
            if not ok:
                check(False, f"{label}: game {g.id} state consistent (seat {st.my_seat} via gw{gw})", str(st))
                return False
    return True


def racks_of(g):
    return {p.account_id: p.call("GetState", game_id=g.id).my_rack for p in g.players}


def check_events(games, label, timeout=15):
    """Each acknowledged move reached every other seat's stream (OPPONENT_MOVED
    with its seq and score), and a finished game's GAME_OVER reached all."""
    deadline = time.time() + timeout
    while True:
        missing = []
        for g in games:
            for m in g.moves:
                for p in g.players:
                    if p.account_id == m.account_id:
                        continue
                    p.drain()
                    if not any(e.type == ET.EVENT_TYPE_OPPONENT_MOVED and e.game_id == g.id and e.seq == m.seq
                               and e.move.score == m.score for e in p.events):
                        missing.append((g.id, m.seq, p.handle))
            if g.finished:
                for p in g.players:
                    if not any(e.type == ET.EVENT_TYPE_GAME_OVER and e.game_id == g.id and e.seq == len(g.moves)
                               for e in p.events):
                        missing.append((g.id, "game_over", p.handle))
        if not missing or time.time() > deadline:
            break
        time.sleep(0.2)
    total = sum(len(g.moves) for g in games)
    check(not missing, f"{label}: every one of {total} moves reached the opponent's Subscribe stream",
          f"{len(missing)} missing, e.g. {missing[:5]}")


def game_metric(i, name):
    try:
        return ec.metric(GAME_METRICS[i], name) or 0
    except OSError:
        return None


def pid_dead(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def expect_unavailable(fn, desc):
    t0 = time.time()
    try:
        fn()
        return check(False, desc, "the call succeeded")
    except CallError as e:
        dt = time.time() - t0
        return check(e.code == OK.UNAVAILABLE and dt < PROMPT_S, desc,
                     f"{e.code.name} reason={e.reason} after {dt:.2f}s")


# ---- the scenario ------------------------------------------------------------

def main():
    note(f"gateways {GATEWAYS}, game-svc {GAMES}, victim game-svc-{VICTIM}")
    players = [Player(i) for i in range(NPLAYERS)]
    check(True, f"registered {NPLAYERS} players (streams on gateway idx%2)")
    for gw in (0, 1):
        base = ec.metric(GW_METRICS[gw], "gateway_subscribers") or 0
        mine = [p for p in players if p.sub_gw == gw]
        for p in mine:
            p.subscribe()
        ec.wait_metric(GW_METRICS[gw], "gateway_subscribers", lambda v: v >= base + len(mine))
    check(True, "every player's Subscribe stream is open (3 on each gateway)")

    # Games between varying pairs (some pairs on the same gateway, some not),
    # invited through one gateway and accepted through the other, until
    # every game-svc instance owns at least MIN_PER_INSTANCE games.
    pairs = [(a, b) for a in range(NPLAYERS) for b in range(NPLAYERS) if a < b]
    games = []
    by_owner = {i: [] for i in range(len(GAMES))}
    k = 0
    while k < MAX_GAMES and (k < MIN_GAMES or min(len(v) for v in by_owner.values()) < MIN_PER_INSTANCE):
        a, b = (players[i] for i in pairs[(k * 7) % len(pairs)])
        inv = a.call("Invite", gw=k % 2, invitee_handles=[b.handle])
        r = b.call("RespondInvitation", gw=(k + 1) % 2, invitation_id=inv.invitation_id, accept=True)
        assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
        g = Game(r.game_id, [a, b])
        games.append(g)
        by_owner[g.owner].append(g)
        k += 1
    check(min(len(v) for v in by_owner.values()) >= MIN_PER_INSTANCE,
          f"{len(games)} games, owned per rendezvous by instance: "
          + ", ".join(f"{i}:{[g.id for g in v]}" for i, v in by_owner.items()))

    # Phase 1: moves in every game; the turns each instance committed (its own
    # metrics) must match the games the gateways' rendezvous hash gave it.
    turns0 = [game_metric(i, "game_turns_committed_total") for i in range(len(GAMES))]
    fwd0 = [ec.metric(m, "gateway_forwarded_total") or 0 for m in GW_METRICS]
    play_round(games, MOVES_BEFORE_KILL)
    fwd1 = [ec.metric(m, "gateway_forwarded_total") or 0 for m in GW_METRICS]
    check(all(b - a > 0 for a, b in zip(fwd0, fwd1)),
          f"both gateways forwarded game calls (gateway_forwarded_total +{[b - a for a, b in zip(fwd0, fwd1)]})")
    turns1 = [game_metric(i, "game_turns_committed_total") for i in range(len(GAMES))]
    for i in range(len(GAMES)):
        want = sum(len(g.moves) for g in by_owner[i])
        check(turns1[i] - turns0[i] == want,
              f"game-svc-{i} committed exactly the {want} turns of the games it owns", f"{turns1[i] - turns0[i]}")
    check(all(verify_game(g, "before the kill") for g in games),
          f"before the kill: all {len(games)} games' state and history match the acknowledged moves")
    check_events(games, "before the kill")
    check(calls_per_gw[0] > 50 and calls_per_gw[1] > 50, f"calls went through both gateways {calls_per_gw}")

    # Phase 2: SIGKILL the victim mid-game.
    victims = by_owner[VICTIM]
    survivors = [g for g in games if g.owner != VICTIM]
    check(all(not g.finished and len(g.moves) > 0 for g in victims), "the victim's games are mid-game")
    before = {g.id: racks_of(g) for g in victims}
    unavail0 = [ec.metric(m, "gateway_downstream_unavailable_total") or 0 for m in GW_METRICS]
    seq_before = {g.id: len(g.moves) for g in victims}
    with open(os.path.join(VAR_DIR, "run", f"game-svc-{VICTIM}.pid")) as f:
        pid = int(f.read().split()[0])
    os.kill(pid, signal.SIGKILL)
    t_kill = time.time()
    for _ in range(100):
        if pid_dead(pid):
            break
        time.sleep(0.05)
    check(pid_dead(pid), f"game-svc-{VICTIM} (pid {pid}) is dead after SIGKILL")

    for g in victims:
        p = g.players[0]
        for gw in (0, 1):
            expect_unavailable(lambda: p.call("GetState", gw=gw, game_id=g.id, timeout=10),
                               f"down: GetState of game {g.id} via gateway {gw} is UNAVAILABLE promptly")
        mover = None
        for cand in g.players:  # whoever's turn it is (per the recorded moves)
            if g.moves[-1].account_id != cand.account_id:
                mover = cand
        expect_unavailable(lambda: mover.call("Pass", game_id=g.id, expected_seq=len(g.moves), timeout=10),
                           f"down: a Pass in game {g.id} is UNAVAILABLE promptly")
        expect_unavailable(lambda: mover.call("Evaluate", game_id=g.id, timeout=10,
                                              placements=[ET.Placement(row=7, col=7, letter="A")]),
                           f"down: Evaluate in game {g.id} is UNAVAILABLE promptly")
    n0 = sum(len(g.moves) for g in survivors)
    made = play_round(survivors, ROUNDS_WHILE_DOWN)
    # Stay down a while longer: once the gateways' channels sit in backoff,
    # calls must still fail fast rather than wait for a connection.
    slow, tries = [], 0
    while time.time() - t_kill < DOWN_AT_LEAST_S and tries < 100:
        g = victims[tries % len(victims)]
        t1 = time.time()
        try:
            g.players[0].call("GetState", game_id=g.id, timeout=10)
            slow.append((g.id, "succeeded"))
        except CallError as e:
            if e.code != OK.UNAVAILABLE or time.time() - t1 >= PROMPT_S:
                slow.append((g.id, e.code.name, round(time.time() - t1, 2)))
        tries += 1
        time.sleep(0.25)
    check(tries > 0 and not slow, f"down: {tries} more calls to its games over {time.time() - t_kill:.1f}s "
          "all UNAVAILABLE promptly", str(slow[:5]))
    check(sum(len(g.moves) for g in survivors) == n0 + made and made > 0,
          f"down: {made} moves played in the {len(survivors)} games of the other instances, via both gateways")
    check(all(verify_game(g, "while down") for g in survivors), "down: the other instances' games are consistent")
    unavail1 = [ec.metric(m, "gateway_downstream_unavailable_total") or 0 for m in GW_METRICS]
    check(all(b > a for a, b in zip(unavail0, unavail1)), "down: both gateways counted downstream UNAVAILABLE "
          f"(gateway_downstream_unavailable_total +{[b - a for a, b in zip(unavail0, unavail1)]})")
    down_s = time.time() - t_kill

    # Phase 3: restart it (scripts/stack.sh start restarts what is down).
    t0 = time.time()
    r = subprocess.run([STACK_SH, "start"], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and f"started game-svc-{VICTIM}" in (r.stdout + r.stderr),
          f"stack.sh start restarted game-svc-{VICTIM} (down {down_s:.1f}s)", (r.stdout + r.stderr)[-2000:])
    misses0 = game_metric(VICTIM, "game_cache_misses_total")
    # The gateways reconnect with backoff; wait (bounded) until both reach it.
    back = {}
    deadline = time.time() + RECOVER_S
    g0 = victims[0]
    for gw in (0, 1):
        while time.time() < deadline:
            try:
                g0.players[0].call("GetState", gw=gw, game_id=g0.id, timeout=5)
                back[gw] = time.time() - t0
                break
            except CallError as e:
                if e.code != OK.UNAVAILABLE:
                    raise
                time.sleep(0.2)
    check(len(back) == 2, f"both gateways reach the restarted instance within {RECOVER_S}s "
          f"({', '.join(f'gw{k} {v:.1f}s' for k, v in sorted(back.items()))} after the restart began)")

    for g in victims:
        check(len(g.moves) == seq_before[g.id], f"after restart: nothing was acknowledged for game {g.id} while down")
        check(verify_game(g, "after restart", racks_before=before[g.id]),
              f"after restart: game {g.id} seq={len(g.moves)}, history == the {len(g.moves)} acknowledged moves, "
              f"racks and scores unchanged, via both gateways")
    # A retry of each game's last acknowledged turn (a client that lost the
    # reply) returns the original move and applies nothing, though the
    # instance that acknowledged it is gone.
    for g in victims:
        m = g.moves[-1]
        p = g.player_of(m.account_id)
        if m.kind == ET.MOVE_KIND_PLAY:
            r = p.call("SubmitPlay", game_id=g.id, expected_seq=m.seq - 1, placements=list(m.placements))
        elif m.kind == ET.MOVE_KIND_EXCHANGE:
            r = p.call("Exchange", game_id=g.id, expected_seq=m.seq - 1, tiles=m.exchanged_tiles)
        else:
            r = p.call("Pass", game_id=g.id, expected_seq=m.seq - 1)
        st = p.call("GetState", game_id=g.id)
        check(move_key(r.move) == move_key(m) and st.seq == m.seq,
              f"after restart: retrying game {g.id}'s last turn (seq {m.seq}, {m.notation}) returns it, applies nothing",
              f"got {move_key(r.move)}, seq now {st.seq}")
    misses1 = game_metric(VICTIM, "game_cache_misses_total")
    check(misses1 is not None and misses0 is not None and misses1 - misses0 >= len(victims),
          f"game-svc-{VICTIM} reloaded its {len(victims)} games from store-svc (cache misses {misses0}->{misses1})")

    # Phase 4: every game to its end, through both gateways.
    turns = 0
    while any(not g.finished for g in games) and turns < MAX_TURNS * len(games):
        turns += play_round(games, 1)
    check(all(g.finished for g in games), f"all {len(games)} games played to the end ({turns} more turns)")
    check(all(verify_game(g, "at the end") for g in games),
          "at the end: every game's history == its acknowledged moves, via both gateways")
    check_events(games, "at the end")
    for g in games:
        st = g.players[0].call("GetState", game_id=g.id)
        note(f"game {g.id} (game-svc-{g.owner}): {len(g.moves)} moves, "
             f"end_reason={ET.EndReason.Name(st.end_reason)}, scores={[s.score for s in st.seats]}")
    note(f"calls per gateway: {calls_per_gw}")


if __name__ == "__main__":
    t0 = time.time()
    try:
        main()
    except Exception:
        traceback.print_exc()
        check(False, "the scenario ran to completion")
    note(f"{time.time() - t0:.1f}s")
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)

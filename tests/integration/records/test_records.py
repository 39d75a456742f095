#!/usr/bin/python3
"""Ratings, game records, rules and chat echo through the public API
(scrabble.v1.Edge on the real gateway), and concurrent rated finishes in
Postgres. Run by test_records.sh, which passes in the environment:
GATEWAY_PORT, GATEWAY_METRICS_PORT, PG_CONNINFO, SOLVER, LEXICON.

No fixed sleeps: every wait is a bounded poll for a state (an event, a
backend waiting on a lock, a process exiting).
"""
import os
import subprocess
import sys
import time

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import Edge, common_pb2, expect_error, poll  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
PG = os.environ["PG_CONNINFO"]
SOLVER, LEXICON = os.environ["SOLVER"], os.environ["LEXICON"]
ET = common_pb2
S = grpc.StatusCode


# ---- helpers ----------------------------------------------------------------

def new_player(prefix):
    return ec.new_player(TARGET, prefix)


def open_subs(*edges):
    base = ec.metric(MPORT, "gateway_subscribers") or 0
    subs = [e.subscribe() for e in edges]
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= base + len(edges))
    return subs


def start_game(a, others, rated=False):
    inv = a.call("Invite", invitee_handles=[o.handle for o in others], rated=rated)
    assert inv.rated == rated, inv
    r = None
    for o in others:
        r = o.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == ET.INVITATION_STATUS_STARTED and r.game_id > 0, r
    assert r.rated == rated, r
    return r.game_id


def psql(sql):
    p = subprocess.run(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def play_out(players, game_id):
    """Plays the game to its end (edge_client.play_out: the solver's best
    play, else an exchange, else a pass). players: Edge by seat."""
    return ec.play_out(players, game_id, SOLVER, LEXICON)


def rack_value(rack, values):
    return sum(values[c] for c in rack)


def ratings_of(e, lexicon="wamerican", family="untimed"):
    for r in e.call("GetStats").ratings:
        if r.lexicon == lexicon and r.family == family:
            return r
    return None


# ---- GetRules ----------------------------------------------------------------

def test_rules():
    a = new_player("ru")
    r = a.call("GetRules")
    assert r.lexicon == "wamerican" and r.default_lexicon == "wamerican", r
    assert "wamerican" in r.lexicons, r.lexicons
    assert r.board_size == 15 and len(r.premiums) == 15 and all(len(x) == 15 for x in r.premiums)
    assert r.premiums[7][7] == "D" and r.premiums[0][0] == "T" and r.premiums[0][3] == "d"
    assert r.premiums[1][5] == "t" and r.premiums[1][1] == "D"
    assert [row[::-1] for row in r.premiums] == list(r.premiums), "layout is symmetric"
    counts = {t.letter: (t.count, t.value) for t in r.tiles}
    assert len(counts) == 27 and counts["?"] == (2, 0) and counts["E"] == (12, 1)
    assert counts["Q"] == (1, 10) and counts["Z"] == (1, 10)
    assert sum(c for c, _ in counts.values()) == 100 == r.tile_count
    assert r.rack_size == 7 and r.bingo_bonus == 50 and r.exchange_min_bag == 7
    assert r.scoreless_turns_limit == 6 and (r.min_seats, r.max_seats) == (2, 4)
    assert len(r.end_rules) >= 3 and any("resign" in x for x in r.end_rules)
    assert a.call("GetRules", lexicon="wamerican").lexicon == "wamerican"
    expect_error(S.NOT_FOUND, "unknown_lexicon", a.call, "GetRules", lexicon="klingon")
    expect_error(S.UNAUTHENTICATED, "unauthenticated", a.call, "GetRules", metadata=[])
    print("ok: GetRules: layout, 100 tiles with values, rack, end rules, lexicons; unknown lexicon refused")


# ---- GetGameRecord, GAME_OVER final racks --------------------------------------

def check_gcg_totals(gcg, seats):
    """The GCG read back twice: the solver's own reader replays it and
    prints each player's last total; independently, re-adding each line's
    points must give its printed total. Both must end at the final scores."""
    back = subprocess.run([SOLVER, "gcg", "--lexicon", LEXICON, "-"], input=gcg, check=True,
                          capture_output=True, text=True).stdout.splitlines()
    read = [int(l.split()[-1]) for l in back if l.startswith("player ")]
    final = [s.score for s in seats]
    assert read == final, f"solver reader: {read}, final {final}\n{gcg}"
    nicks = [l.split()[1] for l in gcg.splitlines() if l.startswith("#player")]
    running = dict.fromkeys(nicks, 0)
    for line in gcg.splitlines():
        if line.startswith(">"):
            nick, rest = line[1:].split(":", 1)
            tok = rest.split()
            running[nick] += int(tok[-2])
            assert running[nick] == int(tok[-1]), f"{line!r}: re-added {running[nick]}"
    assert [running[n] for n in nicks] == final, (running, final)


def test_record_and_game_over():
    a, b, c = new_player("rec"), new_player("rec"), new_player("out")
    sa, sb = open_subs(a, b)
    gid = start_game(a, [b])
    # Not over yet: the record would show racks.
    expect_error(S.FAILED_PRECONDITION, "game_in_progress", a.call, "GetGameRecord", game_id=gid)
    expect_error(S.PERMISSION_DENIED, "not_a_player", c.call, "GetGameRecord", game_id=gid)
    expect_error(S.NOT_FOUND, "not_found", a.call, "GetGameRecord", game_id=10 ** 12)
    st = play_out([a, b], gid)
    ev = sa.next(want=ET.EVENT_TYPE_GAME_OVER, timeout=60)
    evb = sb.next(want=ET.EVENT_TYPE_GAME_OVER, timeout=60)
    assert list(ev.seats) == list(evb.seats)
    values = {t.letter: t.value for t in a.call("GetRules").tiles}
    # Every seat's final rack and adjustment, as the end rule says.
    racks = [s.final_rack for s in ev.seats]
    adj = [s.rack_adjustment for s in ev.seats]
    if ev.end_reason == ET.END_REASON_OUT:
        out = [i for i, r in enumerate(racks) if r == ""]
        assert len(out) == 1, racks
        o = out[0]
        for i, r in enumerate(racks):
            if i != o:
                assert adj[i] == -rack_value(r, values), (i, r, adj)
        assert adj[o] == sum(rack_value(r, values) for r in racks), (racks, adj)
    else:
        assert ev.end_reason == ET.END_REASON_SCORELESS, ev
        assert adj == [-rack_value(r, values) for r in racks], (racks, adj)
    assert [s.final_rack for s in st.seats] == racks or \
        [s.final_rack for s in a.call("GetState", game_id=gid).seats] == racks
    rec = a.call("GetGameRecord", game_id=gid)
    assert rec.game_id == gid and rec.lexicon == "wamerican" and not rec.rated
    assert [s.score for s in rec.seats] == [s.score for s in ev.seats]
    assert [s.final_rack for s in rec.seats] == racks
    assert len(rec.moves) == len(rec.racks) == a.call("GetState", game_id=gid).seq
    assert rec.moves[0].seq == 1 and len(rec.racks[0]) == 7
    assert rec.gcg.startswith("#character-encoding UTF-8\n"), rec.gcg[:80]
    assert f"#player1 {a.handle} {a.handle}\n" in rec.gcg
    check_gcg_totals(rec.gcg, rec.seats)
    # The other player reads the same record; a non-player still cannot.
    assert b.call("GetGameRecord", game_id=gid).gcg == rec.gcg
    expect_error(S.PERMISSION_DENIED, "not_a_player", c.call, "GetGameRecord", game_id=gid)
    for s in (sa, sb):
        s.cancel()
    print(f"ok: GetGameRecord after a {len(rec.moves)}-move game (end {ev.end_reason}): GCG totals "
          f"= final scores {[s.score for s in rec.seats]}, GAME_OVER racks {racks} adj {adj}; "
          "in progress / non-player / unknown refused")


def test_record_three_seats_resign():
    a, b, c = new_player("tri"), new_player("tri"), new_player("tri")
    gid = start_game(a, [b, c])
    st = a.call("GetState", game_id=gid)
    del st.seats[2:]  # CGP carries two scores; the opening play does not need the third
    moves = ec.solver_moves(SOLVER, LEXICON, st, 1)
    a.call("SubmitPlay", game_id=gid, expected_seq=0, placements=moves[0][1])
    b.call("Pass", game_id=gid, expected_seq=1)
    c.call("Exchange", game_id=gid, expected_seq=2, tiles=c.call("GetState", game_id=gid).my_rack[:2])
    a.call("Resign", game_id=gid, expected_seq=3)
    rec = c.call("GetGameRecord", game_id=gid)
    assert rec.end_reason == ET.END_REASON_RESIGN and all(s.rack_adjustment == 0 for s in rec.seats)
    assert "#player3 " in rec.gcg and len(rec.moves) == 4
    assert rec.moves[2].exchanged_tiles != "", "a finished game's record shows exchanges"
    check_gcg_totals(rec.gcg, rec.seats)
    print("ok: a 3-seat game ended by resignation: #player3, exchange shown, totals = scores")


# ---- chat --------------------------------------------------------------------

def test_chat_echo():
    a, b = new_player("chat"), new_player("chat")
    gid = start_game(a, [b])
    a2 = Edge(TARGET, a.token)  # the sender's second device
    sa, sa2, sb = open_subs(a, a2, b)
    m = a.call("SendChat", game_id=gid, text="hello from my phone")
    for s in (sa2, sa, sb):
        ev = s.next(want=ET.EVENT_TYPE_CHAT)
        assert ev.chat.message_id == m.message_id and ev.chat.text == "hello from my phone", ev
        assert ev.from_account_id == a.account_id
    for s in (sa, sa2, sb):
        s.cancel()
    print("ok: a chat line reaches the sender's other stream (and its own), and the opponent")


# ---- ratings -----------------------------------------------------------------

def test_ratings():
    a, b, c = new_player("rat"), new_player("rat"), new_player("rat")
    # Unrated game: no rating anywhere.
    g0 = start_game(a, [b])
    b.call("Resign", game_id=g0, expected_seq=0)
    assert ratings_of(a) is None and ratings_of(b) is None
    # A rated game that has not ended changes nothing.
    g1 = start_game(a, [b], rated=True)
    assert a.call("GetState", game_id=g1).rated
    assert ratings_of(a) is None
    b.call("Resign", game_id=g1, expected_seq=0)
    ra, rb = ratings_of(a), ratings_of(b)
    assert ra.rating > 1500 > rb.rating and ra.games == rb.games == 1, (ra, rb)
    assert abs((ra.rating - 1500) + (rb.rating - 1500)) < 1e-6, "equal players: symmetric change"
    assert ra.deviation < 350 and rb.deviation < 350
    st = a.call("GetStats")
    h = st.rating_history
    assert len(h) == 1 and h[0].game_id == g1 and h[0].rating_before == 1500 and h[0].score == 1.0
    assert h[0].rating_after == ra.rating
    prof = b.call("GetProfile", account_id=b.account_id)
    assert len(prof.ratings) == 1 and prof.ratings[0].rating == rb.rating
    # The loser finishing a 3-seat rated game after resigning loses to both.
    g2 = start_game(c, [a, b], rated=True)
    a.call("Resign", game_id=g2, expected_seq=0)
    ra2 = ratings_of(a)
    assert ra2.rating < ra.rating and ra2.games == 2
    assert ratings_of(c).games == 1
    # Leaderboard, paged one row at a time: the pool's players best first.
    seen, tok, rank = [], "", 0
    while True:
        page = a.call("GetLeaderboard", page_size=1, page_token=tok)
        assert page.family == "untimed" and page.lexicon == "wamerican"
        for e in page.entries:
            rank += 1
            assert e.rank == rank, (e.rank, rank)
            seen.append((e.account_id, e.rating.rating))
        tok = page.next_page_token
        if not tok:
            break
    mine = [x for x in seen if x[0] in (a.account_id, b.account_id, c.account_id)]
    assert len(mine) == 3, seen
    assert [r for _, r in seen] == sorted((r for _, r in seen), reverse=True), seen
    full = a.call("GetLeaderboard", page_size=100)
    assert [(e.account_id, e.rating.rating) for e in full.entries] == seen
    expect_error(S.INVALID_ARGUMENT, "bad_family", a.call, "GetLeaderboard", family="blitz")
    expect_error(S.INVALID_ARGUMENT, "bad_page_token", a.call, "GetLeaderboard", page_token="l1.zz")
    expect_error(S.INVALID_ARGUMENT, "bad_request", a.call, "GetLeaderboard", page_size=101)
    assert len(a.call("GetLeaderboard", family="realtime").entries) == 0
    print(f"ok: ratings only for ended rated games ({ra.rating:.2f} / {rb.rating:.2f}), in Stats "
          f"and Profile with history; leaderboard of {len(seen)} paged by 1")


def test_rated_lexicon_not_rated():
    """A pool the family does not rate: the rated Invite is refused and
    creates nothing. (Removing the pool's row is how an operator stops
    rating a lexicon; the server has only one lexicon to test with.)"""
    a, b = new_player("unr"), new_player("unr")
    before = psql("SELECT count(*) FROM invitations")
    psql("DELETE FROM rating_lexicons WHERE family = 'untimed' AND lexicon = 'wamerican'")
    try:
        expect_error(S.FAILED_PRECONDITION, "lexicon_not_rated", a.call, "Invite",
                     invitee_handles=[b.handle], rated=True, request_id="rated-" + a.handle)
        assert psql("SELECT count(*) FROM invitations") == before
        assert psql(f"SELECT count(*) FROM request_ids WHERE account_id = {a.account_id}") == "0"
        assert len(b.call("ListInvitations").invitations) == 0
        # Unrated, the same invitation is fine.
        a.call("Invite", invitee_handles=[b.handle])
    finally:
        psql("INSERT INTO rating_lexicons VALUES ('untimed', 'wamerican') ON CONFLICT DO NOTHING")
    print("ok: a rated Invite in a pool the family does not rate: FAILED_PRECONDITION "
          "lexicon_not_rated, nothing created")


def test_glicko2_worked_example():
    """Glickman's worked example ("Example of the Glicko-2 system"): a
    player rated 1500 / 200 / 0.06 beats 1400/30, loses to 1550/100 and
    1700/300 -> 1464.06 / 151.52 / 0.05999. The paper rounds its
    intermediate steps; exact arithmetic gives 1464.0507 / 151.5165, within
    0.01 of the published figures."""
    r, rd, vol = psql("SELECT o_rating, o_rd, o_vol FROM ratings_glicko2(1500, 200, 0.06, "
                      "'{1400,1550,1700}', '{30,100,300}', '{1,0,0}')").split("|")
    r, rd, vol = float(r), float(rd), float(vol)
    assert abs(r - 1464.06) < 0.01, r
    assert abs(rd - 151.52) < 0.01, rd
    assert abs(vol - 0.05999) < 0.00001, vol
    print(f"ok: Glicko-2 worked example: {r:.2f} / {rd:.2f} / {vol:.5f}")


def test_concurrent_finishes():
    """K rated games of one player A finish at once, each in its own
    Postgres transaction (FinishGame's function, as an operator's finish
    runs it): the first holds its transaction open while the others block
    on A's rating row; then all commit. No update may be lost: A played K
    more games, and its history is one chain from 1500 to its rating (a
    lost update shows as two games rated from the same rating: the check
    fails when the FOR UPDATE in ratings_apply_game is removed)."""
    k = 6
    a = new_player("conc")
    # A's rating row exists (committed) before the race, so the finishes
    # meet on that row's lock rather than on its first insertion.
    o0 = new_player("conc")
    o0.call("Resign", game_id=start_game(a, [o0], rated=True), expected_seq=0)
    opp = [new_player("conc") for _ in range(k)]
    games = [start_game(a, [o], rated=True) for o in opp]
    fin = lambda g, w: (f"SELECT o_code FROM store_finish_game({g}, 3::smallint, "
                        f"'{{0,0}}'::int[], '{{{w}}}'::int[])")
    # The first finish takes the locks and waits for stdin before committing.
    first = subprocess.Popen(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first.stdin.write("BEGIN;\n" + fin(games[0], 0) + ";\nSELECT 'held';\n")
    first.stdin.flush()
    assert first.stdout.readline().strip() == "ok"
    assert first.stdout.readline().strip() == "held"
    rest = [subprocess.Popen(["psql", PG, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c",
                              fin(g, i % 2)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for i, g in enumerate(games[1:])]
    waiting = lambda: int(psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                               "AND query LIKE '%store_finish_game%'"))
    poll(f"{k - 1} finishes waiting on a lock", lambda: waiting() >= k - 1, timeout=60)
    first.stdin.write("COMMIT;\n")
    first.stdin.close()
    assert first.wait(60) == 0, first.stderr.read()
    for p in rest:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "ok", (out, err)
    rows = psql(f"SELECT rating_before, rating_after FROM rating_history WHERE account_id = "
                f"{a.account_id}").splitlines()
    assert len(rows) == k + 1, rows
    cur, chain = 1500.0, {}
    for line in rows:
        before, after = map(float, line.split("|"))
        assert before not in chain, f"two games rated from the same rating {before}: a lost update"
        chain[before] = after
    for _ in range(k + 1):
        cur = chain.pop(cur)
    ra = ratings_of(a)
    assert ra.games == k + 1 and abs(ra.rating - cur) < 1e-9, (ra, cur)
    for o in opp:
        assert ratings_of(o).games == 1
    # A finished game finished again: refused, nothing re-rated.
    assert psql(fin(games[0], 0)) == "game_over"
    assert len(psql(f"SELECT 1 FROM rating_history WHERE account_id = {a.account_id}").split()) == k + 1
    print(f"ok: {k} concurrent rated finishes of one player, {k - 1} waited on its rating row: "
          f"{k + 1} games, one unbroken chain 1500 -> {ra.rating:.2f}")


TESTS = [test_glicko2_worked_example, test_rules, test_chat_echo, test_record_and_game_over,
         test_record_three_seats_resign, test_ratings, test_rated_lexicon_not_rated,
         test_concurrent_finishes]


if __name__ == "__main__":
    ec.run_tests(TESTS)

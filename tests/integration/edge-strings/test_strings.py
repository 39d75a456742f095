#!/usr/bin/python3
"""The string gate and validate-before-create, through scrabble.v1.Edge.

Run by test_strings.sh, which starts Postgres, Redis, store-svc, two
game-svc instances and the gateway on free ports and passes GATEWAY_PORT
and PG_PORT in the environment.

Every check names the status and the `scrabble-reason` it wants, and each
test ends (most cases after every bad call) with a well-behaved call that
must still be served.
"""
import os
import subprocess
import sys
import time
import traceback
import uuid

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
from edge_client import Edge, common_pb2, edge_pb2, expect_error  # noqa: E402
from google.protobuf import descriptor as pbd  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
PG_PORT = os.environ["PG_PORT"]
OK = grpc.StatusCode
PASSWORD = "correct horse battery"


def psql(sql):
    r = subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", PG_PORT, "-U", "scrabble", "-d",
                        "scrabble", "-Atqc", sql], check=True, capture_output=True, text=True)
    return r.stdout.strip()


def new_player(prefix="p"):
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(TARGET)
    r = e.call("Register", handle=handle, password=PASSWORD)
    e.token, e.account_id, e.handle = r.token, r.account_id, handle
    return e


def still_served(e):
    """A well-behaved call right after the bad ones."""
    p = e.call("GetProfile")
    assert p.account_id == e.account_id, p


def start_game(a, b, lexicon=""):
    inv = a.call("Invite", invitee_handles=[b.handle], lexicon=lexicon)
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    assert r.status == common_pb2.INVITATION_STATUS_STARTED and r.game_id > 0, r
    return r.game_id


# ---- wire encoding by hand: python-protobuf refuses to serialize invalid
# UTF-8 into a string field, and these tests must send exactly that. ----

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def ld(number, payload):
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def string_paths(desc, prefix=(), depth=0):
    """Every string field reachable from a message type: a list of field
    descriptor chains (the last one is the string)."""
    out = []
    for f in desc.fields:
        if f.type == pbd.FieldDescriptor.TYPE_STRING:
            out.append(prefix + (f,))
        elif f.type == pbd.FieldDescriptor.TYPE_MESSAGE and depth < 4:
            out.extend(string_paths(f.message_type, prefix + (f,), depth + 1))
    return out


def encode_path(chain, value):
    body = ld(chain[-1].number, value)
    for f in reversed(chain[:-1]):
        body = ld(f.number, body)
    return body


def wire_path(chain):
    """The path the gate reports: repeated fields carry their index (here
    always the first element)."""
    return ".".join(f.name + ("[0]" if f.label == pbd.FieldDescriptor.LABEL_REPEATED else "")
                    for f in chain)


INT_TYPES = (pbd.FieldDescriptor.TYPE_INT64, pbd.FieldDescriptor.TYPE_INT32,
             pbd.FieldDescriptor.TYPE_BOOL, pbd.FieldDescriptor.TYPE_ENUM)


BAD_VALUES = [
    # (what, bytes, reason)
    ("NUL", b"alice\x00anything", "bad_text"),
    ("ESC", b"red\x1b[31m", "bad_text"),
    ("newline", b"line\nforged: hi", "bad_text"),
    ("C1 NEL", b"a\xc2\x85b", "bad_text"),
    ("invalid UTF-8", b"caf\xe9", "bad_utf8"),
    ("overlong", b"\xc0\xaf", "bad_utf8"),
    ("surrogate", b"\xed\xa0\x80", "bad_utf8"),
    ("truncated", b"ab\xe2\x82", "bad_utf8"),
]


def test_every_string_field():
    """NUL, control characters and invalid UTF-8 in every string field of
    every Edge request (cases generated from the descriptors)."""
    e = new_player("gate")
    svc = edge_pb2.DESCRIPTOR.services_by_name["Edge"]
    cases = 0
    for m in svc.methods:
        if m.server_streaming:
            continue
        for chain in string_paths(m.input_type):
            for what, value, reason in BAD_VALUES:
                md = [] if m.name in ("Register", "Login") else None
                # A well-formed number field first when the message has one
                # (game_id = 1): the gate walks every field, not just the first.
                f1 = m.input_type.fields_by_number.get(1)
                body = varint(1 << 3 | 0) + varint(1) if f1 and f1.type in INT_TYPES else b""
                body += encode_path(chain, value)
                err = expect_error(OK.INVALID_ARGUMENT, reason, e.raw, m.name, body, metadata=md)
                assert wire_path(chain) in err.details, (m.name, what, err.details)
                cases += 1
        still_served(e)
    # Login as someone else by a NUL: refused before any lookup.
    victim = new_player("victim")
    body = ld(1, victim.handle.encode() + b"\x00anything") + ld(2, PASSWORD.encode())
    expect_error(OK.INVALID_ARGUMENT, "bad_text", Edge(TARGET).raw, "Login", body, metadata=[])
    # The same strings, well-formed, still work.
    r = Edge(TARGET).call("Login", metadata=[], handle=victim.handle, password=PASSWORD)
    assert r.account_id == victim.account_id
    print(f"  {cases} bad-string cases over {len(svc.methods)} methods")


def test_gate_after_auth():
    """No token: UNAUTHENTICATED, whatever bad string the body holds."""
    body = ld(2, b"hi\x00there")
    expect_error(OK.UNAUTHENTICATED, "unauthenticated", Edge(TARGET).raw, "SendChat", body,
                 metadata=[])


def test_lookalike_handles():
    base = f"alice{uuid.uuid4().hex[:6]}"
    a = Edge(TARGET)
    r = a.call("Register", handle=base, password=PASSWORD)
    a.token, a.account_id, a.handle = r.token, r.account_id, base
    fresh = Edge(TARGET)
    # One handle, however it is cased or written.
    for variant in (base.upper(), base.capitalize(),
                    "".join(chr(ord(c) - 0x20 + 0xFF00) if c.isalpha() else c for c in base)):
        expect_error(OK.ALREADY_EXISTS, "handle_taken", fresh.call, "Register", metadata=[],
                     handle=variant, password=PASSWORD)
    # Invisible, bidi and format characters; a Cyrillic look-alike letter.
    bad = {
        "U+202E": base[:3] + "\u202e" + base[3:],
        "U+2060": base[:3] + "\u2060" + base[3:],
        "U+FEFF": "\ufeff" + base,
        "U+200D": base[:2] + "\u200d" + base[2:],
        "Cyrillic a": base.replace("a", "\u0430", 1),
        "Greek omicron": "g\u03bfogle" + base[5:],
    }
    for what, h in bad.items():
        expect_error(OK.INVALID_ARGUMENT, "bad_handle", fresh.call, "Register", metadata=[],
                     handle=h, password=PASSWORD)
    # Login, profiles and invitations find the account by its folded form.
    r = fresh.call("Login", metadata=[], handle=base.upper(), password=PASSWORD)
    assert r.account_id == a.account_id and r.handle == base, r
    p = a.call("GetProfile", handle=base.upper())
    assert p.account_id == a.account_id, p
    b = new_player("bob")
    inv = b.call("Invite", invitee_handles=[base.upper()])
    assert [s.account_id for s in inv.seats][1] == a.account_id, inv
    # A handle in another single script is fine, and stored in NFKC form.
    greek = "\u0399\u03c9\u03ac\u03bd" + str(uuid.uuid4().int % 10**6)
    g = Edge(TARGET).call("Register", metadata=[], handle=greek, password=PASSWORD)
    assert g.account_id > 0
    still_served(a)


def test_legacy_accounts():
    """Accounts made before folding keep logging in, collisions included."""
    a = new_player("legacy")
    pw = psql(f"SELECT pw_hash FROM accounts WHERE id = {a.account_id}")
    # A fullwidth twin of a's handle, inserted as the old code would have
    # (the trigger folds ASCII only, so it arrives unfolded), and a
    # mixed-script handle the new rules refuse.
    twin = "".join(chr(ord(c) - 0x20 + 0xFF00) if c.isalpha() else c for c in a.handle)
    mixed = "p\u0430ypal" + uuid.uuid4().hex[:4]
    for h in (twin, mixed):
        psql(f"INSERT INTO accounts (handle, pw_hash) VALUES ('{h}', '{pw}')")
    assert psql(f"SELECT count(*) FROM accounts WHERE handle = '{twin}' AND handle_folded IS NULL") == "1"
    for h in (twin, mixed):
        r = Edge(TARGET).call("Login", metadata=[], handle=h, password=PASSWORD)
        assert r.handle == h and r.account_id != a.account_id, r
    # The folded form still belongs to the older account.
    r = Edge(TARGET).call("Login", metadata=[], handle=a.handle.upper(), password=PASSWORD)
    assert r.account_id == a.account_id, r


def test_unknown_lexicon():
    a, b = new_player("lex"), new_player("lex")
    for name in ("nosuchlexicon", "../etc/passwd", "WAMERICAN"):
        expect_error(OK.NOT_FOUND, "unknown_lexicon", a.call, "Invite",
                     invitee_handles=[b.handle], lexicon=name)
    assert psql(f"SELECT count(*) FROM invitations WHERE inviter_id = {a.account_id}") == "0"
    # A known lexicon, named or by default, still starts a game.
    assert start_game(a, b, lexicon="wamerican") > 0
    assert start_game(a, b) > 0


def test_list_chat_limits():
    a, b = new_player("chat"), new_player("chat")
    gid = start_game(a, b)
    a.call("SendChat", game_id=gid, text="hello")
    for limit in (-1, 201, 2**31 - 1, -2**31):
        expect_error(OK.INVALID_ARGUMENT, "bad_request", a.call, "ListChat", game_id=gid,
                     limit=limit)
    for limit in (0, 1, 200):
        assert len(a.call("ListChat", game_id=gid, limit=limit).messages) == 1


def test_draft_squares():
    a, b = new_player("draft"), new_player("draft")
    gid = start_game(a, b)
    P = common_pb2.Placement
    cases = [
        ([P(row=15, col=7, letter="A")], "off_board"),
        ([P(row=-1, col=7, letter="A")], "off_board"),
        ([P(row=7, col=99, letter="A")], "off_board"),
        ([P(row=7, col=-2147483648, letter="A")], "off_board"),
        ([P(row=7, col=7, letter="AB")], "bad_letter"),
        ([P(row=7, col=7, letter="")], "bad_letter"),
        ([P(row=7, col=7, letter="1")], "bad_letter"),
        ([P(row=7, col=7, letter="A"), P(row=7, col=7, letter="B")], "duplicate_square"),
    ]
    for placements, reason in cases:
        expect_error(OK.INVALID_ARGUMENT, reason, a.call, "SaveDraft", game_id=gid,
                     placements=placements)
        # Evaluate says the same about the same squares.
        ev = a.call("Evaluate", game_id=gid, placements=placements)
        assert not ev.legal and ev.reason == reason, (reason, ev)
    good = [P(row=7, col=7, letter="C"), P(row=7, col=8, letter="a", blank=True)]
    a.call("SaveDraft", game_id=gid, placements=good, rack_order="CAT")
    d = a.call("GetDraft", game_id=gid)
    assert [(p.row, p.col) for p in d.placements] == [(7, 7), (7, 8)], d


def test_pre_broken_game():
    """A game whose lexicon no game-svc has (made before Invite checked it)
    answers FAILED_PRECONDITION lexicon_unavailable, not INTERNAL."""
    a, b = new_player("broken"), new_player("broken")
    inv = a.call("Invite", invitee_handles=[b.handle])
    # What the old Invite let through, written straight into Postgres.
    psql(f"UPDATE invitations SET lexicon = 'gonelexicon' WHERE id = {inv.invitation_id}")
    expect_error(OK.FAILED_PRECONDITION, "lexicon_unavailable", b.call, "RespondInvitation",
                 invitation_id=inv.invitation_id, accept=True)
    gid = int(psql(f"SELECT id FROM games WHERE invitation_id = {inv.invitation_id}"))
    for method, kw in (("GetState", {}), ("GetHistory", {}), ("Pass", {"expected_seq": 0}),
                       ("SendChat", {"text": "hi"}), ("ListChat", {}),
                       ("Evaluate", {"placements": [common_pb2.Placement(row=7, col=7, letter="A")]})):
        for who in (a, b):
            expect_error(OK.FAILED_PRECONDITION, "lexicon_unavailable", who.call, method,
                         game_id=gid, **kw)
    # Its players' other games are unaffected.
    gid2 = start_game(a, b)
    st = a.call("GetState", game_id=gid2)
    assert st.game_id == gid2 and st.lexicon == "wamerican", st


def main():
    only = sys.argv[1:]
    failures = 0
    plan = [
        ("every_string_field", test_every_string_field),
        ("gate_after_auth", test_gate_after_auth),
        ("lookalike_handles", test_lookalike_handles),
        ("legacy_accounts", test_legacy_accounts),
        ("unknown_lexicon", test_unknown_lexicon),
        ("list_chat_limits", test_list_chat_limits),
        ("draft_squares", test_draft_squares),
        ("pre_broken_game", test_pre_broken_game),
    ]
    for name, fn in plan:
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
            print(f"PASS {name} ({time.time() - t0:.1f}s)", flush=True)
        except Exception:
            failures += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

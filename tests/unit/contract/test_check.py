#!/usr/bin/python3
"""Tests of the contract checker (proto/contract/check.py) with real protoc
runs: each case edits a temp copy of the public contract (edge.proto,
common.proto) in one deliberate way, compiles it, and runs the checker
against the unedited copy. Every breaking edit must exit 1 and name the
break; every additive edit must exit 0. The reason-table rules are tested
the same way on edited copies of proto/scrabble/v1/reasons.txt.

Usage: test_check.py [CASE-NAME...]   (default: every case)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CHECK = os.path.join(REPO, "proto", "contract", "check.py")
PY = "/usr/bin/python3"
PROTOS = ("scrabble/v1/edge.proto", "scrabble/v1/common.proto")

# The pristine copy gets reserved numbers and names (the real contract has
# none yet) so that the reserved rules have something to hold.
SETUP = [
    ("edge", "message GetStatsRequest {\n",
     "message GetStatsRequest {\n  reserved 9, 20 to 22;\n  reserved \"legacy\";\n"),
    ("common", "  MOVE_KIND_UNSPECIFIED = 0;\n",
     "  MOVE_KIND_UNSPECIFIED = 0;\n  reserved 40;\n  reserved \"MOVE_KIND_CHALLENGE\";\n"),
]

# (name, [(file, old, new)...], [expected substrings of the output]):
# exit 1 when expected is non-empty, exit 0 when it is empty (additive).
CASES = [
    ("field_removed", [("edge", "  // 1..1024 bytes.\n  string password = 2;\n", "")],
     ["field scrabble.v1.RegisterRequest.password: removed (number 2)"]),
    ("field_renumbered", [("common", "string letter = 3;", "string letter = 7;")],
     ["field scrabble.v1.Placement.letter: renumbered from 3 to 7"]),
    ("field_renamed", [("common", "int32 row = 1;", "int32 line = 1;")],
     ["field scrabble.v1.Placement.row: renamed to line (number 1)"]),
    ("field_json_name", [("common", "int32 col = 2;", "int32 col = 2 [json_name = \"column\"];")],
     ["field scrabble.v1.Placement.col: JSON name changed from col to column"]),
    ("field_type_scalar", [("common", "int32 bag_count = 7;", "int64 bag_count = 7;")],
     ["field scrabble.v1.GameState.bag_count: type changed from int32 to int64"]),
    ("field_type_message", [("edge", "  Move move = 1;\n  // The game after", "  Seat move = 1;\n  // The game after")],
     ["field scrabble.v1.TurnReply.move: type changed from scrabble.v1.Move to scrabble.v1.Seat"]),
    ("field_label_repeated", [("edge", "  repeated string words = 5;\n  string notation = 6;",
                               "  string words = 5;\n  string notation = 6;")],
     ["field scrabble.v1.EvaluateReply.words: label changed from repeated to singular"]),
    ("field_label_proto3_optional", [("edge", "int32 page_size = 2;", "optional int32 page_size = 2;")],
     ["field scrabble.v1.ListGamesRequest.page_size: label changed from singular to optional"]),
    ("field_into_oneof", [("edge", "  string rack_order = 3;\n}\n\nmessage CheckWordRequest",
                           "  oneof order {\n    string rack_order = 3;\n  }\n}\n\nmessage CheckWordRequest")],
     ["field scrabble.v1.SaveDraftRequest.rack_order: moved into oneof order"]),
    ("message_removed", [("edge", "rpc Nudge(GameRef) returns (NudgeReply);", "rpc Nudge(GameRef) returns (GameRef);"),
                         ("edge", "message NudgeReply {\n  // Account nudged.\n  int64 account_id = 1;\n}\n", "")],
     ["message scrabble.v1.NudgeReply: removed",
      "method scrabble.v1.Edge.Nudge: reply type changed from scrabble.v1.NudgeReply to scrabble.v1.GameRef"]),
    ("enum_value_removed", [("common", "  GAME_STATUS_FINISHED = 2;\n", "")],
     ["enum value scrabble.v1.GameStatus.GAME_STATUS_FINISHED: removed (number 2)"]),
    ("enum_value_renumbered", [("common", "END_REASON_RESIGN = 3;", "END_REASON_RESIGN = 9;")],
     ["enum value scrabble.v1.EndReason.END_REASON_RESIGN: renumbered from 3 to 9"]),
    ("enum_value_renamed", [("common", "EVENT_TYPE_NUDGE = 6;", "EVENT_TYPE_POKE = 6;")],
     ["enum value scrabble.v1.EventType.EVENT_TYPE_NUDGE: renamed to EVENT_TYPE_POKE (number 6)"]),
    ("method_removed", [("edge", "  rpc Nudge(GameRef) returns (NudgeReply);\n", "")],
     ["method scrabble.v1.Edge.Nudge: removed"]),
    ("method_request_type", [("edge", "rpc GetDraft(GameRef)", "rpc GetDraft(TurnRequest)")],
     ["method scrabble.v1.Edge.GetDraft: request type changed from scrabble.v1.GameRef to scrabble.v1.TurnRequest"]),
    ("method_server_streaming", [("edge", "Subscribe(SubscribeRequest) returns (stream Event);",
                                  "Subscribe(SubscribeRequest) returns (Event);")],
     ["method scrabble.v1.Edge.Subscribe: server streaming removed"]),
    ("method_client_streaming", [("edge", "rpc SendChat(SendChatRequest)", "rpc SendChat(stream SendChatRequest)")],
     ["method scrabble.v1.Edge.SendChat: client streaming added"]),
    ("service_removed", [("edge", "service Edge {", "service Front {")],
     ["service scrabble.v1.Edge: removed"]),
    ("package_renamed", [("edge", "package scrabble.v1;", "package scrabble.v2;"),
                         ("common", "package scrabble.v1;", "package scrabble.v2;")],
     ["package scrabble.v1: renamed to scrabble.v2"]),
    ("reserved_number_removed", [("edge", "  reserved 9, 20 to 22;\n", "  reserved 9;\n")],
     ["message scrabble.v1.GetStatsRequest: reserved number(s) 20 to 22 no longer reserved"]),
    ("reserved_name_removed", [("edge", "  reserved \"legacy\";\n", "")],
     ["message scrabble.v1.GetStatsRequest: reserved name \"legacy\" no longer reserved"]),
    ("reserved_number_reused", [("edge", "  reserved 9, 20 to 22;\n", "  reserved 20 to 22;\n  string extra = 9;\n")],
     ["message scrabble.v1.GetStatsRequest: field extra reuses reserved number 9"]),
    ("reserved_name_reused", [("edge", "  reserved \"legacy\";\n", "  string legacy = 10;\n")],
     ["message scrabble.v1.GetStatsRequest: field legacy reuses reserved name \"legacy\""]),
    ("enum_reserved_number_reused", [("common", "  reserved 40;\n", "  MOVE_KIND_BONUS = 40;\n")],
     ["enum scrabble.v1.MoveKind: reserved number(s) 40 no longer reserved",
      "enum scrabble.v1.MoveKind: value MOVE_KIND_BONUS reuses reserved number 40"]),
    ("enum_reserved_name_reused", [("common", "  reserved \"MOVE_KIND_CHALLENGE\";\n",
                                    "  MOVE_KIND_CHALLENGE = 41;\n")],
     ["enum scrabble.v1.MoveKind: reserved name \"MOVE_KIND_CHALLENGE\" no longer reserved",
      "enum scrabble.v1.MoveKind: value MOVE_KIND_CHALLENGE reuses reserved name \"MOVE_KIND_CHALLENGE\""]),
    # Additive: each must pass.
    ("additive", [
        ("edge", "  rpc Subscribe(SubscribeRequest) returns (stream Event);\n",
         "  rpc Subscribe(SubscribeRequest) returns (stream Event);\n"
         "  rpc GetClock(GameRef) returns (Clock);\n"),
        ("edge", "  string after_event_id = 1;\n}",
         "  string after_event_id = 1;\n  int32 limit = 2;\n}\n\nmessage Clock {\n  int64 left_ms = 1;\n}"),
        ("common", "  EVENT_TYPE_INVITATION_CANCELLED = 10;\n",
         "  EVENT_TYPE_INVITATION_CANCELLED = 10;\n  EVENT_TYPE_CLOCK = 90;\n"),
        # Anchored on a field, not on the message's end: later fields of
        # Event (seek = 60, ...) follow event_id. 90 and 30-31 stay clear
        # of the numbers the real contract uses.
        ("common", "  string event_id = 14;\n", "  string event_id = 14;\n  optional int64 seen_ms = 30;\n"
         "  oneof detail {\n    string note = 31;\n  }\n  reserved 99;\n"),
        ("edge", "  reserved \"legacy\";\n", "  reserved \"legacy\", \"older\";\n"),
        ("edge", "string rack_order = 3;", "string rack_order = 3 [deprecated = true];"),
    ], []),
    # Comments and layout are not contract.
    ("comments_only", [("edge", "// Opens a session. UNAUTHENTICATED bad_credentials.",
                        "// Opens a session (reworded comment).")], []),
    # An internal message of common.proto that Edge does not reach.
    ("unreached_message", [("common", "message Draft {", "message Scratch {\n  int32 x = 1;\n}\n\nmessage Draft {")],
     []),
]

REASON_BASE = """\
# method            code                 reason
*                   INVALID_ARGUMENT     bad_request
Register            ALREADY_EXISTS       handle_taken
GetState,GetHistory PERMISSION_DENIED    not_a_player
-                   INVALID_ARGUMENT     bad_move        # internal
"""

# (name, edited table, expected substrings; [] = must pass, None = input error)
REASON_CASES = [
    ("reason_removed", REASON_BASE.replace("Register            ALREADY_EXISTS       handle_taken\n", ""),
     ["method scrabble.v1.Edge.Register: reason ALREADY_EXISTS handle_taken removed"]),
    ("reason_renamed", REASON_BASE.replace("handle_taken", "handle_in_use"),
     ["method scrabble.v1.Edge.Register: reason ALREADY_EXISTS handle_taken removed"]),
    ("reason_code_changed", REASON_BASE.replace("ALREADY_EXISTS       handle_taken",
                                                "INVALID_ARGUMENT handle_taken"),
     ["method scrabble.v1.Edge.Register: reason handle_taken now comes with INVALID_ARGUMENT "
      "instead of ALREADY_EXISTS"]),
    ("reason_method_dropped", REASON_BASE.replace("GetState,GetHistory", "GetState"),
     ["method scrabble.v1.Edge.GetHistory: reason PERMISSION_DENIED not_a_player removed"]),
    ("reason_every_method_dropped", REASON_BASE.replace("*                   INVALID_ARGUMENT     bad_request",
                                                        "Register INVALID_ARGUMENT bad_request"),
     ["every method: reason INVALID_ARGUMENT bad_request removed"]),
    ("reason_added", REASON_BASE + "Login UNAUTHENTICATED login_throttled\n", []),
    ("reason_widened_to_every_method", REASON_BASE.replace("Register            ALREADY_EXISTS",
                                                           "*  ALREADY_EXISTS"), []),
    ("reason_internal_removed", REASON_BASE.replace("-                   INVALID_ARGUMENT     bad_move        # internal\n", ""),
     []),
    ("reason_bad_code", REASON_BASE + "Login NOT_A_CODE x\n", None),
    ("reason_bad_token", REASON_BASE + "Login INTERNAL Bad-Token\n", None),
    ("reason_unknown_method", REASON_BASE + "Logon INTERNAL internal\n", None),
    ("reason_repeated_row", REASON_BASE + "Register ALREADY_EXISTS handle_taken\n", None),
]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def edit(root, edits):
    for which, old, new in edits:
        path = os.path.join(root, "scrabble", "v1", which + ".proto")
        with open(path) as f:
            text = f.read()
        if text.count(old) != 1:
            raise AssertionError(f"test bug: {old!r} occurs {text.count(old)} times in {which}.proto")
        with open(path, "w") as f:
            f.write(text.replace(old, new))


def compile_set(root, out, source_info=False):
    cmd = ["protoc", "-I" + root, "--include_imports", "--descriptor_set_out=" + out, "scrabble/v1/edge.proto"]
    if source_info:
        cmd.insert(2, "--include_source_info")
    rc, text = run(cmd)
    if rc != 0:
        raise AssertionError("protoc failed on the edited copy:\n" + "\n".join(text.splitlines()[:3]))


def copy_contract(dst):
    for p in PROTOS:
        os.makedirs(os.path.dirname(os.path.join(dst, p)), exist_ok=True)
        shutil.copy(os.path.join(REPO, "proto", p), os.path.join(dst, p))


def main(argv):
    tmp = tempfile.mkdtemp(prefix="contract-test-")
    failures, ran = [], 0
    try:
        base_root = os.path.join(tmp, "base")
        copy_contract(base_root)
        edit(base_root, SETUP)
        compile_set(base_root, os.path.join(tmp, "base.desc"))
        # The baseline goes through the committed text form, as in the build.
        baseline = os.path.join(tmp, "base.txtpb")
        rc, text = run([PY, CHECK, "write-baseline", "--current", os.path.join(tmp, "base.desc"),
                        "--out", baseline])
        assert rc == 0, text
        rc, text = run([PY, CHECK, "descriptors", "--baseline", baseline,
                        "--current", os.path.join(tmp, "base.desc")])
        assert rc == 0, f"unedited copy does not pass:\n{text}"

        for name, edits, want in CASES:
            if argv and name not in argv:
                continue
            ran += 1
            root = os.path.join(tmp, name)
            shutil.copytree(base_root, root)
            try:
                edit(root, edits)
                desc = os.path.join(tmp, name + ".desc")
                compile_set(root, desc, source_info=True)
                rc, out = run([PY, CHECK, "descriptors", "--baseline", baseline, "--current", desc])
                if want:
                    assert rc == 1, f"want exit 1, got {rc}:\n{out}"
                    for w in want:
                        assert w in out, f"want {w!r} in:\n{out}"
                    # A break names today's file and line when it has one.
                    assert re.search(r"^BREAK scrabble/v1/\w+\.proto(:\d+)?: ", out, re.M), out
                else:
                    assert rc == 0, f"additive edit must pass, got {rc}:\n{out}"
                print(f"ok   {name}")
            except AssertionError as e:
                failures.append(name)
                print(f"FAIL {name}: {e}")

        reasons_base = os.path.join(tmp, "reasons.base.txt")
        with open(reasons_base, "w") as f:
            f.write(REASON_BASE)
        for name, table, want in REASON_CASES:
            if argv and name not in argv:
                continue
            ran += 1
            cur = os.path.join(tmp, name + ".txt")
            with open(cur, "w") as f:
                f.write(table)
            rc, out = run([PY, CHECK, "reasons", "--baseline", reasons_base, "--current", cur,
                           "--descriptors", os.path.join(tmp, "base.desc")])
            try:
                if want is None:
                    assert rc == 2 and cur in out, f"want exit 2 naming the file, got {rc}:\n{out}"
                elif want:
                    assert rc == 1, f"want exit 1, got {rc}:\n{out}"
                    for w in want:
                        assert w in out, f"want {w!r} in:\n{out}"
                else:
                    assert rc == 0, f"want exit 0, got {rc}:\n{out}"
                print(f"ok   {name}")
            except AssertionError as e:
                failures.append(name)
                print(f"FAIL {name}: {e}")
        # `observed`: what a test run met, against the table.
        for name, seen, want_rc, want in [
            ("observed_listed", "Register ALREADY_EXISTS handle_taken\nGetState INVALID_ARGUMENT bad_request\n"
             "NoSuchMethod INVALID_ARGUMENT bad_request\n", 0, "0 not in the table"),
            ("observed_unlisted", "GetState PERMISSION_DENIED not_a_player\nLogin ALREADY_EXISTS handle_taken\n",
             1, "UNLISTED Login ALREADY_EXISTS handle_taken"),
            ("observed_internal_row_is_not_allowed", "GetState INVALID_ARGUMENT bad_move\n", 1,
             "UNLISTED GetState INVALID_ARGUMENT bad_move"),
        ]:
            if argv and name not in argv:
                continue
            ran += 1
            path = os.path.join(tmp, name + ".seen")
            with open(path, "w") as f:
                f.write(seen)
            rc, out = run([PY, CHECK, "observed", "--table", reasons_base, "--seen", path])
            if rc == want_rc and want in out:
                print(f"ok   {name}")
            else:
                failures.append(name)
                print(f"FAIL {name}: want exit {want_rc} and {want!r}, got {rc}:\n{out}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if argv and ran != len(argv):
        print("unknown case name in " + " ".join(argv))
        return 1
    print(f"{ran - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

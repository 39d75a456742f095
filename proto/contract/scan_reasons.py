#!/usr/bin/python3
"""Keeps proto/scrabble/v1/reasons.txt honest: finds every `scrabble-reason`
token the C code on the Edge call paths can produce, and fails when one is
not in the table (so the table cannot rot), or when a reason the table
promises to Edge clients is produced nowhere any more.

    scan_reasons.py [--repo DIR] [--table FILE] [--list]

What counts as producing a reason (exact patterns, so no guessing):
  - a status call with a literal reason: `GRPC_STATUS_X, "tok"` as in
    rpc_call_fail(call, GRPC_STATUS_X, "tok", ...) and rpc_status_set;
  - a table row `{"tok", GRPC_STATUS_X, ...}` (store-svc's SQL result codes);
  - a literal passed as the reason argument of one of the HELPERS below
    (functions that take a reason and set it on a status);
  - a literal returned by one of the VALIDATORS below (functions whose
    return value callers pass on as a reason);
  - an in-body reason `->reason = "tok"` (EvaluateReply.reason);
  - each token of the solver's reason table, both bare (EvaluateReply.reason)
    and as `illegal_play:tok` (the turn methods' scrabble-reason).
A status call whose reason is an expression (not a literal or NULL) must
sit in a function listed in PASSTHROUGH, HELPERS or VALIDATORS: a new kind
of dynamic reason then fails this scan until someone says where its values
come from, instead of escaping it silently.

Sources: gateway/src, game-svc/src, store-svc/src, solver/src/validate.c and
rpc/src except health.c and reflection.c (they serve grpc.health.v1 and
reflection, never Edge methods).
"""
import argparse
import os
import re
import sys

# function -> index (0-based) of its reason argument.
HELPERS = {
    "rules__fail": 2,            # game-svc/src/rules.c: game_rules_error
    "store__bad": 1,             # store-svc/src/games.c
    "store_op_bad": 1,           # store-svc/src/op.c
    "store__op_unavailable": 2,  # store-svc/src/server.c
    "store__fail_unavailable": 2,
    "gw_subs__end": 4,           # gateway/src/subscribe.c
    "gw_watch__end": 3,          # gateway/src/watch.c
}
# Functions returning a reason token (as const char *) that callers pass to
# a helper as `why`.
VALIDATORS = ("store_check_", "store__check_", "rpc_wire_reason")
# Functions that set a status from a reason they did not invent: where the
# value comes from.
PASSTHROUGH = {
    # The runtime's own status API (rpc/src): its callers' reasons are scanned.
    "rpc_call_fail": "rpc runtime API", "rpc_call_finish": "rpc runtime API",
    "rpc_call_fail_status": "rpc runtime API", "rpc_status_set": "rpc runtime API",
    "rpc_status_vset": "rpc runtime API",
    "rpc__vfinish": "rpc runtime API (the body of rpc_call_fail and rpc_call_finish)",
    "gw_subs__end": "gateway/src/subscribe.c: its callers' literals and ReadEvents' "
                    "statuses (events_expired, bad_event_id)",
    "gw_watch__end": "gateway/src/watch.c: its callers' literals and Game.WatchState's "
                     "refusals (private_game, not_found, ...), relayed by gw_watch__fail",
    "gw_watch__fail": "gateway/src/watch.c: Game.WatchState's refusals, relayed",
    "game_turn_run": "game_rules_error.reason, set by rules__fail",
    # game-svc/src/game.c: an op's failure, for its call or an in-process
    # caller; its callers pass literals (scanned after GRPC_STATUS_*) or,
    # from game_turn_run, game_rules_error.reason.
    "game_op_fail": "its callers' literals and game_rules_error.reason (game_turn_run)",
    "store_op_code": "the store__reasons table",
    "rules__fail": "its callers' literals",
    "store__bad": "its callers' literals",
    "store_op_bad": "its callers' literals and the text validators",
    "store__fail_unavailable": "store__op_unavailable's callers' literals",
    # The string gate (rpc/src/wire_check.c): rpc_wire_reason's literals.
    # The stream-abuse guard's refusals (rpc/src/conn_guard.c): its
    # rpc__guard_refusals table rows.
    "rpc__call_arrived": "rpc__guard_refusals (rpc/src/conn_guard.c)",
    "gw_edge__strings_ok": "rpc_wire_reason (the string gate)",
    "gw_request_decode": "the gw_edge__bounds table (gateway/src/edge.c)",
    "store__dispatch": "rpc_wire_reason (the string gate)",
}
# Tokens of the solver's reason table that are never a failure.
SOLVER_NOT_REASONS = {"ok"}

TOKEN = r"[a-z0-9_:.-]{1,63}"
STATUS_CALL = re.compile(r"\b(rpc_call_fail|rpc_call_finish|rpc_status_set|rpc_status_vset)\s*\(")
LITERAL_AFTER_CODE = re.compile(r"GRPC_STATUS_[A-Z_]+\s*,\s*\"(" + TOKEN + r")\"")
TABLE_ROW = re.compile(r"\{\s*\"(" + TOKEN + r")\"\s*,\s*GRPC_STATUS_[A-Z_]+")
BODY_REASON = re.compile(r"->reason\s*=\s*\"(" + TOKEN + r")\"")
SOLVER_ROW = re.compile(r"\[SOLVER_[A-Z_]+\]\s*=\s*\"(" + TOKEN + r")\"")
FUNC_START = re.compile(r"^[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)
# A parameter declaration ("const char *reason"): the match is a prototype
# or a definition, not a call.
DECLARATION = re.compile(r"^(const\s+)?[A-Za-z_]\w*(\s+|\s*\*\s*)[A-Za-z_]\w*$")
RETURN_LITERAL = re.compile(r"\breturn\s+\"(" + TOKEN + r")\"\s*;")


def strip_comments(src):
    """C source with comments blanked (newlines kept for line numbers)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, src, flags=re.S)


def split_args(text, start):
    """Top-level comma-separated arguments of the call whose '(' is at start."""
    depth, args, cur, i, in_str = 0, [], [], start, False
    while i < len(text):
        c = text[i]
        if in_str:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c == "(":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    return args


def enclosing_function(text, pos):
    name = None
    for m in FUNC_START.finditer(text, 0, pos):
        name = m.group(1)
    return name


def sources(repo):
    for d in ("gateway/src", "game-svc/src", "store-svc/src", "rpc/src"):
        full = os.path.join(repo, d)
        for f in sorted(os.listdir(full)):
            if f.endswith(".c") and f not in ("health.c", "reflection.c"):
                yield os.path.join(d, f)


def scan(repo):
    """{reason: [file:line, ...]} and a list of problems."""
    found, problems = {}, []

    def add(tok, where):
        found.setdefault(tok, []).append(where)

    for rel in sources(repo):
        with open(os.path.join(repo, rel)) as f:
            text = strip_comments(f.read())

        def line(pos):
            return f"{rel}:{text.count(chr(10), 0, pos) + 1}"

        for rx in (LITERAL_AFTER_CODE, TABLE_ROW, BODY_REASON):
            for m in rx.finditer(text):
                add(m.group(1), line(m.start()))
        for name, idx in HELPERS.items():
            for m in re.finditer(r"\b" + name + r"\s*\(", text):
                args = split_args(text, m.end() - 1)
                if len(args) <= idx:
                    continue  # the prototype or definition
                lit = re.fullmatch(r"\"(" + TOKEN + r")\"", args[idx])
                if lit:
                    add(lit.group(1), line(m.start()))
        for m in FUNC_START.finditer(text):
            if m.group(1).startswith(VALIDATORS):
                body_end = text.find("\n}", m.end())
                for r in RETURN_LITERAL.finditer(text, m.end(), body_end):
                    add(r.group(1), line(r.start()))
        for m in STATUS_CALL.finditer(text):
            args = split_args(text, m.end() - 1)
            if len(args) < 3 or any(DECLARATION.match(x) for x in args):
                continue
            reason = args[2]
            if reason == "NULL" or re.fullmatch(r"\"" + TOKEN + r"\"", reason):
                continue
            fn = enclosing_function(text, m.start())
            if fn not in PASSTHROUGH and fn not in HELPERS:
                problems.append(f"{line(m.start())}: {m.group(1)} in {fn}() takes its reason from "
                                f"`{reason}`: add {fn} to HELPERS or PASSTHROUGH in "
                                "proto/contract/scan_reasons.py, saying where its values come from")

    with open(os.path.join(repo, "solver/src/validate.c")) as f:
        text = strip_comments(f.read())
    for m in SOLVER_ROW.finditer(text):
        tok = m.group(1)
        if tok in SOLVER_NOT_REASONS:
            continue
        where = f"solver/src/validate.c:{text.count(chr(10), 0, m.start()) + 1}"
        add(tok, where)
        add("illegal_play:" + tok, where)
    return found, problems


def load_table(path):
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check import load_reasons  # noqa: E402
    return load_reasons(path)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.abspath(os.path.join(here, "..", "..")))
    ap.add_argument("--table", default=None, help="default: <repo>/proto/scrabble/v1/reasons.txt")
    ap.add_argument("--list", action="store_true", help="print every reason found and where")
    a = ap.parse_args(argv)
    table_path = a.table or os.path.join(a.repo, "proto", "scrabble", "v1", "reasons.txt")
    found, problems = scan(a.repo)
    if a.list:
        for tok in sorted(found):
            print(f"{tok:32} {' '.join(found[tok][:3])}{' ...' if len(found[tok]) > 3 else ''}")
    rows = load_table(table_path)
    listed = {r for (_, _, r) in rows}
    contract = {r: (m, c, no) for (m, c, r), no in rows.items() if m != "-"}
    for tok in sorted(set(found) - listed):
        problems.append(f"{found[tok][0]}: reason \"{tok}\" is not in {os.path.relpath(table_path, a.repo)}: "
                        "add a row `METHODS CODE " + tok + "` (or `- CODE " + tok + "` when no Edge "
                        "client can see it)")
    for tok in sorted(set(contract) - set(found)):
        m, c, no = contract[tok]
        problems.append(f"{os.path.relpath(table_path, a.repo)}:{no}: reason \"{tok}\" is promised to Edge "
                        "clients but no code produces it any more")
    for p in problems:
        print("REASON " + p)
    if problems:
        print(f"{len(problems)} problem(s) between the code's reasons and the reason table", file=sys.stderr)
        return 1
    print(f"reasons: the code's {len(found)} reason tokens are all in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

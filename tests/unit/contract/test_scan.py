#!/usr/bin/python3
"""Tests of proto/contract/scan_reasons.py on a temp copy of the sources:
the real tree passes; a new literal reason, a new dynamic reason and a
contract reason no code produces any more each fail, naming the place."""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCAN = os.path.join(REPO, "proto", "contract", "scan_reasons.py")
DIRS = ("gateway/src", "game-svc/src", "store-svc/src", "rpc/src", "solver/src", "proto/scrabble/v1")


def copy_tree(dst):
    for d in DIRS:
        shutil.copytree(os.path.join(REPO, d), os.path.join(dst, d))


def scan(root):
    p = subprocess.run(["/usr/bin/python3", SCAN, "--repo", root], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def append(root, rel, text):
    with open(os.path.join(root, rel), "a") as f:
        f.write(text)


def replace(root, rel, old, new):
    path = os.path.join(root, rel)
    with open(path) as f:
        s = f.read()
    assert s.count(old) == 1, f"test bug: {old!r} in {rel}"
    with open(path, "w") as f:
        f.write(s.replace(old, new))


CASES = [
    ("real_tree_passes", lambda r: None, 0, ["reasons: the code's"]),
    ("new_literal_reason", lambda r: append(r, "gateway/src/edge.c", """
static void gw_edge__extra(rpc_call *call)
{
    rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                  "too_many_calls", "slow down");
}
"""), 1, ['gateway/src/edge.c:', 'reason "too_many_calls" is not in proto/scrabble/v1/reasons.txt']),
    ("new_table_reason", lambda r: replace(r, "store-svc/src/op.c",
                                           '{"not_found", GRPC_STATUS_NOT_FOUND, "not found"},',
                                           '{"not_found", GRPC_STATUS_NOT_FOUND, "not found"},\n'
                                           '    {"seek_expired", GRPC_STATUS_FAILED_PRECONDITION, "x"},'),
     1, ['reason "seek_expired" is not in']),
    ("new_helper_reason", lambda r: append(r, "store-svc/src/games.c", """
static store_next store__other(store_op *op)
{
    return store__bad(op, "bad_gizmo", "gizmo is negative");
}
"""), 1, ['reason "bad_gizmo" is not in']),
    ("new_solver_token", lambda r: replace(r, "solver/src/validate.c", '[SOLVER_ERR_GAP] = "gap",',
                                           '[SOLVER_ERR_GAP] = "hole",'),
     1, ['reason "hole" is not in', 'reason "illegal_play:hole" is not in',
         'reason "illegal_play:gap" is promised to Edge clients but no code produces it any more']),
    ("dynamic_reason_unexplained", lambda r: append(r, "gateway/src/edge.c", """
static void gw_edge__relay_reason(rpc_call *call, const char *why)
{
    rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, why, "bad");
}
"""), 1, ["rpc_call_fail in gw_edge__relay_reason() takes its reason from `why`"]),
    ("contract_reason_gone", lambda r: replace(r, "game-svc/src/handlers.c", '"nudge_too_soon"', '"too_soon"'),
     1, ['reason "too_soon" is not in',
         'reason "nudge_too_soon" is promised to Edge clients but no code produces it any more']),
    ("comment_is_not_code", lambda r: append(r, "gateway/src/edge.c",
                                             '/* rpc_call_fail(c, GRPC_STATUS_INTERNAL, "ghost", "x"); */\n'),
     0, []),
]


def main(argv):
    failures = 0
    for name, mutate, want_rc, want in CASES:
        if argv and name not in argv:
            continue
        tmp = tempfile.mkdtemp(prefix="scan-test-")
        try:
            copy_tree(tmp)
            mutate(tmp)
            rc, out = scan(tmp)
            assert rc == want_rc, f"want exit {want_rc}, got {rc}:\n{out}"
            for w in want:
                assert w in out, f"want {w!r} in:\n{out}"
            print(f"ok   {name}")
        except AssertionError as e:
            failures += 1
            print(f"FAIL {name}: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# shellcheck shell=bash
# Tiny assertions for shell tests. Each prints "ok - ..." or "not ok - ...";
# `finish` exits non-zero when any failed.

ASSERT_FAILED=0
ASSERT_COUNT=0

_assert_result() {
    ASSERT_COUNT=$((ASSERT_COUNT + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok - $2"
    else
        echo "not ok - $2"
        ASSERT_FAILED=$((ASSERT_FAILED + 1))
    fi
}

# expect_ok DESC CMD...: CMD exits 0 (its output goes to $ASSERT_OUT).
expect_ok() {
    local desc=$1 rc=0
    shift
    ASSERT_OUT=$("$@" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || printf '%s\n(exit %s)\n' "$ASSERT_OUT" "$rc" >&2
    _assert_result "$rc" "$desc"
}

# expect_fail DESC PATTERN CMD...: CMD exits non-zero and its output
# (stdout+stderr) matches the grep -E PATTERN.
expect_fail() {
    local desc=$1 pattern=$2 rc=0 ok=1
    shift 2
    ASSERT_OUT=$("$@" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ] && grep -Eq -- "$pattern" <<<"$ASSERT_OUT"; then ok=0; fi
    [ "$ok" -eq 0 ] || printf '%s\n(exit %s, wanted non-zero and /%s/)\n' "$ASSERT_OUT" "$rc" "$pattern" >&2
    _assert_result "$ok" "$desc"
}

# expect_rc DESC RC CMD...: CMD exits with RC.
expect_rc() {
    local desc=$1 want=$2 rc=0
    shift 2
    ASSERT_OUT=$("$@" 2>&1) || rc=$?
    [ "$rc" -eq "$want" ] || printf '%s\n(exit %s, wanted %s)\n' "$ASSERT_OUT" "$rc" "$want" >&2
    [ "$rc" -eq "$want" ]
    _assert_result $? "$desc"
}

# expect_output DESC PATTERN: the last command's output matches PATTERN.
expect_output() {
    grep -Eq -- "$2" <<<"$ASSERT_OUT"
    _assert_result $? "$1"
}

# hold_port PORT: a process listening on 127.0.0.1:PORT until the test ends
# (killed at teardown when tests/integration/lib/stack.sh is in use).
hold_port() {
    /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(300)' "$1" &
    local pid=$!
    declare -F stack_defer >/dev/null && stack_defer "kill $pid 2>/dev/null"
    wait_port 127.0.0.1 "$1" 10
}

finish() {
    echo "# $((ASSERT_COUNT - ASSERT_FAILED)) of $ASSERT_COUNT checks passed"
    [ "$ASSERT_FAILED" -eq 0 ]
}

#!/usr/bin/env bash
# Every shell script parses (bash -n), the Python helpers compile, the
# Makefile parses (make -n), .ci/run is executable and calls `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/assert.sh"
root=$(cd "$here/../../.." && pwd)
cd "$root"

mapfile -t shells < <(find scripts tests .ci -type f \( -name '*.sh' -o -path .ci/run \) 2>/dev/null | sort)
[ ${#shells[@]} -gt 5 ] || { echo "not ok - found only ${#shells[@]} scripts"; exit 1; }
for f in "${shells[@]}"; do
    expect_ok "bash -n $f" bash -n "$f"
done
for f in scripts/*.py tests/integration/scripts/*.py; do
    [ -f "$f" ] || continue
    expect_ok "py_compile $f" /usr/bin/python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f"
done
for f in $(ls scripts/*.sh | grep -v "/lib.sh$") .ci/run; do
    expect_ok "$f is executable" test -x "$f"
done
expect_ok "make -n run/stop/test/loadtest parse" make -n -C "$root" run stop status test loadtest
expect_ok ".ci/run calls make test" grep -q 'make test' .ci/run
finish

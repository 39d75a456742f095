#!/usr/bin/env bash
# What `make test` (and so CI) runs: one ASan+UBSan Debug build in build-asan/
# for everything, then every ctest test (unit + integration + interop; the
# integration tests start their own private Postgres/Redis/services on free
# ports). Ends with the line "N passed, N failed"; exits non-zero on any
# failure, including a build that failed.
#
#   scripts/test.sh [CTEST_ARGS...]     e.g. scripts/test.sh -L unit, -R solver
# Env: TEST_BUILD_DIR (default build-asan; use your own build-<name>/ while
#      developing beside others), JOBS (default 2).
set -uo pipefail
LOG_TAG=test.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

BUILD=$(abspath "${TEST_BUILD_DIR:-build-asan}")
JOBS=${JOBS:-2}

"$REPO_ROOT/scripts/install-deps.sh" || die "dependencies could not be installed"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -f "$REPO_ROOT/tests/lsan.supp" ] && [ -z "${LSAN_OPTIONS:-}" ]; then
    export LSAN_OPTIONS=suppressions=$REPO_ROOT/tests/lsan.supp
fi

start=$SECONDS
build_ok=1
if [ ! -f "$BUILD/CMakeCache.txt" ] || ! grep -q '^SANITIZE:STRING=address,undefined$' "$BUILD/CMakeCache.txt"; then
    cmake -S "$REPO_ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DSANITIZE=address,undefined ||
        die "cmake configure failed in $BUILD"
fi
keep_going=(-k)
[ -f "$BUILD/build.ninja" ] && keep_going=(-k 0)
# Keep going past a broken target so that everything else is still tested.
if ! cmake --build "$BUILD" -j"$JOBS" -- "${keep_going[@]}"; then
    build_ok=0
    log "BUILD FAILED (see above); running the tests that could be built"
fi
log "build took $((SECONDS - start))s"

out=$BUILD/Testing/test-output.log
mkdir -p "$(dirname "$out")"
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS" --timeout 600 "$@") 2>&1 | tee "$out"
ctest_rc=${PIPESTATUS[0]}
log "tests took $((SECONDS - start))s in all"

# "100% tests passed, 0 tests failed out of 23"
summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1)
if [ -n "$summary" ]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$summary")
    passed=$((total - failed))
else
    passed=0
    failed=0
fi
[ "$build_ok" = 1 ] || { failed=$((failed + 1)) && log "counting the failed build as one failure"; }
[ $((passed + failed)) -gt 0 ] || { failed=1 && log "no test ran"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$ctest_rc" -eq 0 ]

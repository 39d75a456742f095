#!/usr/bin/env bash
# What `make test` (and so CI) runs: one ASan+UBSan Debug build in build-asan/
# for everything, then every ctest test (unit + integration + interop; the
# integration tests start their own private Postgres/Redis/services on free
# ports). Ends with the line "N passed, N failed"; exits non-zero on any
# failure, including a build that failed. With clang installed, a full run
# also builds the libFuzzer targets in build-fuzz/ and runs each briefly.
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

# counts LOG: "passed failed" from ctest's "100% tests passed, 0 tests
# failed out of 23" line (0 0 when there is none).
counts() {
    local summary failed total
    summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n 1)
    [ -n "$summary" ] || { echo "0 0" && return; }
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$summary")
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$summary")
    echo "$((total - failed)) $failed"
}
read -r passed failed < <(counts "$out")

# The libFuzzer targets need clang and a build of their own (FUZZ=ON); each
# runs a few seconds over its seed corpus. Only in a full run (no ctest
# arguments), or when asked for with -L fuzz.
if command -v clang >/dev/null 2>&1 && { [ $# -eq 0 ] || [[ " $* " == *" fuzz "* ]]; }; then
    FUZZ_BUILD=$(abspath "${FUZZ_BUILD_DIR:-build-fuzz}")
    fuzz_out=$FUZZ_BUILD/Testing/fuzz-output.log
    # A cache from before the project used C++ (or made with another C++
    # compiler) cannot link the fuzzers: start that build over.
    if [ -f "$FUZZ_BUILD/CMakeCache.txt" ] &&
        ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$FUZZ_BUILD/CMakeCache.txt"; then
        rm -rf "$FUZZ_BUILD"
    fi
    if { [ -f "$FUZZ_BUILD/CMakeCache.txt" ] ||
        cmake -S "$REPO_ROOT" -B "$FUZZ_BUILD" -DFUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
            -DCMAKE_BUILD_TYPE=Debug >/dev/null; } &&
        cmake --build "$FUZZ_BUILD" -j"$JOBS" --target fuzzers >/dev/null; then
        mkdir -p "$(dirname "$fuzz_out")"
        (cd "$FUZZ_BUILD" && ctest --output-on-failure -L fuzz) 2>&1 | tee "$fuzz_out"
        [ "${PIPESTATUS[0]}" -eq 0 ] || ctest_rc=1
        read -r fp ff < <(counts "$fuzz_out")
        passed=$((passed + fp))
        failed=$((failed + ff))
    else
        log "the fuzz build failed in $FUZZ_BUILD"
        failed=$((failed + 1))
    fi
    log "fuzzers done at $((SECONDS - start))s"
fi
[ "$build_ok" = 1 ] || { failed=$((failed + 1)) && log "counting the failed build as one failure"; }
[ $((passed + failed)) -gt 0 ] || { failed=1 && log "no test ran"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$ctest_rc" -eq 0 ]

#!/usr/bin/env bash
# scripts/install-deps.sh (the first step of `make run`) with a required
# package it cannot install — one that is in no archive, added through its
# EXTRA_REQUIRED hook — exits non-zero with an error naming the package.
#
# It never changes what is installed: the root run happens only when that
# package is the ONLY one missing (checked first through the not-root path,
# which lists every missing package and installs nothing), optional packages
# are left out, and the installed-package list is compared before and after.
# SKIP_APT_UPDATE=1: the existing package lists are enough to find that a
# package does not exist, so CI pays no apt-get update.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/assert.sh"
root=$(cd "$here/../../.." && pwd)
D=$root/scripts/install-deps.sh
PKG=scrabble-no-such-package

# An already-installed extra package changes nothing: silent, exit 0.
expect_ok "an installed extra package (bash) keeps the fast path" \
    env EXTRA_REQUIRED=bash INSTALL_OPTIONAL=0 timeout 60 "$D"
expect_ok "... and prints nothing" test -z "$ASSERT_OUT"

# Not root: install-deps refuses, naming every missing package.
as_user() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
    if runuser -u nobody -- test -r "$D" 2>/dev/null; then
        as_user() { runuser -u nobody -- "$@"; }
    else
        as_user() { return 99; }
    fi
fi
only_missing=0
if as_user true; then
    expect_fail "not root: exits non-zero naming $PKG" "error: missing packages \(.*\b$PKG\b.*\) and not root" \
        as_user env EXTRA_REQUIRED="$PKG" INSTALL_OPTIONAL=0 timeout 60 "$D"
    grep -Eq "missing packages \($PKG\) and not root" <<<"$ASSERT_OUT" && only_missing=1
else
    echo "# (user nobody cannot read $D: not-root path skipped)"
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "# not root: the apt path is not run"
elif [ "$only_missing" != 1 ]; then
    echo "# other required packages are missing here; the apt path is not run (it would install them)"
    echo "# $ASSERT_OUT"
else
    before=$(dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' | sort)
    err=$(mktemp)
    trap 'rm -f "$err"' EXIT
    rc=0
    # The lock timeout in install-deps is 600 s; another apt user must not
    # hold this test past its ctest TIMEOUT.
    EXTRA_REQUIRED=$PKG SKIP_APT_UPDATE=1 INSTALL_OPTIONAL=0 timeout 150 "$D" >/dev/null 2>"$err" || rc=$?
    bad=1
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && bad=0 # 124: timed out, not an answer
    _assert_result "$bad" "root: exits non-zero (exit $rc) when $PKG cannot be installed"
    grep -Eq "^install-deps.sh: error: could not install required package\(s\):.*\b$PKG\b" "$err"
    _assert_result $? "root: its error on stderr names $PKG"
    [ "$rc" -eq 0 ] || grep -q "error" "$err" || cat "$err" >&2
    after=$(dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' | sort)
    [ "$before" = "$after" ]
    _assert_result $? "root: the installed packages are unchanged"
    [ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after") >&2
fi
finish

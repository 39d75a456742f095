#!/usr/bin/env bash
# A first session with scrabble-cli, the C reference client: two players in
# one script (each with its own session file), an invitation, the solver's
# best opening word previewed and played, the board from the other side,
# and an error shown with its reason.
#
#   make run                                    # a local stack on 127.0.0.1:7000
#   docs/quickstart/cli/session.sh              # BIN=build/bin ADDR=127.0.0.1:7000
#
# Env: BIN (the binaries, default build/bin), SCRABBLE_CLI_ADDR (the
# gateway, default 127.0.0.1:7000), SESSION_DIR (where the two session files
# go, default a temp dir). Exits non-zero at the first failed command.
set -euo pipefail
BIN=${BIN:-build/bin}
export SCRABBLE_CLI_ADDR=${SCRABBLE_CLI_ADDR:-127.0.0.1:7000} SCRABBLE_CLI_COLOR=never
SESSION_DIR=${SESSION_DIR:-$(mktemp -d)}
suffix=$$

# `as NAME CMD...`: run scrabble-cli as one of the two players.
as() {
    local who=$1
    shift
    echo "\$ [$who] scrabble-cli $*" >&2
    SCRABBLE_CLI_TOKEN_FILE=$SESSION_DIR/$who.token "$BIN/scrabble-cli" "$@"
}

as alice register "alice$suffix" 'correct horse battery staple'
as bob register "bob$suffix" 'correct horse battery staple'
as alice invite "bob$suffix"
# (Whole outputs are captured first: a reader that stops early would cut
# the writer off.)
listing=$(as bob invitations)
invitation=$(awk '$1 == "invitation" {print $2; exit}' <<<"$listing")
as bob accept "$invitation"
listing=$(as alice games active)
game=$(awk '$2 == "active" {print $1; exit}' <<<"$listing")

# `show` prints the position as CGP: the solver turns it into a move.
board=$(as alice show "$game")
echo "$board"
cgp=$(sed -n 's/^cgp: //p' <<<"$board")
moves=$("$BIN/scrabble-solver" gen --cgp "$cgp" --top 1)
move=$(awk '{print $1" "$2; exit}' <<<"$moves")
if [ -n "$move" ]; then
    as alice preview "$game" "$move"
    as alice play "$game" "$move"
else
    as alice pass "$game" # no word on this rack: rare
fi
as bob show "$game"
as bob chat "$game" "good one"

# Errors come back as words plus the stable reason in parentheses.
if as alice pass "$game" 2>"$SESSION_DIR/err"; then
    echo "passing out of turn was accepted" >&2
    exit 1
fi
cat "$SESSION_DIR/err"
grep -q '(not_your_turn)' "$SESSION_DIR/err"
echo "session: ok"

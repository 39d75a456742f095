#!/usr/bin/env python3
"""GCG export of self-play games, read back two ways.

For each game `scrabble-solver selfplay --gcg` prints "game I seed S turns T
score A-B" and the game's GCG. Every seat's last cumulative total in the
file must equal its final score:
  - independently here: re-adding each line's points (a play's +score, an
    end line's +N / -N) gives each line's printed total, and the last
    total of each player is the printed final score;
  - by the solver's own reader: `scrabble-solver gcg -` replays the file
    on a board and prints each player's last total.
Usage: gcg_selfplay.py SOLVER_BINARY GAMES
"""
import re
import subprocess
import sys

solver, games = sys.argv[1], int(sys.argv[2])
out = subprocess.run([solver, "selfplay", "--games", str(games), "--seed", "7", "--gcg"],
                     check=True, capture_output=True, text=True).stdout
blocks = re.split(r"^(game \d+ seed \d+ turns \d+ score -?\d+--?\d+)\n", out, flags=re.M)
assert blocks[0] == "", blocks[0][:200]
checked = 0
end_lines = 0
for head, gcg in zip(blocks[1::2], blocks[2::2]):
    m = re.match(r"game (\d+) seed \d+ turns \d+ score (-?\d+)-(-?\d+)", head)
    final = [int(m.group(2)), int(m.group(3))]
    nicks = re.findall(r"^#player\d (\S+)", gcg, flags=re.M)
    assert nicks == ["p1", "p2"], nicks
    running = {n: 0 for n in nicks}
    for line in gcg.splitlines():
        if not line.startswith(">"):
            continue
        nick, rest = line[1:].split(":", 1)
        tok = rest.split()
        points, total = int(tok[-2]), int(tok[-1])
        if tok[0].startswith("(") or (len(tok) > 1 and tok[1].startswith("(")):
            end_lines += 1
        running[nick] += points
        assert running[nick] == total, f"game {m.group(1)}: {line!r}: sum {running[nick]}"
    last = [running[n] for n in nicks]
    assert last == final, f"game {m.group(1)}: totals {last} in the file, final {final}"
    back = subprocess.run([solver, "gcg", "-"], input=gcg, check=True, capture_output=True,
                          text=True).stdout.split("\n")
    read = [int(l.split()[-1]) for l in back if l.startswith("player ")]
    assert read == final, f"game {m.group(1)}: the solver's reader says {read}, final {final}"
    checked += 1
assert checked == games, f"{checked} games checked of {games}"
assert end_lines > 0, "no end-of-game line in any game"
print(f"ok: {checked} games, {end_lines} end lines, every last total equals the final score")

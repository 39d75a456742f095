#!/usr/bin/python3
"""A scrabble-cli session driven through pseudo-terminals.

Alice and Bob each get a token file and a `scrabble-cli shell` in its own
pty (so the CLI sees a terminal: raw-mode prompt, ANSI colours, events
printed above the prompt). One-shot commands run in a pty too. Output is
matched after stripping ANSI sequences. Transcripts are written to --tmp.

Exit 0 when every step passed; 1 with the failing step and the transcript
tail otherwise.
"""
import argparse
import os
import random
import re
import select
import signal
import subprocess
import sys
import time

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TIMEOUT = 20.0


def clean(text):
    return ANSI.sub("", text).replace("\r", "")


class Fail(Exception):
    pass


class Pty:
    """One process on a pseudo-terminal; expect() matches its cleaned output."""

    def __init__(self, name, argv, env, tmp):
        self.name = name
        master, slave = os.openpty()
        self.master = master
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.raw = ""
        self.pos = 0  # expect() consumes up to here
        self.log = open(os.path.join(tmp, "pty-%s.log" % name), "w")

    def _read(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the other side closed
            data = b""
        if not data:
            return None
        text = data.decode("utf-8", "replace")
        self.raw += text
        self.log.write(text)
        self.log.flush()
        return True

    def text(self):
        return clean(self.raw)

    def expect(self, pattern, timeout=TIMEOUT, what=None):
        """Waits for pattern in the output after the last match; returns the match."""
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        while True:
            t = self.text()
            m = rx.search(t, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.time()
            if left <= 0:
                raise Fail("%s: timed out waiting for %s (/%s/); output since the last match:\n%s"
                           % (self.name, what or "output", pattern, t[self.pos:][-3000:]))
            if self._read(min(left, 0.5)) is None:
                t = self.text()
                m = rx.search(t, self.pos)
                if m:
                    self.pos = m.end()
                    return m
                raise Fail("%s: exited (status %s) before %s (/%s/); output:\n%s"
                           % (self.name, self.proc.poll(), what or "output", pattern,
                              t[self.pos:][-3000:]))

    def send(self, line):
        os.write(self.master, (line + "\r").encode())

    def wait(self, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while self.proc.poll() is None and time.time() < deadline:
            self._read(0.2)
        while self._read(0.05):
            pass
        if self.proc.poll() is None:
            raise Fail("%s: still running after %.0f s" % (self.name, timeout))
        return self.proc.returncode

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        try:
            os.close(self.master)
        except OSError:
            pass
        self.log.close()


class Player:
    def __init__(self, args, name, handle):
        self.args = args
        self.name = name
        self.handle = handle
        self.env = dict(os.environ)
        self.env.update({
            "SCRABBLE_CLI_ADDR": args.addr,
            "SCRABBLE_CLI_TOKEN_FILE": os.path.join(args.tmp, "%s.token" % name),
            "TERM": "xterm-256color",
            "HOME": args.tmp,
        })
        self.env.pop("NO_COLOR", None)
        self.shell = None
        self.runs = 0

    def run(self, *cli_args, expect_rc=0):
        """A one-shot command in a pty; returns its cleaned output."""
        self.runs += 1
        p = Pty("%s-%d-%s" % (self.name, self.runs, cli_args[0]), [self.args.cli] + list(cli_args),
                self.env, self.args.tmp)
        try:
            rc = p.wait()
            out = p.text()
        finally:
            p.close()
        if expect_rc is not None and rc != expect_rc:
            raise Fail("%s: scrabble-cli %s exited %d, expected %d:\n%s"
                       % (self.name, " ".join(cli_args), rc, expect_rc, out))
        return out

    def open_shell(self):
        self.shell = Pty("%s-shell" % self.name, [self.args.cli, "shell"], self.env, self.args.tmp)
        self.shell.expect(r"%s> " % re.escape(self.handle), what="the shell prompt")

    def cmd(self, line, pattern, what=None):
        self.shell.send(line)
        return self.shell.expect(pattern, what=what or line)


def step(msg):
    print("--", msg, flush=True)


def solver_best(args, cgp):
    """The best move for the CGP's first rack, as notation, or None."""
    out = subprocess.run([args.solver, "gen", "--cgp", cgp, "--top", "5", "--lexicon", args.lexicon],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise Fail("scrabble-solver gen failed (%d): %s" % (out.returncode, out.stderr))
    for line in out.stdout.splitlines():
        m = re.match(r"^(\S+ \S+) (\d+)$", line.strip())
        if m and int(m.group(2)) > 0:
            return m.group(1)
    return None


def is_word(args, word):
    out = subprocess.run([args.solver, "check", "--lexicon", args.lexicon, word],
                         capture_output=True, text=True, timeout=30)
    return out.returncode == 0


def parse_state(player, game):
    out = player.cmd("show %s" % game, r"cgp: ([^\n]*;)", "the CGP line of show")
    text = player.shell.text()
    # show prints the rack before the cgp line
    rack = re.findall(r"rack: (\S*)", text[:out.end()])
    return out.group(1), (rack[-1] if rack else "")


def coord(notation):
    """'8H' -> (row, col, across); 'H8' -> down."""
    sq = notation.split()[0]
    if sq[0].isdigit():
        return int(sq[:-1]) - 1, ord(sq[-1].upper()) - 65, True
    return int(sq[1:]) - 1, ord(sq[0].upper()) - 65, False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--solver", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--addr", required=True)
    ap.add_argument("--tmp", required=True)
    args = ap.parse_args()

    tag = "%04x" % random.randrange(1 << 16)
    alice = Player(args, "alice", "alice_" + tag)
    bob = Player(args, "bob", "bob_" + tag)
    try:
        step("usage errors exit 2 with a message")
        out = alice.run("play", "1", expect_rc=2)
        assert "usage: scrabble-cli play GAME" in out, out
        out = alice.run("frobnicate", expect_rc=2)
        assert "unknown command 'frobnicate'" in out, out
        out = alice.run("show", "1", expect_rc=1)
        assert "not logged in" in out, out

        step("register both players (token files in %s)" % args.tmp)
        out = alice.run("register", alice.handle, "correct-horse-1")
        assert "registered and logged in as %s" % alice.handle in out, out
        out = bob.run("register", bob.handle, "battery-staple-2")
        assert "registered and logged in as %s" % bob.handle in out, out
        out = bob.run("register", bob.handle, "battery-staple-2", expect_rc=1)
        assert "(handle_taken)" in out, out
        out = bob.run("login", bob.handle, "wrong-password", expect_rc=1)
        assert "(bad_credentials)" in out, out
        out = bob.run("login", bob.handle, "battery-staple-2")
        assert "logged in as %s" % bob.handle in out, out

        step("both open a shell; alice invites bob, who sees it live and accepts")
        alice.open_shell()
        bob.open_shell()
        time.sleep(0.5)  # let both Subscribe streams reach the gateway
        m = alice.cmd("invite %s" % bob.handle, r"invitation (\d+) from %s" % re.escape(alice.handle))
        inv = m.group(1)
        bob.shell.expect(r"\* invitation %s from %s" % (inv, re.escape(alice.handle)),
                         what="bob's live INVITATION event")
        bob.cmd("invitations", r"invitation %s from %s \(open\)" % (inv, re.escape(alice.handle)))
        m = bob.cmd("accept %s" % inv, r"game (\d+) has started")
        game = m.group(1)
        alice.shell.expect(r"\* game %s started" % game, what="alice's GAME_STARTED event")
        alice.shell.expect(r"\* game %s: your turn" % game, what="alice's YOUR_TURN event")
        alice.cmd("games", r"%s\s+active\s+.*your turn" % game, "alice's games list")

        step("bad input at the prompt gets a message; the shell goes on")
        alice.cmd("play %s Z9 WORD" % game, r"bad square 'Z9'")
        alice.cmd('play %s "8H unbalanced' % game, r"unbalanced \" quote")
        alice.cmd("show banana", r"'banana' is not a game id")

        step("a legal first move, found with scrabble-solver, previewed then played")
        players = [alice, bob]
        mover, other = alice, bob
        played = None
        for turn in range(4):
            cgp, rack = parse_state(mover, game)
            best = solver_best(args, cgp)
            if best is None:
                step("%s has no play with %s: passes" % (mover.name, rack))
                mover.cmd("pass %s" % game, r"you passed")
                other.shell.expect(r"\* game %s: %s passed" % (game, re.escape(mover.handle)))
                mover, other = other, mover
                continue
            step("%s (rack %s) plays %s" % (mover.name, rack, best))
            mover.cmd('preview %s "%s"' % (game, best), r"legal: \S+ \S+ scores (\d+)")
            m = mover.cmd('play %s "%s"' % (game, best), r"you played (\S+ \S+) for (\d+)")
            played = best
            other.shell.expect(r"\* game %s: %s played \S+ \S+ for \d+" % (game, re.escape(mover.handle)),
                               what="the opponent's OPPONENT_MOVED event")
            other.shell.expect(r"\* game %s: your turn" % game, what="YOUR_TURN after the move")
            break
        if played is None:
            raise Fail("nobody found a play in 4 turns")
        mover, other = other, mover  # other now is the player who just played

        step("an illegal move shows the server's reason in words")
        cgp, rack = parse_state(mover, game)
        row, col, across = coord(played)
        first = played.split()[1][0].upper()
        letters = [c for c in rack if c.isalpha()]
        phony = None
        for i in range(len(letters)):
            for j in range(len(letters)):
                if i != j and not is_word(args, letters[i] + letters[j] + first):
                    phony = letters[i] + letters[j]
                    break
            if phony:
                break
        if phony is None:
            raise Fail("could not build a phony from rack %s" % rack)
        if across:  # two tiles above the first letter, down through it
            note = "%s%d %s(%s)" % (chr(65 + col), row - 1, phony, first)
        else:  # two tiles left of the first letter, across through it
            note = "%d%s %s(%s)" % (row + 1, chr(65 + col - 2), phony, first)
        step("%s tries %s" % (mover.name, note))
        mover.cmd('preview %s "%s"' % (game, note), r"not legal: .+ \([a-z_:]+\)")
        m = mover.cmd('play %s "%s"' % (game, note), r"illegal play: [^\n]+ \(illegal_play:[a-z_]+\)")
        step("shown: %s" % m.group(0))
        mover.cmd("show %s" % game, r"your turn", "still the same player's turn")

        step("an out-of-turn play is refused in words too")
        # 1A is empty whatever the first move was (it is on row 8 or column H,
        # seven tiles at most).
        other.cmd('play %s "1A ZA"' % game, r"\(not_your_turn\)|\(illegal_play:[a-z_]+\)")

        step("chat reaches the other shell and a `watch` live")
        watch = Pty("%s-watch" % other.name, [args.cli, "watch"], other.env, args.tmp)
        try:
            watch.expect(r"watching live events for %s" % re.escape(other.handle), what="watch's banner")
            time.sleep(0.5)  # let the stream reach the gateway
            mover.cmd("chat %s good luck!" % game, r"<%s> good luck!" % re.escape(mover.handle))
            other.shell.expect(r"\* game %s: <%s> good luck!" % (game, re.escape(mover.handle)),
                               what="the CHAT event in the shell")
            watch.expect(r"\d\d:\d\d:\d\d game %s: <%s> good luck!" % (game, re.escape(mover.handle)),
                         what="the CHAT event in watch")
            watch.proc.send_signal(signal.SIGINT)
            rc = watch.wait()
            if rc != 0:
                raise Fail("watch exited %d after SIGINT" % rc)
        finally:
            watch.close()

        step("spectators: a public game is listed, watched move by move to its end; "
             "a private one is refused")
        carol = Player(args, "carol", "carol_" + tag)
        out = carol.run("register", carol.handle, "correct-horse-3")
        assert "registered and logged in as %s" % carol.handle in out, out
        m = alice.cmd("invite --public %s" % bob.handle,
                      r"invitation (\d+) from %s" % re.escape(alice.handle))
        inv2 = m.group(1)
        bob.shell.expect(r"\* invitation %s from" % inv2, what="bob's second INVITATION event")
        m = bob.cmd("accept %s" % inv2, r"game (\d+) has started")
        game2 = m.group(1)
        out = carol.run("public")
        assert re.search(r"game %s .*\(watch %s\)" % (game2, game2), out), out
        assert not re.search(r"game %s " % game, out), out  # the first game is private
        out = carol.run("watch", game, expect_rc=1)
        assert "(private_game)" in out, out
        spec = Pty("carol-watch", [args.cli, "watch", game2], carol.env, args.tmp)
        try:
            spec.expect(r"watching game %s" % game2, what="watch GAME's banner")
            alice.cmd("pass %s" % game2, r"you passed")
            spec.expect(r"game %s #1: %s passed" % (game2, re.escape(alice.handle)),
                        what="the move in carol's watch")
            bob.cmd("resign %s" % game2, r"resign")
            spec.expect(r"game %s is over" % game2, what="the end in carol's watch")
            rc = spec.wait()
            if rc != 0:
                raise Fail("watch GAME exited %d at the end of the game" % rc)
        finally:
            spec.close()
        step("alice plays the computer: invite bot-club starts a game; after her pass the bot moves")
        m = alice.cmd("invite bot-club", r"game (\d+) has started")
        bot_game = m.group(1)
        alice.cmd("pass %s" % bot_game, r"PASS|pass", "alice's pass")
        alice.shell.expect(r"game %s: bot-club [^\n]+" % bot_game, what="the bot's move, live")
        alice.shell.expect(r"game %s: your turn \(seq 2\)" % bot_game, what="YOUR_TURN after the bot")

        step("quit both shells")
        for p in players:
            p.shell.send("quit")
            rc = p.shell.wait()
            if rc != 0:
                raise Fail("%s's shell exited %d" % (p.name, rc))
        print("PASS: cli session (transcripts: %s/pty-*.log)" % args.tmp)
        return 0
    except (Fail, AssertionError) as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        for p in (alice, bob):
            if p.shell:
                p.shell.close()


if __name__ == "__main__":
    sys.exit(main())

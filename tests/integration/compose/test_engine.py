#!/usr/bin/python3
"""The compose stack on a real container engine (docs/OPERATIONS.md recipes).

Runs the documented recipes against Debian's docker.io and docker-compose:
base images made locally when no registry answers (images.sh, cached),
the image built once, up and healthy (up.sh), the gateways scaled to 3 in
the file's replica setting, one complete game through the single client
address (the nginx balancer) with requests reaching every gateway, a crash
of the game-svc that owns the game (restarted by the engine, the game goes
on), the observability profile's Prometheus scraping every service through
the game (every target up, a gateway and a game-svc series with data, every
recording and alert rule loaded and evaluated, asked through Prometheus's
HTTP API), the load-test profile briefly, the upgrade recipe keeping the replica
count, and `down` leaving nothing behind. Bad input: a taken port and a
missing secret make up.sh refuse with a message naming them; a missing
certificate makes the service refuse to start, naming the file.

Figures (build, up->healthy, requests per gateway, CPU per call of the
balancer and of a gateway) are printed as `FIGURE name value`; nothing is
asserted on time.

It starts dockerd only when none answers, and stops only the one it
started; a lock (/run/lock/scrabble-engine-test.lock) keeps the engine and
swarm tests of every worktree on this machine from running at once. It removes every container, network and volume of its own
project and the images it built that are not its cache (the cache: the
images.sh images and scrabble:enginetest, the build's layer cache).

Exit 0 pass, 1 fail, 77 skipped (no docker.io, not root, or the engine
cannot run here).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = "scrabble-enginetest"
TAG = "enginetest"
IMAGE = "scrabble:" + TAG

failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg, flush=True)
    if not cond:
        failures.append(msg)
    return cond


def note(msg):
    print("--   " + msg, flush=True)


def figure(name, value):
    print("FIGURE %s %s" % (name, value), flush=True)


def skip(msg):
    print("SKIP: " + msg, flush=True)
    sys.exit(SKIP)


class Env:
    """The environment every docker/docker-compose command of the test gets:
    its own project, tag, secrets and port; Debian's docker client first."""

    def __init__(self, repo, secrets, port, prom_port):
        self.repo = repo
        self.compose_dir = os.path.join(repo, "compose")
        self.env = dict(os.environ)
        # Debian's client (matches the daemon; the legacy builder without
        # warnings) before any other docker on PATH.
        self.env["PATH"] = "/usr/bin:/usr/sbin:" + self.env.get("PATH", "/bin")
        self.env.update({
            "COMPOSE_PROJECT_NAME": PROJECT,
            "SCRABBLE_TAG": TAG,
            "SCRABBLE_SECRETS_DIR": secrets,
            "SCRABBLE_PORT": str(port),
            "PROMETHEUS_PORT": str(prom_port),
            "SCRABBLE_PUBLISH_HOST": "127.0.0.1",
            "COMPOSE_FILE": os.path.join(self.compose_dir, "docker-compose.yml"),
        })
        for k in ("GATEWAY_REPLICAS", "LOADTEST_STEPS", "LOADTEST_STEP_DURATION", "DOCKER_HOST",
                  "PROMETHEUS_TAG", "GRAFANA_PORT"):
            self.env.pop(k, None)

    def run(self, cmd, timeout=600, check_rc=False, cwd=None, **kw):
        r = subprocess.run(cmd, cwd=cwd or self.compose_dir, env=self.env, capture_output=True,
                           text=True, timeout=timeout, **kw)
        if check_rc and r.returncode != 0:
            raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout[-2000:],
                                                      r.stderr[-2000:]))
        return r

    def compose(self, *args, **kw):
        return self.run(["docker-compose"] + list(args), **kw)


LOCK = "/run/lock/scrabble-engine-test.lock"


def engine_lock(wait_s=600):
    """One engine test at a time on this machine (every worktree's `make
    test` runs them): they share one dockerd, which the first may have
    started and will stop, one swarm, and the image tag. Held until the
    process exits. Skips when another holds it longer than wait_s."""
    import fcntl
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    f = open(LOCK, "a")
    deadline = time.time() + wait_s
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.time() > deadline:
                skip("another engine test held %s for %d s" % (LOCK, wait_s))
            time.sleep(2)


def docker_answers(env):
    return subprocess.run(["docker", "info"], env=env, capture_output=True, timeout=30).returncode == 0


def start_dockerd(env, tmp):
    """Starts dockerd when none answers. Returns the Popen we started (to
    stop at the end) or None when one was already running."""
    if docker_answers(env):
        return None
    if os.geteuid() != 0:
        skip("no docker engine answers and starting dockerd needs root")
    if shutil.which("dockerd", path=env["PATH"]) is None:
        skip("dockerd is not installed (apt-get install docker.io)")
    log = open(os.path.join(tmp, "dockerd.log"), "w")
    note("starting dockerd (none was running); stopped at the end")
    p = subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT, env=env,
                         start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if p.poll() is not None:
            skip("dockerd exited at start (%d): %s" % (p.returncode,
                 open(log.name).read()[-400:].replace("\n", " ")))
        if docker_answers(env):
            return p
        time.sleep(1)
    stop_dockerd(p)
    skip("dockerd did not answer within 60 s")


def stop_dockerd(p):
    if p is None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- stack inspection -------------------------------------------------------

def containers(e, service=None):
    args = ["ps", "-q"] + ([service] if service else [])
    r = e.compose(*args, timeout=60)
    return [x for x in r.stdout.split() if x]


def inspect(e, cid, fmt):
    return e.run(["docker", "inspect", "-f", fmt, cid], timeout=30).stdout.strip()


def http_get_in(e, cid, port, path):
    """GET http://127.0.0.1:PORT/PATH inside container CID's own network
    namespace (bash's /dev/tcp: the image has no HTTP client), so no host
    traffic goes to a container address."""
    script = ('exec 3<>/dev/tcp/127.0.0.1/%d && printf "GET %s HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n" >&3 '
              '&& cat <&3' % (port, path))
    r = e.run(["docker", "exec", cid, "bash", "-c", script], timeout=30)
    return r.stdout if r.returncode == 0 else None


def metric_sum(text, name):
    total, seen = 0.0, False
    for line in (text or "").splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m and m.group(1) == name:
            total += float(m.group(3))
            seen = True
    return total if seen else None


def gateway_calls(e):
    """rpc_server_calls_total of each gateway container, by container id."""
    out = {}
    for cid in containers(e, "gateway"):
        out[cid] = metric_sum(http_get_in(e, cid, 9000, "/metrics"), "rpc_server_calls_total")
    return out


def nginx_requests(e, cid):
    m = re.search(r"^\s*\d+\s+\d+\s+(\d+)\s*$", http_get_in(e, cid, 8081, "/status") or "", re.M)
    return int(m.group(1)) if m else None


def cpu_ns(e, cid):
    """CPU time of a container so far (cgroup v1 cpuacct or v2 cpu.stat)."""
    full = inspect(e, cid, "{{.Id}}")
    for path in ("/sys/fs/cgroup/cpuacct/docker/%s/cpuacct.usage" % full,
                 "/sys/fs/cgroup/cpu,cpuacct/docker/%s/cpuacct.usage" % full):
        if os.path.exists(path):
            return int(open(path).read())
    for path in ("/sys/fs/cgroup/system.slice/docker-%s.scope/cpu.stat" % full,
                 "/sys/fs/cgroup/docker/%s/cpu.stat" % full):
        if os.path.exists(path):
            m = re.search(r"^usage_usec (\d+)", open(path).read(), re.M)
            return int(m.group(1)) * 1000 if m else None
    return None


def prune_build_stages(e):
    """Removes every untagged build stage of compose/Dockerfile but the
    newest (docker images lists newest first)."""
    ids = e.run(["docker", "images", "-q", "--filter", "dangling=true", "--filter",
                 "label=org.scrabble.stage=build"], timeout=60).stdout.split()
    for old in ids[1:]:
        e.run(["docker", "rmi", old], timeout=120)


def upstream_count(e):
    cids = containers(e, "balancer")
    if not cids:
        return 0
    r = e.run(["docker", "exec", cids[0], "cat", "/tmp/nginx/upstream.conf"], timeout=30)
    return len([x for x in r.stdout.splitlines() if x.startswith("server ")])


def wait_for(pred, timeout, desc, every=1.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            check(True, desc)
            return v
        time.sleep(every)
    check(False, desc + " (not within %d s)" % timeout)
    return None


# ---- the observability profile ---------------------------------------------

# Every profile, so down/rm reach whatever a run left of each.
PROFILES = ["--profile", "loadtest", "--profile", "observability"]


def prom_api(port, path):
    """GET Prometheus's HTTP API on the host's loopback port; the decoded
    `data`, or None while it does not answer."""
    import json
    import urllib.request
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/%s" % (port, path), timeout=10) as r:
            body = json.load(r)
    except (OSError, ValueError):
        return None
    return body.get("data") if body.get("status") == "success" else None


def prom_targets(port):
    """{job: [health of each active target]}."""
    data = prom_api(port, "targets?state=active")
    out = {}
    for t in (data or {}).get("activeTargets", []):
        out.setdefault(t["labels"].get("job"), []).append(t.get("health"))
    return out


def prom_value(port, query):
    import urllib.parse
    data = prom_api(port, "query?query=" + urllib.parse.quote(query))
    res = (data or {}).get("result") or []
    return float(res[0]["value"][1]) if res else None


def prom_rules(port):
    """[(group, name, health)] of every loaded rule."""
    data = prom_api(port, "rules")
    return [(g["name"], r.get("name"), r.get("health")) for g in (data or {}).get("groups", [])
            for r in g.get("rules", [])]


def rules_in_files(repo):
    """How many rules compose/observability/rules/*.yml define."""
    import glob
    n = 0
    for f in glob.glob(os.path.join(repo, "compose", "observability", "rules", "*.yml")):
        n += len(re.findall(r"^\s+- (?:record|alert): ", open(f).read(), re.M))
    return n


def check_prometheus(e, port):
    """What the observability profile promises, asked of the running
    Prometheus after the game's traffic: every target it scrapes is up
    (3 gateways found by DNS, 2 game-svc, store-svc, itself), the series
    an operator starts from have data, and the rules it loaded are the
    files' and evaluate without error."""
    want = {"gateway": 3, "game-svc": 2, "store-svc": 1, "prometheus": 1}

    def all_up():
        t = prom_targets(port)
        return t if all(t.get(j, []).count("up") == n and len(t[j]) == n for j, n in want.items()) else None

    t = wait_for(all_up, 120, "Prometheus scrapes every service and every target is up (%s)" % want, every=2)
    if not t:
        note("targets: %s" % prom_targets(port))
    q = 'sum(rpc_server_calls_total{job="gateway",method="/scrabble.v1.Edge/SubmitPlay"})'
    v = wait_for(lambda: (prom_value(port, q) or 0) > 0 and prom_value(port, q), 60,
                 "Prometheus has the gateways' SubmitPlay counter from the game", every=2)
    note("%s = %s" % (q, v))
    q = "sum(game_turns_committed_total)"
    wait_for(lambda: (prom_value(port, q) or 0) > 0, 60, "Prometheus has game-svc's committed turns", every=2)
    n = rules_in_files(e.repo)

    def rules_ok():
        r = prom_rules(port)
        return r if len(r) == n and all(h == "ok" for _, _, h in r) else None

    r = wait_for(rules_ok, 90, "Prometheus loaded the %d recording and alert rules and evaluates each "
                 "without error" % n, every=2)
    if not r:
        note("rules: %s" % [x for x in prom_rules(port) if x[2] != "ok"][:10])


# ---- the game ---------------------------------------------------------------

def play_game(e, target, solver, lexicon, crash):
    """Two players, one game through the balancer, to its end. Midway,
    crash(game_id) kills the owning game-svc; turns go on after it."""
    sys.path.insert(0, os.path.join(e.repo, "tests", "interop"))
    import edge_client as ec
    from scrabble.v1 import common_pb2 as ET

    suffix = "%d%d" % (os.getpid(), int(time.time()) % 100000)
    players = []
    for name in ("ann", "bob"):
        c = ec.Edge(target)
        r = c.call("Register", handle="%s%s" % (name, suffix), password="correct horse %s" % suffix)
        c.token = r.token
        c.account_id = r.account_id
        players.append(c)
    a, b = players
    inv = a.call("Invite", invitee_handles=["bob" + suffix])
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    gid = r.game_id
    check(r.status == ET.INVITATION_STATUS_STARTED and gid > 0, "a game started through the balancer (id %d)" % gid)

    def retry(fn):
        # Only while the crashed game-svc comes back: UNAVAILABLE, bounded.
        deadline = time.time() + 90
        while True:
            try:
                return fn()
            except ec.CallError as err:
                if err.code.name != "UNAVAILABLE" or time.time() > deadline:
                    raise
                time.sleep(1)

    turns, crashed, seq_at_crash = 0, False, None
    while turns < 200:
        st = retry(lambda: a.call("GetState", game_id=gid))
        if st.status == ET.GAME_STATUS_FINISHED:
            break
        if turns == 4 and not crashed:
            crash(gid)
            crashed, seq_at_crash = True, st.seq
        p = next(x for x in players if x.account_id == st.seats[st.to_move].account_id)
        st = retry(lambda: p.call("GetState", game_id=gid))
        reply = None
        for notation, placements, score in ec.solver_moves(solver, lexicon, st, 4):
            ev = retry(lambda: p.call("Evaluate", game_id=gid, placements=placements))
            if not ev.legal:
                continue
            try:
                reply = retry(lambda: p.call("SubmitPlay", game_id=gid, expected_seq=st.seq,
                                             placements=placements))
            except ec.CallError as err:
                if err.reason.startswith("illegal_play"):
                    continue
                raise
            break
        if reply is None:
            if st.bag_count >= 7 and st.my_rack:
                reply = retry(lambda: p.call("Exchange", game_id=gid, expected_seq=st.seq, tiles=st.my_rack))
            else:
                reply = retry(lambda: p.call("Pass", game_id=gid, expected_seq=st.seq))
        if reply.move.seq != st.seq + 1:
            check(False, "turn %d acknowledged at seq %d, expected %d" % (turns + 1, reply.move.seq, st.seq + 1))
        turns += 1
    st = a.call("GetState", game_id=gid)
    check(st.status == ET.GAME_STATUS_FINISHED,
          "the game played to its end through one address: %d turns, seq %d, scores %s"
          % (turns, st.seq, [s.score for s in st.seats]))
    check(crashed and st.seq > seq_at_crash, "the game went on after its game-svc crashed (seq %s -> %d)"
          % (seq_at_crash, st.seq))
    for c in players:
        c.close()
    return gid, ec, ("ann" + suffix, "correct horse %s" % suffix)


# ---- the run ----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--lexicon", required=True)
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    solver = os.path.join(args.bin_dir, "scrabble-solver")
    if not os.access(solver, os.X_OK) or not os.path.exists(args.lexicon):
        skip("scrabble-solver or the lexicon is not built in %s" % args.bin_dir)
    for tool in ("docker-compose", "dockerd"):
        if shutil.which(tool, path="/usr/bin:/usr/sbin:" + os.environ.get("PATH", "")) is None:
            skip("%s is not installed (scripts/install-deps.sh installs docker.io and docker-compose)" % tool)

    lock = engine_lock()  # noqa: F841 (held until exit)
    tmp = tempfile.mkdtemp(prefix="scrabble-engine-")
    secrets = os.path.join(tmp, "secrets")
    port = free_port()
    e = Env(repo, secrets, port, free_port())
    t_start = time.time()
    dockerd = start_dockerd(e.env, tmp)
    built_before = e.run(["docker", "images", "-q", IMAGE], timeout=30).stdout.strip()
    listener = None
    try:
        # Leftovers of an interrupted earlier run of this test (its own
        # project name only).
        e.compose(*PROFILES, "down", "-v", "--remove-orphans", timeout=300)

        t0 = time.time()
        r = e.run([os.path.join(HERE, "images.sh")], timeout=1500, cwd=HERE)
        if not check(r.returncode == 0, "base images and stand-ins ready (images.sh)"):
            print(r.stderr[-3000:])
            return 1
        figure("images_ready_s", "%.1f" % (time.time() - t0))

        r = e.run([os.path.join(e.compose_dir, "secrets.sh")], timeout=120)
        check(r.returncode == 0, "secrets.sh made the secrets in the test's own directory")

        # -- bad input before anything runs: nothing may be created.
        listener = socket.socket()
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        r = e.run(["./up.sh"], timeout=120)
        check(r.returncode == 1 and ("host port 127.0.0.1:%d is already in use" % port) in r.stderr,
              "up.sh on a taken port refuses, naming it: %s" % r.stderr.strip().splitlines()[-1:])
        check(containers(e) == [], "a refused up.sh created no container")
        listener.close()
        listener = None

        partial = os.path.join(tmp, "partial-secrets")
        shutil.copytree(secrets, partial)
        os.unlink(os.path.join(partial, "redis-drafts.pass"))
        e.env["SCRABBLE_SECRETS_DIR"] = partial
        r = e.run(["./up.sh"], timeout=120)
        e.env["SCRABBLE_SECRETS_DIR"] = secrets
        check(r.returncode == 1 and "redis-drafts.pass" in r.stderr and "missing secret" in r.stderr,
              "up.sh with a missing secret refuses, naming it: %s" % r.stderr.strip().splitlines()[-1:])
        check(containers(e) == [], "a refused up.sh created no container")

        # -- build once (the recipe: docker-compose build)
        t0 = time.time()
        r = e.compose("build", timeout=1800)
        if not check(r.returncode == 0, "docker-compose build"):
            print(r.stdout[-3000:], r.stderr[-3000:])
            return 1
        build_s = time.time() - t0
        # No previous image: the first build on this engine (base layers may
        # still be cached); otherwise only what changed since the last run.
        figure("image_build_s_%s" % ("first" if not built_before else "incremental"), "%.1f" % build_s)
        built = re.findall(r"^Building (\S+)", r.stdout + r.stderr, re.M)
        check(built == ["certs"], "the image is built once (services built: %s)" % built)
        size = e.run(["docker", "image", "inspect", "-f", "{{.Size}}", IMAGE], timeout=30).stdout.strip()
        figure("image_size_mb", "%.1f" % (int(size) / 1e6))
        apt_cache = e.run(["docker", "run", "--rm", "--entrypoint", "sh", IMAGE, "-c",
                           "du -sk /var/cache/apt /var/lib/apt/lists | awk '{s+=$1} END {print s}'"],
                          timeout=120).stdout.strip()
        check(apt_cache.isdigit() and int(apt_cache) < 1024,
              "the image carries no apt cache or lists (%s KiB)" % apt_cache)

        # -- up and healthy (the recipe: ./up.sh)
        t0 = time.time()
        r = e.run(["./up.sh"], timeout=600)
        if not check(r.returncode == 0, "up.sh: the stack is up and healthy"):
            print(r.stderr[-4000:])
            return 1
        figure("up_to_healthy_s", "%.1f" % (time.time() - t0))
        check(len(containers(e, "gateway")) == 2, "the file's default: 2 gateways")

        # -- a missing certificate: the service refuses to start, naming it
        r = e.compose("run", "-T", "--rm", "--no-deps", "-e", "SCRABBLE_GAME_CERTS_DIR=/var/lib/scrabble/none",
                      "game-svc-0", timeout=120)
        check(r.returncode != 0 and "missing certificate file /var/lib/scrabble/none/" in (r.stdout + r.stderr),
              "game-svc without its certificate refuses to start, naming the file")

        # -- scale to 3 (the recipe: GATEWAY_REPLICAS in compose/.env, ./up.sh)
        e.env["GATEWAY_REPLICAS"] = "3"
        r = e.run(["./up.sh"], timeout=600)
        check(r.returncode == 0, "up.sh with GATEWAY_REPLICAS=3")
        check(len(containers(e, "gateway")) == 3, "3 gateways run")
        wait_for(lambda: upstream_count(e) == 3, 60, "the balancer lists the 3 gateways")

        # -- the observability profile's Prometheus, started before the game
        # so that its scrapes (every 15 s) overlap the game's traffic
        prom_port = int(e.env["PROMETHEUS_PORT"])
        r = e.compose("--profile", "observability", "up", "-d", "--no-deps", "prometheus", timeout=300)
        prom_up = check(r.returncode == 0, "the observability profile's Prometheus started%s"
                        % ("" if r.returncode == 0 else ": " + r.stderr[-600:]))

        # -- one complete game through the single address; its game-svc crashes midway
        bal = containers(e, "balancer")[0]
        before = gateway_calls(e)
        ngx0 = nginx_requests(e, bal)

        def crash(gid):
            from edge_client import owner
            names = ["game-svc-0:7100", "game-svc-1:7100"]
            victim = "game-svc-%d" % owner(gid, names)
            cid = containers(e, victim)[0]
            pid = inspect(e, cid, "{{.State.Pid}}")
            restarts = int(inspect(e, cid, "{{.RestartCount}}"))
            note("crashing %s (owner of game %d): kill -9 of its process %s" % (victim, gid, pid))
            os.kill(int(pid), signal.SIGKILL)
            wait_for(lambda: int(inspect(e, cid, "{{.RestartCount}}")) > restarts
                     and inspect(e, cid, "{{.State.Health.Status}}") == "healthy", 120,
                     "%s restarted by the engine and healthy again" % victim)
            check(int(inspect(e, cid, "{{.RestartCount}}")) > restarts, "%s restarted after the crash" % victim)

        target = "127.0.0.1:%d" % port
        gid, ec, (handle, password) = play_game(e, target, solver, args.lexicon, crash)
        after = gateway_calls(e)
        per = {cid[:12]: (after.get(cid) or 0) - (before.get(cid) or 0) for cid in after}
        check(len(per) == 3 and all(v > 0 for v in per.values()),
              "every gateway counted requests of the game: %s" % per)
        ngx = nginx_requests(e, bal)
        note("balancer requests during the game: %s" % ((ngx - ngx0) if ngx and ngx0 is not None else "?"))

        # -- figures: calls per gateway behind the balancer, and CPU per call
        # of the balancer next to a gateway's, with h2load at a fixed rate
        # (bounded: 10,000 calls per method).
        if shutil.which("h2load"):
            c = ec.Edge(target)
            token = c.call("Login", handle=handle, password=password).token
            c.close()
            state = os.path.join(tmp, "getstate.bin")
            body = ec.edge_pb2.GameRef(game_id=gid).SerializeToString()
            with open(state, "wb") as f:
                f.write(b"\0" + len(body).to_bytes(4, "big") + body)
            health = os.path.join(tmp, "health.bin")
            with open(health, "wb") as f:
                f.write(b"\0\0\0\0\0")
            gws = containers(e, "gateway")
            for name, path, data, hdr in (("health", "/grpc.health.v1.Health/Check", health, []),
                                          ("getstate", "/scrabble.v1.Edge/GetState", state,
                                           ["-H", "authorization: Bearer " + token])):
                before = gateway_calls(e)
                ngx0, cpu_b0 = nginx_requests(e, bal), cpu_ns(e, bal)
                cpu_g0 = {g: cpu_ns(e, g) for g in gws}
                r = e.run(["h2load", "-n", "10000", "-c", "4", "-m", "4", "-t", "1", "--rps=250", "-d", data,
                           "-H", "content-type: application/grpc", "-H", "te: trailers"] + hdr
                          + ["http://%s%s" % (target, path)], timeout=300)
                after = gateway_calls(e)
                ngx1, cpu_b1 = nginx_requests(e, bal), cpu_ns(e, bal)
                cpu_g1 = {g: cpu_ns(e, g) for g in gws}
                ok = re.search(r"requests: .* (\d+) succeeded", r.stdout)
                per = [(after.get(g) or 0) - (before.get(g) or 0) for g in gws]
                note("h2load %s: %s" % (name, ok.group(0) if ok else r.stdout[-300:]))
                if per and min(per) > 0:
                    mean = sum(per) / len(per)
                    figure("%s_calls_per_gateway" % name, ",".join("%d" % v for v in per))
                    figure("%s_gateway_spread_pct" % name, "%.1f" % (100.0 * (max(per) - min(per)) / mean))
                    check((max(per) - min(per)) / mean <= 0.10,
                          "%s: calls per gateway even within 10%% (%s)" % (name, per))
                if None not in (ngx0, ngx1, cpu_b0, cpu_b1) and ngx1 > ngx0:
                    figure("%s_balancer_cpu_us_per_call" % name, "%.1f" % ((cpu_b1 - cpu_b0) / 1e3 / (ngx1 - ngx0)))
                    g = gws[0]
                    if cpu_g0.get(g) is not None and cpu_g1.get(g) is not None and per[0] > 0:
                        figure("%s_gateway_cpu_us_per_call" % name,
                               "%.1f" % ((cpu_g1[g] - cpu_g0[g]) / 1e3 / per[0]))

        if prom_up:
            t0 = time.time()
            check_prometheus(e, prom_port)
            figure("prometheus_checks_s", "%.1f" % (time.time() - t0))
        # Removed before up.sh runs again: it would find the published
        # Prometheus port taken.
        e.compose("--profile", "observability", "rm", "-s", "-f", "-v", "prometheus", timeout=120)

        # -- the load-test profile, briefly
        before = gateway_calls(e)
        r = e.compose("--profile", "loadtest", "run", "-T", "--rm",
                      "-e", "SCRABBLE_LOADTEST_STEPS=20", "-e", "SCRABBLE_LOADTEST_STEP_DURATION=20s",
                      "loadtest", timeout=300)
        check(r.returncode == 0, "the load-test profile ran through the balancer (exit %d)%s"
              % (r.returncode, "" if r.returncode == 0 else ": " + (r.stdout + r.stderr)[-600:]))
        after = gateway_calls(e)
        per = [(after.get(c) or 0) - (before.get(c) or 0) for c in after]
        check(len(per) == 3 and min(per) > 0, "the load test reached every gateway: %s" % per)
        figure("loadtest_calls_per_gateway", ",".join("%d" % v for v in per))

        # -- a third game-svc: the games override, named once in COMPOSE_FILE
        # (compose/.env in the recipe) so every later command includes it
        games = os.path.join(tmp, "docker-compose.games.yml")
        r = e.run(["./games.sh", "3"], timeout=60)
        with open(games, "w") as f:
            f.write(r.stdout)
        e.env["COMPOSE_FILE"] += ":" + games
        r = e.run(["./up.sh"], timeout=600)
        check(r.returncode == 0 and len(containers(e, "game-svc-2")) == 1,
              "games override: game-svc-2 runs healthy (COMPOSE_FILE=...:docker-compose.games.yml, ./up.sh)")

        def gateway_lists():
            return {inspect(e, g, "{{range .Config.Env}}{{println .}}{{end}}").split("SCRABBLE_GATEWAY_GAMES=")[-1]
                    .split("\n")[0] for g in containers(e, "gateway")}

        want = {"game-svc-0:7100,game-svc-1:7100,game-svc-2:7100"}
        check(gateway_lists() == want, "every gateway lists the 3 instances: %s" % gateway_lists())

        # -- the upgrade recipe keeps the replicas: docker-compose build && ./up.sh
        t0 = time.time()
        r = e.compose("build", timeout=1800)
        figure("image_build_s_cached", "%.1f" % (time.time() - t0))
        check(r.returncode == 0, "upgrade: docker-compose build (cached)")
        r = e.run(["./up.sh"], timeout=600)
        check(r.returncode == 0, "upgrade: ./up.sh")
        check(len(containers(e, "gateway")) == 3, "after the upgrade 3 gateways still run")
        check(len(containers(e, "game-svc-2")) == 1 and gateway_lists() == want,
              "after the upgrade game-svc-2 still runs and every gateway lists it")
        c = ec.Edge(target)
        try:
            c.call("Login", handle="nobody-%d" % os.getpid(), password="x" * 12)
        except ec.CallError as err:
            check(err.code.name == "UNAUTHENTICATED", "the single address answers after the upgrade (%s)" % err.code.name)
        c.close()

        # -- backup and restore (the recipe of docs/OPERATIONS.md)
        dump = os.path.join(tmp, "scrabble.dump")
        r = e.run(["bash", "-c", "docker-compose exec -T -u postgres postgres pg_dump -U postgres -Fc scrabble > '%s'"
                   % dump], timeout=300)
        check(r.returncode == 0 and os.path.getsize(dump) > 0, "backup: pg_dump of the scrabble database")
        services = ["balancer", "gateway", "game-svc-0", "game-svc-1", "game-svc-2", "store-svc"]
        r1 = e.compose("stop", *services, timeout=300)
        r2 = e.run(["bash", "-c", "docker-compose exec -T -u postgres postgres pg_restore -U postgres -d scrabble "
                    "--clean --if-exists --single-transaction < '%s'" % dump], timeout=300)
        r3 = e.compose("start", *reversed(services), timeout=300)
        r4 = e.run(["./wait.sh"], timeout=300)
        check(all(x.returncode == 0 for x in (r1, r2, r3, r4)), "restore: stop, pg_restore, start, healthy (%s)"
              % ([x.returncode for x in (r1, r2, r3, r4)], ))
        c = ec.Edge(target)
        try:
            c.token = c.call("Login", handle=handle, password=password).token
            st = c.call("GetState", game_id=gid)
            check(st.status == 2 and st.seq > 0, "after the restore the finished game is there (seq %d)" % st.seq)
        except ec.CallError as err:
            check(False, "after the restore: %s" % err)
        c.close()

        # -- down after scaling leaves nothing
        r = e.compose(*PROFILES, "down", "-v", "--remove-orphans", timeout=300)
        check(r.returncode == 0, "docker-compose down -v after scaling")
        label = "label=com.docker.compose.project=" + PROJECT
        left = {kind: e.run(["docker", kind, "ls", "-q", "--filter", label] + (["-a"] if kind == "container" else []),
                            timeout=30).stdout.split() for kind in ("container", "network", "volume")}
        check(all(not v for v in left.values()), "nothing of the project is left: %s" % left)
    except Exception as exc:  # report, then clean up below
        check(False, "unexpected: %r" % (exc,))
    finally:
        if listener is not None:
            listener.close()
        e.compose(*PROFILES, "down", "-v", "--remove-orphans", timeout=300)
        # The image is this test's build cache (kept); an older build it
        # replaced is not, nor are superseded build stages (untagged,
        # labelled by the Dockerfile): only the newest is the next build's
        # compile cache.
        now = e.run(["docker", "images", "-q", IMAGE], timeout=30).stdout.strip()
        if built_before and now and built_before != now:
            e.run(["docker", "rmi", built_before], timeout=120)
        prune_build_stages(e)
        stop_dockerd(dockerd)
        shutil.rmtree(tmp, ignore_errors=True)
        figure("engine_test_total_s", "%.0f" % (time.time() - t_start))
    if failures:
        print("%d failed" % len(failures))
        return 1
    print("PASS: compose on a real engine")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Checks compose/ without a Docker engine.

`docker-compose config` validates and renders compose/docker-compose.yml
(plain, with --profile loadtest, and merged with a compose/games.sh
override); the rendered YAML must have every service, a health check per
service (the gRPC health probe on the service's own port for ours),
CPU and memory limits, start-up ordered on health, a consistent game-svc
instance list, and environment variables that are real flags of the
binaries (checked against `--help` when the binaries are built). The
Dockerfile and .dockerignore get a few structural checks.

Exit 0 pass, 1 fail, 77 skipped (docker-compose not installed).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# service -> (cpus, mem_limit); see docs/OPERATIONS.md, "Sizing".
LIMITS = {
    "postgres": (1.0, "1g"),
    "redis": (0.25, "128m"),
    "store-svc": (0.5, "256m"),
    "game-svc-0": (1.0, "512m"),
    "game-svc-1": (1.0, "512m"),
    "gateway": (0.5, "256m"),
    "balancer": (0.5, "128m"),
    "certs": (0.5, "64m"),
    "loadtest": (1.0, "512m"),
}
# Our services: binary, env prefix, gRPC port.
OURS = {
    "store-svc": ("store-svc", "SCRABBLE_STORE_", 7200),
    "game-svc": ("game-svc", "SCRABBLE_GAME_", 7100),
    "gateway": ("gateway", "SCRABBLE_GATEWAY_", 7000),
}

failures = []
EMPTY_ENV = os.path.join(tempfile.gettempdir(), "scrabble-compose-test-empty.env")
open(EMPTY_ENV, "a").close()


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def compose(args, compose_dir, *extra):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    # An empty --env-file: an operator's compose/.env must not change what is checked.
    cmd = ["docker-compose", "--env-file", EMPTY_ENV] + extra[0] + list(extra[1:])
    return subprocess.run(cmd, cwd=compose_dir, env=env, capture_output=True, text=True, timeout=60)


def run_config(compose_dir, files, profile=None, quiet=False):
    cmd = []
    for f in files:
        cmd += ["-f", f]
    if profile:
        cmd += ["--profile", profile]
    cmd += ["config"] + (["-q"] if quiet else [])
    r = compose(None, compose_dir, cmd)
    if r.returncode != 0:
        failures.append("docker-compose %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
        return None
    return r.stdout


def flags_of(bin_dir, binary, prefix):
    """The env twins a built binary accepts, from its --help; None when not built."""
    path = os.path.join(bin_dir, binary)
    if not os.access(path, os.X_OK):
        return None
    r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
    return set(re.findall(r"\b(%s[A-Z0-9_]+)" % re.escape(prefix), r.stdout + r.stderr))


def norm_mem(v):
    return str(v).lower().replace("b", "") if v is not None else None


def kind_of(name):
    return "game-svc" if name.startswith("game-svc-") else name


def check_services(cfg, bin_dir, game_count):
    import yaml
    doc = yaml.safe_load(cfg)
    svcs = doc.get("services", {})
    want = ["certs", "postgres", "redis", "store-svc", "gateway", "balancer", "loadtest"] + ["game-svc-%d" % i for i in range(game_count)]
    for s in want:
        check(s in svcs, "service %s is missing" % s)
    games = sorted((s for s in svcs if s.startswith("game-svc-")), key=lambda s: int(s.split("-")[-1]))
    check(len(games) == game_count, "expected %d game-svc services, found %s" % (game_count, games))
    known = {}
    for name, s in svcs.items():
        # limits
        cpus, mem = LIMITS.get(name, LIMITS.get("game-svc-0") if name.startswith("game-svc-") else (None, None))
        check(s.get("cpus") is not None, "%s: no cpus limit" % name)
        check(s.get("mem_limit") is not None, "%s: no mem_limit" % name)
        if cpus is not None and s.get("cpus") is not None:
            check(abs(float(s["cpus"]) - cpus) < 1e-9, "%s: cpus %s, expected %s" % (name, s["cpus"], cpus))
            check(norm_mem(s.get("mem_limit")) == norm_mem(mem), "%s: mem_limit %s, expected %s" % (name, s.get("mem_limit"), mem))
        # health checks on every long-running service
        if name == "loadtest":
            check(s.get("profiles") == ["loadtest"], "loadtest: profiles %s, expected [loadtest]" % s.get("profiles"))
            check(s.get("command", [None])[:2] == ["loadtest", "run"], "loadtest: command %s" % s.get("command"))
            env = s.get("environment", {})
            # Through the single client address, on the private container
            # network, which the driver admits only when told explicitly.
            check(env.get("SCRABBLE_LOADTEST_TARGET") == "balancer:7000", "loadtest: target %s, expected balancer:7000" % env.get("SCRABBLE_LOADTEST_TARGET"))
            check(str(env.get("SCRABBLE_LOADTEST_ALLOW_PRIVATE")) == "true", "loadtest: SCRABBLE_LOADTEST_ALLOW_PRIVATE is not true")
            check((s.get("depends_on") or {}).get("balancer", {}).get("condition") == "service_healthy", "loadtest: does not wait for a healthy balancer")
            check(s.get("restart") in ("no", None), "loadtest: must not restart (one-shot)")
            continue
        if name == "certs":
            # The one-shot identity maker: its CA key stays in its own volume.
            check(s.get("command") == ["certs-init.sh"], "certs: command %s" % s.get("command"))
            check(s.get("restart") in ("no", None), "certs: must not restart (one-shot)")
            vols = [str(v.get("source") if isinstance(v, dict) else v).split(":")[0] for v in s.get("volumes") or []]
            check(sorted(vols) == ["certs-ca", "certs-game-svc", "certs-gateway", "certs-store-svc"],
                  "certs: volumes %s" % vols)
            continue
        if name in ("prometheus", "grafana"):
            # Opt-in, official images, loopback only (docs/OPERATIONS.md, "Alerts").
            check(s.get("profiles") == ["observability"], "%s: profiles %s, expected [observability]" % (name, s.get("profiles")))
            img = {"prometheus": "prom/prometheus:", "grafana": "grafana/grafana:"}[name]
            check(str(s.get("image", "")).startswith(img), "%s: image %s, expected %s*" % (name, s.get("image"), img))
            for p in s.get("ports") or []:
                ip = p.get("host_ip") if isinstance(p, dict) else str(p).split(":")[0]
                check(ip == "127.0.0.1", "%s: port %s not on loopback" % (name, p))
            check(bool((s.get("healthcheck") or {}).get("test")), "%s: no healthcheck" % name)
            if name == "grafana":
                # No well-known admin password: secrets.sh generates it.
                env = s.get("environment") or {}
                check("GF_SECURITY_ADMIN_PASSWORD" not in env, "grafana: admin password set in the environment")
                check(env.get("GF_SECURITY_ADMIN_PASSWORD__FILE") == "/run/secrets/grafana-admin.pass",
                      "grafana: admin password not read from the grafana-admin.pass secret")
                srcs = [x.get("source") if isinstance(x, dict) else x for x in s.get("secrets") or []]
                check(srcs == ["grafana-admin.pass"], "grafana: secrets %s" % srcs)
            continue
        check("profiles" not in s, "%s: has profiles %s (only loadtest and observability should)" % (name, s.get("profiles")))
        hc = s.get("healthcheck") or {}
        test = hc.get("test") or []
        check(bool(test), "%s: no healthcheck" % name)
        k = kind_of(name)
        if k in OURS:
            binary, prefix, port = OURS[k]
            probe = ["CMD", "grpc-health-probe", "-addr", "127.0.0.1:%d" % port]
            if k != "gateway":  # internal ports take the probe identity only
                probe += ["-certs-dir", "/var/lib/scrabble/certs"]
            check(test == probe,
                  "%s: healthcheck %s is not the gRPC health probe on 127.0.0.1:%d" % (name, test, port))
            env0 = s.get("environment", {})
            check(env0.get(prefix + "CERTS_DIR") == "/var/lib/scrabble/certs",
                  "%s: %sCERTS_DIR is %s" % (name, prefix, env0.get(prefix + "CERTS_DIR")))
            vols = [(v.get("source"), v.get("target"), v.get("read_only")) if isinstance(v, dict)
                    else tuple(str(v).split(":")) for v in s.get("volumes") or []]
            check(len(vols) == 1 and vols[0][0] == "certs-" + k and vols[0][1] == "/var/lib/scrabble/certs",
                  "%s: must mount only its own identity volume certs-%s (%s)" % (name, k, vols))
            check(not any("insecure" in str(v).lower() for v in env0.values()) and
                  not any("INSECURE" in str(var) for var in env0), "%s: insecure-internal is set" % name)
            check(s.get("command") == [binary], "%s: command %s, expected [%s]" % (name, s.get("command"), binary))
            env = s.get("environment", {})
            check(env.get(prefix + "LISTEN") == "0.0.0.0:%d" % port, "%s: %sLISTEN is %s" % (name, prefix, env.get(prefix + "LISTEN")))
            deps = s.get("depends_on") or {}
            check(deps.get("certs", {}).get("condition") == "service_completed_successfully",
                  "%s: does not wait for the certs one-shot" % name)
            for dep, cond in deps.items():
                if dep != "certs":
                    check(cond.get("condition") == "service_healthy", "%s: depends on %s without service_healthy" % (name, dep))
            if binary not in known:
                known[binary] = flags_of(bin_dir, binary, prefix)
            if known[binary] is not None:
                for var in env:
                    if var.startswith("SCRABBLE_"):
                        check(var in known[binary], "%s: %s is not a flag of %s (see %s --help)" % (name, var, binary, binary))
            if k == "game-svc":
                idx = name.split("-")[-1]
                check(str(env.get("SCRABBLE_GAME_INSTANCE")) == idx, "%s: SCRABBLE_GAME_INSTANCE is %s" % (name, env.get("SCRABBLE_GAME_INSTANCE")))
        elif name == "postgres":
            check("pg_isready" in " ".join(test), "postgres: healthcheck should use pg_isready")
        elif name == "redis":
            check("ping" in " ".join(test), "redis: healthcheck should ping")
    gw = svcs.get("gateway", {})
    lst = str(gw.get("environment", {}).get("SCRABBLE_GATEWAY_GAMES", ""))
    check(lst == ",".join("%s:7100" % g for g in games),
          "gateway: SCRABBLE_GATEWAY_GAMES %r does not list %s in order" % (lst, games))
    for g in games:
        check(g in (gw.get("depends_on") or {}), "gateway does not wait for %s" % g)
    # One client address: only the balancer publishes a port, on loopback
    # unless told otherwise; the gateways are replicas behind it, their
    # count in the file (so an upgrade's `up -d` keeps it).
    # (The opt-in observability services, official images, publish their
    # own UIs on loopback: checked above.)
    observability = ("prometheus", "grafana")
    for name, s in svcs.items():
        if name != "balancer" and name not in observability:
            check(not s.get("ports"), "%s publishes host ports %s (only the balancer may)" % (name, s.get("ports")))
    bal = svcs.get("balancer", {})
    check(bal.get("command") == ["balancer.sh"], "balancer: command %s" % bal.get("command"))
    check([str(p) for p in bal.get("ports") or []] == ["127.0.0.1:7000:7000/tcp"],
          "balancer: ports %s, expected 127.0.0.1:7000:7000/tcp" % bal.get("ports"))
    check((bal.get("healthcheck") or {}).get("test") == ["CMD", "grpc-health-probe", "-addr", "127.0.0.1:7000"],
          "balancer: health check is not the gRPC probe through nginx")
    check((bal.get("depends_on") or {}).get("gateway", {}).get("condition") == "service_healthy",
          "balancer: does not wait for healthy gateways")
    check(str(gw.get("scale")) == "2", "gateway: scale %s, expected the file's default of 2" % gw.get("scale"))
    # The image is built once: one service has build:, all of ours name it.
    builders = sorted(n for n, s in svcs.items() if s.get("build"))
    check(builders == ["certs"], "services with build: %s, expected only certs (built once)" % builders)
    for name, s in svcs.items():
        if name not in ("postgres", "redis") + observability:
            check(s.get("image") == "scrabble:dev", "%s: image %s, expected scrabble:dev" % (name, s.get("image")))
    return svcs


def check_stack(path):
    """compose/docker-stack.yml: the services of the compose file but the
    one-shots, each with swarm limits, dnsrr endpoints and a health check;
    each of ours gets its own identity as secrets and nobody else's; only
    the balancer publishes, and the backend overlay is encrypted."""
    import yaml
    doc = yaml.safe_load(open(path))
    svcs = doc.get("services", {})
    want = {"postgres", "redis", "store-svc", "game-svc-0", "game-svc-1", "gateway", "balancer"}
    check(set(svcs) == want, "stack services %s, expected %s" % (sorted(svcs), sorted(want)))
    idents = {"store-svc": "store-svc", "game-svc-0": "game-svc", "game-svc-1": "game-svc", "gateway": "gateway"}
    for name, s in svcs.items():
        dep = s.get("deploy") or {}
        check(dep.get("endpoint_mode") == "dnsrr", "stack %s: endpoint_mode %s, expected dnsrr" % (name, dep.get("endpoint_mode")))
        lim = (dep.get("resources") or {}).get("limits") or {}
        check(lim.get("cpus") and lim.get("memory"), "stack %s: no deploy.resources.limits" % name)
        check(bool((s.get("healthcheck") or {}).get("test")), "stack %s: no healthcheck" % name)
        check(name == "balancer" or not s.get("ports"), "stack %s publishes ports" % name)
        sources = {x["source"] if isinstance(x, dict) else x for x in s.get("secrets") or []}
        keys = {x for x in sources if x.endswith(".key")}
        if name in idents:
            ident = idents[name]
            check(keys == {ident + ".key", "probe.key"}, "stack %s: keys %s, expected only its own" % (name, sorted(keys)))
            env = s.get("environment") or {}
            check(any(k.endswith("_CERTS_DIR") and v == "/run/secrets" for k, v in env.items()),
                  "stack %s: certs dir is not /run/secrets" % name)
        else:
            check(not keys, "stack %s: holds keys %s" % (name, sorted(keys)))
    bal = svcs.get("balancer", {})
    check((bal.get("environment") or {}).get("BALANCER_UPSTREAM") == "tasks.gateway:7000",
          "stack balancer: upstream is not tasks.gateway:7000")
    check(str((svcs.get("gateway", {}).get("deploy") or {}).get("replicas")) == "${GATEWAY_REPLICAS:-2}",
          "stack gateway: replicas not from GATEWAY_REPLICAS")
    net = (doc.get("networks") or {}).get("backend") or {}
    check(net.get("driver") == "overlay" and "encrypted" in (net.get("driver_opts") or {}),
          "stack: the backend network is not an encrypted overlay")
    check("ca.key" not in (doc.get("secrets") or {}), "stack: the CA key must not be a secret")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--bin-dir", required=True)
    args = ap.parse_args()
    if shutil.which("docker-compose") is None:
        print("SKIP: docker-compose is not installed (apt-get install docker-compose)")
        return SKIP
    cdir = os.path.join(args.repo, "compose")
    base = "docker-compose.yml"

    print("-- docker-compose config -q")
    run_config(cdir, [base], quiet=True)
    print("-- docker-compose --profile loadtest config -q")
    run_config(cdir, [base], profile="loadtest", quiet=True)
    print("-- rendered configuration: services, health checks, limits, flags")
    out = run_config(cdir, [base], profile="loadtest")
    if out is not None:
        check_services(out, args.bin_dir, 2)
    if flags_of(args.bin_dir, "gateway", "SCRABBLE_GATEWAY_") is None:
        print("   (binaries not built in %s: environment names not checked against --help)" % args.bin_dir)

    print("-- games.sh 4 override")
    r = subprocess.run([os.path.join(cdir, "games.sh"), "4"], capture_output=True, text=True)
    if check(r.returncode == 0, "games.sh 4 failed: %s" % r.stderr):
        with tempfile.NamedTemporaryFile("w", suffix=".yml", dir=cdir, prefix=".test-games-", delete=False) as f:
            f.write(r.stdout)
        try:
            out = run_config(cdir, [base, os.path.basename(f.name)], profile="loadtest")
            if out is not None:
                check_services(out, args.bin_dir, 4)
        finally:
            os.unlink(f.name)
    r = subprocess.run([os.path.join(cdir, "games.sh"), "1"], capture_output=True, text=True)
    check(r.returncode == 2, "games.sh 1 should be a usage error (exit 2), got %d" % r.returncode)

    print("-- docker-stack.yml (swarm)")
    check_stack(os.path.join(cdir, "docker-stack.yml"))

    print("-- Dockerfile and .dockerignore")
    df = open(os.path.join(cdir, "Dockerfile")).read()
    stages = re.findall(r"^FROM\s+(\S+)\s+AS\s+(\S+)", df, re.M | re.I)
    check([s[1] for s in stages] == ["build", "runtime"], "Dockerfile stages %s, expected build then runtime" % stages)
    runtime = df[df.lower().index(" as runtime"):] if " as runtime" in df.lower() else ""
    check(re.search(r"apt-get install[^\n]*\n(?:[^\n]*\\\n)*", runtime) is not None, "runtime stage installs no libraries")
    check(not re.search(r"\b[a-z0-9.+-]+-dev\b", runtime), "runtime stage installs -dev packages")
    check("wamerican.kwg" in runtime, "runtime stage lacks the lexicon")
    check("grpc-health-probe" in df, "the image lacks grpc-health-probe")
    # Offline builds: a syntax directive makes BuildKit fetch a frontend.
    check(not re.search(r"^#\s*syntax\s*=", df, re.M | re.I), "Dockerfile has a # syntax= line (needs a registry)")
    # Each apt step cleans up explicitly, not through the base image's hook.
    for m in re.finditer(r"apt-get install[^\n]*\n(?:[^\n]*\\\n)*[^\n]*", df):
        check("apt-get clean" in m.group(0) and "/var/lib/apt/lists" in m.group(0),
              "an apt-get install step does not clean up explicitly: %s" % m.group(0)[:60])
    check("nginx" in runtime and "nginx.conf" in runtime, "the runtime stage lacks nginx and its config (balancer)")
    di = open(os.path.join(args.repo, ".dockerignore")).read().split("\n")
    for pat in (".git", "build-*", "var"):
        check(pat in di, ".dockerignore does not exclude %s" % pat)

    if failures:
        for f in failures:
            print("FAIL: " + f, file=sys.stderr)
        return 1
    print("PASS: compose")
    return 0


if __name__ == "__main__":
    sys.exit(main())

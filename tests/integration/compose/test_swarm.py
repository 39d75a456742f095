#!/usr/bin/python3
"""compose/docker-stack.yml on a single-node Docker Swarm.

The recipe of docs/OPERATIONS.md ("Swarm"): secrets (passwords from
secrets.sh, identities from gen-certs.sh) become swarm secrets, the stack
is deployed with `docker stack deploy`, stack-wait.sh waits for every
service, and the single client address answers: an account registered
through it logs in (gateway -> store-svc -> Postgres over mutual TLS).
Scaling is the file's replica setting redeployed (GATEWAY_REPLICAS=3),
which the balancer follows (tasks.gateway). `docker stack rm` leaves no
service, secret, config or network of the stack.

It initialises a swarm only when the engine is in none, and leaves it at
the end; an engine already in a swarm is someone else's: skipped. It
starts dockerd only when none answers and stops only that one. The image
is the one integration.compose.engine caches (scrabble:enginetest), built
with `docker-compose build` when missing.

Exit 0 pass, 1 fail, 77 skipped.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_engine as te  # noqa: E402

STACK = "scrabble-swarmtest"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    for tool in ("docker-compose", "dockerd"):
        if shutil.which(tool, path="/usr/bin:/usr/sbin:" + os.environ.get("PATH", "")) is None:
            te.skip("%s is not installed (scripts/install-deps.sh installs docker.io and docker-compose)" % tool)
    lock = te.engine_lock()  # noqa: F841 (held until exit)
    tmp = tempfile.mkdtemp(prefix="scrabble-swarm-")
    secrets = os.path.join(tmp, "secrets")
    port = te.free_port()
    e = te.Env(repo, secrets, port, te.free_port())
    t_start = time.time()
    dockerd = te.start_dockerd(e.env, tmp)
    made_swarm = had_gwbridge = False
    try:
        state = e.run(["docker", "info", "-f", "{{.Swarm.LocalNodeState}}"], timeout=30).stdout.strip()
        if state != "inactive":
            te.skip("the engine is in a swarm already (%s): not ours to change" % state)
        had_gwbridge = e.run(["docker", "network", "inspect", "docker_gwbridge"], timeout=30).returncode == 0
        r = e.run(["docker", "swarm", "init", "--advertise-addr", "127.0.0.1"], timeout=120)
        if r.returncode != 0:
            te.skip("docker swarm init failed here: %s" % r.stderr.strip()[-300:])
        made_swarm = True
        node = e.run(["docker", "node", "ls", "-q"], timeout=30).stdout.split()[0]
        # The node that keeps the Postgres and Redis volumes (the file's
        # placement constraint).
        e.run(["docker", "node", "update", "--label-add", "scrabble.db=true", node], timeout=30, check_rc=True)

        r = e.run([os.path.join(te.HERE, "images.sh")], timeout=1500, cwd=te.HERE)
        if not te.check(r.returncode == 0, "base images and stand-ins ready (images.sh)"):
            print(r.stderr[-2000:])
            return 1
        if not e.run(["docker", "images", "-q", te.IMAGE], timeout=30).stdout.strip():
            r = e.compose("build", timeout=1800)
            te.check(r.returncode == 0, "docker-compose build (no cached image)")
        r = e.run([os.path.join(e.compose_dir, "secrets.sh")], timeout=120)
        te.check(r.returncode == 0, "secrets.sh: the passwords")
        r = e.run([os.path.join(repo, "scripts", "gen-certs.sh"), os.path.join(secrets, "certs")], timeout=120)
        te.check(r.returncode == 0, "gen-certs.sh: the service identities")

        deploy = ["docker", "stack", "deploy", "-c", "docker-stack.yml", STACK]
        t0 = time.time()
        r = e.run(deploy, timeout=300)
        if not te.check(r.returncode == 0, "docker stack deploy"):
            print(r.stdout[-2000:], r.stderr[-2000:])
            return 1
        r = e.run(["./stack-wait.sh", STACK, "300"], timeout=360)
        if not te.check(r.returncode == 0, "every service of the stack runs healthy (stack-wait.sh)"):
            print(r.stderr[-3000:])
            return 1
        te.figure("swarm_deploy_to_ready_s", "%.1f" % (time.time() - t0))

        sys.path.insert(0, os.path.join(repo, "tests", "interop"))
        import edge_client as ec
        target = "127.0.0.1:%d" % port
        attempt = [0]

        def register():
            # Until the gateways' channels to store-svc are up (swarm starts
            # everything at once), Register answers UNAVAILABLE; each try
            # uses a new handle, and a throttled try (every call comes from
            # the balancer's one address) is simply retried later.
            attempt[0] += 1
            handle = "swarm%d-%d" % (os.getpid(), attempt[0])
            c = ec.Edge(target)
            try:
                return handle, c.call("Register", handle=handle, password="correct horse swarm")
            except ec.CallError as err:
                if err.code.name in ("UNAVAILABLE", "RESOURCE_EXHAUSTED"):
                    return None
                raise
            finally:
                c.close()

        got = te.wait_for(register, 180, "Register through the stack's single address", every=5.0)
        if got is not None:
            handle, reg = got

            # Every gateway must reach store-svc, not only the one that
            # answered Register: a gateway whose first DNS lookup of
            # store-svc failed (swarm starts everything at once) retries
            # with gRPC's reconnect backoff. Two logins in a row succeed
            # only when both gateways do (the balancer alternates).
            def login_twice():
                c = ec.Edge(target)
                try:
                    r = [c.call("Login", handle=handle, password="correct horse swarm") for _ in range(2)]
                except ec.CallError as err:
                    if err.code.name in ("UNAVAILABLE", "RESOURCE_EXHAUSTED"):
                        return None
                    raise
                finally:
                    c.close()
                return r[-1]

            r = te.wait_for(login_twice, 180, "Login through the swarm's balancer, on both gateways", every=7.0)
            te.check(r is not None and r.account_id == reg.account_id and r.token,
                     "registered and logged in through the swarm's balancer (account %d)" % reg.account_id)

        # Scale: the replica count lives in the file, redeployed.
        e.env["GATEWAY_REPLICAS"] = "3"
        r = e.run(deploy, timeout=300)
        te.check(r.returncode == 0, "redeploy with GATEWAY_REPLICAS=3")
        r = e.run(["./stack-wait.sh", STACK, "300"], timeout=360)
        reps = e.run(["docker", "service", "ls", "--filter", "name=%s_gateway" % STACK, "--format", "{{.Replicas}}"],
                     timeout=30).stdout.strip()
        te.check(r.returncode == 0 and reps.startswith("3/3"), "3 gateway replicas run (%s)" % reps)

        def upstreams():
            ids = e.run(["docker", "ps", "-q", "--filter", "label=com.docker.swarm.service.name=%s_balancer" % STACK],
                        timeout=30).stdout.split()
            if not ids:
                return False
            out = e.run(["docker", "exec", ids[0], "cat", "/tmp/nginx/upstream.conf"], timeout=30).stdout
            return len([x for x in out.splitlines() if x.startswith("server ")]) == 3
        te.wait_for(upstreams, 60, "the balancer lists the 3 gateway tasks")
    except Exception as exc:
        te.check(False, "unexpected: %r" % (exc,))
    finally:
        if made_swarm:
            e.run(["docker", "stack", "rm", STACK], timeout=120)
            # stack rm returns before its tasks and networks are gone.
            deadline = time.time() + 120
            label = "label=com.docker.stack.namespace=" + STACK
            while time.time() < deadline:
                left = [x for kind in ("service", "secret", "config", "network")
                        for x in e.run(["docker", kind, "ls", "-q", "--filter", label], timeout=30).stdout.split()]
                left += e.run(["docker", "ps", "-aq", "--filter", label], timeout=30).stdout.split()
                if not left:
                    break
                time.sleep(2)
            te.check(not left, "docker stack rm left nothing of the stack: %s" % left)
            vols = e.run(["docker", "volume", "ls", "-q", "--filter", label], timeout=30).stdout.split()
            for v in vols:
                e.run(["docker", "volume", "rm", v], timeout=60)
            e.run(["docker", "swarm", "leave", "--force"], timeout=120)
            # swarm init made the bridge to the overlay networks; leave keeps it.
            if not had_gwbridge:
                e.run(["docker", "network", "rm", "docker_gwbridge"], timeout=60)
        te.stop_dockerd(dockerd)
        shutil.rmtree(tmp, ignore_errors=True)
        te.figure("swarm_test_total_s", "%.0f" % (time.time() - t_start))
    if te.failures:
        print("%d failed" % len(te.failures))
        return 1
    print("PASS: the stack on a single-node swarm")
    return 0


if __name__ == "__main__":
    sys.exit(main())

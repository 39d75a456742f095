"""The services with Redis credentials, before and after a Redis restart
(test_credentials.sh starts the stack; environment: GATEWAY_PORT,
GATEWAY_METRICS_PORT, REDIS_DIR, REDIS_PORT, GATEWAY_LOG, SECRETS_DIR).

Before: drafts round-trip (game-svc as ACL user drafts), an invitation event
and a chat event (both published by store-svc's event relay as publisher)
reach a Subscribe stream (the gateway's subscriber).
Then Redis restarts, losing every connection. After the gateway has
resubscribed (its log says so a second time), each of those paths works on
its first call: each client re-authenticated on its reconnect, and the
connections that were up before are retried once instead of failing the
call."""
import os
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import Edge, common_pb2  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
MPORT = int(os.environ["GATEWAY_METRICS_PORT"])
REPO = os.path.join(os.path.dirname(__file__), "..", "..", "..")
ET = common_pb2


def player(prefix):
    handle = f"{prefix}{uuid.uuid4().hex[:8]}"
    e = Edge(TARGET)
    r = e.call("Register", handle=handle, password="correct horse battery")
    e.token, e.account_id, e.handle = r.token, r.account_id, handle
    return e


def subscribed_count():
    with open(os.environ["GATEWAY_LOG"]) as f:
        return sum(1 for line in f if "event=redis_subscribed" in line)


def wait_for(pred, what, tries=300):
    """Polls a readiness condition (bounded; not a timing assertion)."""
    for _ in range(tries):
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def exercise(a, b, sb, game_id, label):
    d = a.call("SaveDraft", game_id=game_id, rack_order=label)
    assert d.rack_order == label, d
    got = a.call("GetDraft", game_id=game_id)
    assert got.rack_order == label, got
    inv = a.call("Invite", invitee_handles=[b.handle])
    ev = sb.next(want=ET.EVENT_TYPE_INVITATION)
    assert ev.invitation.invitation_id == inv.invitation_id, ev
    a.call("SendChat", game_id=game_id, text=label)
    ev = sb.next(want=ET.EVENT_TYPE_CHAT)
    assert ev.game_id == game_id, ev
    print(f"ok - {label}: draft saved and read, invitation and chat events delivered")


def main():
    a, b = player("ca"), player("cb")
    base = ec.metric(MPORT, "gateway_subscribers") or 0
    sa, sb = a.subscribe(), b.subscribe()
    ec.wait_metric(MPORT, "gateway_subscribers", lambda v: v >= base + 2)
    wait_for(lambda: subscribed_count() >= 1, "the gateway subscribed")
    inv = a.call("Invite", invitee_handles=[b.handle])
    sb.next(want=ET.EVENT_TYPE_INVITATION)
    r = b.call("RespondInvitation", invitation_id=inv.invitation_id, accept=True)
    sa.next(want=ET.EVENT_TYPE_GAME_STARTED)
    exercise(a, b, sb, r.game_id, "before")

    env = dict(os.environ)
    rdir, rport = os.environ["REDIS_DIR"], os.environ["REDIS_PORT"]
    subprocess.run([os.path.join(REPO, "scripts", "redis.sh"), "stop", rdir], env=env, check=True,
                   capture_output=True)
    subprocess.run([os.path.join(REPO, "scripts", "redis.sh"), "start", rdir, rport], env=env, check=True,
                   capture_output=True)
    print("ok - Redis restarted")
    wait_for(lambda: subscribed_count() >= 2, "the gateway resubscribed after the restart")
    print("ok - the gateway re-authenticated and resubscribed")
    # Redis keeps no data across the restart: the draft is gone, not corrupt.
    assert not a.call("GetDraft", game_id=r.game_id).rack_order
    exercise(a, b, sb, r.game_id, "after")
    sa.cancel()
    sb.cancel()


if __name__ == "__main__":
    main()

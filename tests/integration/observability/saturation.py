#!/usr/bin/python3
"""The saturation gauges move with what they measure, on the real binaries
(docs/OPERATIONS.md, "Metrics"). Run by test_metrics_lint.sh on its stack,
whose gateway runs with --subscriber-queue=100000 (so a stream that stops
reading is never cut off here, and its backlog stays put to be measured).
Environment: GATEWAY_PORT, GATEWAY_METRICS_PORT, GAME_METRICS_PORT,
STORE_METRICS_PORT, REDIS_PORT, REDIS_DIR (stopped and started again with
scripts/redis.sh), SECRETS_DIR (Redis ACL passwords).

Every wait is for a condition, bounded; the gateway's watchdog sets its
gauges each second (the auth cache's each 10 s), the drafts thread and
the event relay PING Redis each second when idle.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "interop"))
import edge_client as ec  # noqa: E402
from edge_client import common_pb2  # noqa: E402

TARGET = "127.0.0.1:" + os.environ["GATEWAY_PORT"]
GW = int(os.environ["GATEWAY_METRICS_PORT"])
GAME = int(os.environ["GAME_METRICS_PORT"])
STORE = int(os.environ["STORE_METRICS_PORT"])
REDIS_PORT = int(os.environ["REDIS_PORT"])
REDIS_DIR = os.environ["REDIS_DIR"]
REDIS_SH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "redis.sh")


def ok(msg):
    print("ok - " + msg, flush=True)


def redis_ctl(what):
    args = [REDIS_SH, what, REDIS_DIR] + ([str(REDIS_PORT)] if what == "start" else [])
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def main():
    # Fixed sizes are published as gauges, so a panel can show how full.
    cap = ec.wait_metric(GW, "gateway_auth_cache_capacity_entries", lambda v: v >= 100000)
    limit = ec.wait_metric(GW, "gateway_subscriber_queue_limit_messages", lambda v: v == 100000)
    ok(f"gateway publishes its auth cache size ({cap:.0f}) and stream queue bound ({limit:.0f})")

    # The auth cache counts the sessions it holds.
    before = ec.metric(GW, "gateway_auth_cache_entries") or 0
    p = ec.new_player(TARGET, "sat")
    p.call("GetProfile", account_id=p.account_id)
    v = ec.wait_metric(GW, "gateway_auth_cache_entries", lambda v: v >= before + 1, timeout=30)
    ok(f"gateway_auth_cache_entries counts the new session ({before:.0f} -> {v:.0f})")

    # A stream that stops reading: once its HTTP/2 window is full (about
    # 4 MB here: a thousand 4 KB events), events stay queued in the
    # gateway, and the queue gauges show them.
    slow = ec.Subscription(p, read=False)
    ec.wait_metric(GW, "gateway_subscribers", lambda v: v >= 1)
    big = "x" * 4000
    seq = 0
    while (ec.metric(GW, "gateway_subscriber_queued_max_messages") or 0) < 1:
        assert seq < 20000, "20000 events of 4 KB and the non-reading stream's queue never grew"
        items = [(f"ev:{p.account_id}",
                  common_pb2.Event(type=common_pb2.EVENT_TYPE_CHAT, seq=i, from_handle=big,
                                   event_id=str(10**12 + i)).SerializeToString())
                 for i in range(seq + 1, seq + 129)]
        ec.redis_publish_many(REDIS_PORT, items)
        seq += 128
        try:  # the watchdog samples each second; more events only if it saw none
            ec.wait_metric(GW, "gateway_subscriber_queued_max_messages", lambda v: v >= 1, timeout=2)
        except TimeoutError:
            pass
    mx = ec.metric(GW, "gateway_subscriber_queued_max_messages")
    total = ec.metric(GW, "gateway_subscriber_queued_messages")
    assert total >= mx >= 1 and mx <= seq, (total, mx, seq)
    ok(f"a stream that stopped reading shows in the queue gauges after {seq} events "
       f"(max {mx:.0f}, total {total:.0f})")
    slow.cancel()
    ec.wait_metric(GW, "gateway_subscriber_queued_messages", lambda v: v == 0, timeout=30)
    ok("its backlog leaves the gauges when the stream ends")

    # Postgres: the event relay's own connection is counted with the
    # writer's and the readers'.
    ec.poll("the relay's Postgres connection counted",
            lambda: ec.metric(STORE, "store_db_connections_up", 'role="relay"') == 1)
    ok('store_db_connections_up{role="relay"} is 1')

    # Redis: the drafts connection (game-svc) and the event relay's
    # (store-svc) report their state even while idle.
    ec.wait_metric(GAME, "game_drafts_redis_up", lambda v: v == 1, timeout=30)
    ec.wait_metric(STORE, "store_events_redis_up", lambda v: v == 1, timeout=30)
    ec.wait_metric(GAME, "game_drafts_queued_jobs", lambda v: v == 0)
    ec.wait_metric(GAME, "game_ops_waiting", lambda v: v == 0)
    ok("game_drafts_redis_up and store_events_redis_up are 1 with Redis up")
    redis_ctl("stop")
    ec.wait_metric(GAME, "game_drafts_redis_up", lambda v: v == 0, timeout=30)
    ec.wait_metric(STORE, "store_events_redis_up", lambda v: v == 0, timeout=30)
    ec.wait_metric(GW, "gateway_redis_subscribed", lambda v: v == 0, timeout=30)
    ok("with Redis stopped and no call made, both drop to 0 (and gateway_redis_subscribed)")
    redis_ctl("start")
    ec.wait_metric(GAME, "game_drafts_redis_up", lambda v: v == 1, timeout=30)
    ec.wait_metric(STORE, "store_events_redis_up", lambda v: v == 1, timeout=30)
    ec.wait_metric(GW, "gateway_redis_subscribed", lambda v: v == 1, timeout=30)
    ok("with Redis back, all three return to 1")
    p.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

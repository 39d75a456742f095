/*
 * hold.c — `loadtest hold`: many idle Subscribe streams held open, with
 * per-event delivery accounting (the gateway's "10,000 streams for 5
 * minutes" figure).
 *
 * N seeded players each get a channel of their own (one HTTP/2 connection)
 * and one Subscribe stream, opened at --ramp-rate over --loops rpc_loop
 * threads. A stream counts as open once a handshake event (a NUDGE with
 * seq 0, re-published every second until it arrives) came through it:
 * that proves the gateway registered it, end to end. Then, for
 * --duration, the driver PUBLISHes NUDGE events straight into Redis
 * (channel ev:<account id>, as game-svc does) at --events-per-second,
 * round robin over the accounts; the k-th event to an account carries
 * seq k, so each stream checks that it saw 1, 2, 3, ... in order.
 *
 * Threads: the driver thread opens streams, publishes and samples /proc;
 * stream callbacks run on the loop threads and touch only their own
 * stream's counters (atomics the driver reads).
 *
 * Exit: 0 when every stream opened, none ended early, and every published
 * event arrived once and in order; 1 otherwise (or when it could not run);
 * 2 on bad input.
 */
#include <inttypes.h>
#include <libpq-fe.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "lt.h"
#include "procstat.h"
#include "rpc/cfg.h"
#include "rpc/log.h"
#include "rpc/redis.h"
#include "rpc/rpc.h"
#include "scrabble/v1/common.pb-c.h"
#include "scrabble/v1/edge.pb-c.h"
#include "seed.h"
#include "stats.h"

typedef struct lt_hold_cfg {
    char target[128];
    char pg[512];
    char redis[128];
    char redis_secrets[512];
    char tag[32];
    char secret[128];
    int players;
    int duration_ms;
    int eps;
    int ramp_rate;
    int loops;
    int connect_timeout_ms;
    int drain_ms;
    int progress_ms;
    int gateway_pid;
    bool seed;
    char log_level[16];
} lt_hold_cfg;

static const cfg_option lt_hold_options[] = {
    CFG_STR_OPT(lt_hold_cfg, target, "target", "127.0.0.1:7000", "the gateway (loopback only)"),
    CFG_STR_OPT(lt_hold_cfg, pg, "pg",
                "host=127.0.0.1 port=55432 dbname=scrabble user=scrabble_loadtest",
                "Postgres: seeding and the account ids of the seeded handles"),
    CFG_STR_OPT(lt_hold_cfg, redis, "redis", "127.0.0.1:56379",
                "Redis the gateway subscribes to (events go here)"),
    CFG_STR_OPT(lt_hold_cfg, redis_secrets, "redis-secrets", "var/secrets",
                "directory holding redis-publisher.pass, the ACL password events are "
                "published with (empty: no AUTH)"),
    CFG_STR_OPT(lt_hold_cfg, tag, "tag", "lt", "population tag (see `loadtest seed`)"),
    CFG_STR_OPT(lt_hold_cfg, secret, "secret", "loadtest-local",
                "key the bearer tokens derive from"),
    CFG_INT_OPT(lt_hold_cfg, players, "players", 1, 19000, "10000",
                "streams (one player, one connection each)"),
    CFG_DUR_OPT(lt_hold_cfg, duration_ms, "duration", 1000, 24 * 3600 * 1000, "5m",
                "how long the streams are held with events flowing"),
    CFG_INT_OPT(lt_hold_cfg, eps, "events-per-second", 1, 100000, "1000",
                "events published per second, all accounts together (round robin)"),
    CFG_INT_OPT(lt_hold_cfg, ramp_rate, "ramp-rate", 1, 100000, "500",
                "new connections per second"),
    CFG_INT_OPT(lt_hold_cfg, loops, "loops", 1, 16, "2", "gRPC completion threads"),
    CFG_DUR_OPT(lt_hold_cfg, connect_timeout_ms, "connect-timeout", 1000, 3600000, "2m",
                "bound on the ramp plus the handshakes"),
    CFG_DUR_OPT(lt_hold_cfg, drain_ms, "drain", 100, 600000, "10s",
                "after the last publish, how long to wait for the last deliveries"),
    CFG_DUR_OPT(lt_hold_cfg, progress_ms, "progress", 1000, 600000, "10s", "progress line period"),
    CFG_INT_OPT(lt_hold_cfg, gateway_pid, "gateway-pid", 0, 1 << 30, "0",
                "the gateway's pid (0: the process listening on the --target port)"),
    CFG_BOOL_OPT(lt_hold_cfg, seed, "seed", "true", "seed the population first when it is missing"),
    CFG_STR_OPT(lt_hold_cfg, log_level, "log-level", "warn", "debug|info|warn|error"),
};

/* A stream's life. The driver moves OPEN -> CANCELLING -> OPEN-free only
 * around rpc_client_stream_cancel; on_end waits out a cancel in progress,
 * because the runtime frees the stream right after on_end returns. */
enum { LT_HS_IDLE, LT_HS_OPEN, LT_HS_CANCELLING, LT_HS_ENDED };

typedef struct lt_hold_stream {
    int64_t account_id;
    char auth[64];
    rpc_metadata md;
    rpc_channel *ch;
    rpc_client_stream *sub;
    uint64_t opened_ns, ended_ns;
    atomic_int state;
    atomic_bool confirmed;  /* the handshake event arrived */
    atomic_llong delivered; /* events with seq > 0 */
    atomic_llong out_of_order;
    int64_t last_seq;     /* loop thread only */
    bool cancelled_by_us; /* driver only */
    int end_code;         /* valid once state is ENDED */
    char end_reason[LT_REASON_LEN];
} lt_hold_stream;

typedef struct lt_hold {
    lt_hold_cfg c;
    lt_stop *stop;
    lt_hold_stream *s;
    rpc_loop **loops;
    rpc_redis *redis;  /* ACL user publisher */
    lt_procstat procs; /* [0] gateway, [1] self */
    int opened;        /* streams started */
    uint64_t published, handshakes, publish_unheard;
    int64_t next_event_id; /* ids of the events published here (see lt_hold__publish) */
    uint64_t next_sample, next_progress;
} lt_hold;

/* ------------------------------------------------------------------ */
/* Stream callbacks (loop threads)                                     */

static void lt_hold__on_event(void *arg, ProtobufCMessage *msg)
{
    lt_hold_stream *s = arg;
    const Scrabble__V1__Event *ev = (const void *)msg;
    if (ev->seq == 0) {
        atomic_store(&s->confirmed, true);
        return;
    }
    if (ev->seq != s->last_seq + 1)
        atomic_fetch_add(&s->out_of_order, 1);
    if (ev->seq > s->last_seq)
        s->last_seq = ev->seq;
    atomic_fetch_add(&s->delivered, 1);
}

static void lt_hold__on_end(void *arg, const rpc_status *st)
{
    lt_hold_stream *s = arg;
    s->end_code = st->code;
    snprintf(s->end_reason, sizeof(s->end_reason), "%.47s", st->reason);
    s->ended_ns = lt_now_ns();
    int expect = LT_HS_OPEN;
    /* Bounded: a cancel in progress is one grpc_call_cancel on the driver. */
    for (int i = 0; i < 1000000 && !atomic_compare_exchange_weak(&s->state, &expect, LT_HS_ENDED);
         i++) {
        expect = LT_HS_OPEN;
        sched_yield();
    }
    atomic_store(&s->state, LT_HS_ENDED);
}

/* ------------------------------------------------------------------ */
/* Driver side                                                         */

static void lt_hold__open(lt_hold *h, int i)
{
    lt_hold_stream *s = &h->s[i];
    rpc_channel_opts o = {.own_connection = true};
    s->ch = rpc_channel_create(h->c.target, &o);
    if (s->ch == NULL) {
        s->end_code = GRPC_STATUS_INTERNAL;
        snprintf(s->end_reason, sizeof(s->end_reason), "channel_create");
        atomic_store(&s->state, LT_HS_ENDED);
        return;
    }
    rpc_channel_connect(s->ch);
    Scrabble__V1__SubscribeRequest req = SCRABBLE__V1__SUBSCRIBE_REQUEST__INIT;
    rpc_client_opts opts = {.md = &s->md, .md_count = 1, .loop = h->loops[i % h->c.loops]};
    s->opened_ns = lt_now_ns();
    atomic_store(&s->state, LT_HS_OPEN);
    s->sub = rpc_client_stream_open(s->ch, "/scrabble.v1.Edge/Subscribe", &req.base,
                                    &scrabble__v1__event__descriptor, &opts, lt_hold__on_event,
                                    lt_hold__on_end, s);
    if (s->sub == NULL) {
        s->end_code = GRPC_STATUS_INTERNAL;
        snprintf(s->end_reason, sizeof(s->end_reason), "stream_open");
        atomic_store(&s->state, LT_HS_ENDED);
    }
}

/* Queues one PUBLISH (pipelined; lt_hold__flush reads the replies). */
static void lt_hold__publish(lt_hold *h, int i, int64_t seq)
{
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_NUDGE;
    ev.seq = seq;
    ev.from_handle = "loadtest-hold";
    ev.at_ms = lt_wall_ns() / 1000000;
    /* The gateway takes only events with an id above what each stream has
     * seen (the event log's ids are far smaller): microseconds since the
     * epoch at the first publish, counting up. */
    if (h->next_event_id == 0)
        h->next_event_id = lt_wall_ns() / 1000;
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)h->next_event_id++);
    ev.event_id = id;
    uint8_t buf[160];
    size_t len = scrabble__v1__event__pack(&ev, buf);
    char channel[RPC_REDIS_NAME_MAX];
    rpc_redis_event_channel(channel, sizeof channel, h->s[i].account_id);
    const char *argv[3] = {"PUBLISH", channel, (const char *)buf};
    size_t argvlen[3] = {7, strlen(channel), len};
    redisAppendCommandArgv(rpc_redis_context(h->redis), 3, argv, argvlen);
}

/* Reads n pipelined replies. A PUBLISH nobody received (the gateway's
 * subscriber is not connected) is counted. Returns 0, or -1 when Redis
 * failed. */
static int lt_hold__flush(lt_hold *h, int n)
{
    for (int k = 0; k < n; k++) {
        redisReply *rep = NULL;
        redisContext *c = rpc_redis_context(h->redis);
        if (redisGetReply(c, (void **)&rep) != REDIS_OK || rep == NULL) {
            fprintf(stderr, "loadtest hold: redis: %s\n", c->errstr);
            return -1;
        }
        if (rep->type != REDIS_REPLY_INTEGER || rep->integer < 1)
            h->publish_unheard++;
        freeReplyObject(rep);
    }
    return 0;
}

/* Re-sends the handshake to every open, unconfirmed stream older than
 * 200 ms. Returns how many are still waiting, or -1 on a Redis failure. */
static int lt_hold__handshake(lt_hold *h, uint64_t now)
{
    int waiting = 0, sent = 0;
    for (int i = 0; i < h->opened; i++) {
        lt_hold_stream *s = &h->s[i];
        if (atomic_load(&s->state) != LT_HS_OPEN || atomic_load(&s->confirmed))
            continue;
        waiting++;
        if (now - s->opened_ns < 200000000ull)
            continue;
        lt_hold__publish(h, i, 0);
        sent++;
    }
    h->handshakes += (uint64_t)sent;
    return lt_hold__flush(h, sent) == 0 ? waiting : -1;
}

typedef struct lt_hold_tally {
    int confirmed, live, ended;
    long long delivered, out_of_order;
} lt_hold_tally;

static lt_hold_tally lt_hold__tally(lt_hold *h)
{
    lt_hold_tally t = {0};
    for (int i = 0; i < h->opened; i++) {
        lt_hold_stream *s = &h->s[i];
        int st = atomic_load(&s->state);
        t.confirmed += atomic_load(&s->confirmed);
        t.live += st == LT_HS_OPEN;
        t.ended += st == LT_HS_ENDED;
        t.delivered += atomic_load(&s->delivered);
        t.out_of_order += atomic_load(&s->out_of_order);
    }
    return t;
}

/* Samples /proc once a second (the driver does it: no sampler thread), and
 * prints a progress line every --progress. */
static void lt_hold__tick(lt_hold *h, const char *phase, uint64_t t0, uint64_t now)
{
    if (now >= h->next_sample) {
        lt_procstat_sample(&h->procs);
        h->next_sample = now + 1000000000ull;
    }
    if (now < h->next_progress)
        return;
    h->next_progress = now + (uint64_t)h->c.progress_ms * 1000000ull;
    lt_hold_tally t = lt_hold__tally(h);
    fprintf(stderr,
            "[%6.1fs] %-7s opened=%d confirmed=%d live=%d ended=%d published=%" PRIu64
            " delivered=%lld gateway rss=%.1f MB cpu=%.2f\n",
            (now - t0) / 1e9, phase, h->opened, t.confirmed, t.live, t.ended, h->published,
            t.delivered, h->procs.t[0].rss_now / 1048576.0, h->procs.t[0].cpu_now);
}

/* A fresh sample of the gateway and the driver (at least 100 ms after the
 * last one, the sampler's resolution). */
static lt_proc_target lt_hold__fresh(lt_hold *h, int which)
{
    usleep(150000);
    lt_procstat_sample(&h->procs);
    h->next_sample = lt_now_ns() + 1000000000ull;
    lt_proc_target t[LT_PROC_MAX];
    int n;
    lt_procstat_snapshot(&h->procs, t, &n);
    return t[which];
}

/* Ends every live stream and waits (bounded) for the ends. */
static void lt_hold__cancel_all(lt_hold *h)
{
    for (int i = 0; i < h->opened; i++) {
        lt_hold_stream *s = &h->s[i];
        int expect = LT_HS_OPEN;
        if (!atomic_compare_exchange_strong(&s->state, &expect, LT_HS_CANCELLING))
            continue;
        s->cancelled_by_us = true;
        rpc_client_stream_cancel(s->sub);
        atomic_store(&s->state, LT_HS_OPEN); /* on_end may now finish */
    }
    uint64_t until = lt_now_ns() + 10000000000ull;
    while (lt_hold__tally(h).live > 0 && lt_now_ns() < until)
        usleep(50000);
}

static int lt_hold__account_ids(lt_hold *h, PGconn *pg, char *err, size_t errlen)
{
    const char *p[1] = {h->c.tag};
    PGresult *r = PQexecParams(pg, "SELECT handle, id FROM accounts WHERE tag = $1", 1, NULL, p,
                               NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        snprintf(err, errlen, "postgres: %s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    size_t taglen = strlen(h->c.tag);
    for (int row = 0; row < PQntuples(r); row++) {
        const char *handle = PQgetvalue(r, row, 0);
        if (strncmp(handle, h->c.tag, taglen) != 0 || handle[taglen] != '-')
            continue;
        char *end;
        long idx = strtol(handle + taglen + 1, &end, 10);
        if (*end == '\0' && idx >= 0 && idx < h->c.players)
            h->s[idx].account_id = strtoll(PQgetvalue(r, row, 1), NULL, 10);
    }
    PQclear(r);
    for (int i = 0; i < h->c.players; i++)
        if (h->s[i].account_id <= 0) {
            snprintf(err, errlen, "no account for handle %s-%d", h->c.tag, i);
            return -1;
        }
    return 0;
}

/* One connection as ACL user publisher (rpc/redis.h); the run pipelines
 * on it and ends on the first Redis failure, so it never reconnects. */
static int lt_hold__redis_connect(lt_hold *h, char *err, size_t errlen)
{
    h->redis = rpc_redis_create(h->c.redis, RPC_REDIS_USER_PUBLISHER, h->c.redis_secrets, 10000,
                                err, errlen);
    if (h->redis == NULL)
        return -1;
    if (rpc_redis_ensure(h->redis) != 0) {
        snprintf(err, errlen, "redis %s: %s", h->c.redis, rpc_redis_errstr(h->redis));
        return -1;
    }
    return 0;
}

static bool lt_hold__loopback(const char *t)
{
    return !strncmp(t, "127.", 4) || !strncmp(t, "localhost:", 10) || !strncmp(t, "ipv4:127.", 9) ||
           !strncmp(t, "[::1]:", 6);
}

static bool lt_hold__stopped(lt_hold *h)
{
    return atomic_load(&h->stop->stop) != 0;
}

/* ------------------------------------------------------------------ */

int lt_cmd_hold(int argc, char **argv, lt_stop *stop)
{
    lt_hold *h = calloc(1, sizeof(*h));
    char err[1024] = "";
    int rc = LT_EXIT_USAGE;
    PGconn *pg = NULL;
    lt_opstats ends;
    bool ends_init = false;
    h->stop = stop;
    cfg_table t = {lt_hold_options, sizeof(lt_hold_options) / sizeof(lt_hold_options[0]), &h->c};
    int lr = cfg_load(&t, 1, "SCRABBLE_LOADTEST_", "loadtest hold", argc, argv, 1, NULL, NULL, err,
                      sizeof(err));
    if (lr == CFG_HELP) {
        rc = LT_EXIT_OK;
        goto out;
    }
    if (lr != CFG_OK) {
        fprintf(stderr, "loadtest hold: %s\n", err);
        goto out;
    }
    int lvl = log_level_parse(h->c.log_level);
    if (lvl < 0) {
        fprintf(stderr, "loadtest hold: --log-level: unknown level '%s'\n", h->c.log_level);
        goto out;
    }
    log_threshold = lvl;
    const char *port = strrchr(h->c.target, ':');
    if (!lt_hold__loopback(h->c.target) || port == NULL || !lt_hold__loopback(h->c.redis)) {
        fprintf(stderr, "loadtest hold: --target and --redis must be loopback host:port\n");
        goto out;
    }
    char spec[64];
    if (h->c.gateway_pid > 0)
        snprintf(spec, sizeof(spec), "gateway=pid:%d,self", h->c.gateway_pid);
    else
        snprintf(spec, sizeof(spec), "gateway=%s,self", port + 1);
    if (lt_procstat_init(&h->procs, spec, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest hold: %s\n", err);
        goto out;
    }
    rc = LT_EXIT_FAIL;
    if (h->procs.t[0].pid <= 0) {
        fprintf(stderr, "loadtest hold: no gateway process found (%s); pass --gateway-pid\n", spec);
        goto out;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl); /* main() raised the soft limit to the hard one */
    if (rl.rlim_cur < (rlim_t)h->c.players + 64) {
        fprintf(stderr, "loadtest hold: %d connections need more than the open-file limit %llu\n",
                h->c.players, (unsigned long long)rl.rlim_cur);
        goto out;
    }
    h->s = calloc((size_t)h->c.players, sizeof(*h->s));
    if (h->s == NULL || lt_opstats_init(&ends, "Subscribe") != 0) {
        fprintf(stderr, "loadtest hold: out of memory\n");
        goto out;
    }
    ends_init = true;

    /* Players, their tokens and their account ids. */
    pg = lt_pg_connect(h->c.pg, false, err, sizeof(err));
    if (pg == NULL) {
        fprintf(stderr, "loadtest hold: %s\n", err);
        goto out;
    }
    if (h->c.seed) {
        uint64_t s0 = lt_now_ns();
        int created;
        if (lt_seed_ensure(pg, h->c.tag, h->c.secret, h->c.players, 48, &created, err,
                           sizeof(err)) != 0) {
            fprintf(stderr, "loadtest hold: seeding: %s\n", err);
            goto out;
        }
        if (created)
            fprintf(stderr, "loadtest hold: seeded %d players (tag %s) in %.2f s\n", h->c.players,
                    h->c.tag, (lt_now_ns() - s0) / 1e9);
    }
    if (lt_hold__account_ids(h, pg, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest hold: %s (seed with --players %d)\n", err, h->c.players);
        goto out;
    }
    for (int i = 0; i < h->c.players; i++) {
        char tok[LT_TOKEN_LEN + 1];
        lt_seed_token(h->c.secret, h->c.tag, i, tok);
        snprintf(h->s[i].auth, sizeof(h->s[i].auth), "Bearer %s", tok);
        h->s[i].md.key = "authorization";
        h->s[i].md.value = h->s[i].auth;
    }
    if (lt_hold__redis_connect(h, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest hold: %s\n", err);
        goto out;
    }

    h->loops = calloc((size_t)h->c.loops, sizeof(*h->loops));
    for (int i = 0; i < h->c.loops; i++) {
        char name[32];
        snprintf(name, sizeof(name), "lt-hold-%d", i);
        h->loops[i] = rpc_loop_start(name);
    }
    lt_procstat_sample(&h->procs); /* the CPU baseline */
    lt_proc_target before = lt_hold__fresh(h, 0);
    fprintf(stderr, "loadtest hold: gateway pid %d rss %.1f MB; opening %d streams at %d/s to %s\n",
            (int)before.pid, before.rss_now / 1048576.0, h->c.players, h->c.ramp_rate, h->c.target);

    /* Ramp and handshake. */
    const char *end_reason = "completed";
    uint64_t t0 = lt_now_ns();
    uint64_t connect_end = t0 + (uint64_t)h->c.connect_timeout_ms * 1000000ull;
    uint64_t next_handshake = t0;
    h->next_progress = t0 + (uint64_t)h->c.progress_ms * 1000000ull;
    int waiting = h->c.players;
    while (h->opened < h->c.players || waiting > 0) {
        uint64_t now = lt_now_ns();
        if (lt_hold__stopped(h) || now >= connect_end) {
            end_reason = lt_hold__stopped(h) ? "interrupted" : "connect-timeout";
            break;
        }
        uint64_t due = (now - t0) * (uint64_t)h->c.ramp_rate / 1000000000ull + 1;
        while ((uint64_t)h->opened < due && h->opened < h->c.players)
            lt_hold__open(h, h->opened++);
        if (now >= next_handshake) {
            waiting = lt_hold__handshake(h, now);
            if (waiting < 0) {
                end_reason = "redis-failed";
                break;
            }
            next_handshake = now + 1000000000ull;
        }
        lt_hold__tick(h, "connect", t0, now);
        usleep(h->opened < h->c.players ? 2000 : 20000);
    }
    double connect_s = (lt_now_ns() - t0) / 1e9;
    lt_proc_target connected = lt_hold__fresh(h, 0);
    lt_hold_tally at_connect = lt_hold__tally(h);
    fprintf(stderr, "loadtest hold: %d/%d streams confirmed in %.1f s (%s); gateway rss %.1f MB\n",
            at_connect.confirmed, h->c.players, connect_s, end_reason,
            connected.rss_now / 1048576.0);

    /* The hold: events at a fixed rate, round robin over the accounts. */
    uint64_t h0 = lt_now_ns(), hold_end = h0 + (uint64_t)h->c.duration_ms * 1000000ull;
    lt_procstat_set_step(&h->procs, 0);
    if (!strcmp(end_reason, "completed")) {
        for (;;) {
            uint64_t now = lt_now_ns();
            if (lt_hold__stopped(h)) {
                end_reason = "interrupted";
                break;
            }
            if (now >= hold_end)
                break;
            uint64_t due = (now - h0) * (uint64_t)h->c.eps / 1000000000ull;
            int batch = 0;
            while (h->published < due && batch < 5000) {
                int i = (int)(h->published % (uint64_t)h->c.players);
                lt_hold__publish(h, i, (int64_t)(h->published / (uint64_t)h->c.players) + 1);
                h->published++;
                batch++;
            }
            if (lt_hold__flush(h, batch) != 0) {
                end_reason = "redis-failed";
                break;
            }
            lt_hold__tick(h, "hold", h0, now);
            usleep(5000);
        }
    }
    /* The last deliveries. */
    uint64_t drain_end = lt_now_ns() + (uint64_t)h->c.drain_ms * 1000000ull;
    while (lt_hold__tally(h).delivered < (long long)h->published && lt_now_ns() < drain_end &&
           !lt_hold__stopped(h))
        usleep(20000);
    double hold_s = (lt_now_ns() - h0) / 1e9;
    lt_proc_target gw_end = lt_hold__fresh(h, 0), self_end = lt_hold__fresh(h, 1);
    lt_procstat_set_step(&h->procs, -1);
    lt_hold_tally fin = lt_hold__tally(h);

    /* Every stream that ended by itself is an error; then ours end. */
    lt_hold__cancel_all(h);
    int never_confirmed = 0;
    long long missing = 0, extra = 0;
    for (int i = 0; i < h->c.players; i++) {
        lt_hold_stream *s = &h->s[i];
        uint64_t pub = h->published / (uint64_t)h->c.players +
                       ((uint64_t)i < h->published % (uint64_t)h->c.players ? 1 : 0);
        long long got = atomic_load(&s->delivered);
        if (got < (long long)pub)
            missing += (long long)pub - got;
        else
            extra += got - (long long)pub;
        if (i < h->opened && !atomic_load(&s->confirmed))
            never_confirmed++;
        if (i < h->opened && atomic_load(&s->state) == LT_HS_ENDED && !s->cancelled_by_us) {
            bool transport = lt_status_is_transport(s->end_code, s->end_reason, "");
            uint64_t endt = s->ended_ns ? s->ended_ns : s->opened_ns;
            lt_opstats_record(&ends, s->end_code, s->end_reason, transport, s->opened_ns,
                              s->opened_ns, endt > s->opened_ns ? endt : s->opened_ns);
        }
    }
    for (int i = 0; i < h->opened; i++)
        if (h->s[i].ch)
            rpc_channel_destroy(h->s[i].ch);
    for (int i = 0; i < h->c.loops; i++)
        rpc_loop_stop(h->loops[i]);

    /* The report. */
    long hz = sysconf(_SC_CLK_TCK);
    double gw_cpu_hold = (double)(gw_end.last_ticks - connected.last_ticks) / (double)hz;
    double gw_cpu_connect = (double)(connected.last_ticks - before.last_ticks) / (double)hz;
    int opened_ok = at_connect.confirmed;
    uint64_t errors = ends.count + (uint64_t)never_confirmed + h->publish_unheard;
    printf("loadtest hold: target %s, %d players (tag %s), %d loops, ramp %d/s, %d events/s for "
           "%.1f s (%s)\n",
           h->c.target, h->c.players, h->c.tag, h->c.loops, h->c.ramp_rate, h->c.eps, hold_s,
           end_reason);
    printf("  streams opened (confirmed)   %d of %d in %.1f s\n", opened_ok, h->c.players,
           connect_s);
    printf("  streams never confirmed      %d\n", never_confirmed);
    printf("  stream errors                %" PRIu64 "\n", ends.count);
    for (int k = 0; k < ends.noutcomes; k++)
        printf("    code %-2d %-24s %" PRIu64 "\n", ends.outcomes[k].code,
               ends.outcomes[k].reason[0] ? ends.outcomes[k].reason : "(no reason)",
               ends.outcomes[k].count);
    printf("  events published             %" PRIu64 " (+%" PRIu64 " handshakes; %" PRIu64
           " heard by no subscriber)\n",
           h->published, h->handshakes, h->publish_unheard);
    printf("  events delivered             %lld\n", fin.delivered);
    printf("  missing / out-of-order / dup %lld / %lld / %lld\n", missing, fin.out_of_order, extra);
    printf("  gateway RSS before           %.1f MB\n", before.rss_now / 1048576.0);
    printf("  gateway RSS all connected    %.1f MB\n", connected.rss_now / 1048576.0);
    printf("  gateway RSS at the end       %.1f MB\n", gw_end.rss_now / 1048576.0);
    if (opened_ok > 0) {
        printf("  gateway RSS per connection   %.1f KB connected, %.1f KB at the end\n",
               (connected.rss_now - before.rss_now) / opened_ok / 1024.0,
               (gw_end.rss_now - before.rss_now) / opened_ok / 1024.0);
    }
    printf("  gateway CPU                  %.2f s connecting, %.2f s during the hold (%.1f%% of a "
           "core)\n",
           gw_cpu_connect, gw_cpu_hold, hold_s > 0 ? 100.0 * gw_cpu_hold / hold_s : 0);
    printf("  driver RSS                   %.1f MB\n", self_end.rss_now / 1048576.0);
    bool pass = !strcmp(end_reason, "completed") && errors == 0 && opened_ok == h->c.players &&
                missing == 0 && fin.out_of_order == 0 && extra == 0 && h->published > 0;
    printf("  verdict                      %s\n",
           pass ? "PASS (zero errors, every event delivered)" : "FAIL");
    rc = pass ? LT_EXIT_OK : LT_EXIT_FAIL;
out:
    if (ends_init)
        lt_opstats_free(&ends);
    rpc_redis_destroy(h->redis);
    if (pg)
        PQfinish(pg);
    free(h->loops);
    free(h->s);
    free(h);
    return rc;
}

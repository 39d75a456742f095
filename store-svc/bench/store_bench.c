/*
 * store_bench.c — offers CommitMove to a running store-svc at a fixed rate
 * (open loop) from many concurrent callers, and reports what it held:
 * moves/s, p50/p99 commit latency, transactions per move (from store-svc's
 * metrics) and CPU-seconds per 1,000 committed moves of Postgres (the
 * postmaster and its children, from /proc) and of store-svc.
 *
 *   store-bench --target 127.0.0.1:7200 --metrics-port 9200 \
 *       --pg "host=... dbname=scrabble user=scrabble" --pg-pid PID \
 *       [--svc-pid PID] [--rate 1000] [--seconds 10] [--games 2000] [--label x]
 *       [--clock 1]   (each move carries a GameClock, as game-svc sends them:
 *                     1 a timed game's, 2 the same without deadlines, 3 an
 *                     untimed game's, whose deadline stays on the hour)
 *
 * Each caller is one game: it has at most one CommitMove in flight (seqs
 * of a game are sequential, as game-svc sends them). A tick that finds no
 * idle game counts as "missed": the offered rate was not held.
 *
 * Two more lines per run: the latency percentiles with the mean time of a
 * batch's COMMIT (store_commit_seconds), and the pacing actually
 * offered (how late each send left against its tick, and the gaps between
 * sends), which tells a steady 1,000/s from bursts after the bench itself
 * was descheduled on a busy machine.
 */
#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"
#include "rpc/arena.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "scrabble/v1/store.pb-c.h"
#include "scrape.h"

typedef struct bench_game {
    int64_t id;
    int64_t seq; /* last acknowledged */
    int64_t sent_ns;
    struct bench_game *next_idle;
} bench_game;

typedef struct bench {
    const char *target, *pg, *label;
    int metrics_port, pg_pid, svc_pid, rate, seconds, ngames;
    int64_t account[2]; /* seat 0 and seat 1 of every game */
    rpc_channel *ch;
    bench_game *games;
    pthread_mutex_t mu;
    bench_game *idle; /* LIFO of games with nothing in flight */
    int inflight;
    bool measuring;
    int clock; /* --clock 1: moves carry a GameClock; 2: without deadlines; 3: untimed */
    /* measured window */
    int64_t *lat_us;
    size_t nlat, cap;
    /* pacing: when each call was due and when it was sent (offer thread
     * only, no lock) */
    int64_t *due_ns, *sent_ns;
    size_t nsent;
    long ok, errors, missed;
} bench;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double scraped(bench *b, const char *name)
{
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", b->metrics_port);
    return scrape_metric_sum(addr, name);
}

/* CPU ticks of a process (loadtest's /proc reader). */
static long long proc_ticks(int pid)
{
    uint64_t ticks;
    double rss;
    return lt_proc_read(pid, false, &ticks, &rss) == 0 ? (long long)ticks : 0;
}

/* CPU ticks of the postmaster and its backends, live (its direct children)
 * and exited (its cutime/cstime). */
static long long pg_ticks(int postmaster)
{
    uint64_t ticks;
    double rss;
    return lt_proc_read(postmaster, true, &ticks, &rss) == 0 ? (long long)ticks : 0;
}

static void on_reply(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    bench_game *g = arg;
    extern bench *g_bench;
    bench *b = g_bench;
    int64_t lat = (now_ns() - g->sent_ns) / 1000;
    pthread_mutex_lock(&b->mu);
    if (st->code == GRPC_STATUS_OK)
        g->seq++;
    if (b->measuring) {
        if (st->code == GRPC_STATUS_OK) {
            b->ok++;
            if (b->nlat < b->cap)
                b->lat_us[b->nlat++] = lat;
        } else {
            b->errors++;
            if (b->errors < 5)
                fprintf(stderr, "commit failed: %s %s %s\n", rpc_status_code_name(st->code),
                        st->reason, st->message);
        }
    }
    b->inflight--;
    g->next_idle = b->idle;
    b->idle = g;
    pthread_mutex_unlock(&b->mu);
}

bench *g_bench;

static void send_move(bench *b, bench_game *g, rpc_arena *a)
{
    int64_t seq = g->seq + 1;
    Scrabble__V1__Placement p[3], *pp[3];
    for (int i = 0; i < 3; i++) {
        scrabble__v1__placement__init(&p[i]);
        p[i].row = 7;
        p[i].col = (int)(seq % 12) + i;
        p[i].letter = i == 0 ? "C" : i == 1 ? "A" : "T";
        pp[i] = &p[i];
    }
    char *words[1] = {"CAT"};
    Scrabble__V1__Move m = SCRABBLE__V1__MOVE__INIT;
    m.seq = seq;
    m.seat = (int)((seq - 1) % 2);
    m.account_id = g_bench->account[m.seat];
    m.kind = SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY;
    m.placements = pp;
    m.n_placements = 3;
    m.words = words;
    m.n_words = 1;
    m.score = (int)(seq % 40);
    char notation[32];
    snprintf(notation, sizeof(notation), "8%c CAT", 'A' + (int)(seq % 12));
    m.notation = notation;
    Scrabble__V1__CommitMoveRequest r = SCRABBLE__V1__COMMIT_MOVE_REQUEST__INIT;
    int32_t scores[2] = {(int32_t)seq * 7, (int32_t)seq * 6};
    r.game_id = g->id;
    r.move = &m;
    r.to_move = (int)(seq % 2);
    r.scores = scores;
    r.n_scores = 2;
    /* --clock 1: the move carries its clock, as game-svc's do since time
     * controls (the game row's clock columns and its deadline rows are
     * written in the same transaction). */
    int64_t remaining[2] = {600000 - (int64_t)seq, 600000};
    Scrabble__V1__GameClock ck = SCRABBLE__V1__GAME_CLOCK__INIT;
    if (b->clock) {
        int64_t now_ms = (int64_t)(now_ns() / 1000000);
        ck.remaining_ms = remaining;
        ck.n_remaining_ms = 2;
        ck.turn_started_ms = now_ms;
        if (b->clock == 3) { /* an untimed game's: its abandonment deadline on the hour */
            ck.n_remaining_ms = 0;
            ck.deadline_ms = (now_ms + 30 * 86400000LL + 3599999) / 3600000 * 3600000;
            ck.deadline_reason = SCRABBLE__V1__END_REASON__END_REASON_ABANDONED;
            ck.warning_ms = ck.deadline_ms - 86400000LL;
        }
        if (b->clock == 1) { /* 2: the clock without deadlines (their cost apart) */
            ck.deadline_ms = now_ms + 86400000LL;
            ck.deadline_reason = SCRABBLE__V1__END_REASON__END_REASON_TIMEOUT;
            ck.warning_ms = now_ms + 43200000LL;
        }
        r.clock = &ck;
    }
    rpc_client_opts o = {.timeout_ms = 5000};
    g->sent_ns = now_ns();
    if (rpc_client_unary(b->ch, "/scrabble.v1.Store/CommitMove", &r.base,
                         &scrabble__v1__commit_move_reply__descriptor, &o, on_reply, g) != RPC_OK)
        on_reply(g, &(rpc_status){.code = GRPC_STATUS_INTERNAL, .reason = "send"}, NULL);
}

/* Offers b->rate calls per second for `seconds`. */
static void offer(bench *b, double seconds)
{
    rpc_arena *a = rpc_arena_create(0);
    int64_t start = now_ns(), interval = 1000000000LL / b->rate;
    int64_t end = start + (int64_t)(seconds * 1e9);
    int64_t next = start;
    while (next < end) {
        int64_t t = now_ns();
        if (t < next) {
            struct timespec ts = {0, (long)(next - t)};
            nanosleep(&ts, NULL);
            continue;
        }
        /* Everything due by now (catches up after a late wake-up). */
        while (next <= t && next < end) {
            pthread_mutex_lock(&b->mu);
            bench_game *g = b->idle;
            if (g) {
                b->idle = g->next_idle;
                b->inflight++;
            } else if (b->measuring) {
                b->missed++;
            }
            bool measuring = b->measuring;
            pthread_mutex_unlock(&b->mu);
            if (g) {
                send_move(b, g, a);
                if (measuring && b->nsent < b->cap) {
                    b->due_ns[b->nsent] = next;
                    b->sent_ns[b->nsent++] = g->sent_ns;
                }
            }
            next += interval;
        }
    }
    rpc_arena_destroy(a);
}

static int cmp64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static int64_t pct(const int64_t *sorted, size_t n, double p)
{
    size_t i = (size_t)(n * p);
    return n ? sorted[i < n ? i : n - 1] : 0;
}

/* The arrival pattern the bench offered: how late each call left against
 * its tick, and the gaps between consecutive sends (a steady 1,000/s is
 * 1,000 µs apart; catching up after a late wake-up shows as short gaps). */
static void print_pacing(bench *b)
{
    size_t n = b->nsent;
    if (n < 2)
        return;
    int64_t *late = malloc(n * sizeof(*late)), *gap = malloc(n * sizeof(*gap));
    size_t short_gaps = 0;
    int64_t interval = 1000000000LL / b->rate;
    for (size_t i = 0; i < n; i++) {
        late[i] = (b->sent_ns[i] - b->due_ns[i]) / 1000;
        if (i) {
            gap[i - 1] = (b->sent_ns[i] - b->sent_ns[i - 1]) / 1000;
            if (b->sent_ns[i] - b->sent_ns[i - 1] < interval / 2)
                short_gaps++;
        }
    }
    qsort(late, n, sizeof(*late), cmp64);
    qsort(gap, n - 1, sizeof(*gap), cmp64);
    printf("%-14s pacing: sends=%zu late_us p50=%" PRId64 " p99=%" PRId64 " max=%" PRId64
           " gap_us p1=%" PRId64 " p10=%" PRId64 " p50=%" PRId64 " p90=%" PRId64 " p99=%" PRId64
           " max=%" PRId64 " gaps<%" PRId64 "us=%zu\n",
           b->label, n, pct(late, n, 0.5), pct(late, n, 0.99), late[n - 1], pct(gap, n - 1, 0.01),
           pct(gap, n - 1, 0.1), pct(gap, n - 1, 0.5), pct(gap, n - 1, 0.9), pct(gap, n - 1, 0.99),
           gap[n - 2], interval / 2000, short_gaps);
    free(late);
    free(gap);
}

static int seed(bench *b)
{
    char err[64];
    PGconn *pg = PQconnectdb(b->pg);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "seed: %s", PQerrorMessage(pg));
        return -1;
    }
    char tag[64], n[16];
    snprintf(tag, sizeof(tag), "bench-%d-%s", (int)getpid(), b->label);
    snprintf(n, sizeof(n), "%d", b->ngames);
    const char *params[2] = {tag, n};
    /* Two accounts (tagged, so a bench population can be removed) and n
     * fresh games between them. */
    PGresult *r = PQexecParams(
        pg,
        "WITH a AS (INSERT INTO accounts (handle, pw_hash, tag) "
        "  VALUES ($1 || '-a', 'x', 'bench'), ($1 || '-b', 'x', 'bench') RETURNING id), "
        "g AS (INSERT INTO games (lexicon, seed) SELECT $1, i FROM generate_series(1, $2::int) i "
        "  RETURNING id), "
        "p AS (INSERT INTO game_players (game_id, seat, account_id) "
        "  SELECT g.id, s.seat, s.id FROM g, "
        "  (SELECT id, (row_number() OVER (ORDER BY id)) - 1 AS seat FROM a) s) "
        "SELECT id FROM g ORDER BY id",
        2, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "seed: %s", PQresultErrorMessage(r));
        return -1;
    }
    b->ngames = PQntuples(r);
    PGresult *acc = PQexecParams(pg,
                                 "SELECT id FROM accounts WHERE handle IN ($1 || '-a', $1 || '-b') "
                                 "ORDER BY id",
                                 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(acc) != PGRES_TUPLES_OK || PQntuples(acc) != 2) {
        fprintf(stderr, "seed: accounts: %s", PQresultErrorMessage(acc));
        return -1;
    }
    b->account[0] = atoll(PQgetvalue(acc, 0, 0));
    b->account[1] = atoll(PQgetvalue(acc, 1, 0));
    PQclear(acc);
    b->games = calloc((size_t)b->ngames, sizeof(*b->games));
    for (int i = 0; i < b->ngames; i++) {
        b->games[i].id = atoll(PQgetvalue(r, i, 0));
        b->games[i].next_idle = b->idle;
        b->idle = &b->games[i];
    }
    PQclear(r);
    PQfinish(pg);
    (void)err;
    return 0;
}

int main(int argc, char **argv)
{
    static bench b = {.rate = 1000,
                      .seconds = 10,
                      .ngames = 2000,
                      .label = "run",
                      .mu = PTHREAD_MUTEX_INITIALIZER};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--target"))
            b.target = v;
        else if (!strcmp(k, "--metrics-port"))
            b.metrics_port = atoi(v);
        else if (!strcmp(k, "--pg"))
            b.pg = v;
        else if (!strcmp(k, "--pg-pid"))
            b.pg_pid = atoi(v);
        else if (!strcmp(k, "--svc-pid"))
            b.svc_pid = atoi(v);
        else if (!strcmp(k, "--rate"))
            b.rate = atoi(v);
        else if (!strcmp(k, "--seconds"))
            b.seconds = atoi(v);
        else if (!strcmp(k, "--games"))
            b.ngames = atoi(v);
        else if (!strcmp(k, "--label"))
            b.label = v;
        else if (!strcmp(k, "--clock"))
            b.clock = atoi(v);
        else {
            fprintf(stderr, "unknown option %s\n", k);
            return 2;
        }
    }
    if (!b.target || !b.pg || !b.metrics_port || !b.pg_pid || b.rate <= 0) {
        fprintf(stderr,
                "usage: store-bench --target H:P --metrics-port P --pg CONNINFO "
                "--pg-pid PID [--svc-pid PID] [--rate N] [--seconds N] [--games N] [--label L] "
                "[--clock 0|1|2|3]\n");
        return 2;
    }
    g_bench = &b;
    rpc_init();
    if (seed(&b) != 0)
        return 1;
    /* CommitMove is game-svc's: present its identity from the stack's
     * certificates ($STACK_CERTS, tests/integration/store-svc/bench.sh). */
    rpc_tls_config tls;
    rpc_identity_tls(getenv("STACK_CERTS"), "game-svc", "store-svc", &tls);
    rpc_channel_opts co = {.tls = &tls};
    b.ch = rpc_channel_create(b.target, &co);
    b.cap = (size_t)b.rate * (size_t)b.seconds * 2 + 1024;
    b.lat_us = malloc(b.cap * sizeof(*b.lat_us));
    b.due_ns = malloc(b.cap * sizeof(*b.due_ns));
    b.sent_ns = malloc(b.cap * sizeof(*b.sent_ns));

    offer(&b, 2.0); /* warm-up: connections, plans, caches */

    double tx0 = scraped(&b, "store_tx_total"), ops0 = scraped(&b, "store_batch_ops_total");
    double bat0 = scraped(&b, "store_batches_total");
    double csum0 = scraped(&b, "store_commit_seconds_sum"),
           ccnt0 = scraped(&b, "store_commit_seconds_count");
    long long pg0 = pg_ticks(b.pg_pid), svc0 = b.svc_pid ? proc_ticks(b.svc_pid) : 0;
    int64_t t0 = now_ns();
    pthread_mutex_lock(&b.mu);
    b.measuring = true;
    pthread_mutex_unlock(&b.mu);
    offer(&b, b.seconds);
    pthread_mutex_lock(&b.mu);
    b.measuring = false;
    pthread_mutex_unlock(&b.mu);
    double elapsed = (now_ns() - t0) / 1e9;
    long long pg1 = pg_ticks(b.pg_pid), svc1 = b.svc_pid ? proc_ticks(b.svc_pid) : 0;
    double tx = scraped(&b, "store_tx_total") - tx0,
           ops = scraped(&b, "store_batch_ops_total") - ops0;
    double batches = scraped(&b, "store_batches_total") - bat0;
    double commits = scraped(&b, "store_commit_seconds_count") - ccnt0;
    double commit_ms =
        commits > 0 ? (scraped(&b, "store_commit_seconds_sum") - csum0) * 1e3 / commits : 0;
    /* Let in-flight calls land before the numbers are final. */
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&b.mu);
        int left = b.inflight;
        pthread_mutex_unlock(&b.mu);
        if (!left)
            break;
        usleep(10000);
    }
    qsort(b.lat_us, b.nlat, sizeof(*b.lat_us), cmp64);
    double p50 = pct(b.lat_us, b.nlat, 0.5) / 1000.0, p99 = pct(b.lat_us, b.nlat, 0.99) / 1000.0;
    double hz = (double)sysconf(_SC_CLK_TCK);
    double pg_cpu = (pg1 - pg0) / hz, svc_cpu = (svc1 - svc0) / hz;
    printf("%-14s offered=%d/s held=%.0f/s ok=%ld err=%ld missed=%ld p50=%.2fms p99=%.2fms "
           "tx/move=%.3f ops/batch=%.1f pg_cpu=%.2fs pg_cpu_per_1k=%.3fs svc_cpu_per_1k=%.3fs\n",
           b.label, b.rate, b.ok / elapsed, b.ok, b.errors, b.missed, p50, p99,
           ops > 0 ? tx / ops : 0, batches > 0 ? ops / batches : 0, pg_cpu,
           b.ok ? pg_cpu * 1000.0 / b.ok : 0, b.ok && b.svc_pid ? svc_cpu * 1000.0 / b.ok : 0);
    printf("%-14s latency_ms: p10=%.2f p50=%.2f p90=%.2f p95=%.2f p99=%.2f p99.9=%.2f max=%.2f"
           " commit_mean=%.3f\n",
           b.label, pct(b.lat_us, b.nlat, 0.1) / 1000.0, pct(b.lat_us, b.nlat, 0.5) / 1000.0,
           pct(b.lat_us, b.nlat, 0.9) / 1000.0, pct(b.lat_us, b.nlat, 0.95) / 1000.0,
           pct(b.lat_us, b.nlat, 0.99) / 1000.0, pct(b.lat_us, b.nlat, 0.999) / 1000.0,
           b.nlat ? b.lat_us[b.nlat - 1] / 1000.0 : 0, commit_ms);
    print_pacing(&b);
    fflush(stdout);
    rpc_channel_destroy(b.ch);
    return b.errors ? 1 : 0;
}

/*
 * evaluate_bench.c — open-loop Evaluate benchmark against a running game-svc
 * (with store-svc and Postgres behind it to create the games).
 *
 *   evaluate-bench --game=127.0.0.1:7100 --store=127.0.0.1:7200 \
 *       --metrics=127.0.0.1:9100 --pid=PID --games=500 --rate=5000 \
 *       --duration=10 --conns=32 [--lexicon=build/share/wamerican.kwg]
 *
 * Set-up: registers a small pool of accounts, creates --games two-seat games
 * through store-svc invitations and game-svc CreateGame (which makes them
 * resident), and for each game computes the best play of the player to move
 * from its own GetState (so the Evaluates are realistic, legal placements).
 * RSS of game-svc (loadtest's /proc reader) before and after the games exist
 * gives the memory per cached game.
 *
 * Load: calls are *scheduled* at a fixed rate (open loop) round-robin over
 * --conns channels (separate TCP connections, like many gateways) and the
 * games; latency is measured from the scheduled start, so a stall counts
 * against every call it delays (no coordinated omission). Completions run on
 * two client loops. Reported: offered and achieved rate, errors, p50, p90,
 * p99, p99.9, max, and store calls per Evaluate from the metrics endpoint
 * (game_store_calls_total before and after the run).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrape.h"
#include "scrabble/v1/store.pb-c.h"
#include "solver.h"

typedef struct bench_game {
    int64_t game_id;
    int64_t account; /* the seat whose rack the placement uses */
    char account_str[24];
    Scrabble__V1__EvaluateRequest req;
    Scrabble__V1__Placement pl[8];
    Scrabble__V1__Placement *pp[8];
    char letters[8][2];
} bench_game;

typedef struct bench {
    const char *game_addr, *store_addr, *metrics_addr, *lexicon;
    int pid, ngames, rate, duration_s, conns, accounts;
    rpc_channel *store;
    rpc_channel **game;
    rpc_loop *loops[2];
    bench_game *games;
    double *lat_ms; /* by call index */
    atomic_long completed, errors;
    long scheduled;
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const rpc_status *st)
{
    fprintf(stderr, "evaluate-bench: %s: %s %s %s\n", what,
            st ? rpc_status_code_name(st->code) : "", st ? st->reason : "", st ? st->message : "");
    exit(1);
}

static ProtobufCMessage *sync_call(rpc_channel *ch, const char *path, const ProtobufCMessage *req,
                                   const ProtobufCMessageDescriptor *rd, int64_t account)
{
    char id[24];
    rpc_status st;
    ProtobufCMessage *reply = NULL;
    snprintf(id, sizeof id, "%lld", (long long)account);
    rpc_metadata md[1] = {{"scrabble-account-id", id}};
    rpc_client_opts o = {.timeout_ms = 20000, .md = md, .md_count = account ? 1 : 0};
    if (rpc_client_unary_sync(ch, path, req, rd, &o, NULL, &reply, &st) != GRPC_STATUS_OK)
        die(path, &st);
    return reply;
}

/* game_store_calls_total over its methods, from game-svc's /metrics. */
static long store_calls(const char *addr)
{
    return (long)scrape_metric_sum(addr, "game_store_calls_total");
}

/* utime + stime of a process, in seconds (loadtest's /proc reader). */
static double cpu_s(int pid)
{
    uint64_t ticks;
    double rss;
    if (lt_proc_read(pid, false, &ticks, &rss) != 0)
        return -1;
    return (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

/* Resident set of a process in KiB. */
static long rss_kb(int pid)
{
    uint64_t ticks;
    double rss;
    return lt_proc_read(pid, false, &ticks, &rss) == 0 ? (long)(rss / 1024) : -1;
}

/* ---- set-up ----------------------------------------------------------- */

static void setup_games(bench *b)
{
    int64_t *acc = calloc((size_t)b->accounts, sizeof *acc);
    char(*handle)[40] = calloc((size_t)b->accounts, 40);
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(b->lexicon, err, sizeof err);
    if (!lex) {
        fprintf(stderr, "evaluate-bench: %s\n", err);
        exit(1);
    }
    for (int i = 0; i < b->accounts; i++) {
        Scrabble__V1__RegisterRequest rr = SCRABBLE__V1__REGISTER_REQUEST__INIT;
        snprintf(handle[i], 40, "bench%d_%d_%d", (int)getpid(), i, rand() % 100000);
        rr.handle = handle[i];
        rr.password = "benchpassword";
        Scrabble__V1__AuthReply *a =
            (Scrabble__V1__AuthReply *)sync_call(b->store, "/scrabble.v1.Store/Register", &rr.base,
                                                 &scrabble__v1__auth_reply__descriptor, 0);
        acc[i] = a->account_id;
        protobuf_c_message_free_unpacked(&a->base, NULL);
    }
    for (int g = 0; g < b->ngames; g++) {
        int x = g % b->accounts, y = (g + 1 + g / b->accounts) % b->accounts;
        if (y == x)
            y = (x + 1) % b->accounts;
        Scrabble__V1__CreateInvitationRequest ci = SCRABBLE__V1__CREATE_INVITATION_REQUEST__INIT;
        char *h[1] = {handle[y]};
        ci.inviter_id = acc[x];
        ci.invitee_handles = h;
        ci.n_invitee_handles = 1;
        Scrabble__V1__Invitation *inv = (Scrabble__V1__Invitation *)sync_call(
            b->store, "/scrabble.v1.Store/CreateInvitation", &ci.base,
            &scrabble__v1__invitation__descriptor, 0);
        Scrabble__V1__StoreRespondInvitationRequest ri =
            SCRABBLE__V1__STORE_RESPOND_INVITATION_REQUEST__INIT;
        ri.account_id = acc[y];
        ri.invitation_id = inv->invitation_id;
        ri.accept = true;
        protobuf_c_message_free_unpacked(sync_call(b->store, "/scrabble.v1.Store/RespondInvitation",
                                                   &ri.base, &scrabble__v1__invitation__descriptor,
                                                   0),
                                         NULL);
        Scrabble__V1__CreateGameRequest cg = SCRABBLE__V1__CREATE_GAME_REQUEST__INIT;
        cg.invitation_id = inv->invitation_id;
        protobuf_c_message_free_unpacked(&inv->base, NULL);
        Scrabble__V1__GameState *st = (Scrabble__V1__GameState *)sync_call(
            b->game[0], "/scrabble.v1.Game/CreateGame", &cg.base,
            &scrabble__v1__game_state__descriptor, acc[x]);
        bench_game *bg = &b->games[g];
        bg->game_id = st->game_id;
        bg->account = acc[x]; /* seat 0: the player to move */
        snprintf(bg->account_str, sizeof bg->account_str, "%lld", (long long)acc[x]);
        protobuf_c_message_free_unpacked(&st->base, NULL);
        /* The player's own view, as a client would have it. */
        Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
        ref.game_id = bg->game_id;
        st = (Scrabble__V1__GameState *)sync_call(b->game[0], "/scrabble.v1.Game/GetState",
                                                  &ref.base, &scrabble__v1__game_state__descriptor,
                                                  acc[x]);
        solver_board board;
        solver_rack rack;
        solver_board_init(&board, solver_dist_english());
        solver_rack_parse(&rack, st->my_rack);
        solver_move mv[1];
        solver_gen_opts o = {.top_n = 1};
        size_t n = solver_gen(&board, lex, solver_dist_english(), &rack, &o, mv, 1);
        scrabble__v1__evaluate_request__init(&bg->req);
        bg->req.game_id = bg->game_id;
        size_t k = 0;
        if (n > 0 && mv[0].kind == SOLVER_MOVE_PLAY) {
            for (int i = 0; i < mv[0].len && k < 8; i++) {
                uint8_t t = mv[0].tiles[i];
                scrabble__v1__placement__init(&bg->pl[k]);
                bg->pl[k].row = mv[0].row + (mv[0].dir == SOLVER_DOWN ? i : 0);
                bg->pl[k].col = mv[0].col + (mv[0].dir == SOLVER_ACROSS ? i : 0);
                bg->letters[k][0] = (char)('A' + SOLVER_LETTER(t) - 1);
                bg->pl[k].letter = bg->letters[k];
                bg->pl[k].blank = (t & SOLVER_BLANK) != 0;
                bg->pp[k] = &bg->pl[k];
                k++;
            }
        } else { /* no play: a two-tile guess at the centre (evaluated all the same) */
            for (k = 0; k < 2; k++) {
                scrabble__v1__placement__init(&bg->pl[k]);
                bg->pl[k].row = 7;
                bg->pl[k].col = 7 + (int)k;
                bg->letters[k][0] = st->my_rack[k] == '?' ? 'E' : st->my_rack[k];
                bg->pl[k].letter = bg->letters[k];
                bg->pp[k] = &bg->pl[k];
            }
        }
        bg->req.placements = bg->pp;
        bg->req.n_placements = k;
        protobuf_c_message_free_unpacked(&st->base, NULL);
    }
    solver_lexicon_free(lex);
    free(acc);
    free(handle);
}

/* ---- load ------------------------------------------------------------- */

typedef struct bench_call {
    bench *b;
    long idx;
    double sched;
} bench_call;

static void on_reply(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    bench_call *c = arg;
    bench *b = c->b;
    b->lat_ms[c->idx] = (now_s() - c->sched) * 1e3;
    if (st->code != GRPC_STATUS_OK)
        atomic_fetch_add(&b->errors, 1);
    atomic_fetch_add(&b->completed, 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void run_load(bench *b, double *achieved, double *wall)
{
    long total = (long)b->rate * b->duration_s;
    bench_call *calls = calloc((size_t)total, sizeof *calls);
    b->lat_ms = calloc((size_t)total, sizeof *b->lat_ms);
    double interval = 1.0 / b->rate, t0 = now_s() + 0.05;
    for (long i = 0; i < total; i++) {
        double sched = t0 + i * interval;
        double d = sched - now_s();
        if (d > 0.0002) {
            struct timespec ts = {0, (long)(d * 1e9)};
            nanosleep(&ts, NULL);
        }
        bench_game *g = &b->games[i % b->ngames];
        rpc_metadata md[1] = {{"scrabble-account-id", g->account_str}};
        rpc_client_opts o = {.timeout_ms = 5000, .md = md, .md_count = 1, .loop = b->loops[i % 2]};
        calls[i] = (bench_call){b, i, sched};
        if (rpc_client_unary(b->game[i % b->conns], "/scrabble.v1.Game/Evaluate", &g->req.base,
                             &scrabble__v1__evaluate_reply__descriptor, &o, on_reply,
                             &calls[i]) != RPC_OK) {
            b->lat_ms[i] = NAN;
            atomic_fetch_add(&b->errors, 1);
            atomic_fetch_add(&b->completed, 1);
        }
    }
    b->scheduled = total;
    while (atomic_load(&b->completed) < total)
        usleep(1000);
    *wall = now_s() - t0;
    *achieved = total / *wall;
    free(calls); /* every callback has run */
}

int main(int argc, char **argv)
{
    bench b = {.game_addr = "127.0.0.1:7100",
               .store_addr = "127.0.0.1:7200",
               .metrics_addr = "127.0.0.1:9100",
               .lexicon = "build/share/wamerican.kwg",
               .ngames = 200,
               .rate = 5000,
               .duration_s = 10,
               .conns = 32,
               .accounts = 20};
    for (int i = 1; i < argc; i++) {
        char *v = strchr(argv[i], '=');
        if (!v) {
            fprintf(stderr, "usage: see the header of evaluate_bench.c\n");
            return 2;
        }
        v++;
        if (!strncmp(argv[i], "--game=", 7))
            b.game_addr = v;
        else if (!strncmp(argv[i], "--store=", 8))
            b.store_addr = v;
        else if (!strncmp(argv[i], "--metrics=", 10))
            b.metrics_addr = v;
        else if (!strncmp(argv[i], "--lexicon=", 10))
            b.lexicon = v;
        else if (!strncmp(argv[i], "--pid=", 6))
            b.pid = atoi(v);
        else if (!strncmp(argv[i], "--games=", 8))
            b.ngames = atoi(v);
        else if (!strncmp(argv[i], "--rate=", 7))
            b.rate = atoi(v);
        else if (!strncmp(argv[i], "--duration=", 11))
            b.duration_s = atoi(v);
        else if (!strncmp(argv[i], "--conns=", 8))
            b.conns = atoi(v);
        else if (!strncmp(argv[i], "--accounts=", 11))
            b.accounts = atoi(v);
        else {
            fprintf(stderr, "evaluate-bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (b.ngames < 1 || b.rate < 1 || b.duration_s < 1 || b.conns < 1 || b.accounts < 2)
        return 2;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    setvbuf(stdout, NULL, _IOLBF, 0);
    rpc_init();
    /* The bench stands in for the gateway (account calls to store-svc, the
     * account metadata to game-svc): it presents the gateway identity from
     * the stack's certificates ($STACK_CERTS, run_evaluate_bench.sh). */
    rpc_tls_config store_tls, game_tls;
    rpc_identity_tls(getenv("STACK_CERTS"), "gateway", "store-svc", &store_tls);
    rpc_identity_tls(getenv("STACK_CERTS"), "gateway", "game-svc", &game_tls);
    rpc_channel_opts so = {.tls = &store_tls};
    b.store = rpc_channel_create(b.store_addr, &so);
    b.game = calloc((size_t)b.conns, sizeof *b.game);
    for (int i = 0; i < b.conns; i++) {
        rpc_channel_opts co = {.own_connection = true, .tls = &game_tls};
        b.game[i] = rpc_channel_create(b.game_addr, &co);
    }
    b.games = calloc((size_t)b.ngames, sizeof *b.games);
    b.loops[0] = rpc_loop_start("bench0");
    b.loops[1] = rpc_loop_start("bench1");

    long rss0 = b.pid ? rss_kb(b.pid) : -1;
    double ts = now_s();
    setup_games(&b);
    long rss1 = b.pid ? rss_kb(b.pid) : -1;
    printf("setup: %d games in %.1f s; game-svc RSS %ld kB -> %ld kB", b.ngames, now_s() - ts, rss0,
           rss1);
    if (rss0 > 0 && rss1 > 0)
        printf(" (%.1f kB per cached game)", (double)(rss1 - rss0) / b.ngames);
    printf("\n");
    /* Warm the connections (first call per channel opens its TCP). */
    for (int i = 0; i < b.conns; i++) {
        bench_game *g = &b.games[i % b.ngames];
        protobuf_c_message_free_unpacked(
            sync_call(b.game[i], "/scrabble.v1.Game/Evaluate", &g->req.base,
                      &scrabble__v1__evaluate_reply__descriptor, g->account),
            NULL);
    }

    long sc0 = store_calls(b.metrics_addr);
    double cpu0 = b.pid ? cpu_s(b.pid) : -1, self0 = cpu_s(getpid());
    double achieved, wall;
    run_load(&b, &achieved, &wall);
    double cpu1 = b.pid ? cpu_s(b.pid) : -1, self1 = cpu_s(getpid());
    long sc1 = store_calls(b.metrics_addr);

    long n = b.scheduled;
    qsort(b.lat_ms, (size_t)n, sizeof *b.lat_ms, cmp_double);
#define PCT(p) b.lat_ms[(long)((p) / 100.0 * (n - 1))]
    printf("offered %d/s for %d s over %d connections, %d games: %ld calls, achieved %.0f/s, "
           "errors %ld\n",
           b.rate, b.duration_s, b.conns, b.ngames, n, achieved, atomic_load(&b.errors));
    printf("latency ms: p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", PCT(50), PCT(90),
           PCT(99), PCT(99.9), b.lat_ms[n - 1]);
    if (sc0 >= 0 && sc1 >= 0)
        printf("store calls during the run: %ld (%.4f per evaluate)\n", sc1 - sc0,
               (double)(sc1 - sc0) / n);
    if (cpu0 >= 0 && cpu1 >= 0)
        printf("game-svc CPU during the run: %.2f s (%.1f us per evaluate, %.0f%% of one core); "
               "bench client CPU %.2f s\n",
               cpu1 - cpu0, (cpu1 - cpu0) / n * 1e6, (cpu1 - cpu0) / wall * 100, self1 - self0);
    long rss2 = b.pid ? rss_kb(b.pid) : -1;
    if (rss2 > 0)
        printf("game-svc RSS after the run: %ld kB\n", rss2);
    rpc_loop_stop(b.loops[0]);
    rpc_loop_stop(b.loops[1]);
    for (int i = 0; i < b.conns; i++)
        rpc_channel_destroy(b.game[i]);
    rpc_channel_destroy(b.store);
    free(b.game);
    free(b.games);
    free(b.lat_ms);
    rpc_shutdown();
    return atomic_load(&b.errors) ? 1 : 0;
}

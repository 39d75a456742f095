/*
 * run.c — `loadtest run`: options, set-up (lexicon, seed, reset, resource
 * sampler), the driver loop (steps, player timers, hammer, progress lines,
 * per-second series), a bounded drain on the end or on Ctrl-C, reports,
 * and the optional cleanup.
 */
#include "run.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "rpc/cfg.h"
#include "rpc/log.h"
#include "scrabble/v1/edge.pb-c.h"
#include "netpolicy.h"
#include "seed.h"

static const cfg_option lt_run_options[] = {
    CFG_STR_OPT(lt_run_cfg, target, "target", "127.0.0.1:7000",
                "the gateway (loopback; private with --allow-private)"),
    CFG_BOOL_OPT(
        lt_run_cfg, allow_private, "allow-private", "false",
        "also allow a target and Postgres on a private network (containers), never public"),
    CFG_STR_OPT(lt_run_cfg, pg, "pg",
                "host=127.0.0.1 port=55432 dbname=scrabble user=scrabble_loadtest",
                "Postgres, for seeding, --reset and --cleanup"),
    CFG_STR_OPT(lt_run_cfg, tag, "tag", "lt", "population tag (see `loadtest seed`)"),
    CFG_STR_OPT(lt_run_cfg, secret, "secret", "loadtest-local",
                "key the bearer tokens derive from"),
    CFG_STR_OPT(lt_run_cfg, steps_spec, "steps", "50,200,500",
                "players per step, ascending, comma-separated"),
    CFG_DUR_OPT(lt_run_cfg, step_duration_ms, "step-duration", 1000, 24 * 3600 * 1000, "4m",
                "length of each step"),
    CFG_DUR_OPT(lt_run_cfg, tick_ms, "tick", 50, 60000, "800ms", "poll period of each player"),
    CFG_BOOL_OPT(lt_run_cfg, eval, "eval", "true", "fire Evaluate previews while composing a play"),
    CFG_INT_OPT(lt_run_cfg, eval_recon, "eval-recon", 0, 20, "2",
                "extra full re-previews per play"),
    CFG_DUR_OPT(lt_run_cfg, debounce_ms, "debounce", 0, 10000, "250ms", "spacing of the previews"),
    CFG_DUR_OPT(lt_run_cfg, think_ms, "think", 0, 600000, "0",
                "on its turn a player thinks this long before placing tiles (0: starts at once)"),
    CFG_BOOL_OPT(lt_run_cfg, hammer, "hammer", "false",
                 "flood ListGames from one account (rate limiter probe)"),
    CFG_INT_OPT(lt_run_cfg, hammer_rps, "hammer-rps", 1, 100000, "700", "hammer rate (open loop)"),
    CFG_BOOL_OPT(lt_run_cfg, reset, "reset", "false", "wipe all game data before the run"),
    CFG_BOOL_OPT(lt_run_cfg, cleanup, "cleanup", "false",
                 "remove the seeded population after the run"),
    CFG_BOOL_OPT(lt_run_cfg, seed, "seed", "true", "seed the population first when it is missing"),
    CFG_INT_OPT(lt_run_cfg, social_pct, "social", 0, 100, "5",
                "percent of off-turn ticks with a social call"),
    CFG_INT_OPT(lt_run_cfg, spectators_pct, "spectators", 0, 100, "0",
                "percent of players that also watch a public game (Watch); when > 0 every "
                "game is invited public"),
    CFG_INT_OPT(lt_run_cfg, bot_games_pct, "bot-games", 0, 100, "0",
                "percent of the player pairs whose two players each play a bot (bot-beginner, "
                "bot-club, bot-expert in turn) instead of each other"),
    CFG_INT_OPT(lt_run_cfg, top_n, "top-n", 1, 64, "24",
                "plays generated; one is picked from the middle half"),
    CFG_STR_OPT(lt_run_cfg, lexicon, "lexicon", "",
                "lexicon file (default: <bin>/../share/wamerican.kwg)"),
    CFG_STR_OPT(lt_run_cfg, out_json, "out", "loadtest-report.json",
                "JSON report path (\"\" none)"),
    CFG_STR_OPT(lt_run_cfg, out_html, "html", "loadtest-report.html",
                "HTML report path (\"\" none)"),
    CFG_STR_OPT(
        lt_run_cfg, procs, "procs",
        "gateway=7000,game-svc=7100,store-svc=7200,postgres+=55432,redis=56379,self,machine",
        "processes to sample: name=listen-port (name+= with children), name=pid:N, self, machine"),
    CFG_INT_OPT(lt_run_cfg, loops, "loops", 0, 16, "0",
                "gRPC completion threads (0: the driver thread runs completions itself, "
                "which saves a thread handoff per call)"),
    CFG_DUR_OPT(lt_run_cfg, max_duration_ms, "max-duration", 0, 24 * 3600 * 1000, "0",
                "hard bound on the run (0: the steps + 1m)"),
    CFG_DUR_OPT(lt_run_cfg, timeout_ms, "timeout", 100, 600000, "10s", "per-call deadline"),
    CFG_DUR_OPT(lt_run_cfg, progress_ms, "progress", 500, 600000, "5s", "progress line period"),
    CFG_DUR_OPT(lt_run_cfg, ramp_ms, "ramp", 0, 3600000, "10s",
                "new players of a step join over this long"),
    CFG_BOOL_OPT(lt_run_cfg, quiet, "quiet", "false", "no progress lines"),
    CFG_STR_OPT(lt_run_cfg, log_level, "log-level", "warn", "debug|info|warn|error"),
};

lt_step_result *lt_run_cur(lt_run *r)
{
    return &r->steps[r->step];
}

void lt_run_record(lt_run *r, lt_op op, const rpc_status *st, uint64_t intended, uint64_t sent,
                   uint64_t done)
{
    bool transport = lt_status_is_transport(st->code, st->reason, st->message);
    lt_opstats_record(&lt_run_cur(r)->ops[op], st->code, st->reason, transport, intended, sent,
                      done);
    r->ival_calls++;
    r->progress_calls++;
    if (st->code != GRPC_STATUS_OK) {
        r->ival_errs++;
        r->progress_errs++;
    }
    if (lt_ops[op].gameplay) {
        lt_hist_record(&r->ival_corr, done - (intended < sent ? intended : sent));
        lt_hist_record(&r->ival_svc, done - sent);
    }
}

/* ------------------------------------------------------------------ */
/* Hammer: one account floods ListGames, open loop, bounded in flight   */

#define LT_HAMMER_SLOTS 64
enum { LT_MSG_HAMMER = 9 };

typedef struct lt_hslot {
    lt_msg msg;
    int kind;
    struct lt_hammer *h;
    struct lt_hslot *next_free;
    uint64_t intended, sent, done;
    rpc_status st;
} lt_hslot;

typedef struct lt_hammer {
    lt_run *r;
    rpc_channel *ch;
    char auth[64];
    rpc_metadata md;
    grpc_byte_buffer *req;
    lt_hslot slots[LT_HAMMER_SLOTS];
    lt_hslot *free_slots;
    uint64_t t0, issued;
    int inflight;
} lt_hammer;

static void lt_hammer_done(void *arg, const rpc_status *st, grpc_byte_buffer *reply)
{
    lt_hslot *s = arg;
    s->done = lt_now_ns();
    s->st = *st;
    if (reply)
        grpc_byte_buffer_destroy(reply);
    lt_mailbox_post(&s->h->r->mb, &s->msg);
}

static lt_hammer *lt_hammer_create(lt_run *r, int account_idx)
{
    lt_hammer *h = calloc(1, sizeof(*h));
    h->r = r;
    char tok[LT_TOKEN_LEN + 1];
    lt_seed_token(r->c.secret, r->c.tag, account_idx, tok);
    snprintf(h->auth, sizeof(h->auth), "Bearer %s", tok);
    h->md.key = "authorization";
    h->md.value = h->auth;
    rpc_channel_opts o = {.own_connection = true};
    h->ch = rpc_channel_create(r->c.target, &o);
    Scrabble__V1__ListGamesRequest req = SCRABBLE__V1__LIST_GAMES_REQUEST__INIT;
    req.page_size = 20;
    h->req = rpc_pack(&req.base);
    for (int i = 0; i < LT_HAMMER_SLOTS; i++) {
        h->slots[i].kind = LT_MSG_HAMMER;
        h->slots[i].h = h;
        h->slots[i].next_free = h->free_slots;
        h->free_slots = &h->slots[i];
    }
    h->t0 = lt_now_ns();
    return h;
}

/* Issues what is due; returns the next due time. */
static uint64_t lt_hammer_pump(lt_hammer *h, uint64_t now)
{
    lt_run *r = h->r;
    double interval = 1e9 / r->c.hammer_rps;
    for (;;) {
        uint64_t due = h->t0 + (uint64_t)(h->issued * interval);
        if (due > now)
            return due;
        if (h->free_slots == NULL)
            return now + 1000000; /* all in flight: the backlog keeps its due times */
        lt_hslot *s = h->free_slots;
        h->free_slots = s->next_free;
        h->issued++;
        s->intended = due;
        s->sent = lt_now_ns();
        h->inflight++;
        r->inflight++;
        rpc_client_opts opts = {.timeout_ms = r->c.timeout_ms,
                                .md = &h->md,
                                .md_count = 1,
                                .loop = r->loops[h->issued % (uint64_t)r->nloops]};
        if (rpc_client_raw(h->ch, lt_ops[LT_OP_HAMMER].method, h->req, &opts, lt_hammer_done, s) !=
            RPC_OK) {
            s->done = lt_now_ns();
            rpc_status_set(&s->st, GRPC_STATUS_INTERNAL, NULL, "could not start the call");
            lt_mailbox_post(&r->mb, &s->msg);
        }
    }
}

static void lt_hammer_msg(lt_hammer *h, lt_hslot *s)
{
    lt_run_record(h->r, LT_OP_HAMMER, &s->st, s->intended, s->sent, s->done);
    h->inflight--;
    h->r->inflight--;
    s->next_free = h->free_slots;
    h->free_slots = s;
}

static void lt_hammer_destroy(lt_hammer *h)
{
    if (!h)
        return;
    rpc_channel_destroy(h->ch);
    grpc_byte_buffer_destroy(h->req);
    free(h);
}

/* ------------------------------------------------------------------ */
/* Progress                                                            */

static double lt_ms(uint64_t ns)
{
    return ns / 1e6;
}

static void lt_series_close(lt_run *r, uint64_t now)
{
    double dt = (now - r->ival_t0) / 1e9;
    if (dt <= 0)
        return;
    if (r->nseries == r->cap_series) {
        size_t nc = r->cap_series ? r->cap_series * 2 : 256;
        lt_series_point *ns = realloc(r->series, nc * sizeof(*ns));
        if (!ns)
            return;
        r->series = ns;
        r->cap_series = nc;
    }
    lt_series_point *pt = &r->series[r->nseries++];
    pt->t = (now - r->t0) / 1e9;
    pt->players = r->nactive;
    pt->step = r->step;
    pt->rps = r->ival_calls / dt;
    pt->err_rps = r->ival_errs / dt;
    pt->p50_ms = lt_ms(lt_hist_percentile(&r->ival_corr, 50));
    pt->p99_ms = lt_ms(lt_hist_percentile(&r->ival_corr, 99));
    pt->max_ms = lt_ms(r->ival_corr.max);
    pt->svc_p99_ms = lt_ms(lt_hist_percentile(&r->ival_svc, 99));
    lt_hist_reset(&r->ival_corr);
    lt_hist_reset(&r->ival_svc);
    r->ival_calls = r->ival_errs = 0;
    r->ival_t0 = now;
}

static void lt_progress(lt_run *r, uint64_t now)
{
    double dt = (now - r->progress_t0) / 1e9;
    lt_step_result *s = lt_run_cur(r);
    /* Gameplay p99 of the step so far, corrected. */
    lt_hist all;
    lt_hist_init(&all, LT_HIST_DEFAULT_SUB_BITS);
    uint64_t submits = 0, submits_ok = 0, transport = 0;
    for (int op = 0; op < LT_OP_COUNT; op++) {
        if (lt_ops[op].gameplay)
            lt_hist_merge(&all, &s->ops[op].corrected);
        transport += s->ops[op].transport;
    }
    for (int op = LT_OP_SUBMIT_PLAY; op <= LT_OP_EXCHANGE; op++) {
        submits += s->ops[op].count;
        submits_ok += s->ops[op].ok;
    }
    char cpu[256] = "";
    lt_proc_target t[LT_PROC_MAX];
    int nt = 0;
    lt_procstat_snapshot(&r->procs, t, &nt);
    size_t off = 0;
    for (int i = 0; i < nt && off < sizeof(cpu) - 32; i++)
        if (t[i].pid > 0)
            off +=
                (size_t)snprintf(cpu + off, sizeof(cpu) - off, " %s=%.2f", t[i].name, t[i].cpu_now);
    fprintf(stderr,
            "[%6.1fs] step %d/%d players=%d req/s=%.0f p99(gameplay)=%.1fms errors=%" PRIu64
            " transport=%" PRIu64 " turns=%" PRIu64 "/%" PRIu64 " ok games=+%" PRIu64 "/%" PRIu64
            " done cores:%s\n",
            (now - r->t0) / 1e9, r->step + 1, r->c.nsteps, r->nactive,
            dt > 0 ? r->progress_calls / dt : 0, lt_ms(lt_hist_percentile(&all, 99)),
            r->progress_errs, transport, submits_ok, submits, s->games_started, s->games_finished,
            cpu);
    lt_hist_free(&all);
    r->progress_calls = r->progress_errs = 0;
    r->progress_t0 = now;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                              */

static int lt_parse_steps(lt_run_cfg *c, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", c->steps_spec);
    c->nsteps = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long n = strtol(tok, &end, 10);
        if (end == tok || *end || n < 2 || n > 19000) {
            snprintf(err, errlen, "--steps: '%s' is not a player count in 2..19000", tok);
            return -1;
        }
        if (n % 2)
            n++; /* players play in pairs */
        if (c->nsteps && n < c->steps[c->nsteps - 1]) {
            snprintf(err, errlen, "--steps must not decrease (%ld after %d)", n,
                     c->steps[c->nsteps - 1]);
            return -1;
        }
        if (c->nsteps == LT_MAX_STEPS) {
            snprintf(err, errlen, "--steps: at most %d steps", LT_MAX_STEPS);
            return -1;
        }
        c->steps[c->nsteps++] = (int)n;
    }
    if (c->nsteps == 0) {
        snprintf(err, errlen, "--steps is empty");
        return -1;
    }
    return 0;
}

static void lt_default_lexicon(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        snprintf(out, len, "share/wamerican.kwg");
        return;
    }
    exe[n] = '\0';
    snprintf(out, len, "%s/../share/wamerican.kwg", dirname(exe));
}

static int lt_run_init_steps(lt_run *r)
{
    for (int s = 0; s < r->c.nsteps; s++) {
        r->steps[s].players = r->c.steps[s];
        for (int op = 0; op < LT_OP_COUNT; op++)
            if (lt_opstats_init(&r->steps[s].ops[op], lt_ops[op].name) != 0)
                return -1;
        if (lt_hist_init(&r->steps[s].bot_reply, LT_HIST_DEFAULT_SUB_BITS) != 0)
            return -1;
        if (lt_hist_init(&r->steps[s].event_lag, LT_HIST_DEFAULT_SUB_BITS) != 0)
            return -1;
        if (lt_hist_init(&r->steps[s].watch_lag, LT_HIST_DEFAULT_SUB_BITS) != 0)
            return -1;
        if (lt_hist_init(&r->steps[s].lag, LT_HIST_DEFAULT_SUB_BITS) != 0)
            return -1;
    }
    return 0;
}

static void lt_run_free_steps(lt_run *r)
{
    for (int s = 0; s < r->c.nsteps; s++) {
        for (int op = 0; op < LT_OP_COUNT; op++)
            lt_opstats_free(&r->steps[s].ops[op]);
        lt_hist_free(&r->steps[s].lag);
        lt_hist_free(&r->steps[s].event_lag);
        lt_hist_free(&r->steps[s].watch_lag);
        lt_hist_free(&r->steps[s].bot_reply);
    }
}

/* ------------------------------------------------------------------ */
/* The driver loop                                                     */

static void lt_dispatch(lt_run *r, lt_msg *list)
{
    while (list) {
        lt_msg *m = list;
        list = list->next;
        if (m == &r->stop->wake_msg)
            continue;
        int kind = ((lt_hslot *)m)->kind;
        if (kind == LT_MSG_HAMMER) {
            lt_hslot *s = (lt_hslot *)m;
            lt_hammer_msg(s->h, s);
            continue;
        }
        lt_player_msg(r, m);
    }
}

/* What the driver waits on until the monotonic time until_ns (0: does not
 * wait): its mailbox, and with --loops 0 the polled completion queue, whose
 * completions run here and post to the mailbox. A post from another thread
 * (the signal watcher) does not end a queue wait early; until_ns is at most
 * a second away (the per-second series), so a stop is seen within it. */
static lt_msg *lt_wait(lt_run *r, uint64_t until_ns)
{
    if (r->c.loops > 0)
        return lt_mailbox_take(&r->mb, until_ns);
    lt_msg *list = lt_mailbox_take(&r->mb, 0);
    if (list)
        return list;
    uint64_t now = lt_now_ns();
    rpc_loop_poll(r->loops[0], until_ns > now ? (int64_t)(until_ns - now) : 0);
    return lt_mailbox_take(&r->mb, 0);
}

static void lt_drive(lt_run *r)
{
    uint64_t step_ns = (uint64_t)r->c.step_duration_ms * 1000000ull;
    uint64_t hard_ms = r->c.max_duration_ms ? (uint64_t)r->c.max_duration_ms
                                            : (uint64_t)r->c.step_duration_ms * r->c.nsteps + 60000;
    uint64_t hard_end = r->t0 + hard_ms * 1000000ull;
    uint64_t progress_ns = (uint64_t)r->c.progress_ms * 1000000ull;
    r->step = 0;
    r->end_reason = "completed";
    r->ival_t0 = r->progress_t0 = r->t0;
    r->next_ival = r->t0 + 1000000000ull;
    r->next_progress = r->t0 + progress_ns;
    int joined = 0;
    uint64_t hammer_next = UINT64_MAX;
    for (int s = 0; s < r->c.nsteps && !r->stopping; s++) {
        r->step = s;
        uint64_t now = lt_now_ns();
        r->steps[s].started_s = (now - r->t0) / 1e9;
        r->step_end = now + step_ns;
        lt_procstat_set_step(&r->procs, s);
        /* The step's new players join spread over the ramp. */
        int target = r->c.steps[s], fresh = target - joined;
        uint64_t ramp = (uint64_t)r->c.ramp_ms * 1000000ull;
        if (ramp > step_ns / 2)
            ramp = step_ns / 2;
        for (int i = 0; i < fresh; i++)
            lt_player_join(r, joined + i,
                           now + (fresh > 1 ? ramp * (uint64_t)i / (uint64_t)fresh : 0));
        joined = target;
        if (r->hammer && hammer_next == UINT64_MAX)
            hammer_next = now;
        for (;;) {
            now = lt_now_ns();
            if (atomic_load(&r->stop->stop)) {
                r->stopping = true;
                r->end_reason = "interrupted";
                break;
            }
            if (now >= hard_end) {
                r->stopping = true;
                r->end_reason = "max-duration";
                break;
            }
            if (now >= r->step_end)
                break;
            lt_timer *t;
            int fired = 0;
            while (fired < 2000 && (t = lt_timers_pop_due(&r->timers, now)) != NULL) {
                lt_player_timer(r, t);
                fired++;
            }
            if (r->hammer && now >= hammer_next)
                hammer_next = lt_hammer_pump(r->hammer, now);
            if (now >= r->next_ival) {
                lt_series_close(r, now);
                r->next_ival += 1000000000ull;
            }
            if (now >= r->next_progress) {
                if (!r->c.quiet)
                    lt_progress(r, now);
                r->next_progress += progress_ns;
            }
            uint64_t wake = lt_timers_next(&r->timers);
            if (fired >= 2000)
                wake = now; /* more due: just drain the mailbox first */
            if (r->hammer && hammer_next < wake)
                wake = hammer_next;
            if (r->next_ival < wake)
                wake = r->next_ival;
            if (r->next_progress < wake)
                wake = r->next_progress;
            if (r->step_end < wake)
                wake = r->step_end;
            if (wake <= now)
                wake = 0;
            lt_dispatch(r, lt_wait(r, wake));
        }
        r->steps[s].ended_s = (lt_now_ns() - r->t0) / 1e9;
    }
    /* Drain: no new chains; in-flight calls finish within their deadline. */
    r->stopping = true;
    uint64_t drain_end = lt_now_ns() + (uint64_t)r->c.timeout_ms * 1000000ull + 2000000000ull;
    while (r->inflight > 0 && lt_now_ns() < drain_end)
        lt_dispatch(r, lt_wait(r, lt_now_ns() + 100000000ull));
    r->steps[r->step].ended_s = (lt_now_ns() - r->t0) / 1e9;
    lt_procstat_set_step(&r->procs, -1);
    lt_series_close(r, lt_now_ns());
    /* Streams: cancel, then wait (bounded) for their ends. */
    lt_players_shutdown(r);
    uint64_t streams_end = lt_now_ns() + 5000000000ull;
    while (lt_players_streams_open(r) > 0 && lt_now_ns() < streams_end)
        lt_dispatch(r, lt_wait(r, lt_now_ns() + 100000000ull));
}

/* ------------------------------------------------------------------ */

int lt_cmd_run(int argc, char **argv, lt_stop *stop)
{
    lt_run *r = calloc(1, sizeof(*r));
    char err[1024] = "";
    int rc = LT_EXIT_USAGE;
    PGconn *pg = NULL;
    bool procs_started = false;
    r->stop = stop;
    lt_mailbox_init(&r->mb);
    cfg_table t = {lt_run_options, sizeof(lt_run_options) / sizeof(lt_run_options[0]), &r->c};
    int lr = cfg_load(&t, 1, "SCRABBLE_LOADTEST_", "loadtest run", argc, argv, 1, NULL, NULL, err,
                      sizeof(err));
    if (lr == CFG_HELP) {
        rc = LT_EXIT_OK;
        goto out;
    }
    if (lr != CFG_OK || lt_parse_steps(&r->c, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest run: %s\n", err);
        goto out;
    }
    int lvl = log_level_parse(r->c.log_level);
    if (lvl < 0) {
        fprintf(stderr, "loadtest run: --log-level: unknown level '%s'\n", r->c.log_level);
        goto out;
    }
    log_threshold = lvl;
    if (!lt_net_target_allowed(r->c.target, r->c.allow_private, err, sizeof(err))) {
        fprintf(stderr, "loadtest run: --%s\n", err);
        goto out;
    }
    if (r->c.lexicon[0] == '\0')
        lt_default_lexicon(r->c.lexicon, sizeof(r->c.lexicon));
    rc = LT_EXIT_FAIL;
    r->lex = solver_lexicon_load(r->c.lexicon, err, sizeof(err));
    if (r->lex == NULL) {
        fprintf(stderr, "loadtest run: lexicon %s: %s\n", r->c.lexicon, err);
        goto out;
    }
    r->dist = solver_dist_english();
    r->nplayers_max = r->c.steps[r->c.nsteps - 1];
    int population = r->nplayers_max + (r->c.hammer ? 1 : 0);
    if (r->c.seed || r->c.reset || r->c.cleanup) {
        pg = lt_pg_connect(r->c.pg, r->c.allow_private, err, sizeof(err));
        if (pg == NULL) {
            fprintf(stderr, "loadtest run: %s\n", err);
            goto out;
        }
    }
    if (r->c.reset) {
        if (lt_seed_reset_games(pg, err, sizeof(err)) != 0) {
            fprintf(stderr, "loadtest run: --reset: %s\n", err);
            goto out;
        }
        fprintf(stderr, "loadtest run: game data wiped (--reset)\n");
    }
    if (r->c.seed) {
        uint64_t s0 = lt_now_ns();
        int created;
        if (lt_seed_ensure(pg, r->c.tag, r->c.secret, population, 48, &created, err, sizeof(err)) !=
            0) {
            fprintf(stderr, "loadtest run: seeding: %s\n", err);
            goto out;
        }
        if (created)
            fprintf(stderr, "loadtest run: seeded %d players (tag %s) in %.2f s\n", population,
                    r->c.tag, (lt_now_ns() - s0) / 1e9);
    }
    if (lt_procstat_init(&r->procs, r->c.procs, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest run: --procs: %s\n", err);
        rc = LT_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < r->procs.n; i++)
        if (r->procs.t[i].pid <= 0)
            fprintf(stderr, "loadtest run: note: no process listens on port %d (%s): not sampled\n",
                    r->procs.t[i].port, r->procs.t[i].name);
    /* The gateway must answer before any player joins: an unreachable
     * target is an error, not a run full of UNAVAILABLE. 10 s: a first
     * handshake with a gateway on a starved machine (the sanitizer test
     * suite) once took more than 5. */
    {
        rpc_channel *probe = rpc_channel_create(r->c.target, NULL);
        rpc_channel_connect(probe);
        uint64_t until = lt_now_ns() + 10000000000ull;
        while (!rpc_channel_ready(probe) && lt_now_ns() < until && !atomic_load(&stop->stop)) {
            rpc_channel_connect(probe);
            usleep(10000);
        }
        bool ready = rpc_channel_ready(probe);
        if (!ready)
            fprintf(stderr,
                    "loadtest run: cannot connect to the gateway at %s within 10 s (channel %s)\n",
                    r->c.target, rpc_channel_state(probe));
        rpc_channel_destroy(probe);
        if (!ready)
            goto out;
    }
    if (lt_run_init_steps(r) != 0 || lt_hist_init(&r->ival_corr, 5) != 0 ||
        lt_hist_init(&r->ival_svc, 5) != 0) {
        fprintf(stderr, "loadtest run: out of memory\n");
        goto out;
    }
    r->wall0 = lt_wall_ns();
    /* One timer per player, each set at most once at a time. */
    if (lt_timers_init(&r->timers, r->nplayers_max) != 0 || lt_players_alloc(r) != 0) {
        fprintf(stderr, "loadtest run: out of memory for %d players\n", r->nplayers_max);
        goto out;
    }
    r->nloops = r->c.loops > 0 ? r->c.loops : 1;
    r->loops = calloc((size_t)r->nloops, sizeof(*r->loops));
    for (int i = 0; r->loops && i < r->nloops; i++) {
        char name[32];
        snprintf(name, sizeof(name), "lt-loop-%d", i);
        r->loops[i] = r->c.loops > 0 ? rpc_loop_start(name) : rpc_loop_create(name);
        if (r->loops[i] == NULL) {
            r->nloops = i;
            break;
        }
    }
    if (r->loops == NULL || r->nloops == 0) {
        fprintf(stderr, "loadtest run: cannot start a gRPC completion loop\n");
        goto out;
    }
    lt_procstat_start(&r->procs, 1000);
    procs_started = true;
    r->t0 = lt_now_ns();
    if (r->c.hammer)
        r->hammer = lt_hammer_create(r, r->nplayers_max);
    atomic_store(&stop->wake, &r->mb);
    fprintf(
        stderr,
        "loadtest run: target %s steps %s x %d ms, tick %d ms, eval %s (+%d recon), hammer %s\n",
        r->c.target, r->c.steps_spec, r->c.step_duration_ms, r->c.tick_ms, r->c.eval ? "on" : "off",
        r->c.eval_recon, r->c.hammer ? "on" : "off");
    lt_drive(r);
    atomic_store(&stop->wake, NULL);
    lt_procstat_stop(&r->procs);
    procs_started = false;
    lt_players_destroy_channels(r);
    lt_hammer_destroy(r->hammer);
    r->hammer = NULL;
    for (int i = 0; i < r->nloops; i++)
        rpc_loop_stop(r->loops[i]);
    r->nloops = 0;
    /* Late stream ends posted while the loops stopped. */
    lt_dispatch(r, lt_mailbox_take(&r->mb, 0));

    lt_report_table(r, stdout);
    if (r->c.out_json[0]) {
        if (lt_report_json(r, r->c.out_json) == 0)
            fprintf(stderr, "loadtest run: JSON report: %s\n", r->c.out_json);
        else
            fprintf(stderr, "loadtest run: cannot write %s: %s\n", r->c.out_json, strerror(errno));
    }
    if (r->c.out_html[0]) {
        if (lt_report_html(r, r->c.out_html) == 0)
            fprintf(stderr, "loadtest run: HTML report: %s\n", r->c.out_html);
        else
            fprintf(stderr, "loadtest run: cannot write %s: %s\n", r->c.out_html, strerror(errno));
    }
    rc = LT_EXIT_OK;
    if (r->c.cleanup && pg) {
        long long removed;
        if (lt_seed_cleanup(pg, r->c.tag, &removed, err, sizeof(err)) != 0) {
            fprintf(stderr, "loadtest run: --cleanup: %s\n", err);
            rc = LT_EXIT_FAIL;
        } else {
            fprintf(stderr,
                    "loadtest run: removed %lld seeded accounts and their games (--cleanup)\n",
                    removed);
        }
    }
out:
    for (int i = 0; i < r->nloops; i++) /* a failed start: nothing pends on them */
        rpc_loop_stop(r->loops[i]);
    if (procs_started)
        lt_procstat_stop(&r->procs);
    if (pg)
        PQfinish(pg);
    if (r->lex)
        solver_lexicon_free(r->lex);
    lt_players_free(r);
    lt_timers_free(&r->timers);
    lt_run_free_steps(r);
    lt_hist_free(&r->ival_corr);
    lt_hist_free(&r->ival_svc);
    free(r->loops);
    free(r->series);
    lt_mailbox_destroy(&r->mb);
    free(r);
    return rc;
}

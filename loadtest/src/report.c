/*
 * report.c — the run's reports: the per-operation table per step (as in the
 * report of the system we replace) with the resource table, a JSON file
 * with everything, and a self-contained HTML page (inline SVG, no external
 * URL).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"
#include "run.h"

#define LT_GAMEPLAY_P99_NS 50000000ull /* the verdict's bound: 50 ms */
/* A p99 over fewer calls is the 2nd..5th slowest call: too noisy to judge a
 * step by (Pass and Exchange are rare); such ops are shown, not judged. */
#define LT_VERDICT_MIN_SAMPLES 500

static void lt_fmt_ms(char *buf, size_t len, uint64_t ns)
{
    double ms = ns / 1e6;
    if (ms >= 100)
        snprintf(buf, len, "%.0f ms", ms);
    else if (ms >= 10)
        snprintf(buf, len, "%.1f ms", ms);
    else
        snprintf(buf, len, "%.2f ms", ms);
}

static double lt_step_secs(const lt_step_result *s)
{
    double d = s->ended_s - s->started_s;
    return d > 0 ? d : 1e-9;
}

/* A step held when every gameplay op's corrected p99 <= 50 ms and no call
 * failed in transport. */
static bool lt_step_held(const lt_step_result *s, uint64_t *worst_p99, const char **worst_op)
{
    bool held = true;
    *worst_p99 = 0;
    *worst_op = "";
    for (int op = 0; op < LT_OP_COUNT; op++) {
        const lt_opstats *o = &s->ops[op];
        if (o->transport)
            held = false;
        if (!lt_ops[op].gameplay || o->count < LT_VERDICT_MIN_SAMPLES)
            continue;
        uint64_t p99 = lt_hist_percentile(&o->corrected, 99);
        if (p99 > *worst_p99) {
            *worst_p99 = p99;
            *worst_op = lt_ops[op].name;
        }
        if (p99 > LT_GAMEPLAY_P99_NS)
            held = false;
    }
    return held;
}

static void lt_turns(const lt_step_result *s, uint64_t *n, uint64_t *ok)
{
    *n = *ok = 0;
    for (int op = LT_OP_SUBMIT_PLAY; op <= LT_OP_EXCHANGE; op++) {
        *n += s->ops[op].count;
        *ok += s->ops[op].ok;
    }
}

static void lt_notes(const lt_opstats *o, char *buf, size_t len)
{
    if (o->count == o->ok) {
        snprintf(buf, len, "all ok");
        return;
    }
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < o->noutcomes && off + 40 < len; i++) {
        const lt_outcome *oc = &o->outcomes[i];
        if (oc->code == 0)
            continue;
        off +=
            (size_t)snprintf(buf + off, len - off, "%s%s%s%s %" PRIu64 " (%.2f%%)", off ? ", " : "",
                             rpc_status_code_name(oc->code), oc->reason[0] ? "/" : "", oc->reason,
                             oc->count, 100.0 * oc->count / o->count);
    }
    if (o->transport && off + 40 < len)
        snprintf(buf + off, len - off, "; transport %" PRIu64, o->transport);
}

void lt_report_table(lt_run *r, FILE *f)
{
    for (int si = 0; si <= r->step && si < r->c.nsteps; si++) {
        const lt_step_result *s = &r->steps[si];
        double secs = lt_step_secs(s);
        fprintf(f, "\n== step %d/%d: %d players, %.1f s (t=%.1f..%.1f s) ==\n", si + 1, r->c.nsteps,
                s->players, secs, s->started_s, s->ended_s);
        fprintf(f, "%-18s %9s %8s %9s %9s %9s %9s %9s  %s\n", "operation", "count", "req/s", "p50",
                "p99", "p99.9", "max", "svc p99", "notes");
        uint64_t total = 0;
        for (int op = 0; op < LT_OP_COUNT; op++) {
            const lt_opstats *o = &s->ops[op];
            if (o->count == 0)
                continue;
            total += o->count;
            char p50[16], p99[16], p999[16], mx[16], sp99[16], notes[512];
            lt_fmt_ms(p50, sizeof(p50), lt_hist_percentile(&o->corrected, 50));
            lt_fmt_ms(p99, sizeof(p99), lt_hist_percentile(&o->corrected, 99));
            lt_fmt_ms(p999, sizeof(p999), lt_hist_percentile(&o->corrected, 99.9));
            lt_fmt_ms(mx, sizeof(mx), o->corrected.max);
            lt_fmt_ms(sp99, sizeof(sp99), lt_hist_percentile(&o->service, 99));
            lt_notes(o, notes, sizeof(notes));
            fprintf(f, "%-18s %9" PRIu64 " %8.1f %9s %9s %9s %9s %9s  %s\n", o->name, o->count,
                    o->count / secs, p50, p99, p999, mx, sp99, notes);
        }
        uint64_t tn, tok, worst;
        const char *worst_op;
        lt_turns(s, &tn, &tok);
        bool held = lt_step_held(s, &worst, &worst_op);
        char w[16], lag[16];
        lt_fmt_ms(w, sizeof(w), worst);
        lt_fmt_ms(lag, sizeof(lag), lt_hist_percentile(&s->lag, 99));
        fprintf(f,
                "total %" PRIu64
                " calls (%.1f req/s); latencies corrected (from the intended send), "
                "svc = from the actual send\n",
                total, total / secs);
        fprintf(f,
                "games started %" PRIu64 ", finished %" PRIu64 "; turns %" PRIu64
                " accepted of %" PRIu64 " (%.2f%%); no-play turns %" PRIu64
                "; board mismatches %" PRIu64 "; stream ends %" PRIu64
                "; driver timer lag p99 %s\n",
                s->games_started, s->games_finished, tok, tn, tn ? 100.0 * tok / tn : 100.0,
                s->no_play, s->board_mismatch, s->stream_errors, lag);
        fprintf(f,
                "events: game_started %" PRIu64 ", opponent_moved %" PRIu64 ", your_turn %" PRIu64
                ", game_over %" PRIu64 ", chat %" PRIu64 ", nudge %" PRIu64 ", invitation %" PRIu64
                "\n",
                s->events[1], s->events[2], s->events[3], s->events[4], s->events[5], s->events[6],
                s->events[7]);
        char e50[16], e99[16];
        lt_fmt_ms(e50, sizeof(e50), lt_hist_percentile(&s->event_lag, 50));
        lt_fmt_ms(e99, sizeof(e99), lt_hist_percentile(&s->event_lag, 99));
        fprintf(f, "move events, built by game-svc -> received: p50 %s, p99 %s\n", e50, e99);
        if (r->c.spectators_pct > 0) {
            char w50[16], w99[16];
            lt_fmt_ms(w50, sizeof(w50), lt_hist_percentile(&s->watch_lag, 50));
            lt_fmt_ms(w99, sizeof(w99), lt_hist_percentile(&s->watch_lag, 99));
            fprintf(f,
                    "spectators: watch streams opened %" PRIu64 ", events %" PRIu64
                    " (games seen to the end %" PRIu64 "), abnormal ends %" PRIu64
                    "; a live move committed -> on a watch stream: p50 %s, p99 %s\n",
                    s->watch_opened, s->watch_events, s->watch_games_over, s->watch_ends, w50, w99);
        }
        if (r->c.bot_games_pct > 0) {
            char b50[16], b99[16];
            lt_fmt_ms(b50, sizeof(b50), lt_hist_percentile(&s->bot_reply, 50));
            lt_fmt_ms(b99, sizeof(b99), lt_hist_percentile(&s->bot_reply, 99));
            fprintf(f,
                    "bot games (--bot-games %d%%): started %" PRIu64 ", finished %" PRIu64
                    "; the bot's reply (our turn acknowledged -> YOUR_TURN) p50 %s, p99 %s over "
                    "%" PRIu64 "\n",
                    r->c.bot_games_pct, s->bot_games_started, s->bot_games_finished, b50, b99,
                    s->bot_reply.count);
        }
        fprintf(f,
                "verdict: %s (worst gameplay p99 %s in %s; bound 50 ms over gameplay ops with >= "
                "%d calls, "
                "and zero transport errors)\n",
                held ? "HELD" : "NOT HELD", w, worst_op[0] ? worst_op : "-",
                LT_VERDICT_MIN_SAMPLES);
    }
    fprintf(f, "\n== resources (cores = CPU-seconds per second; RSS summed over a group) ==\n");
    fprintf(f, "%-12s %7s", "process", "pid");
    for (int si = 0; si <= r->step && si < r->c.nsteps; si++)
        fprintf(f, "   step%d:%-5d mean/peak  RSS peak", si + 1, r->steps[si].players);
    fputc('\n', f);
    for (int i = 0; i < r->procs.n; i++) {
        const lt_proc_target *t = &r->procs.t[i];
        fprintf(f, "%-12s %7d", t->name, (int)t->pid);
        for (int si = 0; si <= r->step && si < r->c.nsteps && si < LT_PROC_MAX_STEPS; si++) {
            const lt_proc_step *ps = &t->steps[si];
            if (ps->samples == 0)
                fprintf(f, "   %24s %9s", "-", "-");
            else
                fprintf(f, "   %11.2f / %-10.2f %7.0f MB", ps->cpu_sum / ps->samples, ps->cpu_peak,
                        ps->rss_peak / 1048576.0);
        }
        fputc('\n', f);
    }
    fprintf(f, "end: %s\n", r->end_reason ? r->end_reason : "?");
}

/* ------------------------------------------------------------------ */

static void lt_json_hist(lt_jw *w, const char *key, const lt_hist *h)
{
    lt_jw_key(w, key);
    lt_jw_obj(w);
    lt_jw_kuint(w, "count", h->count);
    lt_jw_kdbl(w, "mean_ms", lt_hist_mean(h) / 1e6);
    lt_jw_kdbl(w, "min_ms", h->count ? h->min / 1e6 : 0);
    lt_jw_kdbl(w, "p50_ms", lt_hist_percentile(h, 50) / 1e6);
    lt_jw_kdbl(w, "p90_ms", lt_hist_percentile(h, 90) / 1e6);
    lt_jw_kdbl(w, "p99_ms", lt_hist_percentile(h, 99) / 1e6);
    lt_jw_kdbl(w, "p999_ms", lt_hist_percentile(h, 99.9) / 1e6);
    lt_jw_kdbl(w, "max_ms", h->max / 1e6);
    lt_jw_end_obj(w);
}

int lt_report_json(lt_run *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    lt_jw w;
    lt_jw_init(&w, f, true);
    char date[64];
    time_t ws = (time_t)(r->wall0 / 1000000000ll);
    struct tm tm;
    gmtime_r(&ws, &tm);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    lt_jw_obj(&w);
    lt_jw_kstr(&w, "tool", "loadtest run");
    lt_jw_kstr(&w, "date", date);
    lt_jw_kstr(&w, "end_reason", r->end_reason ? r->end_reason : "");
    lt_jw_key(&w, "config");
    lt_jw_obj(&w);
    lt_jw_kstr(&w, "target", r->c.target);
    lt_jw_kstr(&w, "steps", r->c.steps_spec);
    lt_jw_kint(&w, "step_duration_ms", r->c.step_duration_ms);
    lt_jw_kint(&w, "tick_ms", r->c.tick_ms);
    lt_jw_kbool(&w, "eval", r->c.eval);
    lt_jw_kint(&w, "eval_recon", r->c.eval_recon);
    lt_jw_kint(&w, "debounce_ms", r->c.debounce_ms);
    lt_jw_kint(&w, "think_ms", r->c.think_ms);
    lt_jw_kbool(&w, "hammer", r->c.hammer);
    lt_jw_kint(&w, "hammer_rps", r->c.hammer_rps);
    lt_jw_kint(&w, "social_pct", r->c.social_pct);
    lt_jw_kint(&w, "spectators_pct", r->c.spectators_pct);
    lt_jw_kint(&w, "top_n", r->c.top_n);
    lt_jw_kint(&w, "loops", r->c.loops);
    lt_jw_kstr(&w, "tag", r->c.tag);
    lt_jw_end_obj(&w);
    lt_jw_key(&w, "steps");
    lt_jw_arr(&w);
    for (int si = 0; si <= r->step && si < r->c.nsteps; si++) {
        const lt_step_result *s = &r->steps[si];
        double secs = lt_step_secs(s);
        uint64_t tn, tok, worst;
        const char *worst_op;
        lt_turns(s, &tn, &tok);
        bool held = lt_step_held(s, &worst, &worst_op);
        lt_jw_obj(&w);
        lt_jw_kint(&w, "players", s->players);
        lt_jw_kdbl(&w, "started_s", s->started_s);
        lt_jw_kdbl(&w, "ended_s", s->ended_s);
        lt_jw_kdbl(&w, "duration_s", secs);
        lt_jw_kbool(&w, "held", held);
        lt_jw_kdbl(&w, "worst_gameplay_p99_ms", worst / 1e6);
        lt_jw_kstr(&w, "worst_gameplay_op", worst_op);
        lt_jw_kuint(&w, "games_started", s->games_started);
        lt_jw_kuint(&w, "games_finished", s->games_finished);
        lt_jw_kuint(&w, "bot_games_started", s->bot_games_started);
        lt_jw_kuint(&w, "bot_games_finished", s->bot_games_finished);
        lt_json_hist(&w, "bot_reply", &s->bot_reply);
        lt_jw_key(&w, "turns");
        lt_jw_obj(&w);
        lt_jw_kuint(&w, "total", tn);
        lt_jw_kuint(&w, "accepted", tok);
        lt_jw_kuint(&w, "rejected", tn - tok);
        lt_jw_kdbl(&w, "accepted_pct", tn ? 100.0 * tok / tn : 100.0);
        lt_jw_kuint(&w, "no_play", s->no_play);
        lt_jw_end_obj(&w);
        lt_jw_key(&w, "events");
        lt_jw_obj(&w);
        static const char *const evn[8] = {"unspecified", "game_started", "opponent_moved",
                                           "your_turn",   "game_over",    "chat",
                                           "nudge",       "invitation"};
        for (int e = 0; e < 8; e++)
            lt_jw_kuint(&w, evn[e], s->events[e]);
        lt_jw_end_obj(&w);
        lt_jw_kuint(&w, "stream_ends", s->stream_errors);
        lt_jw_kuint(&w, "board_mismatch", s->board_mismatch);
        lt_json_hist(&w, "driver_lag", &s->lag);
        lt_json_hist(&w, "event_lag", &s->event_lag);
        lt_jw_key(&w, "spectators");
        lt_jw_obj(&w);
        lt_jw_kuint(&w, "watch_opened", s->watch_opened);
        lt_jw_kuint(&w, "watch_events", s->watch_events);
        lt_jw_kuint(&w, "watch_games_over", s->watch_games_over);
        lt_jw_kuint(&w, "watch_ends", s->watch_ends);
        lt_json_hist(&w, "watch_lag", &s->watch_lag);
        lt_jw_end_obj(&w);
        uint64_t calls = 0, transport = 0, errors = 0;
        lt_jw_key(&w, "ops");
        lt_jw_arr(&w);
        for (int op = 0; op < LT_OP_COUNT; op++) {
            const lt_opstats *o = &s->ops[op];
            calls += o->count;
            transport += o->transport;
            errors += o->count - o->ok;
            if (o->count == 0)
                continue;
            lt_jw_obj(&w);
            lt_jw_kstr(&w, "name", o->name);
            lt_jw_kstr(&w, "method", lt_ops[op].method);
            lt_jw_kbool(&w, "gameplay", lt_ops[op].gameplay);
            lt_jw_kuint(&w, "count", o->count);
            lt_jw_kuint(&w, "ok", o->ok);
            lt_jw_kuint(&w, "transport_errors", o->transport);
            lt_jw_kdbl(&w, "rps", o->count / secs);
            lt_json_hist(&w, "corrected", &o->corrected);
            lt_json_hist(&w, "service", &o->service);
            lt_jw_key(&w, "outcomes");
            lt_jw_arr(&w);
            for (int i = 0; i < o->noutcomes; i++) {
                lt_jw_obj(&w);
                lt_jw_kint(&w, "code", o->outcomes[i].code);
                lt_jw_kstr(&w, "code_name", rpc_status_code_name(o->outcomes[i].code));
                lt_jw_kstr(&w, "reason", o->outcomes[i].reason);
                lt_jw_kuint(&w, "count", o->outcomes[i].count);
                lt_jw_end_obj(&w);
            }
            if (o->other_outcomes) {
                lt_jw_obj(&w);
                lt_jw_kint(&w, "code", -1);
                lt_jw_kstr(&w, "code_name", "OTHER");
                lt_jw_kstr(&w, "reason", "");
                lt_jw_kuint(&w, "count", o->other_outcomes);
                lt_jw_end_obj(&w);
            }
            lt_jw_end_arr(&w);
            lt_jw_end_obj(&w);
        }
        lt_jw_end_arr(&w);
        lt_jw_kuint(&w, "calls", calls);
        lt_jw_kuint(&w, "errors", errors);
        lt_jw_kuint(&w, "transport_errors", transport);
        lt_jw_kdbl(&w, "rps", calls / secs);
        lt_jw_key(&w, "resources");
        lt_jw_arr(&w);
        for (int i = 0; i < r->procs.n; i++) {
            const lt_proc_target *t = &r->procs.t[i];
            const lt_proc_step *ps = si < LT_PROC_MAX_STEPS ? &t->steps[si] : NULL;
            lt_jw_obj(&w);
            lt_jw_kstr(&w, "name", t->name);
            lt_jw_kint(&w, "pid", t->pid);
            lt_jw_kuint(&w, "samples", ps ? ps->samples : 0);
            lt_jw_kdbl(&w, "cpu_mean", ps && ps->samples ? ps->cpu_sum / ps->samples : 0);
            lt_jw_kdbl(&w, "cpu_peak", ps ? ps->cpu_peak : 0);
            lt_jw_kdbl(&w, "rss_mean_mb",
                       ps && ps->samples ? ps->rss_sum / ps->samples / 1048576.0 : 0);
            lt_jw_kdbl(&w, "rss_peak_mb", ps ? ps->rss_peak / 1048576.0 : 0);
            lt_jw_end_obj(&w);
        }
        lt_jw_end_arr(&w);
        lt_jw_end_obj(&w);
    }
    lt_jw_end_arr(&w);
    lt_jw_key(&w, "series");
    lt_jw_arr(&w);
    for (size_t i = 0; i < r->nseries; i++) {
        const lt_series_point *p = &r->series[i];
        lt_jw_obj(&w);
        lt_jw_kdbl(&w, "t", p->t);
        lt_jw_kint(&w, "players", p->players);
        lt_jw_kint(&w, "step", p->step);
        lt_jw_kdbl(&w, "rps", p->rps);
        lt_jw_kdbl(&w, "err_rps", p->err_rps);
        lt_jw_kdbl(&w, "p50_ms", p->p50_ms);
        lt_jw_kdbl(&w, "p99_ms", p->p99_ms);
        lt_jw_kdbl(&w, "max_ms", p->max_ms);
        lt_jw_kdbl(&w, "svc_p99_ms", p->svc_p99_ms);
        lt_jw_end_obj(&w);
    }
    lt_jw_end_arr(&w);
    lt_jw_end_obj(&w);
    fputc('\n', f);
    return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* HTML                                                                */

/* One SVG line chart: up to 3 series over r->series, y from 0 to the max. */
static void lt_svg_chart(FILE *f, const lt_run *r, const char *title, const char *unit, int nser,
                         double (*get[])(const lt_series_point *), const char *const names[],
                         const char *const colors[])
{
    const int W = 900, H = 260, L = 60, B = 30, T = 24;
    double tmax = r->nseries ? r->series[r->nseries - 1].t : 1, ymax = 0;
    for (size_t i = 0; i < r->nseries; i++)
        for (int s = 0; s < nser; s++)
            if (get[s](&r->series[i]) > ymax)
                ymax = get[s](&r->series[i]);
    if (ymax <= 0)
        ymax = 1;
    if (tmax <= 0)
        tmax = 1;
    fprintf(f,
            "<h3>%s</h3>\n<svg width=\"%d\" height=\"%d\" style=\"background:#fafafa;border:1px "
            "solid #ddd\">\n",
            title, W, H);
    for (int g = 0; g <= 4; g++) {
        double y = T + (H - T - B) * (1 - g / 4.0);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>", L,
                W - 10, y, y);
        fprintf(f,
                "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.3g %s</text>\n",
                L - 4, y + 4, ymax * g / 4, unit);
    }
    /* Step boundaries. */
    for (int si = 1; si <= r->step && si < r->c.nsteps; si++) {
        double x = L + (W - L - 10) * (r->steps[si].started_s / tmax);
        fprintf(f,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#bbb\" "
                "stroke-dasharray=\"4\"/>"
                "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%d players</text>\n",
                x, x, T, H - B, x + 3, T + 10, r->steps[si].players);
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" font-size=\"11\">0 s</text><text x=\"%d\" y=\"%d\" "
            "font-size=\"11\" "
            "text-anchor=\"end\">%.0f s</text>\n",
            L, H - 10, W - 10, H - 10, tmax);
    for (int s = 0; s < nser; s++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                colors[s]);
        for (size_t i = 0; i < r->nseries; i++) {
            double x = L + (W - L - 10) * (r->series[i].t / tmax);
            double y = T + (H - T - B) * (1 - get[s](&r->series[i]) / ymax);
            fprintf(f, "%.1f,%.1f ", x, y);
        }
        fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"%s\">%s</text>\n",
                L + 10 + s * 220, 14, colors[s], names[s]);
    }
    fprintf(f, "</svg>\n");
}

static double lt_g_p99(const lt_series_point *p)
{
    return p->p99_ms;
}
static double lt_g_p50(const lt_series_point *p)
{
    return p->p50_ms;
}
static double lt_g_svc(const lt_series_point *p)
{
    return p->svc_p99_ms;
}
static double lt_g_rps(const lt_series_point *p)
{
    return p->rps;
}
static double lt_g_err(const lt_series_point *p)
{
    return p->err_rps;
}
static double lt_g_players(const lt_series_point *p)
{
    return p->players;
}

int lt_report_html(lt_run *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(
        f,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>loadtest report</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:1000px}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;"
        "text-align:right}td:first-child,th:first-child,td:last-child{text-align:left}"
        ".held{color:#070}.not{color:#a00}</style></head><body>\n");
    fprintf(
        f,
        "<h1>loadtest run</h1><p>target %s; steps %s, %d ms each; tick %d ms; eval %s (+%d recon); "
        "hammer %s; end: %s</p>\n",
        r->c.target, r->c.steps_spec, r->c.step_duration_ms, r->c.tick_ms, r->c.eval ? "on" : "off",
        r->c.eval_recon, r->c.hammer ? "on" : "off", r->end_reason ? r->end_reason : "");
    fprintf(
        f, "<p>Latencies are corrected for coordinated omission: counted from each call's intended "
           "send time on the open-loop schedule; <i>svc</i> columns count from the actual "
           "send.</p>\n");
    double (*g1[])(const lt_series_point *) = {lt_g_p99, lt_g_p50, lt_g_svc};
    const char *n1[] = {"gameplay p99 (corrected)", "gameplay p50 (corrected)",
                        "gameplay p99 (service)"};
    const char *c1[] = {"#c62828", "#1565c0", "#ef6c00"};
    lt_svg_chart(f, r, "Latency over time (per second)", "ms", 3, g1, n1, c1);
    double (*g2[])(const lt_series_point *) = {lt_g_rps, lt_g_err};
    const char *n2[] = {"calls/s", "errors/s"};
    const char *c2[] = {"#2e7d32", "#c62828"};
    lt_svg_chart(f, r, "Throughput", "/s", 2, g2, n2, c2);
    double (*g3[])(const lt_series_point *) = {lt_g_players};
    const char *n3[] = {"connected players"};
    const char *c3[] = {"#6a1b9a"};
    lt_svg_chart(f, r, "Players", "", 1, g3, n3, c3);
    for (int si = 0; si <= r->step && si < r->c.nsteps; si++) {
        const lt_step_result *s = &r->steps[si];
        double secs = lt_step_secs(s);
        uint64_t tn, tok, worst;
        const char *worst_op;
        lt_turns(s, &tn, &tok);
        bool held = lt_step_held(s, &worst, &worst_op);
        fprintf(f, "<h2>Step %d: %d players, %.0f s — <span class=\"%s\">%s</span></h2>\n", si + 1,
                s->players, secs, held ? "held" : "not", held ? "held" : "not held");
        fprintf(f, "<table><tr><th>operation</th><th>count</th><th>req/s</th><th>p50</th><th>p90</"
                   "th><th>p99</th>"
                   "<th>p99.9</th><th>max</th><th>svc p99</th><th>notes</th></tr>\n");
        for (int op = 0; op < LT_OP_COUNT; op++) {
            const lt_opstats *o = &s->ops[op];
            if (!o->count)
                continue;
            char notes[512];
            lt_notes(o, notes, sizeof(notes));
            fprintf(f,
                    "<tr><td>%s</td><td>%" PRIu64
                    "</td><td>%.1f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>"
                    "<td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%s</td></tr>\n",
                    o->name, o->count, o->count / secs, lt_hist_percentile(&o->corrected, 50) / 1e6,
                    lt_hist_percentile(&o->corrected, 90) / 1e6,
                    lt_hist_percentile(&o->corrected, 99) / 1e6,
                    lt_hist_percentile(&o->corrected, 99.9) / 1e6, o->corrected.max / 1e6,
                    lt_hist_percentile(&o->service, 99) / 1e6, notes);
        }
        fprintf(f,
                "</table><p>times in ms. Games started %" PRIu64 ", finished %" PRIu64
                "; turns accepted %" PRIu64 " of %" PRIu64 "; board mismatches %" PRIu64 ".</p>\n",
                s->games_started, s->games_finished, tok, tn, s->board_mismatch);
        fprintf(f, "<table><tr><th>process</th><th>cores mean</th><th>cores peak</th><th>RSS peak "
                   "MB</th></tr>\n");
        for (int i = 0; i < r->procs.n; i++) {
            const lt_proc_target *t = &r->procs.t[i];
            const lt_proc_step *ps = &t->steps[si];
            fprintf(f, "<tr><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.0f</td></tr>\n", t->name,
                    ps->samples ? ps->cpu_sum / ps->samples : 0, ps->cpu_peak,
                    ps->rss_peak / 1048576.0);
        }
        fprintf(f, "</table>\n");
    }
    fprintf(f, "</body></html>\n");
    return fclose(f) == 0 ? 0 : -1;
}

/*
 * ghz_report.c — `loadtest ghz`'s reports, laid out as ghz's: the summary
 * with its histogram and latency distribution, JSON (plain or pretty) and
 * CSV of every call. Reads the finished run; sends nothing.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ghz.h"
#include "jsonw.h"

static void lt_ghz__fmt_dur(char *buf, size_t len, uint64_t ns)
{
    if (ns >= 1000000000ull)
        snprintf(buf, len, "%.2f s", ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.2f µs", ns / 1e3);
}

static const double lt_ghz_pcts[] = {10, 25, 50, 75, 90, 95, 99, 99.9};
#define LT_GHZ_NPCTS (sizeof(lt_ghz_pcts) / sizeof(lt_ghz_pcts[0]))

/* ghz's histogram: 10 equal-width buckets from fastest to slowest, each
 * counting the latencies up to its mark. */
static void lt_ghz__buckets(const lt_hist *h, double marks[11], uint64_t counts[11])
{
    double fastest = (double)h->min, slowest = (double)h->max;
    double bs = (slowest - fastest) / 10.0;
    for (int i = 0; i < 10; i++)
        marks[i] = fastest + bs * i;
    marks[10] = slowest;
    memset(counts, 0, 11 * sizeof(uint64_t));
    if (h->count == 0)
        return;
    for (size_t i = 0; i < h->nbuckets; i++) {
        if (!h->buckets[i])
            continue;
        double v = (double)lt_hist_bucket_low(h, i);
        if (v < fastest)
            v = fastest;
        int b = 0;
        while (b < 10 && v > marks[b])
            b++;
        counts[b] += h->buckets[i];
    }
}

static void lt_ghz__summary(lt_ghz *g, FILE *f)
{
    const lt_hist *h = &g->service;
    uint64_t total = g->t_end - g->t0;
    char b1[32];
    fprintf(f, "\nSummary:\n");
    if (g->o.name)
        fprintf(f, "  Name:\t%s\n", g->o.name);
    fprintf(f, "  Count:\t%" PRIu64 "\n", g->done);
    lt_ghz__fmt_dur(b1, sizeof(b1), total);
    fprintf(f, "  Total:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), h->count ? h->max : 0);
    fprintf(f, "  Slowest:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), h->count ? h->min : 0);
    fprintf(f, "  Fastest:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), (uint64_t)lt_hist_mean(h));
    fprintf(f, "  Average:\t%s\n", b1);
    fprintf(f, "  Requests/sec:\t%.2f\n", total ? g->done / (total / 1e9) : 0.0);
    fprintf(f, "\nResponse time histogram:\n");
    double marks[11];
    uint64_t counts[11], maxc = 1;
    lt_ghz__buckets(h, marks, counts);
    for (int i = 0; i < 11; i++)
        if (counts[i] > maxc)
            maxc = counts[i];
    for (int i = 0; i < 11 && h->count; i++) {
        int bar = (int)(counts[i] * 40 / maxc);
        fprintf(f, "  %.3f [%" PRIu64 "]\t|", marks[i] / 1e6, counts[i]);
        for (int k = 0; k < bar; k++)
            fputs("∎", f);
        fputc('\n', f);
    }
    fprintf(f, "\nLatency distribution:\n");
    for (size_t i = 0; i < LT_GHZ_NPCTS && h->count; i++) {
        lt_ghz__fmt_dur(b1, sizeof(b1), lt_hist_percentile(h, lt_ghz_pcts[i]));
        fprintf(f, "  %g %% in %s \n", lt_ghz_pcts[i], b1);
    }
    fprintf(f, "\nCorrected latency (from the intended send time%s):\n",
            g->o.rps > 0 ? ", open loop" : "; closed loop without --rps, so equal to the above");
    if (g->corrected.count) {
        static const double cp[] = {50, 90, 99, 99.9, 100};
        for (size_t i = 0; i < 5; i++) {
            lt_ghz__fmt_dur(b1, sizeof(b1), lt_hist_percentile(&g->corrected, cp[i]));
            fprintf(f, "  %s%g %% in %s\n", cp[i] == 100 ? "max " : "", cp[i], b1);
        }
    }
    fprintf(f, "\nStatus code distribution:\n");
    for (int c = 0; c <= 16; c++)
        if (g->code_counts[c])
            fprintf(f, "  [%s]   %" PRIu64 " responses   \n", lt_go_code_name(c),
                    g->code_counts[c]);
    if (g->nerrors) {
        fprintf(f, "\nError distribution:\n");
        for (size_t i = 0; i < g->nerrors; i++)
            fprintf(f, "  [%" PRIu64 "]   %s   \n", g->errors[i].count, g->errors[i].text);
    }
    fprintf(f, "\nEnd reason: %s\n", g->end_reason);
}

static void lt_ghz__iso(char *buf, size_t len, int64_t wall_ns)
{
    time_t s = (time_t)(wall_ns / 1000000000ll);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%09lldZ", (long long)(wall_ns % 1000000000ll));
}

static void lt_ghz__latdist(lt_jw *w, const char *key, const lt_hist *h)
{
    lt_jw_key(w, key);
    lt_jw_arr(w);
    for (size_t i = 0; i < LT_GHZ_NPCTS && h->count; i++) {
        lt_jw_obj(w);
        lt_jw_kdbl(w, "percentage", lt_ghz_pcts[i]);
        lt_jw_kuint(w, "latency", lt_hist_percentile(h, lt_ghz_pcts[i]));
        lt_jw_end_obj(w);
    }
    lt_jw_end_arr(w);
}

static void lt_ghz__json(lt_ghz *g, FILE *f, bool pretty)
{
    const lt_hist *h = &g->service;
    lt_jw w;
    lt_jw_init(&w, f, pretty);
    char ts[64];
    uint64_t total = g->t_end - g->t0;
    lt_jw_obj(&w);
    if (g->o.name)
        lt_jw_kstr(&w, "name", g->o.name);
    lt_ghz__iso(ts, sizeof(ts), g->wall_start);
    lt_jw_kstr(&w, "date", ts);
    lt_jw_kstr(&w, "endReason", g->end_reason);
    lt_jw_key(&w, "options");
    lt_jw_obj(&w);
    lt_jw_kstr(&w, "host", g->o.host);
    lt_jw_kstr(&w, "call", g->m.path + 1);
    lt_jw_kbool(&w, "insecure", g->o.tls.ca_file[0] == '\0');
    lt_jw_kuint(&w, "total", g->o.duration_ms > 0 ? 0 : (uint64_t)g->o.total);
    lt_jw_kint(&w, "concurrency", g->o.concurrency);
    lt_jw_kint(&w, "connections", g->o.connections);
    lt_jw_kdbl(&w, "rps", g->o.rps);
    lt_jw_kint(&w, "duration", g->o.duration_ms * 1000000ll);
    lt_jw_kint(&w, "max-duration", g->o.max_duration_ms * 1000000ll);
    lt_jw_kint(&w, "timeout", g->o.timeout_ms * 1000000ll);
    lt_jw_kint(&w, "dial-timeout", g->o.connect_timeout_ms * 1000000ll);
    lt_jw_key(&w, "data");
    if (g->o.data) {
        cJSON *d = cJSON_Parse(g->o.data);
        char *txt = d ? cJSON_PrintUnformatted(d) : NULL;
        /* Raw JSON, as ghz echoes it. */
        if (txt) {
            if (!w.after_key)
                fputc(',', f);
            w.after_key = false;
            fputs(txt, f);
        } else {
            lt_jw_null(&w);
        }
        free(txt);
        cJSON_Delete(d);
    } else {
        lt_jw_null(&w);
    }
    lt_jw_key(&w, "metadata");
    lt_jw_obj(&w);
    for (size_t i = 0; i < g->nmd; i++)
        lt_jw_kstr(&w, g->md[i].key, g->md[i].value);
    lt_jw_end_obj(&w);
    lt_jw_kint(&w, "CPUs", sysconf(_SC_NPROCESSORS_ONLN));
    lt_jw_end_obj(&w);
    lt_jw_kuint(&w, "count", g->done);
    lt_jw_kuint(&w, "total", total);
    lt_jw_kuint(&w, "average", (uint64_t)lt_hist_mean(h));
    lt_jw_kuint(&w, "fastest", h->count ? h->min : 0);
    lt_jw_kuint(&w, "slowest", h->max);
    lt_jw_kdbl(&w, "rps", total ? g->done / (total / 1e9) : 0.0);
    lt_jw_key(&w, "errorDistribution");
    lt_jw_obj(&w);
    for (size_t i = 0; i < g->nerrors; i++)
        lt_jw_kuint(&w, g->errors[i].text, g->errors[i].count);
    lt_jw_end_obj(&w);
    lt_jw_key(&w, "statusCodeDistribution");
    lt_jw_obj(&w);
    for (int c = 0; c <= 16; c++)
        if (g->code_counts[c])
            lt_jw_kuint(&w, lt_go_code_name(c), g->code_counts[c]);
    lt_jw_end_obj(&w);
    lt_ghz__latdist(&w, "latencyDistribution", h);
    lt_jw_key(&w, "histogram");
    lt_jw_arr(&w);
    if (h->count) {
        double marks[11];
        uint64_t counts[11];
        lt_ghz__buckets(h, marks, counts);
        for (int i = 0; i < 11; i++) {
            lt_jw_obj(&w);
            lt_jw_kdbl(&w, "mark", marks[i] / 1e9);
            lt_jw_kuint(&w, "count", counts[i]);
            lt_jw_kdbl(&w, "frequency", (double)counts[i] / (double)h->count);
            lt_jw_end_obj(&w);
        }
    }
    lt_jw_end_arr(&w);
    lt_jw_key(&w, "details");
    lt_jw_arr(&w);
    for (size_t i = 0; i < g->ndetails; i++) {
        const lt_ghz_detail *d = &g->details[i];
        lt_ghz__iso(ts, sizeof(ts), d->wall_ns);
        lt_jw_obj(&w);
        lt_jw_kstr(&w, "timestamp", ts);
        lt_jw_kuint(&w, "latency", d->latency_ns);
        lt_jw_kstr(&w, "error", d->error >= 0 ? g->errors[d->error].text : "");
        lt_jw_kstr(&w, "status", lt_go_code_name(d->code));
        lt_jw_end_obj(&w);
    }
    lt_jw_end_arr(&w);
    /* Beyond ghz: the open-loop view and p99.9. */
    lt_ghz__latdist(&w, "correctedLatencyDistribution", &g->corrected);
    lt_jw_kuint(&w, "correctedSlowest", g->corrected.max);
    lt_jw_kuint(&w, "p999", lt_hist_percentile(h, 99.9));
    lt_jw_kuint(&w, "correctedP999", lt_hist_percentile(&g->corrected, 99.9));
    lt_jw_end_obj(&w);
    fputc('\n', f);
}

static void lt_ghz__csv(lt_ghz *g, FILE *f)
{
    fprintf(f, "duration (ms),status,error\n");
    for (size_t i = 0; i < g->ndetails; i++) {
        const lt_ghz_detail *d = &g->details[i];
        const char *e = d->error >= 0 ? g->errors[d->error].text : "";
        fprintf(f, "%.2f,%s,", d->latency_ns / 1e6, lt_go_code_name(d->code));
        if (strchr(e, ',') || strchr(e, '"')) {
            fputc('"', f);
            for (const char *p = e; *p; p++) {
                if (*p == '"')
                    fputc('"', f);
                fputc(*p, f);
            }
            fputc('"', f);
        } else {
            fputs(e, f);
        }
        fputc('\n', f);
    }
}

/* ------------------------------------------------------------------ */

void lt_ghz_report(lt_ghz *g, FILE *f)
{
    if (!strcmp(g->o.format, "json"))
        lt_ghz__json(g, f, false);
    else if (!strcmp(g->o.format, "pretty"))
        lt_ghz__json(g, f, true);
    else if (!strcmp(g->o.format, "csv"))
        lt_ghz__csv(g, f);
    else
        lt_ghz__summary(g, f);
}

/*
 * trace.c — W3C trace context (rpc/trace.h): the strict traceparent parser,
 * id generation, the thread's current trace, and the server side's policy
 * (accept or replace a caller's context, sample, log a span line).
 *
 * The server calls rpc__trace_accept when a call arrives and
 * rpc__trace_end when it is freed; client.c captures the current trace when
 * a call starts (its traceparent) and re-enters it around the callback;
 * log.c appends the current trace id to every line. Nothing here takes a
 * lock: ids come from a per-thread buffer of kernel randomness, counters
 * are atomics.
 */
#include <errno.h>
#include <grpc/grpc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "internal.h"
#include "rpc/log.h"
#include "rpc/metrics.h"
#include "rpc/trace.h"

/* Unsampled calls that failed with a server-side code log their span too,
 * but at most this many per second and process, so a flood of failing
 * calls cannot flood the logs (the rest are counted). */
#define RPC__TRACE_UNSAMPLED_SPANS_PER_S 100

static const char rpc__hex[] = "0123456789abcdef";

/* ------------------------------------------------------------------ */
/* Parsing                                                             */

/* Lowercase hex only: the spec forbids uppercase in version 00. */
static bool rpc__trace_hex(const char *s, size_t n, char *out)
{
    bool nonzero = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
        if (c != '0')
            nonzero = true;
    }
    if (out) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return nonzero;
}

rpc_trace_result rpc_trace_parse(const char *s, size_t len, rpc_trace *out)
{
    if (s == NULL)
        return RPC_TRACE_ABSENT;
    if (len > RPC_TRACEPARENT_OVERSIZED)
        return RPC_TRACE_OVERSIZED;
    /* Only version 00 is accepted, so exactly its length: a later version
     * (or ff, which the spec calls invalid) starts a fresh trace here. */
    if (len != RPC_TRACEPARENT_LEN || s[0] != '0' || s[1] != '0' || s[2] != '-' || s[35] != '-' ||
        s[52] != '-')
        return RPC_TRACE_MALFORMED;
    char trace_id[33], parent_id[17];
    if (!rpc__trace_hex(s + 3, 32, trace_id) || !rpc__trace_hex(s + 36, 16, parent_id))
        return RPC_TRACE_MALFORMED; /* not hex, or all zeros */
    /* Flags may be any value (unknown bits are ignored, "00" included), but
     * must be two lowercase hex digits. */
    char f0 = s[53], f1 = s[54];
    if (f0 == '\0' || f1 == '\0' || !strchr(rpc__hex, f0) || !strchr(rpc__hex, f1))
        return RPC_TRACE_MALFORMED;
    memcpy(out->trace_id, trace_id, sizeof(trace_id));
    memcpy(out->parent_id, parent_id, sizeof(parent_id));
    int lo = f1 <= '9' ? f1 - '0' : f1 - 'a' + 10;
    out->sampled = (lo & 1) != 0;
    return RPC_TRACE_VALID;
}

const char *rpc_trace_result_name(rpc_trace_result r)
{
    switch (r) {
    case RPC_TRACE_VALID:
        return "valid";
    case RPC_TRACE_ABSENT:
        return "absent";
    case RPC_TRACE_MALFORMED:
        return "malformed";
    case RPC_TRACE_OVERSIZED:
        return "oversized";
    case RPC_TRACE_NRESULTS:
        break;
    }
    return "unknown";
}

/* ------------------------------------------------------------------ */
/* Ids                                                                 */

/* Ids come from the kernel's generator, read 512 bytes at a time into a
 * per-thread buffer: unique across processes and hosts without any
 * seeding of our own, at one getrandom(2) per 64 draws (a call takes two
 * or three) instead of one per id. */
#define RPC__RAND_BUF 512
static _Thread_local uint8_t rpc__rand_buf[RPC__RAND_BUF];
static _Thread_local size_t rpc__rand_left;

static uint64_t rpc__rand64(void)
{
    if (rpc__rand_left < sizeof(uint64_t)) {
        size_t got = 0;
        while (got < RPC__RAND_BUF) {
            ssize_t n = getrandom(rpc__rand_buf + got, RPC__RAND_BUF - got, 0);
            if (n > 0) {
                got += (size_t)n;
            } else if (n < 0 && errno != EINTR) {
                /* No kernel generator (a seccomp filter, a very old
                 * kernel): a clock-and-address mix, still distinct per
                 * thread and call; ids only correlate logs. */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                uint64_t v = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
                             (uint64_t)(uintptr_t)&ts ^ ((uint64_t)got << 56);
                for (size_t i = got; i < RPC__RAND_BUF; i++, v = v * 6364136223846793005ULL + 1)
                    rpc__rand_buf[i] = (uint8_t)(v >> 56);
                got = RPC__RAND_BUF;
            }
        }
        rpc__rand_left = RPC__RAND_BUF;
    }
    uint64_t v;
    rpc__rand_left -= sizeof(v);
    memcpy(&v, rpc__rand_buf + rpc__rand_left, sizeof(v));
    return v;
}

/* 16 hex digits of a random non-zero 64-bit value. */
static void rpc__rand_hex16(char *out)
{
    uint64_t v;
    do
        v = rpc__rand64();
    while (v == 0);
    for (int i = 15; i >= 0; i--) {
        out[i] = rpc__hex[v & 15];
        v >>= 4;
    }
}

void rpc_trace_start(rpc_trace *t, bool sampled)
{
    t->on = true;
    t->sampled = sampled;
    rpc__rand_hex16(t->trace_id);
    rpc__rand_hex16(t->trace_id + 16);
    t->trace_id[32] = '\0';
    rpc__rand_hex16(t->span_id);
    t->span_id[16] = '\0';
    t->parent_id[0] = '\0';
}

void rpc_trace_continue(rpc_trace *t)
{
    t->on = true;
    rpc__rand_hex16(t->span_id);
    t->span_id[16] = '\0';
}

void rpc_trace_header(const rpc_trace *t, char *out)
{
    memcpy(out, "00-", 3);
    memcpy(out + 3, t->trace_id, 32);
    out[35] = '-';
    memcpy(out + 36, t->span_id, 16);
    out[52] = '-';
    out[53] = '0';
    out[54] = t->sampled ? '1' : '0';
    out[55] = '\0';
}

/* ------------------------------------------------------------------ */
/* The thread's current trace                                          */

static _Thread_local rpc_trace rpc__current;

const rpc_trace *rpc_trace_current(void)
{
    return rpc__current.on ? &rpc__current : NULL;
}

rpc_trace rpc_trace_enter(const rpc_trace *t)
{
    rpc_trace prev = rpc__current;
    if (t && t->on)
        rpc__current = *t;
    else
        rpc__current.on = false;
    return prev;
}

void rpc_trace_leave(const rpc_trace *prev)
{
    rpc__current = *prev;
}

/* ------------------------------------------------------------------ */
/* The server's policy                                                 */

struct rpc__tracer {
    bool on;
    /* A public port decides sampling itself: a client's sampled flag would
     * let it have every one of its calls logged at every hop. */
    bool edge;
    int sample_one_in; /* 0: never */
    metric *contexts[RPC_TRACE_NRESULTS];
    metric *spans_logged;
    metric *spans_suppressed;
    /* The unsampled span budget: the second it counts, and the count. */
    atomic_llong budget_second;
    atomic_int budget_used;
};

rpc__tracer *rpc__tracer_create(const rpc_server_config *cfg, metrics_registry *m)
{
    rpc__tracer *tr = calloc(1, sizeof(*tr));
    if (tr == NULL)
        return NULL;
    tr->on = cfg->trace;
    tr->edge = !cfg->internal_port;
    tr->sample_one_in = cfg->trace_sample;
    for (int r = 0; r < RPC_TRACE_NRESULTS; r++) {
        char labels[40];
        snprintf(labels, sizeof labels, "result=\"%s\"", rpc_trace_result_name(r));
        tr->contexts[r] = metrics_counter(m, "rpc_trace_contexts_total", labels,
                                          "Inbound calls by what their traceparent header was "
                                          "(all but valid start a fresh trace)");
    }
    tr->spans_logged = metrics_counter(m, "rpc_trace_span_lines_total", "outcome=\"logged\"",
                                       "Span log lines (sampled calls, and failed calls within "
                                       "the per-second budget), and those the budget suppressed");
    tr->spans_suppressed =
        metrics_counter(m, "rpc_trace_span_lines_total", "outcome=\"suppressed\"",
                        "Span log lines (sampled calls, and failed calls within "
                        "the per-second budget), and those the budget "
                        "suppressed");
    metric *sample = metrics_gauge(m, "rpc_trace_sample_one_in", NULL,
                                   "New traces are sampled one in this many (0: none; -1: tracing "
                                   "off)");
    metric_set(sample, tr->on ? tr->sample_one_in : -1);
    return tr;
}

void rpc__tracer_destroy(rpc__tracer *tr)
{
    free(tr);
}

static bool rpc__trace_draw(const rpc__tracer *tr)
{
    if (tr->sample_one_in <= 0)
        return false;
    return tr->sample_one_in == 1 || rpc__rand64() % (uint64_t)tr->sample_one_in == 0;
}

void rpc__trace_accept(rpc__tracer *tr, const grpc_metadata_array *md, rpc_trace *out)
{
    if (tr == NULL || !tr->on) {
        out->on = false;
        return;
    }
    static const char key[] = RPC_TRACE_HEADER;
    const char *value = NULL;
    size_t len = 0;
    rpc_trace_result r = RPC_TRACE_ABSENT;
    for (size_t i = 0; i < md->count; i++) {
        const grpc_metadata *m = &md->metadata[i];
        if (GRPC_SLICE_LENGTH(m->key) != sizeof(key) - 1 ||
            memcmp(GRPC_SLICE_START_PTR(m->key), key, sizeof(key) - 1) != 0)
            continue;
        if (value != NULL) {
            /* Two headers: which one is meant is anybody's guess. */
            r = RPC_TRACE_MALFORMED;
            break;
        }
        value = (const char *)GRPC_SLICE_START_PTR(m->value);
        len = GRPC_SLICE_LENGTH(m->value);
    }
    if (r == RPC_TRACE_ABSENT && value != NULL)
        r = rpc_trace_parse(value, len, out);
    metric_add(tr->contexts[r], 1);
    if (r == RPC_TRACE_VALID) {
        if (tr->edge)
            out->sampled = rpc__trace_draw(tr);
        rpc_trace_continue(out);
    } else {
        rpc_trace_start(out, rpc__trace_draw(tr));
    }
}

/* Codes that say the server side failed: worth a span line unsampled. */
static bool rpc__trace_server_failure(grpc_status_code code)
{
    switch (code) {
    case GRPC_STATUS_UNKNOWN:
    case GRPC_STATUS_DEADLINE_EXCEEDED:
    case GRPC_STATUS_INTERNAL:
    case GRPC_STATUS_UNAVAILABLE:
    case GRPC_STATUS_DATA_LOSS:
        return true;
    default:
        return false;
    }
}

static bool rpc__trace_budget(rpc__tracer *tr)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    long long now = (long long)ts.tv_sec;
    long long seen = atomic_load(&tr->budget_second);
    if (seen != now && atomic_compare_exchange_strong(&tr->budget_second, &seen, now))
        atomic_store(&tr->budget_used, 0);
    return atomic_fetch_add(&tr->budget_used, 1) < RPC__TRACE_UNSAMPLED_SPANS_PER_S;
}

void rpc__trace_end(rpc__tracer *tr, const rpc_trace *t, const char *method, grpc_status_code code,
                    int64_t dur_ns)
{
    if (tr == NULL || !t->on)
        return;
    if (!t->sampled) {
        if (!rpc__trace_server_failure(code))
            return;
        if (!rpc__trace_budget(tr)) {
            metric_add(tr->spans_suppressed, 1);
            return;
        }
    }
    metric_add(tr->spans_logged, 1);
    rpc_trace prev = rpc_trace_enter(t);
    log_info("span", "method=%s code=%s ms=%.3f span_id=%s parent_id=%s sampled=%d", method,
             rpc_status_code_name(code), (double)dur_ns / 1e6, t->span_id,
             t->parent_id[0] ? t->parent_id : "-", t->sampled ? 1 : 0);
    rpc_trace_leave(&prev);
}

/*
 * metrics.c — Prometheus counters, gauges and histograms (rpc/metrics.h) and
 * the small HTTP endpoint that serves them.
 *
 * Concurrency: the registry mutex guards only the shape of the registry
 * (registration and rendering). Updates touch a metric's own C11 atomics with
 * relaxed ordering: a scrape needs each number to be a real value, not a
 * consistent snapshot across numbers, so no update ever takes a lock.
 *
 * A histogram keeps one atomic count per bucket (not cumulative; rendering
 * accumulates) and its sum as the bit pattern of a double in an atomic
 * uint64, updated with a compare-and-swap loop. We chose the double over a
 * fixed-point int64 of micro-units because histograms here measure both
 * sub-millisecond latencies and byte sizes in the megabytes: a double keeps
 * full relative precision for both with no scale to pick per metric, and the
 * CAS only retries when two threads observe into the same histogram at the
 * same instant. _count is rendered as the sum of the bucket counts read
 * during that scrape, so it always equals the +Inf bucket.
 */
#include "rpc/metrics.h"

#include "rpc/addr.h"

#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef enum metrics__kind { METRICS__COUNTER, METRICS__GAUGE, METRICS__HISTOGRAM } metrics__kind;

struct metric {
    metrics__kind kind;
    char *labels;          /* "" when none */
    _Atomic int64_t value; /* counter, gauge */
    double *bounds;        /* histogram: ascending upper bounds */
    size_t nbounds;
    _Atomic uint64_t *buckets; /* nbounds + 1 counts, the last is +Inf */
    _Atomic uint64_t sum_bits; /* a double's bit pattern */
};

/* All metrics of one name: one HELP/TYPE block. */
typedef struct metrics__family {
    char *name;
    char *help;
    metrics__kind kind;
    metric **metrics;
    size_t count, cap;
} metrics__family;

struct metrics_registry {
    pthread_mutex_t lock;
    metrics__family **families; /* in order of first registration */
    size_t count, cap;
    struct MHD_Daemon *daemon; /* the /metrics endpoint, or NULL */
};

const double metrics_latency_bounds[] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10,
};
const size_t metrics_latency_bounds_count =
    sizeof(metrics_latency_bounds) / sizeof(metrics_latency_bounds[0]);

/* ------------------------------------------------------------------ */
/* Registry                                                            */

metrics_registry *metrics_registry_create(void)
{
    metrics_registry *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void metrics__metric_free(metric *m)
{
    if (m == NULL)
        return;
    free(m->labels);
    free(m->bounds);
    free((void *)m->buckets);
    free(m);
}

void metrics_registry_destroy(metrics_registry *r)
{
    if (r == NULL)
        return;
    /* Stop the endpoint first: its thread renders from the registry. */
    if (r->daemon != NULL)
        MHD_stop_daemon(r->daemon);
    for (size_t i = 0; i < r->count; i++) {
        metrics__family *f = r->families[i];
        for (size_t j = 0; j < f->count; j++)
            metrics__metric_free(f->metrics[j]);
        free(f->metrics);
        free(f->name);
        free(f->help);
        free(f);
    }
    free(r->families);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*. */
static bool metrics__name_valid(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return false;
    for (const char *p = name; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                  (p != name && c >= '0' && c <= '9');
        if (!ok)
            return false;
    }
    return true;
}

static bool metrics__bounds_valid(const double *bounds, size_t n)
{
    if (n > 0 && bounds == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
            return false;
    }
    return true;
}

/* Grows an array of pointers to hold one more; 0 or -1 on OOM. */
static int metrics__grow(void ***arr, size_t count, size_t *cap)
{
    if (count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void **n = realloc(*arr, ncap * sizeof(*n));
    if (n == NULL)
        return -1;
    *arr = n;
    *cap = ncap;
    return 0;
}

static metrics__family *metrics__family_get(metrics_registry *r, const char *name, const char *help,
                                            metrics__kind kind)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->families[i]->name, name) == 0)
            return r->families[i]->kind == kind ? r->families[i] : NULL;

    metrics__family *f = calloc(1, sizeof(*f));
    if (f == NULL)
        goto fail;
    f->kind = kind;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    if (f->name == NULL || f->help == NULL)
        goto fail;
    if (metrics__grow((void ***)&r->families, r->count, &r->cap) != 0)
        goto fail;
    r->families[r->count++] = f;
    return f;
fail:
    if (f != NULL) {
        free(f->name);
        free(f->help);
        free(f);
    }
    return NULL;
}

/* Registers (or finds) the metric name{labels}. Returns NULL on a bad name,
 * bad bounds, a name already used with another kind, a histogram re-used
 * with other bounds, or OOM. */
static metric *metrics__register(metrics_registry *r, metrics__kind kind, const char *name,
                                 const char *labels, const char *help, const double *bounds,
                                 size_t nbounds)
{
    metric *m = NULL;
    if (r == NULL || !metrics__name_valid(name))
        return NULL;
    if (kind == METRICS__HISTOGRAM && !metrics__bounds_valid(bounds, nbounds))
        return NULL;
    if (labels == NULL)
        labels = "";

    pthread_mutex_lock(&r->lock);
    metrics__family *f = metrics__family_get(r, name, help, kind);
    if (f == NULL)
        goto fail;
    for (size_t i = 0; i < f->count; i++) {
        metric *e = f->metrics[i];
        if (strcmp(e->labels, labels) != 0)
            continue;
        /* Same series again (first-use registration from two threads). */
        if (kind == METRICS__HISTOGRAM &&
            (e->nbounds != nbounds ||
             (nbounds > 0 && memcmp(e->bounds, bounds, nbounds * sizeof(double)) != 0)))
            goto fail;
        m = e;
        goto done;
    }

    m = calloc(1, sizeof(*m));
    if (m == NULL)
        goto fail;
    m->kind = kind;
    m->labels = strdup(labels);
    if (m->labels == NULL)
        goto fail;
    if (kind == METRICS__HISTOGRAM) {
        m->nbounds = nbounds;
        m->bounds = malloc((nbounds ? nbounds : 1) * sizeof(double));
        m->buckets = calloc(nbounds + 1, sizeof(*m->buckets));
        if (m->bounds == NULL || m->buckets == NULL)
            goto fail;
        if (nbounds > 0)
            memcpy(m->bounds, bounds, nbounds * sizeof(double));
        double zero = 0.0;
        uint64_t bits;
        memcpy(&bits, &zero, sizeof(bits));
        atomic_init(&m->sum_bits, bits);
    }
    if (metrics__grow((void ***)&f->metrics, f->count, &f->cap) != 0)
        goto fail;
    f->metrics[f->count++] = m;
    goto done;
fail:
    metrics__metric_free(m);
    m = NULL;
done:
    pthread_mutex_unlock(&r->lock);
    return m;
}

metric *metrics_counter(metrics_registry *r, const char *name, const char *labels, const char *help)
{
    return metrics__register(r, METRICS__COUNTER, name, labels, help, NULL, 0);
}

metric *metrics_gauge(metrics_registry *r, const char *name, const char *labels, const char *help)
{
    return metrics__register(r, METRICS__GAUGE, name, labels, help, NULL, 0);
}

metric *metrics_histogram(metrics_registry *r, const char *name, const char *labels,
                          const char *help, const double *bounds, size_t nbounds)
{
    return metrics__register(r, METRICS__HISTOGRAM, name, labels, help, bounds, nbounds);
}

/* ------------------------------------------------------------------ */
/* Updates (hot path: no locks)                                        */

/* Updates accept NULL so that a failed registration does not crash a
 * server; it only loses that metric. */
void metric_add(metric *m, int64_t delta)
{
    if (m == NULL || m->kind == METRICS__HISTOGRAM)
        return;
    if (m->kind == METRICS__COUNTER && delta < 0)
        return; /* counters only go up */
    atomic_fetch_add_explicit(&m->value, delta, memory_order_relaxed);
}

void metric_set(metric *m, int64_t value)
{
    if (m == NULL || m->kind != METRICS__GAUGE)
        return;
    atomic_store_explicit(&m->value, value, memory_order_relaxed);
}

void metric_observe(metric *m, double value)
{
    if (m == NULL || m->kind != METRICS__HISTOGRAM || isnan(value))
        return;
    /* First bucket whose upper bound is >= value (Prometheus `le`). */
    size_t lo = 0, hi = m->nbounds;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (value <= m->bounds[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    atomic_fetch_add_explicit(&m->buckets[lo], 1, memory_order_relaxed);

    uint64_t old = atomic_load_explicit(&m->sum_bits, memory_order_relaxed), neu;
    do {
        double sum;
        memcpy(&sum, &old, sizeof(sum));
        sum += value;
        memcpy(&neu, &sum, sizeof(neu));
    } while (!atomic_compare_exchange_weak_explicit(&m->sum_bits, &old, neu, memory_order_relaxed,
                                                    memory_order_relaxed));
}

int64_t metric_value(const metric *m)
{
    if (m == NULL)
        return 0;
    if (m->kind != METRICS__HISTOGRAM)
        return atomic_load_explicit(&((metric *)m)->value, memory_order_relaxed);
    uint64_t n = 0;
    for (size_t i = 0; i <= m->nbounds; i++)
        n += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
    return (int64_t)n;
}

/* ------------------------------------------------------------------ */
/* Rendering (text exposition format 0.0.4)                            */

typedef struct metrics__buf {
    char *data;
    size_t len, cap;
    bool oom;
} metrics__buf;

static void metrics__printf(metrics__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void metrics__printf(metrics__buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (int attempt = 0; attempt < 2; attempt++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2;
        while (ncap - b->len <= (size_t)n)
            ncap *= 2;
        char *d = realloc(b->data, ncap);
        if (d == NULL) {
            b->oom = true;
            return;
        }
        b->data = d;
        b->cap = ncap;
    }
}

/* Formats v as Go's strconv.FormatFloat(v, 'g', -1, 64) does, which is what
 * the Prometheus Go client prints: the fewest digits that read back as the
 * same double, in exponent form below 1e-4 and from 1e6 up ("5e-05", "0.1",
 * "10", "250000", "1e+06", "+Inf"). Matching it keeps `le` labels identical
 * across clients. */
static void metrics__fmt_double(double v, char *out, size_t len)
{
    if (isnan(v)) {
        snprintf(out, len, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    int digits = 17;
    for (int p = 1; p <= 17; p++) {
        snprintf(out, len, "%.*e", p - 1, v);
        if (strtod(out, NULL) == v) {
            digits = p;
            break;
        }
    }
    snprintf(out, len, "%.*e", digits - 1, v);
    const char *e = strchr(out, 'e');
    int exp = e ? atoi(e + 1) : 0;
    if (exp < -4 || exp >= 6)
        return; /* keep the exponent form */
    int decimals = digits - 1 - exp;
    snprintf(out, len, "%.*f", decimals > 0 ? decimals : 0, v);
}

/* HELP text escapes backslash and newline. */
static void metrics__help(metrics__buf *b, const metrics__family *f)
{
    metrics__printf(b, "# HELP %s ", f->name);
    for (const char *p = f->help; *p; p++) {
        if (*p == '\\')
            metrics__printf(b, "\\\\");
        else if (*p == '\n')
            metrics__printf(b, "\\n");
        else
            metrics__printf(b, "%c", *p);
    }
    static const char *const types[] = {"counter", "gauge", "histogram"};
    metrics__printf(b, "\n# TYPE %s %s\n", f->name, types[f->kind]);
}

static void metrics__histogram(metrics__buf *b, const char *name, const metric *m)
{
    const char *sep = m->labels[0] ? "," : "";
    char num[40];
    uint64_t cum = 0;
    for (size_t i = 0; i <= m->nbounds; i++) {
        cum += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
        if (i < m->nbounds)
            metrics__fmt_double(m->bounds[i], num, sizeof(num));
        else
            snprintf(num, sizeof(num), "+Inf");
        metrics__printf(b, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, m->labels, sep, num,
                        (unsigned long long)cum);
    }
    uint64_t bits = atomic_load_explicit(&((metric *)m)->sum_bits, memory_order_relaxed);
    double sum;
    memcpy(&sum, &bits, sizeof(sum));
    metrics__fmt_double(sum, num, sizeof(num));
    if (m->labels[0]) {
        metrics__printf(b, "%s_sum{%s} %s\n", name, m->labels, num);
        metrics__printf(b, "%s_count{%s} %llu\n", name, m->labels, (unsigned long long)cum);
    } else {
        metrics__printf(b, "%s_sum %s\n", name, num);
        metrics__printf(b, "%s_count %llu\n", name, (unsigned long long)cum);
    }
}

size_t metrics_render(metrics_registry *r, char **buf)
{
    metrics__buf b = {.data = malloc(4096), .cap = 4096};
    *buf = NULL;
    if (b.data == NULL)
        return 0;
    b.data[0] = '\0';

    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->count; i++) {
        const metrics__family *f = r->families[i];
        metrics__help(&b, f);
        for (size_t j = 0; j < f->count; j++) {
            const metric *m = f->metrics[j];
            if (f->kind == METRICS__HISTOGRAM) {
                metrics__histogram(&b, f->name, m);
                continue;
            }
            long long v = (long long)metric_value(m);
            if (m->labels[0])
                metrics__printf(&b, "%s{%s} %lld\n", f->name, m->labels, v);
            else
                metrics__printf(&b, "%s %lld\n", f->name, v);
        }
    }
    pthread_mutex_unlock(&r->lock);

    if (b.oom) {
        free(b.data);
        return 0;
    }
    *buf = b.data;
    return b.len;
}

/* ------------------------------------------------------------------ */
/* HTTP endpoint                                                       */

static enum MHD_Result metrics__queue(struct MHD_Connection *conn, unsigned status, char *body,
                                      size_t len, enum MHD_ResponseMemoryMode mode,
                                      const char *content_type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
    if (resp == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result metrics__handle(void *cls, struct MHD_Connection *conn, const char *url,
                                       const char *method, const char *version,
                                       const char *upload_data, size_t *upload_data_size,
                                       void **con_cls)
{
    metrics_registry *r = cls;
    static char ok[] = "ok\n";
    static char not_found[] = "not found\n";
    static char oom[] = "out of memory\n";
    bool get =
        strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

    if (get && strcmp(url, "/metrics") == 0) {
        char *text;
        size_t len = metrics_render(r, &text);
        if (text == NULL)
            return metrics__queue(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, oom, strlen(oom),
                                  MHD_RESPMEM_PERSISTENT, "text/plain");
        /* MHD frees `text` with free() once sent. */
        return metrics__queue(conn, MHD_HTTP_OK, text, len, MHD_RESPMEM_MUST_FREE,
                              "text/plain; version=0.0.4");
    }
    if (get && strcmp(url, "/healthz") == 0)
        return metrics__queue(conn, MHD_HTTP_OK, ok, 2, MHD_RESPMEM_PERSISTENT, "text/plain");
    return metrics__queue(conn, MHD_HTTP_NOT_FOUND, not_found, strlen(not_found),
                          MHD_RESPMEM_PERSISTENT, "text/plain");
}

int metrics_serve(metrics_registry *r, const char *listen, char *err, size_t errlen)
{
    return metrics_serve_limited(r, listen, NULL, err, errlen);
}

int metrics_serve_limited(metrics_registry *r, const char *listen, const metrics_http_limits *lim,
                          char *err, size_t errlen)
{
    unsigned timeout_s = lim && lim->timeout_s ? lim->timeout_s : 5;
    unsigned per_address = lim && lim->per_address ? lim->per_address : 8;
    unsigned total = lim && lim->total ? lim->total : 64;
    char host[128], port[16];
    struct addrinfo *ai = NULL;
    int rc = -1;

    if (r->daemon != NULL) {
        snprintf(err, errlen, "metrics: already serving");
        goto done;
    }
    int portnum;
    if (listen == NULL || rpc_addr_split(listen, -1, host, sizeof(host), &portnum) != 0) {
        snprintf(err, errlen, "metrics: bad listen address '%s' (want host:port)",
                 listen ? listen : "(null)");
        goto done;
    }
    snprintf(port, sizeof(port), "%d", portnum);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0 || ai == NULL) {
        snprintf(err, errlen, "metrics: cannot resolve '%s': %s", host, gai_strerror(gai));
        goto done;
    }

    /* epoll, not select: a busy server holds thousands of descriptors, and
     * select cannot watch one numbered past FD_SETSIZE. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* Bounded: a scrape is one small request answered at once, so a short
     * idle timeout and few connections are plenty. The per-address cap is
     * what keeps a slow-loris client (a byte every few seconds, never idle
     * long enough to time out) from taking every slot: it gets its few, the
     * scraper's address keeps its own. */
    r->daemon = MHD_start_daemon(flags, (uint16_t)portnum, NULL, NULL, metrics__handle, r,
                                 MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_LIMIT,
                                 total, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address,
                                 MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_END);
    if (r->daemon == NULL) {
        snprintf(err, errlen, "metrics: cannot listen on %s: %s", listen, strerror(errno));
        goto done;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info == NULL || info->port == 0) {
        snprintf(err, errlen, "metrics: cannot learn the bound port of %s", listen);
        MHD_stop_daemon(r->daemon);
        r->daemon = NULL;
        goto done;
    }
    rc = info->port;
done:
    if (ai != NULL)
        freeaddrinfo(ai);
    return rc;
}

/*
 * metrics.h — Prometheus text metrics. Counters, gauges and histograms are
 * registered once (at start) and updated lock-free with atomics on the hot
 * path; a small HTTP endpoint (libmicrohttpd) serves GET /metrics.
 */
#ifndef RPC_METRICS_H
#define RPC_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct metrics_registry metrics_registry;
typedef struct metric metric;

/* Free with metrics_registry_destroy (which also stops its endpoint). */
metrics_registry *metrics_registry_create(void);
void metrics_registry_destroy(metrics_registry *r);

/* Registers a metric. `labels` is a fixed label set in Prometheus syntax
 * without braces ("method=\"/a/B\",code=\"OK\"") or NULL. Several metrics
 * may share a name with different labels (one HELP/TYPE block). The metric
 * belongs to the registry. Thread-safe, but meant for start-up and for rare
 * first-use registration. */
metric *metrics_counter(metrics_registry *r, const char *name, const char *labels,
                        const char *help);
metric *metrics_gauge(metrics_registry *r, const char *name, const char *labels, const char *help);
/* Buckets are upper bounds in ascending order (+Inf is implicit). */
metric *metrics_histogram(metrics_registry *r, const char *name, const char *labels,
                          const char *help, const double *bounds, size_t nbounds);

void metric_add(metric *m, int64_t delta);    /* counter or gauge */
void metric_set(metric *m, int64_t value);    /* gauge */
void metric_observe(metric *m, double value); /* histogram */
int64_t metric_value(const metric *m);        /* counter/gauge; histogram: count */

/* Latency buckets in seconds, 50 µs .. 10 s, shared by call histograms. */
extern const double metrics_latency_bounds[];
extern const size_t metrics_latency_bounds_count;

/* Appends the whole registry in Prometheus text format to buf (malloc'd,
 * caller frees); returns the length. */
size_t metrics_render(metrics_registry *r, char **buf);

/* Serves GET /metrics (and GET /healthz -> "ok") on "host:port" with its own
 * thread. Returns the bound port, or -1 (message in err). */
int metrics_serve(metrics_registry *r, const char *listen, char *err, size_t errlen);

/* Bounds of the endpoint, so slow or many clients cannot blind a scrape:
 * a connection idle for timeout_s is closed; one client address may hold
 * per_address connections, everyone together total (more are closed as
 * they are accepted). Zero fields take the defaults of metrics_serve:
 * 5 s, 8, 64. */
typedef struct metrics_http_limits {
    unsigned timeout_s;
    unsigned per_address;
    unsigned total;
} metrics_http_limits;
int metrics_serve_limited(metrics_registry *r, const char *listen, const metrics_http_limits *lim,
                          char *err, size_t errlen);

/* The reading side, for tests and benchmarks only, is not part of the
 * runtime: tests/support/scrape.h. */

#endif

/* Unit tests for rpc/src/metrics.c, including the HTTP endpoint over
 * loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rpc/metrics.h"
#include "scrape.h"

static char *render(metrics_registry *r)
{
    char *text = NULL;
    size_t len = metrics_render(r, &text);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

static void test_render_counters_and_gauges(void **state)
{
    metrics_registry *r = metrics_registry_create();
    metric *a = metrics_counter(r, "rpc_calls_total", "method=\"/a/B\",code=\"OK\"", "Calls.");
    metric *b = metrics_counter(r, "rpc_calls_total", "method=\"/a/C\",code=\"OK\"", "ignored");
    metric *g = metrics_gauge(r, "rpc_inflight", NULL, "In flight.\nSecond \\ line");
    metric *plain = metrics_counter(r, "boot_total", NULL, "Boots.");
    metric_add(a, 3);
    metric_add(b, 1);
    metric_add(b, -5); /* counters never go down */
    metric_set(g, 10);
    metric_add(g, -4);
    metric_add(plain, 1);
    metric_set(plain, 99); /* not a gauge: ignored */
    assert_int_equal(metric_value(a), 3);
    assert_int_equal(metric_value(b), 1);
    assert_int_equal(metric_value(g), 6);
    assert_int_equal(metric_value(plain), 1);

    char *text = render(r);
    assert_string_equal(text, "# HELP rpc_calls_total Calls.\n"
                              "# TYPE rpc_calls_total counter\n"
                              "rpc_calls_total{method=\"/a/B\",code=\"OK\"} 3\n"
                              "rpc_calls_total{method=\"/a/C\",code=\"OK\"} 1\n"
                              "# HELP rpc_inflight In flight.\\nSecond \\\\ line\n"
                              "# TYPE rpc_inflight gauge\n"
                              "rpc_inflight 6\n"
                              "# HELP boot_total Boots.\n"
                              "# TYPE boot_total counter\n"
                              "boot_total 1\n");
    free(text);
    metrics_registry_destroy(r);
}

static void test_histogram_buckets(void **state)
{
    metrics_registry *r = metrics_registry_create();
    const double bounds[] = {0.005, 0.1, 1};
    metric *h = metrics_histogram(r, "rpc_seconds", "method=\"/a/B\"", "Latency.", bounds, 3);
    metric *u = metrics_histogram(r, "rpc_seconds", NULL, "Latency.", bounds, 3);
    assert_non_null(h);
    assert_non_null(u);
    /* The sum is a double: 0.001 + 0.005 + 0.05 + 1 + 7.5 in that order is
     * 8.556000000000001, printed with the digits that read back exactly. */
    metric_observe(h, 0.001); /* le 0.005 */
    metric_observe(h, 0.005); /* on the bound: le 0.005 */
    metric_observe(h, 0.05);  /* le 0.1 */
    metric_observe(h, 1.0);   /* le 1 */
    metric_observe(h, 7.5);   /* +Inf only */
    metric_observe(h, NAN);   /* ignored */
    metric_observe(u, 0.25);
    assert_int_equal(metric_value(h), 5);

    char *text = render(r);
    assert_string_equal(text, "# HELP rpc_seconds Latency.\n"
                              "# TYPE rpc_seconds histogram\n"
                              "rpc_seconds_bucket{method=\"/a/B\",le=\"0.005\"} 2\n"
                              "rpc_seconds_bucket{method=\"/a/B\",le=\"0.1\"} 3\n"
                              "rpc_seconds_bucket{method=\"/a/B\",le=\"1\"} 4\n"
                              "rpc_seconds_bucket{method=\"/a/B\",le=\"+Inf\"} 5\n"
                              "rpc_seconds_sum{method=\"/a/B\"} 8.556000000000001\n"
                              "rpc_seconds_count{method=\"/a/B\"} 5\n"
                              "rpc_seconds_bucket{le=\"0.005\"} 0\n"
                              "rpc_seconds_bucket{le=\"0.1\"} 0\n"
                              "rpc_seconds_bucket{le=\"1\"} 1\n"
                              "rpc_seconds_bucket{le=\"+Inf\"} 1\n"
                              "rpc_seconds_sum 0.25\n"
                              "rpc_seconds_count 1\n");
    free(text);
    metrics_registry_destroy(r);
}

static void test_latency_bounds(void **state)
{
    static const double want[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                  0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                  0.5,     1,      2.5,     5,      10};
    assert_int_equal(metrics_latency_bounds_count, 17);
    for (size_t i = 0; i < 17; i++)
        assert_true(metrics_latency_bounds[i] == want[i]);

    metrics_registry *r = metrics_registry_create();
    metric *h = metrics_histogram(r, "lat_seconds", NULL, "L.", metrics_latency_bounds,
                                  metrics_latency_bounds_count);
    metric_observe(h, 0.00004);
    metric_observe(h, 1e21); /* +Inf only; the sum switches to exponent form */
    char *text = render(r);
    /* Labels print the shortest exact decimal, as Go clients do. */
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"5e-05\"} 1\n"));
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"0.00025\"} 1\n"));
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"2.5\"} 1\n"));
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"10\"} 1\n"));
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"0.1\"} 1\n"));
    assert_non_null(strstr(text, "lat_seconds_bucket{le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(text, "lat_seconds_sum 1e+21\n"));
    free(text);

    /* Go's cut-over to the exponent form is 1e6. */
    metric *s1 = metrics_histogram(r, "size_bytes", "n=\"1\"", "S.", NULL, 0);
    metric *s2 = metrics_histogram(r, "size_bytes", "n=\"2\"", "S.", NULL, 0);
    metric_observe(s1, 999999);
    metric_observe(s2, 1000000);
    text = render(r);
    assert_non_null(strstr(text, "size_bytes_sum{n=\"1\"} 999999\n"));
    assert_non_null(strstr(text, "size_bytes_sum{n=\"2\"} 1e+06\n"));
    free(text);
    metrics_registry_destroy(r);
}

static void test_registration_rules(void **state)
{
    metrics_registry *r = metrics_registry_create();
    const double bounds[] = {1, 2};
    const double unsorted[] = {2, 1};
    metric *c = metrics_counter(r, "x_total", "a=\"1\"", "X.");
    assert_non_null(c);
    assert_ptr_equal(metrics_counter(r, "x_total", "a=\"1\"", "X."), c); /* same series */
    assert_ptr_not_equal(metrics_counter(r, "x_total", "a=\"2\"", "X."), c);
    assert_null(metrics_gauge(r, "x_total", "a=\"3\"", "X.")); /* other kind */
    assert_null(metrics_counter(r, "9bad", NULL, "X."));
    assert_null(metrics_counter(r, "bad-name", NULL, "X."));
    assert_null(metrics_counter(r, "", NULL, "X."));
    assert_null(metrics_histogram(r, "h", NULL, "H.", unsorted, 2));
    metric *h = metrics_histogram(r, "h", NULL, "H.", bounds, 2);
    assert_non_null(h);
    assert_ptr_equal(metrics_histogram(r, "h", NULL, "H.", bounds, 2), h);
    assert_null(metrics_histogram(r, "h", NULL, "H.", bounds, 1)); /* other bounds */
    metric *none = metrics_histogram(r, "h0", NULL, "No buckets.", NULL, 0);
    assert_non_null(none);
    metric_observe(none, 3);
    assert_int_equal(metric_value(none), 1);
    /* Updates on NULL (a failed registration) are harmless. */
    metric_add(NULL, 1);
    metric_set(NULL, 1);
    metric_observe(NULL, 1);
    assert_int_equal(metric_value(NULL), 0);
    metrics_registry_destroy(r);
    metrics_registry_destroy(NULL);
}

typedef struct worker_arg {
    metric *counter, *gauge, *hist;
} worker_arg;

#define ROUNDS 100000

static void *worker(void *p)
{
    worker_arg *a = p;
    for (int i = 0; i < ROUNDS; i++) {
        metric_add(a->counter, 1);
        metric_add(a->gauge, (i & 1) ? -1 : 1);
        metric_observe(a->hist, (i & 1) ? 0.5 : 2.0);
    }
    return NULL;
}

static void test_concurrent_updates(void **state)
{
    metrics_registry *r = metrics_registry_create();
    const double bounds[] = {1};
    worker_arg a = {
        metrics_counter(r, "c_total", NULL, "C."),
        metrics_gauge(r, "g", NULL, "G."),
        metrics_histogram(r, "h", NULL, "H.", bounds, 1),
    };
    pthread_t t1, t2;
    assert_int_equal(pthread_create(&t1, NULL, worker, &a), 0);
    assert_int_equal(pthread_create(&t2, NULL, worker, &a), 0);
    /* Scrapes while the workers run: each must be well-formed. */
    for (int i = 0; i < 20; i++) {
        char *text = render(r);
        assert_non_null(strstr(text, "# TYPE h histogram\n"));
        free(text);
        /* First-use registration racing with updates. */
        char labels[32];
        snprintf(labels, sizeof(labels), "n=\"%d\"", i);
        assert_non_null(metrics_counter(r, "late_total", labels, "Late."));
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);

    assert_int_equal(metric_value(a.counter), 2 * ROUNDS);
    assert_int_equal(metric_value(a.gauge), 0);
    assert_int_equal(metric_value(a.hist), 2 * ROUNDS);
    char *text = render(r);
    assert_non_null(strstr(text, "c_total 200000\n"));
    assert_non_null(strstr(text, "h_bucket{le=\"1\"} 100000\n"));
    assert_non_null(strstr(text, "h_bucket{le=\"+Inf\"} 200000\n"));
    assert_non_null(strstr(text, "h_sum 250000\n")); /* 1e5 * 0.5 + 1e5 * 2, exact */
    assert_non_null(strstr(text, "h_count 200000\n"));
    free(text);
    metrics_registry_destroy(r);
}

/* A plain HTTP/1.0 GET over loopback; returns the whole response (caller
 * frees) or NULL when the connection fails. */
static char *http_request(int port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return NULL;
    }
    char req[256];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method, path);
    assert_int_equal(send(fd, req, (size_t)n, 0), n);
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    for (int i = 0; i < 1000 && len + 1 < cap; i++) {
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static void test_serve(void **state)
{
    metrics_registry *r = metrics_registry_create();
    metric *c = metrics_counter(r, "served_total", "k=\"v\"", "Served.");
    metric_add(c, 42);
    char err[256] = "";
    int port = metrics_serve(r, "127.0.0.1:0", err, sizeof(err));
    if (port <= 0)
        fail_msg("metrics_serve: %s", err);

    char *resp = http_request(port, "GET", "/metrics");
    assert_non_null(resp);
    assert_true(strncmp(resp, "HTTP/1.", 7) == 0);
    assert_non_null(strstr(resp, " 200 "));
    assert_non_null(strstr(resp, "text/plain; version=0.0.4"));
    assert_non_null(strstr(resp, "\r\n\r\n# HELP served_total Served.\n"));
    assert_non_null(strstr(resp, "served_total{k=\"v\"} 42\n"));
    free(resp);

    resp = http_request(port, "GET", "/healthz");
    assert_non_null(resp);
    assert_non_null(strstr(resp, " 200 "));
    const char *body = strstr(resp, "\r\n\r\n");
    assert_non_null(body);
    assert_string_equal(body + 4, "ok");
    free(resp);

    resp = http_request(port, "GET", "/nope");
    assert_non_null(strstr(resp, " 404 "));
    free(resp);
    resp = http_request(port, "POST", "/metrics");
    assert_non_null(strstr(resp, " 404 "));
    free(resp);

    /* One endpoint per registry. */
    assert_int_equal(metrics_serve(r, "127.0.0.1:0", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "already"));

    metrics_registry_destroy(r);
    /* The daemon is gone with the registry: nothing listens any more. */
    assert_null(http_request(port, "GET", "/healthz"));
}

static void test_serve_bad_addresses(void **state)
{
    static const char *const bad[] = {"",
                                      "127.0.0.1",
                                      "127.0.0.1:",
                                      ":9000",
                                      "127.0.0.1:70000",
                                      "127.0.0.1:x",
                                      "127.0.0.1:-1",
                                      "[::1:0",
                                      "[]:0"};
    metrics_registry *r = metrics_registry_create();
    char err[256];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (metrics_serve(r, bad[i], err, sizeof(err)) != -1)
            fail_msg("'%s' was accepted", bad[i]);
        assert_true(strlen(err) > 0);
    }
    /* A port already taken. */
    int first = metrics_serve(r, "127.0.0.1:0", err, sizeof(err));
    assert_true(first > 0);
    metrics_registry *r2 = metrics_registry_create();
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", first);
    assert_int_equal(metrics_serve(r2, addr, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot listen"));
    metrics_registry_destroy(r2);
    metrics_registry_destroy(r);
}

/* scrape_metric_sum reads what metrics_serve serves: an unlabelled
 * sample, the sum over label sets, never a histogram's _bucket/_sum lines
 * or a HELP line; -1 for a metric that is absent or an endpoint that does
 * not answer. */
static void test_scrape_sum(void **state)
{
    (void)state;
    metrics_registry *r = metrics_registry_create();
    metric_add(metrics_counter(r, "t_plain_total", NULL, "plain t_plain_total"), 7);
    metric_add(metrics_counter(r, "t_calls_total", "code=\"OK\"", "calls"), 5);
    metric_add(metrics_counter(r, "t_calls_total", "code=\"NOT_FOUND\"", "calls"), 2);
    metric_observe(metrics_histogram(r, "t_calls", NULL, "latency", metrics_latency_bounds,
                                     metrics_latency_bounds_count),
                   0.5);
    char err[128], addr[32];
    int port = metrics_serve(r, "127.0.0.1:0", err, sizeof(err));
    if (port < 0)
        fail_msg("metrics_serve: %s", err);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    assert_true(scrape_metric_sum(addr, "t_plain_total") == 7);
    assert_true(scrape_metric_sum(addr, "t_calls_total") == 7);
    assert_true(scrape_metric_sum(addr, "t_calls_count") == 1);
    assert_true(scrape_metric_sum(addr, "t_absent") == -1);
    assert_true(scrape_metric_sum(addr, "t_plain") == -1); /* a prefix is not a name */
    metrics_registry_destroy(r);
    assert_true(scrape_metric_sum(addr, "t_plain_total") == -1); /* endpoint gone */
    assert_true(scrape_metric_sum("no-port", "t_plain_total") == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_counters_and_gauges),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_latency_bounds),
        cmocka_unit_test(test_registration_rules),
        cmocka_unit_test(test_concurrent_updates),
        cmocka_unit_test(test_serve),
        cmocka_unit_test(test_serve_bad_addresses),
        cmocka_unit_test(test_scrape_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

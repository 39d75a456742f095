/*
 * scrape.h — the test side of /metrics: one HTTP GET of a service's
 * Prometheus endpoint, for tests and benchmarks (the `test_support`
 * library). Kept out of the runtime (rpc/) on purpose: no service
 * scrapes another, and production code should not carry a hand-made
 * HTTP client.
 */
#ifndef TEST_SUPPORT_SCRAPE_H
#define TEST_SUPPORT_SCRAPE_H

/* GET http://addr/metrics (addr "host:port", rpc_addr_split's forms) and
 * the sum of every sample of metric `name`, unlabelled or with any
 * labels. -1 when the endpoint does not answer (5 s at most), the address
 * is malformed, or there is no such sample. Blocking. */
double scrape_metric_sum(const char *addr, const char *name);

#endif

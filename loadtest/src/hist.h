/*
 * hist.h — a log-linear latency histogram (HdrHistogram's layout): values
 * below 2^(sub_bits+1) are counted exactly, above that every power-of-two
 * octave is cut into 2^sub_bits equal buckets, so the relative error of any
 * reported value is below 2^-sub_bits (0.8% at the default 7). Values are
 * nanoseconds up to 2^44 (about 4.9 hours); larger ones are clamped.
 *
 * Pure: no clock, no I/O, no locks. Two histograms with the same sub_bits
 * merge exactly (bucket counts add), so per-thread or per-step histograms
 * can be combined without losing anything and without a sample cap.
 */
#ifndef LT_HIST_H
#define LT_HIST_H

#include <stddef.h>
#include <stdint.h>

#define LT_HIST_MAX_BITS 44
#define LT_HIST_DEFAULT_SUB_BITS 7

typedef struct lt_hist {
    int sub_bits;
    size_t nbuckets;
    uint64_t count;
    uint64_t min, max; /* exact; min is UINT64_MAX while empty */
    long double sum;   /* exact enough for a mean over billions of ns */
    uint64_t *buckets; /* nbuckets counters, owned */
} lt_hist;

/* Initialises h with 2^sub_bits buckets per octave (1..12). Returns 0, or -1
 * on a bad sub_bits or out of memory. Free with lt_hist_free. */
int lt_hist_init(lt_hist *h, int sub_bits);
void lt_hist_free(lt_hist *h);
void lt_hist_reset(lt_hist *h);

void lt_hist_record(lt_hist *h, uint64_t value);
void lt_hist_record_n(lt_hist *h, uint64_t value, uint64_t n);

/* dst += src. Returns 0, or -1 when the layouts differ (nothing changed). */
int lt_hist_merge(lt_hist *dst, const lt_hist *src);

/* The value at percentile q (0..100): the highest value equivalent to the
 * bucket holding the ceil(q/100 * count)-th smallest sample, clamped to the
 * exact min and max. 0 when empty. q = 100 is the exact max. */
uint64_t lt_hist_percentile(const lt_hist *h, double q);
double lt_hist_mean(const lt_hist *h);

/* Bucket geometry (exposed for tests and for walking the buckets). */
size_t lt_hist_index(const lt_hist *h, uint64_t value);
uint64_t lt_hist_bucket_low(const lt_hist *h, size_t idx);
uint64_t lt_hist_bucket_high(const lt_hist *h, size_t idx);

#endif

/*
 * hist.c — see hist.h. Index layout with M = 2^sub_bits:
 *   v < 2M:            idx = v                      (exact)
 *   v >= 2M, msb k:    shift = k - sub_bits, sub = v >> shift in [M, 2M),
 *                      idx = shift * M + sub        (continues at 2M)
 */
#include "hist.h"

#include <stdlib.h>
#include <string.h>

static int lt_hist__msb(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

int lt_hist_init(lt_hist *h, int sub_bits)
{
    memset(h, 0, sizeof(*h));
    if (sub_bits < 1 || sub_bits > 12)
        return -1;
    size_t m = (size_t)1 << sub_bits;
    h->sub_bits = sub_bits;
    /* Largest shift is (LT_HIST_MAX_BITS - 1) - sub_bits. */
    h->nbuckets = (size_t)(LT_HIST_MAX_BITS - 1 - sub_bits) * m + 2 * m;
    h->buckets = calloc(h->nbuckets, sizeof(uint64_t));
    if (h->buckets == NULL)
        return -1;
    h->min = UINT64_MAX;
    return 0;
}

void lt_hist_free(lt_hist *h)
{
    free(h->buckets);
    h->buckets = NULL;
    h->nbuckets = 0;
}

void lt_hist_reset(lt_hist *h)
{
    memset(h->buckets, 0, h->nbuckets * sizeof(uint64_t));
    h->count = 0;
    h->sum = 0;
    h->min = UINT64_MAX;
    h->max = 0;
}

size_t lt_hist_index(const lt_hist *h, uint64_t v)
{
    uint64_t m = (uint64_t)1 << h->sub_bits;
    if (v >= ((uint64_t)1 << LT_HIST_MAX_BITS))
        v = ((uint64_t)1 << LT_HIST_MAX_BITS) - 1;
    if (v < 2 * m)
        return (size_t)v;
    int shift = lt_hist__msb(v) - h->sub_bits;
    return (size_t)((uint64_t)shift * m + (v >> shift));
}

uint64_t lt_hist_bucket_low(const lt_hist *h, size_t idx)
{
    uint64_t m = (uint64_t)1 << h->sub_bits;
    if (idx < 2 * m)
        return idx;
    uint64_t shift = idx / m - 1;
    uint64_t sub = idx - shift * m;
    return sub << shift;
}

uint64_t lt_hist_bucket_high(const lt_hist *h, size_t idx)
{
    uint64_t m = (uint64_t)1 << h->sub_bits;
    if (idx < 2 * m)
        return idx;
    uint64_t shift = idx / m - 1;
    uint64_t sub = idx - shift * m;
    return ((sub + 1) << shift) - 1;
}

void lt_hist_record_n(lt_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    h->buckets[lt_hist_index(h, v)] += n;
    h->count += n;
    h->sum += (long double)v * n;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void lt_hist_record(lt_hist *h, uint64_t v)
{
    lt_hist_record_n(h, v, 1);
}

int lt_hist_merge(lt_hist *dst, const lt_hist *src)
{
    if (dst->sub_bits != src->sub_bits || dst->nbuckets != src->nbuckets)
        return -1;
    if (src->count == 0)
        return 0;
    for (size_t i = 0; i < dst->nbuckets; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    return 0;
}

uint64_t lt_hist_percentile(const lt_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q >= 100.0)
        return h->max;
    if (q < 0)
        q = 0;
    /* rank = ceil(q/100 * count), at least 1; computed in integers where the
     * float would round (q = 99.9 of 1000 must be rank 999, not 1000). */
    long double want = (long double)q / 100.0L * (long double)h->count;
    uint64_t rank = (uint64_t)want;
    if ((long double)rank < want - 1e-9L)
        rank++;
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < h->nbuckets; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            uint64_t v = lt_hist_bucket_high(h, i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

double lt_hist_mean(const lt_hist *h)
{
    return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

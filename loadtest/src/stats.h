/*
 * stats.h — what the driver knows about one operation: two latency
 * histograms (corrected: from the intended send time of the open-loop
 * schedule; service: from the actual send) and a count per gRPC status code
 * and `scrabble-reason` token. Not thread-safe: each table is owned by one
 * thread (the driver), or guarded by its owner.
 */
#ifndef LT_STATS_H
#define LT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"

#define LT_STATS_MAX_OUTCOMES 24
#define LT_REASON_LEN 48

typedef struct lt_outcome {
    int code;                   /* grpc_status_code */
    char reason[LT_REASON_LEN]; /* "" when the status carried none */
    uint64_t count;
} lt_outcome;

typedef struct lt_opstats {
    char name[40];
    uint64_t count;     /* every finished call */
    uint64_t ok;        /* code OK */
    uint64_t transport; /* failures with no application reason: the transport's */
    lt_hist corrected;
    lt_hist service;
    lt_outcome outcomes[LT_STATS_MAX_OUTCOMES];
    int noutcomes;
    uint64_t other_outcomes; /* outcomes past the table's size */
} lt_opstats;

/* Returns 0 or -1 (out of memory). Free with lt_opstats_free. */
int lt_opstats_init(lt_opstats *s, const char *name);
void lt_opstats_free(lt_opstats *s);
void lt_opstats_reset(lt_opstats *s);

/* Whether a failed status came from the transport (connect failure, reset,
 * deadline) rather than from the application: application errors always
 * carry a reason token. */
bool lt_status_is_transport(int code, const char *reason, const char *message);

/* Records one finished call. Times are nanoseconds on one monotonic clock;
 * intended <= sent <= done (a later intended is clamped to sent). */
void lt_opstats_record(lt_opstats *s, int code, const char *reason, bool transport,
                       uint64_t intended_ns, uint64_t sent_ns, uint64_t done_ns);

/* dst += src (exact). Returns 0 or -1 on a histogram layout mismatch. */
int lt_opstats_merge(lt_opstats *dst, const lt_opstats *src);

/* Count of outcomes with `code` (any reason). */
uint64_t lt_opstats_code_count(const lt_opstats *s, int code);

#endif

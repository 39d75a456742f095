/*
 * timers.h — the run's timers: a binary min-heap of deadlines (ns on the
 * driver's monotonic clock) that the driver loop pops when due. It belongs
 * to the run (lt_run.timers), not to what is scheduled: a player embeds an
 * lt_timer and the loop maps a fired timer back to its player. Driver
 * thread only; no locks. Pure (no clock, no I/O), so unit tests reach it.
 */
#ifndef LT_TIMERS_H
#define LT_TIMERS_H

#include <stdint.h>

typedef struct lt_timer {
    uint64_t at; /* when it fires */
    int idx;     /* its place in the heap; -1: not set */
} lt_timer;

typedef struct lt_timers {
    lt_timer **heap;
    int n, cap;
} lt_timers;

/* Room for cap timers set at once. 0, or -1 out of memory. */
int lt_timers_init(lt_timers *h, int cap);
void lt_timers_free(lt_timers *h);
/* A timer that is not set (before its first lt_timers_set). */
void lt_timer_init(lt_timer *t);
/* Sets t to fire at `at`, replacing its earlier time if it was set. The
 * heap must have room (at most cap timers set at once). */
void lt_timers_set(lt_timers *h, lt_timer *t, uint64_t at);
/* Unsets t (nothing when it is not set). */
void lt_timers_cancel(lt_timers *h, lt_timer *t);
/* The earliest time set, UINT64_MAX when none. */
uint64_t lt_timers_next(const lt_timers *h);
/* The earliest timer due at `now` (at <= now), unset, or NULL. */
lt_timer *lt_timers_pop_due(lt_timers *h, uint64_t now);

#endif

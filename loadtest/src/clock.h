/*
 * clock.h — the driver's one monotonic clock (ns), and wall time for reports.
 */
#ifndef LT_CLOCK_H
#define LT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t lt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int64_t lt_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#endif

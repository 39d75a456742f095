/*
 * time_control.c — see time_control.h.
 */
#include <stdio.h>

#include "time_control.h"

int store_time_control_kind(const Scrabble__V1__TimeControl *tc)
{
    if (!tc || tc->kind == SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_UNSPECIFIED)
        return SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_UNTIMED;
    return (int)tc->kind;
}

static const char *store__range(char *msg, size_t len, const char *field, long v, long lo, long hi)
{
    if (v >= lo && v <= hi)
        return NULL;
    snprintf(msg, len, "time_control.%s is %ld; it must be %ld..%ld", field, v, lo, hi);
    return msg;
}

const char *store_time_control_check(const Scrabble__V1__TimeControl *tc, char *msg, size_t len)
{
    const char *why = NULL;
    if (!tc)
        return NULL;
    switch (store_time_control_kind(tc)) {
    case SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_UNTIMED:
        if (tc->days_per_move || tc->initial_seconds || tc->increment_seconds ||
            tc->max_overtime_minutes) {
            snprintf(msg, len, "an UNTIMED time control takes no other field");
            return msg;
        }
        return NULL;
    case SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_CORRESPONDENCE:
        if (tc->initial_seconds || tc->increment_seconds || tc->max_overtime_minutes) {
            snprintf(msg, len, "a CORRESPONDENCE time control takes only days_per_move");
            return msg;
        }
        return store__range(msg, len, "days_per_move", tc->days_per_move, STORE_TC_DAYS_MIN,
                            STORE_TC_DAYS_MAX);
    case SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_REALTIME:
        if (tc->days_per_move) {
            snprintf(msg, len, "a REALTIME time control takes no days_per_move");
            return msg;
        }
        if ((why = store__range(msg, len, "initial_seconds", tc->initial_seconds,
                                STORE_TC_INITIAL_S_MIN, STORE_TC_INITIAL_S_MAX)) ||
            (why = store__range(msg, len, "increment_seconds", tc->increment_seconds, 0,
                                STORE_TC_INCREMENT_S_MAX)))
            return why;
        return store__range(msg, len, "max_overtime_minutes", tc->max_overtime_minutes, 0,
                            STORE_TC_OVERTIME_MIN_MAX);
    default:
        snprintf(msg, len, "time_control.kind %d is not a known kind", (int)tc->kind);
        return msg;
    }
}

const char *store_time_family(int kind)
{
    switch (kind) {
    case SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_CORRESPONDENCE:
        return "correspondence";
    case SCRABBLE__V1__TIME_CONTROL_KIND__TIME_CONTROL_KIND_REALTIME:
        return "realtime";
    default:
        return "untimed";
    }
}

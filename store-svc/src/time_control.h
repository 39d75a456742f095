/*
 * time_control.h — the rules of a scrabble.v1.TimeControl as store-svc
 * checks them at Invite, and the rating family of a time control. Pure (no
 * I/O), so unit tests reach them directly.
 */
#ifndef STORE_TIME_CONTROL_H
#define STORE_TIME_CONTROL_H

#include <stddef.h>

#include "scrabble/v1/common.pb-c.h"

/* The ranges of TimeControl (common.proto says them to clients). */
#define STORE_TC_DAYS_MIN 1
#define STORE_TC_DAYS_MAX 14
#define STORE_TC_INITIAL_S_MIN 1
#define STORE_TC_INITIAL_S_MAX 10800
#define STORE_TC_INCREMENT_S_MAX 60
#define STORE_TC_OVERTIME_MIN_MAX 10

/* The kind a time control stands for: UNSPECIFIED (and an absent
 * message) is UNTIMED. */
int store_time_control_kind(const Scrabble__V1__TimeControl *tc);

/* NULL when tc (may be NULL: untimed) is within the ranges above, with
 * every field another kind does not use left 0; else a human message for
 * INVALID_ARGUMENT bad_time_control, in msg (len bytes). */
const char *store_time_control_check(const Scrabble__V1__TimeControl *tc, char *msg, size_t len);

/* The rating family of a time control kind: "untimed", "correspondence" or
 * "realtime" (UNSPECIFIED and unknown kinds: "untimed"). Stored on the game
 * row (games.time_family) for ratings per family. Static strings. */
const char *store_time_family(int kind);

#endif

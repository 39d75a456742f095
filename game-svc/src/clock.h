/*
 * clock.h — game clocks and deadlines (scrabble.v1.TimeControl), pure: no
 * I/O, no locks. game-svc is the only process that computes them; the
 * store keeps what it computed with each commit (GameClock) so that a
 * restart, or another instance, continues the same clock.
 *
 * Rules (docs/API.md, Time controls):
 * - REALTIME: each seat has remaining_ms; the seat to move's runs from
 *   turn_started_ms. A turn charges the elapsed time to the seat to move,
 *   then adds the increment to the mover. Past zero a seat is in
 *   overtime; its flag falls at -max_overtime (deadline = turn start +
 *   remaining + max overtime). At the end of the game every seat in
 *   overtime loses 10 points per started minute of it.
 * - CORRESPONDENCE: the seat to move must move within days_per_move days
 *   of the turn's start; TIME_WARNING goes out 24 h before the deadline
 *   (12 h for 1-day games).
 * - UNTIMED: no clock; a seat to move absent for the server's
 *   --abandon-after (0: never; the deadline rounded up to the hour) loses
 *   with END_REASON_ABANDONED, warned as for correspondence.
 */
#ifndef GAME_CLOCK_H
#define GAME_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "rules.h"

/* Values match scrabble.v1.TimeControlKind and EndReason. */
enum { GAME_TC_UNTIMED = 1, GAME_TC_CORRESPONDENCE = 2, GAME_TC_REALTIME = 3 };
enum { GAME_END_TIMEOUT = 4, GAME_END_ABANDONED = 5 };

#define GAME_DAY_MS 86400000LL
#define GAME_HOUR_MS 3600000LL
/* Overtime costs this many points per started minute. */
#define GAME_OVERTIME_POINTS 10

typedef struct game_time_control {
    int kind; /* GAME_TC_*; 0 reads as UNTIMED */
    int days_per_move;
    int initial_s;
    int increment_s;
    int max_overtime_min;
} game_time_control;

typedef struct game_clock {
    game_time_control tc;
    int64_t remaining_ms[GAME_MAX_SEATS]; /* REALTIME, at turn_started_ms */
    int64_t turn_started_ms;              /* 0: never started */
    int64_t deadline_ms;                  /* 0: none */
    int deadline_reason;                  /* GAME_END_TIMEOUT / _ABANDONED */
    int64_t warning_ms;                   /* 0: none */
} game_clock;

/* A new game's clock: full clocks, the turn of to_move starting at now. */
void game_clock_start(game_clock *c, int nseats, int to_move, int64_t now_ms, int64_t abandon_ms);

/* The turn of `to_move` ended at now_ms, made by `mover` (the same seat,
 * except for an out-of-turn resignation): the elapsed time is charged to
 * to_move's clock, the increment added to the mover's. */
void game_clock_charge(game_clock *c, int to_move, int mover, int64_t now_ms);

/* Starts the next turn (of next_to_move) at now_ms and sets its deadline
 * and warning; a finished game (active false) gets none. */
void game_clock_next_turn(game_clock *c, int next_to_move, bool active, int64_t now_ms,
                          int64_t abandon_ms);

/* True when the seat to move has run out of time at now_ms. */
bool game_clock_expired(const game_clock *c, int64_t now_ms);

/* The overtime penalty of a seat (REALTIME; 0 otherwise), in points. */
int game_clock_penalty(const game_clock *c, int seat);

/* Each seat's remaining ms as of now_ms (the running one charged), into
 * out[nseats]; returns how many were written (0 unless REALTIME). */
int game_clock_view(const game_clock *c, int nseats, int to_move, bool active, int64_t now_ms,
                    int64_t *out);

#endif

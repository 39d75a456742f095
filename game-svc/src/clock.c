/*
 * clock.c — see clock.h.
 */
#include "clock.h"

static int clock__kind(const game_clock *c)
{
    return c->tc.kind ? c->tc.kind : GAME_TC_UNTIMED;
}

void game_clock_start(game_clock *c, int nseats, int to_move, int64_t now_ms, int64_t abandon_ms)
{
    for (int s = 0; s < GAME_MAX_SEATS; s++)
        c->remaining_ms[s] =
            clock__kind(c) == GAME_TC_REALTIME && s < nseats ? (int64_t)c->tc.initial_s * 1000 : 0;
    game_clock_next_turn(c, to_move, true, now_ms, abandon_ms);
}

void game_clock_charge(game_clock *c, int to_move, int mover, int64_t now_ms)
{
    if (clock__kind(c) != GAME_TC_REALTIME || c->turn_started_ms <= 0)
        return;
    int64_t elapsed = now_ms - c->turn_started_ms;
    if (elapsed > 0 && to_move >= 0 && to_move < GAME_MAX_SEATS)
        c->remaining_ms[to_move] -= elapsed;
    if (mover == to_move && mover >= 0 && mover < GAME_MAX_SEATS)
        c->remaining_ms[mover] += (int64_t)c->tc.increment_s * 1000;
}

/* Warn a day before a deadline of a period, or half the period before
 * when it is shorter than two days. */
static int64_t clock__warning(int64_t deadline, int64_t period)
{
    int64_t before = period / 2 < GAME_DAY_MS ? period / 2 : GAME_DAY_MS;
    return before > 0 ? deadline - before : 0;
}

void game_clock_next_turn(game_clock *c, int next_to_move, bool active, int64_t now_ms,
                          int64_t abandon_ms)
{
    c->turn_started_ms = now_ms;
    c->deadline_ms = c->warning_ms = 0;
    c->deadline_reason = 0;
    if (!active)
        return;
    switch (clock__kind(c)) {
    case GAME_TC_REALTIME:
        c->deadline_ms =
            now_ms + c->remaining_ms[next_to_move] + (int64_t)c->tc.max_overtime_min * 60000;
        c->deadline_reason = GAME_END_TIMEOUT;
        break;
    case GAME_TC_CORRESPONDENCE: {
        int64_t period = (int64_t)c->tc.days_per_move * GAME_DAY_MS;
        c->deadline_ms = now_ms + period;
        c->deadline_reason = GAME_END_TIMEOUT;
        c->warning_ms = clock__warning(c->deadline_ms, period);
        break;
    }
    default:
        /* Rounded up to the hour: the deadline of an untimed game then
         * stays the same over most of its moves, and store-svc writes no
         * clock and no deadline row for those (0005_time_controls.sql). */
        if (abandon_ms > 0) {
            c->deadline_ms = (now_ms + abandon_ms + GAME_HOUR_MS - 1) / GAME_HOUR_MS * GAME_HOUR_MS;
            c->deadline_reason = GAME_END_ABANDONED;
            c->warning_ms = clock__warning(c->deadline_ms, abandon_ms);
        }
        break;
    }
}

bool game_clock_expired(const game_clock *c, int64_t now_ms)
{
    return c->deadline_ms > 0 && now_ms >= c->deadline_ms;
}

int game_clock_penalty(const game_clock *c, int seat)
{
    if (clock__kind(c) != GAME_TC_REALTIME || seat < 0 || seat >= GAME_MAX_SEATS ||
        c->remaining_ms[seat] >= 0)
        return 0;
    int64_t over = -c->remaining_ms[seat];
    int64_t minutes = (over + 59999) / 60000;
    int64_t cap = c->tc.max_overtime_min > 0 ? c->tc.max_overtime_min : 0;
    if (minutes > cap)
        minutes = cap;
    return (int)(minutes * GAME_OVERTIME_POINTS);
}

int game_clock_view(const game_clock *c, int nseats, int to_move, bool active, int64_t now_ms,
                    int64_t *out)
{
    if (clock__kind(c) != GAME_TC_REALTIME)
        return 0;
    for (int s = 0; s < nseats && s < GAME_MAX_SEATS; s++) {
        out[s] = c->remaining_ms[s];
        if (active && s == to_move && c->turn_started_ms > 0 && now_ms > c->turn_started_ms)
            out[s] -= now_ms - c->turn_started_ms;
    }
    return nseats;
}

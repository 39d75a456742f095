/*
 * test_clock.c — the time rules of clock.h: real-time charge, increment,
 * overtime and its penalty (10 points per started minute, capped), the
 * flag fall, correspondence deadlines and warnings, untimed abandonment,
 * and the clocks a view shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clock.h"

static game_clock clock_of(int kind, int days, int initial_s, int inc_s, int ot_min)
{
    game_clock c = {.tc = {kind, days, initial_s, inc_s, ot_min}};
    return c;
}

static void test_realtime_charge_and_increment(void **state)
{
    game_clock c = clock_of(GAME_TC_REALTIME, 0, 60, 5, 1);
    game_clock_start(&c, 2, 0, 1000, 0);
    assert_int_equal(c.remaining_ms[0], 60000);
    assert_int_equal(c.remaining_ms[1], 60000);
    assert_int_equal(c.deadline_ms, 1000 + 60000 + 60000);
    assert_int_equal(c.deadline_reason, GAME_END_TIMEOUT);
    assert_int_equal(c.warning_ms, 0);
    /* Seat 0 moves after 10 s: charged, then +5 s. */
    game_clock_charge(&c, 0, 0, 11000);
    game_clock_next_turn(&c, 1, true, 11000, 0);
    assert_int_equal(c.remaining_ms[0], 55000);
    assert_int_equal(c.deadline_ms, 11000 + 60000 + 60000);
    int64_t view[4];
    assert_int_equal(game_clock_view(&c, 2, 1, true, 21000, view), 2);
    assert_int_equal(view[0], 55000);
    assert_int_equal(view[1], 50000);
    assert_false(game_clock_expired(&c, 11000 + 119999));
    assert_true(game_clock_expired(&c, 11000 + 120000));
}

static void test_overtime_penalty(void **state)
{
    game_clock c = clock_of(GAME_TC_REALTIME, 0, 60, 0, 3);
    game_clock_start(&c, 2, 0, 0, 0);
    assert_int_equal(game_clock_penalty(&c, 0), 0);
    c.remaining_ms[0] = -1; /* one started minute */
    assert_int_equal(game_clock_penalty(&c, 0), 10);
    c.remaining_ms[0] = -60000;
    assert_int_equal(game_clock_penalty(&c, 0), 10);
    c.remaining_ms[0] = -60001;
    assert_int_equal(game_clock_penalty(&c, 0), 20);
    c.remaining_ms[0] = -10 * 60000; /* past the limit: capped at 3 minutes */
    assert_int_equal(game_clock_penalty(&c, 0), 30);
    game_clock d = clock_of(GAME_TC_REALTIME, 0, 60, 0, 0);
    d.remaining_ms[1] = -5000;
    assert_int_equal(game_clock_penalty(&d, 1), 0);
    game_clock e = clock_of(GAME_TC_CORRESPONDENCE, 2, 0, 0, 0);
    e.remaining_ms[0] = -5000;
    assert_int_equal(game_clock_penalty(&e, 0), 0);
}

static void test_correspondence(void **state)
{
    game_clock c = clock_of(GAME_TC_CORRESPONDENCE, 3, 0, 0, 0);
    game_clock_start(&c, 3, 0, 500, 0);
    assert_int_equal(c.deadline_ms, 500 + 3 * GAME_DAY_MS);
    assert_int_equal(c.warning_ms, c.deadline_ms - GAME_DAY_MS);
    int64_t view[4];
    assert_int_equal(game_clock_view(&c, 3, 0, true, 600, view), 0);
    /* No bank: the next turn gets the full period again. */
    game_clock_charge(&c, 0, 0, 500 + 2 * GAME_DAY_MS);
    game_clock_next_turn(&c, 1, true, 500 + 2 * GAME_DAY_MS, 0);
    assert_int_equal(c.deadline_ms, 500 + 5 * GAME_DAY_MS);
    game_clock one = clock_of(GAME_TC_CORRESPONDENCE, 1, 0, 0, 0);
    game_clock_start(&one, 2, 0, 0, 0);
    assert_int_equal(one.warning_ms, GAME_DAY_MS / 2);
    /* A finished game has no deadline. */
    game_clock_next_turn(&one, 1, false, 10, 0);
    assert_int_equal(one.deadline_ms, 0);
    assert_false(game_clock_expired(&one, INT64_MAX));
}

static void test_untimed_abandonment(void **state)
{
    game_clock c = clock_of(0, 0, 0, 0, 0); /* 0 reads as UNTIMED */
    game_clock_start(&c, 2, 1, 100, 30 * GAME_DAY_MS);
    assert_int_equal(c.deadline_ms, 30 * GAME_DAY_MS + GAME_HOUR_MS); /* up to the hour */
    game_clock same = c;
    game_clock_next_turn(&same, 0, true, 100 + GAME_HOUR_MS / 2, 30 * GAME_DAY_MS);
    assert_int_equal(same.deadline_ms, c.deadline_ms);
    assert_int_equal(c.deadline_reason, GAME_END_ABANDONED);
    assert_int_equal(c.warning_ms, c.deadline_ms - GAME_DAY_MS);
    game_clock never = clock_of(GAME_TC_UNTIMED, 0, 0, 0, 0);
    game_clock_start(&never, 2, 0, 100, 0);
    assert_int_equal(never.deadline_ms, 0);
    assert_int_equal(never.warning_ms, 0);
}

static void test_out_of_turn_resign_charges_the_seat_to_move(void **state)
{
    game_clock c = clock_of(GAME_TC_REALTIME, 0, 10, 2, 0);
    game_clock_start(&c, 2, 1, 1000, 0);
    game_clock_charge(&c, 1, 0, 5000); /* seat 0 resigns while seat 1 thinks */
    assert_int_equal(c.remaining_ms[1], 6000);
    assert_int_equal(c.remaining_ms[0], 10000); /* no increment out of turn */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realtime_charge_and_increment),
        cmocka_unit_test(test_overtime_penalty),
        cmocka_unit_test(test_correspondence),
        cmocka_unit_test(test_untimed_abandonment),
        cmocka_unit_test(test_out_of_turn_resign_charges_the_seat_to_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

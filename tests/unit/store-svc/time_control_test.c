/*
 * time_control_test.c — the TimeControl ranges store-svc enforces at
 * Invite, and the rating family of each kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "time_control.h"

static Scrabble__V1__TimeControl tc(int kind, int days, int initial, int inc, int ot)
{
    Scrabble__V1__TimeControl t = SCRABBLE__V1__TIME_CONTROL__INIT;
    t.kind = (Scrabble__V1__TimeControlKind)kind;
    t.days_per_move = days;
    t.initial_seconds = initial;
    t.increment_seconds = inc;
    t.max_overtime_minutes = ot;
    return t;
}

static bool ok(Scrabble__V1__TimeControl t)
{
    char msg[128];
    return store_time_control_check(&t, msg, sizeof msg) == NULL;
}

static void test_ranges(void **state)
{
    char msg[128];
    assert_null(store_time_control_check(NULL, msg, sizeof msg));
    assert_true(ok(tc(0, 0, 0, 0, 0)));
    assert_true(ok(tc(1, 0, 0, 0, 0)));
    assert_false(ok(tc(1, 1, 0, 0, 0)));
    assert_true(ok(tc(2, 1, 0, 0, 0)));
    assert_true(ok(tc(2, 14, 0, 0, 0)));
    assert_false(ok(tc(2, 0, 0, 0, 0)));
    assert_false(ok(tc(2, 15, 0, 0, 0)));
    assert_false(ok(tc(2, -1, 0, 0, 0)));
    assert_false(ok(tc(2, 3, 60, 0, 0)));
    assert_true(ok(tc(3, 0, 1, 0, 0)));
    assert_true(ok(tc(3, 0, 10800, 60, 10)));
    assert_false(ok(tc(3, 0, 0, 0, 0)));
    assert_false(ok(tc(3, 0, 10801, 0, 0)));
    assert_false(ok(tc(3, 0, 60, -1, 0)));
    assert_false(ok(tc(3, 0, 60, 61, 0)));
    assert_false(ok(tc(3, 0, 60, 0, 11)));
    assert_false(ok(tc(3, 1, 60, 0, 0)));
    assert_false(ok(tc(4, 0, 0, 0, 0)));
    assert_false(ok(tc(-1, 0, 0, 0, 0)));
    Scrabble__V1__TimeControl t = tc(2, 15, 0, 0, 0);
    assert_non_null(strstr(store_time_control_check(&t, msg, sizeof msg), "1..14"));
}

static void test_family(void **state)
{
    assert_string_equal(store_time_family(0), "untimed");
    assert_string_equal(store_time_family(1), "untimed");
    assert_string_equal(store_time_family(2), "correspondence");
    assert_string_equal(store_time_family(3), "realtime");
    assert_string_equal(store_time_family(99), "untimed");
    assert_int_equal(store_time_control_kind(NULL), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

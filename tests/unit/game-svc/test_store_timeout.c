/*
 * test_store_timeout.c — the deadline of a store call made for a caller
 * (store_client.h): the caller's remaining time, never more than the
 * store client's bound and never less than its floor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_client.h"

static void test_within_bounds(void **state)
{
    (void)state;
    /* A short deadline is passed on as it is: the store's work ends with it. */
    assert_int_equal(game_store_timeout_ms(300, GAME_STORE_TIMEOUT_MS), 300);
    assert_int_equal(game_store_timeout_ms(GAME_STORE_TIMEOUT_MS, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MS);
    assert_int_equal(game_store_timeout_ms(GAME_STORE_TIMEOUT_MIN_MS, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MIN_MS);
}

static void test_bounded_above(void **state)
{
    (void)state;
    /* A long deadline, or none (INT64_MAX), keeps today's fixed bound. */
    assert_int_equal(game_store_timeout_ms(GAME_STORE_TIMEOUT_MS + 1, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MS);
    assert_int_equal(game_store_timeout_ms(INT64_MAX, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MS);
}

static void test_floor(void **state)
{
    (void)state;
    /* All but spent, or already past: the floor, never 0 or negative. */
    assert_int_equal(game_store_timeout_ms(1, GAME_STORE_TIMEOUT_MS), GAME_STORE_TIMEOUT_MIN_MS);
    assert_int_equal(game_store_timeout_ms(0, GAME_STORE_TIMEOUT_MS), GAME_STORE_TIMEOUT_MIN_MS);
    assert_int_equal(game_store_timeout_ms(-2500, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MIN_MS);
    assert_int_equal(game_store_timeout_ms(INT64_MIN, GAME_STORE_TIMEOUT_MS),
                     GAME_STORE_TIMEOUT_MIN_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_within_bounds),
        cmocka_unit_test(test_bounded_above),
        cmocka_unit_test(test_floor),
    };
    return cmocka_run_group_tests_name("game-svc store timeout", tests, NULL, NULL);
}

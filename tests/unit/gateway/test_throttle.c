/* Unit tests for gateway/src/throttle.c: the Login/Register throttle table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "throttle.h"

#define SEC 1000000000LL
#define KEY(s) (s), strlen(s)

static void test_bucket_burst_then_refill(void **state)
{
    (void)state;
    gw_throttle *t = gw_throttle_create(1024);
    assert_non_null(t);
    gw_throttle_rule r = {60, 5}; /* one a second, five at once */
    int64_t now = 100 * SEC, retry = -1;
    for (int i = 0; i < 5; i++)
        assert_int_equal(gw_throttle_check(t, 1, KEY("10.0.0.1"), &r, now, &retry), GW_THROTTLE_OK);
    assert_int_equal(gw_throttle_check(t, 1, KEY("10.0.0.1"), &r, now, &retry), GW_THROTTLE_RATE);
    assert_int_equal(retry, 1000);
    assert_int_equal(gw_throttle_check(t, 1, KEY("10.0.0.1"), &r, now + SEC / 2, &retry),
                     GW_THROTTLE_RATE);
    assert_int_equal(retry, 500);
    assert_int_equal(gw_throttle_check(t, 1, KEY("10.0.0.1"), &r, now + SEC, &retry),
                     GW_THROTTLE_OK);
    /* A long quiet spell refills to the burst, no further. */
    int ok = 0;
    for (int i = 0; i < 20; i++)
        ok += gw_throttle_check(t, 1, KEY("10.0.0.1"), &r, now + 3600 * SEC, NULL) == 0;
    assert_int_equal(ok, 5);
    gw_throttle_destroy(t);
}

static void test_kinds_and_keys_independent(void **state)
{
    (void)state;
    gw_throttle *t = gw_throttle_create(1024);
    gw_throttle_rule r = {1, 1};
    assert_int_equal(gw_throttle_check(t, 1, KEY("a"), &r, SEC, NULL), GW_THROTTLE_OK);
    assert_int_equal(gw_throttle_check(t, 1, KEY("a"), &r, SEC, NULL), GW_THROTTLE_RATE);
    assert_int_equal(gw_throttle_check(t, 2, KEY("a"), &r, SEC, NULL), GW_THROTTLE_OK);
    assert_int_equal(gw_throttle_check(t, 1, KEY("b"), &r, SEC, NULL), GW_THROTTLE_OK);
    /* A prefix is another key (the length is hashed too). */
    assert_int_equal(gw_throttle_check(t, 1, "a\0", 2, &r, SEC, NULL), GW_THROTTLE_OK);
    /* No rule, or a rule of 0 a minute: nothing is limited or stored. */
    gw_throttle_rule off = {0, 1};
    for (int i = 0; i < 100; i++) {
        assert_int_equal(gw_throttle_check(t, 3, KEY("c"), &off, SEC, NULL), GW_THROTTLE_OK);
        assert_int_equal(gw_throttle_check(t, 3, KEY("d"), NULL, SEC, NULL), GW_THROTTLE_OK);
    }
    assert_int_equal(gw_throttle_count(t), 4);
    gw_throttle_destroy(t);
}

static void test_backoff_doubles_and_resets(void **state)
{
    (void)state;
    gw_throttle *t = gw_throttle_create(1024);
    gw_backoff_rule b = {.free_fails = 3, .base_ms = 1000, .max_ms = 5000};
    int64_t now = 10 * SEC, retry = 0;
    for (int i = 0; i < 3; i++)
        assert_int_equal(gw_throttle_fail(t, 1, KEY("alice"), &b, now), 0);
    assert_int_equal(gw_throttle_check(t, 1, KEY("alice"), NULL, now, NULL), GW_THROTTLE_OK);
    /* The 4th failure blocks 1 s, the 5th 2 s, then 4 s, then the cap. */
    int64_t want[] = {1000, 2000, 4000, 5000, 5000};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(gw_throttle_fail(t, 1, KEY("alice"), &b, now), want[i]);
        assert_int_equal(gw_throttle_check(t, 1, KEY("alice"), NULL, now + 1, &retry),
                         GW_THROTTLE_BACKOFF);
        assert_true(retry > 0 && retry <= want[i]);
        now += want[i] * 1000000;
        assert_int_equal(gw_throttle_check(t, 1, KEY("alice"), NULL, now, NULL), GW_THROTTLE_OK);
    }
    /* A block wins over a bucket with tokens left. */
    gw_throttle_rule r = {600, 100};
    gw_throttle_fail(t, 1, KEY("alice"), &b, now);
    assert_int_equal(gw_throttle_check(t, 1, KEY("alice"), &r, now, NULL), GW_THROTTLE_BACKOFF);
    /* Success forgets the failures. */
    gw_throttle_succeed(t, 1, KEY("alice"));
    assert_int_equal(gw_throttle_check(t, 1, KEY("alice"), &r, now, NULL), GW_THROTTLE_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(gw_throttle_fail(t, 1, KEY("alice"), &b, now), 0);
    /* Quiet for longer than max_ms: the count starts over. */
    now += 6 * SEC;
    for (int i = 0; i < 3; i++)
        assert_int_equal(gw_throttle_fail(t, 1, KEY("alice"), &b, now), 0);
    assert_int_equal(gw_throttle_fail(t, 1, KEY("alice"), &b, now), 1000);
    /* Backoff off. */
    gw_backoff_rule off = {.free_fails = 0, .base_ms = 0, .max_ms = 1000};
    assert_int_equal(gw_throttle_fail(t, 1, KEY("bob"), &off, now), 0);
    gw_throttle_destroy(t);
}

/* An attacker varying keys cannot grow the table, and a key with state
 * that matters (a block, a drained bucket) survives a flood of keys that
 * go neutral again, as long as its set is not filled with fresher state. */
static void test_memory_bounded_under_key_flood(void **state)
{
    (void)state;
    gw_throttle *t = gw_throttle_create(4096);
    size_t cap = gw_throttle_capacity(t);
    assert_true(cap >= 4096 && cap <= 8192);
    gw_throttle_rule r = {60, 2};
    gw_backoff_rule b = {.free_fails = 0, .base_ms = 600000, .max_ms = 600000};
    int64_t now = SEC;
    gw_throttle_fail(t, 1, KEY("victim"), &b, now);
    char key[32];
    for (int i = 0; i < 200000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        /* One call each: the bucket is full again a second later. */
        gw_throttle_check(t, 1, key, strlen(key), &r, now, NULL);
        now += SEC / 1000;
    }
    assert_true(gw_throttle_count(t) <= cap);
    assert_int_equal(gw_throttle_check(t, 1, KEY("victim"), NULL, now, NULL), GW_THROTTLE_BACKOFF);
    /* A flood of keys whose buckets stay drained does evict (least recently
     * touched first), but the table still never grows. */
    for (int i = 0; i < 100000; i++) {
        snprintf(key, sizeof key, "d%d", i);
        gw_throttle_check(t, 1, key, strlen(key), &r, now, NULL);
        gw_throttle_check(t, 1, key, strlen(key), &r, now, NULL);
    }
    assert_true(gw_throttle_count(t) <= cap);
    gw_throttle_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_burst_then_refill),
        cmocka_unit_test(test_kinds_and_keys_independent),
        cmocka_unit_test(test_backoff_doubles_and_resets),
        cmocka_unit_test(test_memory_bounded_under_key_flood),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for gateway/src/ratelimit.c: per-account token buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "ratelimit.h"

#define SEC 1000000000LL

static const gw_rate_rule rules[GW_RATE_CLASSES] = {
    [GW_RATE_READ] = {50, 100},
    [GW_RATE_WRITE] = {10, 20},
    [GW_RATE_LIST] = {2, 5},
    [GW_RATE_LOOKUP] = {0, 0}, /* unlimited */
};

static void test_burst_then_reject(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 1000);
    assert_non_null(rl);
    int64_t t = 1000 * SEC;
    for (int i = 0; i < 5; i++)
        assert_true(gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t));
    assert_false(gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t));
    assert_false(gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t + SEC / 4));
    /* 2/s: one token after 500 ms. */
    assert_true(gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t + SEC / 2));
    assert_false(gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t + SEC / 2));
    /* A long idle refills to the burst, not beyond. */
    int ok = 0;
    for (int i = 0; i < 50; i++)
        ok += gw_ratelimit_allow(rl, 7, GW_RATE_LIST, t + 100 * SEC);
    assert_int_equal(ok, 5);
    gw_ratelimit_destroy(rl);
}

static void test_classes_and_accounts_independent(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 1000);
    int64_t t = 5 * SEC;
    for (int i = 0; i < 5; i++)
        assert_true(gw_ratelimit_allow(rl, 1, GW_RATE_LIST, t));
    assert_false(gw_ratelimit_allow(rl, 1, GW_RATE_LIST, t));
    /* Same account, other class; other account, same class. */
    assert_true(gw_ratelimit_allow(rl, 1, GW_RATE_READ, t));
    assert_true(gw_ratelimit_allow(rl, 2, GW_RATE_LIST, t));
    /* Unlimited class. */
    for (int i = 0; i < 10000; i++)
        assert_true(gw_ratelimit_allow(rl, 1, GW_RATE_LOOKUP, t));
    assert_false(gw_ratelimit_allow(rl, 1, (gw_rate_class)99, t));
    gw_ratelimit_destroy(rl);
}

/* Over a long run the admitted count is burst + rate * seconds. */
static void test_steady_rate(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 100);
    int64_t t = SEC;
    int ok = 0;
    for (int i = 0; i < 10000; i++) /* 10 s of calls every millisecond */
        ok += gw_ratelimit_allow(rl, 42, GW_RATE_WRITE, t + (int64_t)i * (SEC / 1000));
    assert_true(ok >= 20 + 99 && ok <= 20 + 101);
    gw_ratelimit_destroy(rl);
}

/* Many more accounts than the bound: memory stays bounded and idle
 * accounts are forgotten without harm. */
static void test_bounded(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 1024);
    int64_t t = SEC;
    for (int64_t a = 1; a <= 100000; a++) {
        assert_true(gw_ratelimit_allow(rl, a, GW_RATE_READ, t));
        t += SEC / 100; /* each account idle long enough to refill */
    }
    assert_true(gw_ratelimit_size(rl) <= 2048);
    /* A draining account is still limited after the churn. */
    for (int i = 0; i < 5; i++)
        gw_ratelimit_allow(rl, 999999, GW_RATE_LIST, t);
    for (int64_t a = 1; a <= 500; a++)
        gw_ratelimit_allow(rl, 1000000 + a, GW_RATE_READ, t);
    assert_false(gw_ratelimit_allow(rl, 999999, GW_RATE_LIST, t));
    gw_ratelimit_destroy(rl);
}

/* Everybody draining at once: the table does not grow past its bound. */
static void test_pressure(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 256);
    int64_t t = SEC;
    for (int64_t a = 1; a <= 20000; a++)
        for (int i = 0; i < 6; i++)
            gw_ratelimit_allow(rl, a, GW_RATE_LIST, t);
    assert_true(gw_ratelimit_size(rl) <= 64 * 32);
    gw_ratelimit_destroy(rl);
}

/* A rejection must cost microseconds: measure one on a hot account. */
static void test_cost(void **state)
{
    (void)state;
    gw_ratelimit *rl = gw_ratelimit_create(rules, 100000);
    struct timespec a, b;
    int64_t t = SEC;
    for (int i = 0; i < 5; i++)
        gw_ratelimit_allow(rl, 3, GW_RATE_LIST, t);
    enum { N = 1000000 };
    clock_gettime(CLOCK_MONOTONIC, &a);
    int ok = 0;
    for (int i = 0; i < N; i++)
        ok += gw_ratelimit_allow(rl, 3, GW_RATE_LIST, t);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(ok, 0);
    double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / N;
    printf("# rate-limit rejection: %.1f ns\n", ns);
    assert_true(ns < 5000);
    gw_ratelimit_destroy(rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_reject),
        cmocka_unit_test(test_classes_and_accounts_independent),
        cmocka_unit_test(test_steady_rate),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_pressure),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

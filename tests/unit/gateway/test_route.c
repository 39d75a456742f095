/* Unit tests for gateway/src/route.c: rendezvous hashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "route.h"

static void test_pick_is_stable_and_in_range(void **state)
{
    (void)state;
    uint64_t h[3] = {gw_route_instance_hash("127.0.0.1:7100"),
                     gw_route_instance_hash("127.0.0.1:7101"),
                     gw_route_instance_hash("127.0.0.1:7102")};
    for (int64_t g = 1; g < 1000; g++) {
        int a = gw_route_pick(g, h, 3);
        assert_true(a >= 0 && a < 3);
        assert_int_equal(a, gw_route_pick(g, h, 3));
    }
    assert_int_equal(gw_route_pick(5, h, 0), -1);
    assert_int_equal(gw_route_pick(5, h, 1), 0);
}

/* Golden values: any other component that must agree on ownership can check
 * itself against these. */
static void test_golden(void **state)
{
    (void)state;
    assert_true(gw_route_instance_hash("a") != gw_route_instance_hash("b"));
    /* The same values as tests/interop/edge_client.py's owner(): the
     * integration tests predict ownership with it. */
    assert_true(gw_route_instance_hash("127.0.0.1:7100") == 0xe91385724e09360dULL);
    uint64_t h3[3] = {gw_route_instance_hash("127.0.0.1:7100"),
                      gw_route_instance_hash("127.0.0.1:7101"),
                      gw_route_instance_hash("127.0.0.1:7102")};
    const int want[16] = {0, 2, 2, 0, 0, 0, 1, 1, 1, 1, 0, 2, 1, 0, 1, 1};
    for (int g = 1; g <= 16; g++)
        assert_int_equal(gw_route_pick(g, h3, 3), want[g - 1]);
    uint64_t h[2] = {gw_route_instance_hash("127.0.0.1:7100"),
                     gw_route_instance_hash("127.0.0.1:7101")};
    int owners[8];
    for (int g = 0; g < 8; g++)
        owners[g] = gw_route_pick(g + 1, h, 2);
    /* Not all on one instance. */
    int sum = 0;
    for (int g = 0; g < 8; g++)
        sum += owners[g];
    assert_true(sum > 0 && sum < 8);
}

static void test_balance(void **state)
{
    (void)state;
    enum { N = 4, GAMES = 40000 };
    uint64_t h[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "127.0.0.1:%d", 7100 + i);
        h[i] = gw_route_instance_hash(name);
    }
    int count[N] = {0};
    for (int64_t g = 1; g <= GAMES; g++)
        count[gw_route_pick(g, h, N)]++;
    for (int i = 0; i < N; i++) {
        /* Each gets 25% +- 2%. */
        assert_true(count[i] > GAMES / N - GAMES / 50);
        assert_true(count[i] < GAMES / N + GAMES / 50);
    }
}

/* Removing an instance moves only the games it owned; adding one moves
 * only games to the newcomer. */
static void test_minimal_disruption(void **state)
{
    (void)state;
    uint64_t h4[4] = {gw_route_instance_hash("g0"), gw_route_instance_hash("g1"),
                      gw_route_instance_hash("g2"), gw_route_instance_hash("g3")};
    uint64_t h3[3] = {h4[0], h4[1], h4[3]}; /* g2 removed */
    const int map3[3] = {0, 1, 3};
    int moved = 0;
    for (int64_t g = 1; g <= 10000; g++) {
        int before = gw_route_pick(g, h4, 4);
        int after = map3[gw_route_pick(g, h3, 3)];
        if (before != 2)
            assert_int_equal(before, after);
        else
            moved++;
    }
    assert_true(moved > 2000 && moved < 3000);
}

static void test_rank(void **state)
{
    (void)state;
    uint64_t h[5];
    char name[8];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "i%d", i);
        h[i] = gw_route_instance_hash(name);
    }
    for (int64_t g = 1; g < 500; g++) {
        int order[5];
        gw_route_rank(g, h, 5, order);
        assert_int_equal(order[0], gw_route_pick(g, h, 5));
        int seen = 0;
        for (int i = 0; i < 5; i++) {
            seen |= 1 << order[i];
            if (i > 0)
                assert_true(gw_route_weight(g, h[order[i - 1]]) >= gw_route_weight(g, h[order[i]]));
        }
        assert_int_equal(seen, 0x1f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_is_stable_and_in_range),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_balance),
        cmocka_unit_test(test_minimal_disruption),
        cmocka_unit_test(test_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

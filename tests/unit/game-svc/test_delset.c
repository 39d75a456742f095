/*
 * test_delset.c — the set of owed draft deletions: add/remove/contains,
 * the bound, growth, peek, and removal keeping every other member findable
 * (backward shift) against a plain array as the model.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "delset.h"

static void test_add_remove(void **state)
{
    game_delset *s = game_delset_create(10);
    assert_non_null(s);
    assert_false(game_delset_contains(s, 7, 42));
    assert_int_equal(game_delset_add(s, 7, 42), GAME_DELSET_ADDED);
    assert_int_equal(game_delset_add(s, 7, 42), GAME_DELSET_PRESENT);
    assert_int_equal(game_delset_add(s, 42, 7), GAME_DELSET_ADDED);
    assert_true(game_delset_contains(s, 7, 42));
    assert_true(game_delset_contains(s, 42, 7));
    assert_false(game_delset_contains(s, 7, 43));
    assert_int_equal(game_delset_count(s), 2);
    assert_true(game_delset_remove(s, 7, 42));
    assert_false(game_delset_remove(s, 7, 42));
    assert_false(game_delset_contains(s, 7, 42));
    assert_true(game_delset_contains(s, 42, 7));
    assert_int_equal(game_delset_count(s), 1);
    /* Ids that are not positive are never members. */
    assert_int_equal(game_delset_add(s, 0, 1), GAME_DELSET_FULL);
    assert_int_equal(game_delset_add(s, 1, -1), GAME_DELSET_FULL);
    assert_false(game_delset_remove(s, 0, 0));
    game_delset_destroy(s);
}

static void test_bound(void **state)
{
    game_delset *s = game_delset_create(3);
    for (int64_t i = 1; i <= 3; i++)
        assert_int_equal(game_delset_add(s, i, 1), GAME_DELSET_ADDED);
    assert_int_equal(game_delset_add(s, 4, 1), GAME_DELSET_FULL);
    /* A member already there is not refused at the bound. */
    assert_int_equal(game_delset_add(s, 2, 1), GAME_DELSET_PRESENT);
    assert_true(game_delset_remove(s, 2, 1));
    assert_int_equal(game_delset_add(s, 4, 1), GAME_DELSET_ADDED);
    assert_int_equal(game_delset_count(s), 3);
    game_delset_destroy(s);
}

static void test_peek(void **state)
{
    game_delset *s = game_delset_create(1000);
    for (int64_t i = 1; i <= 300; i++)
        assert_int_equal(game_delset_add(s, i, i + 1000), GAME_DELSET_ADDED);
    game_draft_ref out[256];
    size_t n = game_delset_peek(s, out, 256);
    assert_int_equal(n, 256);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].account_id, out[i].game_id + 1000);
        assert_true(game_delset_remove(s, out[i].game_id, out[i].account_id));
    }
    /* What is left, then nothing. */
    assert_int_equal(game_delset_peek(s, out, 256), 44);
    for (size_t i = 0; i < 44; i++)
        assert_true(game_delset_remove(s, out[i].game_id, out[i].account_id));
    assert_int_equal(game_delset_peek(s, out, 256), 0);
    assert_int_equal(game_delset_count(s), 0);
    game_delset_destroy(s);
}

/* Random adds and removes over a small key space (long probe runs that
 * wrap around the table), checked against a model after every step. */
static void test_against_model(void **state)
{
    enum { KEYS = 200, STEPS = 20000 };
    bool model[KEYS] = {false};
    size_t members = 0;
    game_delset *s = game_delset_create(KEYS);
    srand(12345);
    for (int step = 0; step < STEPS; step++) {
        int k = rand() % KEYS;
        /* Few distinct game ids, many accounts: clustered hashes. */
        int64_t g = 1 + k % 7, a = 1 + k;
        if (rand() % 2) {
            int rc = game_delset_add(s, g, a);
            assert_int_equal(rc, model[k] ? GAME_DELSET_PRESENT : GAME_DELSET_ADDED);
            if (!model[k])
                members++;
            model[k] = true;
        } else {
            assert_int_equal(game_delset_remove(s, g, a), model[k]);
            if (model[k])
                members--;
            model[k] = false;
        }
        assert_int_equal(game_delset_count(s), members);
        if (step % 97 == 0)
            for (int j = 0; j < KEYS; j++)
                assert_int_equal(game_delset_contains(s, 1 + j % 7, 1 + j), model[j]);
    }
    game_delset_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_remove),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_against_model),
    };
    return cmocka_run_group_tests_name("game-svc delset", tests, NULL, NULL);
}

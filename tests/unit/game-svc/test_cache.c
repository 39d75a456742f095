/*
 * test_cache.c — the live-game cache: hits and misses, references, LRU
 * eviction by the byte budget (never of an entry in use), removal, history
 * accounting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cache.h"

static void test_hit_miss(void **state)
{
    game_cache *c = game_cache_create(1 << 20);
    bool created;
    game_entry *a = game_cache_acquire(c, 7, &created);
    assert_true(created);
    assert_int_equal(a->state, GAME_ENTRY_LOADING);
    game_entry *b = game_cache_acquire(c, 7, &created);
    assert_false(created);
    assert_ptr_equal(a, b);
    game_cache_release(c, a);
    game_cache_release(c, b);
    game_cache_stats st;
    game_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 1);
    game_cache_destroy(c);
}

static void test_lru_eviction(void **state)
{
    /* Room for about three entries. */
    size_t one = sizeof(game_entry);
    game_cache *c = game_cache_create(one * 3 + one / 2);
    bool created;
    for (int64_t id = 1; id <= 3; id++)
        game_cache_release(c, game_cache_acquire(c, id, &created));
    /* Touch 1 so that 2 is the least recently used. */
    game_cache_release(c, game_cache_acquire(c, 1, &created));
    assert_false(created);
    game_entry *held = game_cache_acquire(c, 4, &created); /* evicts 2 */
    assert_true(created);
    game_cache_stats st;
    game_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 3);
    assert_int_equal(st.evictions, 1);
    game_cache_release(c, game_cache_acquire(c, 2, &created));
    assert_true(created); /* 2 was the one evicted; now 3 went */
    game_cache_release(c, game_cache_acquire(c, 1, &created));
    assert_false(created);
    /* An entry in use is never evicted, even over budget. */
    game_entry *h[6];
    for (int i = 0; i < 6; i++)
        h[i] = game_cache_acquire(c, 100 + i, &created);
    game_cache_stats_get(c, &st);
    assert_true(st.entries >= 7);
    assert_ptr_equal(game_cache_acquire(c, 4, &created), held);
    assert_false(created);
    game_cache_release(c, held);
    for (int i = 0; i < 6; i++)
        game_cache_release(c, h[i]);
    game_cache_release(c, held);
    game_cache_stats_get(c, &st);
    assert_true(st.bytes <= one * 3 + one / 2);
    game_cache_destroy(c);
}

static void test_remove_and_history(void **state)
{
    game_cache *c = game_cache_create(1 << 20);
    bool created;
    game_entry *e = game_cache_acquire(c, 9, &created);
    game_cache_stats before, after;
    game_cache_stats_get(c, &before);
    for (int i = 0; i < 40; i++) {
        game_move m = {.seq = i + 1};
        assert_int_equal(game_cache_append_move(c, e, &m), 0);
    }
    assert_int_equal(e->nmoves, 40);
    assert_int_equal(e->moves[39].seq, 40);
    game_cache_stats_get(c, &after);
    assert_true(after.bytes >= before.bytes + 40 * sizeof(game_move));
    game_cache_remove(c, e);
    game_entry *fresh = game_cache_acquire(c, 9, &created);
    assert_true(created);
    assert_ptr_not_equal(fresh, e);
    game_cache_release(c, e); /* frees the removed one */
    game_cache_release(c, fresh);
    game_cache_destroy(c);
}

static void test_demote(void **state)
{
    size_t one = sizeof(game_entry);
    game_cache *c = game_cache_create(one * 2 + one / 2);
    bool created;
    game_entry *a = game_cache_acquire(c, 1, &created);
    game_cache_release(c, a);
    game_cache_release(c, game_cache_acquire(c, 2, &created));
    /* 1 is older, but demoting 2 (a finished game) makes it go first. */
    game_entry *two = game_cache_acquire(c, 2, &created);
    game_cache_demote(c, two);
    game_cache_release(c, two);
    game_cache_release(c, game_cache_acquire(c, 3, &created));
    game_cache_release(c, game_cache_acquire(c, 1, &created));
    assert_false(created);
    game_cache_release(c, game_cache_acquire(c, 2, &created));
    assert_true(created);
    game_cache_stats st;
    game_cache_stats_get(c, &st);
    assert_int_equal(st.entries, 2);
    game_cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_miss),
        cmocka_unit_test(test_lru_eviction),
        cmocka_unit_test(test_remove_and_history),
        cmocka_unit_test(test_demote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for rpc/src/arena.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/arena.h"

static int aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

static void test_alloc_aligned_and_distinct(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    assert_non_null(a);
    char *prev = NULL;
    for (size_t i = 0; i < 1000; i++) {
        size_t size = (i % 37) + (i % 3 == 0 ? 0 : 1);
        char *p = rpc_arena_alloc(a, size);
        assert_non_null(p);
        assert_true(aligned16(p));
        assert_ptr_not_equal(p, prev);
        memset(p, 0xAB, size); /* ASan catches overlap with the header */
        prev = p;
    }
    rpc_arena_destroy(a);
}

static void test_used_counts_rounded_bytes(void **state)
{
    rpc_arena *a = rpc_arena_create(1024);
    assert_int_equal(rpc_arena_used(a), 0);
    rpc_arena_alloc(a, 1);
    assert_int_equal(rpc_arena_used(a), 16);
    rpc_arena_alloc(a, 17);
    assert_int_equal(rpc_arena_used(a), 48);
    rpc_arena_destroy(a);
}

static void test_blocks_chain_when_full(void **state)
{
    /* A small first block forces chaining; every chunk must stay intact. */
    rpc_arena *a = rpc_arena_create(512);
    char *chunks[200];
    for (int i = 0; i < 200; i++) {
        chunks[i] = rpc_arena_alloc(a, 64);
        assert_non_null(chunks[i]);
        assert_true(aligned16(chunks[i]));
        memset(chunks[i], i, 64);
    }
    for (int i = 0; i < 200; i++)
        for (int j = 0; j < 64; j++)
            assert_int_equal((unsigned char)chunks[i][j], (unsigned char)i);
    assert_int_equal(rpc_arena_used(a), 200 * 64);
    rpc_arena_destroy(a);
}

static void test_large_alloc_gets_own_block(void **state)
{
    rpc_arena *a = rpc_arena_create(4096);
    char *small1 = rpc_arena_alloc(a, 32);
    char *big = rpc_arena_alloc(a, 100000);
    assert_non_null(big);
    assert_true(aligned16(big));
    memset(big, 1, 100000);
    /* The first block's free tail is still used after the big one. */
    char *small2 = rpc_arena_alloc(a, 32);
    assert_ptr_equal(small2, small1 + 32);
    rpc_arena_destroy(a);
}

static void test_reset_keeps_first_block(void **state)
{
    rpc_arena *a = rpc_arena_create(1024);
    char *first = rpc_arena_alloc(a, 16);
    for (int i = 0; i < 100; i++)
        assert_non_null(rpc_arena_alloc(a, 100));
    assert_non_null(rpc_arena_alloc(a, 1 << 20));
    rpc_arena_reset(a);
    assert_int_equal(rpc_arena_used(a), 0);
    /* Allocation restarts at the beginning of the first block. */
    assert_ptr_equal(rpc_arena_alloc(a, 16), first);
    rpc_arena_destroy(a);
}

static void test_calloc_and_overflow(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    unsigned char *p = rpc_arena_alloc(a, 256);
    memset(p, 0xFF, 256);
    rpc_arena_reset(a);
    int *z = rpc_arena_calloc(a, 64, sizeof(int));
    assert_non_null(z);
    for (int i = 0; i < 64; i++)
        assert_int_equal(z[i], 0);
    assert_null(rpc_arena_calloc(a, SIZE_MAX / 2, 4));
    assert_null(rpc_arena_alloc(a, SIZE_MAX));
    assert_null(rpc_arena_alloc(a, SIZE_MAX - 8));
    rpc_arena_destroy(a);
}

static void test_strings(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    assert_string_equal(rpc_arena_strdup(a, "hello"), "hello");
    assert_string_equal(rpc_arena_strdup(a, ""), "");
    assert_string_equal(rpc_arena_strndup(a, "hello", 3), "hel");
    assert_string_equal(rpc_arena_strndup(a, "hi", 10), "hi");
    char *s = rpc_arena_printf(a, "%s-%d", "move", 42);
    assert_string_equal(s, "move-42");
    assert_true(aligned16(s));
    /* A string bigger than the free tail and than a block. */
    char big[9000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    char *t = rpc_arena_printf(a, "<%s>", big);
    assert_non_null(t);
    assert_int_equal(strlen(t), sizeof(big) + 1);
    assert_int_equal(t[0], '<');
    assert_int_equal(t[sizeof(big)], '>');
    /* Allocation after printf does not overlap the string. */
    char *u = rpc_arena_printf(a, "%d", 7);
    char *v = rpc_arena_alloc(a, 16);
    memset(v, 'z', 16);
    assert_string_equal(u, "7");
    rpc_arena_destroy(a);
}

static void test_printf_fills_block_exactly(void **state)
{
    /* Strings whose rounded size lands on the block end, repeatedly. */
    rpc_arena *a = rpc_arena_create(300);
    for (int i = 0; i < 200; i++) {
        char *s = rpc_arena_printf(a, "%0*d", (i % 40) + 1, i);
        assert_non_null(s);
        char want[64];
        snprintf(want, sizeof(want), "%0*d", (i % 40) + 1, i);
        assert_string_equal(s, want);
        char *p = rpc_arena_alloc(a, 8);
        assert_true(aligned16(p));
    }
    rpc_arena_destroy(a);
}

static void test_protobuf_allocator(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    ProtobufCAllocator *al = rpc_arena_allocator(a);
    assert_non_null(al);
    assert_ptr_equal(al, rpc_arena_allocator(a));
    void *p = al->alloc(al->allocator_data, 40);
    assert_non_null(p);
    assert_true(aligned16(p));
    al->free(al->allocator_data, p); /* no-op: p stays usable */
    memset(p, 0, 40);
    assert_int_equal(rpc_arena_used(a), 48);
    rpc_arena_destroy(a);
}

typedef struct {
    int a;
    double b;
} sample_msg;
static void sample_init(sample_msg *m)
{
    m->a = 7;
    m->b = 1.5;
}

static void test_msg_macro(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    sample_msg *m = RPC_ARENA_MSG(a, sample_msg, sample_init);
    assert_non_null(m);
    assert_int_equal(m->a, 7);
    rpc_arena_destroy(a);
    rpc_arena_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_aligned_and_distinct),
        cmocka_unit_test(test_used_counts_rounded_bytes),
        cmocka_unit_test(test_blocks_chain_when_full),
        cmocka_unit_test(test_large_alloc_gets_own_block),
        cmocka_unit_test(test_reset_keeps_first_block),
        cmocka_unit_test(test_calloc_and_overflow),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_printf_fills_block_exactly),
        cmocka_unit_test(test_protobuf_allocator),
        cmocka_unit_test(test_msg_macro),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for rpc/src/codec.c: rpc_message_strip_unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/arena.h"
#include "rpc/rpc.h"
#include "scrabble/v1/edge.pb-c.h"

/* EvaluateRequest{game_id: 42, placements: [{row 7, col 7, letter "Q"}]}
 * as the contract encodes it. */
static const uint8_t known[] = {0x08, 42, 0x12, 0x07, 0x08, 7, 0x10, 7, 0x1a, 0x01, 'Q'};

static void test_strips_nested_and_top_level(void **state)
{
    (void)state;
    /* The same with field 98 inside the placement and field 99 after it. */
    const uint8_t with[] = {0x08, 42,   0x12, 0x0b, 0x08, 7,    0x10, 7,    0x1a, 0x01,
                            'Q',  0x92, 0x06, 0x01, 'x',  0x9a, 0x06, 0x02, 'y',  'y'};
    /* As in the runtime, decoded into an arena: dropping the references to
     * unknown fields frees nothing by itself, the arena does. */
    rpc_arena *a = rpc_arena_create(0);
    ProtobufCMessage *m = protobuf_c_message_unpack(&scrabble__v1__evaluate_request__descriptor,
                                                    rpc_arena_allocator(a), sizeof with, with);
    assert_non_null(m);
    assert_true(rpc_message_strip_unknown(m));
    uint8_t out[64];
    size_t n = protobuf_c_message_pack(m, out);
    assert_int_equal(n, sizeof known);
    assert_memory_equal(out, known, sizeof known);
    /* Nothing left: a second pass finds none. */
    assert_false(rpc_message_strip_unknown(m));
    rpc_arena_destroy(a);
}

static void test_clean_message_untouched(void **state)
{
    (void)state;
    ProtobufCMessage *m = protobuf_c_message_unpack(&scrabble__v1__evaluate_request__descriptor,
                                                    NULL, sizeof known, known);
    assert_non_null(m);
    assert_false(rpc_message_strip_unknown(m));
    assert_false(rpc_message_strip_unknown(NULL));
    protobuf_c_message_free_unpacked(m, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strips_nested_and_top_level),
        cmocka_unit_test(test_clean_message_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for rpc/src/status.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/status.h"

static void test_set_fields(void **state)
{
    rpc_status st;
    rpc_status *r = rpc_status_set(&st, GRPC_STATUS_NOT_FOUND, "game_not_found", "game %d", 42);
    assert_ptr_equal(r, &st);
    assert_int_equal(st.code, GRPC_STATUS_NOT_FOUND);
    assert_string_equal(st.reason, "game_not_found");
    assert_string_equal(st.message, "game 42");

    rpc_status_set(&st, GRPC_STATUS_OK, NULL, NULL);
    assert_int_equal(st.code, GRPC_STATUS_OK);
    assert_string_equal(st.reason, "");
    assert_string_equal(st.message, "");
}

static void test_set_truncates(void **state)
{
    char longreason[200], longmsg[1000];
    memset(longreason, 'r', sizeof(longreason) - 1);
    longreason[sizeof(longreason) - 1] = '\0';
    memset(longmsg, 'm', sizeof(longmsg) - 1);
    longmsg[sizeof(longmsg) - 1] = '\0';
    rpc_status st;
    memset(&st, 0x55, sizeof(st));
    rpc_status_set(&st, GRPC_STATUS_INTERNAL, longreason, "%s", longmsg);
    assert_int_equal(strlen(st.reason), sizeof(st.reason) - 1);
    assert_int_equal(strlen(st.message), sizeof(st.message) - 1);
}

static rpc_status *vwrap(rpc_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpc_status_vset(st, GRPC_STATUS_ABORTED, "conflict", fmt, ap);
    va_end(ap);
    return st;
}

static void test_vset(void **state)
{
    rpc_status st;
    vwrap(&st, "version %s != %u", "a", 3u);
    assert_string_equal(st.message, "version a != 3");
    assert_string_equal(st.reason, "conflict");
}

static void test_code_names_round_trip(void **state)
{
    /* Paired with the core's own enum, so a name table out of step with
     * grpc/status.h fails here. */
    static const struct {
        grpc_status_code code;
        const char *name;
    } expect[] = {
        {GRPC_STATUS_OK, "OK"},
        {GRPC_STATUS_CANCELLED, "CANCELLED"},
        {GRPC_STATUS_UNKNOWN, "UNKNOWN"},
        {GRPC_STATUS_INVALID_ARGUMENT, "INVALID_ARGUMENT"},
        {GRPC_STATUS_DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"},
        {GRPC_STATUS_NOT_FOUND, "NOT_FOUND"},
        {GRPC_STATUS_ALREADY_EXISTS, "ALREADY_EXISTS"},
        {GRPC_STATUS_PERMISSION_DENIED, "PERMISSION_DENIED"},
        {GRPC_STATUS_RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED"},
        {GRPC_STATUS_FAILED_PRECONDITION, "FAILED_PRECONDITION"},
        {GRPC_STATUS_ABORTED, "ABORTED"},
        {GRPC_STATUS_OUT_OF_RANGE, "OUT_OF_RANGE"},
        {GRPC_STATUS_UNIMPLEMENTED, "UNIMPLEMENTED"},
        {GRPC_STATUS_INTERNAL, "INTERNAL"},
        {GRPC_STATUS_UNAVAILABLE, "UNAVAILABLE"},
        {GRPC_STATUS_DATA_LOSS, "DATA_LOSS"},
        {GRPC_STATUS_UNAUTHENTICATED, "UNAUTHENTICATED"},
    };
    for (size_t k = 0; k < sizeof(expect) / sizeof(expect[0]); k++) {
        assert_string_equal(rpc_status_code_name(expect[k].code), expect[k].name);
        assert_int_equal(rpc_status_code_from_name(expect[k].name), expect[k].code);
    }
    assert_int_equal(GRPC_STATUS_UNAUTHENTICATED, 16);
    assert_string_equal(rpc_status_code_name((grpc_status_code)17), "UNKNOWN_CODE");
    assert_string_equal(rpc_status_code_name((grpc_status_code)-1), "UNKNOWN_CODE");
    assert_int_equal(rpc_status_code_from_name("UNKNOWN_CODE"), -1);
    assert_int_equal(rpc_status_code_from_name("ok"), -1);
    assert_int_equal(rpc_status_code_from_name(""), -1);
    assert_int_equal(rpc_status_code_from_name(NULL), -1);
}

static void test_reason_valid(void **state)
{
    assert_true(rpc_reason_valid("bad_request"));
    assert_true(rpc_reason_valid("move:not-connected.v2"));
    assert_true(rpc_reason_valid("a"));
    assert_true(rpc_reason_valid("0"));
    assert_false(rpc_reason_valid(""));
    assert_false(rpc_reason_valid(NULL));
    assert_false(rpc_reason_valid("Bad"));
    assert_false(rpc_reason_valid("has space"));
    assert_false(rpc_reason_valid("new\nline"));
    assert_false(rpc_reason_valid("é"));
    char r[80];
    memset(r, 'a', 63);
    r[63] = '\0';
    assert_true(rpc_reason_valid(r));
    memset(r, 'a', 64);
    r[64] = '\0';
    assert_false(rpc_reason_valid(r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_fields),   cmocka_unit_test(test_set_truncates),
        cmocka_unit_test(test_vset),         cmocka_unit_test(test_code_names_round_trip),
        cmocka_unit_test(test_reason_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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
    static const char *const expect[17] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
    for (int c = 0; c < 17; c++) {
        assert_string_equal(rpc_status_code_name((grpc_status_code)c), expect[c]);
        assert_int_equal(rpc_status_code_from_name(expect[c]), c);
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

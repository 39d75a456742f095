/* Unit tests of the client event id parser (gateway/src/event_id.h): what
 * Subscribe accepts as after_event_id before asking the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "event_id.h"

static void test_accepts(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(gw_event_id_parse("", &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(gw_event_id_parse(NULL, &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(gw_event_id_parse("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(gw_event_id_parse("42", &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(gw_event_id_parse("007", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(gw_event_id_parse("999999999999999999", &v), 0); /* 18 digits */
    assert_true(v == 999999999999999999LL);
}

static void test_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "-1",
        "+1",
        " 1",
        "1 ",
        "1e9",
        "0x10",
        "abc",
        "١٢",                      /* Arabic-Indic digits */
        "1234567890123456789",     /* 19 digits */
        "99999999999999999999999", /* would overflow */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 123;
        assert_int_equal(gw_event_id_parse(bad[i], &v), -1);
        assert_int_equal(v, 123); /* untouched */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

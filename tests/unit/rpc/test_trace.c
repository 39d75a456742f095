/* Unit tests for rpc/src/trace.c: the strict W3C traceparent parser (every
 * way a header can be wrong), ids, the header a hop sends on, and the
 * thread's current trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/trace.h"

#define TID "4bf92f3577b34da6a3ce929d0e0e4736"
#define PID "00f067aa0ba902b7"

static rpc_trace_result parse(const char *s)
{
    rpc_trace t;
    memset(&t, 0, sizeof t);
    return rpc_trace_parse(s, strlen(s), &t);
}

static void test_valid(void **state)
{
    (void)state;
    rpc_trace t;
    memset(&t, 0, sizeof t);
    const char *h = "00-" TID "-" PID "-01";
    assert_int_equal(rpc_trace_parse(h, strlen(h), &t), RPC_TRACE_VALID);
    assert_string_equal(t.trace_id, TID);
    assert_string_equal(t.parent_id, PID);
    assert_true(t.sampled);
    assert_int_equal(parse("00-" TID "-" PID "-00"), RPC_TRACE_VALID);
    /* Unknown flag bits are ignored, not refused. */
    h = "00-" TID "-" PID "-fe";
    assert_int_equal(rpc_trace_parse(h, strlen(h), &t), RPC_TRACE_VALID);
    assert_false(t.sampled);
}

static void test_malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "00",
        "01-" TID "-" PID "-01",                          /* a later version */
        "ff-" TID "-" PID "-01",                          /* the invalid version */
        "00-" TID "-" PID "-01-extra",                    /* version 00 has no more */
        "00-" TID "-" PID "-1",                           /* short flags */
        "00-00000000000000000000000000000000-" PID "-01", /* zero trace id */
        "00-" TID "-0000000000000000-01",                 /* zero parent id */
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-" PID "-01", /* uppercase */
        "00-" TID "-00F067AA0BA902B7-01",
        "00-" TID "-" PID "-0A",
        "00-" TID "-" PID "-0g",                          /* flags not hex */
        "00-4bf92f3577b34da6a3ce929d0e0e473g-" PID "-01", /* trace id not hex */
        "00_" TID "-" PID "-01",                          /* separators */
        "00-" TID "_" PID "-01",
        "00-" TID "-" PID "_01",
        "00-" TID PID "--01",
        " 00-" TID "-" PID "-0", /* right length, shifted */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rpc_trace t;
        memset(&t, 0x55, sizeof t);
        rpc_trace before = t;
        rpc_trace_result r = rpc_trace_parse(bad[i], strlen(bad[i]), &t);
        if (r != RPC_TRACE_MALFORMED)
            fail_msg("accepted or misjudged: \"%s\" -> %s", bad[i], rpc_trace_result_name(r));
        assert_memory_equal(&t, &before, sizeof t); /* nothing of it is kept */
    }
    /* An embedded NUL is not a short string: still the wrong bytes. */
    char nul[] = "00-" TID "-" PID "-01";
    nul[10] = '\0';
    rpc_trace t;
    assert_int_equal(rpc_trace_parse(nul, sizeof nul - 1, &t), RPC_TRACE_MALFORMED);
    assert_int_equal(rpc_trace_parse(NULL, 0, &t), RPC_TRACE_ABSENT);
}

static void test_oversized(void **state)
{
    (void)state;
    char big[8192];
    memset(big, 'a', sizeof big);
    memcpy(big, "00-" TID "-" PID "-01", RPC_TRACEPARENT_LEN);
    rpc_trace t;
    assert_int_equal(rpc_trace_parse(big, sizeof big, &t), RPC_TRACE_OVERSIZED);
    assert_int_equal(rpc_trace_parse(big, RPC_TRACEPARENT_OVERSIZED + 1, &t), RPC_TRACE_OVERSIZED);
    assert_int_equal(rpc_trace_parse(big, RPC_TRACEPARENT_OVERSIZED, &t), RPC_TRACE_MALFORMED);
}

/* A fresh trace's header parses back to the same trace, with this hop's
 * span as the parent; ids are lowercase hex, non-zero and distinct. */
static void test_start_and_header(void **state)
{
    (void)state;
    rpc_trace a, b, back;
    rpc_trace_start(&a, true);
    rpc_trace_start(&b, false);
    assert_true(a.on);
    assert_int_equal(strlen(a.trace_id), 32);
    assert_int_equal(strlen(a.span_id), 16);
    assert_string_equal(a.parent_id, "");
    assert_string_not_equal(a.trace_id, b.trace_id);
    char h[RPC_TRACEPARENT_LEN + 1];
    rpc_trace_header(&a, h);
    assert_int_equal(strlen(h), RPC_TRACEPARENT_LEN);
    assert_int_equal(rpc_trace_parse(h, strlen(h), &back), RPC_TRACE_VALID);
    assert_string_equal(back.trace_id, a.trace_id);
    assert_string_equal(back.parent_id, a.span_id);
    assert_true(back.sampled);
    rpc_trace_continue(&back);
    assert_string_equal(back.trace_id, a.trace_id);
    assert_string_not_equal(back.span_id, a.span_id);
    rpc_trace_header(&b, h);
    assert_int_equal(rpc_trace_parse(h, strlen(h), &back), RPC_TRACE_VALID);
    assert_false(back.sampled);
}

static void test_current(void **state)
{
    (void)state;
    assert_null(rpc_trace_current());
    rpc_trace a, b;
    rpc_trace_start(&a, false);
    rpc_trace_start(&b, false);
    rpc_trace p1 = rpc_trace_enter(&a);
    assert_string_equal(rpc_trace_current()->trace_id, a.trace_id);
    rpc_trace p2 = rpc_trace_enter(&b);
    assert_string_equal(rpc_trace_current()->trace_id, b.trace_id);
    rpc_trace p3 = rpc_trace_enter(NULL);
    assert_null(rpc_trace_current());
    rpc_trace_leave(&p3);
    rpc_trace_leave(&p2);
    assert_string_equal(rpc_trace_current()->trace_id, a.trace_id);
    rpc_trace_leave(&p1);
    assert_null(rpc_trace_current());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),     cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_oversized), cmocka_unit_test(test_start_and_header),
        cmocka_unit_test(test_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

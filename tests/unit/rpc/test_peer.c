/* Unit tests for rpc_peer_host (rpc/src/server.c): the client address the
 * Login and Register throttles key on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/rpc.h"

static void expect_host(const char *peer, const char *want)
{
    char out[64];
    size_t n = rpc_peer_host(peer, out, sizeof out);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_forms(void **state)
{
    (void)state;
    expect_host("ipv4:127.0.0.1:54321", "127.0.0.1");
    expect_host("ipv4:10.1.2.3:1", "10.1.2.3");
    expect_host("ipv6:[::1]:7000", "::1");
    expect_host("ipv6:%5B::1%5D:7000", "::1");
    expect_host("ipv6:%5B2001:db8::5%5D:443", "2001:db8::5");
    expect_host("ipv6:[::ffff:127.0.0.1]:9", "::ffff:127.0.0.1");
    expect_host("unix:/tmp/sock", "unix");
    expect_host("", "");
    expect_host(NULL, "");
    expect_host("ipv6:[::1:7000", ""); /* unterminated */
}

static void test_small_buffer(void **state)
{
    (void)state;
    char out[4];
    assert_int_equal(rpc_peer_host("ipv4:127.0.0.1:1", out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(rpc_peer_host("ipv4:127.0.0.1:1", out, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_small_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for rpc/src/addr.c: rpc_addr_split, the one "host:port"
 * splitter (metrics listen addresses, Redis addresses, the load driver's
 * targets), and rpc_peer_host, the client address the Login and Register
 * throttles key on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rpc/addr.h"

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

static void expect_split(const char *addr, int dflt, const char *host, int port)
{
    char h[64] = "";
    int p = -2;
    assert_int_equal(rpc_addr_split(addr, dflt, h, sizeof h, &p), 0);
    assert_string_equal(h, host);
    assert_int_equal(p, port);
}

static void test_split(void **state)
{
    (void)state;
    expect_split("127.0.0.1:9000", -1, "127.0.0.1", 9000);
    expect_split("localhost:0", -1, "localhost", 0); /* a listener's "any port" */
    expect_split("[::1]:7000", -1, "::1", 7000);
    expect_split("ipv4:127.0.0.1:65535", -1, "ipv4:127.0.0.1", 65535);
    expect_split("redis", 6379, "redis", 6379);
    expect_split("[::1]", 6379, "::1", 6379);
    expect_split("redis:7", 6379, "redis", 7);
    const char *bad[] = {"",     ":80",     "h:",    "h:65536", "h:12x", "h:-1",
                         "h: 1", "[::1:80", "[]:80", "[::1]x",  "h",     "[::1]"};
    char h[64];
    int p;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rpc_addr_split(bad[i], -1, h, sizeof h, &p), -1);
    char tiny[4];
    assert_int_equal(rpc_addr_split("longhost:1", -1, tiny, sizeof tiny, &p), -1);
    assert_int_equal(rpc_addr_split("abc:1", -1, tiny, sizeof tiny, &p), 0);
    assert_string_equal(tiny, "abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_small_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

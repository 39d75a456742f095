/* Unit tests of --trusted-proxies and x-real-ip (gateway/src/proxy.h):
 * which CIDR lists start the gateway, which peers they trust, and which
 * forwarded addresses are believed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

static gw_proxy_list parsed(const char *spec)
{
    gw_proxy_list l;
    char err[256] = "";
    assert_int_equal(gw_proxy_parse(spec, &l, err, sizeof err), 0);
    assert_string_equal(err, "");
    return l;
}

static void refused(const char *spec, const char *named)
{
    gw_proxy_list l;
    char err[256] = "";
    assert_int_equal(gw_proxy_parse(spec, &l, err, sizeof err), -1);
    assert_int_equal(l.n, 0);
    assert_non_null(strstr(err, "--trusted-proxies"));
    if (named)
        assert_non_null(strstr(err, named));
}

static void test_parse_good(void **state)
{
    (void)state;
    assert_int_equal(parsed("").n, 0);
    assert_int_equal(parsed("  ").n, 0);
    gw_proxy_list l = parsed("10.0.0.0/8,172.16.0.0/12, 192.168.0.0/16 ,::1,fd00::/8");
    assert_int_equal(l.n, 5);
    assert_int_equal(l.e[0].family, 4);
    assert_int_equal(l.e[0].prefix, 8);
    assert_int_equal(l.e[3].family, 6);
    assert_int_equal(l.e[3].prefix, 128); /* bare IPv6 address */
    l = parsed("127.0.0.1");
    assert_int_equal(l.e[0].prefix, 32); /* bare IPv4 address */
    /* host bits are cleared: 10.1.2.3/8 is 10.0.0.0/8 */
    l = parsed("10.1.2.3/8");
    assert_int_equal(l.e[0].addr[1], 0);
    assert_int_equal(l.e[0].addr[3], 0);
    /* an IPv4-mapped entry is stored as IPv4 */
    l = parsed("::ffff:10.0.0.0/104");
    assert_int_equal(l.e[0].family, 4);
    assert_int_equal(l.e[0].prefix, 8);
    assert_int_equal(parsed("0.0.0.0/0,::/0").n, 2);
}

static void test_parse_bad(void **state)
{
    (void)state;
    refused("10.0.0.0/33", "10.0.0.0/33");
    refused("::1/129", "::1/129");
    refused("10.0.0.0/", "10.0.0.0/");
    refused("10.0.0.0/-1", NULL);
    refused("10.0.0.0/+8", NULL);
    refused("10.0.0.0/8x", NULL);
    refused("10.0.0/8", "10.0.0/8");
    refused("localhost", "localhost");
    refused("10.0.0.1:80", NULL);
    refused("10.0.0.0/8,,192.168.0.0/16", NULL); /* empty entry */
    refused("10.0.0.0/8,", NULL);
    refused("fe80::1%eth0", NULL);
    refused("1.2.3.4 5.6.7.8", NULL);
    refused("::ffff:10.0.0.0/95", NULL); /* mapped, but wider than IPv4 */
}

static void test_too_many(void **state)
{
    (void)state;
    char spec[512] = "";
    for (int i = 0; i < GW_PROXY_MAX; i++) {
        char one[32];
        snprintf(one, sizeof one, "%s10.0.%d.0/24", i ? "," : "", i);
        strcat(spec, one);
    }
    assert_int_equal(parsed(spec).n, GW_PROXY_MAX);
    strcat(spec, ",10.0.99.0/24");
    refused(spec, "more than 16");
}

static void test_match_v4(void **state)
{
    (void)state;
    gw_proxy_list l = parsed("10.0.0.0/8,192.168.1.7");
    assert_true(gw_proxy_trusted(&l, "10.0.0.0"));
    assert_true(gw_proxy_trusted(&l, "10.255.255.255"));
    assert_false(gw_proxy_trusted(&l, "11.0.0.0"));
    assert_false(gw_proxy_trusted(&l, "9.255.255.255"));
    assert_true(gw_proxy_trusted(&l, "192.168.1.7")); /* /32 edge */
    assert_false(gw_proxy_trusted(&l, "192.168.1.6"));
    assert_false(gw_proxy_trusted(&l, "192.168.1.8"));
    /* a dual-stack listener reports IPv4 peers mapped */
    assert_true(gw_proxy_trusted(&l, "::ffff:10.1.2.3"));
    assert_false(gw_proxy_trusted(&l, "::ffff:11.1.2.3"));
    /* not addresses, or the wrong family */
    assert_false(gw_proxy_trusted(&l, ""));
    assert_false(gw_proxy_trusted(&l, NULL));
    assert_false(gw_proxy_trusted(&l, "unix:/tmp/x"));
    assert_false(gw_proxy_trusted(&l, "::a00:1")); /* IPv4-compatible is not mapped */
    /* /12 edge: 172.16.0.0-172.31.255.255 */
    l = parsed("172.16.0.0/12");
    assert_true(gw_proxy_trusted(&l, "172.31.255.255"));
    assert_false(gw_proxy_trusted(&l, "172.32.0.0"));
    assert_false(gw_proxy_trusted(&l, "172.15.255.255"));
    /* /0 trusts every IPv4 peer but no IPv6 one */
    l = parsed("0.0.0.0/0");
    assert_true(gw_proxy_trusted(&l, "1.2.3.4"));
    assert_true(gw_proxy_trusted(&l, "::ffff:1.2.3.4"));
    assert_false(gw_proxy_trusted(&l, "::1"));
    /* the empty list trusts nobody */
    l = parsed("");
    assert_false(gw_proxy_trusted(&l, "127.0.0.1"));
}

static void test_match_v6(void **state)
{
    (void)state;
    gw_proxy_list l = parsed("fd00::/8,2001:db8::1");
    assert_true(gw_proxy_trusted(&l, "fd12:3456::1"));
    assert_true(gw_proxy_trusted(&l, "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
    assert_false(gw_proxy_trusted(&l, "fe00::1"));
    assert_false(gw_proxy_trusted(&l, "fc00::1"));
    assert_true(gw_proxy_trusted(&l, "2001:db8::1")); /* /128 edge */
    assert_false(gw_proxy_trusted(&l, "2001:db8::2"));
    assert_false(gw_proxy_trusted(&l, "10.0.0.1"));
    l = parsed("::/0");
    assert_true(gw_proxy_trusted(&l, "::1"));
    assert_false(gw_proxy_trusted(&l, "127.0.0.1"));
    assert_false(gw_proxy_trusted(&l, "::ffff:127.0.0.1")); /* matched as IPv4 */
    l = parsed("2001:db8:0:1::/63");                        /* a prefix inside a byte */
    assert_true(gw_proxy_trusted(&l, "2001:db8:0:1::5"));
    assert_true(gw_proxy_trusted(&l, "2001:db8::5"));
    assert_false(gw_proxy_trusted(&l, "2001:db8:0:2::5"));
}

static bool fwd(const char *s)
{
    char out[GW_PROXY_ADDR_MAX];
    return gw_proxy_forwarded_ok(s, strlen(s), out) && strcmp(out, s) == 0;
}

static void test_forwarded(void **state)
{
    (void)state;
    assert_true(fwd("203.0.113.9"));
    assert_true(fwd("2001:db8::9"));
    assert_true(fwd("::ffff:203.0.113.9"));
    assert_true(fwd("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255")); /* 45 bytes */
    assert_false(fwd(""));
    assert_false(fwd("203.0.113.9:443"));
    assert_false(fwd("[2001:db8::9]"));
    assert_false(fwd("203.0.113.9, 10.0.0.1"));
    assert_false(fwd("203.0.113.9,10.0.0.1"));
    assert_false(fwd(" 203.0.113.9"));
    assert_false(fwd("203.0.113.9 "));
    assert_false(fwd("fe80::1%eth0"));
    assert_false(fwd("unknown"));
    assert_false(fwd("203.0.113.256"));
    char out[GW_PROXY_ADDR_MAX];
    /* a NUL inside the header value must not cut it short */
    assert_false(gw_proxy_forwarded_ok("1.2.3.4\0junk", 12, out));
    assert_false(gw_proxy_forwarded_ok(NULL, 0, out));
    char longv[64];
    memset(longv, '1', sizeof longv);
    assert_false(gw_proxy_forwarded_ok(longv, sizeof longv, out));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good), cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_too_many),   cmocka_unit_test(test_match_v4),
        cmocka_unit_test(test_match_v6),   cmocka_unit_test(test_forwarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

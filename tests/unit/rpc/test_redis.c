/*
 * test_redis.c — the Redis names and address parsing of rpc/redis.h (the
 * contract between game-svc, which publishes and stores drafts, and the
 * gateway, which subscribes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/redis.h"

static void test_event_channel(void **state)
{
    (void)state;
    char buf[RPC_REDIS_NAME_MAX];
    assert_int_equal(rpc_redis_event_channel(buf, sizeof buf, 42), 5);
    assert_string_equal(buf, "ev:42");
    assert_int_equal(rpc_redis_event_channel(buf, sizeof buf, INT64_MAX), 3 + 19);
    assert_string_equal(buf, "ev:9223372036854775807");
    assert_int_equal(rpc_redis_event_channel(buf, sizeof buf, 0), -1);
    assert_int_equal(rpc_redis_event_channel(buf, sizeof buf, -7), -1);
    char small[5];
    assert_int_equal(rpc_redis_event_channel(small, sizeof small, 1234), -1);
}

static void test_draft_key(void **state)
{
    (void)state;
    char buf[RPC_REDIS_NAME_MAX];
    assert_int_equal(rpc_redis_draft_key(buf, sizeof buf, 7, 42), 10);
    assert_string_equal(buf, "draft:7:42");
    /* The longest key fits the documented bound. */
    assert_true(rpc_redis_draft_key(buf, sizeof buf, INT64_MAX, INT64_MAX) > 0);
    assert_string_equal(buf, "draft:9223372036854775807:9223372036854775807");
    assert_int_equal(rpc_redis_draft_key(buf, sizeof buf, 0, 42), -1);
    assert_int_equal(rpc_redis_draft_key(buf, sizeof buf, 7, -1), -1);
    char small[8];
    assert_int_equal(rpc_redis_draft_key(small, sizeof small, 7, 42), -1);
}

static void test_channel_roundtrip(void **state)
{
    (void)state;
    char buf[RPC_REDIS_NAME_MAX];
    int64_t ids[] = {1, 9, 10, 123456789, INT64_MAX};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        int n = rpc_redis_event_channel(buf, sizeof buf, ids[i]);
        assert_true(n > 0);
        assert_true(rpc_redis_event_channel_account(buf, (size_t)n) == ids[i]);
    }
}

static void test_channel_account_rejects(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "ev:",
                         "ev:-1",
                         "ev:1a",
                         "ev: 1",
                         "EV:1",
                         "ev1",
                         "evt:12",
                         "draft:1",
                         "ev:0",
                         "ev:9223372036854775808",
                         "ev:99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_true(rpc_redis_event_channel_account(bad[i], strlen(bad[i])) == 0);
    /* Length-bounded: the bytes after len are not read. */
    assert_true(rpc_redis_event_channel_account("ev:12xyz", 5) == 12);
}

static void test_parse_addr(void **state)
{
    (void)state;
    char host[64];
    int port = 0;
    assert_int_equal(rpc_redis_parse_addr("127.0.0.1:56379", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 56379);
    assert_int_equal(rpc_redis_parse_addr("redis", host, sizeof host, &port), 0);
    assert_string_equal(host, "redis");
    assert_int_equal(port, 6379);
    const char *bad[] = {":6379", "h:", "h:0", "h:65536", "h:12x", "h:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rpc_redis_parse_addr(bad[i], host, sizeof host, &port), -1);
    char tiny[4];
    assert_int_equal(rpc_redis_parse_addr("longhost:1", tiny, sizeof tiny, &port), -1);
}

static void test_create_needs_secret(void **state)
{
    (void)state;
    char err[160];
    /* Without a secrets directory no file is needed (a Redis without ACLs). */
    rpc_redis *r = rpc_redis_create("127.0.0.1:1", RPC_REDIS_USER_DRAFTS, "", 100, err, sizeof err);
    assert_non_null(r);
    rpc_redis_destroy(r);
    /* With one, a missing password file fails at once, naming the file. */
    r = rpc_redis_create("127.0.0.1:1", RPC_REDIS_USER_DRAFTS, "/nonexistent", 100, err,
                         sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "/nonexistent/redis-drafts.pass"));
    r = rpc_redis_create("nohostport:", RPC_REDIS_USER_DRAFTS, "", 100, err, sizeof err);
    assert_null(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_channel),     cmocka_unit_test(test_draft_key),
        cmocka_unit_test(test_channel_roundtrip), cmocka_unit_test(test_channel_account_rejects),
        cmocka_unit_test(test_parse_addr),        cmocka_unit_test(test_create_needs_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

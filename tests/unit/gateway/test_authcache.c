/* Unit tests for gateway/src/authcache.c: the bounded token cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "authcache.h"

static void put(gw_authcache *c, const char *tok, int64_t acct, const char *handle, int64_t exp)
{
    gw_identity id = {.account_id = acct};
    snprintf(id.handle, sizeof id.handle, "%s", handle);
    gw_authcache_put(c, tok, strlen(tok), &id, exp, exp); /* no outage grace */
}

static void test_hit_miss_expiry(void **state)
{
    (void)state;
    gw_authcache *c = gw_authcache_create(1000);
    assert_non_null(c);
    gw_identity id;
    assert_int_equal(gw_authcache_get(c, "tok1", 4, 0, 1000, &id), GW_AUTH_MISS);
    put(c, "tok1", 11, "alice", 1000);
    assert_int_equal(gw_authcache_get(c, "tok1", 4, 999, 1000, &id), GW_AUTH_HIT);
    assert_int_equal(id.account_id, 11);
    assert_string_equal(id.handle, "alice");
    /* A prefix or extension of a token is a different token. */
    assert_int_equal(gw_authcache_get(c, "tok", 3, 0, 1000, &id), GW_AUTH_MISS);
    assert_int_equal(gw_authcache_get(c, "tok12", 5, 0, 1000, &id), GW_AUTH_MISS);
    /* Expired. */
    assert_int_equal(gw_authcache_get(c, "tok1", 4, 1000, 1000, &id), GW_AUTH_MISS);
    assert_int_equal(gw_authcache_count(c, 0), 0);
    gw_authcache_destroy(c);
}

static void test_negative(void **state)
{
    (void)state;
    gw_authcache *c = gw_authcache_create(16);
    gw_identity id;
    put(c, "forged", 0, "", 500);
    assert_int_equal(gw_authcache_get(c, "forged", 6, 100, 1000, &id), GW_AUTH_BAD);
    assert_int_equal(gw_authcache_get(c, "forged", 6, 500, 1000, &id), GW_AUTH_MISS);
    /* Refreshing replaces in place. */
    put(c, "forged", 5, "bob", 900);
    assert_int_equal(gw_authcache_get(c, "forged", 6, 600, 1000, &id), GW_AUTH_HIT);
    assert_int_equal(gw_authcache_count(c, 600), 1);
    gw_authcache_destroy(c);
}

static void test_bounded(void **state)
{
    (void)state;
    gw_authcache *c = gw_authcache_create(1000);
    size_t cap = gw_authcache_capacity(c);
    assert_true(cap >= 1000 && cap < 4096);
    char tok[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(tok, sizeof tok, "token-%d", i);
        put(c, tok, i + 1, "h", 10000 + i);
    }
    assert_true(gw_authcache_count(c, 0) <= cap);
    /* The most recent tokens (latest expiry) are mostly still there. */
    int hits = 0;
    gw_identity id;
    for (int i = 99900; i < 100000; i++) {
        snprintf(tok, sizeof tok, "token-%d", i);
        if (gw_authcache_get(c, tok, strlen(tok), 0, 1000, &id) == GW_AUTH_HIT) {
            assert_int_equal(id.account_id, i + 1);
            hits++;
        }
    }
    assert_true(hits > 90);
    gw_authcache_destroy(c);
}

static void test_long_and_empty_tokens(void **state)
{
    (void)state;
    gw_authcache *c = gw_authcache_create(16);
    char big[300];
    memset(big, 'x', sizeof big);
    gw_identity id = {.account_id = 3};
    gw_authcache_put(c, big, sizeof big, &id, 1000, 1000);
    assert_int_equal(gw_authcache_get(c, big, sizeof big, 0, 1000, &id), GW_AUTH_MISS);
    gw_authcache_put(c, "", 0, &id, 1000, 1000);
    assert_int_equal(gw_authcache_get(c, "", 0, 0, 1000, &id), GW_AUTH_MISS);
    /* An over-long handle is cut, not overflowed. */
    gw_identity longh = {.account_id = 9};
    memset(longh.handle, 'h', sizeof longh.handle);
    gw_authcache_put(c, "t", 1, &longh, 1000, 1000);
    assert_int_equal(gw_authcache_get(c, "t", 1, 0, 1000, &id), GW_AUTH_HIT);
    assert_int_equal(strlen(id.handle), GW_AUTH_HANDLE_MAX - 1);
    gw_authcache_destroy(c);
}

/* After its TTL a positive entry is a fallback until its grace ends: each
 * STALE answer trusts it again for the recheck time only (so the token's
 * other calls do not all ask the store), never past the grace; a rejected
 * token is never a fallback, and a rejection replaces the fallback. */
static void test_outage_grace(void **state)
{
    (void)state;
    gw_authcache *c = gw_authcache_create(16);
    gw_identity id = {.account_id = 8}, got;
    snprintf(id.handle, sizeof id.handle, "carol");
    gw_authcache_put(c, "seen", 4, &id, 1000, 5000);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 999, 100, &got), GW_AUTH_HIT);
    memset(&got, 0, sizeof got);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 1000, 100, &got), GW_AUTH_STALE);
    assert_int_equal(got.account_id, 8);
    assert_string_equal(got.handle, "carol");
    /* Claimed: trusted for the recheck time, then stale again. */
    assert_int_equal(gw_authcache_get(c, "seen", 4, 1099, 100, &got), GW_AUTH_HIT);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 1100, 100, &got), GW_AUTH_STALE);
    /* The recheck never reaches past the grace... */
    assert_int_equal(gw_authcache_get(c, "seen", 4, 4950, 100, &got), GW_AUTH_STALE);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 4999, 100, &got), GW_AUTH_HIT);
    /* ...and after it the token is unknown. */
    assert_int_equal(gw_authcache_get(c, "seen", 4, 5000, 100, &got), GW_AUTH_MISS);
    assert_int_equal(gw_authcache_count(c, 5000), 0);
    /* The store answered again: a fresh entry with a fresh grace. */
    gw_authcache_put(c, "seen", 4, &id, 6000, 9000);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 6500, 100, &got), GW_AUTH_STALE);
    /* Revoked: the rejection replaces the fallback at once. */
    gw_identity bad = {.account_id = 0};
    gw_authcache_put(c, "seen", 4, &bad, 6600, 9000);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 6550, 100, &got), GW_AUTH_BAD);
    assert_int_equal(gw_authcache_get(c, "seen", 4, 6600, 100, &got), GW_AUTH_MISS);
    gw_authcache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_miss_expiry), cmocka_unit_test(test_negative),
        cmocka_unit_test(test_bounded),         cmocka_unit_test(test_long_and_empty_tokens),
        cmocka_unit_test(test_outage_grace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

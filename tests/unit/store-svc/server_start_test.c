/* store_server_start's failure path: a thread that cannot be started halfway
 * through leaves nothing running and nothing leaked (ASan/LSan watch the
 * frees; a freed reader_dbs still used by a running reader would be a
 * heap-use-after-free). pthread_create is wrapped at link time
 * (-Wl,--wrap=pthread_create) so the test picks which call fails. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store.h"

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

/* The pthread_create call (1-based) that fails; 0: none fails. */
static int fail_at;
static int calls;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (fail_at > 0 && ++calls == fail_at)
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

static void config(store_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    /* Nothing listens on port 1: the threads fail to connect and wait in
     * their back-off, which stopping must interrupt. */
    snprintf(cfg->pg, sizeof cfg->pg, "host=127.0.0.1 port=1 dbname=none connect_timeout=1");
    cfg->batch_window_us = 2000;
    cfg->batch_max = 16;
    cfg->read_pool = 3;
}

static void start_fails_at(int n)
{
    store_config cfg;
    config(&cfg);
    store_server srv;
    fail_at = n;
    calls = 0;
    assert_int_equal(store_server_start(&srv, &cfg, NULL), STORE_ERROR);
    assert_false(srv.started);
    store_server_stop(&srv); /* a no-op after a failed start */
    fail_at = 0;
}

static void test_writer_fails(void **state)
{
    (void)state;
    start_fails_at(1);
}

static void test_second_reader_fails(void **state)
{
    (void)state;
    start_fails_at(3); /* writer and reader 0 run; reader 1 fails */
}

static void test_last_reader_fails(void **state)
{
    (void)state;
    start_fails_at(4);
}

static void test_start_and_stop(void **state)
{
    (void)state;
    store_config cfg;
    config(&cfg);
    store_server srv;
    fail_at = 0;
    assert_int_equal(store_server_start(&srv, &cfg, NULL), STORE_OK);
    assert_true(srv.started);
    store_server_stop(&srv);
    assert_false(srv.started);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_fails),
        cmocka_unit_test(test_second_reader_fails),
        cmocka_unit_test(test_last_reader_fails),
        cmocka_unit_test(test_start_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

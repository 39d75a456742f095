/* Unit tests for rpc/src/conn_guard.c: finding the core's socket for a
 * peer string and shutting it down (never closing it), over loopback; and
 * the trimmer handing memory back once bulk requests stop (malloc_trim is
 * wrapped at link time to count its calls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../rpc/src/internal.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"

static atomic_int trims;

int __wrap_malloc_trim(size_t pad);
int __wrap_malloc_trim(size_t pad)
{
    (void)pad;
    atomic_fetch_add(&trims, 1);
    return 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static rpc__guard *guard_new(metrics_registry **m)
{
    rpc_server_config cfg;
    rpc_server_config_defaults(&cfg, 0, 0);
    *m = metrics_registry_create();
    rpc__guard *g = rpc__guard_create(&cfg, *m);
    assert_non_null(g);
    return g;
}

/* A listening socket of `family` on loopback, a client connected to it
 * and the accepted end; the peer string as the core writes it. */
typedef struct pair {
    int lfd, cfd, sfd, lport;
    char peer[96];
} pair;

static void pair_open(pair *p, int family)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        /* The core's own way: an AF_INET6 socket, IPv4 clients arrive
         * v4-mapped. */
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_any;
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*a);
    }
    p->lfd = socket(family, SOCK_STREAM, 0);
    assert_true(p->lfd >= 0);
    assert_int_equal(bind(p->lfd, (struct sockaddr *)&ss, len), 0);
    assert_int_equal(listen(p->lfd, 4), 0);
    len = sizeof(ss);
    assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&ss, &len), 0);
    p->lport = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                        : ((struct sockaddr_in *)&ss)->sin_port);

    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->lport)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    p->cfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(p->cfd, (struct sockaddr *)&to, sizeof(to)), 0);
    p->sfd = accept(p->lfd, NULL, NULL);
    assert_true(p->sfd >= 0);
    struct sockaddr_in me;
    len = sizeof(me);
    assert_int_equal(getsockname(p->cfd, (struct sockaddr *)&me, &len), 0);
    snprintf(p->peer, sizeof(p->peer), "ipv4:127.0.0.1:%d", ntohs(me.sin_port));
}

static void pair_close(pair *p)
{
    close(p->cfd);
    close(p->sfd);
    close(p->lfd);
}

static void check_shutdown(int family)
{
    pair p;
    pair_open(&p, family);
    /* Another port: not ours, left alone. */
    assert_int_equal(rpc__guard_shutdown_peer(p.peer, p.lport + 1 == 65536 ? 1 : p.lport + 1), -1);
    assert_int_equal(rpc__guard_shutdown_peer(p.peer, p.lport), p.sfd);
    /* The client sees end-of-stream; the descriptor stays open (the
     * core's to close). */
    char c;
    assert_int_equal(recv(p.cfd, &c, 1, 0), 0);
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    assert_int_equal(getsockname(p.sfd, (struct sockaddr *)&ss, &len), 0);
    pair_close(&p);
}

static void test_shutdown_ipv4(void **state)
{
    (void)state;
    check_shutdown(AF_INET);
}

static void test_shutdown_v4_mapped(void **state)
{
    (void)state;
    check_shutdown(AF_INET6);
}

/* An IPv6 client, named as the core names it: "ipv6:%5B::1%5D:port". */
static void test_shutdown_ipv6(void **state)
{
    (void)state;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    socklen_t len = sizeof(a);
    int lfd = socket(AF_INET6, SOCK_STREAM, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, len) != 0) {
        if (lfd >= 0)
            close(lfd);
        skip(); /* no IPv6 loopback here */
    }
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    int lport = ntohs(a.sin6_port);
    int cfd = socket(AF_INET6, SOCK_STREAM, 0);
    assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
    int sfd = accept(lfd, NULL, NULL);
    struct sockaddr_in6 me;
    len = sizeof(me);
    assert_int_equal(getsockname(cfd, (struct sockaddr *)&me, &len), 0);
    char peer[96];
    snprintf(peer, sizeof(peer), "ipv6:%%5B::1%%5D:%d", ntohs(me.sin6_port));
    assert_int_equal(rpc__guard_shutdown_peer(peer, lport), sfd);
    char c;
    assert_int_equal(recv(cfd, &c, 1, 0), 0);
    close(cfd);
    close(sfd);
    close(lfd);
}

static void test_no_match(void **state)
{
    (void)state;
    pair p;
    pair_open(&p, AF_INET);
    assert_int_equal(rpc__guard_shutdown_peer("ipv4:127.0.0.1:1", p.lport), -1);
    assert_int_equal(rpc__guard_shutdown_peer("unix:/tmp/x", 0), -1);
    assert_int_equal(rpc__guard_shutdown_peer("ipv4:not-an-address:80", 0), -1);
    assert_int_equal(rpc__guard_shutdown_peer("ipv6:[::1]", 0), -1);
    assert_int_equal(rpc__guard_shutdown_peer("", 0), -1);
    /* Still connected. */
    assert_int_equal(send(p.cfd, "x", 1, 0), 1);
    char c;
    assert_int_equal(recv(p.sfd, &c, 1, 0), 1);
    pair_close(&p);
}

static void test_gone_peer(void **state)
{
    (void)state;
    pair p;
    pair_open(&p, AF_INET);
    /* The client went away: the connection is no longer established, and
     * the guard must not take its calls' cancellation for abuse. */
    close(p.cfd);
    p.cfd = socket(AF_INET, SOCK_STREAM, 0); /* for pair_close */
    char c;
    assert_int_equal(recv(p.sfd, &c, 1, 0), 0); /* its FIN has arrived */
    assert_int_equal(rpc__guard_shutdown_peer(p.peer, p.lport), -2);
    pair_close(&p);
}

/* Nothing to hand back: the trimmer sleeps, and destroy wakes and joins
 * it at once. */
static void test_trimmer_idle(void **state)
{
    (void)state;
    metrics_registry *m;
    atomic_store(&trims, 0);
    rpc__guard *g = guard_new(&m);
    rpc__guard_destroy(g);
    metrics_registry_destroy(m);
    assert_int_equal(atomic_load(&trims), 0);
}

/* Bulk requests, then quiet: exactly one trim follows, with no call
 * arriving to trigger it (the wait is for the condition, bounded). */
static void test_trimmer_after_bulk(void **state)
{
    (void)state;
    metrics_registry *m;
    atomic_store(&trims, 0);
    rpc__guard *g = guard_new(&m);
    for (int i = 0; i < 5; i++)
        rpc__guard_note_bulk(g);
    double end = now_s() + 30;
    while (atomic_load(&trims) == 0 && now_s() < end)
        usleep(20000);
    assert_int_equal(atomic_load(&trims), 1);
    rpc__guard_destroy(g);
    metrics_registry_destroy(m);
    assert_int_equal(atomic_load(&trims), 1);
}

/* Destroy while a trim is pending: the trimmer leaves its timed wait. */
static void test_trimmer_stop_pending(void **state)
{
    (void)state;
    metrics_registry *m;
    atomic_store(&trims, 0);
    rpc__guard *g = guard_new(&m);
    rpc__guard_note_bulk(g);
    rpc__guard_destroy(g);
    metrics_registry_destroy(m);
    assert_int_equal(atomic_load(&trims), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shutdown_ipv4),      cmocka_unit_test(test_shutdown_v4_mapped),
        cmocka_unit_test(test_shutdown_ipv6),      cmocka_unit_test(test_no_match),
        cmocka_unit_test(test_gone_peer),          cmocka_unit_test(test_trimmer_idle),
        cmocka_unit_test(test_trimmer_after_bulk), cmocka_unit_test(test_trimmer_stop_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

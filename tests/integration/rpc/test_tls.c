/*
 * Transport security: a server with TLS and a client-certificate requirement
 * (the mutual TLS between services) accepts a client holding a certificate
 * from the development CA, and refuses a client without one and a plaintext
 * client. Certificates come from scripts/gen-certs.sh into a temp dir
 * (argv[1] is the script's path).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc/health/v1/health.pb-c.h"
#include "rpc/log.h"
#include "rpc/rpc.h"

static const char *gen_certs;
static char dir[64];
static rpc_server *server;
static char target[64];

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/rpc-tls-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "bash %s %s >/dev/null", gen_certs, dir);
    assert_int_equal(system(cmd), 0);

    log_threshold = LOG_LEVEL_WARN;
    rpc_server_config cfg;
    rpc_server_config_defaults(&cfg, 0, 0);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
    cfg.metrics_listen[0] = '\0';
    snprintf(cfg.tls.cert_file, sizeof(cfg.tls.cert_file), "%s/store-svc.crt", dir);
    snprintf(cfg.tls.key_file, sizeof(cfg.tls.key_file), "%s/store-svc.key", dir);
    snprintf(cfg.tls.ca_file, sizeof(cfg.tls.ca_file), "%s/ca.crt", dir);
    char err[256];
    server = rpc_server_create(&cfg, "tls", err, sizeof(err));
    assert_non_null(server);
    int port = rpc_server_start(server, err, sizeof(err));
    assert_true(port > 0);
    /* A literal address: the certificates carry IP:127.0.0.1, and the DNS
     * resolver (c-ares) is kept out of a leak-checked test. */
    snprintf(target, sizeof(target), "127.0.0.1:%d", port);
    return 0;
}

static int teardown(void **state)
{
    rpc_server_destroy(server);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static grpc_status_code check(const rpc_tls_config *tls)
{
    rpc_channel_opts copts = {.tls = tls};
    rpc_channel *ch = rpc_channel_create(target, &copts);
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    rpc_client_opts opts = {.timeout_ms = 3000};
    ProtobufCMessage *reply = NULL;
    rpc_status st;
    grpc_status_code code = rpc_client_unary_sync(
        ch, "/grpc.health.v1.Health/Check", &req.base,
        &grpc__health__v1__health_check_response__descriptor, &opts, NULL, &reply, &st);
    if (reply)
        protobuf_c_message_free_unpacked(reply, NULL);
    rpc_channel_destroy(ch);
    return code;
}

static void test_mutual_tls_accepts_client_certificate(void **state)
{
    rpc_tls_config tls = {0};
    snprintf(tls.ca_file, sizeof(tls.ca_file), "%s/ca.crt", dir);
    snprintf(tls.cert_file, sizeof(tls.cert_file), "%s/gateway.crt", dir);
    snprintf(tls.key_file, sizeof(tls.key_file), "%s/gateway.key", dir);
    assert_int_equal(check(&tls), GRPC_STATUS_OK);
}

static void test_refuses_client_without_certificate(void **state)
{
    rpc_tls_config tls = {0};
    snprintf(tls.ca_file, sizeof(tls.ca_file), "%s/ca.crt", dir);
    assert_int_equal(check(&tls), GRPC_STATUS_UNAVAILABLE);
}

static void test_refuses_plaintext_client(void **state)
{
    assert_int_equal(check(NULL), GRPC_STATUS_UNAVAILABLE);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_rpc_tls PATH/TO/gen-certs.sh\n");
        return 2;
    }
    gen_certs = argv[1];
    rpc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutual_tls_accepts_client_certificate),
        cmocka_unit_test(test_refuses_client_without_certificate),
        cmocka_unit_test(test_refuses_plaintext_client),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    rpc_shutdown();
    return failed;
}

/*
 * grpc-health-probe — asks a server's grpc.health.v1.Health/Check whether it
 * is SERVING. Exit 0 when serving, 1 when not (or unreachable), 2 on bad
 * arguments. Used by scripts/stack.sh and by the container health checks.
 *
 *   grpc-health-probe -addr 127.0.0.1:7000 [-service NAME] [-timeout MS]
 *                     [-tls-ca FILE -tls-cert FILE -tls-key FILE]
 *                     [-certs-dir DIR]
 *
 * Internal ports (game-svc, store-svc) take mutual TLS only: -certs-dir DIR
 * presents the probe identity DIR/probe.{crt,key} and trusts DIR/ca.crt
 * (the files make run keeps in var/certs). SCRABBLE_PROBE_CERTS_DIR is its
 * environment twin (container health checks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "rpc/rpc.h"

static void usage(void)
{
    fprintf(stderr, "usage: grpc-health-probe -addr HOST:PORT [-service NAME] [-timeout MS] "
                    "[-tls-ca FILE] [-tls-cert FILE] [-tls-key FILE] [-tls-server-name NAME] "
                    "[-certs-dir DIR]\n");
}

int main(int argc, char **argv)
{
    const char *addr = NULL, *service = "";
    long timeout = 2000;
    rpc_tls_config tls = {0};
    const char *certs_dir = getenv("SCRABBLE_PROBE_CERTS_DIR");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++; /* accept --flag as well as -flag */
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        if (strcmp(a, "-addr") == 0)
            addr = argv[++i];
        else if (strcmp(a, "-service") == 0)
            service = argv[++i];
        else if (strcmp(a, "-timeout") == 0)
            timeout = strtol(argv[++i], NULL, 10);
        else if (strcmp(a, "-tls-ca") == 0)
            snprintf(tls.ca_file, sizeof(tls.ca_file), "%s", argv[++i]);
        else if (strcmp(a, "-tls-cert") == 0)
            snprintf(tls.cert_file, sizeof(tls.cert_file), "%s", argv[++i]);
        else if (strcmp(a, "-tls-key") == 0)
            snprintf(tls.key_file, sizeof(tls.key_file), "%s", argv[++i]);
        else if (strcmp(a, "-certs-dir") == 0)
            certs_dir = argv[++i];
        else if (strcmp(a, "-tls-server-name") == 0)
            snprintf(tls.server_name, sizeof(tls.server_name), "%s", argv[++i]);
        else {
            usage();
            return 2;
        }
    }
    if (addr == NULL || timeout <= 0) {
        usage();
        return 2;
    }
    if (certs_dir && certs_dir[0]) {
        /* Explicit -tls-* files win over the directory's. */
        if (!tls.ca_file[0])
            snprintf(tls.ca_file, sizeof(tls.ca_file), "%s/ca.crt", certs_dir);
        if (!tls.cert_file[0])
            snprintf(tls.cert_file, sizeof(tls.cert_file), "%s/probe.crt", certs_dir);
        if (!tls.key_file[0])
            snprintf(tls.key_file, sizeof(tls.key_file), "%s/probe.key", certs_dir);
    }
    const char *files[] = {tls.ca_file, tls.cert_file, tls.key_file};
    for (int i = 0; i < 3; i++) {
        FILE *f = files[i][0] ? fopen(files[i], "r") : NULL;
        if (files[i][0] && f == NULL) {
            fprintf(stderr, "grpc-health-probe: cannot read %s\n", files[i]);
            return 2;
        }
        if (f)
            fclose(f);
    }
    rpc_init();
    rpc_channel_opts copts = {.tls = &tls};
    rpc_channel *ch = rpc_channel_create(addr, &copts);
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    req.service = (char *)service;
    rpc_client_opts opts = {.timeout_ms = timeout};
    ProtobufCMessage *reply = NULL;
    rpc_status st;
    int rc = 1;
    if (rpc_client_unary_sync(ch, "/grpc.health.v1.Health/Check", &req.base,
                              &grpc__health__v1__health_check_response__descriptor, &opts, NULL,
                              &reply, &st) != GRPC_STATUS_OK) {
        fprintf(stderr, "%s: %s %s%s%s\n", addr, rpc_status_code_name(st.code), st.message,
                st.reason[0] ? " reason=" : "", st.reason);
    } else {
        Grpc__Health__V1__HealthCheckResponse *r = (void *)reply;
        if (r->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING) {
            printf("%s: SERVING\n", addr);
            rc = 0;
        } else {
            printf("%s: NOT_SERVING\n", addr);
        }
        protobuf_c_message_free_unpacked(reply, NULL);
    }
    rpc_channel_destroy(ch);
    rpc_shutdown();
    return rc;
}

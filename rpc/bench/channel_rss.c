/*
 * channel-rss — the memory a process pays per downstream channel, the way
 * the gateway holds them (rpc_channel_create, one TCP connection each,
 * connected at once and kept): opens N channels to TARGET, makes one
 * health check on each (so each is connected, handshake done, and has
 * carried a call), and prints the RSS growth per channel. With a
 * certificates directory the channels use mutual TLS as identity IDENTITY
 * (DIR/ca.crt, DIR/IDENTITY.crt/.key, server name SERVER), otherwise
 * plaintext; scripts/bench/mtls.sh runs both against the same kind of
 * server to show what TLS adds per channel.
 *
 *   channel-rss TARGET N [DIR IDENTITY SERVER]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc/health/v1/health.pb-c.h"
#include "procstat.h"
#include "rpc/rpc.h"

/* One Health/Check on the channel: true when it answered. */
static bool check(rpc_channel *ch)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    rpc_client_opts o = {.timeout_ms = 5000};
    ProtobufCMessage *reply = NULL;
    rpc_status st;
    if (rpc_client_unary_sync(ch, "/grpc.health.v1.Health/Check", &req.base,
                              &grpc__health__v1__health_check_response__descriptor, &o, NULL,
                              &reply, &st) != GRPC_STATUS_OK) {
        fprintf(stderr, "channel-rss: %s %s\n", rpc_status_code_name(st.code), st.message);
        return false;
    }
    protobuf_c_message_free_unpacked(reply, NULL);
    return true;
}

/* Our resident set in KiB (loadtest's /proc reader). */
static long rss_kb(void)
{
    uint64_t ticks;
    double rss;
    return lt_proc_read(getpid(), false, &ticks, &rss) == 0 ? (long)(rss / 1024) : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 6) {
        fprintf(stderr, "usage: channel-rss TARGET N [CERTS_DIR IDENTITY SERVER_NAME]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1 || n > 10000) {
        fprintf(stderr, "channel-rss: N must be 1..10000\n");
        return 2;
    }
    rpc_tls_config tls;
    memset(&tls, 0, sizeof tls);
    if (argc == 6) {
        snprintf(tls.ca_file, sizeof tls.ca_file, "%s/ca.crt", argv[3]);
        snprintf(tls.cert_file, sizeof tls.cert_file, "%s/%s.crt", argv[3], argv[4]);
        snprintf(tls.key_file, sizeof tls.key_file, "%s/%s.key", argv[3], argv[4]);
        snprintf(tls.server_name, sizeof tls.server_name, "%s", argv[5]);
    }
    rpc_init();
    rpc_channel **ch = calloc((size_t)n, sizeof *ch);
    if (ch == NULL)
        return 1;
    /* Warm the core (its threads, the TLS library) with one channel first,
     * so the per-channel figure is the marginal cost. */
    rpc_channel_opts o = {.own_connection = true, .tls = argc == 6 ? &tls : NULL};
    rpc_channel *warm = rpc_channel_create(argv[1], &o);
    if (!check(warm))
        return 1;
    long before = rss_kb();
    int ready = 0;
    for (int i = 0; i < n; i++) {
        ch[i] = rpc_channel_create(argv[1], &o);
        if (ch[i] == NULL)
            return 1;
        ready += check(ch[i]) ? 1 : 0;
    }
    long after = rss_kb();
    printf("channels=%d ready=%d tls=%s rss_before_kb=%ld rss_after_kb=%ld kb_per_channel=%.1f\n",
           n, ready, argc == 6 ? "mtls" : "plaintext", before, after,
           (double)(after - before) / (double)n);
    for (int i = 0; i < n; i++)
        rpc_channel_destroy(ch[i]);
    rpc_channel_destroy(warm);
    free(ch);
    rpc_shutdown();
    return ready == n ? 0 : 1;
}

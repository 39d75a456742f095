/*
 * server_config.c — the settings every server shares (struct
 * rpc_server_config in rpc/rpc.h): their defaults and their option table.
 *
 * The table's options have def NULL on purpose: each service pre-fills the
 * struct with rpc_server_config_defaults (its own ports) and the table then
 * only overrides from the environment and the flags.
 */
#include "rpc/cfg.h"
#include "rpc/rpc.h"

#include <stdio.h>
#include <string.h>

#define RPC__MIB (1024 * 1024)

void rpc_server_config_defaults(rpc_server_config *cfg, int grpc_port, int metrics_port)
{
    memset(cfg, 0, sizeof(*cfg)); /* tls: all empty, so TLS is off */
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1:%d", grpc_port);
    snprintf(cfg->metrics_listen, sizeof(cfg->metrics_listen), "127.0.0.1:%d", metrics_port);
    /* One worker: the core's poller (epoll1) hands the polling role to
     * another waiting thread every time the polling thread leaves with work,
     * and wakes the thread that owns a call's queue when another thread
     * polled its bytes. With two workers that was 3 of the gateway's 4.2
     * voluntary switches per call and half of its syscalls under
     * human-paced players (issue 18, scripts/bench/stack_wakeups.sh); every
     * handler is non-blocking (Postgres readers, Redis drafts and the
     * deadline poller run on their own threads), so one worker is never
     * stuck behind a slow call. Raise it where one core is not enough, and
     * on a public port (the gateway keeps two, see gateway/src/config.c). */
    cfg->workers = 1;
    cfg->max_message_bytes = 4 * RPC__MIB;
    cfg->max_concurrent_streams = 1000;
    cfg->keepalive_ms = 2 * 60 * 60 * 1000; /* gRPC's own default: 2 hours */
    cfg->shutdown_grace_ms = 5000;
    cfg->stream_queue_limit = 256;
    /* As many live calls per connection as HTTP/2 lets it have open at once:
     * legitimate traffic (the gateway multiplexes every forwarded call over
     * one connection per backend) never meets the bound; a client that
     * resets streams, which frees them in HTTP/2 but not yet here, does. */
    cfg->max_calls_per_connection = 1000;
    cfg->max_calls = 20000;
    cfg->max_resets = 100;
    cfg->abuse_penalty_ms = 10000;
    cfg->metrics_timeout_ms = 5000;
    cfg->metrics_conns_per_address = 8;
    cfg->metrics_conns = 64;
    cfg->trace = true;
    cfg->trace_sample = 100;
    snprintf(cfg->certs_dir, sizeof(cfg->certs_dir), "var/certs");
}

const cfg_option rpc_server_cfg_options[] = {
    CFG_STR_OPT(rpc_server_config, listen, "listen", NULL,
                "gRPC listen address host:port (port 0 picks a free one)"),
    CFG_STR_OPT(rpc_server_config, metrics_listen, "metrics-listen", NULL,
                "Prometheus /metrics listen address host:port (empty: no metrics endpoint)"),
    CFG_INT_OPT(rpc_server_config, workers, "workers", 1, 64, NULL,
                "worker threads, each with its own completion queue (more than one costs "
                "thread handoffs per call; raise it when one core is not enough)"),
    CFG_INT_OPT(rpc_server_config, max_message_bytes, "max-message-bytes", 1024, 64 * RPC__MIB,
                NULL, "largest accepted request message in bytes"),
    CFG_INT_OPT(rpc_server_config, max_concurrent_streams, "max-concurrent-streams", 1, 100000,
                NULL, "HTTP/2 streams allowed per client connection"),
    CFG_DUR_OPT(rpc_server_config, keepalive_ms, "keepalive", 1000, 86400000, NULL,
                "interval of the server's keepalive pings"),
    CFG_DUR_OPT(rpc_server_config, shutdown_grace_ms, "shutdown-grace", 0, 600000, NULL,
                "how long in-flight calls may run on after SIGTERM"),
    CFG_INT_OPT(rpc_server_config, stream_queue_limit, "stream-queue-limit", 1, 100000, NULL,
                "messages a server stream may queue before sends fail with RPC_EFULL"),
    CFG_STR_OPT(rpc_server_config, tls.cert_file, "tls-cert", NULL,
                "PEM certificate of this server (empty: plaintext)"),
    CFG_STR_OPT(rpc_server_config, tls.key_file, "tls-key", NULL, "PEM private key of tls-cert"),
    CFG_STR_OPT(rpc_server_config, tls.ca_file, "tls-ca", NULL,
                "PEM CA; when set, clients must present a certificate it signed (mutual TLS)"),
    CFG_STR_OPT(rpc_server_config, tls.server_name, "tls-server-name", NULL,
                "name to verify in a peer's certificate when it differs from the host"),
    CFG_STR_OPT(
        rpc_server_config, peer_tls.cert_file, "peer-tls-cert", NULL,
        "PEM certificate this process presents to the services it calls (empty: plaintext)"),
    CFG_STR_OPT(rpc_server_config, peer_tls.key_file, "peer-tls-key", NULL,
                "PEM private key of peer-tls-cert"),
    CFG_STR_OPT(rpc_server_config, peer_tls.ca_file, "peer-tls-ca", NULL,
                "PEM CA that signed the certificates of the services this process calls"),
    CFG_STR_OPT(
        rpc_server_config, peer_tls.server_name, "peer-tls-server-name", NULL,
        "name to verify in the called services' certificates when it differs from the host"),
    CFG_INT_OPT(rpc_server_config, max_calls_per_connection, "max-calls-per-connection", 1, 1000000,
                NULL,
                "live calls one client connection may hold; more: RESOURCE_EXHAUSTED "
                "conn_calls_limit"),
    CFG_INT_OPT(rpc_server_config, max_calls, "max-calls", 1, 10000000, NULL,
                "live calls the whole process may hold; more: RESOURCE_EXHAUSTED "
                "server_calls_limit"),
    CFG_INT_OPT(rpc_server_config, max_resets, "max-resets", 0, 1000000, NULL,
                "calls a connection may cancel before their deadline, beyond those it completes "
                "(both counts halve every 10 s), "
                "before it is shut down; 0: never"),
    CFG_DUR_OPT(rpc_server_config, abuse_penalty_ms, "abuse-penalty", 0, 3600000, NULL,
                "after a connection is shut down for abuse, calls from its address are refused "
                "this long; 0: off"),
    CFG_DUR_OPT(rpc_server_config, metrics_timeout_ms, "metrics-timeout", 1000, 600000, NULL,
                "metrics endpoint: a connection idle this long is closed"),
    CFG_INT_OPT(rpc_server_config, metrics_conns_per_address, "metrics-conns-per-address", 1, 1000,
                NULL, "metrics endpoint: connections one client address may hold"),
    CFG_INT_OPT(rpc_server_config, metrics_conns, "metrics-conns", 1, 1000, NULL,
                "metrics endpoint: connections in all"),
    CFG_STR_OPT(rpc_server_config, certs_dir, "certs-dir", NULL,
                "directory of this service's identity: ca.crt, <service>.crt, <service>.key "
                "(mutual TLS between services; fills the empty tls/peer-tls paths)"),
    CFG_BOOL_OPT(rpc_server_config, trace, "trace", NULL,
                 "W3C trace context: trace ids in logs and in the scrabble-trace-id trailer of "
                 "errors, traceparent passed on to the services called"),
    CFG_INT_OPT(rpc_server_config, trace_sample, "trace-sample", 0, 1000000, NULL,
                "one new trace in this many is sampled: its calls log a span line at every hop "
                "(0: none, 1: all; failed calls log theirs anyway, within 100 a second)"),
    CFG_BOOL_OPT(rpc_server_config, insecure_internal, "insecure-internal", NULL,
                 "BENCHMARKS ONLY: plaintext between services and no identity checks "
                 "(logged at start, gauge rpc_insecure_internal)"),
};

const size_t rpc_server_cfg_options_count =
    sizeof(rpc_server_cfg_options) / sizeof(rpc_server_cfg_options[0]);

/*
 * rpc-ping-server — a server with only the runtime's built-in services; its
 * grpc.health.v1.Health/Check is the "ping" the runtime is benchmarked with
 * against bare-echo (docs/BENCHMARKS.md).
 *
 *   rpc-ping-server [--listen=127.0.0.1:PORT] [--workers=N] [--metrics-listen=...]
 */
#include <stdio.h>

#include "rpc/cfg.h"
#include "rpc/log.h"
#include "rpc/rpc.h"

int main(int argc, char **argv)
{
    rpc_server_config cfg;
    rpc_server_config_defaults(&cfg, 7900, 0);
    cfg.metrics_listen[0] = '\0';
    cfg_table tables[] = {{rpc_server_cfg_options, rpc_server_cfg_options_count, &cfg}};
    char err[256];
    int rc = cfg_load(tables, 1, "SCRABBLE_PING_", "rpc-ping-server", argc, argv, 1, NULL, NULL,
                      err, sizeof(err));
    if (rc == CFG_HELP)
        return 0;
    if (rc != CFG_OK) {
        fprintf(stderr, "rpc-ping-server: %s\n", err);
        return 2;
    }
    rpc_init();
    log_set_service("ping");
    rpc_server *s = rpc_server_create(&cfg, "ping", err, sizeof(err));
    if (s == NULL || rpc_server_start(s, err, sizeof(err)) == 0) {
        fprintf(stderr, "rpc-ping-server: %s\n", err);
        return 1;
    }
    rpc_server_wait(s);
    rpc_server_destroy(s);
    rpc_shutdown();
    return 0;
}

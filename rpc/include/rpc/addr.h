/*
 * rpc/addr.h — network address strings: the one "host:port" splitter of
 * the tree, and the host of a peer string as the gRPC core writes it.
 * Pure functions (rpc/src/addr.c), reached directly by unit tests.
 */
#ifndef RPC_ADDR_H
#define RPC_ADDR_H

#include <stddef.h>

/* Splits "host:port" or "[v6 address]:port" (the brackets are dropped)
 * into host (NUL-terminated, hostlen bytes at most) and *port. The port is
 * decimal digits, 0..65535; the split is at the last ':' outside brackets.
 * With default_port >= 0 the ":port" part may be left out ("redis-host"
 * means default_port); with a negative default_port it is required.
 * Returns 0, or -1 (host and *port then unspecified) when the host is
 * empty or does not fit, the port is missing or not a number in range, or
 * a bracket is not closed. Callers that cannot use port 0 check it. */
int rpc_addr_split(const char *addr, int default_port, char *host, size_t hostlen, int *port);

/* The host of a core peer string ("ipv4:1.2.3.4:5", "ipv6:[::1]:5",
 * "ipv6:%5B::1%5D:5") into out (NUL-terminated); returns its length, 0
 * (and "") when it does not fit or cannot be read. */
size_t rpc_peer_host(const char *peer, char *out, size_t outlen);

#endif

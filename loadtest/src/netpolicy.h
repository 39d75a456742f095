/*
 * netpolicy.h — where the load driver may send traffic.
 *
 * A load test is an attack when it points at someone else's server, so the
 * driver refuses any destination that is not on this machine: loopback
 * (127.0.0.0/8, ::1, localhost, a Unix socket directory for Postgres). One
 * explicit opt-in, --allow-private, widens that to private networks
 * (10/8, 172.16/12, 192.168/16, fc00::/7): what a container network such as
 * the compose stack's uses, where the gateway or Postgres is a service name.
 * A name is resolved and every address it resolves to must pass; a public
 * address is never allowed.
 */
#ifndef LT_NETPOLICY_H
#define LT_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

/* Whether HOST (a name, an IPv4/IPv6 literal, or for Postgres a socket
 * directory starting with '/') may be a destination. Without allow_private
 * only loopback literals and "localhost" pass, with no DNS lookup; with it a
 * name is resolved (getaddrinfo) and each address must be loopback or
 * private. On false, err says which host and why. */
bool lt_net_host_allowed(const char *host, bool allow_private, char *err, size_t errlen);

/* The same for a gRPC target "host:port", "[v6]:port", "ipv4:host:port",
 * "ipv6:[v6]:port" or "dns:///host:port". A target without a port is
 * refused. */
bool lt_net_target_allowed(const char *target, bool allow_private, char *err, size_t errlen);

#endif

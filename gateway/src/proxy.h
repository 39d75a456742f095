/*
 * proxy.h — which peers may tell the gateway a client's address.
 *
 * Behind the compose balancer every call's peer is the balancer, so the
 * per-address Login/Register throttles would put every client in one
 * bucket. The balancer sets `x-real-ip` to the address it accepted the
 * connection from; the gateway believes that header only from peers inside
 * --trusted-proxies (default: nobody). Pure functions, no I/O.
 */
#ifndef GW_PROXY_H
#define GW_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#define GW_PROXY_MAX 16      /* entries of --trusted-proxies */
#define GW_PROXY_ADDR_MAX 46 /* INET6_ADDRSTRLEN: the longest literal accepted */

typedef struct gw_proxy_cidr {
    int family;             /* 4 or 6 */
    unsigned char addr[16]; /* network bytes (4 used for IPv4), host bits zeroed */
    int prefix;             /* 0..32 or 0..128 */
} gw_proxy_cidr;

typedef struct gw_proxy_list {
    int n;
    gw_proxy_cidr e[GW_PROXY_MAX];
} gw_proxy_list;

/* Parses a comma list of CIDRs ("10.0.0.0/8,::1"; a bare address is /32 or
 * /128; spaces around entries are allowed; "" is the empty list). An
 * IPv4-mapped IPv6 entry (::ffff:a.b.c.d/96+n) is stored as IPv4 /n so it
 * matches the peers it names. Returns 0, or -1 with a message naming the
 * bad entry in err (then *out is the empty list). */
int gw_proxy_parse(const char *spec, gw_proxy_list *out, char *err, size_t errlen);

/* Whether the address literal `addr` (as rpc_call_peer_address gives it)
 * is inside one of l's CIDRs; an IPv4-mapped IPv6 peer is matched as its
 * IPv4 address. False for anything that is not an address literal. */
bool gw_proxy_trusted(const gw_proxy_list *l, const char *addr);

/* Whether the len bytes at s are exactly one IPv4 or IPv6 literal (no
 * port, no list, no spaces, no zone); if so, copies it NUL-terminated into
 * out. */
bool gw_proxy_forwarded_ok(const char *s, size_t len, char out[GW_PROXY_ADDR_MAX]);

#endif

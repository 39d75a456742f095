/*
 * addr.c — address strings (see rpc/addr.h).
 */
#include "rpc/addr.h"

#include <string.h>

int rpc_addr_split(const char *addr, int default_port, char *host, size_t hostlen, int *port)
{
    const char *h = addr, *colon;
    size_t hl;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (close == NULL || (close[1] != '\0' && close[1] != ':'))
            return -1;
        h = addr + 1;
        hl = (size_t)(close - h);
        colon = close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strrchr(addr, ':');
        hl = colon ? (size_t)(colon - addr) : strlen(addr);
    }
    if (hl == 0 || hl >= hostlen)
        return -1;
    if (colon == NULL) {
        if (default_port < 0)
            return -1;
        *port = default_port;
    } else {
        const char *p = colon + 1;
        long v = 0;
        if (*p == '\0')
            return -1;
        for (; *p; p++) {
            if (*p < '0' || *p > '9')
                return -1;
            v = v * 10 + (*p - '0');
            if (v > 65535)
                return -1;
        }
        *port = (int)v;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    return 0;
}

size_t rpc_peer_host(const char *peer, char *out, size_t outlen)
{
    /* The core names the peer "ipv4:1.2.3.4:port" or "ipv6:[::1]:port",
     * the brackets percent-encoded ("ipv6:%5B::1%5D:port") as in a URI. */
    const char *p = peer ? peer : "";
    if (strncmp(p, "ipv4:", 5) == 0 || strncmp(p, "ipv6:", 5) == 0)
        p += 5;
    size_t n = strlen(p);
    if (p[0] == '[' || strncmp(p, "%5B", 3) == 0) {
        p += p[0] == '[' ? 1 : 3;
        const char *close = strchr(p, ']');
        if (!close)
            close = strstr(p, "%5D");
        n = close ? (size_t)(close - p) : 0;
    } else {
        const char *port = strrchr(p, ':');
        if (port)
            n = (size_t)(port - p);
    }
    if (outlen == 0)
        return 0;
    if (n >= outlen)
        n = 0; /* not an address we know how to read */
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

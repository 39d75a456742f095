/*
 * netpolicy.c — see netpolicy.h.
 */
#include "netpolicy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* 1 loopback, 2 private, 0 anything else. */
static int lt_net__class4(const struct in_addr *a)
{
    uint32_t v = ntohl(a->s_addr);
    if ((v >> 24) == 127)
        return 1;
    if ((v >> 24) == 10 || (v >> 20) == (172u << 4 | 1) || (v >> 16) == (192u << 8 | 168))
        return 2;
    return 0;
}

static int lt_net__class6(const struct in6_addr *a)
{
    if (IN6_IS_ADDR_LOOPBACK(a))
        return 1;
    if (IN6_IS_ADDR_V4MAPPED(a)) {
        struct in_addr v4;
        memcpy(&v4, a->s6_addr + 12, 4);
        return lt_net__class4(&v4);
    }
    if ((a->s6_addr[0] & 0xfe) == 0xfc) /* fc00::/7, unique local */
        return 2;
    return 0;
}

/* The class of a literal address, or -1 when HOST is not a literal. */
static int lt_net__literal(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return lt_net__class4(&a4);
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return lt_net__class6(&a6);
    return -1;
}

bool lt_net_host_allowed(const char *host, bool allow_private, char *err, size_t errlen)
{
    const char *why = allow_private ? "loopback or private" : "loopback";
    const char *hint = allow_private ? "" : " (--allow-private admits private networks)";
    if (host[0] == '\0') {
        snprintf(err, errlen, "empty host");
        return false;
    }
    if (host[0] == '/' || strcmp(host, "localhost") == 0)
        return true;
    int c = lt_net__literal(host);
    if (c >= 0) {
        if (c == 1 || (c == 2 && allow_private))
            return true;
        snprintf(err, errlen, "host '%s' is not %s%s", host, why, hint);
        return false;
    }
    if (!allow_private) {
        snprintf(err, errlen, "host '%s' is not %s%s", host, why, hint);
        return false;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "host '%s' does not resolve: %s", host, gai_strerror(rc));
        return false;
    }
    bool ok = true;
    for (struct addrinfo *ai = res; ai && ok; ai = ai->ai_next) {
        int k = 0;
        char text[INET6_ADDRSTRLEN] = "?";
        if (ai->ai_family == AF_INET) {
            const struct in_addr *a = &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
            k = lt_net__class4(a);
            inet_ntop(AF_INET, a, text, sizeof(text));
        } else if (ai->ai_family == AF_INET6) {
            const struct in6_addr *a = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
            k = lt_net__class6(a);
            inet_ntop(AF_INET6, a, text, sizeof(text));
        }
        if (k == 0) {
            snprintf(err, errlen, "host '%s' resolves to %s, which is not %s", host, text, why);
            ok = false;
        }
    }
    freeaddrinfo(res);
    return ok;
}

bool lt_net_target_allowed(const char *target, bool allow_private, char *err, size_t errlen)
{
    const char *t = target;
    if (strncmp(t, "dns:///", 7) == 0)
        t += 7;
    else if (strncmp(t, "ipv4:", 5) == 0)
        t += 5;
    else if (strncmp(t, "ipv6:", 5) == 0)
        t += 5;
    char host[256];
    const char *port;
    if (t[0] == '[') {
        const char *end = strchr(t, ']');
        if (end == NULL || end[1] != ':' || (size_t)(end - t - 1) >= sizeof(host))
            goto bad;
        memcpy(host, t + 1, (size_t)(end - t - 1));
        host[end - t - 1] = '\0';
        port = end + 2;
    } else {
        const char *colon = strrchr(t, ':');
        if (colon == NULL || colon == t || (size_t)(colon - t) >= sizeof(host))
            goto bad;
        if (memchr(t, ':', (size_t)(colon - t)) != NULL)
            goto bad; /* a bare IPv6 literal needs brackets */
        memcpy(host, t, (size_t)(colon - t));
        host[colon - t] = '\0';
        port = colon + 1;
    }
    if (port[0] == '\0' || strspn(port, "0123456789") != strlen(port))
        goto bad;
    char why[224];
    if (!lt_net_host_allowed(host, allow_private, why, sizeof(why))) {
        snprintf(err, errlen, "target '%s': %s", target, why);
        return false;
    }
    return true;
bad:
    snprintf(err, errlen, "target '%s' is not host:port", target);
    return false;
}

/*
 * proxy.c — trusted proxies and the client address they forward (see
 * proxy.h).
 */
#include "proxy.h"

#include "list.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses one address literal into family + bytes, folding an IPv4-mapped
 * IPv6 address to IPv4 (a dual-stack listener reports IPv4 clients that
 * way). *mapped says a fold happened. */
static bool gw_proxy__addr(const char *s, int *family, unsigned char b[16], bool *mapped)
{
    struct in6_addr a6;
    *mapped = false;
    if (inet_pton(AF_INET, s, b) == 1) {
        *family = 4;
        return true;
    }
    if (inet_pton(AF_INET6, s, &a6) != 1)
        return false;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
        memcpy(b, a6.s6_addr + 12, 4);
        *family = 4;
        *mapped = true;
        return true;
    }
    memcpy(b, a6.s6_addr, 16);
    *family = 6;
    return true;
}

static bool gw_proxy__in(const gw_proxy_cidr *c, const unsigned char *b)
{
    int full = c->prefix / 8, rest = c->prefix % 8;
    if (memcmp(c->addr, b, (size_t)full) != 0)
        return false;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (c->addr[full] & mask) == (b[full] & mask);
}

/* Parses one trimmed entry of length len. */
static bool gw_proxy__entry(const char *s, size_t len, gw_proxy_cidr *c)
{
    char buf[GW_PROXY_ADDR_MAX + 4];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *slash = strchr(buf, '/');
    long prefix = -1;
    if (slash) {
        *slash = '\0';
        const char *p = slash + 1;
        /* digits only: strtol would take "+8", " 8" or "08x" */
        if (*p == '\0' || strlen(p) > 3)
            return false;
        for (const char *q = p; *q; q++)
            if (*q < '0' || *q > '9')
                return false;
        prefix = strtol(p, NULL, 10);
    }
    bool mapped;
    memset(c, 0, sizeof *c);
    if (!gw_proxy__addr(buf, &c->family, c->addr, &mapped))
        return false;
    int bits = c->family == 4 ? 32 : 128;
    if (mapped) {
        /* ::ffff:a.b.c.d/n covers IPv4 /(n-96) */
        if (prefix >= 0 && prefix < 96)
            return false;
        if (prefix >= 0)
            prefix -= 96;
    }
    if (prefix > bits)
        return false;
    c->prefix = prefix < 0 ? bits : (int)prefix;
    /* zero the host bits so matching compares networks only */
    int full = c->prefix / 8, rest = c->prefix % 8;
    if (rest) {
        c->addr[full] &= (unsigned char)(0xff << (8 - rest));
        full++;
    }
    memset(c->addr + full, 0, (size_t)(16 - full));
    return true;
}

int gw_proxy_parse(const char *spec, gw_proxy_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = spec;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return 0;
    const char *cursor = p;
    while (cursor) {
        size_t len;
        const char *item = gw_list_item(&cursor, &len);
        if (out->n >= GW_PROXY_MAX) {
            snprintf(err, errlen, "--trusted-proxies: more than %d entries", GW_PROXY_MAX);
            memset(out, 0, sizeof *out);
            return -1;
        }
        if (!gw_proxy__entry(item, len, &out->e[out->n])) {
            snprintf(err, errlen,
                     "--trusted-proxies: bad entry \"%.*s\" (want an IPv4 or IPv6 address or "
                     "CIDR such as 10.0.0.0/8 or fd00::/8)",
                     (int)(len > 64 ? 64 : len), item);
            memset(out, 0, sizeof *out);
            return -1;
        }
        out->n++;
    }
    return 0;
}

bool gw_proxy_trusted(const gw_proxy_list *l, const char *addr)
{
    int family;
    unsigned char b[16];
    bool mapped;
    if (l->n == 0 || !addr || !gw_proxy__addr(addr, &family, b, &mapped))
        return false;
    for (int i = 0; i < l->n; i++)
        if (l->e[i].family == family && gw_proxy__in(&l->e[i], b))
            return true;
    return false;
}

bool gw_proxy_forwarded_ok(const char *s, size_t len, char out[GW_PROXY_ADDR_MAX])
{
    if (!s || len == 0 || len >= GW_PROXY_ADDR_MAX || memchr(s, '\0', len))
        return false;
    memcpy(out, s, len);
    out[len] = '\0';
    unsigned char b[16];
    /* inet_pton takes exactly one literal: no port, list, space or zone */
    if (inet_pton(AF_INET, out, b) == 1 || inet_pton(AF_INET6, out, b) == 1)
        return true;
    out[0] = '\0';
    return false;
}

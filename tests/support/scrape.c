/*
 * scrape.c — see scrape.h.
 */
#include "scrape.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rpc/addr.h"

double scrape_metric_sum(const char *addr, const char *name)
{
    char host[128], port[8];
    int portnum;
    if (rpc_addr_split(addr, -1, host, sizeof(host), &portnum) != 0)
        return -1;
    snprintf(port, sizeof(port), "%d", portnum);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return -1;
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    struct timeval tv = {.tv_sec = 5};
    bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
              connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    freeaddrinfo(ai);
    static const char rq[] = "GET /metrics HTTP/1.0\r\nHost: metrics\r\n\r\n";
    ok = ok && write(fd, rq, sizeof(rq) - 1) == (ssize_t)(sizeof(rq) - 1);
    size_t cap = 1 << 20, len = 0;
    char *buf = ok ? malloc(cap) : NULL;
    ssize_t n;
    while (buf && len < cap - 1 && (n = read(fd, buf + len, cap - len - 1)) > 0)
        len += (size_t)n;
    if (fd >= 0)
        close(fd);
    if (buf == NULL)
        return -1;
    buf[len] = '\0';
    /* Sample lines: "name value" or "name{labels} value", each after a
     * newline (the body follows the HTTP header's blank line). */
    size_t nlen = strlen(name);
    double sum = 0;
    bool found = false;
    for (const char *p = buf; (p = strstr(p, name)) != NULL; p += nlen) {
        if (p == buf || p[-1] != '\n' || (p[nlen] != ' ' && p[nlen] != '{'))
            continue;
        const char *v = p + nlen;
        if (*v == '{' && (v = strchr(v, '}')) != NULL)
            v++;
        if (v == NULL || *v != ' ')
            continue;
        sum += strtod(v + 1, NULL);
        found = true;
    }
    free(buf);
    return found ? sum : -1;
}

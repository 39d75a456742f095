/*
 * args.c — see args.h.
 */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_split_line(char *line, char **argv, int max, int *argc, char *err, size_t errlen)
{
    char *r = line, *w = line;
    *argc = 0;
    for (;;) {
        while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r')
            r++;
        if (*r == '\0')
            return 0;
        if (*argc >= max) {
            snprintf(err, errlen, "too many words (at most %d)", max);
            return -1;
        }
        argv[(*argc)++] = w;
        char quote = 0;
        for (;;) {
            char c = *r;
            if (c == '\0') {
                if (quote) {
                    snprintf(err, errlen, "unbalanced %c quote", quote);
                    return -1;
                }
                break;
            }
            r++;
            if (quote) {
                if (c == quote) {
                    quote = 0;
                    continue;
                }
                if (c == '\\' && quote == '"' && (*r == '"' || *r == '\\')) {
                    *w++ = *r++;
                    continue;
                }
                *w++ = c;
                continue;
            }
            if (c == '"' || c == '\'') {
                quote = c;
                continue;
            }
            if (c == '\\' && *r) {
                *w++ = *r++;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                break;
            *w++ = c;
        }
        /* The writer never passes the reader: when the word ended at a
         * separator, w is before it; at the end of the line, w is at most on
         * the final NUL. Either way the terminator fits. */
        *w++ = '\0';
    }
}

int cli_parse_id(const char *s, int64_t *id)
{
    if (s == NULL)
        return -1;
    if (*s == '#')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v <= 0)
        return -1;
    *id = v;
    return 0;
}

int cli_parse_tiles(const char *s, char *out, size_t outlen, char *err, size_t errlen)
{
    size_t n = 0;
    for (; *s; s++) {
        if (*s == ' ')
            continue;
        if (*s != '?' && !isalpha((unsigned char)*s)) {
            snprintf(err, errlen, "'%c' is not a tile: write letters, and '?' for a blank", *s);
            return -1;
        }
        if (n + 1 >= outlen) {
            snprintf(err, errlen, "too many tiles (a rack holds 7)");
            return -1;
        }
        out[n++] = (char)toupper((unsigned char)*s);
    }
    out[n] = '\0';
    if (n == 0) {
        snprintf(err, errlen, "no tiles to exchange");
        return -1;
    }
    return 0;
}

/*
 * list.c — comma-list items (see list.h).
 */
#include "list.h"

#include <string.h>

const char *gw_list_item(const char **cursor, size_t *len)
{
    const char *p = *cursor;
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    *cursor = end ? end + 1 : NULL;
    *len = n;
    return p;
}

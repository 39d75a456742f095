/*
 * event_id.c — parsing a client's event id (see event_id.h).
 */
#include "event_id.h"

#include <string.h>

int gw_event_id_parse(const char *s, int64_t *out)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0) {
        *out = -1;
        return 0;
    }
    if (n > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Small helpers shared by the solver: error formatting and the file checksum. */
#include "internal.h"

void solver__errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* 64-bit FNV-1a over 4-byte words followed by a final avalanche.  Any single
 * bit flip changes the result; truncation is caught by the size check. */
uint64_t solver__checksum(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t w = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

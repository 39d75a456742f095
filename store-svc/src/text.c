/*
 * text.c — the rules for user-supplied text (handles, chat, profile
 * fields): valid UTF-8, bounded length in code points, and for handles no
 * control or whitespace characters. Pure functions, unit-tested directly.
 */
#include <string.h>

#include "store.h"

long store_utf8_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    long count = 0;
    while (p < end) {
        unsigned c = *p;
        size_t need;
        unsigned cp;
        if (c < 0x80) {
            p++;
            count++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            cp = c & 0x07;
        } else {
            return -1; /* continuation byte, overlong lead (C0, C1) or > F4 */
        }
        if ((size_t)(end - p) <= need)
            return -1;
        for (size_t i = 1; i <= need; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return -1;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return -1;
        p += need + 1;
        count++;
    }
    return count;
}

const char *store_check_text(const char *s, size_t min_chars, size_t max_chars)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0)
        return min_chars > 0 ? "empty" : NULL;
    long len = store_utf8_len(s, n);
    if (len < 0)
        return "bad_utf8";
    if ((size_t)len < min_chars)
        return "empty";
    if ((size_t)len > max_chars)
        return "too_long";
    return NULL;
}

/* Request ids are keys, never shown: a small ASCII alphabet (UUIDs,
 * base64url, counters) keeps them unambiguous byte-for-byte, and the bound
 * keeps the request_ids table's rows small. */
const char *store_check_request_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > STORE_REQUEST_ID_MAX)
        return "bad_request_id";
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return "bad_request_id";
    }
    return NULL;
}

/* Handles are looked up and shown everywhere: control characters and
 * spaces (ASCII and the common Unicode ones) would make them ambiguous. */
const char *store_check_handle(const char *s)
{
    const char *why = store_check_text(s, 1, 32);
    if (why)
        return why;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p == 0x7F)
            return "bad_handle";
        /* U+0080..U+009F (C1 controls) are C2 80..C2 9F; U+00A0 is C2 A0. */
        if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0xA0)
            return "bad_handle";
        /* U+2028/U+2029 line separators, U+200B..U+200F zero-width/marks. */
        if (p[0] == 0xE2 && p[1] == 0x80 &&
            ((p[2] >= 0x8B && p[2] <= 0x8F) || p[2] == 0xA8 || p[2] == 0xA9))
            return "bad_handle";
    }
    return NULL;
}

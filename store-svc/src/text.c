/*
 * text.c — the rules for user-supplied text (handles, chat, profile
 * fields): valid UTF-8, bounded length in code points, and for handles no
 * control or whitespace characters. Pure functions, unit-tested directly.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include "rpc/wire_check.h"
#include "store.h"

const char *store_check_text(const char *s, size_t min_chars, size_t max_chars)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0)
        return min_chars > 0 ? "empty" : NULL;
    long len = rpc_utf8_len(s, n);
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
    const char *why = store_check_text(s, 1, STORE_HANDLE_MAX_CHARS);
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

/* ---- Handle normalisation (libunistring) ---------------------------- */

/* Scripts that may share one handle (UTS #39 "highly restrictive"): the
 * ones a Japanese, Chinese or Korean name mixes with Latin letters. Any
 * other mix (Latin with Cyrillic or Greek, say) is the look-alike trick. */
static bool store__scripts_ok(const char *const *seen, int n)
{
    static const char *const allowed[][4] = {
        {"Latin", "Han", "Hiragana", "Katakana"},
        {"Latin", "Han", "Bopomofo", NULL},
        {"Latin", "Han", "Hangul", NULL},
    };
    if (n <= 1)
        return true;
    for (size_t set = 0; set < sizeof allowed / sizeof allowed[0]; set++) {
        int inside = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < 4 && allowed[set][k]; k++)
                if (strcmp(seen[i], allowed[set][k]) == 0) {
                    inside++;
                    break;
                }
        if (inside == n)
            return true;
    }
    return false;
}

/* Characters a handle must not hold once NFKC-normalised: controls, format
 * characters (Cf: bidi controls such as U+202E, U+2060, U+FEFF, soft
 * hyphen), surrogates, private use, unassigned code points (their folding
 * may change when they are assigned), separators of any kind, and the
 * default-ignorable ones that render as nothing (U+034F, U+115F, U+3164,
 * variation selectors). */
static bool store__handle_char_ok(ucs4_t c)
{
    return !uc_is_general_category(c, UC_CATEGORY_C) && !uc_is_general_category(c, UC_CATEGORY_Z) &&
           !uc_is_property_default_ignorable_code_point(c);
}

int store_handle_fold(const char *in, char *folded, size_t len)
{
    size_t n = in ? strlen(in) : 0;
    if (n == 0 || rpc_utf8_len(in, n) < 0)
        return -1;
    size_t flen = 0;
    uint8_t *f = u8_casefold((const uint8_t *)in, n, NULL, UNINORM_NFKC, NULL, &flen);
    if (!f)
        return -1;
    int rc = -1;
    if (flen > 0 && flen < len) {
        memcpy(folded, f, flen);
        folded[flen] = '\0';
        rc = 0;
    }
    free(f);
    return rc;
}

const char *store_handle_new(const char *in, char *norm, char *folded)
{
    const char *why = store_check_handle(in);
    if (why)
        return why;
    size_t nlen = 0;
    uint8_t *nf = u8_normalize(UNINORM_NFKC, (const uint8_t *)in, strlen(in), NULL, &nlen);
    if (!nf)
        return "bad_handle";
    const char *seen[8];
    int nseen = 0;
    long count = 0;
    why = NULL;
    for (const uint8_t *p = nf, *end = nf + nlen; p < end && !why;) {
        ucs4_t c;
        int k = u8_mbtouc(&c, p, (size_t)(end - p));
        p += k;
        count++;
        if (!store__handle_char_ok(c)) {
            why = "bad_handle";
            break;
        }
        const uc_script_t *sc = uc_script(c);
        if (!sc || strcmp(sc->name, "Common") == 0 || strcmp(sc->name, "Inherited") == 0)
            continue;
        int i = 0;
        while (i < nseen && strcmp(seen[i], sc->name) != 0)
            i++;
        if (i == nseen && nseen < (int)(sizeof seen / sizeof seen[0]))
            seen[nseen++] = sc->name;
    }
    /* NFKC may lengthen a handle (one ligature becomes several letters). */
    if (!why && (count > STORE_HANDLE_MAX_CHARS || nlen >= STORE_HANDLE_BYTES))
        why = "too_long";
    if (!why && !store__scripts_ok(seen, nseen))
        why = "bad_handle";
    if (!why) {
        memcpy(norm, nf, nlen);
        norm[nlen] = '\0';
        if (store_handle_fold(norm, folded, STORE_HANDLE_BYTES) != 0)
            why = "too_long";
    }
    free(nf);
    return why;
}

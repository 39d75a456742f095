/*
 * pagetoken.c — ListGames' opaque page token. It encodes the keyset of the
 * last game on a page, (updated_at in microseconds, game_id), as
 * "g1." + 16 hex + "." + 16 hex: clients must treat it as opaque; the
 * version prefix lets the format change without misreading old tokens.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store.h"

void store_page_token_encode(int64_t updated_us, int64_t game_id, char *out, size_t outlen)
{
    snprintf(out, outlen, "g1.%016" PRIx64 ".%016" PRIx64, (uint64_t)updated_us, (uint64_t)game_id);
}

int store_hex_u64(const char *s, int n, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++) {
        char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return -1;
        x = (x << 4) | (uint64_t)d;
    }
    *v = x;
    return 0;
}

int store_page_token_decode(const char *tok, int64_t *updated_us, int64_t *game_id)
{
    uint64_t a, b;
    if (!tok || strlen(tok) != 3 + 16 + 1 + 16 || memcmp(tok, "g1.", 3) != 0 || tok[19] != '.')
        return -1;
    if (store_hex_u64(tok + 3, 16, &a) != 0 || store_hex_u64(tok + 20, 16, &b) != 0)
        return -1;
    if ((int64_t)b <= 0)
        return -1;
    *updated_us = (int64_t)a;
    *game_id = (int64_t)b;
    return 0;
}

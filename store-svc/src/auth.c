/*
 * auth.c — password hashes and session tokens: the formats are described
 * in store/auth.h. Built alone as the `store_auth` library, which store-svc
 * and `loadtest seed` both link.
 */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/auth.h"

#define STORE__SALT_LEN 16
#define STORE__KEY_LEN 32

static void store__hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

static int store__unhex(const char *s, size_t slen, unsigned char *out, size_t n)
{
    if (slen != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + k];
            int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

void store_sha256_hex(const void *p, size_t n, char out[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(p, n, md);
    store__hex(md, sizeof(md), out);
}

int store_token_new(char *token, char *token_hash)
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return -1;
    store__hex(raw, sizeof(raw), token);
    store_sha256_hex(token, 64, token_hash);
    OPENSSL_cleanse(raw, sizeof(raw));
    return 0;
}

int store_password_hash(const char *password, int iterations, char *out, size_t outlen)
{
    unsigned char salt[STORE__SALT_LEN], key[STORE__KEY_LEN];
    char salt_hex[2 * STORE__SALT_LEN + 1], key_hex[2 * STORE__KEY_LEN + 1];
    if (RAND_bytes(salt, sizeof(salt)) != 1)
        return -1;
    if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, sizeof(salt), iterations,
                          EVP_sha256(), sizeof(key), key) != 1)
        return -1;
    store__hex(salt, sizeof(salt), salt_hex);
    store__hex(key, sizeof(key), key_hex);
    OPENSSL_cleanse(key, sizeof(key));
    int n = snprintf(out, outlen, "pbkdf2-sha256$%d$%s$%s", iterations, salt_hex, key_hex);
    return (n > 0 && (size_t)n < outlen) ? 0 : -1;
}

int store_password_verify(const char *password, const char *stored)
{
    static const char prefix[] = "pbkdf2-sha256$";
    unsigned char salt[STORE__SALT_LEN], want[STORE__KEY_LEN], got[STORE__KEY_LEN];
    if (strncmp(stored, prefix, sizeof(prefix) - 1) != 0)
        return -1;
    const char *p = stored + sizeof(prefix) - 1;
    char *end;
    long iter = strtol(p, &end, 10);
    if (end == p || *end != '$' || iter < 1 || iter > 100000000)
        return -1;
    const char *salt_hex = end + 1;
    const char *dollar = strchr(salt_hex, '$');
    if (!dollar)
        return -1;
    if (store__unhex(salt_hex, (size_t)(dollar - salt_hex), salt, sizeof(salt)) != 0 ||
        store__unhex(dollar + 1, strlen(dollar + 1), want, sizeof(want)) != 0)
        return -1;
    if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, sizeof(salt), (int)iter,
                          EVP_sha256(), sizeof(got), got) != 1)
        return -1;
    int ok = CRYPTO_memcmp(got, want, sizeof(got)) == 0;
    OPENSSL_cleanse(got, sizeof(got));
    return ok;
}

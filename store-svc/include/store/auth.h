/*
 * store/auth.h — the formats store-svc keeps credentials in: password
 * hashes and session-token hashes (store-svc/src/auth.c).
 *
 * This is the one definition of both formats. store-svc uses it to
 * register, log in and authenticate; `loadtest seed`, which writes
 * accounts and sessions straight into Postgres to seed fast, links the
 * same code (the `store_auth` library) so that a change of format here
 * changes the seeder with it. Nothing here touches the network or a
 * database: OpenSSL only.
 *
 * Passwords: PBKDF2-HMAC-SHA256, a 16-byte random salt per account, a
 * 32-byte key, stored as "pbkdf2-sha256$<iterations>$<salt hex>$<key hex>"
 * so the cost can be raised later without invalidating old hashes.
 *
 * Tokens: store-svc issues 32 random bytes as 64 lower-case hex
 * characters. Only SHA-256(token) as lower-case hex is stored, so a leaked
 * sessions table does not hand out sessions.
 */
#ifndef STORE_AUTH_H
#define STORE_AUTH_H

#include <stddef.h>

/* The size of a buffer that holds any password hash string. */
#define STORE_PW_HASH_BYTES 160

/* Writes a new hash of password into out (>= STORE_PW_HASH_BYTES).
 * Returns 0, or -1 when the random source or the KDF fails or out is too
 * small. */
int store_password_hash(const char *password, int iterations, char *out, size_t outlen);
/* 1 when password matches the stored hash, 0 when not, -1 on a malformed
 * stored hash. */
int store_password_verify(const char *password, const char *stored);
/* A new bearer token (64 lower-case hex chars of 32 random bytes) and its
 * hash (store_sha256_hex of the token). Buffers >= 65 bytes. 0 or -1. */
int store_token_new(char *token, char *token_hash);
/* The stored form of a token: SHA-256 of its n bytes as 64 lower-case hex
 * characters and a NUL. */
void store_sha256_hex(const void *p, size_t n, char out[65]);

#endif

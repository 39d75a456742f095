/*
 * identity.c — service identities: which certificate files a process uses
 * (rpc_identity_setup), and who may call what on an internal port (the
 * allow table, checked once per call before anything else runs).
 *
 * An identity is the URI SAN spiffe://scrabble/<name> of the certificate
 * the caller presented in the mutual-TLS handshake. The handshake already
 * proved the certificate was signed by our CA; the table then says which
 * of our identities may call each method. A certificate from our CA
 * without such a URI (an end user's, made by gen-certs.sh for clients) is
 * no identity at all.
 */
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rpc/log.h"

#define RPC__ALLOW_MAX 128

typedef struct rpc__allow_entry {
    char path[160];
    char callers[128]; /* " gateway game-svc " (spaces at both ends, for matching) */
} rpc__allow_entry;

struct rpc__authz {
    bool enforce; /* internal port with identities on */
    rpc__allow_entry entries[RPC__ALLOW_MAX];
    int n;
};

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* Fills `field` (when empty) with dir/name and checks that it is readable. */
static int rpc__identity_file(char *field, size_t size, const char *dir, const char *name,
                              const char *option, char *err, size_t errlen)
{
    if (field[0] == '\0' && snprintf(field, size, "%s/%s", dir, name) >= (int)size) {
        snprintf(err, errlen, "--%s: path %s/%s is too long", option, dir, name);
        return -1;
    }
    if (access(field, R_OK) != 0) {
        snprintf(err, errlen,
                 "missing certificate file %s (--%s; services call each other over mutual TLS: "
                 "make run creates var/certs, or run scripts/gen-certs.sh DIR and pass "
                 "--certs-dir=DIR; --insecure-internal turns this off for benchmarks)",
                 field, option);
        return -1;
    }
    return 0;
}

int rpc_identity_setup(rpc_server_config *cfg, const char *identity, bool internal_port, char *err,
                       size_t errlen)
{
    snprintf(cfg->identity, sizeof(cfg->identity), "%s", identity);
    cfg->internal_port = internal_port;
    if (cfg->insecure_internal) {
        /* Nothing of the identity is used: say so loudly, once. */
        memset(&cfg->peer_tls, 0, sizeof(cfg->peer_tls));
        if (internal_port)
            memset(&cfg->tls, 0, sizeof(cfg->tls));
        log_warn("insecure_internal",
                 "identity=%s msg=\"plaintext between services, no identity checks: for "
                 "benchmarks only\"",
                 identity);
        return 0;
    }
    const char *dir = cfg->certs_dir[0] ? cfg->certs_dir : ".";
    char crt[64], key[64];
    snprintf(crt, sizeof(crt), "%s.crt", identity);
    snprintf(key, sizeof(key), "%s.key", identity);
    rpc_tls_config *p = &cfg->peer_tls;
    if (rpc__identity_file(p->ca_file, sizeof(p->ca_file), dir, "ca.crt", "peer-tls-ca", err,
                           errlen) < 0 ||
        rpc__identity_file(p->cert_file, sizeof(p->cert_file), dir, crt, "peer-tls-cert", err,
                           errlen) < 0 ||
        rpc__identity_file(p->key_file, sizeof(p->key_file), dir, key, "peer-tls-key", err,
                           errlen) < 0)
        return -1;
    if (internal_port) {
        rpc_tls_config *t = &cfg->tls;
        if (rpc__identity_file(t->ca_file, sizeof(t->ca_file), dir, "ca.crt", "tls-ca", err,
                               errlen) < 0 ||
            rpc__identity_file(t->cert_file, sizeof(t->cert_file), dir, crt, "tls-cert", err,
                               errlen) < 0 ||
            rpc__identity_file(t->key_file, sizeof(t->key_file), dir, key, "tls-key", err, errlen) <
                0)
            return -1;
    }
    log_info("identity", "identity=%s cert=%s ca=%s internal_port=%d", identity,
             cfg->peer_tls.cert_file, cfg->peer_tls.ca_file, internal_port ? 1 : 0);
    return 0;
}

void rpc_identity_peer_tls(const rpc_server_config *cfg, const char *peer, rpc_tls_config *out)
{
    memset(out, 0, sizeof(*out));
    if (cfg->insecure_internal)
        return;
    *out = cfg->peer_tls;
    if (out->server_name[0] == '\0' && out->ca_file[0])
        snprintf(out->server_name, sizeof(out->server_name), "%s", peer);
}

void rpc_identity_tls(const char *certs_dir, const char *as, const char *server,
                      rpc_tls_config *out)
{
    memset(out, 0, sizeof(*out));
    if (certs_dir == NULL || certs_dir[0] == '\0')
        return;
    snprintf(out->ca_file, sizeof(out->ca_file), "%s/ca.crt", certs_dir);
    snprintf(out->cert_file, sizeof(out->cert_file), "%s/%s.crt", certs_dir, as);
    snprintf(out->key_file, sizeof(out->key_file), "%s/%s.key", certs_dir, as);
    snprintf(out->server_name, sizeof(out->server_name), "%s", server);
}

/* ------------------------------------------------------------------ */
/* Allow table                                                         */

rpc__authz *rpc__authz_create(const rpc_server_config *cfg)
{
    rpc__authz *az = calloc(1, sizeof(*az));
    if (az)
        az->enforce = cfg->internal_port && !cfg->insecure_internal;
    return az;
}

void rpc__authz_destroy(rpc__authz *az)
{
    free(az);
}

bool rpc__authz_enforced(const rpc__authz *az)
{
    return az && az->enforce;
}

int rpc__authz_add(rpc__authz *az, const ProtobufCServiceDescriptor *svc,
                   const rpc_allow_rule *rules)
{
    for (const rpc_allow_rule *r = rules; r && r->method; r++) {
        bool found = false;
        for (unsigned i = 0; i < svc->n_methods; i++)
            if (strcmp(svc->methods[i].name, r->method) == 0)
                found = true;
        if (!found || az->n >= RPC__ALLOW_MAX) {
            log_error("allow_rule", "service=%s method=%s err=\"%s\"", svc->name, r->method,
                      found ? "too many rules" : "no such method");
            return RPC_ERROR;
        }
        rpc__allow_entry *e = &az->entries[az->n++];
        rpc_method_path(svc, r->method, e->path, sizeof(e->path));
        snprintf(e->callers, sizeof(e->callers), " %s ", r->callers);
    }
    return RPC_OK;
}

/* Whether the method path belongs to a service every identity may call:
 * health (probes) and reflection (operators' tools). */
static bool rpc__builtin_service(const char *path)
{
    return strncmp(path, "/grpc.health.v1.Health/", 23) == 0 ||
           strncmp(path, "/grpc.reflection.", 17) == 0;
}

/* Copies the identity out of the call's auth context into buf. Returns 1
 * with an identity, 0 authenticated without one (a certificate of our CA
 * that names no service), -1 unauthenticated (no certificate). */
static int rpc__peer(grpc_call *call, char *buf, size_t len)
{
    buf[0] = '\0';
    grpc_auth_context *ctx = grpc_call_auth_context(call);
    if (ctx == NULL)
        return -1;
    int rc = -1;
    if (grpc_auth_context_peer_is_authenticated(ctx)) {
        rc = 0;
        const size_t plen = strlen(RPC_IDENTITY_URI_PREFIX);
        grpc_auth_property_iterator it =
            grpc_auth_context_find_properties_by_name(ctx, GRPC_X509_SAN_PROPERTY_NAME);
        const grpc_auth_property *p;
        int found = 0;
        while ((p = grpc_auth_property_iterator_next(&it)) != NULL) {
            if (p->value_length <= plen || memcmp(p->value, RPC_IDENTITY_URI_PREFIX, plen) != 0)
                continue;
            size_t n = p->value_length - plen;
            /* Two identities in one certificate are none: refuse it. */
            if (++found > 1 || n >= len || memchr(p->value + plen, ' ', n)) {
                buf[0] = '\0';
                break;
            }
            memcpy(buf, p->value + plen, n);
            buf[n] = '\0';
        }
        if (buf[0])
            rc = 1;
    }
    grpc_auth_context_release(ctx);
    return rc;
}

bool rpc__authz_check(const rpc__authz *az, rpc_call *c)
{
    if (!rpc__authz_enforced(az))
        return true;
    char who[64];
    const char *path = rpc_call_method(c);
    int rc = rpc__peer(rpc_call_core(c), who, sizeof(who));
    if (rc < 0) {
        rpc_call_fail(c, GRPC_STATUS_UNAUTHENTICATED, "no_client_certificate",
                      "this port serves our services only: present a service certificate");
        return false;
    }
    if (rc == 0) {
        rpc_call_fail(c, GRPC_STATUS_PERMISSION_DENIED, "unknown_identity",
                      "the certificate names no service identity (%s<name> URI SAN)",
                      RPC_IDENTITY_URI_PREFIX);
        return false;
    }
    if (rpc__builtin_service(path))
        return true;
    char needle[70];
    snprintf(needle, sizeof(needle), " %s ", who);
    for (int i = 0; i < az->n; i++) {
        if (strcmp(az->entries[i].path, path) == 0 && strstr(az->entries[i].callers, needle))
            return true;
    }
    rpc_call_fail(c, GRPC_STATUS_PERMISSION_DENIED, "identity_not_allowed",
                  "identity %s may not call %s", who, path);
    return false;
}

const char *rpc_call_peer_identity(rpc_call *c)
{
    char who[64];
    if (rpc__peer(rpc_call_core(c), who, sizeof(who)) != 1)
        return NULL;
    return rpc_arena_strndup(rpc_call_arena(c), who, strlen(who));
}

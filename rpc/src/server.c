/*
 * server.c — the server: worker loops, the method registry, and start,
 * drain and stop. What happens to one call once it arrives is call.c.
 */
#include <errno.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/log.h"
#include "server_call.h"

/* ------------------------------------------------------------------ */
/* Registration                                                        */

void rpc_server_config_defaults(rpc_server_config *cfg, int grpc_port, int metrics_port);

rpc_server *rpc_server_create(const rpc_server_config *cfg, const char *service_label, char *err,
                              size_t errlen)
{
    rpc_server *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (s->cfg.workers < 1)
        s->cfg.workers = 1;
    if (s->cfg.stream_queue_limit < 1)
        s->cfg.stream_queue_limit = 256;
    snprintf(s->label, sizeof(s->label), "%s", service_label);

    grpc_arg args[7];
    int n = 0;
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER,
                   .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                   .value.integer = cfg->max_message_bytes > 0 ? cfg->max_message_bytes : 4 << 20};
    args[n++] = (grpc_arg){
        .type = GRPC_ARG_INTEGER,
        .key = GRPC_ARG_MAX_CONCURRENT_STREAMS,
        .value.integer = cfg->max_concurrent_streams > 0 ? cfg->max_concurrent_streams : 1000};
    /* The keepalive timer costs CPU per connection; a long interval keeps
     * idle connections nearly free while still reaping dead peers. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_KEEPALIVE_TIME_MS,
                           .value.integer = cfg->keepalive_ms > 0 ? cfg->keepalive_ms : 7200000};
    args[n++] =
        (grpc_arg){.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_ENABLE_CHANNELZ, .value.integer = 0};
    args[n++] = rpc__no_bdp_probe();
    /* Clients may ping as often as their own keepalive says. */
    args[n++] = (grpc_arg){.type = GRPC_ARG_INTEGER,
                           .key = GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                           .value.integer = 1000};
    grpc_channel_args cargs = {.num_args = (size_t)n, .args = args};
    s->server = grpc_server_create(&cargs, NULL);
    s->shutdown_cq = grpc_completion_queue_create_for_pluck(NULL);
    s->nworkers = s->cfg.workers;
    s->workers = calloc((size_t)s->nworkers, sizeof(rpc_loop));
    for (int i = 0; i < s->nworkers; i++) {
        char name[48];
        snprintf(name, sizeof(name), "%.20s-w%d", s->label, i);
        rpc__loop_init(&s->workers[i], name, i);
        grpc_server_register_completion_queue(s->server, s->workers[i].cq, NULL);
    }
    s->metrics = metrics_registry_create();
    s->calls_live = metrics_gauge(s->metrics, "rpc_server_calls_live", NULL,
                                  "Inbound calls arrived and not yet freed");
    /* Plaintext between services is a choice an operator must see. */
    metric *insecure = metrics_gauge(s->metrics, "rpc_insecure_internal", NULL,
                                     "1 when --insecure-internal turned off mutual TLS and "
                                     "identity checks between services");
    metric_set(insecure, cfg->insecure_internal ? 1 : 0);
    s->authz = rpc__authz_create(cfg);
    if (rpc__authz_enforced(s->authz) && (cfg->tls.cert_file[0] == '\0' || !cfg->tls.ca_file[0])) {
        snprintf(err, errlen, "an internal port needs mutual TLS (rpc_identity_setup)");
        rpc_server_destroy(s);
        return NULL;
    }
    s->health = rpc__health_create();
    s->guard = rpc__guard_create(&s->cfg, s->metrics);
    s->tracer = rpc__tracer_create(&s->cfg, s->metrics);
    if (s->calls_live == NULL || s->guard == NULL || s->authz == NULL || s->tracer == NULL ||
        rpc__health_register(s, s->health) != RPC_OK ||
        (s->reflection = rpc__reflection_register(s)) == NULL) {
        snprintf(err, errlen, "could not set up metrics, health or reflection");
        rpc_server_destroy(s);
        return NULL;
    }
    return s;
}

static rpc__method *rpc__method_add(rpc_server *s, const char *path,
                                    const ProtobufCMessageDescriptor *input)
{
    if (s->nmethods >= RPC__MAX_METHODS || s->started)
        return NULL;
    rpc__method *m = &s->methods[s->nmethods++];
    memset(m, 0, sizeof(*m));
    snprintf(m->path, sizeof(m->path), "%s", path);
    m->input = input;
    m->kind = RPC__METHOD_UNIMPLEMENTED;
    /* The request message arrives with the call: one batch saved. */
    m->registered = grpc_server_register_method(s->server, m->path, NULL,
                                                GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    char labels[200];
    snprintf(labels, sizeof(labels), "method=\"%s\"", m->path);
    m->in_flight = metrics_gauge(s->metrics, "rpc_server_in_flight", labels, "Calls being served");
    m->latency = metrics_histogram(s->metrics, "rpc_server_latency_seconds", labels,
                                   "Time from arrival to final status sent", metrics_latency_bounds,
                                   metrics_latency_bounds_count);
    return m;
}

static int rpc__service_note(rpc_server *s, const char *name)
{
    if (s->nservices >= RPC__MAX_SERVICES)
        return RPC_ERROR;
    s->service_names[s->nservices++] = name;
    return RPC_OK;
}

int rpc_server_add_service(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                           const rpc_method_impl *impls, void *svc_ctx)
{
    /* Every impl must name a method of the service. */
    for (const rpc_method_impl *im = impls; im && im->name; im++) {
        bool found = false;
        for (unsigned i = 0; i < svc->n_methods; i++)
            if (strcmp(svc->methods[i].name, im->name) == 0)
                found = true;
        if (!found) {
            log_error("unknown_method", "service=%s method=%s", svc->name, im->name);
            return RPC_ERROR;
        }
    }
    for (unsigned i = 0; i < svc->n_methods; i++) {
        char path[160];
        rpc_method_path(svc, svc->methods[i].name, path, sizeof(path));
        rpc__method *m = rpc__method_add(s, path, svc->methods[i].input);
        if (m == NULL)
            return RPC_ERROR;
        m->ctx = svc_ctx;
        for (const rpc_method_impl *im = impls; im && im->name; im++) {
            if (strcmp(im->name, svc->methods[i].name) == 0 && im->handler) {
                m->kind = RPC__METHOD_HANDLER;
                m->handler = im->handler;
                m->max_request_bytes = im->max_request_bytes;
                m->decode_later = im->decode_later;
            }
        }
    }
    rpc__health_set(s->health, svc->name, false);
    return rpc__service_note(s, svc->name);
}

int rpc__server_add_bidi(rpc_server *s, const char *path, const ProtobufCMessageDescriptor *input,
                         rpc__bidi_fn fn, void *ctx)
{
    rpc__method *m = rpc__method_add(s, path, input);
    if (m == NULL)
        return RPC_ERROR;
    m->kind = RPC__METHOD_BIDI;
    m->bidi = fn;
    m->ctx = ctx;
    /* "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo" ->
     * the service name, kept as a static string for list_services. */
    if (strstr(path, "v1alpha"))
        return rpc__service_note(s, "grpc.reflection.v1alpha.ServerReflection");
    return rpc__service_note(s, "grpc.reflection.v1.ServerReflection");
}

size_t rpc__server_service_names(rpc_server *s, const char **out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < s->nservices && n < max; i++)
        out[n++] = s->service_names[i];
    return n;
}

void rpc_server_on_drain(rpc_server *s, void (*fn)(void *arg), void *arg)
{
    s->on_drain = fn;
    s->on_drain_arg = arg;
}

void rpc_server_set_serving(rpc_server *s, const char *service, bool serving)
{
    rpc__health_set(s->health, service, serving);
}

struct metrics_registry *rpc_server_metrics(rpc_server *s)
{
    return s->metrics;
}

int rpc_server_allow(rpc_server *s, const ProtobufCServiceDescriptor *svc,
                     const rpc_allow_rule *rules)
{
    return rpc__authz_add(s->authz, svc, rules);
}

bool rpc_call_peer_is(rpc_call *c, const char *identity)
{
    if (!rpc__authz_enforced(c->server->authz))
        return true;
    const char *who = rpc_call_peer_identity(c);
    return who && strcmp(who, identity) == 0;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

static grpc_server_credentials *rpc__server_creds(const rpc_tls_config *tls, bool internal,
                                                  char *err, size_t errlen)
{
    if (tls->cert_file[0] == '\0')
        return grpc_insecure_server_credentials_create();
    char *cert = rpc__read_file(tls->cert_file);
    char *key = rpc__read_file(tls->key_file);
    char *ca = tls->ca_file[0] ? rpc__read_file(tls->ca_file) : NULL;
    grpc_server_credentials *creds = NULL;
    if (cert == NULL || key == NULL || (tls->ca_file[0] && ca == NULL)) {
        snprintf(err, errlen, "cannot read TLS files (cert=%s key=%s ca=%s)", tls->cert_file,
                 tls->key_file, tls->ca_file);
        goto done;
    }
    grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
    /* With a CA configured, a client must present a certificate it signed:
     * that is the mutual TLS between services. An internal port lets a TLS
     * client without a certificate through the handshake (one it presents
     * must still verify) so that the identity check can answer it
     * UNAUTHENTICATED with a reason instead of a bare handshake failure. */
    grpc_ssl_client_certificate_request_type req = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    if (ca)
        req = internal ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY
                       : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    creds = grpc_ssl_server_credentials_create_ex(ca, &pair, 1, req, NULL);
    if (creds == NULL)
        snprintf(err, errlen, "invalid TLS certificate or key");
done:
    free(cert);
    free(key);
    free(ca);
    return creds;
}

int rpc_server_start(rpc_server *s, char *err, size_t errlen)
{
    grpc_server_credentials *creds =
        rpc__server_creds(&s->cfg.tls, rpc__authz_enforced(s->authz), err, errlen);
    if (creds == NULL)
        return 0;
    int port = grpc_server_add_http2_port(s->server, s->cfg.listen, creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        snprintf(err, errlen, "cannot listen on %s (address in use or invalid)", s->cfg.listen);
        return 0;
    }
    rpc__guard_set_port(s->guard, port);
    grpc_server_start(s->server);
    s->started = true;
    for (int w = 0; w < s->nworkers; w++) {
        rpc_loop *loop = &s->workers[w];
        for (int i = 0; i < s->nmethods; i++)
            for (int k = 0; k < RPC__REQUESTS_PER_METHOD; k++)
                rpc__request(s, loop, &s->methods[i]);
        for (int k = 0; k < RPC__GENERIC_REQUESTS; k++)
            rpc__request(s, loop, NULL);
        rpc__loop_run(loop);
    }
    if (s->cfg.metrics_listen[0]) {
        char merr[128];
        metrics_http_limits lim = {.timeout_s =
                                       (unsigned)((s->cfg.metrics_timeout_ms + 999) / 1000),
                                   .per_address = (unsigned)s->cfg.metrics_conns_per_address,
                                   .total = (unsigned)s->cfg.metrics_conns};
        if (metrics_serve_limited(s->metrics, s->cfg.metrics_listen, &lim, merr, sizeof(merr)) <
            0) {
            snprintf(err, errlen, "metrics endpoint %s: %s", s->cfg.metrics_listen, merr);
            rpc_server_stop(s);
            return 0;
        }
    }
    rpc__health_set_all(s->health, true);
    log_info("server_started", "listen=%s port=%d workers=%d metrics=%s", s->cfg.listen, port,
             s->nworkers, s->cfg.metrics_listen[0] ? s->cfg.metrics_listen : "off");
    return port;
}

void rpc_server_stop(rpc_server *s)
{
    if (!s->started || s->stopped)
        return;
    s->stopped = true;
    atomic_store(&s->shutting_down, true);
    rpc__health_set_all(s->health, false);
    if (s->on_drain)
        s->on_drain(s->on_drain_arg);
    int tag = 0;
    grpc_server_shutdown_and_notify(s->server, s->shutdown_cq, &tag);
    gpr_timespec grace = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                      gpr_time_from_millis(s->cfg.shutdown_grace_ms, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_pluck(s->shutdown_cq, &tag, grace, NULL);
    if (ev.type != GRPC_OP_COMPLETE) {
        log_warn("shutdown_cancel", "live_calls=%lld", (long long)metric_value(s->calls_live));
        grpc_server_cancel_all_calls(s->server);
        grpc_completion_queue_pluck(s->shutdown_cq, &tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    }
    /* Handlers that finish later (after a downstream reply) still hold
     * calls; give them a bounded moment before the queues go away. */
    for (int i = 0; i < 200 && metric_value(s->calls_live) > 0; i++) {
        if (i == 100)
            grpc_server_cancel_all_calls(s->server);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int w = 0; w < s->nworkers; w++) {
        rpc__loop_shutdown(&s->workers[w]);
        rpc__loop_free_calls(&s->workers[w]);
    }
    log_info("server_stopped", "live_calls=%lld", (long long)metric_value(s->calls_live));
}

int rpc_server_wait(rpc_server *s)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    log_info("signal", "sig=%s draining=1", sig == SIGTERM ? "TERM" : "INT");
    rpc_server_stop(s);
    return 0;
}

void rpc_server_destroy(rpc_server *s)
{
    if (s == NULL)
        return;
    if (s->started && !s->stopped)
        rpc_server_stop(s);
    if (!s->started) {
        for (int w = 0; w < s->nworkers; w++)
            rpc__loop_shutdown(&s->workers[w]);
    }
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->shutdown_cq);
    while (
        grpc_completion_queue_pluck(s->shutdown_cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
            .type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(s->shutdown_cq);
    rpc__health_destroy(s->health);
    rpc__reflection_free(s->reflection);
    rpc__guard_destroy(s->guard);
    rpc__authz_destroy(s->authz);
    rpc__tracer_destroy(s->tracer);
    metrics_registry_destroy(s->metrics);
    free(s->workers);
    free(s);
}

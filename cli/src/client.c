/*
 * client.c — the channel to the gateway, one blocking call helper, and the
 * one place that turns an error status into words for people.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scrabble/v1/edge.pb-c.h"

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("scrabble-cli: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

int cli_connect(cli_ctx *ctx)
{
    if (ctx->opt.addr[0] == '\0') {
        cli_errorf("--addr is empty");
        return CLI_EUSAGE;
    }
    memset(&ctx->tls, 0, sizeof ctx->tls);
    snprintf(ctx->tls.ca_file, sizeof ctx->tls.ca_file, "%s", ctx->opt.tls_ca);
    snprintf(ctx->tls.cert_file, sizeof ctx->tls.cert_file, "%s", ctx->opt.tls_cert);
    snprintf(ctx->tls.key_file, sizeof ctx->tls.key_file, "%s", ctx->opt.tls_key);
    snprintf(ctx->tls.server_name, sizeof ctx->tls.server_name, "%s", ctx->opt.tls_server_name);
    const char *files[] = {ctx->opt.tls_ca, ctx->opt.tls_cert, ctx->opt.tls_key};
    for (size_t i = 0; i < 3; i++) {
        if (files[i][0] == '\0')
            continue;
        FILE *f = fopen(files[i], "r");
        if (f == NULL) {
            cli_errorf("cannot read TLS file %s", files[i]);
            return CLI_EUSAGE;
        }
        fclose(f);
    }
    rpc_channel_opts copts = {.tls = &ctx->tls};
    ctx->ch = rpc_channel_create(ctx->opt.addr, &copts);
    if (ctx->ch == NULL) {
        cli_errorf("bad gateway address '%s'", ctx->opt.addr);
        return CLI_EUSAGE;
    }
    return CLI_OK;
}

/* The status in words, by what a person can do about it. */
static const char *client__code_words(grpc_status_code code)
{
    switch (code) {
    case GRPC_STATUS_CANCELLED:
        return "cancelled";
    case GRPC_STATUS_INVALID_ARGUMENT:
        return "invalid request";
    case GRPC_STATUS_DEADLINE_EXCEEDED:
        return "timed out";
    case GRPC_STATUS_NOT_FOUND:
        return "not found";
    case GRPC_STATUS_ALREADY_EXISTS:
        return "already exists";
    case GRPC_STATUS_PERMISSION_DENIED:
        return "not allowed";
    case GRPC_STATUS_RESOURCE_EXHAUSTED:
        return "too many requests";
    case GRPC_STATUS_FAILED_PRECONDITION:
        return "not now";
    case GRPC_STATUS_ABORTED:
        return "aborted";
    case GRPC_STATUS_OUT_OF_RANGE:
        return "out of range";
    case GRPC_STATUS_UNIMPLEMENTED:
        return "not supported by this server";
    case GRPC_STATUS_INTERNAL:
        return "server error";
    case GRPC_STATUS_UNAVAILABLE:
        return "server unavailable";
    case GRPC_STATUS_DATA_LOSS:
        return "data loss";
    case GRPC_STATUS_UNAUTHENTICATED:
        return "not logged in";
    default:
        return "error";
    }
}

const char *cli_status_words(const rpc_status *st, char *buf, size_t len)
{
    char head[64];
    const char *reason = st->reason;
    /* The reason's first part names the problem better than the code does
     * for the common game errors ("illegal_play:gap" -> "illegal play"). */
    if (strncmp(reason, "illegal_play", 12) == 0)
        snprintf(head, sizeof head, "illegal play");
    else if (strcmp(reason, "bad_credentials") == 0)
        snprintf(head, sizeof head, "login failed");
    else if (strcmp(reason, "rate_limited") == 0)
        snprintf(head, sizeof head, "slow down");
    else
        snprintf(head, sizeof head, "%s", client__code_words(st->code));
    const char *msg = st->message[0] ? st->message : rpc_status_code_name(st->code);
    if (reason[0])
        snprintf(buf, len, "%s: %s (%s)", head, msg, reason);
    else
        snprintf(buf, len, "%s: %s (%s)", head, msg, rpc_status_code_name(st->code));
    return buf;
}

int cli_call(cli_ctx *ctx, const char *name, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *reply_desc, bool auth, ProtobufCMessage **reply)
{
    char method[128];
    rpc_method_path(&scrabble__v1__edge__descriptor, name, method, sizeof method);
    rpc_client_opts opts = {.timeout_ms = ctx->opt.timeout_ms};
    if (auth) {
        opts.md = ctx->md;
        opts.md_count = 1;
    }
    rpc_status st;
    *reply = NULL;
    if (rpc_client_unary_sync(ctx->ch, method, req, reply_desc, &opts, NULL, reply, &st) ==
        GRPC_STATUS_OK)
        return CLI_OK;
    char words[512];
    cli_status_words(&st, words, sizeof words);
    if (st.code == GRPC_STATUS_UNAVAILABLE && st.reason[0] == '\0')
        cli_errorf("%s; is the gateway running on %s%s?", words, ctx->opt.addr,
                   ctx->tls.ca_file[0] ? "" : " (with TLS it needs --tls-ca)");
    else if (st.code == GRPC_STATUS_UNAUTHENTICATED && strcmp(st.reason, "bad_credentials") != 0)
        cli_errorf("%s; log in again: scrabble-cli login HANDLE PASSWORD", words);
    else
        cli_errorf("%s", words);
    return CLI_EFAIL;
}

size_t cli_end_line(char *line, size_t size, unsigned gen, const rpc_status *st)
{
    int n = snprintf(line, size, "\001%u\t%d\t%s\t%s", gen, (int)st->code, st->reason, st->message);
    if (n < 0 || n >= (int)size - 1)
        n = (int)size - 2;
    for (int i = 1; i < n; i++)
        if (line[i] == '\n')
            line[i] = ' ';
    line[n++] = '\n';
    return (size_t)n;
}

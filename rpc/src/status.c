/*
 * status.c — filling rpc_status, gRPC code names, reason-token validation.
 */
#include "rpc/status.h"

#include <stdio.h>
#include <string.h>

/* Indexed by code; gRPC defines exactly these 17 (0..16). */
static const char *const rpc_status__names[] = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

#define RPC_STATUS__NCODES (sizeof(rpc_status__names) / sizeof(rpc_status__names[0]))

rpc_status *rpc_status_vset(rpc_status *st, grpc_status_code code, const char *reason,
                            const char *fmt, va_list ap)
{
    st->code = code;
    /* snprintf truncates and always terminates; an over-long reason is a
     * programming error, but must not overflow. */
    snprintf(st->reason, sizeof(st->reason), "%s", reason ? reason : "");
    if (fmt != NULL)
        vsnprintf(st->message, sizeof(st->message), fmt, ap);
    else
        st->message[0] = '\0';
    return st;
}

rpc_status *rpc_status_set(rpc_status *st, grpc_status_code code, const char *reason,
                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rpc_status_vset(st, code, reason, fmt, ap);
    va_end(ap);
    return st;
}

const char *rpc_status_code_name(grpc_status_code code)
{
    if ((int)code < 0 || (size_t)code >= RPC_STATUS__NCODES)
        return "UNKNOWN_CODE";
    return rpc_status__names[code];
}

int rpc_status_code_from_name(const char *name)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0; i < RPC_STATUS__NCODES; i++)
        if (strcmp(name, rpc_status__names[i]) == 0)
            return (int)i;
    return -1;
}

int rpc_reason_valid(const char *reason)
{
    if (reason == NULL)
        return 0;
    size_t n = 0;
    for (const char *p = reason; *p; p++, n++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
                 c == '.' || c == '-';
        if (!ok || n >= 63)
            return 0;
    }
    return n >= 1;
}

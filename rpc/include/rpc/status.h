/*
 * status.h — the closed set of return codes, and the error status every call
 * carries: a gRPC code, a stable machine reason (sent in the trailing
 * metadata key `scrabble-reason`) and a human message.
 */
#ifndef RPC_STATUS_H
#define RPC_STATUS_H

#include <grpc/status.h>
#include <stdarg.h>
#include <stddef.h>

/* Return codes of runtime functions. */
enum {
    RPC_OK = 0,
    RPC_ERROR = -1,   /* generic failure; see the context's errstr */
    RPC_EFULL = -2,   /* a bounded queue is full */
    RPC_ECLOSED = -3, /* the call or stream has ended */
};

#define RPC_REASON_KEY "scrabble-reason"

typedef struct rpc_status {
    grpc_status_code code;
    char reason[64];   /* stable token, "" when none */
    char message[256]; /* for people */
} rpc_status;

/* Sets all three fields (fmt may be NULL). Returns st. */
rpc_status *rpc_status_set(rpc_status *st, grpc_status_code code, const char *reason,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));
rpc_status *rpc_status_vset(rpc_status *st, grpc_status_code code, const char *reason,
                            const char *fmt, va_list ap);
/* "OK", "INVALID_ARGUMENT", ... ("UNKNOWN_CODE" outside the range). */
const char *rpc_status_code_name(grpc_status_code code);
/* Inverse of rpc_status_code_name; -1 when unknown. */
int rpc_status_code_from_name(const char *name);
/* Whether a reason token is well-formed: 1..63 bytes of [a-z0-9_:.-]. */
int rpc_reason_valid(const char *reason);

#endif

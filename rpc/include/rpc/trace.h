/*
 * trace.h — W3C trace context (https://www.w3.org/TR/trace-context/) through
 * every hop, in the runtime so that every service gets it the same way.
 *
 * - A server reads the `traceparent` request header of each call. A valid
 *   one (version 00, strictly as the W3C spec has it) continues that trace;
 *   a missing, malformed or oversized one starts a fresh trace instead: a
 *   bad header is never propagated, and never fails the call.
 * - While a handler runs, and while a callback of a client call it started
 *   runs, the call's trace is the thread's current trace: every log line
 *   then ends with `trace_id=<32 hex>` (rpc/log.h), and every client call
 *   started there sends `traceparent` with the same trace id and this hop's
 *   span id as parent.
 * - An error status carries the trace id in the trailer `scrabble-trace-id`,
 *   so a client can quote it.
 * - A sampled call logs one `event=span` line at every hop when it ends; an
 *   unsampled one only when it failed with a server-side code (a bounded
 *   number per second). The public port (gateway) decides sampling itself
 *   and ignores the client's flag, so no client can make the system log
 *   every call it makes.
 *
 * Nothing is exported to a collector: span lines in the logs are the spans.
 */
#ifndef RPC_TRACE_H
#define RPC_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#define RPC_TRACE_HEADER "traceparent"
#define RPC_TRACE_ID_KEY "scrabble-trace-id"
/* "00-" + 32 hex + "-" + 16 hex + "-" + 2 hex: the only length version 00
 * has. */
#define RPC_TRACEPARENT_LEN 55
/* Longer than this is counted as oversized rather than malformed (and not
 * even scanned). Both are replaced; see docs/OPERATIONS.md, "Tracing". */
#define RPC_TRACEPARENT_OVERSIZED 256

/* One hop's trace context. Ids are lowercase hex, NUL-terminated. */
typedef struct rpc_trace {
    bool on;            /* false: no trace (tracing off, or none set) */
    bool sampled;       /* the W3C sampled flag this hop propagates */
    char trace_id[33];  /* the whole call chain's id */
    char span_id[17];   /* this hop's span */
    char parent_id[17]; /* the caller's span; "" when the trace started here */
} rpc_trace;

typedef enum rpc_trace_result {
    RPC_TRACE_VALID = 0,
    RPC_TRACE_ABSENT,    /* no header */
    RPC_TRACE_MALFORMED, /* anything but a valid version-00 header */
    RPC_TRACE_OVERSIZED, /* longer than RPC_TRACEPARENT_OVERSIZED */
    RPC_TRACE_NRESULTS
} rpc_trace_result;

/* Parses a traceparent value of `len` bytes (not NUL-terminated; NULL is
 * absent): version "00", a 32-hex trace id and a 16-hex parent id, neither
 * all zeros, two hex digits of flags, dashes between, lowercase only,
 * exactly RPC_TRACEPARENT_LEN bytes. On VALID fills out->trace_id,
 * out->parent_id and out->sampled (flag bit 0); other fields untouched. */
rpc_trace_result rpc_trace_parse(const char *s, size_t len, rpc_trace *out);

/* A fresh trace: new random trace and span ids, no parent. */
void rpc_trace_start(rpc_trace *t, bool sampled);
/* Continues the trace in `t` (trace_id and parent_id set, as by
 * rpc_trace_parse): a new random span id for this hop. */
void rpc_trace_continue(rpc_trace *t);
/* The traceparent a call from this hop sends: "00-<trace>-<span>-<flags>",
 * RPC_TRACEPARENT_LEN bytes plus NUL into out (at least 56 bytes). */
void rpc_trace_header(const rpc_trace *t, char *out);
/* "result" label value of a parse result ("valid", "absent", ...). */
const char *rpc_trace_result_name(rpc_trace_result r);

/* The calling thread's current trace, or NULL when none. */
const rpc_trace *rpc_trace_current(void);
/* Makes `t` (copied; NULL: none) the thread's current trace and returns the
 * one it replaces, for rpc_trace_leave. Work that crosses to another thread
 * (a queue to a database thread) copies the trace along and enters it
 * there. */
rpc_trace rpc_trace_enter(const rpc_trace *t);
void rpc_trace_leave(const rpc_trace *prev);

#endif

/*
 * wire_check.h — the string gate: every string a client sends is checked on
 * the raw wire bytes, before protobuf-c decodes it.
 *
 * Why the raw bytes: protobuf-c hands a decoded string to C as a
 * NUL-terminated `char *` with no length, so "alice\0anything" decodes to
 * "alice" and no check on the decoded message can see what was cut off.
 *
 * The rule, the same for every TYPE_STRING field of every message (nested
 * messages included, at any depth):
 *   - the bytes are valid UTF-8 (no overlong forms, no surrogates, nothing
 *     above U+10FFFF), else RPC_WIRE_BAD_UTF8 ("bad_utf8");
 *   - no control character: C0 (U+0000..U+001F, so NUL, tab and newline
 *     too), DEL (U+007F) and C1 (U+0080..U+009F), else RPC_WIRE_CONTROL
 *     ("bad_text"). Every string of the API is one line (handles, names,
 *     chat, words, lexicon names, tiles, page tokens, passwords): a newline
 *     in a chat line or a bio would let it forge a line of someone else's
 *     in a terminal client, and no field needs one.
 * Field-specific rules (handle normalisation, lengths, letters) are the
 * owning service's; this gate only guarantees the decoded C string is the
 * whole string the client sent, and that it is text.
 *
 * Pure functions: no allocation, no global state; unit-tested and fuzzed
 * directly (tests/unit/rpc/test_wire_check.c, tests/fuzz/fuzz_wire_check.c).
 */
#ifndef RPC_WIRE_CHECK_H
#define RPC_WIRE_CHECK_H

#include <grpc/byte_buffer.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

typedef enum rpc_wire_verdict {
    RPC_WIRE_OK = 0,
    RPC_WIRE_BAD_UTF8,  /* a string field is not valid UTF-8 */
    RPC_WIRE_CONTROL,   /* a string field holds a control character */
    RPC_WIRE_MALFORMED, /* not a well-formed message of that type */
} rpc_wire_verdict;

typedef struct rpc_wire_result {
    rpc_wire_verdict verdict;
    /* The offending field, e.g. "placements[2].letter" (repeated fields
     * carry their index); "" when OK or when the message itself is
     * malformed at the top level. */
    char path[128];
    /* RPC_WIRE_CONTROL: the control character found. */
    uint32_t codepoint;
} rpc_wire_result;

/* Walks `len` bytes of a serialized message of type `desc` and checks every
 * string field it holds (unknown fields are skipped, not checked: they
 * decode to nothing). Returns res->verdict. `res` may be NULL. */
rpc_wire_verdict rpc_wire_check(const uint8_t *buf, size_t len,
                                const ProtobufCMessageDescriptor *desc, rpc_wire_result *res);

/* The same on a gRPC byte buffer (NULL: an empty message). A buffer in one
 * slice (the usual case) is read in place; only a split one is copied. */
rpc_wire_verdict rpc_wire_check_buffer(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc,
                                       rpc_wire_result *res);

/* The stable `scrabble-reason` of a verdict: "bad_utf8", "bad_text",
 * "bad_request" (malformed), NULL for OK. */
const char *rpc_wire_reason(rpc_wire_verdict v);

/* Writes a one-line human message for a failed check into buf, e.g.
 * "field text contains control character U+0000". Returns buf. */
const char *rpc_wire_message(const rpc_wire_result *res, char *buf, size_t len);

/* The one UTF-8 validator of the tree: the number of code points in the n
 * bytes at s, or -1 when they are not valid UTF-8 (overlong forms,
 * surrogates, values above U+10FFFF, truncated sequences). */
long rpc_utf8_len(const char *s, size_t n);

#endif

/*
 * wire_check.c — the string gate (see rpc/wire_check.h): a walk over the
 * protobuf wire format, guided by the message descriptor, that checks every
 * string field's bytes before protobuf-c turns them into C strings.
 *
 * The walk accepts what protobuf-c's decoder accepts and no less, so a
 * message that passes here and fails to decode fails for the decoder's own
 * reasons; it refuses groups (protobuf-c does too) and a known string or
 * message field sent with another wire type.
 */
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rpc/wire_check.h"

/* Our messages nest three deep at most; the bound only stops a hostile
 * descriptor-shaped recursion from using the stack. */
#define RPC_WIRE__MAX_DEPTH 32
/* Repeated-field indexes are counted for messages up to this many fields
 * (all of ours); larger ones report the field without an index. */
#define RPC_WIRE__MAX_FIELDS 64

/* Decodes one UTF-8 sequence at p (< end) into *cp. Returns its length in
 * bytes, or 0 when it is not valid UTF-8. */
static size_t rpc_wire__utf8_next(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
    unsigned c = p[0];
    size_t need;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        v = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        v = c & 0x07;
    } else {
        return 0; /* a continuation byte, an overlong lead (C0, C1) or > F4 */
    }
    if ((size_t)(end - p) <= need)
        return 0;
    for (size_t i = 1; i <= need; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((need == 2 && v < 0x800) || (need == 3 && v < 0x10000) || v > 0x10FFFF ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return need + 1;
}

long rpc_utf8_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    long count = 0;
    while (p < end) {
        uint32_t cp;
        size_t k = rpc_wire__utf8_next(p, end, &cp);
        if (k == 0)
            return -1;
        p += k;
        count++;
    }
    return count;
}

static rpc_wire_verdict rpc_wire__text(const unsigned char *p, size_t n, uint32_t *bad)
{
    const unsigned char *end = p + n;
    while (p < end) {
        uint32_t cp;
        size_t k = rpc_wire__utf8_next(p, end, &cp);
        if (k == 0)
            return RPC_WIRE_BAD_UTF8;
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            *bad = cp;
            return RPC_WIRE_CONTROL;
        }
        p += k;
    }
    return RPC_WIRE_OK;
}

/* Reads a varint of at most 10 bytes (as protobuf-c does). Returns its
 * length, 0 when truncated or too long. */
static size_t rpc_wire__varint(const uint8_t *p, size_t left, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < left && i < 10; i++) {
        v |= (uint64_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

typedef struct rpc_wire__walk {
    char path[128];
    size_t pathlen;
    rpc_wire_result *res;
} rpc_wire__walk;

/* Appends "name" or "name[i]" (with a "." before it below the top) to the
 * path; returns the previous length to restore. */
static size_t rpc_wire__push(rpc_wire__walk *w, const char *name, long index)
{
    size_t before = w->pathlen;
    size_t room = sizeof w->path - w->pathlen;
    int k = index >= 0
                ? snprintf(w->path + w->pathlen, room, "%s%s[%ld]", before ? "." : "", name, index)
                : snprintf(w->path + w->pathlen, room, "%s%s", before ? "." : "", name);
    if (k > 0)
        w->pathlen = (size_t)k < room ? w->pathlen + (size_t)k : sizeof w->path - 1;
    return before;
}

static rpc_wire_verdict rpc_wire__fail(rpc_wire__walk *w, rpc_wire_verdict v, uint32_t cp)
{
    if (w->res) {
        w->res->verdict = v;
        w->res->codepoint = cp;
        snprintf(w->res->path, sizeof w->res->path, "%s", w->path);
    }
    return v;
}

static rpc_wire_verdict rpc_wire__message(rpc_wire__walk *w, const uint8_t *p, size_t len,
                                          const ProtobufCMessageDescriptor *desc, int depth)
{
    if (depth > RPC_WIRE__MAX_DEPTH)
        return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
    uint32_t counts[RPC_WIRE__MAX_FIELDS] = {0};
    bool counted = desc->n_fields <= RPC_WIRE__MAX_FIELDS;
    size_t at = 0;
    while (at < len) {
        uint64_t tag, n;
        size_t k = rpc_wire__varint(p + at, len - at, &tag);
        if (k == 0 || k > 5 || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
            return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
        at += k;
        unsigned number = (unsigned)(tag >> 3), wire = (unsigned)(tag & 7);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(desc, number);
        bool nested =
            f && (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE);
        switch (wire) {
        case 0:
            if (nested || (k = rpc_wire__varint(p + at, len - at, &n)) == 0)
                return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
            at += k;
            break;
        case 1:
        case 5: {
            size_t fixed = wire == 1 ? 8 : 4;
            if (nested || len - at < fixed)
                return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
            at += fixed;
            break;
        }
        case 2: {
            k = rpc_wire__varint(p + at, len - at, &n);
            if (k == 0 || n > len - at - k)
                return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
            at += k;
            if (nested) {
                size_t fi = (size_t)(f - desc->fields);
                long index =
                    f->label == PROTOBUF_C_LABEL_REPEATED && counted ? (long)counts[fi] : -1;
                if (counted)
                    counts[fi]++;
                size_t saved = rpc_wire__push(w, f->name, index);
                rpc_wire_verdict v;
                uint32_t cp = 0;
                if (f->type == PROTOBUF_C_TYPE_STRING) {
                    v = rpc_wire__text(p + at, (size_t)n, &cp);
                    if (v != RPC_WIRE_OK)
                        return rpc_wire__fail(w, v, cp);
                } else {
                    v = rpc_wire__message(w, p + at, (size_t)n, f->descriptor, depth + 1);
                    if (v != RPC_WIRE_OK)
                        return v;
                }
                w->pathlen = saved;
                w->path[saved] = '\0';
            }
            at += (size_t)n;
            break;
        }
        default: /* groups (3, 4) and the unused 6, 7: protobuf-c refuses them */
            return rpc_wire__fail(w, RPC_WIRE_MALFORMED, 0);
        }
    }
    return RPC_WIRE_OK;
}

rpc_wire_verdict rpc_wire_check(const uint8_t *buf, size_t len,
                                const ProtobufCMessageDescriptor *desc, rpc_wire_result *res)
{
    rpc_wire__walk w;
    w.path[0] = '\0';
    w.pathlen = 0;
    w.res = res;
    if (res)
        memset(res, 0, sizeof *res);
    return rpc_wire__message(&w, buf, len, desc, 0);
}

rpc_wire_verdict rpc_wire_check_buffer(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc,
                                       rpc_wire_result *res)
{
    if (!bb)
        return rpc_wire_check((const uint8_t *)"", 0, desc, res);
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb)) {
        if (res) {
            memset(res, 0, sizeof *res);
            res->verdict = RPC_WIRE_MALFORMED;
        }
        return RPC_WIRE_MALFORMED;
    }
    grpc_slice whole = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    rpc_wire_verdict v =
        rpc_wire_check(GRPC_SLICE_START_PTR(whole), GRPC_SLICE_LENGTH(whole), desc, res);
    grpc_slice_unref(whole);
    return v;
}

const char *rpc_wire_reason(rpc_wire_verdict v)
{
    switch (v) {
    case RPC_WIRE_OK:
        return NULL;
    case RPC_WIRE_BAD_UTF8:
        return "bad_utf8";
    case RPC_WIRE_CONTROL:
        return "bad_text";
    case RPC_WIRE_MALFORMED:
        break;
    }
    return "bad_request";
}

const char *rpc_wire_message(const rpc_wire_result *res, char *buf, size_t len)
{
    const char *field = res->path[0] ? res->path : "request";
    switch (res->verdict) {
    case RPC_WIRE_OK:
        snprintf(buf, len, "ok");
        break;
    case RPC_WIRE_BAD_UTF8:
        snprintf(buf, len, "field %s is not valid UTF-8", field);
        break;
    case RPC_WIRE_CONTROL:
        snprintf(buf, len, "field %s contains control character U+%04X", field,
                 (unsigned)res->codepoint);
        break;
    case RPC_WIRE_MALFORMED:
        snprintf(buf, len, "the request body is not a valid message (at %s)", field);
        break;
    }
    return buf;
}

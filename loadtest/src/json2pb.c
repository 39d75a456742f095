/*
 * json2pb.c — see json2pb.h. Every allocation is malloc, laid out exactly as
 * protobuf_c_message_free_unpacked expects, so that one call frees it all.
 */
#include "json2pb.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lt_j2p {
    char *err;
    size_t errlen;
    char path[256];
} lt_j2p;

static int lt_j2p__fail(lt_j2p *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lt_j2p__fail(lt_j2p *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s%s%s", c->path[0] ? c->path : "", c->path[0] ? ": " : "", msg);
    return -1;
}

long lt_base64_decode(const char *in, size_t len, unsigned char *out)
{
    uint32_t acc = 0;
    int bits = 0;
    long n = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = in[i];
        int v;
        if (ch >= 'A' && ch <= 'Z')
            v = ch - 'A';
        else if (ch >= 'a' && ch <= 'z')
            v = ch - 'a' + 26;
        else if (ch >= '0' && ch <= '9')
            v = ch - '0' + 52;
        else if (ch == '+' || ch == '-')
            v = 62;
        else if (ch == '/' || ch == '_')
            v = 63;
        else if (ch == '=') {
            /* Only trailing padding. */
            for (size_t j = i; j < len; j++)
                if (in[j] != '=')
                    return -1;
            break;
        } else
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

/* "game_id" matches "game_id" and "gameId". */
static bool lt_j2p__name_match(const char *proto_name, const char *key)
{
    if (strcmp(proto_name, key) == 0)
        return true;
    const char *p = proto_name, *k = key;
    while (*p && *k) {
        if (*p == '_') {
            p++;
            if (!*p || toupper((unsigned char)*p) != *k)
                return false;
        } else if (*p != *k) {
            return false;
        }
        p++;
        k++;
    }
    return *p == '\0' && *k == '\0';
}

/* A JSON number or numeric string as a 64-bit integer within [lo, hi]
 * (signed) or [0, uhi] (unsigned). */
static int lt_j2p__int(lt_j2p *c, const cJSON *j, bool is_unsigned, long long lo, long long hi,
                       unsigned long long uhi, long long *sv, unsigned long long *uv)
{
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d != floor(d))
            return lt_j2p__fail(c, "expected an integer, got %g", d);
        if (is_unsigned) {
            if (d < 0 || d > (double)uhi)
                return lt_j2p__fail(c, "%g is out of range", d);
            *uv = (unsigned long long)d;
        } else {
            if (d < (double)lo || d > (double)hi)
                return lt_j2p__fail(c, "%g is out of range", d);
            *sv = (long long)d;
        }
        return 0;
    }
    if (cJSON_IsString(j)) {
        const char *s = j->valuestring;
        char *end;
        errno = 0;
        if (is_unsigned) {
            if (*s == '-')
                return lt_j2p__fail(c, "\"%s\" is out of range", s);
            unsigned long long v = strtoull(s, &end, 10);
            if (errno || end == s || *end || v > uhi)
                return lt_j2p__fail(c, "\"%s\" is not an integer in range", s);
            *uv = v;
        } else {
            long long v = strtoll(s, &end, 10);
            if (errno || end == s || *end || v < lo || v > hi)
                return lt_j2p__fail(c, "\"%s\" is not an integer in range", s);
            *sv = v;
        }
        return 0;
    }
    return lt_j2p__fail(c, "expected a number");
}

static int lt_j2p__message(lt_j2p *c, const ProtobufCMessageDescriptor *desc, const cJSON *obj,
                           ProtobufCMessage *msg);

static size_t lt_j2p__elem_size(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    }
    return 0;
}

/* Stores one JSON value of field f's type at `slot`. */
static int lt_j2p__value(lt_j2p *c, const ProtobufCFieldDescriptor *f, const cJSON *j, void *slot)
{
    long long sv = 0;
    unsigned long long uv = 0;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (lt_j2p__int(c, j, false, INT32_MIN, INT32_MAX, 0, &sv, &uv) != 0)
            return -1;
        *(int32_t *)slot = (int32_t)sv;
        return 0;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (lt_j2p__int(c, j, false, INT64_MIN, INT64_MAX, 0, &sv, &uv) != 0)
            return -1;
        *(int64_t *)slot = (int64_t)sv;
        return 0;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (lt_j2p__int(c, j, true, 0, 0, UINT32_MAX, &sv, &uv) != 0)
            return -1;
        *(uint32_t *)slot = (uint32_t)uv;
        return 0;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        if (lt_j2p__int(c, j, true, 0, 0, UINT64_MAX, &sv, &uv) != 0)
            return -1;
        *(uint64_t *)slot = (uint64_t)uv;
        return 0;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double d;
        if (cJSON_IsNumber(j))
            d = j->valuedouble;
        else if (cJSON_IsString(j) &&
                 (!strcmp(j->valuestring, "NaN") || !strcmp(j->valuestring, "Infinity") ||
                  !strcmp(j->valuestring, "-Infinity")))
            d = strtod(j->valuestring, NULL);
        else
            return lt_j2p__fail(c, "expected a number");
        if (f->type == PROTOBUF_C_TYPE_FLOAT)
            *(float *)slot = (float)d;
        else
            *(double *)slot = d;
        return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (!cJSON_IsBool(j))
            return lt_j2p__fail(c, "expected true or false");
        *(protobuf_c_boolean *)slot = cJSON_IsTrue(j) ? 1 : 0;
        return 0;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        if (cJSON_IsString(j)) {
            const ProtobufCEnumValue *v =
                protobuf_c_enum_descriptor_get_value_by_name(ed, j->valuestring);
            if (v == NULL)
                return lt_j2p__fail(c, "\"%s\" is not a value of enum %s", j->valuestring,
                                    ed->name);
            *(int *)slot = v->value;
            return 0;
        }
        if (lt_j2p__int(c, j, false, INT32_MIN, INT32_MAX, 0, &sv, &uv) != 0)
            return -1;
        *(int *)slot = (int)sv; /* proto3 enums are open: unknown numbers are kept */
        return 0;
    }
    case PROTOBUF_C_TYPE_STRING:
        if (!cJSON_IsString(j))
            return lt_j2p__fail(c, "expected a string");
        if ((*(char **)slot = strdup(j->valuestring)) == NULL)
            return lt_j2p__fail(c, "out of memory");
        return 0;
    case PROTOBUF_C_TYPE_BYTES: {
        if (!cJSON_IsString(j))
            return lt_j2p__fail(c, "expected a base64 string");
        size_t len = strlen(j->valuestring);
        unsigned char *buf = malloc(len / 4 * 3 + 4);
        if (buf == NULL)
            return lt_j2p__fail(c, "out of memory");
        long n = lt_base64_decode(j->valuestring, len, buf);
        if (n < 0) {
            free(buf);
            return lt_j2p__fail(c, "not valid base64");
        }
        ProtobufCBinaryData *bd = slot;
        bd->data = buf;
        bd->len = (size_t)n;
        return 0;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessageDescriptor *md = f->descriptor;
        if (!cJSON_IsObject(j))
            return lt_j2p__fail(c, "expected an object (%s)", md->name);
        ProtobufCMessage *sub = calloc(1, md->sizeof_message);
        if (sub == NULL)
            return lt_j2p__fail(c, "out of memory");
        protobuf_c_message_init(md, sub);
        *(ProtobufCMessage **)slot = sub;
        return lt_j2p__message(c, md, j, sub);
    }
    }
    return lt_j2p__fail(c, "unsupported field type");
}

static int lt_j2p__message(lt_j2p *c, const ProtobufCMessageDescriptor *desc, const cJSON *obj,
                           ProtobufCMessage *msg)
{
    size_t base = strlen(c->path);
    for (const cJSON *it = obj->child; it; it = it->next) {
        const ProtobufCFieldDescriptor *f = NULL;
        for (unsigned i = 0; i < desc->n_fields; i++) {
            if (lt_j2p__name_match(desc->fields[i].name, it->string)) {
                f = &desc->fields[i];
                break;
            }
        }
        snprintf(c->path + base, sizeof(c->path) - base, "%s%s", base ? "." : "", it->string);
        if (f == NULL)
            return lt_j2p__fail(c, "no such field in %s", desc->name);
        if (cJSON_IsNull(it))
            continue; /* null: the default, as protojson does */
        char *field = (char *)msg + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            if (!cJSON_IsArray(it))
                return lt_j2p__fail(c, "expected an array");
            size_t n = (size_t)cJSON_GetArraySize(it), esz = lt_j2p__elem_size(f);
            void *arr = n ? calloc(n, esz) : NULL;
            if (n && arr == NULL)
                return lt_j2p__fail(c, "out of memory");
            *(void **)field = arr;
            size_t *count = (size_t *)((char *)msg + f->quantifier_offset);
            *count = 0;
            size_t k = 0;
            size_t plen = strlen(c->path);
            for (const cJSON *e = it->child; e; e = e->next, k++) {
                snprintf(c->path + plen, sizeof(c->path) - plen, "[%zu]", k);
                /* Count first: free_unpacked then frees what was stored. */
                *count = k + 1;
                if (lt_j2p__value(c, f, e, (char *)arr + k * esz) != 0) {
                    if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING ||
                        f->type == PROTOBUF_C_TYPE_BYTES) {
                        /* A failed element may be half built; leave it for free_unpacked only
                         * when it is a message (which frees itself), else drop it. */
                        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
                            *count = k;
                    }
                    return -1;
                }
            }
            c->path[plen] = '\0';
            continue;
        }
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            char *old = *(char **)field;
            if (old && old != (char *)f->default_value && old != protobuf_c_empty_string)
                free(old);
            *(char **)field = NULL;
        }
        if (lt_j2p__value(c, f, it, field) != 0) {
            if (f->type == PROTOBUF_C_TYPE_STRING && *(char **)field == NULL)
                *(char **)field =
                    f->default_value ? (char *)f->default_value : (char *)protobuf_c_empty_string;
            return -1;
        }
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            *(uint32_t *)((char *)msg + f->quantifier_offset) = f->id;
        else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset &&
                 f->type != PROTOBUF_C_TYPE_MESSAGE && f->type != PROTOBUF_C_TYPE_STRING)
            *(protobuf_c_boolean *)((char *)msg + f->quantifier_offset) = 1;
    }
    c->path[base] = '\0';
    return 0;
}

int lt_json_to_message(const ProtobufCMessageDescriptor *desc, const char *json,
                       ProtobufCMessage **out, char *err, size_t errlen)
{
    lt_j2p c = {.err = err, .errlen = errlen};
    *out = NULL;
    ProtobufCMessage *msg = calloc(1, desc->sizeof_message);
    if (msg == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    protobuf_c_message_init(desc, msg);
    const char *p = json ? json : "";
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0') {
        *out = msg;
        return 0;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (root == NULL) {
        size_t off = end ? (size_t)(end - json) : 0;
        snprintf(err, errlen, "malformed JSON near offset %zu", off);
        free(msg);
        return -1;
    }
    int rc = 0;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "the data must be a JSON object for %s", desc->name);
        rc = -1;
    } else {
        rc = lt_j2p__message(&c, desc, root, msg);
    }
    cJSON_Delete(root);
    if (rc != 0) {
        protobuf_c_message_free_unpacked(msg, NULL);
        return -1;
    }
    *out = msg;
    return 0;
}

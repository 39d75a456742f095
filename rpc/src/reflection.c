/*
 * reflection.c — grpc.reflection.v1alpha and v1 ServerReflection over the
 * descriptor set protoc wrote at build time (proto/CMakeLists.txt), so
 * grpcurl- and ghz-style tools work without the .proto files.
 *
 * The descriptor set is a FileDescriptorSet; rather than depend on
 * descriptor.proto we read the few fields we need straight off the wire
 * (file name, package, dependencies, message/enum/service names, method
 * names). The v1 and v1alpha messages are wire-identical, so one
 * implementation serves both paths.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "internal.h"

extern const unsigned char scrabble_descriptor_set[];
extern const size_t scrabble_descriptor_set_len;

#define RPC__REFL_MAX_FILES 32
#define RPC__REFL_MAX_DEPS 16
#define RPC__REFL_MAX_SYMBOLS 1024

typedef struct rpc__refl_file {
    const uint8_t *bytes; /* the serialized FileDescriptorProto */
    size_t len;
    char name[128];
    char package[64];
    int deps[RPC__REFL_MAX_DEPS]; /* indexes of dependency files */
    int ndeps;
    char dep_names[RPC__REFL_MAX_DEPS][128];
} rpc__refl_file;

typedef struct rpc__refl_symbol {
    char name[160];
    int file;
} rpc__refl_symbol;

typedef struct rpc__reflection {
    rpc__refl_file files[RPC__REFL_MAX_FILES];
    int nfiles;
    rpc__refl_symbol symbols[RPC__REFL_MAX_SYMBOLS];
    int nsymbols;
} rpc__reflection;

typedef struct rpc__reflection_ctx {
    rpc_server *server;
    const rpc__reflection *index;
} rpc__reflection_ctx;

/* ---- a minimal protobuf wire reader ---- */

typedef struct rpc__wire {
    const uint8_t *p, *end;
} rpc__wire;

static int rpc__wire_varint(rpc__wire *w, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && w->p < w->end; shift += 7) {
        uint8_t b = *w->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* Next field: its number, and for length-delimited fields the bytes. Other
 * wire types are skipped (*data NULL). Returns -1 at the end or on error. */
static int rpc__wire_next(rpc__wire *w, uint32_t *field, const uint8_t **data, size_t *len)
{
    uint64_t key, v;
    if (w->p >= w->end || rpc__wire_varint(w, &key) != 0)
        return -1;
    *field = (uint32_t)(key >> 3);
    *data = NULL;
    *len = 0;
    switch (key & 7) {
    case 0:
        return rpc__wire_varint(w, &v);
    case 1:
        if (w->end - w->p < 8)
            return -1;
        w->p += 8;
        return 0;
    case 2:
        if (rpc__wire_varint(w, &v) != 0 || v > (uint64_t)(w->end - w->p))
            return -1;
        *data = w->p;
        *len = (size_t)v;
        w->p += v;
        return 0;
    case 5:
        if (w->end - w->p < 4)
            return -1;
        w->p += 4;
        return 0;
    default:
        return -1;
    }
}

static void rpc__copy_str(char *dst, size_t cap, const uint8_t *src, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* The `name` (field 1) of a nested descriptor message. */
static void rpc__wire_name(const uint8_t *p, size_t len, char *out, size_t cap)
{
    rpc__wire w = {p, p + len};
    uint32_t f;
    const uint8_t *d;
    size_t n;
    out[0] = '\0';
    while (rpc__wire_next(&w, &f, &d, &n) == 0)
        if (f == 1 && d) {
            rpc__copy_str(out, cap, d, n);
            return;
        }
}

static void rpc__symbol_add(rpc__reflection *r, const char *prefix, const char *name, int file)
{
    if (r->nsymbols >= RPC__REFL_MAX_SYMBOLS || name[0] == '\0')
        return;
    rpc__refl_symbol *s = &r->symbols[r->nsymbols++];
    if (prefix[0])
        snprintf(s->name, sizeof(s->name), "%s.%s", prefix, name);
    else
        snprintf(s->name, sizeof(s->name), "%s", name);
    s->file = file;
}

/* DescriptorProto: name 1, nested_type 3, enum_type 4. */
static void rpc__index_message(rpc__reflection *r, const char *prefix, const uint8_t *p, size_t len,
                               int file)
{
    char name[96], full[160];
    rpc__wire_name(p, len, name, sizeof(name));
    rpc__symbol_add(r, prefix, name, file);
    snprintf(full, sizeof(full), "%s%s%s", prefix, prefix[0] ? "." : "", name);
    rpc__wire w = {p, p + len};
    uint32_t f;
    const uint8_t *d;
    size_t n;
    while (rpc__wire_next(&w, &f, &d, &n) == 0) {
        if (f == 3 && d)
            rpc__index_message(r, full, d, n, file);
        else if (f == 4 && d) {
            char ename[96];
            rpc__wire_name(d, n, ename, sizeof(ename));
            rpc__symbol_add(r, full, ename, file);
        }
    }
}

/* ServiceDescriptorProto: name 1, method 2 (MethodDescriptorProto name 1). */
static void rpc__index_service(rpc__reflection *r, const char *pkg, const uint8_t *p, size_t len,
                               int file)
{
    char name[96], full[160];
    rpc__wire_name(p, len, name, sizeof(name));
    rpc__symbol_add(r, pkg, name, file);
    snprintf(full, sizeof(full), "%s%s%s", pkg, pkg[0] ? "." : "", name);
    rpc__wire w = {p, p + len};
    uint32_t f;
    const uint8_t *d;
    size_t n;
    while (rpc__wire_next(&w, &f, &d, &n) == 0) {
        if (f == 2 && d) {
            char mname[96];
            rpc__wire_name(d, n, mname, sizeof(mname));
            rpc__symbol_add(r, full, mname, file);
        }
    }
}

/* FileDescriptorProto: name 1, package 2, dependency 3, message_type 4,
 * enum_type 5, service 6. */
static int rpc__index_file(rpc__reflection *r, const uint8_t *p, size_t len)
{
    if (r->nfiles >= RPC__REFL_MAX_FILES)
        return -1;
    int idx = r->nfiles++;
    rpc__refl_file *file = &r->files[idx];
    file->bytes = p;
    file->len = len;
    rpc__wire w = {p, p + len};
    uint32_t f;
    const uint8_t *d;
    size_t n;
    /* Package first: symbols need it. */
    while (rpc__wire_next(&w, &f, &d, &n) == 0) {
        if (f == 1 && d)
            rpc__copy_str(file->name, sizeof(file->name), d, n);
        else if (f == 2 && d)
            rpc__copy_str(file->package, sizeof(file->package), d, n);
        else if (f == 3 && d && file->ndeps < RPC__REFL_MAX_DEPS)
            rpc__copy_str(file->dep_names[file->ndeps++], sizeof(file->dep_names[0]), d, n);
    }
    w = (rpc__wire){p, p + len};
    while (rpc__wire_next(&w, &f, &d, &n) == 0) {
        if (f == 4 && d)
            rpc__index_message(r, file->package, d, n, idx);
        else if (f == 5 && d) {
            char ename[96];
            rpc__wire_name(d, n, ename, sizeof(ename));
            rpc__symbol_add(r, file->package, ename, idx);
        } else if (f == 6 && d)
            rpc__index_service(r, file->package, d, n, idx);
    }
    return 0;
}

static int rpc__file_by_name(const rpc__reflection *r, const char *name)
{
    for (int i = 0; i < r->nfiles; i++)
        if (strcmp(r->files[i].name, name) == 0)
            return i;
    return -1;
}

static int rpc__reflection_load(rpc__reflection *r)
{
    rpc__wire w = {scrabble_descriptor_set, scrabble_descriptor_set + scrabble_descriptor_set_len};
    uint32_t f;
    const uint8_t *d;
    size_t n;
    while (rpc__wire_next(&w, &f, &d, &n) == 0)
        if (f == 1 && d && rpc__index_file(r, d, n) != 0)
            return -1;
    for (int i = 0; i < r->nfiles; i++) {
        rpc__refl_file *file = &r->files[i];
        for (int k = 0; k < file->ndeps; k++)
            file->deps[k] = rpc__file_by_name(r, file->dep_names[k]);
    }
    return r->nfiles > 0 ? 0 : -1;
}

/* ---- answering ---- */

/* Adds file `idx` and, depth first, its dependencies (each once). */
static void rpc__collect(const rpc__reflection *r, int idx, bool *seen, int *order, int *n)
{
    if (idx < 0 || seen[idx])
        return;
    seen[idx] = true;
    order[(*n)++] = idx;
    for (int k = 0; k < r->files[idx].ndeps; k++)
        rpc__collect(r, r->files[idx].deps[k], seen, order, n);
}

static Grpc__Reflection__V1alpha__ServerReflectionResponse *
rpc__files_response(const rpc__reflection *r, int idx, rpc_arena *a,
                    Grpc__Reflection__V1alpha__ServerReflectionResponse *resp)
{
    bool seen[RPC__REFL_MAX_FILES] = {0};
    int order[RPC__REFL_MAX_FILES], n = 0;
    rpc__collect(r, idx, seen, order, &n);
    Grpc__Reflection__V1alpha__FileDescriptorResponse *fdr = rpc_arena_alloc(a, sizeof(*fdr));
    grpc__reflection__v1alpha__file_descriptor_response__init(fdr);
    fdr->n_file_descriptor_proto = (size_t)n;
    fdr->file_descriptor_proto = rpc_arena_calloc(a, (size_t)n, sizeof(ProtobufCBinaryData));
    for (int i = 0; i < n; i++) {
        fdr->file_descriptor_proto[i].data = (uint8_t *)r->files[order[i]].bytes;
        fdr->file_descriptor_proto[i].len = r->files[order[i]].len;
    }
    resp->message_response_case =
        GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
    resp->file_descriptor_response = fdr;
    return resp;
}

static Grpc__Reflection__V1alpha__ServerReflectionResponse *
rpc__error_response(rpc_arena *a, Grpc__Reflection__V1alpha__ServerReflectionResponse *resp,
                    int code, const char *what)
{
    Grpc__Reflection__V1alpha__ErrorResponse *er = rpc_arena_alloc(a, sizeof(*er));
    grpc__reflection__v1alpha__error_response__init(er);
    er->error_code = code;
    er->error_message = rpc_arena_strdup(a, what);
    resp->message_response_case =
        GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
    resp->error_response = er;
    return resp;
}

static ProtobufCMessage *rpc__reflection_answer(rpc_call *call, const ProtobufCMessage *msg,
                                                rpc_arena *a, void *ctx)
{
    const rpc__reflection_ctx *rc = ctx;
    const rpc__reflection *r = rc->index;
    const Grpc__Reflection__V1alpha__ServerReflectionRequest *req = (const void *)msg;
    Grpc__Reflection__V1alpha__ServerReflectionResponse *resp = rpc_arena_alloc(a, sizeof(*resp));
    grpc__reflection__v1alpha__server_reflection_response__init(resp);
    resp->valid_host = req->host;
    resp->original_request = (Grpc__Reflection__V1alpha__ServerReflectionRequest *)req;

    switch (req->message_request_case) {
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES: {
        const char *names[32];
        size_t n = rpc__server_service_names(rc->server, names, 32);
        Grpc__Reflection__V1alpha__ListServiceResponse *ls = rpc_arena_alloc(a, sizeof(*ls));
        grpc__reflection__v1alpha__list_service_response__init(ls);
        ls->service = rpc_arena_calloc(a, n, sizeof(*ls->service));
        for (size_t i = 0; i < n; i++) {
            Grpc__Reflection__V1alpha__ServiceResponse *sr = rpc_arena_alloc(a, sizeof(*sr));
            grpc__reflection__v1alpha__service_response__init(sr);
            sr->name = (char *)names[i];
            ls->service[ls->n_service++] = sr;
        }
        resp->message_response_case =
            GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
        resp->list_services_response = ls;
        return &resp->base;
    }
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME: {
        int idx = rpc__file_by_name(r, req->file_by_filename);
        if (idx < 0)
            return &rpc__error_response(a, resp, GRPC_STATUS_NOT_FOUND, "file not found")->base;
        return &rpc__files_response(r, idx, a, resp)->base;
    }
    case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL: {
        for (int i = 0; i < r->nsymbols; i++)
            if (strcmp(r->symbols[i].name, req->file_containing_symbol) == 0)
                return &rpc__files_response(r, r->symbols[i].file, a, resp)->base;
        return &rpc__error_response(a, resp, GRPC_STATUS_NOT_FOUND, "symbol not found")->base;
    }
    default:
        return &rpc__error_response(a, resp, GRPC_STATUS_UNIMPLEMENTED,
                                    "extensions are not used by this API")
                    ->base;
    }
}

/* The index is immutable once loaded and shared by every server in the
 * process; each server gets a small context naming itself (for
 * list_services), freed by rpc__reflection_free. */

static pthread_once_t rpc__refl_once = PTHREAD_ONCE_INIT;
static rpc__reflection *rpc__refl_index;

static void rpc__reflection_load_once(void)
{
    rpc__reflection *r = calloc(1, sizeof(*r));
    if (r && rpc__reflection_load(r) == 0)
        rpc__refl_index = r;
    else
        free(r);
}

void *rpc__reflection_register(rpc_server *s)
{
    pthread_once(&rpc__refl_once, rpc__reflection_load_once);
    if (rpc__refl_index == NULL)
        return NULL;
    rpc__reflection_ctx *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return NULL;
    ctx->server = s;
    ctx->index = rpc__refl_index;
    const ProtobufCMessageDescriptor *in =
        &grpc__reflection__v1alpha__server_reflection_request__descriptor;
    if (rpc__server_add_bidi(s, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                             in, rpc__reflection_answer, ctx) != RPC_OK ||
        rpc__server_add_bidi(s, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", in,
                             rpc__reflection_answer, ctx) != RPC_OK) {
        free(ctx);
        return NULL;
    }
    return ctx;
}

void rpc__reflection_free(void *ctx)
{
    free(ctx);
}

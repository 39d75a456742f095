/*
 * methods.h — the gRPC methods the driver knows, from the compiled-in
 * protobuf-c service descriptors (scrabble.v1 Edge/Game/Store and
 * grpc.health.v1.Health): ghz mode looks `--call` up here instead of asking
 * server reflection.
 */
#ifndef LT_METHODS_H
#define LT_METHODS_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct lt_method {
    const ProtobufCServiceDescriptor *service;
    const ProtobufCMethodDescriptor *method;
    bool server_streaming;
    char path[160]; /* "/pkg.Service/Method" */
} lt_method;

/* Accepts "pkg.Service/Method", "pkg.Service.Method" and a leading '/'.
 * Returns 0, or -1 with a message (listing the services) in err. */
int lt_method_lookup(const char *call, lt_method *out, char *err, size_t errlen);

/* "grpc_status_code" -> ghz's (Go's) code name: "OK", "Canceled", ... */
const char *lt_go_code_name(int code);

#endif

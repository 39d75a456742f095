/*
 * methods.c — see methods.h.
 */
#include "methods.h"

#include <stdio.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "scrabble/v1/edge.pb-c.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"

static const ProtobufCServiceDescriptor *const lt_services[] = {
    &scrabble__v1__edge__descriptor,
    &scrabble__v1__game__descriptor,
    &scrabble__v1__store__descriptor,
    &grpc__health__v1__health__descriptor,
};

/* protobuf-c's method descriptors do not say whether a method streams; the
 * contract's server-streaming methods are listed here. */
static const char *const lt_streaming[] = {
    "scrabble.v1.Edge/Subscribe",
    "scrabble.v1.Edge/Watch",
    "grpc.health.v1.Health/Watch",
};

int lt_method_lookup(const char *call, lt_method *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char buf[160];
    if (call == NULL || call[0] == '\0') {
        snprintf(err, errlen, "--call is required (e.g. --call scrabble.v1.Edge/GetState)");
        return -1;
    }
    if (call[0] == '/')
        call++;
    if (strlen(call) >= sizeof(buf)) {
        snprintf(err, errlen, "--call is too long");
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", call);
    char *sep = strrchr(buf, '/');
    if (sep == NULL)
        sep = strrchr(buf, '.');
    if (sep == NULL || sep == buf || sep[1] == '\0') {
        snprintf(err, errlen, "--call '%s' is not of the form package.Service/Method", call);
        return -1;
    }
    *sep = '\0';
    const char *svc_name = buf, *meth_name = sep + 1;
    for (size_t i = 0; i < sizeof(lt_services) / sizeof(lt_services[0]); i++) {
        const ProtobufCServiceDescriptor *s = lt_services[i];
        if (strcmp(s->name, svc_name) != 0)
            continue;
        const ProtobufCMethodDescriptor *m =
            protobuf_c_service_descriptor_get_method_by_name(s, meth_name);
        if (m == NULL) {
            int n = snprintf(err, errlen, "unknown method '%s' of service %s; it has:", meth_name,
                             s->name);
            for (unsigned k = 0; k < s->n_methods && n > 0 && (size_t)n < errlen; k++)
                n += snprintf(err + n, errlen - (size_t)n, " %s", s->methods[k].name);
            return -1;
        }
        out->service = s;
        out->method = m;
        snprintf(out->path, sizeof(out->path), "/%s/%s", s->name, m->name);
        for (size_t k = 0; k < sizeof(lt_streaming) / sizeof(lt_streaming[0]); k++)
            if (strcmp(out->path + 1, lt_streaming[k]) == 0)
                out->server_streaming = true;
        return 0;
    }
    int n = snprintf(err, errlen, "unknown service '%s'; known:", svc_name);
    for (size_t i = 0;
         i < sizeof(lt_services) / sizeof(lt_services[0]) && n > 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, " %s", lt_services[i]->name);
    return -1;
}

const char *lt_go_code_name(int code)
{
    static const char *const names[] = {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    };
    if (code < 0 || code > 16)
        return "Unknown";
    return names[code];
}

/* libFuzzer target: the string gate (rpc/src/wire_check.c). The first byte
 * picks an Edge request type, the rest is the wire message. Besides "no
 * crash", it checks the gate's promise: when the gate passes a message and
 * protobuf-c decodes it, every decoded string is valid UTF-8 without a
 * control character (so none was cut short by a NUL). */
#include "rpc/wire_check.h"
#include "scrabble/v1/edge.pb-c.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz__strings_ok(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *base = (const char *)m + f->offset;
        size_t n = 1;
        void *const *items = (void *const *)base;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            n = *(const size_t *)((const char *)m + f->quantifier_offset);
            items = *(void *const *const *)base;
        }
        for (size_t k = 0; k < n; k++) {
            const void *v = items[k];
            if (!v)
                continue;
            if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                fuzz__strings_ok(v);
                continue;
            }
            const char *s = v;
            size_t len = strlen(s);
            if (rpc_utf8_len(s, len) < 0)
                abort();
            for (size_t j = 0; j < len; j++) {
                unsigned char c = (unsigned char)s[j];
                if (c < 0x20 || c == 0x7F ||
                    (c == 0xC2 && j + 1 < len && (unsigned char)s[j + 1] <= 0x9F))
                    abort();
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const ProtobufCServiceDescriptor *svc = &scrabble__v1__edge__descriptor;
    const ProtobufCMessageDescriptor *d = svc->methods[data[0] % svc->n_methods].input;
    rpc_wire_result r;
    rpc_wire_verdict v = rpc_wire_check(data + 1, size - 1, d, &r);
    if (v != r.verdict)
        abort();
    char msg[256];
    rpc_wire_message(&r, msg, sizeof msg);
    if (v != RPC_WIRE_OK)
        return 0;
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, size - 1, data + 1);
    if (m) {
        fuzz__strings_ok(m);
        protobuf_c_message_free_unpacked(m, NULL);
    }
    return 0;
}

/*
 * codec.c — protobuf-c messages to and from gRPC byte buffers.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

grpc_byte_buffer *rpc_pack(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(len);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

ProtobufCMessage *rpc_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *bb,
                             ProtobufCAllocator *alloc)
{
    if (bb == NULL)
        return protobuf_c_message_unpack(desc, alloc, 0, (const uint8_t *)"");

    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return NULL;
    /* A single-slice buffer (the common case) is decoded in place; only a
     * buffer split over several slices is copied into one. */
    grpc_slice whole = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, alloc, GRPC_SLICE_LENGTH(whole),
                                                      GRPC_SLICE_START_PTR(whole));
    grpc_slice_unref(whole);
    return msg;
}

bool rpc_message_strip_unknown(ProtobufCMessage *msg)
{
    if (msg == NULL)
        return false;
    bool found = msg->n_unknown_fields > 0;
    /* The unknown fields' bytes live in the decoder's allocator (the
     * call's arena): dropping the references is enough. */
    msg->n_unknown_fields = 0;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *at = (const char *)msg + f->offset;
        /* A oneof's members share storage: only the chosen one is a message. */
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)((const char *)msg + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)msg + f->quantifier_offset);
            ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)at;
            for (size_t k = 0; k < n; k++)
                found |= rpc_message_strip_unknown(items[k]);
        } else {
            found |= rpc_message_strip_unknown(*(ProtobufCMessage *const *)at);
        }
    }
    return found;
}

const char *rpc_method_path(const ProtobufCServiceDescriptor *svc, const char *name, char *buf,
                            size_t len)
{
    /* protoc-c's service `name` is the fully qualified "package.Service". */
    snprintf(buf, len, "/%s/%s", svc->name, name);
    return buf;
}

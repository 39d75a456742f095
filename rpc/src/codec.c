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

const char *rpc_method_path(const ProtobufCServiceDescriptor *svc, const char *name, char *buf,
                            size_t len)
{
    /* protoc-c's service `name` is the fully qualified "package.Service". */
    snprintf(buf, len, "/%s/%s", svc->name, name);
    return buf;
}

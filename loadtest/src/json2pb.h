/*
 * json2pb.h — JSON text to a protobuf-c message, walking the message's
 * ProtobufCFieldDescriptors (the way ghz's -d works with reflection): field
 * names in proto or lowerCamel spelling; scalars (64-bit ones also as
 * strings), strings, bools, enums by name or number, nested messages,
 * repeated fields as arrays, bytes as base64. Unknown fields, wrong types and
 * out-of-range numbers are errors with a message naming the field.
 */
#ifndef LT_JSON2PB_H
#define LT_JSON2PB_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

/* Parses `json` (NUL-terminated; NULL or "" is the empty message) into a new
 * message of type `desc`. Returns 0 and *out (free with
 * protobuf_c_message_free_unpacked(*out, NULL)), or -1 with err set. */
int lt_json_to_message(const ProtobufCMessageDescriptor *desc, const char *json,
                       ProtobufCMessage **out, char *err, size_t errlen);

/* Standard base64 (padding optional; the URL-safe alphabet accepted too).
 * Returns the decoded length, or -1. out needs (len / 4 + 1) * 3 bytes. */
long lt_base64_decode(const char *in, size_t len, unsigned char *out);

#endif

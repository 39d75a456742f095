/* libFuzzer target: the load driver's JSON-to-protobuf reader (ghz's -d).
 * Every input is read as a SubmitPlayRequest (nested and repeated fields,
 * enums, 64-bit numbers) and as an InviteRequest; what it accepts must pack
 * and unpack again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json2pb.h"
#include "scrabble/v1/edge.pb-c.h"

static void fuzz_json2pb__one(const ProtobufCMessageDescriptor *desc, const char *json)
{
    ProtobufCMessage *m = NULL;
    char err[256];
    if (lt_json_to_message(desc, json, &m, err, sizeof err) != 0)
        return;
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1);
    protobuf_c_message_pack(m, buf);
    ProtobufCMessage *back = protobuf_c_message_unpack(desc, NULL, len, buf);
    if (!back)
        abort();
    protobuf_c_message_free_unpacked(back, NULL);
    protobuf_c_message_free_unpacked(m, NULL);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    fuzz_json2pb__one(&scrabble__v1__submit_play_request__descriptor, s);
    fuzz_json2pb__one(&scrabble__v1__invite_request__descriptor, s);
    free(s);
    return 0;
}

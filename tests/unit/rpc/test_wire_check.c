/* Unit tests for rpc/src/wire_check.c: the string gate on raw wire bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/wire_check.h"
#include "scrabble/v1/edge.pb-c.h"

/* A tiny wire writer: tests spell out bytes protobuf-c could not produce
 * from C strings (an embedded NUL) or would never produce (bad wire). */
typedef struct wbuf {
    uint8_t b[2048];
    size_t n;
} wbuf;

static void w_varint(wbuf *w, uint64_t v)
{
    do {
        uint8_t c = v & 0x7F;
        v >>= 7;
        w->b[w->n++] = c | (v ? 0x80 : 0);
    } while (v);
}

static void w_bytes(wbuf *w, unsigned field, const void *p, size_t n)
{
    w_varint(w, (uint64_t)field << 3 | 2);
    w_varint(w, n);
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

#define W_STR(w, field, lit) w_bytes(w, field, lit, sizeof(lit) - 1)

static rpc_wire_verdict check(const wbuf *w, const ProtobufCMessageDescriptor *d,
                              rpc_wire_result *r)
{
    return rpc_wire_check(w->b, w->n, d, r);
}

static const ProtobufCMessageDescriptor *const login = &scrabble__v1__login_request__descriptor;

static void test_valid_login(void **state)
{
    wbuf w = {.n = 0};
    W_STR(&w, 1, "alice");
    W_STR(&w, 2, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\x89");
    rpc_wire_result r;
    assert_int_equal(check(&w, login, &r), RPC_WIRE_OK);
    assert_string_equal(r.path, "");
    assert_null(rpc_wire_reason(RPC_WIRE_OK));
}

static void test_empty_message(void **state)
{
    rpc_wire_result r;
    assert_int_equal(rpc_wire_check((const uint8_t *)"", 0, login, &r), RPC_WIRE_OK);
    assert_int_equal(rpc_wire_check_buffer(NULL, login, &r), RPC_WIRE_OK);
}

static void test_nul_truncation(void **state)
{
    wbuf w = {.n = 0};
    W_STR(&w, 1, "alice\0anything");
    rpc_wire_result r;
    assert_int_equal(check(&w, login, &r), RPC_WIRE_CONTROL);
    assert_string_equal(r.path, "handle");
    assert_int_equal(r.codepoint, 0);
    assert_string_equal(rpc_wire_reason(r.verdict), "bad_text");
    char msg[160];
    assert_string_equal(rpc_wire_message(&r, msg, sizeof msg),
                        "field handle contains control character U+0000");
}

static void test_controls(void **state)
{
    static const struct {
        const char *s;
        size_t n;
        uint32_t cp;
    } cases[] = {
        {"a\nb", 3, 0x0A},     {"\t", 1, 0x09},         {"x\x1f", 2, 0x1F},    {"\x7f", 1, 0x7F},
        {"\xc2\x80", 2, 0x80}, {"ok\xc2\x85", 4, 0x85}, {"\xc2\x9f", 2, 0x9F},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wbuf w = {.n = 0};
        w_bytes(&w, 2, cases[i].s, cases[i].n);
        rpc_wire_result r;
        assert_int_equal(check(&w, login, &r), RPC_WIRE_CONTROL);
        assert_string_equal(r.path, "password");
        assert_int_equal(r.codepoint, cases[i].cp);
    }
    /* U+00A0 (no-break space) is not a control character: handle rules
     * are the store's business. */
    wbuf w = {.n = 0};
    W_STR(&w, 2, "\xc2\xa0");
    assert_int_equal(check(&w, login, NULL), RPC_WIRE_OK);
}

static void test_bad_utf8(void **state)
{
    static const char *const bad[] = {
        "\xc3",             /* truncated */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong */
        "\xed\xa0\x80",     /* surrogate */
        "\xf4\x90\x80\x80", /* > U+10FFFF */
        "\x80",             /* lone continuation */
        "\xff",
        "caf\xe9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wbuf w = {.n = 0};
        W_STR(&w, 1, "bob");
        w_bytes(&w, 1, bad[i], strlen(bad[i]));
        rpc_wire_result r;
        assert_int_equal(check(&w, login, &r), RPC_WIRE_BAD_UTF8);
        assert_string_equal(r.path, "handle");
        assert_string_equal(rpc_wire_reason(r.verdict), "bad_utf8");
    }
}

static void test_repeated_index(void **state)
{
    wbuf w = {.n = 0};
    W_STR(&w, 1, "bob");
    W_STR(&w, 2, "wamerican");
    W_STR(&w, 1, "car\xff");
    rpc_wire_result r;
    assert_int_equal(check(&w, &scrabble__v1__invite_request__descriptor, &r), RPC_WIRE_BAD_UTF8);
    assert_string_equal(r.path, "invitee_handles[1]");
}

static void test_nested(void **state)
{
    wbuf p0 = {.n = 0}, p1 = {.n = 0}, p2 = {.n = 0}, w = {.n = 0};
    W_STR(&p0, 3, "A");
    W_STR(&p1, 3, "B");
    W_STR(&p2, 3, "C\0");
    w_varint(&w, 1 << 3);
    w_varint(&w, 42); /* game_id */
    w_bytes(&w, 2, p0.b, p0.n);
    w_bytes(&w, 2, p1.b, p1.n);
    rpc_wire_result r;
    assert_int_equal(check(&w, &scrabble__v1__evaluate_request__descriptor, &r), RPC_WIRE_OK);
    w_bytes(&w, 2, p2.b, p2.n);
    assert_int_equal(check(&w, &scrabble__v1__evaluate_request__descriptor, &r), RPC_WIRE_CONTROL);
    assert_string_equal(r.path, "placements[2].letter");
}

static void test_unknown_fields_skipped(void **state)
{
    wbuf w = {.n = 0};
    W_STR(&w, 1, "alice");
    W_STR(&w, 9, "\xff\x00"); /* unknown: decodes to nothing */
    w_varint(&w, 10 << 3 | 0);
    w_varint(&w, 1234567);
    w_varint(&w, 11 << 3 | 1);
    memset(w.b + w.n, 0, 8);
    w.n += 8;
    w_varint(&w, 12 << 3 | 5);
    memset(w.b + w.n, 0, 4);
    w.n += 4;
    assert_int_equal(check(&w, login, NULL), RPC_WIRE_OK);
}

static void test_malformed(void **state)
{
    rpc_wire_result r;
    wbuf w = {.n = 0};
    w_varint(&w, 1 << 3 | 0); /* handle sent as a varint */
    w_varint(&w, 5);
    assert_int_equal(check(&w, login, &r), RPC_WIRE_MALFORMED);
    assert_string_equal(rpc_wire_reason(r.verdict), "bad_request");

    wbuf t = {.n = 0};
    W_STR(&t, 1, "alice");
    t.n -= 2; /* length says 5, 3 bytes follow */
    assert_int_equal(check(&t, login, &r), RPC_WIRE_MALFORMED);

    wbuf g = {.n = 0};
    w_varint(&g, 7 << 3 | 3); /* start group */
    assert_int_equal(check(&g, login, &r), RPC_WIRE_MALFORMED);

    wbuf z = {.n = 0};
    w_varint(&z, 0 << 3 | 2); /* field number 0 */
    w_varint(&z, 0);
    assert_int_equal(check(&z, login, &r), RPC_WIRE_MALFORMED);

    const uint8_t longvar[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(
        rpc_wire_check(longvar, sizeof longvar, &scrabble__v1__list_chat_request__descriptor, &r),
        RPC_WIRE_MALFORMED);
    const uint8_t fixed_short[] = {0x09, 0, 0, 0};
    assert_int_equal(rpc_wire_check(fixed_short, sizeof fixed_short, login, &r),
                     RPC_WIRE_MALFORMED);
}

/* What passes the gate decodes to C strings that are the whole string. */
static void test_agrees_with_decoder(void **state)
{
    Scrabble__V1__LoginRequest m = SCRABBLE__V1__LOGIN_REQUEST__INIT;
    m.handle = "\xc3\xa9mile";
    m.password = "correct horse";
    uint8_t buf[128];
    size_t n = protobuf_c_message_pack(&m.base, buf);
    assert_int_equal(rpc_wire_check(buf, n, login, NULL), RPC_WIRE_OK);
    Scrabble__V1__LoginRequest *back = scrabble__v1__login_request__unpack(NULL, n, buf);
    assert_non_null(back);
    assert_string_equal(back->handle, m.handle);
    scrabble__v1__login_request__free_unpacked(back, NULL);
}

static void test_utf8_len(void **state)
{
    assert_int_equal(rpc_utf8_len("", 0), 0);
    assert_int_equal(rpc_utf8_len("abc", 3), 3);
    assert_int_equal(rpc_utf8_len("\xc3\xa9", 2), 1);
    assert_int_equal(rpc_utf8_len("\xe2\x82\xac", 3), 1);
    assert_int_equal(rpc_utf8_len("\xf0\x9f\x8e\x89", 4), 1);
    assert_int_equal(rpc_utf8_len("a\0b", 3), 3); /* NUL is UTF-8; the gate refuses it */
    assert_int_equal(rpc_utf8_len("\xc3", 1), -1);
    assert_int_equal(rpc_utf8_len("\xc0\xaf", 2), -1);
    assert_int_equal(rpc_utf8_len("\xe0\x80\xaf", 3), -1);
    assert_int_equal(rpc_utf8_len("\xed\xa0\x80", 3), -1);
    assert_int_equal(rpc_utf8_len("\xf4\x90\x80\x80", 4), -1);
    assert_int_equal(rpc_utf8_len("\x80", 1), -1);
    assert_int_equal(rpc_utf8_len("\xff", 1), -1);
}

static void test_long_path_truncates(void **state)
{
    /* A path longer than the buffer is cut, never overflowed. */
    rpc_wire_result r;
    wbuf w = {.n = 0};
    for (int i = 0; i < 200; i++)
        W_STR(&w, 1, "x");
    W_STR(&w, 1, "\x01");
    assert_int_equal(check(&w, &scrabble__v1__invite_request__descriptor, &r), RPC_WIRE_CONTROL);
    assert_string_equal(r.path, "invitee_handles[200]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_login),    cmocka_unit_test(test_empty_message),
        cmocka_unit_test(test_nul_truncation), cmocka_unit_test(test_controls),
        cmocka_unit_test(test_bad_utf8),       cmocka_unit_test(test_repeated_index),
        cmocka_unit_test(test_nested),         cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_malformed),      cmocka_unit_test(test_agrees_with_decoder),
        cmocka_unit_test(test_utf8_len),       cmocka_unit_test(test_long_path_truncates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

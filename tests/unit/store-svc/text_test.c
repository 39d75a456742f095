/* Unit tests of store-svc's pure pieces: text rules, page tokens, password
 * hashes and token hashes, parameter literals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "scrabble/v1/store.pb-c.h"
#include "store.h"

static void test_handles(void **state)
{
    assert_null(store_check_handle("alice"));
    assert_null(store_check_handle("R');DROP--"));
    assert_null(store_check_handle("Zoë"));
    assert_string_equal(store_check_handle(""), "empty");
    assert_string_equal(store_check_handle("a b"), "bad_handle");
    assert_string_equal(store_check_handle("a\tb"), "bad_handle");
    assert_string_equal(store_check_handle("a\x7f"), "bad_handle");
    assert_string_equal(store_check_handle("a\xc2\x85"), "bad_handle");     /* NEL */
    assert_string_equal(store_check_handle("a\xc2\xa0"), "bad_handle");     /* NBSP */
    assert_string_equal(store_check_handle("a\xe2\x80\x8b"), "bad_handle"); /* ZWSP */
    assert_string_equal(store_check_handle("a\xff"), "bad_utf8");
    assert_null(store_check_handle("abcdefghijklmnopqrstuvwxyz012345")); /* 32 */
    assert_string_equal(store_check_handle("abcdefghijklmnopqrstuvwxyz0123456"), "too_long");
    /* 32 two-byte characters are 32 characters, not 64. */
    char h[80] = "";
    for (int i = 0; i < 32; i++)
        strcat(h, "é");
    assert_null(store_check_handle(h));
    strcat(h, "é");
    assert_string_equal(store_check_handle(h), "too_long");
}

static void test_request_ids(void **state)
{
    char id[80];
    assert_null(store_check_request_id(""));
    assert_null(store_check_request_id(NULL));
    assert_null(store_check_request_id("0b7c1c3e-6f0a-4c1e-9d55-2b1f0c1a9e77"));
    assert_null(store_check_request_id("AZaz09_-"));
    memset(id, 'x', STORE_REQUEST_ID_MAX);
    id[STORE_REQUEST_ID_MAX] = '\0';
    assert_null(store_check_request_id(id));
    strcat(id, "x");
    assert_string_equal(store_check_request_id(id), "bad_request_id");
    assert_string_equal(store_check_request_id("a b"), "bad_request_id");
    assert_string_equal(store_check_request_id("a/b"), "bad_request_id");
    assert_string_equal(store_check_request_id("a.b"), "bad_request_id");
    assert_string_equal(store_check_request_id("\xc3\xa9"), "bad_request_id");
    assert_string_equal(store_check_request_id("a\nb"), "bad_request_id");
}

static void test_text(void **state)
{
    assert_string_equal(store_check_text("", 1, 500), "empty");
    assert_null(store_check_text("", 0, 64));
    assert_null(store_check_text("line\nbreak", 1, 500));
    char big[502];
    memset(big, 'x', 501);
    big[501] = '\0';
    assert_string_equal(store_check_text(big, 1, 500), "too_long");
    big[500] = '\0';
    assert_null(store_check_text(big, 1, 500));
    assert_string_equal(store_check_text("caf\xe9", 1, 500), "bad_utf8");
}

static void test_page_token(void **state)
{
    char tok[64];
    int64_t us, id;
    store_page_token_encode(1764680000123456LL, 42, tok, sizeof(tok));
    assert_int_equal(store_page_token_decode(tok, &us, &id), 0);
    assert_int_equal(us, 1764680000123456LL);
    assert_int_equal(id, 42);
    assert_int_equal(store_page_token_decode("", &us, &id), -1);
    assert_int_equal(store_page_token_decode("g1.zz", &us, &id), -1);
    assert_int_equal(store_page_token_decode("'; DROP TABLE games; --", &us, &id), -1);
    tok[5] = 'G'; /* upper-case hex is not ours */
    assert_int_equal(store_page_token_decode(tok, &us, &id), -1);
    store_page_token_encode(1, 0, tok, sizeof(tok)); /* id 0 is never a game */
    assert_int_equal(store_page_token_decode(tok, &us, &id), -1);
}

static void test_passwords(void **state)
{
    char h1[192], h2[192];
    assert_int_equal(store_password_hash("correct horse", 10000, h1, sizeof(h1)), STORE_OK);
    assert_int_equal(store_password_hash("correct horse", 10000, h2, sizeof(h2)), STORE_OK);
    assert_string_not_equal(h1, h2); /* per-hash salt */
    assert_memory_equal(h1, "pbkdf2-sha256$10000$", 20);
    assert_int_equal(store_password_verify("correct horse", h1), 1);
    assert_int_equal(store_password_verify("correct horsE", h1), 0);
    assert_int_equal(store_password_verify("", h1), 0);
    assert_int_equal(store_password_verify("x", "plain"), -1);
    assert_int_equal(store_password_verify("x", "pbkdf2-sha256$10$zz$zz"), -1);
}

static void test_tokens(void **state)
{
    char t1[65], h1[65], t2[65], h2[65], again[65];
    assert_int_equal(store_token_new(t1, h1), STORE_OK);
    assert_int_equal(store_token_new(t2, h2), STORE_OK);
    assert_int_equal(strlen(t1), 64);
    assert_string_not_equal(t1, t2);
    store_sha256_hex(t1, 64, again);
    assert_string_equal(again, h1);
    /* The seeder's contract: lower-case hex SHA-256 of the token bytes. */
    store_sha256_hex("abc", 3, again);
    assert_string_equal(again, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_param_literals(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    store_op op = {.arena = a};
    int32_t v[3] = {1, -2, 30};
    store_op_param_int_array(&op, 0, v, 3);
    assert_string_equal(op.params[0], "{1,-2,30}");
    store_op_param_int_array(&op, 1, v, 0);
    assert_string_equal(op.params[1], "{}");
    char *h[3] = {"plain", "quo\"te", "back\\slash,{x}"};
    store_op_param_text_array(&op, 2, h, 3);
    assert_string_equal(op.params[2], "{\"plain\",\"quo\\\"te\",\"back\\\\slash,{x}\"}");
    store_op_param_bytes(&op, 3, "\0\1", 2);
    assert_int_equal(op.lengths[3], 2);
    assert_int_equal(op.formats[3], 1);
    assert_int_equal(op.nparams, 4);
    rpc_arena_destroy(a);
}

static void test_bytea_decode(void **state)
{
    rpc_arena *a = rpc_arena_create(0);
    uint8_t *b;
    size_t n;
    assert_int_equal(store_bytea_decode(a, "\\x00ff0A", &b, &n), STORE_OK);
    assert_int_equal(n, 3);
    assert_int_equal(b[1], 0xff);
    assert_int_equal(b[2], 0x0a);
    assert_int_equal(store_bytea_decode(a, "\\x", &b, &n), STORE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(store_bytea_decode(a, "00ff", &b, &n), STORE_ERROR);
    assert_int_equal(store_bytea_decode(a, "\\x0", &b, &n), STORE_ERROR);
    rpc_arena_destroy(a);
}

static const char *new_handle(const char *in, char *norm, char *folded)
{
    return store_handle_new(in, norm, folded);
}

static void test_handle_normalisation(void **state)
{
    char norm[STORE_HANDLE_BYTES], folded[STORE_HANDLE_BYTES];
    assert_null(new_handle("Alice", norm, folded));
    assert_string_equal(norm, "Alice");
    assert_string_equal(folded, "alice");
    /* Fullwidth letters are compatibility forms of ASCII: NFKC. */
    assert_null(new_handle("\xef\xbc\xa1lice", norm, folded));
    assert_string_equal(norm, "Alice");
    assert_string_equal(folded, "alice");
    /* Case folding, not lower-casing: German sharp s folds to "ss". */
    assert_null(new_handle("Stra\xc3\x9f"
                           "e",
                           norm, folded));
    assert_string_equal(folded, "strasse");
    /* A ligature expands under NFKC. */
    assert_null(new_handle("\xef\xac\x81sh", norm, folded));
    assert_string_equal(norm, "fish");
    /* Accented Latin, Greek, Cyrillic, Japanese are fine on their own. */
    assert_null(new_handle("Zo\xc3\xab", norm, folded));
    assert_null(new_handle("\xce\x9f\xce\xb4\xcf\x85\xcf\x83\xcf\x83\xce\xad\xce\xb1\xcf\x82", norm,
                           folded));
    assert_null(new_handle("\xd0\x98\xd0\xb2\xd0\xb0\xd0\xbd", norm, folded));
    assert_null(
        new_handle("\xe5\xb1\xb1\xe7\x94\xb0\xe3\x81\x9f\xe3\x82\x8d\xe3\x81\x86", norm, folded));
    assert_null(new_handle("taro_\xe5\xb1\xb1\xe7\x94\xb0", norm, folded));
    assert_null(new_handle("bob-42", norm, folded));

    /* Bidi override, word joiner, BOM, zero-width joiner, soft hyphen. */
    assert_string_equal(new_handle("ali\xe2\x80\xae"
                                   "ecila",
                                   norm, folded),
                        "bad_handle");
    assert_string_equal(new_handle("ali\xe2\x81\xa0"
                                   "ce",
                                   norm, folded),
                        "bad_handle");
    assert_string_equal(new_handle("\xef\xbb\xbf"
                                   "alice",
                                   norm, folded),
                        "bad_handle");
    assert_string_equal(new_handle("ali\xe2\x80\x8d"
                                   "ce",
                                   norm, folded),
                        "bad_handle");
    assert_string_equal(new_handle("ali\xc2\xad"
                                   "ce",
                                   norm, folded),
                        "bad_handle");
    /* Hangul filler (a letter that renders as nothing), private use,
     * unassigned, ideographic space. */
    assert_string_equal(new_handle("a\xe3\x85\xa4"
                                   "b",
                                   norm, folded),
                        "bad_handle");
    assert_string_equal(new_handle("a\xee\x80\x80", norm, folded), "bad_handle");
    assert_string_equal(new_handle("a\xf0\xaf\xbf\xbf", norm, folded), "bad_handle");
    assert_string_equal(new_handle("a\xe3\x80\x80"
                                   "b",
                                   norm, folded),
                        "bad_handle");
    /* NFKC turning a character into a space. */
    assert_string_equal(new_handle("a\xe2\x80\x82"
                                   "b",
                                   norm, folded),
                        "bad_handle");
    /* A Cyrillic "a" among Latin letters; a Greek omicron likewise. */
    assert_string_equal(new_handle("p\xd0\xb0ypal", norm, folded), "bad_handle");
    assert_string_equal(new_handle("g\xce\xbfogle", norm, folded), "bad_handle");
    /* Old rules still apply first. */
    assert_string_equal(new_handle("", norm, folded), "empty");
    assert_string_equal(new_handle("a b", norm, folded), "bad_handle");
    assert_string_equal(new_handle("a\xff", norm, folded), "bad_utf8");
    assert_string_equal(new_handle("abcdefghijklmnopqrstuvwxyz0123456", norm, folded), "too_long");
    /* 31 characters that NFKC turns into more than 32. */
    char longer[128] = "abcdefghijklmnopqrstuvwxyz0123";
    strcat(longer, "\xef\xac\x83"); /* U+FB03 "ffi" */
    assert_string_equal(new_handle(longer, norm, folded), "too_long");
}

static void test_handle_fold(void **state)
{
    char f[STORE_HANDLE_BYTES];
    assert_int_equal(store_handle_fold("ALICE", f, sizeof f), 0);
    assert_string_equal(f, "alice");
    assert_int_equal(store_handle_fold("\xef\xbc\xa1LICE", f, sizeof f), 0);
    assert_string_equal(f, "alice");
    assert_int_equal(store_handle_fold("", f, sizeof f), -1);
    assert_int_equal(store_handle_fold("a\xff", f, sizeof f), -1);
    assert_int_equal(store_handle_fold("alice", f, 3), -1);
}

/* The event log's pure pieces: an id appended to a stored body reads back
 * as Event.event_id with every other field intact; the bounds a write's
 * events are held to. */
static void test_event_log(void **state)
{
    (void)state;
    Scrabble__V1__Event e = SCRABBLE__V1__EVENT__INIT;
    e.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN;
    e.game_id = 77;
    e.seq = 5;
    e.from_handle = "zoë";
    uint8_t body[256], out[300];
    size_t n = scrabble__v1__event__pack(&e, body);
    size_t m = store_event_with_id(body, n, 1234567, out, sizeof out);
    assert_true(m > n);
    Scrabble__V1__Event *back = scrabble__v1__event__unpack(NULL, m, out);
    assert_non_null(back);
    assert_string_equal(back->event_id, "1234567");
    assert_int_equal(back->game_id, 77);
    assert_int_equal(back->seq, 5);
    assert_string_equal(back->from_handle, "zoë");
    scrabble__v1__event__free_unpacked(back, NULL);
    assert_int_equal(store_event_with_id(body, n, 1, out, n + 2), 0); /* no room */

    Scrabble__V1__EventRecord r = SCRABBLE__V1__EVENT_RECORD__INIT;
    Scrabble__V1__EventRecord *rs[17];
    for (int i = 0; i < 17; i++)
        rs[i] = &r;
    r.account_id = 3;
    r.body.data = body;
    r.body.len = n;
    assert_null(store_events_check(rs, 16));
    assert_non_null(store_events_check(rs, 17));
    r.account_id = 0;
    assert_non_null(store_events_check(rs, 1));
    r.account_id = 3;
    r.body.len = 0;
    assert_non_null(store_events_check(rs, 1));
    r.body.len = 4097;
    assert_non_null(store_events_check(rs, 1));
    r.body.len = n;
    r.dedupe_key = "0123456789012345678901234567890123456789012345678901234567890123x";
    assert_non_null(store_events_check(rs, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handles),        cmocka_unit_test(test_handle_normalisation),
        cmocka_unit_test(test_handle_fold),    cmocka_unit_test(test_text),
        cmocka_unit_test(test_request_ids),    cmocka_unit_test(test_page_token),
        cmocka_unit_test(test_passwords),      cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_param_literals), cmocka_unit_test(test_bytea_decode),
        cmocka_unit_test(test_event_log),
    };
    return cmocka_run_group_tests_name("store-svc units", tests, NULL, NULL);
}

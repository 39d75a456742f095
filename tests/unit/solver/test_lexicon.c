/* Lexicon compile / load / lookup, and refusal of bad files. */
#include "test_util.h"

#include <unistd.h>

static void test_compile_and_lookup(void **state)
{
    (void)state;
    const char *text = "cat\nCats\nDOG\nqi\nx\nabcdefghijklmnop\nit's\ncat\r\nzebra\n";
    void *img;
    size_t len;
    solver_compile_stats st;
    char err[256];
    assert_int_equal(
        solver_lexicon_compile_buffer(text, strlen(text), NULL, &img, &len, &st, err, sizeof err),
        0);
    assert_int_equal(st.lines, 9);
    assert_int_equal(st.words, 5); /* cat cats dog qi zebra */
    assert_int_equal(st.skipped_chars, 1);
    assert_int_equal(st.skipped_length, 2);
    assert_int_equal(st.duplicates, 1);
    solver_lexicon *lex = solver_lexicon_from_buffer(img, len, err, sizeof err);
    assert_non_null(lex);
    assert_true(solver_lexicon_has(lex, "cat"));
    assert_true(solver_lexicon_has(lex, "CATS"));
    assert_true(solver_lexicon_has(lex, "Dog"));
    assert_true(solver_lexicon_has(lex, "qi"));
    assert_false(solver_lexicon_has(lex, "ca"));
    assert_false(solver_lexicon_has(lex, "x"));
    assert_false(solver_lexicon_has(lex, "cat's"));
    assert_false(solver_lexicon_has(lex, ""));
    assert_int_equal(solver_lexicon_word_count(lex), 5);
    solver_lexicon_free(lex);
    free(img);
}

static void test_lowercase_only(void **state)
{
    (void)state;
    const char *text = "Paris\nparis\nNASA\nnasa\n";
    void *img;
    size_t len;
    solver_compile_stats st;
    char err[256];
    solver_compile_opts o = {.lowercase_only = true};
    assert_int_equal(
        solver_lexicon_compile_buffer(text, strlen(text), &o, &img, &len, &st, err, sizeof err), 0);
    assert_int_equal(st.words, 2);
    assert_int_equal(st.skipped_chars, 2);
    free(img);
}

static void test_empty_wordlist(void **state)
{
    (void)state;
    void *img = NULL;
    size_t len;
    char err[256];
    assert_int_equal(solver_lexicon_compile_buffer("", 0, NULL, &img, &len, NULL, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "no usable words"));
    assert_int_equal(
        solver_lexicon_compile_buffer("a\n1234\n", 7, NULL, &img, &len, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no usable words"));
}

static void write_all(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
}

static void test_corrupt_and_truncated(void **state)
{
    (void)state;
    const char *text = "alpha\nbeta\ngamma\ndelta\nepsilon\n";
    void *img;
    size_t len;
    char err[256];
    assert_int_equal(
        solver_lexicon_compile_buffer(text, strlen(text), NULL, &img, &len, NULL, err, sizeof err),
        0);
    char path[] = "/tmp/solver-test-lex-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    write_all(path, img, len);
    solver_lexicon *lex = solver_lexicon_load(path, err, sizeof err);
    assert_non_null(lex);
    assert_true(solver_lexicon_has(lex, "gamma"));
    solver_lexicon_free(lex);

    /* Every single-byte corruption of the body is caught by the checksum;
     * header corruption by the header checks. */
    unsigned char *bad = malloc(len);
    for (size_t i = 0; i < len; i++) {
        memcpy(bad, img, len);
        bad[i] ^= 0x5a;
        write_all(path, bad, len);
        lex = solver_lexicon_load(path, err, sizeof err);
        assert_null(lex);
    }
    memcpy(bad, img, len);
    bad[len - 3] ^= 1;
    write_all(path, bad, len);
    assert_null(solver_lexicon_load(path, err, sizeof err));
    assert_non_null(strstr(err, "checksum"));

    for (size_t cut = 0; cut < len; cut += (cut < 64 ? 1 : 97)) {
        write_all(path, img, cut);
        assert_null(solver_lexicon_load(path, err, sizeof err));
    }
    write_all(path, img, len - 1);
    assert_null(solver_lexicon_load(path, err, sizeof err));
    assert_non_null(strstr(err, "truncated"));

    assert_null(solver_lexicon_load("/nonexistent/lexicon.kwg", err, sizeof err));
    unlink(path);
    free(bad);
    free(img);
}

static void test_compile_file(void **state)
{
    (void)state;
    char in[] = "/tmp/solver-test-words-XXXXXX", out[64];
    int fd = mkstemp(in);
    assert_true(fd >= 0);
    close(fd);
    snprintf(out, sizeof out, "%s.kwg", in);
    write_all(in, "", 0);
    char err[256];
    assert_int_equal(solver_lexicon_compile(in, out, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "no usable words"));
    write_all(in, "hello\nworld\n", 12);
    solver_compile_stats st;
    assert_int_equal(solver_lexicon_compile(in, out, NULL, &st, err, sizeof err), 0);
    solver_lexicon *lex = solver_lexicon_load(out, err, sizeof err);
    assert_non_null(lex);
    assert_true(solver_lexicon_has(lex, "world"));
    solver_lexicon_free(lex);
    unlink(in);
    unlink(out);
}

static void test_default_lexicon(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(lex);
    assert_true(solver_lexicon_word_count(lex) > 100000);
    assert_true(solver_lexicon_has(lex, "retains"));
    assert_false(solver_lexicon_has(lex, "paris")); /* proper noun only */
    solver_lexicon_free(lex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_and_lookup), cmocka_unit_test(test_lowercase_only),
        cmocka_unit_test(test_empty_wordlist),     cmocka_unit_test(test_corrupt_and_truncated),
        cmocka_unit_test(test_compile_file),       cmocka_unit_test(test_default_lexicon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

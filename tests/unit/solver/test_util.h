/* Helpers shared by the solver unit tests (header-only, static functions). */
#ifndef SOLVER_TEST_UTIL_H
#define SOLVER_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "solver.h"

#ifndef SOLVER_TEST_LEXICON
#define SOLVER_TEST_LEXICON ""
#endif

/* Compile a word list given as one string into an in-memory lexicon.
 * *img receives the malloc'd image the lexicon borrows: free it after
 * solver_lexicon_free. */
static inline solver_lexicon *test_lexicon(const char *words, void **img)
{
    size_t len;
    char err[256];
    assert_int_equal(
        solver_lexicon_compile_buffer(words, strlen(words), NULL, img, &len, NULL, err, sizeof err),
        0);
    solver_lexicon *lex = solver_lexicon_from_buffer(*img, len, err, sizeof err);
    assert_non_null(lex);
    return lex;
}

/* r with its v highest letters (Z first) turned into blanks: the blank
 * variants the oracle and fallback tests check beside each drawn rack.
 * Fewer when r has fewer letters. */
static inline solver_rack rack_with_blanks(solver_rack r, int v)
{
    for (int c = 26, k = 0; c >= 1 && k < v; c--)
        while (r.counts[c] && k < v) {
            r.counts[c]--;
            r.counts[0]++;
            k++;
        }
    return r;
}

static inline char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = 0;
    if (len)
        *len = (size_t)n;
    fclose(f);
    return buf;
}

/* Field-wise: solver_move has padding before score. */
static inline void assert_move_equal(const solver_move *a, const solver_move *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->row, b->row);
    assert_int_equal(a->col, b->col);
    assert_int_equal(a->dir, b->dir);
    assert_int_equal(a->len, b->len);
    assert_int_equal(a->ntiles, b->ntiles);
    assert_memory_equal(a->tiles, b->tiles, a->len);
    assert_int_equal(a->score, b->score);
}
#endif

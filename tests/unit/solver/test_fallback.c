/* The direct seven-tile pass and the bingo bounds read the signature table
 * that solver_lexicon_load derives from the graph (lexicon_sig.c); it is not
 * part of the file, so every valid lexicon file has it, and a corrupt file
 * is refused by the checksum before it is built (test_lexicon.c).  The table
 * can still be missing: its build stops on graphs that spell too many words
 * for its budget, or when memory runs out.  Then every question it answers
 * is answered "maybe", and move generation must stay exact, only slower.
 * The less-one table (the blanks' letters in one look-up) is derived with
 * it and can be missing alone (out of memory); then the blanks' letters come
 * from 26 signature look-ups each.  The pair index (two blanks: the words
 * of a multiset less two letters) is derived after them and can be missing
 * alone too (out of memory, a graph with more than 2^17 words of 7+
 * letters, or the walk's budget); then two-blank windows are walked in the
 * DAWG with the blanks' letter pairs from the other tables.  This test
 * drops every table of one loaded lexicon, all but the signature table of
 * another, the pair index alone of a third, and all but the pair index of
 * a fourth, and checks top-1 and top-5 against the full list, and against
 * the same lexicon with its tables, on mid-game and empty-board positions
 * with zero, one and two blanks. */
#include "test_util.h"

#include "internal.h"

#define CAP 400000

static void drop_sig(solver_lexicon *lex)
{
    free(lex->sig);
    lex->sig = NULL;
    lex->sig_mask = 0;
}

static void drop_sub(solver_lexicon *lex)
{
    free(lex->sub);
    lex->sub = NULL;
    lex->sub_mask = 0;
}

static void drop_pairs(solver_lexicon *lex)
{
    free(lex->pw_start);
    free(lex->pw_ent);
    free(lex->pw_word);
    lex->pw_start = NULL;
    lex->pw_ent = NULL;
    lex->pw_word = NULL;
    lex->pw_mask = 0;
}

#define NFALLBACK 4

static void test_no_signature_table(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *with = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(with);
    assert_non_null(with->sig);
    assert_non_null(with->sub);
    assert_non_null(with->pw_ent);
    /* No table; the signature table alone; no pair index; the pair index
     * alone. */
    solver_lexicon *fallbacks[NFALLBACK];
    for (int f = 0; f < NFALLBACK; f++) {
        fallbacks[f] = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
        assert_non_null(fallbacks[f]);
    }
    drop_sig(fallbacks[0]);
    drop_sub(fallbacks[0]);
    drop_pairs(fallbacks[0]);
    drop_sub(fallbacks[1]);
    drop_pairs(fallbacks[1]);
    drop_pairs(fallbacks[2]);
    drop_sig(fallbacks[3]);
    drop_sub(fallbacks[3]);
    solver_lexicon *without = fallbacks[0];

    solver_move *all = malloc(CAP * sizeof *all), top_a[5], top_b[5];
    assert_non_null(all);
    const solver_dist *d = solver_dist_english();
    int checked = 0;
    for (uint64_t seed = 700; seed < 704; seed++) {
        solver_board b;
        solver_board_init(&b, d);
        solver_bag bag;
        solver_bag_init(&bag, d, seed);
        solver_rack r;
        memset(&r, 0, sizeof r);
        solver_bag_fill_rack(&bag, &r);
        for (int turn = 0; turn < 14; turn++) {
            for (int v = 0; v < 3; v++) {
                solver_rack x = rack_with_blanks(r, v);
                if (x.counts[0] > 2)
                    continue;
                size_t n = solver_gen(&b, without, d, &x, NULL, all, CAP);
                assert_true(n <= CAP);
                solver_moves_sort(all, n);
                solver_gen_opts o = {.top_n = 5};
                size_t na = solver_gen(&b, with, d, &x, &o, top_a, 5);
                assert_int_equal(na, n < 5 ? n : 5);
                for (size_t i = 0; i < na; i++)
                    assert_move_equal(&top_a[i], &all[i]);
                for (int f = 0; f < NFALLBACK; f++) {
                    o.top_n = 5;
                    size_t nb = solver_gen(&b, fallbacks[f], d, &x, &o, top_b, 5);
                    assert_int_equal(nb, na);
                    for (size_t i = 0; i < na; i++)
                        assert_move_equal(&top_b[i], &all[i]);
                    o.top_n = 1;
                    nb = solver_gen(&b, fallbacks[f], d, &x, &o, top_b, 1);
                    if (n)
                        assert_move_equal(&top_b[0], &all[0]);
                }
                checked++;
            }
            solver_gen_opts top1 = {.top_n = 1};
            if (solver_gen(&b, with, d, &r, &top1, top_a, 1) == 0)
                break;
            solver_board_apply(&b, with, &top_a[0]);
            solver_rack_remove_move(&r, &top_a[0]);
            solver_bag_fill_rack(&bag, &r);
            if (r.n == 0)
                break;
        }
    }
    assert_true(checked > 100);
    free(all);
    solver_lexicon_free(with);
    for (int f = 0; f < NFALLBACK; f++)
        solver_lexicon_free(fallbacks[f]);
}

/* The less-one table against 26 signature look-ups (what the solver does
 * without it), on the multisets of bag draws of 6 to 9 tiles: never a
 * letter fewer (it may only say "maybe" wrongly), and on this lexicon not
 * one letter more either (38-bit tags). */
static void test_less_one_table(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *with = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    solver_lexicon *sig_only = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(with);
    assert_non_null(sig_only);
    free(sig_only->sub);
    sig_only->sub = NULL;
    const solver_dist *d = solver_dist_english();
    int nonempty = 0;
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        solver_bag bag;
        solver_bag_init(&bag, d, seed);
        uint8_t counts[27] = {0};
        int want = 6 + (int)(seed % 4), have = 0;
        while (have < want) {
            solver_rack r;
            memset(&r, 0, sizeof r);
            solver_bag_fill_rack(&bag, &r);
            for (int c = 1; c <= 26 && have < want; c++)
                for (int k = 0; k < r.counts[c] && have < want; k++, have++)
                    counts[c]++;
        }
        solver__sig_key key = solver__sig_key_of(counts);
        uint32_t fast = solver__sig_less_one(with, key), slow = solver__sig_less_one(sig_only, key);
        assert_int_equal(fast, slow);
        nonempty += fast != 0;
    }
    assert_true(nonempty > 100);
    solver_lexicon_free(with);
    solver_lexicon_free(sig_only);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_less_one_table),
        cmocka_unit_test(test_no_signature_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

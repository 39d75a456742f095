/* Exactness: the fast generator against the brute-force oracle on positions
 * reached by seeded self-play, on a small and on the full default lexicon.
 * Same positions also check top-N against the sorted full list, validation
 * against every generated move, and incremental cross-sets against a full
 * recompute.  A last test checks top-1 against the full list on many more
 * full-lexicon positions, with and without a blank. */
#include "test_util.h"
#include "oracle.h"

#define CAP 400000

static solver_move *fast_buf, *oracle_buf, *top_buf;
static char *dict_text;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **to_lines(const solver_move *m, size_t n)
{
    char **v = malloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        char s[64], line[80];
        solver_move_format(&m[i], s, sizeof s);
        snprintf(line, sizeof line, "%s %d", s, m[i].score);
        v[i] = strdup(line);
    }
    qsort(v, n, sizeof *v, cmp_str);
    return v;
}

static void free_lines(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void blank_variant(solver_rack *r, int k)
{
    /* Put blanks on some racks so every designation path is exercised. */
    int want = k % 5 == 1 ? 1 : k % 7 == 3 ? 2 : 0;
    for (int c = 26; c >= 1 && r->counts[0] < want; c--)
        while (r->counts[c] && r->counts[0] < want) {
            r->counts[c]--;
            r->counts[0]++;
        }
}

static void check_position(const solver_board *b, const solver_lexicon *lex, const oracle_words *ow,
                           const solver_rack *rack, int k, size_t *total_moves)
{
    const solver_dist *d = solver_dist_english();
    size_t nf = solver_gen(b, lex, d, rack, NULL, fast_buf, CAP);
    size_t no = oracle_gen(b, ow, d, rack, oracle_buf, CAP);
    assert_true(nf <= CAP && no <= CAP);
    *total_moves += nf;
    char **a = to_lines(fast_buf, nf), **o = to_lines(oracle_buf, no);
    size_t i = 0, j = 0;
    int shown = 0;
    while ((i < nf || j < no) && shown < 10) {
        int c = i == nf ? 1 : j == no ? -1 : strcmp(a[i], o[j]);
        if (c == 0) {
            i++, j++;
            continue;
        }
        char rk[16];
        solver_rack_format(rack, rk, sizeof rk);
        print_error("position %d rack %s: %s %s\n", k, rk,
                    c < 0 ? "only fast:" : "only oracle:", c < 0 ? a[i] : o[j]);
        if (c < 0)
            i++;
        else
            j++;
        shown++;
    }
    assert_int_equal(shown, 0);
    assert_int_equal(nf, no);
    free_lines(a, nf);
    free_lines(o, no);

    /* Top-N equals the head of the sorted full list. */
    solver_moves_sort(fast_buf, nf);
    static const size_t tops[] = {1, 3, 25};
    for (size_t t = 0; t < sizeof tops / sizeof *tops; t++) {
        solver_gen_opts opts = {.top_n = tops[t]};
        size_t nt = solver_gen(b, lex, d, rack, &opts, top_buf, CAP);
        assert_int_equal(nt, nf < tops[t] ? nf : tops[t]);
        for (size_t q = 0; q < nt; q++) {
            assert_int_equal(top_buf[q].score, fast_buf[q].score);
            assert_int_equal(solver_move_cmp(&top_buf[q], &fast_buf[q]), 0);
        }
    }

    /* Validation agrees with generation on score and notation (a sample). */
    size_t step = nf / 60 + 1;
    for (size_t q = 0; q < nf; q += step) {
        const solver_move *m = &fast_buf[q];
        solver_placement p[15];
        size_t np = 0;
        for (int x = 0; x < m->len; x++)
            if (!(m->tiles[x] & SOLVER_THROUGH)) {
                p[np].row = m->row + (m->dir == SOLVER_DOWN) * x;
                p[np].col = m->col + (m->dir == SOLVER_ACROSS) * x;
                p[np].letter = (char)('A' + (m->tiles[x] & 31) - 1);
                p[np].is_blank = (m->tiles[x] & SOLVER_BLANK) != 0;
                np++;
            }
        solver_result res;
        assert_int_equal(solver_validate(b, lex, d, rack, p, np, &res), SOLVER_OK);
        assert_int_equal(res.score, m->score);
        char s[64];
        solver_move_format(m, s, sizeof s);
        assert_string_equal(res.notation, s);
        /* Notation round-trips. */
        solver_move back;
        char err[128];
        assert_int_equal(solver_move_parse(b, s, &back, err, sizeof err), 0);
        back.score = m->score;
        assert_move_equal(&back, m);
    }
}

/* Self-play to reach positions; checks each position before each move. */
static size_t run_games(const solver_lexicon *lex, const oracle_words *ow, uint64_t seed0,
                        int games, int max_positions, int every)
{
    const solver_dist *d = solver_dist_english();
    int k = 0;
    size_t total = 0;
    for (int g = 0; g < games && k < max_positions; g++) {
        solver_board b;
        solver_board_init(&b, d);
        solver_bag bag;
        solver_bag_init(&bag, d, seed0 + (uint64_t)g);
        solver_rack racks[2] = {{{0}, 0}, {{0}, 0}};
        solver_bag_fill_rack(&bag, &racks[0]);
        solver_bag_fill_rack(&bag, &racks[1]);
        int zero = 0;
        for (int turn = 0, p = 0; zero < 6 && k < max_positions; turn++, p ^= 1) {
            if (turn % every == 0) {
                solver_rack r = racks[p];
                blank_variant(&r, k);
                check_position(&b, lex, ow, &r, k, &total);
                k++;
            }
            solver_move best;
            solver_gen_opts opts = {.top_n = 1};
            if (solver_gen(&b, lex, d, &racks[p], &opts, &best, 1) == 0) {
                zero++;
                continue;
            }
            zero = 0;
            solver_board_apply(&b, lex, &best);
            solver_rack_remove_move(&racks[p], &best);
            solver_bag_fill_rack(&bag, &racks[p]);
            /* Incremental cross-sets equal a full recompute. */
            solver_board full = b;
            solver_board_recompute(&full, lex);
            assert_memory_equal(&full, &b, sizeof b);
            if (racks[p].n == 0)
                break;
        }
    }
    print_message("checked %d positions, %zu moves\n", k, total);
    return total;
}

static void test_small_lexicon(void **state)
{
    (void)state;
    /* A small lexicon cut from the default list: all 2-3 letter words and
     * every 9th longer word up to 8 letters. */
    size_t cap = 1 << 20, n = 0, idx = 0;
    char *text = malloc(cap);
    for (const char *s = dict_text; *s;) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        bool lower = len > 0;
        for (size_t i = 0; i < len; i++)
            lower &= s[i] >= 'a' && s[i] <= 'z';
        if (lower && len >= 2 && len <= 8 && (len <= 3 || idx++ % 9 == 0) && n + len + 2 < cap) {
            memcpy(text + n, s, len);
            n += len;
            text[n++] = '\n';
        }
        s += len + (e ? 1 : 0);
    }
    text[n] = 0;
    void *img;
    solver_lexicon *lex = test_lexicon(text, &img);
    oracle_words ow;
    oracle_words_init(&ow, text, true);
    assert_int_equal(solver_lexicon_word_count(lex), ow.n);
    size_t total = run_games(lex, &ow, 100, 40, 300, 1);
    assert_true(total > 1000);
    free(ow.w);
    solver_lexicon_free(lex);
    free(img);
    free(text);
}

static void test_tiny_lexicon_blanks(void **state)
{
    (void)state;
    /* Hand-made corner cases: one-letter hooks, words touching the edges. */
    const char *text = "aa\nab\nba\nbad\nad\nda\ndab\nabba\nbaa\nbe\nbed\nde\nea\ned\nee\n";
    void *img;
    solver_lexicon *lex = test_lexicon(text, &img);
    oracle_words ow;
    oracle_words_init(&ow, text, true);
    const solver_dist *d = solver_dist_english();
    solver_board b;
    solver_board_init(&b, d);
    const char *racks[] = {"AB??", "ABDE", "A?", "??", "DEEA"};
    size_t total = 0;
    for (int i = 0; i < 5; i++) {
        solver_rack r;
        solver_rack_parse(&r, racks[i]);
        check_position(&b, lex, &ow, &r, i, &total);
    }
    /* Tiles on the edges. */
    solver_board_place(&b, lex, 0, 0, 1);
    solver_board_place(&b, lex, 0, 1, 1);
    solver_board_place(&b, lex, 14, 13, 2);
    solver_board_place(&b, lex, 14, 14, 1);
    solver_board_place(&b, lex, 7, 14, 4);
    for (int i = 0; i < 5; i++) {
        solver_rack r;
        solver_rack_parse(&r, racks[i]);
        check_position(&b, lex, &ow, &r, 10 + i, &total);
    }
    /* Runs of board letters right after anchors, where the walk starts on
     * the run's last letter instead of the anchor: a one-square gap between
     * two runs (row 4: "ab.ba"), a run ending on the right edge (row 9,
     * columns 13-14), and a column with the same shapes (column 2). */
    static const int runs[][3] = {{4, 3, 1},  {4, 4, 2},  {4, 6, 2},  {4, 7, 1}, {9, 13, 4},
                                  {9, 14, 1}, {11, 2, 1}, {12, 2, 1}, {14, 2, 4}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
        solver_board_place(&b, lex, runs[i][0], runs[i][1], (uint8_t)runs[i][2]);
    for (int i = 0; i < 5; i++) {
        solver_rack r;
        solver_rack_parse(&r, racks[i]);
        check_position(&b, lex, &ow, &r, 20 + i, &total);
    }
    free(ow.w);
    solver_lexicon_free(lex);
    free(img);
}

static void test_full_lexicon(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(lex);
    oracle_words ow;
    oracle_words_init(&ow, dict_text, true);
    assert_int_equal(solver_lexicon_word_count(lex), ow.n);
    size_t total = run_games(lex, &ow, 7000, 4, 12, 3);
    assert_true(total > 1000);
    free(ow.w);
    solver_lexicon_free(lex);
}

/* The first move of the full list in output order, found by one pass. */
static const solver_move *first_in_order(const solver_move *m, size_t n)
{
    const solver_move *best = n ? &m[0] : NULL;
    for (size_t i = 1; i < n; i++)
        if (solver_move_cmp(&m[i], best) < 0)
            best = &m[i];
    return best;
}

/* Top-1 pruning paths that only the full lexicon reaches often: bingo
 * searches where a blank's designations are narrowed by the signature
 * table, the empty board searched across only, and the per-tile-count
 * bounds.  Every turn of seeded self-play, with the drawn rack and with one
 * of its tiles turned into a blank, the best move must be the first move of
 * the full list. */
static void test_best_move_full_lexicon(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(lex);
    const solver_dist *d = solver_dist_english();
    solver_gen_opts top1 = {.top_n = 1};
    int checked = 0;
    for (uint64_t seed = 9000; seed < 9012; seed++) {
        solver_board b;
        solver_board_init(&b, d);
        solver_bag bag;
        solver_bag_init(&bag, d, seed);
        solver_rack racks[2];
        memset(racks, 0, sizeof racks);
        solver_bag_fill_rack(&bag, &racks[0]);
        solver_bag_fill_rack(&bag, &racks[1]);
        for (int turn = 0, p = 0; turn < 40; turn++, p ^= 1) {
            /* The drawn rack, with one tile turned into a blank, and with
             * two (the direct seven-tile pass narrows a second blank by
             * the first one's letter). */
            solver_rack variants[3] = {racks[p], rack_with_blanks(racks[p], 1),
                                       rack_with_blanks(racks[p], 2)};
            for (int v = 0; v < 3; v++) {
                size_t nf = solver_gen(&b, lex, d, &variants[v], NULL, fast_buf, CAP);
                assert_true(nf <= CAP);
                size_t nt = solver_gen(&b, lex, d, &variants[v], &top1, top_buf, CAP);
                assert_int_equal(nt, nf ? 1 : 0);
                if (nf)
                    assert_move_equal(&top_buf[0], first_in_order(fast_buf, nf));
                checked++;
            }
            size_t n = solver_gen(&b, lex, d, &racks[p], &top1, top_buf, CAP);
            if (n == 0)
                break;
            solver_board_apply(&b, lex, &top_buf[0]);
            solver_rack_remove_move(&racks[p], &top_buf[0]);
            solver_bag_fill_rack(&bag, &racks[p]);
            if (racks[p].n == 0)
                break;
        }
    }
    assert_true(checked > 300);
    solver_lexicon_free(lex);
}

/* Top-N (1, 5, 40) against the first N moves of the sorted full list. */
static void check_top_n(const solver_board *b, const solver_lexicon *lex, const solver_rack *r)
{
    const solver_dist *d = solver_dist_english();
    size_t nf = solver_gen(b, lex, d, r, NULL, fast_buf, CAP);
    assert_true(nf <= CAP);
    solver_moves_sort(fast_buf, nf);
    static const size_t tops[] = {1, 5, 40};
    for (size_t t = 0; t < sizeof tops / sizeof *tops; t++) {
        solver_gen_opts o = {.top_n = tops[t]};
        size_t nt = solver_gen(b, lex, d, r, &o, top_buf, CAP);
        assert_int_equal(nt, nf < tops[t] ? nf : tops[t]);
        for (size_t i = 0; i < nt; i++)
            assert_move_equal(&top_buf[i], &fast_buf[i]);
    }
}

/* The empty board (its own walk: each word the rack spells, scored at every
 * start through the centre, across and, for top-N > 1, down) and the
 * direct seven-tile pass on open boards, with zero, one and two blanks. */
static void test_empty_and_open_boards(void **state)
{
    (void)state;
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(SOLVER_TEST_LEXICON, err, sizeof err);
    assert_non_null(lex);
    const solver_dist *d = solver_dist_english();
    int checked = 0;
    for (uint64_t seed = 500; seed < 530; seed++) {
        solver_board b;
        solver_board_init(&b, d);
        solver_bag bag;
        solver_bag_init(&bag, d, seed);
        solver_rack r;
        memset(&r, 0, sizeof r);
        solver_bag_fill_rack(&bag, &r);
        for (int turn = 0; turn < 3; turn++) {
            for (int v = 0; v < 3; v++) {
                solver_rack x = rack_with_blanks(r, v);
                if (x.counts[0] <= 2) {
                    check_top_n(&b, lex, &x);
                    checked++;
                }
            }
            solver_gen_opts top1 = {.top_n = 1};
            if (solver_gen(&b, lex, d, &r, &top1, top_buf, CAP) == 0)
                break;
            solver_board_apply(&b, lex, &top_buf[0]);
            solver_rack_remove_move(&r, &top_buf[0]);
            solver_bag_fill_rack(&bag, &r);
        }
    }
    assert_true(checked > 200);
    solver_lexicon_free(lex);
}

int main(void)
{
    fast_buf = malloc(CAP * sizeof *fast_buf);
    oracle_buf = malloc(CAP * sizeof *oracle_buf);
    top_buf = malloc(CAP * sizeof *top_buf);
    dict_text = read_file(SOLVER_TEST_WORDLIST, NULL);
    if (!dict_text) {
        fprintf(stderr, "cannot read %s\n", SOLVER_TEST_WORDLIST);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_lexicon_blanks),   cmocka_unit_test(test_small_lexicon),
        cmocka_unit_test(test_full_lexicon),          cmocka_unit_test(test_best_move_full_lexicon),
        cmocka_unit_test(test_empty_and_open_boards),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(fast_buf);
    free(oracle_buf);
    free(top_buf);
    free(dict_text);
    return rc;
}

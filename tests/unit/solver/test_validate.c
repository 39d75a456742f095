/* Validation: one test per reason, words formed, premiums, bingo, and the
 * one-tile direction rule. */
#include "test_util.h"

static solver_lexicon *lex;
static void *img;
static solver_board board; /* RETAINS at 8H..8N */
static const solver_dist *dist;

static int setup(void **state)
{
    (void)state;
    lex = test_lexicon("retains\nstare\nat\nta\nzap\nzaps\nqi\nre\nes\nar\nat\naa\nab\nbe\nlab\n",
                       &img);
    dist = solver_dist_english();
    solver_board_init(&board, dist);
    const char *w = "RETAINS";
    for (int i = 0; i < 7; i++)
        solver_board_place(&board, lex, 7, 7 + i, (uint8_t)(w[i] - 'A' + 1));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    solver_lexicon_free(lex);
    free(img);
    return 0;
}

static solver_reason check(const char *rack, const char *spec, solver_result *r)
{
    /* spec: "row,col,L;row,col,l;..." lowercase = blank */
    solver_placement p[16];
    size_t n = 0;
    for (const char *s = spec; *s;) {
        int row, col, used;
        char ch;
        if (sscanf(s, "%d,%d,%c%n", &row, &col, &ch, &used) != 3)
            break;
        p[n].row = row;
        p[n].col = col;
        p[n].letter = ch;
        p[n].is_blank = ch >= 'a' && ch <= 'z';
        n++;
        s += used;
        if (*s == ';')
            s++;
    }
    solver_rack rk;
    assert_int_equal(solver_rack_parse(&rk, rack), 0);
    return solver_validate(&board, lex, dist, &rk, p, n, r);
}

static void test_reasons(void **state)
{
    (void)state;
    solver_result r;
    assert_int_equal(check("ABC", "", &r), SOLVER_ERR_NO_TILES);
    assert_int_equal(check("ABC", "15,0,A", &r), SOLVER_ERR_OFF_BOARD);
    assert_non_null(strstr(r.message, "off the board"));
    assert_int_equal(check("ABC", "6,7,A;6,7,B", &r), SOLVER_ERR_DUPLICATE_SQUARE);
    assert_string_equal(r.message, "two tiles on square 7H");
    assert_int_equal(check("ABC", "7,7,A", &r), SOLVER_ERR_OCCUPIED);
    assert_string_equal(r.message, "square 8H is already occupied");
    assert_int_equal(check("ABC", "6,7,Z", &r), SOLVER_ERR_NOT_ON_RACK);
    assert_string_equal(r.message, "tile Z is not on the rack");
    assert_int_equal(check("ABC", "6,7,z", &r), SOLVER_ERR_NOT_ON_RACK);
    assert_int_equal(check("ABC", "6,7,A;5,8,B", &r), SOLVER_ERR_NOT_IN_LINE);
    assert_int_equal(check("ABC", "6,1,A;6,3,B", &r), SOLVER_ERR_GAP);
    assert_string_equal(r.message, "gap at 7C");
    assert_int_equal(check("ABC", "2,2,A;2,3,B", &r), SOLVER_ERR_NOT_CONNECTED);
    assert_int_equal(check("ZAP", "6,8,Z;6,9,A;6,10,P", &r), SOLVER_ERR_INVALID_WORDS);
    assert_non_null(strstr(r.message, "ZE"));
    assert_int_equal(check("ABC", "7,2,A", &r), SOLVER_ERR_NOT_CONNECTED);

    solver_board saved = board;
    solver_board_init(&board, dist);
    assert_int_equal(check("ZAP", "0,0,Z;0,1,A;0,2,P", &r), SOLVER_ERR_MISSES_CENTRE);
    assert_int_equal(check("ZAP", "7,7,Z", &r), SOLVER_ERR_INVALID_WORDS);
    assert_int_equal(check("ZAP", "7,6,Z;7,7,A;7,8,P", &r), SOLVER_OK);
    assert_int_equal(r.score, 28); /* (10+1+3) x2 centre */
    assert_string_equal(r.notation, "8G ZAP");
    assert_int_equal(check("ZAP", "6,7,Z;7,7,A;8,7,P", &r), SOLVER_OK);
    assert_string_equal(r.notation, "H7 ZAP");
    assert_int_equal(check("?AP", "7,6,z;7,7,A;7,8,P", &r), SOLVER_OK);
    assert_int_equal(r.score, 8);
    assert_string_equal(r.notation, "8G zAP");
    board = saved;
}

static void test_words_and_score(void **state)
{
    (void)state;
    solver_result r;
    /* S under the last S of RETAINS? Hook: "ES" down from 8I? Place S at 9I
     * (row 8, col 8): vertical word ES, no across word -> down notation. */
    assert_int_equal(check("S", "8,8,S", &r), SOLVER_OK);
    assert_int_equal(r.nwords, 1);
    assert_string_equal(r.words[0], "ES");
    assert_string_equal(r.notation, "I8 (E)S");
    assert_int_equal(r.score, 3); /* 9I is a double letter: E 1 + S 1x2 */
    /* Parallel play forming several words: ZAP under ..., invalid naming. */
    assert_int_equal(check("QI", "6,6,Q;6,7,I", &r), SOLVER_ERR_INVALID_WORDS);
    assert_non_null(strstr(r.message, "IR"));
    assert_int_equal(r.nwords, 2);
    /* Extension through board tiles: STARE down using the S of RETAINS. */
    assert_int_equal(check("TARE", "8,13,T;9,13,A;10,13,R;11,13,E", &r), SOLVER_OK);
    assert_string_equal(r.notation, "N8 (S)TARE");
    assert_string_equal(r.words[0], "STARE");
    /* S 1 (on board) + T 1 + A 1x3 (10N triple letter) + R 1 + E 1 */
    assert_int_equal(r.score, 7);
}

static void test_bingo(void **state)
{
    (void)state;
    solver_board saved = board;
    solver_board_init(&board, dist);
    solver_result r;
    assert_int_equal(check("AEINRST", "7,1,R;7,2,E;7,3,T;7,4,A;7,5,I;7,6,N;7,7,S", &r), SOLVER_OK);
    /* R E T(DL) A I N S(centre DW): (1+1+2+1+1+1+1) x2 + 50 */
    assert_int_equal(r.score, 66);
    board = saved;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_words_and_score),
        cmocka_unit_test(test_bingo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

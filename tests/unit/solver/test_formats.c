/* CGP, notation, GCG, rack and bag. */
#include "test_util.h"

#define EMPTY "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15"

static void expect_cgp_error(const char *cgp, const char *needle)
{
    solver_cgp c;
    char err[256] = "";
    assert_int_equal(solver_cgp_parse(cgp, NULL, solver_dist_english(), &c, err, sizeof err), -1);
    if (!strstr(err, needle))
        fail_msg("CGP error \"%s\" does not mention \"%s\"", err, needle);
}

static void test_cgp_errors(void **state)
{
    (void)state;
    expect_cgp_error("15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0", "14 rows");
    expect_cgp_error(EMPTY "/15 AEINRST/ 0/0 0", "more than 15 rows");
    expect_cgp_error("15/15/15/15/15/15/15/15A/15/15/15/15/15/15/15 AEINRST/ 0/0 0",
                     "row 8 is too long");
    expect_cgp_error("15/15/14/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0",
                     "row 3 has 14 squares");
    expect_cgp_error("15/15/15/15/15/15/15/7#7/15/15/15/15/15/15/15 AEINRST/ 0/0 0",
                     "unknown letter '#' in row 8");
    expect_cgp_error("15/15/15/15/15/15/15/ZZ13/15/15/15/15/15/15/15 AEINRST/ 0/0 0", "2 Z tiles");
    expect_cgp_error("15/15/15/15/15/15/15/zq13/15/15/15/15/15/15/15 ?"
                     "?/ 0/0 0",
                     "4 blanks");
    expect_cgp_error(EMPTY " AEI1/ 0/0 0", "unknown tile '1' in rack 1");
    expect_cgp_error(EMPTY " AEINRSTU/ 0/0 0", "more than 7 tiles");
    expect_cgp_error(EMPTY, "missing racks");
    expect_cgp_error(EMPTY " AEINRST/", "missing scores");
    expect_cgp_error(EMPTY " AEINRST/ 0/0", "zero-score turns");
    expect_cgp_error(EMPTY " AEINRST/ 0 0", "1 scores for 2 racks");
    expect_cgp_error(EMPTY " AEINRST/ 0/0 0 lex NWL20", "not terminated");
    expect_cgp_error("", "empty position");
}

static void test_cgp_roundtrip(void **state)
{
    (void)state;
    const char *in =
        "15/15/15/15/15/15/15/3ReTAINS5/15/15/15/15/15/15/15 ?DEQUU/ABC 74/12 3 lex NWL20;";
    solver_cgp c;
    char err[256], out[600];
    assert_int_equal(solver_cgp_parse(in, NULL, solver_dist_english(), &c, err, sizeof err), 0);
    assert_int_equal(c.board.ntiles, 7);
    bool blank;
    assert_int_equal(solver_board_get(&c.board, 7, 4, &blank), 'E');
    assert_true(blank);
    assert_int_equal(c.racks[0].counts[0], 1);
    assert_int_equal(c.racks[0].counts[21], 2);
    assert_int_equal(c.scores[0], 74);
    assert_int_equal(c.zero_turns, 3);
    assert_string_equal(c.lexicon, "NWL20");
    solver_cgp_format(&c, out, sizeof out);
    assert_string_equal(
        out, "15/15/15/15/15/15/15/3ReTAINS5/15/15/15/15/15/15/15 DEQUU?/ABC 74/12 3 lex NWL20;");
}

static void test_notation(void **state)
{
    (void)state;
    void *img;
    solver_lexicon *lex = test_lexicon("gentian\nagential\nat\n", &img);
    solver_board b;
    solver_board_init(&b, solver_dist_english());
    solver_board_place(&b, lex, 7, 6, 1); /* A at 8G */
    solver_move m;
    char err[128], s[64];
    assert_int_equal(solver_move_parse(&b, "G8 (A)GeNTIAL", &m, err, sizeof err), 0);
    assert_int_equal(m.dir, SOLVER_DOWN);
    assert_int_equal(m.row, 7);
    assert_int_equal(m.col, 6);
    assert_int_equal(m.len, 8);
    assert_int_equal(m.ntiles, 7);
    assert_true(m.tiles[0] & SOLVER_THROUGH);
    assert_true(m.tiles[2] & SOLVER_BLANK);
    solver_move_format(&m, s, sizeof s);
    assert_string_equal(s, "G8 (A)GeNTIAL");
    /* Letters typed over the board tile are taken as played through. */
    assert_int_equal(solver_move_parse(&b, "G8 AGENTIAL", &m, err, sizeof err), 0);
    solver_move_format(&m, s, sizeof s);
    assert_string_equal(s, "G8 (A)GENTIAL");
    assert_int_equal(solver_move_parse(&b, "8A AT", &m, err, sizeof err), 0);
    solver_move_format(&m, s, sizeof s);
    assert_string_equal(s, "8A AT");
    assert_int_equal(solver_move_parse(&b, "8G B", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "holds A"));
    assert_int_equal(solver_move_parse(&b, "16A AT", &m, err, sizeof err), -1);
    assert_int_equal(solver_move_parse(&b, "8O AT", &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "off the board"));
    assert_int_equal(solver_move_parse(&b, "-", &m, err, sizeof err), 0);
    assert_int_equal(m.kind, SOLVER_MOVE_PASS);
    assert_int_equal(solver_move_parse(&b, "-AB?", &m, err, sizeof err), 0);
    assert_int_equal(m.kind, SOLVER_MOVE_EXCHANGE);
    solver_move_format(&m, s, sizeof s);
    assert_string_equal(s, "-AB?");
    solver_lexicon_free(lex);
    free(img);
}

static void test_rack_and_bag(void **state)
{
    (void)state;
    solver_rack r;
    char s[16];
    assert_int_equal(solver_rack_parse(&r, "tAe?Z"), 0);
    solver_rack_format(&r, s, sizeof s);
    assert_string_equal(s, "AETZ?");
    assert_int_equal(solver_rack_parse(&r, "ABCDEFGH"), -1);
    assert_int_equal(solver_rack_parse(&r, "AB1"), -1);

    const solver_dist *d = solver_dist_english();
    int total = 0, value = 0;
    for (int c = 0; c < 27; c++) {
        total += d->count[c];
        value += d->count[c] * d->value[c];
    }
    assert_int_equal(total, 100);
    assert_int_equal(d->count[0], 2);
    assert_int_equal(value, 187);

    solver_bag a, b;
    solver_bag_init(&a, d, 42);
    solver_bag_init(&b, d, 42);
    assert_memory_equal(&a, &b, sizeof a);
    solver_bag_init(&b, d, 43);
    assert_memory_not_equal(a.tiles, b.tiles, 100);
    solver_rack ra = {{0}, 0};
    assert_int_equal(solver_bag_fill_rack(&a, &ra), 7);
    assert_int_equal(a.n, 93);
    uint8_t back[2] = {1, 2};
    solver_bag_return(&a, back, 2);
    assert_int_equal(a.n, 95);
}

static void test_gcg_roundtrip(void **state)
{
    (void)state;
    void *img;
    solver_lexicon *lex = test_lexicon("retains\nstare\nat\n", &img);
    solver_board b;
    solver_board_init(&b, solver_dist_english());
    solver_gcg g;
    memset(&g, 0, sizeof g);
    strcpy(g.player_nick[0], "ann");
    strcpy(g.player_nick[1], "bob");
    strcpy(g.player_name[0], "Ann A");
    strcpy(g.player_name[1], "Bob B");
    solver_gcg_turn t;
    memset(&t, 0, sizeof t);
    char err[128];
    solver_rack_parse(&t.rack, "AEINRST");
    assert_int_equal(solver_move_parse(&b, "8H RETAINS", &t.move, err, sizeof err), 0);
    t.move.score = 74;
    t.cumulative = 74;
    solver_gcg_add(&g, &t);
    solver_board_apply(&b, lex, &t.move);
    memset(&t, 0, sizeof t);
    t.player = 1;
    solver_rack_parse(&t.rack, "AERST");
    assert_int_equal(solver_move_parse(&b, "N8 (S)TARE", &t.move, err, sizeof err), 0);
    t.move.score = 10;
    t.cumulative = 10;
    solver_gcg_add(&g, &t);
    memset(&t, 0, sizeof t);
    solver_rack_parse(&t.rack, "QQ");
    t.move.kind = SOLVER_MOVE_PASS;
    t.cumulative = 74;
    solver_gcg_add(&g, &t);
    size_t need = solver_gcg_format(&g, NULL, 0);
    char *text = malloc(need + 1);
    solver_gcg_format(&g, text, need + 1);
    assert_non_null(strstr(text, ">bob: AERST N8 .TARE +10 10\n"));
    solver_gcg back;
    assert_int_equal(solver_gcg_parse(text, lex, &back, err, sizeof err), 0);
    assert_int_equal(back.nturns, 3);
    assert_string_equal(back.player_nick[1], "bob");
    assert_int_equal(back.turns[1].player, 1);
    assert_move_equal(&back.turns[1].move, &g.turns[1].move);
    assert_int_equal(back.turns[2].move.kind, SOLVER_MOVE_PASS);
    solver_gcg_free(&back);
    assert_int_equal(solver_gcg_parse(">ann: AB 8H\n", lex, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 1"));
    free(text);
    solver_gcg_free(&g);
    solver_gcg_free(&back);
    solver_lexicon_free(lex);
    free(img);
}

static void test_exchanges_and_pass(void **state)
{
    (void)state;
    void *img;
    solver_lexicon *lex = test_lexicon("ab\nba\n", &img);
    solver_board b;
    solver_board_init(&b, solver_dist_english());
    solver_rack r;
    solver_rack_parse(&r, "AAB?");
    solver_move moves[512];
    solver_gen_opts o = {.bag_count = 7, .with_exchanges = true, .with_pass = true};
    size_t n = solver_gen(&b, lex, solver_dist_english(), &r, &o, moves, 512);
    size_t plays = 0, ex = 0, pass = 0;
    for (size_t i = 0; i < n; i++) {
        plays += moves[i].kind == SOLVER_MOVE_PLAY;
        ex += moves[i].kind == SOLVER_MOVE_EXCHANGE;
        pass += moves[i].kind == SOLVER_MOVE_PASS;
    }
    assert_int_equal(ex, 3 * 2 * 2 - 1); /* distinct non-empty sub-multisets of AAB? */
    assert_int_equal(pass, 1);
    assert_true(plays > 0);
    o.bag_count = 6; /* exchanging needs 7 tiles in the bag */
    n = solver_gen(&b, lex, solver_dist_english(), &r, &o, moves, 512);
    for (size_t i = 0; i < n; i++)
        assert_int_not_equal(moves[i].kind, SOLVER_MOVE_EXCHANGE);
    /* Top-N includes them at score 0, after any scoring play. */
    o.bag_count = 7;
    o.top_n = 512;
    size_t nt = solver_gen(&b, lex, solver_dist_english(), &r, &o, moves, 512);
    assert_int_equal(nt, plays + ex + pass);
    assert_int_equal(moves[0].kind, SOLVER_MOVE_PLAY);
    solver_lexicon_free(lex);
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgp_errors),    cmocka_unit_test(test_cgp_roundtrip),
        cmocka_unit_test(test_notation),      cmocka_unit_test(test_rack_and_bag),
        cmocka_unit_test(test_gcg_roundtrip), cmocka_unit_test(test_exchanges_and_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

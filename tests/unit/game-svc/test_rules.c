/*
 * test_rules.c — the game state machine: hand-worked scores, every illegal
 * play reason, turn order, exchange, every end condition with its rack
 * adjustments and winners, the deterministic bag, and replay.
 *
 * A tiny in-memory lexicon keeps the hand-worked examples independent of
 * the system word list; the full-game tests use the default lexicon.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "rules.h"

static const char *WORDS = "at\nta\ncat\ncats\ntax\nretains\nqi\nza\nax\nex\nxi\nsat\nit\nti\n";

typedef struct fixture {
    void *image;
    solver_lexicon *lex;
    game_state g;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char err[128];
    size_t len;
    assert_int_equal(solver_lexicon_compile_buffer(WORDS, strlen(WORDS), NULL, &f->image, &len,
                                                   NULL, err, sizeof err),
                     0);
    f->lex = solver_lexicon_from_buffer(f->image, len, err, sizeof err);
    assert_non_null(f->lex);
    assert_int_equal(game_rules_init(&f->g, f->lex, solver_dist_english(), 42, 2), 0);
    f->g.seats[0].account_id = 100;
    f->g.seats[1].account_id = 200;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    solver_lexicon_free(f->lex);
    free(f->image);
    free(f);
    return 0;
}

static void set_rack(game_state *g, int seat, const char *tiles)
{
    assert_int_equal(solver_rack_parse(&g->seats[seat].rack, tiles), 0);
}

/* Plays `word` (upper case, '?x' for a blank x) from (row, col). */
static int play(game_state *g, int seat, int row, int col, int down, const char *word,
                game_rules_error *err)
{
    solver_placement p[SOLVER_DIM];
    size_t n = 0;
    for (const char *w = word; *w; w++) {
        bool blank = *w == '?';
        if (blank)
            w++;
        p[n].row = row;
        p[n].col = col;
        p[n].letter = *w;
        p[n].is_blank = blank;
        n++;
        if (down)
            row++;
        else
            col++;
    }
    game_turn t = {.kind = GAME_MOVE_PLAY, .seat = seat, .placed = p, .nplaced = n};
    game_state next;
    game_move mv;
    int rc = game_rules_turn(g, &t, 1000, &next, &mv, err);
    if (rc == GAME_RULES_OK)
        *g = next;
    return rc;
}

/* Plays placements given as (row, col, letter) triples. */
static int play_at(game_state *g, int seat, const solver_placement *p, size_t n,
                   game_rules_error *err)
{
    game_turn t = {.kind = GAME_MOVE_PLAY, .seat = seat, .placed = p, .nplaced = n};
    game_state next;
    game_move mv;
    int rc = game_rules_turn(g, &t, 1000, &next, &mv, err);
    if (rc == GAME_RULES_OK)
        *g = next;
    return rc;
}

static int simple(game_state *g, int seat, int kind, const char *tiles, game_rules_error *err)
{
    game_turn t = {.kind = kind, .seat = seat, .tiles = tiles};
    game_state next;
    game_move mv;
    int rc = game_rules_turn(g, &t, 1000, &next, &mv, err);
    if (rc == GAME_RULES_OK)
        *g = next;
    return rc;
}

/* ---- dealing and the bag ---------------------------------------------- */

static void test_deal(void **state)
{
    fixture *f = *state;
    for (int n = 2; n <= 4; n++) {
        game_state g;
        assert_int_equal(game_rules_init(&g, f->lex, solver_dist_english(), 7, n), 0);
        for (int s = 0; s < n; s++)
            assert_int_equal(g.seats[s].rack.n, 7);
        assert_int_equal(g.bag.n, 100 - 7 * n);
        assert_int_equal(g.to_move, 0);
        assert_int_equal(g.seq, 0);
        assert_int_equal(g.status, GAME_STATUS_ACTIVE);
    }
    game_state g;
    assert_int_equal(game_rules_init(&g, f->lex, solver_dist_english(), 7, 1), -1);
    assert_int_equal(game_rules_init(&g, f->lex, solver_dist_english(), 7, 5), -1);
}

static void test_bag_deterministic(void **state)
{
    fixture *f = *state;
    game_state a, b, c;
    game_rules_init(&a, f->lex, solver_dist_english(), 123456789, 3);
    game_rules_init(&b, f->lex, solver_dist_english(), 123456789, 3);
    game_rules_init(&c, f->lex, solver_dist_english(), 123456790, 3);
    assert_memory_equal(&a.bag, &b.bag, sizeof a.bag);
    for (int s = 0; s < 3; s++)
        assert_memory_equal(&a.seats[s].rack, &b.seats[s].rack, sizeof(solver_rack));
    assert_true(memcmp(a.bag.tiles, c.bag.tiles, sizeof a.bag.tiles) != 0);
    /* Tile conservation: racks + bag = the 100-tile set. */
    int count[27] = {0};
    for (int i = 0; i < a.bag.n; i++)
        count[a.bag.tiles[i]]++;
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 27; k++)
            count[k] += a.seats[s].rack.counts[k];
    for (int k = 0; k < 27; k++)
        assert_int_equal(count[k], solver_dist_english()->count[k]);
}

/* The exchange reshuffle is a function of seed and history only. */
static void test_exchange_deterministic(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state a = f->g, b = f->g;
    char tiles[8];
    solver_rack_format(&a.seats[0].rack, tiles, sizeof tiles);
    tiles[3] = 0; /* exchange the first three */
    assert_int_equal(simple(&a, 0, GAME_MOVE_EXCHANGE, tiles, &err), GAME_RULES_OK);
    assert_int_equal(simple(&b, 0, GAME_MOVE_EXCHANGE, tiles, &err), GAME_RULES_OK);
    assert_memory_equal(&a.bag, &b.bag, sizeof a.bag);
    assert_memory_equal(&a.seats[0].rack, &b.seats[0].rack, sizeof(solver_rack));
    assert_int_equal(a.seats[0].rack.n, 7);
    assert_int_equal(a.bag.n, f->g.bag.n);
    assert_int_equal(a.seq, 1);
    assert_int_equal(a.to_move, 1);
    assert_int_equal(a.scoreless, 1);
    assert_string_equal(a.last.notation, "EXCH 3");
    assert_string_equal(a.last.exchanged, tiles);
}

static void test_exchange_errors(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "AEIOUQZ");
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "X", &err), GAME_RULES_ILLEGAL);
    assert_string_equal(err.reason, "illegal_play:tile_not_on_rack");
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "QQ", &err), GAME_RULES_ILLEGAL);
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "?", &err), GAME_RULES_ILLEGAL);
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "", &err), GAME_RULES_BAD_REQUEST);
    g.bag.n = 6;
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "Q", &err), GAME_RULES_BAG_TOO_SMALL);
    assert_string_equal(err.reason, "bag_too_small");
    g.bag.n = 7;
    assert_int_equal(simple(&g, 0, GAME_MOVE_EXCHANGE, "q", &err), GAME_RULES_OK);
    assert_int_equal(g.bag.n, 7);
}

/* ---- scoring, worked by hand ------------------------------------------ */

static void test_score_first_play(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "CATXEIS");
    /* CAT at 8H: C3 (centre, double word) + A1 + T1 = 5, doubled = 10. */
    assert_int_equal(play(&g, 0, 7, 7, 0, "CAT", &err), GAME_RULES_OK);
    assert_int_equal(g.last.score, 10);
    assert_int_equal(g.seats[0].score, 10);
    assert_string_equal(g.last.words[0], "CAT");
    assert_string_equal(g.last.notation, "8H CAT");
    assert_int_equal(g.last.nplaced, 3);
    assert_int_equal(g.seats[0].rack.n, 7); /* refilled */
    assert_int_equal(g.to_move, 1);
    assert_int_equal(g.seq, 1);
    /* Seat 1 hooks S at 8K: CATS = 3+1+1+1 = 6 (no premium at K8). */
    set_rack(&g, 1, "SXAEIOU");
    assert_int_equal(play(&g, 1, 7, 10, 0, "S", &err), GAME_RULES_OK);
    assert_int_equal(g.last.score, 6);
    assert_string_equal(g.last.words[0], "CATS");
    /* Seat 0: TAX down from the T at J8: T1 + A1 (J9 plain) + X8 on the
     * triple letter at J10 = 24, total 26. */
    set_rack(&g, 0, "AXEEIOU");
    solver_placement p[2] = {{8, 9, 'A', false}, {9, 9, 'X', false}};
    assert_int_equal(play_at(&g, 0, p, 2, &err), GAME_RULES_OK);
    assert_int_equal(g.last.score, 26);
    assert_string_equal(g.last.words[0], "TAX");
    assert_int_equal(g.seats[0].score, 36);
    assert_int_equal(g.seats[1].score, 6);
}

static void test_score_blank_and_bingo(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    /* A blank scores 0: C3 + ?a 0 + T1 = 4, doubled = 8. */
    set_rack(&g, 0, "CT?EEII");
    assert_int_equal(play(&g, 0, 7, 7, 0, "C?AT", &err), GAME_RULES_OK);
    assert_int_equal(g.last.score, 8);
    assert_true(g.last.placed[1].is_blank);
    assert_int_equal(g.board.sq[7 * 15 + 8], 1 | SOLVER_BLANK);
    /* Seven tiles: RETAINS at 8E..8K, all plain but the centre (double
     * word): 7 x 1 = 7, doubled = 14, + 50 = 64. */
    game_state h = f->g;
    set_rack(&h, 0, "AEINRST");
    assert_int_equal(play(&h, 0, 7, 4, 0, "RETAINS", &err), GAME_RULES_OK);
    assert_int_equal(h.last.score, 64);
    /* One square left, RETAINS at 8D puts R on the double letter D8:
     * (2 + 6) x 2 + 50 = 66. */
    game_state k = f->g;
    set_rack(&k, 0, "AEINRST");
    assert_int_equal(play(&k, 0, 7, 3, 0, "RETAINS", &err), GAME_RULES_OK);
    assert_int_equal(k.last.score, 66);
}

/* ---- every illegal play ------------------------------------------------ */

static void expect_illegal(game_state *g, int seat, const solver_placement *p, size_t n,
                           const char *reason, const char *in_message)
{
    game_rules_error err;
    game_state before = *g;
    assert_int_equal(play_at(g, seat, p, n, &err), GAME_RULES_ILLEGAL);
    assert_string_equal(err.reason, reason);
    if (in_message && !strstr(err.message, in_message))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, in_message);
    assert_memory_equal(&before, g, sizeof before); /* nothing applied */
}

static void test_illegal_plays(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "CATSXQI");
    solver_placement off[1] = {{7, 15, 'C', false}};
    expect_illegal(&g, 0, off, 1, "illegal_play:off_board", NULL);
    solver_placement misses[2] = {{0, 0, 'A', false}, {0, 1, 'T', false}};
    expect_illegal(&g, 0, misses, 2, "illegal_play:misses_centre", "8H");
    solver_placement notrack[2] = {{7, 7, 'Z', false}, {7, 8, 'A', false}};
    expect_illegal(&g, 0, notrack, 2, "illegal_play:tile_not_on_rack", "Z");
    solver_placement phony[2] = {{7, 7, 'T', false}, {7, 8, 'C', false}};
    expect_illegal(&g, 0, phony, 2, "illegal_play:invalid_words", "TC");
    solver_placement badletter[1] = {{7, 7, 0, false}};
    expect_illegal(&g, 0, badletter, 1, "illegal_play:bad_letter", NULL);
    expect_illegal(&g, 0, NULL, 0, "illegal_play:no_tiles", NULL);

    assert_int_equal(play(&g, 0, 7, 7, 0, "CAT", &err), GAME_RULES_OK);
    set_rack(&g, 1, "CATSXQI");
    solver_placement occupied[1] = {{7, 7, 'A', false}};
    expect_illegal(&g, 1, occupied, 1, "illegal_play:occupied", "8H");
    solver_placement line[2] = {{8, 7, 'A', false}, {9, 8, 'T', false}};
    expect_illegal(&g, 1, line, 2, "illegal_play:not_in_line", NULL);
    solver_placement gap[2] = {{8, 7, 'A', false}, {10, 7, 'T', false}};
    expect_illegal(&g, 1, gap, 2, "illegal_play:gap", "10H");
    solver_placement far[2] = {{0, 0, 'A', false}, {0, 1, 'T', false}};
    expect_illegal(&g, 1, far, 2, "illegal_play:not_connected", NULL);
    solver_placement crossphony[2] = {{8, 8, 'Q', false}, {8, 9, 'I', false}};
    expect_illegal(&g, 1, crossphony, 2, "illegal_play:invalid_words", NULL);
}

/* ---- turn order, game over, idempotency ------------------------------- */

static void test_turn_order(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    assert_int_equal(simple(&g, 1, GAME_MOVE_PASS, NULL, &err), GAME_RULES_NOT_YOUR_TURN);
    assert_string_equal(err.reason, "not_your_turn");
    assert_int_equal(simple(&g, 0, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
    assert_int_equal(g.to_move, 1);
    assert_int_equal(simple(&g, 0, GAME_MOVE_PASS, NULL, &err), GAME_RULES_NOT_YOUR_TURN);
    assert_int_equal(simple(&g, 1, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
    assert_int_equal(g.to_move, 0);
    assert_int_equal(g.seq, 2);
    assert_string_equal(g.last.notation, "PASS");
}

static void test_same_move(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "CATSXQI");
    assert_int_equal(play(&g, 0, 7, 7, 0, "CAT", &err), GAME_RULES_OK);
    solver_placement again[3] = {{7, 9, 't', false}, {7, 7, 'C', false}, {7, 8, 'A', false}};
    game_turn t = {.kind = GAME_MOVE_PLAY, .seat = 0, .placed = again, .nplaced = 3};
    assert_true(game_rules_same_move(&g.last, &t));
    t.nplaced = 2;
    assert_false(game_rules_same_move(&g.last, &t));
    t.nplaced = 3;
    t.seat = 1;
    assert_false(game_rules_same_move(&g.last, &t));
    game_turn pass = {.kind = GAME_MOVE_PASS, .seat = 0};
    assert_false(game_rules_same_move(&g.last, &pass));
    /* One committed tile named twice is not the same move, though the
     * count matches and every requested tile is on the board. */
    solver_placement twice[3] = {{7, 7, 'C', false}, {7, 7, 'C', false}, {7, 8, 'A', false}};
    game_turn dup = {.kind = GAME_MOVE_PLAY, .seat = 0, .placed = twice, .nplaced = 3};
    assert_false(game_rules_same_move(&g.last, &dup));
    /* A blank flag differs: another move. */
    solver_placement blank[3] = {{7, 7, 'C', false}, {7, 8, 'A', true}, {7, 9, 'T', false}};
    game_turn bl = {.kind = GAME_MOVE_PLAY, .seat = 0, .placed = blank, .nplaced = 3};
    assert_false(game_rules_same_move(&g.last, &bl));
}

/* ---- end conditions ---------------------------------------------------- */

static void test_end_scoreless(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "QZ");     /* 20 */
    set_rack(&g, 1, "AEIOU?"); /* 5 */
    g.seats[0].score = 30;
    g.seats[1].score = 20;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(simple(&g, g.to_move, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
        assert_int_equal(g.status, GAME_STATUS_ACTIVE);
    }
    assert_int_equal(g.scoreless, 5);
    assert_int_equal(simple(&g, g.to_move, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
    assert_int_equal(g.status, GAME_STATUS_FINISHED);
    assert_int_equal(g.end_reason, GAME_END_SCORELESS);
    assert_int_equal(g.seats[0].score, 10); /* 30 - 20 */
    assert_int_equal(g.seats[1].score, 15); /* 20 - 5 */
    assert_int_equal(g.nwinners, 1);
    assert_int_equal(g.winners[0], 1);
    assert_int_equal(simple(&g, g.to_move, GAME_MOVE_PASS, NULL, &err), GAME_RULES_GAME_OVER);
    assert_string_equal(err.reason, "game_over");
}

static void test_scoring_play_resets_scoreless(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    for (int i = 0; i < 4; i++)
        assert_int_equal(simple(&g, g.to_move, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
    set_rack(&g, 0, "CATEEII");
    assert_int_equal(play(&g, 0, 7, 7, 0, "CAT", &err), GAME_RULES_OK);
    assert_int_equal(g.scoreless, 0);
}

static void test_end_out(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g;
    assert_int_equal(game_rules_init(&g, f->lex, solver_dist_english(), 9, 3), 0);
    g.bag.n = 0; /* the bag is empty */
    set_rack(&g, 0, "CAT");
    set_rack(&g, 1, "QZ"); /* 20 */
    set_rack(&g, 2, "XE"); /* 9 */
    g.seats[1].score = 40;
    g.seats[2].score = 5;
    assert_int_equal(play(&g, 0, 7, 7, 0, "CAT", &err), GAME_RULES_OK);
    assert_int_equal(g.status, GAME_STATUS_FINISHED);
    assert_int_equal(g.end_reason, GAME_END_OUT);
    assert_int_equal(g.seats[0].score, 10 + 29);
    assert_int_equal(g.seats[1].score, 20);
    assert_int_equal(g.seats[2].score, -4);
    assert_int_equal(g.nwinners, 1);
    assert_int_equal(g.winners[0], 0);
    assert_int_equal(g.last.score, 10); /* the move keeps its own score */
}

static void test_end_tie(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    set_rack(&g, 0, "A");
    set_rack(&g, 1, "E");
    g.seats[0].score = 10;
    g.seats[1].score = 10;
    for (int i = 0; i < 6; i++)
        assert_int_equal(simple(&g, g.to_move, GAME_MOVE_PASS, NULL, &err), GAME_RULES_OK);
    assert_int_equal(g.status, GAME_STATUS_FINISHED);
    assert_int_equal(g.nwinners, 2);
    assert_int_equal(g.seats[0].score, 9);
    assert_int_equal(g.seats[1].score, 9);
}

static void test_end_resign(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g;
    assert_int_equal(game_rules_init(&g, f->lex, solver_dist_english(), 9, 4), 0);
    g.seats[1].score = 50; /* the leader resigns, out of turn */
    g.seats[2].score = 12;
    g.seats[3].score = 12;
    assert_int_equal(simple(&g, 1, GAME_MOVE_RESIGN, NULL, &err), GAME_RULES_OK);
    assert_int_equal(g.status, GAME_STATUS_FINISHED);
    assert_int_equal(g.end_reason, GAME_END_RESIGN);
    assert_int_equal(g.resigned_seat, 1);
    assert_int_equal(g.seats[1].score, 50); /* no adjustments */
    assert_int_equal(g.nwinners, 2);
    assert_int_equal(g.winners[0], 2);
    assert_int_equal(g.winners[1], 3);
    assert_int_equal(g.last.seat, 1);
    assert_int_equal(g.last.kind, GAME_MOVE_RESIGN);
    assert_int_equal(simple(&g, 0, GAME_MOVE_RESIGN, NULL, &err), GAME_RULES_GAME_OVER);
}

/* ---- full games with the default lexicon, and replay ------------------ */

static solver_lexicon *default_lexicon(void)
{
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(GAME_TEST_LEXICON, err, sizeof err);
    if (!lex)
        fail_msg("%s", err);
    return lex;
}

/* The game's record (record.c) read back by the solver's GCG reader:
 * every line's total is the previous total plus its points, every seat's
 * last total is its final score, the rack adjustments sum as the rules
 * say, and the first rack of each seat is the one dealt. */
static void check_record(const game_state *fin, const game_move *moves, size_t n,
                         const solver_lexicon *lex)
{
    static const char *names[] = {"ann", "bob", "cy",
                                  "d\xc3\xa9"
                                  "e"}; /* the last is not ASCII */
    game_state g = *fin;
    for (int s = 0; s < g.nseats; s++)
        snprintf(g.seats[s].handle, sizeof g.seats[s].handle, "%s", names[s]);
    game_record rec;
    char err[160];
    assert_int_equal(game_record_build(&g, moves, n, "wamerican", &rec, err, sizeof err), 0);
    assert_int_equal(rec.nracks, n);
    game_state start;
    game_rules_init(&start, g.lex, g.dist, g.seed, g.nseats);
    char dealt[16];
    solver_rack_format(&start.seats[0].rack, dealt, sizeof dealt);
    assert_string_equal(rec.racks[0], dealt);
    assert_non_null(strstr(rec.gcg, "#player1 ann ann\n"));
    if (g.nseats == 4)
        assert_non_null(strstr(rec.gcg, "#player4 p4 d\xc3\xa9"
                                        "e\n"));
    assert_non_null(strstr(rec.gcg, "#lexicon wamerican\n"));
    solver_gcg back;
    if (solver_gcg_parse(rec.gcg, lex, &back, err, sizeof err) != 0)
        fail_msg("%s\n%s", err, rec.gcg);
    assert_int_equal(back.nplayers, g.nseats);
    int total[GAME_MAX_SEATS] = {0}, adj = 0, ends = 0;
    for (size_t i = 0; i < back.nturns; i++) {
        const solver_gcg_turn *t = &back.turns[i];
        total[t->player] += t->is_end_rack ? t->end_points : t->move.score;
        assert_int_equal(total[t->player], t->cumulative);
        if (t->is_end_rack) {
            adj += t->end_points;
            ends++;
        }
    }
    for (int s = 0; s < g.nseats; s++)
        assert_int_equal(total[s], g.seats[s].score);
    assert_true(ends > 0);
    if (g.end_reason == GAME_END_OUT)
        assert_int_equal(adj, 0); /* gained = lost */
    solver_gcg_free(&back);
    game_record_free(&rec);
}

/* Plays a whole game with the generator's best move (pass when none),
 * recording every move; then replays the record onto a fresh game and
 * checks the states are identical. */
static void selfplay(int nseats, uint64_t seed, bool with_exchange)
{
    solver_lexicon *lex = default_lexicon();
    game_state g, r;
    game_rules_error err;
    static game_move moves[512];
    static solver_move gen[64];
    size_t nmoves = 0;
    assert_int_equal(game_rules_init(&g, lex, solver_dist_english(), seed, nseats), 0);
    r = g;
    while (g.status == GAME_STATUS_ACTIVE && nmoves < 512) {
        game_seat *me = &g.seats[g.to_move];
        solver_gen_opts o = {.top_n = 1, .bag_count = g.bag.n};
        size_t n = solver_gen(&g.board, lex, g.dist, &me->rack, &o, gen, 64);
        game_turn t = {.seat = g.to_move};
        solver_placement p[SOLVER_RACK_MAX];
        char tiles[8];
        if (n > 0 && gen[0].kind == SOLVER_MOVE_PLAY) {
            size_t k = 0;
            for (int i = 0; i < gen[0].len; i++) {
                uint8_t x = gen[0].tiles[i];
                if (x & SOLVER_THROUGH)
                    continue;
                p[k].row = gen[0].row + (gen[0].dir == SOLVER_DOWN ? i : 0);
                p[k].col = gen[0].col + (gen[0].dir == SOLVER_ACROSS ? i : 0);
                p[k].letter = (char)('A' + SOLVER_LETTER(x) - 1);
                p[k].is_blank = (x & SOLVER_BLANK) != 0;
                k++;
            }
            t.kind = GAME_MOVE_PLAY;
            t.placed = p;
            t.nplaced = k;
        } else if (with_exchange && g.bag.n >= 7) {
            solver_rack_format(&me->rack, tiles, sizeof tiles);
            tiles[2] = 0;
            t.kind = GAME_MOVE_EXCHANGE;
            t.tiles = tiles;
        } else {
            t.kind = GAME_MOVE_PASS;
        }
        game_state next;
        int rc = game_rules_turn(&g, &t, 1000 + (int64_t)nmoves, &next, &moves[nmoves], &err);
        if (rc != GAME_RULES_OK)
            fail_msg("seq %lld: %s %s", (long long)g.seq + 1, err.reason, err.message);
        if (t.kind == GAME_MOVE_PLAY)
            assert_int_equal(moves[nmoves].score, gen[0].score);
        g = next;
        nmoves++;
    }
    assert_int_equal(g.status, GAME_STATUS_FINISHED);
    assert_true(g.end_reason == GAME_END_OUT || g.end_reason == GAME_END_SCORELESS);
    assert_true(g.nwinners >= 1);
    /* Tiles are conserved: board + racks + bag = 100. */
    int tiles_total = g.bag.n + g.board.ntiles;
    for (int s = 0; s < nseats; s++)
        tiles_total += g.seats[s].rack.n;
    assert_int_equal(tiles_total, 100);
    for (size_t i = 0; i < nmoves; i++)
        if (game_rules_replay(&r, &moves[i], &err) != GAME_RULES_OK)
            fail_msg("replay %zu: %s %s", i, err.reason, err.message);
    assert_memory_equal(r.board.sq, g.board.sq, sizeof g.board.sq);
    assert_memory_equal(&r.bag, &g.bag, sizeof g.bag);
    for (int s = 0; s < nseats; s++) {
        assert_memory_equal(&r.seats[s].rack, &g.seats[s].rack, sizeof(solver_rack));
        assert_int_equal(r.seats[s].score, g.seats[s].score);
    }
    assert_int_equal(r.seq, g.seq);
    assert_int_equal(r.status, g.status);
    assert_int_equal(r.end_reason, g.end_reason);
    assert_int_equal(r.nwinners, g.nwinners);
    check_record(&g, moves, nmoves, lex);
    solver_lexicon_free(lex);
}

static void test_selfplay_2(void **state)
{
    selfplay(2, 1, false);
}
static void test_selfplay_3(void **state)
{
    selfplay(3, 2, true);
}
static void test_selfplay_4(void **state)
{
    selfplay(4, 3, true);
}

static void test_replay_rejects_mismatch(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    game_move m = {.seq = 2, .seat = 0, .kind = GAME_MOVE_PASS};
    assert_int_not_equal(game_rules_replay(&g, &m, &err), GAME_RULES_OK);
    m.seq = 1;
    m.seat = 1;
    assert_int_equal(game_rules_replay(&g, &m, &err), GAME_RULES_NOT_YOUR_TURN);
    m.seat = 0;
    assert_int_equal(game_rules_replay(&g, &m, &err), GAME_RULES_OK);
}

static void test_board_rows(void **state)
{
    fixture *f = *state;
    game_rules_error err;
    game_state g = f->g;
    char rows[15][16];
    set_rack(&g, 0, "CT?EEII");
    assert_int_equal(play(&g, 0, 7, 7, 0, "C?AT", &err), GAME_RULES_OK);
    game_rules_board_rows(&g, rows);
    assert_string_equal(rows[7], ".......CaT.....");
    assert_string_equal(rows[0], "...............");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bag_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exchange_deterministic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exchange_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_score_first_play, setup, teardown),
        cmocka_unit_test_setup_teardown(test_score_blank_and_bingo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_illegal_plays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_turn_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_scoreless, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scoring_play_resets_scoreless, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_tie, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_resign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_rejects_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_board_rows, setup, teardown),
        cmocka_unit_test(test_selfplay_2),
        cmocka_unit_test(test_selfplay_3),
        cmocka_unit_test(test_selfplay_4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of scrabble-cli's pure parts: play notation against a board,
 * shell line splitting, ids and tiles, and the views.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "notation.h"
#include "view.h"

/* An empty board with "QUIXOTIC" across 8D..8K and a blank 'e' at 9H. */
static char rows[15][16];
static const char *board[15];

static void board_reset(void)
{
    for (int r = 0; r < 15; r++) {
        memset(rows[r], '.', 15);
        rows[r][15] = '\0';
        board[r] = rows[r];
    }
    memcpy(rows[7] + 3, "QUIXOTIC", 8);
    rows[8][7] = 'e';
}

static int parse(const char *text, cli_placement *p, size_t *n, char *err)
{
    return cli_notation_parse(text, board, 15, p, n, err, 256);
}

static void test_coord(void **state)
{
    int r, c;
    bool across;
    assert_int_equal(cli_notation_coord("8D", 2, &r, &c, &across), 0);
    assert_int_equal(r, 7);
    assert_int_equal(c, 3);
    assert_true(across);
    assert_int_equal(cli_notation_coord("d8", 2, &r, &c, &across), 0);
    assert_int_equal(r, 7);
    assert_int_equal(c, 3);
    assert_false(across);
    assert_int_equal(cli_notation_coord("15O", 3, &r, &c, &across), 0);
    assert_int_equal(r, 14);
    assert_int_equal(c, 14);
    assert_int_equal(cli_notation_coord("O15", 3, &r, &c, &across), 0);
    assert_int_equal(cli_notation_coord("16A", 3, &r, &c, &across), -1);
    assert_int_equal(cli_notation_coord("8P", 2, &r, &c, &across), -1);
    assert_int_equal(cli_notation_coord("0A", 2, &r, &c, &across), -1);
    assert_int_equal(cli_notation_coord("A08", 3, &r, &c, &across), -1);
    assert_int_equal(cli_notation_coord("88", 2, &r, &c, &across), -1);
    assert_int_equal(cli_notation_coord("AB", 2, &r, &c, &across), -1);
    char sq[8];
    assert_string_equal(cli_square_name(7, 3, sq), "8D");
}

static void test_first_move(void **state)
{
    cli_placement p[15];
    size_t n;
    char err[256];
    /* An empty board: every letter is new; lower case is a blank. */
    assert_int_equal(cli_notation_parse("8D QUIxOTIC", NULL, 0, p, &n, err, sizeof err), 0);
    assert_int_equal(n, 8);
    assert_int_equal(p[0].row, 7);
    assert_int_equal(p[0].col, 3);
    assert_int_equal(p[0].letter, 'Q');
    assert_false(p[0].blank);
    assert_int_equal(p[3].letter, 'X');
    assert_true(p[3].blank);
    assert_int_equal(p[7].col, 10);
    /* Down: rows advance. */
    assert_int_equal(cli_notation_parse("  h4   WORD  ", NULL, 0, p, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    assert_int_equal(p[0].row, 3);
    assert_int_equal(p[0].col, 7);
    assert_int_equal(p[3].row, 6);
    assert_int_equal(p[3].col, 7);
}

static void test_existing_tiles(void **state)
{
    cli_placement p[15];
    size_t n;
    char err[256];
    board_reset();
    /* Through the X at 8G, spelled out in full: the X is skipped. */
    assert_int_equal(parse("G5 AXE", p, &n, err), 0); /* rows 5,6,7: A at 5G? */
    /* G5 down: 5G, 6G, 7G -- none on the board (the X is at 8G). */
    assert_int_equal(n, 3);
    assert_int_equal(parse("G7 AXE", p, &n, err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].row, 6);
    assert_int_equal(p[1].row, 8);
    assert_int_equal(p[1].letter, 'E');
    /* In parentheses, and '.' for whatever is there. */
    assert_int_equal(parse("G7 A(X)E", p, &n, err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(parse("G7 A.E", p, &n, err), 0);
    assert_int_equal(n, 2);
    /* The blank 'e' at 9H matches an E. */
    assert_int_equal(parse("9F RE(E)D", p, &n, err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(p[2].col, 8);
    /* Mismatches and misuse. */
    assert_int_equal(parse("G7 AYE", p, &n, err), -1);
    assert_non_null(strstr(err, "8G already holds X, not Y"));
    assert_int_equal(parse("G7 A(Y)E", p, &n, err), -1);
    assert_non_null(strstr(err, "8G holds X, not Y"));
    assert_int_equal(parse("G4 (A)B", p, &n, err), -1);
    assert_non_null(strstr(err, "4G is empty"));
    assert_int_equal(parse("8D QUIXOTIC", p, &n, err), -1);
    assert_non_null(strstr(err, "no new tile"));
}

static void test_bad_notation(void **state)
{
    cli_placement p[15];
    size_t n;
    char err[256];
    board_reset();
    assert_int_equal(parse("", p, &n, err), -1);
    assert_non_null(strstr(err, "empty play"));
    assert_int_equal(parse("8D", p, &n, err), -1);
    assert_non_null(strstr(err, "no word"));
    assert_int_equal(parse("Z9 WORD", p, &n, err), -1);
    assert_non_null(strstr(err, "bad square 'Z9'"));
    assert_int_equal(parse("1L WORDS", p, &n, err), -1);
    assert_non_null(strstr(err, "runs off the board"));
    assert_int_equal(parse("1A W?RD", p, &n, err), -1);
    assert_non_null(strstr(err, "lower-case"));
    assert_int_equal(parse("1A WO RD", p, &n, err), -1);
    assert_non_null(strstr(err, "one word"));
    assert_int_equal(parse("1A W1RD", p, &n, err), -1);
    assert_int_equal(parse("1A (WORD", p, &n, err), -1);
    assert_int_equal(parse("1A WORD)", p, &n, err), -1);
    assert_int_equal(parse("1A ((W))", p, &n, err), -1);
}

static void test_split(void **state)
{
    char line[256];
    char *argv[8];
    int argc;
    char err[64];
    snprintf(line, sizeof line, "  play 12 \"8D QUIXOTIC\"  ");
    assert_int_equal(cli_split_line(line, argv, 8, &argc, err, sizeof err), 0);
    assert_int_equal(argc, 3);
    assert_string_equal(argv[0], "play");
    assert_string_equal(argv[1], "12");
    assert_string_equal(argv[2], "8D QUIXOTIC");
    snprintf(line, sizeof line, "chat 3 'it''s' a\\ b \"q\\\"x\" \"\"");
    assert_int_equal(cli_split_line(line, argv, 8, &argc, err, sizeof err), 0);
    assert_int_equal(argc, 6);
    assert_string_equal(argv[2], "its");
    assert_string_equal(argv[3], "a b");
    assert_string_equal(argv[4], "q\"x");
    assert_string_equal(argv[5], "");
    snprintf(line, sizeof line, "say \"open");
    assert_int_equal(cli_split_line(line, argv, 8, &argc, err, sizeof err), -1);
    assert_non_null(strstr(err, "unbalanced"));
    snprintf(line, sizeof line, "a b c");
    assert_int_equal(cli_split_line(line, argv, 2, &argc, err, sizeof err), -1);
    snprintf(line, sizeof line, "   ");
    assert_int_equal(cli_split_line(line, argv, 8, &argc, err, sizeof err), 0);
    assert_int_equal(argc, 0);
}

static void test_ids_tiles(void **state)
{
    int64_t id;
    assert_int_equal(cli_parse_id("12", &id), 0);
    assert_int_equal(id, 12);
    assert_int_equal(cli_parse_id("#7", &id), 0);
    assert_int_equal(id, 7);
    assert_int_equal(cli_parse_id("0", &id), -1);
    assert_int_equal(cli_parse_id("-3", &id), -1);
    assert_int_equal(cli_parse_id("12x", &id), -1);
    assert_int_equal(cli_parse_id("", &id), -1);
    assert_int_equal(cli_parse_id("99999999999999999999", &id), -1);
    char out[8], err[128];
    assert_int_equal(cli_parse_tiles("qv?", out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "QV?");
    assert_int_equal(cli_parse_tiles("ABCDEFGH", out, sizeof out, err, sizeof err), -1);
    assert_int_equal(cli_parse_tiles("A1", out, sizeof out, err, sizeof err), -1);
    assert_int_equal(cli_parse_tiles("", out, sizeof out, err, sizeof err), -1);
}

static void test_premium(void **state)
{
    assert_int_equal(cli_premium(0, 0), 'T');
    assert_int_equal(cli_premium(7, 7), '*');
    assert_int_equal(cli_premium(1, 5), 't');
    assert_int_equal(cli_premium(0, 3), 'd');
    assert_int_equal(cli_premium(13, 13), 'D');
    /* The layout is symmetric both ways and about the diagonal. */
    for (int r = 0; r < 15; r++)
        for (int c = 0; c < 15; c++) {
            assert_int_equal(cli_premium(r, c), cli_premium(14 - r, c));
            assert_int_equal(cli_premium(r, c), cli_premium(r, 14 - c));
            assert_int_equal(cli_premium(r, c), cli_premium(c, r));
        }
    int counts[128] = {0};
    for (int r = 0; r < 15; r++)
        for (int c = 0; c < 15; c++)
            counts[(int)cli_premium(r, c)]++;
    assert_int_equal(counts['T'], 8);
    assert_int_equal(counts['D'], 16);
    assert_int_equal(counts['t'], 12);
    assert_int_equal(counts['d'], 24);
}

static char *render_state(const Scrabble__V1__GameState *gs, bool color)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_view_state(f, gs, color);
    fclose(f);
    return buf;
}

static void test_view_state(void **state)
{
    board_reset();
    Scrabble__V1__Seat s0 = SCRABBLE__V1__SEAT__INIT, s1 = SCRABBLE__V1__SEAT__INIT;
    s0.seat = 0;
    s0.handle = "alice";
    s0.score = 120;
    s0.rack_count = 7;
    s1.seat = 1;
    s1.handle = "bob";
    s1.score = 0;
    s1.rack_count = 7;
    Scrabble__V1__Seat *seats[] = {&s0, &s1};
    Scrabble__V1__GameState gs = SCRABBLE__V1__GAME_STATE__INIT;
    gs.game_id = 42;
    gs.status = SCRABBLE__V1__GAME_STATUS__GAME_STATUS_ACTIVE;
    gs.board = (char **)board;
    gs.n_board = 15;
    gs.seats = seats;
    gs.n_seats = 2;
    gs.to_move = 1;
    gs.my_seat = 1;
    gs.my_rack = "AEINR?T";
    gs.bag_count = 84;
    gs.seq = 1;
    gs.lexicon = "wamerican";
    char *out = render_state(&gs, false);
    assert_non_null(strstr(out, "game 42"));
    assert_non_null(strstr(out, "your turn"));
    assert_non_null(strstr(out, "rack: AEINR?T"));
    assert_non_null(strstr(out, "bag 84"));
    assert_non_null(strstr(out, "alice"));
    assert_non_null(strstr(out, "(you)"));
    /* Row 8 shows the word; the blank is lower case; premiums as symbols. */
    assert_non_null(strstr(out, "  8 =  .  .  Q  U  I  X  O  T  I  C  '  .  .  =  8"));
    assert_non_null(strstr(out, "  1 =  .  .  '  .  .  .  =  .  .  .  '  .  .  =  1"));
    assert_non_null(strstr(out, "e "));
    assert_null(strstr(out, "\033["));
    /* The CGP line, from the caller's seat. */
    assert_non_null(strstr(out, "cgp: 15/15/15/15/15/15/15/3QUIXOTIC4/7e7/15/15/15/15/15/15 "
                                "AEINR?T/ 0/120 0 lex wamerican;"));
    free(out);
    out = render_state(&gs, true);
    assert_non_null(strstr(out, "\033["));
    assert_non_null(strstr(out, "3W"));
    free(out);
}

static void test_view_event(void **state)
{
    char buf[512];
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    Scrabble__V1__Move mv = SCRABBLE__V1__MOVE__INIT;
    char *words[] = {"QUIXOTIC"};
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED;
    ev.game_id = 9;
    ev.from_handle = "bob";
    mv.kind = SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY;
    mv.notation = "8D QUIXOTIC";
    mv.score = 88;
    mv.words = words;
    mv.n_words = 1;
    ev.move = &mv;
    assert_string_equal(cli_view_event(&ev, 1, buf, sizeof buf),
                        "game 9: bob played 8D QUIXOTIC for 88 (QUIXOTIC)");
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN;
    ev.seq = 3;
    assert_string_equal(cli_view_event(&ev, 1, buf, sizeof buf), "game 9: your turn (seq 3)");
    Scrabble__V1__Invitee a = SCRABBLE__V1__INVITEE__INIT, b = SCRABBLE__V1__INVITEE__INIT;
    a.handle = "alice";
    b.handle = "bob";
    Scrabble__V1__Invitee *seats[] = {&a, &b};
    Scrabble__V1__Invitation inv = SCRABBLE__V1__INVITATION__INIT;
    inv.invitation_id = 5;
    inv.inviter_handle = "alice";
    inv.seats = seats;
    inv.n_seats = 2;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION;
    ev.invitation = &inv;
    ev.game_id = 0;
    assert_string_equal(cli_view_event(&ev, 2, buf, sizeof buf),
                        "invitation 5 from alice to a game of alice, bob (accept 5 / decline 5)");
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED;
    ev.game_id = 9;
    assert_string_equal(cli_view_event(&ev, 2, buf, sizeof buf),
                        "game 9 started: alice vs bob (show 9)");
    Scrabble__V1__ChatMessage chat = SCRABBLE__V1__CHAT_MESSAGE__INIT;
    chat.handle = "bob";
    chat.text = "good game";
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_CHAT;
    ev.chat = &chat;
    assert_string_equal(cli_view_event(&ev, 2, buf, sizeof buf), "game 9: <bob> good game");
    Scrabble__V1__Seat s0 = SCRABBLE__V1__SEAT__INIT, s1 = SCRABBLE__V1__SEAT__INIT;
    s0.seat = 0, s0.handle = "alice", s0.score = 300, s0.account_id = 1;
    s1.seat = 1, s1.handle = "bob", s1.score = 250, s1.account_id = 2;
    Scrabble__V1__Seat *ss[] = {&s0, &s1};
    int32_t winners[] = {0};
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER;
    ev.seats = ss;
    ev.n_seats = 2;
    ev.winners = winners;
    ev.n_winners = 1;
    ev.end_reason = SCRABBLE__V1__END_REASON__END_REASON_RESIGN;
    assert_string_equal(cli_view_event(&ev, 1, buf, sizeof buf),
                        "game 9 is over (resignation): alice 300, bob 250; won by alice (you!)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coord),          cmocka_unit_test(test_first_move),
        cmocka_unit_test(test_existing_tiles), cmocka_unit_test(test_bad_notation),
        cmocka_unit_test(test_split),          cmocka_unit_test(test_ids_tiles),
        cmocka_unit_test(test_premium),        cmocka_unit_test(test_view_state),
        cmocka_unit_test(test_view_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

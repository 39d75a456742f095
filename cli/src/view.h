/*
 * view.h — what the terminal client prints: the board with its premium
 * squares, a game's state, moves, events, games and invitations. Pure
 * functions from the contract's messages to text, so unit tests reach them
 * without a server. `color` turns on ANSI colours (the caller decides: only
 * when stdout is a terminal, unless told otherwise).
 */
#ifndef CLI_VIEW_H
#define CLI_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scrabble/v1/edge.pb-c.h"

/* Premium of a square: 'T' triple word, 'D' double word, 't' triple letter,
 * 'd' double letter, '*' the centre (a double word), '.' none. */
char cli_premium(int row, int col);

/* The board alone: column letters, row numbers, tiles, premium squares; the
 * tiles of the last move are highlighted in colour (marked '+' without). */
void cli_view_board(FILE *out, const Scrabble__V1__GameState *gs, bool color);

/* The whole state: header (game, lexicon, seq, bag, whose turn or the end),
 * board, seats with scores, the caller's rack, the last move, and a CGP line
 * for scrabble-solver. */
void cli_view_state(FILE *out, const Scrabble__V1__GameState *gs, bool color);

/* "8H WORD for 24 (WORD, AB)", "passed", "exchanged 3 tiles", "resigned";
 * buf gets at most len bytes. Returns buf. */
const char *cli_view_move(const Scrabble__V1__Move *m, char *buf, size_t len);

/* Handle of a seat, or "seat N" when unknown. */
const char *cli_view_seat_handle(const Scrabble__V1__Seat *const *seats, size_t n, int seat,
                                 char *buf, size_t len);

/* One line (no newline) describing a live event for account `me` (0 when
 * unknown). Returns buf. */
const char *cli_view_event(const Scrabble__V1__Event *ev, int64_t me, char *buf, size_t len);

/* One line per game / invitation, for the account `me`. */
void cli_view_games(FILE *out, const Scrabble__V1__ListGamesReply *r, int64_t me);
void cli_view_invitation(FILE *out, const Scrabble__V1__Invitation *inv, int64_t me);

/* "out", "six scoreless turns", "resignation", "?" */
const char *cli_view_end_reason(Scrabble__V1__EndReason r);

#endif

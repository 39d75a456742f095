/*
 * libsolver — Scrabble lexicon graph, board, move generation, scoring,
 * validation and the CGP / GCG / move-notation formats.
 *
 * The library has no global mutable state: a lexicon and a board are values
 * the caller creates and frees.  Nothing here performs I/O except reading or
 * writing a lexicon file and reading a word list.  All functions are
 * thread-safe on distinct objects; a loaded lexicon is read-only and may be
 * shared by any number of threads.
 *
 * Letter codes: 1..26 are A..Z, 0 means "empty square" on a board and "blank"
 * in a rack.  A board square holds the letter code, ORed with SOLVER_BLANK
 * when the tile is a blank designated as that letter.
 */
#ifndef SOLVER_H
#define SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOLVER_DIM 15
#define SOLVER_SQUARES (SOLVER_DIM * SOLVER_DIM)
#define SOLVER_RACK_MAX 7
#define SOLVER_BINGO_BONUS 50
#define SOLVER_BLANK 0x80u   /* square/tile flag: a blank tile */
#define SOLVER_THROUGH 0x40u /* move tile flag: already on the board */
#define SOLVER_LETTER(x) ((uint8_t)((x)&0x1fu))

/* ---- tile distributions (data, not code) ------------------------------ */

typedef struct solver_dist {
    const char *name;
    uint8_t count[27]; /* [0] = blanks, [1..26] = A..Z */
    uint8_t value[27]; /* [0] = 0 (blank) */
    int total;         /* number of tiles in the bag at the start */
} solver_dist;

/* The standard English set: 100 tiles, 2 blanks.  Static storage. */
const solver_dist *solver_dist_english(void);

/* ---- lexicon ---------------------------------------------------------- */

typedef struct solver_lexicon solver_lexicon;

typedef struct solver_compile_stats {
    size_t lines;          /* lines read */
    size_t words;          /* distinct words kept */
    size_t skipped_chars;  /* not a-z after case folding (or not all-lowercase) */
    size_t skipped_length; /* shorter than 2 or longer than 15 letters */
    size_t duplicates;
    size_t nodes; /* 32-bit nodes in the graph */
    size_t bytes; /* file size */
} solver_compile_stats;

typedef struct solver_compile_opts {
    /* Keep only entries that are already all-lowercase a-z (Debian word
     * lists capitalise proper nouns); otherwise case is folded. */
    bool lowercase_only;
} solver_compile_opts;

/* Compile a plain word list (one word per line) into a lexicon file.
 * opts and st may be NULL.  Returns 0, or -1 with a message in err. */
int solver_lexicon_compile(const char *wordlist_path, const char *out_path,
                           const solver_compile_opts *opts, solver_compile_stats *st, char *err,
                           size_t errlen);

/* Same, from and to memory.  On success *out is a malloc'd image of the file
 * that the caller frees with free(). */
int solver_lexicon_compile_buffer(const char *text, size_t len, const solver_compile_opts *opts,
                                  void **out, size_t *outlen, solver_compile_stats *st, char *err,
                                  size_t errlen);

/* Map a lexicon file read-only; verifies header, size, checksum and graph
 * bounds so a corrupt file is refused, never crashed on.  Besides the
 * mapping, builds search indexes on the heap (about 10 bytes per node, ~7 MB
 * for the default lexicon) once.  Returns NULL with a message in err.  Free
 * with solver_lexicon_free(). */
solver_lexicon *solver_lexicon_load(const char *path, char *err, size_t errlen);

/* Use an in-memory image (same checks).  The buffer is borrowed: it must
 * outlive the lexicon.  Free the returned handle with solver_lexicon_free(). */
solver_lexicon *solver_lexicon_from_buffer(const void *buf, size_t len, char *err, size_t errlen);

void solver_lexicon_free(solver_lexicon *lex);
size_t solver_lexicon_word_count(const solver_lexicon *lex);
size_t solver_lexicon_node_count(const solver_lexicon *lex);

/* Is word (a-z, any case, no other characters) in the lexicon? */
bool solver_lexicon_has(const solver_lexicon *lex, const char *word);

/* ---- rack ------------------------------------------------------------- */

typedef struct solver_rack {
    uint8_t counts[27]; /* [0] = blanks */
    uint8_t n;          /* total tiles */
} solver_rack;

/* Parse "AEINRT?" (case-insensitive, '?' = blank, at most 7 tiles).
 * Returns 0 or -1 on a bad character / too many tiles. */
int solver_rack_parse(solver_rack *r, const char *s);
/* Writes letters in alphabetical order, blanks last as '?'; returns length. */
size_t solver_rack_format(const solver_rack *r, char *buf, size_t len);

/* ---- board ------------------------------------------------------------ */

enum { SOLVER_ACROSS = 0, SOLVER_DOWN = 1 };

/* A board is a plain value (memcpy to copy; about 2.5 KB).  Besides the
 * squares it caches, per square and per play direction, the set of letters
 * allowed by the perpendicular word (bit L for letter L; bit 0 set means no
 * perpendicular word at all) and that word's score.  Those caches depend on
 * the lexicon, which is why tile-changing calls take one. */
typedef struct solver_board {
    uint32_t xset[2][SOLVER_SQUARES];
    uint8_t sq[SOLVER_SQUARES];
    uint8_t xscore[2][SOLVER_SQUARES];
    uint8_t values[27]; /* tile values of the board's distribution */
    uint16_t ntiles;    /* (no padding anywhere: boards compare with memcmp) */
} solver_board;

/* An empty board for the given distribution (its letter values feed the
 * cached cross-scores). */
void solver_board_init(solver_board *b, const solver_dist *dist);
/* letter_code: 1..26, optionally | SOLVER_BLANK.  The square must be empty
 * and on the board; cross-sets nearby are updated incrementally. */
void solver_board_place(solver_board *b, const solver_lexicon *lex, int row, int col,
                        uint8_t letter_code);
void solver_board_remove(solver_board *b, const solver_lexicon *lex, int row, int col);
/* Recompute every cross-set (after editing b->sq directly or changing
 * lexicon). */
void solver_board_recompute(solver_board *b, const solver_lexicon *lex);
/* Returns 'A'..'Z' (or 0 if empty); *is_blank (may be NULL) tells blanks. */
char solver_board_get(const solver_board *b, int row, int col, bool *is_blank);
/* Premium at a square: letter multiplier 1..3 and word multiplier 1..3. */
void solver_board_premium(int row, int col, int *letter_mult, int *word_mult);

/* ---- moves ------------------------------------------------------------ */

typedef enum { SOLVER_MOVE_PLAY = 0, SOLVER_MOVE_EXCHANGE, SOLVER_MOVE_PASS } solver_move_kind;

/* For a play, tiles[0..len) are the squares of the main word from its first
 * square: letter code | SOLVER_BLANK | SOLVER_THROUGH (already on board).
 * For an exchange, tiles[0..len) are rack letter codes (0 = blank). */
typedef struct solver_move {
    uint8_t kind, row, col, dir, len, ntiles;
    uint8_t tiles[SOLVER_DIM];
    int32_t score;
} solver_move;

/* Notation: "8D WORD" across, "D8 WORD" down, "(A)" played-through letters,
 * blanks lowercase, "-ABC" exchange, "-" pass.  Returns the length written
 * (buffer of 40 bytes is always enough). */
size_t solver_move_format(const solver_move *m, char *buf, size_t len);
/* Parse notation against a board into *m (score left 0; use
 * solver_validate to score).  Letters written without parentheses on an
 * occupied square are accepted as played-through if they match; '.' stands
 * for whatever tile is on its square.  A play may place no new tile (every
 * letter on the board): m->ntiles tells, and validation refuses it.
 * Returns 0 or -1 with a message written for people. */
int solver_move_parse(const solver_board *b, const char *s, solver_move *m, char *err,
                      size_t errlen);
/* Just a coordinate of `len` bytes: "8D" (row first: across) or "D8"
 * (column first: down), rows 1..15, columns A..O.  Fills 0-based row and
 * col; returns false when it is not one. */
bool solver_coord_parse(const char *s, size_t len, int *row, int *col, bool *across);
/* Order used for output: score descending, then notation ascending. */
int solver_move_cmp(const solver_move *a, const solver_move *b);
void solver_moves_sort(solver_move *moves, size_t n);

/* Places the move's new tiles (exchange / pass leave the board alone). */
void solver_board_apply(solver_board *b, const solver_lexicon *lex, const solver_move *m);
/* Removes the move's tiles from the rack; -1 if the rack lacks them. */
int solver_rack_remove_move(solver_rack *r, const solver_move *m);

/* ---- validation ------------------------------------------------------- */

typedef struct solver_placement {
    int row, col; /* 0..14 */
    char letter;  /* 'A'..'Z' (case-insensitive) */
    bool is_blank;
} solver_placement;

typedef enum {
    SOLVER_OK = 0,
    SOLVER_ERR_NO_TILES,
    SOLVER_ERR_OFF_BOARD,
    SOLVER_ERR_BAD_LETTER,
    SOLVER_ERR_DUPLICATE_SQUARE,
    SOLVER_ERR_OCCUPIED,
    SOLVER_ERR_NOT_ON_RACK,
    SOLVER_ERR_NOT_IN_LINE,
    SOLVER_ERR_GAP,
    SOLVER_ERR_NOT_CONNECTED,
    SOLVER_ERR_MISSES_CENTRE,
    SOLVER_ERR_INVALID_WORDS,
} solver_reason;

#define SOLVER_MAX_WORDS 8 /* main word + up to 7 cross words */

typedef struct solver_result {
    bool legal;
    solver_reason reason;
    char message[160]; /* human story of the reason */
    int nwords;        /* words formed, main first */
    char words[SOLVER_MAX_WORDS][SOLVER_DIM + 1];
    int word_scores[SOLVER_MAX_WORDS];
    int score;        /* total incl. bingo */
    solver_move move; /* canonical move */
    char notation[40];
} solver_result;

/* Validate and score a tentative placement.  rack may be NULL to skip the
 * rack check (e.g. replaying a recorded game).  Words formed and score are
 * filled whenever the geometry is valid (also for INVALID_WORDS).  The score
 * equals the one solver_gen reports for the same move. */
solver_reason solver_validate(const solver_board *b, const solver_lexicon *lex,
                              const solver_dist *dist, const solver_rack *rack,
                              const solver_placement *p, size_t n, solver_result *res);
const char *solver_reason_token(solver_reason r);

/* ---- move generation -------------------------------------------------- */

typedef struct solver_gen_opts {
    size_t top_n;        /* 0 = every move; N = only the N best (pruned) */
    int bag_count;       /* exchanges are offered only if >= 7 */
    bool with_exchanges; /* add every distinct exchange (score 0) */
    bool with_pass;      /* add the pass (score 0) */
} solver_gen_opts;

/* Generate moves into out[0..cap).  With top_n == 0, every move, in no
 * particular order; returns the number found, which may exceed cap (only
 * cap are stored).  With top_n > 0, returns the number stored, at most
 * min(top_n, cap): exactly the first moves of the full list sorted by
 * solver_move_cmp (score, then notation), found with pruning.  opts may be
 * NULL (every tile play, no exchanges, no pass).  Allocates nothing; safe to
 * call from many threads on one lexicon. */
size_t solver_gen(const solver_board *b, const solver_lexicon *lex, const solver_dist *dist,
                  const solver_rack *rack, const solver_gen_opts *opts, solver_move *out,
                  size_t cap);

/* ---- bag -------------------------------------------------------------- */

/* Deterministic bag: the same seed gives the same draws everywhere. */
typedef struct solver_bag {
    uint8_t tiles[128]; /* letter codes, 0 = blank */
    int n;
    uint64_t rng[4]; /* xoshiro256** state */
} solver_bag;

void solver_bag_init(solver_bag *bag, const solver_dist *dist, uint64_t seed);
/* Draw until the rack has 7 tiles or the bag is empty; returns tiles drawn. */
int solver_bag_fill_rack(solver_bag *bag, solver_rack *r);
/* Put tiles back and reshuffle the whole bag. */
void solver_bag_return(solver_bag *bag, const uint8_t *codes, int n);
uint64_t solver_rng_next(uint64_t s[4]);

/* ---- CGP -------------------------------------------------------------- */

typedef struct solver_cgp {
    solver_board board;
    solver_rack racks[4];
    int nracks;
    int scores[4];
    int nscores;
    int zero_turns;
    char lexicon[32]; /* from "lex NAME;" or empty */
} solver_cgp;

/* Parse a CGP string.  lex may be NULL (cross-sets then left trivial; call
 * solver_board_recompute later).  Tile counts are checked against dist.
 * Returns 0 or -1 with a precise message. */
int solver_cgp_parse(const char *s, const solver_lexicon *lex, const solver_dist *dist,
                     solver_cgp *out, char *err, size_t errlen);
/* Returns the length written, or the length needed if len is too small
 * (like snprintf); 512 bytes is always enough. */
size_t solver_cgp_format(const solver_cgp *c, char *buf, size_t len);

/* ---- GCG -------------------------------------------------------------- */

#define SOLVER_GCG_MAX_PLAYERS 4

/* One line of a game's record.  End-of-game lines follow the GCG
 * conventions that macondo and MAGPIE read: the player who went out writes
 * ">nick: (RACKS) +N total" (N the value of the other racks it gains), and
 * every seat that loses its own rack's value (each opponent of the player
 * who went out, every seat after six scoreless turns) writes
 * ">nick: RACK (RACK) -N total".  So each seat's last line carries its
 * final score. */
typedef struct solver_gcg_turn {
    int player;       /* 0 .. nplayers-1 */
    solver_rack rack; /* rack before the move; on an end line: the rack counted */
    solver_move move;
    int cumulative;   /* player's score after the line */
    bool is_end_rack; /* an end-of-game rack line (see above) */
    int end_points;   /* on an end line: +N gained or -N lost */
} solver_gcg_turn;

typedef struct solver_gcg {
    /* 0 means 2 (two-player records, the GCG standard).  3 and 4 write
     * #player3 / #player4 lines, an extension the standard lacks. */
    int nplayers;
    char player_nick[SOLVER_GCG_MAX_PLAYERS][32]; /* no spaces, distinct */
    char player_name[SOLVER_GCG_MAX_PLAYERS][64];
    char lexicon[32];       /* "#lexicon NAME" when not empty */
    solver_gcg_turn *turns; /* malloc'd; solver_gcg_free releases it */
    size_t nturns, cap;
} solver_gcg;

/* Writes a GCG to buf (like snprintf: returns the length needed). */
size_t solver_gcg_format(const solver_gcg *g, char *buf, size_t len);
/* Parses a GCG, replaying the moves on a fresh board to resolve
 * played-through letters.  A turn line must name a player of a #playerN
 * line.  Returns 0 or -1 with a message (line number).  Caller frees with
 * solver_gcg_free. */
int solver_gcg_parse(const char *text, const solver_lexicon *lex, solver_gcg *out, char *err,
                     size_t errlen);
int solver_gcg_add(solver_gcg *g, const solver_gcg_turn *t);
void solver_gcg_free(solver_gcg *g);

#ifdef __cplusplus
}
#endif
#endif

/* Validation of a tentative placement: geometry, rack, words, score.  The
 * checks run in the order a player would want them reported, and the score
 * comes from the same reference scorer the tests hold the generator to. */
#include "internal.h"

#include <string.h>

static const char *tokens[] = {
    [SOLVER_OK] = "ok",
    [SOLVER_ERR_NO_TILES] = "no_tiles",
    [SOLVER_ERR_OFF_BOARD] = "off_board",
    [SOLVER_ERR_BAD_LETTER] = "bad_letter",
    [SOLVER_ERR_DUPLICATE_SQUARE] = "duplicate_square",
    [SOLVER_ERR_OCCUPIED] = "occupied",
    [SOLVER_ERR_NOT_ON_RACK] = "tile_not_on_rack",
    [SOLVER_ERR_NOT_IN_LINE] = "not_in_line",
    [SOLVER_ERR_GAP] = "gap",
    [SOLVER_ERR_NOT_CONNECTED] = "not_connected",
    [SOLVER_ERR_MISSES_CENTRE] = "misses_centre",
    [SOLVER_ERR_INVALID_WORDS] = "invalid_words",
};

const char *solver_reason_token(solver_reason r)
{
    return (unsigned)r < sizeof tokens / sizeof *tokens ? tokens[r] : "unknown";
}

static solver_reason fail(solver_result *res, solver_reason r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static solver_reason fail(solver_result *res, solver_reason r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
    res->legal = false;
    res->reason = r;
    return r;
}

#define SQNAME(r, c) (r) + 1, 'A' + (c)

solver_reason solver_validate(const solver_board *b, const solver_lexicon *lex,
                              const solver_dist *dist, const solver_rack *rack,
                              const solver_placement *p, size_t n, solver_result *res)
{
    memset(res, 0, sizeof *res);
    if (n == 0)
        return fail(res, SOLVER_ERR_NO_TILES, "no tiles placed");
    if (n > SOLVER_RACK_MAX)
        return fail(res, SOLVER_ERR_NOT_ON_RACK, "%zu tiles placed, a rack holds %d", n,
                    SOLVER_RACK_MAX);
    uint8_t codes[SOLVER_RACK_MAX];
    for (size_t i = 0; i < n; i++) {
        if (p[i].row < 0 || p[i].row >= SOLVER_DIM || p[i].col < 0 || p[i].col >= SOLVER_DIM)
            return fail(res, SOLVER_ERR_OFF_BOARD, "tile %zu at row %d, column %d is off the board",
                        i + 1, p[i].row + 1, p[i].col + 1);
        char ch = p[i].letter;
        if (ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        if (ch < 'A' || ch > 'Z')
            return fail(res, SOLVER_ERR_BAD_LETTER, "tile %zu at %d%c has no letter A-Z", i + 1,
                        SQNAME(p[i].row, p[i].col));
        codes[i] = (uint8_t)((ch - 'A' + 1) | (p[i].is_blank ? SOLVER_BLANK : 0));
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (p[i].row == p[j].row && p[i].col == p[j].col)
                return fail(res, SOLVER_ERR_DUPLICATE_SQUARE, "two tiles on square %d%c",
                            SQNAME(p[i].row, p[i].col));
    for (size_t i = 0; i < n; i++)
        if (b->sq[solver__sq(p[i].row, p[i].col)])
            return fail(res, SOLVER_ERR_OCCUPIED, "square %d%c is already occupied",
                        SQNAME(p[i].row, p[i].col));
    if (rack) {
        uint8_t need[27] = {0};
        for (size_t i = 0; i < n; i++) {
            int c = (codes[i] & SOLVER_BLANK) ? 0 : SOLVER_LETTER(codes[i]);
            if (++need[c] > rack->counts[c]) {
                if (c == 0)
                    return fail(res, SOLVER_ERR_NOT_ON_RACK, "no blank left on the rack for %d%c",
                                SQNAME(p[i].row, p[i].col));
                return fail(res, SOLVER_ERR_NOT_ON_RACK, "tile %c is not on the rack", 'A' + c - 1);
            }
        }
    }
    bool same_row = true, same_col = true;
    for (size_t i = 1; i < n; i++) {
        same_row &= p[i].row == p[0].row;
        same_col &= p[i].col == p[0].col;
    }
    if (!same_row && !same_col)
        return fail(res, SOLVER_ERR_NOT_IN_LINE, "tiles are not in one row or column");
    int dir;
    if (n >= 2)
        dir = same_row ? SOLVER_ACROSS : SOLVER_DOWN;
    else { /* one tile: across if it forms an across word, as the generator does */
        int r = p[0].row, c = p[0].col;
        bool h = (c > 0 && b->sq[solver__sq(r, c - 1)]) ||
                 (c < SOLVER_DIM - 1 && b->sq[solver__sq(r, c + 1)]);
        dir = h ? SOLVER_ACROSS : SOLVER_DOWN;
    }
    int dr = dir == SOLVER_DOWN, dc = dir == SOLVER_ACROSS;
    int fixed = dir == SOLVER_ACROSS ? p[0].row : p[0].col;
    int lo = SOLVER_DIM, hi = -1;
    for (size_t i = 0; i < n; i++) {
        int x = dir == SOLVER_ACROSS ? p[i].col : p[i].row;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    uint8_t line[SOLVER_DIM] = {0}; /* new tiles by position along the line */
    for (size_t i = 0; i < n; i++)
        line[dir == SOLVER_ACROSS ? p[i].col : p[i].row] = codes[i];
#define AT(x) b->sq[dir == SOLVER_ACROSS ? solver__sq(fixed, (x)) : solver__sq((x), fixed)]
    for (int x = lo; x <= hi; x++)
        if (!line[x] && !AT(x))
            return fail(res, SOLVER_ERR_GAP, "gap at %d%c",
                        dir == SOLVER_ACROSS ? fixed + 1 : x + 1,
                        'A' + (dir == SOLVER_ACROSS ? x : fixed));
    if (b->ntiles == 0) {
        bool centre = false;
        for (size_t i = 0; i < n; i++)
            centre |= p[i].row == SOLVER_DIM / 2 && p[i].col == SOLVER_DIM / 2;
        if (!centre)
            return fail(res, SOLVER_ERR_MISSES_CENTRE,
                        "the first play must cover the centre square 8H");
    } else {
        bool touch = false;
        for (size_t i = 0; i < n && !touch; i++) {
            int r = p[i].row, c = p[i].col;
            touch = (r > 0 && b->sq[solver__sq(r - 1, c)]) ||
                    (r < SOLVER_DIM - 1 && b->sq[solver__sq(r + 1, c)]) ||
                    (c > 0 && b->sq[solver__sq(r, c - 1)]) ||
                    (c < SOLVER_DIM - 1 && b->sq[solver__sq(r, c + 1)]);
        }
        if (!touch)
            return fail(res, SOLVER_ERR_NOT_CONNECTED,
                        "the play does not touch any tile on the board");
    }
    while (lo > 0 && AT(lo - 1))
        lo--;
    while (hi < SOLVER_DIM - 1 && AT(hi + 1))
        hi++;
    if (hi == lo)
        return fail(res, SOLVER_ERR_INVALID_WORDS,
                    "a play must form a word of at least two letters");
    solver_move *m = &res->move;
    m->kind = SOLVER_MOVE_PLAY;
    m->dir = (uint8_t)dir;
    m->row = (uint8_t)(dir == SOLVER_ACROSS ? fixed : lo);
    m->col = (uint8_t)(dir == SOLVER_ACROSS ? lo : fixed);
    m->len = (uint8_t)(hi - lo + 1);
    m->ntiles = (uint8_t)n;
    for (int x = lo; x <= hi; x++)
        m->tiles[x - lo] = line[x] ? line[x] : (uint8_t)(AT(x) | SOLVER_THROUGH);
#undef AT
    (void)dr;
    (void)dc;
    m->score = solver__score_move(b, dist, m, res);
    solver_move_format(m, res->notation, sizeof res->notation);
    char bad[160] = "";
    size_t o = 0;
    int nbad = 0;
    for (int w = 0; w < res->nwords; w++)
        if (!solver_lexicon_has(lex, res->words[w])) {
            if (o < sizeof bad)
                o += (size_t)snprintf(bad + o, sizeof bad - o, "%s%s", nbad ? ", " : "",
                                      res->words[w]);
            nbad++;
        }
    if (nbad)
        return fail(res, SOLVER_ERR_INVALID_WORDS, "%s %s not in the lexicon", bad,
                    nbad > 1 ? "are" : "is");
    res->legal = true;
    res->reason = SOLVER_OK;
    snprintf(res->message, sizeof res->message, "%s scores %d", res->notation, res->score);
    return SOLVER_OK;
}

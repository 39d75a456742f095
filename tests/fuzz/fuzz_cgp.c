/* libFuzzer target: CGP parser (and, for inputs that parse, the formatter
 * and move generation on the resulting position with a tiny lexicon). */
#include "solver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static solver_lexicon *lex;
static void *img;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!lex) {
        const char *words = "aa\nab\nat\nta\ncat\nact\nzap\nqi\nretains\nstare\n";
        size_t len;
        char err[128];
        if (solver_lexicon_compile_buffer(words, strlen(words), NULL, &img, &len, NULL, err,
                                          sizeof err))
            abort();
        lex = solver_lexicon_from_buffer(img, len, err, sizeof err);
        if (!lex)
            abort();
    }
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    solver_cgp c;
    char err[256];
    if (solver_cgp_parse(s, lex, solver_dist_english(), &c, err, sizeof err) == 0) {
        char out[600];
        solver_cgp_format(&c, out, sizeof out);
        solver_cgp again;
        /* What we write, we must read back identically. */
        if (solver_cgp_parse(out, lex, solver_dist_english(), &again, err, sizeof err) != 0 ||
            memcmp(again.board.sq, c.board.sq, sizeof c.board.sq) != 0)
            abort();
        solver_move moves[64];
        solver_gen_opts o = {.top_n = 3};
        solver_gen(&c.board, lex, solver_dist_english(), &c.racks[0], &o, moves, 64);
    }
    free(s);
    return 0;
}

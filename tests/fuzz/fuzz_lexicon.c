/* libFuzzer target: lexicon loader.  Any byte string must be either refused
 * with a message or, if accepted, be safe to query. */
#include "solver.h"
#include "../../solver/src/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The loader wants 4-byte alignment (it maps files); copy to get it. */
    uint32_t *buf = malloc(size + 4);
    memcpy(buf, data, size);
    /* A fuzzer cannot forge a checksum; for half the inputs fix it up so the
     * structural checks and the graph walkers behind them get exercised. */
    if (size % 2 == 0 && size >= sizeof(solver__file_header)) {
        solver__file_header h;
        memcpy(&h, buf, sizeof h);
        if ((size - sizeof h) / 4 >= h.node_count) {
            h.checksum = solver__image_checksum(&h, (const char *)buf + sizeof h);
            memcpy(buf, &h, sizeof h);
        }
    }
    char err[256];
    solver_lexicon *lex = solver_lexicon_from_buffer(buf, size, err, sizeof err);
    if (lex) {
        solver_lexicon_has(lex, "retains");
        solver_lexicon_has(lex, "zz");
        solver_board b;
        solver_board_init(&b, solver_dist_english());
        solver_rack r;
        solver_rack_parse(&r, "AEINRS?");
        solver_move moves[256];
        solver_gen(&b, lex, solver_dist_english(), &r, NULL, moves, 256);
        solver_board_place(&b, lex, 7, 7, 1);
        solver_gen_opts o = {.top_n = 5};
        solver_gen(&b, lex, solver_dist_english(), &r, &o, moves, 256);
        solver_lexicon_free(lex);
    } else if (!err[0]) {
        abort(); /* a refusal must say why */
    }
    /* The compiler must cope with any text too. */
    void *img;
    size_t len;
    if (solver_lexicon_compile_buffer((const char *)data, size, NULL, &img, &len, NULL, err,
                                      sizeof err) == 0) {
        solver_lexicon *l2 = solver_lexicon_from_buffer(img, len, err, sizeof err);
        if (!l2)
            abort(); /* what we compile, we must load */
        solver_lexicon_free(l2);
        free(img);
    }
    free(buf);
    return 0;
}

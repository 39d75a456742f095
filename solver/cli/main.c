/* scrabble-solver: command-line front end of libsolver.
 * Exit status: 0 success, 1 a negative answer (invalid word / illegal play),
 * 2 bad input or usage. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_CAP (1u << 20)

static void usage(void)
{
    fprintf(stderr,
            "usage: scrabble-solver build-lexicon [--lowercase-only] WORDLIST OUT\n"
            "       scrabble-solver gen --cgp \"...\" [--top N] [--lexicon FILE]\n"
            "       scrabble-solver check [--lexicon FILE] WORD...\n"
            "       scrabble-solver eval --cgp \"...\" --play \"8D WORD\" [--lexicon FILE]\n"
            "       scrabble-solver selfplay --games N --seed S [--gcg] [--lexicon FILE]\n"
            "       scrabble-solver gcg [--lexicon FILE] FILE   (read back; '-' is stdin)\n"
            "       scrabble-solver bench [--positions N] [--reps R] [--only SECTION] [--lexicon "
            "FILE]\n"
            "         SECTION: full, best, open, selfplay (--positions = games), build\n"
            "The lexicon defaults to $SCRABBLE_LEXICON, else %s.\n",
            SOLVER_DEFAULT_LEXICON);
}

typedef struct {
    const char *cgp, *play, *lexicon, *only;
    long top, games, positions, reps;
    unsigned long long seed;
    int gcg, lowercase_only;
    char **rest;
    int nrest;
} args_t;

static int parse_args(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    a->games = 1;
    a->positions = 1000;
    a->reps = 5;
    a->rest = calloc((size_t)argc + 1, sizeof *a->rest);
    if (!a->rest)
        return -1;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        bool has = i + 1 < argc;
        if (!strcmp(s, "--cgp") && has)
            a->cgp = argv[++i];
        else if (!strcmp(s, "--play") && has)
            a->play = argv[++i];
        else if (!strcmp(s, "--lexicon") && has)
            a->lexicon = argv[++i];
        else if (!strcmp(s, "--top") && has)
            a->top = strtol(argv[++i], NULL, 10);
        else if (!strcmp(s, "--games") && has)
            a->games = strtol(argv[++i], NULL, 10);
        else if (!strcmp(s, "--positions") && has)
            a->positions = strtol(argv[++i], NULL, 10);
        else if (!strcmp(s, "--reps") && has)
            a->reps = strtol(argv[++i], NULL, 10);
        else if (!strcmp(s, "--only") && has)
            a->only = argv[++i];
        else if (!strcmp(s, "--seed") && has)
            a->seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(s, "--gcg"))
            a->gcg = 1;
        else if (!strcmp(s, "--lowercase-only"))
            a->lowercase_only = 1;
        else if (s[0] == '-' && s[1] == '-') {
            fprintf(stderr, "unknown or incomplete option %s\n", s);
            return -1;
        } else
            a->rest[a->nrest++] = argv[i];
    }
    return 0;
}

static solver_lexicon *open_lexicon(const args_t *a)
{
    const char *path = a->lexicon;
    if (!path)
        path = getenv("SCRABBLE_LEXICON");
    if (!path || !*path)
        path = SOLVER_DEFAULT_LEXICON;
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(path, err, sizeof err);
    if (!lex)
        fprintf(stderr, "scrabble-solver: %s\n", err);
    return lex;
}

static int cmd_build(const args_t *a)
{
    if (a->nrest != 2) {
        usage();
        return 2;
    }
    solver_compile_opts o = {.lowercase_only = a->lowercase_only};
    solver_compile_stats st;
    char err[256];
    if (solver_lexicon_compile(a->rest[0], a->rest[1], &o, &st, err, sizeof err)) {
        fprintf(stderr, "scrabble-solver: %s\n", err);
        return 2;
    }
    fprintf(stderr,
            "lexicon %s: %zu words (%zu lines, %zu skipped for characters, %zu for length, %zu "
            "duplicates), "
            "%zu nodes, %zu bytes\n",
            a->rest[1], st.words, st.lines, st.skipped_chars, st.skipped_length, st.duplicates,
            st.nodes, st.bytes);
    return 0;
}

static int load_cgp(const args_t *a, const solver_lexicon *lex, solver_cgp *c)
{
    char err[256];
    if (!a->cgp) {
        fprintf(stderr, "scrabble-solver: --cgp is required\n");
        return -1;
    }
    if (solver_cgp_parse(a->cgp, lex, solver_dist_english(), c, err, sizeof err)) {
        fprintf(stderr, "scrabble-solver: bad CGP: %s\n", err);
        return -1;
    }
    return 0;
}

static int cmd_gen(const args_t *a)
{
    solver_cgp c;
    if (!a->cgp) {
        fprintf(stderr, "scrabble-solver: --cgp is required\n");
        return 2;
    }
    if (load_cgp(a, NULL, &c)) /* parse first: bad input must not wait for the lexicon */
        return 2;
    solver_lexicon *lex = open_lexicon(a);
    if (!lex)
        return 2;
    solver_board_recompute(&c.board, lex);
    solver_move *buf = malloc(GEN_CAP * sizeof *buf);
    if (!buf) {
        solver_lexicon_free(lex);
        return 2;
    }
    solver_gen_opts o = {.top_n = a->top > 0 ? (size_t)a->top : 0};
    size_t n = solver_gen(&c.board, lex, solver_dist_english(), &c.racks[0], &o, buf, GEN_CAP);
    if (n > GEN_CAP) {
        fprintf(stderr, "scrabble-solver: %zu moves, only %u kept\n", n, GEN_CAP);
        n = GEN_CAP;
    }
    if (!o.top_n)
        solver_moves_sort(buf, n);
    for (size_t i = 0; i < n; i++) {
        char s[64];
        solver_move_format(&buf[i], s, sizeof s);
        printf("%s %d\n", s, buf[i].score);
    }
    free(buf);
    solver_lexicon_free(lex);
    return 0;
}

static int cmd_check(const args_t *a)
{
    if (a->nrest == 0) {
        usage();
        return 2;
    }
    solver_lexicon *lex = open_lexicon(a);
    if (!lex)
        return 2;
    int rc = 0;
    for (int i = 0; i < a->nrest; i++) {
        bool ok = solver_lexicon_has(lex, a->rest[i]);
        printf("%s %s\n", a->rest[i], ok ? "valid" : "invalid");
        if (!ok)
            rc = 1;
    }
    solver_lexicon_free(lex);
    return rc;
}

static int cmd_eval(const args_t *a)
{
    solver_cgp c;
    if (!a->play) {
        fprintf(stderr, "scrabble-solver: --play is required\n");
        return 2;
    }
    if (load_cgp(a, NULL, &c))
        return 2;
    solver_lexicon *lex = open_lexicon(a);
    if (!lex)
        return 2;
    solver_board_recompute(&c.board, lex);
    solver_move m;
    char err[256];
    if (solver_move_parse(&c.board, a->play, &m, err, sizeof err) || m.kind != SOLVER_MOVE_PLAY) {
        fprintf(stderr, "scrabble-solver: bad play: %s\n",
                m.kind != SOLVER_MOVE_PLAY ? "not a tile play" : err);
        solver_lexicon_free(lex);
        return 2;
    }
    solver_placement p[SOLVER_DIM];
    size_t n = 0;
    for (int i = 0; i < m.len; i++) {
        if (m.tiles[i] & SOLVER_THROUGH)
            continue;
        p[n].row = m.row + (m.dir == SOLVER_DOWN) * i;
        p[n].col = m.col + (m.dir == SOLVER_ACROSS) * i;
        p[n].letter = (char)('A' + SOLVER_LETTER(m.tiles[i]) - 1);
        p[n].is_blank = (m.tiles[i] & SOLVER_BLANK) != 0;
        n++;
    }
    solver_result r;
    solver_validate(&c.board, lex, solver_dist_english(), &c.racks[0], p, n, &r);
    if (r.legal) {
        printf("legal %s %d\n", r.notation, r.score);
    } else {
        printf("illegal %s: %s\n", solver_reason_token(r.reason), r.message);
    }
    for (int w = 0; w < r.nwords; w++)
        printf("word %s %d\n", r.words[w], r.word_scores[w]);
    solver_lexicon_free(lex);
    return r.legal ? 0 : 1;
}

static int cmd_selfplay(const args_t *a)
{
    solver_lexicon *lex = open_lexicon(a);
    if (!lex)
        return 2;
    solver_move *buf = malloc(64 * sizeof *buf);
    if (!buf) {
        solver_lexicon_free(lex);
        return 2;
    }
    for (long g = 0; g < a->games; g++) {
        solver_gcg gcg;
        memset(&gcg, 0, sizeof gcg);
        strcpy(gcg.player_nick[0], "p1");
        strcpy(gcg.player_nick[1], "p2");
        strcpy(gcg.player_name[0], "Static Bot 1");
        strcpy(gcg.player_name[1], "Static Bot 2");
        int sc[2];
        int turns =
            cli_selfplay(lex, a->seed + (uint64_t)g, buf, 64, a->gcg ? &gcg : NULL, NULL, NULL, sc);
        printf("game %ld seed %llu turns %d score %d-%d\n", g, a->seed + (unsigned long long)g,
               turns, sc[0], sc[1]);
        if (a->gcg) {
            size_t need = solver_gcg_format(&gcg, NULL, 0);
            char *s = malloc(need + 1);
            if (s) {
                solver_gcg_format(&gcg, s, need + 1);
                fputs(s, stdout);
                free(s);
            }
            solver_gcg_free(&gcg);
        }
    }
    free(buf);
    solver_lexicon_free(lex);
    return 0;
}

/* Reads a GCG back with the library's reader (replaying every play on a
 * board) and prints each player's last total: "player N NICK total T".
 * A file that does not read exits 2 with the reader's message. */
static int cmd_gcg(const args_t *a)
{
    if (a->nrest != 1) {
        usage();
        return 2;
    }
    FILE *f = strcmp(a->rest[0], "-") == 0 ? stdin : fopen(a->rest[0], "r");
    if (!f) {
        fprintf(stderr, "scrabble-solver: %s: %s\n", a->rest[0], strerror(errno));
        return 2;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap + 1);
    while (text && (cap - n) > 0) {
        size_t k = fread(text + n, 1, cap - n, f);
        if (k == 0)
            break;
        n += k;
    }
    if (f != stdin)
        fclose(f);
    if (!text || n == cap) {
        fprintf(stderr, "scrabble-solver: %s: unreadable or over %zu bytes\n", a->rest[0], cap);
        free(text);
        return 2;
    }
    text[n] = 0;
    solver_lexicon *lex = open_lexicon(a);
    if (!lex) {
        free(text);
        return 2;
    }
    solver_gcg g;
    char err[256];
    int rc = 0;
    if (solver_gcg_parse(text, lex, &g, err, sizeof err)) {
        fprintf(stderr, "scrabble-solver: %s: %s\n", a->rest[0], err);
        rc = 2;
    } else {
        int np = g.nplayers > 0 ? g.nplayers : 2;
        for (int p = 0; p < np; p++) {
            int total = 0;
            for (size_t i = 0; i < g.nturns; i++)
                if (g.turns[i].player == p)
                    total = g.turns[i].cumulative;
            printf("player %d %s total %d\n", p + 1, g.player_nick[p], total);
        }
        solver_gcg_free(&g);
    }
    solver_lexicon_free(lex);
    free(text);
    return rc;
}

static int cmd_bench(const args_t *a)
{
    solver_lexicon *lex = open_lexicon(a);
    if (!lex)
        return 2;
    const char *path = a->lexicon ? a->lexicon : getenv("SCRABBLE_LEXICON");
    if (!path || !*path)
        path = SOLVER_DEFAULT_LEXICON;
    int rc = cli_bench(lex, path, (int)a->positions, (int)a->reps, a->only);
    solver_lexicon_free(lex);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    args_t a;
    if (parse_args(argc - 2, argv + 2, &a)) {
        usage();
        free(a.rest);
        return 2;
    }
    const char *cmd = argv[1];
    int rc;
    if (!strcmp(cmd, "build-lexicon"))
        rc = cmd_build(&a);
    else if (!strcmp(cmd, "gen"))
        rc = cmd_gen(&a);
    else if (!strcmp(cmd, "check"))
        rc = cmd_check(&a);
    else if (!strcmp(cmd, "eval"))
        rc = cmd_eval(&a);
    else if (!strcmp(cmd, "selfplay"))
        rc = cmd_selfplay(&a);
    else if (!strcmp(cmd, "bench"))
        rc = cmd_bench(&a);
    else if (!strcmp(cmd, "gcg"))
        rc = cmd_gcg(&a);
    else {
        usage();
        rc = 2;
    }
    free(a.rest);
    return rc;
}

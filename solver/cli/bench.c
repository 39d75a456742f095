/* `scrabble-solver bench`: the figures of docs/BENCHMARKS-solver.md.
 * Positions come from seeded static self-play (turn >= 4, tiles left in the
 * bag), so every run measures the same set.  Each figure is measured reps
 * times; the median is reported with the min-max spread as the noise.
 * Time is the thread's CPU time, not wall time: the build machine is shared
 * and wall time mostly measures the neighbours.  Each measured pass is its
 * own function (bench_pass_*), so an instruction count under callgrind
 * (--toggle-collect=bench_pass_best) compares versions deterministically;
 * --only SECTION runs one section. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    solver_board b;
    solver_rack r;
} position;

typedef struct {
    position *pos;
    int n, want;
    position *open; /* turns 1-3: open boards, many more moves */
    int nopen, want_open;
} collector;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void snap(void *ud, const solver_board *b, const solver_rack *r, int bag, int turn)
{
    collector *c = ud;
    if (c->nopen < c->want_open && turn >= 1 && turn <= 3 && !r->counts[0]) {
        c->open[c->nopen].b = *b;
        c->open[c->nopen].r = *r;
        c->nopen++;
    }
    if (c->n < c->want && turn >= 4 && bag > 0) {
        c->pos[c->n].b = *b;
        c->pos[c->n].r = *r;
        c->n++;
    }
}

static long rss_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key)))
            v = strtol(line + strlen(key) + 1, NULL, 10);
    fclose(f);
    return v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    printf("%-44s %10.1f %s  (min %.1f, max %.1f, %d reps)\n", what, v[n / 2], unit, v[0], v[n - 1],
           n);
}

/* One generation, through a function named by the kind of rack, so
 * callgrind can count racks with and without a blank apart
 * (--toggle-collect=bench_rack_blank or bench_rack_natural).  Each adds
 * the moves found to its own counter (which also keeps the compiler from
 * folding the two identical bodies into one). */
__attribute__((noinline)) static void bench_rack_natural(const position *p,
                                                         const solver_lexicon *lex,
                                                         const solver_gen_opts *o, solver_move *buf,
                                                         size_t cap, size_t moves[2])
{
    moves[0] += solver_gen(&p->b, lex, solver_dist_english(), &p->r, o, buf, cap);
}

__attribute__((noinline)) static void bench_rack_blank(const position *p, const solver_lexicon *lex,
                                                       const solver_gen_opts *o, solver_move *buf,
                                                       size_t cap, size_t moves[2])
{
    moves[1] += solver_gen(&p->b, lex, solver_dist_english(), &p->r, o, buf, cap);
}

static void bench_gen(const position *p, const solver_lexicon *lex, const solver_gen_opts *o,
                      solver_move *buf, size_t cap, size_t moves[2])
{
    if (p->r.counts[0])
        bench_rack_blank(p, lex, o, buf, cap, moves);
    else
        bench_rack_natural(p, lex, o, buf, cap, moves);
}

/* The measured passes; noinline so callgrind can count them alone. */
__attribute__((noinline)) static void bench_pass_full(const solver_lexicon *lex, const collector *c,
                                                      solver_move *buf, size_t cap, double *t_nb,
                                                      double *t_b, size_t *m_nb, size_t *m_b)
{
    solver_gen_opts all = {0};
    size_t moves[2] = {0, 0};
    for (int i = 0; i < c->n; i++) {
        double t0 = now_us();
        bench_gen(&c->pos[i], lex, &all, buf, cap, moves);
        double dt = now_us() - t0;
        if (c->pos[i].r.counts[0])
            *t_b += dt;
        else
            *t_nb += dt;
    }
    *m_nb += moves[0];
    *m_b += moves[1];
}

__attribute__((noinline)) static void bench_pass_best(const solver_lexicon *lex, const collector *c,
                                                      solver_move *buf, size_t cap, double *t_nb,
                                                      double *t_b)
{
    solver_gen_opts best = {.top_n = 1};
    size_t moves[2] = {0, 0};
    for (int i = 0; i < c->n; i++) {
        double t0 = now_us();
        bench_gen(&c->pos[i], lex, &best, buf, cap, moves);
        double dt = now_us() - t0;
        if (c->pos[i].r.counts[0])
            *t_b += dt;
        else
            *t_nb += dt;
    }
}

__attribute__((noinline)) static void bench_pass_selfplay(const solver_lexicon *lex, int games,
                                                          solver_move *buf)
{
    for (int g = 0; g < games; g++)
        cli_selfplay(lex, 1000 + (uint64_t)g, buf, 64, NULL, NULL, NULL, NULL);
}

static bool section(const char *only, const char *name)
{
    return !only || !strcmp(only, name);
}

/* ---- per-class best move ------------------------------------------------
 * The classes of position the MAGPIE comparison is made on (issue 20):
 * mid-game racks without a blank, with one, with two; the empty board; and
 * wide-open boards (turns 1-3).  Mid-game positions are those of the other
 * sections (turn >= 4, tiles in the bag).  Natural two-blank racks are rare
 * in self-play, so that class is made from blank-free racks of boards
 * without a blank, two of whose tiles become blanks (a legal position:
 * the bag had them).  Each best move goes through one noinline function
 * per class, so callgrind counts a class alone
 * (--toggle-collect=bench_best_one_blank, ...). */
enum { CL_BLANK_FREE, CL_ONE_BLANK, CL_TWO_BLANKS, CL_EMPTY, CL_OPEN, NCLASS };
static const char *const class_names[NCLASS] = {"blank_free", "one_blank", "two_blanks",
                                                "empty_board", "wide_open"};
static const char *const class_titles[NCLASS] = {"blank-free racks", "racks with one blank",
                                                 "racks with two blanks", "empty board",
                                                 "wide-open boards (turns 1-3)"};

typedef struct {
    position *p[NCLASS];
    int n[NCLASS], want;
} classes;

static bool board_has_blank(const solver_board *b)
{
    for (int i = 0; i < SOLVER_SQUARES; i++)
        if (b->sq[i] & SOLVER_BLANK)
            return true;
    return false;
}

static void class_add(classes *c, int k, const solver_board *b, const solver_rack *r)
{
    if (c->n[k] < c->want) {
        c->p[k][c->n[k]].b = *b;
        c->p[k][c->n[k]].r = *r;
        c->n[k]++;
    }
}

static void snap_classes(void *ud, const solver_board *b, const solver_rack *r, int bag, int turn)
{
    classes *c = ud;
    if (turn == 0) {
        class_add(c, CL_EMPTY, b, r);
    } else if (turn <= 3) {
        class_add(c, CL_OPEN, b, r);
    } else if (bag > 0) {
        if (r->counts[0] == 1)
            class_add(c, CL_ONE_BLANK, b, r);
        else if (r->counts[0] == 2)
            class_add(c, CL_TWO_BLANKS, b, r);
        else {
            class_add(c, CL_BLANK_FREE, b, r);
            if (r->n == SOLVER_RACK_MAX && !board_has_blank(b)) {
                /* The two tiles with the highest letter codes become blanks. */
                solver_rack two = *r;
                for (int k = 0, c2 = 26; k < 2 && c2 > 0; c2--)
                    while (k < 2 && two.counts[c2]) {
                        two.counts[c2]--;
                        two.counts[0]++;
                        k++;
                    }
                class_add(c, CL_TWO_BLANKS, b, &two);
            }
        }
    }
}

static bool classes_full(const classes *c)
{
    for (int k = 0; k < NCLASS; k++)
        if (c->n[k] < c->want)
            return false;
    return true;
}

#define BEST_FN(name)                                                                              \
    __attribute__((noinline)) static size_t bench_best_##name(                                     \
        const position *p, const solver_lexicon *lex, solver_move *buf, size_t cap)                \
    {                                                                                              \
        static const solver_gen_opts best = {.top_n = 1};                                          \
        return solver_gen(&p->b, lex, solver_dist_english(), &p->r, &best, buf, cap);              \
    }
BEST_FN(blank_free)
BEST_FN(one_blank)
BEST_FN(two_blanks)
BEST_FN(empty_board)
BEST_FN(wide_open)
typedef size_t (*best_fn)(const position *, const solver_lexicon *, solver_move *, size_t);
static const best_fn best_fns[NCLASS] = {bench_best_blank_free, bench_best_one_blank,
                                         bench_best_two_blanks, bench_best_empty_board,
                                         bench_best_wide_open};

/* Exactness on every position of the classes: the top-1 move equals the
 * first move of the fully generated and sorted list.  Returns mismatches. */
static int classes_check(const classes *c, const solver_lexicon *lex, solver_move *buf, size_t cap)
{
    int bad = 0;
    solver_gen_opts all = {0}, best = {.top_n = 1};
    for (int k = 0; k < NCLASS; k++)
        for (int i = 0; i < c->n[k]; i++) {
            const position *p = &c->p[k][i];
            solver_move top;
            size_t nt = solver_gen(&p->b, lex, solver_dist_english(), &p->r, &best, &top, 1);
            size_t n = solver_gen(&p->b, lex, solver_dist_english(), &p->r, &all, buf, cap);
            if (n > cap)
                n = cap;
            solver_moves_sort(buf, n);
            if ((n > 0) != (nt > 0) || (n && solver_move_cmp(&top, &buf[0]) != 0)) {
                char a[64], b[64];
                solver_move_format(&top, a, sizeof a);
                solver_move_format(&buf[0], b, sizeof b);
                fprintf(stderr, "top-1 mismatch (%s #%d): %s %d against %s %d\n", class_names[k], i,
                        nt ? a : "-", nt ? top.score : 0, n ? b : "-", n ? buf[0].score : 0);
                bad++;
            }
        }
    return bad;
}

static int classes_export(const classes *c, const solver_lexicon *lex, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    for (int k = 0; k < NCLASS; k++)
        for (int i = 0; i < c->n[k]; i++) {
            const position *p = &c->p[k][i];
            solver_cgp cgp;
            memset(&cgp, 0, sizeof cgp);
            cgp.board = p->b;
            cgp.racks[0] = p->r;
            cgp.nracks = 2;
            cgp.nscores = 2;
            char line[600];
            solver_cgp_format(&cgp, line, sizeof line);
            solver_move top;
            static const solver_gen_opts best = {.top_n = 1};
            size_t n = solver_gen(&p->b, lex, solver_dist_english(), &p->r, &best, &top, 1);
            fprintf(f, "%s\t%s\t%d\n", class_names[k], line, n ? (int)top.score : 0);
        }
    return fclose(f);
}

static int bench_classes(const solver_lexicon *lex, int per_class, int reps, solver_move *buf,
                         size_t cap, const char *export_path)
{
    classes c;
    memset(&c, 0, sizeof c);
    c.want = per_class;
    for (int k = 0; k < NCLASS; k++)
        if (!(c.p[k] = malloc((size_t)per_class * sizeof(position))))
            return 2;
    for (uint64_t seed = 1; !classes_full(&c) && seed < 100000; seed++)
        cli_selfplay(lex, seed, buf, 64, NULL, snap_classes, &c, NULL);
    double *v = calloc((size_t)reps, sizeof *v);
    if (!v)
        return 2;
    printf("best move by class of position (us per position, CPU time; instructions: "
           "callgrind --toggle-collect=bench_best_CLASS)\n");
    for (int k = 0; k < NCLASS; k++) {
        for (int r = 0; r < reps; r++) {
            double t = 0;
            for (int i = 0; i < c.n[k]; i++) {
                double t0 = now_us();
                best_fns[k](&c.p[k][i], lex, buf, cap);
                t += now_us() - t0;
            }
            v[r] = t / (c.n[k] ? c.n[k] : 1);
        }
        char what[96];
        snprintf(what, sizeof what, "best move, %s (%d, bench_best_%s)", class_titles[k], c.n[k],
                 class_names[k]);
        report(what, v, reps, "us");
    }
    int bad = classes_check(&c, lex, buf, cap);
    int total = 0;
    for (int k = 0; k < NCLASS; k++)
        total += c.n[k];
    printf("top-1 equal to the first move of the full sorted list: %d of %d positions\n",
           total - bad, total);
    int rc = bad ? 1 : 0;
    if (export_path && classes_export(&c, lex, export_path))
        rc = 2;
    free(v);
    for (int k = 0; k < NCLASS; k++)
        free(c.p[k]);
    return rc;
}

int cli_bench(const solver_lexicon *lex, const char *lex_path, int npos, int reps, const char *only,
              const char *export_path)
{
    const solver_dist *d = solver_dist_english();
    if (reps < 1)
        reps = 1;
    if (npos < 1)
        npos = 1;
    size_t cap = 1u << 20;
    solver_move *buf = malloc(cap * sizeof *buf);
    collector c = {.pos = malloc((size_t)npos * sizeof(position)),
                   .want = npos,
                   .open = malloc(300 * sizeof(position)),
                   .want_open = 300};
    double *v = calloc((size_t)reps, sizeof *v);
    if (!buf || !c.pos || !c.open || !v)
        return 2;
    long rss_loaded = rss_kb("VmRSS:");
    struct stat sb;
    stat(lex_path, &sb);

    bool need_positions = section(only, "full") || section(only, "best") || section(only, "open");
    for (uint64_t seed = 1; need_positions && c.n < npos; seed++)
        cli_selfplay(lex, seed, buf, 64, NULL, snap, &c, NULL);
    int nblank = 0;
    for (int i = 0; i < c.n; i++)
        nblank += c.pos[i].r.counts[0] > 0;
    if (need_positions)
        printf("positions: %d mid-game positions from seeded self-play (%d with a blank on the "
               "rack)\n",
               c.n, nblank);
    printf("lexicon: %s, %zu words, %zu nodes, %lld bytes\n", lex_path,
           solver_lexicon_word_count(lex), solver_lexicon_node_count(lex), (long long)sb.st_size);

    int rc = 0;
    if (section(only, "classes"))
        rc = bench_classes(lex, npos / 4 > 0 ? npos / 4 : 1, reps, buf, cap, export_path);

    /* Full generation, split blank-free / with blanks. */
    solver_gen_opts all = {0}, best = {.top_n = 1};
    double *vnb = calloc((size_t)reps, sizeof *vnb), *vb = calloc((size_t)reps, sizeof *vb);
    size_t moves_nb = 0, moves_b = 0;
    for (int r = 0; r < reps && section(only, "full"); r++) {
        double t_nb = 0, t_b = 0;
        size_t m_nb = 0, m_b = 0;
        bench_pass_full(lex, &c, buf, cap, &t_nb, &t_b, &m_nb, &m_b);
        v[r] = (t_nb + t_b) / c.n;
        vnb[r] = t_nb / (c.n - nblank ? c.n - nblank : 1);
        vb[r] = t_b / (nblank ? nblank : 1);
        moves_nb = m_nb;
        moves_b = m_b;
    }
    if (section(only, "full")) {
        printf("moves per full generation: %.0f mean (blank-free racks %.0f, with blanks %.0f)\n",
               (double)(moves_nb + moves_b) / c.n,
               (double)moves_nb / (c.n - nblank ? c.n - nblank : 1),
               (double)moves_b / (nblank ? nblank : 1));
        report("full generation, all racks (us/position)", v, reps, "us");
        report("full generation, blank-free racks (us)", vnb, reps, "us");
        report("full generation, racks with blanks (us)", vb, reps, "us");
    }

    for (int r = 0; r < reps && section(only, "best"); r++) {
        double t_nb = 0, t_b = 0;
        bench_pass_best(lex, &c, buf, cap, &t_nb, &t_b);
        v[r] = (t_nb + t_b) / c.n;
        vnb[r] = t_nb / (c.n - nblank ? c.n - nblank : 1);
        vb[r] = t_b / (nblank ? nblank : 1);
    }
    if (section(only, "best")) {
        report("best move, all racks (us/position)", v, reps, "us");
        report("best move, blank-free racks (us)", vnb, reps, "us");
        report("best move, racks with blanks (us)", vb, reps, "us");
    }

    /* Open boards (turns 1-3, blank-free racks): closer to the position mix
     * other engines are usually quoted on. */
    size_t moves_open = 0;
    for (int r = 0; r < reps && section(only, "open"); r++) {
        double t_full = 0, t_best = 0;
        moves_open = 0;
        for (int i = 0; i < c.nopen; i++) {
            double t0 = now_us();
            moves_open += solver_gen(&c.open[i].b, lex, d, &c.open[i].r, &all, buf, cap);
            double t1 = now_us();
            solver_gen(&c.open[i].b, lex, d, &c.open[i].r, &best, buf, cap);
            t_best += now_us() - t1;
            t_full += t1 - t0;
        }
        vnb[r] = t_full / (c.nopen ? c.nopen : 1);
        vb[r] = t_best / (c.nopen ? c.nopen : 1);
    }
    if (section(only, "open")) {
        printf("open positions (turns 1-3, blank-free): %d, %.0f moves per full generation\n",
               c.nopen, (double)moves_open / (c.nopen ? c.nopen : 1));
        report("open positions, full generation (us)", vnb, reps, "us");
        report("open positions, best move (us)", vb, reps, "us");
    }

    int games = only && !strcmp(only, "selfplay") ? npos : 200;
    for (int r = 0; r < reps && section(only, "selfplay"); r++) {
        double t0 = now_us();
        bench_pass_selfplay(lex, games, buf);
        v[r] = games / ((now_us() - t0) / 1e6);
    }
    if (section(only, "selfplay"))
        report("self-play games per second (static best)", v, reps, "games/s");

    char tmp[] = "/tmp/solver-bench-XXXXXX";
    int fd = section(only, "build") ? mkstemp(tmp) : -1;
    if (fd >= 0) {
        close(fd);
        int br = reps < 3 ? reps : 3;
        for (int r = 0; r < br; r++) {
            solver_compile_opts o = {.lowercase_only = true};
            solver_compile_stats st;
            char err[256];
            double t0 = now_us();
            if (solver_lexicon_compile(SOLVER_WORDLIST, tmp, &o, &st, err, sizeof err)) {
                fprintf(stderr, "build: %s\n", err);
                break;
            }
            v[r] = (now_us() - t0) / 1e3;
        }
        report("lexicon build from " SOLVER_WORDLIST " (ms)", v, br, "ms");
        unlink(tmp);
    }
    printf("resident memory after loading the lexicon: %ld kB; peak (VmHWM) %ld kB\n", rss_loaded,
           rss_kb("VmHWM:"));
    printf("sizeof(solver_board) = %zu bytes, sizeof(solver_move) = %zu bytes\n",
           sizeof(solver_board), sizeof(solver_move));
    free(vnb);
    free(vb);
    free(v);
    free(c.pos);
    free(c.open);
    free(buf);
    return rc;
}

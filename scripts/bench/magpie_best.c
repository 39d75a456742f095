/* Best move (top-1 by score) in MAGPIE, on the positions `scrabble-solver
 * bench --export FILE` writes, for the side-by-side comparison of
 * docs/BENCHMARKS-solver.md.  Built and linked against a MAGPIE tree outside
 * this repository by scripts/bench/magpie_compare.sh; nothing of MAGPIE is
 * kept here.
 *
 * Input lines: "CLASS<TAB>CGP<TAB>SCORE" (SCORE: our solver's best score).
 * Each class runs through its own noinline function, so callgrind counts
 * one class at a time (--toggle-collect=magpie_class_one_blank, ...), as it
 * does for the solver's bench_class_* functions.  Prints, per class, the
 * median CPU time per position over --reps passes, and how many best scores
 * differ from ours (must be 0: both engines are exact). */
#define _GNU_SOURCE
#include "impl/cgp.h"
#include "impl/config.h"
#include "impl/move_gen.h"
#include "util/io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NCLASS 5
static const char *class_names[NCLASS] = {"blank_free", "one_blank", "two_blanks", "empty_board",
                                          "wide_open"};

typedef struct {
    char **cgp;
    int *score;
    int n, cap;
} class_set;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int best_score(Game *game, MoveList *ml)
{
    const MoveGenArgs args = {.game = game,
                              .move_list = ml,
                              .move_record_type = MOVE_RECORD_BEST,
                              .move_sort_type = MOVE_SORT_SCORE,
                              .override_kwg = NULL,
                              .eq_margin_movegen = 0,
                              .target_equity = EQUITY_MAX_VALUE,
                              .target_leave_size_for_exchange_cutoff = UNSET_LEAVE_SIZE};
    generate_moves(&args);
    return equity_to_int(move_get_score(move_list_get_move(ml, 0)));
}

/* One pass over a class: positions are loaded outside the timed part (the
 * solver's bench also starts from a ready board), and the load is excluded
 * from the callgrind count by the caller's toggle function. */
#define CLASS_FN(name)                                                                             \
    __attribute__((noinline)) static int magpie_class_##name(Game *game, MoveList *ml, int score)  \
    {                                                                                              \
        return best_score(game, ml) - score;                                                       \
    }
CLASS_FN(blank_free)
CLASS_FN(one_blank)
CLASS_FN(two_blanks)
CLASS_FN(empty_board)
CLASS_FN(wide_open)
typedef int (*class_fn)(Game *, MoveList *, int);
static const class_fn class_fns[NCLASS] = {magpie_class_blank_free, magpie_class_one_blank,
                                           magpie_class_two_blanks, magpie_class_empty_board,
                                           magpie_class_wide_open};

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(ErrorStack *es, const char *what)
{
    if (!error_stack_is_empty(es)) {
        fprintf(stderr, "magpie_best: %s failed\n", what);
        error_stack_print_and_reset(es);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: magpie_best DATA_DIR LEXICON POSITIONS [REPS] [wmp|nowmp]\n");
        return 2;
    }
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    bool wmp = argc <= 5 || strcmp(argv[5], "nowmp") != 0;
    if (reps < 1)
        reps = 1;
    ErrorStack *es = error_stack_create();
    const ConfigArgs cargs = {.data_paths = argv[1], .settings_filename = NULL, .use_wmp = wmp};
    Config *config = config_create(&cargs, es);
    die(es, "config_create");
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "set -lex %s -wmp %s -s1 score -s2 score -r1 best -r2 best -numplays 1 -threads 1",
             argv[2], wmp ? "true" : "false");
    config_load_command(config, cmd, es);
    die(es, cmd);
    config_execute_command(config, es);
    die(es, cmd);

    FILE *f = fopen(argv[3], "r");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    class_set sets[NCLASS];
    memset(sets, 0, sizeof sets);
    char *line = NULL;
    size_t linecap = 0;
    while (getline(&line, &linecap, f) > 0) {
        char *cls = strtok(line, "\t"), *cgp = strtok(NULL, "\t"), *sc = strtok(NULL, "\t\n");
        if (!cls || !cgp || !sc)
            continue;
        int k = 0;
        while (k < NCLASS && strcmp(cls, class_names[k]))
            k++;
        if (k == NCLASS)
            continue;
        class_set *s = &sets[k];
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 256;
            s->cgp = realloc(s->cgp, (size_t)s->cap * sizeof *s->cgp);
            s->score = realloc(s->score, (size_t)s->cap * sizeof *s->score);
        }
        s->cgp[s->n] = strdup(cgp);
        s->score[s->n++] = atoi(sc);
    }
    fclose(f);
    free(line);

    /* The game object comes from a "cgp" command once; later positions are
     * loaded into it directly. */
    snprintf(cmd, sizeof cmd, "cgp %s",
             sets[0].n ? sets[0].cgp[0]
                       : "15/15/15/15/15/15/15/15/15/15/15/15/15/15/15 AEINRST/ 0/0 0");
    config_load_command(config, cmd, es);
    die(es, "cgp");
    config_execute_command(config, es);
    die(es, "cgp");
    Game *game = config_get_game(config);
    MoveList *ml = move_list_create(1);
    double *v = calloc((size_t)reps, sizeof *v);
    for (int k = 0; k < NCLASS; k++) {
        class_set *s = &sets[k];
        if (!s->n)
            continue;
        int differ = 0;
        for (int r = 0; r < reps; r++) {
            double t = 0;
            differ = 0;
            for (int i = 0; i < s->n; i++) {
                game_load_cgp(game, s->cgp[i], es);
                die(es, s->cgp[i]);
                double t0 = now_us();
                differ += class_fns[k](game, ml, s->score[i]) != 0;
                t += now_us() - t0;
            }
            v[r] = t / s->n;
        }
        qsort(v, (size_t)reps, sizeof *v, cmp_d);
        printf("magpie best move, %-12s %5d positions %9.1f us  (min %.1f, max %.1f, %d reps); "
               "best score differs from the solver's: %d\n",
               class_names[k], s->n, v[reps / 2], v[0], v[reps - 1], reps, differ);
    }
    FILE *st = fopen("/proc/self/status", "r");
    char buf[256];
    while (st && fgets(buf, sizeof buf, st))
        if (!strncmp(buf, "VmRSS:", 6) || !strncmp(buf, "VmHWM:", 6))
            printf("magpie %s", buf);
    if (st)
        fclose(st);
    return 0;
}

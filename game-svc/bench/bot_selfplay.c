/*
 * bot_selfplay.c — the bots' levels against each other, with game-svc's
 * own rules (rules.c) and move choice (bot_play.c), in process: no
 * services, so it measures the bots and nothing else.
 *
 *   bot-selfplay [--games=N] [--seed=S] [--lexicon=build/share/wamerican.kwg]
 *                [--check]
 *
 * For each pair of levels it plays N two-seat games: game i uses bag seed
 * S+i/2 and seats the stronger level first on even i, second on odd i, so
 * each deal is played from both sides and luck of the draw mostly cancels.
 * It prints, per pair, the wins of each side (a draw counts half) and the
 * win rate of the stronger level with its 95% interval, the mean score
 * difference, then per level the time to choose a move, wall clock and
 * thread CPU time (p50, p99; the CPU mean too): on a busy machine the wall
 * clock includes waiting for a core, the CPU time does not.
 *
 * --check exits 1 unless every stronger level won more than half of its
 * games by a margin (win rate - 1.96 standard errors > 0.5), which is the
 * unit test "the levels are ordered" (unit.game-svc.bot_levels_ordered):
 * the seeds are fixed and the play is deterministic, so the outcome is the
 * same on every run and machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot_play.h"
#include "rules.h"

#ifndef BOT_DEFAULT_LEXICON
#define BOT_DEFAULT_LEXICON "build/share/wamerican.kwg"
#endif

#define SELFPLAY__MAX_MOVES 200

typedef struct selfplay__times {
    double *wall_us, *cpu_us;
    size_t n, cap;
} selfplay__times;

static double selfplay__now_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void selfplay__record(selfplay__times *t, double wall, double cpu)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        double *w = realloc(t->wall_us, cap * sizeof *w);
        if (!w)
            return;
        t->wall_us = w;
        double *c = realloc(t->cpu_us, cap * sizeof *c);
        if (!c)
            return;
        t->cpu_us = c;
        t->cap = cap;
    }
    t->wall_us[t->n] = wall;
    t->cpu_us[t->n] = cpu;
    t->n++;
}

static int selfplay__cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Plays one game between levels[0] (seat 0) and levels[1] (seat 1);
 * returns the final score difference seat 0 - seat 1, or INT32_MIN when
 * the rules refused a bot's move (a bug). */
static int selfplay__game(const solver_lexicon *lex, uint64_t seed, const int levels[2],
                          bot_scratch *s, selfplay__times times[BOT_NLEVELS])
{
    static game_state g, next;
    game_move mv;
    game_rules_error err;
    if (game_rules_init(&g, lex, solver_dist_english(), seed, 2) != 0)
        return INT32_MIN;
    for (int turn = 0; g.status == GAME_STATUS_ACTIVE && turn < SELFPLAY__MAX_MOVES; turn++) {
        int seat = g.to_move, level = levels[seat];
        bot_view v;
        solver_move m;
        bot_turn_buf buf;
        bot_view_of_seat(&g, seat, seed * 1000003u + (uint64_t)turn, &v);
        double w0 = selfplay__now_us(CLOCK_MONOTONIC);
        double c0 = selfplay__now_us(CLOCK_THREAD_CPUTIME_ID);
        bot_play_choose(&v, level, s, &m);
        selfplay__record(&times[level], selfplay__now_us(CLOCK_MONOTONIC) - w0,
                         selfplay__now_us(CLOCK_THREAD_CPUTIME_ID) - c0);
        game_turn t;
        bot_move_turn(&m, seat, &buf, &t);
        if (game_rules_turn(&g, &t, 0, &next, &mv, &err) != GAME_RULES_OK) {
            fprintf(stderr, "bot-selfplay: seed %llu: %s refused: %s\n", (unsigned long long)seed,
                    bot_level_name(level), err.message);
            return INT32_MIN;
        }
        g = next;
    }
    return g.seats[0].score - g.seats[1].score;
}

int main(int argc, char **argv)
{
    int games = 200;
    uint64_t seed = 1;
    bool check = false;
    const char *lexpath = BOT_DEFAULT_LEXICON;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--games=", 8) == 0)
            games = atoi(argv[i] + 8);
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            seed = strtoull(argv[i] + 7, NULL, 10);
        else if (strncmp(argv[i], "--lexicon=", 10) == 0)
            lexpath = argv[i] + 10;
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else {
            fprintf(stderr, "usage: bot-selfplay [--games=N] [--seed=S] [--lexicon=PATH] "
                            "[--check]\n");
            return 2;
        }
    }
    if (games < 2 || games > 100000) {
        fprintf(stderr, "bot-selfplay: --games must be 2..100000\n");
        return 2;
    }
    char err[256];
    solver_lexicon *lex = solver_lexicon_load(lexpath, err, sizeof err);
    if (!lex) {
        fprintf(stderr, "bot-selfplay: %s: %s\n", lexpath, err);
        return 2;
    }
    bot_scratch *s = malloc(sizeof *s);
    selfplay__times times[BOT_NLEVELS] = {{0}};
    if (!s)
        return 2;
    static const int pairs[][2] = {
        {BOT_CLUB, BOT_BEGINNER}, {BOT_EXPERT, BOT_CLUB}, {BOT_EXPERT, BOT_BEGINNER}};
    bool ordered = true;
    printf("bot-selfplay: %d games per pair, seeds %llu.., lexicon %s\n", games,
           (unsigned long long)seed, lexpath);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        double strong_wins = 0;
        long long diff = 0;
        for (int i = 0; i < games; i++) {
            int first = i % 2; /* 0: the stronger sits first */
            int levels[2] = {pairs[p][first], pairs[p][1 - first]};
            int d = selfplay__game(lex, seed + (uint64_t)(i / 2), levels, s, times);
            if (d == INT32_MIN) {
                ordered = false;
                continue;
            }
            int strong = first == 0 ? d : -d;
            diff += strong;
            strong_wins += strong > 0 ? 1.0 : strong == 0 ? 0.5 : 0.0;
        }
        double rate = strong_wins / games;
        double se = sqrt(rate * (1 - rate) / games);
        printf("  %-8s vs %-8s  wins %6.1f - %6.1f  win rate %5.1f%% (95%% CI %5.1f..%5.1f%%)  "
               "mean spread %+.1f\n",
               bot_level_name(pairs[p][0]), bot_level_name(pairs[p][1]), strong_wins,
               games - strong_wins, 100 * rate, 100 * (rate - 1.96 * se), 100 * (rate + 1.96 * se),
               (double)diff / games);
        if (rate - 1.96 * se <= 0.5)
            ordered = false;
    }
    for (int l = 0; l < BOT_NLEVELS; l++) {
        selfplay__times *t = &times[l];
        if (!t->n)
            continue;
        double cpu = 0;
        for (size_t i = 0; i < t->n; i++)
            cpu += t->cpu_us[i];
        qsort(t->wall_us, t->n, sizeof(double), selfplay__cmp);
        qsort(t->cpu_us, t->n, sizeof(double), selfplay__cmp);
        printf("  %-8s moves %7zu  wall p50 %7.0f us  p99 %7.0f us  cpu p50 %7.0f us  p99 %7.0f "
               "us  mean %7.0f us\n",
               bot_level_name(l), t->n, t->wall_us[t->n / 2], t->wall_us[t->n * 99 / 100],
               t->cpu_us[t->n / 2], t->cpu_us[t->n * 99 / 100], cpu / t->n);
        free(t->wall_us);
        free(t->cpu_us);
    }
    free(s);
    solver_lexicon_free(lex);
    if (check) {
        printf("levels %s\n", ordered ? "ordered" : "NOT ordered");
        return ordered ? 0 : 1;
    }
    return 0;
}

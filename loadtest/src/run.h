/*
 * run.h — the scenario: virtual players playing real games through the
 * gateway, a ramp of steps, open-loop measurement per operation and step.
 *
 * Threads: one driver thread owns every player, every schedule and every
 * statistic (no locks there). gRPC completions are stamped and posted to
 * the driver's mailbox; by default the driver thread runs them itself
 * between its timers (one polled rpc_loop, so no thread hands a completion
 * to another); `--loops N` gives them N threads of their own instead. The
 * resource sampler has its own thread and lock.
 */
#ifndef LT_RUN_H
#define LT_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"
#include "lt.h"
#include "mailbox.h"
#include "procstat.h"
#include "rpc/rpc.h"
#include "solver.h"
#include "stats.h"
#include "timers.h"

#define LT_MAX_STEPS 16

typedef enum lt_op {
    LT_OP_GET_STATE,
    LT_OP_GET_HISTORY,
    LT_OP_EVALUATE,
    LT_OP_SAVE_DRAFT,
    LT_OP_SUBMIT_PLAY,
    LT_OP_PASS,
    LT_OP_EXCHANGE,
    LT_OP_INVITE,
    LT_OP_RESPOND,
    LT_OP_LIST_INVITATIONS,
    LT_OP_LIST_GAMES,
    LT_OP_NUDGE,
    LT_OP_SEND_CHAT,
    LT_OP_CHECK_WORD,
    LT_OP_GET_DRAFT,
    LT_OP_GET_PROFILE,
    LT_OP_GET_STATS,
    LT_OP_HAMMER,
    LT_OP_LIST_PUBLIC, /* spectators: ListPublicGames */
    LT_OP_WATCH,       /* spectators: a Watch stream, open -> its first event */
    LT_OP_COUNT
} lt_op;

typedef struct lt_op_info {
    const char *name;   /* report name */
    const char *method; /* "/scrabble.v1.Edge/GetState" */
    const char *legacy; /* the replaced system's row name, or NULL */
    bool gameplay;      /* counts for the "gameplay p99 <= 50 ms" verdict */
} lt_op_info;

extern const lt_op_info lt_ops[LT_OP_COUNT];

typedef struct lt_run_cfg {
    char target[128];
    char pg[512];
    char tag[32];
    char secret[128];
    char steps_spec[256];
    int step_duration_ms;
    int tick_ms;
    bool eval;
    int eval_recon;
    int debounce_ms;
    int think_ms;
    bool hammer;
    int hammer_rps;
    bool reset;
    bool cleanup;
    bool seed;
    bool allow_private;
    int social_pct;
    int spectators_pct; /* players that also watch a public game; games are public when > 0 */
    int bot_games_pct;  /* percent of player pairs who each play a bot instead */
    int top_n;
    char lexicon[512];
    char out_json[512];
    char out_html[512];
    char procs[512];
    int loops;
    int max_duration_ms;
    int timeout_ms;
    int progress_ms;
    int ramp_ms;
    bool quiet;
    char log_level[16];
    /* derived */
    int steps[LT_MAX_STEPS];
    int nsteps;
} lt_run_cfg;

/* Per-second series for the charts. */
typedef struct lt_series_point {
    double t; /* seconds since the start */
    int players;
    int step;
    double rps;                    /* all calls */
    double err_rps;                /* non-OK, transport included */
    double p50_ms, p99_ms, max_ms; /* gameplay, corrected */
    double svc_p99_ms;             /* gameplay, service */
} lt_series_point;

typedef struct lt_step_result {
    int players;
    double started_s, ended_s; /* since run start */
    lt_opstats ops[LT_OP_COUNT];
    uint64_t games_started, games_finished;
    uint64_t bot_games_started, bot_games_finished; /* of those, against a bot */
    lt_hist bot_reply; /* a bot game: the human's turn acknowledged -> its next YOUR_TURN (ns) */
    uint64_t events[8];
    uint64_t stream_errors;
    uint64_t board_mismatch;
    uint64_t no_play;  /* turns with no legal play (pass/exchange) */
    lt_hist lag;       /* driver timer lateness */
    lt_hist event_lag; /* a move's event: built by game-svc -> received (ns) */
    /* Spectators (--spectators). */
    uint64_t watch_opened, watch_events, watch_ends, watch_games_over;
    lt_hist watch_lag; /* a live move: committed -> on a Watch stream (ns) */
} lt_step_result;

typedef struct lt_player lt_player;

typedef struct lt_run {
    lt_run_cfg c;
    lt_stop *stop;
    lt_mailbox mb;
    rpc_loop **loops; /* nloops of them; with --loops 0 one, polled by the driver */
    int nloops;
    solver_lexicon *lex;
    const solver_dist *dist;
    lt_procstat procs;
    struct lt_player *players; /* max(steps) players */
    int nplayers_max, nactive;
    lt_timers timers; /* the players' timers (driver thread only) */
    /* steps */
    int step;
    uint64_t t0;
    int64_t wall0;
    uint64_t step_end;
    lt_step_result steps[LT_MAX_STEPS];
    bool stopping;
    const char *end_reason;
    int inflight;
    /* hammer */
    struct lt_hammer *hammer;
    /* series */
    lt_series_point *series;
    size_t nseries, cap_series;
    lt_hist ival_corr, ival_svc;
    uint64_t ival_calls, ival_errs, ival_t0;
    uint64_t progress_calls, progress_errs, progress_t0;
    uint64_t next_progress, next_ival;
} lt_run;

lt_step_result *lt_run_cur(lt_run *r);
/* Records a finished call in the current step and the interval series. */
void lt_run_record(lt_run *r, lt_op op, const rpc_status *st, uint64_t intended, uint64_t sent,
                   uint64_t done);

/* Players (player.c). */
int lt_players_alloc(lt_run *r);
void lt_players_free(lt_run *r);
void lt_player_join(lt_run *r, int idx, uint64_t at);
/* A player's timer fired (t is the one lt_timers_pop_due returned). */
void lt_player_timer(lt_run *r, lt_timer *t);
/* A mailbox message for a player; returns true when it was one. */
bool lt_player_msg(lt_run *r, lt_msg *m);
void lt_players_shutdown(lt_run *r); /* cancels streams */
int lt_players_streams_open(lt_run *r);
void lt_players_destroy_channels(lt_run *r);

/* Reports (report.c). */
void lt_report_table(lt_run *r, FILE *f);
int lt_report_json(lt_run *r, const char *path);
int lt_report_html(lt_run *r, const char *path);

#endif

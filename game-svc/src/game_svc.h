/*
 * game_svc.h — the server context of game-svc (the only mutable state of the
 * process) and the operation model shared by game.c and handlers.c.
 */
#ifndef GAME_SVC_H
#define GAME_SVC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "drafts.h"
#include "event_log.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "rules.h"
#include "scrabble/v1/game.pb-c.h"
#include "scrabble/v1/store.pb-c.h"
#include "store_client.h"

typedef struct game_config {
    rpc_server_config rpc;
    char store[128];
    char redis[128];
    char redis_secrets[512];
    char lexicon_dir[256];
    char default_lexicon[32];
    char log_level[16];
    int instance;
    int cache_mb;
    int nudge_interval_ms;
    int64_t abandon_after_us;    /* untimed games: a seat to move away this long loses */
    int deadline_poll_ms;        /* how often due deadlines are claimed */
    char clock_offset_file[512]; /* tests only: ms added to the game clock */
    int bot_threads;             /* bots.c: the pool's threads (0: play no bots) */
    int bot_queue;               /* bot turns claimed and not yet done, at most */
    int bot_poll_ms;             /* how often due bot turns are claimed */
    int bot_takeover_ms;         /* another instance's bot turn is taken after this */
} game_config;

/* Fills defaults, then environment (SCRABBLE_GAME_*) and flags. Returns
 * CFG_OK, CFG_HELP or CFG_ERROR (message in err). */
int game_config_load(game_config *cfg, int argc, char **argv, char *err, size_t errlen);

#define GAME_MAX_LEXICONS 8

typedef struct game_lexicons {
    pthread_mutex_t mu;
    char dir[256];
    int n;
    char names[GAME_MAX_LEXICONS][32];
    solver_lexicon *lex[GAME_MAX_LEXICONS];
} game_lexicons;

void game_lexicons_init(game_lexicons *l, const char *dir);
void game_lexicons_free(game_lexicons *l);
/* The lexicon <dir>/<name>.kwg, loaded on first use and kept; NULL when the
 * name is malformed ([a-z0-9_-]{1,31}) or the file does not load. */
const solver_lexicon *game_lexicons_get(game_lexicons *l, const char *name);
/* The names of the lexicon files in the directory (<name>.kwg with a valid
 * name), sorted, at most max; whether each loads is only known on use.
 * Returns how many were written. */
int game_lexicons_list(game_lexicons *l, char names[][32], int max);

typedef struct game_bots game_bots;

typedef struct game_svc {
    game_config cfg;
    game_bots *bots; /* bots.c */
    game_cache *cache;
    game_store store;
    game_drafts *drafts;
    game_lexicons lexicons;
    metric *m_evaluate;
    metric *m_turns;
    metric *m_cache_entries, *m_cache_bytes, *m_cache_misses, *m_evictions;
    metric *m_timeouts, *m_warnings, *m_invitations_expired;
    metric *m_clock_offset; /* the test-only offset in force (0 in production) */
    metric *m_ops_waiting;  /* calls in the games' wait queues (game.c, deadlines.c) */
    /* The deadline poller (deadlines.c). */
    _Atomic int64_t clock_offset_ms; /* from --clock-offset-file; 0 in production */
    pthread_t poller;
    pthread_mutex_t poll_mu;
    pthread_cond_t poll_cv;
    bool poll_stop, poller_started;
} game_svc;

/* What an operation's run function did. */
enum {
    GAME_OP_DONE = 0, /* the call is finished */
    GAME_OP_PENDING,  /* an async continuation owns the op and its entry reference */
    GAME_OP_POST,     /* call op->post after the entry lock is dropped */
};

typedef struct game_op game_op;
/* Runs with e->mu held and e READY. Must not block. */
typedef int (*game_op_run_fn)(game_svc *svc, game_entry *e, game_op *op);
/* Runs without any lock; finishes the call (now or asynchronously) and must
 * not touch the entry. */
typedef void (*game_op_post_fn)(game_svc *svc, game_op *op);
/* The outcome of an op made in-process (no call): st OK with the reply, or
 * the failure (code, scrabble-reason, message) with reply NULL. Both live
 * only until it returns. It runs exactly once, on whichever thread finishes
 * the op, possibly with the game's entry lock held: it must not block nor
 * call back into game-svc (hand the outcome to your own queue). */
typedef void (*game_op_done_fn)(void *arg, const rpc_status *st, const ProtobufCMessage *reply);

/* A validated turn waiting for the store (in the call's arena: about 4 KB,
 * so only turns that reach CommitMove pay for it). */
typedef struct game_pending {
    game_state next_state; /* the game after the move, applied on commit */
    game_move move;
    game_clock clock; /* the clock after the move */
} game_pending;

/* One call about one game. Allocated in the call's arena: it dies with the
 * call, so nothing may touch it after the call is finished. */
struct game_op {
    game_op *next; /* in the entry's wait queue / a post list */
    game_op_run_fn run;
    game_op_post_fn post;
    bool is_turn; /* runs only when game_entry_turns_open (cache.h) */
    game_svc *svc;
    rpc_call *call;       /* NULL for in-process ops: the poller's, game_turn_submit's */
    rpc_arena *arena;     /* in-process ops: their own arena, freed when done */
    game_op_done_fn done; /* in-process ops: who hears the outcome (may be NULL) */
    void *done_arg;
    bool timeout_tried; /* this op already tried to end the game on time */
    game_entry *entry;  /* holds one reference while queued or running */
    int64_t game_id;
    int64_t account_id;
    const ProtobufCMessage *req;
    int seat; /* the caller's seat, set by run */

    /* Turns. */
    int64_t expected_seq;
    game_turn turn;
    solver_placement placed[16];
    char tiles[16];
    struct game_pending *pending; /* allocated when a commit starts */
    void *scratch;                /* a timeout's result, while TimeoutGame runs */

    /* SaveDraft: the reply, built before the job is queued. */
    Scrabble__V1__Draft *draft;

    /* Social: who to tell (copied under the lock for the post step). */
    int nseats;
    int64_t seat_accounts[GAME_MAX_SEATS];
    char handle[GAME_HANDLE_MAX];
    int64_t nudge_target; /* Nudge: the account nudged */
};

/* Routes an operation to its game's entry: runs it now when the game is
 * resident, queues it behind a load or a commit otherwise. Finishes the call
 * itself on any failure. */
void game_dispatch(game_svc *svc, int64_t game_id, game_op *op);
/* game_ops_waiting += delta: whoever puts an op into an entry's wait queue
 * or takes one out (e->mu held) says so here. */
void game_ops_waiting_add(game_svc *svc, int64_t delta);

/* An op's outcome, whoever asked: its call's reply or status, or for an
 * in-process op its done function (then its arena, and the op, are freed).
 * The op is gone when these return. */
void game_op_reply(game_op *op, const ProtobufCMessage *reply);
void game_op_fail(game_op *op, grpc_status_code code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void game_op_fail_status(game_op *op, const rpc_status *st);
/* The seat check of every run step: sets op->seat to the caller's seat in
 * e, or fails the op PERMISSION_DENIED not_a_player and returns false. */
bool game_op_seated(const game_entry *e, game_op *op);
/* The arena of an op (its call's, or its own). */
rpc_arena *game_op_arena(game_op *op);

/* Ends a store write on e that op started from READY (e->mu held, e
 * COMMITTING; the op already answered): READY and whatever waits runs when
 * the store applied it, else STALE, or RELOADING with the reload started
 * when turns wait. Drops e->mu, then the writer's reference. */
void game_write_done(game_svc *svc, game_entry *e, bool applied);

/* Builds e's game from a stored record by replaying its moves (e->mu held
 * when e is in the cache; history goes through svc->cache). Returns 0, or
 * -1 with st set. */
int game_entry_init_from_record(game_svc *svc, game_entry *e, const Scrabble__V1__GameRecord *rec,
                                rpc_status *st);

/* Writes GAME_STARTED to every seat and YOUR_TURN to the first mover into
 * the event log (AppendEvents with dedupe keys, so announcing twice is
 * harmless) for `caller` (game_store_call); `a` is scratch for the request
 * (under e->mu). done(arg, ...)
 * runs when the append has committed or failed. Returns 0 when the append
 * started, -1 when it could not (done is then not called). */
int game_announce_start(game_svc *svc, rpc_call *caller, game_entry *e, rpc_arena *a,
                        rpc_unary_cb done, void *arg);

/* Milliseconds since the Unix epoch. */
int64_t game_now_ms(void);
/* The game clock: game_now_ms() plus the test-only offset
 * (--clock-offset-file). Every clock and deadline uses it. */
int64_t game_clock_now(game_svc *svc);

/* ---- time controls (deadlines.c) ---- */
/* Starts the deadline poller thread. Returns 0 or -1. */
int game_deadlines_start(game_svc *svc);
void game_deadlines_stop(game_svc *svc);
/* Under e->mu, when the seat to move is out of time: starts ending the
 * game on time for op (a turn or a read that found the flag fallen; the
 * op gets its answer once the store has spoken). Returns a GAME_OP_*
 * code. */
int game_timeout_run(game_svc *svc, game_entry *e, game_op *op);
/* seeks.c: on the poller thread, creates and announces the game of a
 * claimed DEADLINE_KIND_SEEK_MATCH (d->invitation), as CreateGame would;
 * every step is idempotent. Blocking; scratch in a. */
void game_seek_create(game_svc *svc, rpc_arena *a, const Scrabble__V1__Deadline *d);
/* A blocking claim (the pollers' threads): req's now_ms is set to the game
 * clock; the reply in a, or NULL when the call failed (logged). method:
 * GAME_STORE_CLAIM_DEADLINES or GAME_STORE_CLAIM_BOT_TURNS. */
const Scrabble__V1__ClaimDeadlinesReply *
game_store_claim(game_svc *svc, int method, Scrabble__V1__ClaimDeadlinesRequest *req, rpc_arena *a);
/* With mu held: waits on cv for ms, or until *stop, or until *poke (then
 * cleared; poke may be NULL), both checked on every wake-up. */
void game_poll_sleep(pthread_mutex_t *mu, pthread_cond_t *cv, const bool *stop, bool *poke, int ms);
/* The events of move m, g being the game right after it and c its clock,
 * appended to l in the arena: OPPONENT_MOVED to every other seat, then
 * YOUR_TURN to the next seat or GAME_OVER to everyone, with the clocks as
 * of now. m NULL: the GAME_OVER of a timeout (from the seat to move, which
 * ran out). They ride in the CommitMove / TimeoutGame that commits them,
 * so they exist exactly when it does. Returns 0 or -1 (OOM). (game.c) */
int game_move_events(rpc_arena *a, int64_t game_id, const game_state *g, const game_clock *c,
                     int64_t now, const game_move *m, game_event_list *l);
/* Reloads a resident entry from the store (e->state RELOADING, e->mu not
 * held; the ops waiting keep e alive). */
void game_reload(game_svc *svc, game_entry *e);
/* Runs op on e again (e->mu not held), then whatever waits. */
void game_rerun(game_svc *svc, game_entry *e, game_op *op);
/* Copies a stored clock and time control into e (load, create). */
void game_clock_from_record(game_entry *e, const Scrabble__V1__GameRecord *rec);
/* The GameClock message of e's clock, in a. */
Scrabble__V1__GameClock *game_view_clock_record(rpc_arena *a, const game_clock *c, int nseats);
/* Fills st's time_control, clock_ms and deadline_ms from e at now. */
void game_view_time(rpc_arena *a, Scrabble__V1__GameState *st, const game_entry *e, int64_t now);

/* ---- bots (bots.c) ---- */
/* Starts the bot pool (--bot-threads) and its poller; metrics in reg.
 * Returns 0 or -1. */
int game_bots_start(game_svc *svc, metrics_registry *reg);
/* Stops the poller and the pool (turns not yet chosen are left to their
 * leases); the state stays for moves still committing until game_bots_free. */
void game_bots_stop(game_svc *svc);
void game_bots_free(game_svc *svc);
/* After a commit into e (e->mu held): when a bot is now to move, this
 * instance prefers that turn in its claims (it holds the game) and polls at
 * once. */
void game_bots_after_commit(game_svc *svc, const game_entry *e);

/* ---- views: protobuf messages from cache state (view.c), in `a` ---- */
Scrabble__V1__GameState *game_view_state(rpc_arena *a, const game_entry *e, int my_seat);
Scrabble__V1__Move *game_view_move(rpc_arena *a, const game_move *m, bool reveal_exchange);
/* Seats with scores (no racks). */
Scrabble__V1__Seat **game_view_seats(rpc_arena *a, const game_state *g);

#endif

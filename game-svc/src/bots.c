/*
 * bots.c — game-svc plays its bots: a poller takes due bot turns from the
 * store (ClaimBotTurns; the rows are written by the transactions that make
 * a bot the seat to move, migration 0008), a bounded pool of threads
 * chooses the moves (bot_play.c), and each move is committed through the
 * very turn path a player's SubmitPlay takes (game_turn_run: the seq check,
 * the rules, CommitMove with its events, the ratings of a finished game),
 * as an in-process turn (game_turn_submit, turn.h).
 *
 * Why a pool in game-svc rather than a bot service: choosing a move needs
 * the lexicon and the game (both are here), and committing it needs the
 * game's entry (here too); a separate service would hold a second copy of
 * the lexicon, load each game again and call back in to move. Why off the
 * gRPC workers: a choice takes milliseconds of CPU (docs/BENCHMARKS-game.md,
 * "Bots"), which behind a worker would delay every Evaluate queued there.
 *
 * Bounded: at most --bot-queue turns wait or run at once; the poller claims
 * only as many as there is room for, so a busy pool leaves the rest in the
 * store (unleased) for another instance or a later poll, and nothing is
 * refused. --bot-threads=0 makes an instance claim no bot turns at all.
 *
 * Exactly once, and restart-safe: a claimed turn is leased (BOTS__LEASE_MS)
 * and comes back if it is not moved by then (the instance died, the commit
 * failed); two instances that both end up choosing a move for one turn
 * commit it with the same expected_seq, and the store takes one
 * (CommitMove's seq check). What a bot sees: bot_view_of_seat, under the
 * game's lock (its board, its own rack, the unseen counts).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bot_play.h"
#include "game_svc.h"
#include "turn.h"
#include "rpc/log.h"

#define BOTS__LEASE_MS 10000
#define BOTS__CLAIM_MAX 64
/* Games this instance committed into a bot's turn, kept for the claim's
 * preference (ClaimBotTurns.prefer_game_ids) this long, at most this many;
 * other instances take such a turn only after --bot-takeover. */
#define BOTS__PREFER_MS 60000
#define BOTS__PREFER_MAX 1024
#define BOTS__PREFER_SEND 128
#define BOTS__HANDLE_PREFIX "bot-" /* the reserved handles (0008_bots.sql) */

/* One bot turn, from its claim to its commit (malloc'd). */
typedef struct bots__job {
    struct bots__job *next;
    game_bots *bots;
    int64_t game_id, seq, account_id;
    int level;
    int64_t claimed_ms; /* when it was claimed: the move's latency */
    bool reloaded;      /* the game was reloaded once for this claim */
    bool passing;       /* its play was refused: it passes instead */
    bot_view view;
} bots__job;

struct game_bots {
    game_svc *svc;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* jobs queued, or stop */
    pthread_cond_t poll_cv; /* the poller's sleep */
    bots__job *head, *tail;
    int busy; /* jobs queued or being chosen or committing */
    bool stop;
    bool poke; /* poll now: a local commit made a bot the seat to move */
    int nthreads;
    pthread_t *threads;
    pthread_t poller;
    bool poller_started;
    metric *m_moves[BOT_NLEVELS], *m_failed, *m_seconds[BOT_NLEVELS], *m_cpu[BOT_NLEVELS];
    metric *m_busy;
    /* The preferred games (BOTS__PREFER_*), oldest first, under mu. */
    int64_t prefer_id[BOTS__PREFER_MAX];
    int64_t prefer_ms[BOTS__PREFER_MAX];
    int nprefer;
};

static int64_t bots__mono_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void bots__release(game_bots *b)
{
    pthread_mutex_lock(&b->mu);
    b->busy--;
    if (b->m_busy)
        metric_set(b->m_busy, b->busy);
    pthread_mutex_unlock(&b->mu);
}

/* ------------------------------------------------------------------ */
/* Committing a move                                                   */

static void bots__queue(game_bots *b, bots__job *j);

/* The turn finished (game_turn_submit's done: perhaps under the game's
 * lock, so nothing here calls back into game-svc): the move committed, or
 * not (a player resigned meanwhile, the store is away: stale_seq,
 * game_over, unavailable). Not committed, the row stays leased and the
 * turn comes back after the lease if it is still due. */
static void bots__committed(void *arg, const rpc_status *st, const ProtobufCMessage *reply)
{
    bots__job *j = arg;
    game_bots *b = j->bots;
    (void)reply;
    if (st->code == GRPC_STATUS_OK) {
        if (b->m_moves[j->level])
            metric_add(b->m_moves[j->level], 1);
        if (b->m_seconds[j->level])
            metric_observe(b->m_seconds[j->level], (game_now_ms() - j->claimed_ms) / 1000.0);
        log_debug("bot_moved", "game=%lld seq=%lld level=%s", (long long)j->game_id,
                  (long long)j->seq + 1, bot_level_name(j->level));
    } else {
        /* The rules refused the bot's choice (a bug of bot_play.c: the
         * self-play benchmark has never seen one): it passes instead, so a
         * refused choice cannot come back with every lease and hold the
         * game forever. The pass goes through the pool's queue. */
        if (st->code == GRPC_STATUS_INVALID_ARGUMENT && !j->passing) {
            log_error("bot_move_refused", "game=%lld seq=%lld level=%s reason=%s",
                      (long long)j->game_id, (long long)j->seq + 1, bot_level_name(j->level),
                      st->reason);
            j->passing = true;
            bots__queue(b, j);
            return;
        }
        if (b->m_failed)
            metric_add(b->m_failed, 1);
        log_info("bot_move_not_committed", "game=%lld seq=%lld level=%s code=%s reason=%s",
                 (long long)j->game_id, (long long)j->seq + 1, bot_level_name(j->level),
                 rpc_status_code_name(st->code), st->reason);
    }
    free(j);
    bots__release(b);
}

/* Chooses j's move (or, after a refusal, a pass) and submits it through
 * the turn path (on a pool thread). */
static void bots__play(game_bots *b, bots__job *j, bot_scratch *s)
{
    solver_move m = {.kind = SOLVER_MOVE_PASS};
    bot_turn_buf buf;
    game_turn turn;
    if (!j->passing) {
        int64_t c0 = bots__mono_us(CLOCK_THREAD_CPUTIME_ID);
        bot_play_choose(&j->view, j->level, s, &m);
        if (b->m_cpu[j->level])
            metric_observe(b->m_cpu[j->level], (bots__mono_us(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e6);
    }
    bot_move_turn(&m, -1, &buf, &turn);
    game_turn_request t = {.game_id = j->game_id,
                           .account_id = j->account_id,
                           .expected_seq = j->seq,
                           .kind = turn.kind,
                           .placed = turn.placed,
                           .nplaced = turn.nplaced,
                           .tiles = turn.tiles};
    if (game_turn_submit(b->svc, &t, bots__committed, j) != 0) {
        log_warn("bot_move_dropped", "game=%lld reason=oom", (long long)j->game_id);
        free(j);
        bots__release(b);
    }
}

/* Hands j to the pool (any thread; never blocks beyond b->mu). */
static void bots__queue(game_bots *b, bots__job *j)
{
    pthread_mutex_lock(&b->mu);
    j->next = NULL;
    if (b->tail)
        b->tail->next = j;
    else
        b->head = j;
    b->tail = j;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static void *bots__worker(void *arg)
{
    game_bots *b = arg;
    bot_scratch *s = malloc(sizeof *s);
    pthread_mutex_lock(&b->mu);
    while (!b->stop) {
        bots__job *j = b->head;
        if (!j) {
            pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        b->head = j->next;
        if (!b->head)
            b->tail = NULL;
        pthread_mutex_unlock(&b->mu);
        if (s) {
            bots__play(b, j, s);
        } else {
            free(j);
            bots__release(b);
        }
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    free(s);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Claiming turns                                                      */

/* Drops game_id from the preferred games (under b->mu). */
static void bots__unprefer_locked(game_bots *b, int64_t game_id)
{
    for (int i = 0; i < b->nprefer; i++)
        if (b->prefer_id[i] == game_id) {
            memmove(&b->prefer_id[i], &b->prefer_id[i + 1],
                    (size_t)(b->nprefer - i - 1) * sizeof b->prefer_id[0]);
            memmove(&b->prefer_ms[i], &b->prefer_ms[i + 1],
                    (size_t)(b->nprefer - i - 1) * sizeof b->prefer_ms[0]);
            b->nprefer--;
            return;
        }
}

void game_bots_after_commit(game_svc *svc, const game_entry *e)
{
    game_bots *b = svc->bots;
    const game_state *g = &e->g;
    if (!b || g->status != GAME_STATUS_ACTIVE ||
        strncmp(g->seats[g->to_move].handle, BOTS__HANDLE_PREFIX, strlen(BOTS__HANDLE_PREFIX)) != 0)
        return;
    pthread_mutex_lock(&b->mu);
    bots__unprefer_locked(b, e->game_id);
    if (b->nprefer == BOTS__PREFER_MAX)
        bots__unprefer_locked(b, b->prefer_id[0]);
    b->prefer_id[b->nprefer] = e->game_id;
    b->prefer_ms[b->nprefer] = game_now_ms();
    b->nprefer++;
    /* Poll now: the bot's move need not wait for the next period. */
    b->poke = true;
    pthread_cond_signal(&b->poll_cv);
    pthread_mutex_unlock(&b->mu);
}

/* The claim's op on the game: is the bot still to move at the claimed seq
 * in this instance's copy? Then the view is taken, under the lock, and the
 * job queued for the pool. An instance whose copy is behind the store
 * (another instance moved in this game) reloads it first. */
static int bots__claim_run(game_svc *svc, game_entry *e, game_op *op)
{
    game_bots *b = svc->bots;
    bots__job *j = op->scratch;
    const game_state *g = &e->g;
    if (g->status == GAME_STATUS_ACTIVE && g->seq < j->seq && !j->reloaded &&
        e->state == GAME_ENTRY_READY) {
        j->reloaded = true;
        e->state = GAME_ENTRY_STALE; /* the next turn (this op, again) reloads first */
        return GAME_OP_POST;         /* bots__claim_again */
    }
    if (g->status != GAME_STATUS_ACTIVE || g->seq != j->seq ||
        g->seats[g->to_move].account_id != j->account_id) {
        log_debug("bot_turn_stale", "game=%lld seq=%lld at=%lld", (long long)j->game_id,
                  (long long)j->seq, (long long)g->seq);
        free(j);
        bots__release(b);
    } else {
        bot_view_of_seat(g, g->to_move,
                         (uint64_t)j->game_id * 0x9e3779b97f4a7c15ull ^ (uint64_t)j->seq, &j->view);
        bots__queue(b, j);
    }
    rpc_arena_destroy(op->arena);
    return GAME_OP_DONE;
}

/* The copy was behind: dispatched again as a turn, which waits for the
 * reload that a stale entry starts (game_dispatch). */
static void bots__claim_again(game_svc *svc, game_op *op)
{
    game_op *again = rpc_arena_calloc(op->arena, 1, sizeof *again);
    if (!again) {
        bots__job *j = op->scratch;
        free(j);
        bots__release(svc->bots);
        rpc_arena_destroy(op->arena);
        return;
    }
    *again = *op;
    again->entry = NULL;
    again->next = NULL;
    game_dispatch(svc, op->game_id, again);
}

/* The claim's op ended without running (the game did not load): the
 * turn is dropped here and comes back after its lease. */
static void bots__claim_failed(void *arg, const rpc_status *st, const ProtobufCMessage *reply)
{
    bots__job *j = arg;
    game_bots *b = j->bots;
    (void)reply;
    log_info("bot_turn_not_loaded", "game=%lld code=%s reason=%s", (long long)j->game_id,
             rpc_status_code_name(st->code), st->reason);
    free(j);
    bots__release(b);
}

static void bots__claimed(game_bots *b, const Scrabble__V1__Deadline *d)
{
    int level = bot_level_parse(d->bot_level);
    if (level < 0) {
        log_warn("bot_level_unknown", "game=%lld level=%s", (long long)d->game_id, d->bot_level);
        bots__release(b);
        return;
    }
    rpc_arena *a = rpc_arena_create(0);
    game_op *op = a ? rpc_arena_calloc(a, 1, sizeof *op) : NULL;
    bots__job *j = op ? calloc(1, sizeof *j) : NULL;
    if (!j) {
        if (a)
            rpc_arena_destroy(a);
        log_warn("bot_turn_dropped", "game=%lld reason=oom", (long long)d->game_id);
        bots__release(b);
        return;
    }
    j->bots = b;
    j->game_id = d->game_id;
    j->seq = d->seq;
    j->account_id = d->account_id;
    j->level = level;
    j->claimed_ms = game_now_ms();
    op->arena = a;
    op->scratch = j;
    op->run = bots__claim_run;
    op->post = bots__claim_again;
    op->done = bots__claim_failed;
    op->done_arg = j;
    op->is_turn = true;
    op->seat = -1;
    game_dispatch(b->svc, d->game_id, op);
}

static void bots__poll_once(game_bots *b, rpc_arena *a)
{
    game_svc *svc = b->svc;
    int room;
    pthread_mutex_lock(&b->mu);
    room = svc->cfg.bot_queue - b->busy;
    if (room > BOTS__CLAIM_MAX)
        room = BOTS__CLAIM_MAX;
    if (room > 0)
        b->busy += room; /* reserved; the unused part is given back below */
    /* The newest preferred games that are still fresh. */
    int64_t prefer[BOTS__PREFER_SEND];
    size_t nprefer = 0;
    int64_t fresh = game_now_ms() - BOTS__PREFER_MS;
    while (b->nprefer > 0 && b->prefer_ms[0] < fresh)
        bots__unprefer_locked(b, b->prefer_id[0]);
    for (int i = b->nprefer - 1; i >= 0 && nprefer < BOTS__PREFER_SEND; i--)
        prefer[nprefer++] = b->prefer_id[i];
    pthread_mutex_unlock(&b->mu);
    if (room <= 0)
        return;
    Scrabble__V1__ClaimDeadlinesRequest req = SCRABBLE__V1__CLAIM_DEADLINES_REQUEST__INIT;
    req.limit = room;
    req.lease_ms = BOTS__LEASE_MS;
    req.prefer_game_ids = prefer;
    req.n_prefer_game_ids = nprefer;
    req.grace_ms = svc->cfg.bot_takeover_ms;
    size_t got = 0;
    const Scrabble__V1__ClaimDeadlinesReply *r =
        game_store_claim(svc, GAME_STORE_CLAIM_BOT_TURNS, &req, a);
    if (r)
        got = r->n_deadlines;
    /* The room not used goes back; a failed claim used none. */
    {
        pthread_mutex_lock(&b->mu);
        b->busy -= room - (int)got;
        if (b->m_busy)
            metric_set(b->m_busy, b->busy);
        for (size_t i = 0; i < got; i++)
            bots__unprefer_locked(b, r->deadlines[i]->game_id);
        pthread_mutex_unlock(&b->mu);
        for (size_t i = 0; i < got; i++)
            bots__claimed(b, r->deadlines[i]);
    }
}

static void *bots__poller(void *arg)
{
    game_bots *b = arg;
    rpc_arena *a = rpc_arena_create(0);
    pthread_mutex_lock(&b->mu);
    while (!b->stop) {
        pthread_mutex_unlock(&b->mu);
        if (a) {
            bots__poll_once(b, a);
            rpc_arena_reset(a);
        }
        pthread_mutex_lock(&b->mu);
        game_poll_sleep(&b->mu, &b->poll_cv, &b->stop, &b->poke, b->svc->cfg.bot_poll_ms);
    }
    pthread_mutex_unlock(&b->mu);
    if (a)
        rpc_arena_destroy(a);
    return NULL;
}

/* ------------------------------------------------------------------ */

int game_bots_start(game_svc *svc, metrics_registry *reg)
{
    game_bots *b = calloc(1, sizeof *b);
    if (!b)
        return -1;
    b->svc = svc;
    svc->bots = b;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    pthread_cond_init(&b->poll_cv, NULL);
    for (int l = 0; reg && l < BOT_NLEVELS; l++) {
        char labels[48];
        snprintf(labels, sizeof labels, "level=\"%s\"", bot_level_name(l));
        b->m_moves[l] =
            metrics_counter(reg, "game_bot_moves_total", labels, "Bot moves committed, by level");
        b->m_seconds[l] =
            metrics_histogram(reg, "game_bot_move_seconds", labels,
                              "From a bot turn's claim to its move's commit, by level",
                              metrics_latency_bounds, metrics_latency_bounds_count);
        b->m_cpu[l] = metrics_histogram(reg, "game_bot_choose_cpu_seconds", labels,
                                        "CPU time of choosing one bot move, by level",
                                        metrics_latency_bounds, metrics_latency_bounds_count);
    }
    if (reg) {
        b->m_failed = metrics_counter(reg, "game_bot_moves_failed_total", NULL,
                                      "Bot moves that did not commit (the turn comes back "
                                      "after its lease if still due)");
        b->m_busy = metrics_gauge(reg, "game_bot_turns_in_progress", NULL,
                                  "Bot turns claimed and not yet committed (at most --bot-queue)");
    }
    b->nthreads = svc->cfg.bot_threads;
    if (b->nthreads == 0)
        return 0; /* this instance plays no bots */
    b->threads = calloc((size_t)b->nthreads, sizeof *b->threads);
    if (!b->threads)
        return -1;
    for (int i = 0; i < b->nthreads; i++)
        if (pthread_create(&b->threads[i], NULL, bots__worker, b) != 0) {
            b->nthreads = i;
            return -1;
        }
    if (pthread_create(&b->poller, NULL, bots__poller, b) != 0)
        return -1;
    b->poller_started = true;
    return 0;
}

void game_bots_stop(game_svc *svc)
{
    game_bots *b = svc->bots;
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_broadcast(&b->cv);
    pthread_cond_broadcast(&b->poll_cv);
    pthread_mutex_unlock(&b->mu);
    if (b->poller_started)
        pthread_join(b->poller, NULL);
    for (int i = 0; i < b->nthreads; i++)
        pthread_join(b->threads[i], NULL);
    /* Turns still queued are dropped: their leases bring them back to
     * whichever instance polls next. */
    while (b->head) {
        bots__job *j = b->head;
        b->head = j->next;
        free(j);
    }
    b->tail = NULL;
}

void game_bots_free(game_svc *svc)
{
    game_bots *b = svc->bots;
    if (!b)
        return;
    free(b->threads);
    pthread_cond_destroy(&b->cv);
    pthread_cond_destroy(&b->poll_cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
    svc->bots = NULL;
}

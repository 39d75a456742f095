/*
 * player.c — one virtual player: its own channel (its own HTTP/2
 * connection), a live Subscribe stream, and a state machine driven by three
 * inputs on the driver thread: its timer, the completion of its one
 * in-flight call, and its stream events.
 *
 * A tick: GetState; GetHistory since the last replayed seq (replayed onto a
 * local board, checked square by square against the state's board); on its
 * turn (state.to_move == my_seat, from the state it just read) compose a
 * legal play with the solver from that board and state.my_rack, chosen
 * mid-ranked; Evaluate each growing prefix of the placed tiles plus
 * `eval_recon` full re-previews, `debounce` apart; SaveDraft; SubmitPlay with
 * expected_seq = state.seq. No play: Exchange (bag >= 7) or Pass. Off turn,
 * a fraction of ticks run one social/secondary call.
 *
 * Intended send times (for corrected latency): the first call of a tick is
 * due at the tick's grid time, even when the previous tick ran late; each
 * evaluate at compose_start + k * debounce; a chained call (GetHistory after
 * GetState, SubmitPlay after SaveDraft) at the completion of the call before.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "run.h"
#include "scrabble/v1/edge.pb-c.h"
#include "seed.h"

typedef enum lt_phase {
    LT_PH_NEW = 0,
    LT_PH_IDLE,    /* waiting for the next tick */
    LT_PH_CALL,    /* one unary call in flight */
    LT_PH_COMPOSE, /* between paced evaluates (timer) */
    LT_PH_THINK,   /* on its turn, thinking before placing tiles (timer) */
    LT_PH_DONE,    /* shut down */
} lt_phase;

/* What the in-flight call is for. */
typedef enum lt_step_kind {
    LT_K_TICK_STATE,
    LT_K_HISTORY,
    LT_K_EVAL,
    LT_K_DRAFT,
    LT_K_TURN,
    LT_K_INVITE,
    LT_K_RESPOND,
    LT_K_LIST_INV,
    LT_K_LIST_GAMES,
    LT_K_SOCIAL,
    LT_K_LIST_PUBLIC,
} lt_step_kind;

enum { LT_MSG_UNARY = 1, LT_MSG_EVENT, LT_MSG_STREAM_END, LT_MSG_WATCH_EVENT, LT_MSG_WATCH_END };

typedef struct lt_call {
    lt_msg msg;
    int kind; /* LT_MSG_UNARY */
    struct lt_player *p;
    lt_op op;
    lt_step_kind step;
    uint64_t intended, sent, done;
    rpc_status st;
    grpc_byte_buffer *reply;
} lt_call;

typedef struct lt_event_msg {
    lt_msg msg;
    int kind; /* LT_MSG_EVENT or LT_MSG_STREAM_END */
    struct lt_player *p;
    int type;
    int64_t game_id, seq, invitation_id;
    int to_move;
    int code;
    int64_t lag_ms; /* received - the event's at_ms (move events), or -1 */
    uint64_t at;    /* received (driver clock) */
    rpc_status st;  /* LT_MSG_WATCH_END */
} lt_event_msg;

struct lt_player {
    lt_run *run;
    int idx;
    lt_phase phase;
    char handle[40];
    char partner_handle[40];
    char auth[64];
    rpc_metadata md;
    rpc_channel *ch;
    rpc_loop *loop;
    rpc_client_stream *sub;
    bool sub_live;
    int sub_restarts;
    /* Spectating (--spectators): one Watch stream of another game. */
    bool spectator;
    rpc_client_stream *watch;
    int64_t watch_game;
    uint64_t watch_sent;      /* when it was opened (driver clock) */
    int64_t watch_wall_ms;    /* ... and on the wall clock, for the live-move lag */
    bool watch_first;         /* its first event came (the Watch op is recorded) */
    uint64_t watch_next_list; /* not before: ListPublicGames is rate-limited (list class) */
    int watch_restarts;
    uint64_t rng;
    /* schedule */
    lt_timer timer; /* in the run's heap (r->timers) */
    uint64_t anchor, tick_ns;
    uint64_t chain_start;
    /* assembly */
    bool inviter;
    const char *bot;      /* --bot-games: the bot this player invites, else NULL */
    uint64_t bot_wait_t0; /* a bot game: when its turn was acknowledged */
    int64_t invitation_id;
    int64_t pending_inv; /* invitee: an INVITATION seen, not yet answered */
    int waiting_ticks;
    /* game */
    int64_t game_id;
    int64_t counted_start; /* the last game this player counted as started */
    int my_seat;
    int64_t local_seq;
    int64_t state_seq;
    int to_move;
    bool my_turn;
    bool finished_seen;
    int bag;
    char rack[16];
    char rows[SOLVER_DIM][SOLVER_DIM + 1]; /* the state's board, checked after a replay */
    bool rows_valid;
    solver_board board;
    /* turn composition */
    solver_placement place[SOLVER_DIM];
    int nplace;
    int eval_i, eval_n;
    uint64_t compose_t0;
    lt_call call;
};

const lt_op_info lt_ops[LT_OP_COUNT] = {
    [LT_OP_GET_STATE] = {"GetState", "/scrabble.v1.Edge/GetState", "game.state", true},
    [LT_OP_GET_HISTORY] = {"GetHistory", "/scrabble.v1.Edge/GetHistory", "game.history", true},
    [LT_OP_EVALUATE] = {"Evaluate", "/scrabble.v1.Edge/Evaluate", "game.evaluate", true},
    [LT_OP_SAVE_DRAFT] = {"SaveDraft", "/scrabble.v1.Edge/SaveDraft", "draft.save", true},
    [LT_OP_SUBMIT_PLAY] = {"SubmitPlay", "/scrabble.v1.Edge/SubmitPlay", "game.submit_play", true},
    [LT_OP_PASS] = {"Pass", "/scrabble.v1.Edge/Pass", NULL, true},
    [LT_OP_EXCHANGE] = {"Exchange", "/scrabble.v1.Edge/Exchange", NULL, true},
    [LT_OP_INVITE] = {"Invite", "/scrabble.v1.Edge/Invite", NULL, false},
    [LT_OP_RESPOND] = {"RespondInvitation", "/scrabble.v1.Edge/RespondInvitation", NULL, false},
    [LT_OP_LIST_INVITATIONS] = {"ListInvitations", "/scrabble.v1.Edge/ListInvitations", NULL,
                                false},
    [LT_OP_LIST_GAMES] = {"ListGames", "/scrabble.v1.Edge/ListGames", NULL, false},
    [LT_OP_NUDGE] = {"Nudge", "/scrabble.v1.Edge/Nudge", NULL, false},
    [LT_OP_SEND_CHAT] = {"SendChat", "/scrabble.v1.Edge/SendChat", NULL, false},
    [LT_OP_CHECK_WORD] = {"CheckWord", "/scrabble.v1.Edge/CheckWord", NULL, false},
    [LT_OP_GET_DRAFT] = {"GetDraft", "/scrabble.v1.Edge/GetDraft", NULL, false},
    [LT_OP_GET_PROFILE] = {"GetProfile", "/scrabble.v1.Edge/GetProfile", NULL, false},
    [LT_OP_GET_STATS] = {"GetStats", "/scrabble.v1.Edge/GetStats", NULL, false},
    [LT_OP_HAMMER] = {"hammer:ListGames", "/scrabble.v1.Edge/ListGames", "hammer:games.list",
                      false},
    [LT_OP_LIST_PUBLIC] = {"ListPublicGames", "/scrabble.v1.Edge/ListPublicGames", NULL, false},
    [LT_OP_WATCH] = {"Watch", "/scrabble.v1.Edge/Watch", NULL, false},
};

static uint64_t lt_rand(lt_player *p)
{
    /* xorshift64*: per player, no shared state. */
    uint64_t x = p->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* The player's one timer, in the run's heap (timers.h). */
static void lt_timer_set(lt_run *r, lt_player *p, uint64_t at)
{
    lt_timers_set(&r->timers, &p->timer, at);
}

/* ------------------------------------------------------------------ */
/* Calls                                                               */

static void lt_on_unary(void *arg, const rpc_status *st, grpc_byte_buffer *reply)
{
    lt_call *c = arg;
    c->done = lt_now_ns();
    c->st = *st;
    c->reply = reply;
    lt_mailbox_post(&c->p->run->mb, &c->msg);
}

/* Starts the player's one call; intended 0 means "now". */
static void lt_call_start(lt_player *p, lt_op op, lt_step_kind step, const ProtobufCMessage *req,
                          uint64_t intended)
{
    lt_run *r = p->run;
    lt_call *c = &p->call;
    c->kind = LT_MSG_UNARY;
    c->p = p;
    c->op = op;
    c->step = step;
    c->reply = NULL;
    c->sent = lt_now_ns();
    c->intended = intended && intended < c->sent ? intended : c->sent;
    p->phase = LT_PH_CALL;
    r->inflight++;
    grpc_byte_buffer *bb = rpc_pack(req);
    rpc_client_opts opts = {
        .timeout_ms = r->c.timeout_ms, .md = &p->md, .md_count = 1, .loop = p->loop};
    int rc = rpc_client_raw(p->ch, lt_ops[op].method, bb, &opts, lt_on_unary, c);
    grpc_byte_buffer_destroy(bb);
    if (rc != RPC_OK) {
        c->done = lt_now_ns();
        rpc_status_set(&c->st, GRPC_STATUS_INTERNAL, NULL, "could not start the call");
        lt_mailbox_post(&r->mb, &c->msg);
    }
}

/* ------------------------------------------------------------------ */
/* Subscribe                                                           */

static void lt_on_event(void *arg, ProtobufCMessage *msg)
{
    lt_player *p = arg;
    const Scrabble__V1__Event *ev = (const void *)msg;
    lt_event_msg *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return;
    m->kind = LT_MSG_EVENT;
    m->p = p;
    m->type = ev->type;
    m->game_id = ev->game_id;
    m->seq = ev->seq;
    m->to_move = ev->to_move;
    /* A move's events are stamped by game-svc as it builds them for the
     * commit: now - at_ms is commit + relay + delivery, on one host clock. */
    m->lag_ms = -1;
    if ((ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED ||
         ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN) &&
        ev->at_ms > 0)
        m->lag_ms = (int64_t)(lt_wall_ns() / 1000000) - ev->at_ms;
    if (ev->invitation)
        m->invitation_id = ev->invitation->invitation_id;
    lt_mailbox_post(&p->run->mb, &m->msg);
}

static void lt_on_stream_end(void *arg, const rpc_status *st)
{
    lt_player *p = arg;
    lt_event_msg *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return;
    m->kind = LT_MSG_STREAM_END;
    m->p = p;
    m->code = st->code;
    lt_mailbox_post(&p->run->mb, &m->msg);
}

static void lt_subscribe(lt_player *p)
{
    Scrabble__V1__SubscribeRequest req = SCRABBLE__V1__SUBSCRIBE_REQUEST__INIT;
    rpc_client_opts opts = {.md = &p->md, .md_count = 1, .loop = p->loop};
    p->sub = rpc_client_stream_open(p->ch, "/scrabble.v1.Edge/Subscribe", &req.base,
                                    &scrabble__v1__event__descriptor, &opts, lt_on_event,
                                    lt_on_stream_end, p);
    p->sub_live = p->sub != NULL;
}

/* ------------------------------------------------------------------ */
/* Watch (spectators)                                                  */

static void lt_on_watch_event(void *arg, ProtobufCMessage *msg)
{
    lt_player *p = arg;
    const Scrabble__V1__Event *ev = (const void *)msg;
    lt_event_msg *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return;
    m->kind = LT_MSG_WATCH_EVENT;
    m->p = p;
    m->type = ev->type;
    m->game_id = ev->game_id;
    m->seq = ev->seq;
    m->at = lt_now_ns();
    /* A move committed after the stream opened: committed -> seen by the
     * observer (the catch-up's older moves would only measure their age). */
    m->lag_ms = -1;
    if (ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_WATCHED_MOVE && ev->move &&
        ev->move->at_ms >= p->watch_wall_ms)
        m->lag_ms = (int64_t)(lt_wall_ns() / 1000000) - ev->move->at_ms;
    lt_mailbox_post(&p->run->mb, &m->msg);
}

static void lt_on_watch_end(void *arg, const rpc_status *st)
{
    lt_player *p = arg;
    lt_event_msg *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return;
    m->kind = LT_MSG_WATCH_END;
    m->p = p;
    m->at = lt_now_ns();
    m->st = *st;
    lt_mailbox_post(&p->run->mb, &m->msg);
}

/* Opens a Watch of game_id from its first move: the catch-up comes at
 * once (the game has moves), so open -> first event is the Watch op's
 * latency. */
static void lt_watch_open(lt_player *p, int64_t game_id)
{
    Scrabble__V1__WatchRequest req = SCRABBLE__V1__WATCH_REQUEST__INIT;
    req.game_id = game_id;
    rpc_client_opts opts = {.md = &p->md, .md_count = 1, .loop = p->loop};
    p->watch_game = game_id;
    p->watch_first = false;
    p->watch_sent = lt_now_ns();
    p->watch_wall_ms = (int64_t)(lt_wall_ns() / 1000000);
    p->watch = rpc_client_stream_open(p->ch, "/scrabble.v1.Edge/Watch", &req.base,
                                      &scrabble__v1__event__descriptor, &opts, lt_on_watch_event,
                                      lt_on_watch_end, p);
    if (p->watch)
        lt_run_cur(p->run)->watch_opened++;
}

static void lt_on_watch_msg(lt_player *p, lt_event_msg *m)
{
    lt_run *r = p->run;
    lt_step_result *s = lt_run_cur(r);
    if (m->kind == LT_MSG_WATCH_EVENT) {
        if (!p->watch_first) {
            rpc_status ok;
            rpc_status_set(&ok, GRPC_STATUS_OK, NULL, "%s", "");
            lt_run_record(r, LT_OP_WATCH, &ok, p->watch_sent, p->watch_sent, m->at);
            p->watch_first = true;
        }
        s->watch_events++;
        if (m->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER)
            s->watch_games_over++;
        if (m->lag_ms >= 0)
            lt_hist_record(&s->watch_lag, (uint64_t)m->lag_ms * 1000000);
        return;
    }
    /* The stream ended: OK after GAME_OVER (the player looks for another
     * game on a later tick), anything else is counted and, bounded,
     * resumed. */
    p->watch = NULL;
    if (!p->watch_first)
        lt_run_record(r, LT_OP_WATCH, &m->st, p->watch_sent, p->watch_sent, m->at);
    if (r->stopping || m->st.code == GRPC_STATUS_OK)
        return;
    s->watch_ends++;
    if (m->st.code == GRPC_STATUS_UNAVAILABLE && p->watch_restarts++ < 5)
        lt_watch_open(p, p->watch_game);
}

/* A ListPublicGames reply: watch one of the games listed that has moves
 * and is not the player's own. */
static void lt_on_public_list(lt_player *p, const Scrabble__V1__PublicGameListReply *l)
{
    if (!l || p->watch || l->n_games == 0)
        return;
    size_t start = (size_t)(lt_rand(p) % l->n_games);
    for (size_t k = 0; k < l->n_games; k++) {
        const Scrabble__V1__GameSummary *g = l->games[(start + k) % l->n_games];
        if (g->game_id != p->game_id && g->seq > 0) {
            lt_watch_open(p, g->game_id);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

int lt_players_alloc(lt_run *r)
{
    r->players = calloc((size_t)r->nplayers_max, sizeof(lt_player));
    if (!r->players)
        return -1;
    for (int i = 0; i < r->nplayers_max; i++) {
        lt_player *p = &r->players[i];
        p->run = r;
        p->idx = i;
        lt_timer_init(&p->timer);
        p->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1) ^ (uint64_t)r->wall0;
        if (p->rng == 0)
            p->rng = 1;
        p->inviter = (i % 2) == 0;
        /* spectators_pct of every hundred players also watch: i * 37 runs
         * through every residue mod 100, so any run of players, even a
         * short one, holds about that share. */
        p->spectator = (int)(((uint64_t)i * 37) % 100) < r->c.spectators_pct;
        /* --bot-games: PCT of the pairs play bots, both players of the
         * pair, each inviting one (levels in turn); spread evenly, so the
         * first k pairs hold k * PCT / 100 bot pairs, rounded down. */
        int pair = i / 2;
        if ((pair + 1) * r->c.bot_games_pct / 100 > pair * r->c.bot_games_pct / 100) {
            static const char *const bots[] = {"bot-beginner", "bot-club", "bot-expert"};
            p->inviter = true;
            p->bot = bots[(i / 2 + i % 2) % 3];
        }
        lt_seed_handle(r->c.tag, i, p->handle, sizeof(p->handle));
        lt_seed_handle(r->c.tag, i ^ 1, p->partner_handle, sizeof(p->partner_handle));
        char tok[LT_TOKEN_LEN + 1];
        lt_seed_token(r->c.secret, r->c.tag, i, tok);
        snprintf(p->auth, sizeof(p->auth), "Bearer %s", tok);
        p->md.key = "authorization";
        p->md.value = p->auth;
        p->tick_ns = (uint64_t)r->c.tick_ms * 1000000ull;
    }
    return 0;
}

void lt_players_free(lt_run *r)
{
    free(r->players);
    r->players = NULL;
}

/* Player idx starts at `at`: its connection, its stream, its first tick. */
void lt_player_join(lt_run *r, int idx, uint64_t at)
{
    lt_player *p = &r->players[idx];
    p->phase = LT_PH_NEW;
    lt_timer_set(r, p, at);
}

static void lt_player_connect(lt_player *p)
{
    lt_run *r = p->run;
    rpc_channel_opts o = {.own_connection = true};
    p->ch = rpc_channel_create(r->c.target, &o);
    p->loop = r->loops[p->idx % r->nloops];
    rpc_channel_connect(p->ch);
    lt_subscribe(p);
    r->nactive++;
    uint64_t now = lt_now_ns();
    /* A random phase spreads the ticks of players that joined together. */
    p->anchor = now + lt_rand(p) % p->tick_ns;
    p->phase = LT_PH_IDLE;
    lt_timer_set(r, p, p->anchor);
}

/* The next tick's grid time after the current chain began (a late chain
 * makes the next tick due in the past: its delay is charged). */
static void lt_schedule_next_tick(lt_player *p, bool reanchor)
{
    lt_run *r = p->run;
    uint64_t now = lt_now_ns();
    if (reanchor)
        p->anchor = now;
    uint64_t base = p->chain_start > p->anchor ? p->chain_start : p->anchor;
    uint64_t k = (base - p->anchor) / p->tick_ns + 1;
    uint64_t at = p->anchor + k * p->tick_ns;
    p->phase = LT_PH_IDLE;
    if (r->stopping) {
        p->phase = LT_PH_DONE;
        return;
    }
    lt_timer_set(r, p, at);
}

static void lt_reset_game(lt_player *p)
{
    p->game_id = 0;
    p->invitation_id = 0;
    p->local_seq = 0;
    p->state_seq = 0;
    p->my_turn = false;
    p->finished_seen = false;
    p->waiting_ticks = 0;
    solver_board_init(&p->board, p->run->dist);
}

/* ------------------------------------------------------------------ */
/* Tick                                                                */

static void lt_social(lt_player *p, uint64_t intended)
{
    int which = (int)(lt_rand(p) % 6);
    Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
    ref.game_id = p->game_id;
    switch (which) {
    case 0:
        if (p->game_id && !p->my_turn) {
            lt_call_start(p, LT_OP_NUDGE, LT_K_SOCIAL, &ref.base, intended);
            return;
        }
        __attribute__((fallthrough)); /* nothing to nudge */
    case 1:
        if (p->game_id) {
            Scrabble__V1__SendChatRequest req = SCRABBLE__V1__SEND_CHAT_REQUEST__INIT;
            req.game_id = p->game_id;
            req.text = "good luck, have fun";
            lt_call_start(p, LT_OP_SEND_CHAT, LT_K_SOCIAL, &req.base, intended);
            return;
        }
        __attribute__((fallthrough));
    case 2: {
        static const char *const words[] = {"QUIXOTIC", "ZEPHYR", "AARDVARK",
                                            "XYZZY",    "JINX",   "OXEN"};
        Scrabble__V1__CheckWordRequest req = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
        req.word = (char *)words[lt_rand(p) % 6];
        lt_call_start(p, LT_OP_CHECK_WORD, LT_K_SOCIAL, &req.base, intended);
        return;
    }
    case 3:
        if (p->game_id) {
            lt_call_start(p, LT_OP_GET_DRAFT, LT_K_SOCIAL, &ref.base, intended);
            return;
        }
        __attribute__((fallthrough));
    case 4: {
        Scrabble__V1__GetProfileRequest req = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
        req.handle = p->partner_handle;
        lt_call_start(p, LT_OP_GET_PROFILE, LT_K_SOCIAL, &req.base, intended);
        return;
    }
    default: {
        Scrabble__V1__GetStatsRequest req = SCRABBLE__V1__GET_STATS_REQUEST__INIT;
        lt_call_start(p, LT_OP_GET_STATS, LT_K_SOCIAL, &req.base, intended);
        return;
    }
    }
}

static void lt_respond(lt_player *p, int64_t invitation_id, uint64_t intended);

static void lt_tick(lt_player *p, uint64_t intended)
{
    lt_run *r = p->run;
    p->chain_start = intended;
    if (p->game_id) {
        Scrabble__V1__GameRef ref = SCRABBLE__V1__GAME_REF__INIT;
        ref.game_id = p->game_id;
        lt_call_start(p, LT_OP_GET_STATE, LT_K_TICK_STATE, &ref.base, intended);
        return;
    }
    /* No game: assemble one through the invitation flow. */
    p->waiting_ticks++;
    if (p->inviter) {
        if (p->invitation_id == 0 && p->waiting_ticks >= 2) {
            /* The partner's stream must be up to see the INVITATION. A
             * bot needs none: it accepts in the Invite, which then
             * answers with the game started. */
            char *handles[1] = {p->bot ? (char *)p->bot : p->partner_handle};
            Scrabble__V1__InviteRequest req = SCRABBLE__V1__INVITE_REQUEST__INIT;
            req.n_invitee_handles = 1;
            req.invitee_handles = handles;
            req.public_game = r->c.spectators_pct > 0; /* others may watch it */
            lt_call_start(p, LT_OP_INVITE, LT_K_INVITE, &req.base, intended);
            return;
        }
        if (p->invitation_id && p->waiting_ticks % 8 == 0) {
            /* No GAME_STARTED seen for a while: look the game up. */
            Scrabble__V1__ListGamesRequest req = SCRABBLE__V1__LIST_GAMES_REQUEST__INIT;
            req.status = SCRABBLE__V1__GAME_STATUS__GAME_STATUS_ACTIVE;
            req.page_size = 1;
            lt_call_start(p, LT_OP_LIST_GAMES, LT_K_LIST_GAMES, &req.base, intended);
            return;
        }
    } else if (p->pending_inv) {
        lt_respond(p, p->pending_inv, intended);
        return;
    } else if (p->waiting_ticks % 4 == 0) {
        /* No INVITATION event (yet): ask for open invitations. */
        Scrabble__V1__ListInvitationsRequest req = SCRABBLE__V1__LIST_INVITATIONS_REQUEST__INIT;
        lt_call_start(p, LT_OP_LIST_INVITATIONS, LT_K_LIST_INV, &req.base, intended);
        return;
    }
    (void)r;
    lt_schedule_next_tick(p, false);
}

/* ------------------------------------------------------------------ */
/* Turn composition                                                    */

static void lt_board_from_rows(lt_player *p, char **rows, size_t nrows)
{
    lt_run *r = p->run;
    solver_board_init(&p->board, r->dist);
    for (size_t row = 0; row < nrows && row < SOLVER_DIM; row++) {
        const char *s = rows[row];
        for (int col = 0; col < SOLVER_DIM && s[col]; col++) {
            char ch = s[col];
            if (ch >= 'A' && ch <= 'Z')
                p->board.sq[row * SOLVER_DIM + col] = (uint8_t)(ch - 'A' + 1);
            else if (ch >= 'a' && ch <= 'z')
                p->board.sq[row * SOLVER_DIM + col] = (uint8_t)((ch - 'a' + 1) | SOLVER_BLANK);
        }
    }
    solver_board_recompute(&p->board, r->lex);
}

static bool lt_board_matches(const lt_player *p, char **rows, size_t nrows)
{
    if (nrows != SOLVER_DIM)
        return false;
    for (int row = 0; row < SOLVER_DIM; row++) {
        const char *s = rows[row];
        for (int col = 0; col < SOLVER_DIM; col++) {
            bool blank;
            char have = solver_board_get(&p->board, row, col, &blank);
            char want = s[col];
            if (want == '\0')
                return false;
            char mine = have == 0 ? '.' : (blank ? (char)(have - 'A' + 'a') : have);
            if (mine != want)
                return false;
        }
    }
    return true;
}

/* Picks a mid-ranked legal play, or none. */
static bool lt_compose(lt_player *p)
{
    lt_run *r = p->run;
    solver_rack rack;
    if (solver_rack_parse(&rack, p->rack) != 0)
        return false;
    solver_move moves[64];
    size_t cap = (size_t)r->c.top_n < 64 ? (size_t)r->c.top_n : 64;
    solver_gen_opts go = {.top_n = cap, .bag_count = p->bag};
    size_t n = solver_gen(&p->board, r->lex, r->dist, &rack, &go, moves, cap);
    if (n > cap)
        n = cap;
    size_t nplays = 0;
    for (size_t i = 0; i < n; i++)
        if (moves[i].kind == SOLVER_MOVE_PLAY)
            moves[nplays++] = moves[i];
    if (nplays == 0)
        return false;
    /* Mid-ranked: uniformly from the middle half of the best plays. */
    size_t lo = nplays / 4, hi = nplays - nplays / 4;
    if (hi <= lo)
        hi = lo + 1;
    const solver_move *m = &moves[lo + lt_rand(p) % (hi - lo)];
    p->nplace = 0;
    for (int i = 0; i < m->len; i++) {
        uint8_t t = m->tiles[i];
        if (t & SOLVER_THROUGH)
            continue;
        solver_placement *pl = &p->place[p->nplace++];
        pl->row = m->row + (m->dir == SOLVER_DOWN ? i : 0);
        pl->col = m->col + (m->dir == SOLVER_ACROSS ? i : 0);
        pl->letter = (char)('A' + SOLVER_LETTER(t) - 1);
        pl->is_blank = (t & SOLVER_BLANK) != 0;
    }
    /* Check it as the server will. */
    solver_result res;
    if (solver_validate(&p->board, r->lex, r->dist, &rack, p->place, (size_t)p->nplace, &res) !=
        SOLVER_OK)
        return false;
    return p->nplace > 0;
}

/* Placements 0..n-1 as protobuf messages in caller storage. */
static void lt_fill_placements(lt_player *p, int n, Scrabble__V1__Placement *pb,
                               Scrabble__V1__Placement **ptrs, char letters[][2])
{
    for (int i = 0; i < n; i++) {
        scrabble__v1__placement__init(&pb[i]);
        pb[i].row = p->place[i].row;
        pb[i].col = p->place[i].col;
        letters[i][0] = p->place[i].letter;
        letters[i][1] = '\0';
        pb[i].letter = letters[i];
        pb[i].blank = p->place[i].is_blank;
        ptrs[i] = &pb[i];
    }
}

static void lt_send_turn(lt_player *p, uint64_t intended)
{
    Scrabble__V1__Placement pb[SOLVER_DIM], *ptrs[SOLVER_DIM];
    char letters[SOLVER_DIM][2];
    lt_fill_placements(p, p->nplace, pb, ptrs, letters);
    Scrabble__V1__SubmitPlayRequest req = SCRABBLE__V1__SUBMIT_PLAY_REQUEST__INIT;
    req.game_id = p->game_id;
    req.expected_seq = p->state_seq;
    req.n_placements = (size_t)p->nplace;
    req.placements = ptrs;
    lt_call_start(p, LT_OP_SUBMIT_PLAY, LT_K_TURN, &req.base, intended);
}

/* The next step of a composition: evaluate k, then the draft. */
static void lt_compose_step(lt_player *p)
{
    lt_run *r = p->run;
    uint64_t debounce = (uint64_t)r->c.debounce_ms * 1000000ull;
    uint64_t due = p->compose_t0 + (uint64_t)p->eval_i * debounce;
    if (p->eval_i < p->eval_n) {
        int k = p->eval_i < p->nplace ? p->eval_i + 1 : p->nplace;
        Scrabble__V1__Placement pb[SOLVER_DIM], *ptrs[SOLVER_DIM];
        char letters[SOLVER_DIM][2];
        lt_fill_placements(p, k, pb, ptrs, letters);
        Scrabble__V1__EvaluateRequest req = SCRABBLE__V1__EVALUATE_REQUEST__INIT;
        req.game_id = p->game_id;
        req.n_placements = (size_t)k;
        req.placements = ptrs;
        p->eval_i++;
        lt_call_start(p, LT_OP_EVALUATE, LT_K_EVAL, &req.base, due);
        return;
    }
    Scrabble__V1__Placement pb[SOLVER_DIM], *ptrs[SOLVER_DIM];
    char letters[SOLVER_DIM][2];
    lt_fill_placements(p, p->nplace, pb, ptrs, letters);
    Scrabble__V1__SaveDraftRequest req = SCRABBLE__V1__SAVE_DRAFT_REQUEST__INIT;
    req.game_id = p->game_id;
    req.n_placements = (size_t)p->nplace;
    req.placements = ptrs;
    req.rack_order = p->rack;
    lt_call_start(p, LT_OP_SAVE_DRAFT, LT_K_DRAFT, &req.base, due);
}

/* After the next paced step's time arrives (or now, when already late). */
static void lt_compose_next(lt_player *p)
{
    lt_run *r = p->run;
    uint64_t debounce = (uint64_t)r->c.debounce_ms * 1000000ull;
    uint64_t due = p->compose_t0 + (uint64_t)p->eval_i * debounce;
    if (due > lt_now_ns()) {
        p->phase = LT_PH_COMPOSE;
        lt_timer_set(r, p, due);
        return;
    }
    lt_compose_step(p);
}

static void lt_take_turn(lt_player *p, uint64_t now)
{
    lt_run *r = p->run;
    if (r->c.think_ms > 0 && p->phase != LT_PH_THINK) {
        /* A person looks at the board first: deliberate, not latency. */
        p->phase = LT_PH_THINK;
        lt_timer_set(r, p, now + (uint64_t)r->c.think_ms * 1000000ull);
        return;
    }
    if (lt_compose(p)) {
        p->compose_t0 = now;
        p->eval_i = 0;
        p->eval_n = r->c.eval ? p->nplace + r->c.eval_recon : 0;
        lt_compose_step(p);
        return;
    }
    lt_run_cur(r)->no_play++;
    if (p->bag >= 7 && p->rack[0]) {
        Scrabble__V1__ExchangeRequest req = SCRABBLE__V1__EXCHANGE_REQUEST__INIT;
        req.game_id = p->game_id;
        req.expected_seq = p->state_seq;
        req.tiles = p->rack;
        lt_call_start(p, LT_OP_EXCHANGE, LT_K_TURN, &req.base, now);
    } else {
        Scrabble__V1__TurnRequest req = SCRABBLE__V1__TURN_REQUEST__INIT;
        req.game_id = p->game_id;
        req.expected_seq = p->state_seq;
        lt_call_start(p, LT_OP_PASS, LT_K_TURN, &req.base, now);
    }
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */

static void lt_game_over(lt_player *p)
{
    lt_run *r = p->run;
    if (!p->finished_seen && p->my_seat == 0) {
        lt_run_cur(r)->games_finished++;
        if (p->bot)
            lt_run_cur(r)->bot_games_finished++;
    }
    p->bot_wait_t0 = 0;
    p->finished_seen = true;
    lt_reset_game(p);
}

/* The player is in step with its game: play if it is its turn, else maybe
 * chat or look around (social_pct), else wait for the next tick. */
static void lt_act(lt_player *p, uint64_t done)
{
    if (p->my_turn) {
        lt_take_turn(p, done);
        return;
    }
    if (p->spectator && !p->watch && p->watch_restarts < 5 && done >= p->watch_next_list) {
        p->watch_next_list = done + 2000000000ull; /* 0.5/s: well inside the list class */
        Scrabble__V1__PublicGameListRequest req = SCRABBLE__V1__PUBLIC_GAME_LIST_REQUEST__INIT;
        req.page_size = 10;
        lt_call_start(p, LT_OP_LIST_PUBLIC, LT_K_LIST_PUBLIC, &req.base, done);
        return;
    }
    if (p->run->c.social_pct > 0 && (int)(lt_rand(p) % 100) < p->run->c.social_pct) {
        lt_social(p, done);
        return;
    }
    lt_schedule_next_tick(p, false);
}

static void lt_on_state(lt_player *p, Scrabble__V1__GameState *gs, uint64_t done)
{
    lt_run *r = p->run;
    p->my_seat = gs->my_seat;
    p->to_move = gs->to_move;
    p->state_seq = gs->seq;
    p->bag = gs->bag_count;
    snprintf(p->rack, sizeof(p->rack), "%s", gs->my_rack ? gs->my_rack : "");
    if (gs->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED) {
        lt_game_over(p);
        lt_schedule_next_tick(p, false);
        return;
    }
    p->my_turn = gs->to_move == gs->my_seat;
    if (gs->seq != p->local_seq) {
        if (gs->seq < p->local_seq) {
            /* Never expected: the server went back in time. Rebuild. */
            lt_run_cur(r)->board_mismatch++;
            lt_board_from_rows(p, gs->board, gs->n_board);
            p->local_seq = gs->seq;
        } else {
            /* Keep the board rows for the check after the replay. */
            p->rows_valid = gs->n_board == SOLVER_DIM;
            for (size_t i = 0; p->rows_valid && i < SOLVER_DIM; i++) {
                if (!gs->board[i] || strlen(gs->board[i]) != SOLVER_DIM)
                    p->rows_valid = false;
                else
                    memcpy(p->rows[i], gs->board[i], SOLVER_DIM + 1);
            }
            Scrabble__V1__GetHistoryRequest req = SCRABBLE__V1__GET_HISTORY_REQUEST__INIT;
            req.game_id = p->game_id;
            req.since_seq = p->local_seq;
            lt_call_start(p, LT_OP_GET_HISTORY, LT_K_HISTORY, &req.base, done);
            return;
        }
    }
    if (!lt_board_matches(p, gs->board, gs->n_board)) {
        lt_run_cur(r)->board_mismatch++;
        lt_board_from_rows(p, gs->board, gs->n_board);
    }
    lt_act(p, done);
}

static void lt_on_history(lt_player *p, Scrabble__V1__GetHistoryReply *h, uint64_t done)
{
    lt_run *r = p->run;
    bool bad = false;
    for (size_t i = 0; i < h->n_moves; i++) {
        const Scrabble__V1__Move *mv = h->moves[i];
        if (mv->seq <= p->local_seq)
            continue;
        if (mv->seq != p->local_seq + 1)
            bad = true;
        if (mv->kind == SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY) {
            for (size_t k = 0; k < mv->n_placements; k++) {
                const Scrabble__V1__Placement *pl = mv->placements[k];
                if (pl->row < 0 || pl->row >= SOLVER_DIM || pl->col < 0 || pl->col >= SOLVER_DIM ||
                    !pl->letter || pl->letter[0] < 'A' || pl->letter[0] > 'Z' ||
                    solver_board_get(&p->board, pl->row, pl->col, NULL) != 0) {
                    bad = true;
                    continue;
                }
                uint8_t code = (uint8_t)(pl->letter[0] - 'A' + 1) | (pl->blank ? SOLVER_BLANK : 0);
                solver_board_place(&p->board, r->lex, pl->row, pl->col, code);
            }
        }
        p->local_seq = mv->seq;
    }
    if (!bad && p->local_seq == p->state_seq && p->rows_valid) {
        char *rows[SOLVER_DIM];
        for (int i = 0; i < SOLVER_DIM; i++)
            rows[i] = p->rows[i];
        if (!lt_board_matches(p, rows, SOLVER_DIM)) {
            bad = true;
            lt_board_from_rows(p, rows, SOLVER_DIM);
        }
    }
    p->rows_valid = false;
    if (bad)
        lt_run_cur(r)->board_mismatch++;
    if (p->local_seq != p->state_seq) {
        /* The history ended elsewhere than the state we read (a move landed
         * in between): the next tick reads both again. */
        lt_schedule_next_tick(p, false);
        return;
    }
    lt_act(p, done);
}

static void lt_on_invitation(lt_player *p, Scrabble__V1__Invitation *inv)
{
    lt_run *r = p->run;
    if (inv->status == SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED && inv->game_id) {
        if (p->game_id != inv->game_id) {
            lt_reset_game(p);
            p->game_id = inv->game_id;
        }
        /* Counted once per game: by the invitee whose answer started it
         * (against a bot, by the human, whose Invite started it). */
        if ((!p->inviter || p->bot) && p->counted_start != inv->game_id) {
            p->counted_start = inv->game_id;
            lt_run_cur(r)->games_started++;
            if (p->bot)
                lt_run_cur(r)->bot_games_started++;
        }
        if (!p->inviter && p->pending_inv == inv->invitation_id)
            p->pending_inv = 0;
    } else if (inv->status == SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN) {
        p->invitation_id = inv->invitation_id;
    } else {
        p->invitation_id = 0;
    }
}

static void lt_respond(lt_player *p, int64_t invitation_id, uint64_t intended)
{
    Scrabble__V1__RespondInvitationRequest req = SCRABBLE__V1__RESPOND_INVITATION_REQUEST__INIT;
    req.invitation_id = invitation_id;
    req.accept = true;
    p->invitation_id = invitation_id;
    lt_call_start(p, LT_OP_RESPOND, LT_K_RESPOND, &req.base, intended);
}

static void lt_on_reply(lt_player *p, lt_call *c)
{
    lt_run *r = p->run;
    lt_run_record(r, c->op, &c->st, c->intended, c->sent, c->done);
    r->inflight--;
    const ProtobufCMessageDescriptor *desc = NULL;
    switch (c->step) {
    case LT_K_TICK_STATE:
        desc = &scrabble__v1__game_state__descriptor;
        break;
    case LT_K_HISTORY:
        desc = &scrabble__v1__get_history_reply__descriptor;
        break;
    case LT_K_INVITE:
    case LT_K_RESPOND:
        desc = &scrabble__v1__invitation__descriptor;
        break;
    case LT_K_LIST_INV:
        desc = &scrabble__v1__list_invitations_reply__descriptor;
        break;
    case LT_K_LIST_GAMES:
        desc = &scrabble__v1__list_games_reply__descriptor;
        break;
    case LT_K_LIST_PUBLIC:
        desc = &scrabble__v1__public_game_list_reply__descriptor;
        break;
    default:
        break;
    }
    ProtobufCMessage *msg = NULL;
    if (c->st.code == GRPC_STATUS_OK && desc)
        msg = rpc_unpack(desc, c->reply, NULL);
    if (c->reply)
        grpc_byte_buffer_destroy(c->reply);
    c->reply = NULL;
    uint64_t done = c->done;
    if (r->stopping) {
        p->phase = LT_PH_DONE;
        goto out;
    }
    if (c->st.code != GRPC_STATUS_OK) {
        const char *reason = c->st.reason;
        if (!strcmp(reason, "game_over") || !strcmp(reason, "not_a_player") ||
            !strcmp(reason, "not_found")) {
            if (p->game_id &&
                (c->op == LT_OP_GET_STATE || c->op == LT_OP_SUBMIT_PLAY || c->op == LT_OP_PASS ||
                 c->op == LT_OP_EXCHANGE || c->op == LT_OP_GET_HISTORY))
                lt_game_over(p);
        }
        if (c->step == LT_K_INVITE || c->step == LT_K_RESPOND) {
            p->invitation_id = 0;
            if (c->step == LT_K_RESPOND)
                p->pending_inv = 0;
        }
        /* An evaluate or draft failure does not stop the turn. */
        if (c->step == LT_K_EVAL) {
            lt_compose_next(p);
            goto out;
        }
        if (c->step == LT_K_DRAFT) {
            lt_send_turn(p, done);
            goto out;
        }
        lt_schedule_next_tick(p, c->step == LT_K_TURN);
        goto out;
    }
    switch (c->step) {
    case LT_K_TICK_STATE:
        if (msg)
            lt_on_state(p, (Scrabble__V1__GameState *)msg, done);
        else
            lt_schedule_next_tick(p, false);
        break;
    case LT_K_HISTORY:
        if (msg)
            lt_on_history(p, (Scrabble__V1__GetHistoryReply *)msg, done);
        else
            lt_schedule_next_tick(p, false);
        break;
    case LT_K_EVAL:
        lt_compose_next(p);
        break;
    case LT_K_DRAFT:
        lt_send_turn(p, done);
        break;
    case LT_K_TURN:
        p->my_turn = false;
        if (p->bot)
            p->bot_wait_t0 = lt_now_ns();
        lt_schedule_next_tick(p, true);
        break;
    case LT_K_INVITE:
    case LT_K_RESPOND:
        if (msg)
            lt_on_invitation(p, (Scrabble__V1__Invitation *)msg);
        lt_schedule_next_tick(p, false);
        break;
    case LT_K_LIST_INV: {
        Scrabble__V1__ListInvitationsReply *li = (void *)msg;
        int64_t found = 0;
        for (size_t i = 0; li && i < li->n_invitations; i++) {
            Scrabble__V1__Invitation *inv = li->invitations[i];
            if (inv->status == SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN &&
                inv->inviter_handle && !strcmp(inv->inviter_handle, p->partner_handle))
                found = inv->invitation_id;
        }
        if (found && !p->game_id) {
            p->pending_inv = found;
            lt_respond(p, found, done);
        } else
            lt_schedule_next_tick(p, false);
        break;
    }
    case LT_K_LIST_GAMES: {
        Scrabble__V1__ListGamesReply *lg = (void *)msg;
        if (lg && lg->n_games && !p->game_id) {
            lt_reset_game(p);
            p->game_id = lg->games[0]->game_id;
        }
        lt_schedule_next_tick(p, false);
        break;
    }
    case LT_K_SOCIAL:
        lt_schedule_next_tick(p, false);
        break;
    case LT_K_LIST_PUBLIC:
        lt_on_public_list(p, (const Scrabble__V1__PublicGameListReply *)msg);
        lt_schedule_next_tick(p, false);
        break;
    }
out:
    if (msg)
        protobuf_c_message_free_unpacked(msg, NULL);
}

static void lt_on_event_msg(lt_player *p, lt_event_msg *m)
{
    lt_run *r = p->run;
    if (m->kind == LT_MSG_STREAM_END) {
        p->sub = NULL;
        p->sub_live = false;
        if (r->stopping)
            return;
        lt_run_cur(r)->stream_errors++;
        /* Reopen, bounded: a stream the server keeps ending is a finding. */
        if (p->sub_restarts++ < 5)
            lt_subscribe(p);
        return;
    }
    if (m->type >= 0 && m->type < 8)
        lt_run_cur(r)->events[m->type]++;
    if (m->lag_ms >= 0)
        lt_hist_record(&lt_run_cur(r)->event_lag, (uint64_t)m->lag_ms * 1000000);
    if (r->stopping)
        return;
    switch (m->type) {
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION:
        if (!p->inviter && m->invitation_id) {
            p->pending_inv = m->invitation_id;
            if (!p->game_id && p->phase == LT_PH_IDLE) {
                lt_timers_cancel(&r->timers, &p->timer);
                p->chain_start = lt_now_ns();
                lt_respond(p, m->invitation_id, p->chain_start);
            }
        }
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED:
        if (m->game_id && p->game_id != m->game_id) {
            lt_reset_game(p);
            p->game_id = m->game_id;
        }
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN:
        /* A bot game: the bot has moved since our turn. */
        if (p->bot && p->bot_wait_t0 && m->game_id == p->game_id) {
            uint64_t now = lt_now_ns();
            lt_hist_record(&lt_run_cur(r)->bot_reply, now - p->bot_wait_t0);
            p->bot_wait_t0 = 0;
        }
        /* React at once, as a client would: the next tick is now. */
        if (m->game_id == p->game_id && p->phase == LT_PH_IDLE) {
            uint64_t now = lt_now_ns();
            p->anchor = now;
            lt_timer_set(r, p, now);
        }
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER:
        /* The next GetState sees FINISHED and counts it. */
        break;
    default:
        break;
    }
}

bool lt_player_msg(lt_run *r, lt_msg *m)
{
    int kind = ((lt_call *)m)->kind; /* kind follows msg in both message types */
    if (kind == LT_MSG_UNARY) {
        lt_call *c = (lt_call *)m;
        lt_on_reply(c->p, c);
        return true;
    }
    if (kind == LT_MSG_WATCH_EVENT || kind == LT_MSG_WATCH_END) {
        lt_event_msg *e = (lt_event_msg *)m;
        lt_on_watch_msg(e->p, e);
        free(e);
        return true;
    }
    if (kind == LT_MSG_EVENT || kind == LT_MSG_STREAM_END) {
        lt_event_msg *e = (lt_event_msg *)m;
        lt_on_event_msg(e->p, e);
        free(e);
        return true;
    }
    return false;
}

void lt_player_timer(lt_run *r, lt_timer *t)
{
    lt_player *p = (lt_player *)((char *)t - offsetof(lt_player, timer));
    uint64_t now = lt_now_ns();
    lt_hist_record(&lt_run_cur(r)->lag, now > t->at ? now - t->at : 0);
    if (r->stopping) {
        p->phase = LT_PH_DONE;
        return;
    }
    switch (p->phase) {
    case LT_PH_NEW:
        lt_reset_game(p);
        lt_player_connect(p);
        break;
    case LT_PH_IDLE:
        lt_tick(p, t->at);
        break;
    case LT_PH_COMPOSE:
        lt_compose_step(p);
        break;
    case LT_PH_THINK:
        lt_take_turn(p, lt_now_ns());
        break;
    default:
        break;
    }
}

void lt_players_shutdown(lt_run *r)
{
    for (int i = 0; i < r->nplayers_max; i++) {
        lt_player *p = &r->players[i];
        lt_timers_cancel(&r->timers, &p->timer);
        if (p->sub)
            rpc_client_stream_cancel(p->sub);
        if (p->watch)
            rpc_client_stream_cancel(p->watch);
    }
}

int lt_players_streams_open(lt_run *r)
{
    int n = 0;
    for (int i = 0; i < r->nplayers_max; i++)
        n += (r->players[i].sub != NULL) + (r->players[i].watch != NULL);
    return n;
}

void lt_players_destroy_channels(lt_run *r)
{
    for (int i = 0; i < r->nplayers_max; i++) {
        if (r->players[i].ch)
            rpc_channel_destroy(r->players[i].ch);
        r->players[i].ch = NULL;
    }
}

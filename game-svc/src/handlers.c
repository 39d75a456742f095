/*
 * handlers.c — the scrabble.v1.Game methods. Each handler authenticates the
 * caller from `scrabble-account-id`, builds a game_op in the call's arena and
 * dispatches it to the game's cache entry; the op's run step (entry locked)
 * checks the seat (game_op_seated) and does the in-memory work; a post step
 * (no lock) does Redis or store I/O. The turn methods hand their request to
 * the turn path (turn.h). A store call made here is bounded by the caller's
 * deadline (game_store_call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "game_svc.h"
#include "handlers.h"
#include "record.h"
#include "rpc/log.h"
#include "rpc/wire_check.h"
#include "turn.h"

#define HANDLERS__CHAT_MAX 500
/* A rack holds 7 tiles: no play, preview or draft places more. */
#define HANDLERS__PLACEMENTS_MAX 7
/* ListChat: a page is 1..200 messages; 0 asks for the default. */
#define HANDLERS__LIST_CHAT_MAX 200
#define HANDLERS__LIST_CHAT_DEFAULT 50
/* GetRules lists at most this many lexicon files (a process keeps at most
 * GAME_MAX_LEXICONS loaded at once; the directory may offer more). */
#define HANDLERS__RULES_LEXICONS_MAX 32

/* The caller's account id, or 0 (and the call failed UNAUTHENTICATED). */
static int64_t handlers__account(rpc_call *call)
{
    size_t len = 0;
    const char *v = rpc_call_metadata(call, "scrabble-account-id", &len);
    int64_t id = 0;
    if (v && len > 0 && len <= 18) {
        for (size_t i = 0; i < len; i++) {
            if (v[i] < '0' || v[i] > '9') {
                id = 0;
                break;
            }
            id = id * 10 + (v[i] - '0');
        }
    }
    if (id <= 0)
        rpc_call_fail(call, GRPC_STATUS_UNAUTHENTICATED, "unauthenticated",
                      "missing or malformed scrabble-account-id");
    return id;
}

/* Refuses more placements than a rack holds (the gateway already does;
 * game-svc does not rely on it). */
static bool handlers__placements_ok(rpc_call *call, size_t n)
{
    if (n <= HANDLERS__PLACEMENTS_MAX)
        return true;
    rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "too_many_placements",
                  "%zu placements; at most %d", n, HANDLERS__PLACEMENTS_MAX);
    return false;
}

static game_op *handlers__op(rpc_call *call, const ProtobufCMessage *req, game_op_run_fn run,
                             game_op_post_fn post)
{
    int64_t account = handlers__account(call);
    if (!account)
        return NULL;
    /* Fields outside the contract are not kept: drafts re-pack their
     * placements into Redis, and nothing unknown should travel on. */
    rpc_message_strip_unknown((ProtobufCMessage *)req);
    game_op *op = rpc_arena_calloc(rpc_call_arena(call), 1, sizeof *op);
    if (!op) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return NULL;
    }
    op->call = call;
    op->req = req;
    op->run = run;
    op->post = post;
    op->account_id = account;
    op->seat = -1;
    return op;
}

/* Copies wire placements; a letter that is not exactly one character
 * becomes 0, which the solver reports as bad_letter. At most 16 are kept
 * (more than 7 is illegal anyway: the solver says so from the count). */
static size_t handlers__placements(Scrabble__V1__Placement **in, size_t n, solver_placement *out)
{
    size_t k = n < 16 ? n : 16;
    for (size_t i = 0; i < k; i++) {
        const Scrabble__V1__Placement *p = in[i];
        out[i].row = p->row;
        out[i].col = p->col;
        out[i].letter = p->letter && p->letter[0] && !p->letter[1] ? p->letter[0] : 0;
        out[i].is_blank = p->blank;
    }
    return k;
}

/* ------------------------------------------------------------------ */
/* GetState / GetHistory / Evaluate                                    */

/* Replies with the game as seat op->seat sees it (its own rack only). The
 * view is built in the call's arena; when that fails the call gets
 * RESOURCE_EXHAUSTED out_of_memory instead of a NULL reply. */
static void handlers__reply_state(game_op *op, const game_entry *e)
{
    Scrabble__V1__GameState *st = game_view_state(rpc_call_arena(op->call), e, op->seat);
    if (st)
        game_view_time(rpc_call_arena(op->call), st, e, game_clock_now(op->svc));
    if (!st)
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
    else
        rpc_call_reply(op->call, &st->base);
}

static int handlers__get_state_run(game_svc *svc, game_entry *e, game_op *op)
{
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    /* The flag of the seat to move fell and no poller has ended the game
     * yet (or another instance did and this copy is behind): settle it
     * first, so the state shown is the stored one. */
    if (e->g.status == GAME_STATUS_ACTIVE && !op->timeout_tried &&
        game_clock_expired(&e->clock, game_clock_now(svc)))
        return game_timeout_run(svc, e, op);
    handlers__reply_state(op, e);
    return GAME_OP_DONE;
}

static void handlers_get_state(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__GameRef *r = (const Scrabble__V1__GameRef *)req;
    game_op *op = handlers__op(call, req, handlers__get_state_run, NULL);
    if (op)
        game_dispatch(svc, r->game_id, op);
}

static int handlers__history_run(game_svc *svc, game_entry *e, game_op *op)
{
    const Scrabble__V1__GetHistoryRequest *r = (const Scrabble__V1__GetHistoryRequest *)op->req;
    rpc_arena *a = rpc_call_arena(op->call);
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    Scrabble__V1__GetHistoryReply *rep =
        RPC_ARENA_MSG(a, Scrabble__V1__GetHistoryReply, scrabble__v1__get_history_reply__init);
    size_t from = r->since_seq > 0 ? (size_t)r->since_seq : 0;
    if (from > e->nmoves)
        from = e->nmoves;
    size_t n = e->nmoves - from;
    rep->seq = e->g.seq;
    if (n > 0) {
        rep->moves = rpc_arena_alloc(a, n * sizeof *rep->moves);
        for (size_t i = 0; rep->moves && i < n; i++) {
            const game_move *m = &e->moves[from + i];
            rep->moves[i] = game_view_move(a, m, m->seat == op->seat);
        }
        rep->n_moves = rep->moves ? n : 0;
    }
    rpc_call_reply(op->call, &rep->base);
    return GAME_OP_DONE;
}

static void handlers_get_history(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__GetHistoryRequest *r = (const Scrabble__V1__GetHistoryRequest *)req;
    game_op *op = handlers__op(call, req, handlers__history_run, NULL);
    if (op)
        game_dispatch(svc, r->game_id, op);
}

/* The hot call: answered from the cache, nothing but the arena allocated. */
static int handlers__evaluate_run(game_svc *svc, game_entry *e, game_op *op)
{
    const Scrabble__V1__EvaluateRequest *r = (const Scrabble__V1__EvaluateRequest *)op->req;
    rpc_arena *a = rpc_call_arena(op->call);
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    Scrabble__V1__EvaluateReply *rep =
        RPC_ARENA_MSG(a, Scrabble__V1__EvaluateReply, scrabble__v1__evaluate_reply__init);
    if (!rep) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    if (svc->m_evaluate)
        metric_add(svc->m_evaluate, 1);
    if (e->g.status != GAME_STATUS_ACTIVE) {
        rep->reason = "game_over";
        rep->message = "the game is over";
        rpc_call_reply(op->call, &rep->base);
        return GAME_OP_DONE;
    }
    solver_placement p[16];
    solver_result res;
    size_t n = handlers__placements(r->placements, r->n_placements, p);
    if (game_rules_evaluate(&e->g, op->seat, p, n, &res) == SOLVER_OK) {
        rep->legal = true;
        rep->score = res.score;
        rep->notation = rpc_arena_strdup(a, res.notation);
        rep->words = rpc_arena_alloc(a, (size_t)res.nwords * sizeof(char *) + 1);
        for (int w = 0; rep->words && w < res.nwords; w++)
            rep->words[w] = rpc_arena_strdup(a, res.words[w]);
        rep->n_words = rep->words ? (size_t)res.nwords : 0;
    } else {
        rep->reason = (char *)solver_reason_token(res.reason);
        rep->message = rpc_arena_strdup(a, res.message);
    }
    rpc_call_reply(op->call, &rep->base);
    return GAME_OP_DONE;
}

static void handlers_evaluate(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__EvaluateRequest *r = (const Scrabble__V1__EvaluateRequest *)req;
    game_op *op = handlers__op(call, req, handlers__evaluate_run, NULL);
    if (op && handlers__placements_ok(call, r->n_placements))
        game_dispatch(svc, r->game_id, op);
}

/* ------------------------------------------------------------------ */
/* Turns                                                               */

/* The four turn methods read the wire request into a game_turn_request
 * for the caller's op and hand it to the turn path (turn.h). */
static void handlers__turn(game_svc *svc, game_op *op, const game_turn_request *t)
{
    rpc_status st;
    if (game_turn_init(op, t, &st) != 0)
        rpc_call_fail_status(op->call, &st);
    else
        game_dispatch(svc, t->game_id, op);
}

static void handlers_submit_play(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__SubmitPlayRequest *r = (const Scrabble__V1__SubmitPlayRequest *)req;
    game_op *op = handlers__op(call, req, NULL, NULL);
    solver_placement p[16];
    if (!op || !handlers__placements_ok(call, r->n_placements))
        return;
    game_turn_request t = {.game_id = r->game_id,
                           .expected_seq = r->expected_seq,
                           .kind = GAME_MOVE_PLAY,
                           .placed = p,
                           .nplaced = handlers__placements(r->placements, r->n_placements, p)};
    handlers__turn(svc, op, &t);
}

static void handlers_pass(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__TurnRequest *r = (const Scrabble__V1__TurnRequest *)req;
    game_op *op = handlers__op(call, req, NULL, NULL);
    game_turn_request t = {
        .game_id = r->game_id, .expected_seq = r->expected_seq, .kind = GAME_MOVE_PASS};
    if (op)
        handlers__turn(svc, op, &t);
}

static void handlers_resign(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__TurnRequest *r = (const Scrabble__V1__TurnRequest *)req;
    game_op *op = handlers__op(call, req, NULL, NULL);
    game_turn_request t = {
        .game_id = r->game_id, .expected_seq = r->expected_seq, .kind = GAME_MOVE_RESIGN};
    if (op)
        handlers__turn(svc, op, &t);
}

static void handlers_exchange(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__ExchangeRequest *r = (const Scrabble__V1__ExchangeRequest *)req;
    game_op *op = handlers__op(call, req, NULL, NULL);
    game_turn_request t = {.game_id = r->game_id,
                           .expected_seq = r->expected_seq,
                           .kind = GAME_MOVE_EXCHANGE,
                           .tiles = r->tiles};
    if (op)
        handlers__turn(svc, op, &t);
}

/* ------------------------------------------------------------------ */
/* Drafts                                                              */

static int handlers__seat_then_post(game_svc *svc, game_entry *e, game_op *op)
{
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    op->nseats = e->g.nseats;
    for (int s = 0; s < e->g.nseats; s++)
        op->seat_accounts[s] = e->g.seats[s].account_id;
    snprintf(op->handle, sizeof op->handle, "%s", e->g.seats[op->seat].handle);
    return GAME_OP_POST;
}

/* Drafts: the post step queues a job for the drafts thread (drafts.h) and
 * returns; the job's callback finishes the call on that thread when Redis
 * has answered. The op lives in the call's arena, which lives until the
 * call is finished, and nothing else touches the call meanwhile. */

static void handlers__draft_failed(game_op *op, int rc)
{
    if (rc == GAME_DRAFTS_EXPIRED)
        rpc_call_fail(op->call, GRPC_STATUS_DEADLINE_EXCEEDED, "deadline_exceeded",
                      "the deadline passed while the draft store was busy");
    else
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "drafts_unavailable",
                      "the draft store is unavailable");
}

static void handlers__draft_saved(void *arg, int rc, const uint8_t *value, size_t len)
{
    game_op *op = arg;
    if (rc != GAME_DRAFTS_OK)
        handlers__draft_failed(op, rc);
    else
        rpc_call_reply(op->call, &op->draft->base);
}

static void handlers__save_draft_post(game_svc *svc, game_op *op)
{
    const Scrabble__V1__SaveDraftRequest *r = (const Scrabble__V1__SaveDraftRequest *)op->req;
    Scrabble__V1__Draft *d =
        RPC_ARENA_MSG(rpc_call_arena(op->call), Scrabble__V1__Draft, scrabble__v1__draft__init);
    if (!d) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    d->game_id = op->game_id;
    d->placements = r->placements;
    d->n_placements = r->n_placements;
    d->rack_order = r->rack_order;
    d->saved_at_ms = game_now_ms();
    op->draft = d;
    if (game_drafts_save(svc->drafts, op->game_id, op->account_id, d,
                         rpc_call_remaining_ms(op->call), handlers__draft_saved,
                         op) != GAME_DRAFTS_OK)
        handlers__draft_failed(op, GAME_DRAFTS_UNAVAILABLE);
}

/* A draft need not be a legal play (it may be half made), but its squares
 * and letters are checked as Evaluate checks them, with the same reason
 * tokens: on the board, one letter A-Z (a-z for a blank), one tile a
 * square. Fails the call and returns false when one is not. */
static bool handlers__draft_squares_ok(rpc_call *call, const Scrabble__V1__SaveDraftRequest *r)
{
    for (size_t i = 0; i < r->n_placements; i++) {
        const Scrabble__V1__Placement *p = r->placements[i];
        if (p->row < 0 || p->row >= SOLVER_DIM || p->col < 0 || p->col >= SOLVER_DIM) {
            rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "off_board",
                          "tile %zu at row %d, column %d is off the board", i + 1, p->row + 1,
                          p->col + 1);
            return false;
        }
        char c = p->letter && p->letter[0] && !p->letter[1] ? p->letter[0] : 0;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
            rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "bad_letter",
                          "tile %zu at %d%c has no letter A-Z", i + 1, p->row + 1, 'A' + p->col);
            return false;
        }
        for (size_t j = 0; j < i; j++)
            if (r->placements[j]->row == p->row && r->placements[j]->col == p->col) {
                rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "duplicate_square",
                              "two tiles on square %d%c", p->row + 1, 'A' + p->col);
                return false;
            }
    }
    return true;
}

static void handlers_save_draft(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__SaveDraftRequest *r = (const Scrabble__V1__SaveDraftRequest *)req;
    game_op *op = handlers__op(call, req, handlers__seat_then_post, handlers__save_draft_post);
    if (!op || !handlers__placements_ok(call, r->n_placements))
        return;
    if (r->rack_order && strlen(r->rack_order) > 16) {
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "too_long",
                      "a draft's rack order has at most 16 letters");
        return;
    }
    if (!handlers__draft_squares_ok(call, r))
        return;
    game_dispatch(svc, r->game_id, op);
}

static void handlers__draft_got(void *arg, int rc, const uint8_t *value, size_t len)
{
    game_op *op = arg;
    rpc_arena *a = rpc_call_arena(op->call);
    Scrabble__V1__Draft *d = NULL;
    if (rc != GAME_DRAFTS_OK) {
        handlers__draft_failed(op, rc);
        return;
    }
    if (value)
        d = scrabble__v1__draft__unpack(rpc_arena_allocator(a), len, value);
    if (!d) { /* none saved (or unreadable): an empty draft */
        d = RPC_ARENA_MSG(a, Scrabble__V1__Draft, scrabble__v1__draft__init);
        if (!d) {
            rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                          "out of memory");
            return;
        }
        d->game_id = op->game_id;
    }
    rpc_call_reply(op->call, &d->base);
}

static void handlers__get_draft_post(game_svc *svc, game_op *op)
{
    if (game_drafts_get(svc->drafts, op->game_id, op->account_id, rpc_call_remaining_ms(op->call),
                        handlers__draft_got, op) != GAME_DRAFTS_OK)
        handlers__draft_failed(op, GAME_DRAFTS_UNAVAILABLE);
}

static void handlers_get_draft(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__GameRef *r = (const Scrabble__V1__GameRef *)req;
    game_op *op = handlers__op(call, req, handlers__seat_then_post, handlers__get_draft_post);
    if (op)
        game_dispatch(svc, r->game_id, op);
}

/* ------------------------------------------------------------------ */
/* CheckWord                                                           */

static void handlers_check_word(rpc_call *call, const ProtobufCMessage *req, void *svcp)
{
    game_svc *svc = svcp;
    const Scrabble__V1__CheckWordRequest *r = (const Scrabble__V1__CheckWordRequest *)req;
    rpc_arena *a = rpc_call_arena(call);
    if (!handlers__account(call))
        return;
    const char *name = r->lexicon && r->lexicon[0] ? r->lexicon : svc->cfg.default_lexicon;
    const solver_lexicon *lex = game_lexicons_get(&svc->lexicons, name);
    if (!lex) {
        rpc_call_fail(call, GRPC_STATUS_NOT_FOUND, "not_found", "no lexicon named %s", name);
        return;
    }
    Scrabble__V1__CheckWordReply *rep =
        RPC_ARENA_MSG(a, Scrabble__V1__CheckWordReply, scrabble__v1__check_word_reply__init);
    size_t n = r->word ? strlen(r->word) : 0;
    char *up = rpc_arena_alloc(a, n + 1);
    bool letters = n >= 2 && n <= SOLVER_DIM;
    for (size_t i = 0; i < n; i++) {
        char c = r->word[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 32);
        if (c < 'A' || c > 'Z')
            letters = false;
        up[i] = c;
    }
    up[n] = 0;
    rep->word = up;
    rep->lexicon = (char *)name;
    rep->valid = letters && solver_lexicon_has(lex, up);
    rpc_call_reply(call, &rep->base);
}

/* ------------------------------------------------------------------ */
/* Nudge                                                               */

static void handlers__nudged(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    (void)reply;
    if (st->code != GRPC_STATUS_OK) {
        rpc_call_fail_status(op->call, st);
        return;
    }
    Scrabble__V1__NudgeReply *rep = RPC_ARENA_MSG(
        rpc_call_arena(op->call), Scrabble__V1__NudgeReply, scrabble__v1__nudge_reply__init);
    if (!rep) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    rep->account_id = op->nudge_target;
    rpc_call_reply(op->call, &rep->base);
}

static int handlers__nudge_run(game_svc *svc, game_entry *e, game_op *op)
{
    const game_state *g = &e->g;
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    if (g->status != GAME_STATUS_ACTIVE) {
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "game_over", "the game is over");
        return GAME_OP_DONE;
    }
    if (g->to_move == op->seat) {
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "your_turn",
                      "it is your own turn");
        return GAME_OP_DONE;
    }
    int64_t now = game_now_ms();
    int64_t last = e->last_nudge_ms[op->seat];
    if (last && now - last < svc->cfg.nudge_interval_ms) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "nudge_too_soon",
                      "next nudge allowed in %lld s",
                      (long long)((svc->cfg.nudge_interval_ms - (now - last) + 999) / 1000));
        return GAME_OP_DONE;
    }
    e->last_nudge_ms[op->seat] = now;
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_NUDGE;
    ev.game_id = e->game_id;
    ev.seq = g->seq;
    ev.to_move = g->to_move;
    ev.from_account_id = op->account_id;
    ev.from_handle = (char *)g->seats[op->seat].handle;
    ev.at_ms = now;
    int64_t target = g->seats[g->to_move].account_id;
    /* The reply waits for the event's commit: an acknowledged nudge is in
     * the target's log. */
    rpc_arena *a = rpc_call_arena(op->call);
    Scrabble__V1__AppendEventsRequest req = SCRABBLE__V1__APPEND_EVENTS_REQUEST__INIT;
    game_event_list l = {0};
    op->nudge_target = target;
    if (game_event_add(a, &l, target, &ev, NULL) != 0) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return GAME_OP_DONE;
    }
    req.events = l.v;
    req.n_events = l.n;
    if (game_store_call(&svc->store, op->call, GAME_STORE_APPEND_EVENTS, &req.base, a,
                        handlers__nudged, op) != RPC_OK)
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
    return GAME_OP_DONE;
}

static void handlers_nudge(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__GameRef *r = (const Scrabble__V1__GameRef *)req;
    game_op *op = handlers__op(call, req, handlers__nudge_run, NULL);
    if (op)
        game_dispatch(svc, r->game_id, op);
}

/* ------------------------------------------------------------------ */
/* Chat                                                                */

static void handlers__chat_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    if (st->code != GRPC_STATUS_OK) {
        rpc_call_fail_status(op->call, st);
        return;
    }
    Scrabble__V1__ChatMessage *m = (Scrabble__V1__ChatMessage *)reply;
    if (!m->handle || !m->handle[0])
        m->handle = op->handle;
    rpc_call_reply(op->call, &m->base);
}

static void handlers__send_chat_post(game_svc *svc, game_op *op)
{
    const Scrabble__V1__SendChatRequest *r = (const Scrabble__V1__SendChatRequest *)op->req;
    Scrabble__V1__AppendChatRequest req = SCRABBLE__V1__APPEND_CHAT_REQUEST__INIT;
    req.game_id = op->game_id;
    req.account_id = op->account_id;
    req.text = r->text;
    req.request_id = r->request_id;
    /* The CHAT events ride in the AppendChat: the store adds the line's id
     * and time to them and commits them with the line. */
    rpc_arena *a = rpc_call_arena(op->call);
    Scrabble__V1__ChatMessage chat = SCRABBLE__V1__CHAT_MESSAGE__INIT;
    Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
    game_event_list l = {0};
    chat.game_id = op->game_id;
    chat.account_id = op->account_id;
    chat.handle = op->handle;
    chat.text = r->text;
    ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_CHAT;
    ev.game_id = op->game_id;
    ev.chat = &chat;
    ev.from_account_id = op->account_id;
    ev.from_handle = op->handle;
    /* Every seat, the sender's too: each of the sender's other streams
     * (another device) shows the line; the stream of the device that sent
     * it gets it as well, and can match it by message_id. */
    for (int s = 0; s < op->nseats; s++)
        if (game_event_add(a, &l, op->seat_accounts[s], &ev, NULL) != 0) {
            rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory",
                          "out of memory");
            return;
        }
    req.events = l.v;
    req.n_events = l.n;
    if (game_store_call(&svc->store, op->call, GAME_STORE_APPEND_CHAT, &req.base, a,
                        handlers__chat_done, op) != RPC_OK)
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
}

static void handlers_send_chat(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__SendChatRequest *r = (const Scrabble__V1__SendChatRequest *)req;
    game_op *op = handlers__op(call, req, handlers__seat_then_post, handlers__send_chat_post);
    if (!op)
        return;
    const char *text = r->text ? r->text : "";
    long n = rpc_utf8_len(text, strlen(text));
    bool blank = true;
    for (const char *p = text; *p && blank; p++)
        blank = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
    if (n < 0)
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "bad_utf8",
                      "chat text is not valid UTF-8");
    else if (n == 0 || blank)
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "empty", "chat text is empty");
    else if (n > HANDLERS__CHAT_MAX)
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "too_long",
                      "chat text has %ld characters, at most %d", n, HANDLERS__CHAT_MAX);
    else
        game_dispatch(svc, r->game_id, op);
}

static void handlers__list_chat_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    if (st->code != GRPC_STATUS_OK)
        rpc_call_fail_status(op->call, st);
    else
        rpc_call_reply(op->call, reply);
}

static void handlers__list_chat_post(game_svc *svc, game_op *op)
{
    const Scrabble__V1__ListChatRequest *r = (const Scrabble__V1__ListChatRequest *)op->req;
    Scrabble__V1__ListChatRequest req = *r;
    req.limit = r->limit == 0 ? HANDLERS__LIST_CHAT_DEFAULT : r->limit;
    if (game_store_call(&svc->store, op->call, GAME_STORE_LIST_CHAT, &req.base,
                        rpc_call_arena(op->call), handlers__list_chat_done, op) != RPC_OK)
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
}

static void handlers_list_chat(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__ListChatRequest *r = (const Scrabble__V1__ListChatRequest *)req;
    game_op *op = handlers__op(call, req, handlers__seat_then_post, handlers__list_chat_post);
    if (!op)
        return;
    if (r->limit < 0 || r->limit > HANDLERS__LIST_CHAT_MAX) {
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "limit must be 0..%d (0: %d)", HANDLERS__LIST_CHAT_MAX,
                      HANDLERS__LIST_CHAT_DEFAULT);
        return;
    }
    game_dispatch(svc, r->game_id, op);
}

/* ------------------------------------------------------------------ */
/* GetGameRecord                                                       */

/* A player's record of a finished game. Not while the game is on: the
 * record shows every rack, which would tell an opponent's tiles. */
static int handlers__record_run(game_svc *svc, game_entry *e, game_op *op)
{
    rpc_arena *a = rpc_call_arena(op->call);
    const game_state *g = &e->g;
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    if (g->status != GAME_STATUS_FINISHED) {
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "game_in_progress",
                      "game %lld is still being played; its record opens when it ends",
                      (long long)e->game_id);
        return GAME_OP_DONE;
    }
    game_record rec;
    char err[160];
    if (game_record_build(g, e->moves, e->nmoves, e->lexicon, &rec, err, sizeof err) != 0) {
        log_error("record_failed", "game=%lld err=\"%s\"", (long long)e->game_id, err);
        rpc_call_fail(op->call, GRPC_STATUS_INTERNAL, "replay_failed", "game %lld: %s",
                      (long long)e->game_id, err);
        return GAME_OP_DONE;
    }
    Scrabble__V1__GetGameRecordReply *rep = RPC_ARENA_MSG(
        a, Scrabble__V1__GetGameRecordReply, scrabble__v1__get_game_record_reply__init);
    size_t n = e->nmoves;
    if (rep) {
        rep->game_id = e->game_id;
        rep->lexicon = rpc_arena_strdup(a, e->lexicon);
        rep->rated = e->rated;
        rep->seats = game_view_seats(a, g);
        rep->n_seats = rep->seats ? (size_t)g->nseats : 0;
        rep->end_reason = (Scrabble__V1__EndReason)g->end_reason;
        rep->winners = rpc_arena_alloc(a, GAME_MAX_SEATS * sizeof(int32_t));
        for (int i = 0; rep->winners && i < g->nwinners; i++)
            rep->winners[rep->n_winners++] = g->winners[i];
        rep->moves = rpc_arena_alloc(a, (n ? n : 1) * sizeof *rep->moves);
        rep->racks = rpc_arena_alloc(a, (n ? n : 1) * sizeof *rep->racks);
        for (size_t i = 0; rep->moves && rep->racks && i < n; i++) {
            rep->moves[i] = game_view_move(a, &e->moves[i], true);
            rep->racks[i] = rpc_arena_strdup(a, rec.racks[i]);
        }
        rep->n_moves = rep->n_racks = rep->moves && rep->racks ? n : 0;
        rep->gcg = rpc_arena_strdup(a, rec.gcg);
        rep->created_at_ms = e->created_at_ms;
        rep->updated_at_ms = e->updated_at_ms;
    }
    game_record_free(&rec);
    if (!rep || !rep->gcg || (n && !rep->n_moves))
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
    else
        rpc_call_reply(op->call, &rep->base);
    return GAME_OP_DONE;
}

static void handlers_get_game_record(rpc_call *call, const ProtobufCMessage *req, void *svc)
{
    const Scrabble__V1__GameRef *r = (const Scrabble__V1__GameRef *)req;
    game_op *op = handlers__op(call, req, handlers__record_run, NULL);
    if (op)
        game_dispatch(svc, r->game_id, op);
}

/* ------------------------------------------------------------------ */
/* GetRules                                                            */

/* The end rules as rules.h implements them, for people. */
static const char *const handlers__end_rules[] = {
    "The game ends when a player plays their last tile with the bag empty: that player gains the "
    "sum of the tile values left on every other rack, and every other player loses the value of "
    "their own rack.",
    "The game ends after 6 consecutive scoreless turns by any players (passes, exchanges, plays "
    "scoring 0): every player loses the value of their own rack.",
    "A player may resign at any time, even out of turn: the game ends at once with no rack "
    "adjustment; the resigner cannot win.",
    "The winners are the players (not the resigner) with the highest final score; several on a "
    "tie.",
};

static void handlers_get_rules(rpc_call *call, const ProtobufCMessage *req, void *svcp)
{
    game_svc *svc = svcp;
    const Scrabble__V1__GetRulesRequest *r = (const Scrabble__V1__GetRulesRequest *)req;
    rpc_arena *a = rpc_call_arena(call);
    if (!handlers__account(call))
        return;
    const char *name = r->lexicon && r->lexicon[0] ? r->lexicon : svc->cfg.default_lexicon;
    if (!game_lexicons_get(&svc->lexicons, name)) {
        rpc_call_fail(call, GRPC_STATUS_NOT_FOUND, "unknown_lexicon", "no lexicon named %s", name);
        return;
    }
    const solver_dist *d = solver_dist_english();
    Scrabble__V1__Rules *rep = RPC_ARENA_MSG(a, Scrabble__V1__Rules, scrabble__v1__rules__init);
    char(*names)[32] = rpc_arena_alloc(a, HANDLERS__RULES_LEXICONS_MAX * sizeof *names);
    char **rows = rpc_arena_alloc(a, SOLVER_DIM * sizeof *rows);
    Scrabble__V1__TileInfo *tiles = rpc_arena_alloc(a, 27 * sizeof *tiles);
    Scrabble__V1__TileInfo **ptiles = rpc_arena_alloc(a, 27 * sizeof *ptiles);
    if (!rep || !names || !rows || !tiles || !ptiles) {
        rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    rep->lexicon = (char *)name;
    rep->default_lexicon = svc->cfg.default_lexicon;
    int nl = game_lexicons_list(&svc->lexicons, names, HANDLERS__RULES_LEXICONS_MAX);
    rep->lexicons = rpc_arena_alloc(a, (size_t)(nl ? nl : 1) * sizeof(char *));
    for (int i = 0; rep->lexicons && i < nl; i++)
        rep->lexicons[rep->n_lexicons++] = names[i];
    rep->board_size = SOLVER_DIM;
    for (int row = 0; row < SOLVER_DIM; row++) {
        char *line = rpc_arena_alloc(a, SOLVER_DIM + 1);
        if (!line) {
            rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
            return;
        }
        for (int col = 0; col < SOLVER_DIM; col++) {
            int lm, wm;
            solver_board_premium(row, col, &lm, &wm);
            line[col] = wm == 3 ? 'T' : wm == 2 ? 'D' : lm == 3 ? 't' : lm == 2 ? 'd' : '.';
        }
        line[SOLVER_DIM] = 0;
        rows[row] = line;
    }
    rep->premiums = rows;
    rep->n_premiums = SOLVER_DIM;
    for (int i = 0; i < 27; i++) { /* A..Z, then the blank */
        int code = i < 26 ? i + 1 : 0;
        scrabble__v1__tile_info__init(&tiles[i]);
        char *letter = rpc_arena_alloc(a, 2);
        if (!letter) {
            rpc_call_fail(call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
            return;
        }
        letter[0] = code ? (char)('A' + code - 1) : '?';
        letter[1] = 0;
        tiles[i].letter = letter;
        tiles[i].count = d->count[code];
        tiles[i].value = d->value[code];
        ptiles[i] = &tiles[i];
    }
    rep->tiles = ptiles;
    rep->n_tiles = 27;
    rep->tile_count = d->total;
    rep->rack_size = SOLVER_RACK_MAX;
    rep->bingo_bonus = SOLVER_BINGO_BONUS;
    rep->exchange_min_bag = SOLVER_RACK_MAX;
    rep->scoreless_turns_limit = GAME_SCORELESS_LIMIT;
    rep->min_seats = GAME_MIN_SEATS;
    rep->max_seats = GAME_MAX_SEATS;
    rep->end_rules = (char **)handlers__end_rules;
    rep->n_end_rules = sizeof handlers__end_rules / sizeof handlers__end_rules[0];
    rpc_call_reply(call, &rep->base);
}

/* ------------------------------------------------------------------ */
/* CreateGame                                                          */

/* The opening state goes out only once the game's GAME_STARTED and first
 * YOUR_TURN are in the event log: an acknowledged game has its events. A
 * failed append fails the call, and the client's retry (CreateGame is
 * idempotent) appends again; the dedupe keys keep one of each. */
static void handlers__announced(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    (void)reply;
    if (st->code != GRPC_STATUS_OK)
        rpc_call_fail_status(op->call, st);
    else
        rpc_call_reply(op->call, op->scratch);
}

/* Builds the caller's view of e now (e may not outlive this call), then
 * announces e and replies with the view once the announcement commits. */
static void handlers__announce_then_reply(game_svc *svc, game_op *op, game_entry *e)
{
    rpc_arena *a = rpc_call_arena(op->call);
    Scrabble__V1__GameState *st = game_view_state(a, e, op->seat);
    if (!st) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    game_view_time(a, st, e, game_clock_now(svc));
    op->scratch = &st->base;
    if (game_announce_start(svc, op->call, e, a, handlers__announced, op) != 0)
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable",
                      "could not record the game's start events; retry");
}

static int handlers__created_run(game_svc *svc, game_entry *e, game_op *op)
{
    if (!game_op_seated(e, op))
        return GAME_OP_DONE;
    /* A repeated CreateGame is a retry, perhaps after a failed announcement:
     * until the first move, announce again (the dedupe keys keep one). */
    if (e->g.seq == 0)
        handlers__announce_then_reply(svc, op, e);
    else
        handlers__reply_state(op, e);
    return GAME_OP_DONE;
}

/* Builds the opening state of a new game from its record (and its stored
 * clock), announces it and replies. */
static void handlers__created(game_op *op, const Scrabble__V1__GameRecord *rec,
                              const Scrabble__V1__GameClock *clock)
{
    /* The gateway picks this instance by the invitation id, while the
     * game's calls will be routed by the game id, most likely elsewhere:
     * build the opening state from the record without caching it here, so
     * no instance but the owner ever holds (and could serve stale) moves. */
    rpc_status st2;
    game_entry *tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    tmp->game_id = rec->game_id;
    if (game_entry_init_from_record(op->svc, tmp, rec, &st2) != 0) {
        rpc_call_fail_status(op->call, &st2);
    } else if (game_op_seated(tmp, op)) {
        if (clock) {
            Scrabble__V1__GameRecord with = *rec;
            with.clock = (Scrabble__V1__GameClock *)clock;
            game_clock_from_record(tmp, &with);
        }
        handlers__announce_then_reply(op->svc, op, tmp);
    }
    free(tmp->moves);
    free(tmp);
}

static void handlers__clock_started(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    if (st->code != GRPC_STATUS_OK) {
        rpc_call_fail_status(op->call, st);
        return;
    }
    handlers__created(op, op->scratch, (const Scrabble__V1__GameClock *)reply);
}

static void handlers__create_done(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    game_op *op = arg;
    if (st->code == GRPC_STATUS_FAILED_PRECONDITION &&
        strcmp(st->reason, "invitation_pending") == 0) {
        /* game.proto names one token for "not every invitee has accepted". */
        rpc_call_fail(op->call, GRPC_STATUS_FAILED_PRECONDITION, "invitation_closed", "%s",
                      st->message);
        return;
    }
    if (st->code != GRPC_STATUS_OK) {
        rpc_call_fail_status(op->call, st);
        return;
    }
    const Scrabble__V1__GameRecord *rec = (const Scrabble__V1__GameRecord *)reply;
    log_info("game_created", "game=%lld invitation=%lld seats=%zu", (long long)rec->game_id,
             (long long)rec->invitation_id, rec->n_seats);
    if (rec->seq != 0 || rec->n_moves != 0) {
        /* A repeated CreateGame of a game already under way: its state. */
        game_dispatch(op->svc, rec->game_id, op);
        return;
    }
    if (rec->clock && rec->clock->turn_started_ms > 0) {
        handlers__created(op, rec, NULL);
        return;
    }
    /* The game's first clock and deadline (clock.h), stored before anyone
     * hears of the game: StartClock sets it once, so a repeated CreateGame
     * (the gateway retries after a lost reply) keeps the first one. */
    rpc_arena *a = rpc_call_arena(op->call);
    game_entry probe;
    memset(&probe, 0, sizeof probe);
    game_clock_from_record(&probe, rec);
    game_clock_start(&probe.clock, (int)rec->n_seats, 0, game_clock_now(op->svc),
                     op->svc->cfg.abandon_after_us / 1000);
    Scrabble__V1__StartClockRequest *req =
        RPC_ARENA_MSG(a, Scrabble__V1__StartClockRequest, scrabble__v1__start_clock_request__init);
    if (!req || !(req->clock = game_view_clock_record(a, &probe.clock, (int)rec->n_seats))) {
        rpc_call_fail(op->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out_of_memory", "out of memory");
        return;
    }
    req->game_id = rec->game_id;
    op->scratch = (void *)rec;
    if (game_store_call(&op->svc->store, op->call, GAME_STORE_START_CLOCK, &req->base, a,
                        handlers__clock_started, op) != RPC_OK)
        rpc_call_fail(op->call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
}

static void handlers_create_game(rpc_call *call, const ProtobufCMessage *req, void *svcp)
{
    game_svc *svc = svcp;
    const Scrabble__V1__CreateGameRequest *r = (const Scrabble__V1__CreateGameRequest *)req;
    game_op *op = handlers__op(call, req, handlers__created_run, NULL);
    if (!op)
        return;
    if (r->invitation_id <= 0) {
        rpc_call_fail(call, GRPC_STATUS_INVALID_ARGUMENT, "bad_request",
                      "invitation_id is required");
        return;
    }
    Scrabble__V1__StoreCreateGameRequest sreq = SCRABBLE__V1__STORE_CREATE_GAME_REQUEST__INIT;
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
        seed = (uint64_t)game_now_ms() * 0x9e3779b97f4a7c15ull;
    sreq.invitation_id = r->invitation_id;
    sreq.seed = seed & INT64_MAX; /* fits a Postgres bigint */
    op->svc = svc;
    if (game_store_call(&svc->store, call, GAME_STORE_CREATE_GAME, &sreq.base, rpc_call_arena(call),
                        handlers__create_done, op) != RPC_OK)
        rpc_call_fail(call, GRPC_STATUS_UNAVAILABLE, "unavailable", "store-svc call failed");
}

/* ------------------------------------------------------------------ */

game_op *game_handlers_op(rpc_call *call, const ProtobufCMessage *req, game_op_run_fn run)
{
    return handlers__op(call, req, run, NULL);
}

/* Request size bounds as at the gateway (edge.c): what each method can
 * legitimately carry, checked by the runtime before anything is decoded. */
#define HANDLERS__SMALL 1024
const rpc_method_impl game_handlers[] = {
    {"CreateGame", handlers_create_game, HANDLERS__SMALL},
    {"GetState", handlers_get_state, HANDLERS__SMALL},
    {"GetHistory", handlers_get_history, HANDLERS__SMALL},
    {"Evaluate", handlers_evaluate, HANDLERS__SMALL},
    {"SubmitPlay", handlers_submit_play, HANDLERS__SMALL},
    {"Pass", handlers_pass, HANDLERS__SMALL},
    {"Exchange", handlers_exchange, HANDLERS__SMALL},
    {"Resign", handlers_resign, HANDLERS__SMALL},
    {"SaveDraft", handlers_save_draft, HANDLERS__SMALL},
    {"GetDraft", handlers_get_draft, HANDLERS__SMALL},
    {"CheckWord", handlers_check_word, HANDLERS__SMALL},
    {"Nudge", handlers_nudge, HANDLERS__SMALL},
    {"SendChat", handlers_send_chat, 4096},
    {"ListChat", handlers_list_chat, HANDLERS__SMALL},
    {"GetGameRecord", handlers_get_game_record, HANDLERS__SMALL},
    {"GetRules", handlers_get_rules, HANDLERS__SMALL},
    {"WatchState", game_watch_state, HANDLERS__SMALL},
    {NULL, NULL, 0, false},
};

/* Every Game method acts for the account named in the scrabble-account-id
 * metadata, which only the gateway may assert (it authenticated the token):
 * any other caller is refused before the handler runs. */
const rpc_allow_rule game_allow[] = {
    {"CreateGame", "gateway"},
    {"GetState", "gateway"},
    {"GetHistory", "gateway"},
    {"Evaluate", "gateway"},
    {"SubmitPlay", "gateway"},
    {"Pass", "gateway"},
    {"Exchange", "gateway"},
    {"Resign", "gateway"},
    {"SaveDraft", "gateway"},
    {"GetDraft", "gateway"},
    {"CheckWord", "gateway"},
    {"Nudge", "gateway"},
    {"SendChat", "gateway"},
    {"ListChat", "gateway"},
    {"GetGameRecord", "gateway"},
    {"GetRules", "gateway"},
    /* Spectators (watch.c). */
    {"WatchState", "gateway"},
    {NULL, NULL},
};

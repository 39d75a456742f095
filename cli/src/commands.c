/*
 * commands.c — the command table and one function per command. Each
 * command checks its arguments (CLI_EUSAGE with a message), makes its calls
 * through cli_call (which prints server errors in words) and prints the
 * result to stdout. Turn commands read the game first (GetState) for the
 * board and the seq their request must carry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "notation.h"
#include "scrabble/v1/edge.pb-c.h"
#include "view.h"

typedef int (*cmd_fn)(cli_ctx *ctx, int argc, char **argv);

typedef struct cmd {
    const char *name;
    int min_args, max_args; /* after the name; max -1: any number */
    bool auth;              /* needs a session */
    cmd_fn fn;
    const char *args;
    const char *help;
} cmd;

#define CMD_FREE(m) protobuf_c_message_free_unpacked((ProtobufCMessage *)(m), NULL)

static int cmd__game_id(const char *s, int64_t *id)
{
    if (cli_parse_id(s, id) != 0) {
        cli_errorf("'%s' is not a game id (a positive number; see: games)", s);
        return CLI_EUSAGE;
    }
    return CLI_OK;
}

/* Joins argv[from..argc) with single spaces into buf. */
static const char *cmd__join(int argc, char **argv, int from, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = from; i < argc && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i > from ? " " : "", argv[i]);
    return buf;
}

static int cmd__state(cli_ctx *ctx, int64_t game_id, Scrabble__V1__GameState **gs)
{
    Scrabble__V1__GameRef req = SCRABBLE__V1__GAME_REF__INIT;
    req.game_id = game_id;
    return cli_call(ctx, "GetState", &req.base, &scrabble__v1__game_state__descriptor, true,
                    (ProtobufCMessage **)gs);
}

/* Our own account id, asking the server once when the token file predates
 * it. 0 when unknown. */
static int64_t cmd__me(cli_ctx *ctx)
{
    if (ctx->account_id)
        return ctx->account_id;
    Scrabble__V1__GetProfileRequest req = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
    Scrabble__V1__Profile *p;
    if (cli_call(ctx, "GetProfile", &req.base, &scrabble__v1__profile__descriptor, true,
                 (ProtobufCMessage **)&p) == CLI_OK) {
        ctx->account_id = p->account_id;
        CMD_FREE(p);
    }
    return ctx->account_id;
}

/* ---- accounts ----------------------------------------------------------- */

static int cmd__auth(cli_ctx *ctx, const char *method, char **argv)
{
    Scrabble__V1__RegisterRequest reg = SCRABBLE__V1__REGISTER_REQUEST__INIT;
    Scrabble__V1__LoginRequest login = SCRABBLE__V1__LOGIN_REQUEST__INIT;
    const ProtobufCMessage *req;
    bool is_register = strcmp(method, "Register") == 0;
    if (is_register) {
        reg.handle = argv[1];
        reg.password = argv[2];
        req = &reg.base;
    } else {
        login.handle = argv[1];
        login.password = argv[2];
        req = &login.base;
    }
    Scrabble__V1__AuthReply *r;
    if (cli_call(ctx, method, req, &scrabble__v1__auth_reply__descriptor, false,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    int rc = cli_session_save(ctx, r->token, r->handle, r->account_id);
    if (rc == CLI_OK)
        printf("%s %s (account %lld); session saved in %s\n",
               is_register ? "registered and logged in as" : "logged in as", r->handle,
               (long long)r->account_id, ctx->opt.token_file);
    CMD_FREE(r);
    if (rc == CLI_OK && ctx->interactive)
        cli_events_start(ctx); /* the new account's events from now on */
    return rc;
}

static int cmd_register(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__auth(ctx, "Register", argv);
}
static int cmd_login(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__auth(ctx, "Login", argv);
}

static int cmd_logout(cli_ctx *ctx, int argc, char **argv)
{
    if (unlink(ctx->opt.token_file) != 0) {
        printf("not logged in\n");
        return CLI_OK;
    }
    ctx->token[0] = '\0';
    ctx->account_id = 0;
    if (ctx->interactive)
        cli_events_stop(ctx);
    printf("logged out (removed %s)\n", ctx->opt.token_file);
    return CLI_OK;
}

/* ---- invitations -------------------------------------------------------- */

static int cmd_invite(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__InviteRequest req = SCRABBLE__V1__INVITE_REQUEST__INIT;
    /* --public first: anyone may watch the game (private by default). */
    if (argc > 1 && strcmp(argv[1], "--public") == 0) {
        req.public_game = true;
        argv++;
        argc--;
    }
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: invite [--public] HANDLE...\n");
        return CLI_EUSAGE;
    }
    req.invitee_handles = argv + 1;
    req.n_invitee_handles = (size_t)(argc - 1);
    Scrabble__V1__Invitation *inv;
    if (cli_call(ctx, "Invite", &req.base, &scrabble__v1__invitation__descriptor, true,
                 (ProtobufCMessage **)&inv) != CLI_OK)
        return CLI_EFAIL;
    cli_view_invitation(stdout, inv, ctx->account_id);
    /* Bots accept as they are invited: an invitation of bots only has
     * started already. */
    if (inv->status == SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED && inv->game_id)
        printf("game %lld has started: your move (show %lld)\n", (long long)inv->game_id,
               (long long)inv->game_id);
    else
        printf("the game starts when everyone has accepted\n");
    CMD_FREE(inv);
    return CLI_OK;
}

static int cmd_invitations(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__ListInvitationsRequest req = SCRABBLE__V1__LIST_INVITATIONS_REQUEST__INIT;
    Scrabble__V1__ListInvitationsReply *r;
    if (cli_call(ctx, "ListInvitations", &req.base,
                 &scrabble__v1__list_invitations_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    int64_t me = cmd__me(ctx);
    if (r->n_invitations == 0)
        printf("no open invitations\n");
    for (size_t i = 0; i < r->n_invitations; i++)
        cli_view_invitation(stdout, r->invitations[i], me);
    CMD_FREE(r);
    return CLI_OK;
}

static int cmd__respond(cli_ctx *ctx, char **argv, bool accept)
{
    Scrabble__V1__RespondInvitationRequest req = SCRABBLE__V1__RESPOND_INVITATION_REQUEST__INIT;
    if (cli_parse_id(argv[1], &req.invitation_id) != 0) {
        cli_errorf("'%s' is not an invitation id (a positive number; see: invitations)", argv[1]);
        return CLI_EUSAGE;
    }
    req.accept = accept;
    Scrabble__V1__Invitation *inv;
    if (cli_call(ctx, "RespondInvitation", &req.base, &scrabble__v1__invitation__descriptor, true,
                 (ProtobufCMessage **)&inv) != CLI_OK)
        return CLI_EFAIL;
    cli_view_invitation(stdout, inv, ctx->account_id);
    if (inv->game_id)
        printf("game %lld has started: show %lld\n", (long long)inv->game_id,
               (long long)inv->game_id);
    CMD_FREE(inv);
    return CLI_OK;
}

static int cmd_accept(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__respond(ctx, argv, true);
}
static int cmd_decline(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__respond(ctx, argv, false);
}

/* ---- games -------------------------------------------------------------- */

static int cmd_games(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__ListGamesRequest req = SCRABBLE__V1__LIST_GAMES_REQUEST__INIT;
    req.page_size = 100;
    if (argc > 1) {
        if (strcmp(argv[1], "active") == 0)
            req.status = SCRABBLE__V1__GAME_STATUS__GAME_STATUS_ACTIVE;
        else if (strcmp(argv[1], "finished") == 0)
            req.status = SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED;
        else {
            cli_errorf("games [active|finished]: '%s' is neither", argv[1]);
            return CLI_EUSAGE;
        }
    }
    int64_t me = cmd__me(ctx);
    Scrabble__V1__ListGamesReply *r;
    if (cli_call(ctx, "ListGames", &req.base, &scrabble__v1__list_games_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    cli_view_games(stdout, r, me);
    CMD_FREE(r);
    return CLI_OK;
}

static int cmd_show(cli_ctx *ctx, int argc, char **argv)
{
    int64_t id;
    if (cmd__game_id(argv[1], &id) != CLI_OK)
        return CLI_EUSAGE;
    Scrabble__V1__GameState *gs;
    if (cmd__state(ctx, id, &gs) != CLI_OK)
        return CLI_EFAIL;
    cli_view_state(stdout, gs, ctx->color);
    CMD_FREE(gs);
    return CLI_OK;
}

/* After a turn: what it did and where the game stands. */
static void cmd__after_turn(const Scrabble__V1__TurnReply *r)
{
    char mv[512], who[64];
    const Scrabble__V1__GameState *gs = r->state;
    printf("you %s\n", cli_view_move(r->move, mv, sizeof mv));
    if (gs == NULL)
        return;
    const Scrabble__V1__Seat *const *seats = (const Scrabble__V1__Seat *const *)gs->seats;
    if (gs->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED) {
        printf("game %lld is over (%s)\n", (long long)gs->game_id,
               cli_view_end_reason(gs->end_reason));
        for (size_t i = 0; i < gs->n_seats; i++)
            printf("  %-20s %4d\n", seats[i]->handle, seats[i]->score);
        return;
    }
    printf("rack: %s   bag: %d   seq: %lld   next: %s\n", gs->my_rack ? gs->my_rack : "",
           gs->bag_count, (long long)gs->seq,
           gs->to_move == gs->my_seat
               ? "you"
               : cli_view_seat_handle(seats, gs->n_seats, gs->to_move, who, sizeof who));
}

/* Sends a turn request (SubmitPlay, Pass, Exchange, Resign) and shows what
 * it did. */
static int cmd__turn(cli_ctx *ctx, const char *method, const ProtobufCMessage *req)
{
    Scrabble__V1__TurnReply *r;
    if (cli_call(ctx, method, req, &scrabble__v1__turn_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    cmd__after_turn(r);
    CMD_FREE(r);
    return CLI_OK;
}

/* Reads the game and turns NOTATION into placements on its board. */
static int cmd__placements(cli_ctx *ctx, int argc, char **argv, int64_t *id,
                           Scrabble__V1__GameState **gs, cli_placement *pl, size_t *n)
{
    char text[256], err[256];
    if (cmd__game_id(argv[1], id) != CLI_OK)
        return CLI_EUSAGE;
    cmd__join(argc, argv, 2, text, sizeof text);
    /* Check the shape before asking the server (the board is not needed
     * for that). */
    if (cli_notation_parse(text, NULL, 0, pl, n, err, sizeof err) != CLI_NOTATION_OK &&
        strstr(err, "holds") == NULL && strstr(err, "is empty") == NULL) {
        cli_errorf("%s", err);
        return CLI_EUSAGE;
    }
    if (cmd__state(ctx, *id, gs) != CLI_OK)
        return CLI_EFAIL;
    if (cli_notation_parse(text, (const char *const *)(*gs)->board, (*gs)->n_board, pl, n, err,
                           sizeof err) != CLI_NOTATION_OK) {
        cli_errorf("%s", err);
        CMD_FREE(*gs);
        *gs = NULL;
        return CLI_EUSAGE;
    }
    return CLI_OK;
}

/* Placement messages on the stack, pointing into pl's letters. */
typedef struct cmd_tiles {
    Scrabble__V1__Placement msg[CLI_BOARD_DIM];
    Scrabble__V1__Placement *ptr[CLI_BOARD_DIM];
    char letters[CLI_BOARD_DIM][2];
} cmd_tiles;

static void cmd__tiles(cmd_tiles *t, const cli_placement *pl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        scrabble__v1__placement__init(&t->msg[i]);
        t->letters[i][0] = pl[i].letter;
        t->letters[i][1] = '\0';
        t->msg[i].row = pl[i].row;
        t->msg[i].col = pl[i].col;
        t->msg[i].letter = t->letters[i];
        t->msg[i].blank = pl[i].blank;
        t->ptr[i] = &t->msg[i];
    }
}

static int cmd_play(cli_ctx *ctx, int argc, char **argv)
{
    int64_t id;
    Scrabble__V1__GameState *gs = NULL;
    cli_placement pl[CLI_BOARD_DIM];
    size_t n;
    int rc = cmd__placements(ctx, argc, argv, &id, &gs, pl, &n);
    if (rc != CLI_OK)
        return rc;
    cmd_tiles t;
    cmd__tiles(&t, pl, n);
    Scrabble__V1__SubmitPlayRequest req = SCRABBLE__V1__SUBMIT_PLAY_REQUEST__INIT;
    req.game_id = id;
    req.expected_seq = gs->seq;
    req.placements = t.ptr;
    req.n_placements = n;
    CMD_FREE(gs);
    return cmd__turn(ctx, "SubmitPlay", &req.base);
}

static int cmd_preview(cli_ctx *ctx, int argc, char **argv)
{
    int64_t id;
    Scrabble__V1__GameState *gs = NULL;
    cli_placement pl[CLI_BOARD_DIM];
    size_t n;
    int rc = cmd__placements(ctx, argc, argv, &id, &gs, pl, &n);
    if (rc != CLI_OK)
        return rc;
    CMD_FREE(gs);
    cmd_tiles t;
    cmd__tiles(&t, pl, n);
    Scrabble__V1__EvaluateRequest req = SCRABBLE__V1__EVALUATE_REQUEST__INIT;
    req.game_id = id;
    req.placements = t.ptr;
    req.n_placements = n;
    Scrabble__V1__EvaluateReply *r;
    if (cli_call(ctx, "Evaluate", &req.base, &scrabble__v1__evaluate_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    if (r->legal) {
        printf("legal: %s scores %d", r->notation && r->notation[0] ? r->notation : "the play",
               r->score);
        for (size_t i = 0; i < r->n_words; i++)
            printf("%s%s", i ? ", " : " (", r->words[i]);
        printf("%s\n", r->n_words ? ")" : "");
    } else {
        printf("not legal: %s (%s)\n", r->message && r->message[0] ? r->message : "illegal play",
               r->reason && r->reason[0] ? r->reason : "illegal");
    }
    rc = r->legal ? CLI_OK : CLI_EFAIL;
    CMD_FREE(r);
    return rc;
}

/* Pass and Resign: TurnRequest with the current seq. */
static int cmd__simple_turn(cli_ctx *ctx, char **argv, const char *method)
{
    int64_t id;
    if (cmd__game_id(argv[1], &id) != CLI_OK)
        return CLI_EUSAGE;
    Scrabble__V1__GameState *gs;
    if (cmd__state(ctx, id, &gs) != CLI_OK)
        return CLI_EFAIL;
    Scrabble__V1__TurnRequest req = SCRABBLE__V1__TURN_REQUEST__INIT;
    req.game_id = id;
    req.expected_seq = gs->seq;
    CMD_FREE(gs);
    return cmd__turn(ctx, method, &req.base);
}

static int cmd_pass(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__simple_turn(ctx, argv, "Pass");
}
static int cmd_resign(cli_ctx *ctx, int argc, char **argv)
{
    return cmd__simple_turn(ctx, argv, "Resign");
}

static int cmd_exchange(cli_ctx *ctx, int argc, char **argv)
{
    int64_t id;
    char text[64], tiles[16], err[128];
    if (cmd__game_id(argv[1], &id) != CLI_OK)
        return CLI_EUSAGE;
    if (cli_parse_tiles(cmd__join(argc, argv, 2, text, sizeof text), tiles, 8, err, sizeof err)) {
        cli_errorf("%s", err);
        return CLI_EUSAGE;
    }
    Scrabble__V1__GameState *gs;
    if (cmd__state(ctx, id, &gs) != CLI_OK)
        return CLI_EFAIL;
    Scrabble__V1__ExchangeRequest req = SCRABBLE__V1__EXCHANGE_REQUEST__INIT;
    req.game_id = id;
    req.expected_seq = gs->seq;
    req.tiles = tiles;
    CMD_FREE(gs);
    return cmd__turn(ctx, "Exchange", &req.base);
}

static int cmd_chat(cli_ctx *ctx, int argc, char **argv)
{
    int64_t id;
    char text[2048];
    if (cmd__game_id(argv[1], &id) != CLI_OK)
        return CLI_EUSAGE;
    Scrabble__V1__SendChatRequest req = SCRABBLE__V1__SEND_CHAT_REQUEST__INIT;
    req.game_id = id;
    req.text = (char *)cmd__join(argc, argv, 2, text, sizeof text);
    Scrabble__V1__ChatMessage *m;
    if (cli_call(ctx, "SendChat", &req.base, &scrabble__v1__chat_message__descriptor, true,
                 (ProtobufCMessage **)&m) != CLI_OK)
        return CLI_EFAIL;
    printf("game %lld: <%s> %s\n", (long long)m->game_id, m->handle, m->text);
    CMD_FREE(m);
    return CLI_OK;
}

static int cmd_watch(cli_ctx *ctx, int argc, char **argv)
{
    if (argc == 2) {
        int64_t id;
        if (cmd__game_id(argv[1], &id) != CLI_OK)
            return CLI_EUSAGE;
        if (ctx->interactive) {
            printf("watch GAME runs on its own: scrabble-cli watch %lld\n", (long long)id);
            return CLI_OK;
        }
        return cli_watch_game(ctx, id);
    }
    if (ctx->interactive) {
        printf("events are already printed here as they arrive\n");
        return CLI_OK;
    }
    return cli_watch(ctx);
}

static int cmd_public(cli_ctx *ctx, int argc, char **argv)
{
    return cli_public_games(ctx, argc == 2 ? argv[1] : "");
}

static int cmd_shell(cli_ctx *ctx, int argc, char **argv)
{
    if (ctx->interactive) {
        printf("already in the shell\n");
        return CLI_OK;
    }
    return cli_shell(ctx);
}

static int cmd_seek(cli_ctx *ctx, int argc, char **argv)
{
    return cli_seek(ctx, argc, argv);
}

static int cmd_help(cli_ctx *ctx, int argc, char **argv)
{
    cli_print_commands(stdout);
    return CLI_OK;
}

static const cmd cmd__table[] = {
    {"register", 2, 2, false, cmd_register, "HANDLE PASSWORD", "create an account and log in"},
    {"login", 2, 2, false, cmd_login, "HANDLE PASSWORD", "log in (saves the session token)"},
    {"logout", 0, 0, false, cmd_logout, "", "forget the session token"},
    {"invite", 1, 4, true, cmd_invite, "[--public] HANDLE...",
     "invite 1-3 players to a game (--public: anyone may watch it); bot-beginner, bot-club, "
     "bot-expert are computer opponents that accept at once"},
    {"invitations", 0, 0, true, cmd_invitations, "", "open invitations, sent and received"},
    {"accept", 1, 1, true, cmd_accept, "ID", "accept an invitation"},
    {"decline", 1, 1, true, cmd_decline, "ID", "decline an invitation"},
    {"games", 0, 1, true, cmd_games, "[active|finished]", "your games"},
    {"show", 1, 1, true, cmd_show, "GAME", "board, rack, scores, bag, whose turn"},
    {"play", 2, -1, true, cmd_play, "GAME \"8D WORD\"",
     "play a word (8D: across from row 8, column D; D8: down)"},
    {"preview", 2, -1, true, cmd_preview, "GAME \"8D WORD\"", "score a play without making it"},
    {"pass", 1, 1, true, cmd_pass, "GAME", "pass your turn"},
    {"exchange", 2, -1, true, cmd_exchange, "GAME TILES", "swap tiles with the bag ('?' = blank)"},
    {"resign", 1, 1, true, cmd_resign, "GAME", "resign the game"},
    {"chat", 2, -1, true, cmd_chat, "GAME TEXT...", "send a chat line to the game"},
    {"seek", 0, 8, true, cmd_seek, "[seats=N min=R max=R rated lexicon=L expires=S nowait]",
     "post a seek and wait for a match (Ctrl-C cancels); seek list [mine]; seek cancel ID"},
    {"watch", 0, 1, true, cmd_watch, "[GAME]",
     "print your live events; with GAME, watch that public game (Ctrl-C stops)"},
    {"public", 0, 1, true, cmd_public, "[PAGE]", "live public games anyone may watch"},
    {"shell", 0, 0, false, cmd_shell, "", "interactive prompt; events appear as they arrive"},
    {"help", 0, 0, false, cmd_help, "", "this list"},
};

#define CMD_COUNT (sizeof cmd__table / sizeof cmd__table[0])

void cli_print_commands(FILE *out)
{
    fputs("commands:\n", out);
    for (size_t i = 0; i < CMD_COUNT; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", cmd__table[i].name, cmd__table[i].args);
        fprintf(out, "  %-28s %s\n", head, cmd__table[i].help);
    }
}

int cli_run_command(cli_ctx *ctx, int argc, char **argv)
{
    for (size_t i = 0; i < CMD_COUNT; i++) {
        const cmd *c = &cmd__table[i];
        if (strcmp(c->name, argv[0]) != 0)
            continue;
        int nargs = argc - 1;
        if (nargs < c->min_args || (c->max_args >= 0 && nargs > c->max_args)) {
            fprintf(stderr, "usage: %s%s %s\n", ctx->interactive ? "" : "scrabble-cli ", c->name,
                    c->args);
            return CLI_EUSAGE;
        }
        if (c->auth && cli_session_load(ctx) != CLI_OK)
            return CLI_EFAIL;
        int rc = c->fn(ctx, argc, argv);
        fflush(stdout);
        return rc;
    }
    cli_errorf("unknown command '%s' (try: help)", argv[0]);
    return CLI_EUSAGE;
}

/*
 * view.c — see view.h. Everything here writes text; nothing allocates on
 * the heap.
 */
#include "view.h"

#include <ctype.h>
#include <string.h>
#include <time.h>

#include "notation.h"
#include "solver.h"

/* ANSI SGR sequences: premium squares as backgrounds, tiles as black on a
 * light background, the last move's tiles in a warmer one. */
#define VIEW_RESET "\033[0m"
#define VIEW_TW "\033[97;41m"
#define VIEW_DW "\033[30;105m"
#define VIEW_TL "\033[97;44m"
#define VIEW_DL "\033[30;106m"
#define VIEW_EMPTY "\033[37;100m"
#define VIEW_TILE "\033[1;30;103m"
#define VIEW_BLANK "\033[30;103m"
#define VIEW_NEW "\033[1;30;43m"
#define VIEW_BOLD "\033[1m"

char cli_premium(int row, int col)
{
    if (row < 0 || row >= CLI_BOARD_DIM || col < 0 || col >= CLI_BOARD_DIM)
        return '.';
    /* The layout is libsolver's, the one the server scores with. */
    int lm, wm;
    solver_board_premium(row, col, &lm, &wm);
    if (row == CLI_BOARD_DIM / 2 && col == CLI_BOARD_DIM / 2)
        return '*';
    return wm == 3 ? 'T' : wm == 2 ? 'D' : lm == 3 ? 't' : lm == 2 ? 'd' : '.';
}

static char view__square(const Scrabble__V1__GameState *gs, int r, int c)
{
    if ((size_t)r >= gs->n_board || gs->board[r] == NULL || strlen(gs->board[r]) <= (size_t)c)
        return '.';
    char t = gs->board[r][c];
    return isalpha((unsigned char)t) ? t : '.';
}

static bool view__in_last_move(const Scrabble__V1__GameState *gs, int r, int c)
{
    const Scrabble__V1__Move *m = gs->last_move;
    if (m == NULL || m->kind != SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY)
        return false;
    for (size_t i = 0; i < m->n_placements; i++)
        if (m->placements[i]->row == r && m->placements[i]->col == c)
            return true;
    return false;
}

void cli_view_board(FILE *out, const Scrabble__V1__GameState *gs, bool color)
{
    fputs("    ", out);
    for (int c = 0; c < CLI_BOARD_DIM; c++)
        fprintf(out, color ? " %c " : "%c  ", 'A' + c);
    fputc('\n', out);
    for (int r = 0; r < CLI_BOARD_DIM; r++) {
        fprintf(out, "%3d ", r + 1);
        for (int c = 0; c < CLI_BOARD_DIM; c++) {
            char t = view__square(gs, r, c);
            bool fresh = view__in_last_move(gs, r, c);
            if (color) {
                if (t != '.') {
                    fprintf(out, "%s %c " VIEW_RESET,
                            fresh ? VIEW_NEW : (islower((unsigned char)t) ? VIEW_BLANK : VIEW_TILE),
                            t);
                    continue;
                }
                switch (cli_premium(r, c)) {
                case 'T':
                    fputs(VIEW_TW "3W " VIEW_RESET, out);
                    break;
                case 'D':
                    fputs(VIEW_DW "2W " VIEW_RESET, out);
                    break;
                case 't':
                    fputs(VIEW_TL "3L " VIEW_RESET, out);
                    break;
                case 'd':
                    fputs(VIEW_DL "2L " VIEW_RESET, out);
                    break;
                case '*':
                    fputs(VIEW_DW " * " VIEW_RESET, out);
                    break;
                default:
                    fputs(VIEW_EMPTY " . " VIEW_RESET, out);
                    break;
                }
                continue;
            }
            /* Plain text: a tile (a blank in lower case), '+' after the last
             * move's tiles; premiums as = (3W) - (2W) " (3L) ' (2L). */
            if (t != '.') {
                fprintf(out, "%c%c ", t, fresh ? '+' : ' ');
                continue;
            }
            switch (cli_premium(r, c)) {
            case 'T':
                fputs("=  ", out);
                break;
            case 'D':
                fputs("-  ", out);
                break;
            case 't':
                fputs("\"  ", out);
                break;
            case 'd':
                fputs("'  ", out);
                break;
            case '*':
                fputs("*  ", out);
                break;
            default:
                fputs(".  ", out);
                break;
            }
        }
        fprintf(out, "%d\n", r + 1);
    }
    if (!color)
        fputs("    (= 3W  - 2W  \" 3L  ' 2L  * centre; lower case: a blank; + last move)\n", out);
}

const char *cli_view_seat_handle(const Scrabble__V1__Seat *const *seats, size_t n, int seat,
                                 char *buf, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (seats[i]->seat == seat && seats[i]->handle && seats[i]->handle[0])
            return seats[i]->handle;
    snprintf(buf, len, "seat %d", seat);
    return buf;
}

const char *cli_view_end_reason(Scrabble__V1__EndReason r)
{
    switch (r) {
    case SCRABBLE__V1__END_REASON__END_REASON_OUT:
        return "a player went out";
    case SCRABBLE__V1__END_REASON__END_REASON_SCORELESS:
        return "six scoreless turns";
    case SCRABBLE__V1__END_REASON__END_REASON_RESIGN:
        return "resignation";
    default:
        return "unknown reason";
    }
}

const char *cli_view_move(const Scrabble__V1__Move *m, char *buf, size_t len)
{
    if (m == NULL) {
        snprintf(buf, len, "nothing");
        return buf;
    }
    switch (m->kind) {
    case SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PLAY: {
        size_t o = (size_t)snprintf(buf, len, "played %s for %d", m->notation ? m->notation : "?",
                                    m->score);
        for (size_t i = 0; i < m->n_words && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : " (", m->words[i]);
        if (m->n_words && o < len)
            snprintf(buf + o, len - o, ")");
        break;
    }
    case SCRABBLE__V1__MOVE_KIND__MOVE_KIND_PASS:
        snprintf(buf, len, "passed");
        break;
    case SCRABBLE__V1__MOVE_KIND__MOVE_KIND_EXCHANGE:
        if (m->exchanged_tiles && m->exchanged_tiles[0])
            snprintf(buf, len, "exchanged %s", m->exchanged_tiles);
        else
            snprintf(buf, len, "exchanged %d tile%s", m->exchanged_count,
                     m->exchanged_count == 1 ? "" : "s");
        break;
    case SCRABBLE__V1__MOVE_KIND__MOVE_KIND_RESIGN:
        snprintf(buf, len, "resigned");
        break;
    default:
        snprintf(buf, len, "made an unknown move");
        break;
    }
    return buf;
}

/* "alice 310, bob 250" into buf. */
static void view__scores(const Scrabble__V1__Seat *const *seats, size_t n, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s %d", i ? ", " : "",
                              seats[i]->handle ? seats[i]->handle : "?", seats[i]->score);
}

static void view__winners(const Scrabble__V1__Seat *const *seats, size_t nseats, const int32_t *w,
                          size_t nw, char *buf, size_t len)
{
    size_t o = 0;
    char tmp[16];
    buf[0] = '\0';
    for (size_t i = 0; i < nw && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " and " : "",
                              cli_view_seat_handle(seats, nseats, w[i], tmp, sizeof tmp));
    if (nw == 0)
        snprintf(buf, len, "nobody");
}

/* The board as a CGP position from the caller's seat, so that
 * `scrabble-solver gen --cgp "..."` suggests moves for the caller's rack. */
static void view__cgp(FILE *out, const Scrabble__V1__GameState *gs)
{
    for (int r = 0; r < CLI_BOARD_DIM; r++) {
        int empties = 0;
        if (r)
            fputc('/', out);
        for (int c = 0; c < CLI_BOARD_DIM; c++) {
            char t = view__square(gs, r, c);
            if (t == '.') {
                empties++;
                continue;
            }
            if (empties)
                fprintf(out, "%d", empties);
            empties = 0;
            fputc(t, out);
        }
        if (empties)
            fprintf(out, "%d", empties);
    }
    int mine = 0, best_other = 0;
    for (size_t i = 0; i < gs->n_seats; i++) {
        if (gs->seats[i]->seat == gs->my_seat)
            mine = gs->seats[i]->score;
        else if (gs->seats[i]->score > best_other)
            best_other = gs->seats[i]->score;
    }
    fprintf(out, " %s/ %d/%d %d lex %s;\n", gs->my_rack ? gs->my_rack : "", mine, best_other,
            gs->scoreless_turns, gs->lexicon && gs->lexicon[0] ? gs->lexicon : "wamerican");
}

void cli_view_state(FILE *out, const Scrabble__V1__GameState *gs, bool color)
{
    char who[64], line[512];
    const char *b = color ? VIEW_BOLD : "", *e = color ? VIEW_RESET : "";
    const Scrabble__V1__Seat *const *seats = (const Scrabble__V1__Seat *const *)gs->seats;
    fprintf(out, "%sgame %lld%s  lexicon %s  seq %lld  bag %d  ", b, (long long)gs->game_id, e,
            gs->lexicon && gs->lexicon[0] ? gs->lexicon : "?", (long long)gs->seq, gs->bag_count);
    if (gs->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED) {
        view__winners(seats, gs->n_seats, gs->winners, gs->n_winners, line, sizeof line);
        fprintf(out, "%sgame over%s (%s): won by %s\n", b, e, cli_view_end_reason(gs->end_reason),
                line);
    } else if (gs->to_move == gs->my_seat) {
        fprintf(out, "%syour turn%s\n", b, e);
    } else {
        fprintf(out, "%s to move\n",
                cli_view_seat_handle(seats, gs->n_seats, gs->to_move, who, sizeof who));
    }
    fputc('\n', out);
    cli_view_board(out, gs, color);
    fputc('\n', out);
    for (size_t i = 0; i < gs->n_seats; i++) {
        const Scrabble__V1__Seat *s = seats[i];
        bool on_turn =
            gs->status != SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED && s->seat == gs->to_move;
        fprintf(out, "  %s %-20s %4d points  %d tiles%s\n", on_turn ? ">" : " ",
                s->handle ? s->handle : "?", s->score, s->rack_count,
                s->seat == gs->my_seat ? "  (you)" : "");
    }
    if (gs->my_rack)
        fprintf(out, "rack: %s%s%s\n", b, gs->my_rack, e);
    if (gs->last_move && gs->last_move->kind != SCRABBLE__V1__MOVE_KIND__MOVE_KIND_UNSPECIFIED) {
        fprintf(out, "last move: %s %s\n",
                cli_view_seat_handle(seats, gs->n_seats, gs->last_move->seat, who, sizeof who),
                cli_view_move(gs->last_move, line, sizeof line));
    }
    if (gs->scoreless_turns > 0 && gs->status != SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED)
        fprintf(out, "scoreless turns: %d of 6\n", gs->scoreless_turns);
    fputs("cgp: ", out);
    view__cgp(out, gs);
}

const char *cli_view_event(const Scrabble__V1__Event *ev, int64_t me, char *buf, size_t len)
{
    char mv[256], tmp[512];
    const char *from = ev->from_handle && ev->from_handle[0] ? ev->from_handle : "someone";
    long long g = (long long)ev->game_id;
    switch (ev->type) {
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED: {
        size_t o = (size_t)snprintf(tmp, sizeof tmp, "%s", "");
        if (ev->invitation)
            for (size_t i = 0; i < ev->invitation->n_seats && o < sizeof tmp; i++)
                o += (size_t)snprintf(tmp + o, sizeof tmp - o, "%s%s", i ? " vs " : "",
                                      ev->invitation->seats[i]->handle);
        snprintf(buf, len, "game %lld started%s%s (show %lld)", g, tmp[0] ? ": " : "", tmp, g);
        break;
    }
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_OPPONENT_MOVED:
        snprintf(buf, len, "game %lld: %s %s", g, from, cli_view_move(ev->move, mv, sizeof mv));
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_WATCHED_MOVE:
        snprintf(buf, len, "game %lld #%lld: %s %s", g, (long long)ev->seq, from,
                 cli_view_move(ev->move, mv, sizeof mv));
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_YOUR_TURN:
        snprintf(buf, len, "game %lld: your turn (seq %lld)", g, (long long)ev->seq);
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_OVER: {
        view__scores((const Scrabble__V1__Seat *const *)ev->seats, ev->n_seats, tmp, sizeof tmp);
        char won[256];
        view__winners((const Scrabble__V1__Seat *const *)ev->seats, ev->n_seats, ev->winners,
                      ev->n_winners, won, sizeof won);
        bool i_won = false;
        for (size_t i = 0; i < ev->n_winners; i++)
            for (size_t k = 0; k < ev->n_seats; k++)
                if (ev->seats[k]->seat == ev->winners[i] && me && ev->seats[k]->account_id == me)
                    i_won = true;
        snprintf(buf, len, "game %lld is over (%s): %s; won by %s%s", g,
                 cli_view_end_reason(ev->end_reason), tmp, won, i_won ? " (you!)" : "");
        break;
    }
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_CHAT:
        snprintf(buf, len, "game %lld: <%s> %s", g,
                 ev->chat && ev->chat->handle && ev->chat->handle[0] ? ev->chat->handle : from,
                 ev->chat && ev->chat->text ? ev->chat->text : "");
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_NUDGE:
        snprintf(buf, len, "game %lld: %s nudged you: it is your turn", g, from);
        break;
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_INVITATION: {
        const Scrabble__V1__Invitation *inv = ev->invitation;
        size_t o = 0;
        tmp[0] = '\0';
        if (inv)
            for (size_t i = 0; i < inv->n_seats && o < sizeof tmp; i++)
                o += (size_t)snprintf(tmp + o, sizeof tmp - o, "%s%s", i ? ", " : "",
                                      inv->seats[i]->handle);
        long long id = inv ? (long long)inv->invitation_id : 0;
        snprintf(buf, len, "invitation %lld from %s to a game of %s (accept %lld / decline %lld)",
                 id,
                 inv && inv->inviter_handle && inv->inviter_handle[0] ? inv->inviter_handle : from,
                 tmp[0] ? tmp : "?", id, id);
        break;
    }
    case SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_SEEK_EXPIRED:
        snprintf(buf, len, "your seek %lld expired without a match",
                 ev->seek ? (long long)ev->seek->seek_id : 0LL);
        break;
    default:
        snprintf(buf, len, "event %d for game %lld", (int)ev->type, g);
        break;
    }
    return buf;
}

static const char *view__ago(int64_t at_ms, char *buf, size_t len)
{
    if (at_ms <= 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    time_t t = (time_t)(at_ms / 1000);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

void cli_view_games(FILE *out, const Scrabble__V1__ListGamesReply *r, int64_t me)
{
    if (r->n_games == 0) {
        fputs("no games (invite someone: invite HANDLE)\n", out);
        return;
    }
    fprintf(out, "%-8s %-9s %-32s %-22s %s\n", "GAME", "STATUS", "PLAYERS", "TURN", "UPDATED");
    for (size_t i = 0; i < r->n_games; i++) {
        const Scrabble__V1__GameSummary *g = r->games[i];
        const Scrabble__V1__Seat *const *seats = (const Scrabble__V1__Seat *const *)g->seats;
        char players[256], turn[160], who[64], when[32];
        view__scores(seats, g->n_seats, players, sizeof players);
        bool finished = g->status == SCRABBLE__V1__GAME_STATUS__GAME_STATUS_FINISHED;
        if (finished) {
            char won[128];
            view__winners(seats, g->n_seats, g->winners, g->n_winners, won, sizeof won);
            snprintf(turn, sizeof turn, "won by %s", won);
        } else {
            bool mine = false;
            for (size_t k = 0; k < g->n_seats; k++)
                if (seats[k]->seat == g->to_move && me && seats[k]->account_id == me)
                    mine = true;
            if (mine)
                snprintf(turn, sizeof turn, "your turn");
            else
                snprintf(turn, sizeof turn, "%s to move",
                         cli_view_seat_handle(seats, g->n_seats, g->to_move, who, sizeof who));
        }
        fprintf(out, "%-8lld %-9s %-32s %-22s %s\n", (long long)g->game_id,
                finished ? "finished" : "active", players, turn,
                view__ago(g->updated_at_ms, when, sizeof when));
    }
    if (r->next_page_token && r->next_page_token[0])
        fputs("(more games: only the first page is shown)\n", out);
}

static const char *view__answer(Scrabble__V1__InviteeAnswer a)
{
    switch (a) {
    case SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_ACCEPTED:
        return "accepted";
    case SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_DECLINED:
        return "declined";
    case SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_PENDING:
        return "pending";
    default:
        return "?";
    }
}

void cli_view_invitation(FILE *out, const Scrabble__V1__Invitation *inv, int64_t me)
{
    const char *status = "?";
    switch (inv->status) {
    case SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_OPEN:
        status = "open";
        break;
    case SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_STARTED:
        status = "started";
        break;
    case SCRABBLE__V1__INVITATION_STATUS__INVITATION_STATUS_DECLINED:
        status = "declined";
        break;
    default:
        break;
    }
    fprintf(out, "invitation %lld from %s (%s):", (long long)inv->invitation_id,
            inv->inviter_handle && inv->inviter_handle[0] ? inv->inviter_handle : "?", status);
    bool pending_for_me = false;
    for (size_t i = 0; i < inv->n_seats; i++) {
        const Scrabble__V1__Invitee *s = inv->seats[i];
        fprintf(out, "%s %s %s", i ? "," : "", s->handle ? s->handle : "?",
                view__answer(s->answer));
        if (me && s->account_id == me &&
            s->answer == SCRABBLE__V1__INVITEE_ANSWER__INVITEE_ANSWER_PENDING)
            pending_for_me = true;
    }
    if (inv->game_id)
        fprintf(out, "; game %lld", (long long)inv->game_id);
    if (pending_for_me)
        fprintf(out, "  -> accept %lld | decline %lld", (long long)inv->invitation_id,
                (long long)inv->invitation_id);
    fputc('\n', out);
}

/*
 * spectate.c — public games from the terminal: `public` lists them and
 * `watch GAME` follows one as an observer (docs/API.md, Spectators).
 *
 * `watch GAME` opens Edge.Watch from after_seq 0, so the moves so far are
 * printed first, then each move as it is played, then the end with every
 * rack. As in events.c, the stream's callbacks (the client loop thread)
 * never touch the terminal: each event becomes one line written to a pipe
 * that the main thread prints, and the stream's end becomes a control
 * line. A stream that ends for a reason that says "resume" (UNAVAILABLE,
 * slow_consumer) is reopened after a backoff from the last seq printed;
 * one that ends OK means the game is over.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "scrabble/v1/edge.pb-c.h"
#include "view.h"

#define SPECTATE_LINE_MAX 1024
#define SPECTATE_BACKOFF_MIN_MS 500
#define SPECTATE_BACKOFF_MAX_MS 10000

/* Shared with the stream's callbacks; lives on cli_watch_game's stack,
 * which waits for every stream's end before returning. */
typedef struct spectate {
    cli_ctx *ctx;
    int pipe_rd, pipe_wr;
    _Atomic int64_t last_seq; /* the seq of the last move received */
    atomic_int live;          /* streams whose on_end has not run */
} spectate;

static void spectate__write(spectate *sp, const char *line, size_t n)
{
    /* One write of at most PIPE_BUF bytes: lines never interleave. A full
     * pipe (a terminal that stopped reading) loses the line, not the
     * game: a resume starts from last_seq. */
    if (write(sp->pipe_wr, line, n) != (ssize_t)n)
        return;
}

static void spectate__on_msg(void *arg, ProtobufCMessage *msg)
{
    spectate *sp = arg;
    const Scrabble__V1__Event *ev = (const Scrabble__V1__Event *)msg;
    char line[SPECTATE_LINE_MAX];
    cli_view_event(ev, 0, line, sizeof line - 1);
    size_t n = 0;
    for (char *p = line; *p; p++, n++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' '; /* handles are other people's text */
    line[n++] = '\n';
    spectate__write(sp, line, n);
    if (ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_WATCHED_MOVE)
        atomic_store(&sp->last_seq, ev->seq);
}

static void spectate__on_end(void *arg, const rpc_status *st)
{
    spectate *sp = arg;
    char line[SPECTATE_LINE_MAX];
    spectate__write(sp, line, cli_end_line(line, sizeof line, 0, st));
    atomic_fetch_sub(&sp->live, 1);
}

static rpc_client_stream *spectate__open(spectate *sp, int64_t game_id)
{
    Scrabble__V1__WatchRequest req = SCRABBLE__V1__WATCH_REQUEST__INIT;
    req.game_id = game_id;
    req.after_seq = atomic_load(&sp->last_seq);
    rpc_client_opts opts = {.md = sp->ctx->md, .md_count = 1}; /* no deadline */
    atomic_fetch_add(&sp->live, 1);
    rpc_client_stream *s = rpc_client_stream_open(sp->ctx->ch, "/scrabble.v1.Edge/Watch", &req.base,
                                                  &scrabble__v1__event__descriptor, &opts,
                                                  spectate__on_msg, spectate__on_end, sp);
    if (!s)
        atomic_fetch_sub(&sp->live, 1);
    return s;
}

/* What the end of a stream means: 0 the game is over, 1 resume, -1 give
 * up (printed). */
static int spectate__ended(const char *ctl)
{
    int code = atoi(ctl);
    const char *reason = strchr(ctl, '\t');
    reason = reason ? reason + 1 : "";
    const char *msg = strchr(reason, '\t');
    int rlen = msg ? (int)(msg - reason) : (int)strlen(reason);
    msg = msg ? msg + 1 : "";
    if (code == GRPC_STATUS_OK)
        return 0;
    if (code == GRPC_STATUS_UNAVAILABLE || code == GRPC_STATUS_DEADLINE_EXCEEDED ||
        (code == GRPC_STATUS_RESOURCE_EXHAUSTED && strncmp(reason, "slow_consumer", 13) == 0)) {
        fprintf(stderr, "stream ended (%.*s): resuming\n", rlen, reason);
        return 1;
    }
    cli_errorf("cannot watch: %s (%.*s)", msg, rlen, reason);
    return -1;
}

int cli_watch_game(cli_ctx *ctx, int64_t game_id)
{
    spectate sp = {.ctx = ctx};
    int fds[2];
    int sfd = cli_signalfd();
    if (sfd < 0 || pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        cli_errorf("cannot watch: %s", strerror(errno));
        if (sfd >= 0)
            close(sfd);
        return CLI_EFAIL;
    }
    sp.pipe_rd = fds[0];
    sp.pipe_wr = fds[1];
    fprintf(stderr, "watching game %lld on %s (Ctrl-C stops)\n", (long long)game_id, ctx->opt.addr);
    rpc_client_stream *stream = spectate__open(&sp, game_id);
    int rc = CLI_EFAIL, backoff = SPECTATE_BACKOFF_MIN_MS;
    int64_t reopen_at = stream ? 0 : cli_now_ms();
    char buf[2 * SPECTATE_LINE_MAX];
    size_t have = 0;
    bool done = false;
    while (!done) {
        int wait = -1;
        if (reopen_at) {
            int64_t left = reopen_at - cli_now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        struct pollfd p[2] = {{.fd = sp.pipe_rd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int n = poll(p, 2, wait);
        if (n < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN) {
            rc = CLI_OK; /* Ctrl-C: the user is done watching */
            break;
        }
        if (reopen_at && cli_now_ms() >= reopen_at) {
            reopen_at = 0;
            if (!(stream = spectate__open(&sp, game_id))) {
                reopen_at = cli_now_ms() + backoff;
                backoff =
                    backoff * 2 > SPECTATE_BACKOFF_MAX_MS ? SPECTATE_BACKOFF_MAX_MS : backoff * 2;
            }
        }
        ssize_t got = read(sp.pipe_rd, buf + have, sizeof buf - have);
        if (got <= 0)
            continue;
        have += (size_t)got;
        char *line = buf, *nl;
        while (!done && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
            *nl = '\0';
            if (line[0] != '\001') {
                printf("%s\n", line);
                backoff = SPECTATE_BACKOFF_MIN_MS; /* it works again */
            } else {
                stream = NULL;
                char *fields = strchr(line, '\t'); /* after the generation (0) */
                int what = spectate__ended(fields ? fields + 1 : "");
                if (what == 0) {
                    rc = CLI_OK;
                    done = true;
                } else if (what < 0) {
                    done = true;
                } else {
                    reopen_at = cli_now_ms() + backoff;
                    backoff = backoff * 2 > SPECTATE_BACKOFF_MAX_MS ? SPECTATE_BACKOFF_MAX_MS
                                                                    : backoff * 2;
                }
            }
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        fflush(stdout);
    }
    if (stream)
        rpc_client_stream_cancel(stream);
    /* Every callback has run before sp (on this stack) goes. */
    while (atomic_load(&sp.live) > 0)
        poll(NULL, 0, 10);
    close(sp.pipe_rd);
    close(sp.pipe_wr);
    close(sfd);
    return rc;
}

int cli_public_games(cli_ctx *ctx, const char *page_token)
{
    Scrabble__V1__PublicGameListRequest req = SCRABBLE__V1__PUBLIC_GAME_LIST_REQUEST__INIT;
    req.page_token = (char *)page_token;
    Scrabble__V1__PublicGameListReply *r;
    if (cli_call(ctx, "ListPublicGames", &req.base,
                 &scrabble__v1__public_game_list_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    if (r->n_games == 0)
        printf("no public game is being played\n");
    for (size_t i = 0; i < r->n_games; i++) {
        const Scrabble__V1__GameSummary *g = r->games[i];
        printf("game %lld  move %lld  ", (long long)g->game_id, (long long)g->seq);
        for (size_t k = 0; k < g->n_seats; k++)
            printf("%s%s %d", k ? " vs " : "", g->seats[k]->handle, g->seats[k]->score);
        printf("  (watch %lld)\n", (long long)g->game_id);
    }
    if (r->next_page_token[0])
        printf("more: public %s\n", r->next_page_token);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return CLI_OK;
}

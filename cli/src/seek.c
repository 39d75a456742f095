#define _GNU_SOURCE /* pipe2 */
/*
 * seek.c — the `seek` command: post a seek in the lobby and wait for the
 * match, list the lobby (or one's own seeks), cancel a seek
 * (docs/API.md, Seeks).
 *
 *   seek [seats=N] [min=R] [max=R] [rated] [lexicon=NAME] [expires=S] [nowait]
 *   seek list [mine]
 *   seek cancel ID
 *
 * Waiting: a Subscribe stream is opened before the seek is posted, and
 * each GAME_STARTED or SEEK_EXPIRED it brings (or, failing that, every
 * two seconds) makes the command ask ListSeeks(mine) what became of the
 * seek. The stream only makes the answer prompt; the question is what
 * decides, so a match that happens before the stream is live, or while it
 * reconnects, is still seen. Ctrl-C cancels the seek. Inside `shell` the
 * seek is posted and the shell's own event lines tell of the match.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "scrabble/v1/edge.pb-c.h"

#define SEEK__POLL_MS 2000
/* Past the seek's expiry, the expiry sweep runs within a poll of game-svc
 * (1 s by default): give up waiting after this much more. */
#define SEEK__EXPIRY_GRACE_MS 60000

#define SEEK__FREE(m) protobuf_c_message_free_unpacked((ProtobufCMessage *)(m), NULL)

static const char *seek__status(int s)
{
    switch (s) {
    case SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_OPEN:
        return "open";
    case SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_MATCHED:
        return "matched";
    case SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_CANCELLED:
        return "cancelled";
    case SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_EXPIRED:
        return "expired";
    default:
        return "?";
    }
}

static void seek__print(const Scrabble__V1__Seek *k)
{
    char range[48] = "any rating";
    if (k->min_rating || k->max_rating)
        snprintf(range, sizeof range, "opponents %d-%s", k->min_rating, k->max_rating ? "" : "any");
    if (k->max_rating)
        snprintf(range + strlen(range), sizeof range - strlen(range), "%d", k->max_rating);
    printf("seek %lld by %s (%d): %d seats, %s%s, %s, %s", (long long)k->seek_id, k->handle,
           k->rating, k->seats, k->lexicon, k->rated ? ", rated" : "", range,
           seek__status(k->status));
    if (k->game_id)
        printf(" (game %lld)", (long long)k->game_id);
    printf("\n");
}

/* "name=value" with value a whole number in [lo, hi]. 1: it was this
 * option (set *v), 0: another word, -1: a bad value (message printed). */
static int seek__int_opt(const char *arg, const char *name, long lo, long hi, int32_t *v)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || arg[n] != '=')
        return 0;
    char *end;
    errno = 0;
    long x = strtol(arg + n + 1, &end, 10);
    if (errno || end == arg + n + 1 || *end || x < lo || x > hi) {
        cli_errorf("%s must be a whole number %ld..%ld", name, lo, hi);
        return -1;
    }
    *v = (int32_t)x;
    return 1;
}

/* Our seek as ListSeeks(mine) has it now (newest first: it is near the
 * top). NULL when not found or the call failed (printed). */
static Scrabble__V1__Seek *seek__mine(cli_ctx *ctx, int64_t id, Scrabble__V1__ListSeeksReply **r)
{
    Scrabble__V1__ListSeeksRequest req = SCRABBLE__V1__LIST_SEEKS_REQUEST__INIT;
    req.mine = true;
    req.page_size = 100;
    *r = NULL;
    if (cli_call(ctx, "ListSeeks", &req.base, &scrabble__v1__list_seeks_reply__descriptor, true,
                 (ProtobufCMessage **)r) != CLI_OK)
        return NULL;
    for (size_t i = 0; i < (*r)->n_seeks; i++)
        if ((*r)->seeks[i]->seek_id == id)
            return (*r)->seeks[i];
    return NULL;
}

/* The wait's stream: wakes the main thread (one byte on a pipe) at each
 * event that may be the seek's end. */
typedef struct seek__waiter {
    int pipe_wr;
} seek__waiter;

static void seek__on_event(void *arg, ProtobufCMessage *msg)
{
    const Scrabble__V1__Event *ev = (const Scrabble__V1__Event *)msg;
    seek__waiter *w = arg;
    if (ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_GAME_STARTED ||
        ev->type == SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_SEEK_EXPIRED)
        (void)!write(w->pipe_wr, "e", 1);
}

static void seek__on_end(void *arg, const rpc_status *st)
{
    (void)st; /* the periodic ListSeeks carries on without the stream */
    seek__waiter *w = arg;
    close(w->pipe_wr);
    free(w);
}

/* 1: the seek reached an end (printed, *rc set); 0: still waiting. */
static int seek__check(cli_ctx *ctx, int64_t id, int *rc)
{
    Scrabble__V1__ListSeeksReply *r;
    Scrabble__V1__Seek *k = seek__mine(ctx, id, &r);
    int done = 1;
    if (!k) {
        *rc = CLI_EFAIL;
        if (r)
            cli_errorf("seek %lld is not among your seeks", (long long)id);
    } else if (k->status == SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_MATCHED && k->game_id) {
        printf("matched: game %lld has started (show %lld)\n", (long long)k->game_id,
               (long long)k->game_id);
        *rc = CLI_OK;
    } else if (k->status == SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_EXPIRED ||
               k->status == SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_CANCELLED) {
        printf("seek %lld %s without a match\n", (long long)id, seek__status(k->status));
        *rc = CLI_EFAIL;
    } else {
        done = 0; /* open, or matched with its game being created */
    }
    if (r)
        SEEK__FREE(r);
    return done;
}

/* Ctrl-C while waiting: withdraw the seek. A match that came first wins
 * (seek_closed): report it. */
static int seek__interrupted(cli_ctx *ctx, int64_t id)
{
    Scrabble__V1__CancelSeekRequest req = SCRABBLE__V1__CANCEL_SEEK_REQUEST__INIT;
    Scrabble__V1__Seek *k;
    int rc = CLI_EFAIL;
    req.seek_id = id;
    printf("\ncancelling seek %lld\n", (long long)id);
    if (cli_call(ctx, "CancelSeek", &req.base, &scrabble__v1__seek__descriptor, true,
                 (ProtobufCMessage **)&k) == CLI_OK) {
        seek__print(k);
        SEEK__FREE(k);
        return CLI_EFAIL;
    }
    seek__check(ctx, id, &rc);
    return rc;
}

static int seek__wait(cli_ctx *ctx, const Scrabble__V1__Seek *k, int pipe_rd, int sfd)
{
    int rc = CLI_EFAIL;
    int64_t give_up = cli_now_ms() + (k->expires_at_ms - k->created_at_ms) + SEEK__EXPIRY_GRACE_MS;
    printf("waiting for a match (Ctrl-C cancels the seek)\n");
    fflush(stdout);
    for (;;) {
        struct pollfd p[2] = {{.fd = pipe_rd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        int n = poll(p, 2, SEEK__POLL_MS);
        if (n < 0 && errno != EINTR)
            return CLI_EFAIL;
        if (p[1].revents & POLLIN)
            return seek__interrupted(ctx, k->seek_id);
        if (p[0].revents & (POLLIN | POLLHUP)) {
            char buf[64];
            if (read(pipe_rd, buf, sizeof buf) <= 0)
                p[0].fd = -1; /* the stream ended: keep asking on the timer */
        }
        if (seek__check(ctx, k->seek_id, &rc))
            return rc;
        if (cli_now_ms() > give_up) {
            cli_errorf("seek %lld is still not settled; see: seek list mine",
                       (long long)k->seek_id);
            return CLI_EFAIL;
        }
    }
}

static int seek__post(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__SeekRequest req = SCRABBLE__V1__SEEK_REQUEST__INIT;
    bool wait = !ctx->interactive;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = seek__int_opt(argv[i], "seats", 2, 4, &req.seats)) ||
            (r = seek__int_opt(argv[i], "min", 0, 4000, &req.min_rating)) ||
            (r = seek__int_opt(argv[i], "max", 0, 4000, &req.max_rating)) ||
            (r = seek__int_opt(argv[i], "expires", 1, 7 * 86400, &req.expires_in_seconds))) {
            if (r < 0)
                return CLI_EUSAGE;
        } else if (strcmp(argv[i], "rated") == 0) {
            req.rated = true;
        } else if (strcmp(argv[i], "nowait") == 0) {
            wait = false;
        } else if (strncmp(argv[i], "lexicon=", 8) == 0) {
            req.lexicon = argv[i] + 8;
        } else {
            cli_errorf("'%s' is not a seek option (seats=N min=R max=R rated lexicon=NAME "
                       "expires=S nowait)",
                       argv[i]);
            return CLI_EUSAGE;
        }
    }
    /* The stream first, so the match's events find it open. */
    int fds[2] = {-1, -1}, sfd = -1;
    seek__waiter *w = NULL;
    rpc_client_stream *st = NULL;
    if (wait) {
        sfd = cli_signalfd();
        w = calloc(1, sizeof *w);
        if (sfd < 0 || !w || pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
            cli_errorf("cannot wait for the match: %s", strerror(errno));
            free(w);
            if (sfd >= 0)
                close(sfd);
            return CLI_EFAIL;
        }
        w->pipe_wr = fds[1];
        Scrabble__V1__SubscribeRequest sreq = SCRABBLE__V1__SUBSCRIBE_REQUEST__INIT;
        rpc_client_opts opts = {.md = ctx->md, .md_count = 1};
        st = rpc_client_stream_open(ctx->ch, "/scrabble.v1.Edge/Subscribe", &sreq.base,
                                    &scrabble__v1__event__descriptor, &opts, seek__on_event,
                                    seek__on_end, w);
        if (!st) { /* no stream: the timer alone */
            close(fds[1]);
            free(w);
        }
    }
    Scrabble__V1__Seek *k;
    int rc = CLI_EFAIL;
    if (cli_call(ctx, "PostSeek", &req.base, &scrabble__v1__seek__descriptor, true,
                 (ProtobufCMessage **)&k) == CLI_OK) {
        seek__print(k);
        if (k->status == SCRABBLE__V1__SEEK_STATUS__SEEK_STATUS_MATCHED && k->game_id) {
            printf("matched: game %lld has started (show %lld)\n", (long long)k->game_id,
                   (long long)k->game_id);
            rc = CLI_OK;
        } else if (!wait) {
            printf("in the lobby until matched, cancelled (seek cancel %lld) or expired\n",
                   (long long)k->seek_id);
            rc = CLI_OK;
        } else {
            rc = seek__wait(ctx, k, fds[0], sfd);
        }
        SEEK__FREE(k);
    }
    if (st)
        rpc_client_stream_cancel(st); /* on_end closes the write end */
    if (fds[0] >= 0)
        close(fds[0]);
    if (sfd >= 0)
        close(sfd);
    return rc;
}

static int seek__list(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__ListSeeksRequest req = SCRABBLE__V1__LIST_SEEKS_REQUEST__INIT;
    req.page_size = 100;
    if (argc > 2) {
        if (strcmp(argv[2], "mine") != 0) {
            cli_errorf("'%s': seek list takes only 'mine'", argv[2]);
            return CLI_EUSAGE;
        }
        req.mine = true;
    }
    Scrabble__V1__ListSeeksReply *r;
    if (cli_call(ctx, "ListSeeks", &req.base, &scrabble__v1__list_seeks_reply__descriptor, true,
                 (ProtobufCMessage **)&r) != CLI_OK)
        return CLI_EFAIL;
    if (r->n_seeks == 0)
        printf(req.mine ? "you have no seeks\n" : "the lobby is empty\n");
    for (size_t i = 0; i < r->n_seeks; i++)
        seek__print(r->seeks[i]);
    if (r->next_page_token[0])
        printf("(first 100 shown)\n");
    SEEK__FREE(r);
    return CLI_OK;
}

static int seek__cancel(cli_ctx *ctx, int argc, char **argv)
{
    Scrabble__V1__CancelSeekRequest req = SCRABBLE__V1__CANCEL_SEEK_REQUEST__INIT;
    if (argc != 3 || cli_parse_id(argv[2], &req.seek_id) != 0) {
        cli_errorf("usage: seek cancel ID (a positive number; see: seek list mine)");
        return CLI_EUSAGE;
    }
    Scrabble__V1__Seek *k;
    if (cli_call(ctx, "CancelSeek", &req.base, &scrabble__v1__seek__descriptor, true,
                 (ProtobufCMessage **)&k) != CLI_OK)
        return CLI_EFAIL;
    seek__print(k);
    SEEK__FREE(k);
    return CLI_OK;
}

int cli_seek(cli_ctx *ctx, int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "list") == 0)
        return seek__list(ctx, argc, argv);
    if (argc > 1 && strcmp(argv[1], "cancel") == 0)
        return seek__cancel(ctx, argc, argv);
    return seek__post(ctx, argc, argv);
}

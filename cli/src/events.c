#define _GNU_SOURCE /* pipe2 */
/*
 * events.c — the Subscribe stream behind `watch` and `shell`.
 *
 * The stream's callbacks run on the runtime's client loop thread. They never
 * touch the terminal: each event becomes one text line written to a pipe
 * (one write of at most PIPE_BUF bytes, so lines never interleave), and the
 * stream's end becomes a control line. The main thread reads the pipe in its
 * poll loop, prints the lines, and reopens a stream that ended with a
 * backoff (1 s doubling to 30 s), unless the session itself was refused.
 *
 * Each stream carries a generation number, so the end of a stream that was
 * replaced on purpose (a new login) is not mistaken for a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "scrabble/v1/edge.pb-c.h"
#include "view.h"

#define EVENTS_LINE_MAX 1024
#define EVENTS_BACKOFF_MIN_MS 1000
#define EVENTS_BACKOFF_MAX_MS 30000

/* One per opened stream; freed by on_end (the runtime calls it exactly
 * once). */
typedef struct events_stream_arg {
    cli_ctx *ctx;
    unsigned gen;
    int64_t me;
} events_stream_arg;

int64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_events_init(cli_ctx *ctx)
{
    cli_events *ev = &ctx->ev;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return CLI_EFAIL;
    /* The writer must never block the client loop; the reader is polled. */
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    ev->pipe_rd = fds[0];
    ev->pipe_wr = fds[1];
    pthread_mutex_init(&ev->mu, NULL);
    pthread_cond_init(&ev->ended_cv, NULL);
    ev->backoff_ms = EVENTS_BACKOFF_MIN_MS;
    return CLI_OK;
}

static void events__write(cli_ctx *ctx, const char *line, size_t n)
{
    if (write(ctx->ev.pipe_wr, line, n) != (ssize_t)n) {
        pthread_mutex_lock(&ctx->ev.mu);
        ctx->ev.dropped++;
        pthread_mutex_unlock(&ctx->ev.mu);
    }
}

static void events__on_msg(void *arg, ProtobufCMessage *msg)
{
    events_stream_arg *a = arg;
    char line[EVENTS_LINE_MAX];
    cli_view_event((const Scrabble__V1__Event *)msg, a->me, line, sizeof line - 1);
    /* Control characters from other people (chat) must not reach the
     * terminal, and a newline inside would split the line. */
    size_t n = 0;
    for (char *p = line; *p; p++, n++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    line[n++] = '\n';
    events__write(a->ctx, line, n);
}

static void events__on_end(void *arg, const rpc_status *st)
{
    events_stream_arg *a = arg;
    cli_ctx *ctx = a->ctx;
    char line[EVENTS_LINE_MAX];
    events__write(ctx, line, cli_end_line(line, sizeof line, a->gen, st));
    pthread_mutex_lock(&ctx->ev.mu);
    if (a->gen == ctx->ev.gen)
        ctx->ev.stream = NULL;
    ctx->ev.live--;
    pthread_cond_broadcast(&ctx->ev.ended_cv);
    pthread_mutex_unlock(&ctx->ev.mu);
    free(a);
}

void cli_events_start(cli_ctx *ctx)
{
    cli_events *ev = &ctx->ev;
    if (ctx->token[0] == '\0')
        return;
    events_stream_arg *a = calloc(1, sizeof *a);
    if (a == NULL)
        return;
    Scrabble__V1__SubscribeRequest req = SCRABBLE__V1__SUBSCRIBE_REQUEST__INIT;
    rpc_client_opts opts = {.md = ctx->md, .md_count = 1}; /* no deadline */
    pthread_mutex_lock(&ev->mu);
    if (ev->stream != NULL)
        rpc_client_stream_cancel(ev->stream); /* its end has an old generation */
    a->ctx = ctx;
    a->gen = ++ctx->ev.gen;
    a->me = ctx->account_id;
    ev->want = true;
    ev->reconnect_at_ms = 0;
    ev->stream = rpc_client_stream_open(ctx->ch, "/scrabble.v1.Edge/Subscribe", &req.base,
                                        &scrabble__v1__event__descriptor, &opts, events__on_msg,
                                        events__on_end, a);
    if (ev->stream != NULL) {
        ev->live++;
    } else {
        free(a);
        ev->reconnect_at_ms = cli_now_ms() + ev->backoff_ms;
    }
    pthread_mutex_unlock(&ev->mu);
}

void cli_events_stop(cli_ctx *ctx)
{
    cli_events *ev = &ctx->ev;
    pthread_mutex_lock(&ev->mu);
    ev->want = false;
    ev->reconnect_at_ms = 0;
    if (ev->stream != NULL)
        rpc_client_stream_cancel(ev->stream);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    while (ev->live > 0)
        if (pthread_cond_timedwait(&ev->ended_cv, &ev->mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&ev->mu);
}

int cli_events_timeout(cli_ctx *ctx)
{
    if (!ctx->ev.want || ctx->ev.reconnect_at_ms == 0)
        return -1;
    int64_t left = ctx->ev.reconnect_at_ms - cli_now_ms();
    return left < 0 ? 0 : (int)left;
}

/* A control line: the stream of generation gen ended with this status. */
static void events__ended(cli_ctx *ctx, char *ctl, void (*emit)(void *, const char *), void *arg)
{
    cli_events *ev = &ctx->ev;
    rpc_status st = {0};
    char *save = NULL;
    char *gen = strtok_r(ctl, "\t", &save);
    char *code = strtok_r(NULL, "\t", &save);
    char *rest = save;
    /* reason and message may be empty: split by hand. */
    char *tab = rest ? strchr(rest, '\t') : NULL;
    if (gen == NULL || code == NULL || tab == NULL)
        return;
    *tab = '\0';
    snprintf(st.reason, sizeof st.reason, "%s", rest);
    snprintf(st.message, sizeof st.message, "%s", tab + 1);
    st.code = (grpc_status_code)atoi(code);
    pthread_mutex_lock(&ev->mu);
    bool current = (unsigned)strtoul(gen, NULL, 10) == ctx->ev.gen;
    pthread_mutex_unlock(&ev->mu);
    if (!current || !ev->want)
        return;
    char words[512], line[700];
    cli_status_words(&st, words, sizeof words);
    if (st.code == GRPC_STATUS_UNAUTHENTICATED || st.code == GRPC_STATUS_PERMISSION_DENIED ||
        st.code == GRPC_STATUS_UNIMPLEMENTED) {
        snprintf(line, sizeof line, "live events stopped: %s", words);
        ev->want = false;
        emit(arg, line);
        return;
    }
    snprintf(line, sizeof line, "live events interrupted: %s; reconnecting in %d s", words,
             ev->backoff_ms / 1000);
    emit(arg, line);
    ev->reconnect_at_ms = cli_now_ms() + ev->backoff_ms;
    ev->backoff_ms *= 2;
    if (ev->backoff_ms > EVENTS_BACKOFF_MAX_MS)
        ev->backoff_ms = EVENTS_BACKOFF_MAX_MS;
}

int cli_events_pump(cli_ctx *ctx, void (*emit)(void *arg, const char *line), void *arg)
{
    cli_events *ev = &ctx->ev;
    int printed = 0;
    for (;;) {
        ssize_t n =
            read(ev->pipe_rd, ev->carry + ev->carry_len, sizeof ev->carry - ev->carry_len - 1);
        if (n <= 0)
            break;
        ev->carry_len += (size_t)n;
        ev->carry[ev->carry_len] = '\0';
        char *line = ev->carry, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            if (line[0] == '\001') {
                events__ended(ctx, line + 1, emit, arg);
            } else {
                ev->backoff_ms = EVENTS_BACKOFF_MIN_MS; /* the stream works */
                emit(arg, line);
                printed++;
            }
            line = nl + 1;
        }
        ev->carry_len = strlen(line);
        memmove(ev->carry, line, ev->carry_len);
        if (ev->carry_len >= sizeof ev->carry - 1)
            ev->carry_len = 0; /* cannot happen: writers send whole short lines */
    }
    pthread_mutex_lock(&ev->mu);
    unsigned dropped = ev->dropped;
    ev->dropped = 0;
    pthread_mutex_unlock(&ev->mu);
    if (dropped) {
        char line[96];
        snprintf(line, sizeof line, "(%u live event%s lost: the terminal fell behind)", dropped,
                 dropped == 1 ? "" : "s");
        emit(arg, line);
    }
    if (ev->want && ev->reconnect_at_ms && cli_now_ms() >= ev->reconnect_at_ms)
        cli_events_start(ctx);
    return printed;
}

void cli_events_destroy(cli_ctx *ctx)
{
    cli_events_stop(ctx);
    close(ctx->ev.pipe_rd);
    close(ctx->ev.pipe_wr);
    pthread_mutex_destroy(&ctx->ev.mu);
    pthread_cond_destroy(&ctx->ev.ended_cv);
}

/*
 * cli.h — scrabble-cli, a terminal client of scrabble.v1.Edge for a person.
 *
 * One context per process (cli_ctx): the options, the channel to the
 * gateway, the session (token file), and the live-event machinery of
 * `watch` and `shell`. Commands are a table (commands.c); every command
 * returns one of the exit codes below and prints errors in words.
 *
 * Threading: the main thread runs commands and owns stdout. Live events
 * arrive on the runtime's client loop thread; events.c formats them there
 * and hands each line to the main thread through a pipe, so nothing but the
 * main thread ever writes to the terminal.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "rpc/rpc.h"

/* Exit codes. */
enum {
    CLI_OK = 0,     /* done */
    CLI_EFAIL = 1,  /* the server said no, or could not be reached */
    CLI_EUSAGE = 2, /* bad command line or bad input */
};

typedef struct cli_options {
    char addr[256];       /* gateway target */
    char token_file[512]; /* "" -> $HOME/.config/scrabble/token */
    char color[16];       /* auto | always | never */
    int timeout_ms;       /* per call */
    char tls_ca[256];
    char tls_cert[256];
    char tls_key[256];
    char tls_server_name[128];
} cli_options;

/* The live-event subscription (events.c). */
typedef struct cli_events {
    pthread_mutex_t mu;
    rpc_client_stream *stream; /* NULL when none is open; guarded by mu */
    int pipe_rd, pipe_wr;      /* loop thread -> main thread, one line per write */
    bool want;                 /* main thread: keep a stream open */
    int backoff_ms;            /* main thread: next reconnect delay */
    int64_t reconnect_at_ms;   /* main thread: 0 = none scheduled */
    unsigned dropped;          /* lines lost to a full pipe; guarded by mu */
    unsigned gen;              /* generation of the current stream; guarded by mu */
    int live;                  /* streams whose on_end has not run yet; guarded by mu */
    pthread_cond_t ended_cv;   /* signalled when live drops */
    char carry[4096];          /* main thread: a partly read line */
    size_t carry_len;
} cli_events;

typedef struct cli_ctx {
    cli_options opt;
    rpc_tls_config tls;
    rpc_channel *ch;
    /* Session, from the token file (or a login in this process). */
    char token[512];
    char handle[128];
    int64_t account_id;
    char auth[600]; /* "Bearer <token>" */
    rpc_metadata md[1];
    bool color;       /* ANSI colours on stdout */
    bool interactive; /* inside `shell` */
    cli_events ev;
} cli_ctx;

/* ---- client.c: calls and errors -------------------------------------- */

/* Opens the channel to opt.addr. Returns CLI_OK or CLI_EUSAGE (message
 * printed) on a bad address or TLS file. */
int cli_connect(cli_ctx *ctx);
/* Calls Edge method `name` ("GetState") with the session's token when
 * `auth` is set. On OK, *reply is malloc'ed (free with
 * protobuf_c_message_free_unpacked(*reply, NULL)) and CLI_OK is returned;
 * otherwise the error is printed in words to stderr and CLI_EFAIL returned. */
int cli_call(cli_ctx *ctx, const char *name, const ProtobufCMessage *req,
             const ProtobufCMessageDescriptor *reply_desc, bool auth, ProtobufCMessage **reply);
/* The control line that tells a stream's end through a pipe to the main
 * thread: "\001<gen>\t<code>\t<reason>\t<message>\n", one line (newlines
 * in the message become spaces), truncated to fit size (>= 8). Returns its
 * length. */
size_t cli_end_line(char *line, size_t size, unsigned gen, const rpc_status *st);
/* "illegal play: AZXQ is not a word (illegal_play:invalid_word)" into buf. */
const char *cli_status_words(const rpc_status *st, char *buf, size_t len);
/* Prints "scrabble-cli: <what>" to stderr (printf-style). */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- session.c: the token file --------------------------------------- */

/* Resolves the token file's path into ctx->opt.token_file. */
void cli_session_path(cli_ctx *ctx);
/* Loads token, handle and account id. Returns CLI_OK, or CLI_EFAIL with a
 * message ("not logged in") printed. */
int cli_session_load(cli_ctx *ctx);
/* Writes the session (mode 0600, creating the directory). Sets ctx fields. */
int cli_session_save(cli_ctx *ctx, const char *token, const char *handle, int64_t account_id);

/* ---- commands.c ------------------------------------------------------ */

/* Runs one command (argv[0] is its name). Returns an exit code. */
int cli_run_command(cli_ctx *ctx, int argc, char **argv);
/* The commands' usage lines. */
void cli_print_commands(FILE *out);

/* ---- events.c: live events ------------------------------------------- */

int cli_events_init(cli_ctx *ctx);
/* Opens the Subscribe stream (when logged in) and keeps it open: the main
 * thread calls cli_events_pump when the pipe is readable or the reconnect
 * time has come. */
void cli_events_start(cli_ctx *ctx);
/* Cancels the stream and waits (bounded) until every stream opened has
 * ended, so that no callback can still write to the pipe afterwards. */
void cli_events_stop(cli_ctx *ctx);
/* Hands every line waiting in the pipe to emit (events, and notices about
 * the stream), handles stream ends (reconnect with backoff, or give up when
 * the session is refused) and reconnects when it is time. Returns the number
 * of events. */
int cli_events_pump(cli_ctx *ctx, void (*emit)(void *arg, const char *line), void *arg);
/* Milliseconds until the next scheduled reconnect (-1: none). */
int cli_events_timeout(cli_ctx *ctx);
void cli_events_destroy(cli_ctx *ctx);

/* ---- shell.c, watch ---------------------------------------------------- */

int cli_shell(cli_ctx *ctx);
int cli_watch(cli_ctx *ctx);
/* Blocks SIGINT and SIGTERM in the calling thread and returns a signalfd
 * that reads them (-1 on error): how a waiting command notices Ctrl-C. */
int cli_signalfd(void);

/* ---- seek.c: the lobby ------------------------------------------------ */

/* `seek [options]`, `seek list [mine]`, `seek cancel ID` (argv[0] is
 * "seek"). Returns an exit code. */
int cli_seek(cli_ctx *ctx, int argc, char **argv);
/* ---- spectate.c: public games ------------------------------------------ */

/* `watch GAME`: follows a public game as an observer (Watch), printing each
 * move, until it is over (CLI_OK) or Ctrl-C; a broken stream is resumed
 * from the last seq seen. */
int cli_watch_game(cli_ctx *ctx, int64_t game_id);
/* `public [TOKEN]`: one page of the live public games. */
int cli_public_games(cli_ctx *ctx, const char *page_token);

int64_t cli_now_ms(void);

#endif

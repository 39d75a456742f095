/*
 * shell.c — `scrabble-cli shell` (a prompt running the same commands, with
 * live events printed as they arrive) and `scrabble-cli watch`.
 *
 * The main thread waits in poll() on the terminal, the event pipe (see
 * events.c) and a signalfd (SIGINT/SIGTERM stay blocked, as rpc_init left
 * them). On a terminal the prompt is a small line editor in raw mode, so an
 * event can be printed above the line being typed and the line redrawn
 * intact; otherwise lines are read as they come (scripts, pipes).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"

#define SHELL_LINE_MAX 1024
#define SHELL_MAX_WORDS 64

typedef struct shell {
    cli_ctx *ctx;
    bool tty;
    bool raw; /* the terminal is in raw mode (restore at exit) */
    struct termios saved;
    char line[SHELL_LINE_MAX];
    size_t len;
    int esc;      /* 0, or inside an escape sequence: 1 after ESC, 2 after ESC [ */
    bool last_cr; /* the previous key was CR (a CR LF pair is one Enter) */
    bool quit;
    int rc; /* exit code of the last command */
} shell;

int cli_signalfd(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void shell__prompt(shell *sh)
{
    cli_ctx *ctx = sh->ctx;
    const char *who = ctx->token[0] && ctx->handle[0] ? ctx->handle : "scrabble";
    if (ctx->color)
        printf("\033[1m%s>\033[0m ", who);
    else
        printf("%s> ", who);
    if (sh->tty)
        fwrite(sh->line, 1, sh->len, stdout);
    fflush(stdout);
}

/* An event or notice: above the prompt on a terminal. */
static void shell__emit(void *arg, const char *text)
{
    shell *sh = arg;
    if (sh->tty)
        fputs("\r\033[K", stdout);
    if (sh->ctx->color)
        printf("\033[1;36m*\033[0m %s\n", text);
    else
        printf("* %s\n", text);
    if (sh->tty)
        shell__prompt(sh);
    fflush(stdout);
}

static void shell__raw_on(shell *sh)
{
    struct termios t;
    if (tcgetattr(STDIN_FILENO, &sh->saved) != 0)
        return;
    t = sh->saved;
    /* Keep output processing (\n -> \r\n); take every key ourselves,
     * Ctrl-C included (it clears the line instead of killing the shell). */
    t.c_lflag &= (tcflag_t) ~(ICANON | ECHO | ISIG | IEXTEN);
    t.c_iflag &= (tcflag_t) ~(IXON | ICRNL);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
        sh->raw = true;
}

static void shell__raw_off(shell *sh)
{
    if (sh->raw)
        tcsetattr(STDIN_FILENO, TCSADRAIN, &sh->saved);
    sh->raw = false;
}

/* Runs one complete line. */
static void shell__execute(shell *sh, char *text)
{
    char *argv[SHELL_MAX_WORDS + 1];
    int argc;
    char err[128];
    if (cli_split_line(text, argv, SHELL_MAX_WORDS, &argc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        sh->rc = CLI_EUSAGE;
        return;
    }
    if (argc == 0)
        return;
    argv[argc] = NULL;
    if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
        sh->quit = true;
        return;
    }
    /* Raw mode keeps output processing, so commands print as usual; keys
     * typed meanwhile wait in the terminal until the next poll. */
    sh->rc = cli_run_command(sh->ctx, argc, argv);
    if (strcmp(argv[0], "help") == 0)
        printf("  %-28s %s\n", "quit", "leave the shell (or Ctrl-D)");
    fflush(stdout);
}

/* Feeds one key of the line editor. */
static void shell__key(shell *sh, unsigned char c)
{
    if (sh->esc == 1) {
        sh->esc = c == '[' || c == 'O' ? 2 : 0;
        return;
    }
    if (sh->esc == 2) {
        if (c >= 0x40 && c <= 0x7e)
            sh->esc = 0; /* arrows and friends are ignored */
        return;
    }
    bool after_cr = sh->last_cr;
    sh->last_cr = c == '\r';
    if (c == '\n' && after_cr)
        return;
    switch (c) {
    case '\r':
    case '\n':
        fputs("\r\n", stdout);
        sh->line[sh->len] = '\0';
        sh->len = 0;
        shell__execute(sh, sh->line);
        if (!sh->quit)
            shell__prompt(sh);
        return;
    case 3: /* Ctrl-C: drop the line */
        fputs("^C\r\n", stdout);
        sh->len = 0;
        shell__prompt(sh);
        return;
    case 4: /* Ctrl-D: leave on an empty line */
        if (sh->len == 0) {
            fputs("\r\n", stdout);
            sh->quit = true;
        }
        return;
    case 127:
    case 8: /* backspace: one UTF-8 character */
        if (sh->len == 0)
            return;
        while (sh->len > 0 && ((unsigned char)sh->line[sh->len - 1] & 0xc0) == 0x80)
            sh->len--;
        if (sh->len > 0)
            sh->len--;
        fputs("\b \b", stdout);
        break;
    case 21: /* Ctrl-U: clear the line */
        sh->len = 0;
        fputs("\r\033[K", stdout);
        shell__prompt(sh);
        return;
    case 23: /* Ctrl-W: previous word */
        while (sh->len > 0 && sh->line[sh->len - 1] == ' ')
            sh->len--;
        while (sh->len > 0 && sh->line[sh->len - 1] != ' ')
            sh->len--;
        fputs("\r\033[K", stdout);
        shell__prompt(sh);
        return;
    case 12: /* Ctrl-L: clear the screen */
        fputs("\033[H\033[2J", stdout);
        shell__prompt(sh);
        return;
    case 27:
        sh->esc = 1;
        return;
    default:
        if (c < 0x20 || sh->len + 1 >= sizeof sh->line)
            return;
        sh->line[sh->len++] = (char)c;
        fputc(c, stdout);
        break;
    }
    fflush(stdout);
}

/* Not a terminal: whole lines as they come. */
static void shell__bytes(shell *sh, const char *buf, size_t n)
{
    for (size_t i = 0; i < n && !sh->quit; i++) {
        if (buf[i] != '\n') {
            if (sh->len + 1 < sizeof sh->line)
                sh->line[sh->len++] = buf[i];
            continue;
        }
        sh->line[sh->len] = '\0';
        sh->len = 0;
        shell__execute(sh, sh->line);
    }
}

int cli_shell(cli_ctx *ctx)
{
    shell sh = {.ctx = ctx};
    ctx->interactive = true;
    sh.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    int sfd = cli_signalfd();
    if (cli_events_init(ctx) != CLI_OK || sfd < 0) {
        cli_errorf("cannot set up the shell: %s", strerror(errno));
        return CLI_EFAIL;
    }
    /* Quietly: not being logged in is normal at a prompt. */
    FILE *f = fopen(ctx->opt.token_file, "r");
    if (f != NULL) {
        fclose(f);
        if (cli_session_load(ctx) == CLI_OK)
            cli_events_start(ctx);
    }
    if (sh.tty) {
        printf("scrabble-cli shell on %s%s%s; type help, quit or Ctrl-D to leave\n", ctx->opt.addr,
               ctx->token[0] ? ", logged in as " : " (not logged in: login HANDLE PASSWORD)",
               ctx->token[0] ? ctx->handle : "");
        shell__raw_on(&sh);
        shell__prompt(&sh);
    }
    while (!sh.quit) {
        struct pollfd p[3] = {
            {.fd = STDIN_FILENO, .events = POLLIN},
            {.fd = ctx->ev.pipe_rd, .events = POLLIN},
            {.fd = sfd, .events = POLLIN},
        };
        int n = poll(p, 3, cli_events_timeout(ctx));
        if (n < 0 && errno != EINTR)
            break;
        if (p[2].revents & POLLIN)
            break;
        /* Events first: a command typed after an event was shown sees it. */
        cli_events_pump(ctx, shell__emit, &sh);
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[512];
            ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
            if (r <= 0) {
                if (!sh.tty && sh.len > 0) {
                    sh.line[sh.len] = '\0';
                    sh.len = 0;
                    shell__execute(&sh, sh.line);
                }
                break; /* end of input */
            }
            if (sh.tty)
                for (ssize_t i = 0; i < r && !sh.quit; i++)
                    shell__key(&sh, (unsigned char)buf[i]);
            else
                shell__bytes(&sh, buf, (size_t)r);
        }
    }
    shell__raw_off(&sh);
    if (sh.tty)
        fputs("\n", stdout);
    fflush(stdout);
    cli_events_destroy(ctx);
    close(sfd);
    return sh.tty ? CLI_OK : sh.rc;
}

/* watch: time-stamped lines. */
static void watch__emit(void *arg, const char *text)
{
    (void)arg;
    char ts[16];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    printf("%s %s\n", ts, text);
    fflush(stdout);
}

int cli_watch(cli_ctx *ctx)
{
    int sfd = cli_signalfd();
    if (cli_events_init(ctx) != CLI_OK || sfd < 0) {
        cli_errorf("cannot watch: %s", strerror(errno));
        return CLI_EFAIL;
    }
    fprintf(stderr, "watching live events for %s on %s (Ctrl-C stops)\n",
            ctx->handle[0] ? ctx->handle : "you", ctx->opt.addr);
    cli_events_start(ctx);
    int rc = CLI_OK;
    for (;;) {
        struct pollfd p[2] = {
            {.fd = ctx->ev.pipe_rd, .events = POLLIN},
            {.fd = sfd, .events = POLLIN},
        };
        int n = poll(p, 2, cli_events_timeout(ctx));
        if (n < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN)
            break;
        cli_events_pump(ctx, watch__emit, NULL);
        if (!ctx->ev.want) {
            rc = CLI_EFAIL; /* the server refused the session */
            break;
        }
    }
    cli_events_destroy(ctx);
    close(sfd);
    return rc;
}

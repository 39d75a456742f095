/*
 * scrabble-cli — a terminal client of the public API (scrabble.v1.Edge).
 *
 *   scrabble-cli [--addr HOST:PORT] COMMAND [ARGS...]
 *
 * Options come from the declarative table below (each with an environment
 * twin SCRABBLE_CLI_<NAME>); `scrabble-cli help` lists the commands.
 * Exit status: 0 done, 1 the server said no (or could not be reached),
 * 2 usage error or bad input.
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rpc/cfg.h"
#include "rpc/log.h"

typedef struct main_config {
    cli_options opt;
    char log_level[16];
} main_config;

static const cfg_option main__options[] = {
    CFG_STR_OPT(main_config, opt.addr, "addr", "127.0.0.1:7000",
                "gateway address (host:port, or dns:///host:port)"),
    CFG_STR_OPT(main_config, opt.token_file, "token-file", "",
                "session file (default ~/.config/scrabble/token)"),
    CFG_STR_OPT(main_config, opt.color, "color", "auto", "auto | always | never"),
    CFG_DUR_OPT(main_config, opt.timeout_ms, "timeout", 100, 600000, "10s",
                "deadline of each call"),
    CFG_STR_OPT(main_config, opt.tls_ca, "tls-ca", "", "CA file: talk TLS and verify the gateway"),
    CFG_STR_OPT(main_config, opt.tls_cert, "tls-cert", "", "client certificate (mutual TLS)"),
    CFG_STR_OPT(main_config, opt.tls_key, "tls-key", "", "client key (mutual TLS)"),
    CFG_STR_OPT(main_config, opt.tls_server_name, "tls-server-name", "",
                "name to verify in the gateway's certificate"),
    CFG_STR_OPT(main_config, log_level, "log-level", "off", "runtime log level on stderr"),
};

static void main__usage(FILE *out, const cfg_table *t)
{
    fputs("usage: scrabble-cli [OPTIONS] COMMAND [ARGS...]\n\n", out);
    cli_print_commands(out);
    fputs("\nexamples:\n"
          "  scrabble-cli register alice s3cret-pass\n"
          "  scrabble-cli invite bob            # bob: scrabble-cli accept 1\n"
          "  scrabble-cli invite bot-club       # play the computer: starts at once\n"
          "  scrabble-cli show 7\n"
          "  scrabble-cli play 7 \"8D QUIXOTIC\"  # row first: across; \"D8 ...\": down\n"
          "  scrabble-cli play 7 \"H4 FA(R)M\"    # (R) is already on the board ('.' too)\n"
          "  scrabble-cli play 7 \"8D QUIxOTIC\"  # lower case: a blank standing for X\n\n",
          out);
    cfg_usage(out, "scrabble-cli", t, 1, "SCRABBLE_CLI_");
    fputs("\nexit status: 0 done, 1 refused by the server or unreachable, 2 bad usage\n", out);
}

static bool main__color(const char *mode)
{
    if (strcmp(mode, "always") == 0)
        return true;
    if (strcmp(mode, "never") == 0)
        return false;
    const char *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL && term && strcmp(term, "dumb") != 0;
}

int main(int argc, char **argv)
{
    static main_config cfg; /* large: keep it off the stack */
    cfg_table table = {main__options, sizeof main__options / sizeof main__options[0], &cfg};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            main__usage(stdout, &table);
            return CLI_OK;
        }
    }
    int *pos = calloc((size_t)argc + 1, sizeof *pos);
    int npos = argc;
    char err[256];
    if (pos == NULL)
        return CLI_EFAIL;
    if (cfg_load(&table, 1, "SCRABBLE_CLI_", "scrabble-cli", argc, argv, 1, pos, &npos, err,
                 sizeof err) != CFG_OK) {
        fprintf(stderr, "scrabble-cli: %s\n(scrabble-cli --help lists the options)\n", err);
        free(pos);
        return CLI_EUSAGE;
    }
    if (strcmp(cfg.opt.color, "auto") && strcmp(cfg.opt.color, "always") &&
        strcmp(cfg.opt.color, "never")) {
        fprintf(stderr, "scrabble-cli: --color must be auto, always or never\n");
        free(pos);
        return CLI_EUSAGE;
    }
    int lvl = log_level_parse(cfg.log_level);
    if (lvl < 0) {
        fprintf(stderr, "scrabble-cli: --log-level must be debug, info, warn, error or off\n");
        free(pos);
        return CLI_EUSAGE;
    }
    if (npos == 0) {
        fputs(
            "usage: scrabble-cli [OPTIONS] COMMAND [ARGS...]   (--help: options and examples)\n\n",
            stderr);
        cli_print_commands(stderr);
        free(pos);
        return CLI_EUSAGE;
    }
    char **args = calloc((size_t)npos + 1, sizeof *args);
    if (args == NULL) {
        free(pos);
        return CLI_EFAIL;
    }
    for (int i = 0; i < npos; i++)
        args[i] = argv[pos[i]];
    free(pos);

    log_threshold = lvl;
    log_set_service("cli");
    rpc_init();
    bool stays = strcmp(args[0], "watch") == 0 || strcmp(args[0], "shell") == 0 ||
                 strcmp(args[0], "seek") == 0;
    if (!stays) {
        /* A one-shot command may be interrupted like any program; watch,
         * shell and seek (which waits for a match, and withdraws the seek
         * on Ctrl-C) keep the signals blocked and read them from a
         * signalfd: a thread the runtime starts later would otherwise take
         * them. */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }

    static cli_ctx ctx;
    ctx.opt = cfg.opt;
    ctx.color = main__color(cfg.opt.color);
    cli_session_path(&ctx);
    int rc = cli_connect(&ctx);
    if (rc == CLI_OK)
        rc = cli_run_command(&ctx, npos, args);
    fflush(stdout);
    if (ctx.ch != NULL)
        rpc_channel_destroy(ctx.ch);
    free(args);
    rpc_shutdown();
    return rc;
}

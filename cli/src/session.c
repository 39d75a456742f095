/*
 * session.c — the token file: three lines, the bearer token, the handle and
 * the account id. Written with mode 0600 in a 0700 directory: the token is
 * a password for as long as the session lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_session_path(cli_ctx *ctx)
{
    if (ctx->opt.token_file[0])
        return;
    const char *home = getenv("HOME");
    snprintf(ctx->opt.token_file, sizeof ctx->opt.token_file, "%s/.config/scrabble/token",
             home && home[0] ? home : ".");
}

static void session__set(cli_ctx *ctx, const char *token, const char *handle, int64_t id)
{
    snprintf(ctx->token, sizeof ctx->token, "%s", token);
    snprintf(ctx->handle, sizeof ctx->handle, "%s", handle ? handle : "");
    ctx->account_id = id;
    snprintf(ctx->auth, sizeof ctx->auth, "Bearer %s", ctx->token);
    ctx->md[0].key = "authorization";
    ctx->md[0].value = ctx->auth;
}

static void session__chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

int cli_session_load(cli_ctx *ctx)
{
    if (ctx->token[0])
        return CLI_OK;
    FILE *f = fopen(ctx->opt.token_file, "r");
    if (f == NULL) {
        cli_errorf("not logged in (no %s): run scrabble-cli login HANDLE PASSWORD",
                   ctx->opt.token_file);
        return CLI_EFAIL;
    }
    char token[512] = "", handle[128] = "", id[32] = "";
    if (fgets(token, sizeof token, f) != NULL && fgets(handle, sizeof handle, f) != NULL)
        (void)fgets(id, sizeof id, f);
    fclose(f);
    session__chomp(token);
    session__chomp(handle);
    if (token[0] == '\0') {
        cli_errorf("not logged in (%s is empty): run scrabble-cli login HANDLE PASSWORD",
                   ctx->opt.token_file);
        return CLI_EFAIL;
    }
    session__set(ctx, token, handle, strtoll(id, NULL, 10));
    return CLI_OK;
}

/* mkdir -p of the file's directory, the last level with mode 0700. */
static int session__mkdirs(const char *file)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

int cli_session_save(cli_ctx *ctx, const char *token, const char *handle, int64_t account_id)
{
    session__set(ctx, token, handle, account_id);
    const char *path = ctx->opt.token_file;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (session__mkdirs(path) != 0) {
        cli_errorf("cannot create the directory of %s: %s", path, strerror(errno));
        return CLI_EFAIL;
    }
    /* Write a new file and rename it over the old one: a crash never leaves
     * half a token behind. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        cli_errorf("cannot write %s: %s", tmp, strerror(errno));
        return CLI_EFAIL;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(tmp);
        cli_errorf("cannot write %s: %s", tmp, strerror(errno));
        return CLI_EFAIL;
    }
    fprintf(f, "%s\n%s\n%lld\n", token, handle ? handle : "", (long long)account_id);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        cli_errorf("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return CLI_EFAIL;
    }
    return CLI_OK;
}

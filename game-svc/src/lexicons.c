/*
 * lexicons.c — the lexicons game-svc plays with, memory-mapped once by name
 * and shared read-only by every thread for the life of the process.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game_svc.h"
#include "rpc/log.h"

void game_lexicons_init(game_lexicons *l, const char *dir)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
    snprintf(l->dir, sizeof l->dir, "%s", dir);
}

void game_lexicons_free(game_lexicons *l)
{
    for (int i = 0; i < l->n; i++)
        solver_lexicon_free(l->lex[i]);
    l->n = 0;
    pthread_mutex_destroy(&l->mu);
}

static bool lexicons__name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 31)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return true;
}

const solver_lexicon *game_lexicons_get(game_lexicons *l, const char *name)
{
    const solver_lexicon *found = NULL;
    if (!lexicons__name_ok(name))
        return NULL;
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0) {
            found = l->lex[i];
            goto out;
        }
    if (l->n < GAME_MAX_LEXICONS) {
        char path[512], err[256];
        snprintf(path, sizeof path, "%s/%s.kwg", l->dir, name);
        solver_lexicon *lex = solver_lexicon_load(path, err, sizeof err);
        if (!lex) {
            log_warn("lexicon_load_failed", "path=%s err=\"%s\"", path, err);
            goto out;
        }
        log_info("lexicon_loaded", "name=%s words=%zu", name, solver_lexicon_word_count(lex));
        snprintf(l->names[l->n], sizeof l->names[l->n], "%s", name);
        l->lex[l->n++] = lex;
        found = lex;
    }
out:
    pthread_mutex_unlock(&l->mu);
    return found;
}

static int lexicons__cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

int game_lexicons_list(game_lexicons *l, char names[][32], int max)
{
    int n = 0;
    DIR *d = opendir(l->dir);
    if (!d)
        return 0;
    struct dirent *de;
    while (n < max && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len <= 4 || len - 4 > 31 || strcmp(de->d_name + len - 4, ".kwg") != 0)
            continue;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len - 4), de->d_name);
        if (lexicons__name_ok(name))
            memcpy(names[n++], name, sizeof name);
    }
    closedir(d);
    qsort(names, (size_t)n, 32, lexicons__cmp);
    return n;
}

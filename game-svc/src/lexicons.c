/*
 * lexicons.c — the lexicons game-svc plays with, memory-mapped once by name
 * and shared read-only by every thread for the life of the process.
 */
#include <stdio.h>
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

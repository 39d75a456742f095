/*
 * delset.h — the drafts whose deletion is still owed: a set of
 * (game id, account id) pairs, bounded in size. Pure (no I/O, no locks):
 * the drafts thread owns it.
 *
 * Why a set and not a queue: a deletion that Redis did not confirm is
 * retried until it is done, and while it waits the draft counts as deleted
 * (GetDraft answers empty); a later SaveDraft of the same key overwrites
 * the old draft and so settles the debt. Both need "is this key owed a
 * delete?", and two commits in a row for one player need it only once.
 *
 * Layout: open addressing with linear probing, deletion by backward shift
 * (no tombstones), doubling while at most half full, up to the bound given
 * at creation.
 */
#ifndef GAME_DELSET_H
#define GAME_DELSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct game_draft_ref {
    int64_t game_id;
    int64_t account_id;
} game_draft_ref;

typedef struct game_delset game_delset;

/* A set holding at most max_entries pairs. NULL on OOM. Free with
 * game_delset_destroy. */
game_delset *game_delset_create(size_t max_entries);
void game_delset_destroy(game_delset *s);

enum { GAME_DELSET_ADDED = 1, GAME_DELSET_PRESENT = 0, GAME_DELSET_FULL = -1 };

/* Adds the pair (both ids positive). GAME_DELSET_FULL when the bound is
 * reached or memory runs out; ids that are not positive are refused the
 * same way. */
int game_delset_add(game_delset *s, int64_t game_id, int64_t account_id);
/* Removes the pair; returns whether it was there. */
bool game_delset_remove(game_delset *s, int64_t game_id, int64_t account_id);
bool game_delset_contains(const game_delset *s, int64_t game_id, int64_t account_id);
size_t game_delset_count(const game_delset *s);
/* Copies up to max pairs into out (in no particular order) without
 * removing them; returns how many. */
size_t game_delset_peek(const game_delset *s, game_draft_ref *out, size_t max);

#endif

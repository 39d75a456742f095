/*
 * watch.h — spectators at the gateway: the Watch streams of this gateway
 * (observers of public games) and the ListPublicGames action
 * (docs/API.md, "Spectators").
 *
 * Where an observer's events come from. Not from the per-account event
 * log: an observer is not a recipient of a game's events, and writing a
 * copy of every move for every observer would make one public game watched
 * by thousands cost thousands of rows per move. The game's own move list
 * is already durable and ordered by seq, and game-svc serves it from
 * memory (Game.WatchState: the observer's view, exchanged tiles never
 * included), so an observer stream is a cursor into that list: the seq of
 * the last move sent. Resuming is `after_seq`; nothing else is kept.
 *
 * When to read it. The gateway already receives every committed event of
 * every account (events.h, one PSUBSCRIBE per gateway); an event of a
 * game that has observers here wakes that game. So watching costs no Redis
 * subscription at all, per observer or per game.
 *
 * Fan-out. Observers of one game on this gateway share one record; a
 * wake-up starts at most one WatchState call per game at a time (a wake-up
 * during it marks the game dirty: one more call when it returns), and its
 * moves are sent to every observer of the game. One move watched by N
 * observers here costs one game-svc call and N stream writes.
 *
 * An observer is in one of two states, as a Subscribe stream is:
 *   READING  its own WatchState (with its own identity: the privacy
 *            check is game-svc's, per caller) is in flight, for the
 *            catch-up after after_seq; wake-ups mark it dirty (read again);
 *   LIVE     it is served by the game's shared calls, which ask for the
 *            moves after the lowest cursor among the LIVE observers (each
 *            gets those above its own cursor), on behalf of one of them.
 * The observer joins its game's record before its first read, so a move
 * committed after that read's snapshot either wakes it while READING or
 * is fetched by a shared call once it is LIVE: no gap at the seam.
 *
 * Bounds: --max-observers-per-game observers of one game on this gateway
 * (RESOURCE_EXHAUSTED too_many_observers) and --max-watch-streams-per-account
 * Watch streams of one account (RESOURCE_EXHAUSTED rate_limited); each
 * stream's queue is --subscriber-queue events (slow_consumer past it).
 *
 * Locking: one mutex over the whole registry. Every operation under it is
 * a hash lookup and a walk of one game's observers; rpc_stream_send does
 * not block. Downstream calls start after it is dropped.
 */
#ifndef GW_WATCH_H
#define GW_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gw_watch gw_watch;
typedef struct gw_ctx gw_ctx;
typedef struct gw_req gw_req;

/* The registry; NULL on OOM. */
gw_watch *gw_watch_create(gw_ctx *gw);
/* No stream may be open (after the server drained). */
void gw_watch_destroy(gw_watch *w);

/* A committed event of game_id reached this gateway (seq: the game's seq
 * after it; game_over: it ended the game). Wakes the game's observers
 * here; costs one hash lookup when it has none. Any thread. */
void gw_watch_wake(gw_watch *w, int64_t game_id, int64_t seq, bool game_over);
/* Every watched game reads again (the Redis subscription was (re)made:
 * wake-ups may have been lost). Returns how many games were woken. */
size_t gw_watch_wake_all(gw_watch *w);
/* Ends every Watch stream UNAVAILABLE shutting_down (the gateway drains).
 * Returns how many. */
size_t gw_watch_close_all(gw_watch *w);
/* Observers open on this gateway. */
size_t gw_watch_count(gw_watch *w);

/* The Edge actions. */
void gw_watch_stream(gw_req *r);      /* Watch */
void gw_watch_list_public(gw_req *r); /* ListPublicGames */

#endif

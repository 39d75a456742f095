/*
 * lt.h — the load driver's subcommands and the process-wide pieces they
 * share (the stop flag that SIGINT/SIGTERM raise).
 */
#ifndef LT_LT_H
#define LT_LT_H

#include <stdatomic.h>

#include "mailbox.h"

/* Exit codes: 0 ran (the report tells how it went), 1 could not run
 * (unreachable target, database error), 2 bad input (nothing was sent). */
enum { LT_EXIT_OK = 0, LT_EXIT_FAIL = 1, LT_EXIT_USAGE = 2 };

/* Raised by the signal thread; a driver polls it and wakes from its mailbox
 * through `wake` (set while a driver runs). */
typedef struct lt_stop {
    atomic_int stop;
    _Atomic(lt_mailbox *) wake;
    lt_msg wake_msg; /* posted at most once per driver (kind 0 message) */
    atomic_int wake_posted;
} lt_stop;

void lt_stop_wake(lt_stop *s);

int lt_cmd_ghz(int argc, char **argv, lt_stop *stop);
int lt_cmd_seed(int argc, char **argv, lt_stop *stop);
int lt_cmd_cleanup(int argc, char **argv, lt_stop *stop);
int lt_cmd_run(int argc, char **argv, lt_stop *stop);
int lt_cmd_hold(int argc, char **argv, lt_stop *stop);

#endif

/*
 * mailbox.h — how completions reach the driver thread. gRPC completions run
 * on rpc_loop threads; they only stamp the time, park the result in a
 * message and post it here. The driver thread owns every player and every
 * schedule, so none of those need a lock: the mailbox is the only shared
 * structure.
 */
#ifndef LT_MAILBOX_H
#define LT_MAILBOX_H

#include <pthread.h>
#include <stdint.h>

typedef struct lt_msg {
    struct lt_msg *next;
} lt_msg;

typedef struct lt_mailbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    lt_msg *head, *tail;
    int waiting;
} lt_mailbox;

void lt_mailbox_init(lt_mailbox *mb);
void lt_mailbox_destroy(lt_mailbox *mb);
/* Thread-safe; wakes the driver if it waits. */
void lt_mailbox_post(lt_mailbox *mb, lt_msg *m);
/* Takes every posted message (FIFO list, NULL when none), waiting until one
 * arrives or the monotonic time `until_ns` passes (0: do not wait). */
lt_msg *lt_mailbox_take(lt_mailbox *mb, uint64_t until_ns);

#endif

/*
 * mailbox.c — see mailbox.h.
 */
#include "mailbox.h"

#include <time.h>

#include "clock.h"

void lt_mailbox_init(lt_mailbox *mb)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&mb->mu, NULL);
    pthread_cond_init(&mb->cv, &ca);
    pthread_condattr_destroy(&ca);
    mb->head = mb->tail = NULL;
    mb->waiting = 0;
}

void lt_mailbox_destroy(lt_mailbox *mb)
{
    pthread_mutex_destroy(&mb->mu);
    pthread_cond_destroy(&mb->cv);
}

void lt_mailbox_post(lt_mailbox *mb, lt_msg *m)
{
    m->next = NULL;
    pthread_mutex_lock(&mb->mu);
    if (mb->tail)
        mb->tail->next = m;
    else
        mb->head = m;
    mb->tail = m;
    int wake = mb->waiting;
    pthread_mutex_unlock(&mb->mu);
    if (wake)
        pthread_cond_signal(&mb->cv);
}

lt_msg *lt_mailbox_take(lt_mailbox *mb, uint64_t until_ns)
{
    pthread_mutex_lock(&mb->mu);
    while (mb->head == NULL && until_ns != 0) {
        uint64_t now = lt_now_ns();
        if (now >= until_ns)
            break;
        struct timespec ts = {.tv_sec = (time_t)(until_ns / 1000000000ull),
                              .tv_nsec = (long)(until_ns % 1000000000ull)};
        mb->waiting = 1;
        pthread_cond_timedwait(&mb->cv, &mb->mu, &ts);
        mb->waiting = 0;
    }
    lt_msg *list = mb->head;
    mb->head = mb->tail = NULL;
    pthread_mutex_unlock(&mb->mu);
    return list;
}

/*
 * queue.c — the FIFO of ops between handler threads and the writer or the
 * reader pool: a mutex, a condition variable on the monotonic clock, an
 * intrusive list.
 */
#include <errno.h>
#include <time.h>

#include "store.h"

void store_queue_init(store_queue *q, int wake_at)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    q->head = q->tail = NULL;
    q->len = 0;
    q->wake_at = wake_at;
    q->stopping = false;
}

void store_queue_destroy(store_queue *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

void store_queue_wait(store_queue *q, int64_t deadline_ms)
{
    if (deadline_ms < 0) {
        pthread_cond_wait(&q->cv, &q->mu);
        return;
    }
    struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};
    pthread_cond_timedwait(&q->cv, &q->mu, &ts);
}

bool store_queue_push(store_queue *q, store_op *op)
{
    op->next = NULL;
    op->enqueued_ms = store_now_ms();
    pthread_mutex_lock(&q->mu);
    if (q->stopping) {
        pthread_mutex_unlock(&q->mu);
        return false;
    }
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
    q->len++;
    /* The batcher sleeps either idle (woken by the first op) or in its
     * window (woken early only by a full batch): waking it on every push
     * would cost a futex round per op for nothing. */
    if (q->wake_at == 0 || q->len == 1 || q->len == q->wake_at)
        pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return true;
}

store_op *store_queue_pop_locked(store_queue *q)
{
    store_op *op = q->head;
    if (!op)
        return NULL;
    q->head = op->next;
    if (!q->head)
        q->tail = NULL;
    q->len--;
    op->next = NULL;
    return op;
}

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
    store_queue_wait_us(q, deadline_ms * 1000);
}

void store_queue_wait_us(store_queue *q, int64_t deadline_us)
{
    struct timespec ts = {.tv_sec = deadline_us / 1000000,
                          .tv_nsec = (deadline_us % 1000000) * 1000};
    pthread_cond_timedwait(&q->cv, &q->mu, &ts);
}

bool store_queue_push(store_queue *q, store_op *op)
{
    op->next = NULL;
    op->enqueued_us = store_now_us();
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
    if (q->depth)
        metric_set(q->depth, q->len);
    /* A consumer is only waiting when it has emptied the queue, so the
     * push that makes it non-empty wakes it; the batcher, which streams
     * each op into its open transaction, takes the whole queue every time
     * it wakes, so it is woken once per op that finds the queue empty.
     * Pushes onto a non-empty queue wake nobody (the consumer is busy and
     * will look again) except the one that fills a batch. */
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
    if (q->depth)
        metric_set(q->depth, q->len);
    op->next = NULL;
    return op;
}

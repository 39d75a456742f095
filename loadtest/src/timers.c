/*
 * timers.c — see timers.h.
 */
#include "timers.h"

#include <stdlib.h>

int lt_timers_init(lt_timers *h, int cap)
{
    h->heap = calloc((size_t)cap + 1, sizeof(*h->heap));
    h->n = 0;
    h->cap = cap;
    return h->heap ? 0 : -1;
}

void lt_timers_free(lt_timers *h)
{
    free(h->heap);
    h->heap = NULL;
    h->n = h->cap = 0;
}

void lt_timer_init(lt_timer *t)
{
    t->at = 0;
    t->idx = -1;
}

static void lt_timers__swap(lt_timers *h, int a, int b)
{
    lt_timer *t = h->heap[a];
    h->heap[a] = h->heap[b];
    h->heap[b] = t;
    h->heap[a]->idx = a;
    h->heap[b]->idx = b;
}

static void lt_timers__up(lt_timers *h, int i)
{
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (h->heap[parent]->at <= h->heap[i]->at)
            break;
        lt_timers__swap(h, i, parent);
        i = parent;
    }
}

static void lt_timers__down(lt_timers *h, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < h->n && h->heap[l]->at < h->heap[m]->at)
            m = l;
        if (l + 1 < h->n && h->heap[l + 1]->at < h->heap[m]->at)
            m = l + 1;
        if (m == i)
            return;
        lt_timers__swap(h, i, m);
        i = m;
    }
}

void lt_timers_cancel(lt_timers *h, lt_timer *t)
{
    int i = t->idx;
    if (i < 0)
        return;
    h->n--;
    if (i != h->n) {
        h->heap[i] = h->heap[h->n];
        h->heap[i]->idx = i;
        lt_timers__down(h, i);
        lt_timers__up(h, i);
    }
    t->idx = -1;
}

void lt_timers_set(lt_timers *h, lt_timer *t, uint64_t at)
{
    lt_timers_cancel(h, t);
    t->at = at;
    t->idx = h->n;
    h->heap[h->n++] = t;
    lt_timers__up(h, t->idx);
}

uint64_t lt_timers_next(const lt_timers *h)
{
    return h->n ? h->heap[0]->at : UINT64_MAX;
}

lt_timer *lt_timers_pop_due(lt_timers *h, uint64_t now)
{
    if (h->n == 0 || h->heap[0]->at > now)
        return NULL;
    lt_timer *t = h->heap[0];
    lt_timers_cancel(h, t);
    return t;
}

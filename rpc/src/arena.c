/*
 * arena.c — the per-call bump allocator behind rpc/arena.h.
 *
 * Layout: the arena header lives at the start of its first block, so a call
 * that fits in the first block costs exactly one malloc. When the current
 * block is full a new block of the same size is chained on; a request larger
 * than a quarter of that size gets a block of its own, so one big message does
 * not strand the free tail of the current block. Reset frees the chained
 * blocks and rewinds the first one, which makes a reused arena allocation-free
 * in the common case.
 */
#include "rpc/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPC_ARENA__ALIGN ((size_t)16)
#define RPC_ARENA__DEFAULT_BLOCK ((size_t)4096)
/* The smallest first block we accept: header plus a little room. */
#define RPC_ARENA__MIN_BLOCK ((size_t)256)

/* A chained block; its usable bytes follow the header (rounded to 16). */
typedef struct rpc_arena__block {
    struct rpc_arena__block *next;
} rpc_arena__block;

struct rpc_arena {
    rpc_arena__block *chain; /* malloc'd blocks after the first, newest first */
    char *cur, *end;         /* bump range of the current block */
    char *first_begin;       /* usable start of the first block (for reset) */
    char *first_end;
    size_t block_size; /* size of the ordinary chained blocks */
    size_t used;       /* bytes handed out since create/reset */
    ProtobufCAllocator pbc;
};

static size_t rpc_arena__round(size_t n)
{
    return (n + RPC_ARENA__ALIGN - 1) & ~(RPC_ARENA__ALIGN - 1);
}

static char *rpc_arena__align_ptr(char *p)
{
    uintptr_t u = ((uintptr_t)p + RPC_ARENA__ALIGN - 1) & ~(uintptr_t)(RPC_ARENA__ALIGN - 1);
    return (char *)u;
}

/* Mallocs a chained block with at least `usable` aligned bytes and links it
 * into the arena. Returns the aligned start of its usable bytes, or NULL. */
static char *rpc_arena__new_block(rpc_arena *a, size_t usable, char **end_out)
{
    size_t header = rpc_arena__round(sizeof(rpc_arena__block));
    if (usable > SIZE_MAX - header - RPC_ARENA__ALIGN)
        return NULL;
    /* The extra ALIGN bytes make the result independent of malloc's own
     * alignment guarantee. */
    size_t total = header + usable + RPC_ARENA__ALIGN;
    rpc_arena__block *b = malloc(total);
    if (b == NULL)
        return NULL;
    b->next = a->chain;
    a->chain = b;
    char *start = rpc_arena__align_ptr((char *)b + header);
    *end_out = (char *)b + total;
    return start;
}

static void *rpc_arena__pbc_alloc(void *data, size_t size)
{
    return rpc_arena_alloc(data, size);
}

static void rpc_arena__pbc_free(void *data, void *ptr)
{
    /* Everything dies with the arena; protobuf-c's frees are no-ops. */
    (void)data;
    (void)ptr;
}

rpc_arena *rpc_arena_create(size_t first_block)
{
    size_t size = first_block ? first_block : RPC_ARENA__DEFAULT_BLOCK;
    size_t header = rpc_arena__round(sizeof(rpc_arena));
    if (size < header + RPC_ARENA__MIN_BLOCK)
        size = header + RPC_ARENA__MIN_BLOCK;
    if (size > SIZE_MAX - RPC_ARENA__ALIGN)
        return NULL;
    size = rpc_arena__round(size); /* aligned_alloc wants a multiple */

    /* The header sits at the start of the block, so free(a) frees it. */
    rpc_arena *a = aligned_alloc(RPC_ARENA__ALIGN, size);
    if (a == NULL)
        return NULL;
    memset(a, 0, sizeof(*a));
    a->first_begin = (char *)a + header;
    a->first_end = (char *)a + size;
    a->cur = a->first_begin;
    a->end = a->first_end;
    a->block_size = size;
    a->pbc.alloc = rpc_arena__pbc_alloc;
    a->pbc.free = rpc_arena__pbc_free;
    a->pbc.allocator_data = a;
    return a;
}

static void rpc_arena__free_chain(rpc_arena *a)
{
    rpc_arena__block *b = a->chain;
    while (b != NULL) {
        rpc_arena__block *next = b->next;
        free(b);
        b = next;
    }
    a->chain = NULL;
}

void rpc_arena_destroy(rpc_arena *a)
{
    if (a == NULL)
        return;
    rpc_arena__free_chain(a);
    free(a); /* the header is the start of the first block's malloc */
}

void rpc_arena_reset(rpc_arena *a)
{
    rpc_arena__free_chain(a);
    a->cur = a->first_begin;
    a->end = a->first_end;
    a->used = 0;
}

void *rpc_arena_alloc(rpc_arena *a, size_t size)
{
    if (size > SIZE_MAX - RPC_ARENA__ALIGN)
        return NULL;
    /* Zero-byte requests still get a distinct, valid pointer. */
    size_t need = rpc_arena__round(size ? size : 1);

    if ((size_t)(a->end - a->cur) >= need) {
        void *p = a->cur;
        a->cur += need;
        a->used += need;
        return p;
    }

    char *end;
    if (need > a->block_size / 4) {
        /* Own block; the current block keeps its free tail. */
        char *p = rpc_arena__new_block(a, need, &end);
        if (p == NULL)
            return NULL;
        a->used += need;
        return p;
    }
    char *p = rpc_arena__new_block(a, a->block_size, &end);
    if (p == NULL)
        return NULL;
    a->cur = p + need;
    a->end = end;
    a->used += need;
    return p;
}

void *rpc_arena_calloc(rpc_arena *a, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = rpc_arena_alloc(a, n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static char *rpc__arena_copy(rpc_arena *a, const char *s, size_t len)
{
    char *p = rpc_arena_alloc(a, len + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *rpc_arena_strndup(rpc_arena *a, const char *s, size_t n)
{
    return rpc__arena_copy(a, s, strnlen(s, n));
}

char *rpc_arena_strdup(rpc_arena *a, const char *s)
{
    return rpc__arena_copy(a, s, strlen(s));
}

char *rpc_arena_printf(rpc_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* Format straight into the free tail when it fits: one pass, no copy. */
    size_t room = (size_t)(a->end - a->cur);
    int n = vsnprintf(a->cur, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    if ((size_t)n < room) {
        char *p = a->cur;
        size_t need = rpc_arena__round((size_t)n + 1);
        if (need > room) /* rounding past the end: the string still fits */
            need = room;
        a->cur += need;
        a->used += need;
        return p;
    }

    char *p = rpc_arena_alloc(a, (size_t)n + 1);
    if (p == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

ProtobufCAllocator *rpc_arena_allocator(rpc_arena *a)
{
    return &a->pbc;
}

size_t rpc_arena_used(const rpc_arena *a)
{
    return a->used;
}

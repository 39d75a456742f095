/*
 * arena.h — a per-call bump allocator. The decoded request, scratch and the
 * reply of one call come from its arena and die together when the call is
 * done; protobuf-c allocates from it through rpc_arena_allocator().
 */
#ifndef RPC_ARENA_H
#define RPC_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct rpc_arena rpc_arena;

/* A new arena whose first block holds `first_block` bytes (0: 4 KiB), with
 * the arena header inside it. Free with rpc_arena_destroy. NULL on OOM. */
rpc_arena *rpc_arena_create(size_t first_block);
/* Frees every block. */
void rpc_arena_destroy(rpc_arena *a);
/* Frees all but the first block and empties the arena, for reuse. */
void rpc_arena_reset(rpc_arena *a);

/* Memory aligned to 16 bytes, valid until destroy/reset; NULL on OOM. */
void *rpc_arena_alloc(rpc_arena *a, size_t size);
void *rpc_arena_calloc(rpc_arena *a, size_t n, size_t size);
char *rpc_arena_strdup(rpc_arena *a, const char *s);
char *rpc_arena_strndup(rpc_arena *a, const char *s, size_t n);
char *rpc_arena_printf(rpc_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A protobuf-c allocator on this arena (free is a no-op). Owned by the
 * arena. */
ProtobufCAllocator *rpc_arena_allocator(rpc_arena *a);
/* Bytes handed out so far (for tests and metrics). */
size_t rpc_arena_used(const rpc_arena *a);

/* Allocate a protobuf-c message of type T (e.g. Scrabble__V1__Move) from the
 * arena and run its init function. */
#define RPC_ARENA_MSG(a, T, init_fn)                                                               \
    ({                                                                                             \
        T *m__ = rpc_arena_alloc((a), sizeof(T));                                                  \
        if (m__)                                                                                   \
            init_fn(m__);                                                                          \
        m__;                                                                                       \
    })

#endif

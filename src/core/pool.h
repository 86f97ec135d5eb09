/* gfxep — a caching pool over a slow allocator (cudaMalloc, cudaHostAlloc).
 *
 * Device allocation through the driver costs tens of microseconds and can synchronize the device,
 * so freed blocks are kept, binned by rounded size, and handed out again. Block sizes live in a
 * host-side table (device memory cannot carry headers). Thread-safe.
 *
 * Like ORT's own arena, a freed block may be reused immediately by the next allocation; ordering
 * against in-flight device work is the caller's stream discipline, not the pool's.
 */
#ifndef GFXEP_CORE_POOL_H
#define GFXEP_CORE_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef gfx_status (*gfx_raw_alloc_fn)(void* ctx, size_t bytes, void** out);
typedef void (*gfx_raw_free_fn)(void* ctx, void* ptr);

typedef struct gfx_pool gfx_pool;

typedef struct gfx_pool_stats {
  uint64_t in_use;          /* bytes handed out now (rounded sizes) */
  uint64_t max_in_use;
  uint64_t held;            /* bytes obtained from the raw allocator and not returned */
  uint64_t num_allocs;      /* successful gfx_pool_alloc calls */
  uint64_t num_raw_allocs;  /* successful allocations from the raw allocator */
  uint64_t max_alloc_size;
  uint64_t limit;           /* gfx_pool_set_limit's value; 0: none */
} gfx_pool_stats;

/* caching = 0 makes every call go straight to the raw allocator (for measuring what caching saves). */
gfx_status gfx_pool_create(gfx_raw_alloc_fn raw_alloc, gfx_raw_free_fn raw_free, void* ctx, int caching,
                           gfx_pool** out);
/* Returns every cached block to the raw allocator; blocks still handed out are freed too. */
void gfx_pool_destroy(gfx_pool* p);

gfx_status gfx_pool_alloc(gfx_pool* p, size_t bytes, void** out);
/* Freeing NULL does nothing; freeing a pointer the pool did not hand out returns an error. */
gfx_status gfx_pool_free(gfx_pool* p, void* ptr);
/* Returns cached (unused) blocks to the raw allocator. */
void gfx_pool_trim(gfx_pool* p);
/* Caps `held` (bytes obtained from the raw allocator, cached blocks included) at `bytes`; 0 removes the
 * cap. An allocation that needs a new block which would take `held` above the cap first returns the
 * cached blocks to the raw allocator; if it still does not fit, it fails with GFX_ERR_OUT_OF_MEMORY
 * and a message giving the request, the limit and what is held. Reusing a cached block of the right
 * size never fails. Lowering the cap below what is held frees nothing by itself. */
void gfx_pool_set_limit(gfx_pool* p, size_t bytes);
void gfx_pool_get_stats(gfx_pool* p, gfx_pool_stats* out);

/* The size a request is rounded to (exposed for tests). */
size_t gfx_pool_round(size_t bytes);

#endif

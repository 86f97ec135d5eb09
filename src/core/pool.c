#include "core/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Live and cached blocks, keyed by pointer (open addressing, linear probing, tombstones). */
typedef struct block {
  void* ptr;    /* NULL: empty slot; TOMBSTONE: deleted */
  size_t size;  /* rounded size */
  int cached;   /* 1 when free and waiting for reuse */
} block;

#define TOMBSTONE ((void*)(uintptr_t)1)

struct gfx_pool {
  gfx_raw_alloc_fn raw_alloc;
  gfx_raw_free_fn raw_free;
  void* ctx;
  int caching;
  pthread_mutex_t lock;
  block* slots;
  size_t cap;
  size_t used; /* slots not empty: live entries and tombstones (what probing sees) */
  size_t live; /* live entries only (what sizing is about) */
  gfx_pool_stats stats;
};

size_t gfx_pool_round(size_t bytes) {
  /* small blocks in 512-byte steps, large ones in 2 MiB steps: few distinct sizes, bounded waste */
  const size_t small = 512, large = (size_t)2 << 20;
  if (bytes == 0) bytes = 1;
  size_t step = bytes < ((size_t)1 << 20) ? small : large;
  if (bytes > SIZE_MAX - step) return 0;
  return (bytes + step - 1) / step * step;
}

static size_t hash_ptr(const void* p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static block* find_slot(gfx_pool* p, const void* ptr) {
  if (!p->cap) return NULL;
  for (size_t i = hash_ptr(ptr, p->cap), n = 0; n < p->cap; i = (i + 1) & (p->cap - 1), n++) {
    if (p->slots[i].ptr == NULL) return NULL;
    if (p->slots[i].ptr == ptr) return &p->slots[i];
  }
  return NULL;
}

static int insert(gfx_pool* p, void* ptr, size_t size, int cached);

static int rehash(gfx_pool* p, size_t cap) {
  block* old = p->slots;
  size_t old_cap = p->cap;
  p->slots = calloc(cap, sizeof(block));
  if (!p->slots) {
    p->slots = old;
    return 0;
  }
  p->cap = cap;
  p->used = 0;
  p->live = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].ptr && old[i].ptr != TOMBSTONE) insert(p, old[i].ptr, old[i].size, old[i].cached);
  free(old);
  return 1;
}

static int insert(gfx_pool* p, void* ptr, size_t size, int cached) {
  if ((p->used + 1) * 2 > p->cap) {
    /* Rehashing drops tombstones: grow only when live entries need the room, so a table that sees
     * many short-lived blocks stays the size of what is live, not of what was ever allocated. */
    size_t cap = p->cap ? p->cap : 64;
    if ((p->live + 1) * 4 > cap) cap *= 2;
    if (!rehash(p, cap)) return 0;
  }
  size_t i = hash_ptr(ptr, p->cap);
  while (p->slots[i].ptr && p->slots[i].ptr != TOMBSTONE) i = (i + 1) & (p->cap - 1);
  if (!p->slots[i].ptr) p->used++;
  p->live++;
  p->slots[i] = (block){ptr, size, cached};
  return 1;
}

gfx_status gfx_pool_create(gfx_raw_alloc_fn raw_alloc, gfx_raw_free_fn raw_free, void* ctx, int caching,
                           gfx_pool** out) {
  gfx_pool* p = calloc(1, sizeof *p);
  if (!p) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "allocator pool");
  p->raw_alloc = raw_alloc;
  p->raw_free = raw_free;
  p->ctx = ctx;
  p->caching = caching;
  pthread_mutex_init(&p->lock, NULL);
  *out = p;
  return NULL;
}

void gfx_pool_destroy(gfx_pool* p) {
  if (!p) return;
  for (size_t i = 0; i < p->cap; i++)
    if (p->slots[i].ptr && p->slots[i].ptr != TOMBSTONE) p->raw_free(p->ctx, p->slots[i].ptr);
  free(p->slots);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

/* Takes a cached block of exactly this rounded size. Linear in the table: caches stay small (one
 * entry per distinct live tensor size), and it avoids a second index that must be kept in step. */
static block* take_cached(gfx_pool* p, size_t size) {
  for (size_t i = 0; i < p->cap; i++) {
    block* b = &p->slots[i];
    if (b->ptr && b->ptr != TOMBSTONE && b->cached && b->size == size) return b;
  }
  return NULL;
}

/* Returns every cached block to the raw allocator; the lock is held. */
static void trim_locked(gfx_pool* p) {
  for (size_t i = 0; i < p->cap; i++) {
    block* b = &p->slots[i];
    if (b->ptr && b->ptr != TOMBSTONE && b->cached) {
      p->raw_free(p->ctx, b->ptr);
      p->stats.held -= b->size;
      b->ptr = TOMBSTONE;
      p->live--;
    }
  }
}

/* Whether a new block of `size` keeps `held` within the limit (0: no limit). */
static int within_limit(const gfx_pool* p, size_t size) {
  uint64_t limit = p->stats.limit;
  return !limit || (size <= limit && p->stats.held <= limit - size);
}

gfx_status gfx_pool_alloc(gfx_pool* p, size_t bytes, void** out) {
  *out = NULL;
  size_t size = gfx_pool_round(bytes);
  if (!size) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "allocation of %zu bytes is too large", bytes);
  pthread_mutex_lock(&p->lock);
  gfx_status s = NULL;
  block* b = p->caching ? take_cached(p, size) : NULL;
  if (b) {
    b->cached = 0;
    *out = b->ptr;
  } else {
    if (!within_limit(p, size)) {
      /* over the limit with blocks cached: give them back first */
      trim_locked(p);
      if (!within_limit(p, size)) {
        if (size == bytes)
          s = gfx_error(GFX_ERR_OUT_OF_MEMORY,
                        "allocation of %zu bytes would exceed the device_memory_limit of %llu bytes (%llu held)",
                        bytes, (unsigned long long)p->stats.limit, (unsigned long long)p->stats.held);
        else
          s = gfx_error(GFX_ERR_OUT_OF_MEMORY,
                        "allocation of %zu bytes (a block of %zu) would exceed the device_memory_limit of %llu bytes "
                        "(%llu held)",
                        bytes, size, (unsigned long long)p->stats.limit, (unsigned long long)p->stats.held);
      }
    }
    void* ptr = NULL;
    if (!s) {
      s = p->raw_alloc(p->ctx, size, &ptr);
      if (s && p->caching) {
        /* out of memory with blocks cached: give them back and try once more */
        gfx_status_free(s);
        trim_locked(p);
        s = p->raw_alloc(p->ctx, size, &ptr);
      }
    }
    if (!s && !insert(p, ptr, size, 0)) {
      p->raw_free(p->ctx, ptr);
      s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "allocator bookkeeping");
    }
    if (!s) {
      *out = ptr;
      p->stats.held += size;
      p->stats.num_raw_allocs++;
    }
  }
  if (!s) {
    p->stats.num_allocs++;
    p->stats.in_use += size;
    if (p->stats.in_use > p->stats.max_in_use) p->stats.max_in_use = p->stats.in_use;
    if (bytes > p->stats.max_alloc_size) p->stats.max_alloc_size = bytes;
  }
  pthread_mutex_unlock(&p->lock);
  return s;
}

gfx_status gfx_pool_free(gfx_pool* p, void* ptr) {
  if (!ptr) return NULL;
  pthread_mutex_lock(&p->lock);
  block* b = find_slot(p, ptr);
  gfx_status s = NULL;
  if (!b || b->cached) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "free of %p, which this allocator did not hand out (or freed twice)",
                  ptr);
  } else {
    p->stats.in_use -= b->size;
    if (p->caching) {
      b->cached = 1;
    } else {
      p->raw_free(p->ctx, ptr);
      p->stats.held -= b->size;
      b->ptr = TOMBSTONE;
      p->live--;
    }
  }
  pthread_mutex_unlock(&p->lock);
  return s;
}

void gfx_pool_trim(gfx_pool* p) {
  pthread_mutex_lock(&p->lock);
  trim_locked(p);
  pthread_mutex_unlock(&p->lock);
}

void gfx_pool_set_limit(gfx_pool* p, size_t bytes) {
  pthread_mutex_lock(&p->lock);
  p->stats.limit = bytes;
  pthread_mutex_unlock(&p->lock);
}

void gfx_pool_get_stats(gfx_pool* p, gfx_pool_stats* out) {
  pthread_mutex_lock(&p->lock);
  *out = p->stats;
  pthread_mutex_unlock(&p->lock);
}

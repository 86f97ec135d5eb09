/* gfxep — the caching pool (core/pool.h) over a fake raw allocator that counts every call and the
 * bytes it has live, so that what the pool keeps, reuses and gives back can be checked exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define HAVE_MALLINFO2 1
#endif

#include "core/pool.h"
#include "ir_test_util.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* ---- the fake raw allocator ---- */

/* Each raw block carries a header in front of what the pool sees, so a free can be checked and its
 * size subtracted. */
typedef struct raw_header {
  uint64_t magic;
  size_t size;
  uint64_t pad[2]; /* keeps the returned pointer 32-byte aligned */
} raw_header;

#define RAW_LIVE 0x6766786c69766521ULL
#define RAW_DEAD 0x6766786465616421ULL

typedef struct fake_raw {
  pthread_mutex_t lock;
  uint64_t calls;       /* every call of raw_alloc, failed ones included */
  uint64_t successes;   /* calls that returned memory */
  uint64_t frees;
  uint64_t live_bytes;  /* sum of the sizes handed out and not freed */
  uint64_t max_live_bytes;
  uint64_t live_blocks;
  uint64_t bad_frees;   /* frees of memory this allocator does not have live: must stay 0 */
  int fail_next;        /* fail this many of the next calls */
  int fail_always;
} fake_raw;

static void fake_init(fake_raw* f) {
  memset(f, 0, sizeof *f);
  pthread_mutex_init(&f->lock, NULL);
}

static void fake_fini(fake_raw* f) { pthread_mutex_destroy(&f->lock); }

static gfx_status fake_alloc(void* ctx, size_t bytes, void** out) {
  fake_raw* f = ctx;
  pthread_mutex_lock(&f->lock);
  f->calls++;
  int fail = f->fail_always || f->fail_next > 0;
  if (f->fail_next > 0) f->fail_next--;
  pthread_mutex_unlock(&f->lock);
  if (fail) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "fake raw allocator: no memory for %zu bytes", bytes);
  raw_header* h = malloc(sizeof *h + bytes);
  if (!h) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "fake raw allocator: malloc of %zu bytes failed", bytes);
  h->magic = RAW_LIVE;
  h->size = bytes;
  pthread_mutex_lock(&f->lock);
  f->successes++;
  f->live_bytes += bytes;
  if (f->live_bytes > f->max_live_bytes) f->max_live_bytes = f->live_bytes;
  f->live_blocks++;
  pthread_mutex_unlock(&f->lock);
  *out = h + 1;
  return NULL;
}

static void fake_free(void* ctx, void* ptr) {
  fake_raw* f = ctx;
  raw_header* h = (raw_header*)ptr - 1;
  pthread_mutex_lock(&f->lock);
  f->frees++;
  if (h->magic != RAW_LIVE) {
    f->bad_frees++;
    pthread_mutex_unlock(&f->lock);
    return;
  }
  f->live_bytes -= h->size;
  f->live_blocks--;
  pthread_mutex_unlock(&f->lock);
  h->magic = RAW_DEAD;
  free(h);
}

static gfx_pool* make_pool(fake_raw* f, int caching) {
  gfx_pool* p = NULL;
  gfx_status s = gfx_pool_create(fake_alloc, fake_free, f, caching, &p);
  assert_null(s);
  assert_non_null(p);
  return p;
}

/* ---- helpers ---- */

static void* alloc_ok(gfx_pool* p, size_t bytes) {
  void* ptr = NULL;
  expect_ok(gfx_pool_alloc(p, bytes, &ptr));
  assert_non_null(ptr);
  return ptr;
}

static gfx_pool_stats stats_of(gfx_pool* p) {
  gfx_pool_stats st;
  memset(&st, 0xAB, sizeof st);
  gfx_pool_get_stats(p, &st);
  return st;
}

/* ---- rounding ---- */

static void test_round_properties(void** unused) {
  (void)unused;
  const size_t small = 512, large = 2 * MiB;
  assert_int_equal(gfx_pool_round(0), small);
  assert_int_equal(gfx_pool_round(1), small);
  assert_int_equal(gfx_pool_round(512), 512);
  assert_int_equal(gfx_pool_round(513), 1024);
  assert_int_equal(gfx_pool_round(MiB - 1), MiB);
  assert_int_equal(gfx_pool_round(MiB), 2 * MiB);
  assert_int_equal(gfx_pool_round(2 * MiB), 2 * MiB);
  assert_int_equal(gfx_pool_round(2 * MiB + 1), 4 * MiB);

  /* every size below 4 MiB in a coprime stride, plus the edges of each step */
  for (size_t b = 0; b < 4 * MiB; b += 997) {
    for (size_t d = 0; d < 3; d++) {
      size_t bytes = b + d;
      size_t r = gfx_pool_round(bytes);
      size_t want = bytes ? bytes : 1;
      if (r < want) print_error("round(%zu) = %zu\n", bytes, r);
      assert_true(r >= want);
      if (bytes < MiB) {
        assert_int_equal(r % small, 0);
        assert_true(r - want < small);
        assert_true(r <= MiB);
      } else {
        assert_int_equal(r % large, 0);
        assert_true(r - want < large);
      }
      /* a rounded size rounds to itself (1 MiB excepted: from there the step is 2 MiB) */
      if (r != MiB) assert_int_equal(gfx_pool_round(r), r);
    }
  }
  /* large values far from the top */
  for (size_t bytes = 4 * MiB; bytes < ((size_t)1 << 50); bytes = bytes * 3 + 12345) {
    size_t r = gfx_pool_round(bytes);
    assert_true(r >= bytes);
    assert_int_equal(r % large, 0);
    assert_true(r - bytes < large);
  }
  /* sizes that cannot be rounded up without wrapping */
  assert_int_equal(gfx_pool_round(SIZE_MAX), 0);
  assert_int_equal(gfx_pool_round(SIZE_MAX - 1), 0);
  assert_int_equal(gfx_pool_round(SIZE_MAX - large / 2), 0);
  size_t top = gfx_pool_round(SIZE_MAX - large);
  assert_true(top == 0 || (top >= SIZE_MAX - large && top % large == 0));
}

static void test_huge_request_is_out_of_memory(void** unused) {
  (void)unused;
  for (int caching = 0; caching <= 1; caching++) {
    fake_raw f;
    fake_init(&f);
    gfx_pool* p = make_pool(&f, caching);
    void* ptr = (void*)&f;
    expect_error(gfx_pool_alloc(p, SIZE_MAX, &ptr), GFX_ERR_OUT_OF_MEMORY, NULL);
    assert_null(ptr);
    assert_int_equal(f.calls, 0); /* refused before reaching the raw allocator */
    gfx_pool_stats st = stats_of(p);
    assert_int_equal(st.num_allocs, 0);
    assert_int_equal(st.in_use, 0);
    assert_int_equal(st.held, 0);
    gfx_pool_destroy(p);
    fake_fini(&f);
  }
}

/* ---- caching and direct modes ---- */

static void test_caching_reuses_freed_block(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 1);

  void* a = alloc_ok(p, 1000); /* rounds to 1024 */
  assert_int_equal(f.calls, 1);
  assert_int_equal(f.live_bytes, 1024);
  memset(a, 0x5A, 1000); /* the block really has the requested bytes */
  expect_ok(gfx_pool_free(p, a));
  assert_int_equal(f.frees, 0);        /* kept, not returned */
  assert_int_equal(f.live_bytes, 1024);

  /* 700 rounds to the same 1024: the cached block comes back, the raw allocator is not asked */
  void* b = alloc_ok(p, 700);
  assert_ptr_equal(b, a);
  assert_int_equal(f.calls, 1);

  /* a different rounded size needs a new block, even with none cached of that size */
  void* c = alloc_ok(p, 1025);
  assert_ptr_not_equal(c, a);
  assert_int_equal(f.calls, 2);
  assert_int_equal(f.live_bytes, 1024 + 1536);

  /* a cached block of another size is not handed out for this one */
  expect_ok(gfx_pool_free(p, c));
  void* d = alloc_ok(p, 2000); /* 2048 */
  assert_ptr_not_equal(d, c);
  assert_int_equal(f.calls, 3);

  /* two cached blocks of one size: both reused, in any order */
  void* e = alloc_ok(p, 2048);
  assert_int_equal(f.calls, 4);
  expect_ok(gfx_pool_free(p, d));
  expect_ok(gfx_pool_free(p, e));
  void* g1 = alloc_ok(p, 1600);
  void* g2 = alloc_ok(p, 1700);
  assert_int_equal(f.calls, 4);
  assert_true((g1 == d && g2 == e) || (g1 == e && g2 == d));

  /* large blocks too */
  void* big = alloc_ok(p, 3 * MiB);
  expect_ok(gfx_pool_free(p, big));
  void* big2 = alloc_ok(p, 3 * MiB + 12345); /* same 4 MiB step */
  assert_ptr_equal(big2, big);
  assert_int_equal(f.calls, 5);

  assert_int_equal(f.bad_frees, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  assert_int_equal(f.live_blocks, 0);
  assert_int_equal(f.bad_frees, 0);
  fake_fini(&f);
}

static void test_direct_mode_goes_to_raw_every_time(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 0);

  void* a = alloc_ok(p, 1000);
  assert_int_equal(f.calls, 1);
  assert_int_equal(f.live_bytes, 1024);
  expect_ok(gfx_pool_free(p, a));
  assert_int_equal(f.frees, 1); /* returned at once */
  assert_int_equal(f.live_bytes, 0);

  void* ptrs[5];
  for (int i = 0; i < 5; i++) ptrs[i] = alloc_ok(p, 1000);
  assert_int_equal(f.calls, 6); /* same size, no reuse */
  assert_int_equal(f.live_bytes, 5 * 1024);
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.held, 5 * 1024);
  assert_int_equal(st.in_use, 5 * 1024);
  assert_int_equal(st.num_raw_allocs, 6);
  assert_int_equal(st.num_allocs, 6);
  for (int i = 0; i < 5; i++) {
    expect_ok(gfx_pool_free(p, ptrs[i]));
    assert_int_equal(f.live_bytes, (uint64_t)(4 - i) * 1024);
  }
  st = stats_of(p);
  assert_int_equal(st.held, 0);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.max_in_use, 5 * 1024);
  assert_int_equal(f.frees, 6);

  /* trim has nothing to do */
  gfx_pool_trim(p);
  assert_int_equal(f.frees, 6);

  assert_int_equal(f.bad_frees, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

static void test_stats_exact_after_sequence(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 1);
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.max_in_use, 0);
  assert_int_equal(st.held, 0);
  assert_int_equal(st.num_allocs, 0);
  assert_int_equal(st.num_raw_allocs, 0);
  assert_int_equal(st.max_alloc_size, 0);

  void* a = alloc_ok(p, 100);     /* 512 */
  void* b = alloc_ok(p, 600);     /* 1024 */
  void* c = alloc_ok(p, 3 * MiB); /* 4 MiB */
  const uint64_t four = 4 * MiB;
  st = stats_of(p);
  assert_int_equal(st.in_use, 512 + 1024 + four);
  assert_int_equal(st.max_in_use, 512 + 1024 + four);
  assert_int_equal(st.held, 512 + 1024 + four);
  assert_int_equal(st.num_allocs, 3);
  assert_int_equal(st.num_raw_allocs, 3);
  assert_int_equal(st.max_alloc_size, 3 * MiB);

  expect_ok(gfx_pool_free(p, b));
  void* d = alloc_ok(p, 1000); /* 1024: reuses b */
  assert_ptr_equal(d, b);
  st = stats_of(p);
  assert_int_equal(st.in_use, 512 + 1024 + four);
  assert_int_equal(st.num_allocs, 4);
  assert_int_equal(st.num_raw_allocs, 3);

  expect_ok(gfx_pool_free(p, a));
  expect_ok(gfx_pool_free(p, c));
  st = stats_of(p);
  assert_int_equal(st.in_use, 1024);
  assert_int_equal(st.max_in_use, 512 + 1024 + four); /* a high-water mark */
  assert_int_equal(st.held, 512 + 1024 + four);        /* freed blocks stay held */

  void* e = alloc_ok(p, 2 * MiB); /* 2 MiB: the cached 4 MiB block is another size */
  st = stats_of(p);
  assert_int_equal(st.in_use, 1024 + 2 * MiB);
  assert_int_equal(st.held, 512 + 1024 + four + 2 * MiB);
  assert_int_equal(st.num_allocs, 5);
  assert_int_equal(st.num_raw_allocs, 4);
  assert_int_equal(st.max_alloc_size, 3 * MiB);
  assert_int_equal(st.held, f.live_bytes);

  gfx_pool_trim(p); /* returns a (512) and c (4 MiB) */
  st = stats_of(p);
  assert_int_equal(st.held, 1024 + 2 * MiB);
  assert_int_equal(f.live_bytes, 1024 + 2 * MiB);
  assert_int_equal(f.frees, 2);
  assert_int_equal(st.in_use, 1024 + 2 * MiB);

  expect_ok(gfx_pool_free(p, d));
  expect_ok(gfx_pool_free(p, e));
  st = stats_of(p);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.held, 1024 + 2 * MiB);
  assert_int_equal(st.num_allocs, 5);
  assert_int_equal(st.num_raw_allocs, f.successes);

  /* trimmed sizes come from the raw allocator again */
  void* a2 = alloc_ok(p, 100);
  st = stats_of(p);
  assert_int_equal(st.num_raw_allocs, 5);
  assert_int_equal(st.held, 512 + 1024 + 2 * MiB);
  expect_ok(gfx_pool_free(p, a2));

  assert_int_equal(f.bad_frees, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

/* ---- errors ---- */

static void test_bad_frees(void** unused) {
  (void)unused;
  for (int caching = 0; caching <= 1; caching++) {
    fake_raw f;
    fake_init(&f);
    gfx_pool* p = make_pool(&f, caching);
    expect_ok(gfx_pool_free(p, NULL)); /* NULL is fine */

    /* a pointer the pool never handed out, before and after the table exists */
    int local = 0;
    expect_error(gfx_pool_free(p, &local), GFX_ERR_INVALID_ARGUMENT, "did not hand out", NULL);
    void* a = alloc_ok(p, 64);
    expect_error(gfx_pool_free(p, &local), GFX_ERR_INVALID_ARGUMENT, "did not hand out", NULL);
    /* an interior pointer of a live block is not the block */
    expect_error(gfx_pool_free(p, (char*)a + 1), GFX_ERR_INVALID_ARGUMENT, NULL);

    gfx_pool_stats before = stats_of(p);
    expect_ok(gfx_pool_free(p, a));
    gfx_pool_stats after = stats_of(p);
    /* the double free is refused and changes nothing */
    expect_error(gfx_pool_free(p, a), GFX_ERR_INVALID_ARGUMENT, "freed twice", NULL);
    gfx_pool_stats again = stats_of(p);
    assert_int_equal(again.in_use, after.in_use);
    assert_int_equal(again.held, after.held);
    assert_int_equal(before.in_use, after.in_use + 512);
    assert_int_equal(after.in_use, 0);
    assert_int_equal(f.bad_frees, 0); /* never reached the raw allocator twice */
    assert_int_equal(f.frees, caching ? 0 : 1);

    /* in caching mode the block is still usable after the refused double free */
    void* b = alloc_ok(p, 64);
    if (caching) assert_ptr_equal(b, a);
    expect_ok(gfx_pool_free(p, b));

    gfx_pool_destroy(p);
    assert_int_equal(f.live_bytes, 0);
    assert_int_equal(f.bad_frees, 0);
    fake_fini(&f);
  }
}

static void test_raw_failure_trims_cache_and_retries(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 1);
  void* a = alloc_ok(p, 1000); /* 1024 */
  void* b = alloc_ok(p, 8000); /* 8192 */
  void* keep = alloc_ok(p, 100);
  expect_ok(gfx_pool_free(p, a));
  expect_ok(gfx_pool_free(p, b));
  assert_int_equal(f.calls, 3);
  assert_int_equal(f.live_bytes, 1024 + 8192 + 512);

  f.fail_next = 1;
  void* c = alloc_ok(p, 5000); /* 5120: no cached block of that size, raw fails once */
  assert_int_equal(f.calls, 5);  /* the failed call and the retry */
  assert_int_equal(f.successes, 4);
  assert_int_equal(f.frees, 2);  /* both cached blocks went back before the retry */
  assert_int_equal(f.live_bytes, 512 + 5120);
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.held, 512 + 5120);
  assert_int_equal(st.in_use, 512 + 5120);
  assert_int_equal(st.num_allocs, 4);
  assert_int_equal(st.num_raw_allocs, f.successes);
  /* the handed-out block was left alone */
  expect_ok(gfx_pool_free(p, keep));
  memset(c, 1, 5000);
  expect_ok(gfx_pool_free(p, c));

  /* a raw allocator that keeps failing: the error comes back, nothing changes */
  f.fail_always = 1;
  uint64_t calls = f.calls;
  void* d = (void*)&f;
  gfx_status s = gfx_pool_alloc(p, 100000, &d);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_OUT_OF_MEMORY);
  gfx_status_free(s);
  assert_null(d);
  assert_int_equal(f.calls, calls + 2);
  st = stats_of(p);
  assert_int_equal(st.num_allocs, 4);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.held, f.live_bytes); /* the cache was trimmed for the retry: 0 */
  assert_int_equal(st.held, 0);
  f.fail_always = 0;

  /* a cached block of the right size is used without asking the raw allocator */
  void* e = alloc_ok(p, 300);
  expect_ok(gfx_pool_free(p, e));
  f.fail_always = 1;
  void* e2 = alloc_ok(p, 400);
  assert_ptr_equal(e2, e);
  expect_ok(gfx_pool_free(p, e2));
  f.fail_always = 0;

  assert_int_equal(f.bad_frees, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

static void test_direct_mode_raw_failure(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 0);
  f.fail_next = 1;
  void* a = (void*)&f;
  expect_error(gfx_pool_alloc(p, 100, &a), GFX_ERR_OUT_OF_MEMORY, "fake raw allocator", NULL);
  assert_null(a);
  assert_int_equal(f.calls, 1); /* nothing cached, so no retry */
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.num_allocs, 0);
  assert_int_equal(st.num_raw_allocs, 0);
  assert_int_equal(st.held, 0);
  a = alloc_ok(p, 100);
  expect_ok(gfx_pool_free(p, a));
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

static void test_destroy_frees_everything(void** unused) {
  (void)unused;
  for (int caching = 0; caching <= 1; caching++) {
    fake_raw f;
    fake_init(&f);
    gfx_pool* p = make_pool(&f, caching);
    void* ptrs[300];
    /* enough blocks to make the table grow several times */
    for (int i = 0; i < 300; i++) ptrs[i] = alloc_ok(p, (size_t)(i % 7) * 700 + 1);
    for (int i = 0; i < 300; i += 3) expect_ok(gfx_pool_free(p, ptrs[i])); /* some cached, some live */
    for (int i = 0; i < 50; i++) ptrs[i * 3] = alloc_ok(p, (size_t)(i % 5) * 900 + 3);
    gfx_pool_stats st = stats_of(p);
    assert_int_equal(st.held, f.live_bytes);
    assert_true(f.live_blocks > 0);
    gfx_pool_destroy(p);
    assert_int_equal(f.live_bytes, 0);
    assert_int_equal(f.live_blocks, 0);
    assert_int_equal(f.bad_frees, 0);
    assert_int_equal(f.frees, f.successes);
    fake_fini(&f);
  }
  gfx_pool_destroy(NULL); /* harmless */
}

/* ---- threads ---- */

#define THREADS 4
#define OPS_PER_THREAD 10000
#define SLOTS_PER_THREAD 48

typedef struct thread_job {
  gfx_pool* pool;
  uint32_t seed;
  uint64_t allocs, frees;
  uint64_t errors;     /* statuses that should have been NULL */
  uint64_t corruptions; /* a block whose contents changed while this thread owned it */
} thread_job;

static uint32_t next_random(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

static size_t random_size(uint32_t* state) {
  static const size_t bases[] = {1, 100, 511, 512, 513, 4000, 8192, 65537, 300000, 1048575, 1048576, 3145728};
  uint32_t r = next_random(state);
  return bases[r % (sizeof bases / sizeof bases[0])] + (r >> 24) % 3;
}

/* A tag at both ends of a block: if the pool handed one block to two owners, a tag changes. */
static void tag_block(unsigned char* p, size_t bytes, uint64_t tag) {
  memcpy(p, &tag, bytes < 8 ? bytes : 8);
  if (bytes >= 16) memcpy(p + bytes - 8, &tag, 8);
}

static int tag_intact(const unsigned char* p, size_t bytes, uint64_t tag) {
  uint64_t t = 0;
  memcpy(&t, p, bytes < 8 ? bytes : 8);
  uint64_t want = 0;
  memcpy(&want, &tag, bytes < 8 ? bytes : 8);
  if (t != want) return 0;
  if (bytes >= 16) {
    memcpy(&t, p + bytes - 8, 8);
    if (t != tag) return 0;
  }
  return 1;
}

static void* thread_main(void* arg) {
  thread_job* job = arg;
  struct {
    void* ptr;
    size_t bytes;
    uint64_t tag;
  } slots[SLOTS_PER_THREAD];
  memset(slots, 0, sizeof slots);
  uint32_t state = job->seed;
  for (int op = 0; op < OPS_PER_THREAD; op++) {
    uint32_t r = next_random(&state);
    int i = (int)(r % SLOTS_PER_THREAD);
    if (!slots[i].ptr) {
      size_t bytes = random_size(&state);
      void* ptr = NULL;
      gfx_status s = gfx_pool_alloc(job->pool, bytes, &ptr);
      if (s || !ptr) {
        job->errors++;
        gfx_status_free(s);
        continue;
      }
      job->allocs++;
      slots[i].ptr = ptr;
      slots[i].bytes = bytes;
      slots[i].tag = ((uint64_t)job->seed << 32) ^ (uint64_t)op ^ ((uint64_t)r << 16);
      tag_block(ptr, bytes, slots[i].tag);
    } else {
      if (!tag_intact(slots[i].ptr, slots[i].bytes, slots[i].tag)) job->corruptions++;
      gfx_status s = gfx_pool_free(job->pool, slots[i].ptr);
      if (s) {
        job->errors++;
        gfx_status_free(s);
      }
      job->frees++;
      slots[i].ptr = NULL;
    }
  }
  for (int i = 0; i < SLOTS_PER_THREAD; i++) {
    if (!slots[i].ptr) continue;
    if (!tag_intact(slots[i].ptr, slots[i].bytes, slots[i].tag)) job->corruptions++;
    gfx_status s = gfx_pool_free(job->pool, slots[i].ptr);
    if (s) {
      job->errors++;
      gfx_status_free(s);
    }
    job->frees++;
  }
  return NULL;
}

static void run_threads(int caching) {
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, caching);
  thread_job jobs[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    memset(&jobs[t], 0, sizeof jobs[t]);
    jobs[t].pool = p;
    jobs[t].seed = 0x9E3779B9u * (uint32_t)(t + 1) + (uint32_t)caching;
    assert_int_equal(pthread_create(&threads[t], NULL, thread_main, &jobs[t]), 0);
  }
  uint64_t allocs = 0;
  for (int t = 0; t < THREADS; t++) {
    assert_int_equal(pthread_join(threads[t], NULL), 0);
    if (jobs[t].errors || jobs[t].corruptions)
      print_error("thread %d: %llu errors, %llu corruptions\n", t, (unsigned long long)jobs[t].errors,
                  (unsigned long long)jobs[t].corruptions);
    assert_int_equal(jobs[t].errors, 0);
    assert_int_equal(jobs[t].corruptions, 0);
    assert_int_equal(jobs[t].allocs, jobs[t].frees);
    assert_true(jobs[t].allocs > OPS_PER_THREAD / 4);
    allocs += jobs[t].allocs;
  }
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.num_allocs, allocs);
  assert_int_equal(st.held, f.live_bytes); /* no block lost or counted twice */
  assert_int_equal(st.num_raw_allocs, f.successes);
  assert_int_equal(f.bad_frees, 0);
  assert_true(st.max_in_use > 0);
  if (caching) {
    assert_true(st.num_raw_allocs < allocs); /* the cache did its job */
  } else {
    assert_int_equal(st.held, 0);
    assert_int_equal(f.live_bytes, 0);
    assert_int_equal(st.num_raw_allocs, allocs);
  }
  gfx_pool_trim(p);
  st = stats_of(p);
  assert_int_equal(st.held, 0);
  assert_int_equal(f.live_bytes, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  assert_int_equal(f.bad_frees, 0);
  fake_fini(&f);
}

static void test_threads_caching(void** unused) {
  (void)unused;
  run_threads(1);
}

static void test_threads_direct(void** unused) {
  (void)unused;
  run_threads(0);
}

/* ---- the limit (gfx_pool_set_limit: ORT's device_memory_limit option) ---- */

static void test_limit_refuses_trims_and_reuses(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 1);
  gfx_pool_set_limit(p, 4096);
  assert_int_equal(stats_of(p).limit, 4096);

  void* a = alloc_ok(p, 1000); /* 1024 */
  void* b = alloc_ok(p, 2000); /* 2048: 3072 held */
  /* 1536 more would make 4608: refused before the raw allocator is asked, nothing changes */
  void* c = (void*)&f;
  expect_error(gfx_pool_alloc(p, 1500, &c), GFX_ERR_OUT_OF_MEMORY, "allocation of 1500 bytes (a block of 1536)",
               "device_memory_limit of 4096 bytes", "(3072 held)", NULL);
  assert_null(c);
  assert_int_equal(f.calls, 2);
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.held, 3072);
  assert_int_equal(st.in_use, 3072);
  assert_int_equal(st.num_allocs, 2);

  /* a cached block of the right size is reused even at the limit */
  expect_ok(gfx_pool_free(p, a));
  void* a2 = alloc_ok(p, 900);
  assert_ptr_equal(a2, a);
  assert_int_equal(f.calls, 2);
  expect_ok(gfx_pool_free(p, a2));

  /* a new size that only fits once the cache is trimmed: the cached 1024 goes back first */
  c = alloc_ok(p, 1536);
  assert_int_equal(f.frees, 1);
  assert_int_equal(f.calls, 3);
  st = stats_of(p);
  assert_int_equal(st.held, 2048 + 1536);
  assert_int_equal(st.held, f.live_bytes);

  /* the limit itself is allowed: 3584 + 512 = 4096; one block more is not */
  void* d = alloc_ok(p, 512);
  assert_int_equal(stats_of(p).held, 4096);
  void* e = (void*)&f;
  expect_error(gfx_pool_alloc(p, 1, &e), GFX_ERR_OUT_OF_MEMORY, "device_memory_limit of 4096 bytes", "(4096 held)",
               NULL);
  assert_null(e);

  /* lowering the limit below what is held frees nothing and breaks no live block */
  gfx_pool_set_limit(p, 1024);
  assert_int_equal(stats_of(p).held, 4096);
  assert_int_equal(f.live_bytes, 4096);
  expect_ok(gfx_pool_free(p, d));
  void* d2 = alloc_ok(p, 100); /* the cached 512 */
  assert_ptr_equal(d2, d);
  expect_ok(gfx_pool_free(p, d2));
  expect_error(gfx_pool_alloc(p, 5000, &e), GFX_ERR_OUT_OF_MEMORY, "allocation of 5000 bytes", NULL);
  assert_int_equal(stats_of(p).held, 2048 + 1536); /* the refused request trimmed the cached 512 */

  /* a request larger than the limit on its own never reaches the raw allocator */
  uint64_t calls = f.calls;
  expect_error(gfx_pool_alloc(p, 3 * MiB, &e), GFX_ERR_OUT_OF_MEMORY,
               "allocation of 3145728 bytes (a block of 4194304)", "device_memory_limit of 1024 bytes", NULL);
  assert_int_equal(f.calls, calls);

  /* 0 removes the limit */
  gfx_pool_set_limit(p, 0);
  assert_int_equal(stats_of(p).limit, 0);
  void* big = alloc_ok(p, 3 * MiB);
  expect_ok(gfx_pool_free(p, big));
  expect_ok(gfx_pool_free(p, b));
  expect_ok(gfx_pool_free(p, c));
  assert_int_equal(f.bad_frees, 0);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

static void test_limit_in_direct_mode(void** unused) {
  (void)unused;
  fake_raw f;
  fake_init(&f);
  gfx_pool* p = make_pool(&f, 0);
  gfx_pool_set_limit(p, 2 * MiB);
  void* a = alloc_ok(p, MiB + 1); /* a 2 MiB block: the whole limit */
  void* b = (void*)&f;
  expect_error(gfx_pool_alloc(p, 512, &b), GFX_ERR_OUT_OF_MEMORY,
               "allocation of 512 bytes would exceed the device_memory_limit of 2097152 bytes (2097152 held)", NULL);
  assert_null(b);
  assert_int_equal(f.calls, 1);
  expect_ok(gfx_pool_free(p, a)); /* direct: returned at once, so the room is back */
  for (int i = 0; i < 100; i++) {
    void* c = alloc_ok(p, 2 * MiB);
    expect_ok(gfx_pool_free(p, c));
  }
  assert_int_equal(f.max_live_bytes, 2 * MiB);
  gfx_pool_destroy(p);
  assert_int_equal(f.live_bytes, 0);
  fake_fini(&f);
}

/* Threads competing for a limited pool: every refusal is the limit's, and what the raw allocator has
 * live never exceeds the limit at any moment. */
typedef struct limit_job {
  gfx_pool* pool;
  uint32_t seed;
  uint64_t allocs, refusals, errors;
} limit_job;

static void* limit_thread(void* arg) {
  limit_job* job = arg;
  void* slots[16] = {0};
  uint32_t state = job->seed;
  for (int op = 0; op < 20000; op++) {
    uint32_t r = next_random(&state);
    int i = (int)(r % 16);
    if (slots[i]) {
      gfx_status s = gfx_pool_free(job->pool, slots[i]);
      if (s) {
        job->errors++;
        gfx_status_free(s);
      }
      slots[i] = NULL;
      continue;
    }
    gfx_status s = gfx_pool_alloc(job->pool, random_size(&state), &slots[i]);
    if (!s) {
      job->allocs++;
    } else {
      if (gfx_status_code(s) == GFX_ERR_OUT_OF_MEMORY && strstr(gfx_status_message(s), "device_memory_limit"))
        job->refusals++;
      else
        job->errors++;
      gfx_status_free(s);
    }
  }
  for (int i = 0; i < 16; i++) {
    gfx_status s = gfx_pool_free(job->pool, slots[i]);
    if (s) {
      job->errors++;
      gfx_status_free(s);
    }
  }
  return NULL;
}

static void test_limit_holds_under_threads(void** unused) {
  (void)unused;
  for (int caching = 0; caching <= 1; caching++) {
    fake_raw f;
    fake_init(&f);
    gfx_pool* p = make_pool(&f, caching);
    const size_t limit = 12 * MiB;
    gfx_pool_set_limit(p, limit);
    limit_job jobs[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
      memset(&jobs[t], 0, sizeof jobs[t]);
      jobs[t].pool = p;
      jobs[t].seed = 0x51ED270Bu * (uint32_t)(t + 1) + (uint32_t)caching;
      assert_int_equal(pthread_create(&threads[t], NULL, limit_thread, &jobs[t]), 0);
    }
    uint64_t allocs = 0, refusals = 0;
    for (int t = 0; t < THREADS; t++) {
      assert_int_equal(pthread_join(threads[t], NULL), 0);
      assert_int_equal(jobs[t].errors, 0);
      allocs += jobs[t].allocs;
      refusals += jobs[t].refusals;
    }
    gfx_pool_stats st = stats_of(p);
    printf("# limit %zu MiB, %s: %llu allocations, %llu refused, raw high-water mark %.2f MiB\n", limit / MiB,
           caching ? "caching" : "direct", (unsigned long long)allocs, (unsigned long long)refusals,
           (double)f.max_live_bytes / (double)MiB);
    assert_true(refusals > 0); /* the limit was reached */
    assert_true(allocs > refusals);
    assert_true(f.max_live_bytes <= limit);
    assert_true(st.held <= limit);
    assert_int_equal(st.in_use, 0);
    assert_int_equal(st.held, f.live_bytes);
    assert_int_equal(f.bad_frees, 0);
    gfx_pool_destroy(p);
    assert_int_equal(f.live_bytes, 0);
    fake_fini(&f);
  }
}

/* ---- bookkeeping stays bounded by what is live ---- */

/* A raw allocator that never hands out the same address twice (as a device allocator may not), with
 * no memory behind the addresses: the pool only compares and hashes them. */
static uintptr_t next_address;
static uint64_t address_frees;

static gfx_status address_alloc(void* ctx, size_t bytes, void** out) {
  (void)ctx;
  *out = (void*)next_address;
  next_address += (bytes + 4095) / 4096 * 4096;
  return NULL;
}

static void address_free(void* ctx, void* ptr) {
  (void)ctx;
  (void)ptr;
  address_frees++;
}

#ifdef HAVE_MALLINFO2
static size_t heap_in_use(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
#endif

/* One block live at a time, 200,000 times over, in direct mode: the pool's host-side bookkeeping
 * must not grow with the number of blocks it has ever seen. Measured with glibc's mallinfo2 (an
 * ASan build replaces malloc and this measures nothing, so the test passes there). */
static void test_direct_mode_bookkeeping_is_bounded(void** unused) {
  (void)unused;
#ifdef HAVE_MALLINFO2
  next_address = (uintptr_t)1 << 40;
  address_frees = 0;
  gfx_pool* p = NULL;
  expect_ok(gfx_pool_create(address_alloc, address_free, NULL, 0, &p));
  void* ptr = NULL;
  expect_ok(gfx_pool_alloc(p, 100, &ptr));
  expect_ok(gfx_pool_free(p, ptr));
  size_t before = heap_in_use();
  const int rounds = 200000;
  for (int i = 0; i < rounds; i++) {
    expect_ok(gfx_pool_alloc(p, 100, &ptr));
    expect_ok(gfx_pool_free(p, ptr));
  }
  size_t after = heap_in_use();
  gfx_pool_stats st = stats_of(p);
  assert_int_equal(st.in_use, 0);
  assert_int_equal(st.held, 0);
  assert_int_equal(address_frees, (uint64_t)rounds + 1);
  size_t growth = after > before ? after - before : 0;
  if (growth > 256 * KiB)
    print_error("pool bookkeeping grew by %zu bytes over %d alloc/free pairs with one block live at a time\n",
                growth, rounds);
  assert_true(growth <= 256 * KiB);
  gfx_pool_destroy(p);
#else
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_properties),
      cmocka_unit_test(test_huge_request_is_out_of_memory),
      cmocka_unit_test(test_caching_reuses_freed_block),
      cmocka_unit_test(test_direct_mode_goes_to_raw_every_time),
      cmocka_unit_test(test_stats_exact_after_sequence),
      cmocka_unit_test(test_bad_frees),
      cmocka_unit_test(test_raw_failure_trims_cache_and_retries),
      cmocka_unit_test(test_direct_mode_raw_failure),
      cmocka_unit_test(test_destroy_frees_everything),
      cmocka_unit_test(test_threads_caching),
      cmocka_unit_test(test_threads_direct),
      cmocka_unit_test(test_direct_mode_bookkeeping_is_bounded),
      cmocka_unit_test(test_limit_refuses_trims_and_reuses),
      cmocka_unit_test(test_limit_in_direct_mode),
      cmocka_unit_test(test_limit_holds_under_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

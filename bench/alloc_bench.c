/* gfxep — what the caching device allocator saves: the cost of an alloc+free pair through gfx_pool
 * with caching (what ORT's allocations go through by default) against going straight to the
 * backend (cudaMalloc/cudaFree; the "allocator=direct" option), on the first CUDA device.
 * Prints one JSON line. GFXEP_CUDA_MODULE overrides where libgfxep_cuda.so is loaded from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/registry.h"
#include "core/pool.h"

static const gfx_backend* be;
static gfx_dev* dev;

static gfx_status raw_alloc(void* ctx, size_t bytes, void** out) {
  (void)ctx;
  return be->mem_alloc(dev, bytes, out);
}
static void raw_free(void* ctx, void* p) {
  (void)ctx;
  be->mem_free(dev, p);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* p50 and p99 of one alloc+free pair, in microseconds. */
static int measure(int caching, int iterations, double* p50, double* p99) {
  static const size_t sizes[] = {64 << 10, 256 << 10, 1 << 20, 3 << 20, 8 << 20, 16 << 20, 33 << 20, 100 << 10};
  gfx_pool* pool = NULL;
  gfx_status s = gfx_pool_create(raw_alloc, raw_free, NULL, caching, &pool);
  if (s) return -1;
  double* t = malloc(sizeof(double) * (size_t)iterations);
  for (int i = 0; i < iterations; i++) {
    void* p = NULL;
    double t0 = now_us();
    s = gfx_pool_alloc(pool, sizes[i % 8], &p);
    if (!s) s = gfx_pool_free(pool, p);
    t[i] = now_us() - t0;
    if (s) {
      fprintf(stderr, "%s\n", gfx_status_message(s));
      gfx_status_free(s);
      free(t);
      gfx_pool_destroy(pool);
      return -1;
    }
  }
  qsort(t, (size_t)iterations, sizeof *t, cmp);
  *p50 = t[iterations / 2];
  *p99 = t[iterations * 99 / 100];
  free(t);
  gfx_pool_destroy(pool);
  return 0;
}

int main(void) {
  const char* path = getenv("GFXEP_CUDA_MODULE");
  if (path && path[0]) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    gfx_backend_entry_fn entry = h ? (gfx_backend_entry_fn)dlsym(h, "gfxep_cuda_backend") : NULL;
    be = entry ? entry(NULL) : NULL;
  } else {
    be = gfx_registry_find("cuda", NULL);
  }
  gfx_status s = NULL;
  if (!be || be->device_count() < 1 || (s = be->device_get(0, &dev))) {
    gfx_status_free(s);
    printf("# no CUDA device\n");
    return 77;
  }
  double c50, c99, d50, d99;
  if (measure(1, 4000, &c50, &c99) || measure(0, 1000, &d50, &d99)) return 1;
  printf("{\"allocator\": {\"caching_us_p50\": %.2f, \"caching_us_p99\": %.2f, \"direct_us_p50\": %.2f, "
         "\"direct_us_p99\": %.2f, \"speedup_p50\": %.1f}}\n",
         c50, c99, d50, d99, d50 / c50);
  return 0;
}

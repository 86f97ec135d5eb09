/* gfxep — OrtAllocator for a gfxep device: device memory or page-locked host memory, through a
 * caching pool (or straight to the backend with the "direct" option, to measure what caching buys). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "backend/wrap.h"
#include "ort/device_objects.h"
#include "ort/options.h"

typedef struct gfx_allocator {
  OrtAllocator base; /* first */
  gfx_device* device;
  const OrtMemoryInfo* info;
  int host;          /* HOST_ACCESSIBLE: page-locked host memory */
  gfx_pool* pool;
} gfx_allocator;

static gfx_status raw_alloc(void* ctx, size_t bytes, void** out) {
  gfx_allocator* a = ctx;
  return a->host ? gfx_backend_host_alloc(a->device->dev, bytes, out) : gfx_backend_mem_alloc(a->device->dev, bytes, out);
}

static void raw_free(void* ctx, void* ptr) {
  gfx_allocator* a = ctx;
  if (a->host)
    gfx_backend_host_free(a->device->dev, ptr);
  else
    gfx_backend_mem_free(a->device->dev, ptr);
}

static void* ORT_API_CALL alloc(OrtAllocator* this_, size_t size) {
  gfx_allocator* a = (gfx_allocator*)(void*)this_;
  void* p = NULL;
  gfx_status s = gfx_pool_alloc(a->pool, size, &p);
  if (s) {
    /* ORT's Alloc has no status: it reports NULL as out of memory, so log the reason here */
    gfx_ort_log(NULL, ORT_LOGGING_LEVEL_WARNING, "gfxep: allocating %zu bytes on %s device %d failed: %s", size,
                a->device->backend_name, a->device->dev->index, gfx_status_message(s));
    gfx_status_free(s);
    return NULL;
  }
  return p;
}

static void ORT_API_CALL free_(OrtAllocator* this_, void* p) {
  gfx_allocator* a = (gfx_allocator*)(void*)this_;
  gfx_status s = gfx_pool_free(a->pool, p);
  /* a lost device's memory is gone: keep no cached blocks that a recovered device would hand out */
  if (gfx_backend_is_lost(a->device->dev)) gfx_pool_trim(a->pool);
  if (s) {
    gfx_ort_log(NULL, ORT_LOGGING_LEVEL_ERROR, "gfxep: %s", gfx_status_message(s));
    gfx_status_free(s);
  }
}

static const OrtMemoryInfo* ORT_API_CALL info(const OrtAllocator* this_) {
  return ((const gfx_allocator*)(const void*)this_)->info;
}

static void add_stat(OrtKeyValuePairs* kv, const char* key, uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  gfx_ort->AddKeyValuePair(kv, key, buf);
}

static OrtStatus* ORT_API_CALL get_stats(const OrtAllocator* this_, OrtKeyValuePairs** out) {
  gfx_allocator* a = (gfx_allocator*)(void*)this_;
  gfx_pool_stats st;
  gfx_pool_get_stats(a->pool, &st);
  gfx_ort->CreateKeyValuePairs(out);
  add_stat(*out, "InUse", st.in_use);
  add_stat(*out, "TotalAllocated", st.held);
  add_stat(*out, "MaxInUse", st.max_in_use);
  add_stat(*out, "NumAllocs", st.num_allocs);
  add_stat(*out, "NumReserves", st.num_raw_allocs);
  add_stat(*out, "MaxAllocSize", st.max_alloc_size);
  if (st.limit) add_stat(*out, "Limit", st.limit);
  return NULL;
}

OrtStatus* gfx_allocator_create(gfx_device* dev, const OrtMemoryInfo* mem_info, int caching, OrtAllocator** out) {
  *out = NULL;
  gfx_allocator* a = calloc(1, sizeof *a);
  if (!a) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating an allocator");
  a->device = dev;
  const OrtMemoryDevice* md = gfx_ep_api->MemoryInfo_GetMemoryDevice(mem_info);
  a->host = gfx_ep_api->MemoryDevice_GetMemoryType(md) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
  /* hand ORT back the very memory info it registered for this device */
  a->info = a->host ? dev->mem_host : dev->mem_default;
  gfx_status s = gfx_pool_create(raw_alloc, raw_free, a, caching, &a->pool);
  if (s) {
    free(a);
    return gfx_to_ort(s);
  }
  a->base.version = ORT_API_VERSION;
  a->base.Alloc = alloc;
  a->base.Free = free_;
  a->base.Info = info;
  a->base.Reserve = alloc;
  a->base.GetStats = get_stats;
  *out = &a->base;
  return NULL;
}

OrtStatus* gfx_allocator_create_for_ep(gfx_device* dev, const OrtMemoryInfo* mem_info, const gfx_ep_options* o,
                                       OrtAllocator** out) {
  ORT_TRY(gfx_allocator_create(dev, mem_info, o->caching_allocator, out));
  gfx_allocator* a = (gfx_allocator*)(void*)*out;
  if (!a->host && o->device_memory_limit) gfx_pool_set_limit(a->pool, o->device_memory_limit);
  return NULL;
}

void gfx_allocator_destroy(OrtAllocator* base) {
  if (!base) return;
  gfx_allocator* a = (gfx_allocator*)(void*)base;
  gfx_pool_destroy(a->pool);
  free(a);
}

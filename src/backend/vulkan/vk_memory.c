/* gfxep Vulkan backend — buffers, the address tables, copies and fills.
 *
 * Every allocation is one VkBuffer (storage, transfer and SHADER_DEVICE_ADDRESS usage) bound to its
 * own VkDeviceMemory (allocated with DEVICE_ADDRESS_BIT). mem_alloc hands out the buffer's device
 * address rounded up to VK_ALLOC_ALIGNMENT (the buffer is made that much larger); host_alloc hands
 * out the mapped host pointer of HOST_VISIBLE|HOST_COHERENT memory. Two sorted tables under
 * mem_lock map any address inside an allocation back to its buffer and offset. Imported memory
 * (vk_interop.c) is entered in the device table too (external: mem_free refuses it).
 *
 * Copies (see vk_copy for the exact rules):
 *   host -> device  a host_alloc source is copied from its own buffer when the stream runs (like a
 *                   pinned CUDA copy, the caller keeps it unchanged until then); pageable memory is
 *                   copied into a staging buffer at once, so the caller may reuse it on return.
 *   device -> host  a host_alloc destination is written when the stream runs; pageable memory goes
 *                   through a staging buffer, and the call flushes the stream and waits for it
 *                   (bounded) before copying out: a copy to pageable memory is always complete on
 *                   return, stream or not.
 *   device -> device vkCmdCopyBuffer.
 *   With a NULL stream, a copy to or from host-visible device memory (lavapipe, integrated GPUs, BAR
 *   memory) is a plain memcpy.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "core/log.h"

#define BUFFER_USAGE                                                                                      \
  (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | \
   VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)

/* A memory type allowed by bits with all of `need`, preferring those that also have `want`. */
static int pick_type(const VkPhysicalDeviceMemoryProperties* mp, uint32_t bits, VkMemoryPropertyFlags need,
                     VkMemoryPropertyFlags want) {
  int fallback = -1;
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if ((f & want) == want) return (int)i;
    if (fallback < 0) fallback = (int)i;
  }
  return fallback;
}

gfx_status vk_buffer_create(vk_device* d, VkDeviceSize size, int kind, vk_buffer* out) {
  const int host_visible = kind != VK_MEM_DEVICE;
  memset(out, 0, sizeof *out);
  if (size == 0) size = 4;
  if (d->max_alloc && size > d->max_alloc)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY,
                     "vulkan backend: %" PRIu64 " bytes is more than one allocation may hold on device %d (%" PRIu64 ")",
                     (uint64_t)size, d->index, (uint64_t)d->max_alloc);
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = BUFFER_USAGE,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  GFX_TRY(vk_check(vkCreateBuffer(d->device, &bci, NULL, &out->buffer), "vkCreateBuffer(%" PRIu64 " bytes) on device %d",
                   (uint64_t)size, d->index));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(d->device, out->buffer, &req);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int type = kind == VK_MEM_HOST        ? pick_type(&d->mem_props, req.memoryTypeBits, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
             : kind == VK_MEM_CONSTANTS ? pick_type(&d->mem_props, req.memoryTypeBits, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
                                        : pick_type(&d->mem_props, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type < 0) {
    vkDestroyBuffer(d->device, out->buffer, NULL);
    out->buffer = VK_NULL_HANDLE;
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: device %d has no %s memory type for a buffer (type bits 0x%x)",
                     d->index, host_visible ? "host-visible coherent" : "usable", req.memoryTypeBits);
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = &flags,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)type};
  VkResult r = vkAllocateMemory(d->device, &mai, NULL, &out->memory);
  if (r != VK_SUCCESS && kind == VK_MEM_CONSTANTS) {
    /* the host-visible part of device memory (a PCI BAR) can be small: constants then live in host
     * memory, read across the bus, as they would on a device without it */
    int fallback = pick_type(&d->mem_props, req.memoryTypeBits & ~(1u << type), host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (fallback >= 0) {
      type = fallback;
      mai.memoryTypeIndex = (uint32_t)type;
      r = vkAllocateMemory(d->device, &mai, NULL, &out->memory);
    }
  }
  gfx_status s = vk_check(r, "vkAllocateMemory(%" PRIu64 " bytes, type %d) on device %d", (uint64_t)req.size, type, d->index);
  if (!s)
    s = vk_check(vkBindBufferMemory(d->device, out->buffer, out->memory, 0), "vkBindBufferMemory on device %d", d->index);
  VkMemoryPropertyFlags f = d->mem_props.memoryTypes[type].propertyFlags;
  if (!s && (f & host) == host)
    s = vk_check(vkMapMemory(d->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
                 "vkMapMemory(%" PRIu64 " bytes) on device %d", (uint64_t)req.size, d->index);
  if (s) {
    vk_buffer_destroy(d, out);
    return s;
  }
  VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = out->buffer};
  out->address = vkGetBufferDeviceAddress(d->device, &ai);
  out->size = size;
  if (!out->address) {
    vk_buffer_destroy(d, out);
    return gfx_error(GFX_ERR_DEVICE, "vulkan backend: vkGetBufferDeviceAddress returned 0 on device %d", d->index);
  }
  return NULL;
}

void vk_buffer_destroy(vk_device* d, vk_buffer* b) {
  if (b->mapped) vkUnmapMemory(d->device, b->memory);
  if (b->buffer) vkDestroyBuffer(d->device, b->buffer, NULL);
  if (b->memory) vkFreeMemory(d->device, b->memory, NULL);
  memset(b, 0, sizeof *b);
}

/* ---- the tables ---- */

static uintptr_t key_of(const vk_alloc* a, int host) { return host ? (uintptr_t)a->host : (uintptr_t)a->addr; }

/* Index of the last entry whose key is <= key, or -1. */
static ptrdiff_t find_le(vk_alloc* const* t, size_t n, uintptr_t key, int host) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_of(t[mid], host) <= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (ptrdiff_t)lo - 1;
}

static gfx_status table_insert(vk_alloc*** t, size_t* n, size_t* cap, vk_alloc* a, int host) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    vk_alloc** nt = realloc(*t, nc * sizeof *nt);
    if (!nt) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: growing the address table to %zu entries", nc);
    *t = nt;
    *cap = nc;
  }
  size_t at = (size_t)(find_le(*t, *n, key_of(a, host), host) + 1);
  memmove(*t + at + 1, *t + at, (*n - at) * sizeof **t);
  (*t)[at] = a;
  (*n)++;
  return NULL;
}

/* Removes and returns the entry whose key is exactly key, or NULL. */
static vk_alloc* table_remove(vk_alloc** t, size_t* n, uintptr_t key, int host) {
  ptrdiff_t i = find_le(t, *n, key, host);
  if (i < 0 || key_of(t[i], host) != key) return NULL;
  vk_alloc* a = t[i];
  memmove(t + i, t + i + 1, (*n - (size_t)i - 1) * sizeof *t);
  (*n)--;
  return a;
}

static int lookup(vk_device* d, uintptr_t key, size_t bytes, int host, vk_location* out) {
  pthread_mutex_lock(&d->mem_lock);
  vk_alloc** t = host ? d->hosts : d->allocs;
  size_t n = host ? d->n_hosts : d->n_allocs;
  ptrdiff_t i = find_le(t, n, key, host);
  int found = 0;
  if (i >= 0) {
    const vk_alloc* a = t[i];
    uintptr_t start = key_of(a, host);
    uintptr_t off = key - start;
    /* inside [start, start + bytes), or at the start of an empty allocation */
    if ((off < a->bytes || off == 0) && bytes <= a->bytes - off) {
      VkDeviceSize buf_off = (VkDeviceSize)(host ? off : a->addr - a->buf.address + off);
      out->buffer = a->buf.buffer;
      out->offset = buf_off;
      out->mapped = a->buf.mapped ? (char*)a->buf.mapped + buf_off : NULL;
      found = 1;
    }
  }
  pthread_mutex_unlock(&d->mem_lock);
  return found;
}

gfx_status vk_resolve(vk_device* d, const void* addr, size_t bytes, int host, const char* what, vk_location* out) {
  if (lookup(d, (uintptr_t)addr, bytes, host, out)) return NULL;
  return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                   "vulkan backend: %s: [%p, +%zu bytes) is not inside any %s allocation of device %d", what, addr, bytes,
                   host ? "host_alloc" : "mem_alloc", d->index);
}

int vk_is_host_alloc(vk_device* d, const void* ptr, size_t bytes, vk_location* out) {
  return lookup(d, (uintptr_t)ptr, bytes, 1, out);
}

/* ---- allocation entry points ---- */

static gfx_status new_alloc(vk_device* d, size_t bytes, int host, vk_alloc** out) {
  *out = NULL;
  vk_alloc* a = calloc(1, sizeof *a);
  if (!a) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for an allocation record");
  VkDeviceSize size = host ? (VkDeviceSize)bytes : (VkDeviceSize)bytes + VK_ALLOC_ALIGNMENT;
  gfx_status s = vk_buffer_create(d, size, host ? VK_MEM_HOST : VK_MEM_DEVICE, &a->buf);
  if (s) {
    free(a);
    return s;
  }
  a->bytes = bytes;
  a->addr = host ? a->buf.address : (a->buf.address + VK_ALLOC_ALIGNMENT - 1) & ~(VkDeviceAddress)(VK_ALLOC_ALIGNMENT - 1);
  a->host = host ? a->buf.mapped : NULL;
  if (host && !a->host) {
    vk_buffer_destroy(d, &a->buf);
    free(a);
    return gfx_error(GFX_ERR_INTERNAL, "vulkan backend: host allocation on device %d is not mapped", d->index);
  }
  pthread_mutex_lock(&d->mem_lock);
  s = host ? table_insert(&d->hosts, &d->n_hosts, &d->cap_hosts, a, 1)
           : table_insert(&d->allocs, &d->n_allocs, &d->cap_allocs, a, 0);
  pthread_mutex_unlock(&d->mem_lock);
  if (s) {
    vk_buffer_destroy(d, &a->buf);
    free(a);
    return s;
  }
  *out = a;
  return NULL;
}

gfx_status vk_mem_alloc(gfx_dev* dev, size_t bytes, void** out) {
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: mem_alloc: NULL out");
  *out = NULL;
  vk_alloc* a;
  GFX_TRY(gfx_status_wrap(new_alloc(vk_dev(dev), bytes, 0, &a), "mem_alloc(%zu bytes)", bytes));
  *out = (void*)(uintptr_t)a->addr;
  return NULL;
}

static void free_entry(vk_device* d, void* key, int host) {
  if (!key) return;
  pthread_mutex_lock(&d->mem_lock);
  vk_alloc* a = NULL;
  if (!host) { /* an import is released by release_memory, never by mem_free */
    ptrdiff_t i = find_le(d->allocs, d->n_allocs, (uintptr_t)key, 0);
    if (i >= 0 && d->allocs[i]->addr == (VkDeviceAddress)(uintptr_t)key && d->allocs[i]->external) {
      pthread_mutex_unlock(&d->mem_lock);
      gfx_log(GFX_LOG_WARNING, "vulkan backend: mem_free(%p): imported memory of device %d; release the import instead",
              key, d->index);
      return;
    }
  }
  a = host ? table_remove(d->hosts, &d->n_hosts, (uintptr_t)key, 1)
           : table_remove(d->allocs, &d->n_allocs, (uintptr_t)key, 0);
  pthread_mutex_unlock(&d->mem_lock);
  if (!a) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: %s(%p): not an allocation of device %d; ignored",
            host ? "host_free" : "mem_free", key, d->index);
    return;
  }
  vk_buffer_destroy(d, &a->buf);
  free(a);
}

void vk_mem_free(gfx_dev* dev, void* addr) { free_entry(vk_dev(dev), addr, 0); }

gfx_status vk_host_alloc(gfx_dev* dev, size_t bytes, void** out) {
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: host_alloc: NULL out");
  *out = NULL;
  vk_alloc* a;
  GFX_TRY(gfx_status_wrap(new_alloc(vk_dev(dev), bytes, 1, &a), "host_alloc(%zu bytes)", bytes));
  *out = a->host;
  return NULL;
}

void vk_host_free(gfx_dev* dev, void* ptr) { free_entry(vk_dev(dev), ptr, 1); }

gfx_status vk_memory_insert_external(vk_device* d, vk_alloc* a) {
  a->external = 1;
  pthread_mutex_lock(&d->mem_lock);
  gfx_status s = table_insert(&d->allocs, &d->n_allocs, &d->cap_allocs, a, 0);
  pthread_mutex_unlock(&d->mem_lock);
  return s;
}

int vk_memory_remove_external(vk_device* d, vk_alloc* a) {
  pthread_mutex_lock(&d->mem_lock);
  ptrdiff_t i = find_le(d->allocs, d->n_allocs, (uintptr_t)a->addr, 0);
  int found = i >= 0 && d->allocs[i] == a;
  if (found) {
    memmove(d->allocs + i, d->allocs + i + 1, (d->n_allocs - (size_t)i - 1) * sizeof *d->allocs);
    d->n_allocs--;
  }
  pthread_mutex_unlock(&d->mem_lock);
  return found;
}

void vk_memory_counts(vk_device* d, size_t* n_device, size_t* n_host) {
  pthread_mutex_lock(&d->mem_lock);
  *n_device = d->n_allocs;
  *n_host = d->n_hosts;
  pthread_mutex_unlock(&d->mem_lock);
}

gfx_status vk_memory_init(vk_device* d) {
  GFX_TRY(vk_buffer_create(d, 256, VK_MEM_HOST, &d->zeros));
  memset(d->zeros.mapped, 0, 256);
  return NULL;
}

void vk_memory_teardown(vk_device* d) {
  if (d->n_allocs || d->n_hosts)
    gfx_log(GFX_LOG_INFO, "vulkan backend: device %d: freeing %zu device and %zu host allocations left at unload",
            d->index, d->n_allocs, d->n_hosts);
  for (size_t i = 0; i < d->n_allocs; i++) {
    if (d->allocs[i]->external) d->allocs[i]->buf.mapped = NULL; /* the application's host memory: not mapped by us */
    vk_buffer_destroy(d, &d->allocs[i]->buf);
    free(d->allocs[i]);
  }
  for (size_t i = 0; i < d->n_hosts; i++) {
    vk_buffer_destroy(d, &d->hosts[i]->buf);
    free(d->hosts[i]);
  }
  free(d->allocs);
  free(d->hosts);
  d->allocs = d->hosts = NULL;
  d->n_allocs = d->n_hosts = d->cap_allocs = d->cap_hosts = 0;
  if (d->zeros.buffer) vk_buffer_destroy(d, &d->zeros);
}

/* ---- copies ---- */

static void record_copy(VkCommandBuffer cb, VkBuffer src, VkDeviceSize src_off, VkBuffer dst, VkDeviceSize dst_off,
                        VkDeviceSize bytes) {
  VkBufferCopy region = {.srcOffset = src_off, .dstOffset = dst_off, .size = bytes};
  vkCmdCopyBuffer(cb, src, dst, 1, &region);
  vk_cmd_barrier(cb);
}

/* Host memory is read or written when the copy is recorded or waited for, not when a recorded
 * partition replays it (vk_graph.c). */
static gfx_status host_copy_in_capture(const char* direction, size_t bytes) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED,
                   "vulkan backend: a copy of %zu bytes from %s cannot be recorded into a partition", bytes, direction);
}

static gfx_status copy_h2d(vk_device* d, void* dst, const void* src, size_t bytes, void* stream) {
  vk_location to, from;
  GFX_TRY(vk_resolve(d, dst, bytes, 0, "copy host to device: destination", &to));
  int pinned = vk_is_host_alloc(d, src, bytes, &from);
  if (!stream && to.mapped && !pinned) {
    memcpy(to.mapped, src, bytes);
    return NULL;
  }
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status st = vk_stream_capturing(s) ? host_copy_in_capture("host to device", bytes) : vk_stream_cmd(s, &cb);
  if (!st && !pinned) {
    vk_buffer* stage;
    st = vk_stream_staging(s, bytes, &stage);
    if (!st) {
      memcpy(stage->mapped, src, bytes);
      from.buffer = stage->buffer;
      from.offset = 0;
    }
  }
  if (!st) record_copy(cb, from.buffer, from.offset, to.buffer, to.offset, bytes);
  return vk_stream_release(d, stream, s, st);
}

static gfx_status copy_d2h(vk_device* d, void* dst, const void* src, size_t bytes, void* stream) {
  vk_location from, to;
  GFX_TRY(vk_resolve(d, src, bytes, 0, "copy device to host: source", &from));
  int pinned = vk_is_host_alloc(d, dst, bytes, &to);
  if (!stream && from.mapped && !pinned) {
    memcpy(dst, from.mapped, bytes);
    return NULL;
  }
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status st = vk_stream_capturing(s) ? host_copy_in_capture("device to host", bytes) : vk_stream_cmd(s, &cb);
  if (!st && pinned) {
    record_copy(cb, from.buffer, from.offset, to.buffer, to.offset, bytes);
  } else if (!st) {
    /* pageable destination: through staging, complete on return. The wait must not recycle the
     * staging buffer before it is read (a sync's reclaim may free it). */
    vk_buffer* stage;
    st = vk_stream_staging(s, bytes, &stage);
    if (!st) {
      record_copy(cb, from.buffer, from.offset, stage->buffer, 0, bytes);
      st = vk_stream_wait_locked(s);
      if (!st) memcpy(dst, stage->mapped, bytes);
    }
  }
  return vk_stream_release(d, stream, s, st);
}

static gfx_status copy_d2d(vk_device* d, void* dst, const void* src, size_t bytes, void* stream) {
  vk_location from, to;
  GFX_TRY(vk_resolve(d, src, bytes, 0, "copy device to device: source", &from));
  GFX_TRY(vk_resolve(d, dst, bytes, 0, "copy device to device: destination", &to));
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status st = vk_stream_cmd(s, &cb);
  if (!st && vk_stream_capturing(s))
    st = vk_record_copy_by_address(d, cb, (VkDeviceAddress)(uintptr_t)dst, (VkDeviceAddress)(uintptr_t)src, bytes);
  else if (!st)
    record_copy(cb, from.buffer, from.offset, to.buffer, to.offset, bytes);
  return vk_stream_release(d, stream, s, st);
}

gfx_status vk_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: copy: NULL device");
  if (bytes == 0) return NULL;
  if (!dst || !src)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: copy of %zu bytes: NULL %s", bytes,
                     dst ? "source" : "destination");
  vk_device* d = vk_dev(dev);
  switch (kind) {
    case GFX_COPY_HOST_TO_DEVICE: return copy_h2d(d, dst, src, bytes, stream);
    case GFX_COPY_DEVICE_TO_HOST: return copy_d2h(d, dst, src, bytes, stream);
    case GFX_COPY_DEVICE_TO_DEVICE: return copy_d2d(d, dst, src, bytes, stream);
  }
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: copy kind %d is not a gfx_copy_kind", (int)kind);
}

/* vkCmdFillBuffer wants offset and size in multiples of 4: the ends outside that come from d->zeros. */
gfx_status vk_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: memset_zero: NULL device");
  if (bytes == 0) return NULL;
  vk_device* d = vk_dev(dev);
  vk_location to;
  GFX_TRY(vk_resolve(d, dst, bytes, 0, "memset_zero: destination", &to));
  if (!stream && to.mapped) {
    memset(to.mapped, 0, bytes);
    return NULL;
  }
  VkDeviceSize head = (4 - to.offset % 4) % 4;
  if (head > bytes) head = bytes;
  VkDeviceSize mid = (bytes - head) & ~(VkDeviceSize)3;
  VkDeviceSize tail = bytes - head - mid;
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status st = vk_stream_cmd(s, &cb);
  if (!st && vk_stream_capturing(s)) {
    st = vk_record_copy_by_address(d, cb, (VkDeviceAddress)(uintptr_t)dst, 0, bytes);
  } else if (!st) {
    if (head) {
      VkBufferCopy r = {.srcOffset = 0, .dstOffset = to.offset, .size = head};
      vkCmdCopyBuffer(cb, d->zeros.buffer, to.buffer, 1, &r);
    }
    if (mid) vkCmdFillBuffer(cb, to.buffer, to.offset + head, mid, 0);
    if (tail) {
      VkBufferCopy r = {.srcOffset = 0, .dstOffset = to.offset + head + mid, .size = tail};
      vkCmdCopyBuffer(cb, d->zeros.buffer, to.buffer, 1, &r);
    }
    vk_cmd_barrier(cb);
  }
  return vk_stream_release(d, stream, s, st);
}

gfx_status vk_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes) {
  if (!dev || !free_bytes || !total_bytes) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: mem_info: NULL argument");
  vk_device* d = vk_dev(dev);
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                          .pNext = d->has_budget ? &budget : NULL};
  vkGetPhysicalDeviceMemoryProperties2(d->phys, &mp);
  size_t total = 0, avail = 0;
  for (uint32_t h = 0; h < mp.memoryProperties.memoryHeapCount; h++) {
    if (!(mp.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    total += (size_t)mp.memoryProperties.memoryHeaps[h].size;
    if (d->has_budget)
      avail += budget.heapBudget[h] > budget.heapUsage[h] ? (size_t)(budget.heapBudget[h] - budget.heapUsage[h]) : 0;
    else
      avail += (size_t)mp.memoryProperties.memoryHeaps[h].size;
  }
  *free_bytes = avail;
  *total_bytes = total;
  return NULL;
}

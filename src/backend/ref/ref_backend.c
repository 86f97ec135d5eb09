/* gfxep — the reference backend: one "device" that is the host CPU, its memory host memory, and
 * kernels that are plain C loops (ref_kernels.c).
 *
 * Every operation runs to completion before it returns, so streams and events carry no work: they
 * exist only so that callers written for asynchronous backends run unchanged. They are still
 * distinct heap objects, so each handle is non-NULL and unique and a leaked one shows up in a leak
 * checker just as it would on a GPU backend.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <malloc.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "backend/backend.h"
#include "backend/ref/ref_kernels.h"
#include "backend/registry.h"

#define REF_DEVICE_NAME "gfxep reference backend (CPU, plain C; test oracle)"
#define REF_ALIGNMENT ((size_t)64) /* a cache line; enough for the widest host vector loads */

/* Set by inject_device_loss: the kernels, copies and syncs then fail as on a lost device. */
static atomic_int ref_lost;

gfx_status ref_check_alive(const char* what) {
  if (!atomic_load(&ref_lost)) return NULL;
  return gfx_error(GFX_ERR_DEVICE_LOST, "reference backend: %s: device 0 is lost (simulated by inject_device_loss)", what);
}

gfx_status ref_check_device(int device) {
  if (device != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: no device %d (the only device is 0)", device);
  return NULL;
}

/* ---- devices ---- */

static int ref_device_count(void) { return 1; }

/* The host's physical memory, total or available, in bytes; 0 with *ok = 0 when it will not say. */
enum { HOST_TOTAL, HOST_AVAILABLE };
#ifdef _WIN32
static size_t host_memory_bytes(int which, int* ok) {
  MEMORYSTATUSEX m = {.dwLength = sizeof m};
  *ok = GlobalMemoryStatusEx(&m) != 0;
  if (!*ok) return 0;
  unsigned long long v = which == HOST_TOTAL ? m.ullTotalPhys : m.ullAvailPhys;
  return v > SIZE_MAX ? SIZE_MAX : (size_t)v;
}
#else
/* sysconf pages times the page size */
static size_t host_memory_bytes(int which, int* ok) {
  long pages = sysconf(which == HOST_TOTAL ? _SC_PHYS_PAGES : _SC_AVPHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages < 0 || page_size <= 0) {
    *ok = 0;
    return 0;
  }
  *ok = 1;
  if ((unsigned long)pages > SIZE_MAX / (unsigned long)page_size) return SIZE_MAX; /* saturate */
  return (size_t)pages * (size_t)page_size;
}
#endif

/* Aligned heap blocks: C11's aligned_alloc, which Windows' C runtime lacks (_aligned_malloc there,
 * released by _aligned_free rather than free). */
#ifdef _WIN32
static void* heap_aligned(size_t alignment, size_t bytes) { return _aligned_malloc(bytes, alignment); }
static void heap_free(void* p) { _aligned_free(p); }
#else
static void* heap_aligned(size_t alignment, size_t bytes) { return aligned_alloc(alignment, bytes); }
static void heap_free(void* p) { free(p); }
#endif

static gfx_status ref_device_info(gfx_dev* dev, gfx_device_info* out) {
  const int device = dev->index;
  GFX_TRY(ref_check_device(device));
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: device_info given no output");
  memset(out, 0, sizeof *out); /* no uuid, luid, PCI ids or compute capability: none apply */
  snprintf(out->name, sizeof out->name, "%s", REF_DEVICE_NAME);
  int ok;
  out->total_memory = host_memory_bytes(HOST_TOTAL, &ok); /* 0 when the host will not say */
  return NULL;
}

static const gfx_backend ref_backend;
static gfx_dev ref_device = {.backend = &ref_backend, .index = 0, .impl = NULL};

static gfx_status ref_device_get(int index, gfx_dev** out) {
  *out = NULL;
  GFX_TRY(ref_check_device(index));
  *out = &ref_device;
  return NULL;
}

/* ---- memory ---- */

/* aligned_alloc wants a size that is a multiple of the alignment. A 0-byte request still gets a
 * real allocation (one alignment unit) so that every successful call returns a unique pointer. */
static gfx_status ref_aligned_alloc(int device, size_t bytes, void** out, const char* what) {
  GFX_TRY(ref_check_device(device));
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: %s given no output", what);
  *out = NULL;
  if (bytes > SIZE_MAX - (REF_ALIGNMENT - 1))
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: %s of %zu bytes: too large", what, bytes);
  size_t rounded = bytes == 0 ? REF_ALIGNMENT : (bytes + REF_ALIGNMENT - 1) / REF_ALIGNMENT * REF_ALIGNMENT;
  void* p = heap_aligned(REF_ALIGNMENT, rounded);
  if (!p) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: %s of %zu bytes failed", what, bytes);
  *out = p;
  return NULL;
}

static gfx_status ref_mem_alloc(gfx_dev* dev, size_t bytes, void** out) {
  const int device = dev->index;
  return ref_aligned_alloc(device, bytes, out, "mem_alloc");
}

/* Device and host memory are both plain heap memory, whatever `device` says. */
static void ref_mem_free(gfx_dev* dev, void* ptr) {
  (void)dev;
  heap_free(ptr);
}

static gfx_status ref_host_alloc(gfx_dev* dev, size_t bytes, void** out) {
  const int device = dev->index;
  return ref_aligned_alloc(device, bytes, out, "host_alloc");
}

static void ref_host_free(gfx_dev* dev, void* ptr) {
  (void)dev;
  heap_free(ptr);
}

static gfx_status ref_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream) {
  const int device = dev->index;
  (void)stream; /* synchronous */
  GFX_TRY(ref_check_device(device));
  GFX_TRY(ref_check_alive("copy"));
  if (kind != GFX_COPY_HOST_TO_DEVICE && kind != GFX_COPY_DEVICE_TO_HOST && kind != GFX_COPY_DEVICE_TO_DEVICE)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: copy of unknown kind %d", (int)kind);
  if (bytes == 0) return NULL;
  if (!dst || !src)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: copy of %zu bytes with a NULL %s", bytes,
                     dst ? "source" : "destination");
  /* memmove rather than memcpy: a device-to-device copy between overlapping ranges then stays
   * defined instead of silently corrupting the oracle's data. */
  memmove(dst, src, bytes);
  return NULL;
}

static gfx_status ref_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream) {
  const int device = dev->index;
  (void)stream; /* synchronous */
  GFX_TRY(ref_check_device(device));
  if (bytes == 0) return NULL;
  if (!dst) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: memset_zero of %zu bytes at NULL", bytes);
  memset(dst, 0, bytes);
  return NULL;
}

static gfx_status ref_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes) {
  const int device = dev->index;
  GFX_TRY(ref_check_device(device));
  if (!free_bytes || !total_bytes)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: mem_info given no output");
  int total_ok, free_ok;
  size_t total = host_memory_bytes(HOST_TOTAL, &total_ok);
  size_t avail = host_memory_bytes(HOST_AVAILABLE, &free_ok);
  if (!total_ok || !free_ok)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "reference backend: the host does not report its %s memory (sysconf)",
                     total_ok ? "free" : "total");
  *total_bytes = total;
  *free_bytes = avail < total ? avail : total;
  return NULL;
}

/* ---- streams and events ---- */

/* Work is finished when a call returns, so these hold nothing a caller could wait on; they only
 * give each handle its own address. */
typedef struct ref_stream {
  int device;
} ref_stream;

typedef struct ref_event {
  int recorded;
  uint64_t recorded_ns; /* host monotonic clock at the record: work before it is done by then */
} ref_event;

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static gfx_status ref_stream_create(gfx_dev* dev, void** out) {
  const int device = dev->index;
  GFX_TRY(ref_check_device(device));
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: stream_create given no output");
  ref_stream* s = calloc(1, sizeof *s);
  *out = s;
  if (!s) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: stream_create: %zu bytes", sizeof *s);
  s->device = device;
  return NULL;
}

static void ref_stream_destroy(gfx_dev* dev, void* stream) {
  (void)dev;
  free(stream);
}

static gfx_status ref_stream_sync(gfx_dev* dev, void* stream) {
  const int device = dev->index;
  (void)stream; /* nothing is ever pending */
  GFX_TRY(ref_check_device(device));
  return ref_check_alive("stream_sync");
}

static gfx_status ref_event_create(gfx_dev* dev, void** out) {
  const int device = dev->index;
  GFX_TRY(ref_check_device(device));
  if (!out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: event_create given no output");
  ref_event* e = calloc(1, sizeof *e);
  *out = e;
  if (!e) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: event_create: %zu bytes", sizeof *e);
  return NULL;
}

static void ref_event_destroy(gfx_dev* dev, void* event) {
  (void)dev;
  free(event);
}

static gfx_status ref_event_record(gfx_dev* dev, void* event, void* stream) {
  const int device = dev->index;
  (void)stream;
  GFX_TRY(ref_check_device(device));
  if (!event) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: event_record of a NULL event");
  ((ref_event*)event)->recorded = 1;
  ((ref_event*)event)->recorded_ns = monotonic_ns();
  return NULL;
}

static gfx_status ref_stream_wait_event(gfx_dev* dev, void* stream, void* event) {
  const int device = dev->index;
  (void)stream;
  (void)event; /* the work before the event's record is already done */
  return ref_check_device(device);
}

static gfx_status ref_event_sync(gfx_dev* dev, void* event) {
  const int device = dev->index;
  (void)event;
  return ref_check_device(device);
}

static int ref_event_done(gfx_dev* dev, void* event) {
  (void)dev;
  (void)event;
  return 1;
}

static gfx_status ref_device_sync(gfx_dev* dev) {
  const int device = dev->index;
   return ref_check_device(device); }

/* The reference "device" is the host, and its work is done when a call returns: the time between two
 * records is the time the kernels in between took. */
static gfx_status ref_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us) {
  const int device = dev->index;
  GFX_TRY(ref_check_device(device));
  const ref_event* a = start;
  const ref_event* b = end;
  if (!a || !b || !a->recorded || !b->recorded)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: timer_elapsed_us of an unrecorded timer");
  *us = ((double)b->recorded_ns - (double)a->recorded_ns) / 1e3;
  return NULL;
}

/* ---- frame stamps: the host clock, since the work is done when each call returns ---- */

typedef struct ref_stamps {
  int count;
  uint64_t ns[];  /* 0: never written */
} ref_stamps;

static gfx_status ref_stamps_create(gfx_dev* dev, int count, void** out) {
  GFX_TRY(ref_check_device(dev->index));
  if (count <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: stamps_create: count %d", count);
  ref_stamps* s = calloc(1, sizeof *s + (size_t)count * sizeof(uint64_t));
  if (!s) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "reference backend: out of memory for %d stamps", count);
  s->count = count;
  *out = s;
  return NULL;
}

static void ref_stamps_destroy(gfx_dev* dev, void* stamps) {
  (void)dev;
  free(stamps);
}

static gfx_status ref_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream) {
  (void)stream;
  ref_stamps* s = stamps;
  GFX_TRY(ref_check_device(dev->index));
  if (!s || slot < 0 || slot >= s->count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: stamp_write: slot %d outside the %d stamps", slot,
                     s ? s->count : 0);
  s->ns[slot] = monotonic_ns();
  return NULL;
}

static gfx_status ref_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns) {
  ref_stamps* s = stamps;
  GFX_TRY(ref_check_device(dev->index));
  if (!s || slot < 0 || slot >= s->count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: stamp_read_ns: slot %d outside the %d stamps", slot,
                     s ? s->count : 0);
  if (!s->ns[slot]) return gfx_error(GFX_ERR_NOT_READY, "reference backend: stamp %d never written", slot);
  *ns = s->ns[slot];
  return NULL;
}

/* ---- simulated device loss (fault-injection tests) ---- */

static gfx_status ref_inject_device_loss(gfx_dev* dev, void* stream) {
  (void)stream;
  GFX_TRY(ref_check_device(dev->index));
  atomic_store(&ref_lost, 1);
  return ref_check_alive("inject_device_loss");
}

static gfx_status ref_device_recover(gfx_dev* dev) {
  GFX_TRY(ref_check_device(dev->index));
  atomic_store(&ref_lost, 0);
  return NULL;
}

/* ---- the table ---- */

static const gfx_backend ref_backend = {
    .abi_version = GFX_BACKEND_ABI_VERSION,
    .name = "reference",
    .flags = GFX_BACKEND_HOST_MEMORY | GFX_BACKEND_CHANNELS_LAST_CONV,
    .memory_name = "gfxep_reference",
    .memory_id_base = 0,
    .note = "reference backend: plain C on the CPU, slow by design; a test oracle and a fallback where no GPU "
            "backend runs",

    .device_count = ref_device_count,
    .device_get = ref_device_get,
    .device_info = ref_device_info,

    .alignment = REF_ALIGNMENT,
    .mem_alloc = ref_mem_alloc,
    .mem_free = ref_mem_free,
    .host_alloc = ref_host_alloc,
    .host_free = ref_host_free,
    .copy = ref_copy,
    .memset_zero = ref_memset_zero,
    .mem_info = ref_mem_info,

    .stream_create = ref_stream_create,
    .stream_destroy = ref_stream_destroy,
    .stream_sync = ref_stream_sync,
    .event_create = ref_event_create,
    .timer_create = ref_event_create,
    .timer_elapsed_us = ref_timer_elapsed_us,
    .event_destroy = ref_event_destroy,
    .event_record = ref_event_record,
    .stream_wait_event = ref_stream_wait_event,
    .event_sync = ref_event_sync,
    .event_done = ref_event_done,
    .device_sync = ref_device_sync,
    .stamps_create = ref_stamps_create,
    .stamps_destroy = ref_stamps_destroy,
    .stamp_write = ref_stamp_write,
    .stamp_read_ns = ref_stamp_read_ns,
    .inject_device_loss = ref_inject_device_loss,
    .device_recover = ref_device_recover,

    .node_prepare = ref_node_prepare,
    .node_release = ref_node_release,
    .node_run = ref_node_run,

    .can_import_memory = ref_can_import_memory,
    .import_memory = ref_import_memory,
    .release_memory = ref_release_memory,
};

const gfx_backend* gfx_ref_backend_table(void) { return &ref_backend; }

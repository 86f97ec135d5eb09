/* gfxep CUDA backend — frame stamps.
 *
 * A stamp is the GPU's nanosecond clock (%globaltimer), written by a one-thread kernel into host
 * memory mapped for the device (cuda_stamps.cu). Reading one is a plain load on the host: no CUDA
 * call, no synchronization. A slot reads 0 until its write lands; stamp_write clears it first, which
 * is safe because the caller rewrites a slot only after its previous value was read.
 *
 * Replay stamps are two such kernels recorded at the edges of a captured graph. Their slot cannot be
 * chosen per launch without a host call, so the kernels choose it on the device: a counter in device
 * memory numbers the replays of the graph, and replay n writes ring entry n % capacity. Launches of
 * one graph run one after another (CUDA orders them), so the host, which counts its launches, knows
 * which entry each replay writes.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_stamps.h"

typedef struct cuda_stamps {
  int count;
  uint64_t* host;   /* mapped host memory: count clock values, 0 = not written */
  uint64_t* device; /* the same memory as the device addresses it */
} cuda_stamps;

/* Mapped, page-locked host memory the device writes and the host reads in place. */
static gfx_status mapped_alloc(int device, size_t bytes, void** host, void** dev_ptr, const char* what) {
  *host = *dev_ptr = NULL;
  GFX_TRY(cuda_check(cudaHostAlloc(host, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                     "cudaHostAlloc(%zu bytes, mapped) for %s on device %d", bytes, what, device));
  gfx_status s = cuda_check(cudaHostGetDevicePointer(dev_ptr, *host, 0), "cudaHostGetDevicePointer for %s on device %d",
                            what, device);
  if (s) {
    (void)cudaFreeHost(*host);
    *host = NULL;
  }
  return s;
}

gfx_status cuda_stamps_create(gfx_dev* dev, int count, void** out) {
  *out = NULL;
  if (count <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: stamps_create: count %d", count);
  GFX_TRY(cuda_use_device(dev->index));
  cuda_stamps* s = calloc(1, sizeof *s);
  if (!s) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: out of host memory for %d stamps", count);
  s->count = count;
  gfx_status st = mapped_alloc(dev->index, (size_t)count * sizeof(uint64_t), (void**)&s->host, (void**)&s->device,
                               "frame stamps");
  if (st) {
    free(s);
    return st;
  }
  for (int i = 0; i < count; i++) s->host[i] = 0;
  *out = s;
  return NULL;
}

void cuda_stamps_destroy(gfx_dev* dev, void* stamps) {
  cuda_stamps* s = stamps;
  if (!s) return;
  gfx_status st = cuda_use_device(dev->index);
  if (!st) (void)cudaFreeHost(s->host); /* fails only on a lost device: nothing to keep then */
  (void)cudaGetLastError();
  gfx_status_free(st);
  free(s);
}

static gfx_status slot_check(const cuda_stamps* s, int slot, const char* what) {
  if (!s || slot < 0 || slot >= s->count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s: slot %d outside the %d stamps", what, slot,
                     s ? s->count : 0);
  return NULL;
}

gfx_status cuda_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream) {
  cuda_stamps* s = stamps;
  GFX_TRY(slot_check(s, slot, "stamp_write"));
  GFX_TRY(cuda_use_device(dev->index));
  ((volatile uint64_t*)s->host)[slot] = 0;
  /* the clear is ordered before the launch that will overwrite it */
  atomic_thread_fence(memory_order_release);
  return cuda_check(cuda_stamp_launch(s->device + slot, (cudaStream_t)stream), "the stamp kernel (stamp %d) on device %d",
                    slot, dev->index);
}

gfx_status cuda_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns) {
  cuda_stamps* s = stamps;
  GFX_TRY(slot_check(s, slot, "stamp_read_ns"));
  const uint64_t v = ((volatile uint64_t*)s->host)[slot];
  if (!v) return gfx_error(GFX_ERR_NOT_READY, "cuda backend: stamp %d not reached yet on device %d", slot, dev->index);
  *ns = v;
  return NULL;
}

/* ---- replay stamps ---- */

typedef struct cuda_replay_stamps {
  int device;
  uint32_t capacity;
  uint64_t* counter;              /* device memory: replays ended */
  cuda_replay_entry* host;        /* mapped host memory: capacity entries */
  cuda_replay_entry* device_ring; /* the same as the device addresses it */
} cuda_replay_stamps;

gfx_status cuda_replay_stamps_create(gfx_dev* dev, int capacity, void** out) {
  *out = NULL;
  if (capacity <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: replay_stamps_create: capacity %d", capacity);
  GFX_TRY(cuda_use_device(dev->index));
  cuda_replay_stamps* r = calloc(1, sizeof *r);
  if (!r) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: out of host memory for replay stamps");
  r->device = dev->index;
  r->capacity = (uint32_t)capacity;
  gfx_status st = mapped_alloc(dev->index, (size_t)capacity * sizeof(cuda_replay_entry), (void**)&r->host,
                               (void**)&r->device_ring, "replay stamps");
  if (!st)
    st = cuda_check(cudaMalloc((void**)&r->counter, sizeof(uint64_t)), "cudaMalloc(replay counter) on device %d",
                    dev->index);
  /* synchronous: the counter is zero before any capture can record a kernel that reads it */
  if (!st) st = cuda_check(cudaMemset(r->counter, 0, sizeof(uint64_t)), "cudaMemset(replay counter) on device %d", dev->index);
  if (st) {
    if (r->counter) (void)cudaFree(r->counter);
    if (r->host) (void)cudaFreeHost(r->host);
    free(r);
    return st;
  }
  for (int i = 0; i < capacity; i++) r->host[i] = (cuda_replay_entry){0, 0, 0, 0};
  *out = r;
  return NULL;
}

void cuda_replay_stamps_destroy(gfx_dev* dev, void* ring) {
  cuda_replay_stamps* r = ring;
  if (!r) return;
  gfx_status st = cuda_use_device(dev->index);
  if (!st) {
    (void)cudaFree(r->counter);
    (void)cudaFreeHost(r->host);
  }
  (void)cudaGetLastError();
  gfx_status_free(st);
  free(r);
}

gfx_status cuda_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream) {
  cuda_replay_stamps* r = ring;
  if (!r) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: replay_stamp_record: no ring");
  GFX_TRY(cuda_use_device(dev->index));
  return cuda_check(cuda_replay_stamp_launch(r->counter, r->device_ring, r->capacity, end, (cudaStream_t)stream),
                    "the replay stamp kernel (%s) on device %d", end ? "end" : "begin", dev->index);
}

gfx_status cuda_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns) {
  cuda_replay_stamps* r = ring;
  if (!r) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: replay_stamp_read_ns: no ring");
  const cuda_replay_entry* e = &r->host[replay % r->capacity];
  const uint64_t done = e->done;
  atomic_thread_fence(memory_order_acquire);
  const uint64_t b = e->begin_ns, t = e->end_ns;
  atomic_thread_fence(memory_order_acquire);
  const uint64_t started = e->started;
  /* a later replay that began writing the entry makes these figures unreliable, whatever `done` says */
  if (started > replay + 1 || done > replay + 1)
    return gfx_error(GFX_ERR_EXPIRED, "cuda backend: replay %llu's stamps were overwritten by replay %llu on device %d",
                     (unsigned long long)replay, (unsigned long long)(started - 1), dev->index);
  if (done != replay + 1)
    return gfx_error(GFX_ERR_NOT_READY, "cuda backend: replay %llu not ended yet on device %d", (unsigned long long)replay,
                     dev->index);
  *begin_ns = b;
  *end_ns = t;
  return NULL;
}

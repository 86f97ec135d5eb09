/* gfxep CUDA backend — frame stamps, lost devices and their recovery.
 *
 * Stamps are timed CUDA events, one per slot: recording one costs a launch-queue entry and no
 * synchronization, and cudaEventQuery tells without waiting whether the GPU got there.
 *
 * A CUDA context that met a fault in a kernel (illegal address, trap, assert, ...) keeps a sticky
 * error: every later call fails with it. cuda_check reports those codes as GFX_ERR_DEVICE_LOST. The
 * only way back is cudaDeviceReset, which destroys every allocation, stream, event and handle of the
 * device, so cuda_device_recover is only called once gfxep holds nothing on it any more.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_trap.h"

#define RECOVER_WAIT_MS 2000

/* Devices whose driver refused a new context after the reset: not tried again in this process. */
static int unrecoverable[CUDA_MAX_DEVICES];

typedef struct cuda_stamps {
  int count;
  cudaEvent_t events[];
} cuda_stamps;

gfx_status cuda_stamps_create(gfx_dev* dev, int count, void** out) {
  *out = NULL;
  if (count <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: stamps_create: count %d", count);
  GFX_TRY(cuda_use_device(dev->index));
  cuda_stamps* s = calloc(1, sizeof *s + (size_t)count * sizeof(cudaEvent_t));
  if (!s) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: out of host memory for %d stamps", count);
  s->count = count;
  gfx_status st = NULL;
  for (int i = 0; i < count && !st; i++)
    st = cuda_check(cudaEventCreate(&s->events[i]), "cudaEventCreate (stamp %d) on device %d", i, dev->index);
  if (st) {
    cuda_stamps_destroy(dev, s);
    return st;
  }
  *out = s;
  return NULL;
}

void cuda_stamps_destroy(gfx_dev* dev, void* stamps) {
  cuda_stamps* s = stamps;
  if (!s) return;
  gfx_status st = cuda_use_device(dev->index);
  for (int i = 0; i < s->count && !st; i++)
    if (s->events[i]) (void)cudaEventDestroy(s->events[i]); /* fails only on a lost device: nothing to keep then */
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
  return cuda_check(cudaEventRecord(s->events[slot], (cudaStream_t)stream), "cudaEventRecord (stamp %d) on device %d",
                    slot, dev->index);
}

/* NOT_READY is no error: cudaEventQuery's cudaErrorNotReady is cleared so no later launch check sees it. */
static gfx_status stamp_done(cudaEvent_t ev, int device) {
  cudaError_t err = cudaEventQuery(ev);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return gfx_error(GFX_ERR_NOT_READY, "cuda backend: stamp not reached yet on device %d", device);
  }
  return cuda_check(err, "cudaEventQuery (stamp) on device %d", device);
}

gfx_status cuda_stamps_elapsed_us(gfx_dev* dev, void* stamps, int a, int b, double* us) {
  cuda_stamps* s = stamps;
  GFX_TRY(slot_check(s, a, "stamps_elapsed_us"));
  GFX_TRY(slot_check(s, b, "stamps_elapsed_us"));
  GFX_TRY(cuda_use_device(dev->index));
  GFX_TRY(stamp_done(s->events[b], dev->index));
  GFX_TRY(stamp_done(s->events[a], dev->index));
  float ms = 0;
  GFX_TRY(cuda_check(cudaEventElapsedTime(&ms, s->events[a], s->events[b]), "cudaEventElapsedTime (stamps %d, %d) on device %d",
                     a, b, dev->index));
  *us = (double)ms * 1e3;
  return NULL;
}

gfx_status cuda_inject_device_loss(gfx_dev* dev, void* stream) {
  GFX_TRY(cuda_use_device(dev->index));
  GFX_TRY(cuda_check(cuda_trap_stream((cudaStream_t)stream), "launching the trap kernel on device %d", dev->index));
  /* the trap surfaces at the next synchronization; wait here so the loss is seen at once */
  return cuda_check(cudaStreamSynchronize((cudaStream_t)stream), "the injected fault on device %d", dev->index);
}

gfx_status cuda_device_recover(gfx_dev* dev) {
  const int device = dev->index;
  if (device < 0 || device >= CUDA_MAX_DEVICES) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: no device %d", device);
  if (unrecoverable[device])
    return gfx_error(GFX_ERR_DEVICE_LOST,
                     "cuda backend: the driver refused a new context on device %d after the fault; restart the "
                     "process to use the device again",
                     device);
  /* on a context with a sticky error cudaSetDevice itself reports it; the reset is what clears it */
  (void)cudaSetDevice(device);
  (void)cudaGetLastError();
  GFX_TRY(cuda_check(cudaDeviceReset(), "cudaDeviceReset on device %d", device));
  /* the reset destroyed the context: its library handles and loaded kernels are gone with it */
  cuda_forget_context(device);
  /* the driver may take a while to tear the faulted context down: until then a new one is refused
   * (cudaErrorDevicesUnavailable); retried for up to RECOVER_WAIT_MS */
  cudaError_t err = cudaSuccess;
  for (int waited = 0; waited <= RECOVER_WAIT_MS; waited += 50) {
    err = cudaSetDevice(device);
    if (err == cudaSuccess) err = cudaFree(NULL); /* creates the new primary context */
    if (err == cudaSuccess) break;
    (void)cudaGetLastError();
    struct timespec pause = {0, 50L * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  if (err != cudaSuccess) {
    /* measured on the H200 (driver 580): after a trap, cudaErrorDevicesUnavailable for as long as the
     * process lives, a second reset included */
    unrecoverable[device] = 1;
    return gfx_error(GFX_ERR_DEVICE_LOST,
                     "cuda backend: the driver refuses a new context on device %d after the fault (%s %d ms after "
                     "cudaDeviceReset); restart the process to use the device again",
                     device, cudaGetErrorName(err), RECOVER_WAIT_MS);
  }
  return cuda_use_device(device);
}

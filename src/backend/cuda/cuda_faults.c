/* gfxep CUDA backend — lost devices and their recovery.
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

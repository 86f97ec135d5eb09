/* gfxep CUDA backend — cuBLASLt and cuDNN handles per device.
 *
 * Handles are never destroyed: they live as long as the process, and destroying them from an
 * atexit-time path after the driver has begun shutting down is a classic crash. One cuBLASLt handle
 * per device; cuDNN handles are pooled, because each carries a stream and must serve one thread at
 * a time. The pool grows to the number of threads that ever ran a convolution concurrently.
 */
#include <stdlib.h>
#include <threads.h>

#include "backend/cuda/cuda_internal.h"
#include "core/log.h"

typedef struct dnn_pool {
  cudnnHandle_t* idle;
  int n_idle, capacity;
} dnn_pool;

static once_flag lock_once = ONCE_FLAG_INIT;
static mtx_t handles_lock; /* guards blaslt_handles and dnn_pools */
static int handles_lock_ready;

static cublasLtHandle_t blaslt_handles[CUDA_MAX_DEVICES];
static dnn_pool dnn_pools[CUDA_MAX_DEVICES];

static void init_lock(void) { handles_lock_ready = mtx_init(&handles_lock, mtx_plain) == thrd_success; }

static gfx_status lock_handles(void) {
  call_once(&lock_once, init_lock);
  if (!handles_lock_ready || mtx_lock(&handles_lock) != thrd_success)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: cannot lock the library handle tables");
  return NULL;
}

static void unlock_handles(void) { mtx_unlock(&handles_lock); }

/* ---- cuBLASLt ---- */

/* Created under the lock: it happens once per device, and a second caller must wait for it anyway. */
gfx_status cuda_blaslt_handle(int device, cublasLtHandle_t* handle) {
  GFX_TRY(cuda_use_device(device)); /* also checks the ordinal */
  GFX_TRY(lock_handles());
  gfx_status s = NULL;
  if (!blaslt_handles[device] && cuda_thread_is_capturing())
    s = gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: no cuBLASLt handle yet, and none is created while capturing");
  else if (!blaslt_handles[device])
    s = cuda_blas_check(cublasLtCreate(&blaslt_handles[device]), "cublasLtCreate on device %d", device);
  *handle = blaslt_handles[device];
  unlock_handles();
  return s;
}

/* ---- cuDNN ---- */

gfx_status cuda_dnn_acquire(int device, cudnnHandle_t* handle) {
  *handle = NULL;
  GFX_TRY(cuda_use_device(device)); /* cudnnCreate binds the handle to the current device */
  GFX_TRY(lock_handles());
  dnn_pool* pool = &dnn_pools[device];
  if (pool->n_idle > 0) *handle = pool->idle[--pool->n_idle];
  unlock_handles();
  if (*handle) return NULL;
  if (cuda_thread_is_capturing())
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: no idle cuDNN handle, and none is created while capturing");
  /* Outside the lock: creating a cuDNN handle takes milliseconds. */
  return cuda_dnn_check(cudnnCreate(handle), "cudnnCreate on device %d", device);
}

static int grow_pool(dnn_pool* pool) {
  int capacity = pool->capacity ? 2 * pool->capacity : 4;
  cudnnHandle_t* idle = realloc(pool->idle, (size_t)capacity * sizeof *idle);
  if (!idle) return 0;
  pool->idle = idle;
  pool->capacity = capacity;
  return 1;
}

void cuda_dnn_release(int device, cudnnHandle_t handle) {
  if (!handle || device < 0 || device >= CUDA_MAX_DEVICES) return; /* acquire never hands those out */
  int kept = 0;
  gfx_status s = lock_handles();
  if (!s) {
    dnn_pool* pool = &dnn_pools[device];
    if (pool->n_idle < pool->capacity || grow_pool(pool)) {
      pool->idle[pool->n_idle++] = handle;
      kept = 1;
    }
    unlock_handles();
  }
  if (s) gfx_log(GFX_LOG_WARNING, "%s", gfx_status_message(s));
  gfx_status_free(s);
  if (kept) return;
  /* No room to keep it (out of host memory): destroy it rather than leak it. */
  gfx_status use = cuda_use_device(device);
  if (!use) cudnnDestroy(handle);
  gfx_status_free(use);
}

/* The handles of a context that cudaDeviceReset destroyed cannot be destroyed any more (their
 * context is gone): they are dropped, a few kilobytes of host memory each. */
void cuda_forget_handles(int device) {
  if (device < 0 || device >= CUDA_MAX_DEVICES) return;
  gfx_status s = lock_handles();
  if (s) {
    gfx_log(GFX_LOG_WARNING, "%s", gfx_status_message(s));
    gfx_status_free(s);
    return;
  }
  blaslt_handles[device] = NULL;
  dnn_pools[device].n_idle = 0;
  unlock_handles();
}

/* gfxep CUDA backend — graphics interop: external memory and semaphores from Vulkan or D3D12, and
 * the device side of InitGraphicsInterop.
 *
 * Ownership: an fd is handed over in every case (backend.h). CUDA takes it over when the import
 * succeeds and closes it when the import is destroyed; when CUDA refuses it, it is closed here.
 * NT handles are never taken over. A mapped buffer is freed (cudaFree) before its import is destroyed:
 * CUDA requires both, and leaving out the first leaks device address space on every frame resize.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_interop.h"
#include "core/log.h"

#if !defined(_WIN32)
#include <unistd.h>
#endif

/* An fd CUDA did not take over is closed; NT handles stay with the application. */
static void close_refused_fd(intptr_t handle, int is_fd) {
#if !defined(_WIN32)
  if (is_fd && handle >= 0) close((int)handle);
#else
  (void)handle, (void)is_fd;
#endif
}

int cuda_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind) {
  const int device = dev->index;
  if (device < 0 || device >= cuda_device_count()) return 0;
  switch (kind) {
#if defined(_WIN32)
    case GFX_EXT_MEMORY_OPAQUE_WIN32:
    case GFX_EXT_MEMORY_D3D12_HEAP:
    case GFX_EXT_MEMORY_D3D12_RESOURCE:
      return 1;
#else
    case GFX_EXT_MEMORY_OPAQUE_FD:
      return 1;
#endif
    case GFX_EXT_MEMORY_HOST_ALLOCATION:
      return 1;
    default:
      return 0;
  }
}

int cuda_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind) {
  const int device = dev->index;
  if (device < 0 || device >= cuda_device_count()) return 0;
  switch (kind) {
#if defined(_WIN32)
    case GFX_EXT_SEMAPHORE_TIMELINE_WIN32:
    case GFX_EXT_SEMAPHORE_D3D12_FENCE:
      return 1;
#else
    case GFX_EXT_SEMAPHORE_TIMELINE_FD:
      return 1;
#endif
    default:
      return 0;
  }
}

/* The import of host memory: registered, not imported; released with cudaHostUnregister. */
typedef struct host_import {
  void* host;
} host_import;

static gfx_status import_host(int device, const gfx_ext_memory_desc* desc, void** import, void** mapped) {
  void* base = (void*)desc->handle;
  GFX_TRY(cuda_check(cudaHostRegister(base, desc->size, cudaHostRegisterMapped | cudaHostRegisterPortable),
                     "cudaHostRegister(%p, %zu bytes) on device %d", base, desc->size, device));
  void* dptr = NULL;
  gfx_status s = cuda_check(cudaHostGetDevicePointer(&dptr, base, 0), "cudaHostGetDevicePointer(%p)", base);
  host_import* h = s ? NULL : calloc(1, sizeof *h);
  if (!s && !h) s = gfx_error(GFX_ERR_OUT_OF_MEMORY, "host import record");
  if (s) {
    (void)cudaHostUnregister(base);
    return s;
  }
  h->host = base;
  *import = h;
  *mapped = (char*)dptr + desc->offset;
  return NULL;
}

/* Tags the two kinds of import object apart: a cudaExternalMemory_t or a host_import. */
typedef struct ext_import {
  int is_host;
  cudaExternalMemory_t memory;
  host_import host;
} ext_import;

gfx_status cuda_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped) {
  const int device = dev->index;
  *import = NULL;
  *mapped = NULL;
  gfx_status s = cuda_use_device(device);
  if (!s && !cuda_can_import_memory(dev, desc->kind))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: memory kind %d cannot be imported here", (int)desc->kind);
  if (!s && (desc->size == 0 || desc->offset >= desc->size))
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: offset %zu and size %zu describe no memory", desc->offset,
                  desc->size);
  if (s) {
    close_refused_fd(desc->handle, desc->kind == GFX_EXT_MEMORY_OPAQUE_FD);
    return s;
  }
  int is_fd = desc->kind == GFX_EXT_MEMORY_OPAQUE_FD;
  ext_import* rec = calloc(1, sizeof *rec);
  if (!rec) {
    close_refused_fd(desc->handle, is_fd);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "import record");
  }
  if (desc->kind == GFX_EXT_MEMORY_HOST_ALLOCATION) {
    void* h = NULL;
    s = import_host(device, desc, &h, mapped);
    if (s) {
      free(rec);
      return s;
    }
    rec->is_host = 1;
    rec->host = *(host_import*)h;
    free(h);
    *import = rec;
    return NULL;
  }
  struct cudaExternalMemoryHandleDesc hd;
  memset(&hd, 0, sizeof hd);
  hd.size = desc->size;
  switch (desc->kind) {
    case GFX_EXT_MEMORY_OPAQUE_FD:
      hd.type = cudaExternalMemoryHandleTypeOpaqueFd;
      hd.handle.fd = (int)desc->handle;
      break;
    case GFX_EXT_MEMORY_OPAQUE_WIN32:
      hd.type = cudaExternalMemoryHandleTypeOpaqueWin32;
      hd.handle.win32.handle = (void*)desc->handle;
      break;
    case GFX_EXT_MEMORY_D3D12_HEAP:
      hd.type = cudaExternalMemoryHandleTypeD3D12Heap;
      hd.handle.win32.handle = (void*)desc->handle;
      break;
    default: /* GFX_EXT_MEMORY_D3D12_RESOURCE: committed resources are dedicated allocations */
      hd.type = cudaExternalMemoryHandleTypeD3D12Resource;
      hd.handle.win32.handle = (void*)desc->handle;
      hd.flags = cudaExternalMemoryDedicated;
  }
  s = cuda_check(cudaImportExternalMemory(&rec->memory, &hd),
                            "cudaImportExternalMemory(kind %d, %zu bytes) on device %d", (int)desc->kind, desc->size,
                            device);
  if (s) {
    close_refused_fd(desc->handle, is_fd);
    free(rec);
    return s;
  }
  struct cudaExternalMemoryBufferDesc bd;
  memset(&bd, 0, sizeof bd);
  bd.offset = desc->offset;
  bd.size = desc->size - desc->offset;
  s = cuda_check(cudaExternalMemoryGetMappedBuffer(mapped, rec->memory, &bd),
                 "cudaExternalMemoryGetMappedBuffer(offset %zu, %zu bytes) on device %d", desc->offset,
                 desc->size - desc->offset, device);
  if (s) {
    (void)cudaDestroyExternalMemory(rec->memory); /* closes the fd CUDA took over */
    free(rec);
    *mapped = NULL;
    return s;
  }
  *import = rec;
  return NULL;
}

void cuda_release_memory(gfx_dev* dev, void* import, void* mapped) {
  const int device = dev->index;
  ext_import* rec = import;
  if (!rec) return;
  gfx_status s = cuda_use_device(device);
  if (!s) {
    if (rec->is_host) {
      s = cuda_check(cudaHostUnregister(rec->host.host), "cudaHostUnregister(%p)", rec->host.host);
    } else {
      if (mapped) s = cuda_check(cudaFree(mapped), "cudaFree of an imported buffer on device %d", device);
      gfx_status d = cuda_check(cudaDestroyExternalMemory(rec->memory), "cudaDestroyExternalMemory on device %d", device);
      if (!s) s = d;
      else gfx_status_free(d);
    }
  }
  (void)mapped;
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: releasing imported memory: %s", gfx_status_message(s));
  gfx_status_free(s);
  free(rec);
}

gfx_status cuda_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore) {
  const int device = dev->index;
  *semaphore = NULL;
  int is_fd = kind == GFX_EXT_SEMAPHORE_TIMELINE_FD;
  gfx_status s = cuda_use_device(device);
  if (!s && !cuda_can_import_semaphore(dev, kind))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: semaphore kind %d cannot be imported here", (int)kind);
  if (s) {
    close_refused_fd(handle, is_fd);
    return s;
  }
  struct cudaExternalSemaphoreHandleDesc hd;
  memset(&hd, 0, sizeof hd);
  switch (kind) {
    case GFX_EXT_SEMAPHORE_TIMELINE_FD:
      hd.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
      hd.handle.fd = (int)handle;
      break;
    case GFX_EXT_SEMAPHORE_TIMELINE_WIN32:
      hd.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreWin32;
      hd.handle.win32.handle = (void*)handle;
      break;
    default:
      hd.type = cudaExternalSemaphoreHandleTypeD3D12Fence;
      hd.handle.win32.handle = (void*)handle;
  }
  cudaExternalSemaphore_t sem = NULL;
  s = cuda_check(cudaImportExternalSemaphore(&sem, &hd), "cudaImportExternalSemaphore(kind %d) on device %d", (int)kind,
                 device);
  if (s) {
    close_refused_fd(handle, is_fd);
    return s;
  }
  *semaphore = sem;
  return NULL;
}

void cuda_release_semaphore(gfx_dev* dev, void* semaphore) {
  const int device = dev->index;
  if (!semaphore) return;
  gfx_status s = cuda_use_device(device);
  if (!s)
    s = cuda_check(cudaDestroyExternalSemaphore((cudaExternalSemaphore_t)semaphore),
                   "cudaDestroyExternalSemaphore on device %d", device);
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
}

gfx_status cuda_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  struct cudaExternalSemaphoreWaitParams p;
  memset(&p, 0, sizeof p);
  p.params.fence.value = value;
  cudaExternalSemaphore_t sem = semaphore;
  return cuda_check(cudaWaitExternalSemaphoresAsync(&sem, &p, 1, (cudaStream_t)stream),
                    "cudaWaitExternalSemaphoresAsync(value %llu) on device %d", (unsigned long long)value, device);
}

gfx_status cuda_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  struct cudaExternalSemaphoreSignalParams p;
  memset(&p, 0, sizeof p);
  p.params.fence.value = value;
  cudaExternalSemaphore_t sem = semaphore;
  return cuda_check(cudaSignalExternalSemaphoresAsync(&sem, &p, 1, (cudaStream_t)stream),
                    "cudaSignalExternalSemaphoresAsync(value %llu) on device %d", (unsigned long long)value, device);
}


/* gfxep — the contract every compute backend implements.
 *
 * A backend owns devices, their memory, streams, events and the kernels for every op in
 * ir/ops.def. src/ort talks to devices only through this table, so the reference backend (plain C,
 * host memory) and the CUDA backend (a separately loaded module) are interchangeable, and the
 * reference backend serves as the test oracle for the others.
 *
 * Conventions:
 *  - `device` is the backend's own ordinal (a CUDA ordinal for CUDA).
 *  - A NULL `stream` means "synchronous": the call returns when the work is done.
 *  - Functions returning gfx_status never abort; they return an error naming what failed.
 *  - All entries are required unless marked (optional).
 */
#ifndef GFXEP_BACKEND_BACKEND_H
#define GFXEP_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"
#include "core/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

#define GFX_BACKEND_ABI_VERSION 1

typedef struct gfx_device_info {
  char name[128];
  uint8_t uuid[16];     /* equals Vulkan's VkPhysicalDeviceIDProperties::deviceUUID */
  int has_uuid;
  char pci_bus_id[32];  /* "0000:00:06.0", lowercase, empty when unknown */
  uint8_t luid[8];      /* Windows adapter LUID, equals VkPhysicalDeviceIDProperties::deviceLUID */
  int has_luid;
  uint32_t pci_vendor_id;
  uint32_t pci_device_id;
  size_t total_memory;
  int compute_major, compute_minor; /* 0 where not meaningful */
} gfx_device_info;

typedef enum gfx_copy_kind {
  GFX_COPY_HOST_TO_DEVICE,
  GFX_COPY_DEVICE_TO_HOST,
  GFX_COPY_DEVICE_TO_DEVICE,
} gfx_copy_kind;

/* ---- graphics interop ---- */

/* Kinds of external memory a backend may import (what ORT's handle types map to). */
typedef enum gfx_ext_memory_kind {
  GFX_EXT_MEMORY_OPAQUE_FD,       /* Linux fd from vkGetMemoryFdKHR */
  GFX_EXT_MEMORY_OPAQUE_WIN32,    /* NT handle from vkGetMemoryWin32HandleKHR */
  GFX_EXT_MEMORY_D3D12_HEAP,      /* NT handle of an ID3D12Heap */
  GFX_EXT_MEMORY_D3D12_RESOURCE,  /* NT handle of a committed ID3D12Resource (dedicated) */
  GFX_EXT_MEMORY_HOST_ALLOCATION, /* page-aligned host memory to register and map */
  GFX_EXT_MEMORY_KIND_COUNT
} gfx_ext_memory_kind;

typedef enum gfx_ext_semaphore_kind {
  GFX_EXT_SEMAPHORE_TIMELINE_FD,    /* Vulkan timeline semaphore, Linux fd */
  GFX_EXT_SEMAPHORE_TIMELINE_WIN32, /* Vulkan timeline semaphore, NT handle */
  GFX_EXT_SEMAPHORE_D3D12_FENCE,    /* shared ID3D12Fence, NT handle */
  GFX_EXT_SEMAPHORE_KIND_COUNT
} gfx_ext_semaphore_kind;

typedef enum gfx_graphics_api {
  GFX_GRAPHICS_API_D3D12 = 1,
  GFX_GRAPHICS_API_VULKAN = 2,
} gfx_graphics_api;

/* An imported region: [offset, size) of the external allocation, mapped at `mapped`. */
typedef struct gfx_ext_memory_desc {
  gfx_ext_memory_kind kind;
  intptr_t handle; /* fd, NT handle or host pointer. An fd is handed over in every case: the backend
                    * closes it on failure and when the import is destroyed (src/ort passes a
                    * duplicate, so the application keeps its own). NT handles are not taken over. */
  size_t size;     /* of the whole allocation */
  size_t offset;   /* start of the region to map */
} gfx_ext_memory_desc;

/* What a kernel gets besides its tensors. */
typedef struct gfx_exec_ctx {
  int device;
  void* stream;        /* the run's stream; never cached by a kernel */
  void* scratch;       /* per-node scratch memory, at least what node_prepare asked for */
  size_t scratch_bytes;
} gfx_exec_ctx;

typedef struct gfx_backend {
  int abi_version; /* GFX_BACKEND_ABI_VERSION */
  const char* name; /* "cuda", "reference" */

  /* ---- devices ---- */
  int (*device_count)(void);
  gfx_status (*device_info)(int device, gfx_device_info* out);
  /* Finds the ordinal of the device at a PCI bus id ("0000:00:06.0"); GFX_ERR_NOT_SUPPORTED if none. */
  gfx_status (*device_by_pci_bus_id)(const char* pci_bus_id, int* device);

  /* ---- memory ---- */
  size_t alignment; /* every mem_alloc result is aligned to this */
  gfx_status (*mem_alloc)(int device, size_t bytes, void** out);
  void (*mem_free)(int device, void* ptr);
  /* Page-locked host memory the device can reach directly. */
  gfx_status (*host_alloc)(int device, size_t bytes, void** out);
  void (*host_free)(int device, void* ptr);
  /* Byte copy. Host pointers may be pageable or from host_alloc. With a stream the copy is
   * ordered on it and may return before it is done (pageable host memory may make it wait). */
  gfx_status (*copy)(int device, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream);
  gfx_status (*memset_zero)(int device, void* dst, size_t bytes, void* stream);
  /* Free and total bytes of device memory. */
  gfx_status (*mem_info)(int device, size_t* free_bytes, size_t* total_bytes);

  /* ---- streams and events ---- */
  gfx_status (*stream_create)(int device, void** out);
  void (*stream_destroy)(int device, void* stream);
  gfx_status (*stream_sync)(int device, void* stream);
  gfx_status (*event_create)(int device, void** out);
  void (*event_destroy)(int device, void* event);
  gfx_status (*event_record)(int device, void* event, void* stream);
  /* Makes `stream` wait (on the device) until `event` has completed. */
  gfx_status (*stream_wait_event)(int device, void* stream, void* event);
  gfx_status (*event_sync)(int device, void* event);
  /* 1 when the work before the last record has finished (or the event never recorded), 0 if not. */
  int (*event_done)(int device, void* event);
  gfx_status (*device_sync)(int device);

  /* ---- kernels ---- */
  /* (optional) Per-node state for one input-shape signature (descriptors, algorithm choice) and the
   * scratch bytes the node needs while it runs. in/out are the node's concrete shapes. */
  gfx_status (*node_prepare)(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes);
  void (*node_release)(int device, void* state);
  /* Runs one node on ctx->stream. in[i].data is NULL for an absent optional input. */
  gfx_status (*node_run)(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state);

  /* (optional) A backend loaded as its own module has its own copy of core/log: this points it at
   * the same sink as libgfxep's, so its messages reach ONNX Runtime's logger too. */
  void (*set_log_sink)(gfx_log_sink sink, void* user);

  /* ---- graphics interop (all optional: NULL where the backend has none) ---- */
  /* Whether this device can import that kind on this platform (a truthful "no", not an error). */
  int (*can_import_memory)(int device, gfx_ext_memory_kind kind);
  /* Imports and maps; *mapped is a device pointer to desc->offset, *import is the backend's object. */
  gfx_status (*import_memory)(int device, const gfx_ext_memory_desc* desc, void** import, void** mapped);
  /* Unmaps and destroys an import; safe after every other gfxep object is gone. */
  void (*release_memory)(int device, void* import, void* mapped);
  int (*can_import_semaphore)(int device, gfx_ext_semaphore_kind kind);
  /* Same fd hand-over rule as import_memory. */
  gfx_status (*import_semaphore)(int device, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
  void (*release_semaphore)(int device, void* semaphore);
  /* Queue a device-side wait until the timeline reaches value / a signal to value, on stream.
   * Neither blocks the host. */
  gfx_status (*wait_semaphore)(int device, void* semaphore, uint64_t value, void* stream);
  gfx_status (*signal_semaphore)(int device, void* semaphore, uint64_t value, void* stream);
  /* Prepares the device for sharing with a graphics API (a CUDA-in-Graphics context where the
   * device supports it). `queue` is an ID3D12CommandQueue* or NULL; `nv_blob` the Vulkan
   * VK_NV_external_compute_queue data or NULL. Writes what it did (or why not) into note. */
  gfx_status (*graphics_interop_init)(int device, gfx_graphics_api api, void* queue, const void* nv_blob, char* note,
                                      size_t note_size);
  gfx_status (*graphics_interop_deinit)(int device);

  /* ---- timing (optional: profiling) ---- */
  /* An event that also records when the device reached it; destroyed with event_destroy. */
  gfx_status (*timer_create)(int device, void** out);
  /* Microseconds of device time between two recorded timers; waits until `end` has completed. */
  gfx_status (*timer_elapsed_us)(int device, void* start, void* end, double* us);
  /* (optional) Keeps the device from starting the stream's next work for about `us` microseconds, so
   * that work queued meanwhile runs back to back (timing without the host's launch gaps). */
  gfx_status (*stream_hold)(int device, void* stream, double us);

  /* ---- graph capture (all optional) ---- */
  /* Records the work queued on stream between begin and end instead of running it; end turns it into
   * a replayable graph (or, with graph == NULL, discards it). Capture must end even if the work in
   * between failed. */
  gfx_status (*capture_begin)(int device, void* stream);
  gfx_status (*capture_end)(int device, void* stream, void** graph);
  gfx_status (*graph_launch)(int device, void* graph, void* stream);
  void (*graph_destroy)(int device, void* graph);
} gfx_backend;

/* The reference backend: plain C loops on host memory, one device. Always present. */
const gfx_backend* gfx_backend_reference(void);

/* Loads the CUDA backend module (libgfxep_cuda.so next to libgfxep.so) on first call. Returns NULL,
 * with the reason in *why (static or owned by the loader), when it is absent or cannot be loaded. */
const gfx_backend* gfx_backend_cuda(const char** why);
/* The CUDA backend if it was loaded already, else NULL (never loads it). */
const gfx_backend* gfx_backend_cuda_loaded(void);

/* The symbol the CUDA module exports. */
#define GFX_CUDA_BACKEND_ENTRY "gfxep_cuda_backend"
typedef const gfx_backend* (*gfx_backend_entry_fn)(void);

#endif

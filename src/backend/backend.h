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

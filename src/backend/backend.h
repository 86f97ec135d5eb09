/* gfxep — the contract every compute backend implements.
 *
 * A backend owns devices, their memory, streams, events and the kernels for the ops of ir/ops.def it
 * chooses to run. Nothing outside src/backend/<name>/ names an API or a vendor: src/ort and
 * src/exec reach devices only through this table, by way of the gfx_backend_* wrappers
 * (backend/wrap.h), which fill in the optional slots. The registry (backend/registry.h) lists the
 * backends; the reference backend (plain C, host memory) is the test oracle for the others.
 *
 * Devices are objects (gfx_dev), created by the backend once and kept for the life of the process.
 *
 * Memory is named by a DEVICE ADDRESS: a 64-bit value, carried as void*, such that every byte of an
 * allocation [a, a + bytes) is addressed by a + offset. Offsets within one allocation (views,
 * planned intermediates, weights packed in one block) are plain address arithmetic in every backend;
 * the address is never dereferenced on the host unless the backend says it is host memory
 * (GFX_BACKEND_HOST_MEMORY). What an address is, per backend:
 *   reference  a host pointer;
 *   cuda       a CUDA device pointer (unified address space);
 *   vulkan     a VkDeviceAddress of a buffer created with SHADER_DEVICE_ADDRESS usage (bufferDeviceAddress,
 *              core in Vulkan 1.2, required in 1.3); shaders load and store through it directly, and the
 *              backend maps an address back to its VkBuffer and offset for copies.
 *
 * Streams order work on one device. Work queued on a stream may sit in a host-side recording until
 * the stream is flushed (stream_flush, event_record, stream_sync): a Vulkan backend records command
 * buffers and submits them then; a CUDA stream launches at once.
 *
 * A RECORDED PARTITION (graph capture) is the work queued on a stream between capture_begin and
 * capture_end, kept to be replayed later with one launch and the same addresses: a CUDA graph, or a
 * Vulkan command buffer recorded once and submitted again.
 *
 * Conventions:
 *  - A NULL `stream` means "synchronous": the call returns when the work is done.
 *  - Functions returning gfx_status never abort; they return an error naming what failed.
 *  - Every slot is required unless marked (optional); the wrappers give optional slots their
 *    documented default.
 */
#ifndef GFXEP_BACKEND_BACKEND_H
#define GFXEP_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/log.h"
#include "core/status.h"
#include "ir/graph.h"
#include "ir/tensor.h"

#define GFX_BACKEND_ABI_VERSION 12

typedef struct gfx_backend gfx_backend;

/* A device of a backend. The backend creates it (device_get) and keeps it until the process ends, so
 * callers hold the pointer freely. */
typedef struct gfx_dev {
  const gfx_backend* backend;
  int index;  /* its position in the backend's device list */
  void* impl; /* the backend's own state */
  /* Set by the wrappers (backend/wrap.c) when a call reports GFX_ERR_DEVICE_LOST, cleared when the
   * device is recovered; `lost_reason` keeps the first report. Guarded by lost_lock in wrap.c. */
  int lost;
  char lost_reason[320];
  /* Set while a stream of the device waits on an imported semaphore past the watchdog's limit: the
   * wrappers then hold back frees that would block on the stalled work (wrap.c). */
  int stalled;
  long live_allocations; /* mem_alloc results not yet freed, counted by the wrappers (recovery needs 0) */
} gfx_dev;

typedef struct gfx_device_info {
  char name[128];
  char driver[128];     /* driver name and version, "" when unknown */
  uint8_t uuid[16];     /* equals Vulkan's VkPhysicalDeviceIDProperties::deviceUUID */
  int has_uuid;
  char pci_bus_id[32];  /* "0000:00:06.0", lowercase, empty when unknown */
  uint8_t luid[8];      /* Windows adapter LUID, equals VkPhysicalDeviceIDProperties::deviceLUID */
  int has_luid;
  uint32_t pci_vendor_id; /* 0 where the device is no PCI device */
  uint32_t pci_device_id;
  size_t total_memory;
  int compute_major, compute_minor; /* 0 where not meaningful */
  /* What the device's kernels may use, comma-separated ("float16,int64,storage8,subgroups32"), for
   * the gfxep.features metadata; "" when the backend says nothing. */
  char features[128];
  /* A CPU implementation of the API (lavapipe, SwiftShader): offered only when the registration asks
   * for its backend by name, so that it never displaces ORT's own CPU EP by surprise. */
  int software;
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

/* What InitGraphicsInterop hands to the backend. */
typedef struct gfx_interop_config {
  gfx_graphics_api api;
  void* queue;          /* ID3D12CommandQueue* (D3D12), or NULL */
  const void* nv_blob;  /* VK_NV_external_compute_queue data, or NULL */
  /* The additional options as key/value pairs (never NULL when count > 0): a backend reads its
   * documented keys (the Vulkan backend: the renderer's own instance, device and queue) and names
   * the key of any value it rejects. */
  const char* const* keys;
  const char* const* values;
  size_t count;
} gfx_interop_config;

/* What a kernel gets besides its tensors. */
typedef struct gfx_exec_ctx {
  gfx_dev* dev;
  void* stream;        /* the run's stream; never cached by a kernel */
  void* scratch;       /* per-node scratch memory (a device address), at least what node_prepare asked for */
  size_t scratch_bytes;
} gfx_exec_ctx;

/* How a backend describes the node a caller asks about in supports_node: the op, its parsed
 * parameters and the node as declared (element types, declared shapes, constant inputs). */
typedef struct gfx_node_query {
  gfx_op op;
  const ir_params* params;
  const ir_node_desc* desc;
} gfx_node_query;

/* Properties of a backend (gfx_backend.flags). */
enum {
  /* Device addresses are host pointers: the reference backend. Its devices are offered only when
   * the registration asks for the backend by name, so it never displaces ORT's own CPU EP. */
  GFX_BACKEND_HOST_MEMORY = 1 << 0,
  /* Work queued on a stream waits in a host-side recording until a flush, and imported-semaphore
   * waits and signals ride on the next submission (Vulkan): a stamp written just before a signal
   * runs in the signal's submission, and one written before a wait runs after that wait. */
  GFX_BACKEND_DEFERRED_SUBMIT = 1 << 1,
  /* Its Conv runs channels-last (ir_conv_params.channels_last) for every 2-D convolution with
   * symmetric pads, so the EP may ask ONNX Runtime for channels-last Convs (layout=nhwc). */
  GFX_BACKEND_CHANNELS_LAST_CONV = 1 << 2,
};

struct gfx_backend {
  int abi_version;          /* GFX_BACKEND_ABI_VERSION */
  const char* name;         /* "cuda", "vulkan", "reference": the value of gfxep.backend */
  unsigned flags;           /* GFX_BACKEND_* */
  /* The memory-info name of its devices' memory ("gfxep_cuda"); the host-accessible one adds "_pinned". */
  const char* memory_name;
  /* Memory devices of this backend are told apart from other backends' on the same GPU by this base,
   * added to the device index: ORT's memory device ids of two backends must never coincide. */
  int memory_id_base;
  /* (optional) A sentence for the gfxep.note metadata of its devices. */
  const char* note;

  /* ---- devices ---- */
  int (*device_count)(void);
  /* The device at index (0 <= index < device_count()), created on first call and kept. */
  gfx_status (*device_get)(int index, gfx_dev** out);
  gfx_status (*device_info)(gfx_dev* dev, gfx_device_info* out);

  /* ---- memory ---- */
  size_t alignment; /* every mem_alloc result is aligned to this */
  gfx_status (*mem_alloc)(gfx_dev* dev, size_t bytes, void** out);
  void (*mem_free)(gfx_dev* dev, void* addr);
  /* Host memory the device reaches directly (page-locked / host-visible); a host pointer. */
  gfx_status (*host_alloc)(gfx_dev* dev, size_t bytes, void** out);
  void (*host_free)(gfx_dev* dev, void* ptr);
  /* Byte copy. Host pointers may be pageable or from host_alloc. With a stream the copy is
   * ordered on it and may return before it is done (pageable host memory may make it wait). */
  gfx_status (*copy)(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream);
  gfx_status (*memset_zero)(gfx_dev* dev, void* dst, size_t bytes, void* stream);
  /* Free and total bytes of device memory. */
  gfx_status (*mem_info)(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes);

  /* ---- streams and events ---- */
  gfx_status (*stream_create)(gfx_dev* dev, void** out);
  void (*stream_destroy)(gfx_dev* dev, void* stream);
  /* Flushes, then waits until everything queued on the stream is done. */
  gfx_status (*stream_sync)(gfx_dev* dev, void* stream);
  /* (optional; default: nothing to do) Hands the work recorded on the stream so far to the device
   * without waiting for it. Executors call it when a run has been queued. */
  gfx_status (*stream_flush)(gfx_dev* dev, void* stream);
  gfx_status (*event_create)(gfx_dev* dev, void** out);
  void (*event_destroy)(gfx_dev* dev, void* event);
  /* Flushes the stream and marks the point the event completes at. */
  gfx_status (*event_record)(gfx_dev* dev, void* event, void* stream);
  /* Makes `stream` wait (on the device) until `event` has completed. */
  gfx_status (*stream_wait_event)(gfx_dev* dev, void* stream, void* event);
  gfx_status (*event_sync)(gfx_dev* dev, void* event);
  /* 1 when the work before the last record has finished (or the event never recorded), 0 if not. */
  int (*event_done)(gfx_dev* dev, void* event);
  gfx_status (*device_sync)(gfx_dev* dev);

  /* ---- kernels ---- */
  /* (optional; default: every op of ops.def that parsed) Whether this device runs the node, with
   * the reason in a GFX_ERR_NOT_SUPPORTED status when it does not; the node then stays with ONNX
   * Runtime. A backend may decline whole op families while it is brought up, attributes or element
   * types it has no kernel for, or features its device lacks. */
  gfx_status (*supports_node)(gfx_dev* dev, const gfx_node_query* q);
  /* (optional) Per-node state for one input-shape signature (descriptors, pipelines, algorithm
   * choice) and the scratch bytes the node needs while it runs. in/out are the node's concrete shapes. */
  gfx_status (*node_prepare)(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes);
  void (*node_release)(gfx_dev* dev, void* state);
  /* Queues one node on ctx->stream. in[i].data is NULL for an absent optional input. */
  gfx_status (*node_run)(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         void* state);

  /* (optional) A backend loaded as its own module has its own copy of core/log: this points it at
   * the same sink as libgfxep's, so its messages reach ONNX Runtime's logger too. */
  void (*set_log_sink)(gfx_log_sink sink, void* user);

  /* ---- graphics interop (all optional: the default imports nothing) ---- */
  /* Whether this device can import that kind on this platform (a truthful "no", not an error). */
  int (*can_import_memory)(gfx_dev* dev, gfx_ext_memory_kind kind);
  /* Imports and maps; *mapped is the device address of desc->offset, *import the backend's object. */
  gfx_status (*import_memory)(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped);
  /* Unmaps and destroys an import; safe after every other gfxep object is gone. */
  void (*release_memory)(gfx_dev* dev, void* import, void* mapped);
  int (*can_import_semaphore)(gfx_dev* dev, gfx_ext_semaphore_kind kind);
  /* Same fd hand-over rule as import_memory. */
  gfx_status (*import_semaphore)(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
  void (*release_semaphore)(gfx_dev* dev, void* semaphore);
  /* Queue a device-side wait until the timeline reaches value / a signal to value, on stream.
   * Neither blocks the host. */
  gfx_status (*wait_semaphore)(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
  gfx_status (*signal_semaphore)(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
  /* Prepares the device for sharing with a graphics API: a CUDA-in-Graphics context where the
   * device supports it, the application's own VkDevice and queue for Vulkan. Writes what it did
   * (or why not) into note. */
  gfx_status (*graphics_interop_init)(gfx_dev* dev, const gfx_interop_config* config, char* note, size_t note_size);
  gfx_status (*graphics_interop_deinit)(gfx_dev* dev);

  /* ---- timing (optional: profiling) ---- */
  /* An event that also records when the device reached it; destroyed with event_destroy. */
  gfx_status (*timer_create)(gfx_dev* dev, void** out);
  /* Microseconds of device time between two recorded timers; waits until `end` has completed. */
  gfx_status (*timer_elapsed_us)(gfx_dev* dev, void* start, void* end, double* us);
  /* (optional) Keeps the device from starting the stream's next work for about `us` microseconds, so
   * that work queued meanwhile runs back to back (timing without the host's launch gaps). */
  gfx_status (*stream_hold)(gfx_dev* dev, void* stream, double us);

  /* ---- frame stamps (optional: per-frame GPU timings, without host waits) ---- */
  /* `count` device timestamps. */
  gfx_status (*stamps_create)(gfx_dev* dev, int count, void** out);
  void (*stamps_destroy)(gfx_dev* dev, void* stamps);
  /* Queues writing the device's clock into `slot` once the work queued on the stream before it is
   * done. Never flushes and never waits; not allowed while the stream is being captured. A slot may be
   * written again once its last value was read (or abandoned). */
  gfx_status (*stamp_write)(gfx_dev* dev, void* stamps, int slot, void* stream);
  /* The device clock, in nanoseconds, when `slot` was written; never waits: GFX_ERR_NOT_READY while the
   * write has not happened on the device yet. Every stamp of a device, replay stamps included, reads
   * one clock, so any two of them subtract. */
  gfx_status (*stamp_read_ns)(gfx_dev* dev, void* stamps, int slot, uint64_t* ns);
  /* (optional, all four or none) Stamps a recorded partition writes itself, so that a replay costs the
   * host nothing more: replay_stamp_record, called while `stream` is captured, records writing the
   * device clock at that point (end = 0: the replay's begin, 1: its end) into the ring entry of the
   * current replay. Replays of one recording run one after another on the device, so replay n
   * (counted from 0, per recording) writes entry n % capacity; replay_stamp_read_ns reads replay n's
   * begin and end: GFX_ERR_NOT_READY until its end is written, GFX_ERR_NOT_FOUND once a later
   * replay took the entry over. */
  gfx_status (*replay_stamps_create)(gfx_dev* dev, int capacity, void** out);
  void (*replay_stamps_destroy)(gfx_dev* dev, void* ring);
  gfx_status (*replay_stamp_record)(gfx_dev* dev, void* ring, int end, void* stream);
  gfx_status (*replay_stamp_read_ns)(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns);

  /* ---- faults (all optional) ---- */
  /* The current value of an imported timeline semaphore, read without waiting (for the watchdog's
   * report); GFX_ERR_NOT_SUPPORTED where the API cannot read it (CUDA). */
  gfx_status (*semaphore_value)(gfx_dev* dev, void* semaphore, uint64_t* value);
  /* For fault-injection tests: makes the device fail the way a lost device does, from work queued on
   * `stream` on (CUDA: a kernel that traps, a real sticky error; Vulkan and reference: simulated, every
   * later call reports the loss). */
  gfx_status (*inject_device_loss)(gfx_dev* dev, void* stream);
  /* Brings a lost device back once nothing of gfxep's lives on it any more (CUDA: cudaDeviceReset and
   * new library handles). Without it a lost device stays lost for the life of the process. */
  gfx_status (*device_recover)(gfx_dev* dev);

  /* ---- recorded partitions (all optional: the default records nothing) ---- */
  /* Records the work queued on stream between begin and end instead of running it; end turns it into
   * a replayable recording (or, with graph == NULL, discards it). Capture must end even if the work
   * in between failed. */
  gfx_status (*capture_begin)(gfx_dev* dev, void* stream);
  gfx_status (*capture_end)(gfx_dev* dev, void* stream, void** graph);
  gfx_status (*graph_launch)(gfx_dev* dev, void* graph, void* stream);
  void (*graph_destroy)(gfx_dev* dev, void* graph);
};

/* The symbol a backend module exports: returns its table (or NULL, with the reason in *why, when
 * the module cannot serve at all, e.g. no Vulkan loader). */
typedef const gfx_backend* (*gfx_backend_entry_fn)(const char** why);

/* How a module marks that symbol: its only export (dllexport on Windows; the modules are linked with
 * hidden visibility and a version script elsewhere). */
#ifdef _WIN32
#define GFX_MODULE_EXPORT __declspec(dllexport)
#else
#define GFX_MODULE_EXPORT __attribute__((visibility("default")))
#endif

#endif

/* gfxep — what the files of the Vulkan backend share with each other, and nothing else.
 *
 * Private to src/backend/vulkan/, whose only export is gfxep_vulkan_backend (gfxep_vulkan.lds).
 *
 * Objects and their locks:
 *   vk_device  one per usable physical device, created by device_count() and kept for the process;
 *              its VkDevice is created by device_get (or is the application's, between graphics
 *              interop init and deinit: vk_interop.c). Locks: init_lock (creation, the device switch), queue_lock (every
 *              vkQueueSubmit: Vulkan wants queues externally synchronized), mem_lock (the address
 *              tables), pipe_lock (shader modules and pipelines), streams_lock (the stream list).
 *   vk_stream  a command pool, the command buffer being recorded, a timeline semaphore and what is
 *              in flight on it; `lock` serializes its users. The NULL stream is the device's own
 *              sync_stream, used synchronously.
 *   vk_event   its own timeline semaphore and the value its last record signals; reference counted,
 *              because a stream that waits on it keeps the semaphore until that wait has executed.
 *
 * Lock order: streams_lock (device_sync only), then a stream's lock, then one of mem_lock, pipe_lock,
 * queue_lock (never two of those at once). A stream's lock is never held while taking streams_lock.
 */
#ifndef GFXEP_BACKEND_VULKAN_INTERNAL_H
#define GFXEP_BACKEND_VULKAN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "backend/backend.h"

#define VK_MAX_DEVICES 16
#define VK_SHADER_COUNT_MAX 192 /* room for every vk_shader_id */
#define VK_ALLOC_ALIGNMENT 256
/* Every host wait is bounded by this (DEVICE.md: a host wait on a timeline value can hang on some
 * drivers); the wait then fails with a status instead. */
#define VK_WAIT_TIMEOUT_NS (60ull * 1000 * 1000 * 1000)

/* ---- errors (vk_backend.c) ---- */

const char* vk_result_name(VkResult r);
/* NULL for VK_SUCCESS; otherwise "vulkan backend: <what>: VkResult <n> (<name>)", with
 * GFX_ERR_OUT_OF_MEMORY for the out-of-memory results and GFX_ERR_DEVICE for the others. */
gfx_status vk_check(VkResult r, const char* what_fmt, ...) GFX_PRINTF(2, 3);

/* ---- buffers (vk_memory.c) ---- */

/* A buffer with its memory and device address; `mapped` is the host view of host-visible memory. */
typedef struct vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceAddress address; /* of byte 0 of the buffer */
  VkDeviceSize size;
  void* mapped;            /* NULL when the memory is not host-visible */
} vk_buffer;

/* An allocation as the address tables know it. */
typedef struct vk_alloc {
  VkDeviceAddress addr; /* what the caller got (aligned), or the device address of a host allocation */
  size_t bytes;         /* what the caller asked for */
  void* host;           /* host_alloc: the pointer the caller got; NULL for mem_alloc */
  vk_buffer buf;
  int external;         /* an imported allocation (vk_interop.c): mem_free refuses it; buf.mapped is not ours */
} vk_alloc;

/* Where an address (device address or host_alloc pointer) lies: the buffer, the offset into it and,
 * where mapped, the host pointer of that byte. */
typedef struct vk_location {
  VkBuffer buffer;
  VkDeviceSize offset;
  char* mapped;
} vk_location;

/* ---- devices (vk_instance.c) ---- */

typedef struct vk_stream vk_stream;
typedef struct vk_pipe vk_pipe;

typedef struct vk_device {
  gfx_dev dev; /* what callers hold: dev.impl points back here */
  int index;
  VkPhysicalDevice phys;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties mem_props;
  gfx_device_info info;
  uint32_t queue_family;
  /* optional features, found at enumeration and enabled where present */
  int has_f16;            /* shaderFloat16 and storageBuffer16BitAccess */
  int has_float16_arith, has_16bit_storage;
  int has_int64, has_int16;
  int has_8bit_storage;   /* storageBuffer8BitAccess: bool outputs (comparisons) */
  int has_subgroup_ops;   /* subgroup basic, arithmetic and shuffle operations in compute shaders */
  uint32_t subgroup_size;
  /* VK_NV_cooperative_matrix with 16x16x16 float16 x float16 + float32 tiles at subgroup scope, the
   * vulkanMemoryModel its shaders declare, float16, and subgroups of 32 (mm_coop.comp's four per
   * workgroup of 128); GFXEP_VULKAN_NO_COOPMAT=1 turns it off */
  int has_coopmat;
  int has_host_query_reset; /* hostQueryReset (Vulkan 1.2): frame stamps reset their queries on the host */
  /* GFXEP_VULKAN_PIPELINE_STATS=FILE on a device with VK_KHR_pipeline_executable_properties: each
   * pipeline is created with its compiler statistics captured (registers, spills, shared memory as
   * the driver names them) and they are appended to FILE, one line per pipeline (vk_pipeline.c); on
   * gfxep's own VkDevice only, which enables the feature */
  const char* pipeline_stats_file;
  int has_budget;         /* VK_EXT_memory_budget */
  int has_ext_memory_fd, has_ext_semaphore_fd;
  int has_ext_memory_host;            /* VK_EXT_external_memory_host (enabled when present) */
  VkDeviceSize host_import_align;     /* its minImportedHostPointerAlignment */
  int has_ext_memory_win32, has_ext_semaphore_win32; /* Windows only; 0 elsewhere */
  VkDeviceSize max_alloc; /* maxMemoryAllocationSize */
  /* the workgroups of a grid-stride dispatch (vk_grid_groups): maxComputeWorkGroupCount[0], at most
   * 65535, or GFXEP_VULKAN_GRID_GROUPS when set (to measure fewer, longer-lived workgroups) */
  uint32_t grid_groups;
  uint32_t plan_row_groups; /* the copy plans' row kernels: at most this many workgroups (vk_instance.c) */
  uint64_t wait_spin_ns;     /* host waits poll this long before blocking (vk_stream.c's wait_value) */

  /* created by device_get */
  pthread_mutex_t init_lock;
  int created;
  VkDevice device;
  uint32_t queue_index;
  VkQueue queue;
  pthread_mutex_t queue_lock;

  pthread_mutex_t mem_lock;
  vk_alloc** allocs; /* sorted by addr */
  size_t n_allocs, cap_allocs;
  vk_alloc** hosts;  /* host allocations, sorted by host pointer */
  size_t n_hosts, cap_hosts;
  vk_buffer zeros;   /* a small zero-filled buffer for the unaligned ends of memset_zero */

  pthread_mutex_t pipe_lock;
  VkPipelineLayout layout; /* push constants only: shaders reach memory through device addresses */
  VkPipelineCache cache;
  VkShaderModule modules[VK_SHADER_COUNT_MAX];
  vk_pipe* pipes; /* list of every pipeline made, looked up by key */

  pthread_mutex_t streams_lock;
  vk_stream** streams; /* every live stream, for device_sync */
  size_t n_streams, cap_streams;
  vk_stream* sync_stream; /* the NULL stream */

  /* graphics interop (vk_interop.c). While app_device is set, device/queue are the application's
   * (InitGraphicsInterop) and every vkQueueSubmit runs inside queue_lock_fn/queue_unlock_fn when given. */
  int app_device;
  void (*queue_lock_fn)(void* user);
  void (*queue_unlock_fn)(void* user);
  void* queue_lock_user;
  void* interop;                /* vk_interop.c's saved state */
  /* what lives on the VkDevice besides allocations and streams: prepared node states (their pipelines),
   * events and imported semaphores, imported memory */
  atomic_int live_states, live_events, live_imports;
  atomic_int live_stamps; /* frame-stamp query pools (vk_faults.c) */
  atomic_int fault_lost; /* inject_device_loss was called: every submit reports VK_ERROR_DEVICE_LOST */
} vk_device;

static inline vk_device* vk_dev(gfx_dev* dev) { return (vk_device*)dev->impl; }

int vk_device_count(void);
gfx_status vk_device_get(int index, gfx_dev** out);
gfx_status vk_device_info(gfx_dev* dev, gfx_device_info* out);
/* Destroys every device and the instance (module unload). */
void vk_teardown(void);
/* gfxep's objects on d->device (pipeline layout and cache, the zero buffer, the sync stream): made
 * after d->device and d->queue are set; destroyed before the VkDevice changes (the tables empty). */
gfx_status vk_device_objects_create(vk_device* d);
void vk_device_objects_destroy(vk_device* d);
/* gfxep's own VkDevice on d->phys with d->queue_family, and its objects (device_get; graphics interop
 * returns to it). */
gfx_status vk_device_create_own(vk_device* d);

/* ---- memory (vk_memory.c) ---- */

/* What a buffer's memory is for (vk_buffer_create). */
enum {
  VK_MEM_DEVICE = 0,    /* DEVICE_LOCAL preferred (mapped too when it happens to be host-visible) */
  VK_MEM_HOST = 1,      /* HOST_VISIBLE|HOST_COHERENT, HOST_CACHED preferred (mapped): staging, read back */
  VK_MEM_CONSTANTS = 2, /* written once by the host, read by every kernel run (geometry blocks, tables):
                         * HOST_VISIBLE|HOST_COHERENT, DEVICE_LOCAL preferred (mapped) so that shaders
                         * read them from device memory, not across the bus */
};
/* A buffer with SHADER_DEVICE_ADDRESS usage, its memory picked by `kind` (VK_MEM_*). */
gfx_status vk_buffer_create(vk_device* d, VkDeviceSize size, int kind, vk_buffer* out);
void vk_buffer_destroy(vk_device* d, vk_buffer* b);

/* The allocation holding [addr, addr + bytes), device addresses (host = 0) or host_alloc pointers
 * (host = 1); INVALID_ARGUMENT naming `what` when there is none. */
gfx_status vk_resolve(vk_device* d, const void* addr, size_t bytes, int host, const char* what, vk_location* out);
/* Whether a host pointer lies in a host_alloc allocation (with room for bytes). */
int vk_is_host_alloc(vk_device* d, const void* ptr, size_t bytes, vk_location* out);

gfx_status vk_mem_alloc(gfx_dev* dev, size_t bytes, void** out);
void vk_mem_free(gfx_dev* dev, void* addr);
gfx_status vk_host_alloc(gfx_dev* dev, size_t bytes, void** out);
void vk_host_free(gfx_dev* dev, void* ptr);
gfx_status vk_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream);
gfx_status vk_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream);
gfx_status vk_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes);
gfx_status vk_memory_init(vk_device* d);  /* at device creation: the zero buffer */
/* An imported allocation (a->external set, a->addr/bytes the addressable region) entered in / taken
 * out of the device address table, so that copies and kernels resolve addresses inside it. */
gfx_status vk_memory_insert_external(vk_device* d, vk_alloc* a);
int vk_memory_remove_external(vk_device* d, vk_alloc* a);
/* Allocations in the tables (device, host), for the checks of graphics interop. */
void vk_memory_counts(vk_device* d, size_t* n_device, size_t* n_host);
void vk_memory_teardown(vk_device* d);    /* frees what is left in the tables */

/* ---- streams and events (vk_stream.c) ---- */

typedef struct vk_event vk_event;

gfx_status vk_stream_new(vk_device* d, vk_stream** out);
void vk_stream_delete(vk_stream* s);

/* The stream to queue on, locked: `stream`, or the device's sync stream for NULL. vk_stream_release
 * unlocks it; for the sync stream it first flushes and waits (and returns what that gave, unless
 * `status` is already an error, which it returns after the wait). */
vk_stream* vk_stream_acquire(vk_device* d, void* stream);
gfx_status vk_stream_release(vk_device* d, void* stream, vk_stream* s, gfx_status status);

/* With the stream locked: the command buffer being recorded (begun now if need be). */
gfx_status vk_stream_cmd(vk_stream* s, VkCommandBuffer* out);
/* One global memory barrier: compute and transfer writes before it are visible to compute,
 * transfer and host reads after it. Recorded after every dispatch, copy and fill. */
void vk_cmd_barrier(VkCommandBuffer cb);
/* With the stream locked: submit what is recorded (and pending waits), signalling the next value. */
gfx_status vk_stream_flush_locked(vk_stream* s);
/* With the stream locked: flush, then wait (bounded) until everything submitted is done; sync also
 * recycles what completed (staging buffers may be freed), wait keeps it, so that a staging buffer
 * just written by the device can still be read. */
gfx_status vk_stream_sync_locked(vk_stream* s);
gfx_status vk_stream_wait_locked(vk_stream* s);
/* A host-visible staging buffer of at least `bytes`, kept by the stream until what is recorded now
 * has executed (reused afterwards). */
gfx_status vk_stream_staging(vk_stream* s, VkDeviceSize bytes, vk_buffer** out);

gfx_status vk_stream_create(gfx_dev* dev, void** out);
void vk_stream_destroy(gfx_dev* dev, void* stream);
gfx_status vk_stream_sync(gfx_dev* dev, void* stream);
gfx_status vk_stream_flush(gfx_dev* dev, void* stream);
gfx_status vk_event_create(gfx_dev* dev, void** out);
void vk_event_destroy(gfx_dev* dev, void* event);
gfx_status vk_event_record(gfx_dev* dev, void* event, void* stream);
gfx_status vk_stream_wait_event(gfx_dev* dev, void* stream, void* event);
gfx_status vk_event_sync(gfx_dev* dev, void* event);
int vk_event_done(gfx_dev* dev, void* event);
/* The valid bits of the device queue's timestamps, 0 where it has none. */
uint32_t vk_timestamp_bits(const vk_device* d);
/* Timers (profiling): events that write a timestamp where they are recorded. */
gfx_status vk_timer_create(gfx_dev* dev, void** out);
gfx_status vk_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us);
gfx_status vk_device_sync(gfx_dev* dev);
/* A semaphore of the application's (imported timeline) wrapped as an event that is never recorded:
 * reference counted like events, destroyed with vk_event_destroy, never waited for on the host. */
gfx_status vk_event_wrap(vk_device* d, VkSemaphore sem, vk_event** out);
/* The stream's next submission waits (on the device) until sem reaches value / everything queued on
 * the stream so far is submitted now with a signal of sem to value. NULL stream: the sync stream,
 * without a host wait. */
gfx_status vk_stream_wait_external(vk_device* d, void* stream, vk_event* sem, uint64_t value);
gfx_status vk_stream_signal_external(vk_device* d, void* stream, vk_event* sem, uint64_t value);
size_t vk_stream_count(vk_device* d); /* streams created by stream_create and not destroyed */

/* ---- frame stamps (vk_stamps.c) ---- */
gfx_status vk_stamps_create(gfx_dev* dev, int count, void** out);
void vk_stamps_destroy(gfx_dev* dev, void* stamps);
gfx_status vk_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream);
gfx_status vk_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns);
gfx_status vk_replay_stamps_create(gfx_dev* dev, int capacity, void** out);
void vk_replay_stamps_destroy(gfx_dev* dev, void* ring);
gfx_status vk_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream);
gfx_status vk_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns);

/* ---- faults (vk_faults.c) ---- */
gfx_status vk_inject_device_loss(gfx_dev* dev, void* stream);
gfx_status vk_device_recover(gfx_dev* dev);
/* VK_ERROR_DEVICE_LOST as a status once a loss was injected, else NULL. */
gfx_status vk_fault_check(vk_device* d, const char* what);
/* The counter of an imported timeline semaphore, read without waiting (vk_stream.c). */
gfx_status vk_semaphore_value(gfx_dev* dev, void* semaphore, uint64_t* value);

/* ---- recorded partitions (vk_graph.c; the stream side in vk_stream.c) ---- */

/* A partition recorded once into a secondary command buffer (SIMULTANEOUS_USE, its own command
 * pool) and executed by later submits with vkCmdExecuteCommands: kernels reach memory by device
 * address and take their parameters as push constants, so a replay with the same addresses needs
 * nothing re-recorded. Reference counted: its owner and every submit in flight that executes it. */
typedef struct vk_graph vk_graph;
void vk_graph_ref(vk_graph* g);
void vk_graph_unref(vk_graph* g);
/* Frees the secondary command buffer of a capture a stream was deleted in the middle of. */
void vk_graph_abandon_capture(VkCommandBuffer secondary);
/* With the stream locked: whether a capture is recording into it; set or clear (NULL) the secondary
 * command buffer vk_stream_cmd hands out; record an execution of g's secondary into the stream's
 * recording, holding g until the submit that carries it has completed. */
int vk_stream_capturing(vk_stream* s);
gfx_status vk_stream_capture_set(vk_stream* s, VkCommandBuffer secondary);
gfx_status vk_stream_execute_graph(vk_stream* s, vk_graph* g, VkCommandBuffer secondary);
/* A copy or zero fill recorded as a dispatch of copy_bytes.comp on device addresses (inside a
 * capture, where a VkBuffer handle must not be recorded); src NULL fills zeros. */
gfx_status vk_record_copy_by_address(vk_device* d, VkCommandBuffer cb, VkDeviceAddress dst, VkDeviceAddress src,
                                     VkDeviceSize bytes);
gfx_status vk_capture_begin(gfx_dev* dev, void* stream);
gfx_status vk_capture_end(gfx_dev* dev, void* stream, void** graph);
gfx_status vk_graph_launch(gfx_dev* dev, void* graph, void* stream);
void vk_graph_destroy(gfx_dev* dev, void* graph);

/* ---- shaders and pipelines (vk_pipeline.c) ---- */

/* The embedded shaders (vk_shaders.c, generated), one per variant. */
typedef enum vk_shader_id {
  VK_SHADER_EW_F32 = 0,
  VK_SHADER_EW_F16,
  VK_SHADER_EW_I32,
  VK_SHADER_EW_I64,
  VK_SHADER_EW_F32_BOOL,
  VK_SHADER_EW_F16_BOOL,
  VK_SHADER_EW_I32_BOOL,
  VK_SHADER_EW_I64_BOOL,
  VK_SHADER_PLAN_1, /* copy_plan.comp by element size */
  VK_SHADER_PLAN_2,
  VK_SHADER_PLAN_4,
  VK_SHADER_PLAN_8,
  VK_SHADER_PLAN_16, /* groups of a contiguous last dim (ir_copy_plan_simplify) */
  VK_SHADER_TRANSPOSE_1, /* transpose.comp by element size: plans that transpose (vk_layout.c) */
  VK_SHADER_TRANSPOSE_2,
  VK_SHADER_TRANSPOSE_4,
  VK_SHADER_TRANSPOSE_8,
  VK_SHADER_CONV_F32,
  VK_SHADER_CONV_F16,
  VK_SHADER_GEMM_F32,
  VK_SHADER_GEMM_F16,
  VK_SHADER_REDUCE_F32, /* reduce.comp by kind */
  VK_SHADER_REDUCE_F16,
  VK_SHADER_SOFTMAX_F32,
  VK_SHADER_SOFTMAX_F16,
  VK_SHADER_NORM_F32,
  VK_SHADER_NORM_F16,
  VK_SHADER_POOL_F32,
  VK_SHADER_POOL_F16,
  VK_SHADER_LRN_F32, /* reduce.comp -DKIND_LRN (vk_reduce.c) */
  VK_SHADER_LRN_F16,
  VK_SHADER_CAST,        /* cast.comp (vk_misc.c) */
  VK_SHADER_WHERE_1,     /* where.comp by element size */
  VK_SHADER_WHERE_2,
  VK_SHADER_WHERE_4,
  VK_SHADER_WHERE_8,
  VK_SHADER_BATCHNORM_F32,
  VK_SHADER_BATCHNORM_F16,
  VK_SHADER_RESIZE_F32,  /* resize.comp (vk_resize.c) */
  VK_SHADER_RESIZE_F16,
  VK_SHADER_RESIZE_GENERAL_F32, /* resize.comp's general geometry (a leading dim resizes) */
  VK_SHADER_RESIZE_GENERAL_F16,
  VK_SHADER_SPACE_DEPTH_1, /* resize.comp's DepthToSpace / SpaceToDepth by element size */
  VK_SHADER_SPACE_DEPTH_2,
  VK_SHADER_SPACE_DEPTH_4,
  VK_SHADER_SPACE_DEPTH_8,
  VK_SHADER_GRID_SAMPLE_F32, /* grid_sample.comp (vk_resize.c): input and grid float32, */
  VK_SHADER_GRID_SAMPLE_F16,     /* both float16, */
  VK_SHADER_GRID_SAMPLE_F16_G32, /* a float16 input and a float32 grid, */
  VK_SHADER_GRID_SAMPLE_F32_G16, /* a float32 input and a float16 grid */
  VK_SHADER_GATHER_1,    /* gather.comp by element size (vk_layout.c) */
  VK_SHADER_GATHER_2,
  VK_SHADER_GATHER_4,
  VK_SHADER_GATHER_8,
  VK_SHADER_CONV_T_F32,  /* conv_transpose.comp (vk_nn.c) */
  VK_SHADER_CONV_T_F16,
  VK_SHADER_COPY_BYTES_4, /* copy_bytes.comp (vk_graph.c): 32-bit words */
  VK_SHADER_COPY_BYTES_1, /* bytes (storageBuffer8BitAccess) */
  VK_SHADER_REPLAY_STAMP, /* replay_stamp.comp (vk_stamps.c) */
  VK_SHADER_REDUCE_F32_SG, /* reduce.comp's workgroup families with subgroup operations (vk_reduce.c) */
  VK_SHADER_REDUCE_F16_SG,
  VK_SHADER_SOFTMAX_F32_SG,
  VK_SHADER_SOFTMAX_F16_SG,
  VK_SHADER_NORM_F32_SG,
  VK_SHADER_NORM_F16_SG,
  VK_SHADER_CONV_COOP_F16, /* mm_coop.comp (vk_nn.c): where has_coopmat, 128x128 blocks */
  VK_SHADER_GEMM_COOP_F16,
  VK_SHADER_CONV_COOP_MID_F16, /* the same with 64x128 blocks, for products of at most 64 rows */
  VK_SHADER_GEMM_COOP_MID_F16,
  VK_SHADER_CONV_COOP_SMALL_F16, /* and 32x128, for at most 32 rows */
  VK_SHADER_GEMM_COOP_SMALL_F16,
  VK_SHADER_CONV_COOP_EMU_F16, /* the six above with the matrix operations emulated (coop_ops.glsl) */
  VK_SHADER_GEMM_COOP_EMU_F16,
  VK_SHADER_CONV_COOP_MID_EMU_F16,
  VK_SHADER_GEMM_COOP_MID_EMU_F16,
  VK_SHADER_CONV_COOP_SMALL_EMU_F16,
  VK_SHADER_GEMM_COOP_SMALL_EMU_F16,
  VK_SHADER_CONV_COOP_W64_F16, /* 128x128 blocks on four subgroups of 64x64 (GFXEP_VULKAN_COOP_W64) */
  VK_SHADER_GEMM_COOP_W64_F16,
  VK_SHADER_CONV_COOP_W64_EMU_F16,
  VK_SHADER_GEMM_COOP_W64_EMU_F16,
  VK_SHADER_CONV_COOP_CL_F16, /* Conv from a channels-last copy (GFXEP_VULKAN_COOP_NHWC): 128, 64, 32 rows, four subgroups; emulated */
  VK_SHADER_CONV_COOP_CL_MID_F16,
  VK_SHADER_CONV_COOP_CL_SMALL_F16,
  VK_SHADER_CONV_COOP_CL_W64_F16,
  VK_SHADER_CONV_COOP_CL_EMU_F16,
  VK_SHADER_CONV_COOP_CL_MID_EMU_F16,
  VK_SHADER_CONV_COOP_CL_SMALL_EMU_F16,
  VK_SHADER_CONV_COOP_CL_W64_EMU_F16,
  VK_SHADER_GEMM_COOP_PROBE_NO_GLOBAL_F16, /* timing probes, wrong results (GFXEP_VULKAN_COOP_PROBE) */
  VK_SHADER_GEMM_COOP_PROBE_NO_MMA_F16,
  VK_SHADER_CONV_TILED_F32, /* mm_tiled.comp (vk_nn.c): the portable register-blocked products */
  VK_SHADER_CONV_TILED_F16,
  VK_SHADER_GEMM_TILED_F32,
  VK_SHADER_GEMM_TILED_F16,
  VK_SHADER_CONV_TILED_WIDE_F32, /* the same with 64x128 blocks */
  VK_SHADER_CONV_TILED_WIDE_F16,
  VK_SHADER_GEMM_TILED_WIDE_F32,
  VK_SHADER_GEMM_TILED_WIDE_F16,
  VK_SHADER_CONV_TILED_R32_F32, /* the same with 32x128 blocks (products of at most 32 rows) */
  VK_SHADER_CONV_TILED_R32_F16,
  VK_SHADER_GEMM_TILED_R32_F32,
  VK_SHADER_GEMM_TILED_R32_F16,
  VK_SHADER_CONV_TILED_R16_F32, /* and 16x256 (at most 16 rows) */
  VK_SHADER_CONV_TILED_R16_F16,
  VK_SHADER_GEMM_TILED_R16_F32,
  VK_SHADER_GEMM_TILED_R16_F16,
  VK_SHADER_CONV_SPLIT_SUM_F32, /* mm_reduce.comp: the slices of a split K added, then the epilogue */
  VK_SHADER_CONV_SPLIT_SUM_F16,
  VK_SHADER_GEMM_SPLIT_SUM_F32,
  VK_SHADER_GEMM_SPLIT_SUM_F16,
  VK_SHADER_ARGMAX_F32, /* argmax.comp (vk_reduce.c): ArgMax and ArgMin */
  VK_SHADER_ARGMAX_F16,
  VK_SHADER_REDUCE_I32, /* reduce_int.comp: integer Sum/Max/Min/Prod */
  VK_SHADER_REDUCE_I64,
  VK_SHADER_NONZERO_1, /* nonzero.comp (vk_select.c) by element size */
  VK_SHADER_NONZERO_2,
  VK_SHADER_NONZERO_4,
  VK_SHADER_NONZERO_8,
  VK_SHADER_NMS_F32, /* nms.comp (vk_select.c) */
  VK_SHADER_NMS_F16,
  VK_SHADER_NMS_BF16,
  VK_SHADER_ATTENTION_F32, /* attention.comp (vk_attention.c) */
  VK_SHADER_ATTENTION_F16,
  VK_SHADER_TOPK_RADIX_F32, /* topk_radix.comp (vk_topk.c): long lines */
  VK_SHADER_TOPK_RADIX_F16,
  VK_SHADER_EW_BF16, /* elementwise.comp of bfloat16 (vk_elementwise.c) */
  VK_SHADER_EW_BF16_BOOL,
  VK_SHADER_REDUCE_BF16, /* reduce.comp's families of bfloat16 (vk_reduce.c) */
  VK_SHADER_SOFTMAX_BF16,
  VK_SHADER_NORM_BF16,
  VK_SHADER_POOL_BF16,
  VK_SHADER_LRN_BF16,
  VK_SHADER_REDUCE_BF16_SG,
  VK_SHADER_SOFTMAX_BF16_SG,
  VK_SHADER_NORM_BF16_SG,
  VK_SHADER_RESIZE_BF16, /* resize.comp of bfloat16 (vk_resize.c) */
  VK_SHADER_RESIZE_GENERAL_BF16,
  VK_SHADER_ARGMAX_BF16, /* argmax.comp of bfloat16 (vk_reduce.c) */
  VK_SHADER_TOPK_RADIX_BF16,
  VK_SHADER_CONV_BF16, /* the direct kernels of bfloat16 (vk_nn.c) */
  VK_SHADER_GEMM_BF16,
  VK_SHADER_CONV_T_BF16,
  VK_SHADER_BATCHNORM_BF16, /* batchnorm.comp of bfloat16 (vk_misc.c) */
  VK_SHADER_ATTENTION_BF16,
  VK_SHADER_LOGIC,    /* logic_mod.comp (vk_index.c): Not, And, Or, Xor */
  VK_SHADER_MOD_F32,  /* logic_mod.comp's Mod by type: float32, float16, int32, int64 (in this order) */
  VK_SHADER_MOD_F16,
  VK_SHADER_MOD_I32,
  VK_SHADER_MOD_I64,
  VK_SHADER_RANGE_F32, /* range.comp */
  VK_SHADER_RANGE_I32,
  VK_SHADER_RANGE_I64,
  VK_SHADER_TRILU_1,  /* trilu.comp by element size: 1, 2, 4, 8 bytes (in this order) */
  VK_SHADER_TRILU_2,
  VK_SHADER_TRILU_4,
  VK_SHADER_TRILU_8,
  VK_SHADER_INDEX_1,  /* index.comp moving elements of 1, 2, 4, 8 bytes (in this order) */
  VK_SHADER_INDEX_2,
  VK_SHADER_INDEX_4,
  VK_SHADER_INDEX_8,
  VK_SHADER_INDEX_F32, /* index.comp's scatter reductions: float32, float16, int32, int64 (in this order) */
  VK_SHADER_INDEX_F16,
  VK_SHADER_INDEX_I32,
  VK_SHADER_INDEX_I64,
  VK_SHADER_MOD_BF16,   /* logic_mod.comp's Mod of bfloat16, in float32 */
  VK_SHADER_INDEX_BF16, /* index.comp's scatter reductions of bfloat16, in float32 */
  VK_SHADER_SCAN_F32,   /* scan.comp (vk_index.c): CumSum of float32, float16, int32, int64 (in this order) */
  VK_SHADER_SCAN_F16,
  VK_SHADER_SCAN_I32,
  VK_SHADER_SCAN_I64,
  VK_SHADER_SCAN_BF16,
  VK_SHADER_QUANT_F32,  /* quant.comp (vk_quant.c): QuantizeLinear / DequantizeLinear, float32 or float16 */
  VK_SHADER_QUANT_F16,
  VK_SHADER_TOPK,       /* topk.comp (vk_topk.c): the element type a specialization constant */
  VK_SHADER_ROI_ALIGN_F32, /* roi_align.comp (vk_roi_align.c): float32 or float16 */
  VK_SHADER_ROI_ALIGN_F16,
  VK_SHADER_COUNT
} vk_shader_id;

typedef struct vk_shader_blob {
  const char* name; /* "elementwise.comp (float16)" */
  const uint32_t* code;
  size_t bytes;
} vk_shader_blob;

extern const vk_shader_blob vk_shaders[VK_SHADER_COUNT];
_Static_assert(VK_SHADER_COUNT <= VK_SHADER_COUNT_MAX, "room for every shader module");

#define VK_MAX_SPEC 8
#define VK_PUSH_BYTES 128

/* A compute pipeline of one shader with specialization constants 0..n_spec-1 (int32 each). */
struct vk_pipe {
  vk_shader_id shader;
  int n_spec;
  int32_t spec[VK_MAX_SPEC];
  VkPipeline pipeline;
  vk_pipe* next;
};

/* The pipeline for (shader, spec), made on first use and kept by the device; a failure names the
 * shader and the constants. */
gfx_status vk_pipeline_get(vk_device* d, vk_shader_id shader, const int32_t* spec, int n_spec, vk_pipe** out);

/* A node's pipeline for the type signature (key) of its last run, made at the first run with that
 * signature; the node may run on several threads at once. */
typedef struct vk_pipe_slot {
  pthread_mutex_t lock;
  int key; /* -1: none yet */
  vk_pipe* pipe;
} vk_pipe_slot;
void vk_pipe_slot_init(vk_pipe_slot* slot);
void vk_pipe_slot_destroy(vk_pipe_slot* slot);
/* The kept pipeline when it was made for key, else NULL. */
vk_pipe* vk_pipe_slot_find(vk_pipe_slot* slot, int key);
void vk_pipe_slot_keep(vk_pipe_slot* slot, int key, vk_pipe* pipe);
/* The kept pipeline for key, or (shader, spec) made now and kept. */
gfx_status vk_pipe_slot_get(vk_device* d, vk_pipe_slot* slot, int key, vk_shader_id shader, const int32_t* spec,
                            int n_spec, vk_pipe** out);
gfx_status vk_pipeline_init(vk_device* d);    /* the layout and the cache */
void vk_pipeline_teardown(vk_device* d);

/* ---- kernels (vk_elementwise.c, vk_backend.c) ---- */

/* The kernel families of ops.def that this backend implements; everything else is VK_FAM_OTHER. */
typedef enum vk_family {
  VK_FAM_OTHER = 0,
  VK_FAM_UNARY,
  VK_FAM_BINARY,
  VK_FAM_LAYOUT,
  VK_FAM_NN,      /* conv, conv_transpose, gemm, matmul */
  VK_FAM_REDUCE,
  VK_FAM_SOFTMAX,
  VK_FAM_NORM,
  VK_FAM_POOL,
  VK_FAM_MISC,    /* cast, where, batchnorm (vk_misc.c) */
  VK_FAM_RESIZE,  /* resize, space_depth, grid_sample (vk_resize.c) */
  VK_FAM_INDEX,   /* logic, mod, cumsum, range, trilu, index (vk_index.c) */
  VK_FAM_QUANT,   /* quant (vk_quant.c) */
  VK_FAM_TOPK,    /* topk (vk_topk.c) */
  VK_FAM_ROI_ALIGN, /* roi_align (vk_roi_align.c) */
  VK_FAM_SELECT,  /* nonzero, nms (vk_select.c) */
  VK_FAM_ATTENTION, /* attention (vk_attention.c) */
} vk_family;
vk_family vk_family_of(gfx_op op);

/* Per-family entry points; `what` in messages is the node. */
gfx_status vk_supports_elementwise(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_elementwise(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  void** state);
void vk_release_elementwise(vk_device* d, void* state);
gfx_status vk_run_elementwise(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                              gfx_tensor* out, void* state);

gfx_status vk_supports_layout(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_layout(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out, void** state);
/* A batched 2-D transpose that another family records before its own dispatch (vk_nn.c: a
 * convolution's input to channels-last): [batch][rows][cols] -> [batch][cols][rows_out], the rows past
 * `rows` zero, elements of elem_size bytes, on transpose.comp's tiles where both sides are long enough
 * and nothing is padded, else copy_plan.comp. */
typedef struct vk_transpose {
  vk_buffer plan; /* its gpu_plan */
  vk_pipe* pipe;
  int tiled;      /* transpose.comp (else copy_plan.comp, one element per invocation) */
  uint32_t j_dim, others, groups[3];
} vk_transpose;
gfx_status vk_transpose_prepare(vk_device* d, int64_t batch, int64_t rows, int64_t cols, int64_t rows_out, int elem_size,
                                vk_transpose* t);
void vk_transpose_record(vk_device* d, VkCommandBuffer cb, const vk_transpose* t, uint64_t src, uint64_t dst);
void vk_transpose_release(vk_device* d, vk_transpose* t);
void vk_release_layout(vk_device* d, void* state);
gfx_status vk_run_layout(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state);

gfx_status vk_supports_nn(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_nn(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out, void** state,
                         size_t* scratch_bytes);
void vk_release_nn(vk_device* d, void* state);
gfx_status vk_run_nn(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                     void* state);

/* reduce, softmax, norm and pool */
gfx_status vk_supports_reduce(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_reduce(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes);
void vk_release_reduce(vk_device* d, void* state);
gfx_status vk_run_reduce(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state);

/* cast, where, batchnorm (vk_misc.c) */
gfx_status vk_supports_misc(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_misc(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out, void** state);
void vk_release_misc(vk_device* d, void* state);
gfx_status vk_run_misc(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                       gfx_tensor* out, void* state);

/* resize, space_depth (vk_resize.c) */
gfx_status vk_supports_resize(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_resize(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state);
void vk_release_resize(vk_device* d, void* state);
gfx_status vk_run_resize(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state);

/* logic, mod, cumsum, range, trilu, index (vk_index.c) */
gfx_status vk_supports_index(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_index(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state);
void vk_release_index(vk_device* d, void* state);
gfx_status vk_run_index(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                        gfx_tensor* out, void* state);

/* QuantizeLinear, DequantizeLinear (vk_quant.c) */
gfx_status vk_supports_quant(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_quant(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state);
void vk_release_quant(vk_device* d, void* state);
gfx_status vk_run_quant(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                        gfx_tensor* out, void* state);

/* Attention (vk_attention.c) */
gfx_status vk_supports_attention(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_attention(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                void** state, size_t* scratch_bytes);
void vk_release_attention(vk_device* d, void* state);
gfx_status vk_run_attention(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, void* state);

/* NonZero and NonMaxSuppression (vk_select.c) */
gfx_status vk_supports_select(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_select(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes);
void vk_release_select(vk_device* d, void* state);
gfx_status vk_run_select(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state);

/* TopK (vk_topk.c) */
gfx_status vk_supports_topk(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_topk(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                           void** state);
void vk_release_topk(vk_device* d, void* state);
gfx_status vk_run_topk(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                       gfx_tensor* out, void* state);

/* RoiAlign (vk_roi_align.c) */
gfx_status vk_supports_roi_align(vk_device* d, const gfx_node_query* q);
gfx_status vk_prepare_roi_align(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                void** state);
void vk_release_roi_align(vk_device* d, void* state);
gfx_status vk_run_roi_align(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, void* state);

/* Helpers of the kernels with 32-bit indices (vk_misc.c): NOT_SUPPORTED naming the node when one of
 * the n shapes (rank < 0: absent, skipped) has 2^32 elements or more; one dispatch of `pipe` with
 * these push constants over `count` elements in workgroups of 256 (grid-stride, at most 65535
 * groups), then a barrier. */
gfx_status vk_check_elements_u32(const ir_node* node, const gfx_shape* shapes, int n);
/* The workgroups to dispatch for `needed` of them in a shader that walks its work with a grid stride:
 * needed, at most the device's grid_groups. */
uint32_t vk_grid_groups(const vk_device* d, uint64_t needed);
gfx_status vk_dispatch_elements(vk_device* d, void* stream, vk_pipe* pipe, const void* push, size_t push_bytes,
                                uint64_t count);
/* n dispatches of `pipe` in one recording, groups[i] workgroups each and a barrier after each: before
 * dispatch i, *phase (a field of `push`, when not NULL) is set to i and the push constants are
 * written again. One dispatch: n = 1, phase NULL. */
/* A node whose invocations' walks depend on shapes not known when it is claimed: NOT_SUPPORTED on CPU
 * devices (llvmpipe ends an invocation after 65535 loop turns), NULL elsewhere. */
gfx_status vk_cpu_needs_shapes(const vk_device* d, const char* op);
gfx_status vk_dispatch_groups(vk_device* d, void* stream, vk_pipe* pipe, void* push, size_t push_bytes,
                              uint32_t* phase, const uint32_t* groups, uint32_t n);

/* ---- graphics interop (vk_interop.c) ---- */

int vk_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind);
gfx_status vk_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void vk_release_memory(gfx_dev* dev, void* import, void* mapped);
int vk_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind);
gfx_status vk_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
void vk_release_semaphore(gfx_dev* dev, void* semaphore);
gfx_status vk_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status vk_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status vk_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note, size_t note_size);
gfx_status vk_graphics_interop_deinit(gfx_dev* dev);

/* The name the messages use for a device: "device 0 (llvmpipe ...)". */
const char* vk_device_label(vk_device* d, char* buf, size_t size);

#endif

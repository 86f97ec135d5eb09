/* gfxep — vk_producer: a small headless Vulkan "renderer" for tests and demos (tools/vkp; built as
 * the static library gfxep_vkp by tools/vkp/vkp.cmake).
 *
 * It plays the graphics side of ONNX Runtime's graphics interop: it allocates device memory and
 * timeline semaphores that can be exported as opaque file descriptors (for CUDA to import), fills
 * buffers with a known pattern on the GPU, runs the caller's compute shaders on device and host
 * buffers, and copies results back to host-visible memory. Every submission is asynchronous and
 * ordered only by timeline semaphores on the GPU.
 *
 * THE HAZARD (seen on the NVIDIA H200 machine, see shared/reference/DEVICE.md): a host-side Vulkan
 * wait or query (vkWaitSemaphores, vkGetSemaphoreCounterValue) on a timeline value that CUDA
 * signalled hung for more than 55 s, ignoring its timeout. Hence:
 *   - never call vkp_timeline_wait_host on a value that another API (CUDA) signals; wait instead for a
 *     later value that a Vulkan submission signals after a GPU-side wait on the foreign value;
 *   - this library itself only ever host-waits on its own private timeline, which only its own
 *     submissions signal (that is how the command-buffer ring and vkp_finish know what is done);
 *   - vkDeviceWaitIdle is never called.
 *
 * Ownership: every file descriptor handed out (vkp_buffer_export_fd, vkp_timeline_export_fd) is a
 * new descriptor that belongs to the caller: give it to an importer that takes ownership
 * (cuImportExternalMemory / cuImportExternalSemaphore do, on success) or close() it.
 *
 * Errors: every function that can fail returns 0 on success or -1 and writes a one-line message into
 * err[0..n) (err may be NULL). Vulkan failures name the call and the VkResult. Nothing aborts.
 *
 * Threads: a vkp_ctx and its objects are not thread-safe; use them from one thread at a time.
 */
#ifndef GFXEP_TOOLS_VKP_VK_PRODUCER_H
#define GFXEP_TOOLS_VKP_VK_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VKP_UUID_SIZE 16
/* submissions that can be in flight at once; the next one waits (on the private timeline) for the
 * oldest to finish, for at most VKP_RING_WAIT_TIMEOUT_NS */
#define VKP_RING_SIZE 16
#define VKP_RING_WAIT_TIMEOUT_NS 10000000000ull
/* timestamp slots: each holds one begin/end pair */
#define VKP_TIMESTAMP_SLOTS 64
/* storage buffers one compute pipeline may bind (vkp_pipeline_create's n_buffers) */
#define VKP_MAX_BINDINGS 8

typedef struct vkp_ctx vkp_ctx;
typedef struct vkp_buffer vkp_buffer;           /* device-local, exportable as an opaque fd */
typedef struct vkp_host_buffer vkp_host_buffer; /* host-visible, persistently mapped */
typedef struct vkp_sem vkp_sem;                 /* timeline semaphore */
typedef struct vkp_pipeline vkp_pipeline;       /* a compute pipeline of the caller's SPIR-V */

/* ---- context ---------------------------------------------------------------------------------- */

/* Creates instance, device (chosen by VkPhysicalDeviceIDProperties::deviceUUID == want_uuid, or the
 * first device when want_uuid is NULL), a compute queue, a command-buffer ring, the fill pipeline and
 * a timestamp query pool. Requires Vulkan 1.2, timeline semaphores and VK_KHR_external_memory_fd;
 * need_semaphore_fd != 0 also requires VK_KHR_external_semaphore_fd (which is enabled whenever the
 * device has it, needed or not). Validation layers are enabled only if VKP_VALIDATE=1 and
 * VK_LAYER_KHRONOS_validation is installed. */
int vkp_create(const uint8_t* want_uuid, int need_semaphore_fd, vkp_ctx** out, char* err, size_t n);

/* Host-waits until the queue has finished with every submission made so far, for at most
 * timeout_ns: it submits an empty marker signalling the private timeline and waits for that. Safe
 * under the hazard: it waits on the private timeline only. It still blocks for as long as a
 * submission's GPU-side wait on a foreign value is unsatisfied, hence the timeout. */
int vkp_finish(vkp_ctx* ctx, uint64_t timeout_ns, char* err, size_t n);

/* Destroying: the caller should have host-waited on the last Vulkan-signalled value first (every
 * foreign signal the work waits for has then arrived). vkDeviceWaitIdle is deliberately not used,
 * since it would be a host wait on whatever foreign signal a submission still waits for. Instead
 * each destroy function (this one and vkp_*_destroy below) does vkp_finish with a 5 s bound and, if
 * work is still in flight after that, leaks the Vulkan object rather than free it under the GPU.
 * Destroy buffers and semaphores before their context. */
void vkp_destroy(vkp_ctx* ctx);

const char* vkp_device_name(const vkp_ctx* ctx);
const uint8_t* vkp_device_uuid(const vkp_ctx* ctx); /* VKP_UUID_SIZE bytes */
int vkp_has_semaphore_fd(const vkp_ctx* ctx);       /* 1 when VK_KHR_external_semaphore_fd is enabled */

/* The producer's own Vulkan objects, for handing its device and queue to an inference library (gfxep's
 * Vulkan backend through InitGraphicsInterop): handles as void*, the queue's family and index, the
 * loader's vkGetInstanceProcAddr, whether bufferDeviceAddress is enabled, and the optional features
 * enabled as a comma-separated list ("int64,storage8,storage16,float16"). The caller must not submit to
 * the queue from another thread while the library may. */
typedef struct vkp_native_handles {
  void *instance, *physical_device, *device, *queue;
  uint32_t queue_family, queue_index;
  void* get_instance_proc_addr;
  int buffer_device_address;
  const char* features;
} vkp_native_handles;
void vkp_native(const vkp_ctx* ctx, vkp_native_handles* out);
/* The same as the key/value pairs gfxep's Vulkan backend reads from InitGraphicsInterop's
 * additional_options (docs/interop.md: gfxep.vk_instance, _physical_device, _device, _queue_family,
 * _queue_index, _get_instance_proc_addr, _features). Values are written into storage; returns the
 * number of pairs (at most VKP_GFXEP_OPTIONS). */
#define VKP_GFXEP_OPTIONS 7
int vkp_gfxep_options(const vkp_ctx* ctx, const char** keys, const char** values, char (*storage)[64]);
int vkp_has_timestamps(const vkp_ctx* ctx);         /* 1 when the queue can write timestamps */

/* ---- exportable device buffers ---------------------------------------------------------------- */

/* Device-local memory allocated with VkExportMemoryAllocateInfo(OPAQUE_FD), NOT a dedicated
 * allocation (CUDA imports it as non-dedicated); usage storage | transfer src | transfer dst. */
int vkp_buffer_create_exportable(vkp_ctx* ctx, size_t size, vkp_buffer** out, char* err, size_t n);

/* A new opaque fd for the buffer's memory (the caller owns it) and the size of the VkDeviceMemory
 * allocation, which may exceed the buffer size and is what CUDA's import must be given. The buffer
 * sits at offset 0 of the allocation. */
int vkp_buffer_export_fd(vkp_buffer* buf, int* fd, size_t* allocation_size, char* err, size_t n);
size_t vkp_buffer_size(const vkp_buffer* buf);
/* Waits for submitted work first (see vkp_destroy). */
void vkp_buffer_destroy(vkp_buffer* buf);

/* ---- host-visible buffers (readback and upload) ----------------------------------------------- */

/* Host-visible memory, mapped for its whole life; prefers host-cached, then coherent, memory. Usage
 * storage | transfer src | transfer dst: a dispatch can bind it directly (vkp_binding::host). */
int vkp_host_buffer_create(vkp_ctx* ctx, size_t size, vkp_host_buffer** out, char* err, size_t n);
/* The persistent mapping. Call it after host-waiting on the value a copy into this buffer signals:
 * where the memory is not host-coherent it invalidates the mapping so the device's writes are seen. */
int vkp_host_buffer_map(vkp_host_buffer* hb, void** ptr, char* err, size_t n);
/* Call after writing through the mapping and before submitting an upload from it: where the memory
 * is not host-coherent it flushes the mapping; otherwise it does nothing. */
int vkp_host_buffer_flush(vkp_host_buffer* hb, char* err, size_t n);
size_t vkp_host_buffer_size(const vkp_host_buffer* hb);
void vkp_host_buffer_destroy(vkp_host_buffer* hb);

/* ---- timeline semaphores ---------------------------------------------------------------------- */

/* exportable != 0 creates it exportable as an opaque fd (needs vkp_has_semaphore_fd). */
int vkp_timeline_create(vkp_ctx* ctx, uint64_t initial, int exportable, vkp_sem** out, char* err, size_t n);
/* A new opaque fd for the semaphore (the caller owns it). */
int vkp_timeline_export_fd(vkp_sem* sem, int* fd, char* err, size_t n);
/* vkSignalSemaphore from the host; value must exceed the current value. */
int vkp_timeline_signal_host(vkp_sem* sem, uint64_t value, char* err, size_t n);
/* Host-waits until the semaphore reaches value, for at most timeout_ns (-1 with "timed out" after).
 * ONLY for values that Vulkan itself signals (a vkp_submit_* signal or vkp_timeline_signal_host):
 * a host wait on a value CUDA signals can hang past any timeout (the hazard above). */
int vkp_timeline_wait_host(vkp_sem* sem, uint64_t value, uint64_t timeout_ns, char* err, size_t n);
/* Waits for submitted work first (see vkp_destroy). */
void vkp_timeline_destroy(vkp_sem* sem);

/* ---- work submission -------------------------------------------------------------------------- */

/* flags for vkp_sync: queue-family ownership transfers of the device buffer to and from the external
 * API (VK_QUEUE_FAMILY_EXTERNAL), which the Vulkan spec asks for around foreign use of exclusive
 * resources. Set ACQUIRE when the previous writer of the buffer was CUDA, RELEASE when the next
 * user is CUDA. Leave both clear when Vulkan alone uses the buffer. */
#define VKP_ACQUIRE_FROM_EXTERNAL 1u
#define VKP_RELEASE_TO_EXTERNAL 2u

/* How one submission is ordered. A zero-initialised vkp_sync means: no wait, no signal but the
 * private one, no timestamps, no ownership transfer. */
typedef struct vkp_sync {
  vkp_sem* wait_sem;  /* the GPU waits (all stages) until wait_sem >= wait_value; NULL or 0 = none */
  uint64_t wait_value;
  vkp_sem* signal_sem; /* signalled with signal_value when the work is complete; NULL = none */
  uint64_t signal_value;
  int write_timestamps;    /* != 0: write begin/end GPU timestamps into timestamp_slot */
  uint32_t timestamp_slot; /* < VKP_TIMESTAMP_SLOTS */
  unsigned flags;          /* VKP_ACQUIRE_FROM_EXTERNAL | VKP_RELEASE_TO_EXTERNAL */
} vkp_sync;

/* The fill pattern, as the shader computes it, for element i (counted from the first element
 * filled): base + step * ((i mod 1024) - 512). The result is exact in fp32 (so readbacks can be
 * compared with ==) when |step| is a power of two and base a multiple of step with
 * |base| + 512*|step| <= 2^24 * |step|; it spans negative and positive values around base, e.g.
 * base 0, step 0.25 gives -128 .. 127.75. */
static inline float vkp_fill_value(float base, float step, uint64_t i) {
  return base + step * ((float)(i % 1024u) - 512.0f);
}

/* Dispatches the fill shader over count_floats floats of buf starting at byte offset (a multiple of
 * 4), then a barrier making the writes available to later work, then signals. Returns right after
 * vkQueueSubmit. One fill covers at most maxStorageBufferRange bytes (counted from offset rounded
 * down to minStorageBufferOffsetAlignment); split larger ones. */
int vkp_submit_fill(vkp_ctx* ctx, vkp_buffer* buf, size_t offset, size_t count_floats, float base, float step,
                    const vkp_sync* sync, char* err, size_t n);

/* Copies bytes from the device buffer to the host buffer, with a barrier so that the host sees the
 * data once it has waited on sync->signal_value. Returns right after vkQueueSubmit. */
int vkp_submit_copy(vkp_ctx* ctx, vkp_buffer* src, size_t src_offset, vkp_host_buffer* dst, size_t dst_offset,
                    size_t bytes, const vkp_sync* sync, char* err, size_t n);

/* Copies bytes from the host buffer (flushed, see vkp_host_buffer_flush) to the device buffer.
 * Returns right after vkQueueSubmit. */
int vkp_submit_upload(vkp_ctx* ctx, vkp_host_buffer* src, size_t src_offset, vkp_buffer* dst, size_t dst_offset,
                      size_t bytes, const vkp_sync* sync, char* err, size_t n);

/* ---- the caller's compute shaders ------------------------------------------------------------- */

/* A compute pipeline from SPIR-V words (spirv_bytes: a multiple of 4): n_buffers (1..VKP_MAX_BINDINGS)
 * storage buffers at set 0, bindings 0..n_buffers-1, and push_size bytes of push constants (a multiple
 * of 4, <= 128; 0 = none) at offset 0. Entry point "main". */
int vkp_pipeline_create(vkp_ctx* ctx, const uint32_t* spirv, size_t spirv_bytes, uint32_t n_buffers,
                        uint32_t push_size, vkp_pipeline** out, char* err, size_t n);
/* Waits for submitted work first (see vkp_destroy). Destroy pipelines before their context. */
void vkp_pipeline_destroy(vkp_pipeline* pipeline);

/* One binding: either a device buffer or a host buffer (exactly one non-NULL), whole buffer bound
 * (its size must not exceed the device's maxStorageBufferRange). */
typedef struct vkp_binding {
  vkp_buffer* buffer;
  vkp_host_buffer* host;
} vkp_binding;

/* Records: the optional acquire barrier (sync->flags & VKP_ACQUIRE_FROM_EXTERNAL), vkCmdDispatch(groups_x,
 * groups_y, groups_z) (each >= 1 and within maxComputeWorkGroupCount) with the pipeline, its
 * n_bindings (== n_buffers) bindings and push_size (== the pipeline's) bytes of push constants, then a
 * barrier making the shader's writes visible to later transfers and shaders on the queue and to the
 * host (after it has waited on sync->signal_value), the optional release (VKP_RELEASE_TO_EXTERNAL),
 * then the signals. Timestamps as for the other submits. Returns right after vkQueueSubmit.
 *   - The ownership flags apply to every device-buffer binding (once per buffer); host buffers are
 *     never transferred.
 *   - Host buffers: flush (vkp_host_buffer_flush) after writing them and before the submit; map
 *     (vkp_host_buffer_map, which invalidates) after host-waiting on the signal, to read results.
 *   - Descriptor sets come from a pool per command-buffer ring slot, reset when the slot is reused
 *     (after its previous submission completed): there is nothing to free.
 *
 * The shaders in tools/vkp/shaders, compiled to ${CMAKE_BINARY_DIR}/shaders/<name>_spv.h (a bare C
 * initializer list of SPIR-V words: `static const uint32_t scene_spirv[] =` then #include it):
 *
 * scene_spv.h (scene.comp): an animated procedural scene, clean and noisy. n_buffers 2, push 16 bytes.
 *   binding 0: float clean[3*H*W], planar NCHW [1,3,H,W]: clean[c*H*W + y*W + x], c = R,G,B, y = 0 top
 *   binding 1: float noisy[3*H*W], same layout: clean + noise_sigma * N(0,1), not clamped; the
 *              deviate is a stateless hash of (x, y, frame, c), so a frame renders the same every time
 *   push: struct { uint32_t width, height, frame; float noise_sigma; }
 *   groups: ceil(W/16) x ceil(H/16) x 1 (local size 16x16). clean lies in [0, 1]; it moves with frame
 *   (time = frame / 60 s): a sky gradient, a scrolling perspective checkerboard floor, two discs, a ring.
 *
 * present_spv.h (present.comp): side by side, left | right, as RGBA8. n_buffers 3, push 8 bytes.
 *   binding 0: float left[3*H*W]  (NCHW, e.g. the noisy input)
 *   binding 1: float right[3*H*W] (NCHW, e.g. the model output)
 *   binding 2: uint32_t rgba[H*2W], row-major [H][2W]: R in the low byte, then G, B, A = 255; columns
 *              0..W-1 show left, W..2W-1 right; columns W-1 and W are a dark divider 0xFF202020
 *   push: struct { uint32_t width, height; }
 *   groups: ceil(2W/16) x ceil(H/16) x 1 (local size 16x16). Each channel is clamped to [0, 1] (NaN -> 0),
 *   linear (no gamma): byte = floor(v * 255 + 0.5), so 0.5 -> 128, 0.25 -> 64.
 *
 * test_add_spv.h (test_add.comp, built for tests/test_vk_producer.c): sum[i] = a[i] + b[i].
 *   bindings 0 a, 1 b, 2 sum (float); push struct { uint32_t count; }; groups ceil(count/64) x 1 x 1. */
int vkp_submit_dispatch(vkp_ctx* ctx, vkp_pipeline* pipeline, const vkp_binding* bindings, uint32_t n_bindings,
                        const void* push, uint32_t push_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                        const vkp_sync* sync, char* err, size_t n);

/* The begin/end timestamps of the last submission that wrote slot, in nanoseconds on the GPU's
 * clock (ticks * timestampPeriod). Never waits: call it after host-waiting on a Vulkan-signalled
 * value of that submission; -1 with "not available" while the GPU has not written them. */
int vkp_read_timestamps(vkp_ctx* ctx, uint32_t slot, uint64_t* begin_ns, uint64_t* end_ns, char* err, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* GFXEP_TOOLS_VKP_VK_PRODUCER_H */

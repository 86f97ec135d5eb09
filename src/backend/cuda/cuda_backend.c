/* gfxep CUDA backend — the gfx_backend table, memory, streams and events.
 *
 * Built as the module libgfxep_cuda.so, whose only export is gfxep_cuda_backend. The CUDA runtime
 * is linked statically and loads the driver (libcuda.so.1) itself at first use, so loading this
 * module on a machine without a driver or GPU works and simply reports zero devices.
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <time.h>

#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/cuda_interop.h"
#include "backend/cuda/cuda_hold.h"
#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_internal.h"
#include "core/log.h"

/* ---- memory ---- */

static gfx_status cuda_mem_alloc(gfx_dev* dev, size_t bytes, void** out) {
  const int device = dev->index;
  *out = NULL;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaMalloc(out, bytes), "cudaMalloc(%zu bytes) on device %d", bytes, device);
}

static void cuda_mem_free(gfx_dev* dev, void* ptr) {
  const int device = dev->index;
  if (!ptr) return;
  gfx_status s = cuda_use_device(device);
  if (!s) s = cuda_check(cudaFree(ptr), "cudaFree(%p) on device %d", ptr, device);
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
}

/* Portable: the pinned buffer is usable with every device's context, not only this one. */
static gfx_status cuda_host_alloc(gfx_dev* dev, size_t bytes, void** out) {
  const int device = dev->index;
  *out = NULL;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaHostAlloc(out, bytes, cudaHostAllocPortable), "cudaHostAlloc(%zu bytes) for device %d",
                    bytes, device);
}

static void cuda_host_free(gfx_dev* dev, void* ptr) {
  const int device = dev->index;
  if (!ptr) return;
  gfx_status s = cuda_use_device(device);
  if (!s) s = cuda_check(cudaFreeHost(ptr), "cudaFreeHost(%p) for device %d", ptr, device);
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
}

/* A NULL stream means "synchronous": the work was queued on the legacy default stream, wait for it.
 * (cudaMemcpy alone would not do: device-to-device copies return before they are done.) */
static gfx_status finish_if_synchronous(int device, void* stream) {
  if (stream) return NULL;
  return cuda_check(cudaStreamSynchronize(0), "cudaStreamSynchronize(default stream) on device %d", device);
}

static enum cudaMemcpyKind memcpy_kind(gfx_copy_kind kind) {
  switch (kind) {
    case GFX_COPY_HOST_TO_DEVICE: return cudaMemcpyHostToDevice;
    case GFX_COPY_DEVICE_TO_HOST: return cudaMemcpyDeviceToHost;
    case GFX_COPY_DEVICE_TO_DEVICE: return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

static const char* copy_kind_name(gfx_copy_kind kind) {
  switch (kind) {
    case GFX_COPY_HOST_TO_DEVICE: return "host to device";
    case GFX_COPY_DEVICE_TO_HOST: return "device to host";
    case GFX_COPY_DEVICE_TO_DEVICE: return "device to device";
  }
  return "unknown";
}

static gfx_status cuda_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream) {
  const int device = dev->index;
  if (kind != GFX_COPY_HOST_TO_DEVICE && kind != GFX_COPY_DEVICE_TO_HOST && kind != GFX_COPY_DEVICE_TO_DEVICE)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: copy kind %d is not a gfx_copy_kind", (int)kind);
  if (bytes == 0) return NULL;
  GFX_TRY(cuda_use_device(device));
  GFX_TRY(cuda_check(cudaMemcpyAsync(dst, src, bytes, memcpy_kind(kind), (cudaStream_t)stream),
                     "cudaMemcpyAsync(%zu bytes, %s) on device %d", bytes, copy_kind_name(kind), device));
  return finish_if_synchronous(device, stream);
}

static gfx_status cuda_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream) {
  const int device = dev->index;
  if (bytes == 0) return NULL;
  GFX_TRY(cuda_use_device(device));
  GFX_TRY(cuda_check(cudaMemsetAsync(dst, 0, bytes, (cudaStream_t)stream), "cudaMemsetAsync(%zu bytes) on device %d",
                     bytes, device));
  return finish_if_synchronous(device, stream);
}

static gfx_status cuda_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo on device %d", device);
}

/* ---- streams ---- */

/* Non-blocking: our streams never wait for work other libraries queue on the legacy default stream. */
static gfx_status cuda_stream_create(gfx_dev* dev, void** out) {
  const int device = dev->index;
  *out = NULL;
  GFX_TRY(cuda_use_device(device));
  cudaStream_t stream = NULL;
  GFX_TRY(cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags on device %d",
                     device));
  *out = stream;
  return NULL;
}

static void cuda_stream_destroy(gfx_dev* dev, void* stream) {
  const int device = dev->index;
  if (!stream) return;
  gfx_status s = cuda_use_device(device);
  if (!s) s = cuda_check(cudaStreamDestroy((cudaStream_t)stream), "cudaStreamDestroy on device %d", device);
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
}

/* Host waits are bounded: a stream stalled on an imported semaphore that is never signalled must give a
 * status, not hang its caller. The query spins for the first 2 ms (what cudaStreamSynchronize does by
 * default), then yields up to 100 ms, so a long Run still returns within microseconds of its end, and
 * only then sleeps 50 us between queries, up to CUDA_WAIT_LIMIT_NS. */
#define CUDA_WAIT_LIMIT_NS (60ull * 1000 * 1000 * 1000)

static uint64_t cuda_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void cuda_sleep_us(long us) {
  struct timespec ts = {0, us * 1000L};
  nanosleep(&ts, NULL);
}
static void cuda_yield(void) { sched_yield(); }

static gfx_status bounded_wait(cudaError_t (*query)(void*), void* what, int device, const char* name) {
  const uint64_t t0 = cuda_now_ns();
  for (uint64_t now = t0;; now = cuda_now_ns()) {
    cudaError_t err = query(what);
    if (err != cudaErrorNotReady) return cuda_check(err, "%s on device %d", name, device);
    (void)cudaGetLastError();
    const uint64_t waited = now - t0;
    if (waited > CUDA_WAIT_LIMIT_NS)
      return gfx_error(GFX_ERR_DEVICE, "cuda backend: %s on device %d: not done after %.0f s (a wait on a semaphore that "
                       "is never signalled?)", name, device, (double)waited / 1e9);
    if (waited > 100000000ull) cuda_sleep_us(50);
    else if (waited > 2000000ull) cuda_yield();
  }
}

static cudaError_t query_stream(void* s) { return cudaStreamQuery((cudaStream_t)s); }
static cudaError_t query_event(void* e) { return cudaEventQuery((cudaEvent_t)e); }

static gfx_status cuda_stream_sync(gfx_dev* dev, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return bounded_wait(query_stream, stream, device, "cudaStreamSynchronize");
}

/* ---- events ---- */

/* Timing off: these events only order work, and untimed events are cheaper to record and wait on. */
static gfx_status cuda_event_create(gfx_dev* dev, void** out) {
  const int device = dev->index;
  *out = NULL;
  GFX_TRY(cuda_use_device(device));
  cudaEvent_t event = NULL;
  GFX_TRY(cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags on device %d",
                     device));
  *out = event;
  return NULL;
}

/* Timing on: profiling reads the device clock between two of these. */
static gfx_status cuda_timer_create(gfx_dev* dev, void** out) {
  const int device = dev->index;
  *out = NULL;
  GFX_TRY(cuda_use_device(device));
  cudaEvent_t event = NULL;
  GFX_TRY(cuda_check(cudaEventCreate(&event), "cudaEventCreate on device %d", device));
  *out = event;
  return NULL;
}

static gfx_status cuda_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  GFX_TRY(cuda_check(cudaEventSynchronize((cudaEvent_t)end), "cudaEventSynchronize on device %d", device));
  float ms = 0;
  GFX_TRY(cuda_check(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)end), "cudaEventElapsedTime on device %d",
                     device));
  *us = (double)ms * 1e3;
  return NULL;
}

static gfx_status cuda_stream_hold(gfx_dev* dev, void* stream, double us) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cuda_hold_stream((cudaStream_t)stream, (unsigned long long)(us * 1e3)),
                    "holding a stream on device %d", device);
}

static void cuda_event_destroy(gfx_dev* dev, void* event) {
  const int device = dev->index;
  if (!event) return;
  gfx_status s = cuda_use_device(device);
  if (!s) s = cuda_check(cudaEventDestroy((cudaEvent_t)event), "cudaEventDestroy on device %d", device);
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
}

static gfx_status cuda_event_record(gfx_dev* dev, void* event, void* stream) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream), "cudaEventRecord on device %d", device);
}

static gfx_status cuda_stream_wait_event(gfx_dev* dev, void* stream, void* event) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0), "cudaStreamWaitEvent on device %d",
                    device);
}

static gfx_status cuda_event_sync(gfx_dev* dev, void* event) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return bounded_wait(query_event, event, device, "cudaEventSynchronize");
}

/* An error is reported as "done" (after logging it) so that the caller goes on to a wait or sync,
 * which returns the error as a status. */
static int cuda_event_done(gfx_dev* dev, void* event) {
  const int device = dev->index;
  gfx_status s = cuda_use_device(device);
  if (!s) {
    cudaError_t err = cudaEventQuery((cudaEvent_t)event);
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError(); /* not an error: keep it out of the next launch check */
      return 0;
    }
    s = cuda_check(err, "cudaEventQuery on device %d", device);
  }
  if (s) gfx_log(GFX_LOG_WARNING, "cuda backend: %s", gfx_status_message(s));
  gfx_status_free(s);
  return 1;
}

static gfx_status cuda_device_sync(gfx_dev* dev) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  return cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize on device %d", device);
}

/* ---- the table ---- */


/* A 3-D convolution goes to cuDNN's N-d API, which pads both sides of a dim alike, and the explicit
 * padding kernel is 2-D: asymmetric pads (explicit, or what SAME_* may produce) stay with ONNX Runtime. */
static gfx_status cuda_supports_node(gfx_dev* dev, const gfx_node_query* q) {
  if (q->op == GFX_OP_CONV && q->params->conv.chain) return cuda_conv_chain_supports(dev->index, q);
  if (q->op == GFX_OP_CONV && q->params->conv.nchw_input) GFX_TRY(cuda_conv_supports_nchw_input(dev->index, q));
  if (q->op == GFX_OP_CONV && q->params->conv.weights_channels_last)
    GFX_TRY(cuda_conv_supports_weights_channels_last(dev->index, q));
  /* float32 attention fused by ir_fuse: on the H200 ViT-tiny's twelve fused attentions took 1102 us of
   * node time on the tiled float32 kernel, against 282 us for the MatMuls and Softmaxes they replace
   * (cuBLASLt products); the warp-per-row kernel takes rows of few keys without a mask, and only
   * those are fused in float32 (GFXEP_CUDA_ATTENTION_F32_FUSED=0 declines them all) */
  if (q->op == GFX_OP_ATTENTION && q->params->attention.fused && q->desc && q->desc->input_dtypes[0] == GFX_DTYPE_F32) {
    const char* e = getenv("GFXEP_CUDA_ATTENTION_F32_FUSED");
    const ir_attention_params* p = &q->params->attention;
    if ((e && e[0] == '0') || p->has_mask || p->has_mask2 || p->kv_seq < 1 || p->kv_seq > CUDA_ATTENTION_WARP_KEYS ||
        p->head_size > CUDA_ATTENTION_TILED_MAX_HEAD || p->v_head_size > CUDA_ATTENTION_TILED_MAX_HEAD)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: fused float32 attention with a mask or more than %d keys "
                       "(the unfused products are faster)", CUDA_ATTENTION_WARP_KEYS);
  }
  /* a channels-last DepthToSpace holds one run of pixels' channels in 48 KiB of shared memory */
  if (q->op == GFX_OP_DEPTH_TO_SPACE && q->params->space_depth.nhwc_input) {
    const gfx_shape* x = q->desc ? &q->desc->input_shapes[0] : NULL;
    const int64_t bytes = x && x->rank == 4 && x->dims[3] > 0 ? x->dims[3] * (int64_t)gfx_dtype_size(q->desc->input_dtypes[0]) : -1;
    if (bytes <= 0 || bytes > 49152)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a channels-last DepthToSpace of %lld bytes per pixel (known, "
                       "at most 48 KiB is implemented)", (long long)bytes);
  }
  /* cuda_conv_transpose.c describes 1-D and 2-D deconvolutions to cuDNN */
  if (q->op == GFX_OP_CONV_TRANSPOSE && q->params->conv.spatial > 2)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a ConvTranspose over %d spatial dims (1-D and 2-D are "
                     "implemented)", q->params->conv.spatial);
  /* likewise a channels-last one: the explicit padding kernel works plane by plane (NCHW) */
  if (q->op != GFX_OP_CONV || (q->params->conv.spatial != 3 && !q->params->conv.channels_last)) return NULL;
  const ir_conv_params* c = &q->params->conv;
  const char* what = c->channels_last ? "channels-last" : "3-D";
  if (c->auto_pad == IR_PAD_SAME_UPPER || c->auto_pad == IR_PAD_SAME_LOWER)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a %s Conv with auto_pad SAME_* (pads may be asymmetric)", what);
  if (c->auto_pad == IR_PAD_NOTSET)
    for (int i = 0; i < c->spatial; i++)
      if (c->pads[i] != c->pads[c->spatial + i])
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: a %s Conv with asymmetric pads (%lld, %lld) in spatial dim %d",
                         what, (long long)c->pads[i], (long long)c->pads[c->spatial + i], i);
  return NULL;
}

static const gfx_backend cuda_backend = {
    .abi_version = GFX_BACKEND_ABI_VERSION,
    .name = "cuda",
    .flags = GFX_BACKEND_CHANNELS_LAST_CONV,
    .memory_name = "gfxep_cuda",
    .memory_id_base = 0, /* the ordinal, as ORT's own CUDA EP numbers its memory */

    .device_count = cuda_device_count,
    .device_get = cuda_device_get,
    .device_info = cuda_device_info,

    .alignment = CUDA_ALLOC_ALIGNMENT,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .copy = cuda_copy,
    .memset_zero = cuda_memset_zero,
    .mem_info = cuda_mem_info,

    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .event_create = cuda_event_create,
    .timer_create = cuda_timer_create,
    .timer_elapsed_us = cuda_timer_elapsed_us,
    .stream_hold = cuda_stream_hold,
    .stamps_create = cuda_stamps_create,
    .stamps_destroy = cuda_stamps_destroy,
    .stamp_write = cuda_stamp_write,
    .stamp_read_ns = cuda_stamp_read_ns,
    .replay_stamps_create = cuda_replay_stamps_create,
    .replay_stamps_destroy = cuda_replay_stamps_destroy,
    .replay_stamp_record = cuda_replay_stamp_record,
    .replay_stamp_read_ns = cuda_replay_stamp_read_ns,
    .inject_device_loss = cuda_inject_device_loss,
    .device_recover = cuda_device_recover,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait_event = cuda_stream_wait_event,
    .event_sync = cuda_event_sync,
    .event_done = cuda_event_done,
    .device_sync = cuda_device_sync,

    /* every op of the table has a CUDA kernel for every element type and attribute its parse
     * function admits (ir/ops.def), with one exception supports_node declines */
    .supports_node = cuda_supports_node,
    .node_prepare = cuda_node_prepare,
    .node_release = cuda_node_release,
    .node_run = cuda_node_run,
    .set_log_sink = gfx_log_set_sink,

    .can_import_memory = cuda_can_import_memory,
    .import_memory = cuda_import_memory,
    .release_memory = cuda_release_memory,
    .can_import_semaphore = cuda_can_import_semaphore,
    .import_semaphore = cuda_import_semaphore,
    .release_semaphore = cuda_release_semaphore,
    .wait_semaphore = cuda_wait_semaphore,
    .signal_semaphore = cuda_signal_semaphore,
    .graphics_interop_init = cuda_graphics_interop_init,
    .graphics_interop_deinit = cuda_graphics_interop_deinit,

    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
};

const gfx_backend* cuda_backend_table(void) { return &cuda_backend; }

/* The module's only exported symbol (gfxep_cuda.lds hides everything else). */
GFX_MODULE_EXPORT const gfx_backend* gfxep_cuda_backend(const char** why);

const gfx_backend* gfxep_cuda_backend(const char** why) {
  if (why) *why = NULL;
  return &cuda_backend;
}

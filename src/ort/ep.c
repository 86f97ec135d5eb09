/* gfxep — the OrtEp: session-level entry points other than partitioning and compiling. */
#include "ort/ep.h"
#include "ort/frame_timing.h"
#include "ort/layout_choice.h"
#include "ort/profiler.h"

#include <stdlib.h>
#include <string.h>

static gfx_ep* as_ep(const OrtEp* e) { return (gfx_ep*)(void*)e; }

static const char* ORT_API_CALL get_name(const OrtEp* this_ptr) {
  (void)this_ptr;
  return GFXEP_EP_NAME;
}

static OrtStatus* ORT_API_CALL on_run_start(OrtEp* this_ptr, const OrtRunOptions* run_options) {
  gfx_ep* ep = as_ep(this_ptr);
  gfx_ep_forget_last_stream(ep);
  ORT_TRY(gfx_to_ort(gfx_backend_check_alive(ep->device->dev)));
  atomic_fetch_add(&ep->runs, 1);
  if (ep->options.graphs == GFX_GRAPHS_ORT) return gfx_capture_run_start(ep, run_options);
  if (ep->options.frame_timings) gfx_frames_run_start(ep, run_options);
  return NULL;
}

/* With sync_stream, the run's outputs must be ready when Run returns: wait for the stream this
 * thread's compiled nodes ran on (the per-run stream, if the application set one). */
static OrtStatus* ORT_API_CALL on_run_end(OrtEp* this_ptr, const OrtRunOptions* run_options, bool sync_stream) {
  (void)run_options;
  gfx_ep* ep = as_ep(this_ptr);
  /* a capture run ends its capture and launches the graph before anything waits for the stream */
  if (ep->options.graphs == GFX_GRAPHS_ORT) ORT_TRY(gfx_capture_run_end(ep));
  void* stream = gfx_ep_last_stream(ep);
  if (ep->options.frame_timings && ep->options.graphs != GFX_GRAPHS_ORT) gfx_frames_run_end(ep, stream);
  if (!sync_stream) return NULL;
  if (stream) return gfx_to_ort(gfx_backend_stream_sync(ep->device->dev, stream));
  return gfx_to_ort(gfx_backend_device_sync(ep->device->dev));
}

static OrtStatus* ORT_API_CALL create_allocator(OrtEp* this_ptr, const OrtMemoryInfo* info, OrtAllocator** out) {
  gfx_ep* ep = as_ep(this_ptr);
  *out = NULL;
  bool host = false;
  gfx_device* d = gfx_device_for_memory(ep->devices, gfx_ep_api->MemoryInfo_GetMemoryDevice(info), &host);
  if (d != ep->device)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: allocator requested for memory of another device");
  return gfx_allocator_create_for_ep(d, info, &ep->options, out);
}

static OrtStatus* ORT_API_CALL create_sync_stream(OrtEp* this_ptr, const OrtMemoryDevice* md,
                                                  OrtSyncStreamImpl** out) {
  gfx_ep* ep = as_ep(this_ptr);
  *out = NULL;
  bool host = false;
  gfx_device* d = gfx_device_for_memory(ep->devices, md, &host);
  if (d != ep->device || host)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: stream requested for memory that is not this EP's device");
  /* with cuda_graph=ort every session stream is the EP's one stream: warm-ups, capture and replays
   * meet on it whichever wrapper ORT hands a run */
  return gfx_stream_create(d, ep->options.graphs == GFX_GRAPHS_ORT ? ep->run_stream : NULL, out);
}

/* Concurrent runs are safe: compiled models are shared read-only after their shape instances are
 * built (under a lock), and each run takes its own workspace and runs on its own stream. Not with
 * cuda_graph=ort: all runs share one stream, and a capture would record another run's work. */
static OrtStatus* ORT_API_CALL is_concurrent_run_supported(OrtEp* this_ptr, bool* out) {
  *out = as_ep(this_ptr)->options.graphs != GFX_GRAPHS_ORT;
  return NULL;
}

static OrtStatus* ORT_API_CALL sync_device(OrtEp* this_ptr) {
  gfx_ep* ep = as_ep(this_ptr);
  return gfx_to_ort(gfx_backend_device_sync(ep->device->dev));
}

/* layout=nhwc: ONNX Runtime hands the Convs gfxep claimed over channels-last (capability.c claims only
 * those its backend runs so), and the pooling and Resize nodes where every one of their op type runs
 * channels-last too; every other op stays as it is (normalization, DepthToSpace, ConvTranspose), and
 * ORT's transposes around the converted nodes move through the element-wise ops between them and
 * cancel. layout=auto: the same where GetCapability,
 * which ORT calls just before asking, found the graph's Convs worth it (layout_choice.h). */
static OrtStatus* ORT_API_CALL get_preferred_data_layout(OrtEp* this_ptr, OrtEpDataLayout* out) {
  const gfx_ep* ep = as_ep(this_ptr);
  const int nhwc = ep->options.layout == GFX_LAYOUT_NHWC || (ep->options.layout == GFX_LAYOUT_AUTO && ep->layout_nhwc);
  *out = nhwc ? OrtEpDataLayout_NHWC : OrtEpDataLayout_NCHW;
  return NULL;
}

static OrtStatus* ORT_API_CALL should_convert_data_layout_for_op(OrtEp* this_ptr, const char* domain,
                                                                 const char* op_type, OrtEpDataLayout target,
                                                                 int* should_convert) {
  const gfx_ep* ep = as_ep(this_ptr);
  const int onnx = !domain || !domain[0];
  /* Convs: every one gfxep took runs channels-last (capability.c declines or keeps NCHW otherwise);
   * pooling and Resize: only the op types all of whose nodes do, for the graph GetCapability just saw */
  *should_convert = target == OrtEpDataLayout_NHWC && onnx &&
                    (strcmp(op_type, "Conv") == 0 || (gfx_layout_nhwc_bit_of_type(op_type) & ep->nhwc_ops));
  return NULL;
}

static OrtStatus* ORT_API_CALL get_kernel_registry(OrtEp* this_ptr, const OrtKernelRegistry** out) {
  gfx_device_set* set = as_ep(this_ptr)->devices;
  pthread_mutex_lock(&set->lock);
  OrtStatus* s = set->kernels ? NULL : gfx_memcpy_registry_create(&set->kernels);
  *out = set->kernels;
  pthread_mutex_unlock(&set->lock);
  return s;
}

/* Counts the session on its device; a lost device is brought back first when nothing of gfxep's is left
 * on it (CUDA: cudaDeviceReset), else the session is refused with the reason. Sets up the frame log. */
static OrtStatus* enter_device(gfx_ep* ep) {
  gfx_device* d = ep->device;
  pthread_mutex_lock(&ep->devices->lock);
  gfx_status s = NULL;
  if (gfx_backend_is_lost(d->dev)) {
    if (d->live_eps > 0)
      s = gfx_backend_check_alive(d->dev);
    else {
      gfx_frame_log_destroy(d); /* its stamps belong to the lost context */
      d->frame_log_failed = 0;
      s = gfx_backend_recover(d->dev);
    }
  }
  if (!s) {
    d->live_eps++;
    /* the log also carries the watchdog: the waits are stamped whenever either is on */
    if ((ep->options.frame_timings || ep->options.wait_timeout_ms) && ep->options.graphs != GFX_GRAPHS_ORT &&
        gfx_frame_log_for(d))
      gfx_frame_log_set_timeout(d, ep->options.wait_timeout_ms);
  }
  pthread_mutex_unlock(&ep->devices->lock);
  return gfx_to_ort(s);
}

OrtStatus* gfx_ep_create(gfx_device_set* devices, gfx_device* d, const OrtSessionOptions* so, const OrtLogger* logger,
                         OrtEp** out) {
  *out = NULL;
  gfx_ep_options options;
  ORT_TRY(gfx_ep_options_parse(so, &options));
  gfx_ep* ep = calloc(1, sizeof *ep);
  if (!ep) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating the EP");
  ep->devices = devices;
  ep->device = d;
  ep->logger = logger;
  ep->options = options;
  OrtEp* b = &ep->base;
  b->ort_version_supported = ORT_API_VERSION;
  b->GetName = get_name;
  b->GetCapability = gfx_ep_get_capability;
  b->Compile = gfx_ep_compile;
  b->ReleaseNodeComputeInfos = gfx_ep_release_compute_infos;
  b->OnRunStart = on_run_start;
  b->OnRunEnd = on_run_end;
  b->CreateAllocator = create_allocator;
  b->CreateSyncStreamForDevice = create_sync_stream;
  b->IsConcurrentRunSupported = is_concurrent_run_supported;
  b->GetKernelRegistry = get_kernel_registry;
  b->GetPreferredDataLayout = get_preferred_data_layout;
  b->ShouldConvertDataLayoutForOp = should_convert_data_layout_for_op;
  if (gfx_ort_minor >= 25) {
    b->Sync = sync_device;
    b->CreateProfiler = gfx_ep_create_profiler;
  }
  pthread_mutex_init(&ep->profilers_lock, NULL);
  static atomic_uint_fast64_t sessions;
  ep->session_id = atomic_fetch_add(&sessions, 1) + 1;
  atomic_init(&ep->runs, 0);
  const char* inject = getenv("GFXEP_INJECT_DEVICE_LOSS_AT_RUN");
  if (inject) ep->inject_loss_at_run = strtoull(inject, NULL, 10);
  if (options.layout == GFX_LAYOUT_NHWC && !gfx_backend_channels_last_conv(d->dev)) {
    pthread_mutex_destroy(&ep->profilers_lock);
    free(ep);
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: layout=nhwc: the %s backend has no channels-last convolution "
                         "(the cuda and reference backends have)", gfx_backend_name(d->dev));
  }
  OrtStatus* s = enter_device(ep);
  if (s) {
    free(ep);
    return s;
  }
  s = gfx_capture_init(ep);
  if (s) {
    gfx_ep_destroy(b);
    return s;
  }
  *out = b;
  return NULL;
}

void gfx_ep_destroy(OrtEp* e) {
  gfx_ep* ep = as_ep(e);
  gfx_profiler_detach_all(ep); /* a profiler ORT releases later must not reach back into this EP */
  gfx_ep_forget_last_stream(NULL);
  gfx_capture_destroy(ep);
  pthread_mutex_destroy(&ep->profilers_lock);
  pthread_mutex_lock(&ep->devices->lock);
  ep->device->live_eps--;
  pthread_mutex_unlock(&ep->devices->lock);
  free(ep);
}

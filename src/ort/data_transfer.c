/* gfxep — OrtDataTransferImpl: copies between host memory and gfxep device memory, and within a
 * device. ORT uses it for initializers, feeds and fetches, its Memcpy nodes and OrtApi::CopyTensors.
 *
 * Page-locked (HOST_ACCESSIBLE) memory of a device is host memory for copying purposes. With a
 * stream the copy is queued on it; without one the copy is complete when CopyTensors returns.
 */
#include <stdlib.h>
#include <string.h>

#include "ort/ep.h"

typedef struct gfx_data_transfer {
  OrtDataTransferImpl base; /* first */
  gfx_device_set* devices;
} gfx_data_transfer;

/* Where a side of a copy lives: host (CPU or page-locked), or a gfxep device's memory. */
typedef struct side {
  int is_host;
  gfx_device* device; /* NULL for plain CPU memory */
} side;

static int classify(gfx_device_set* f, const OrtMemoryDevice* md, side* out) {
  bool host_accessible = false;
  out->device = gfx_device_for_memory(f, md, &host_accessible);
  if (out->device) {
    out->is_host = host_accessible;
    return 1;
  }
  out->is_host = gfx_ep_api->MemoryDevice_GetDeviceType(md) == OrtMemoryInfoDeviceType_CPU;
  return out->is_host;
}

static bool ORT_API_CALL can_copy(const OrtDataTransferImpl* this_ptr, const OrtMemoryDevice* src,
                                  const OrtMemoryDevice* dst) {
  gfx_device_set* f = ((const gfx_data_transfer*)(const void*)this_ptr)->devices;
  side s, d;
  if (!classify(f, src, &s) || !classify(f, dst, &d)) return false;
  if (s.is_host && d.is_host) return s.device || d.device; /* leave plain CPU<->CPU to ORT */
  if (!s.is_host && !d.is_host) return s.device == d.device || s.device->dev->backend == d.device->dev->backend;
  return true;
}

static OrtStatus* copy_one(gfx_device_set* f, const OrtValue* src, OrtValue* dst, OrtSyncStream* stream) {
  /* ORT copies feeds and fetches outside the nodes: in a run captured for cuda_graph=ort such a copy
   * would not be in the graph, and replays would silently skip it */
  if (gfx_capture_thread_busy())
    return gfx_ort_error(ORT_EP_FAIL,
                         "gfxep: cuda_graph=ort: ONNX Runtime copies a tensor during the run being captured, and "
                         "replays would skip that copy: bind every input and output in gfxep's device memory "
                         "(IOBinding) for graph capture");
  side s, d;
  if (!classify(f, gfx_ep_api->Value_GetMemoryDevice(src), &s) ||
      !classify(f, gfx_ep_api->Value_GetMemoryDevice(dst), &d))
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CopyTensors was given memory gfxep cannot reach");
  size_t src_bytes = 0, dst_bytes = 0;
  ORT_TRY(gfx_ort->GetTensorSizeInBytes(src, &src_bytes));
  ORT_TRY(gfx_ort->GetTensorSizeInBytes(dst, &dst_bytes));
  if (src_bytes != dst_bytes)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CopyTensors from %zu bytes into %zu bytes", src_bytes,
                         dst_bytes);
  if (src_bytes == 0) return NULL;
  const void* from = NULL;
  void* to = NULL;
  ORT_TRY(gfx_ort->GetTensorData(src, &from));
  ORT_TRY(gfx_ort->GetTensorMutableData(dst, &to));
  /* ORT (1.29, 1.30) answers an allocator's NULL with a tensor that has no memory, not with an error */
  if (!from || !to)
    return gfx_to_ort(gfx_error(GFX_ERR_OUT_OF_MEMORY,
                                "gfxep: CopyTensors of %zu bytes into a tensor without memory: its allocator "
                                "failed (out of memory, or the session's device_memory_limit was reached; gfxep's "
                                "allocator logged which)",
                                src_bytes));

  gfx_device* dev = !s.is_host ? s.device : d.device;
  void* native = stream ? gfx_ort->SyncStream_GetHandle(stream) : NULL;
  /* a stream of another device or EP cannot order this copy: copy synchronously instead */
  if (stream && gfx_stream_device(stream) != dev) native = NULL;
  if (s.is_host && d.is_host) {
    /* page-locked <-> CPU: the host copy may only start once the device is done with the block */
    if (native) ORT_TRY(gfx_to_ort(gfx_backend_stream_sync(dev->dev, native)));
    memcpy(to, from, src_bytes);
    return NULL;
  }
  gfx_copy_kind kind = s.is_host ? GFX_COPY_HOST_TO_DEVICE : d.is_host ? GFX_COPY_DEVICE_TO_HOST
                                                                       : GFX_COPY_DEVICE_TO_DEVICE;
  /* visible at VERBOSE: how an application checks that its zero-copy path really copies nothing */
  if (gfx_ort_log_enabled(f->logger, ORT_LOGGING_LEVEL_VERBOSE))
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_VERBOSE, "gfxep: data transfer copies %zu bytes %s", src_bytes,
                kind == GFX_COPY_HOST_TO_DEVICE   ? "host to device"
                : kind == GFX_COPY_DEVICE_TO_HOST ? "device to host"
                                                  : "device to device");
  return gfx_to_ort(gfx_backend_copy(dev->dev, to, from, src_bytes, kind, native));
}

static OrtStatus* ORT_API_CALL copy_tensors(OrtDataTransferImpl* this_ptr, const OrtValue** src, OrtValue** dst,
                                            OrtSyncStream** streams, size_t n) {
  gfx_device_set* f = ((gfx_data_transfer*)(void*)this_ptr)->devices;
  for (size_t i = 0; i < n; i++) ORT_TRY(copy_one(f, src[i], dst[i], streams ? streams[i] : NULL));
  return NULL;
}

/* ORT owns what CreateDataTransfer returned and releases it, possibly after the factory is gone. */
static void ORT_API_CALL release(OrtDataTransferImpl* this_ptr) { free(this_ptr); }

OrtStatus* gfx_data_transfer_create(gfx_device_set* f, OrtDataTransferImpl** out) {
  gfx_data_transfer* t = calloc(1, sizeof *t);
  if (!t) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory");
  t->devices = f;
  t->base.ort_version_supported = ORT_API_VERSION;
  t->base.Release = release;
  t->base.CanCopy = can_copy;
  t->base.CopyTensors = copy_tensors;
  *out = &t->base;
  return NULL;
}

/* gfxep — the kernel registry: MemcpyFromHost / MemcpyToHost kernels for the copies ORT inserts
 * between its CPU EP and gfxep partitions, and If (control_flow.c).
 *
 * Why gfxep registers its own: ORT's generic fallback copy kernels run on the CPU EP and, in the
 * versions gfxep supports, allocate MemcpyFromHost's output in CPU memory even when the consumer is a
 * device partition, and copy without ordering against the device stream. With these kernels the copy
 * belongs to gfxep: the output lands in the device's memory, and the copy is ordered on the run's
 * stream. A device-to-host copy waits for its stream before returning, because the CPU node that
 * reads the result runs as soon as the kernel returns.
 */
#include <limits.h>
#include <stdlib.h>

#include "ort/device_objects.h"
#include "ort/ep.h"

typedef struct memcpy_kernel {
  OrtKernelImpl base; /* first */
  const gfx_ep* ep;
  int to_host;
} memcpy_kernel;

static OrtStatus* ORT_API_CALL memcpy_compute(OrtKernelImpl* this_ptr, OrtKernelContext* ctx) {
  memcpy_kernel* k = (memcpy_kernel*)(void*)this_ptr;
  const gfx_device* d = k->ep->device;
  if (gfx_capture_thread_busy())
    return gfx_ort_error(ORT_EP_FAIL, "gfxep: cuda_graph=ort: a %s node runs in the run being captured; its host "
                                      "copy cannot be part of the graph (keep the whole model on gfxep's device)",
                         k->to_host ? "MemcpyToHost" : "MemcpyFromHost");
  const OrtValue* in = NULL;
  ORT_TRY(gfx_ort->KernelContext_GetInput(ctx, 0, &in));
  ONNXTensorElementDataType type;
  const int64_t* dims = NULL;
  size_t rank = 0;
  ORT_TRY(gfx_ort->GetTensorElementTypeAndShapeDataReference(in, &type, &dims, &rank));
  OrtValue* out = NULL;
  ORT_TRY(gfx_ort->KernelContext_GetOutput(ctx, 0, dims, rank, &out));
  size_t bytes = 0;
  ORT_TRY(gfx_ort->GetTensorSizeInBytes(in, &bytes));
  if (bytes == 0) return NULL;
  const void* src = NULL;
  void* dst = NULL;
  ORT_TRY(gfx_ort->GetTensorData(in, &src));
  ORT_TRY(gfx_ort->GetTensorMutableData(out, &dst));
  /* an allocator's NULL reaches a kernel as an output without memory (ORT 1.29, 1.30) */
  if (!dst)
    return gfx_to_ort(gfx_error(GFX_ERR_OUT_OF_MEMORY,
                                "gfxep: %s of %zu bytes got no %s memory for its output: %s (gfxep's allocator "
                                "logged which)",
                                k->to_host ? "MemcpyToHost" : "MemcpyFromHost", bytes, k->to_host ? "host" : "device",
                                k->to_host ? "out of memory"
                                           : "the device is out of memory or the session's device_memory_limit "
                                             "was reached"));
  void* stream = NULL;
  ORT_TRY(gfx_ort->KernelContext_GetGPUComputeStream(ctx, &stream));
  gfx_copy_kind kind = k->to_host ? GFX_COPY_DEVICE_TO_HOST : GFX_COPY_HOST_TO_DEVICE;
  ORT_TRY(gfx_to_ort(gfx_backend_copy(d->dev, dst, src, bytes, kind, stream)));
  if (k->to_host && stream) ORT_TRY(gfx_to_ort(gfx_backend_stream_sync(d->dev, stream)));
  return NULL;
}

static void ORT_API_CALL memcpy_release(OrtKernelImpl* this_ptr) { free(this_ptr); }

static OrtStatus* create_kernel(const OrtKernelInfo* info, int to_host, OrtKernelImpl** out) {
  *out = NULL;
  const OrtEp* ep = NULL;
  ORT_TRY(gfx_ep_api->KernelInfo_GetEp(info, &ep));
  memcpy_kernel* k = calloc(1, sizeof *k);
  if (!k) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating a copy kernel");
  k->ep = (const gfx_ep*)(const void*)ep;
  k->to_host = to_host;
  k->base.ort_version_supported = ORT_API_VERSION;
  k->base.flags = 0;
  k->base.Compute = memcpy_compute;
  k->base.Release = memcpy_release;
  *out = &k->base;
  return NULL;
}

static OrtStatus* ORT_API_CALL create_from_host(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  (void)state;
  return create_kernel(info, 0, out);
}

static OrtStatus* ORT_API_CALL create_to_host(void* state, const OrtKernelInfo* info, OrtKernelImpl** out) {
  (void)state;
  return create_kernel(info, 1, out);
}

/* Every fixed-size tensor element type a copy can carry. */
static const ONNXTensorElementDataType copy_types[] = {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,   ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,   ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
};

static OrtStatus* add_copy_kernel(OrtKernelRegistry* reg, const char* op, int to_host) {
  OrtKernelDefBuilder* b = NULL;
  OrtKernelDef* def = NULL;
  ORT_TRY(gfx_ep_api->CreateKernelDefBuilder(&b));
  const OrtDataType* types[sizeof copy_types / sizeof copy_types[0]];
  size_t n_types = sizeof copy_types / sizeof copy_types[0];
  OrtStatus* s = NULL;
  for (size_t i = 0; i < n_types && !s; i++) s = gfx_ep_api->GetTensorDataType(copy_types[i], &types[i]);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetOperatorType(b, op);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetDomain(b, "");
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetSinceVersion(b, 1, INT_MAX);
  if (!s) s = gfx_ep_api->KernelDefBuilder_SetExecutionProvider(b, GFXEP_EP_NAME);
  if (!s)
    s = to_host ? gfx_ep_api->KernelDefBuilder_SetOutputMemType(b, 0, OrtMemTypeCPUOutput)
                : gfx_ep_api->KernelDefBuilder_SetInputMemType(b, 0, OrtMemTypeCPUInput);
  if (!s) s = gfx_ep_api->KernelDefBuilder_AddTypeConstraint(b, "T", types, n_types);
  if (!s) s = gfx_ep_api->KernelDefBuilder_Build(b, &def);
  if (!s) s = gfx_ep_api->KernelRegistry_AddKernel(reg, def, to_host ? create_to_host : create_from_host, NULL);
  if (def) gfx_ep_api->ReleaseKernelDef(def);
  gfx_ep_api->ReleaseKernelDefBuilder(b);
  return s;
}

OrtStatus* gfx_memcpy_registry_create(OrtKernelRegistry** out) {
  *out = NULL;
  OrtKernelRegistry* reg = NULL;
  ORT_TRY(gfx_ep_api->CreateKernelRegistry(&reg));
  OrtStatus* s = add_copy_kernel(reg, "MemcpyFromHost", 0);
  if (!s) s = add_copy_kernel(reg, "MemcpyToHost", 1);
  if (!s) s = gfx_if_kernels_add(reg); /* control_flow.c */
  if (s) {
    gfx_ep_api->ReleaseKernelRegistry(reg);
    return s;
  }
  *out = reg;
  return NULL;
}

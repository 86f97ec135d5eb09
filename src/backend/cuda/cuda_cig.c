/* gfxep CUDA backend — CUDA-in-Graphics: a context that shares the graphics API's scheduling.
 *
 * Where the driver reports CIG support for the graphics API (CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED /
 * _VULKAN_CIG_SUPPORTED) and InitGraphicsInterop hands over the graphics queue's data (D3D12: the
 * ID3D12CommandQueue; Vulkan: the VK_NV_external_compute_queue blob), the backend creates a CIG context
 * with cuCtxCreate_v4 and makes it current wherever it works on that device (cuda_use_device), so
 * every stream, allocation, kernel and library handle of gfxep is on it from then on.
 *
 * Memory of one context cannot be used by kernels of another, so the switch happens only while gfxep
 * holds no device memory yet: InitGraphicsInterop must come before the first session on the device
 * (ORT's documented order). Otherwise, and wherever the driver or the device lacks CIG, interop runs on
 * the primary context and the note says why. The additional option "gfxep.cuda_cig" = auto (default)
 * | off | require picks; with "require", a missing piece is an error naming it.
 *
 * The driver API is reached through cudaGetDriverEntryPointByVersion, so the module links no libcuda.
 */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "backend/cuda/cuda_interop.h"
#include "backend/cuda/cuda_internal.h"

#define KEY_CIG "gfxep.cuda_cig"

typedef CUresult (*ctx_create_v4_fn)(CUcontext*, CUctxCreateParams*, unsigned int, CUdevice);
typedef CUresult (*ctx_set_current_fn)(CUcontext);
typedef CUresult (*ctx_destroy_fn)(CUcontext);

static CUcontext cig_contexts[CUDA_MAX_DEVICES];

void* cuda_cig_context(int device) {
  return device >= 0 && device < CUDA_MAX_DEVICES ? (void*)cig_contexts[device] : NULL;
}

static void* driver_entry(const char* name, unsigned version) {
  void* fn = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  return fn;
}

gfx_status cuda_cig_make_current(int device) {
  static ctx_set_current_fn set_current;
  if (!set_current) set_current = (ctx_set_current_fn)driver_entry("cuCtxSetCurrent", 4000);
  if (!set_current) return gfx_error(GFX_ERR_DEVICE, "cuda backend: the driver has no cuCtxSetCurrent");
  CUresult r = set_current(cig_contexts[device]);
  if (r != CUDA_SUCCESS)
    return gfx_error(GFX_ERR_DEVICE, "cuda backend: cuCtxSetCurrent(CIG context of device %d): CUresult %d", device,
                     (int)r);
  return NULL;
}

typedef enum { CIG_AUTO, CIG_OFF, CIG_REQUIRE } cig_mode;

static gfx_status read_mode(const gfx_interop_config* c, cig_mode* mode) {
  *mode = CIG_AUTO;
  for (size_t i = 0; i < c->count; i++) {
    if (strcmp(c->keys[i], KEY_CIG) != 0) continue;
    const char* v = c->values[i];
    if (strcmp(v, "auto") == 0) *mode = CIG_AUTO;
    else if (strcmp(v, "off") == 0) *mode = CIG_OFF;
    else if (strcmp(v, "require") == 0) *mode = CIG_REQUIRE;
    else
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "cuda backend: InitGraphicsInterop: %s = '%s' is not one of auto, off, require", KEY_CIG, v);
  }
  return NULL;
}

/* Why CIG cannot be used here, or NULL when it can. */
static const char* why_not(gfx_dev* dev, const gfx_interop_config* c, char* buf, size_t size) {
  const int device = dev->index;
  const int d3d12 = c->api == GFX_GRAPHICS_API_D3D12;
  const char* api_name = d3d12 ? "D3D12" : "Vulkan";
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, d3d12 ? cudaDevAttrD3D12CigSupported : cudaDevAttrVulkanCigSupported,
                             device) != cudaSuccess) {
    (void)cudaGetLastError();
    supported = 0;
  }
  if (!supported) {
    snprintf(buf, size, "device %d does not support CUDA-in-Graphics with %s", device, api_name);
    return buf;
  }
  if (d3d12 ? !c->queue : !c->nv_blob) {
    snprintf(buf, size, "no %s given (%s)", d3d12 ? "ID3D12CommandQueue" : "VK_NV_external_compute_queue data",
             d3d12 ? "config->command_queue" : "additional option VkExternalComputeQueueDataParamsNV_data");
    return buf;
  }
  if (dev->live_allocations > 0) {
    snprintf(buf, size,
             "gfxep already holds %ld allocations on the device's primary context (InitGraphicsInterop must come "
             "before the first session on the device)",
             dev->live_allocations);
    return buf;
  }
  if (!driver_entry("cuCtxCreate", 12050)) {
    snprintf(buf, size, "the driver has no cuCtxCreate_v4");
    return buf;
  }
  return NULL;
}

gfx_status cuda_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note, size_t note_size) {
  const int device = dev->index;
  GFX_TRY(cuda_use_device(device));
  cig_mode mode;
  GFX_TRY(read_mode(config, &mode));
  const char* api_name = config->api == GFX_GRAPHICS_API_D3D12 ? "D3D12" : "Vulkan";
  if (mode == CIG_OFF) {
    snprintf(note, note_size, "CUDA-in-Graphics off (%s = off); interop runs on the primary context", KEY_CIG);
    return NULL;
  }
  char reason[256];
  const char* no = why_not(dev, config, reason, sizeof reason);
  if (no && mode == CIG_REQUIRE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: InitGraphicsInterop: %s = require, but %s", KEY_CIG, no);
  if (no) {
    snprintf(note, note_size, "%s; interop runs on the primary context, without CUDA-in-Graphics", no);
    return NULL;
  }
  CUctxCigParam cig = {.sharedDataType = config->api == GFX_GRAPHICS_API_D3D12 ? CIG_DATA_TYPE_D3D12_COMMAND_QUEUE
                                                                               : CIG_DATA_TYPE_NV_BLOB,
                       .sharedData = config->api == GFX_GRAPHICS_API_D3D12 ? config->queue : (void*)config->nv_blob};
  CUctxCreateParams params = {.execAffinityParams = NULL, .numExecAffinityParams = 0, .cigParams = &cig};
  ctx_create_v4_fn create = (ctx_create_v4_fn)driver_entry("cuCtxCreate", 12050);
  CUcontext ctx = NULL;
  CUresult r = create(&ctx, &params, 0, (CUdevice)device);
  if (r != CUDA_SUCCESS) {
    if (mode == CIG_REQUIRE)
      return gfx_error(GFX_ERR_DEVICE, "cuda backend: InitGraphicsInterop: cuCtxCreate_v4 (CIG, %s) on device %d: CUresult %d",
                       api_name, device, (int)r);
    snprintf(note, note_size, "cuCtxCreate_v4 (CIG, %s) failed with CUresult %d; interop runs on the primary context",
             api_name, (int)r);
    return NULL;
  }
  /* cuCtxCreate made it current on this thread; every thread switches in cuda_use_device */
  cig_contexts[device] = ctx;
  cuda_forget_context(device); /* library handles and kernels are loaded again, in the CIG context */
  GFX_TRY(cuda_use_device(device));
  snprintf(note, note_size, "CUDA-in-Graphics context created with the %s queue; gfxep's CUDA work runs on it",
           api_name);
  return NULL;
}

gfx_status cuda_graphics_interop_deinit(gfx_dev* dev) {
  const int device = dev->index;
  if (!cig_contexts[device]) return cuda_use_device(device);
  if (dev->live_allocations > 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "cuda backend: DeinitGraphicsInterop: %ld allocations of gfxep still live in the CIG context of "
                     "device %d; release the sessions and imports first",
                     dev->live_allocations, device);
  ctx_destroy_fn destroy = (ctx_destroy_fn)driver_entry("cuCtxDestroy", 4000);
  CUcontext ctx = cig_contexts[device];
  cig_contexts[device] = NULL;
  cuda_forget_context(device);
  if (destroy) {
    CUresult r = destroy(ctx);
    if (r != CUDA_SUCCESS)
      return gfx_error(GFX_ERR_DEVICE, "cuda backend: cuCtxDestroy (CIG context of device %d): CUresult %d", device,
                       (int)r);
  }
  return cuda_use_device(device); /* back on the primary context */
}

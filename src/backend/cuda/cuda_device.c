/* gfxep CUDA backend — device enumeration and the calling thread's current device. */
#include <stdio.h>
#include <string.h>
#include <threads.h>

#include <stdatomic.h>

#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_conv_chain.h"
#include "backend/cuda/cuda_fill.h"
#include "backend/cuda/cuda_conv_narrow.h"
#include "backend/cuda/cuda_conv_thin.h"
#include "backend/cuda/cuda_conv_tf32x3.h"
#include "backend/cuda/cuda_elementwise.h"
#include "backend/cuda/cuda_hold.h"
#include "backend/cuda/cuda_index.h"
#include "backend/cuda/cuda_quant.h"
#include "backend/cuda/cuda_select.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_layout.h"
#include "backend/cuda/cuda_topk.h"
#include "backend/cuda/cuda_pad.h"
#include "backend/cuda/cuda_reduce.h"
#include "backend/cuda/cuda_resize.h"
#include "core/log.h"

/* ---- device count ---- */

static once_flag device_count_once = ONCE_FLAG_INIT;
static int device_count_value;

/* Errors that only mean "this machine has no usable NVIDIA GPU": not worth a warning. */
static int means_no_gpu(cudaError_t err) {
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary;
}

static void query_device_count(void) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    gfx_log(means_no_gpu(err) ? GFX_LOG_VERBOSE : GFX_LOG_WARNING, "cuda backend: no CUDA devices: %s (%s)",
            cudaGetErrorString(err), cudaGetErrorName(err));
    count = 0;
  }
  if (count > CUDA_MAX_DEVICES) {
    gfx_log(GFX_LOG_WARNING, "cuda backend: %d CUDA devices, using the first %d", count, CUDA_MAX_DEVICES);
    count = CUDA_MAX_DEVICES;
  }
  device_count_value = count;
}

/* The device set cannot change while the process runs (CUDA_VISIBLE_DEVICES is read once at driver
 * initialisation), so the count is queried once. */
int cuda_device_count(void) {
  call_once(&device_count_once, query_device_count);
  return device_count_value;
}

static gfx_status check_ordinal(int device) {
  int count = cuda_device_count();
  if (device < 0 || device >= count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: device %d does not exist (%d CUDA devices)", device,
                     count);
  return NULL;
}

/* ---- current device ---- */

/* The device this thread last made current through cuda_use_device, or -1. cudaSetDevice is cheap
 * when the device is already current, but it is called before every operation, so repeated calls
 * for the same device skip it. The cache assumes nothing else switches this thread's device behind
 * our back: CUDA runtime is linked statically, so other libraries' cudaSetDevice calls go to their
 * own runtime, but a driver-level context switch by another CUDA user on the same thread would not
 * be seen. If that ever matters, drop the cache here; nothing else depends on it. */
static _Thread_local int current_device = -1;
static _Thread_local void* current_cig; /* the CIG context this thread made current, NULL: the primary */

/* Devices whose context has gfxep's own kernels loaded (see cuda_elementwise.cu for why). */
static atomic_int kernels_loaded[CUDA_MAX_DEVICES];

static gfx_status load_kernels(int device) {
  if (atomic_load(&kernels_loaded[device])) return NULL;
  GFX_TRY(cuda_check(cuda_elementwise_preload(), "loading the elementwise kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_pad_preload(), "loading the padding kernel on device %d", device));
  GFX_TRY(cuda_check(cuda_conv_narrow_preload(), "loading the few-channel convolution kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_fill_preload(), "loading the graph fill kernel on device %d", device));
  GFX_TRY(cuda_check(cuda_conv_thin_preload(), "loading the few-output-channel convolution kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_conv_tf32x3_preload(), "loading the float32 tensor-core convolution kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_conv_chain_preload(), "loading the convolution chain kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_reduce_preload(), "loading the reduction kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_layout_preload(), "loading the layout kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_resize_preload(), "loading the resampling kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_index_preload(), "loading the logic, scan and index kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_topk_preload(), "loading the TopK kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_quant_preload(), "loading the quantization kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_hold_preload(), "loading the stream-hold kernel on device %d", device));
  GFX_TRY(cuda_check(cuda_attention_preload(), "loading the attention kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_add_norm_preload(), "loading the residual-add normalization kernels on device %d", device));
  GFX_TRY(cuda_check(cuda_select_preload(), "loading the NonZero and NonMaxSuppression kernels on device %d", device));
  atomic_store(&kernels_loaded[device], 1);
  return NULL;
}

void cuda_forget_context(int device) {
  if (device < 0 || device >= CUDA_MAX_DEVICES) return;
  atomic_store(&kernels_loaded[device], 0);
  cuda_forget_handles(device);
  current_device = -1;
  current_cig = NULL;
}

/* With a CUDA-in-Graphics context on the device (cuda_cig.c), that context is made current instead of
 * the primary one: the runtime API then works on it. */
gfx_status cuda_use_device(int device) {
  void* cig = cuda_cig_context(device);
  if (device == current_device && cig == current_cig) return NULL;
  GFX_TRY(check_ordinal(device));
  if (cig) GFX_TRY(cuda_cig_make_current(device));
  else GFX_TRY(cuda_check(cudaSetDevice(device), "cudaSetDevice(%d)", device));
  GFX_TRY(load_kernels(device));
  current_device = device;
  current_cig = cig;
  return NULL;
}

/* ---- device description ---- */

/* PCI address as ONNX Runtime and sysfs write it: "0000:00:06.0", lowercase hex. */
static void format_pci_bus_id(const struct cudaDeviceProp* prop, char* out, size_t size) {
  snprintf(out, size, "%04x:%02x:%02x.0", (unsigned)prop->pciDomainID, (unsigned)prop->pciBusID,
           (unsigned)prop->pciDeviceID);
}

/* Properties are read without making the device current: that would create its context (hundreds
 * of MiB and a noticeable delay) just to describe it. */
static gfx_status get_properties(int device, struct cudaDeviceProp* prop) {
  GFX_TRY(check_ordinal(device));
  return cuda_check(cudaGetDeviceProperties(prop, device), "cudaGetDeviceProperties(device %d)", device);
}

gfx_status cuda_device_info(gfx_dev* dev, gfx_device_info* out) {
  const int device = dev->index;
  struct cudaDeviceProp prop;
  GFX_TRY(get_properties(device, &prop));
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof out->name - 1, prop.name); /* CUDA allows 255 chars */
  memcpy(out->uuid, prop.uuid.bytes, sizeof out->uuid);
  out->has_uuid = 1;
  format_pci_bus_id(&prop, out->pci_bus_id, sizeof out->pci_bus_id);
#if defined(_WIN32)
  /* The LUID is only defined on Windows (WDDM); elsewhere the field holds garbage. */
  memcpy(out->luid, prop.luid, sizeof out->luid);
  out->has_luid = prop.luidDeviceNodeMask != 0;
#endif
  out->pci_vendor_id = 0x10DE; /* NVIDIA */
  out->pci_device_id = 0;      /* the CUDA runtime does not report it (NVML would) */
  out->total_memory = prop.totalGlobalMem;
  out->compute_major = prop.major;
  out->compute_minor = prop.minor;
  /* CUDA-in-Graphics, per graphics API: what InitGraphicsInterop can use (cuda_cig.c) */
  int cig_vulkan = 0, cig_d3d12 = 0;
  if (cudaDeviceGetAttribute(&cig_vulkan, cudaDevAttrVulkanCigSupported, device) != cudaSuccess) cig_vulkan = 0;
  if (cudaDeviceGetAttribute(&cig_d3d12, cudaDevAttrD3D12CigSupported, device) != cudaSuccess) cig_d3d12 = 0;
  (void)cudaGetLastError();
  snprintf(out->features, sizeof out->features, "%s%s%s", cig_vulkan ? "cig_vulkan" : "",
           cig_vulkan && cig_d3d12 ? "," : "", cig_d3d12 ? "cig_d3d12" : "");
  return NULL;
}

/* ---- device objects ---- */

static gfx_dev devices[CUDA_MAX_DEVICES];

gfx_status cuda_device_get(int index, gfx_dev** out) {
  *out = NULL;
  GFX_TRY(check_ordinal(index));
  /* the table is filled once per index with the same values: racing writers write the same bytes */
  devices[index] = (gfx_dev){.backend = cuda_backend_table(), .index = index, .impl = NULL};
  *out = &devices[index];
  return NULL;
}

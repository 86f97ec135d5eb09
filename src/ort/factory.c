/* gfxep — OrtEpFactory: which devices gfxep offers, and the objects shared across its sessions.
 *
 * Devices:
 *  - CUDA: every NVIDIA GPU the CUDA backend sees. ORT's hardware devices are matched to CUDA
 *    ordinals exactly, by PCI bus id on Linux and by LUID on Windows; a CUDA device ORT did not
 *    offer gets a hardware device created here.
 *  - Reference: plain C on the CPU, offered only when the library is registered under a name that
 *    ends in ".reference". It is a test oracle and a fallback where nothing else runs, so it must
 *    never show up (and get picked by an automatic EP selection policy) unless asked for.
 */
#include "ort/factory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ort/ep.h"

#define NVIDIA_VENDOR_ID 0x10DEu
/* Identity tag for the reference device's memory (ASCII "gf"); it is no PCI vendor. */
#define REFERENCE_VENDOR_ID 0x6766u
#define REFERENCE_SUFFIX ".reference"

static gfx_factory* as_factory(const OrtEpFactory* f) { return (gfx_factory*)(void*)f; }

static const char* ORT_API_CALL get_name(const OrtEpFactory* f) {
  (void)f;
  return GFXEP_EP_NAME;
}
static const char* ORT_API_CALL get_vendor(const OrtEpFactory* f) {
  (void)f;
  return GFXEP_VENDOR;
}
static uint32_t ORT_API_CALL get_vendor_id(const OrtEpFactory* f) {
  (void)f;
  return GFXEP_VENDOR_ID;
}
static const char* ORT_API_CALL get_version(const OrtEpFactory* f) {
  (void)f;
  return GFXEP_VERSION;
}

static void hex(const uint8_t* bytes, size_t n, char* out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", bytes[i]);
  out[2 * n] = 0;
}

static OrtStatus* make_memory_infos(gfx_device* d, const char* name) {
  char host_name[64];
  snprintf(host_name, sizeof host_name, "%s_pinned", name);
  ORT_TRY(gfx_ort->CreateMemoryInfo_V2(name, OrtMemoryInfoDeviceType_GPU, d->mem_vendor_id, d->mem_device_id,
                                        OrtDeviceMemoryType_DEFAULT, 0, OrtDeviceAllocator, &d->mem_default));
  /* HOST_ACCESSIBLE keeps the GPU device type and id: ORT infers CPU access from the memory type */
  ORT_TRY(gfx_ort->CreateMemoryInfo_V2(host_name, OrtMemoryInfoDeviceType_GPU, d->mem_vendor_id, d->mem_device_id,
                                        OrtDeviceMemoryType_HOST_ACCESSIBLE, 0, OrtDeviceAllocator, &d->mem_host));
  return NULL;
}

static OrtStatus* publish_device(gfx_factory* f, gfx_device* d) {
  OrtKeyValuePairs* meta = NULL;
  gfx_ort->CreateKeyValuePairs(&meta);
  char buf[64];
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_BACKEND, d->backend->name);
  snprintf(buf, sizeof buf, "%d", d->ordinal);
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_ORDINAL, buf);
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_NAME, d->info.name);
  if (d->info.has_uuid) {
    hex(d->info.uuid, 16, buf);
    gfx_ort->AddKeyValuePair(meta, GFXEP_META_UUID, buf);
  }
  if (d->info.has_luid) {
    hex(d->info.luid, 8, buf);
    gfx_ort->AddKeyValuePair(meta, GFXEP_META_LUID, buf);
  }
  if (d->info.pci_bus_id[0]) gfx_ort->AddKeyValuePair(meta, GFXEP_META_PCI, d->info.pci_bus_id);
  if (strcmp(d->backend->name, "reference") == 0)
    gfx_ort->AddKeyValuePair(meta, GFXEP_META_NOTE,
                             "reference backend: plain C on the CPU, slow by design; a test oracle and a fallback "
                             "where no GPU backend runs");
  OrtStatus* s = gfx_ep_api->CreateEpDevice(&f->base, d->hw, meta, NULL, &d->ep_device);
  gfx_ort->ReleaseKeyValuePairs(meta);
  if (s) return s;
  ORT_TRY(gfx_ep_api->EpDevice_AddAllocatorInfo(d->ep_device, d->mem_default));
  ORT_TRY(gfx_ep_api->EpDevice_AddAllocatorInfo(d->ep_device, d->mem_host));
  return NULL;
}

static OrtStatus* add_device(gfx_factory* f, const gfx_backend* be, int ordinal, const OrtHardwareDevice* hw,
                             OrtHardwareDevice* owned_hw) {
  if (f->n_devices == GFX_MAX_EP_DEVICES) {
    if (owned_hw) gfx_ep_api->ReleaseHardwareDevice(owned_hw);
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_WARNING, "gfxep: more than %d devices; device %d of %s is not offered",
                GFX_MAX_EP_DEVICES, ordinal, be->name);
    return NULL;
  }
  gfx_device* d = &f->devices[f->n_devices++];
  memset(d, 0, sizeof *d);
  d->backend = be;
  d->ordinal = ordinal;
  d->hw = owned_hw ? owned_hw : hw;
  d->owned_hw = owned_hw;
  ORT_TRY(gfx_to_ort(be->device_info(ordinal, &d->info)));
  int is_ref = strcmp(be->name, "reference") == 0;
  d->mem_vendor_id = is_ref ? REFERENCE_VENDOR_ID : NVIDIA_VENDOR_ID;
  d->mem_device_id = ordinal;
  ORT_TRY(make_memory_infos(d, is_ref ? "gfxep_reference" : "gfxep_cuda"));
  return NULL;
}

/* The CUDA ordinal of an ORT hardware device, or -1. */
static int match_cuda(const gfx_backend* be, const OrtHardwareDevice* hw) {
  const OrtKeyValuePairs* meta = gfx_ort->HardwareDevice_Metadata(hw);
  const char* pci = meta ? gfx_ort->GetKeyValue(meta, "pci_bus_id") : NULL;
  int ordinal = -1;
  if (pci && pci[0]) {
    gfx_status s = be->device_by_pci_bus_id(pci, &ordinal);
    if (s) {
      gfx_status_free(s);
      ordinal = -1;
    }
    return ordinal;
  }
  const char* luid = meta ? gfx_ort->GetKeyValue(meta, "LUID") : NULL;
  if (luid && luid[0]) {
    unsigned long long want = strtoull(luid, NULL, 10);
    for (int i = 0; i < be->device_count(); i++) {
      gfx_device_info info;
      gfx_status s = be->device_info(i, &info);
      if (s) {
        gfx_status_free(s);
        continue;
      }
      unsigned long long got = 0;
      memcpy(&got, info.luid, sizeof got); /* LUIDs are compared as the 64-bit value Windows prints */
      if (info.has_luid && got == want) return i;
    }
  }
  return -1;
}

static OrtStatus* discover_cuda(gfx_factory* f, const OrtHardwareDevice* const* hw, size_t n) {
  const char* why = NULL;
  const gfx_backend* be = gfx_backend_cuda(&why);
  if (!be) {
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: CUDA backend not available: %s", why);
    return NULL;
  }
  if (be->set_log_sink) {
    void* user = NULL;
    gfx_log_sink sink = gfx_log_get_sink(&user);
    be->set_log_sink(sink, user);
  }
  int count = be->device_count();
  if (count <= 0) {
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: no CUDA device found; the CUDA backend offers nothing");
    return NULL;
  }
  char used[64] = {0};
  for (size_t i = 0; i < n; i++) {
    if (gfx_ort->HardwareDevice_Type(hw[i]) != OrtHardwareDeviceType_GPU) continue;
    uint32_t vendor = gfx_ort->HardwareDevice_VendorId(hw[i]);
    if (vendor != NVIDIA_VENDOR_ID && vendor != 0) continue;
    int ordinal = match_cuda(be, hw[i]);
    if (ordinal < 0 || ordinal >= 64 || used[ordinal]) continue;
    used[ordinal] = 1;
    ORT_TRY(add_device(f, be, ordinal, hw[i], NULL));
  }
  /* CUDA devices ORT did not list (ORT builds without GPU discovery): describe them ourselves */
  for (int ordinal = 0; ordinal < count && ordinal < 64; ordinal++) {
    if (used[ordinal]) continue;
    gfx_device_info info;
    ORT_TRY(gfx_to_ort(be->device_info(ordinal, &info)));
    OrtKeyValuePairs* meta = NULL;
    gfx_ort->CreateKeyValuePairs(&meta);
    if (info.pci_bus_id[0]) gfx_ort->AddKeyValuePair(meta, "pci_bus_id", info.pci_bus_id);
    gfx_ort->AddKeyValuePair(meta, "Description", info.name);
    OrtHardwareDevice* created = NULL;
    OrtStatus* s = gfx_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_GPU, NVIDIA_VENDOR_ID, info.pci_device_id,
                                                     "NVIDIA", meta, &created);
    gfx_ort->ReleaseKeyValuePairs(meta);
    if (s) return s;
    ORT_TRY(add_device(f, be, ordinal, NULL, created));
  }
  return NULL;
}

static OrtStatus* discover_reference(gfx_factory* f, const OrtHardwareDevice* const* hw, size_t n) {
  const OrtHardwareDevice* cpu = NULL;
  for (size_t i = 0; i < n && !cpu; i++)
    if (gfx_ort->HardwareDevice_Type(hw[i]) == OrtHardwareDeviceType_CPU) cpu = hw[i];
  OrtHardwareDevice* created = NULL;
  if (!cpu) ORT_TRY(gfx_ep_api->CreateHardwareDevice(OrtHardwareDeviceType_CPU, 0, 0, "CPU", NULL, &created));
  return add_device(f, gfx_backend_reference(), 0, cpu, created);
}

static OrtStatus* ORT_API_CALL get_supported_devices(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* hw,
                                                     size_t n, OrtEpDevice** ep_devices, size_t max_ep_devices,
                                                     size_t* num_ep_devices) {
  gfx_factory* f = as_factory(this_ptr);
  *num_ep_devices = 0;
  if (f->n_devices > 0)
    return gfx_ort_error(ORT_FAIL, "gfxep: GetSupportedDevices called twice on one factory");
  if (f->offer_reference)
    ORT_TRY(discover_reference(f, hw, n));
  else
    ORT_TRY(discover_cuda(f, hw, n));
  for (int i = 0; i < f->n_devices && (size_t)i < max_ep_devices; i++) {
    ORT_TRY(publish_device(f, &f->devices[i]));
    ep_devices[(*num_ep_devices)++] = f->devices[i].ep_device;
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: offering %s device %d: %s%s%s",
                f->devices[i].backend->name, f->devices[i].ordinal, f->devices[i].info.name,
                f->devices[i].info.pci_bus_id[0] ? " at " : "", f->devices[i].info.pci_bus_id);
  }
  return NULL;
}

gfx_device* gfx_factory_device_for_memory(gfx_factory* f, const OrtMemoryDevice* md, bool* host_accessible) {
  if (!md || gfx_ep_api->MemoryDevice_GetDeviceType(md) != OrtMemoryInfoDeviceType_GPU) return NULL;
  uint32_t vendor = gfx_ep_api->MemoryDevice_GetVendorId(md);
  int id = (int)gfx_ep_api->MemoryDevice_GetDeviceId(md);
  for (int i = 0; i < f->n_devices; i++) {
    gfx_device* d = &f->devices[i];
    if (d->mem_vendor_id == vendor && d->mem_device_id == id) {
      if (host_accessible)
        *host_accessible = gfx_ep_api->MemoryDevice_GetMemoryType(md) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
      return d;
    }
  }
  return NULL;
}

gfx_device* gfx_factory_device_for_ep(gfx_factory* f, const OrtHardwareDevice* hw, const OrtKeyValuePairs* meta) {
  const char* backend = meta ? gfx_ort->GetKeyValue(meta, GFXEP_META_BACKEND) : NULL;
  const char* ordinal = meta ? gfx_ort->GetKeyValue(meta, GFXEP_META_ORDINAL) : NULL;
  for (int i = 0; i < f->n_devices; i++) {
    gfx_device* d = &f->devices[i];
    if (backend && ordinal) {
      if (strcmp(backend, d->backend->name) == 0 && atoi(ordinal) == d->ordinal) return d;
    } else if (d->hw == hw) {
      return d;
    }
  }
  return NULL;
}

static OrtStatus* ORT_API_CALL create_ep(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* hw,
                                         const OrtKeyValuePairs* const* meta, size_t n,
                                         const OrtSessionOptions* session_options, const OrtLogger* logger,
                                         OrtEp** ep) {
  gfx_factory* f = as_factory(this_ptr);
  *ep = NULL;
  if (n != 1)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: a session uses exactly one gfxep device; %zu were given", n);
  gfx_device* d = gfx_factory_device_for_ep(f, hw[0], meta[0]);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: the device given to CreateEp is not one gfxep offered");
  return gfx_ep_create(f, d, session_options, logger, ep);
}

static void ORT_API_CALL release_ep(OrtEpFactory* this_ptr, OrtEp* ep) {
  (void)this_ptr;
  gfx_ep_destroy(ep);
}

static OrtStatus* ORT_API_CALL create_allocator(OrtEpFactory* this_ptr, const OrtMemoryInfo* info,
                                                const OrtKeyValuePairs* options, OrtAllocator** out) {
  (void)options;
  *out = NULL;
  gfx_factory* f = as_factory(this_ptr);
  gfx_device* d = gfx_factory_device_for_memory(f, gfx_ep_api->MemoryInfo_GetMemoryDevice(info), NULL);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CreateAllocator for memory that is not gfxep's");
  return gfx_allocator_create(d, info, 1, out);
}

static void ORT_API_CALL release_allocator(OrtEpFactory* this_ptr, OrtAllocator* a) {
  (void)this_ptr;
  gfx_allocator_destroy(a);
}

static OrtStatus* ORT_API_CALL create_data_transfer(OrtEpFactory* this_ptr, OrtDataTransferImpl** out) {
  *out = NULL;
  return gfx_data_transfer_create(as_factory(this_ptr), out);
}

static bool ORT_API_CALL is_stream_aware(const OrtEpFactory* this_ptr) {
  (void)this_ptr;
  return true;
}

static OrtStatus* ORT_API_CALL create_sync_stream(OrtEpFactory* this_ptr, const OrtMemoryDevice* md,
                                                  const OrtKeyValuePairs* options, OrtSyncStreamImpl** out) {
  (void)options;
  *out = NULL;
  bool host = false;
  gfx_device* d = gfx_factory_device_for_memory(as_factory(this_ptr), md, &host);
  if (!d || host)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: streams are created for a gfxep device's DEFAULT memory");
  return gfx_stream_create(d, NULL, out);
}

static OrtStatus* ORT_API_CALL validate_compiled_model(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* hw,
                                                       size_t n, const char* info,
                                                       OrtCompiledModelCompatibility* out) {
  (void)this_ptr, (void)hw, (void)n, (void)info;
  *out = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE; /* gfxep writes no EPContext models */
  return NULL;
}

gfx_device* gfx_factory_device_for_ep_device(gfx_factory* f, const OrtEpDevice* ep_device) {
  for (int i = 0; i < f->n_devices; i++)
    if (ep_device && f->devices[i].ep_device == ep_device) return &f->devices[i];
  return NULL;
}

static OrtStatus* ORT_API_CALL create_importer(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device,
                                               OrtExternalResourceImporterImpl** out) {
  if (!out) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CreateExternalResourceImporterForDevice: out is NULL");
  *out = NULL;
  gfx_device* d = gfx_factory_device_for_ep_device(as_factory(this_ptr), ep_device);
  if (!d)
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: CreateExternalResourceImporterForDevice: the EP device is not one gfxep offered");
  return gfx_importer_create(d, out);
}

/* The VK_NV_external_compute_queue blob an application may pass, as NVIDIA's own EP reads it: a
 * pointer printed as a decimal number under this key of additional_options. */
#define NV_QUEUE_DATA_KEY "VkExternalComputeQueueDataParamsNV_data"

static OrtStatus* ORT_API_CALL init_graphics_interop(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device,
                                                     const OrtGraphicsInteropConfig* config) {
  gfx_factory* f = as_factory(this_ptr);
  gfx_device* d = gfx_factory_device_for_ep_device(f, ep_device);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: the EP device is not gfxep's");
  if (!config) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: config is NULL");
  if (config->version < 25)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: config version %u; 25 or newer expected",
                         config->version);
  gfx_graphics_api api;
  switch (config->graphics_api) {
    case ORT_GRAPHICS_API_D3D12: api = GFX_GRAPHICS_API_D3D12; break;
    case ORT_GRAPHICS_API_VULKAN: api = GFX_GRAPHICS_API_VULKAN; break;
    case ORT_GRAPHICS_API_NONE:
      return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: graphics_api is ORT_GRAPHICS_API_NONE");
    default:
      return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: graphics_api %d is unknown",
                           (int)config->graphics_api);
  }
#if !defined(_WIN32)
  if (api == GFX_GRAPHICS_API_D3D12)
    return gfx_ort_error(ORT_NOT_IMPLEMENTED, "gfxep: InitGraphicsInterop: D3D12 interop needs Windows");
#endif
  if (!d->backend->graphics_interop_init)
    return gfx_ort_error(ORT_NOT_IMPLEMENTED, "gfxep: InitGraphicsInterop: the %s backend has no graphics interop",
                         d->backend->name);
  const void* nv_blob = NULL;
  const char* blob = config->additional_options ? gfx_ort->GetKeyValue(config->additional_options, NV_QUEUE_DATA_KEY)
                                                : NULL;
  if (blob && blob[0]) {
    char* end = NULL;
    unsigned long long v = strtoull(blob, &end, 10);
    if (!end || *end || v == 0)
      return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: %s = '%s' is not a pointer value",
                           NV_QUEUE_DATA_KEY, blob);
    nv_blob = (const void*)(uintptr_t)v;
  }
  pthread_mutex_lock(&f->lock);
  OrtStatus* s = NULL;
  if (d->interop_ready) {
    s = gfx_ort_error(ORT_FAIL, "gfxep: InitGraphicsInterop: graphics interop is already initialized for %s device %d",
                      d->backend->name, d->ordinal);
  } else {
    char note[256] = "";
    s = gfx_to_ort(d->backend->graphics_interop_init(d->ordinal, api, config->command_queue, nv_blob, note,
                                                     sizeof note));
    if (!s) {
      d->interop_ready = 1;
      gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: graphics interop on %s device %d: %s", d->backend->name,
                  d->ordinal, note);
    }
  }
  pthread_mutex_unlock(&f->lock);
  return s;
}

static OrtStatus* ORT_API_CALL deinit_graphics_interop(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device) {
  gfx_factory* f = as_factory(this_ptr);
  gfx_device* d = gfx_factory_device_for_ep_device(f, ep_device);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: DeinitGraphicsInterop: the EP device is not gfxep's");
  pthread_mutex_lock(&f->lock);
  OrtStatus* s = NULL;
  if (!d->interop_ready) {
    s = gfx_ort_error(ORT_FAIL, "gfxep: DeinitGraphicsInterop: graphics interop is not initialized for %s device %d",
                      d->backend->name, d->ordinal);
  } else {
    s = gfx_to_ort(d->backend->graphics_interop_deinit(d->ordinal));
    d->interop_ready = 0;
  }
  pthread_mutex_unlock(&f->lock);
  return s;
}

static OrtStatus* ORT_API_CALL get_num_custom_op_domains(OrtEpFactory* this_ptr, size_t* n) {
  (void)this_ptr;
  *n = 0;
  return NULL;
}

static OrtStatus* ORT_API_CALL get_custom_op_domains(OrtEpFactory* this_ptr, OrtCustomOpDomain** domains, size_t n) {
  (void)this_ptr, (void)domains, (void)n;
  return NULL;
}

OrtStatus* gfx_factory_create(const char* registered_name, const OrtLogger* logger, gfx_factory** out) {
  gfx_factory* f = calloc(1, sizeof *f);
  if (!f) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating the factory");
  f->logger = logger;
  snprintf(f->registered_name, sizeof f->registered_name, "%s", registered_name ? registered_name : "");
  size_t len = strlen(f->registered_name), sl = strlen(REFERENCE_SUFFIX);
  f->offer_reference = len >= sl && strcasecmp(f->registered_name + len - sl, REFERENCE_SUFFIX) == 0;

  OrtEpFactory* b = &f->base;
  b->ort_version_supported = ORT_API_VERSION;
  b->GetName = get_name;
  b->GetVendor = get_vendor;
  b->GetSupportedDevices = get_supported_devices;
  b->CreateEp = create_ep;
  b->ReleaseEp = release_ep;
  b->GetVendorId = get_vendor_id;
  b->GetVersion = get_version;
  b->ValidateCompiledModelCompatibilityInfo = validate_compiled_model;
  b->CreateAllocator = create_allocator;
  b->ReleaseAllocator = release_allocator;
  b->CreateDataTransfer = create_data_transfer;
  b->IsStreamAware = is_stream_aware;
  b->CreateSyncStreamForDevice = create_sync_stream;
  b->CreateExternalResourceImporterForDevice = create_importer;
  b->InitGraphicsInterop = init_graphics_interop;
  b->DeinitGraphicsInterop = deinit_graphics_interop;
  b->GetNumCustomOpDomains = get_num_custom_op_domains;
  b->GetCustomOpDomains = get_custom_op_domains;
  pthread_mutex_init(&f->lock, NULL);
  *out = f;
  return NULL;
}

void gfx_factory_destroy(gfx_factory* f) {
  if (!f) return;
  for (int i = 0; i < f->n_devices; i++) {
    gfx_device* d = &f->devices[i];
    if (d->mem_default) gfx_ort->ReleaseMemoryInfo(d->mem_default);
    if (d->mem_host) gfx_ort->ReleaseMemoryInfo(d->mem_host);
    if (d->owned_hw) gfx_ep_api->ReleaseHardwareDevice(d->owned_hw);
  }
  if (f->kernels) gfx_ep_api->ReleaseKernelRegistry(f->kernels);
  pthread_mutex_destroy(&f->lock);
  free(f);
}

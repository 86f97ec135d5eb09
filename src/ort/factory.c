/* gfxep — OrtEpFactory: which devices gfxep offers, and the objects shared across its sessions.
 *
 * Devices: every device of every backend in the registry (backend/registry.h), in its order. ORT's
 * hardware devices are matched to backend devices exactly: by PCI bus id (Linux), by LUID (Windows),
 * or by PCI vendor and device id when ORT gives neither; a backend device ORT did not offer gets a
 * hardware device created here. Two backends may offer the same GPU (CUDA and Vulkan on an NVIDIA
 * GPU): each gets its own EP device, told apart by the gfxep.backend metadata.
 *
 * A registration whose name ends in ".<backend>" ("gfxep.vulkan", "gfxep.reference") offers only that
 * backend's devices, software ones included; any other name offers every backend's hardware
 * devices, except backends whose memory is host memory (the reference backend), so that neither a
 * test oracle nor a CPU implementation of a GPU API displaces ORT's own CPU EP unless asked for.
 */
#include "ort/factory.h"
#include "ort/frame_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend/registry.h"
#include "backend/wrap.h"
#include "ort/device_objects.h"
#include "ort/ep.h"

/* Identity tag for the memory of devices that are no PCI device (ASCII "gf"); it is no PCI vendor. */
#define HOST_MEMORY_VENDOR_ID 0x6766u

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
  char host_name[96];
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
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_BACKEND, d->backend_name);
  snprintf(buf, sizeof buf, "%d", d->dev->index);
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_ORDINAL, buf);
  gfx_ort->AddKeyValuePair(meta, GFXEP_META_NAME, d->info.name);
  if (d->info.driver[0]) gfx_ort->AddKeyValuePair(meta, GFXEP_META_DRIVER, d->info.driver);
  if (d->info.features[0]) gfx_ort->AddKeyValuePair(meta, GFXEP_META_FEATURES, d->info.features);
  if (d->info.has_uuid) {
    hex(d->info.uuid, 16, buf);
    gfx_ort->AddKeyValuePair(meta, GFXEP_META_UUID, buf);
  }
  if (d->info.has_luid) {
    hex(d->info.luid, 8, buf);
    gfx_ort->AddKeyValuePair(meta, GFXEP_META_LUID, buf);
  }
  if (d->info.pci_bus_id[0]) gfx_ort->AddKeyValuePair(meta, GFXEP_META_PCI, d->info.pci_bus_id);
  if (d->dev->backend->note) gfx_ort->AddKeyValuePair(meta, GFXEP_META_NOTE, d->dev->backend->note);
  OrtStatus* s = gfx_ep_api->CreateEpDevice(&f->base, d->hw, meta, NULL, &d->ep_device);
  gfx_ort->ReleaseKeyValuePairs(meta);
  if (s) return s;
  ORT_TRY(gfx_ep_api->EpDevice_AddAllocatorInfo(d->ep_device, d->mem_default));
  ORT_TRY(gfx_ep_api->EpDevice_AddAllocatorInfo(d->ep_device, d->mem_host));
  return NULL;
}

static OrtStatus* add_device(gfx_factory* f, gfx_dev* dev, const gfx_device_info* info, const OrtHardwareDevice* hw,
                             OrtHardwareDevice* owned_hw) {
  const gfx_backend* be = dev->backend;
  if (f->set.n_devices == GFX_MAX_EP_DEVICES) {
    if (owned_hw) gfx_ep_api->ReleaseHardwareDevice(owned_hw);
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_WARNING, "gfxep: more than %d devices; device %d of %s is not offered",
                GFX_MAX_EP_DEVICES, dev->index, be->name);
    return NULL;
  }
  gfx_device* d = &f->set.devices[f->set.n_devices++];
  memset(d, 0, sizeof *d);
  d->dev = dev;
  d->backend_name = be->name;
  d->info = *info;
  d->hw = owned_hw ? owned_hw : hw;
  d->owned_hw = owned_hw;
  d->mem_vendor_id = info->pci_vendor_id && !(be->flags & GFX_BACKEND_HOST_MEMORY) ? info->pci_vendor_id
                                                                                   : HOST_MEMORY_VENDOR_ID;
  d->mem_device_id = be->memory_id_base + dev->index;
  return make_memory_infos(d, be->memory_name ? be->memory_name : be->name);
}

/* A PCI address "dddd:bb:dd.f" as numbers, so that spellings differing in case or in the width of the
 * domain ("00000000:00:06.0" from nvidia-smi) compare equal. */
static int parse_pci(const char* s, unsigned v[4]) {
  return s && sscanf(s, "%x:%x:%x.%x", &v[0], &v[1], &v[2], &v[3]) == 4;
}

/* Whether ORT's hardware device is the backend device described by info. */
static int same_device(const OrtHardwareDevice* hw, const gfx_device_info* info, int software) {
  OrtHardwareDeviceType type = gfx_ort->HardwareDevice_Type(hw);
  if (software) return type == OrtHardwareDeviceType_CPU;
  if (type != OrtHardwareDeviceType_GPU) return 0;
  const OrtKeyValuePairs* meta = gfx_ort->HardwareDevice_Metadata(hw);
  const char* pci = meta ? gfx_ort->GetKeyValue(meta, "pci_bus_id") : NULL;
  unsigned a[4], b[4];
  if (pci && pci[0] && parse_pci(info->pci_bus_id, b))
    return parse_pci(pci, a) && a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
  const char* luid = meta ? gfx_ort->GetKeyValue(meta, "LUID") : NULL;
  if (luid && luid[0] && info->has_luid) {
    unsigned long long want = strtoull(luid, NULL, 10), got = 0;
    memcpy(&got, info->luid, sizeof got); /* LUIDs are compared as the 64-bit value Windows prints */
    return got == want;
  }
  /* neither given: the vendor and device ids, when both sides know them */
  uint32_t vendor = gfx_ort->HardwareDevice_VendorId(hw), device = gfx_ort->HardwareDevice_DeviceId(hw);
  return info->pci_vendor_id && vendor == info->pci_vendor_id && info->pci_device_id && device == info->pci_device_id;
}

static OrtStatus* discover_backend(gfx_factory* f, const gfx_backend* be, int by_name, const OrtHardwareDevice* const* hw,
                                   size_t n) {
  if (be->set_log_sink) {
    void* user = NULL;
    gfx_log_sink sink = gfx_log_get_sink(&user);
    be->set_log_sink(sink, user);
  }
  int count = be->device_count();
  if (count <= 0) {
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: the %s backend found no device", be->name);
    return NULL;
  }
  for (int index = 0; index < count; index++) {
    gfx_dev* dev = NULL;
    gfx_device_info info;
    gfx_status gs = be->device_get(index, &dev);
    if (!gs) gs = be->device_info(dev, &info);
    if (gs) {
      gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_WARNING, "gfxep: %s device %d is not offered: %s", be->name, index,
                  gfx_status_message(gs));
      gfx_status_free(gs);
      continue;
    }
    int software = info.software || (be->flags & GFX_BACKEND_HOST_MEMORY);
    if (software && !by_name) {
      gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO,
                  "gfxep: %s device %d (%s) runs on the CPU; it is offered only to a registration named \"%s.%s\"",
                  be->name, index, info.name, GFXEP_EP_NAME, be->name);
      continue;
    }
    const OrtHardwareDevice* match = NULL;
    for (size_t i = 0; i < n && !match; i++)
      if (same_device(hw[i], &info, software)) match = hw[i];
    OrtHardwareDevice* created = NULL;
    if (!match) { /* ORT did not list it (a build without GPU discovery): describe it ourselves */
      OrtKeyValuePairs* meta = NULL;
      gfx_ort->CreateKeyValuePairs(&meta);
      if (info.pci_bus_id[0]) gfx_ort->AddKeyValuePair(meta, "pci_bus_id", info.pci_bus_id);
      gfx_ort->AddKeyValuePair(meta, "Description", info.name);
      OrtStatus* s = gfx_ep_api->CreateHardwareDevice(
          software ? OrtHardwareDeviceType_CPU : OrtHardwareDeviceType_GPU, software ? 0 : info.pci_vendor_id,
          software ? 0 : info.pci_device_id, software ? "CPU" : info.name, meta, &created);
      gfx_ort->ReleaseKeyValuePairs(meta);
      if (s) return s;
    }
    ORT_TRY(add_device(f, dev, &info, match, created));
  }
  return NULL;
}

static OrtStatus* discover(gfx_factory* f, const OrtHardwareDevice* const* hw, size_t n) {
  for (int i = 0; i < gfx_registry_count(); i++) {
    const char* name = gfx_registry_name(i);
    int by_name = strcasecmp(f->only_backend, name) == 0;
    if (f->only_backend[0] && !by_name) continue;
    const char* why = NULL;
    const gfx_backend* be = gfx_registry_get(i, &why);
    if (!be) {
      gfx_ort_log(f->logger, by_name ? ORT_LOGGING_LEVEL_WARNING : ORT_LOGGING_LEVEL_INFO,
                  "gfxep: the %s backend is not available: %s", name, why);
      continue;
    }
    if ((be->flags & GFX_BACKEND_HOST_MEMORY) && !by_name) continue;
    ORT_TRY(discover_backend(f, be, by_name, hw, n));
  }
  return NULL;
}

static OrtStatus* ORT_API_CALL get_supported_devices(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* hw,
                                                     size_t n, OrtEpDevice** ep_devices, size_t max_ep_devices,
                                                     size_t* num_ep_devices) {
  gfx_factory* f = as_factory(this_ptr);
  *num_ep_devices = 0;
  if (f->set.n_devices > 0)
    return gfx_ort_error(ORT_FAIL, "gfxep: GetSupportedDevices called twice on one factory");
  ORT_TRY(discover(f, hw, n));
  for (int i = 0; i < f->set.n_devices && (size_t)i < max_ep_devices; i++) {
    gfx_device* d = &f->set.devices[i];
    ORT_TRY(publish_device(f, d));
    ep_devices[(*num_ep_devices)++] = d->ep_device;
    gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: offering %s device %d: %s%s%s", d->backend_name,
                d->dev->index, d->info.name, d->info.pci_bus_id[0] ? " at " : "", d->info.pci_bus_id);
  }
  return NULL;
}

/* The device an EP created for these hardware device + metadata pairs runs on. */
static gfx_device* device_for_ep(gfx_factory* f, const OrtHardwareDevice* hw, const OrtKeyValuePairs* meta) {
  const char* backend = meta ? gfx_ort->GetKeyValue(meta, GFXEP_META_BACKEND) : NULL;
  const char* ordinal = meta ? gfx_ort->GetKeyValue(meta, GFXEP_META_ORDINAL) : NULL;
  for (int i = 0; i < f->set.n_devices; i++) {
    gfx_device* d = &f->set.devices[i];
    if (backend && ordinal) {
      if (strcmp(backend, d->backend_name) == 0 && atoi(ordinal) == d->dev->index) return d;
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
  gfx_device* d = device_for_ep(f, hw[0], meta[0]);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: the device given to CreateEp is not one gfxep offered");
  return gfx_ep_create(&f->set, d, session_options, logger, ep);
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
  gfx_device* d = gfx_device_for_memory(&f->set, gfx_ep_api->MemoryInfo_GetMemoryDevice(info), NULL);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CreateAllocator for memory that is not gfxep's");
  return gfx_allocator_create(d, info, 1, out);
}

static void ORT_API_CALL release_allocator(OrtEpFactory* this_ptr, OrtAllocator* a) {
  (void)this_ptr;
  gfx_allocator_destroy(a);
}

static OrtStatus* ORT_API_CALL create_data_transfer(OrtEpFactory* this_ptr, OrtDataTransferImpl** out) {
  *out = NULL;
  return gfx_data_transfer_create(&as_factory(this_ptr)->set, out);
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
  gfx_device* d = gfx_device_for_memory(&as_factory(this_ptr)->set, md, &host);
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

static OrtStatus* ORT_API_CALL create_importer(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device,
                                               OrtExternalResourceImporterImpl** out) {
  if (!out) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CreateExternalResourceImporterForDevice: out is NULL");
  *out = NULL;
  gfx_device* d = gfx_device_for_ep_device(&as_factory(this_ptr)->set, ep_device);
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
  gfx_device* d = gfx_device_for_ep_device(&f->set, ep_device);
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
  gfx_interop_config ic = {.api = api, .queue = config->command_queue};
  const char* blob = NULL;
  if (config->additional_options) {
    const char* const* keys = NULL;
    const char* const* values = NULL;
    size_t count = 0;
    gfx_ort->GetKeyValuePairs(config->additional_options, &keys, &values, &count);
    ic.keys = keys;
    ic.values = values;
    ic.count = count;
    blob = gfx_ort->GetKeyValue(config->additional_options, NV_QUEUE_DATA_KEY);
  }
  if (blob && blob[0]) {
    char* end = NULL;
    unsigned long long v = strtoull(blob, &end, 10);
    if (!end || *end || v == 0)
      return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: InitGraphicsInterop: %s = '%s' is not a pointer value",
                           NV_QUEUE_DATA_KEY, blob);
    ic.nv_blob = (const void*)(uintptr_t)v;
  }
  pthread_mutex_lock(&f->set.lock);
  OrtStatus* s = NULL;
  if (d->interop_ready) {
    s = gfx_ort_error(ORT_FAIL, "gfxep: InitGraphicsInterop: graphics interop is already initialized for %s device %d",
                      d->backend_name, d->dev->index);
  } else {
    char note[512] = "";
    if (d->live_eps == 0) gfx_frame_log_retire(d); /* the backend may move to the renderer's device */
    s = gfx_to_ort(gfx_backend_graphics_interop_init(d->dev, &ic, note, sizeof note));
    if (!s) {
      d->interop_ready = 1;
      gfx_ort_log(f->logger, ORT_LOGGING_LEVEL_INFO, "gfxep: graphics interop on %s device %d: %s", d->backend_name,
                  d->dev->index, note);
    }
  }
  pthread_mutex_unlock(&f->set.lock);
  return s;
}

static OrtStatus* ORT_API_CALL deinit_graphics_interop(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device) {
  gfx_factory* f = as_factory(this_ptr);
  gfx_device* d = gfx_device_for_ep_device(&f->set, ep_device);
  if (!d) return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: DeinitGraphicsInterop: the EP device is not gfxep's");
  pthread_mutex_lock(&f->set.lock);
  OrtStatus* s = NULL;
  if (!d->interop_ready) {
    s = gfx_ort_error(ORT_FAIL, "gfxep: DeinitGraphicsInterop: graphics interop is not initialized for %s device %d",
                      d->backend_name, d->dev->index);
  } else {
    if (d->live_eps == 0) gfx_frame_log_retire(d); /* its stamps live on the device being left */
    s = gfx_to_ort(gfx_backend_graphics_interop_deinit(d->dev));
    d->interop_ready = 0;
  }
  pthread_mutex_unlock(&f->set.lock);
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
  const char* dot = strrchr(f->registered_name, '.');
  for (int i = 0; dot && i < gfx_registry_count(); i++)
    if (strcasecmp(dot + 1, gfx_registry_name(i)) == 0)
      snprintf(f->only_backend, sizeof f->only_backend, "%s", gfx_registry_name(i));

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
  pthread_mutex_init(&f->set.lock, NULL);
  f->set.logger = logger;
  *out = f;
  return NULL;
}

void gfx_factory_destroy(gfx_factory* f) {
  if (!f) return;
  for (int i = 0; i < f->set.n_devices; i++) {
    gfx_device* d = &f->set.devices[i];
    if (d->mem_default) gfx_ort->ReleaseMemoryInfo(d->mem_default);
    if (d->mem_host) gfx_ort->ReleaseMemoryInfo(d->mem_host);
    if (d->owned_hw) gfx_ep_api->ReleaseHardwareDevice(d->owned_hw);
    gfx_frame_log_destroy(d);
  }
  if (f->set.kernels) gfx_ep_api->ReleaseKernelRegistry(f->set.kernels);
  pthread_mutex_destroy(&f->set.lock);
  free(f);
}

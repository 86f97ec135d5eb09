/* gfxep — the devices gfxep offers to ONNX Runtime: one backend device each, the ORT hardware device
 * it sits on and its memory infos; the set of them is shared by the factory, its EPs and the data
 * transfer. */
#ifndef GFXEP_ORT_DEVICE_H
#define GFXEP_ORT_DEVICE_H

#include <pthread.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "ort/ort_common.h"

#define GFX_MAX_EP_DEVICES 16

typedef struct gfx_device {
  gfx_dev* dev;                  /* the backend's device */
  const char* backend_name;      /* its backend's name, for messages and metadata */
  gfx_device_info info;
  const OrtHardwareDevice* hw;   /* ORT's, or owned_hw */
  OrtHardwareDevice* owned_hw;   /* created by gfxep when ORT did not offer the device */
  OrtEpDevice* ep_device;        /* owned by ORT once returned from GetSupportedDevices */
  OrtMemoryInfo* mem_default;    /* device memory */
  OrtMemoryInfo* mem_host;       /* host memory the device reaches directly */
  uint32_t mem_vendor_id;        /* what the memory infos carry, to recognise our memory */
  int mem_device_id;
  int interop_ready;             /* InitGraphicsInterop done (guarded by the set's lock) */
  /* per-frame timings (frame_timing.c), created with the first session that wants them (under the
   * set's lock); frame_log_failed: the backend could not, said once */
  struct gfx_frame_log* frame_log;
  int frame_log_failed;
  int live_eps;                  /* sessions on the device (guarded by the set's lock), for recovery */
} gfx_device;

typedef struct gfx_device_set {
  gfx_device devices[GFX_MAX_EP_DEVICES];
  int n_devices;
  const OrtLogger* logger;       /* the factory's */
  OrtKernelRegistry* kernels;    /* the copy kernels (memcpy_kernels.c), built on first use */
  pthread_mutex_t lock;          /* guards lazily built members and interop_ready */
} gfx_device_set;

/* The device a memory device belongs to, or NULL when it is not gfxep's. host_accessible tells
 * whether it is the host-accessible memory of that device. */
gfx_device* gfx_device_for_memory(gfx_device_set* set, const OrtMemoryDevice* md, bool* host_accessible);
/* The device behind one of gfxep's EP devices, or NULL. */
gfx_device* gfx_device_for_ep_device(gfx_device_set* set, const OrtEpDevice* ep_device);

/* The metadata keys gfxep puts on each EP device. */
#define GFXEP_META_BACKEND "gfxep.backend"
#define GFXEP_META_ORDINAL "gfxep.device_ordinal"
#define GFXEP_META_NAME "gfxep.device_name"
#define GFXEP_META_DRIVER "gfxep.driver"
#define GFXEP_META_FEATURES "gfxep.features"
#define GFXEP_META_UUID "gfxep.device_uuid"
#define GFXEP_META_LUID "gfxep.device_luid"
#define GFXEP_META_PCI "gfxep.pci_bus_id"
#define GFXEP_META_NOTE "gfxep.note"

#endif

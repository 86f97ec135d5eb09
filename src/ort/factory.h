/* gfxep — the OrtEpFactory: devices gfxep offers to ONNX Runtime and the objects shared by the
 * sessions that use them (memory infos, data transfer, streams, allocators). */
#ifndef GFXEP_ORT_FACTORY_H
#define GFXEP_ORT_FACTORY_H

#include <pthread.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "ort/ort_common.h"

#define GFX_MAX_EP_DEVICES 8

/* One device gfxep offers: a backend device, the ORT hardware device it sits on, its memory infos. */
typedef struct gfx_device {
  const gfx_backend* backend;
  int ordinal;                   /* the backend's device number */
  gfx_device_info info;
  const OrtHardwareDevice* hw;   /* ORT's, or owned_hw */
  OrtHardwareDevice* owned_hw;   /* created by gfxep when ORT did not offer the device */
  OrtEpDevice* ep_device;        /* owned by ORT once returned from GetSupportedDevices */
  OrtMemoryInfo* mem_default;    /* device memory */
  OrtMemoryInfo* mem_host;       /* page-locked host memory the device reaches directly */
  uint32_t mem_vendor_id;        /* what the memory infos carry, to recognise our memory */
  int mem_device_id;
  int interop_ready;             /* InitGraphicsInterop done (guarded by the factory's lock) */
} gfx_device;

typedef struct gfx_factory {
  OrtEpFactory base; /* first: ORT only sees this */
  const OrtLogger* logger;
  char registered_name[256];
  int offer_reference;           /* the registration asked for the reference backend */
  gfx_device devices[GFX_MAX_EP_DEVICES];
  int n_devices;
  OrtKernelRegistry* kernels;    /* the copy kernels (memcpy_kernels.c), built on first use */
  pthread_mutex_t lock;          /* guards lazily built members */
} gfx_factory;

OrtStatus* gfx_factory_create(const char* registered_name, const OrtLogger* logger, gfx_factory** out);
void gfx_factory_destroy(gfx_factory* f);

/* The device a memory device belongs to, or NULL when it is not gfxep's. host_accessible tells
 * whether it is the page-locked host memory of that device. */
gfx_device* gfx_factory_device_for_memory(gfx_factory* f, const OrtMemoryDevice* md, bool* host_accessible);
/* The device an EP created for these hardware device + metadata pairs runs on. */
gfx_device* gfx_factory_device_for_ep(gfx_factory* f, const OrtHardwareDevice* hw, const OrtKeyValuePairs* meta);

/* Allocators and streams (allocator.c, stream.c). */
OrtStatus* gfx_allocator_create(gfx_device* dev, const OrtMemoryInfo* info, int caching, OrtAllocator** out);
void gfx_allocator_destroy(OrtAllocator* a);
/* shared: NULL for a stream of its own, else the stream wraps that one (and holds a reference). */
typedef struct gfx_shared_stream gfx_shared_stream;
OrtStatus* gfx_stream_create(gfx_device* dev, gfx_shared_stream* shared, OrtSyncStreamImpl** out);
OrtStatus* gfx_shared_stream_create(gfx_device* dev, gfx_shared_stream** out);
void gfx_shared_stream_release(gfx_shared_stream* ss);
void* gfx_shared_stream_native(const gfx_shared_stream* ss);
/* The device a stream of gfxep belongs to, or NULL when the stream is someone else's. */
gfx_device* gfx_stream_device(const OrtSyncStream* stream);
OrtStatus* gfx_data_transfer_create(gfx_factory* f, OrtDataTransferImpl** out);
OrtStatus* gfx_memcpy_registry_create(OrtKernelRegistry** out);
/* importer.c: NULL importer (success) when the device's backend imports nothing. */
OrtStatus* gfx_importer_create(gfx_device* d, OrtExternalResourceImporterImpl** out);
/* The device behind one of gfxep's EP devices, or NULL. */
gfx_device* gfx_factory_device_for_ep_device(gfx_factory* f, const OrtEpDevice* ep_device);

/* The metadata keys gfxep puts on each EP device. */
#define GFXEP_META_BACKEND "gfxep.backend"
#define GFXEP_META_ORDINAL "gfxep.device_ordinal"
#define GFXEP_META_NAME "gfxep.device_name"
#define GFXEP_META_UUID "gfxep.device_uuid"
#define GFXEP_META_LUID "gfxep.device_luid"
#define GFXEP_META_PCI "gfxep.pci_bus_id"
#define GFXEP_META_NOTE "gfxep.note"

#endif

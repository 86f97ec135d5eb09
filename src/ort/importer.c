/* gfxep — OrtExternalResourceImporterImpl: external memory and timeline semaphores from Vulkan or
 * D3D12, viewed as tensors and waited on / signalled on the inference stream.
 *
 * ONNX Runtime checks none of the descriptors: every entry point validates its arguments and names
 * the offending value. Handle ownership (docs/interop.md): the application keeps every fd and NT
 * handle it passes; gfxep imports a duplicate of an fd. Imported memory and semaphores are released
 * through their handles' Release, which works after the importer is gone.
 */
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "interop/handles.h"
#include "interop/tensor_view.h"
#include "backend/wrap.h"
#include "ort/device_objects.h"
#include "ort/frame_timing.h"

/* 1.29's enum values, and 1.30's addition (absent from the 1.29 headers gfxep is built against). */
#define MEMORY_TYPE_HOST_ALLOCATION 4
#define INTEROP_DESCRIPTOR_VERSION 24 /* the ORT version that introduced the descriptors */
#define MAX_TENSOR_RANK 32

typedef struct gfx_importer {
  OrtExternalResourceImporterImpl base; /* first */
  gfx_device* device;
} gfx_importer;

typedef struct gfx_memory {
  OrtExternalMemoryHandle base; /* first */
  gfx_dev* dev;         /* kept for release: a handle may outlive the factory, a backend device never does */
  gfx_device* device;
  void* import;
  void* mapped;
  size_t region; /* bytes mapped from the descriptor's offset on */
} gfx_memory;

typedef struct gfx_semaphore {
  OrtExternalSemaphoreHandle base; /* first */
  gfx_dev* dev;
  gfx_device* device;
  void* semaphore;
} gfx_semaphore;

static gfx_importer* as_importer(const OrtExternalResourceImporterImpl* p) { return (gfx_importer*)(void*)p; }

static OrtStatus* invalid(const char* fmt, const char* detail) {
  return gfx_ort_error(ORT_INVALID_ARGUMENT, fmt, detail);
}

/* ---- handle types ---- */

static int memory_kind(OrtExternalMemoryHandleType t, gfx_ext_memory_kind* kind) {
  switch ((int)t) {
    case ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE: *kind = GFX_EXT_MEMORY_D3D12_RESOURCE; return 1;
    case ORT_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP: *kind = GFX_EXT_MEMORY_D3D12_HEAP; return 1;
    case ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_WIN32: *kind = GFX_EXT_MEMORY_OPAQUE_WIN32; return 1;
    case ORT_EXTERNAL_MEMORY_HANDLE_TYPE_VK_MEMORY_OPAQUE_FD: *kind = GFX_EXT_MEMORY_OPAQUE_FD; return 1;
    case MEMORY_TYPE_HOST_ALLOCATION:
      /* only a runtime that defines it can have been asked for it */
      if (gfx_ort_runtime_minor < 30) return 0;
      *kind = GFX_EXT_MEMORY_HOST_ALLOCATION;
      return 1;
    default: return 0;
  }
}

static int semaphore_kind(OrtExternalSemaphoreType t, gfx_ext_semaphore_kind* kind) {
  switch ((int)t) {
    case ORT_EXTERNAL_SEMAPHORE_D3D12_FENCE: *kind = GFX_EXT_SEMAPHORE_D3D12_FENCE; return 1;
    case ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_WIN32: *kind = GFX_EXT_SEMAPHORE_TIMELINE_WIN32; return 1;
    case ORT_EXTERNAL_SEMAPHORE_VK_TIMELINE_SEMAPHORE_OPAQUE_FD: *kind = GFX_EXT_SEMAPHORE_TIMELINE_FD; return 1;
    default: return 0;
  }
}

static bool ORT_API_CALL can_import_memory(const OrtExternalResourceImporterImpl* this_ptr,
                                           OrtExternalMemoryHandleType type) {
  const gfx_device* d = as_importer(this_ptr)->device;
  gfx_ext_memory_kind kind;
  return memory_kind(type, &kind) && gfx_backend_can_import_memory(d->dev, kind);
}

static bool ORT_API_CALL can_import_semaphore(const OrtExternalResourceImporterImpl* this_ptr,
                                              OrtExternalSemaphoreType type) {
  const gfx_device* d = as_importer(this_ptr)->device;
  gfx_ext_semaphore_kind kind;
  return semaphore_kind(type, &kind) && gfx_backend_can_import_semaphore(d->dev, kind);
}

/* ---- memory ---- */

static void ORT_API_CALL memory_release(OrtExternalMemoryHandle* handle) {
  gfx_memory* m = (gfx_memory*)(void*)handle;
  if (!m) return;
  gfx_backend_release_memory(m->dev, m->import, m->mapped);
  free(m);
}

/* Validates what ImportMemory is given and turns it into the backend's descriptor (fd duplicated). */
static OrtStatus* memory_request(const gfx_device* d, const OrtExternalMemoryDescriptor* desc,
                                 gfx_ext_memory_desc* req) {
  if (!desc) return invalid("gfxep: ImportMemory: the descriptor is NULL%s", "");
  if (desc->version < INTEROP_DESCRIPTOR_VERSION)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: ImportMemory: descriptor version %u; %d or newer expected",
                         desc->version, INTEROP_DESCRIPTOR_VERSION);
  if (!memory_kind(desc->handle_type, &req->kind))
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: ImportMemory: handle_type %d is not an OrtExternalMemoryHandleType of ONNX Runtime %d.%d",
                         (int)desc->handle_type, 1, gfx_ort_runtime_minor);
  if (!gfx_backend_can_import_memory(d->dev, req->kind))
    return gfx_ort_error(ORT_NOT_IMPLEMENTED, "gfxep: ImportMemory: handle_type %d cannot be imported by %s device %d "
                                              "on this platform",
                         (int)desc->handle_type, d->backend_name, d->dev->index);
  if (!desc->native_handle) return invalid("gfxep: ImportMemory: native_handle is NULL%s", "");
  if (desc->size_bytes == 0) return invalid("gfxep: ImportMemory: size_bytes is 0%s", "");
  if (desc->offset_bytes >= desc->size_bytes)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: ImportMemory: offset_bytes %zu is not below size_bytes %zu",
                         desc->offset_bytes, desc->size_bytes);
  req->size = desc->size_bytes;
  req->offset = desc->offset_bytes;
  req->handle = (intptr_t)desc->native_handle;
  if (req->kind == GFX_EXT_MEMORY_HOST_ALLOCATION) {
#if defined(_WIN32)
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    long page = (long)info.dwPageSize;
#else
    long page = sysconf(_SC_PAGESIZE);
#endif
    if (page > 0 && (req->handle % page != 0))
      return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: ImportMemory: host allocation %p is not page-aligned (%ld)",
                           desc->native_handle, page);
  }
  if (req->kind == GFX_EXT_MEMORY_OPAQUE_FD) {
    intptr_t dup_fd = -1;
    gfx_status s = gfx_fd_duplicate(req->handle, &dup_fd);
    if (s) return gfx_to_ort(gfx_status_wrap(s, "gfxep: ImportMemory"));
    req->handle = dup_fd;
  }
  return NULL;
}

static OrtStatus* ORT_API_CALL import_memory(OrtExternalResourceImporterImpl* this_ptr,
                                             const OrtExternalMemoryDescriptor* desc, OrtExternalMemoryHandle** out) {
  if (!out) return invalid("gfxep: ImportMemory: out is NULL%s", "");
  *out = NULL;
  gfx_device* d = as_importer(this_ptr)->device;
  gfx_ext_memory_desc req;
  ORT_TRY(memory_request(d, desc, &req));
  gfx_memory* m = calloc(1, sizeof *m);
  if (!m) {
    if (req.kind == GFX_EXT_MEMORY_OPAQUE_FD) gfx_fd_close(req.handle);
    return gfx_ort_error(ORT_FAIL, "gfxep: ImportMemory: out of memory");
  }
  /* the duplicate fd is handed over in every case (backend.h) */
  gfx_status s = gfx_backend_import_memory(d->dev, &req, &m->import, &m->mapped);
  if (s) {
    free(m);
    return gfx_to_ort(gfx_status_wrap(s, "gfxep: ImportMemory"));
  }
  m->device = d;
  m->dev = d->dev;
  m->region = req.size - req.offset;
  m->base.version = ORT_API_VERSION;
  m->base.ep_device = d->ep_device;
  m->base.descriptor = *desc;
  m->base.descriptor.version = ORT_API_VERSION; /* what gfxep read of it */
  m->base.Release = memory_release;
  *out = &m->base;
  return NULL;
}

static void ORT_API_CALL release_memory(OrtExternalResourceImporterImpl* this_ptr, OrtExternalMemoryHandle* handle) {
  (void)this_ptr;
  if (handle && handle->Release == memory_release) memory_release(handle);
}

static size_t element_size(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return 2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return 8;
    default: return 0;
  }
}

static OrtStatus* ORT_API_CALL create_tensor(OrtExternalResourceImporterImpl* this_ptr,
                                             const OrtExternalMemoryHandle* handle,
                                             const OrtExternalTensorDescriptor* desc, OrtValue** out) {
  if (!out) return invalid("gfxep: CreateTensorFromMemory: out is NULL%s", "");
  *out = NULL;
  gfx_device* d = as_importer(this_ptr)->device;
  if (!handle || handle->Release != memory_release)
    return invalid("gfxep: CreateTensorFromMemory: the memory handle is NULL or not one gfxep imported%s", "");
  const gfx_memory* m = (const gfx_memory*)(const void*)handle;
  if (m->device != d)
    return invalid("gfxep: CreateTensorFromMemory: the memory was imported for another device%s", "");
  if (!desc) return invalid("gfxep: CreateTensorFromMemory: the tensor descriptor is NULL%s", "");
  if (desc->version < INTEROP_DESCRIPTOR_VERSION)
    return gfx_ort_error(ORT_INVALID_ARGUMENT,
                         "gfxep: CreateTensorFromMemory: descriptor version %u; %d or newer expected", desc->version,
                         INTEROP_DESCRIPTOR_VERSION);
  size_t es = element_size(desc->element_type);
  if (!es)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: CreateTensorFromMemory: element_type %d has no fixed size",
                         (int)desc->element_type);
  size_t bytes = 0;
  gfx_status s = gfx_tensor_view_check(m->region, desc->offset_bytes, desc->shape, desc->rank, es, MAX_TENSOR_RANK,
                                       &bytes);
  if (s) return gfx_to_ort(gfx_status_wrap(s, "gfxep: CreateTensorFromMemory"));
  /* the device's own DEFAULT memory info: a session binds the tensor where it is, with no copy */
  return gfx_ort->CreateTensorWithDataAsOrtValue(d->mem_default, (char*)m->mapped + desc->offset_bytes, bytes,
                                                 desc->shape, desc->rank, desc->element_type, out);
}

/* ---- semaphores ---- */

static void ORT_API_CALL semaphore_release(OrtExternalSemaphoreHandle* handle) {
  gfx_semaphore* s = (gfx_semaphore*)(void*)handle;
  if (!s) return;
  gfx_backend_release_semaphore(s->dev, s->semaphore);
  free(s);
}

static OrtStatus* ORT_API_CALL import_semaphore(OrtExternalResourceImporterImpl* this_ptr,
                                                const OrtExternalSemaphoreDescriptor* desc,
                                                OrtExternalSemaphoreHandle** out) {
  if (!out) return invalid("gfxep: ImportSemaphore: out is NULL%s", "");
  *out = NULL;
  gfx_device* d = as_importer(this_ptr)->device;
  if (!desc) return invalid("gfxep: ImportSemaphore: the descriptor is NULL%s", "");
  if (desc->version < INTEROP_DESCRIPTOR_VERSION)
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: ImportSemaphore: descriptor version %u; %d or newer expected",
                         desc->version, INTEROP_DESCRIPTOR_VERSION);
  gfx_ext_semaphore_kind kind;
  if (!semaphore_kind(desc->type, &kind))
    return gfx_ort_error(ORT_INVALID_ARGUMENT, "gfxep: ImportSemaphore: type %d is not an OrtExternalSemaphoreType",
                         (int)desc->type);
  if (!gfx_backend_can_import_semaphore(d->dev, kind))
    return gfx_ort_error(ORT_NOT_IMPLEMENTED,
                         "gfxep: ImportSemaphore: type %d cannot be imported by %s device %d on this platform",
                         (int)desc->type, d->backend_name, d->dev->index);
  if (!desc->native_handle) return invalid("gfxep: ImportSemaphore: native_handle is NULL%s", "");
  intptr_t handle = (intptr_t)desc->native_handle;
  if (kind == GFX_EXT_SEMAPHORE_TIMELINE_FD) {
    gfx_status st = gfx_fd_duplicate((intptr_t)desc->native_handle, &handle);
    if (st) return gfx_to_ort(gfx_status_wrap(st, "gfxep: ImportSemaphore"));
  }
  gfx_semaphore* s = calloc(1, sizeof *s);
  if (!s) {
    if (kind == GFX_EXT_SEMAPHORE_TIMELINE_FD) gfx_fd_close(handle);
    return gfx_ort_error(ORT_FAIL, "gfxep: ImportSemaphore: out of memory");
  }
  gfx_status st = gfx_backend_import_semaphore(d->dev, kind, handle, &s->semaphore);
  if (st) {
    free(s);
    return gfx_to_ort(gfx_status_wrap(st, "gfxep: ImportSemaphore"));
  }
  s->device = d;
  s->dev = d->dev;
  s->base.version = ORT_API_VERSION;
  s->base.ep_device = d->ep_device;
  s->base.descriptor = *desc;
  s->base.descriptor.version = ORT_API_VERSION;
  s->base.Release = semaphore_release;
  *out = &s->base;
  return NULL;
}

static void ORT_API_CALL release_semaphore(OrtExternalResourceImporterImpl* this_ptr,
                                           OrtExternalSemaphoreHandle* handle) {
  (void)this_ptr;
  if (handle && handle->Release == semaphore_release) semaphore_release(handle);
}

/* The semaphore and the native stream for a wait or signal, checked to belong to this device. */
static OrtStatus* sync_args(gfx_importer* imp, const char* what, OrtExternalSemaphoreHandle* handle,
                            OrtSyncStream* stream, gfx_semaphore** sem, void** native) {
  if (!handle || handle->Release != semaphore_release)
    return invalid("gfxep: %s: the semaphore handle is NULL or not one gfxep imported", what);
  *sem = (gfx_semaphore*)(void*)handle;
  if ((*sem)->device != imp->device) return invalid("gfxep: %s: the semaphore was imported for another device", what);
  if (!stream) return invalid("gfxep: %s: the stream is NULL", what);
  if (gfx_stream_device(stream) != imp->device)
    return invalid("gfxep: %s: the stream belongs to another device or execution provider", what);
  *native = gfx_ort->SyncStream_GetHandle(stream);
  return NULL;
}

static OrtStatus* ORT_API_CALL wait_semaphore(OrtExternalResourceImporterImpl* this_ptr,
                                              OrtExternalSemaphoreHandle* handle, OrtSyncStream* stream,
                                              uint64_t value) {
  gfx_semaphore* s;
  void* native;
  ORT_TRY(sync_args(as_importer(this_ptr), "WaitSemaphore", handle, stream, &s, &native));
  ORT_TRY(gfx_to_ort(gfx_backend_check_alive(s->dev)));
  gfx_frames_wait(s->device, native, s->semaphore, value, 0);
  ORT_TRY(gfx_to_ort(gfx_backend_wait_semaphore(s->dev, s->semaphore, value, native)));
  gfx_frames_wait(s->device, native, s->semaphore, value, 1);
  return NULL;
}

static OrtStatus* ORT_API_CALL signal_semaphore(OrtExternalResourceImporterImpl* this_ptr,
                                                OrtExternalSemaphoreHandle* handle, OrtSyncStream* stream,
                                                uint64_t value) {
  gfx_semaphore* s;
  void* native;
  ORT_TRY(sync_args(as_importer(this_ptr), "SignalSemaphore", handle, stream, &s, &native));
  ORT_TRY(gfx_to_ort(gfx_backend_check_alive(s->dev)));
  gfx_frames_signal(s->device, native, 0);
  ORT_TRY(gfx_to_ort(gfx_backend_signal_semaphore(s->dev, s->semaphore, value, native)));
  gfx_frames_signal(s->device, native, 1);
  return NULL;
}

static void ORT_API_CALL importer_release(OrtExternalResourceImporterImpl* this_ptr) { free(this_ptr); }

OrtStatus* gfx_importer_create(gfx_device* d, OrtExternalResourceImporterImpl** out) {
  *out = NULL;
  if (!gfx_backend_has_importer(d->dev)) return NULL; /* success with no importer: this backend imports nothing */
  gfx_importer* imp = calloc(1, sizeof *imp);
  if (!imp) return gfx_ort_error(ORT_FAIL, "gfxep: out of memory creating an importer");
  imp->device = d;
  OrtExternalResourceImporterImpl* b = &imp->base;
  b->ort_version_supported = ORT_API_VERSION;
  b->CanImportMemory = can_import_memory;
  b->ImportMemory = import_memory;
  b->ReleaseMemory = release_memory;
  b->CreateTensorFromMemory = create_tensor;
  b->CanImportSemaphore = can_import_semaphore;
  b->ImportSemaphore = import_semaphore;
  b->ReleaseSemaphore = release_semaphore;
  b->WaitSemaphore = wait_semaphore;
  b->SignalSemaphore = signal_semaphore;
  b->Release = importer_release;
  *out = b;
  return NULL;
}

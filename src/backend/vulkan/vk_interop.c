/* gfxep Vulkan backend — graphics interop: imported memory and timeline semaphores, and the
 * application's own VkDevice and queue (InitGraphicsInterop).
 *
 * Imported memory is one VkBuffer (storage, transfer, SHADER_DEVICE_ADDRESS usage, external memory
 * of the handle's type) bound at offset 0 to a VkDeviceMemory imported with DEVICE_ADDRESS_BIT; the
 * region [offset, size) is entered in the device's address table, so copies and kernels resolve
 * addresses inside it like those of mem_alloc. Kinds: an opaque fd (VK_KHR_external_memory_fd; the
 * fd belongs to Vulkan once imported, and is closed here when the import fails), page-aligned host
 * memory (VK_EXT_external_memory_host), and on Windows opaque Win32 / D3D12 heap / D3D12 resource NT
 * handles (VK_KHR_external_memory_win32; not taken over).
 *
 * An imported semaphore is a timeline semaphore whose payload is imported permanently
 * (vkImportSemaphoreFdKHR / ...Win32HandleKHR), wrapped as an event that is never recorded
 * (vk_event_wrap): wait_semaphore rides on the stream's next submission like an event wait, and
 * signal_semaphore submits what the stream has recorded with one more signal. Neither waits on the
 * host, and nothing here ever host-waits on or queries an imported semaphore (DEVICE.md: such waits
 * hung for minutes); what is in flight is known from the stream's own timeline.
 *
 * The application's own device (graphics_interop_init with gfxep.vk_* keys, docs/interop.md): gfxep's
 * VkDevice is destroyed and the same gfx device records its command pools, buffers, pipelines and
 * semaphores on the application's VkDevice and submits to the application's queue (inside the
 * application's queue lock callbacks when given). Allowed only while nothing of gfxep's lives on its
 * own VkDevice (no allocation, stream, event, imported object or prepared node): before the first
 * session, or after every session is gone. Deinit returns to a new VkDevice of gfxep's own, under the
 * same condition. gfxep calls Vulkan through the process's Vulkan loader, so the application must
 * use that loader too (the given vkGetInstanceProcAddr is checked to be the loader's).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "backend/vulkan/vk_internal.h"
#include "core/log.h"
#ifdef _WIN32
#include <vulkan/vulkan_win32.h> /* after vulkan_core.h, which vk_internal.h brings */
#endif

#define IMPORT_USAGE                                                                                      \
  (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT | \
   VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)

static const char* memory_kind_name(gfx_ext_memory_kind kind) {
  switch (kind) {
    case GFX_EXT_MEMORY_OPAQUE_FD: return "opaque fd";
    case GFX_EXT_MEMORY_OPAQUE_WIN32: return "opaque Win32 handle";
    case GFX_EXT_MEMORY_D3D12_HEAP: return "D3D12 heap";
    case GFX_EXT_MEMORY_D3D12_RESOURCE: return "D3D12 resource";
    case GFX_EXT_MEMORY_HOST_ALLOCATION: return "host allocation";
    default: return "unknown kind";
  }
}

static void close_fd(intptr_t fd) {
#ifndef _WIN32
  if (fd >= 0) close((int)fd);
#else
  (void)fd;
#endif
}

static uint64_t page_size(void) {
#ifdef _WIN32
  SYSTEM_INFO info;
  GetSystemInfo(&info);
  return info.dwPageSize;
#else
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (uint64_t)p : 4096;
#endif
}

/* ---- memory ---- */

int vk_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind) {
  if (!dev) return 0;
  vk_device* d = vk_dev(dev);
  switch (kind) {
#ifdef _WIN32
    case GFX_EXT_MEMORY_OPAQUE_WIN32:
    case GFX_EXT_MEMORY_D3D12_HEAP:
    case GFX_EXT_MEMORY_D3D12_RESOURCE: return d->has_ext_memory_win32;
#else
    case GFX_EXT_MEMORY_OPAQUE_FD: return d->has_ext_memory_fd;
#endif
    case GFX_EXT_MEMORY_HOST_ALLOCATION: return d->has_ext_memory_host;
    default: return 0;
  }
}

static VkExternalMemoryHandleTypeFlagBits memory_handle_type(gfx_ext_memory_kind kind) {
  switch (kind) {
    case GFX_EXT_MEMORY_OPAQUE_FD: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    case GFX_EXT_MEMORY_OPAQUE_WIN32: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_BIT;
    case GFX_EXT_MEMORY_D3D12_HEAP: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP_BIT;
    case GFX_EXT_MEMORY_D3D12_RESOURCE: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE_BIT;
    case GFX_EXT_MEMORY_HOST_ALLOCATION: return VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    default: return (VkExternalMemoryHandleTypeFlagBits)0;
  }
}

/* The memory types of `bits` in the order an import tries them: those with all of `want` first. */
static uint32_t type_order(const VkPhysicalDeviceMemoryProperties* mp, uint32_t bits, VkMemoryPropertyFlags want,
                           uint32_t* order) {
  uint32_t n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
      if (!(bits & (1u << i))) continue;
      int has = (mp->memoryTypes[i].propertyFlags & want) == want;
      if (has == (pass == 0)) order[n++] = i;
    }
  return n;
}

/* Everything of import_memory after the argument checks; *fd_owned is cleared once Vulkan owns the fd. */
static gfx_status import_region(vk_device* d, const gfx_ext_memory_desc* desc, int* fd_owned, vk_alloc** out) {
  const VkExternalMemoryHandleTypeFlagBits type = memory_handle_type(desc->kind);
  const int host = desc->kind == GFX_EXT_MEMORY_HOST_ALLOCATION;
  VkDeviceSize size = (VkDeviceSize)desc->size;
  uint32_t host_bits = ~0u;
  if (host) {
    const VkDeviceSize align = d->host_import_align;
    if ((uint64_t)desc->handle % align != 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "vulkan backend: import_memory: host allocation %p is not aligned to %" PRIu64
                       " bytes (minImportedHostPointerAlignment of device %d)",
                       (void*)desc->handle, (uint64_t)align, d->index);
    if (size % align != 0 && align > page_size())
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "vulkan backend: import_memory: a host allocation of %zu bytes is not a multiple of %" PRIu64
                       " bytes (minImportedHostPointerAlignment of device %d)",
                       desc->size, (uint64_t)align, d->index);
    size = (size + align - 1) / align * align; /* the rest of the allocation's last page */
    PFN_vkGetMemoryHostPointerPropertiesEXT props_fn =
        (PFN_vkGetMemoryHostPointerPropertiesEXT)vkGetDeviceProcAddr(d->device, "vkGetMemoryHostPointerPropertiesEXT");
    if (!props_fn)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: import_memory: device %d has no "
                                              "vkGetMemoryHostPointerPropertiesEXT", d->index);
    VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
    GFX_TRY(vk_check(props_fn(d->device, type, (const void*)desc->handle, &hp),
                     "import_memory: vkGetMemoryHostPointerPropertiesEXT(%p) on device %d", (void*)desc->handle,
                     d->index));
    host_bits = hp.memoryTypeBits;
  }
  vk_alloc* a = calloc(1, sizeof *a);
  if (!a) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for an import record");
  vk_buffer* b = &a->buf;
  VkExternalMemoryBufferCreateInfo ext = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                          .handleTypes = (VkExternalMemoryHandleTypeFlags)type};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = &ext,
                            .size = size,
                            .usage = IMPORT_USAGE,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  gfx_status s = vk_check(vkCreateBuffer(d->device, &bci, NULL, &b->buffer),
                          "import_memory: vkCreateBuffer(%" PRIu64 " bytes, external) on device %d", (uint64_t)size,
                          d->index);
  VkMemoryRequirements req = {0};
  if (!s) {
    vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
    if (req.size > size)
      s = gfx_error(GFX_ERR_INVALID_ARGUMENT,
                    "vulkan backend: import_memory: a buffer over the whole %s needs %" PRIu64
                    " bytes; the allocation has %" PRIu64 " (size must be the VkDeviceMemory allocation's size)",
                    memory_kind_name(desc->kind), (uint64_t)req.size, (uint64_t)size);
  }
  uint32_t order[VK_MAX_MEMORY_TYPES];
  uint32_t n_types = 0;
  if (!s) {
    n_types = type_order(&d->mem_props, req.memoryTypeBits & host_bits,
                         host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                              : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                         order);
    if (!n_types)
      s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                    "vulkan backend: import_memory: no memory type of device %d holds a storage buffer of this %s "
                    "(buffer types 0x%x, handle types 0x%x)",
                    d->index, memory_kind_name(desc->kind), req.memoryTypeBits, host_bits);
  }
  /* the chain: import info -> allocate flags (device address) -> dedicated (D3D12 resources) */
  VkMemoryDedicatedAllocateInfo dedicated = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                             .buffer = b->buffer};
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .pNext = desc->kind == GFX_EXT_MEMORY_D3D12_RESOURCE ? &dedicated : NULL,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkImportMemoryFdInfoKHR fd_info = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
                                     .pNext = &flags,
                                     .handleType = type,
                                     .fd = (int)desc->handle};
  VkImportMemoryHostPointerInfoEXT host_info = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                                .pNext = &flags,
                                                .handleType = type,
                                                .pHostPointer = (void*)desc->handle};
  const void* import_info = host ? (const void*)&host_info : (const void*)&fd_info;
#ifdef _WIN32
  VkImportMemoryWin32HandleInfoKHR win32_info = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_WIN32_HANDLE_INFO_KHR,
                                                 .pNext = &flags,
                                                 .handleType = type,
                                                 .handle = (HANDLE)desc->handle};
  if (!host) import_info = &win32_info;
#endif
  VkResult r = VK_ERROR_UNKNOWN;
  uint32_t used = 0;
  /* An opaque import must use the exporter's memory type, which the handle does not say: the types
   * are tried in order (device-local first) while the driver calls the handle invalid for one. */
  for (uint32_t t = 0; !s && t < n_types; t++) {
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .pNext = import_info,
                                .allocationSize = size,
                                .memoryTypeIndex = order[t]};
    used = order[t];
    r = vkAllocateMemory(d->device, &mai, NULL, &b->memory);
    if (r != VK_ERROR_INVALID_EXTERNAL_HANDLE || host) break;
  }
  if (!s && r != VK_SUCCESS)
    s = vk_check(r, "import_memory: vkAllocateMemory(import of a %s, %" PRIu64 " bytes, memory type %u) on device %d",
                 memory_kind_name(desc->kind), (uint64_t)size, used, d->index);
  if (!s && desc->kind == GFX_EXT_MEMORY_OPAQUE_FD) *fd_owned = 0; /* Vulkan's now, closed by vkFreeMemory */
  if (!s)
    s = vk_check(vkBindBufferMemory(d->device, b->buffer, b->memory, 0), "import_memory: vkBindBufferMemory on device %d",
                 d->index);
  if (!s) {
    VkBufferDeviceAddressInfo ai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = b->buffer};
    b->address = vkGetBufferDeviceAddress(d->device, &ai);
    b->size = size;
    if (!b->address)
      s = gfx_error(GFX_ERR_DEVICE, "vulkan backend: import_memory: vkGetBufferDeviceAddress returned 0 on device %d",
                    d->index);
  }
  if (s) {
    vk_buffer_destroy(d, b); /* b->mapped is NULL here */
    free(a);
    return s;
  }
  /* host memory: the application's pointer is the host view (copies with a NULL stream memcpy) */
  b->mapped = host ? (void*)desc->handle : NULL;
  a->addr = b->address + desc->offset;
  a->bytes = desc->size - desc->offset;
  a->host = NULL;
  s = vk_memory_insert_external(d, a);
  if (s) {
    b->mapped = NULL;
    vk_buffer_destroy(d, b);
    free(a);
    return s;
  }
  *out = a;
  return NULL;
}

gfx_status vk_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped) {
  const int fd = desc && desc->kind == GFX_EXT_MEMORY_OPAQUE_FD;
  int fd_owned = fd; /* ours to close on failure until Vulkan takes it */
  gfx_status s = NULL;
  if (import) *import = NULL;
  if (mapped) *mapped = NULL;
  if (!dev || !desc || !import || !mapped) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: import_memory: NULL %s",
                  !dev ? "device" : !desc ? "descriptor" : "output");
  } else if (!vk_can_import_memory(dev, desc->kind)) {
#ifdef _WIN32
    const char* ext = "VK_KHR_external_memory_win32 is not enabled, or the kind is not Windows'";
#else
    const char* ext = "VK_KHR_external_memory_fd is not enabled, or the kind is not Linux'";
#endif
    if (desc->kind == GFX_EXT_MEMORY_HOST_ALLOCATION) ext = "VK_EXT_external_memory_host is not enabled";
    s = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: import_memory: device %d cannot import a %s (%s)",
                  vk_dev(dev)->index, memory_kind_name(desc->kind), ext);
  } else if (desc->size == 0 || desc->offset >= desc->size) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: import_memory: offset %zu in an allocation of %zu bytes",
                  desc->offset, desc->size);
  } else if ((fd && desc->handle < 0) || (!fd && !desc->handle)) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: import_memory: handle %" PRIdPTR " is not a %s",
                  desc->handle, memory_kind_name(desc->kind));
  } else {
    vk_device* d = vk_dev(dev);
    vk_alloc* a = NULL;
    s = import_region(d, desc, &fd_owned, &a);
    if (!s) {
      atomic_fetch_add(&d->live_imports, 1);
      *import = a;
      *mapped = (void*)(uintptr_t)a->addr;
    }
  }
  if (s && fd && fd_owned) close_fd(desc->handle);
  return s;
}

void vk_release_memory(gfx_dev* dev, void* import, void* mapped) {
  (void)mapped;
  if (!dev || !import) return;
  vk_device* d = vk_dev(dev);
  vk_alloc* a = import;
  /* gfxep's work that may still use it finishes first (bounded; waits on gfxep's own timelines only) */
  gfx_status s = vk_device_sync(dev);
  if (s) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: release_memory: %s; the import is leaked rather than freed in use",
            gfx_status_message(s));
    gfx_status_free(s);
    vk_memory_remove_external(d, a);
    return;
  }
  if (!vk_memory_remove_external(d, a)) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: release_memory(%p): not an import of device %d; ignored", import,
            d->index);
    return;
  }
  a->buf.mapped = NULL; /* the application's host memory is not unmapped */
  vk_buffer_destroy(d, &a->buf);
  free(a);
  atomic_fetch_sub(&d->live_imports, 1);
}

/* ---- semaphores ---- */

int vk_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind) {
  if (!dev) return 0;
  vk_device* d = vk_dev(dev);
  switch (kind) {
#ifdef _WIN32
    case GFX_EXT_SEMAPHORE_TIMELINE_WIN32:
    case GFX_EXT_SEMAPHORE_D3D12_FENCE: return d->has_ext_semaphore_win32;
#else
    case GFX_EXT_SEMAPHORE_TIMELINE_FD: return d->has_ext_semaphore_fd;
#endif
    default: return 0;
  }
}

gfx_status vk_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore) {
  const int fd = kind == GFX_EXT_SEMAPHORE_TIMELINE_FD;
  if (semaphore) *semaphore = NULL;
  gfx_status s = NULL;
  if (!dev || !semaphore) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: import_semaphore: NULL %s", dev ? "output" : "device");
  } else if (!vk_can_import_semaphore(dev, kind)) {
    s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                  "vulkan backend: import_semaphore: device %d cannot import semaphore kind %d (%s is not enabled)",
                  vk_dev(dev)->index, (int)kind,
                  fd ? "VK_KHR_external_semaphore_fd" : "VK_KHR_external_semaphore_win32 on Windows");
  } else if (fd ? handle < 0 : handle == 0) {
    s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: import_semaphore: handle %" PRIdPTR " is not valid", handle);
  }
  if (s) {
    if (fd) close_fd(handle);
    return s;
  }
  vk_device* d = vk_dev(dev);
  VkExternalSemaphoreHandleTypeFlagBits type = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
#ifdef _WIN32
  type = kind == GFX_EXT_SEMAPHORE_D3D12_FENCE ? VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE_BIT
                                              : VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32_BIT;
#endif
  VkExportSemaphoreCreateInfo ex = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                    .handleTypes = (VkExternalSemaphoreHandleTypeFlags)type};
  VkSemaphoreTypeCreateInfo ti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                  .pNext = &ex,
                                  .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                  .initialValue = 0};
  VkSemaphoreCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
  VkSemaphore sem = VK_NULL_HANDLE;
  s = vk_check(vkCreateSemaphore(d->device, &si, NULL, &sem), "import_semaphore: vkCreateSemaphore(timeline) on device %d",
               d->index);
  int owned = fd; /* the fd is Vulkan's once the import succeeds */
  if (!s && fd) {
#ifndef _WIN32
    PFN_vkImportSemaphoreFdKHR import_fd =
        (PFN_vkImportSemaphoreFdKHR)vkGetDeviceProcAddr(d->device, "vkImportSemaphoreFdKHR");
    if (!import_fd) {
      s = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: import_semaphore: device %d has no vkImportSemaphoreFdKHR",
                    d->index);
    } else {
      VkImportSemaphoreFdInfoKHR ii = {.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR,
                                       .semaphore = sem,
                                       .handleType = type,
                                       .fd = (int)handle};
      s = vk_check(import_fd(d->device, &ii), "import_semaphore: vkImportSemaphoreFdKHR(fd %d) on device %d", (int)handle,
                   d->index);
      if (!s) owned = 0;
    }
#endif
  }
#ifdef _WIN32
  if (!s) {
    PFN_vkImportSemaphoreWin32HandleKHR import_win32 =
        (PFN_vkImportSemaphoreWin32HandleKHR)vkGetDeviceProcAddr(d->device, "vkImportSemaphoreWin32HandleKHR");
    if (!import_win32) {
      s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                    "vulkan backend: import_semaphore: device %d has no vkImportSemaphoreWin32HandleKHR", d->index);
    } else {
      VkImportSemaphoreWin32HandleInfoKHR ii = {.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_WIN32_HANDLE_INFO_KHR,
                                                .semaphore = sem,
                                                .handleType = type,
                                                .handle = (HANDLE)handle};
      s = vk_check(import_win32(d->device, &ii), "import_semaphore: vkImportSemaphoreWin32HandleKHR on device %d",
                   d->index);
    }
  }
#endif
  vk_event* ev = NULL;
  if (!s) s = vk_event_wrap(d, sem, &ev);
  if (s) {
    if (sem) vkDestroySemaphore(d->device, sem, NULL);
    if (owned) close_fd(handle);
    return s;
  }
  *semaphore = ev;
  return NULL;
}

void vk_release_semaphore(gfx_dev* dev, void* semaphore) {
  if (dev && semaphore) vk_event_destroy(dev, semaphore); /* kept until the submissions using it have executed */
}

gfx_status vk_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  if (!dev || !semaphore)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: wait_semaphore: NULL %s", dev ? "semaphore" : "device");
  return vk_stream_wait_external(vk_dev(dev), stream, semaphore, value);
}

gfx_status vk_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  if (!dev || !semaphore)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: signal_semaphore: NULL %s", dev ? "semaphore" : "device");
  return vk_stream_signal_external(vk_dev(dev), stream, semaphore, value);
}

/* ---- the application's own device ---- */

/* What the device had before it moved to the application's VkDevice. */
typedef struct interop_state {
  uint32_t own_family;
  int f16, float16_arith, storage16, storage8, int64, int16, coopmat, host_query_reset;
  int ext_memory_fd, ext_semaphore_fd, ext_memory_host, ext_memory_win32, ext_semaphore_win32;
} interop_state;

#define KEY_INSTANCE "gfxep.vk_instance"
#define KEY_PHYSICAL "gfxep.vk_physical_device"
#define KEY_DEVICE "gfxep.vk_device"
#define KEY_FAMILY "gfxep.vk_queue_family"
#define KEY_INDEX "gfxep.vk_queue_index"
#define KEY_GIPA "gfxep.vk_get_instance_proc_addr"
#define KEY_LOCK "gfxep.vk_queue_lock"
#define KEY_UNLOCK "gfxep.vk_queue_unlock"
#define KEY_LOCK_USER "gfxep.vk_queue_lock_user"
#define KEY_FEATURES "gfxep.vk_features"

static const char* const known_keys[] = {KEY_INSTANCE, KEY_PHYSICAL, KEY_DEVICE,      KEY_FAMILY,   KEY_INDEX,
                                         KEY_GIPA,     KEY_LOCK,     KEY_UNLOCK,      KEY_LOCK_USER, KEY_FEATURES};
#define N_KNOWN (sizeof known_keys / sizeof known_keys[0])

static const char* key_value(const gfx_interop_config* c, const char* key) {
  for (size_t i = 0; i < c->count; i++)
    if (c->keys[i] && strcmp(c->keys[i], key) == 0) return c->values[i] ? c->values[i] : "";
  return NULL;
}

static gfx_status bad_value(const char* key, const char* value, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: %s = '%s' is not %s", key,
                   value ? value : "", what);
}

/* An unsigned number, all of the string: hex after 0x/0X (hex_ok) or decimal. */
static int parse_unsigned(const char* v, int hex_ok, uint64_t* out) {
  int base = 10;
  if (hex_ok && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16;
    v += 2;
  }
  if (!v[0]) return 0;
  for (const char* p = v; *p; p++)
    if (base == 16 ? !isxdigit((unsigned char)*p) : !isdigit((unsigned char)*p)) return 0;
  errno = 0;
  char* end = NULL;
  unsigned long long x = strtoull(v, &end, base);
  if (errno == ERANGE || !end || *end) return 0;
  *out = (uint64_t)x;
  return 1;
}

/* A required (or, with optional, possibly absent: *out = 0) pointer-valued key. */
static gfx_status read_pointer(const gfx_interop_config* c, const char* key, int optional, uint64_t* out) {
  *out = 0;
  const char* v = key_value(c, key);
  if (!v && optional) return NULL;
  if (!v)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s is missing (value: none); the application's own device "
                     "needs %s, %s, %s, %s, %s and %s",
                     key, KEY_INSTANCE, KEY_PHYSICAL, KEY_DEVICE, KEY_FAMILY, KEY_INDEX, KEY_GIPA);
  if (!parse_unsigned(v, 1, out) || *out == 0 || *out > UINTPTR_MAX)
    return bad_value(key, v, "a non-NULL pointer (hex 0x... or decimal)");
  return NULL;
}

static gfx_status read_u32(const gfx_interop_config* c, const char* key, uint32_t* out) {
  const char* v = key_value(c, key);
  if (!v)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: %s is missing (value: none)", key);
  uint64_t x = 0;
  if (!parse_unsigned(v, 0, &x) || x > UINT32_MAX) return bad_value(key, v, "a decimal number below 2^32");
  *out = (uint32_t)x;
  return NULL;
}

typedef struct app_features {
  int float16, storage16, storage8, int64, int16;
  int coopmat; /* VK_NV_cooperative_matrix with its cooperativeMatrix feature, and vulkanMemoryModel */
  int host_query_reset; /* hostQueryReset: per-frame GPU timings */
} app_features;

static gfx_status read_features(const gfx_interop_config* c, app_features* f) {
  memset(f, 0, sizeof *f);
  const char* v = key_value(c, KEY_FEATURES);
  if (!v) return NULL;
  const char* p = v;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char* start = p;
    while (*p && *p != ',' && *p != ' ') p++;
    size_t n = (size_t)(p - start);
    char tok[32];
    if (n >= sizeof tok) n = sizeof tok - 1;
    memcpy(tok, start, n);
    tok[n] = 0;
    if (strcmp(tok, "float16") == 0)
      f->float16 = 1;
    else if (strcmp(tok, "storage16") == 0)
      f->storage16 = 1;
    else if (strcmp(tok, "storage8") == 0)
      f->storage8 = 1;
    else if (strcmp(tok, "int64") == 0)
      f->int64 = 1;
    else if (strcmp(tok, "int16") == 0)
      f->int16 = 1;
    else if (strcmp(tok, "coopmat") == 0)
      f->coopmat = 1;
    else if (strcmp(tok, "host_query_reset") == 0)
      f->host_query_reset = 1;
    else
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "vulkan backend: InitGraphicsInterop: %s = '%s': '%s' is not one of float16, storage16, storage8, "
                       "int64, int16, coopmat, host_query_reset",
                       KEY_FEATURES, v, tok);
  }
  return NULL;
}

/* What pins gfxep's objects to the current VkDevice; "" when nothing does. */
static const char* alive(vk_device* d, char* buf, size_t size) {
  size_t n_dev = 0, n_host = 0;
  vk_memory_counts(d, &n_dev, &n_host);
  size_t n_streams = vk_stream_count(d);
  int states = atomic_load(&d->live_states), events = atomic_load(&d->live_events),
      imports = atomic_load(&d->live_imports), stamps = atomic_load(&d->live_stamps);
  buf[0] = 0;
  if (n_dev || n_host || n_streams || states || events || imports || stamps)
    snprintf(buf, size,
             "%zu device allocations (%d of them imports), %zu host allocations, %zu streams, %d events or imported "
             "semaphores, %d prepared nodes and %d frame-stamp pools are alive",
             n_dev, imports, n_host, n_streams, events, states, stamps);
  return buf;
}

static void hex_uuid(const uint8_t* u, char* out) {
  for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", u[i]);
}

typedef struct app_device {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  uint32_t family, index;
  PFN_vkGetInstanceProcAddr gipa;
  void (*lock)(void*);
  void (*unlock)(void*);
  void* lock_user;
  app_features features;
} app_device;

/* Reads and checks every key (nothing changes yet). */
static gfx_status read_config(vk_device* d, const gfx_interop_config* c, app_device* a) {
  memset(a, 0, sizeof *a);
  for (size_t i = 0; i < c->count; i++) {
    const char* k = c->keys[i];
    if (!k || strncmp(k, "gfxep.vk_", 9) != 0) continue;
    size_t j = 0;
    while (j < N_KNOWN && strcmp(k, known_keys[j]) != 0) j++;
    if (j == N_KNOWN)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "vulkan backend: InitGraphicsInterop: %s = '%s' is not a key of the Vulkan backend (docs/interop.md)",
                       k, c->values[i] ? c->values[i] : "");
  }
  uint64_t v;
  GFX_TRY(read_pointer(c, KEY_INSTANCE, 0, &v));
  a->instance = (VkInstance)(uintptr_t)v;
  GFX_TRY(read_pointer(c, KEY_PHYSICAL, 0, &v));
  a->phys = (VkPhysicalDevice)(uintptr_t)v;
  GFX_TRY(read_pointer(c, KEY_DEVICE, 0, &v));
  a->device = (VkDevice)(uintptr_t)v;
  GFX_TRY(read_u32(c, KEY_FAMILY, &a->family));
  GFX_TRY(read_u32(c, KEY_INDEX, &a->index));
  GFX_TRY(read_pointer(c, KEY_GIPA, 0, &v));
  a->gipa = (PFN_vkGetInstanceProcAddr)(uintptr_t)v;
  uint64_t lock = 0, unlock = 0, user = 0;
  GFX_TRY(read_pointer(c, KEY_LOCK, 1, &lock));
  GFX_TRY(read_pointer(c, KEY_UNLOCK, 1, &unlock));
  const char* uv = key_value(c, KEY_LOCK_USER);
  if (uv && (!parse_unsigned(uv, 1, &user) || user > UINTPTR_MAX))
    return bad_value(KEY_LOCK_USER, uv, "a pointer (hex 0x... or decimal; 0 allowed)");
  if (!lock != !unlock)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: %s = '%s' needs %s too (value: none)",
                     lock ? KEY_LOCK : KEY_UNLOCK, key_value(c, lock ? KEY_LOCK : KEY_UNLOCK),
                     lock ? KEY_UNLOCK : KEY_LOCK);
  if (uv && !lock)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: %s = '%s' is given without %s", KEY_LOCK_USER,
                     uv, KEY_LOCK);
  a->lock = (void (*)(void*))(uintptr_t)lock;
  a->unlock = (void (*)(void*))(uintptr_t)unlock;
  a->lock_user = (void*)(uintptr_t)user;
  GFX_TRY(read_features(c, &a->features));

  /* the loader: gfxep calls Vulkan through the process's loader, which must be the application's */
  if (a->gipa != vkGetInstanceProcAddr &&
      a->gipa(VK_NULL_HANDLE, "vkEnumerateInstanceVersion") != (PFN_vkVoidFunction)vkEnumerateInstanceVersion)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: InitGraphicsInterop: %s = '%s' is not the vkGetInstanceProcAddr of the Vulkan "
                     "loader gfxep uses (%p): gfxep records on the application's device through that loader, so the "
                     "application must use it too",
                     KEY_GIPA, key_value(c, KEY_GIPA), (void*)(uintptr_t)vkGetInstanceProcAddr);
  /* the physical device: this gfx device's */
  PFN_vkGetPhysicalDeviceProperties2 props2 =
      (PFN_vkGetPhysicalDeviceProperties2)a->gipa(a->instance, "vkGetPhysicalDeviceProperties2");
  PFN_vkGetPhysicalDeviceQueueFamilyProperties qfp =
      (PFN_vkGetPhysicalDeviceQueueFamilyProperties)a->gipa(a->instance, "vkGetPhysicalDeviceQueueFamilyProperties");
  if (!props2 || !qfp)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s = '%s': vkGetPhysicalDeviceProperties2 is not available "
                     "on that instance (Vulkan 1.1 or later is needed)",
                     KEY_INSTANCE, key_value(c, KEY_INSTANCE));
  VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
  props2(a->phys, &p2);
  if (memcmp(id.deviceUUID, d->info.uuid, 16) != 0) {
    char got[33], want[33];
    hex_uuid(id.deviceUUID, got);
    hex_uuid(d->info.uuid, want);
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s = '%s' (%s) has deviceUUID %s, not that of gfxep's device "
                     "%d (%s, %s): use the EP device whose gfxep.device_uuid matches",
                     KEY_PHYSICAL, key_value(c, KEY_PHYSICAL), p2.properties.deviceName, got, d->index, d->info.name,
                     want);
  }
  uint32_t n_fam = 0;
  qfp(a->phys, &n_fam, NULL);
  VkQueueFamilyProperties fams[64];
  if (n_fam > 64) n_fam = 64;
  qfp(a->phys, &n_fam, fams);
  if (a->family >= n_fam || !(fams[a->family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s = '%s' is not a queue family with compute of %s (%u "
                     "families)",
                     KEY_FAMILY, key_value(c, KEY_FAMILY), d->info.name, n_fam);
  if (a->index >= fams[a->family].queueCount)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s = '%s' is not below the %u queues of family %u",
                     KEY_INDEX, key_value(c, KEY_INDEX), fams[a->family].queueCount, a->family);
  /* the device: Vulkan 1.2's entry points (timeline semaphores, buffer device addresses) must be there */
  PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)a->gipa(a->instance, "vkGetDeviceProcAddr");
  if (!gdpa || !gdpa(a->device, "vkGetSemaphoreCounterValue") || !gdpa(a->device, "vkGetBufferDeviceAddress") ||
      !gdpa(a->device, "vkQueueSubmit"))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "vulkan backend: InitGraphicsInterop: %s = '%s' does not offer Vulkan 1.2's "
                     "vkGetSemaphoreCounterValue and vkGetBufferDeviceAddress (create the instance with apiVersion 1.2 "
                     "or later, and enable timelineSemaphore and bufferDeviceAddress)",
                     KEY_DEVICE, key_value(c, KEY_DEVICE));
  return NULL;
}

/* Leaves the current VkDevice's objects; with own set, destroys gfxep's VkDevice too. */
static void leave_device(vk_device* d, int own) {
  vk_device_objects_destroy(d);
  if (own && d->device) vkDestroyDevice(d->device, NULL);
  d->device = VK_NULL_HANDLE;
  d->queue = VK_NULL_HANDLE;
}

/* Back to the physical device's capabilities and a VkDevice of gfxep's own. */
static gfx_status return_to_own(vk_device* d, interop_state* is) {
  d->app_device = 0;
  d->queue_lock_fn = d->queue_unlock_fn = NULL;
  d->queue_lock_user = NULL;
  d->queue_family = is->own_family;
  d->has_f16 = is->f16;
  d->has_float16_arith = is->float16_arith;
  d->has_16bit_storage = is->storage16;
  d->has_8bit_storage = is->storage8;
  d->has_int64 = is->int64;
  d->has_int16 = is->int16;
  d->has_coopmat = is->coopmat;
  d->has_host_query_reset = is->host_query_reset;
  d->has_ext_memory_fd = is->ext_memory_fd;
  d->has_ext_semaphore_fd = is->ext_semaphore_fd;
  d->has_ext_memory_host = is->ext_memory_host;
  d->has_ext_memory_win32 = is->ext_memory_win32;
  d->has_ext_semaphore_win32 = is->ext_semaphore_win32;
  d->interop = NULL;
  free(is);
  return vk_device_create_own(d);
}

gfx_status vk_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note, size_t note_size) {
  if (note && note_size) note[0] = 0;
  if (!dev || !config)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: NULL %s", dev ? "config" : "device");
  vk_device* d = vk_dev(dev);
  if (config->api == GFX_GRAPHICS_API_D3D12)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: InitGraphicsInterop: D3D12 is not supported by the Vulkan backend (it shares "
                     "memory and semaphores with Vulkan renderers; D3D12 handles import through the CUDA backend)");
  if (config->api != GFX_GRAPHICS_API_VULKAN)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: graphics API %d is unknown",
                     (int)config->api);
  if (config->count && (!config->keys || !config->values))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: InitGraphicsInterop: %zu options with NULL keys or values",
                     config->count);
  int any = 0;
  for (size_t i = 0; i < config->count; i++)
    if (config->keys[i] && strncmp(config->keys[i], "gfxep.vk_", 9) == 0) any = 1;
  if (!any) {
    if (note)
      snprintf(note, note_size,
               "no %s given: gfxep keeps its own VkDevice on %s; memory and semaphores are shared by export/import "
               "(opaque fd%s%s)",
               KEY_DEVICE, d->info.name, d->has_ext_semaphore_fd ? ", timeline semaphores" : ", no semaphore import",
               d->has_ext_memory_host ? ", host allocations" : "");
    return NULL;
  }
  app_device a;
  GFX_TRY(read_config(d, config, &a));

  pthread_mutex_lock(&d->init_lock);
  char what[320];
  gfx_status s = NULL;
  if (d->app_device) {
    s = gfx_error(GFX_ERR_INTERNAL,
                  "vulkan backend: InitGraphicsInterop: device %d already runs on an application's VkDevice (a "
                  "previous DeinitGraphicsInterop failed: %s)",
                  d->index, alive(d, what, sizeof what)[0] ? what : "nothing is alive now");
  } else if (alive(d, what, sizeof what)[0]) {
    s = gfx_error(GFX_ERR_INTERNAL,
                  "vulkan backend: InitGraphicsInterop must come before the first session on device %d (%s), or "
                  "after every session, stream and import on it is released: %s",
                  d->index, d->info.name, what);
  }
  if (s) {
    pthread_mutex_unlock(&d->init_lock);
    return s;
  }
  interop_state* is = calloc(1, sizeof *is);
  if (!is) {
    pthread_mutex_unlock(&d->init_lock);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: InitGraphicsInterop: out of host memory");
  }
  *is = (interop_state){.own_family = d->queue_family,
                        .f16 = d->has_f16,
                        .float16_arith = d->has_float16_arith,
                        .storage16 = d->has_16bit_storage,
                        .storage8 = d->has_8bit_storage,
                        .int64 = d->has_int64,
                        .int16 = d->has_int16,
                        .coopmat = d->has_coopmat,
                        .host_query_reset = d->has_host_query_reset,
                        .ext_memory_fd = d->has_ext_memory_fd,
                        .ext_semaphore_fd = d->has_ext_semaphore_fd,
                        .ext_memory_host = d->has_ext_memory_host,
                        .ext_memory_win32 = d->has_ext_memory_win32,
                        .ext_semaphore_win32 = d->has_ext_semaphore_win32};
  if (d->created) leave_device(d, 1);

  PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)a.gipa(a.instance, "vkGetDeviceProcAddr");
  PFN_vkGetDeviceQueue get_queue = (PFN_vkGetDeviceQueue)gdpa(a.device, "vkGetDeviceQueue");
  d->device = a.device;
  d->queue_family = a.family;
  d->queue_index = a.index;
  get_queue(a.device, a.family, a.index, &d->queue);
  d->app_device = 1;
  d->interop = is;
  d->queue_lock_fn = a.lock;
  d->queue_unlock_fn = a.unlock;
  d->queue_lock_user = a.lock_user;
  /* what the application enabled, of what the device has (vkGetDeviceProcAddr answers NULL for the
   * commands of extensions the device was not created with) */
  d->has_float16_arith = is->float16_arith && a.features.float16;
  d->has_16bit_storage = is->storage16 && a.features.storage16;
  d->has_f16 = d->has_float16_arith && d->has_16bit_storage;
  d->has_8bit_storage = is->storage8 && a.features.storage8;
  d->has_int64 = is->int64 && a.features.int64;
  d->has_int16 = is->int16 && a.features.int16;
  d->has_coopmat = is->coopmat && a.features.coopmat && d->has_f16;
  d->has_host_query_reset = is->host_query_reset && a.features.host_query_reset;
#ifdef _WIN32
  d->has_ext_memory_fd = d->has_ext_semaphore_fd = 0;
  d->has_ext_memory_win32 = is->ext_memory_win32 && gdpa(a.device, "vkGetMemoryWin32HandleKHR") != NULL;
  d->has_ext_semaphore_win32 = is->ext_semaphore_win32 && gdpa(a.device, "vkImportSemaphoreWin32HandleKHR") != NULL;
#else
  d->has_ext_memory_fd = is->ext_memory_fd && gdpa(a.device, "vkGetMemoryFdKHR") != NULL;
  d->has_ext_semaphore_fd = is->ext_semaphore_fd && gdpa(a.device, "vkImportSemaphoreFdKHR") != NULL;
#endif
  d->has_ext_memory_host = is->ext_memory_host && gdpa(a.device, "vkGetMemoryHostPointerPropertiesEXT") != NULL;
  s = d->queue ? vk_device_objects_create(d)
               : gfx_error(GFX_ERR_INVALID_ARGUMENT,
                           "vulkan backend: InitGraphicsInterop: vkGetDeviceQueue(family %u, index %u) gave no queue",
                           a.family, a.index);
  if (s) {
    d->device = VK_NULL_HANDLE;
    d->queue = VK_NULL_HANDLE;
    gfx_status back = return_to_own(d, is);
    if (back) {
      d->created = 0; /* device_get tries again */
      gfx_log(GFX_LOG_ERROR, "vulkan backend: InitGraphicsInterop failed, and returning to gfxep's own VkDevice too: %s",
              gfx_status_message(back));
      gfx_status_free(back);
    }
    pthread_mutex_unlock(&d->init_lock);
    return gfx_status_wrap(s, "vulkan backend: InitGraphicsInterop on the application's VkDevice");
  }
  d->created = 1;
  pthread_mutex_unlock(&d->init_lock);
  if (note)
    snprintf(note, note_size,
             "gfxep records and submits on the application's VkDevice %p, queue family %u index %u (%s); features "
             "float16 %s, int64 %s, 8-bit storage %s, cooperative matrices %s; imports: opaque fd %s, timeline semaphores %s, host memory %s",
             (void*)a.device, a.family, a.index,
             a.lock ? "inside the application's queue lock"
                    : "no queue lock given: the application must not submit to that queue during gfxep calls",
             d->has_f16 ? "yes" : "no", d->has_int64 ? "yes" : "no", d->has_8bit_storage ? "yes" : "no",
             d->has_coopmat ? "yes" : "no", d->has_ext_memory_fd ? "yes" : "no", d->has_ext_semaphore_fd ? "yes" : "no",
             d->has_ext_memory_host ? "yes" : "no");
  gfx_log(GFX_LOG_INFO, "vulkan backend: device %d: %s", d->index, note ? note : "on the application's VkDevice");
  return NULL;
}

gfx_status vk_graphics_interop_deinit(gfx_dev* dev) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: DeinitGraphicsInterop: NULL device");
  vk_device* d = vk_dev(dev);
  pthread_mutex_lock(&d->init_lock);
  if (!d->app_device) { /* gfxep kept its own device: nothing to undo */
    pthread_mutex_unlock(&d->init_lock);
    return NULL;
  }
  char what[320];
  if (alive(d, what, sizeof what)[0]) {
    pthread_mutex_unlock(&d->init_lock);
    return gfx_error(GFX_ERR_INTERNAL,
                     "vulkan backend: DeinitGraphicsInterop: device %d stays on the application's VkDevice: %s (release "
                     "sessions, streams, tensors and imports first)",
                     d->index, what);
  }
  /* gfxep's work on the application's queue is done (the sync stream is waited for, bounded, on its
   * own timeline) and everything gfxep made on that device is destroyed */
  leave_device(d, 0);
  gfx_status s = return_to_own(d, (interop_state*)d->interop);
  if (s) d->created = 0;
  pthread_mutex_unlock(&d->init_lock);
  return s ? gfx_status_wrap(s, "vulkan backend: DeinitGraphicsInterop: back to gfxep's own VkDevice") : NULL;
}

/* gfxep — looking up gfxep's devices by the memory and EP devices ORT hands back. */
#include "ort/device.h"

gfx_device* gfx_device_for_memory(gfx_device_set* set, const OrtMemoryDevice* md, bool* host_accessible) {
  if (!md || gfx_ep_api->MemoryDevice_GetDeviceType(md) != OrtMemoryInfoDeviceType_GPU) return NULL;
  uint32_t vendor = gfx_ep_api->MemoryDevice_GetVendorId(md);
  int id = (int)gfx_ep_api->MemoryDevice_GetDeviceId(md);
  for (int i = 0; i < set->n_devices; i++) {
    gfx_device* d = &set->devices[i];
    if (d->mem_vendor_id == vendor && d->mem_device_id == id) {
      if (host_accessible)
        *host_accessible = gfx_ep_api->MemoryDevice_GetMemoryType(md) == OrtDeviceMemoryType_HOST_ACCESSIBLE;
      return d;
    }
  }
  return NULL;
}

gfx_device* gfx_device_for_ep_device(gfx_device_set* set, const OrtEpDevice* ep_device) {
  for (int i = 0; i < set->n_devices; i++)
    if (ep_device && set->devices[i].ep_device == ep_device) return &set->devices[i];
  return NULL;
}

/* gfxep Vulkan backend — the simulated device loss.
 *
 * A real VK_ERROR_DEVICE_LOST leaves the VkDevice unusable, and gfxep cannot re-create a device the
 * application may own; recovery here only clears a loss that inject_device_loss simulated.
 */
#include <stdlib.h>

#include "backend/vulkan/vk_internal.h"

gfx_status vk_inject_device_loss(gfx_dev* dev, void* stream) {
  (void)stream;
  vk_device* d = vk_dev(dev);
  atomic_store(&d->fault_lost, 1);
  return vk_fault_check(d, "inject_device_loss");
}

gfx_status vk_fault_check(vk_device* d, const char* what) {
  if (!atomic_load(&d->fault_lost)) return NULL;
  return vk_check(VK_ERROR_DEVICE_LOST, "%s on device %d (simulated by inject_device_loss)", what, d->index);
}

gfx_status vk_device_recover(gfx_dev* dev) {
  vk_device* d = vk_dev(dev);
  if (!atomic_load(&d->fault_lost))
    return gfx_error(GFX_ERR_DEVICE_LOST,
                     "vulkan backend: device %d met a real VK_ERROR_DEVICE_LOST, which the backend cannot recover from "
                     "in this process",
                     d->index);
  atomic_store(&d->fault_lost, 0);
  return NULL;
}

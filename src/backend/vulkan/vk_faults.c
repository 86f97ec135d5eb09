/* gfxep Vulkan backend — frame stamps, reading an imported semaphore, and the simulated device loss.
 *
 * Stamps are one timestamp query pool: stamp_write resets its query on the host (hostQueryReset),
 * then records vkCmdWriteTimestamp into the stream's recording, so the value lands when the
 * submission that carries it runs; reading asks for the result with its availability and never waits.
 * The host reset before every write is what makes a read safe: a query still holding the value of an
 * earlier frame reads as not ready, never as that old value. The caller reuses a slot only once its
 * last write completed.
 *
 * A real VK_ERROR_DEVICE_LOST leaves the VkDevice unusable, and gfxep cannot re-create a device the
 * application may own; recovery here only clears a loss that inject_device_loss simulated.
 */
#include <stdlib.h>

#include "backend/vulkan/vk_internal.h"

typedef struct vk_stamps {
  vk_device* d;
  VkQueryPool pool;
  int count;
  double ns_per_tick;
  uint64_t mask; /* the queue's valid timestamp bits */
} vk_stamps;

gfx_status vk_stamps_create(gfx_dev* dev, int count, void** out) {
  *out = NULL;
  vk_device* d = vk_dev(dev);
  if (count <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: stamps_create: count %d", count);
  if (!d->has_host_query_reset)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: device %d (%s) has no hostQueryReset enabled, which frame stamps need (an "
                     "application device lists it in gfxep.vk_features as host_query_reset)",
                     d->index, d->info.name);
  const uint32_t bits = vk_timestamp_bits(d);
  if (bits == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: queue family %u of device %d (%s) has no timestamps",
                     d->queue_family, d->index, d->info.name);
  vk_stamps* s = calloc(1, sizeof *s);
  if (!s) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for stamps");
  s->d = d;
  s->count = count;
  s->ns_per_tick = (double)d->props.limits.timestampPeriod;
  s->mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = (uint32_t)count};
  gfx_status st = vk_check(vkCreateQueryPool(d->device, &qi, NULL, &s->pool), "vkCreateQueryPool(%d timestamps) on device %d",
                           count, d->index);
  if (st) {
    free(s);
    return st;
  }
  vkResetQueryPool(d->device, s->pool, 0, (uint32_t)count);
  atomic_fetch_add(&d->live_stamps, 1);
  *out = s;
  return NULL;
}

void vk_stamps_destroy(gfx_dev* dev, void* stamps) {
  (void)dev;
  vk_stamps* s = stamps;
  if (!s) return;
  vkDestroyQueryPool(s->d->device, s->pool, NULL);
  atomic_fetch_sub(&s->d->live_stamps, 1);
  free(s);
}

static gfx_status slot_check(const vk_stamps* s, int slot, const char* what) {
  if (!s || slot < 0 || slot >= s->count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: %s: slot %d outside the %d stamps", what, slot,
                     s ? s->count : 0);
  return NULL;
}

gfx_status vk_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream) {
  vk_stamps* s = stamps;
  GFX_TRY(slot_check(s, slot, "stamp_write"));
  vk_device* d = vk_dev(dev);
  GFX_TRY(vk_fault_check(d, "stamp_write"));
  vk_stream* st = vk_stream_acquire(d, stream);
  gfx_status r = NULL;
  VkCommandBuffer cb;
  if (vk_stream_capturing(st)) r = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a stamp written during a capture");
  if (!r) r = vk_stream_cmd(st, &cb);
  if (!r) {
    /* A timestamp written at BOTTOM_OF_PIPE is outside the second scope of the submission's semaphore
     * waits (that stage means "none" there): on the H200 it landed before an unsignalled wait
     * completed. Written at the compute stage after an execution barrier from every earlier command,
     * it is ordered after the waits and after all work recorded before it. */
    vkResetQueryPool(d->device, s->pool, (uint32_t)slot, 1);
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 0,
                         NULL, 0, NULL);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, s->pool, (uint32_t)slot);
  }
  return vk_stream_release(d, stream, st, r);
}

static gfx_status ticks_of(vk_stamps* s, int slot, uint64_t* ticks) {
  uint64_t r[2] = {0, 0}; /* value, availability */
  VkResult vr = vkGetQueryPoolResults(s->d->device, s->pool, (uint32_t)slot, 1, sizeof r, r, sizeof r,
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (vr != VK_SUCCESS && vr != VK_NOT_READY)
    return vk_check(vr, "vkGetQueryPoolResults (stamp %d) on device %d", slot, s->d->index);
  if (vr == VK_NOT_READY || !r[1])
    return gfx_error(GFX_ERR_NOT_READY, "vulkan backend: stamp %d not reached yet on device %d", slot, s->d->index);
  *ticks = r[0];
  return NULL;
}

gfx_status vk_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns) {
  (void)dev;
  vk_stamps* s = stamps;
  GFX_TRY(slot_check(s, slot, "stamp_read_ns"));
  uint64_t ticks = 0;
  GFX_TRY(ticks_of(s, slot, &ticks));
  /* a queue with fewer than 64 valid bits wraps: a frame that spans the wrap reads as negative and is
   * dropped by the reader, once in 2^bits ticks */
  *ns = (uint64_t)((double)(ticks & s->mask) * s->ns_per_tick);
  return NULL;
}

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

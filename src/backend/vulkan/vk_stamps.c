/* gfxep Vulkan backend — frame stamps.
 *
 * Slot stamps are one timestamp query pool: stamp_write resets its query on the host (hostQueryReset),
 * then records vkCmdWriteTimestamp into the stream's recording, so the value lands when the
 * submission that carries it runs; reading asks for the result with its availability and never waits.
 * The host reset before every write is what makes a read safe: a query still holding the value of an
 * earlier frame reads as not ready, never as that old value. The caller reuses a slot only once its
 * last write completed.
 *
 * Replay stamps are recorded into a captured partition (vk_graph.c), which names fixed queries and
 * offsets only: the replay resets and writes two queries of its own, copies them into a host-visible
 * buffer, and one shader invocation (replay_stamp.comp) files them into the ring entry that a replay
 * counter in the same buffer picks, then advances the counter. A recorded partition replays in order
 * on its stream (the executor keys it by addresses one run at a time), so the host, which counts its
 * launches, knows the entry of each replay, and reads it in place.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- replay stamps ---- */

/* The host-visible buffer of a ring: the replay's two query results, the replay counter, the entries
 * (64-bit values, as replay_stamp.comp lays them out). */
typedef struct vk_replay_entry {
  volatile uint64_t started, begin_ticks, end_ticks, done;
} vk_replay_entry;
enum { RESULTS_AT = 0, COUNTER_AT = 16, RING_AT = 32 };

typedef struct vk_replay_stamps {
  vk_device* d;
  VkQueryPool pool; /* 2 queries: begin, end */
  vk_buffer buf;    /* results, counter, ring */
  uint32_t capacity;
  double ns_per_tick;
  uint64_t mask;
} vk_replay_stamps;

static vk_replay_entry* entries(vk_replay_stamps* r) { return (vk_replay_entry*)((char*)r->buf.mapped + RING_AT); }

gfx_status vk_replay_stamps_create(gfx_dev* dev, int capacity, void** out) {
  *out = NULL;
  vk_device* d = vk_dev(dev);
  if (capacity <= 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: replay_stamps_create: capacity %d", capacity);
  const uint32_t bits = vk_timestamp_bits(d);
  if (bits == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: queue family %u of device %d (%s) has no timestamps",
                     d->queue_family, d->index, d->info.name);
  vk_replay_stamps* r = calloc(1, sizeof *r);
  if (!r) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for replay stamps");
  r->d = d;
  r->capacity = (uint32_t)capacity;
  r->ns_per_tick = (double)d->props.limits.timestampPeriod;
  r->mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2};
  gfx_status st = vk_check(vkCreateQueryPool(d->device, &qi, NULL, &r->pool), "vkCreateQueryPool(replay stamps) on device %d",
                           d->index);
  if (!st) st = vk_buffer_create(d, RING_AT + (VkDeviceSize)capacity * sizeof(vk_replay_entry), VK_MEM_HOST, &r->buf);
  if (!st && !r->buf.mapped)
    st = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: replay stamps: no host-visible memory on device %d", d->index);
  if (st) {
    if (r->buf.buffer) vk_buffer_destroy(d, &r->buf);
    if (r->pool) vkDestroyQueryPool(d->device, r->pool, NULL);
    free(r);
    return st;
  }
  memset(r->buf.mapped, 0, RING_AT + (size_t)capacity * sizeof(vk_replay_entry));
  atomic_fetch_add(&d->live_stamps, 1);
  *out = r;
  return NULL;
}

void vk_replay_stamps_destroy(gfx_dev* dev, void* ring) {
  (void)dev;
  vk_replay_stamps* r = ring;
  if (!r) return;
  vk_buffer_destroy(r->d, &r->buf);
  vkDestroyQueryPool(r->d->device, r->pool, NULL);
  atomic_fetch_sub(&r->d->live_stamps, 1);
  free(r);
}

/* Begin: reset both queries, then the begin timestamp after everything recorded before. End: the end
 * timestamp, the copy of both results, and the shader that files them. Barriers as in vk_stamp_write. */
static void record_begin(vk_replay_stamps* r, VkCommandBuffer cb) {
  vkCmdResetQueryPool(cb, r->pool, 0, 2);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 0, NULL,
                       0, NULL);
  vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, r->pool, 0);
}

static gfx_status record_end(vk_replay_stamps* r, VkCommandBuffer cb) {
  vk_device* d = r->d;
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, VK_SHADER_REPLAY_STAMP, NULL, 0, &pipe));
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 0, NULL,
                       0, NULL);
  vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, r->pool, 1);
  vkCmdCopyQueryPoolResults(cb, r->pool, 0, 2, r->buf.buffer, RESULTS_AT, sizeof(uint64_t),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  VkMemoryBarrier copied = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &copied, 0, NULL, 0,
                       NULL);
  const VkDeviceAddress a = r->buf.address;
  struct {
    uint32_t results[2], counter[2], ring[2];
    uint32_t capacity;
  } push = {{(uint32_t)(a + RESULTS_AT), (uint32_t)((a + RESULTS_AT) >> 32)},
            {(uint32_t)(a + COUNTER_AT), (uint32_t)((a + COUNTER_AT) >> 32)},
            {(uint32_t)(a + RING_AT), (uint32_t)((a + RING_AT) >> 32)},
            r->capacity};
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
  vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
  vkCmdDispatch(cb, 1, 1, 1);
  /* the entry is for the host, and the next replay's copy must not overtake this one's read */
  VkMemoryBarrier filed = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                           .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       0, 1, &filed, 0, NULL, 0, NULL);
  return NULL;
}

gfx_status vk_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream) {
  vk_replay_stamps* r = ring;
  if (!r) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: replay_stamp_record: no ring");
  vk_device* d = vk_dev(dev);
  GFX_TRY(vk_fault_check(d, "replay_stamp_record"));
  vk_stream* st = vk_stream_acquire(d, stream);
  gfx_status s = vk_stream_capturing(st) ? NULL
                                         : gfx_error(GFX_ERR_INVALID_ARGUMENT,
                                                     "vulkan backend: replay_stamp_record outside a capture");
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if (!s) s = vk_stream_cmd(st, &cb);
  if (!s) {
    if (end) s = record_end(r, cb);
    else record_begin(r, cb);
  }
  return vk_stream_release(d, stream, st, s);
}

gfx_status vk_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns, uint64_t* end_ns) {
  vk_replay_stamps* r = ring;
  if (!r) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: replay_stamp_read_ns: no ring");
  const vk_replay_entry* e = &entries(r)[replay % r->capacity];
  const uint64_t done = e->done;
  atomic_thread_fence(memory_order_acquire);
  const uint64_t b = e->begin_ticks, t = e->end_ticks;
  atomic_thread_fence(memory_order_acquire);
  const uint64_t started = e->started;
  if (started > replay + 1 || done > replay + 1)
    return gfx_error(GFX_ERR_EXPIRED, "vulkan backend: replay %llu's stamps were overwritten by replay %llu on device %d",
                     (unsigned long long)replay, (unsigned long long)(started - 1), dev->index);
  if (done != replay + 1 || started != replay + 1)
    return gfx_error(GFX_ERR_NOT_READY, "vulkan backend: replay %llu not ended yet on device %d", (unsigned long long)replay,
                     dev->index);
  *begin_ns = (uint64_t)((double)(b & r->mask) * r->ns_per_tick);
  *end_ns = (uint64_t)((double)(t & r->mask) * r->ns_per_tick);
  return NULL;
}

/* gfxep Vulkan backend — recorded partitions: the Vulkan counterpart of CUDA graph capture.
 *
 * capture_begin gives the stream a secondary command buffer (of a command pool of the graph's own,
 * so that capturing on one stream and launching on others never shares a pool between threads), and
 * everything the executor queues on the stream until capture_end is recorded into it instead of the
 * stream's primary command buffer. graph_launch records vkCmdExecuteCommands of it into the stream's
 * primary, between two barriers: the replay is then part of the stream's next submit, with the waits
 * and signals (events, imported semaphores) that submit carries, and costs the host one command.
 *
 * Why replaying is valid: every kernel reaches its tensors by device address and takes its
 * parameters as push constants, recorded by value; pipelines live as long as the device. The
 * executor replays a graph only for the tensor addresses it was captured with. Copies and zero
 * fills inside a capture are recorded as dispatches on addresses (copy_bytes.comp) rather than
 * vkCmdCopyBuffer / vkCmdFillBuffer, whose VkBuffer handles could be stale at a replay even where
 * the addresses are live again. A host-to-device or device-to-host copy cannot be recorded (its
 * staging contents are the host's at record time): it fails the capture, and the executor runs that
 * partition node by node.
 *
 * The secondary is recorded with SIMULTANEOUS_USE, so submits in flight on several streams may
 * execute it at once; each holds a reference until its stream's timeline passes it, and the graph's
 * pool is destroyed with the last reference.
 */
#include <stdlib.h>

#include "backend/vulkan/vk_internal.h"

struct vk_graph {
  vk_device* d;
  VkCommandPool pool;
  VkCommandBuffer cb;
  atomic_int refs;
};

/* A capture in progress: its graph, found from its secondary command buffer when it ends. At most
 * one capture per stream, a few at once per process: a short list under a lock. */
typedef struct capture {
  VkCommandBuffer cb;
  vk_graph* g;
  struct capture* next;
} capture;

static pthread_mutex_t captures_lock = PTHREAD_MUTEX_INITIALIZER;
static capture* captures;

static void graph_free(vk_graph* g) {
  vkDestroyCommandPool(g->d->device, g->pool, NULL); /* frees g->cb */
  atomic_fetch_sub(&g->d->live_states, 1);
  free(g);
}

void vk_graph_ref(vk_graph* g) { atomic_fetch_add(&g->refs, 1); }

void vk_graph_unref(vk_graph* g) {
  if (g && atomic_fetch_sub(&g->refs, 1) == 1) graph_free(g);
}

static vk_graph* take_capture(VkCommandBuffer cb) {
  pthread_mutex_lock(&captures_lock);
  vk_graph* g = NULL;
  for (capture** p = &captures; *p; p = &(*p)->next)
    if ((*p)->cb == cb) {
      capture* c = *p;
      *p = c->next;
      g = c->g;
      free(c);
      break;
    }
  pthread_mutex_unlock(&captures_lock);
  return g;
}

void vk_graph_abandon_capture(VkCommandBuffer secondary) {
  vk_graph* g = take_capture(secondary);
  if (g) {
    vkEndCommandBuffer(g->cb);
    vk_graph_unref(g);
  }
}

static gfx_status graph_new(vk_device* d, vk_graph** out) {
  *out = NULL;
  vk_graph* g = calloc(1, sizeof *g);
  capture* c = calloc(1, sizeof *c);
  if (!g || !c) {
    free(g);
    free(c);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a recorded partition");
  }
  g->d = d;
  atomic_init(&g->refs, 1);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .queueFamilyIndex = d->queue_family};
  gfx_status st = vk_check(vkCreateCommandPool(d->device, &pci, NULL, &g->pool),
                           "capture_begin: vkCreateCommandPool on device %d", d->index);
  if (!st) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = g->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                      .commandBufferCount = 1};
    st = vk_check(vkAllocateCommandBuffers(d->device, &ai, &g->cb),
                  "capture_begin: vkAllocateCommandBuffers(secondary) on device %d", d->index);
  }
  if (!st) {
    VkCommandBufferInheritanceInfo inh = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                                   .pInheritanceInfo = &inh};
    st = vk_check(vkBeginCommandBuffer(g->cb, &bi), "capture_begin: vkBeginCommandBuffer(secondary) on device %d",
                  d->index);
  }
  if (st) {
    if (g->pool) vkDestroyCommandPool(d->device, g->pool, NULL);
    free(g);
    free(c);
    return st;
  }
  atomic_fetch_add(&d->live_states, 1); /* it lives on this VkDevice (graphics interop's device switch) */
  c->cb = g->cb;
  c->g = g;
  pthread_mutex_lock(&captures_lock);
  c->next = captures;
  captures = c;
  pthread_mutex_unlock(&captures_lock);
  *out = g;
  return NULL;
}

gfx_status vk_capture_begin(gfx_dev* dev, void* stream) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_begin: NULL device");
  if (!stream)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_begin: the synchronous (NULL) stream cannot "
                                               "be captured");
  vk_device* d = vk_dev(dev);
  vk_stream* s = vk_stream_acquire(d, stream);
  vk_graph* g = NULL;
  gfx_status st = vk_stream_capturing(s) ? gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_begin: the "
                                                                               "stream is being captured already")
                                         : graph_new(d, &g);
  if (!st) st = vk_stream_capture_set(s, g->cb);
  if (st && g) vk_graph_abandon_capture(g->cb);
  return vk_stream_release(d, stream, s, st);
}

gfx_status vk_capture_end(gfx_dev* dev, void* stream, void** graph) {
  if (graph) *graph = NULL;
  if (!dev || !stream) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_end: NULL %s",
                                        dev ? "stream" : "device");
  vk_device* d = vk_dev(dev);
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  gfx_status st = NULL;
  if (!vk_stream_capturing(s)) {
    st = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_end: the stream is not being captured");
  } else {
    vk_stream_cmd(s, &cb); /* the capture's secondary */
    vk_stream_capture_set(s, VK_NULL_HANDLE);
  }
  st = vk_stream_release(d, stream, s, st);
  if (st) return st;
  vk_graph* g = take_capture(cb);
  if (!g) return gfx_error(GFX_ERR_INTERNAL, "vulkan backend: capture_end: the capture's record is missing");
  st = vk_check(vkEndCommandBuffer(g->cb), "capture_end: vkEndCommandBuffer(secondary) on device %d", d->index);
  if (st || !graph) {
    vk_graph_unref(g);
    return st;
  }
  *graph = g;
  return NULL;
}

gfx_status vk_graph_launch(gfx_dev* dev, void* graph, void* stream) {
  if (!dev || !graph)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: graph_launch: NULL %s", dev ? "graph" : "device");
  vk_device* d = vk_dev(dev);
  vk_graph* g = graph;
  vk_stream* s = vk_stream_acquire(d, stream);
  gfx_status st = vk_stream_execute_graph(s, g, g->cb);
  return vk_stream_release(d, stream, s, st);
}

void vk_graph_destroy(gfx_dev* dev, void* graph) {
  (void)dev;
  vk_graph_unref(graph);
}

/* ---- copies inside a capture ---- */

gfx_status vk_record_copy_by_address(vk_device* d, VkCommandBuffer cb, VkDeviceAddress dst, VkDeviceAddress src,
                                     VkDeviceSize bytes) {
  int words = dst % 4 == 0 && (!src || src % 4 == 0) && bytes % 4 == 0;
  if (!words && !d->has_8bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: a copy of %llu bytes at unaligned addresses cannot be recorded into a partition "
                     "on device %d (no storageBuffer8BitAccess)",
                     (unsigned long long)bytes, d->index);
  VkDeviceSize units = words ? bytes / 4 : bytes;
  if (units > UINT32_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: a copy of %llu bytes is too large to be recorded into a partition",
                     (unsigned long long)bytes);
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, words ? VK_SHADER_COPY_BYTES_4 : VK_SHADER_COPY_BYTES_1, NULL, 0, &pipe));
  struct {
    uint32_t src[2], dst[2];
    uint32_t count, zero_fill;
  } push = {{(uint32_t)src, (uint32_t)(src >> 32)}, {(uint32_t)dst, (uint32_t)(dst >> 32)}, (uint32_t)units, src == 0};
  const uint32_t groups = vk_grid_groups(d, (units + 255) / 256);
  if (groups == 0) return NULL;
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
  vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
  vkCmdDispatch(cb, groups, 1, 1);
  vk_cmd_barrier(cb);
  return NULL;
}

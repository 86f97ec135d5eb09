/* gfxep Vulkan backend — streams, events and submission.
 *
 * A stream records into one command buffer (begun lazily) and submits it on flush, signalling the
 * next value of its own timeline semaphore; the waits queued by stream_wait_event ride on that
 * submit. Every device has one queue, shared by its streams: vkQueueSubmit runs under queue_lock.
 * What a submit used (its command buffer, staging buffers, the events it waits on) is kept until
 * the timeline has passed its value, then reused (command buffers, staging) or released (events).
 *
 * An event is a timeline semaphore of its own; event_record flushes the stream with one more signal,
 * of the event's next value. Waiting for an event's value is therefore always waiting for work that
 * was submitted already. Every host wait is bounded by VK_WAIT_TIMEOUT_NS.
 *
 * An imported semaphore (graphics interop, vk_interop.c) is an event that is never recorded
 * (vk_event_wrap): its waits ride on the next submit like event waits, its signals (sigs) on the
 * submit that signal_semaphore makes at once; both are held until the stream's timeline passes that
 * submit. It is never waited for or queried on the host. On the application's queue, vkQueueSubmit
 * also runs inside the application's queue lock callbacks when it gave them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/vulkan/vk_internal.h"
#include "core/log.h"

#define PENDING UINT64_MAX /* staging, graphs: used by what is being recorded now */
#define STAGING_KEEP 4             /* free staging buffers a stream keeps for reuse */
#define STAGING_KEEP_MAX_BYTES ((VkDeviceSize)64 << 20) /* larger ones are freed once done */

struct vk_event {
  vk_device* d;
  VkSemaphore sem;
  _Atomic uint64_t value; /* what the last record signals; 0 = never recorded */
  atomic_int refs;
  int external;           /* an imported semaphore (vk_event_wrap): never waited for on the host */
  VkQueryPool query;      /* a timer's (vk_timer_create): one timestamp, written where it is recorded */
};

typedef struct held_cb {
  VkCommandBuffer cb;
  uint64_t value;
} held_cb;

typedef struct held_event {
  vk_event* ev;
  uint64_t value; /* event value to wait for (pending) or stream value it is held until (in flight) */
} held_event;

typedef struct held_graph {
  vk_graph* g;
  uint64_t value; /* stream value it is held until; PENDING = executed by the recording */
} held_graph;

typedef struct staging {
  vk_buffer buf;
  uint64_t value; /* stream value after which it is free; 0 = free; PENDING = being recorded */
} staging;

struct vk_stream {
  vk_device* d;
  pthread_mutex_t lock;
  VkCommandPool pool;
  VkCommandBuffer rec;
  int recording;
  VkSemaphore timeline;
  uint64_t submitted; /* last value a submit signals */

  held_cb* inflight;
  size_t n_inflight, cap_inflight;
  VkCommandBuffer* spare;
  size_t n_spare, cap_spare;
  held_event* waits; /* for the next submit */
  size_t n_waits, cap_waits;
  held_event* held;  /* waited on by submits in flight */
  size_t n_held, cap_held;
  held_event* sigs;  /* imported semaphores the next submit signals (value: what to signal) */
  size_t n_sigs, cap_sigs;
  staging* stg;
  size_t n_stg, cap_stg;
  /* recorded partitions (vk_graph.c): while `capture` is set, kernels and copies record into that
   * secondary command buffer instead of `rec`; graphs the recording executes are held until the
   * submit that carries them has completed */
  VkCommandBuffer capture;
  held_graph* graphs;
  size_t n_graphs, cap_graphs;
};

/* Grows a (pointer, count, capacity) array to hold one more element. */
static int grow(void** arr, size_t* cap, size_t n, size_t elem) {
  if (n < *cap) return 1;
  size_t nc = *cap ? *cap * 2 : 8;
  void* na = realloc(*arr, nc * elem);
  if (!na) return 0;
  *arr = na;
  *cap = nc;
  return 1;
}
#define GROW(arr, cap, n) grow((void**)&(arr), &(cap), (n), sizeof *(arr))

static gfx_status oom(const char* what) {
  return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for %s", what);
}

/* ---- events ---- */

static void event_unref(vk_event* ev) {
  if (atomic_fetch_sub(&ev->refs, 1) != 1) return;
  vk_device* d = ev->d;
  uint64_t v = ev->external ? 0 : atomic_load(&ev->value); /* DEVICE.md: never a host wait on a foreign value */
  atomic_fetch_sub(&d->live_events, 1);
  if (v) {
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &ev->sem,
                              .pValues = &v};
    VkResult r = vkWaitSemaphores(d->device, &wi, VK_WAIT_TIMEOUT_NS);
    if (r != VK_SUCCESS) {
      gfx_log(GFX_LOG_WARNING,
              "vulkan backend: event_destroy: vkWaitSemaphores(value %" PRIu64 "): VkResult %d (%s); its semaphore is "
              "leaked rather than destroyed while in use",
              v, (int)r, vk_result_name(r));
      free(ev);
      return;
    }
  }
  if (ev->query) vkDestroyQueryPool(d->device, ev->query, NULL); /* a timer's: its timestamp is written */
  vkDestroySemaphore(d->device, ev->sem, NULL);
  free(ev);
}

static gfx_status new_timeline(vk_device* d, VkSemaphore* out, const char* what) {
  VkSemaphoreTypeCreateInfo ti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                  .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                  .initialValue = 0};
  VkSemaphoreCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &ti};
  return vk_check(vkCreateSemaphore(d->device, &si, NULL, out), "vkCreateSemaphore(timeline) for %s on device %d", what,
                  d->index);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits on the host for one of gfxep's own timelines (never a foreign one: DEVICE.md). The value is
 * polled for the first d->wait_spin_ns (GFXEP_VULKAN_WAIT_SPIN_US; none by default), then
 * vkWaitSemaphores blocks. Why poll: on an H200 the host time of a replayed Run of the zoo's float16
 * ESPCN and UNet was 57-65 us after such a blocking wait (2 and 3 ms Runs), against 10 us for a small
 * net, while the CUDA backend's waits poll for their first 2 ms. */
static gfx_status wait_value(vk_device* d, VkSemaphore sem, uint64_t value, const char* what) {
  if (d->wait_spin_ns) {
    const uint64_t t0 = now_ns();
    do {
      uint64_t now = 0;
      if (vkGetSemaphoreCounterValue(d->device, sem, &now) != VK_SUCCESS) break; /* vkWaitSemaphores reports it */
      if (now >= value) return NULL;
    } while (now_ns() - t0 < d->wait_spin_ns);
  }
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &sem,
                            .pValues = &value};
  VkResult r = vkWaitSemaphores(d->device, &wi, VK_WAIT_TIMEOUT_NS);
  if (r == VK_TIMEOUT) {
    uint64_t now = 0;
    vkGetSemaphoreCounterValue(d->device, sem, &now);
    return gfx_error(GFX_ERR_DEVICE,
                     "vulkan backend: %s: timed out after %llu s waiting for timeline value %" PRIu64
                     " (reached %" PRIu64 ") on device %d",
                     what, (unsigned long long)(VK_WAIT_TIMEOUT_NS / 1000000000ull), value, now, d->index);
  }
  return vk_check(r, "%s: vkWaitSemaphores(value %" PRIu64 ") on device %d", what, value, d->index);
}

/* ---- streams ---- */

static uint64_t completed(vk_stream* s) {
  uint64_t v = 0;
  if (vkGetSemaphoreCounterValue(s->d->device, s->timeline, &v) != VK_SUCCESS) return 0;
  return v;
}

/* Recycles what the timeline has passed. */
static void reclaim(vk_stream* s) {
  if (!s->n_inflight && !s->n_held && !s->n_stg && !s->n_graphs) return;
  uint64_t done = completed(s);
  size_t k = 0;
  for (size_t i = 0; i < s->n_inflight; i++) {
    if (s->inflight[i].value <= done && GROW(s->spare, s->cap_spare, s->n_spare)) {
      vkResetCommandBuffer(s->inflight[i].cb, 0);
      s->spare[s->n_spare++] = s->inflight[i].cb;
    } else {
      s->inflight[k++] = s->inflight[i];
    }
  }
  s->n_inflight = k;
  k = 0;
  for (size_t i = 0; i < s->n_held; i++) {
    if (s->held[i].value <= done)
      event_unref(s->held[i].ev);
    else
      s->held[k++] = s->held[i];
  }
  s->n_held = k;
  size_t n_free = 0;
  k = 0;
  for (size_t i = 0; i < s->n_stg; i++) {
    staging* g = &s->stg[i];
    if (g->value != PENDING && g->value <= done) {
      g->value = 0;
      if (n_free >= STAGING_KEEP || g->buf.size > STAGING_KEEP_MAX_BYTES) {
        vk_buffer_destroy(s->d, &g->buf);
        continue;
      }
      n_free++;
    }
    s->stg[k++] = *g;
  }
  s->n_stg = k;
  k = 0;
  for (size_t i = 0; i < s->n_graphs; i++) {
    if (s->graphs[i].value != PENDING && s->graphs[i].value <= done)
      vk_graph_unref(s->graphs[i].g);
    else
      s->graphs[k++] = s->graphs[i];
  }
  s->n_graphs = k;
}

gfx_status vk_stream_new(vk_device* d, vk_stream** out) {
  *out = NULL;
  vk_stream* s = calloc(1, sizeof *s);
  if (!s) return oom("a stream");
  s->d = d;
  pthread_mutex_init(&s->lock, NULL);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = d->queue_family};
  gfx_status st = vk_check(vkCreateCommandPool(d->device, &pci, NULL, &s->pool), "vkCreateCommandPool on device %d",
                           d->index);
  if (!st) st = new_timeline(d, &s->timeline, "a stream");
  if (st) {
    if (s->pool) vkDestroyCommandPool(d->device, s->pool, NULL);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return st;
  }
  *out = s;
  return NULL;
}

/* Deletes the stream (synced first) and takes it off the device's list. */
void vk_stream_delete(vk_stream* s) {
  vk_device* d = s->d;
  pthread_mutex_lock(&s->lock);
  gfx_status st = vk_stream_sync_locked(s);
  pthread_mutex_unlock(&s->lock);
  pthread_mutex_lock(&d->streams_lock);
  for (size_t i = 0; i < d->n_streams; i++)
    if (d->streams[i] == s) {
      d->streams[i] = d->streams[--d->n_streams];
      break;
    }
  pthread_mutex_unlock(&d->streams_lock);
  if (st) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: stream_destroy: %s; its objects are leaked rather than destroyed in use",
            gfx_status_message(st));
    gfx_status_free(st);
    return;
  }
  if (s->recording) vkEndCommandBuffer(s->rec); /* only after a failed submit */
  for (size_t i = 0; i < s->n_waits; i++) event_unref(s->waits[i].ev);
  for (size_t i = 0; i < s->n_sigs; i++) event_unref(s->sigs[i].ev);
  for (size_t i = 0; i < s->n_held; i++) event_unref(s->held[i].ev);
  for (size_t i = 0; i < s->n_stg; i++) vk_buffer_destroy(d, &s->stg[i].buf);
  for (size_t i = 0; i < s->n_graphs; i++) vk_graph_unref(s->graphs[i].g);
  if (s->capture) vk_graph_abandon_capture(s->capture); /* a capture never ended */
  vkDestroyCommandPool(d->device, s->pool, NULL); /* frees its command buffers */
  vkDestroySemaphore(d->device, s->timeline, NULL);
  free(s->inflight);
  free(s->spare);
  free(s->waits);
  free(s->held);
  free(s->sigs);
  free(s->stg);
  free(s->graphs);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

vk_stream* vk_stream_acquire(vk_device* d, void* stream) {
  vk_stream* s = stream ? (vk_stream*)stream : d->sync_stream;
  pthread_mutex_lock(&s->lock);
  return s;
}

gfx_status vk_stream_release(vk_device* d, void* stream, vk_stream* s, gfx_status status) {
  (void)d;
  if (!stream) {
    gfx_status w = vk_stream_sync_locked(s);
    if (status)
      gfx_status_free(w);
    else
      status = w;
  }
  pthread_mutex_unlock(&s->lock);
  return status;
}

/* The barrier between gfxep's work and the rest of its queue: `entry` from every stage and write of
 * the work submitted before to gfxep's compute and transfer; otherwise from gfxep's writes to every
 * stage and access of the work submitted after (a renderer's graphics or compute reading a result). */
static void queue_barrier(VkCommandBuffer cb, int entry) {
  const VkAccessFlags ours = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                             VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags our_stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = entry ? VK_ACCESS_MEMORY_WRITE_BIT : ours,
                        .dstAccessMask = entry ? ours : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(cb, entry ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : our_stages,
                       entry ? our_stages : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

gfx_status vk_stream_cmd(vk_stream* s, VkCommandBuffer* out) {
  if (s->capture) {
    *out = s->capture;
    return NULL;
  }
  if (s->recording) {
    *out = s->rec;
    return NULL;
  }
  reclaim(s);
  VkCommandBuffer cb = VK_NULL_HANDLE;
  if (s->n_spare) {
    cb = s->spare[--s->n_spare];
  } else {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = s->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    GFX_TRY(vk_check(vkAllocateCommandBuffers(s->d->device, &ai, &cb), "vkAllocateCommandBuffers on device %d",
                     s->d->index));
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  gfx_status st = vk_check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer on device %d", s->d->index);
  if (st) {
    vkFreeCommandBuffers(s->d->device, s->pool, 1, &cb);
    return st;
  }
  /* every submission starts with a barrier from all earlier work of the queue: on a queue gfxep
   * shares with the application, what the application submitted before is complete and visible
   * before gfxep's first read or write, even where no semaphore orders the two (docs/interop.md) */
  queue_barrier(cb, 1);
  s->rec = cb;
  s->recording = 1;
  *out = cb;
  return NULL;
}

void vk_cmd_barrier(VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                         VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
}

/* Submits what is recorded and waited for, signalling the next stream value and, when extra is
 * given, extra_value on it. Skips when there is nothing to submit. */
static gfx_status flush(vk_stream* s, VkSemaphore extra, uint64_t extra_value) {
  vk_device* d = s->d;
  if (!s->recording && !s->n_waits && !extra && !s->n_sigs) return NULL;
  GFX_TRY(vk_fault_check(d, "vkQueueSubmit"));
  if (!GROW(s->inflight, s->cap_inflight, s->n_inflight)) return oom("a submit");
  if (s->n_held + s->n_waits + s->n_sigs > s->cap_held) {
    size_t need = s->n_held + s->n_waits + s->n_sigs;
    held_event* nh = realloc(s->held, need * sizeof *nh);
    if (!nh) return oom("a submit");
    s->held = nh;
    s->cap_held = need;
  }
  gfx_status st = NULL;
  if (s->recording) {
    queue_barrier(s->rec, 0); /* the queue's later work sees everything recorded here */
    st = vk_check(vkEndCommandBuffer(s->rec), "vkEndCommandBuffer on device %d", d->index);
    s->recording = 0;
    if (st) {
      vkResetCommandBuffer(s->rec, 0);
      if (GROW(s->spare, s->cap_spare, s->n_spare)) s->spare[s->n_spare++] = s->rec;
      s->rec = VK_NULL_HANDLE;
      return st;
    }
  } else {
    s->rec = VK_NULL_HANDLE;
  }
  enum { MAX_WAITS = 64, MAX_SIGNALS = 64 };
  if (s->n_waits > MAX_WAITS) {
    st = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %zu event waits on one submit; %d at most", s->n_waits,
                   MAX_WAITS);
  }
  if (!st && s->n_sigs > MAX_SIGNALS)
    st = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %zu semaphore signals on one submit; %d at most", s->n_sigs,
                   MAX_SIGNALS);
  VkSemaphore wait_sems[MAX_WAITS];
  uint64_t wait_values[MAX_WAITS];
  VkPipelineStageFlags wait_stages[MAX_WAITS];
  for (size_t i = 0; !st && i < s->n_waits; i++) {
    wait_sems[i] = s->waits[i].ev->sem;
    wait_values[i] = s->waits[i].value;
    wait_stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  }
  const uint64_t value = s->submitted + 1;
  /* the stream's own timeline last: some drivers (lavapipe) signal in order, so once a host wait on
   * it returns, the event's signal of the same submit is visible too */
  VkSemaphore sig_sems[2 + MAX_SIGNALS];
  uint64_t sig_values[2 + MAX_SIGNALS];
  uint32_t n_sig = 0;
  if (extra) {
    sig_sems[n_sig] = extra;
    sig_values[n_sig++] = extra_value;
  }
  for (size_t i = 0; !st && i < s->n_sigs; i++) {
    sig_sems[n_sig] = s->sigs[i].ev->sem;
    sig_values[n_sig++] = s->sigs[i].value;
  }
  sig_sems[n_sig] = s->timeline;
  sig_values[n_sig++] = value;
  VkTimelineSemaphoreSubmitInfo ti = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .waitSemaphoreValueCount = (uint32_t)s->n_waits,
                                      .pWaitSemaphoreValues = wait_values,
                                      .signalSemaphoreValueCount = n_sig,
                                      .pSignalSemaphoreValues = sig_values};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .pNext = &ti,
                     .waitSemaphoreCount = (uint32_t)s->n_waits,
                     .pWaitSemaphores = wait_sems,
                     .pWaitDstStageMask = wait_stages,
                     .commandBufferCount = s->rec ? 1 : 0,
                     .pCommandBuffers = s->rec ? &s->rec : NULL,
                     .signalSemaphoreCount = n_sig,
                     .pSignalSemaphores = sig_sems};
  if (!st) {
    pthread_mutex_lock(&d->queue_lock);
    /* the application's queue (graphics interop): inside its lock when it gave one */
    if (d->queue_lock_fn) d->queue_lock_fn(d->queue_lock_user);
    VkResult r = vkQueueSubmit(d->queue, 1, &si, VK_NULL_HANDLE);
    if (d->queue_unlock_fn) d->queue_unlock_fn(d->queue_lock_user);
    pthread_mutex_unlock(&d->queue_lock);
    st = vk_check(r, "vkQueueSubmit (stream value %" PRIu64 ") on device %d", value, d->index);
  }
  if (st) {
    /* nothing was submitted: the recording is dropped, the waits too */
    if (s->rec) {
      vkResetCommandBuffer(s->rec, 0);
      if (GROW(s->spare, s->cap_spare, s->n_spare)) s->spare[s->n_spare++] = s->rec;
    }
    for (size_t i = 0; i < s->n_waits; i++) event_unref(s->waits[i].ev);
    s->n_waits = 0;
    for (size_t i = 0; i < s->n_sigs; i++) event_unref(s->sigs[i].ev);
    s->n_sigs = 0;
    for (size_t i = 0; i < s->n_stg; i++)
      if (s->stg[i].value == PENDING) s->stg[i].value = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->n_graphs; i++) {
      if (s->graphs[i].value == PENDING)
        vk_graph_unref(s->graphs[i].g);
      else
        s->graphs[k++] = s->graphs[i];
    }
    s->n_graphs = k;
    s->rec = VK_NULL_HANDLE;
    return st;
  }
  s->submitted = value;
  if (s->rec) s->inflight[s->n_inflight++] = (held_cb){s->rec, value};
  s->rec = VK_NULL_HANDLE;
  for (size_t i = 0; i < s->n_waits; i++) s->held[s->n_held++] = (held_event){s->waits[i].ev, value};
  s->n_waits = 0;
  for (size_t i = 0; i < s->n_sigs; i++) s->held[s->n_held++] = (held_event){s->sigs[i].ev, value};
  s->n_sigs = 0;
  for (size_t i = 0; i < s->n_stg; i++)
    if (s->stg[i].value == PENDING) s->stg[i].value = value;
  for (size_t i = 0; i < s->n_graphs; i++)
    if (s->graphs[i].value == PENDING) s->graphs[i].value = value;
  return NULL;
}

gfx_status vk_stream_flush_locked(vk_stream* s) { return flush(s, VK_NULL_HANDLE, 0); }

gfx_status vk_stream_wait_locked(vk_stream* s) {
  GFX_TRY(flush(s, VK_NULL_HANDLE, 0));
  if (s->submitted) GFX_TRY(wait_value(s->d, s->timeline, s->submitted, "stream_sync"));
  return NULL;
}

gfx_status vk_stream_sync_locked(vk_stream* s) {
  GFX_TRY(vk_stream_wait_locked(s));
  reclaim(s);
  return NULL;
}

gfx_status vk_stream_staging(vk_stream* s, VkDeviceSize bytes, vk_buffer** out) {
  reclaim(s);
  staging* best = NULL;
  for (size_t i = 0; i < s->n_stg; i++) {
    staging* g = &s->stg[i];
    if (g->value == 0 && g->buf.size >= bytes && (!best || g->buf.size < best->buf.size)) best = g;
  }
  if (!best) {
    if (!GROW(s->stg, s->cap_stg, s->n_stg)) return oom("a staging buffer");
    staging* g = &s->stg[s->n_stg];
    memset(g, 0, sizeof *g);
    VkDeviceSize size = bytes < 65536 ? 65536 : bytes;
    GFX_TRY(gfx_status_wrap(vk_buffer_create(s->d, size, VK_MEM_HOST, &g->buf), "staging buffer of %" PRIu64 " bytes",
                            (uint64_t)size));
    s->n_stg++;
    best = g;
  }
  best->value = PENDING;
  *out = &best->buf;
  return NULL;
}

/* ---- recorded partitions (vk_graph.c) ---- */

int vk_stream_capturing(vk_stream* s) { return s->capture != VK_NULL_HANDLE; }

gfx_status vk_stream_capture_set(vk_stream* s, VkCommandBuffer secondary) {
  if (secondary && s->capture)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: capture_begin: the stream is being captured already");
  s->capture = secondary;
  return NULL;
}

gfx_status vk_stream_execute_graph(vk_stream* s, vk_graph* g, VkCommandBuffer secondary) {
  if (s->capture)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: graph_launch: a recorded partition cannot be launched "
                                               "inside a capture");
  if (!GROW(s->graphs, s->cap_graphs, s->n_graphs)) return oom("a graph launch");
  VkCommandBuffer cb;
  GFX_TRY(vk_stream_cmd(s, &cb));
  vk_cmd_barrier(cb); /* what the stream recorded before comes first */
  vkCmdExecuteCommands(cb, 1, &secondary);
  vk_cmd_barrier(cb);
  vk_graph_ref(g);
  s->graphs[s->n_graphs++] = (held_graph){g, PENDING};
  return NULL;
}

/* ---- the table's entry points ---- */

gfx_status vk_stream_create(gfx_dev* dev, void** out) {
  if (!dev || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: stream_create: NULL argument");
  *out = NULL;
  vk_device* d = vk_dev(dev);
  vk_stream* s;
  GFX_TRY(vk_stream_new(d, &s));
  pthread_mutex_lock(&d->streams_lock);
  int ok = GROW(d->streams, d->cap_streams, d->n_streams);
  if (ok) d->streams[d->n_streams++] = s;
  pthread_mutex_unlock(&d->streams_lock);
  if (!ok) {
    vk_stream_delete(s);
    return oom("the stream list");
  }
  *out = s;
  return NULL;
}

void vk_stream_destroy(gfx_dev* dev, void* stream) {
  (void)dev;
  if (stream) vk_stream_delete((vk_stream*)stream);
}

gfx_status vk_stream_sync(gfx_dev* dev, void* stream) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: stream_sync: NULL device");
  vk_device* d = vk_dev(dev);
  vk_stream* s = vk_stream_acquire(d, stream);
  gfx_status st = vk_stream_sync_locked(s);
  pthread_mutex_unlock(&s->lock);
  return st;
}

gfx_status vk_stream_flush(gfx_dev* dev, void* stream) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: stream_flush: NULL device");
  vk_device* d = vk_dev(dev);
  vk_stream* s = vk_stream_acquire(d, stream);
  gfx_status st = stream ? vk_stream_flush_locked(s) : vk_stream_sync_locked(s);
  pthread_mutex_unlock(&s->lock);
  return st;
}

gfx_status vk_event_create(gfx_dev* dev, void** out) {
  if (!dev || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: event_create: NULL argument");
  *out = NULL;
  vk_device* d = vk_dev(dev);
  vk_event* ev = calloc(1, sizeof *ev);
  if (!ev) return oom("an event");
  ev->d = d;
  atomic_init(&ev->value, 0);
  atomic_init(&ev->refs, 1);
  gfx_status st = new_timeline(d, &ev->sem, "an event");
  if (st) {
    free(ev);
    return st;
  }
  atomic_fetch_add(&d->live_events, 1);
  *out = ev;
  return NULL;
}

uint32_t vk_timestamp_bits(const vk_device* d) {
  uint32_t n_fam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n_fam, NULL);
  VkQueueFamilyProperties fams[32];
  if (n_fam > 32) n_fam = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(d->phys, &n_fam, fams);
  return d->queue_family < n_fam ? fams[d->queue_family].timestampValidBits : 0;
}

/* A timer: an event whose record also writes a device timestamp (after all work queued before it on
 * the stream); needs a queue family with timestamps. */
gfx_status vk_timer_create(gfx_dev* dev, void** out) {
  if (!dev || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: timer_create: NULL argument");
  *out = NULL;
  vk_device* d = vk_dev(dev);
  if (vk_timestamp_bits(d) == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: queue family %u of device %d (%s) has no timestamps",
                     d->queue_family, d->index, d->info.name);
  void* event = NULL;
  GFX_TRY(vk_event_create(dev, &event));
  vk_event* ev = event;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 1};
  gfx_status st = vk_check(vkCreateQueryPool(d->device, &qi, NULL, &ev->query), "vkCreateQueryPool(timestamp) on device %d",
                           d->index);
  if (st) {
    event_unref(ev);
    return st;
  }
  *out = ev;
  return NULL;
}

static gfx_status timestamp_of(vk_event* ev, uint64_t* ticks) {
  vk_device* d = ev->d;
  uint64_t v = atomic_load(&ev->value);
  if (!ev->query || v == 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: timer_elapsed_us: a timer that %s",
                     ev->query ? "was never recorded" : "is a plain event");
  GFX_TRY(wait_value(d, ev->sem, v, "timer_elapsed_us")); /* bounded: the query is then available */
  return vk_check(vkGetQueryPoolResults(d->device, ev->query, 0, 1, sizeof *ticks, ticks, sizeof *ticks,
                                        VK_QUERY_RESULT_64_BIT),
                  "vkGetQueryPoolResults on device %d", d->index);
}

gfx_status vk_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us) {
  if (!dev || !start || !end || !us) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: timer_elapsed_us: NULL argument");
  vk_device* d = vk_dev(dev);
  uint64_t t0 = 0, t1 = 0;
  GFX_TRY(timestamp_of(end, &t1));
  GFX_TRY(timestamp_of(start, &t0));
  const uint32_t bits = vk_timestamp_bits(d);
  const uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  const uint64_t ticks = (t1 - t0) & mask; /* a counter that wrapped once still gives the difference */
  *us = (double)ticks * (double)d->props.limits.timestampPeriod / 1000.0;
  return NULL;
}

gfx_status vk_event_wrap(vk_device* d, VkSemaphore sem, vk_event** out) {
  *out = NULL;
  vk_event* ev = calloc(1, sizeof *ev);
  if (!ev) return oom("an imported semaphore");
  ev->d = d;
  ev->sem = sem;
  ev->external = 1;
  atomic_init(&ev->value, 0);
  atomic_init(&ev->refs, 1);
  atomic_fetch_add(&d->live_events, 1);
  *out = ev;
  return NULL;
}

gfx_status vk_stream_wait_external(vk_device* d, void* stream, vk_event* sem, uint64_t value) {
  vk_stream* s = stream ? (vk_stream*)stream : d->sync_stream;
  pthread_mutex_lock(&s->lock);
  gfx_status st = NULL;
  if (GROW(s->waits, s->cap_waits, s->n_waits)) {
    atomic_fetch_add(&sem->refs, 1);
    s->waits[s->n_waits++] = (held_event){sem, value};
  } else {
    st = oom("a semaphore wait");
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

gfx_status vk_stream_signal_external(vk_device* d, void* stream, vk_event* sem, uint64_t value) {
  vk_stream* s = stream ? (vk_stream*)stream : d->sync_stream;
  pthread_mutex_lock(&s->lock);
  gfx_status st = NULL;
  if (GROW(s->sigs, s->cap_sigs, s->n_sigs)) {
    atomic_fetch_add(&sem->refs, 1);
    s->sigs[s->n_sigs++] = (held_event){sem, value};
    st = flush(s, VK_NULL_HANDLE, 0); /* what is recorded so far, with the signal; no host wait */
  } else {
    st = oom("a semaphore signal");
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

size_t vk_stream_count(vk_device* d) {
  pthread_mutex_lock(&d->streams_lock);
  size_t n = d->n_streams;
  pthread_mutex_unlock(&d->streams_lock);
  return n;
}

void vk_event_destroy(gfx_dev* dev, void* event) {
  (void)dev;
  if (event) event_unref((vk_event*)event);
}

gfx_status vk_event_record(gfx_dev* dev, void* event, void* stream) {
  if (!dev || !event) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: event_record: NULL %s", dev ? "event" : "device");
  vk_device* d = vk_dev(dev);
  vk_event* ev = event;
  vk_stream* s = vk_stream_acquire(d, stream);
  uint64_t next = atomic_load(&ev->value) + 1;
  gfx_status st = NULL;
  if (ev->query) { /* a timer: the timestamp after everything recorded so far (the submission's barrier) */
    VkCommandBuffer cb;
    if (s->capture) st = gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a timer recorded during a capture");
    if (!st) st = vk_stream_cmd(s, &cb);
    if (!st) {
      vk_cmd_barrier(cb);
      vkCmdResetQueryPool(cb, ev->query, 0, 1);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ev->query, 0);
    }
  }
  if (!st) st = flush(s, ev->sem, next);
  if (!st) atomic_store(&ev->value, next);
  st = vk_stream_release(d, stream, s, st);
  /* synchronous: the event is complete on return (its own semaphore, signalled by that submit) */
  if (!st && !stream) st = wait_value(d, ev->sem, next, "event_record");
  return st;
}

gfx_status vk_stream_wait_event(gfx_dev* dev, void* stream, void* event) {
  if (!dev || !event)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: stream_wait_event: NULL %s", dev ? "event" : "device");
  vk_event* ev = event;
  uint64_t v = atomic_load(&ev->value);
  if (v == 0) return NULL; /* never recorded: nothing to wait for */
  if (!stream) return vk_event_sync(dev, event);
  vk_stream* s = stream;
  pthread_mutex_lock(&s->lock);
  gfx_status st = NULL;
  if (GROW(s->waits, s->cap_waits, s->n_waits)) {
    atomic_fetch_add(&ev->refs, 1);
    s->waits[s->n_waits++] = (held_event){ev, v};
  } else {
    st = oom("an event wait");
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

gfx_status vk_event_sync(gfx_dev* dev, void* event) {
  if (!dev || !event) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: event_sync: NULL %s", dev ? "event" : "device");
  vk_event* ev = event;
  uint64_t v = atomic_load(&ev->value);
  if (v == 0) return NULL;
  return wait_value(ev->d, ev->sem, v, "event_sync");
}

int vk_event_done(gfx_dev* dev, void* event) {
  (void)dev;
  if (!event) return 1;
  vk_event* ev = event;
  uint64_t v = atomic_load(&ev->value), now = 0;
  if (v == 0) return 1;
  if (vkGetSemaphoreCounterValue(ev->d->device, ev->sem, &now) != VK_SUCCESS) return 0;
  return now >= v;
}

/* Every stream of the device, then the NULL stream, flushed and waited for (each wait bounded). */
gfx_status vk_device_sync(gfx_dev* dev) {
  if (!dev) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: device_sync: NULL device");
  vk_device* d = vk_dev(dev);
  gfx_status st = NULL;
  pthread_mutex_lock(&d->streams_lock);
  for (size_t i = 0; i < d->n_streams && !st; i++) {
    vk_stream* s = d->streams[i];
    pthread_mutex_lock(&s->lock);
    st = vk_stream_sync_locked(s);
    pthread_mutex_unlock(&s->lock);
  }
  pthread_mutex_unlock(&d->streams_lock);
  if (st) return gfx_status_wrap(st, "device_sync");
  return vk_stream_sync(dev, NULL);
}

gfx_status vk_semaphore_value(gfx_dev* dev, void* semaphore, uint64_t* value) {
  if (!dev || !semaphore || !value)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: semaphore_value: NULL argument");
  vk_event* ev = semaphore;
  return vk_check(vkGetSemaphoreCounterValue(ev->d->device, ev->sem, value), "vkGetSemaphoreCounterValue on device %d",
                  ev->d->index);
}

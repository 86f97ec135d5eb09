/* gfxep — gfx_backend_* wrappers: one call per slot, defaults for the optional ones. */
#include "backend/wrap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

static const gfx_backend* be(const gfx_dev* dev) { return dev->backend; }

/* ---- host-time profile ----
 * GFXEP_HOST_PROFILE=FILE: the wrappers of the calls a Run makes (node runs, copies, recorded-partition
 * launches, events, flushes, semaphore waits and signals) count their calls and the host time spent
 * inside each, and one JSON line per process goes to FILE when gfxep is unloaded: where the host time
 * of a Run goes below the execution provider (the rest of a Run's enqueue time is ONNX Runtime's and
 * the execution provider's own). Off, each wrapper costs one load and branch. */
typedef enum {
  HP_NODE_RUN, HP_COPY, HP_MEMSET, HP_GRAPH_LAUNCH, HP_EVENT_RECORD, HP_STREAM_WAIT_EVENT, HP_STREAM_FLUSH,
  HP_STREAM_SYNC, HP_EVENT_SYNC, HP_WAIT_SEMAPHORE, HP_SIGNAL_SEMAPHORE, HP_REPLAY_STAMP, HP_SLOTS
} hp_slot;
static const char* const hp_names[HP_SLOTS] = {"node_run", "copy", "memset_zero", "graph_launch", "event_record",
                                               "stream_wait_event", "stream_flush", "stream_sync", "event_sync",
                                               "wait_semaphore", "signal_semaphore", "replay_stamp_record"};
static _Atomic uint64_t hp_calls[HP_SLOTS], hp_ns[HP_SLOTS];
static _Atomic(const char*) hp_backend;
static const char* hp_file; /* NULL: off; read once, when gfxep is loaded */

__attribute__((constructor)) static void hp_init(void) {
  const char* f = getenv("GFXEP_HOST_PROFILE");
  hp_file = f && *f ? f : NULL;
}

static uint64_t hp_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static uint64_t hp_begin(void) { return hp_file ? hp_now() : 0; }
/* r, the status of a wrapped call that began at t0 (hp_begin), once its time is counted */
static gfx_status hp_done(const gfx_dev* dev, hp_slot slot, uint64_t t0, gfx_status r) {
  if (hp_file) {
    atomic_fetch_add(&hp_ns[slot], hp_now() - t0);
    atomic_fetch_add(&hp_calls[slot], 1);
    atomic_store(&hp_backend, be(dev)->name);
  }
  return r;
}

__attribute__((destructor)) static void hp_report(void) {
  if (!hp_file) return;
  uint64_t any = 0;
  for (int i = 0; i < HP_SLOTS; i++) any += atomic_load(&hp_calls[i]);
  if (!any) return;
  FILE* f = fopen(hp_file, "a");
  if (!f) return; /* a diagnostic only: nothing to report to at unload */
  const char* name = atomic_load(&hp_backend);
  fprintf(f, "{\"host_profile\": {\"backend\": \"%s\", \"calls\": {", name ? name : "");
  int first = 1;
  for (int i = 0; i < HP_SLOTS; i++) {
    const uint64_t n = atomic_load(&hp_calls[i]), ns = atomic_load(&hp_ns[i]);
    if (!n) continue;
    fprintf(f, "%s\"%s\": {\"n\": %llu, \"us_total\": %.1f, \"us_mean\": %.3f}", first ? "" : ", ", hp_names[i],
            (unsigned long long)n, ns / 1e3, ns / 1e3 / (double)n);
    first = 0;
  }
  fprintf(f, "}}}\n");
  fclose(f);
}

static gfx_status missing(const gfx_dev* dev, const char* what) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "the %s backend has no %s", be(dev)->name, what);
}
static gfx_status missing_fault(const gfx_dev* dev) { return missing(dev, "fault injection"); }

/* ---- device loss ----
 * Every call that can meet a lost device passes its status through seen(): the first
 * GFX_ERR_DEVICE_LOST marks the device, and from then on gfx_backend_check_alive() refuses new work
 * on it with that first report, so a Run fails at once with the cause instead of with whatever the
 * driver says next. */
static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;

static void mark_lost(gfx_dev* dev, const char* why) {
  pthread_mutex_lock(&lost_lock);
  int first = !dev->lost;
  if (first) {
    snprintf(dev->lost_reason, sizeof dev->lost_reason, "%s", why);
    dev->lost = 1;
  }
  pthread_mutex_unlock(&lost_lock);
  if (first) gfx_log(GFX_LOG_ERROR, "gfxep: %s device %d is lost: %s", be(dev)->name, dev->index, why);
}

/* A lost device's status says so in words, whatever the driver's message. */
static gfx_status seen(gfx_dev* dev, gfx_status s) {
  if (!s || gfx_status_code(s) != GFX_ERR_DEVICE_LOST) return s;
  mark_lost(dev, gfx_status_message(s));
  return gfx_status_wrap(s, "%s device %d is lost", be(dev)->name, dev->index);
}

int gfx_backend_is_lost(gfx_dev* dev) {
  pthread_mutex_lock(&lost_lock);
  int lost = dev->lost;
  pthread_mutex_unlock(&lost_lock);
  return lost;
}

gfx_status gfx_backend_check_alive(gfx_dev* dev) {
  if (!dev) return NULL;
  pthread_mutex_lock(&lost_lock);
  gfx_status s = dev->lost ? gfx_error(GFX_ERR_DEVICE_LOST,
                                       "%s device %d was lost (%s); release the sessions and resources on it, then "
                                       "create new ones",
                                       be(dev)->name, dev->index, dev->lost_reason)
                           : NULL;
  pthread_mutex_unlock(&lost_lock);
  return s;
}

/* ---- stalled devices ----
 * cudaFree and cudaFreeHost wait for the whole device, releasing an imported semaphore that a queued
 * wait still uses is not allowed, the Vulkan backend waits (bounded) for a stream's or an event's
 * submissions before destroying it, and the work queued behind a stalled wait still reads node states
 * and recorded graphs: while a device is stalled (a wait past the watchdog's limit), these releases are
 * kept in a list and carried out when it resumes, so that releasing a session never hangs on a
 * producer that does not signal, nor pulls memory from under the work that waits. */
typedef struct deferred_free {
  gfx_dev* dev;
  int kind; /* 0 mem_free, 1 host_free, 2 release_memory, 3 release_semaphore, 4 stream_destroy, 5 event_destroy,
             * 6 stamps_destroy, 7 replay_stamps_destroy, 8 node_release, 9 graph_destroy */
  void* a;
  void* b;
  struct deferred_free* next;
} deferred_free;
static deferred_free* deferred;

static int defer(gfx_dev* dev, int kind, void* a, void* b) {
  pthread_mutex_lock(&lost_lock);
  int held = 0;
  if (dev->stalled) {
    deferred_free* d = malloc(sizeof *d);
    if (d) {
      *d = (deferred_free){dev, kind, a, b, deferred};
      deferred = d;
      held = 1;
    }
  }
  pthread_mutex_unlock(&lost_lock);
  return held;
}

int gfx_backend_is_stalled(gfx_dev* dev) {
  pthread_mutex_lock(&lost_lock);
  int stalled = dev->stalled;
  pthread_mutex_unlock(&lost_lock);
  return stalled;
}

void gfx_backend_set_stalled(gfx_dev* dev, int stalled) {
  pthread_mutex_lock(&lost_lock);
  dev->stalled = stalled;
  deferred_free* mine = NULL;
  if (!stalled)
    for (deferred_free** p = &deferred; *p;) {
      deferred_free* d = *p;
      if (d->dev == dev) {
        *p = d->next;
        d->next = mine;
        mine = d;
      } else {
        p = &d->next;
      }
    }
  pthread_mutex_unlock(&lost_lock);
  if (stalled) gfx_log(GFX_LOG_WARNING, "gfxep: %s device %d is stalled: releases are held until it resumes", be(dev)->name, dev->index);
  int n = 0;
  while (mine) {
    deferred_free* d = mine;
    mine = d->next;
    switch (d->kind) {
      case 0: be(dev)->mem_free(dev, d->a); break;
      case 1: be(dev)->host_free(dev, d->a); break;
      case 2: if (be(dev)->release_memory) be(dev)->release_memory(dev, d->a, d->b); break;
      case 3: if (be(dev)->release_semaphore) be(dev)->release_semaphore(dev, d->a); break;
      case 4: be(dev)->stream_destroy(dev, d->a); break;
      case 6: be(dev)->stamps_destroy(dev, d->a); break;
      case 7: be(dev)->replay_stamps_destroy(dev, d->a); break;
      case 8: be(dev)->node_release(dev, d->a); break;
      case 9: be(dev)->graph_destroy(dev, d->a); break;
      default: be(dev)->event_destroy(dev, d->a); break;
    }
    free(d);
    n++;
  }
  if (n) gfx_log(GFX_LOG_INFO, "gfxep: %s device %d resumed: %d held releases done", be(dev)->name, dev->index, n);
}

gfx_status gfx_backend_inject_device_loss(gfx_dev* dev, void* stream) {
  if (!be(dev)->inject_device_loss) return missing_fault(dev);
  return seen(dev, be(dev)->inject_device_loss(dev, stream));
}

gfx_status gfx_backend_recover(gfx_dev* dev) {
  if (!gfx_backend_is_lost(dev)) return NULL;
  long held = __atomic_load_n(&dev->live_allocations, __ATOMIC_RELAXED);
  if (held > 0)
    return gfx_error(GFX_ERR_DEVICE_LOST,
                     "%s device %d was lost (%s) and cannot be brought back while %ld of its allocations are held "
                     "(tensors, sessions or imported memory not yet released)",
                     be(dev)->name, dev->index, dev->lost_reason, held);
  if (!be(dev)->device_recover)
    return gfx_error(GFX_ERR_DEVICE_LOST, "%s device %d was lost and the %s backend cannot bring it back", be(dev)->name,
                     dev->index, be(dev)->name);
  gfx_status s = be(dev)->device_recover(dev);
  if (s) return gfx_status_wrap(s, "recovering %s device %d", be(dev)->name, dev->index);
  pthread_mutex_lock(&lost_lock);
  dev->lost = 0;
  dev->lost_reason[0] = 0;
  pthread_mutex_unlock(&lost_lock);
  gfx_log(GFX_LOG_INFO, "gfxep: %s device %d recovered after its loss", be(dev)->name, dev->index);
  return NULL;
}


const char* gfx_backend_name(const gfx_dev* dev) { return be(dev)->name; }
size_t gfx_backend_alignment(const gfx_dev* dev) { return be(dev)->alignment ? be(dev)->alignment : 256; }
gfx_status gfx_backend_device_info(gfx_dev* dev, gfx_device_info* out) { return be(dev)->device_info(dev, out); }

gfx_status gfx_backend_mem_alloc(gfx_dev* dev, size_t bytes, void** out) {
  gfx_status s = seen(dev, be(dev)->mem_alloc(dev, bytes, out));
  if (!s) __atomic_add_fetch(&dev->live_allocations, 1, __ATOMIC_RELAXED);
  return s;
}
void gfx_backend_mem_free(gfx_dev* dev, void* addr) {
  if (addr) __atomic_sub_fetch(&dev->live_allocations, 1, __ATOMIC_RELAXED);
  if (!defer(dev, 0, addr, NULL)) be(dev)->mem_free(dev, addr);
}
gfx_status gfx_backend_host_alloc(gfx_dev* dev, size_t bytes, void** out) { return be(dev)->host_alloc(dev, bytes, out); }
void gfx_backend_host_free(gfx_dev* dev, void* ptr) {
  if (!defer(dev, 1, ptr, NULL)) be(dev)->host_free(dev, ptr);
}
gfx_status gfx_backend_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream) {
  const uint64_t t0 = hp_begin();
  return seen(dev, hp_done(dev, HP_COPY, t0, be(dev)->copy(dev, dst, src, bytes, kind, stream)));
}
gfx_status gfx_backend_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream) {
  const uint64_t t0 = hp_begin();
  return seen(dev, hp_done(dev, HP_MEMSET, t0, be(dev)->memset_zero(dev, dst, bytes, stream)));
}
gfx_status gfx_backend_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes) {
  return be(dev)->mem_info(dev, free_bytes, total_bytes);
}

gfx_status gfx_backend_stream_create(gfx_dev* dev, void** out) { return be(dev)->stream_create(dev, out); }
void gfx_backend_stream_destroy(gfx_dev* dev, void* stream) {
  if (!defer(dev, 4, stream, NULL)) be(dev)->stream_destroy(dev, stream);
}
gfx_status gfx_backend_stream_sync(gfx_dev* dev, void* stream) {
  const uint64_t t0 = hp_begin();
  return seen(dev, hp_done(dev, HP_STREAM_SYNC, t0, be(dev)->stream_sync(dev, stream)));
}
gfx_status gfx_backend_stream_flush(gfx_dev* dev, void* stream) {
  const uint64_t t0 = hp_begin();
  return be(dev)->stream_flush ? seen(dev, hp_done(dev, HP_STREAM_FLUSH, t0, be(dev)->stream_flush(dev, stream))) : NULL;
}
gfx_status gfx_backend_event_create(gfx_dev* dev, void** out) { return be(dev)->event_create(dev, out); }
void gfx_backend_event_destroy(gfx_dev* dev, void* event) {
  if (!defer(dev, 5, event, NULL)) be(dev)->event_destroy(dev, event);
}
gfx_status gfx_backend_event_record(gfx_dev* dev, void* event, void* stream) {
  const uint64_t t0 = hp_begin();
  return seen(dev, hp_done(dev, HP_EVENT_RECORD, t0, be(dev)->event_record(dev, event, stream)));
}
gfx_status gfx_backend_stream_wait_event(gfx_dev* dev, void* stream, void* event) {
  const uint64_t t0 = hp_begin();
  return hp_done(dev, HP_STREAM_WAIT_EVENT, t0, be(dev)->stream_wait_event(dev, stream, event));
}
gfx_status gfx_backend_event_sync(gfx_dev* dev, void* event) {
  const uint64_t t0 = hp_begin();
  return seen(dev, hp_done(dev, HP_EVENT_SYNC, t0, be(dev)->event_sync(dev, event)));
}
int gfx_backend_event_done(gfx_dev* dev, void* event) { return be(dev)->event_done(dev, event); }
gfx_status gfx_backend_device_sync(gfx_dev* dev) { return seen(dev, be(dev)->device_sync(dev)); }

gfx_status gfx_backend_supports_node(gfx_dev* dev, const gfx_node_query* q) {
  return be(dev)->supports_node ? be(dev)->supports_node(dev, q) : NULL;
}

/* An attribute reader with no attributes (a fused node's parameters are already parsed). */
static int no_attr_int(void* ctx, const char* name, int64_t* out) { return (void)ctx, (void)name, (void)out, 0; }
static int no_attr_float(void* ctx, const char* name, float* out) { return (void)ctx, (void)name, (void)out, 0; }
static int no_attr_ints(void* ctx, const char* name, int64_t* out, size_t cap, size_t* n) {
  return (void)ctx, (void)name, (void)out, (void)cap, *n = 0, 0;
}
static int no_attr_string(void* ctx, const char* name, char* out, size_t cap) {
  return (void)ctx, (void)name, (void)out, (void)cap, 0;
}
static int no_attr_count(void* ctx) { return (void)ctx, 0; }
static const char* no_attr_name(void* ctx, int i) { return (void)ctx, (void)i, ""; }

gfx_status gfx_backend_supports_graph_node(gfx_dev* dev, const ir_graph* g, const ir_node* node) {
  if (!dev || !g || !node) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "supports_graph_node: NULL argument");
  if (node->n_inputs > IR_MAX_IO || node->n_outputs > IR_MAX_IO)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "supports_graph_node: %d inputs, %d outputs", node->n_inputs,
                     node->n_outputs);
  ir_node_desc d;
  memset(&d, 0, sizeof d);
  d.op_type = ir_op_name(node->op);
  d.domain = "";
  d.since_version = ir_op_min_opset(node->op);
  d.name = node->name ? node->name : "";
  d.n_inputs = node->n_inputs;
  d.n_outputs = node->n_outputs;
  for (int i = 0; i < node->n_inputs; i++) {
    const int v = node->inputs[i];
    d.input_dtypes[i] = v < 0 ? GFX_DTYPE_UNDEFINED : g->values[v].dtype;
    d.input_shapes[i] = v < 0 ? (gfx_shape){.rank = -1} : g->values[v].shape;
    d.input_is_const[i] = v >= 0 && g->values[v].const_data != NULL;
    d.input_const_data[i] = v >= 0 ? g->values[v].const_data : NULL;
    d.input_const_bytes[i] = v >= 0 ? g->values[v].const_bytes : 0;
  }
  for (int o = 0; o < node->n_outputs; o++)
    d.output_dtypes[o] = node->outputs[o] < 0 ? GFX_DTYPE_UNDEFINED : g->values[node->outputs[o]].dtype;
  d.attrs = (ir_attr_reader){.get_int = no_attr_int, .get_float = no_attr_float, .get_ints = no_attr_ints,
                             .get_string = no_attr_string, .count = no_attr_count, .name_at = no_attr_name};
  gfx_node_query q = {.op = node->op, .params = &node->params, .desc = &d};
  return gfx_backend_supports_node(dev, &q);
}

gfx_status gfx_backend_fuse_supports(void* dev, const ir_graph* g, const ir_node* node) {
  return gfx_backend_supports_graph_node((gfx_dev*)dev, g, node);
}
gfx_status gfx_backend_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                    void** state, size_t* scratch_bytes) {
  *state = NULL;
  *scratch_bytes = 0;
  return be(dev)->node_prepare ? be(dev)->node_prepare(dev, node, in, out, state, scratch_bytes) : NULL;
}
/* held while stalled: the work queued behind the stalled wait still reads a node's state (the Vulkan
 * backend's geometry buffers) and runs a recorded graph's commands */
void gfx_backend_node_release(gfx_dev* dev, void* state) {
  if (state && be(dev)->node_release && !defer(dev, 8, state, NULL)) be(dev)->node_release(dev, state);
}
gfx_status gfx_backend_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                void* state) {
  const uint64_t t0 = hp_begin();
  return seen(ctx->dev, hp_done(ctx->dev, HP_NODE_RUN, t0, be(ctx->dev)->node_run(ctx, node, in, out, state)));
}

int gfx_backend_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind) {
  return be(dev)->can_import_memory ? be(dev)->can_import_memory(dev, kind) : 0;
}
int gfx_backend_has_importer(const gfx_dev* dev) {
  return be(dev)->import_memory != NULL || be(dev)->import_semaphore != NULL;
}
gfx_status gfx_backend_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped) {
  return be(dev)->import_memory ? be(dev)->import_memory(dev, desc, import, mapped) : missing(dev, "memory import");
}
void gfx_backend_release_memory(gfx_dev* dev, void* import, void* mapped) {
  if (be(dev)->release_memory && !defer(dev, 2, import, mapped)) be(dev)->release_memory(dev, import, mapped);
}
int gfx_backend_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind) {
  return be(dev)->can_import_semaphore ? be(dev)->can_import_semaphore(dev, kind) : 0;
}
gfx_status gfx_backend_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore) {
  return be(dev)->import_semaphore ? be(dev)->import_semaphore(dev, kind, handle, semaphore)
                                   : missing(dev, "semaphore import");
}
void gfx_backend_release_semaphore(gfx_dev* dev, void* semaphore) {
  if (be(dev)->release_semaphore && !defer(dev, 3, semaphore, NULL)) be(dev)->release_semaphore(dev, semaphore);
}
gfx_status gfx_backend_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  const uint64_t t0 = hp_begin();
  return be(dev)->wait_semaphore
             ? seen(dev, hp_done(dev, HP_WAIT_SEMAPHORE, t0, be(dev)->wait_semaphore(dev, semaphore, value, stream)))
                                 : missing(dev, "semaphore wait");
}
gfx_status gfx_backend_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  const uint64_t t0 = hp_begin();
  return be(dev)->signal_semaphore
             ? seen(dev, hp_done(dev, HP_SIGNAL_SEMAPHORE, t0, be(dev)->signal_semaphore(dev, semaphore, value, stream)))
                                   : missing(dev, "semaphore signal");
}
gfx_status gfx_backend_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note,
                                             size_t note_size) {
  return be(dev)->graphics_interop_init ? be(dev)->graphics_interop_init(dev, config, note, note_size)
                                        : missing(dev, "graphics interop");
}
gfx_status gfx_backend_graphics_interop_deinit(gfx_dev* dev) {
  return be(dev)->graphics_interop_deinit ? be(dev)->graphics_interop_deinit(dev) : missing(dev, "graphics interop");
}

int gfx_backend_has_timers(const gfx_dev* dev) { return be(dev)->timer_create && be(dev)->timer_elapsed_us; }
gfx_status gfx_backend_timer_create(gfx_dev* dev, void** out) {
  return be(dev)->timer_create ? be(dev)->timer_create(dev, out) : missing(dev, "device timers");
}
gfx_status gfx_backend_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us) {
  return be(dev)->timer_elapsed_us ? be(dev)->timer_elapsed_us(dev, start, end, us) : missing(dev, "device timers");
}
int gfx_backend_has_stream_hold(const gfx_dev* dev) { return be(dev)->stream_hold != NULL; }
gfx_status gfx_backend_stream_hold(gfx_dev* dev, void* stream, double us) {
  return be(dev)->stream_hold ? be(dev)->stream_hold(dev, stream, us) : missing(dev, "stream hold");
}

int gfx_backend_can_capture(const gfx_dev* dev) {
  return be(dev)->capture_begin && be(dev)->capture_end && be(dev)->graph_launch && be(dev)->graph_destroy;
}
gfx_status gfx_backend_capture_begin(gfx_dev* dev, void* stream) {
  return gfx_backend_can_capture(dev) ? be(dev)->capture_begin(dev, stream) : missing(dev, "recorded partitions");
}
gfx_status gfx_backend_capture_end(gfx_dev* dev, void* stream, void** graph) {
  return gfx_backend_can_capture(dev) ? be(dev)->capture_end(dev, stream, graph) : missing(dev, "recorded partitions");
}
gfx_status gfx_backend_graph_launch(gfx_dev* dev, void* graph, void* stream) {
  const uint64_t t0 = hp_begin();
  return gfx_backend_can_capture(dev) ? seen(dev, hp_done(dev, HP_GRAPH_LAUNCH, t0, be(dev)->graph_launch(dev, graph, stream)))
                                      : missing(dev, "recorded partitions");
}
void gfx_backend_graph_destroy(gfx_dev* dev, void* graph) {
  if (graph && be(dev)->graph_destroy && !defer(dev, 9, graph, NULL)) be(dev)->graph_destroy(dev, graph);
}

int gfx_backend_has_stamps(const gfx_dev* dev) {
  return be(dev)->stamps_create && be(dev)->stamps_destroy && be(dev)->stamp_write && be(dev)->stamp_read_ns;
}
gfx_status gfx_backend_stamps_create(gfx_dev* dev, int count, void** out) {
  *out = NULL;
  return gfx_backend_has_stamps(dev) ? be(dev)->stamps_create(dev, count, out) : missing(dev, "frame stamps");
}
/* held while stalled: the device may still owe writes into them */
void gfx_backend_stamps_destroy(gfx_dev* dev, void* stamps) {
  if (stamps && be(dev)->stamps_destroy && !defer(dev, 6, stamps, NULL)) be(dev)->stamps_destroy(dev, stamps);
}
gfx_status gfx_backend_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream) {
  return be(dev)->stamp_write ? seen(dev, be(dev)->stamp_write(dev, stamps, slot, stream)) : missing(dev, "frame stamps");
}
gfx_status gfx_backend_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns) {
  return be(dev)->stamp_read_ns ? seen(dev, be(dev)->stamp_read_ns(dev, stamps, slot, ns)) : missing(dev, "frame stamps");
}

int gfx_backend_has_replay_stamps(const gfx_dev* dev) {
  return be(dev)->replay_stamps_create && be(dev)->replay_stamps_destroy && be(dev)->replay_stamp_record &&
         be(dev)->replay_stamp_read_ns;
}
gfx_status gfx_backend_replay_stamps_create(gfx_dev* dev, int capacity, void** out) {
  *out = NULL;
  return gfx_backend_has_replay_stamps(dev) ? be(dev)->replay_stamps_create(dev, capacity, out)
                                            : missing(dev, "stamps inside recorded partitions");
}
void gfx_backend_replay_stamps_destroy(gfx_dev* dev, void* ring) {
  if (ring && be(dev)->replay_stamps_destroy && !defer(dev, 7, ring, NULL)) be(dev)->replay_stamps_destroy(dev, ring);
}
gfx_status gfx_backend_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream) {
  const uint64_t t0 = hp_begin();
  return gfx_backend_has_replay_stamps(dev)
             ? seen(dev, hp_done(dev, HP_REPLAY_STAMP, t0, be(dev)->replay_stamp_record(dev, ring, end, stream)))
                                            : missing(dev, "stamps inside recorded partitions");
}
gfx_status gfx_backend_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns,
                                            uint64_t* end_ns) {
  return gfx_backend_has_replay_stamps(dev) ? seen(dev, be(dev)->replay_stamp_read_ns(dev, ring, replay, begin_ns, end_ns))
                                            : missing(dev, "stamps inside recorded partitions");
}
gfx_status gfx_backend_semaphore_value(gfx_dev* dev, void* semaphore, uint64_t* value) {
  return be(dev)->semaphore_value ? be(dev)->semaphore_value(dev, semaphore, value)
                                  : missing(dev, "way to read an imported semaphore's value");
}
int gfx_backend_deferred_submit(const gfx_dev* dev) { return (be(dev)->flags & GFX_BACKEND_DEFERRED_SUBMIT) != 0; }
int gfx_backend_channels_last_conv(const gfx_dev* dev) {
  return (be(dev)->flags & GFX_BACKEND_CHANNELS_LAST_CONV) != 0;
}

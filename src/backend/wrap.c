/* gfxep — gfx_backend_* wrappers: one call per slot, defaults for the optional ones. */
#include "backend/wrap.h"

static const gfx_backend* be(const gfx_dev* dev) { return dev->backend; }

static gfx_status missing(const gfx_dev* dev, const char* what) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "the %s backend has no %s", be(dev)->name, what);
}

const char* gfx_backend_name(const gfx_dev* dev) { return be(dev)->name; }
size_t gfx_backend_alignment(const gfx_dev* dev) { return be(dev)->alignment ? be(dev)->alignment : 256; }
gfx_status gfx_backend_device_info(gfx_dev* dev, gfx_device_info* out) { return be(dev)->device_info(dev, out); }

gfx_status gfx_backend_mem_alloc(gfx_dev* dev, size_t bytes, void** out) { return be(dev)->mem_alloc(dev, bytes, out); }
void gfx_backend_mem_free(gfx_dev* dev, void* addr) { be(dev)->mem_free(dev, addr); }
gfx_status gfx_backend_host_alloc(gfx_dev* dev, size_t bytes, void** out) { return be(dev)->host_alloc(dev, bytes, out); }
void gfx_backend_host_free(gfx_dev* dev, void* ptr) { be(dev)->host_free(dev, ptr); }
gfx_status gfx_backend_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream) {
  return be(dev)->copy(dev, dst, src, bytes, kind, stream);
}
gfx_status gfx_backend_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream) {
  return be(dev)->memset_zero(dev, dst, bytes, stream);
}
gfx_status gfx_backend_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes) {
  return be(dev)->mem_info(dev, free_bytes, total_bytes);
}

gfx_status gfx_backend_stream_create(gfx_dev* dev, void** out) { return be(dev)->stream_create(dev, out); }
void gfx_backend_stream_destroy(gfx_dev* dev, void* stream) { be(dev)->stream_destroy(dev, stream); }
gfx_status gfx_backend_stream_sync(gfx_dev* dev, void* stream) { return be(dev)->stream_sync(dev, stream); }
gfx_status gfx_backend_stream_flush(gfx_dev* dev, void* stream) {
  return be(dev)->stream_flush ? be(dev)->stream_flush(dev, stream) : NULL;
}
gfx_status gfx_backend_event_create(gfx_dev* dev, void** out) { return be(dev)->event_create(dev, out); }
void gfx_backend_event_destroy(gfx_dev* dev, void* event) { be(dev)->event_destroy(dev, event); }
gfx_status gfx_backend_event_record(gfx_dev* dev, void* event, void* stream) {
  return be(dev)->event_record(dev, event, stream);
}
gfx_status gfx_backend_stream_wait_event(gfx_dev* dev, void* stream, void* event) {
  return be(dev)->stream_wait_event(dev, stream, event);
}
gfx_status gfx_backend_event_sync(gfx_dev* dev, void* event) { return be(dev)->event_sync(dev, event); }
int gfx_backend_event_done(gfx_dev* dev, void* event) { return be(dev)->event_done(dev, event); }
gfx_status gfx_backend_device_sync(gfx_dev* dev) { return be(dev)->device_sync(dev); }

gfx_status gfx_backend_supports_node(gfx_dev* dev, const gfx_node_query* q) {
  return be(dev)->supports_node ? be(dev)->supports_node(dev, q) : NULL;
}
gfx_status gfx_backend_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                    void** state, size_t* scratch_bytes) {
  *state = NULL;
  *scratch_bytes = 0;
  return be(dev)->node_prepare ? be(dev)->node_prepare(dev, node, in, out, state, scratch_bytes) : NULL;
}
void gfx_backend_node_release(gfx_dev* dev, void* state) {
  if (state && be(dev)->node_release) be(dev)->node_release(dev, state);
}
gfx_status gfx_backend_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                void* state) {
  return be(ctx->dev)->node_run(ctx, node, in, out, state);
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
  if (be(dev)->release_memory) be(dev)->release_memory(dev, import, mapped);
}
int gfx_backend_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind) {
  return be(dev)->can_import_semaphore ? be(dev)->can_import_semaphore(dev, kind) : 0;
}
gfx_status gfx_backend_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore) {
  return be(dev)->import_semaphore ? be(dev)->import_semaphore(dev, kind, handle, semaphore)
                                   : missing(dev, "semaphore import");
}
void gfx_backend_release_semaphore(gfx_dev* dev, void* semaphore) {
  if (be(dev)->release_semaphore) be(dev)->release_semaphore(dev, semaphore);
}
gfx_status gfx_backend_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  return be(dev)->wait_semaphore ? be(dev)->wait_semaphore(dev, semaphore, value, stream)
                                 : missing(dev, "semaphore wait");
}
gfx_status gfx_backend_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream) {
  return be(dev)->signal_semaphore ? be(dev)->signal_semaphore(dev, semaphore, value, stream)
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
  return gfx_backend_can_capture(dev) ? be(dev)->graph_launch(dev, graph, stream) : missing(dev, "recorded partitions");
}
void gfx_backend_graph_destroy(gfx_dev* dev, void* graph) {
  if (graph && be(dev)->graph_destroy) be(dev)->graph_destroy(dev, graph);
}

/* gfxep — the one way src/ort and src/exec call a backend: gfx_backend_<slot>(dev, ...) calls the
 * device's backend, and gives each optional slot its default when the backend left it NULL.
 */
#ifndef GFXEP_BACKEND_WRAP_H
#define GFXEP_BACKEND_WRAP_H

#include "backend/backend.h"

/* The backend's name, for messages ("cuda"). */
const char* gfx_backend_name(const gfx_dev* dev);
size_t gfx_backend_alignment(const gfx_dev* dev);
gfx_status gfx_backend_device_info(gfx_dev* dev, gfx_device_info* out);

gfx_status gfx_backend_mem_alloc(gfx_dev* dev, size_t bytes, void** out);
void gfx_backend_mem_free(gfx_dev* dev, void* addr);
gfx_status gfx_backend_host_alloc(gfx_dev* dev, size_t bytes, void** out);
void gfx_backend_host_free(gfx_dev* dev, void* ptr);
gfx_status gfx_backend_copy(gfx_dev* dev, void* dst, const void* src, size_t bytes, gfx_copy_kind kind, void* stream);
gfx_status gfx_backend_memset_zero(gfx_dev* dev, void* dst, size_t bytes, void* stream);
gfx_status gfx_backend_mem_info(gfx_dev* dev, size_t* free_bytes, size_t* total_bytes);

gfx_status gfx_backend_stream_create(gfx_dev* dev, void** out);
void gfx_backend_stream_destroy(gfx_dev* dev, void* stream);
gfx_status gfx_backend_stream_sync(gfx_dev* dev, void* stream);
gfx_status gfx_backend_stream_flush(gfx_dev* dev, void* stream);          /* default: nothing to flush */
gfx_status gfx_backend_event_create(gfx_dev* dev, void** out);
void gfx_backend_event_destroy(gfx_dev* dev, void* event);
gfx_status gfx_backend_event_record(gfx_dev* dev, void* event, void* stream);
gfx_status gfx_backend_stream_wait_event(gfx_dev* dev, void* stream, void* event);
gfx_status gfx_backend_event_sync(gfx_dev* dev, void* event);
int gfx_backend_event_done(gfx_dev* dev, void* event);
gfx_status gfx_backend_device_sync(gfx_dev* dev);

/* Default: every node that parsed is supported. */
gfx_status gfx_backend_supports_node(gfx_dev* dev, const gfx_node_query* q);
/* supports_node for a node of an IR graph (one a fusion would make), described as GetCapability
 * describes a node of the model: its op, parameters, element types, declared shapes and constant
 * inputs (no attributes: its parameters say everything). */
gfx_status gfx_backend_supports_graph_node(gfx_dev* dev, const ir_graph* g, const ir_node* node);
/* The same in the shape of ir_fuse_target.supports (ir/fuse.h), dev being the gfx_dev*: what every
 * caller of ir_fuse_for hands it, so that the fusions ask each device one way. */
gfx_status gfx_backend_fuse_supports(void* dev, const ir_graph* g, const ir_node* node);
/* Default: no state, no scratch. */
gfx_status gfx_backend_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                    void** state, size_t* scratch_bytes);
void gfx_backend_node_release(gfx_dev* dev, void* state);
gfx_status gfx_backend_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                void* state);

/* Interop; defaults: nothing can be imported (0 / GFX_ERR_NOT_SUPPORTED naming the backend). */
int gfx_backend_can_import_memory(gfx_dev* dev, gfx_ext_memory_kind kind);
int gfx_backend_has_importer(const gfx_dev* dev); /* whether the backend imports anything at all */
gfx_status gfx_backend_import_memory(gfx_dev* dev, const gfx_ext_memory_desc* desc, void** import, void** mapped);
void gfx_backend_release_memory(gfx_dev* dev, void* import, void* mapped);
int gfx_backend_can_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind);
gfx_status gfx_backend_import_semaphore(gfx_dev* dev, gfx_ext_semaphore_kind kind, intptr_t handle, void** semaphore);
void gfx_backend_release_semaphore(gfx_dev* dev, void* semaphore);
gfx_status gfx_backend_wait_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status gfx_backend_signal_semaphore(gfx_dev* dev, void* semaphore, uint64_t value, void* stream);
gfx_status gfx_backend_graphics_interop_init(gfx_dev* dev, const gfx_interop_config* config, char* note,
                                             size_t note_size);
gfx_status gfx_backend_graphics_interop_deinit(gfx_dev* dev);

/* Timing; defaults: GFX_ERR_NOT_SUPPORTED. */
int gfx_backend_has_timers(const gfx_dev* dev);
gfx_status gfx_backend_timer_create(gfx_dev* dev, void** out);
gfx_status gfx_backend_timer_elapsed_us(gfx_dev* dev, void* start, void* end, double* us);
int gfx_backend_has_stream_hold(const gfx_dev* dev);
gfx_status gfx_backend_stream_hold(gfx_dev* dev, void* stream, double us);

/* Frame stamps (per-frame GPU timings); defaults: GFX_ERR_NOT_SUPPORTED. */
int gfx_backend_has_stamps(const gfx_dev* dev);
gfx_status gfx_backend_stamps_create(gfx_dev* dev, int count, void** out);
void gfx_backend_stamps_destroy(gfx_dev* dev, void* stamps);
gfx_status gfx_backend_stamp_write(gfx_dev* dev, void* stamps, int slot, void* stream);
gfx_status gfx_backend_stamp_read_ns(gfx_dev* dev, void* stamps, int slot, uint64_t* ns);
/* Stamps inside recorded partitions (backend.h); defaults: GFX_ERR_NOT_SUPPORTED. */
int gfx_backend_has_replay_stamps(const gfx_dev* dev);
gfx_status gfx_backend_replay_stamps_create(gfx_dev* dev, int capacity, void** out);
void gfx_backend_replay_stamps_destroy(gfx_dev* dev, void* ring);
gfx_status gfx_backend_replay_stamp_record(gfx_dev* dev, void* ring, int end, void* stream);
gfx_status gfx_backend_replay_stamp_read_ns(gfx_dev* dev, void* ring, uint64_t replay, uint64_t* begin_ns,
                                            uint64_t* end_ns);
int gfx_backend_deferred_submit(const gfx_dev* dev); /* GFX_BACKEND_DEFERRED_SUBMIT */
int gfx_backend_channels_last_conv(const gfx_dev* dev); /* GFX_BACKEND_CHANNELS_LAST_CONV */

/* Faults. A call whose status says GFX_ERR_DEVICE_LOST marks the device lost; check_alive then
 * returns a status naming the first loss (NULL while the device is well). recover brings it back
 * where the backend can (NULL when it was not lost). */
int gfx_backend_is_lost(gfx_dev* dev);
gfx_status gfx_backend_check_alive(gfx_dev* dev);
gfx_status gfx_backend_recover(gfx_dev* dev);
gfx_status gfx_backend_inject_device_loss(gfx_dev* dev, void* stream);
gfx_status gfx_backend_semaphore_value(gfx_dev* dev, void* semaphore, uint64_t* value);
/* The watchdog's verdict: while stalled, frees and releases that could block are held, and carried
 * out when it is cleared. */
void gfx_backend_set_stalled(gfx_dev* dev, int stalled);
int gfx_backend_is_stalled(gfx_dev* dev);

/* Recorded partitions; defaults: GFX_ERR_NOT_SUPPORTED. */
int gfx_backend_can_capture(const gfx_dev* dev);
gfx_status gfx_backend_capture_begin(gfx_dev* dev, void* stream);
gfx_status gfx_backend_capture_end(gfx_dev* dev, void* stream, void** graph);
gfx_status gfx_backend_graph_launch(gfx_dev* dev, void* graph, void* stream);
void gfx_backend_graph_destroy(gfx_dev* dev, void* graph);

#endif

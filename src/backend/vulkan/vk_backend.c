/* gfxep Vulkan backend — the gfx_backend table, errors, the op support check and the kernel
 * dispatch by family.
 *
 * Built as the module libgfxep_vulkan.so, whose only export is gfxep_vulkan_backend. Adding a
 * kernel family: an enumerator in vk_family (vk_internal.h), its name in family_names below, and a
 * case in each switch of this file (supports, prepare, run, release).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "core/log.h"

/* ---- errors ---- */

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_EVENT_SET: return "VK_EVENT_SET";
    case VK_EVENT_RESET: return "VK_EVENT_RESET";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case VK_ERROR_FRAGMENTATION: return "VK_ERROR_FRAGMENTATION";
    case VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS: return "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS";
    case VK_PIPELINE_COMPILE_REQUIRED: return "VK_PIPELINE_COMPILE_REQUIRED";
    default: return "unknown VkResult";
  }
}

gfx_status vk_check(VkResult r, const char* what_fmt, ...) {
  if (r == VK_SUCCESS) return NULL;
  char what[384];
  va_list ap;
  va_start(ap, what_fmt);
  vsnprintf(what, sizeof what, what_fmt, ap);
  va_end(ap);
  gfx_code code = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? GFX_ERR_OUT_OF_MEMORY
                  : r == VK_ERROR_DEVICE_LOST                                          ? GFX_ERR_DEVICE_LOST
                                                                                        : GFX_ERR_DEVICE;
  return gfx_error(code, "vulkan backend: %s: VkResult %d (%s)", what, (int)r, vk_result_name(r));
}

/* ---- families ---- */

static const char* const op_family[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) [GFX_OP_##id] = #kernel,
#include "ir/ops.def"
#undef GFX_OP
};

/* ops.def's kernel families, as this backend groups them */
static const struct {
  const char* name;
  vk_family family;
} families[] = {
    {"unary", VK_FAM_UNARY},   {"binary", VK_FAM_BINARY},   {"layout", VK_FAM_LAYOUT},
    {"conv", VK_FAM_NN},       {"conv_transpose", VK_FAM_NN}, {"gemm", VK_FAM_NN},
    {"matmul", VK_FAM_NN},     {"reduce", VK_FAM_REDUCE},   {"softmax", VK_FAM_SOFTMAX},
    {"norm", VK_FAM_NORM},     {"pool", VK_FAM_POOL},
    {"cast", VK_FAM_MISC},     {"where", VK_FAM_MISC},      {"batchnorm", VK_FAM_MISC},
    {"resize", VK_FAM_RESIZE}, {"space_depth", VK_FAM_RESIZE},
    {"logic", VK_FAM_INDEX},   {"mod", VK_FAM_INDEX},       {"cumsum", VK_FAM_INDEX},
    {"range", VK_FAM_INDEX},   {"trilu", VK_FAM_INDEX},     {"index", VK_FAM_INDEX},
    {"grid_sample", VK_FAM_RESIZE}, {"lrn", VK_FAM_POOL},  {"quant", VK_FAM_QUANT},
    {"topk", VK_FAM_TOPK},     {"roi_align", VK_FAM_ROI_ALIGN},
    {"nonzero", VK_FAM_SELECT},  {"nms", VK_FAM_SELECT},
    {"attention", VK_FAM_ATTENTION},
};

vk_family vk_family_of(gfx_op op) {
  if ((int)op <= GFX_OP_NONE || op >= GFX_OP_COUNT || !op_family[op]) return VK_FAM_OTHER;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    if (strcmp(op_family[op], families[f].name) == 0) return families[f].family;
  return VK_FAM_OTHER;
}

/* Every node state starts with its family (node_release has no node to look at). */
typedef struct node_state_head {
  vk_family family;
} node_state_head;

static gfx_status not_implemented(gfx_op op) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s is not implemented yet",
                   (int)op > GFX_OP_NONE && op < GFX_OP_COUNT ? ir_op_name(op) : "this op");
}

static gfx_status vk_supports_node(gfx_dev* dev, const gfx_node_query* q) {
  if (!dev || !q) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: supports_node: NULL argument");
  switch (vk_family_of(q->op)) {
    case VK_FAM_UNARY:
    case VK_FAM_BINARY: return vk_supports_elementwise(vk_dev(dev), q);
    case VK_FAM_LAYOUT: return vk_supports_layout(vk_dev(dev), q);
    case VK_FAM_NN: return vk_supports_nn(vk_dev(dev), q);
    case VK_FAM_REDUCE:
    case VK_FAM_SOFTMAX:
    case VK_FAM_NORM:
    case VK_FAM_POOL: return vk_supports_reduce(vk_dev(dev), q);
    case VK_FAM_MISC: return vk_supports_misc(vk_dev(dev), q);
    case VK_FAM_RESIZE: return vk_supports_resize(vk_dev(dev), q);
    case VK_FAM_INDEX: return vk_supports_index(vk_dev(dev), q);
    case VK_FAM_QUANT: return vk_supports_quant(vk_dev(dev), q);
    case VK_FAM_TOPK: return vk_supports_topk(vk_dev(dev), q);
    case VK_FAM_ROI_ALIGN: return vk_supports_roi_align(vk_dev(dev), q);
    case VK_FAM_SELECT: return vk_supports_select(vk_dev(dev), q);
    case VK_FAM_ATTENTION: return vk_supports_attention(vk_dev(dev), q);
    case VK_FAM_OTHER: break;
  }
  return not_implemented(q->op);
}

static gfx_status vk_node_prepare(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  void** state, size_t* scratch_bytes) {
  if (!dev || !node || !in || !out || !state)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node_prepare: NULL argument");
  *state = NULL;
  if (scratch_bytes) *scratch_bytes = 0;
  switch (vk_family_of(node->op)) {
    case VK_FAM_UNARY:
    case VK_FAM_BINARY: return vk_prepare_elementwise(vk_dev(dev), node, in, out, state);
    case VK_FAM_LAYOUT: return vk_prepare_layout(vk_dev(dev), node, in, out, state);
    case VK_FAM_NN: return vk_prepare_nn(vk_dev(dev), node, in, out, state, scratch_bytes);
    case VK_FAM_REDUCE:
    case VK_FAM_SOFTMAX:
    case VK_FAM_NORM:
    case VK_FAM_POOL: return vk_prepare_reduce(vk_dev(dev), node, in, out, state, scratch_bytes);
    case VK_FAM_MISC: return vk_prepare_misc(vk_dev(dev), node, in, out, state);
    case VK_FAM_RESIZE: return vk_prepare_resize(vk_dev(dev), node, in, out, state);
    case VK_FAM_INDEX: return vk_prepare_index(vk_dev(dev), node, in, out, state);
    case VK_FAM_QUANT: return vk_prepare_quant(vk_dev(dev), node, in, out, state);
    case VK_FAM_TOPK: return vk_prepare_topk(vk_dev(dev), node, in, out, state);
    case VK_FAM_ROI_ALIGN: return vk_prepare_roi_align(vk_dev(dev), node, in, out, state);
    case VK_FAM_SELECT: return vk_prepare_select(vk_dev(dev), node, in, out, state, scratch_bytes);
    case VK_FAM_ATTENTION: return vk_prepare_attention(vk_dev(dev), node, in, out, state, scratch_bytes);
    case VK_FAM_OTHER: break;
  }
  return not_implemented(node->op);
}

static void vk_node_release(gfx_dev* dev, void* state) {
  if (!dev || !state) return;
  switch (((node_state_head*)state)->family) {
    case VK_FAM_UNARY:
    case VK_FAM_BINARY: vk_release_elementwise(vk_dev(dev), state); return;
    case VK_FAM_LAYOUT: vk_release_layout(vk_dev(dev), state); return;
    case VK_FAM_NN: vk_release_nn(vk_dev(dev), state); return;
    case VK_FAM_REDUCE:
    case VK_FAM_SOFTMAX:
    case VK_FAM_NORM:
    case VK_FAM_POOL: vk_release_reduce(vk_dev(dev), state); return;
    case VK_FAM_MISC: vk_release_misc(vk_dev(dev), state); return;
    case VK_FAM_RESIZE: vk_release_resize(vk_dev(dev), state); return;
    case VK_FAM_INDEX: vk_release_index(vk_dev(dev), state); return;
    case VK_FAM_QUANT: vk_release_quant(vk_dev(dev), state); return;
    case VK_FAM_TOPK: vk_release_topk(vk_dev(dev), state); return;
    case VK_FAM_ROI_ALIGN: vk_release_roi_align(vk_dev(dev), state); return;
    case VK_FAM_SELECT: vk_release_select(vk_dev(dev), state); return;
    case VK_FAM_ATTENTION: vk_release_attention(vk_dev(dev), state); return;
    case VK_FAM_OTHER: break;
  }
}

static gfx_status vk_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                              void* state) {
  if (!ctx || !ctx->dev || !node) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node_run: NULL argument");
  switch (vk_family_of(node->op)) {
    case VK_FAM_UNARY:
    case VK_FAM_BINARY: return vk_run_elementwise(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_LAYOUT: return vk_run_layout(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_NN: return vk_run_nn(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_REDUCE:
    case VK_FAM_SOFTMAX:
    case VK_FAM_NORM:
    case VK_FAM_POOL: return vk_run_reduce(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_MISC: return vk_run_misc(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_RESIZE: return vk_run_resize(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_INDEX: return vk_run_index(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_QUANT: return vk_run_quant(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_TOPK: return vk_run_topk(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_ROI_ALIGN: return vk_run_roi_align(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_SELECT: return vk_run_select(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_ATTENTION: return vk_run_attention(vk_dev(ctx->dev), ctx, node, in, out, state);
    case VK_FAM_OTHER: break;
  }
  return not_implemented(node->op);
}

/* Prepared node states hold pipelines of the current VkDevice: counted, so that graphics interop
 * switches devices only while none is alive (vk_interop.c). */
static gfx_status vk_node_prepare_counted(gfx_dev* dev, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                          void** state, size_t* scratch_bytes) {
  gfx_status s = vk_node_prepare(dev, node, in, out, state, scratch_bytes);
  if (!s && state && *state) atomic_fetch_add(&vk_dev(dev)->live_states, 1);
  return s;
}

static void vk_node_release_counted(gfx_dev* dev, void* state) {
  if (dev && state) atomic_fetch_sub(&vk_dev(dev)->live_states, 1);
  vk_node_release(dev, state);
}

/* ---- the table ---- */

const gfx_backend vk_backend_table = {
    .abi_version = GFX_BACKEND_ABI_VERSION,
    .name = "vulkan",
    .flags = GFX_BACKEND_DEFERRED_SUBMIT,
    .memory_name = "gfxep_vulkan",
    .memory_id_base = 32,
    .note = "Vulkan compute backend: portable GLSL kernels; ops it has no kernel for stay with ONNX Runtime",
    .device_count = vk_device_count,
    .device_get = vk_device_get,
    .device_info = vk_device_info,
    .alignment = VK_ALLOC_ALIGNMENT,
    .mem_alloc = vk_mem_alloc,
    .mem_free = vk_mem_free,
    .host_alloc = vk_host_alloc,
    .host_free = vk_host_free,
    .copy = vk_copy,
    .memset_zero = vk_memset_zero,
    .mem_info = vk_mem_info,
    .stream_create = vk_stream_create,
    .stream_destroy = vk_stream_destroy,
    .stream_sync = vk_stream_sync,
    .stream_flush = vk_stream_flush,
    .event_create = vk_event_create,
    .event_destroy = vk_event_destroy,
    .event_record = vk_event_record,
    .stream_wait_event = vk_stream_wait_event,
    .event_sync = vk_event_sync,
    .event_done = vk_event_done,
    .timer_create = vk_timer_create,
    .timer_elapsed_us = vk_timer_elapsed_us,
    .stamps_create = vk_stamps_create,
    .stamps_destroy = vk_stamps_destroy,
    .stamp_write = vk_stamp_write,
    .stamp_read_ns = vk_stamp_read_ns,
    .replay_stamps_create = vk_replay_stamps_create,
    .replay_stamps_destroy = vk_replay_stamps_destroy,
    .replay_stamp_record = vk_replay_stamp_record,
    .replay_stamp_read_ns = vk_replay_stamp_read_ns,
    .semaphore_value = vk_semaphore_value,
    .inject_device_loss = vk_inject_device_loss,
    .device_recover = vk_device_recover,
    .device_sync = vk_device_sync,
    .supports_node = vk_supports_node,
    .node_prepare = vk_node_prepare_counted,
    .node_release = vk_node_release_counted,
    .node_run = vk_node_run,
    .set_log_sink = gfx_log_set_sink,
    .can_import_memory = vk_can_import_memory,
    .import_memory = vk_import_memory,
    .release_memory = vk_release_memory,
    .can_import_semaphore = vk_can_import_semaphore,
    .import_semaphore = vk_import_semaphore,
    .release_semaphore = vk_release_semaphore,
    .wait_semaphore = vk_wait_semaphore,
    .signal_semaphore = vk_signal_semaphore,
    .graphics_interop_init = vk_graphics_interop_init,
    .graphics_interop_deinit = vk_graphics_interop_deinit,
    .capture_begin = vk_capture_begin,
    .capture_end = vk_capture_end,
    .graph_launch = vk_graph_launch,
    .graph_destroy = vk_graph_destroy,
};

GFX_MODULE_EXPORT const gfx_backend* gfxep_vulkan_backend(const char** why) {
  if (why) *why = NULL;
  return &vk_backend_table;
}

/* No destructor tears the devices down: at process exit the ICD (loaded by the Vulkan loader after
 * this module) is finalized before this module, and destroying a VkDevice then can crash. Devices
 * live for the process, as backend.h says; vk_teardown() is there for a future unload slot. */

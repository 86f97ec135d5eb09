/* gfxep Vulkan backend — TopK (shaders/topk.comp), as ref_index.c's ref_run_topk computes it: the k
 * largest or smallest elements of every line along the axis, sorted, ties to the lower index, NaN
 * as if the largest value; values bit for bit and int64 indices.
 *
 * Stateless: the geometry (ir_topk_geometry) travels in the push constants and the pipeline is the
 * device's cached one for the element type. float32, float16, int32 and int64 (compared as two
 * 32-bit words, so without shaderInt64); bfloat16 is declined. The module moves 16-bit words, so
 * it needs storageBuffer16BitAccess. Every invocation walks its whole line: on CPU implementations,
 * which end an invocation after 65535 loop turns, longer walks are declined. Tensors below 2^32
 * elements.
 */
#include <stdint.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

/* CPU implementations built on llvmpipe (lavapipe) end an invocation after 65535 loop turns in all
 * (vk_index.c): the walks of one invocation are kept below this there. */
#define SOFTWARE_WALK_LIMIT 60000
#define INVOCATIONS ((int64_t)65535 * 256) /* vk_dispatch_elements' largest grid */

/* topk.comp's push constants and type codes */
typedef struct topk_push {
  uint64_t x, values, indices;
  uint32_t count, len, inner, k, largest;
} topk_push;
_Static_assert(sizeof(topk_push) <= VK_PUSH_BYTES, "push layout");
enum { T_F32 = 0, T_F16 = 1, T_I32 = 2, T_I64 = 3 };

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int type_code(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: return T_F32;
    case GFX_DTYPE_F16: return T_F16;
    case GFX_DTYPE_I32: return T_I32;
    case GFX_DTYPE_I64: return T_I64;
    default: return -1;
  }
}

static gfx_status check_type(vk_device* d, int dtype) {
  if (type_code(dtype) < 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: TopK of %s is not implemented", gfx_dtype_name(dtype));
  if (!d->has_16bit_storage)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: TopK needs storageBuffer16BitAccess, which %s lacks",
                     d->info.name);
  return NULL;
}

/* The loop turns of one invocation: its elements (grid-stride) times its line, INT64_MAX when the
 * shape does not tell. */
static int64_t walk_turns(const gfx_node_query* q) {
  const gfx_shape* s = &q->desc->input_shapes[0];
  if (s->rank < 1 || !q->params) return INT64_MAX;
  int64_t count = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0) return INT64_MAX;
    count *= s->dims[i];
  }
  ir_axis_geom g;
  gfx_status st = ir_axis_geometry(s, q->params->index.axis, &g);
  if (st) {
    gfx_status_free(st);
    return INT64_MAX;
  }
  return (count + INVOCATIONS - 1) / INVOCATIONS * (g.len + 1);
}

gfx_status vk_supports_topk(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  GFX_TRY(check_type(d, desc->input_dtypes[0]));
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && walk_turns(q) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: TopK walks more than %d elements in one invocation (or an unknown number), which "
                     "%s (a CPU implementation) cuts short", SOFTWARE_WALK_LIMIT, d->info.name);
  return NULL;
}

gfx_status vk_prepare_topk(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                           void** state) {
  (void)d;
  *state = NULL; /* stateless: run derives the geometry */
  if (node->n_inputs != 2 || node->n_outputs != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (TopK): %d inputs and %d outputs",
                     label(node), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, 1));
  return vk_check_elements_u32(node, out, 2);
}

void vk_release_topk(vk_device* d, void* state) { (void)d, (void)state; }

static gfx_status bad_io(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (TopK): %s", label(node), what);
}

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

gfx_status vk_run_topk(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                       gfx_tensor* out, void* state) {
  (void)state;
  if (!in || !out || node->n_inputs != 2 || node->n_outputs != 2) return bad_io(node, "run without its tensors");
  const int t = in[0].dtype;
  if (out[0].dtype != t || out[1].dtype != GFX_DTYPE_I64)
    return bad_io(node, "Values differ from X in type, or Indices are not int64");
  GFX_TRY(check_type(d, t));
  const ir_index_params* p = &node->params.index;
  ir_axis_geom g;
  gfx_shape want[2];
  gfx_status s = ir_infer_topk(node, &in[0].shape, want);
  if (!s) s = ir_topk_geometry(&in[0].shape, p->axis, p->k, &g);
  if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (TopK)", label(node));
  if (!gfx_shape_equal(&out[0].shape, &want[0]) || !gfx_shape_equal(&out[1].shape, &want[1]))
    return bad_io(node, "the outputs' shapes are not X's with k along the axis");
  GFX_TRY(vk_check_elements_u32(node, &in[0].shape, 1));
  const int64_t count = g.outer * g.len * g.inner;
  if (p->k == 0 || count == 0) return NULL;
  const int32_t spec[1] = {type_code(t)};
  vk_pipe* pipe;
  GFX_TRY(vk_pipeline_get(d, VK_SHADER_TOPK, spec, 1, &pipe));
  topk_push pc = {.x = addr(in[0].data),
                  .values = addr(out[0].data),
                  .indices = addr(out[1].data),
                  .count = (uint32_t)count,
                  .len = (uint32_t)g.len,
                  .inner = (uint32_t)g.inner,
                  .k = (uint32_t)p->k,
                  .largest = (uint32_t)(p->largest != 0)};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, (uint64_t)count);
}

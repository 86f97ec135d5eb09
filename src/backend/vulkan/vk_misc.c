/* gfxep Vulkan backend — the small element-wise families of ops.def: cast (shaders/cast.comp), where
 * (shaders/where.comp) and batchnorm (shaders/batchnorm.comp); and the helpers every kernel with
 * 32-bit indices shares (the element-count check and the grid-stride dispatch).
 *
 * Cast converts among float32, float16, bfloat16, int32, int64 and bool exactly as the reference
 * does (bit-exact conversions in integer arithmetic, see cast.comp); a Cast to its own type is a
 * buffer copy. Its one shader moves 1-, 2- and 8-byte values, so it needs storageBuffer8BitAccess,
 * storageBuffer16BitAccess and shaderInt64 (but no float16 arithmetic).
 * Where moves x / y elements as bits of any size with numpy broadcasting of cond, x and y; the
 * bool condition needs storageBuffer8BitAccess, 2-byte elements storageBuffer16BitAccess.
 * BatchNormalization (inference) computes in float32: float32, and float16 where the device has
 * shaderFloat16 and 16-bit storage; bfloat16 is declined.
 *
 * The element types are not in the node's params, so node_prepare computes only the geometry (the
 * broadcast strides of Where) and the pipeline is picked at the first run, keyed by the types and
 * kept in the state. Tensors of 2^32 elements or more are refused at node_prepare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/shape.h"

#define GROUP_SIZE 256
#define WHERE_MAX_RANK 8

/* cast.comp's type codes */
enum { CAST_F32 = 0, CAST_F16, CAST_BF16, CAST_I32, CAST_I64, CAST_BOOL };

typedef struct cast_push {
  uint64_t src, dst;
  uint32_t count;
} cast_push;

/* where.comp's Geom block and push constants */
typedef struct where_geom {
  uint32_t rank;
  uint32_t dims[WHERE_MAX_RANK];
  uint32_t strides[3 * WHERE_MAX_RANK];
} where_geom;
typedef struct where_push {
  uint64_t cond, x, y, out, geom;
  uint32_t count;
} where_push;

typedef struct batchnorm_push {
  uint64_t x, scale, bias, mean, var, y;
  uint32_t count, inner, channels;
  float epsilon;
} batchnorm_push;
_Static_assert(sizeof(batchnorm_push) == 64 && sizeof(where_push) <= VK_PUSH_BYTES, "push layouts");

typedef struct misc_state {
  vk_family family; /* first: node_release dispatches on it */
  gfx_op op;
  uint32_t count;  /* output elements */
  uint32_t inner, channels; /* BatchNormalization */
  vk_buffer geom;  /* Where with broadcasting */
  vk_pipe_slot slot; /* the pipeline for the type signature of the last run */
} misc_state;

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

/* ---- shared helpers ---- */

gfx_status vk_check_elements_u32(const ir_node* node, const gfx_shape* shapes, int n) {
  for (int i = 0; i < n; i++) {
    if (shapes[i].rank < 0) continue;
    if (gfx_shape_numel(&shapes[i]) >= ((int64_t)1 << 32)) {
      char buf[128];
      return gfx_error(GFX_ERR_NOT_SUPPORTED,
                       "vulkan backend: node '%s' (%s): a tensor of shape %s has 2^32 elements or more; the kernel "
                       "indexes with 32 bits",
                       label(node), ir_op_name(node->op), gfx_shape_str(&shapes[i], buf, sizeof buf));
    }
  }
  return NULL;
}

uint32_t vk_grid_groups(const vk_device* d, uint64_t needed) {
  return needed > d->grid_groups ? d->grid_groups : (uint32_t)needed;
}

gfx_status vk_dispatch_elements(vk_device* d, void* stream, vk_pipe* pipe, const void* push, size_t push_bytes,
                                uint64_t count) {
  if (count == 0) return NULL;
  const uint32_t groups = vk_grid_groups(d, (count + GROUP_SIZE - 1) / GROUP_SIZE);
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes, push);
    vkCmdDispatch(cb, groups, 1, 1);
    vk_cmd_barrier(cb);
  }
  return vk_stream_release(d, stream, s, status);
}

gfx_status vk_dispatch_groups(vk_device* d, void* stream, vk_pipe* pipe, void* push, size_t push_bytes,
                              uint32_t* phase, const uint32_t* groups, uint32_t n) {
  vk_stream* s = vk_stream_acquire(d, stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
    for (uint32_t i = 0; i < n; i++) {
      if (phase) *phase = i;
      vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes, push);
      vkCmdDispatch(cb, groups[i], 1, 1);
      vk_cmd_barrier(cb); /* each pass reads what the one before wrote */
    }
  }
  return vk_stream_release(d, stream, s, status);
}

gfx_status vk_cpu_needs_shapes(const vk_device* d, const char* op) {
  if (d->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return NULL;
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of shapes the model leaves open, on %s (a CPU "
                   "implementation, whose invocations are cut short: their walks must be known)", op, d->info.name);
}

/* ---- types: which shader, or why not ---- */

static gfx_status no_feature(vk_device* d, const char* op, const char* what, const char* feature) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s %s needs %s, which %s lacks", op, what, feature,
                   d->info.name);
}

static int cast_code(int dtype) {
  switch (dtype) {
    case GFX_DTYPE_F32: return CAST_F32;
    case GFX_DTYPE_F16: return CAST_F16;
    case GFX_DTYPE_BF16: return CAST_BF16;
    case GFX_DTYPE_I32: return CAST_I32;
    case GFX_DTYPE_I64: return CAST_I64;
    case GFX_DTYPE_BOOL: return CAST_BOOL;
    default: return -1;
  }
}

static gfx_status cast_check(vk_device* d, int from, int to) {
  if (cast_code(from) < 0 || cast_code(to) < 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Cast from %s to %s is not handled", gfx_dtype_name(from),
                     gfx_dtype_name(to));
  if (from == to) return NULL; /* a buffer copy */
  if (!d->has_int64) return no_feature(d, "Cast", "(its shader)", "shaderInt64");
  if (!d->has_8bit_storage) return no_feature(d, "Cast", "(its shader)", "storageBuffer8BitAccess");
  if (!d->has_16bit_storage) return no_feature(d, "Cast", "(its shader)", "storageBuffer16BitAccess");
  return NULL;
}

static gfx_status where_shader(vk_device* d, int dtype, vk_shader_id* out) {
  if (!d->has_8bit_storage) return no_feature(d, "Where", "(its bool condition)", "storageBuffer8BitAccess");
  switch (gfx_dtype_size(dtype)) {
    case 1: *out = VK_SHADER_WHERE_1; return NULL;
    case 2:
      if (!d->has_16bit_storage) return no_feature(d, "Where", "of 2-byte elements", "storageBuffer16BitAccess");
      *out = VK_SHADER_WHERE_2;
      return NULL;
    case 4: *out = VK_SHADER_WHERE_4; return NULL;
    case 8: *out = VK_SHADER_WHERE_8; return NULL;
    default:
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Where of %s is not handled", gfx_dtype_name(dtype));
  }
}

static gfx_status batchnorm_shader(vk_device* d, int dtype, vk_shader_id* out) {
  if (dtype == GFX_DTYPE_F32) {
    *out = VK_SHADER_BATCHNORM_F32;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16) {
    if (!d->has_f16) return no_feature(d, "BatchNormalization", "of float16", "shaderFloat16 and storageBuffer16BitAccess");
    *out = VK_SHADER_BATCHNORM_F16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_BF16) {
    if (!d->has_16bit_storage) return no_feature(d, "BatchNormalization", "of bfloat16", "storageBuffer16BitAccess");
    *out = VK_SHADER_BATCHNORM_BF16;
    return NULL;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: BatchNormalization of %s is not implemented",
                   gfx_dtype_name(dtype));
}

gfx_status vk_supports_misc(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  vk_shader_id shader;
  switch (q->op) {
    case GFX_OP_CAST: return cast_check(d, desc->input_dtypes[0], desc->output_dtypes[0]);
    case GFX_OP_WHERE: return where_shader(d, desc->output_dtypes[0], &shader);
    case GFX_OP_BATCH_NORM: return batchnorm_shader(d, desc->input_dtypes[0], &shader);
    default: break;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s is not implemented", ir_op_name(q->op));
}

/* ---- prepare, release ---- */

static gfx_status prepare_where(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                misc_state* st) {
  gfx_shape full = in[0];
  for (int i = 1; i < 3; i++) {
    gfx_shape next;
    GFX_TRY(ir_broadcast_shapes(&full, &in[i], &next));
    full = next;
  }
  if (!gfx_shape_equal(&full, &out[0])) {
    char a[96], b[96];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s", gfx_shape_str(&out[0], a, sizeof a),
                     gfx_shape_str(&full, b, sizeof b));
  }
  int strided = 0;
  for (int i = 0; i < 3; i++)
    if (!gfx_shape_equal(&in[i], &out[0])) strided = 1;
  if (!strided) return NULL;
  const int rank = out[0].rank;
  if (rank > WHERE_MAX_RANK)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "rank %d; at most %d is handled", rank, WHERE_MAX_RANK);
  (void)node;
  where_geom g;
  memset(&g, 0, sizeof g);
  g.rank = (uint32_t)rank;
  for (int k = 0; k < rank; k++) g.dims[k] = (uint32_t)out[0].dims[k];
  for (int i = 0; i < 3; i++) {
    int64_t stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
      const int ki = k - (rank - in[i].rank);
      const int64_t dim = ki >= 0 ? in[i].dims[ki] : 1;
      g.strides[i * WHERE_MAX_RANK + k] = dim == 1 ? 0 : (uint32_t)stride;
      stride *= dim;
    }
  }
  GFX_TRY(vk_buffer_create(d, sizeof g, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, &g, sizeof g);
  return NULL;
}

gfx_status vk_prepare_misc(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                           void** state) {
  *state = NULL;
  const int n_in = node->op == GFX_OP_CAST ? 1 : node->op == GFX_OP_WHERE ? 3 : 5;
  if (node->n_inputs != n_in || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %d inputs and %d outputs", label(node),
                     ir_op_name(node->op), node->n_inputs, node->n_outputs);
  GFX_TRY(vk_check_elements_u32(node, in, n_in));
  GFX_TRY(vk_check_elements_u32(node, out, 1));
  misc_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_MISC;
  st->op = node->op;
  st->count = (uint32_t)gfx_shape_numel(&out[0]);
  vk_pipe_slot_init(&st->slot);
  gfx_status s = NULL;
  switch (node->op) {
    case GFX_OP_CAST:
      if (!gfx_shape_equal(&in[0], &out[0])) s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape differs from the input's");
      break;
    case GFX_OP_WHERE: s = prepare_where(d, node, in, out, st); break;
    case GFX_OP_BATCH_NORM: {
      gfx_shape want;
      s = ir_infer_batchnorm(node, in, &want);
      if (!s && !gfx_shape_equal(&want, &out[0])) s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape differs from x's");
      if (!s) {
        int64_t inner = 1;
        for (int k = 2; k < in[0].rank; k++) inner *= in[0].dims[k];
        st->inner = (uint32_t)inner;
        st->channels = (uint32_t)in[0].dims[1];
        if (inner == 0 || st->channels == 0) st->count = 0;
      }
      break;
    }
    default: s = gfx_error(GFX_ERR_NOT_SUPPORTED, "not an op of vk_misc.c"); break;
  }
  if (s) {
    vk_release_misc(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_misc(vk_device* d, void* state) {
  misc_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  vk_pipe_slot_destroy(&st->slot);
  free(st);
}

/* ---- run ---- */

static gfx_status bad_types(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %s", label(node), ir_op_name(node->op),
                   what);
}

static gfx_status run_cast(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                           gfx_tensor* out, misc_state* st) {
  const int from = in[0].dtype, to = out[0].dtype;
  gfx_status bad = cast_check(d, from, to);
  if (bad) return gfx_status_wrap(bad, "vulkan backend: node '%s' (Cast)", label(node));
  if (from == to)
    return in[0].data == out[0].data ? NULL
                                     : vk_copy(&d->dev, out[0].data, in[0].data, (size_t)st->count * gfx_dtype_size(to),
                                               GFX_COPY_DEVICE_TO_DEVICE, ctx->stream);
  const int32_t spec[2] = {cast_code(from), cast_code(to)};
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, from | to << 8, VK_SHADER_CAST, spec, 2, &pipe));
  cast_push pc = {.src = (uint64_t)(uintptr_t)in[0].data, .dst = (uint64_t)(uintptr_t)out[0].data, .count = st->count};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

static gfx_status run_where(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, misc_state* st) {
  const int t = out[0].dtype;
  if (in[0].dtype != GFX_DTYPE_BOOL) return bad_types(node, "the condition is not bool");
  if (in[1].dtype != t || in[2].dtype != t) return bad_types(node, "x, y and the output differ in element type");
  vk_shader_id shader;
  GFX_TRY(where_shader(d, t, &shader));
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, NULL, 0, &pipe));
  where_push pc = {.cond = (uint64_t)(uintptr_t)in[0].data,
                   .x = (uint64_t)(uintptr_t)in[1].data,
                   .y = (uint64_t)(uintptr_t)in[2].data,
                   .out = (uint64_t)(uintptr_t)out[0].data,
                   .geom = st->geom.buffer ? st->geom.address : 0,
                   .count = st->count};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

static gfx_status run_batchnorm(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                gfx_tensor* out, misc_state* st) {
  const int t = in[0].dtype;
  for (int i = 1; i < 5; i++)
    if (in[i].dtype != t) return bad_types(node, "the inputs differ in element type");
  if (out[0].dtype != t) return bad_types(node, "the output's element type differs from x's");
  vk_shader_id shader;
  GFX_TRY(batchnorm_shader(d, t, &shader));
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, NULL, 0, &pipe));
  batchnorm_push pc = {.x = (uint64_t)(uintptr_t)in[0].data,
                       .scale = (uint64_t)(uintptr_t)in[1].data,
                       .bias = (uint64_t)(uintptr_t)in[2].data,
                       .mean = (uint64_t)(uintptr_t)in[3].data,
                       .var = (uint64_t)(uintptr_t)in[4].data,
                       .y = (uint64_t)(uintptr_t)out[0].data,
                       .count = st->count,
                       .inner = st->inner,
                       .channels = st->channels,
                       .epsilon = node->params.elementwise.epsilon};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

gfx_status vk_run_misc(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                       gfx_tensor* out, void* state) {
  misc_state* st = state;
  if (!st || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     label(node), ir_op_name(node->op));
  if (gfx_shape_numel(&out[0].shape) != (int64_t)st->count && st->count != 0)
    return bad_types(node, "the output's element count differs from what node_prepare saw");
  if (st->count == 0) return NULL;
  switch (node->op) {
    case GFX_OP_CAST: return run_cast(d, ctx, node, in, out, st);
    case GFX_OP_WHERE: return run_where(d, ctx, node, in, out, st);
    case GFX_OP_BATCH_NORM: return run_batchnorm(d, ctx, node, in, out, st);
    default: break;
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s) has no Vulkan kernel", label(node),
                   ir_op_name(node->op));
}

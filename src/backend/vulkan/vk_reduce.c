/* gfxep Vulkan backend — the reduce, softmax, norm and pool families and LRN (shaders/reduce.comp).
 *
 * node_prepare resolves the IR's geometry for the node's shapes (ir/ops_reduce.h) into a small
 * host-visible block the shader reads by address; node_run records one dispatch: a workgroup per
 * output element or row (Reduce, Softmax, normalizations), an invocation per output (pooling;
 * ArgMax/ArgMin, shaders/argmax.comp, int64 indices).
 * float32 and (with shaderFloat16 + 16-bit storage) float16; integer Sum/Max/Min/Prod of int32 and
 * int64 (shaders/reduce_int.comp); tensors below 2^32 elements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_reduce.h"

#define RED_GROUP 256
#define MAX_GROUPS 65535u

typedef struct reduce_geom_gpu {
  int64_t out_count, reduce_count;
  int32_t kind, n_kept, n_red, select_last; /* select_last: ArgMax/ArgMin (argmax.comp) */
  int64_t kept_dims[GFX_MAX_RANK], kept_strides[GFX_MAX_RANK];
  int64_t red_dims[GFX_MAX_RANK], red_strides[GFX_MAX_RANK];
} reduce_geom_gpu;

typedef struct softmax_geom_gpu {
  int64_t outer, n, inner;
  int32_t log_softmax, lp; /* lp: LpNormalization's p, 0 for the softmaxes */
} softmax_geom_gpu;

typedef struct norm_geom_gpu {
  int64_t rows, count, affine_mod, affine_mul, affine_div, affine_wrap;
  float epsilon;
  int32_t has_bias;
  int32_t rms, pad0; /* RMSNormalization */
} norm_geom_gpu;

/* ir_pool_geom: 2-D pooling is a depth of 1; the arrays are indexed depth, height, width */
typedef struct pool_geom_gpu {
  int64_t volumes, in_size[3], out_size[3];
  int64_t kernel[3], strides[3], dilations[3], pad_begin[3], pad_end[3];
  int32_t is_max, count_include_pad;
} pool_geom_gpu;

typedef struct lrn_geom_gpu {
  int64_t n, c, spatial, size, pre;
  float alpha_over_size, beta, bias, pad0;
} lrn_geom_gpu;

typedef struct red_push {
  uint64_t x, scale, bias, y, geom;
  uint64_t mean, inv_std; /* LayerNormalization's optional outputs, 0 when absent, */
  uint32_t stats_f32, pad0; /* as float32 (else the input's type) */
  uint64_t partials;        /* a split reduction's partial results (the node's scratch) */
  uint32_t phase, splits;   /* 0: whole rows; 1: slices into partials; 2: partials into outputs */
} red_push;
_Static_assert(sizeof(red_push) == 80 && sizeof(red_push) <= VK_PUSH_BYTES, "red_push layout");

/* A reduction of few outputs over long rows (a frame to one value: the float16 range guard's probes,
 * a global pool of a large image) gives each output one workgroup, which leaves a GPU all but idle:
 * on the H200 a ReduceMax of 24 x 1080 x 1080 values took 93 ms. The same holds for normalizations of
 * few long rows (InstanceNormalization of 32 channels at 512 x 512: 1.1 ms). Such rows split into slices, a
 * workgroup each, towards SPLIT_TARGET_GROUPS workgroups (several per multiprocessor), each slice at
 * least SPLIT_MIN_SLICE long; a second dispatch combines the slices' partial results. A CPU
 * implementation (lavapipe) runs a few workgroups at a time anyway: no split there, unless
 * GFXEP_VULKAN_SPLIT_REDUCE=1 asks for it (the tests of the split): then every row of 8 or more
 * values splits, into up to 7 slices. */
#define SPLIT_TARGET_GROUPS 1024
#define SPLIT_MIN_SLICE 4096
#define SPLIT_MIN_SLICE_FORCED 4
#define SPLIT_FORCED 7 /* slices per row when forced: several, of uneven lengths, a few workgroups on a CPU */

typedef struct red_state {
  vk_family family; /* first: node_release dispatches on it */
  vk_buffer geom;
  vk_pipe* pipe;
  uint32_t groups;
  int copy;         /* a Reduce with noop_with_empty_axes: the output is the input */
  size_t copy_bytes;
  uint32_t splits;  /* slices per row of a split reduction (1: not split) */
  int64_t out_count;
} red_state;

/* The scratch a split needs: a float32 per row and slice, twice for a normalization (its sums and
 * its squared deviations). */
static size_t partial_bytes(const red_state* st) {
  return (size_t)st->out_count * st->splits * sizeof(float) * (st->family == VK_FAM_NORM ? 2 : 1);
}

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int family_index(vk_family f) {
  switch (f) {
    case VK_FAM_REDUCE: return 0;
    case VK_FAM_SOFTMAX: return 1;
    case VK_FAM_NORM: return 2;
    default: return 3; /* VK_FAM_POOL */
  }
}

static int is_arg(gfx_op op) { return op == GFX_OP_ARG_MAX || op == GFX_OP_ARG_MIN; }

static gfx_status shader_for(vk_device* d, gfx_op op, int dtype, vk_shader_id* out) {
  static const vk_shader_id f32[4] = {VK_SHADER_REDUCE_F32, VK_SHADER_SOFTMAX_F32, VK_SHADER_NORM_F32, VK_SHADER_POOL_F32};
  static const vk_shader_id f16[4] = {VK_SHADER_REDUCE_F16, VK_SHADER_SOFTMAX_F16, VK_SHADER_NORM_F16, VK_SHADER_POOL_F16};
  /* the workgroup families combine through subgroups where the device has them (pooling combines
   * nothing across invocations) */
  static const vk_shader_id f32_sg[4] = {VK_SHADER_REDUCE_F32_SG, VK_SHADER_SOFTMAX_F32_SG, VK_SHADER_NORM_F32_SG,
                                         VK_SHADER_POOL_F32};
  static const vk_shader_id f16_sg[4] = {VK_SHADER_REDUCE_F16_SG, VK_SHADER_SOFTMAX_F16_SG, VK_SHADER_NORM_F16_SG,
                                         VK_SHADER_POOL_F16};
  static const vk_shader_id bf16[4] = {VK_SHADER_REDUCE_BF16, VK_SHADER_SOFTMAX_BF16, VK_SHADER_NORM_BF16,
                                       VK_SHADER_POOL_BF16};
  static const vk_shader_id bf16_sg[4] = {VK_SHADER_REDUCE_BF16_SG, VK_SHADER_SOFTMAX_BF16_SG, VK_SHADER_NORM_BF16_SG,
                                          VK_SHADER_POOL_BF16};
  const int f = family_index(vk_family_of(op));
  const int sg = d->has_subgroup_ops && !getenv("GFXEP_VULKAN_NO_SUBGROUPS");
  if (!d->has_int64)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s needs shaderInt64, which %s lacks", ir_op_name(op),
                     d->info.name);
  if (is_arg(op) && (dtype == GFX_DTYPE_F32 || (dtype == GFX_DTYPE_F16 && d->has_f16) ||
                     (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage))) {
    *out = dtype == GFX_DTYPE_F32 ? VK_SHADER_ARGMAX_F32 : dtype == GFX_DTYPE_F16 ? VK_SHADER_ARGMAX_F16
                                                                                 : VK_SHADER_ARGMAX_BF16;
    return NULL;
  }
  /* integer Sum/Max/Min/Prod (the IR claims no other integer reduction) */
  const int int_reduce =
      op == GFX_OP_REDUCE_SUM || op == GFX_OP_REDUCE_MAX || op == GFX_OP_REDUCE_MIN || op == GFX_OP_REDUCE_PROD;
  if ((dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64) && int_reduce) {
    *out = dtype == GFX_DTYPE_I32 ? VK_SHADER_REDUCE_I32 : VK_SHADER_REDUCE_I64;
    return NULL;
  }
  if (op == GFX_OP_LRN && (dtype == GFX_DTYPE_F32 || (dtype == GFX_DTYPE_F16 && d->has_f16) ||
                           (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage))) {
    *out = dtype == GFX_DTYPE_F32 ? VK_SHADER_LRN_F32 : dtype == GFX_DTYPE_F16 ? VK_SHADER_LRN_F16 : VK_SHADER_LRN_BF16;
    return NULL;
  }
  if (dtype == GFX_DTYPE_F32) {
    *out = sg ? f32_sg[f] : f32[f];
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16 && d->has_f16) {
    *out = sg ? f16_sg[f] : f16[f];
    return NULL;
  }
  /* bfloat16: computed in float32, loaded and stored as 16-bit words */
  if (dtype == GFX_DTYPE_BF16 && d->has_16bit_storage && !is_arg(op)) {
    *out = sg ? bf16_sg[f] : bf16[f];
    return NULL;
  }
  if (dtype == GFX_DTYPE_F16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: float16 needs shaderFloat16 and storageBuffer16BitAccess, which %s lacks",
                     d->info.name);
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not implemented yet", ir_op_name(op),
                   gfx_dtype_name(dtype));
}

/* CPU implementations built on llvmpipe (lavapipe) end an invocation after 65535 loop turns in all:
 * there, pooling windows whose walk (every kernel loop turn) may be longer are declined. */
#define SOFTWARE_WALK_LIMIT 60000

static int64_t pool_window_turns(const ir_pool_params* p) {
  int64_t turns = 0;
  for (int i = p->n_spatial - 1; i >= 0; i--) turns = (int64_t)p->kernel[i] * (1 + turns);
  return turns;
}

gfx_status vk_supports_reduce(vk_device* d, const gfx_node_query* q) {
  const int dtype = q->desc && q->desc->n_inputs > 0 ? q->desc->input_dtypes[0] : GFX_DTYPE_F32;
  /* the pooling ops only: LRN shares the family but not the params */
  const int pooling = q->op == GFX_OP_MAX_POOL || q->op == GFX_OP_AVERAGE_POOL;
  /* a residual Add fused into LayerNormalization (ir/fuse_norm.c) has no kernel here: the fusion
   * asks, and leaves the Add and the normalization apart */
  if (q->op == GFX_OP_LAYER_NORMALIZATION && q->params && q->params->norm.residual)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: LayerNormalization with a residual Add fused in");
  /* nor InstanceNormalization's fused epilogue (ir/fuse_norm_epilogue.c): the nodes stay apart */
  if (q->op == GFX_OP_INSTANCE_NORMALIZATION && q->params && ir_norm_has_epilogue(&q->params->norm))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: InstanceNormalization with an Add, Relu or Pad fused in");
  /* the layout transformer hands channels-last pooling over only where gfxep asks for NHWC, which it
   * does not on this backend (no channels-last Conv either) */
  if (pooling && q->params && q->params->pool.channels_last)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a channels-last %s", ir_op_name(q->op));
  if (pooling && q->params && d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU &&
      pool_window_turns(&q->params->pool) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: a %s window walks more than %d taps in one invocation, which %s (a CPU "
                     "implementation) cuts short", ir_op_name(q->op), SOFTWARE_WALK_LIMIT, d->info.name);
  vk_shader_id shader;
  return shader_for(d, q->op, dtype, &shader);
}

static uint32_t clamp_groups(int64_t n) { return n < 1 ? 1 : n > (int64_t)MAX_GROUPS ? MAX_GROUPS : (uint32_t)n; }

static gfx_status fill_geom(vk_device* d, red_state* st, const void* g, size_t bytes) {
  GFX_TRY(vk_buffer_create(d, bytes, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, g, bytes);
  return NULL;
}

/* How many slices each of `rows` rows of `length` splits into (1: none); see SPLIT_TARGET_GROUPS. */
static uint32_t row_splits(vk_device* d, int64_t rows, int64_t length) {
  if (rows <= 0 || rows >= SPLIT_TARGET_GROUPS) return 1;
  const int forced = getenv("GFXEP_VULKAN_SPLIT_REDUCE") != NULL;
  if (d->info.software && !forced) return 1;
  int64_t splits = forced ? SPLIT_FORCED : (SPLIT_TARGET_GROUPS + rows - 1) / rows;
  const int64_t most = length / (forced ? SPLIT_MIN_SLICE_FORCED : SPLIT_MIN_SLICE);
  if (splits > most) splits = most;
  if (splits > (int64_t)d->props.limits.maxComputeWorkGroupCount[1]) splits = d->props.limits.maxComputeWorkGroupCount[1];
  return splits < 2 ? 1 : (uint32_t)splits;
}

static gfx_status prepare_geom(vk_device* d, const ir_node* node, const gfx_shape* in, red_state* st) {
  switch (vk_family_of(node->op)) {
    case VK_FAM_REDUCE: {
      ir_reduce_geom g;
      GFX_TRY(ir_reduce_geometry(&node->params.reduce, &in[0], &g));
      if (g.copy) {
        st->copy = 1;
        return NULL;
      }
      reduce_geom_gpu gg;
      memset(&gg, 0, sizeof gg);
      gg.out_count = g.out_count, gg.reduce_count = g.reduce_count;
      gg.kind = (int32_t)node->params.reduce.kind, gg.n_kept = g.n_kept, gg.n_red = g.n_red;
      gg.select_last = node->params.reduce.select_last;
      for (int i = 0; i < g.n_kept; i++) gg.kept_dims[i] = g.kept_dims[i], gg.kept_strides[i] = g.kept_strides[i];
      for (int i = 0; i < g.n_red; i++) gg.red_dims[i] = g.red_dims[i], gg.red_strides[i] = g.red_strides[i];
      st->groups = clamp_groups(g.out_count);
      st->out_count = g.out_count;
      /* LogSumExp shifts by its row's maximum before it adds: it keeps whole rows */
      st->splits = is_arg(node->op) || node->params.reduce.kind == IR_REDUCE_LOG_SUM_EXP
                       ? 1
                       : row_splits(d, g.out_count, g.reduce_count);
      if (is_arg(node->op)) { /* an invocation per output, 256 to a workgroup */
        if (g.reduce_count == 0 && g.out_count > 0)
          return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s over an axis of size 0 has no index to give", ir_op_name(node->op));
        st->groups = clamp_groups((g.out_count + RED_GROUP - 1) / RED_GROUP);
      }
      return fill_geom(d, st, &gg, sizeof gg);
    }
    case VK_FAM_SOFTMAX: {
      ir_softmax_geom g;
      GFX_TRY(ir_softmax_geometry(&node->params.softmax, &in[0], &g));
      softmax_geom_gpu gg = {.outer = g.outer, .n = g.n, .inner = g.inner, .log_softmax = node->params.softmax.log,
                             .lp = node->params.softmax.lp};
      st->groups = clamp_groups(g.outer * g.inner);
      return fill_geom(d, st, &gg, sizeof gg);
    }
    case VK_FAM_NORM: {
      ir_norm_geom g;
      GFX_TRY(ir_norm_geometry(&node->params.norm, &in[0], &in[1], &g));
      const int rms = node->params.norm.kind == IR_NORM_RMS;
      norm_geom_gpu gg = {.rows = g.rows, .count = g.count, .affine_mod = g.affine_mod, .affine_mul = g.affine_mul,
                          .affine_div = g.affine_div, .affine_wrap = g.affine_wrap, .epsilon = node->params.norm.epsilon,
                          .has_bias = !rms && node->n_inputs >= 3 && node->inputs[2] >= 0, .rms = rms};
      st->groups = clamp_groups(g.rows);
      st->out_count = g.rows;
      st->splits = row_splits(d, g.rows, g.count);
      return fill_geom(d, st, &gg, sizeof gg);
    }
    default: {
      if (node->op == GFX_OP_LRN) { /* an invocation per element, as pooling */
        ir_lrn_geom g;
        GFX_TRY(ir_lrn_geometry(&node->params.lrn, &in[0], &g));
        const ir_lrn_params* p = &node->params.lrn;
        lrn_geom_gpu gg = {.n = g.n, .c = g.c, .spatial = g.spatial, .size = g.size, .pre = g.pre,
                           .alpha_over_size = p->alpha / (float)g.size, .beta = p->beta, .bias = p->bias};
        st->groups = clamp_groups((g.n * g.c * g.spatial + RED_GROUP - 1) / RED_GROUP);
        return fill_geom(d, st, &gg, sizeof gg);
      }
      ir_pool_geom g;
      GFX_TRY(ir_pool_geometry(&node->params.pool, &in[0], &g));
      pool_geom_gpu gg;
      memset(&gg, 0, sizeof gg);
      gg.volumes = g.n * g.c;
      gg.in_size[0] = g.in_d, gg.in_size[1] = g.in_h, gg.in_size[2] = g.in_w;
      gg.out_size[0] = g.out_d, gg.out_size[1] = g.out_h, gg.out_size[2] = g.out_w;
      for (int i = 0; i < 3; i++) {
        gg.kernel[i] = g.kernel[i], gg.strides[i] = g.strides[i], gg.dilations[i] = g.dilations[i];
        gg.pad_begin[i] = g.pad_begin[i], gg.pad_end[i] = g.pad_end[i];
      }
      gg.is_max = node->params.pool.kind == IR_POOL_MAX;
      gg.count_include_pad = node->params.pool.count_include_pad;
      st->groups = clamp_groups((gg.volumes * g.out_d * g.out_h * g.out_w + RED_GROUP - 1) / RED_GROUP);
      return fill_geom(d, st, &gg, sizeof gg);
    }
  }
}

gfx_status vk_prepare_reduce(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes) {
  *state = NULL;
  if (node->op == GFX_OP_LAYER_NORMALIZATION && node->params.norm.residual)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s': LayerNormalization with a residual Add fused in",
                     label(node));
  if (gfx_shape_numel(&in[0]) >= ((int64_t)1 << 32) || gfx_shape_numel(&out[0]) >= ((int64_t)1 << 32))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s): tensors of 2^32 elements or more",
                     label(node), ir_op_name(node->op));
  red_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = vk_family_of(node->op);
  gfx_status s = prepare_geom(d, node, in, st);
  if (!s && st->copy) st->copy_bytes = (size_t)gfx_shape_numel(&in[0]);
  if (!s && st->splits > 1) {
    if (scratch_bytes) *scratch_bytes = partial_bytes(st);
    else st->splits = 1; /* no scratch to be had: whole rows */
  }
  if (s) {
    vk_release_reduce(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_reduce(vk_device* d, void* state) {
  red_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  free(st);
}

/* LayerNormalization's optional Mean and InvStdDev outputs: float32, or the input's type */
static gfx_status norm_stats_push(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, red_push* pc) {
  for (int o = 1; o < node->n_outputs; o++)
    if (out[o].dtype != out[1].dtype || (out[o].dtype != GFX_DTYPE_F32 && out[o].dtype != in[0].dtype))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): output %d is %s", label(node),
                       ir_op_name(node->op), o, gfx_dtype_name(out[o].dtype));
  if (node->n_outputs > 1) {
    pc->mean = (uint64_t)(uintptr_t)out[1].data;
    pc->stats_f32 = out[1].dtype == GFX_DTYPE_F32;
  }
  if (node->n_outputs > 2) pc->inv_std = (uint64_t)(uintptr_t)out[2].data;
  return NULL;
}

gfx_status vk_run_reduce(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state) {
  red_state* st = state;
  if (!st || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     label(node), ir_op_name(node->op));
  const int dtype = in[0].dtype;
  if (out[0].dtype != (is_arg(node->op) ? GFX_DTYPE_I64 : dtype))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): output is %s, input %s", label(node),
                     ir_op_name(node->op), gfx_dtype_name(out[0].dtype), gfx_dtype_name(dtype));
  if (st->copy) {
    const size_t bytes = st->copy_bytes * gfx_dtype_size(dtype);
    return bytes && out[0].data != in[0].data
               ? vk_copy(&d->dev, out[0].data, in[0].data, bytes, GFX_COPY_DEVICE_TO_DEVICE, ctx->stream)
               : NULL;
  }
  if (gfx_shape_numel(&out[0].shape) == 0) return NULL;
  vk_pipe* pipe = st->pipe;
  if (!pipe) {
    vk_shader_id shader;
    GFX_TRY(shader_for(d, node->op, dtype, &shader));
    GFX_TRY(vk_pipeline_get(d, shader, NULL, 0, &pipe));
    st->pipe = pipe; /* the same for every run: the element type is fixed per node */
  }
  const int norm = st->family == VK_FAM_NORM;
  red_push pc = {.x = (uint64_t)(uintptr_t)in[0].data,
                 .scale = norm ? (uint64_t)(uintptr_t)in[1].data : 0,
                 .bias = norm && node->n_inputs >= 3 ? (uint64_t)(uintptr_t)in[2].data : 0,
                 .y = (uint64_t)(uintptr_t)out[0].data,
                 .geom = st->geom.address};
  if (norm) GFX_TRY(norm_stats_push(node, in, out, &pc));
  if (st->splits > 1 && (!ctx->scratch || ctx->scratch_bytes < partial_bytes(st)))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): its split rows need %zu bytes of "
                     "scratch, the run gave %zu", label(node), ir_op_name(node->op), partial_bytes(st),
                     ctx->scratch ? ctx->scratch_bytes : 0);
  vk_stream* s = vk_stream_acquire(d, ctx->stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
    if (st->splits > 1) {
      /* a reduction: the slices into partials, then the partials into the outputs (a workgroup per
       * output); a normalization: sums, squared deviations, then the normalized slices (three
       * dispatches over every slice) */
      const uint32_t phases = st->family == VK_FAM_NORM ? 3 : 2;
      pc.partials = (uint64_t)(uintptr_t)ctx->scratch;
      pc.splits = st->splits;
      for (uint32_t phase = 1; phase <= phases; phase++) {
        pc.phase = phase;
        vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
        vkCmdDispatch(cb, st->groups, phase < phases || st->family == VK_FAM_NORM ? st->splits : 1, 1);
        vk_cmd_barrier(cb);
      }
    } else {
      vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
      vkCmdDispatch(cb, st->groups, 1, 1);
      vk_cmd_barrier(cb);
    }
  }
  return vk_stream_release(d, ctx->stream, s, status);
}

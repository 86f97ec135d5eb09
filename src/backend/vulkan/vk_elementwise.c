/* gfxep Vulkan backend — the element-wise families of ops.def: unary (activations, math, Identity)
 * and binary (arithmetic with numpy broadcasting, variadic Min/Max/Sum/Mean, PRelu, Pow,
 * comparisons).
 *
 * Types: float32 always; float16 where the device has shaderFloat16 and storageBuffer16BitAccess
 * (computed in float32, rounded once at the store); int32, and int64 with shaderInt64, for the ops
 * that take integers (Neg, Abs, Add, Sub, Mul, Min, Max, comparisons); comparisons store bool bytes
 * and need storageBuffer8BitAccess. Pow's exponent may be the base's type, float32, int32 or int64.
 * Identity copies bytes of any type (vkCmdCopyBuffer). bfloat16 is not handled yet.
 *
 * node_prepare computes the broadcasting geometry once per shape signature into a small
 * host-visible buffer the shader reads by address (none when every input has the output's shape);
 * the pipeline is looked up at the first run, when the element types are known, and kept in the
 * state. node_run checks every tensor against the address table, then records one dispatch and a
 * barrier. Inputs of the output's shape and type at 16-byte aligned addresses are walked in 16-byte
 * groups (group_elements), so that a float16 kernel moves 16 bytes per load, not 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/shaders/ew_ops.h"
#include "backend/vulkan/vk_internal.h"
#include "ir/shape.h"

/* The push constants of elementwise.comp, laid out as its std430 block. */
typedef struct ew_push {
  uint64_t out;
  uint64_t in[EW_MAX_IN];
  uint64_t geom;
  uint32_t count;
  float alpha, beta, gamma, lo, hi;
} ew_push;
_Static_assert(sizeof(ew_push) == 104 && sizeof(ew_push) <= VK_PUSH_BYTES, "ew_push layout");

/* The geometry block of elementwise.comp. */
typedef struct ew_geom {
  uint32_t rank;
  uint32_t dims[EW_MAX_RANK];
  uint32_t strides[EW_MAX_IN * EW_MAX_RANK];
} ew_geom;

typedef struct ew_state {
  vk_family family; /* first: node_release dispatches on it */
  gfx_op op;
  int n_in;
  int strided;
  int groups_off; /* GFXEP_VULKAN_EW_GROUPS=0 when prepared: one element per step */
  uint32_t count;
  vk_buffer geom;
  vk_pipe_slot slot; /* the pipeline for the type signature of the last run */
} ew_state;

static int ew_code(gfx_op op) {
  switch (op) {
    case GFX_OP_RELU: return EW_RELU;
    case GFX_OP_LEAKY_RELU: return EW_LEAKY_RELU;
    case GFX_OP_SIGMOID: return EW_SIGMOID;
    case GFX_OP_TANH: return EW_TANH;
    case GFX_OP_HARD_SIGMOID: return EW_HARD_SIGMOID;
    case GFX_OP_HARD_SWISH: return EW_HARD_SWISH;
    case GFX_OP_CLIP: return EW_CLIP;
    case GFX_OP_ELU: return EW_ELU;
    case GFX_OP_SELU: return EW_SELU;
    case GFX_OP_GELU: return EW_GELU;
    case GFX_OP_ERF: return EW_ERF;
    case GFX_OP_SOFTPLUS: return EW_SOFTPLUS;
    case GFX_OP_SQRT: return EW_SQRT;
    case GFX_OP_EXP: return EW_EXP;
    case GFX_OP_LOG: return EW_LOG;
    case GFX_OP_NEG: return EW_NEG;
    case GFX_OP_ABS: return EW_ABS;
    case GFX_OP_RECIPROCAL: return EW_RECIPROCAL;
    case GFX_OP_FLOOR: return EW_FLOOR;
    case GFX_OP_CEIL: return EW_CEIL;
    case GFX_OP_ROUND: return EW_ROUND;
    case GFX_OP_SIGN: return EW_SIGN;
    case GFX_OP_SIN: return EW_SIN;
    case GFX_OP_COS: return EW_COS;
    case GFX_OP_SOFTSIGN: return EW_SOFTSIGN;
    case GFX_OP_MISH: return EW_MISH;
    case GFX_OP_CELU: return EW_CELU;
    case GFX_OP_THRESHOLDED_RELU: return EW_THRESHOLDED_RELU;
    case GFX_OP_ADD: return EW_ADD;
    case GFX_OP_SUB: return EW_SUB;
    case GFX_OP_MUL: return EW_MUL;
    case GFX_OP_DIV: return EW_DIV;
    case GFX_OP_POW: return EW_POW;
    case GFX_OP_MIN: return EW_MIN;
    case GFX_OP_MAX: return EW_MAX;
    case GFX_OP_SUM: return EW_SUM;
    case GFX_OP_MEAN: return EW_MEAN;
    case GFX_OP_PRELU: return EW_PRELU;
    case GFX_OP_EQUAL: return EW_EQUAL;
    case GFX_OP_GREATER: return EW_GREATER;
    case GFX_OP_LESS: return EW_LESS;
    case GFX_OP_GREATER_OR_EQUAL: return EW_GREATER_OR_EQUAL;
    case GFX_OP_LESS_OR_EQUAL: return EW_LESS_OR_EQUAL;
    default: return 0;
  }
}

static int is_compare(gfx_op op) {
  return op == GFX_OP_EQUAL || op == GFX_OP_GREATER || op == GFX_OP_LESS || op == GFX_OP_GREATER_OR_EQUAL ||
         op == GFX_OP_LESS_OR_EQUAL;
}
static int is_variadic(gfx_op op) {
  return op == GFX_OP_MIN || op == GFX_OP_MAX || op == GFX_OP_SUM || op == GFX_OP_MEAN;
}
/* The ops computed exactly on integers (as the reference does). */
static int int_ok(gfx_op op) {
  return op == GFX_OP_NEG || op == GFX_OP_ABS || op == GFX_OP_ADD || op == GFX_OP_SUB || op == GFX_OP_MUL ||
         op == GFX_OP_DIV || op == GFX_OP_MIN || op == GFX_OP_MAX || is_compare(op);
}

/* ---- types: which shader variant, or why not ---- */

typedef struct ew_types {
  int t;        /* element type of input 0 (the computation's) */
  int exp_type; /* Pow: input 1's type */
  int out;      /* element type of the output */
} ew_types;

/* The shader for these types on this device, its exponent code; NOT_SUPPORTED naming the reason. */
static gfx_status pick_variant(vk_device* d, gfx_op op, const ew_types* ty, vk_shader_id* shader, int* exp_code) {
  const char* op_name = ir_op_name(op);
  const int cmp = is_compare(op);
  int base;
  switch (ty->t) {
    case GFX_DTYPE_F32: base = 0; break;
    case GFX_DTYPE_F16:
      if (!d->has_f16)
        return gfx_error(GFX_ERR_NOT_SUPPORTED,
                         "vulkan backend: float16 needs shaderFloat16 and storageBuffer16BitAccess, which %s lacks",
                         d->info.name);
      base = 1;
      break;
    case GFX_DTYPE_BF16: /* computed in float32, loaded and stored as 16-bit words */
      if (!d->has_16bit_storage)
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: bfloat16 needs storageBuffer16BitAccess, which %s lacks",
                         d->info.name);
      base = 4;
      break;
    case GFX_DTYPE_I32:
    case GFX_DTYPE_I64:
      if (!int_ok(op))
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not handled", op_name,
                         gfx_dtype_name(ty->t));
      if (ty->t == GFX_DTYPE_I64 && !d->has_int64)
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: int64 needs shaderInt64, which %s lacks", d->info.name);
      base = ty->t == GFX_DTYPE_I32 ? 2 : 3;
      break;
    default:
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not implemented yet", op_name,
                       gfx_dtype_name(ty->t));
  }
  if (cmp) {
    if (ty->out != GFX_DTYPE_BOOL)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s with a %s output; bool is expected", op_name,
                       gfx_dtype_name(ty->out));
    if (!d->has_8bit_storage)
      return gfx_error(GFX_ERR_NOT_SUPPORTED,
                       "vulkan backend: %s's bool output needs storageBuffer8BitAccess, which %s lacks", op_name,
                       d->info.name);
  } else if (ty->out != ty->t) {
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s with a %s input and a %s output", op_name,
                     gfx_dtype_name(ty->t), gfx_dtype_name(ty->out));
  }
  *exp_code = EW_EXP_SAME;
  if (op == GFX_OP_POW && ty->exp_type != ty->t) {
    switch (ty->exp_type) {
      case GFX_DTYPE_F32: *exp_code = EW_EXP_F32; break;
      case GFX_DTYPE_I32: *exp_code = EW_EXP_I32; break;
      case GFX_DTYPE_I64: *exp_code = EW_EXP_I64; break;
      default:
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: Pow with a %s exponent is not implemented yet",
                         gfx_dtype_name(ty->exp_type));
    }
  }
  static const vk_shader_id plain[5] = {VK_SHADER_EW_F32, VK_SHADER_EW_F16, VK_SHADER_EW_I32, VK_SHADER_EW_I64,
                                        VK_SHADER_EW_BF16};
  static const vk_shader_id boolean[5] = {VK_SHADER_EW_F32_BOOL, VK_SHADER_EW_F16_BOOL, VK_SHADER_EW_I32_BOOL,
                                          VK_SHADER_EW_I64_BOOL, VK_SHADER_EW_BF16_BOOL};
  *shader = cmp ? boolean[base] : plain[base];
  return NULL;
}

gfx_status vk_supports_elementwise(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  if (q->op == GFX_OP_IDENTITY) return NULL; /* bytes of any type */
  if (desc->n_inputs < 1 || desc->n_inputs > EW_MAX_IN)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s with %d inputs", ir_op_name(q->op), desc->n_inputs);
  ew_types ty = {.t = desc->input_dtypes[0],
                 .exp_type = desc->n_inputs > 1 ? desc->input_dtypes[1] : desc->input_dtypes[0],
                 .out = desc->output_dtypes[0]};
  vk_shader_id shader;
  int exp_code;
  return pick_variant(d, q->op, &ty, &shader, &exp_code);
}

/* ---- prepare ---- */

static gfx_status bad(const ir_node* node, const char* fmt, const char* detail) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %s%s", node->name ? node->name : "?",
                   ir_op_name(node->op), fmt, detail);
}

gfx_status vk_prepare_elementwise(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                  void** state) {
  *state = NULL;
  const gfx_op op = node->op;
  const int n = node->n_inputs;
  const int unary = vk_family_of(op) == VK_FAM_UNARY;
  /* Clip's bounds are parameters; only x is read */
  const int n_read = unary ? 1 : n;
  if (n < 1 || n > EW_MAX_IN || node->n_outputs != 1 || (!unary && !is_variadic(op) && n != 2))
    return bad(node, "unexpected input or output count", "");
  if (op != GFX_OP_IDENTITY && !ew_code(op)) return bad(node, "not an element-wise op", "");
  gfx_shape full = in[0];
  for (int i = 1; i < n_read; i++) {
    gfx_shape next;
    gfx_status s = ir_broadcast_shapes(&full, &in[i], &next);
    if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' input %d", node->name ? node->name : "?", i);
    full = next;
  }
  char a[96], b[96];
  if (!gfx_shape_equal(&full, &out[0]) || (op == GFX_OP_PRELU && !gfx_shape_equal(&in[0], &out[0]))) {
    snprintf(a, sizeof a, "%s, expected %s", gfx_shape_str(&out[0], b, sizeof b),
             gfx_shape_str(op == GFX_OP_PRELU ? &in[0] : &full, (char[96]){0}, 96));
    return bad(node, "output shape ", a);
  }
  int64_t count = gfx_shape_numel(&out[0]);
  if (count < 0 || count > INT32_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s': %lld elements; at most 2^31-1 are handled",
                     node->name ? node->name : "?", (long long)count);

  ew_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = vk_family_of(op);
  st->op = op;
  st->n_in = n_read;
  st->count = (uint32_t)count;
  const char* groups_env = getenv("GFXEP_VULKAN_EW_GROUPS"); /* read here, not per Run */
  st->groups_off = groups_env && groups_env[0] == '0';
  vk_pipe_slot_init(&st->slot);
  for (int i = 0; i < n_read; i++)
    if (!gfx_shape_equal(&in[i], &out[0])) st->strided = 1;
  if (st->strided && op != GFX_OP_IDENTITY) {
    ew_geom g;
    memset(&g, 0, sizeof g);
    const int rank = out[0].rank;
    g.rank = (uint32_t)rank;
    for (int dd = 0; dd < rank; dd++) g.dims[dd] = (uint32_t)out[0].dims[dd];
    for (int i = 0; i < n_read; i++) {
      int64_t stride = 1;
      for (int dd = rank - 1; dd >= 0; dd--) {
        int di = dd - (rank - in[i].rank);
        int64_t dim = di >= 0 ? in[i].dims[di] : 1;
        g.strides[i * EW_MAX_RANK + dd] = dim == 1 ? 0 : (uint32_t)stride;
        stride *= dim;
      }
    }
    gfx_status s = vk_buffer_create(d, sizeof g, VK_MEM_CONSTANTS, &st->geom);
    if (s) {
      vk_pipe_slot_destroy(&st->slot);
      free(st);
      return gfx_status_wrap(s, "vulkan backend: node '%s' geometry", node->name ? node->name : "?");
    }
    memcpy(st->geom.mapped, &g, sizeof g);
  }
  *state = st;
  return NULL;
}

void vk_release_elementwise(vk_device* d, void* state) {
  ew_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  vk_pipe_slot_destroy(&st->slot);
  free(st);
}

/* ---- run ---- */

/* The tensor lies wholly in this device's memory; an output also has the element count prepared. */
static gfx_status check_tensor(vk_device* d, const ir_node* node, int is_output, int i, const gfx_tensor* t,
                               uint32_t count) {
  const char* what = is_output ? "output" : "input";
  char label[64];
  snprintf(label, sizeof label, "node '%s' %s %d", node->name ? node->name : "?", what, i);
  int64_t numel = gfx_shape_numel(&t->shape);
  size_t size = gfx_dtype_size(t->dtype);
  if (numel < 0 || size == 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: %s: shape or element type %d not concrete", label,
                     t->dtype);
  if (is_output && (uint64_t)numel != count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: %s has %lld elements; node_prepare saw %u", label,
                     (long long)numel, count);
  if (numel == 0) return NULL;
  vk_location loc;
  return vk_resolve(d, t->data, (size_t)numel * size, 0, label, &loc);
}

/* The elements elementwise.comp takes per 16-byte group (its VEC), or 1: groups need every input of
 * the output's shape and element type (no broadcast, no Pow exponent of another type, no bool
 * output), a type of 2 or 4 bytes other than int16, every address 16-byte aligned and the count a
 * multiple of the group. The same addresses choose the same pipeline when a recording is replayed.
 * GFXEP_VULKAN_EW_GROUPS=0 keeps one element per step, to compare. */
static int group_elements(const ew_state* st, const ew_types* ty, const gfx_tensor* in, const gfx_tensor* out) {
  if (st->groups_off || st->strided || ty->out != ty->t || ty->exp_type != ty->t) return 1;
  int vec;
  switch (ty->t) {
    case GFX_DTYPE_F32:
    case GFX_DTYPE_I32: vec = 4; break;
    case GFX_DTYPE_F16:
    case GFX_DTYPE_BF16: vec = 8; break;
    default: return 1;
  }
  if (st->count % (uint32_t)vec) return 1;
  uintptr_t both = (uintptr_t)out[0].data;
  for (int i = 0; i < st->n_in; i++) both |= (uintptr_t)in[i].data;
  return both % 16 == 0 ? vec : 1;
}

gfx_status vk_run_elementwise(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                              gfx_tensor* out, void* state) {
  ew_state* st = state;
  if (!st)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without node_prepare's state",
                     node->name ? node->name : "?", ir_op_name(node->op));
  if (!in || !out) return bad(node, "no tensors given", "");
  for (int i = 0; i < st->n_in; i++) GFX_TRY(check_tensor(d, node, 0, i, &in[i], 0));
  GFX_TRY(check_tensor(d, node, 1, 0, &out[0], st->count));
  if (st->count == 0) return NULL;

  if (node->op == GFX_OP_IDENTITY) {
    if (out[0].dtype != in[0].dtype) return bad(node, "output type differs from the input's", "");
    if (out[0].data == in[0].data) return NULL;
    return vk_copy(&d->dev, out[0].data, in[0].data, (size_t)st->count * gfx_dtype_size(in[0].dtype),
                   GFX_COPY_DEVICE_TO_DEVICE, ctx->stream);
  }
  ew_types ty = {.t = in[0].dtype, .exp_type = st->n_in > 1 ? in[1].dtype : in[0].dtype, .out = out[0].dtype};
  for (int i = 1; i < st->n_in; i++)
    if (in[i].dtype != ty.t && node->op != GFX_OP_POW)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' input %d is %s but input 0 is %s",
                       node->name ? node->name : "?", i, gfx_dtype_name(in[i].dtype), gfx_dtype_name(ty.t));
  const int vec = group_elements(st, &ty, in, out);
  const int key = ty.t | ty.exp_type << 8 | ty.out << 16 | (vec > 1) << 24;
  vk_pipe* pipe = vk_pipe_slot_find(&st->slot, key);
  if (!pipe) {
    vk_shader_id shader;
    int exp_code;
    GFX_TRY(pick_variant(d, node->op, &ty, &shader, &exp_code));
    const ir_elementwise_params* p = &node->params.elementwise;
    int32_t spec[EW_SPEC_COUNT];
    spec[EW_SPEC_OP] = ew_code(node->op);
    spec[EW_SPEC_N_IN] = st->n_in;
    spec[EW_SPEC_EXP_TYPE] = exp_code;
    spec[EW_SPEC_STRIDED] = st->strided;
    spec[EW_SPEC_GELU_TANH] = node->op == GFX_OP_GELU && p->gelu_tanh;
    spec[EW_SPEC_VEC] = vec;
    GFX_TRY(vk_pipeline_get(d, shader, spec, EW_SPEC_COUNT, &pipe));
    vk_pipe_slot_keep(&st->slot, key, pipe);
  }

  const ir_elementwise_params* p = &node->params.elementwise;
  ew_push pc;
  memset(&pc, 0, sizeof pc);
  pc.out = (uint64_t)(uintptr_t)out[0].data;
  for (int i = 0; i < st->n_in; i++) pc.in[i] = (uint64_t)(uintptr_t)in[i].data;
  pc.geom = st->strided ? st->geom.address : 0;
  pc.count = st->count;
  pc.alpha = p->alpha;
  pc.beta = p->beta;
  pc.gamma = p->gamma;
  pc.lo = node->op == GFX_OP_CLIP && p->has_min ? p->min : -INFINITY;
  pc.hi = node->op == GFX_OP_CLIP && p->has_max ? p->max : INFINITY;

  const uint32_t per_invocation = (uint32_t)vec * EW_GROUP_SIZE;
  const uint32_t groups = vk_grid_groups(d, ((uint64_t)st->count + per_invocation - 1) / per_invocation);

  vk_stream* s = vk_stream_acquire(d, ctx->stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  if (!status) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe->pipeline);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(cb, groups, 1, 1);
    vk_cmd_barrier(cb);
  }
  return vk_stream_release(d, ctx->stream, s, status);
}

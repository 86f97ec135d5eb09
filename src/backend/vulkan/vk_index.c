/* gfxep Vulkan backend — the logic ops (shaders/logic_mod.comp), Mod (the same source per type),
 * CumSum (shaders/scan.comp), Range (shaders/range.comp), Trilu (shaders/trilu.comp) and the index
 * ops GatherElements, GatherND, ScatterElements and ScatterND (shaders/index.comp), as ref_index.c
 * computes them.
 *
 * node_prepare resolves the IR's geometry for the node's shapes (ir/ops_index.h) into a small
 * host-visible block the shader reads by address; node_run picks the pipeline by the element types
 * (kept in the state) and records one dispatch, after a copy of the data for a scatter. Bool and
 * other 1-byte elements need storageBuffer8BitAccess, 2-byte ones storageBuffer16BitAccess, float16
 * arithmetic shaderFloat16, int64 arithmetic shaderInt64; bfloat16 computes in float32 (Mod, the
 * scatter reductions). CumSum is declined: its sums accumulate in double on
 * the other backends, which a Vulkan device need not have. Tensors below 2^32 elements, dims below
 * 2^31.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

#define MAX_RANK 8
#define FLOAT_RANGE_LIMIT ((int64_t)1 << 24) /* float(i) is exact below this */
/* CPU implementations built on llvmpipe (lavapipe) end an invocation after 65535 loop turns in all,
 * leaving the rest of its work undone: there, the kernels that walk a whole line or tuple list in one
 * invocation (CumSum, ScatterElements, ScatterND with a reduction) are declined unless the walk is
 * known to be shorter than this (turns of the walk times the index math inside it). */
#define SOFTWARE_WALK_LIMIT 60000

/* logic_mod.comp's Geom block and push constants */
typedef struct bcast_geom {
  uint32_t rank;
  uint32_t dims[MAX_RANK];
  uint32_t strides[2 * MAX_RANK];
} bcast_geom;
typedef struct logic_push {
  uint64_t a, b, y, geom;
  uint32_t count;
} logic_push;

typedef struct trilu_push {
  uint64_t x, y;
  uint32_t count, rows, cols, upper;
  int32_t k;
} trilu_push;

typedef struct scan_push {
  uint64_t x, y;
  uint32_t lines, len, inner, exclusive, reverse;
} scan_push;

typedef struct range_push {
  uint64_t y;
  uint64_t start, delta; /* the bits of a float (low word), an int32 or an int64 */
  uint32_t count;
} range_push;

/* index.comp's Geom block and push constants */
typedef struct index_geom_gpu {
  uint32_t count;
  uint32_t rank, axis, axis_dim;
  uint32_t idx_dims[MAX_RANK], idx_strides[MAX_RANK], data_strides[MAX_RANK];
  uint32_t n, slice, data_batch_stride, m;
  uint32_t nd_dims[MAX_RANK], nd_strides[MAX_RANK];
} index_geom_gpu;
typedef struct index_push {
  uint64_t data, idx, upd, out, geom;
} index_push;
_Static_assert(sizeof(logic_push) <= VK_PUSH_BYTES && sizeof(index_push) <= VK_PUSH_BYTES, "push layouts");

/* index.comp's kernels */
enum { KIND_GATHER_ELEMENTS = 0, KIND_GATHER_ND, KIND_SCATTER_ELEMENTS, KIND_SCATTER_ND, KIND_SCATTER_ND_REDUCE };

typedef struct index_state {
  vk_family family; /* first: node_release dispatches on it */
  gfx_op op;
  uint32_t count;   /* output elements */
  uint32_t work;    /* the dispatch's work items (index.comp: lines, tuples or elements) */
  int kind;         /* index.comp's kernel */
  uint32_t rows, cols; /* Trilu */
  uint32_t lines, len, inner; /* CumSum */
  vk_buffer geom;
  vk_pipe_slot slot; /* the pipeline for the type signature of the last run */
} index_state;

static const char* label(const ir_node* node) { return node->name ? node->name : "?"; }

static int is_index_op(gfx_op op) {
  return op == GFX_OP_GATHER_ELEMENTS || op == GFX_OP_GATHER_ND || op == GFX_OP_SCATTER_ELEMENTS ||
         op == GFX_OP_SCATTER_ND;
}

/* ---- types: which shader, or why not ---- */

static gfx_status no_feature(vk_device* d, gfx_op op, const char* what, const char* feature) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s %s needs %s, which %s lacks", ir_op_name(op), what,
                   feature, d->info.name);
}

static gfx_status not_handled(gfx_op op, int dtype) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s of %s is not implemented", ir_op_name(op),
                   gfx_dtype_name(dtype));
}

/* A shader per element size, elements moved as bits: first + 0..3 for 1, 2, 4 and 8 bytes. */
static gfx_status bits_shader(vk_device* d, gfx_op op, int dtype, vk_shader_id first, vk_shader_id* out) {
  switch (gfx_dtype_size(dtype)) {
    case 1:
      if (!d->has_8bit_storage) return no_feature(d, op, "of 1-byte elements", "storageBuffer8BitAccess");
      *out = first;
      return NULL;
    case 2:
      if (!d->has_16bit_storage) return no_feature(d, op, "of 2-byte elements", "storageBuffer16BitAccess");
      *out = (vk_shader_id)(first + 1);
      return NULL;
    case 4: *out = (vk_shader_id)(first + 2); return NULL;
    case 8: *out = (vk_shader_id)(first + 3); return NULL;
    default: return not_handled(op, dtype);
  }
}

/* A shader per computed type: first + 0..3 for float32, float16, int32 and int64, bf16 for bfloat16
 * (computed in float32, moved as 16-bit words). */
static gfx_status math_shader(vk_device* d, gfx_op op, int dtype, vk_shader_id first, vk_shader_id bf16,
                              vk_shader_id* out) {
  switch (dtype) {
    case GFX_DTYPE_F32: *out = first; return NULL;
    case GFX_DTYPE_BF16:
      if (!d->has_16bit_storage) return no_feature(d, op, "of bfloat16", "storageBuffer16BitAccess");
      *out = bf16;
      return NULL;
    case GFX_DTYPE_F16:
      if (!d->has_f16) return no_feature(d, op, "of float16", "shaderFloat16 and storageBuffer16BitAccess");
      *out = (vk_shader_id)(first + 1);
      return NULL;
    case GFX_DTYPE_I32: *out = (vk_shader_id)(first + 2); return NULL;
    case GFX_DTYPE_I64:
      if (!d->has_int64) return no_feature(d, op, "of int64", "shaderInt64");
      *out = (vk_shader_id)(first + 3);
      return NULL;
    default: return not_handled(op, dtype);
  }
}

static gfx_status range_shader(vk_device* d, int dtype, vk_shader_id* out) {
  switch (dtype) {
    case GFX_DTYPE_F32: *out = VK_SHADER_RANGE_F32; return NULL;
    case GFX_DTYPE_I32: *out = VK_SHADER_RANGE_I32; return NULL;
    case GFX_DTYPE_I64:
      if (!d->has_int64) return no_feature(d, GFX_OP_RANGE, "of int64", "shaderInt64");
      *out = VK_SHADER_RANGE_I64;
      return NULL;
    default: return not_handled(GFX_OP_RANGE, dtype);
  }
}

/* The shader for the op and its data type (a scatter's reduction computes; everything else of the
 * index ops moves bits). */
static gfx_status shader_for(vk_device* d, gfx_op op, int dtype, int reduction, vk_shader_id* out) {
  switch (op) {
    case GFX_OP_NOT:
    case GFX_OP_AND:
    case GFX_OP_OR:
    case GFX_OP_XOR:
      if (!d->has_8bit_storage) return no_feature(d, op, "(bool bytes)", "storageBuffer8BitAccess");
      *out = VK_SHADER_LOGIC;
      return NULL;
    case GFX_OP_MOD: return math_shader(d, op, dtype, VK_SHADER_MOD_F32, VK_SHADER_MOD_BF16, out);
    case GFX_OP_CUM_SUM: return math_shader(d, op, dtype, VK_SHADER_SCAN_F32, VK_SHADER_SCAN_BF16, out);
    case GFX_OP_RANGE: return range_shader(d, dtype, out);
    case GFX_OP_TRILU: return bits_shader(d, op, dtype, VK_SHADER_TRILU_1, out);
    default: break;
  }
  if (!is_index_op(op))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s has no Vulkan kernel", ir_op_name(op));
  if (reduction != IR_SCATTER_NONE) return math_shader(d, op, dtype, VK_SHADER_INDEX_F32, VK_SHADER_INDEX_BF16, out);
  return bits_shader(d, op, dtype, VK_SHADER_INDEX_1, out);
}

/* The loop turns one invocation of the node's kernel makes walking its line or tuples, INT64_MAX
 * when the shapes do not tell; 0 for the kernels that walk nothing. */
static int64_t walk_turns(const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  const int reduce = q->params && q->params->index.reduction != IR_SCATTER_NONE;
  const gfx_shape* s = q->op == GFX_OP_CUM_SUM ? &desc->input_shapes[0] : &desc->input_shapes[1];
  if (q->op != GFX_OP_CUM_SUM && q->op != GFX_OP_SCATTER_ELEMENTS && !(q->op == GFX_OP_SCATTER_ND && reduce)) return 0;
  if (s->rank < 1 || !q->params) return INT64_MAX;
  const int64_t axis = q->params->index.axis;
  if (q->op != GFX_OP_SCATTER_ND) { /* along the axis: CumSum's line, or ScatterElements' (rank turns each) */
    if (axis < -s->rank || axis >= s->rank) return INT64_MAX;
    const int64_t len = s->dims[axis < 0 ? axis + s->rank : axis];
    return len < 0 ? INT64_MAX : len * (q->op == GFX_OP_CUM_SUM ? 1 : 1 + s->rank);
  }
  int64_t n = 1; /* ScatterND: every tuple, m turns each */
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return INT64_MAX;
  for (int i = 0; i < s->rank - 1; i++) n *= s->dims[i];
  return n * (1 + s->dims[s->rank - 1]);
}

gfx_status vk_supports_index(vk_device* d, const gfx_node_query* q) {
  const ir_node_desc* desc = q->desc;
  if (!desc) return NULL; /* no types to judge: the run checks them */
  const int reduction = q->params ? q->params->index.reduction : IR_SCATTER_NONE;
  if (q->op == GFX_OP_RANGE && desc->output_dtypes[0] == GFX_DTYPE_F32 && q->params &&
      q->params->index.count > FLOAT_RANGE_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a float32 Range of %lld elements (above 2^24) is not "
                     "implemented", (long long)q->params->index.count);
  if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU && walk_turns(q) > SOFTWARE_WALK_LIMIT)
    return gfx_error(GFX_ERR_NOT_SUPPORTED,
                     "vulkan backend: %s walks more than %d elements in one invocation (or an unknown number), which "
                     "%s (a CPU implementation) cuts short", ir_op_name(q->op), SOFTWARE_WALK_LIMIT, d->info.name);
  vk_shader_id shader;
  const int dtype = q->op == GFX_OP_RANGE ? desc->output_dtypes[0] : desc->input_dtypes[0];
  return shader_for(d, q->op, dtype, reduction, &shader);
}

/* ---- prepare, release ---- */

static gfx_status fill_geom(vk_device* d, index_state* st, const void* g, size_t bytes) {
  GFX_TRY(vk_buffer_create(d, bytes, VK_MEM_CONSTANTS, &st->geom));
  memcpy(st->geom.mapped, g, bytes);
  return NULL;
}

static gfx_status check_out(const gfx_shape* out, const gfx_shape* want) {
  if (gfx_shape_equal(out, want)) return NULL;
  char a[96], b[96];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s", gfx_shape_str(out, a, sizeof a),
                   gfx_shape_str(want, b, sizeof b));
}

/* Not (one operand) or a broadcasting pair: the strides only when some operand is broadcast. */
static gfx_status prepare_bcast(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                index_state* st) {
  const int n = node->op == GFX_OP_NOT ? 1 : 2;
  gfx_shape full = in[0];
  if (n == 2) GFX_TRY(ir_broadcast_shapes(&in[0], &in[1], &full));
  GFX_TRY(check_out(&out[0], &full));
  if (n == 1 || (gfx_shape_equal(&in[0], &out[0]) && gfx_shape_equal(&in[1], &out[0]))) return NULL;
  const int rank = out[0].rank;
  bcast_geom g;
  memset(&g, 0, sizeof g);
  g.rank = (uint32_t)rank;
  for (int k = 0; k < rank; k++) g.dims[k] = (uint32_t)out[0].dims[k];
  for (int i = 0; i < 2; i++) {
    int64_t stride = 1;
    for (int k = rank - 1; k >= 0; k--) {
      const int ki = k - (rank - in[i].rank);
      const int64_t dim = ki >= 0 ? in[i].dims[ki] : 1;
      g.strides[i * MAX_RANK + k] = dim == 1 ? 0 : (uint32_t)stride;
      stride *= dim;
    }
  }
  return fill_geom(d, st, &g, sizeof g);
}

static gfx_status check_dims_i31(const gfx_shape* s) {
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] >= ((int64_t)1 << 31))
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "dim %d is %lld; dims below 2^31 are handled", i, (long long)s->dims[i]);
  return NULL;
}

static gfx_status prepare_elements(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                   index_state* st) {
  const int scatter = node->op == GFX_OP_SCATTER_ELEMENTS;
  ir_elements_geom g;
  GFX_TRY(ir_elements_geometry(&in[0], &in[1], scatter ? &in[2] : NULL, node->params.index.axis, &g));
  GFX_TRY(check_out(&out[0], scatter ? &in[0] : &in[1]));
  index_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  gg.rank = (uint32_t)g.rank, gg.axis = (uint32_t)g.axis, gg.axis_dim = (uint32_t)g.axis_dim;
  for (int i = 0; i < g.rank; i++) {
    gg.idx_dims[i] = (uint32_t)g.idx_dims[i];
    gg.idx_strides[i] = (uint32_t)g.idx_strides[i];
    gg.data_strides[i] = (uint32_t)g.data_strides[i];
  }
  st->kind = scatter ? KIND_SCATTER_ELEMENTS : KIND_GATHER_ELEMENTS;
  /* a scatter walks lines along the axis */
  gg.count = (uint32_t)(g.count == 0 ? 0 : scatter ? g.count / g.idx_dims[g.axis] : g.count);
  st->work = gg.count;
  return fill_geom(d, st, &gg, sizeof gg);
}

static gfx_status prepare_nd(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             index_state* st) {
  const int scatter = node->op == GFX_OP_SCATTER_ND;
  ir_nd_geom g;
  gfx_shape gathered;
  GFX_TRY(ir_nd_geometry(&in[0], &in[1], scatter ? &in[2] : NULL, scatter ? 0 : node->params.index.batch_dims, &g,
                         &gathered));
  GFX_TRY(check_out(&out[0], scatter ? &in[0] : &gathered));
  index_geom_gpu gg;
  memset(&gg, 0, sizeof gg);
  gg.n = (uint32_t)g.n, gg.slice = (uint32_t)g.slice, gg.m = (uint32_t)g.m;
  gg.data_batch_stride = (uint32_t)g.data_batch_stride;
  for (int k = 0; k < g.m; k++) gg.nd_dims[k] = (uint32_t)g.dims[k], gg.nd_strides[k] = (uint32_t)g.strides[k];
  const int64_t elements = g.batch * g.n * g.slice;
  if (!scatter) {
    st->kind = KIND_GATHER_ND;
    gg.count = (uint32_t)elements;
  } else if (node->params.index.reduction == IR_SCATTER_NONE) {
    st->kind = KIND_SCATTER_ND;
    gg.count = (uint32_t)elements;
  } else {
    st->kind = KIND_SCATTER_ND_REDUCE;
    gg.count = elements == 0 ? 0 : (uint32_t)(g.batch * g.slice);
  }
  st->work = gg.count;
  return fill_geom(d, st, &gg, sizeof gg);
}

static gfx_status prepare_node(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               index_state* st) {
  switch (node->op) {
    case GFX_OP_NOT:
    case GFX_OP_AND:
    case GFX_OP_OR:
    case GFX_OP_XOR:
    case GFX_OP_MOD: return prepare_bcast(d, node, in, out, st);
    case GFX_OP_RANGE: {
      const gfx_shape want = {.rank = 1, .dims = {node->params.index.count}};
      return check_out(&out[0], &want);
    }
    case GFX_OP_CUM_SUM: {
      ir_axis_geom g;
      GFX_TRY(ir_axis_geometry(&in[0], node->params.index.axis, &g));
      GFX_TRY(check_out(&out[0], &in[0]));
      st->lines = (uint32_t)(g.outer * g.inner), st->len = (uint32_t)g.len, st->inner = (uint32_t)g.inner;
      return NULL;
    }
    case GFX_OP_TRILU: {
      ir_trilu_geom g;
      GFX_TRY(ir_trilu_geometry(&in[0], &g));
      GFX_TRY(check_out(&out[0], &in[0]));
      st->rows = (uint32_t)g.rows, st->cols = (uint32_t)g.cols;
      return NULL;
    }
    case GFX_OP_GATHER_ELEMENTS:
    case GFX_OP_SCATTER_ELEMENTS: return prepare_elements(d, node, in, out, st);
    case GFX_OP_GATHER_ND:
    case GFX_OP_SCATTER_ND: return prepare_nd(d, node, in, out, st);
    default: return gfx_error(GFX_ERR_NOT_SUPPORTED, "not an op of vk_index.c");
  }
}

gfx_status vk_prepare_index(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            void** state) {
  *state = NULL;
  if (node->n_outputs != 1 || node->n_inputs < (node->op == GFX_OP_RANGE ? 0 : 1))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %d inputs and %d outputs", label(node),
                     ir_op_name(node->op), node->n_inputs, node->n_outputs);
  /* Range's inputs and Trilu's k were read at parse time; every other input is a tensor here */
  const int n_checked = node->op == GFX_OP_RANGE                                 ? 0
                        : node->op == GFX_OP_TRILU || node->op == GFX_OP_CUM_SUM ? 1
                                                                                : node->n_inputs;
  GFX_TRY(vk_check_elements_u32(node, in, n_checked));
  GFX_TRY(vk_check_elements_u32(node, out, 1));
  for (int i = 0; i < n_checked; i++) {
    gfx_status s = check_dims_i31(&in[i]);
    if (s) return gfx_status_wrap(s, "vulkan backend: node '%s' (%s): input %d", label(node), ir_op_name(node->op), i);
  }
  index_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_INDEX;
  st->op = node->op;
  st->count = (uint32_t)gfx_shape_numel(&out[0]);
  vk_pipe_slot_init(&st->slot);
  gfx_status s = prepare_node(d, node, in, out, st);
  if (s) {
    vk_release_index(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_index(vk_device* d, void* state) {
  index_state* st = state;
  if (!st) return;
  if (st->geom.buffer) vk_buffer_destroy(d, &st->geom);
  vk_pipe_slot_destroy(&st->slot);
  free(st);
}

/* ---- run ---- */

static gfx_status bad_io(const ir_node* node, const char* what) {
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): %s", label(node), ir_op_name(node->op),
                   what);
}

static uint64_t addr(const void* p) { return (uint64_t)(uintptr_t)p; }

static gfx_status run_bcast(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, index_state* st) {
  const int t = in[0].dtype, binary = node->op != GFX_OP_NOT;
  const int want = node->op == GFX_OP_MOD ? t : GFX_DTYPE_BOOL;
  if (t != want || out[0].dtype != want || (binary && in[1].dtype != want))
    return bad_io(node, "the operands and the output differ in element type");
  if (node->op == GFX_OP_MOD && !node->params.index.fmod && t != GFX_DTYPE_I32 && t != GFX_DTYPE_I64)
    return bad_io(node, "Mod with fmod=0 of float operands");
  vk_shader_id shader;
  GFX_TRY(shader_for(d, node->op, t, 0, &shader));
  const int32_t spec[1] = {node->op == GFX_OP_MOD ? node->params.index.fmod
                           : node->op == GFX_OP_AND ? 1
                           : node->op == GFX_OP_OR  ? 2
                           : node->op == GFX_OP_XOR ? 3
                                                    : 0};
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, spec, 1, &pipe));
  logic_push pc = {.a = addr(in[0].data),
                   .b = binary ? addr(in[1].data) : 0,
                   .y = addr(out[0].data),
                   .geom = st->geom.buffer ? st->geom.address : 0,
                   .count = st->count};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

static gfx_status run_range(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, gfx_tensor* out,
                            index_state* st) {
  const ir_index_params* p = &node->params.index;
  if (out[0].dtype != p->dtype) return bad_io(node, "the output's element type differs from the parsed one");
  vk_shader_id shader;
  GFX_TRY(range_shader(d, p->dtype, &shader));
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, NULL, 0, &pipe));
  range_push pc = {.y = addr(out[0].data), .count = st->count};
  if (p->dtype == GFX_DTYPE_F32) {
    const float start = (float)p->start, delta = (float)p->delta;
    uint32_t bits;
    memcpy(&bits, &start, 4);
    pc.start = bits;
    memcpy(&bits, &delta, 4);
    pc.delta = bits;
  } else {
    pc.start = (uint64_t)p->start_i, pc.delta = (uint64_t)p->delta_i;
  }
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

static gfx_status run_cumsum(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                             gfx_tensor* out, index_state* st) {
  if (out[0].dtype != in[0].dtype) return bad_io(node, "the output's element type differs from the input's");
  vk_shader_id shader;
  GFX_TRY(shader_for(d, node->op, in[0].dtype, 0, &shader));
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, NULL, 0, &pipe));
  scan_push pc = {.x = addr(in[0].data),
                  .y = addr(out[0].data),
                  .lines = st->lines,
                  .len = st->len,
                  .inner = st->inner,
                  .exclusive = (uint32_t)node->params.index.exclusive,
                  .reverse = (uint32_t)node->params.index.reverse};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->lines);
}

static gfx_status run_trilu(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, index_state* st) {
  if (out[0].dtype != in[0].dtype) return bad_io(node, "the output's element type differs from the input's");
  vk_shader_id shader;
  GFX_TRY(shader_for(d, node->op, in[0].dtype, 0, &shader));
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader, shader, NULL, 0, &pipe));
  /* |col - row| < 2^31 (dims below 2^31), so a k clamped to +-(2^31 - 1) compares the same */
  const int64_t lim = INT32_MAX, k = node->params.index.k;
  trilu_push pc = {.x = addr(in[0].data),
                   .y = addr(out[0].data),
                   .count = st->count,
                   .rows = st->rows,
                   .cols = st->cols,
                   .upper = (uint32_t)node->params.index.upper,
                   .k = (int32_t)(k < -lim ? -lim : k > lim ? lim : k)};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->count);
}

static gfx_status run_index(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, index_state* st) {
  const int t = in[0].dtype, scatter = node->op == GFX_OP_SCATTER_ELEMENTS || node->op == GFX_OP_SCATTER_ND;
  const int reduction = scatter ? node->params.index.reduction : IR_SCATTER_NONE;
  if (out[0].dtype != t || (scatter && in[2].dtype != t))
    return bad_io(node, "the data, updates and output differ in element type");
  if (in[1].dtype != GFX_DTYPE_I32 && in[1].dtype != GFX_DTYPE_I64) return bad_io(node, "the indices are no integers");
  vk_shader_id shader;
  GFX_TRY(shader_for(d, node->op, t, reduction, &shader));
  const int32_t spec[3] = {st->kind, reduction, in[1].dtype == GFX_DTYPE_I64};
  vk_pipe* pipe;
  GFX_TRY(vk_pipe_slot_get(d, &st->slot, (int)shader | spec[2] << 16, shader, spec, 3, &pipe));
  if (scatter && out[0].data != in[0].data)
    GFX_TRY(vk_copy(&d->dev, out[0].data, in[0].data, (size_t)st->count * gfx_dtype_size(t), GFX_COPY_DEVICE_TO_DEVICE,
                    ctx->stream));
  index_push pc = {.data = addr(in[0].data),
                   .idx = addr(in[1].data),
                   .upd = scatter ? addr(in[2].data) : 0,
                   .out = addr(out[0].data),
                   .geom = st->geom.address};
  return vk_dispatch_elements(d, ctx->stream, pipe, &pc, sizeof pc, st->work);
}

gfx_status vk_run_index(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                        gfx_tensor* out, void* state) {
  index_state* st = state;
  if (!st || !out || (!in && node->op != GFX_OP_RANGE))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     label(node), ir_op_name(node->op));
  if (gfx_shape_numel(&out[0].shape) != (int64_t)st->count)
    return bad_io(node, "the output's element count differs from what node_prepare saw");
  if (st->count == 0) return NULL;
  switch (node->op) {
    case GFX_OP_NOT:
    case GFX_OP_AND:
    case GFX_OP_OR:
    case GFX_OP_XOR:
    case GFX_OP_MOD: return run_bcast(d, ctx, node, in, out, st);
    case GFX_OP_CUM_SUM: return run_cumsum(d, ctx, node, in, out, st);
    case GFX_OP_RANGE: return run_range(d, ctx, node, out, st);
    case GFX_OP_TRILU: return run_trilu(d, ctx, node, in, out, st);
    default: break;
  }
  if (is_index_op(node->op)) return run_index(d, ctx, node, in, out, st);
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s) has no Vulkan kernel", label(node),
                   ir_op_name(node->op));
}

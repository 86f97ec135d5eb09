/* gfxep Vulkan backend — the layout family of ops.def: data movement as the IR's strided copy plans
 * (ir/layout.h), run by shaders/copy_plan.comp; Reshape-like ops as a buffer copy; Shape's values and
 * ConstantOfShape's value written by a buffer fill (zeros) or a copy plan that reads nothing.
 *
 * node_prepare computes every plan of the node for its shapes once (ir_layout_plan) into one small
 * host-visible buffer the shader reads by address; node_run records one dispatch per plan. A plan that
 * transposes (the destination's innermost dim strided in the source, another dim contiguous there:
 * NCHW <-> NHWC) runs shaders/transpose.comp instead, 32 x 32 tiles through shared memory
 * (GFXEP_VULKAN_NO_TILED_TRANSPOSE=1 keeps copy_plan.comp for it, to compare).
 * Elements move as bits of their size (1, 2, 4 or 8 bytes), so every element type is exact; the
 * 64-bit index arithmetic needs shaderInt64, and 1- and 2-byte elements 8- and 16-bit storage.
 * Gather runs shaders/gather.comp over the IR's [outer, n_indices, inner] view (ir_gather_geometry),
 * elements moved as bits of their size, int32 or int64 indices, negative ones counted from the end;
 * 32-bit indices (tensors of 2^32 elements or more are refused at node_prepare). An index outside
 * [-dim, dim): the reference fails the run, but a shader cannot report it, so the two cases differ:
 *  - constant indices are checked on the host when the node is parsed (ir_parse_gather): such a node
 *    is declined and stays with ONNX Runtime, which reports the error;
 *  - indices computed at run time: the out-of-range entries of the output are written as zeros
 *    (nothing is read or written out of bounds), as the CUDA backend does; no error is raised.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_fastdiv.h"
#include "backend/vulkan/vk_internal.h"
#include "ir/layout.h"

#define PLAN_GROUP_SIZE 256

/* copy_plan.comp's Plan block (std430). */
typedef struct gpu_plan {
  int32_t rank, mode;
  int64_t count, dst_offset, src_offset;
  int64_t dims[GFX_MAX_RANK], dst_strides[GFX_MAX_RANK], src_extent[GFX_MAX_RANK], src_start[GFX_MAX_RANK],
      src_step[GFX_MAX_RANK], src_strides[GFX_MAX_RANK];
  uint64_t value;
  uint32_t div_mul[GFX_MAX_RANK], div_shift[GFX_MAX_RANK]; /* each dim's divisor (vk_fastdiv.h) */
} gpu_plan;
_Static_assert(sizeof(gpu_plan) == 32 + 6 * 8 * GFX_MAX_RANK + 8 + 2 * 4 * GFX_MAX_RANK, "gpu_plan layout");

typedef struct plan_push {
  uint64_t src, dst, plan;
} plan_push;

/* transpose.comp's push constants */
typedef struct transpose_push {
  uint64_t src, dst, plan;
  uint32_t j_dim, others;
} transpose_push;

#define TRANSPOSE_TILE 32

typedef struct layout_state {
  vk_family family; /* first: node_release dispatches on it */
  ir_layout_kind kind;
  int n_plans;
  /* Each plan twice (ir_copy_plan_simplify): [0] in the node's elements, [1] in groups of a contiguous
   * last dim, wide[k] bytes each, run where both tensors' addresses are multiples of that */
  int64_t counts[IR_MAX_IO][2]; /* elements each plan writes */
  vk_pipe* pipes[IR_MAX_IO][2]; /* copy_plan.comp of each plan's element size */
  uint32_t wide[IR_MAX_IO];
  /* plans run in rows (copy_plan.comp's ROWS): the workgroups they need, else 0 */
  int64_t row_items[IR_MAX_IO][2];
  /* plans that transpose: transpose.comp on their element-size plan ([0]), groups per dispatch */
  vk_pipe* transpose_pipes[IR_MAX_IO]; /* NULL: copy_plan.comp */
  uint32_t transpose_j[IR_MAX_IO], transpose_others[IR_MAX_IO], transpose_groups[IR_MAX_IO][3];
  vk_buffer plans;           /* 2 x n_plans gpu_plan blocks */
  vk_pipe* pipe;             /* copy_plan.comp of the element size (ConstantOfShape's fill) */
  vk_buffer shape_values;    /* Shape: the int64 dims, host-visible, copied by address at run time */
  int n_shape_values;
  /* Gather */
  vk_pipe* pipe_i64;         /* gather.comp for int64 indices (pipe: int32) */
  uint32_t gather[4];        /* count, n_indices, inner, axis_dim */
} layout_state;

/* gather.comp's push constants */
typedef struct gather_push {
  uint64_t data, indices, out;
  uint32_t count, n_indices, inner, axis_dim;
} gather_push;

static const char* node_label(const ir_node* node) { return node->name ? node->name : "?"; }

static gfx_status declined(const char* op, const char* why, const char* device) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: %s %s%s%s", op, why, device ? ", which " : "",
                   device ? device : "");
}

/* The copy-plan shader for an element size on this device, or why not. */
static gfx_status plan_shader(vk_device* d, const char* op, size_t elem_size, vk_shader_id* out) {
  if (!d->has_int64) return declined(op, "needs shaderInt64 for its 64-bit indices; lacking on", d->info.name);
  switch (elem_size) {
    case 1:
      if (!d->has_8bit_storage) return declined(op, "of 1-byte elements needs storageBuffer8BitAccess; lacking on", d->info.name);
      *out = VK_SHADER_PLAN_1;
      return NULL;
    case 2:
      if (!d->has_16bit_storage) return declined(op, "of 2-byte elements needs storageBuffer16BitAccess; lacking on", d->info.name);
      *out = VK_SHADER_PLAN_2;
      return NULL;
    case 4: *out = VK_SHADER_PLAN_4; return NULL;
    case 8: *out = VK_SHADER_PLAN_8; return NULL;
    case 16: *out = VK_SHADER_PLAN_16; return NULL;
    default: return declined(op, "of an element type gfxep does not move", NULL);
  }
}

/* The Gather shader for an element size on this device, or why not. */
static gfx_status gather_shader(vk_device* d, size_t elem_size, vk_shader_id* out) {
  switch (elem_size) {
    case 1:
      if (!d->has_8bit_storage) return declined("Gather", "of 1-byte elements needs storageBuffer8BitAccess; lacking on", d->info.name);
      *out = VK_SHADER_GATHER_1;
      return NULL;
    case 2:
      if (!d->has_16bit_storage) return declined("Gather", "of 2-byte elements needs storageBuffer16BitAccess; lacking on", d->info.name);
      *out = VK_SHADER_GATHER_2;
      return NULL;
    case 4: *out = VK_SHADER_GATHER_4; return NULL;
    case 8: *out = VK_SHADER_GATHER_8; return NULL;
    default: return declined("Gather", "of an element type gfxep does not move", NULL);
  }
}

/* Whether ConstantOfShape fills with something other than zeros. */
static int has_value(const ir_params* p) {
  static const unsigned char zero[8] = {0};
  return memcmp(p->layout.value, zero, sizeof zero) != 0;
}

/* ConstantOfShape's value written over `count` elements: one copy plan whose source is empty
 * (extent 0), so every coordinate resolves to the plan's constant and nothing is read. */
static gpu_plan fill_plan(const ir_node* node, int64_t count) {
  gpu_plan g;
  memset(&g, 0, sizeof g);
  g.rank = 1;
  g.mode = (int32_t)IR_PADMODE_CONSTANT;
  g.count = count;
  g.dims[0] = count;
  vk_fastdiv_magic((uint32_t)count, &g.div_mul[0], &g.div_shift[0]);
  g.dst_strides[0] = 1;
  memcpy(&g.value, node->params.layout.value, sizeof g.value);
  return g;
}

/* copy_plan.comp's 32-bit coordinates: every source coordinate a plan computes fits an int. */
static gfx_status check_plan_coords(const ir_copy_plan* plan) {
  for (int i = 0; i < plan->rank; i++)
    if (plan->src_extent[i] > INT32_MAX ||
        llabs(plan->src_start[i]) + (plan->dims[i] > 0 ? plan->dims[i] - 1 : 0) * llabs(plan->src_step[i]) > INT32_MAX)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: a copy plan whose source coordinates pass 2^31 (dim %d)", i);
  return NULL;
}

static gpu_plan gpu_plan_of(const ir_copy_plan* plan) {
  gpu_plan g;
  memset(&g, 0, sizeof g);
  g.rank = plan->rank;
  g.mode = (int32_t)plan->mode;
  g.count = plan->count;
  g.dst_offset = plan->dst_offset;
  g.src_offset = plan->src_offset;
  for (int i = 0; i < plan->rank; i++) {
    g.dims[i] = plan->dims[i];
    g.dst_strides[i] = plan->dst_strides[i];
    g.src_extent[i] = plan->src_extent[i];
    g.src_start[i] = plan->src_start[i];
    g.src_step[i] = plan->src_step[i];
    g.src_strides[i] = plan->src_strides[i];
    /* the dims of tensors below 2^32 elements (larger ones are refused at node_prepare) */
    vk_fastdiv_magic((uint32_t)plan->dims[i], &g.div_mul[i], &g.div_shift[i]);
  }
  memcpy(&g.value, plan->value, sizeof g.value);
  return g;
}

/* copy_plan.comp in rows where a plan's rows have more than 256 elements (GFXEP_VULKAN_PLAN_ROWS=0
 * keeps one element per invocation, to compare): each workgroup takes a span of run x 256 elements of
 * a row, run = the row's 256-element pieces up to PLAN_MAX_RUN, so that a span is mostly used (a
 * Slice's rows of 480 take spans of 512). Sets *run (0: per element) and returns the workgroups it
 * needs. */
#define PLAN_MAX_RUN 8
static int64_t plan_row_items(const ir_copy_plan* p, int32_t* run) {
  *run = 0;
  const char* env = getenv("GFXEP_VULKAN_PLAN_ROWS");
  if ((env && env[0] == '0') || p->rank < 1 || p->count <= 0) return 0;
  const int64_t row = p->dims[p->rank - 1];
  if (row <= PLAN_GROUP_SIZE) return 0;
  const int64_t pieces = (row + PLAN_GROUP_SIZE - 1) / PLAN_GROUP_SIZE;
  *run = (int32_t)(pieces < PLAN_MAX_RUN ? pieces : PLAN_MAX_RUN);
  const int64_t span = (int64_t)*run * PLAN_GROUP_SIZE;
  return p->count / row * ((row + span - 1) / span);
}

/* Whether transpose.comp takes a simplified plan: every coordinate inside the source, the
 * destination's innermost dim contiguous there and strided (ascending) in the source, another dim
 * J contiguous in the source, both at least half a tile long (shorter ones leave tiles mostly empty:
 * copy_plan.comp then), elements of at most 8 bytes. Fills the dispatch: tiles along the innermost
 * dim and J, and the other dims' slices (a grid stride past the device's limit). */
static int plan_transposes(const vk_device* d, const ir_copy_plan* p, uint32_t* j_dim, uint32_t* others,
                           uint32_t groups[3]) {
  const char* env = getenv("GFXEP_VULKAN_NO_TILED_TRANSPOSE");
  if ((env && env[0] == '1') || p->rank < 2 || p->elem_size > 8 || p->count <= 0 || p->count > UINT32_MAX) return 0;
  const int last = p->rank - 1;
  for (int k = 0; k < p->rank; k++)
    if (p->src_start[k] != 0 || p->src_step[k] != 1 || p->src_extent[k] != p->dims[k]) return 0;
  if (p->dst_strides[last] != 1 || p->src_strides[last] <= 1) return 0;
  int j = -1;
  for (int k = 0; k < last && j < 0; k++)
    if (p->src_strides[k] == 1) j = k;
  const int64_t half = TRANSPOSE_TILE / 2;
  if (j < 0 || p->dims[j] < half || p->dims[last] < half) return 0;
  int64_t slices = 1;
  for (int k = 0; k < last; k++)
    if (k != j) slices *= p->dims[k];
  const int64_t gx = (p->dims[last] + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE;
  const int64_t gy = (p->dims[j] + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE;
  const uint32_t* limit = d->props.limits.maxComputeWorkGroupCount;
  if (gx > limit[0] || gy > limit[1]) return 0;
  *j_dim = (uint32_t)j;
  *others = (uint32_t)slices;
  groups[0] = (uint32_t)gx;
  groups[1] = (uint32_t)gy;
  groups[2] = (uint32_t)(slices < (int64_t)limit[2] ? slices : limit[2]);
  return 1;
}

gfx_status vk_transpose_prepare(vk_device* d, int64_t batch, int64_t rows, int64_t cols, int64_t rows_out, int elem_size,
                                vk_transpose* t) {
  memset(t, 0, sizeof *t);
  if (rows_out < rows || batch * rows_out * cols <= 0 || batch * rows_out * cols > UINT32_MAX)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: a transpose of %lld x %lld x %lld elements into rows of %lld",
                     (long long)batch, (long long)rows, (long long)cols, (long long)rows_out);
  ir_copy_plan p;
  memset(&p, 0, sizeof p); /* IR_PADMODE_CONSTANT, value 0: the rows past `rows` */
  p.rank = 3;
  p.elem_size = elem_size;
  p.count = batch * rows_out * cols;
  const int64_t dims[3] = {batch, cols, rows_out}, dst[3] = {cols * rows_out, rows_out, 1}, src[3] = {rows * cols, 1, cols};
  for (int k = 0; k < 3; k++) {
    p.dims[k] = dims[k];
    p.src_extent[k] = k == 2 ? rows : dims[k];
    p.dst_strides[k] = dst[k];
    p.src_strides[k] = src[k];
    p.src_step[k] = 1;
  }
  vk_shader_id shader;
  int32_t run = 0; /* copy_plan.comp one element per invocation */
  t->tiled = plan_transposes(d, &p, &t->j_dim, &t->others, t->groups);
  if (t->tiled) {
    static const vk_shader_id by_size[9] = {[1] = VK_SHADER_TRANSPOSE_1, [2] = VK_SHADER_TRANSPOSE_2,
                                            [4] = VK_SHADER_TRANSPOSE_4, [8] = VK_SHADER_TRANSPOSE_8};
    shader = by_size[elem_size];
  } else {
    GFX_TRY(plan_shader(d, "a transpose", (size_t)elem_size, &shader));
    t->groups[0] = vk_grid_groups(d, (uint64_t)((p.count + PLAN_GROUP_SIZE - 1) / PLAN_GROUP_SIZE));
    t->groups[1] = t->groups[2] = 1;
  }
  GFX_TRY(vk_pipeline_get(d, shader, t->tiled ? NULL : &run, t->tiled ? 0 : 1, &t->pipe));
  GFX_TRY(vk_buffer_create(d, sizeof(gpu_plan), VK_MEM_CONSTANTS, &t->plan));
  const gpu_plan g = gpu_plan_of(&p);
  memcpy(t->plan.mapped, &g, sizeof g);
  return NULL;
}

void vk_transpose_record(vk_device* d, VkCommandBuffer cb, const vk_transpose* t, uint64_t src, uint64_t dst) {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, t->pipe->pipeline);
  if (t->tiled) {
    transpose_push tp = {.src = src, .dst = dst, .plan = t->plan.address, .j_dim = t->j_dim, .others = t->others};
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof tp, &tp);
  } else {
    plan_push pc = {.src = src, .dst = dst, .plan = t->plan.address};
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  }
  vkCmdDispatch(cb, t->groups[0], t->groups[1], t->groups[2]);
}

void vk_transpose_release(vk_device* d, vk_transpose* t) {
  if (t->plan.buffer) vk_buffer_destroy(d, &t->plan);
  memset(t, 0, sizeof *t);
}

gfx_status vk_supports_layout(vk_device* d, const gfx_node_query* q) {
  const char* op = ir_op_name(q->op);
  switch (ir_layout_kind_of(q->op)) {
    case IR_LAYOUT_GATHER: {
      /* constant indices out of range were refused by ir_parse_gather already (see the top) */
      if (q->desc && q->desc->n_inputs > 1 && q->desc->input_dtypes[1] != GFX_DTYPE_I32 &&
          q->desc->input_dtypes[1] != GFX_DTYPE_I64)
        return declined(op, "with indices that are neither int32 nor int64", NULL);
      vk_shader_id shader;
      return gather_shader(d, gfx_dtype_size(q->params->layout.dtype), &shader);
    }
    case IR_LAYOUT_PLANS: {
      vk_shader_id shader;
      return plan_shader(d, op, gfx_dtype_size(q->params->layout.dtype), &shader);
    }
    case IR_LAYOUT_FILL: {
      /* zeros by a buffer fill; any other value by the copy-plan shader (fill_plan) */
      if (!has_value(q->params)) return NULL;
      vk_shader_id shader;
      return plan_shader(d, op, gfx_dtype_size(q->params->layout.dtype), &shader);
    }
    case IR_LAYOUT_SHAPE:
    case IR_LAYOUT_COPY: return NULL; /* buffer copies and fills */
  }
  return declined(op, "is no layout op", NULL);
}

gfx_status vk_prepare_layout(vk_device* d, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state) {
  *state = NULL;
  layout_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a node state");
  st->family = VK_FAM_LAYOUT;
  st->kind = ir_layout_kind_of(node->op);
  gfx_status s = NULL;
  if (st->kind == IR_LAYOUT_SHAPE) {
    int64_t values[GFX_MAX_RANK];
    ir_shape_values(node, &in[0], values, &st->n_shape_values);
    if (st->n_shape_values > 0) s = vk_buffer_create(d, sizeof(int64_t) * (size_t)st->n_shape_values, VK_MEM_CONSTANTS, &st->shape_values);
    if (!s && st->n_shape_values > 0) memcpy(st->shape_values.mapped, values, sizeof(int64_t) * (size_t)st->n_shape_values);
  } else if (st->kind == IR_LAYOUT_GATHER) {
    ir_gather_geom g;
    vk_shader_id shader;
    s = vk_check_elements_u32(node, in, 2);
    if (!s) s = vk_check_elements_u32(node, out, 1);
    if (!s) s = ir_gather_geometry(node, &in[0], &in[1], &g);
    if (!s && g.axis_dim > INT32_MAX)
      s = gfx_error(GFX_ERR_NOT_SUPPORTED, "a gathered dim of %lld; below 2^31 is handled", (long long)g.axis_dim);
    if (!s) s = gather_shader(d, gfx_dtype_size(node->params.layout.dtype), &shader);
    if (!s) s = vk_pipeline_get(d, shader, (const int32_t[]){0}, 1, &st->pipe);
    if (!s) s = vk_pipeline_get(d, shader, (const int32_t[]){1}, 1, &st->pipe_i64);
    if (!s) {
      st->gather[0] = (uint32_t)(g.outer * g.n_indices * g.inner);
      st->gather[1] = (uint32_t)g.n_indices;
      st->gather[2] = (uint32_t)g.inner;
      st->gather[3] = (uint32_t)g.axis_dim;
    }
  } else if (st->kind == IR_LAYOUT_FILL && has_value(&node->params)) {
    vk_shader_id shader;
    const int64_t count = gfx_shape_numel(&out[0]);
    s = vk_check_elements_u32(node, out, 1);
    if (!s) s = plan_shader(d, ir_op_name(node->op), gfx_dtype_size(node->params.layout.dtype), &shader);
    if (!s) s = vk_pipeline_get(d, shader, NULL, 0, &st->pipe);
    if (!s) s = vk_buffer_create(d, 2 * sizeof(gpu_plan), VK_MEM_CONSTANTS, &st->plans);
    if (!s) {
      const gpu_plan g = fill_plan(node, count);
      memcpy(st->plans.mapped, &g, sizeof g);
      memcpy((char*)st->plans.mapped + sizeof g, &g, sizeof g);
      st->n_plans = 1;
      st->counts[0][0] = st->counts[0][1] = count;
      st->pipes[0][0] = st->pipes[0][1] = st->pipe;
      st->wide[0] = (uint32_t)gfx_dtype_size(node->params.layout.dtype);
    }
  } else if (st->kind == IR_LAYOUT_PLANS) {
    vk_shader_id shader;
    st->n_plans = ir_layout_plan_count(node);
    s = plan_shader(d, ir_op_name(node->op), gfx_dtype_size(node->params.layout.dtype), &shader);
    if (!s) s = vk_check_elements_u32(node, in, node->n_inputs);
    if (!s) s = vk_check_elements_u32(node, out, node->n_outputs);
    if (!s && st->n_plans > IR_MAX_IO) s = gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d copy plans", st->n_plans);
    if (!s && st->n_plans > 0)
      s = vk_buffer_create(d, 2 * sizeof(gpu_plan) * (size_t)st->n_plans, VK_MEM_CONSTANTS, &st->plans);
    for (int k = 0; !s && k < st->n_plans; k++) {
      ir_copy_plan plan;
      s = ir_layout_plan(node, in, out, k, &plan);
      if (!s) s = check_plan_coords(&plan);
      for (int v = 0; !s && v < 2; v++) {
        ir_copy_plan simple;
        ir_copy_plan_simplify(&plan, v ? 16 : plan.elem_size, &simple);
        gfx_status too_long = check_plan_coords(&simple); /* merged dims past 2^31: the plan as it was */
        if (too_long) {
          gfx_status_free(too_long);
          simple = plan;
        }
        s = plan_shader(d, ir_op_name(node->op), (size_t)simple.elem_size, &shader);
        int32_t run;
        st->row_items[k][v] = plan_row_items(&simple, &run);
        if (!s) s = vk_pipeline_get(d, shader, &run, 1, &st->pipes[k][v]);
        if (s) break;
        if (!v && plan_transposes(d, &simple, &st->transpose_j[k], &st->transpose_others[k],
                                  st->transpose_groups[k])) {
          static const vk_shader_id by_size[9] = {[1] = VK_SHADER_TRANSPOSE_1, [2] = VK_SHADER_TRANSPOSE_2,
                                                  [4] = VK_SHADER_TRANSPOSE_4, [8] = VK_SHADER_TRANSPOSE_8};
          s = vk_pipeline_get(d, by_size[simple.elem_size], NULL, 0, &st->transpose_pipes[k]);
          if (s) break;
        }
        const gpu_plan g = gpu_plan_of(&simple);
        memcpy((char*)st->plans.mapped + sizeof g * (size_t)(2 * k + v), &g, sizeof g);
        st->counts[k][v] = simple.count;
        if (v) st->wide[k] = (uint32_t)simple.elem_size;
      }
    }
  }
  if (s) {
    vk_release_layout(d, st);
    return gfx_status_wrap(s, "vulkan backend: node '%s' (%s)", node_label(node), ir_op_name(node->op));
  }
  *state = st;
  return NULL;
}

void vk_release_layout(vk_device* d, void* state) {
  layout_state* st = state;
  if (!st) return;
  if (st->plans.buffer) vk_buffer_destroy(d, &st->plans);
  if (st->shape_values.buffer) vk_buffer_destroy(d, &st->shape_values);
  free(st);
}

static gfx_status run_plans(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                            gfx_tensor* out, layout_state* st) {
  vk_stream* s = vk_stream_acquire(d, ctx->stream);
  VkCommandBuffer cb;
  gfx_status status = vk_stream_cmd(s, &cb);
  for (int k = 0; !status && k < st->n_plans; k++) {
    if (st->counts[k][0] == 0) continue;
    /* a fill reads nothing: its plan's source is the output itself */
    const gfx_tensor* src = node->op == GFX_OP_CONCAT ? &in[k] : st->kind == IR_LAYOUT_FILL ? &out[0] : &in[0];
    const gfx_tensor* dst = node->op == GFX_OP_SPLIT ? &out[k] : &out[0];
    if (!src->data || !dst->data) {
      status = gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): plan %d has no %s memory",
                         node_label(node), ir_op_name(node->op), k, src->data ? "output" : "input");
      break;
    }
    if (st->transpose_pipes[k]) { /* its element-size plan, [0] */
      transpose_push tp = {.src = (uint64_t)(uintptr_t)src->data,
                           .dst = (uint64_t)(uintptr_t)dst->data,
                           .plan = st->plans.address + sizeof(gpu_plan) * (uint64_t)(2 * k),
                           .j_dim = st->transpose_j[k],
                           .others = st->transpose_others[k]};
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, st->transpose_pipes[k]->pipeline);
      vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof tp, &tp);
      vkCmdDispatch(cb, st->transpose_groups[k][0], st->transpose_groups[k][1], st->transpose_groups[k][2]);
      continue;
    }
    /* the wide plan where both addresses allow its elements (they do unless a tensor starts inside
     * an allocation at an odd offset): the same addresses choose the same plan at a replay */
    const uintptr_t both = (uintptr_t)src->data | (uintptr_t)dst->data;
    const int v = both % st->wide[k] == 0;
    plan_push pc = {.src = (uint64_t)(uintptr_t)src->data,
                    .dst = (uint64_t)(uintptr_t)dst->data,
                    .plan = st->plans.address + sizeof(gpu_plan) * (uint64_t)(2 * k + v)};
    uint32_t groups;
    if (st->row_items[k][v]) /* rows: fewer, longer-lived workgroups pay the plan's loads over more rows */
      groups = (uint64_t)st->row_items[k][v] < d->plan_row_groups ? (uint32_t)st->row_items[k][v] : d->plan_row_groups;
    else
      groups = vk_grid_groups(d, (uint64_t)((st->counts[k][v] + PLAN_GROUP_SIZE - 1) / PLAN_GROUP_SIZE));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, st->pipes[k][v]->pipeline);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(cb, groups, 1, 1);
  }
  if (!status) vk_cmd_barrier(cb);
  return vk_stream_release(d, ctx->stream, s, status);
}

gfx_status vk_run_layout(vk_device* d, const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                         gfx_tensor* out, void* state) {
  layout_state* st = state;
  if (!st || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s) run without its state or tensors",
                     node_label(node), ir_op_name(node->op));
  const size_t out_bytes = (size_t)gfx_shape_numel(&out[0].shape) * gfx_dtype_size(out[0].dtype);
  switch (st->kind) {
    case IR_LAYOUT_PLANS: return run_plans(d, ctx, node, in, out, st);
    case IR_LAYOUT_COPY:
      if (out_bytes == 0 || out[0].data == in[0].data) return NULL;
      return vk_copy(&d->dev, out[0].data, in[0].data, out_bytes, GFX_COPY_DEVICE_TO_DEVICE, ctx->stream);
    case IR_LAYOUT_SHAPE: {
      /* from the state's buffer by address, so that the copy can be part of a recorded partition */
      if (st->n_shape_values == 0) return NULL;
      vk_stream* s = vk_stream_acquire(d, ctx->stream);
      VkCommandBuffer cb;
      gfx_status status = vk_stream_cmd(s, &cb);
      if (!status)
        status = vk_record_copy_by_address(d, cb, (VkDeviceAddress)(uintptr_t)out[0].data, st->shape_values.address,
                                           sizeof(int64_t) * (size_t)st->n_shape_values);
      return vk_stream_release(d, ctx->stream, s, status);
    }
    case IR_LAYOUT_FILL:
      if (st->n_plans == 0) return out_bytes ? vk_memset_zero(&d->dev, out[0].data, out_bytes, ctx->stream) : NULL;
      if ((int64_t)out_bytes != st->counts[0][0] * (int64_t)gfx_dtype_size(out[0].dtype))
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (%s): output has %lld elements; "
                         "node_prepare saw %lld", node_label(node), ir_op_name(node->op),
                         (long long)gfx_shape_numel(&out[0].shape), (long long)st->counts[0][0]);
      return run_plans(d, ctx, node, in, out, st);
    case IR_LAYOUT_GATHER: {
      if (st->gather[0] == 0) return NULL;
      if (in[1].dtype != GFX_DTYPE_I32 && in[1].dtype != GFX_DTYPE_I64)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (Gather): indices are %s; int32 or int64 "
                         "expected", node_label(node), gfx_dtype_name(in[1].dtype));
      if (gfx_dtype_size(in[0].dtype) != gfx_dtype_size(node->params.layout.dtype) || out[0].dtype != in[0].dtype)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (Gather): data %s, output %s, prepared "
                         "for %s", node_label(node), gfx_dtype_name(in[0].dtype), gfx_dtype_name(out[0].dtype),
                         gfx_dtype_name(node->params.layout.dtype));
      if ((int64_t)st->gather[0] != gfx_shape_numel(&out[0].shape))
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: node '%s' (Gather): output has %lld elements; "
                         "node_prepare saw %u", node_label(node), (long long)gfx_shape_numel(&out[0].shape),
                         st->gather[0]);
      gather_push pc = {.data = (uint64_t)(uintptr_t)in[0].data,
                        .indices = (uint64_t)(uintptr_t)in[1].data,
                        .out = (uint64_t)(uintptr_t)out[0].data,
                        .count = st->gather[0],
                        .n_indices = st->gather[1],
                        .inner = st->gather[2],
                        .axis_dim = st->gather[3]};
      return vk_dispatch_elements(d, ctx->stream, in[1].dtype == GFX_DTYPE_I64 ? st->pipe_i64 : st->pipe, &pc,
                                  sizeof pc, pc.count);
    }
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "vulkan backend: node '%s' (%s) has no Vulkan kernel", node_label(node),
                   ir_op_name(node->op));
}

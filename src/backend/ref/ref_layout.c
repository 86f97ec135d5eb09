/* gfxep — reference kernels of the layout and data movement ops: plain C loops on host memory.
 *
 * Nothing is converted: elements are copied as bytes by their size, so every element type is exact
 * (int64 included). The ops that move elements run the IR's strided copy plans (ir/layout.h), one
 * element at a time through ir_copy_plan_source, the definition the CUDA kernel follows.
 */
#include "backend/ref/ref_kernels.h"

#include <stdio.h>
#include <string.h>

#include "ir/layout.h"
#include "ir/shape.h"

/* A tensor of any element type gfxep knows, with a concrete shape and memory unless empty. */
static gfx_status check_tensor(const char* what, int index, const gfx_tensor* t) {
  char name[32];
  snprintf(name, sizeof name, "%s %d", what, index);
  if (gfx_dtype_size(t->dtype) == 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %d, which is not handled", name, t->dtype);
  GFX_TRY(ref_check_concrete_shape(name, &t->shape));
  if (!t->data && gfx_shape_numel(&t->shape) > 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has no data", name);
  return NULL;
}

/* Every input the kernel reads and every output it writes. Inputs past the data (shapes, pads...)
 * are constants already copied into the node's params: only the data inputs are checked. */
static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int n_data_inputs) {
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no %s tensors given", in ? "output" : "input");
  if (node->n_inputs < n_data_inputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected at least %d", node->n_inputs, n_data_inputs);
  for (int i = 0; i < n_data_inputs; i++) GFX_TRY(check_tensor("input", i, &in[i]));
  for (int o = 0; o < node->n_outputs; o++) {
    GFX_TRY(check_tensor("output", o, &out[o]));
    if (out[o].dtype != node->params.layout.dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d is %s; the node moves %s", o, gfx_dtype_name(out[o].dtype),
                       gfx_dtype_name(node->params.layout.dtype));
  }
  return NULL;
}

static gfx_status check_same_dtype(const gfx_tensor* t, int index, int dtype) {
  if (t->dtype == dtype) return NULL;
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d is %s; the node moves %s", index, gfx_dtype_name(t->dtype),
                   gfx_dtype_name(dtype));
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: the bytes unchanged ---- */

static gfx_status run_copy(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 1));
  GFX_TRY(check_same_dtype(&in[0], 0, out[0].dtype));
  gfx_shape want;
  GFX_TRY(ir_layout_infer(node, &in[0].shape, &want));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  const size_t bytes = (size_t)gfx_shape_numel(&in[0].shape) * gfx_dtype_size(in[0].dtype);
  if (bytes && in[0].data != out[0].data) memmove(out[0].data, in[0].data, bytes);
  return NULL;
}

/* ---- copy plans: Concat, Split, Slice, Pad, Transpose, Tile, Expand ---- */

static void run_plan(const ir_copy_plan* plan, const void* src, void* dst) {
  const size_t es = (size_t)plan->elem_size;
  for (int64_t i = 0; i < plan->count; i++) {
    int64_t d;
    const int64_t s = ir_copy_plan_source(plan, i, &d);
    memcpy((char*)dst + (size_t)d * es, s < 0 ? (const void*)plan->value : (const char*)src + (size_t)s * es, es);
  }
}

static gfx_status run_plans(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int n_data = node->op == GFX_OP_CONCAT ? node->n_inputs : 1;
  GFX_TRY(check_io(node, in, out, n_data));
  gfx_shape in_shapes[IR_MAX_IO], out_shapes[IR_MAX_IO];
  for (int i = 0; i < node->n_inputs; i++) in_shapes[i] = i < n_data ? in[i].shape : (gfx_shape){.rank = -1};
  for (int i = 0; i < n_data; i++) GFX_TRY(check_same_dtype(&in[i], i, node->params.layout.dtype));
  for (int o = 0; o < node->n_outputs; o++) out_shapes[o] = out[o].shape;
  const int n = ir_layout_plan_count(node);
  for (int k = 0; k < n; k++) {
    ir_copy_plan plan, simple;
    GFX_TRY(ir_layout_plan(node, in_shapes, out_shapes, k, &plan));
    const void* src = node->op == GFX_OP_CONCAT ? in[k].data : in[0].data;
    void* dst = node->op == GFX_OP_SPLIT ? out[k].data : out[0].data;
    /* the simplified plan the Vulkan backend runs (host memory has no alignment to keep): every
     * layout case compared with ONNX Runtime here checks ir_copy_plan_simplify too */
    ir_copy_plan_simplify(&plan, 16, &simple);
    run_plan(&simple, src, dst);
  }
  return NULL;
}

/* ---- Gather ---- */

static gfx_status run_gather(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 2));
  GFX_TRY(check_same_dtype(&in[0], 0, out[0].dtype));
  if (in[1].dtype != GFX_DTYPE_I64 && in[1].dtype != GFX_DTYPE_I32)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "indices are %s; int32 or int64 expected", gfx_dtype_name(in[1].dtype));
  gfx_shape want;
  GFX_TRY(ir_layout_infer(node, (const gfx_shape[]){in[0].shape, in[1].shape}, &want));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  ir_gather_geom g;
  GFX_TRY(ir_gather_geometry(node, &in[0].shape, &in[1].shape, &g));
  const size_t es = gfx_dtype_size(out[0].dtype);
  const size_t block = (size_t)g.inner * es;
  /* every index is checked before anything is written */
  for (int64_t j = 0; j < g.n_indices; j++) {
    int64_t v;
    if (in[1].dtype == GFX_DTYPE_I64) {
      memcpy(&v, (const char*)in[1].data + 8 * j, 8);
    } else {
      int32_t w;
      memcpy(&w, (const char*)in[1].data + 4 * j, 4);
      v = w;
    }
    if (v < -g.axis_dim || v >= g.axis_dim)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "index %lld (entry %lld) is outside [-%lld, %lld)", (long long)v,
                       (long long)j, (long long)g.axis_dim, (long long)g.axis_dim);
  }
  if (block == 0) return NULL;
  for (int64_t o = 0; o < g.outer; o++) {
    for (int64_t j = 0; j < g.n_indices; j++) {
      int64_t v;
      if (in[1].dtype == GFX_DTYPE_I64) {
        memcpy(&v, (const char*)in[1].data + 8 * j, 8);
      } else {
        int32_t w;
        memcpy(&w, (const char*)in[1].data + 4 * j, 4);
        v = w;
      }
      if (v < 0) v += g.axis_dim;
      memcpy((char*)out[0].data + (size_t)(o * g.n_indices + j) * block,
             (const char*)in[0].data + (size_t)(o * g.axis_dim + v) * block, block);
    }
  }
  return NULL;
}

/* ---- Shape, ConstantOfShape ---- */

static gfx_status run_shape(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  if (!in || !out || node->n_inputs < 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no tensors given");
  GFX_TRY(ref_check_concrete_shape("input 0", &in[0].shape));
  GFX_TRY(check_io(node, in, out, 0));
  int64_t values[GFX_MAX_RANK];
  int n;
  ir_shape_values(node, &in[0].shape, values, &n);
  const gfx_shape want = {.rank = 1, .dims = {n}};
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  if (n) memcpy(out[0].data, values, (size_t)n * sizeof values[0]);
  return NULL;
}

static gfx_status run_fill(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 0));
  gfx_shape want;
  GFX_TRY(ir_layout_infer(node, NULL, &want));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  const int64_t count = gfx_shape_numel(&want);
  const size_t es = gfx_dtype_size(out[0].dtype);
  for (int64_t i = 0; i < count; i++) memcpy((char*)out[0].data + (size_t)i * es, node->params.layout.value, es);
  return NULL;
}

gfx_status ref_run_layout(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  switch (ir_layout_kind_of(node->op)) {
    case IR_LAYOUT_COPY: return run_copy(node, in, out);
    case IR_LAYOUT_PLANS: return run_plans(node, in, out);
    case IR_LAYOUT_GATHER: return run_gather(node, in, out);
    case IR_LAYOUT_SHAPE: return run_shape(node, in, out);
    case IR_LAYOUT_FILL: return run_fill(node, in, out);
  }
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is no layout op", ir_op_name(node->op));
}

/* gfxep CUDA backend — host side of the logic ops, Mod, and the scans, generators and index ops
 * that follow them in the op table: checks and launches (kernels in cuda_index.cu).
 *
 * The ops keep no state: what their kernels need costs a few integer operations per run and travels
 * by value. The kernels trust what they are given, so every element type and shape is checked here.
 */
#include "backend/cuda/cuda_index.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_topk.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

/* ---- checks ---- */

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}
static int is_int_type(int dtype) { return dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64; }

/* min_inputs..max_inputs inputs and one output; every tensor in the first n_checked inputs and the
 * output has a concrete shape and memory unless it is empty. */
static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                           int max_inputs, int n_checked) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs || node->n_outputs != 1 || !in || !out)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected %d..%d and 1",
                                      node->n_inputs, node->n_outputs, min_inputs, max_inputs));
  for (int i = 0; i <= n_checked; i++) {
    const gfx_tensor* t = i < n_checked ? &in[i] : &out[0];
    const int64_t n = gfx_shape_numel(&t->shape);
    if (n < 0 || (!t->data && n > 0))
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %d has no concrete shape or no data",
                                        i < n_checked ? "input" : "output", i < n_checked ? i : 0));
  }
  return NULL;
}

static gfx_status require_dtype(const ir_node* node, const gfx_tensor* t, const char* what, int want) {
  if (t->dtype == want) return NULL;
  return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%s is %s; %s is expected", what,
                                    gfx_dtype_name(t->dtype), gfx_dtype_name(want)));
}

static gfx_status require_shape(const ir_node* node, const gfx_shape* actual, const gfx_shape* expected) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[128], e[128];
  return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output shape %s, expected %s",
                                    gfx_shape_str(actual, a, sizeof a), gfx_shape_str(expected, e, sizeof e)));
}

/* The output must be the broadcast of the two inputs. */
static gfx_status check_broadcast(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out) {
  gfx_shape full;
  gfx_status s = ir_broadcast_shapes(&in[0].shape, &in[1].shape, &full);
  if (s) return node_error(node, s);
  return require_shape(node, &out->shape, &full);
}

static gfx_status launched(const gfx_exec_ctx* ctx, const ir_node* node, cudaError_t err) {
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

/* ---- Not, And, Or, Xor ---- */

static gfx_status run_logic(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int n = node->op == GFX_OP_NOT ? 1 : 2;
  GFX_TRY(check_io(node, in, out, n, n, n));
  for (int i = 0; i < n; i++) GFX_TRY(require_dtype(node, &in[i], i ? "input 1" : "input 0", GFX_DTYPE_BOOL));
  GFX_TRY(require_dtype(node, &out[0], "output 0", GFX_DTYPE_BOOL));
  if (n == 1)
    GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  else
    GFX_TRY(check_broadcast(node, in, &out[0]));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_index_logic(node->op, in[0].data, &in[0].shape, n == 2 ? in[1].data : NULL,
                                   n == 2 ? &in[1].shape : NULL, out[0].data, &out[0].shape,
                                   (cudaStream_t)ctx->stream));
}

/* ---- Mod ---- */

static gfx_status run_mod(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 2, 2, 2));
  const int t = in[0].dtype, fmod = node->params.index.fmod;
  if (!(is_int_type(t) || (fmod && is_float_type(t))))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "fmod=%d with %s operands is not handled", fmod,
                                      gfx_dtype_name(t)));
  GFX_TRY(require_dtype(node, &in[1], "input 1", t));
  GFX_TRY(require_dtype(node, &out[0], "output 0", t));
  GFX_TRY(check_broadcast(node, in, &out[0]));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_index_mod(t, fmod, in[0].data, &in[0].shape, in[1].data, &in[1].shape, out[0].data,
                                 &out[0].shape, (cudaStream_t)ctx->stream));
}

/* ---- CumSum ---- */

/* input 1 (the axis) was read at parse time */
static gfx_status run_cumsum(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 1, 2, 1));
  const int t = in[0].dtype;
  if (!is_int_type(t) && !is_float_type(t))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 is %s, which is not handled", gfx_dtype_name(t)));
  GFX_TRY(require_dtype(node, &out[0], "output 0", t));
  GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  ir_axis_geom g;
  gfx_status s = ir_axis_geometry(&in[0].shape, node->params.index.axis, &g);
  if (s) return node_error(node, s);
  GFX_TRY(cuda_use_device(ctx->dev->index));
  const ir_index_params* p = &node->params.index;
  return launched(ctx, node,
                  cuda_index_cumsum(t, in[0].data, out[0].data, g.outer, g.len, g.inner, p->exclusive, p->reverse,
                                    (cudaStream_t)ctx->stream));
}

/* ---- Range ---- */

/* start, limit and delta were read at parse time; the inputs are not touched */
static gfx_status run_range(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 0, 3, 0));
  const ir_index_params* p = &node->params.index;
  GFX_TRY(require_dtype(node, &out[0], "output 0", p->dtype));
  const gfx_shape want = {.rank = 1, .dims = {p->count}};
  GFX_TRY(require_shape(node, &out[0].shape, &want));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_index_range(p->dtype, p->start, p->delta, p->start_i, p->delta_i, out[0].data, p->count,
                                   (cudaStream_t)ctx->stream));
}

/* ---- Trilu ---- */

static gfx_status run_trilu(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_io(node, in, out, 1, 2, 1));
  GFX_TRY(require_dtype(node, &out[0], "output 0", in[0].dtype));
  GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  const size_t es = gfx_dtype_size(in[0].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 is %s", gfx_dtype_name(in[0].dtype)));
  ir_trilu_geom g;
  gfx_status s = ir_trilu_geometry(&in[0].shape, &g);
  if (s) return node_error(node, s);
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_index_trilu(in[0].data, out[0].data, es, g.batch, g.rows, g.cols, node->params.index.upper,
                                   node->params.index.k, (cudaStream_t)ctx->stream));
}

/* ---- the kernel family entries (stateless: run checks the shapes) ---- */

#define STATELESS_PREPARE(kernel)                                                                             \
  gfx_status cuda_prepare_##kernel(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out, \
                                   cuda_node_state** state, size_t* scratch_bytes) {                         \
    (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;                           \
    return NULL;                                                                                              \
  }

STATELESS_PREPARE(logic)
STATELESS_PREPARE(mod)
STATELESS_PREPARE(cumsum)
STATELESS_PREPARE(range)
STATELESS_PREPARE(trilu)

gfx_status cuda_run_logic(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_logic(ctx, node, in, out);
}

gfx_status cuda_run_mod(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        cuda_node_state* state) {
  (void)state;
  return run_mod(ctx, node, in, out);
}

gfx_status cuda_run_cumsum(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  (void)state;
  return run_cumsum(ctx, node, in, out);
}

gfx_status cuda_run_range(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_range(ctx, node, in, out);
}

gfx_status cuda_run_trilu(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_trilu(ctx, node, in, out);
}

/* ---- TopK ---- */

/* The scratch of a long line's radix selection (cuda_topk.h), from the shapes; k is the output's
 * length along the axis (a computed k has been folded into the node by then). */
gfx_status cuda_prepare_topk(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)state;
  ir_axis_geom g;
  gfx_status s = ir_axis_geometry(&in[0], node->params.index.axis, &g);
  if (s) return node_error(node, s);
  const int a = (int)(node->params.index.axis < 0 ? node->params.index.axis + in[0].rank : node->params.index.axis);
  *scratch_bytes = cuda_topk_scratch(node->params.index.dtype, g.outer, g.len, g.inner, out[0].dims[a]);
  return NULL;
}

gfx_status cuda_run_topk(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  (void)state;
  if (node->n_inputs != 2 || node->n_outputs != 2 || !in || !out)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 2 and 2",
                                      node->n_inputs, node->n_outputs));
  if (!is_float_type(in[0].dtype) && !is_int_type(in[0].dtype))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "X is %s; float or int32/int64 is expected",
                                      gfx_dtype_name(in[0].dtype)));
  GFX_TRY(require_dtype(node, &out[0], "output 0", in[0].dtype));
  GFX_TRY(require_dtype(node, &out[1], "output 1", GFX_DTYPE_I64));
  const ir_index_params* p = &node->params.index;
  ir_axis_geom g;
  gfx_shape want[2];
  gfx_status s = ir_infer_topk(node, &in[0].shape, want);
  if (!s) s = ir_topk_geometry(&in[0].shape, p->axis, p->k, &g);
  if (s) return node_error(node, s);
  GFX_TRY(require_shape(node, &out[0].shape, &want[0]));
  GFX_TRY(require_shape(node, &out[1].shape, &want[1]));
  if (gfx_shape_numel(&want[0]) == 0) return NULL;
  if (!in[0].data || !out[0].data || !out[1].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "a tensor has no data"));
  const size_t scratch = cuda_topk_scratch(in[0].dtype, g.outer, g.len, g.inner, p->k);
  if (scratch && (!ctx->scratch || ctx->scratch_bytes < scratch))
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%zu bytes of scratch given, %zu needed",
                                      ctx->scratch ? ctx->scratch_bytes : 0, scratch));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_topk(in[0].dtype, in[0].data, out[0].data, out[1].data, g.outer, g.len, g.inner, p->k,
                            p->largest, ctx->scratch, ctx->scratch_bytes, (cudaStream_t)ctx->stream));
}

/* ---- GatherElements, GatherND, ScatterElements, ScatterND ---- */

/* data and indices (and updates) as ref_index.c's check_index_io requires; a scatter's output
 * starts as a copy of the data (a device-to-device copy, which graph capture records like a kernel) */
static gfx_status check_index_tensors(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int n) {
  GFX_TRY(check_io(node, in, out, n, n, n));
  if (!is_int_type(in[1].dtype))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "indices of type %s", gfx_dtype_name(in[1].dtype)));
  if (n == 3) GFX_TRY(require_dtype(node, &in[2], "input 2", in[0].dtype));
  GFX_TRY(require_dtype(node, &out[0], "output 0", in[0].dtype));
  const size_t es = gfx_dtype_size(in[0].dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "data of type %s", gfx_dtype_name(in[0].dtype)));
  if (node->params.index.reduction != IR_SCATTER_NONE && !is_int_type(in[0].dtype) && !is_float_type(in[0].dtype))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "a reduction of %s data", gfx_dtype_name(in[0].dtype)));
  return NULL;
}

static gfx_status copy_data(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* data, gfx_tensor* out) {
  const int64_t n = gfx_shape_numel(&data->shape);
  if (n <= 0 || out->data == data->data) return NULL;
  return launched(ctx, node,
                  cudaMemcpyAsync(out->data, data->data, (size_t)n * gfx_dtype_size(data->dtype),
                                  cudaMemcpyDeviceToDevice, (cudaStream_t)ctx->stream));
}

static gfx_status run_elements(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int scatter = node->op == GFX_OP_SCATTER_ELEMENTS;
  GFX_TRY(check_index_tensors(node, in, out, scatter ? 3 : 2));
  ir_elements_geom g;
  gfx_status s = ir_elements_geometry(&in[0].shape, &in[1].shape, scatter ? &in[2].shape : NULL,
                                      node->params.index.axis, &g);
  if (s) return node_error(node, s);
  GFX_TRY(require_shape(node, &out[0].shape, scatter ? &in[0].shape : &in[1].shape));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  if (scatter) GFX_TRY(copy_data(ctx, node, &in[0], &out[0]));
  return launched(ctx, node,
                  cuda_index_elements(in[0].dtype, gfx_dtype_size(in[0].dtype), in[0].data, in[1].data,
                                      in[1].dtype == GFX_DTYPE_I64, scatter ? in[2].data : NULL, out[0].data, &g,
                                      node->params.index.reduction, (cudaStream_t)ctx->stream));
}

static gfx_status run_nd(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int scatter = node->op == GFX_OP_SCATTER_ND;
  GFX_TRY(check_index_tensors(node, in, out, scatter ? 3 : 2));
  ir_nd_geom g;
  gfx_shape gathered;
  gfx_status s = ir_nd_geometry(&in[0].shape, &in[1].shape, scatter ? &in[2].shape : NULL,
                                scatter ? 0 : node->params.index.batch_dims, &g, &gathered);
  if (s) return node_error(node, s);
  GFX_TRY(require_shape(node, &out[0].shape, scatter ? &in[0].shape : &gathered));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  if (scatter) GFX_TRY(copy_data(ctx, node, &in[0], &out[0]));
  return launched(ctx, node,
                  cuda_index_nd(in[0].dtype, gfx_dtype_size(in[0].dtype), in[0].data, in[1].data,
                                in[1].dtype == GFX_DTYPE_I64, scatter ? in[2].data : NULL, out[0].data, &g,
                                node->params.index.reduction, (cudaStream_t)ctx->stream));
}

gfx_status cuda_prepare_index(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                              cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL;
}

gfx_status cuda_run_index(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  switch (node->op) {
    case GFX_OP_GATHER_ELEMENTS:
    case GFX_OP_SCATTER_ELEMENTS: return run_elements(ctx, node, in, out);
    case GFX_OP_GATHER_ND:
    case GFX_OP_SCATTER_ND: return run_nd(ctx, node, in, out);
    default: return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "not an index op"));
  }
}

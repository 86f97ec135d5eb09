/* gfxep CUDA backend — host side of NonZero and NonMaxSuppression: checks, scratch sizes and
 * launches (kernels in cuda_select.cu). Both are the IR's bounded nodes (ir/ops_select.h): output 0 at
 * its bound, output 1 the count, which stays in device memory for the executor to read back.
 *
 * Neither keeps state: the scratch layout follows from the shapes node_prepare was given, which are
 * the shapes the node then runs with.
 */
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_select.h"
#include "ir/ops_select.h"

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

static gfx_status launched(const gfx_exec_ctx* ctx, const ir_node* node, cudaError_t err) {
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

/* The bound and the count, int64, shaped as the IR says, with memory (the count always has some). */
static gfx_status check_outputs(const ir_node* node, const gfx_tensor* out, const gfx_shape* bound) {
  if (node->n_outputs != 2 || !out)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d outputs; the bound and the count are expected",
                                      node->n_outputs));
  const gfx_shape one = {.rank = 1, .dims = {1}};
  for (int o = 0; o < 2; o++) {
    const gfx_shape* want = o ? &one : bound;
    if (out[o].dtype != GFX_DTYPE_I64 || !gfx_shape_equal(&out[o].shape, want)) {
      char a[96], e[96];
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d is %s %s; int64 %s is expected", o,
                                        gfx_dtype_name(out[o].dtype), gfx_shape_str(&out[o].shape, a, sizeof a),
                                        gfx_shape_str(want, e, sizeof e)));
    }
    if (!out[o].data && gfx_shape_numel(want) > 0)
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d has no memory", o));
  }
  return NULL;
}

static gfx_status need_scratch(const gfx_exec_ctx* ctx, const ir_node* node, size_t bytes) {
  if (bytes && (!ctx->scratch || ctx->scratch_bytes < bytes))
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%zu bytes of scratch given, %zu needed",
                                      ctx->scratch ? ctx->scratch_bytes : 0, bytes));
  return NULL;
}

/* ---- NonZero ---- */

gfx_status cuda_prepare_nonzero(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                                cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)state;
  int64_t rows, numel;
  gfx_status s = ir_nonzero_geometry(&in[0], &rows, &numel);
  if (s) return node_error(node, s);
  if (numel > CUDA_NONZERO_MAX_ELEMENTS)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%lld elements; at most %lld are handled",
                                      (long long)numel, (long long)CUDA_NONZERO_MAX_ELEMENTS));
  *scratch_bytes = cuda_nonzero_scratch(numel);
  return NULL;
}

gfx_status cuda_run_nonzero(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                            cuda_node_state* state) {
  (void)state;
  if (node->n_inputs != 1 || !in)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected 1", node->n_inputs));
  int64_t rows, numel;
  gfx_status s = ir_nonzero_geometry(&in[0].shape, &rows, &numel);
  if (s) return node_error(node, s);
  const gfx_shape bound = {.rank = 2, .dims = {rows, numel}};
  GFX_TRY(check_outputs(node, out, &bound));
  if (numel > 0 && !in[0].data) return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "X has no memory"));
  const int dtype = in[0].dtype;
  const size_t es = gfx_dtype_size(dtype);
  uint64_t sign = 0;
  switch (dtype) {
    case GFX_DTYPE_F32: sign = 0x80000000u; break;
    case GFX_DTYPE_F16:
    case GFX_DTYPE_BF16: sign = 0x8000u; break;
    case GFX_DTYPE_I32:
    case GFX_DTYPE_I64:
    case GFX_DTYPE_I8:
    case GFX_DTYPE_U8:
    case GFX_DTYPE_BOOL: break;
    default:
      return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "X is %s", gfx_dtype_name(dtype)));
  }
  GFX_TRY(need_scratch(ctx, node, cuda_nonzero_scratch(numel)));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_select_nonzero((int)es, sign, in[0].data, &in[0].shape, out[0].data, out[1].data, ctx->scratch,
                                      (cudaStream_t)ctx->stream));
}

/* ---- NonMaxSuppression ---- */

gfx_status cuda_prepare_nms(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                            cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)state;
  ir_nms_geom g;
  gfx_status s = ir_nms_geometry(&node->params.select, &in[0], &in[1], &g);
  if (s) return node_error(node, s);
  *scratch_bytes = cuda_nms_scratch(g.batches, g.classes, g.boxes, g.per_class);
  return NULL;
}

gfx_status cuda_run_nms(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        cuda_node_state* state) {
  (void)state;
  const ir_select_params* p = &node->params.select;
  if (node->n_inputs < 2 || node->n_inputs > 5 || !in)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; expected 2 to 5", node->n_inputs));
  const int dtype = in[0].dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || in[1].dtype != dtype)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "boxes are %s and scores %s; one float type is expected",
                                      gfx_dtype_name(dtype), gfx_dtype_name(in[1].dtype)));
  ir_nms_geom g;
  gfx_status s = ir_nms_geometry(p, &in[0].shape, &in[1].shape, &g);
  if (s) return node_error(node, s);
  const gfx_shape bound = {.rank = 2, .dims = {g.bound, 3}};
  GFX_TRY(check_outputs(node, out, &bound));
  if (g.batches * g.boxes > 0 && (!in[0].data || !in[1].data))
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "boxes or scores have no memory"));
  const size_t scratch = cuda_nms_scratch(g.batches, g.classes, g.boxes, g.per_class);
  GFX_TRY(need_scratch(ctx, node, scratch));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  const cuda_nms_args a = {
      .dtype = dtype,
      .boxes = in[0].data,
      .scores = in[1].data,
      .batches = g.batches,
      .classes = g.classes,
      .boxes_n = g.boxes,
      .per_class = g.per_class,
      .center_point_box = p->center_point_box,
      .has_score_threshold = p->has_score_threshold,
      .iou_threshold = p->iou_threshold,
      .score_threshold = p->score_threshold,
  };
  return launched(ctx, node, cuda_select_nms(&a, out[0].data, out[1].data, ctx->scratch, scratch,
                                             (cudaStream_t)ctx->stream));
}

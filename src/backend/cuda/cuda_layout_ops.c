/* gfxep CUDA backend — host side of the layout and data movement ops: checks and launches
 * (kernels in cuda_layout.cu).
 *
 * The ops keep no state: their copy plans (ir/layout.h) cost a few integer operations per run and
 * travel to the kernels by value. Reshape, Flatten, Squeeze and Unsqueeze are one device-to-device
 * copy, which a CUDA graph captures like a kernel.
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_layout.h"
#include "ir/shape.h"

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

/* Data inputs and every output: the node's element type (or int32/int64 indices), concrete shapes,
 * memory unless empty. The kernels trust what passes here. */
static gfx_status check_tensors(const ir_node* node, const gfx_tensor* in, int n_data, const gfx_tensor* out) {
  if (!in || !out || node->n_inputs < n_data)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs given, %d expected", node->n_inputs, n_data);
  const int dtype = node->params.layout.dtype;
  for (int i = 0; i < n_data; i++) {
    const int is_indices = node->op == GFX_OP_GATHER && i == 1;
    if (is_indices ? in[i].dtype != GFX_DTYPE_I64 && in[i].dtype != GFX_DTYPE_I32 : in[i].dtype != dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d is %s", i, gfx_dtype_name(in[i].dtype));
    if (gfx_shape_numel(&in[i].shape) < 0 || (!in[i].data && gfx_shape_numel(&in[i].shape) > 0))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d has no concrete shape or no data", i);
  }
  for (int o = 0; o < node->n_outputs; o++) {
    if (out[o].dtype != dtype)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d is %s; the node moves %s", o,
                       gfx_dtype_name(out[o].dtype), gfx_dtype_name(dtype));
    if (gfx_shape_numel(&out[o].shape) < 0 || (!out[o].data && gfx_shape_numel(&out[o].shape) > 0))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d has no concrete shape or no data", o);
  }
  return NULL;
}

/* The output shapes must be what the node computes from its input shapes. */
static gfx_status check_out_shapes(const ir_node* node, const gfx_shape* in, const gfx_tensor* out) {
  gfx_shape want[IR_MAX_IO];
  GFX_TRY(ir_layout_infer(node, in, want));
  for (int o = 0; o < node->n_outputs; o++) {
    if (gfx_shape_equal(&out[o].shape, &want[o])) continue;
    char a[128], b[128];
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d has shape %s; expected %s", o,
                     gfx_shape_str(&out[o].shape, a, sizeof a), gfx_shape_str(&want[o], b, sizeof b));
  }
  return NULL;
}

static gfx_status run_checked(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  cudaStream_t stream = (cudaStream_t)ctx->stream;
  const ir_layout_kind kind = ir_layout_kind_of(node->op);
  const int n_data = kind == IR_LAYOUT_PLANS && node->op == GFX_OP_CONCAT ? node->n_inputs
                     : kind == IR_LAYOUT_GATHER                           ? 2
                     : kind == IR_LAYOUT_COPY || kind == IR_LAYOUT_PLANS  ? 1
                                                                          : 0;
  GFX_TRY(check_tensors(node, in, n_data, out));
  gfx_shape in_shapes[IR_MAX_IO];
  for (int i = 0; i < node->n_inputs; i++) in_shapes[i] = i < n_data || kind == IR_LAYOUT_SHAPE ? in[i].shape : (gfx_shape){.rank = -1};
  if (kind != IR_LAYOUT_PLANS) GFX_TRY(check_out_shapes(node, in_shapes, out));
  const int es = (int)gfx_dtype_size(node->params.layout.dtype);
  GFX_TRY(cuda_use_device(ctx->dev->index));

  switch (kind) {
    case IR_LAYOUT_COPY: {
      const size_t bytes = (size_t)gfx_shape_numel(&out[0].shape) * (size_t)es;
      if (bytes == 0 || in[0].data == out[0].data) return NULL;
      return cuda_check(cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, stream),
                        "copy on device %d", ctx->dev->index);
    }
    case IR_LAYOUT_PLANS: {
      gfx_shape out_shapes[IR_MAX_IO];
      for (int o = 0; o < node->n_outputs; o++) out_shapes[o] = out[o].shape;
      const int n = ir_layout_plan_count(node);
      for (int k = 0; k < n; k++) {
        ir_copy_plan plan;
        GFX_TRY(ir_layout_plan(node, in_shapes, out_shapes, k, &plan));
        const void* src = node->op == GFX_OP_CONCAT ? in[k].data : in[0].data;
        void* dst = node->op == GFX_OP_SPLIT ? out[k].data : out[0].data;
        GFX_TRY(cuda_check(cuda_layout_run_plan(&plan, src, dst, stream), "copy plan %d on device %d", k, ctx->dev->index));
      }
      return NULL;
    }
    case IR_LAYOUT_GATHER: {
      ir_gather_geom g;
      GFX_TRY(ir_gather_geometry(node, &in[0].shape, &in[1].shape, &g));
      return cuda_check(cuda_layout_gather(in[0].data, in[1].data, in[1].dtype == GFX_DTYPE_I64, out[0].data, &g, es,
                                           stream),
                        "gather kernel on device %d", ctx->dev->index);
    }
    case IR_LAYOUT_SHAPE: {
      int64_t values[GFX_MAX_RANK];
      int n;
      ir_shape_values(node, &in[0].shape, values, &n);
      return cuda_check(cuda_layout_write_i64(out[0].data, values, n, stream), "shape kernel on device %d", ctx->dev->index);
    }
    case IR_LAYOUT_FILL:
      return cuda_check(cuda_layout_fill(out[0].data, gfx_shape_numel(&out[0].shape), node->params.layout.value, es,
                                         stream),
                        "fill kernel on device %d", ctx->dev->index);
  }
  return gfx_error(GFX_ERR_INTERNAL, "not a layout op");
}

gfx_status cuda_prepare_layout(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL; /* stateless; run checks the shapes */
}

gfx_status cuda_run_layout(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  (void)state;
  gfx_status s = run_checked(ctx, node, in, out);
  return s ? node_error(node, s) : NULL;
}

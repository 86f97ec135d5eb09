/* gfxep CUDA backend — host side of QuantizeLinear and DequantizeLinear: checks and launches
 * (kernels in cuda_quant.cu). Stateless: the geometry is a few integer operations per run and
 * travels by value; the scale and zero point are read from the node's inputs on the device. */
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_quant.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}

/* The types parse admits: Quantize float x and scale alike, int8/uint8 y and zero point;
 * Dequantize int8/uint8/int32 x and zero point, float scale and y alike. */
static gfx_status check_types(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int has_zp) {
  const int quantize = node->op == GFX_OP_QUANTIZE_LINEAR;
  const int f = quantize ? in[0].dtype : out[0].dtype, q = quantize ? out[0].dtype : in[0].dtype;
  const int q_ok = q == GFX_DTYPE_I8 || q == GFX_DTYPE_U8 || (!quantize && q == GFX_DTYPE_I32);
  if (!is_float_type(f) || !q_ok || in[1].dtype != f || (has_zp && in[2].dtype != q) ||
      out[0].dtype != node->params.quant.dtype)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "x %s, scale %s, zero point %s, y %s: not a pair of "
                                      "types this backend quantizes", gfx_dtype_name(in[0].dtype),
                                      gfx_dtype_name(in[1].dtype), has_zp ? gfx_dtype_name(in[2].dtype) : "absent",
                                      gfx_dtype_name(out[0].dtype)));
  return NULL;
}

gfx_status cuda_prepare_quant(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                              cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL; /* stateless; run derives the geometry and checks the shapes */
}

gfx_status cuda_run_quant(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_outputs != 1 || !in || !out)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 2..3 and 1",
                                      node->n_inputs, node->n_outputs));
  const int has_zp = node->n_inputs > 2 && node->inputs[2] >= 0;
  GFX_TRY(check_types(node, in, out, has_zp));
  ir_quant_geom g;
  gfx_status s = ir_quant_geometry(&node->params.quant, &in[0].shape, &in[1].shape, has_zp ? &in[2].shape : NULL, &g);
  if (s) return node_error(node, s);
  if (!gfx_shape_equal(&out[0].shape, &in[0].shape))
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "y's shape differs from x's"));
  if (g.count == 0) return NULL;
  if (!in[0].data || !in[1].data || (has_zp && !in[2].data) || !out[0].data)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "a tensor has no data"));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  const cuda_quant_args a = {.count = g.count, .len = g.len, .inner = g.inner, .per_axis = g.per_axis};
  const void* zp = has_zp ? in[2].data : NULL;
  cudaError_t err = node->op == GFX_OP_QUANTIZE_LINEAR
                        ? cuda_quantize(in[0].dtype, out[0].dtype, in[0].data, in[1].data, zp, out[0].data, a,
                                        (cudaStream_t)ctx->stream)
                        : cuda_dequantize(in[0].dtype, out[0].dtype, in[0].data, in[1].data, zp, out[0].data, a,
                                          (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

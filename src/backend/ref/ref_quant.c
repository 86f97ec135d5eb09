/* gfxep — reference kernels of QuantizeLinear and DequantizeLinear: plain C loops on host memory.
 *
 * Unlike the other reference kernels, these compute in float32, not double: the arithmetic is
 * ir_quantize / ir_dequantize (ir/ops_quant.h), the float32 operations ONNX Runtime's CPU kernels
 * perform, so that a quotient next to a rounding half lands on the same integer.
 */
#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"

/* x, scale, the optional zero point and y: concrete, with memory, the scale fitting x. */
static gfx_status check_quant_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int* has_zp,
                                 ir_quant_geom* g) {
  if (node->n_inputs < 2 || node->n_inputs > 3 || node->n_outputs != 1 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 2..3 and 1", node->n_inputs,
                     node->n_outputs);
  *has_zp = node->n_inputs > 2 && node->inputs[2] >= 0;
  GFX_TRY(ref_check_memory("x", &in[0]));
  GFX_TRY(ref_check_memory("the scale", &in[1]));
  if (*has_zp) GFX_TRY(ref_check_memory("the zero point", &in[2]));
  GFX_TRY(ref_check_memory("y", &out[0]));
  GFX_TRY(ir_quant_geometry(&node->params.quant, &in[0].shape, &in[1].shape, *has_zp ? &in[2].shape : NULL, g));
  GFX_TRY(ref_check_shape_is("y", &out[0].shape, &in[0].shape));
  if (out[0].dtype != node->params.quant.dtype)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "y is %s; %s is expected", gfx_dtype_name(out[0].dtype),
                     gfx_dtype_name(node->params.quant.dtype));
  if (*has_zp && in[2].dtype != (node->op == GFX_OP_QUANTIZE_LINEAR ? out[0].dtype : in[0].dtype))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the zero point is %s", gfx_dtype_name(in[2].dtype));
  return NULL;
}

static int64_t load_int(const void* base, int dtype, int64_t i) {
  switch (dtype) {
    case GFX_DTYPE_I8: return ((const int8_t*)base)[i];
    case GFX_DTYPE_U8: return ((const uint8_t*)base)[i];
    default: return ((const int32_t*)base)[i];
  }
}

gfx_status ref_run_quant(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  int has_zp = 0;
  ir_quant_geom g;
  GFX_TRY(check_quant_io(node, in, out, &has_zp, &g));
  const int quantize = node->op == GFX_OP_QUANTIZE_LINEAR;
  const int32_t lo = out[0].dtype == GFX_DTYPE_I8 ? -128 : 0, hi = out[0].dtype == GFX_DTYPE_I8 ? 127 : 255;
  for (int64_t e = 0; e < g.count; e++) {
    const int64_t c = g.per_axis ? e / g.inner % g.len : 0;
    const float scale = (float)ref_load(in[1].data, in[1].dtype, c);
    const int64_t zp = has_zp ? load_int(in[2].data, in[2].dtype, c) : 0;
    if (quantize) {
      const int32_t q = ir_quantize((float)ref_load(in[0].data, in[0].dtype, e), scale, (int32_t)zp, lo, hi);
      ref_store(out[0].data, out[0].dtype, e, q);
    } else {
      ref_store(out[0].data, out[0].dtype, e, ir_dequantize(load_int(in[0].data, in[0].dtype, e), scale, zp));
    }
  }
  return NULL;
}

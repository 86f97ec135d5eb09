/* gfxep — parse and shape functions of QuantizeLinear and DequantizeLinear (see ir/ops.def).
 *
 * Claimed: int8/uint8 quantized values (and int32 ones to dequantize), float32 values and scales
 * (float16 and bfloat16 from opset 19, the scale of the float operand's type), a scale and zero
 * point per tensor or per axis (opset 13 on). Left to ONNX Runtime: block quantization (opset 21's
 * block_size), the 4-bit, 16-bit and float8 types, quantizing int32 values.
 */
#include <string.h>

#include "ir/ops_common.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

static int present(const ir_node_desc* d, int i) {
  return i < d->n_inputs && d->input_dtypes[i] != GFX_DTYPE_UNDEFINED;
}

/* The scale's shape (and the zero point's, which must be the same) known at parse: one value, or
 * (opset 13 on) one per entry along the axis. */
static gfx_status check_scale(const ir_node_desc* d, int64_t axis) {
  const gfx_shape* s = &d->input_shapes[1];
  if (s->rank < 0) return IR_UNSUPPORTED(d, "the scale's shape is not known before run time");
  if (s->rank > 1) return IR_UNSUPPORTED(d, "the scale has rank %d; 0 or 1 is expected", s->rank);
  if (present(d, 2) && !gfx_shape_equal(&d->input_shapes[2], s))
    return IR_UNSUPPORTED(d, "the zero point's shape %s differs from the scale's %s", SHAPE_STR(&d->input_shapes[2]),
                          SHAPE_STR(s));
  const int64_t n = s->rank == 0 ? 1 : s->dims[0];
  if (n < 0) return IR_UNSUPPORTED(d, "the scale's length is not known before run time");
  if (s->rank == 0 || n == 1) return NULL; /* per tensor */
  if (d->since_version < 13) return IR_UNSUPPORTED(d, "a scale of %lld values before opset 13", (long long)n);
  const gfx_shape* x = &d->input_shapes[0];
  if (x->rank >= 0) {
    int a;
    GFX_TRY(ir_norm_axis(d, axis, x->rank, &a));
    if (x->dims[a] >= 0 && x->dims[a] != n)
      return IR_UNSUPPORTED(d, "a scale of %lld values for an axis of %lld", (long long)n, (long long)x->dims[a]);
  }
  return NULL;
}

/* axis (13+), block_size (21+, only 0), output_dtype (21+) and saturate (19+, for float8 only) */
static gfx_status read_common(const ir_node_desc* d, int quantize, int64_t* axis) {
  static const char* const attrs_10[] = {NULL};
  static const char* const attrs_13[] = {"axis", NULL};
  static const char* const q_attrs_19[] = {"axis", "saturate", NULL};
  static const char* const q_attrs_21[] = {"axis", "block_size", "output_dtype", "saturate", NULL};
  static const char* const dq_attrs_21[] = {"axis", "block_size", NULL};
  const int v = d->since_version;
  const char* const* known = v < 13 ? attrs_10 : v < 19 ? attrs_13 : !quantize ? (v < 21 ? attrs_13 : dq_attrs_21)
                             : v < 21 ? q_attrs_19 : q_attrs_21;
  GFX_TRY(ir_check_io(d, 2, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, known));
  int64_t block = 0;
  GFX_TRY(ir_attr_int(d, "block_size", 0, &block));
  if (block != 0) return IR_UNSUPPORTED(d, "block quantization (block_size = %lld) is not handled", (long long)block);
  GFX_TRY(ir_attr_int(d, "axis", 1, axis));
  return check_scale(d, *axis);
}

/* x float32 (float16/bfloat16 from opset 19) with a scale of its type; y int8 or uint8, the zero
 * point's type (uint8 without one). */
gfx_status ir_parse_quantize_linear(const ir_node_desc* d, ir_params* p) {
  int64_t axis;
  GFX_TRY(read_common(d, 1, &axis));
  const int xt = d->input_dtypes[0], yt = d->output_dtypes[0];
  const unsigned x_types = d->since_version >= 19 ? IR_TYPES_FLOAT : IR_TYPE_BIT(GFX_DTYPE_F32);
  if (!(x_types & IR_TYPE_BIT(xt)))
    return IR_UNSUPPORTED(d, "x is %s; %s is handled", gfx_dtype_name(xt),
                          d->since_version >= 19 ? "float32/float16/bfloat16" : "float32");
  if (d->input_dtypes[1] != xt)
    return IR_UNSUPPORTED(d, "the scale is %s but x is %s", gfx_dtype_name(d->input_dtypes[1]), gfx_dtype_name(xt));
  if (yt != GFX_DTYPE_I8 && yt != GFX_DTYPE_U8)
    return IR_UNSUPPORTED(d, "y is %s; int8 and uint8 are handled", gfx_dtype_name(yt));
  if (present(d, 2) && d->input_dtypes[2] != yt)
    return IR_UNSUPPORTED(d, "the zero point is %s but y is %s", gfx_dtype_name(d->input_dtypes[2]),
                          gfx_dtype_name(yt));
  memset(&p->quant, 0, sizeof p->quant);
  p->quant.axis = axis;
  p->quant.dtype = yt;
  return NULL;
}

/* x int8, uint8 or int32 with a zero point of its type; y float32, or (opset 19 on) the scale's
 * float16/bfloat16. */
gfx_status ir_parse_dequantize_linear(const ir_node_desc* d, ir_params* p) {
  int64_t axis;
  GFX_TRY(read_common(d, 0, &axis));
  const int xt = d->input_dtypes[0], st = d->input_dtypes[1], yt = d->output_dtypes[0];
  if (xt != GFX_DTYPE_I8 && xt != GFX_DTYPE_U8 && xt != GFX_DTYPE_I32)
    return IR_UNSUPPORTED(d, "x is %s; int8, uint8 and int32 are handled", gfx_dtype_name(xt));
  const unsigned s_types = d->since_version >= 19 ? IR_TYPES_FLOAT : IR_TYPE_BIT(GFX_DTYPE_F32);
  if (!(s_types & IR_TYPE_BIT(st))) return IR_UNSUPPORTED(d, "the scale is %s", gfx_dtype_name(st));
  if (yt != st) return IR_UNSUPPORTED(d, "y is %s but the scale is %s", gfx_dtype_name(yt), gfx_dtype_name(st));
  if (present(d, 2) && d->input_dtypes[2] != xt)
    return IR_UNSUPPORTED(d, "the zero point is %s but x is %s", gfx_dtype_name(d->input_dtypes[2]),
                          gfx_dtype_name(xt));
  memset(&p->quant, 0, sizeof p->quant);
  p->quant.axis = axis;
  p->quant.dtype = yt;
  return NULL;
}

gfx_status ir_quant_geometry(const ir_quant_params* p, const gfx_shape* x, const gfx_shape* scale,
                             const gfx_shape* zero_point, ir_quant_geom* g) {
  memset(g, 0, sizeof *g);
  if (x->rank < 0 || x->rank > GFX_MAX_RANK || scale->rank < 0 || scale->rank > 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "x %s with a scale %s", SHAPE_STR(x), SHAPE_STR(scale));
  if (zero_point && !gfx_shape_equal(zero_point, scale))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the zero point %s differs from the scale %s", SHAPE_STR(zero_point),
                     SHAPE_STR(scale));
  g->count = gfx_shape_numel(x);
  if (g->count < 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "x %s has no concrete size", SHAPE_STR(x));
  g->outer = g->len = g->inner = 1;
  const int64_t n = scale->rank == 0 ? 1 : scale->dims[0];
  if (scale->rank == 0 || n == 1) return NULL;
  if (p->axis < -x->rank || p->axis >= x->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is outside the rank of x %s", (long long)p->axis,
                     SHAPE_STR(x));
  const int a = (int)(p->axis < 0 ? p->axis + x->rank : p->axis);
  if (x->dims[a] != n)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "a scale of %lld values for axis %d of x %s", (long long)n, a,
                     SHAPE_STR(x));
  for (int i = 0; i < a; i++) g->outer *= x->dims[i];
  for (int i = a + 1; i < x->rank; i++) g->inner *= x->dims[i];
  g->len = n;
  g->per_axis = 1;
  return NULL;
}

/* y has x's shape; the scale must fit x. */
gfx_status ir_infer_quant(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_quant_geom g;
  const int has_zp = node->n_inputs > 2 && node->inputs[2] >= 0;
  GFX_TRY(ir_quant_geometry(&node->params.quant, &in[0], &in[1], has_zp ? &in[2] : NULL, &g));
  out[0] = in[0];
  return NULL;
}

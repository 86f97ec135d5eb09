/* gfxep — parse and shape functions of the logic ops (Not, And, Or, Xor), Mod, and of the scans,
 * generators and index ops that follow them in the op table (see ir/ops.def). */
#include <math.h>
#include <string.h>

#include "ir/ops_common.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

static const char* const no_attrs[] = {NULL};

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* ---- Not, And, Or, Xor ---- */

/* bool operands and a bool result; And/Or/Xor broadcast (opset 7 on), Not has one operand. */
gfx_status ir_parse_logic(const ir_node_desc* d, ir_params* p) {
  (void)p;
  const int unary = ir_op_from_name(d->op_type) == GFX_OP_NOT;
  GFX_TRY(ir_check_io(d, unary ? 1 : 2, unary ? 1 : 2, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  return ir_check_same_type(d, 0, d->n_inputs - 1, IR_TYPE_BIT(GFX_DTYPE_BOOL), NULL);
}

/* ---- Mod ---- */

/* Two operands of one type. fmod=0 is the integer remainder with the divisor's sign; ONNX forbids
 * it for floats (ONNX Runtime fails such a node), so a float Mod is taken only with fmod=1. The
 * integer types gfxep computes are int32 and int64; the other integer widths stay with ORT. */
gfx_status ir_parse_mod(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"fmod", NULL}));
  int64_t fmod = 0;
  GFX_TRY(ir_attr_int(d, "fmod", 0, &fmod));
  if (fmod != 0 && fmod != 1) return IR_UNSUPPORTED(d, "fmod = %lld; 0 or 1 is expected", (long long)fmod);
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT | IR_TYPES_INDEX, &dtype));
  if (fmod == 0 && !(IR_TYPES_INDEX & IR_TYPE_BIT(dtype)))
    return IR_UNSUPPORTED(d, "fmod = 0 with %s operands; ONNX defines it for integers only", gfx_dtype_name(dtype));
  memset(&p->index, 0, sizeof p->index);
  p->index.fmod = (int8_t)fmod;
  return NULL;
}

/* ---- CumSum ---- */

/* axis: a constant input of one int32/int64 value (0-D or [1]); a computed axis is left to ORT.
 * exclusive and reverse attributes; float types (float16/bfloat16 from opset 14, which the type
 * check of the model enforces) and int32/int64. */
gfx_status ir_parse_cumsum(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"exclusive", "reverse", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT | IR_TYPES_INDEX, NULL));
  if (!d->input_is_const[1]) return IR_UNSUPPORTED(d, "the axis (input 1) is computed at run time");
  int64_t axis[2];
  size_t n = 0;
  GFX_TRY(ir_const_ints(d, 1, axis, 2, &n));
  if (n != 1) return IR_UNSUPPORTED(d, "the axis input holds %zu values; one is expected", n);
  const int rank = d->input_shapes[0].rank;
  int unused;
  if (rank >= 0) GFX_TRY(ir_norm_axis(d, axis[0], rank, &unused));
  int64_t exclusive = 0, reverse = 0;
  GFX_TRY(ir_attr_int(d, "exclusive", 0, &exclusive));
  GFX_TRY(ir_attr_int(d, "reverse", 0, &reverse));
  if ((exclusive != 0 && exclusive != 1) || (reverse != 0 && reverse != 1))
    return IR_UNSUPPORTED(d, "exclusive = %lld, reverse = %lld; 0 or 1 is expected", (long long)exclusive,
                          (long long)reverse);
  memset(&p->index, 0, sizeof p->index);
  p->index.axis = axis[0];
  p->index.exclusive = (int8_t)exclusive;
  p->index.reverse = (int8_t)reverse;
  return NULL;
}

gfx_status ir_axis_geometry(const gfx_shape* s, int64_t axis, ir_axis_geom* g) {
  if (s->rank < 1 || axis < -s->rank || axis >= s->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d) of %s", (long long)axis, s->rank,
                     s->rank, SHAPE_STR(s));
  const int a = (int)(axis < 0 ? axis + s->rank : axis);
  g->outer = g->inner = 1;
  for (int i = 0; i < a; i++) g->outer *= s->dims[i];
  for (int i = a + 1; i < s->rank; i++) g->inner *= s->dims[i];
  g->len = s->dims[a];
  return NULL;
}

/* The output has x's shape; the axis must lie within its rank. */
gfx_status ir_infer_cumsum(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_axis_geom g;
  GFX_TRY(ir_axis_geometry(&in[0], node->params.index.axis, &g));
  out[0] = in[0];
  return NULL;
}

/* ---- Range ---- */

/* Range's element count is its output shape, which shape inference (which sees shapes, never
 * values) cannot compute from run-time inputs: gfxep takes a Range whose start, limit and delta are
 * all constants, and counts its elements here as ONNX Runtime does: ceil((limit - start) / delta)
 * in double after the subtraction in the element type, at least 0. float32, int32 and int64
 * (float64 and int16 stay with ORT). */
#define RANGE_COUNT_LIMIT ((int64_t)1 << 31)

static gfx_status range_scalar(const ir_node_desc* d, int i, int dtype, double* f, int64_t* v) {
  if (!d->input_is_const[i])
    return IR_UNSUPPORTED(d, "input %d is computed at run time; the output shape would depend on it", i);
  size_t n = 0;
  if (dtype == GFX_DTYPE_F32) {
    float x;
    GFX_TRY(ir_const_floats(d, i, &x, 1, &n));
    *f = x;
    *v = 0;
  } else {
    GFX_TRY(ir_const_ints(d, i, v, 1, &n));
    *f = (double)*v;
  }
  if (n != 1) return IR_UNSUPPORTED(d, "input %d holds %zu values; a scalar is expected", i, n);
  return NULL;
}

gfx_status ir_parse_range(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPE_BIT(GFX_DTYPE_F32) | IR_TYPES_INDEX, &dtype));
  double start, limit, delta;
  int64_t start_i, limit_i, delta_i;
  GFX_TRY(range_scalar(d, 0, dtype, &start, &start_i));
  GFX_TRY(range_scalar(d, 1, dtype, &limit, &limit_i));
  GFX_TRY(range_scalar(d, 2, dtype, &delta, &delta_i));
  if (delta == 0.0) return IR_UNSUPPORTED(d, "delta is 0");
  /* float32: limit - start rounds to float first, as in ORT's element-type arithmetic */
  const double span = dtype == GFX_DTYPE_F32 ? (double)((float)limit - (float)start) : limit - start;
  const double count = ceil(span / delta);
  if (!(count < (double)RANGE_COUNT_LIMIT))
    return IR_UNSUPPORTED(d, "%g elements; Range is taken below 2^31", count);
  memset(&p->index, 0, sizeof p->index);
  p->index.dtype = dtype;
  p->index.count = count > 0 ? (int64_t)count : 0;
  p->index.start = start, p->index.delta = delta;
  p->index.start_i = start_i, p->index.delta_i = delta_i;
  return NULL;
}

gfx_status ir_infer_range(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)in;
  memset(&out[0], 0, sizeof out[0]);
  out[0].rank = 1;
  out[0].dims[0] = node->params.index.count;
  return NULL;
}

/* ---- Trilu ---- */

/* Trilu moves elements of any handled type; k, when given, is a constant int64 scalar. */
#define TRILU_TYPES                                                                                            \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL) | IR_TYPE_BIT(GFX_DTYPE_U8) |                 \
   IR_TYPE_BIT(GFX_DTYPE_I8))

gfx_status ir_parse_trilu(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 1, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"upper", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, TRILU_TYPES, NULL));
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0 && rank < 2) return IR_UNSUPPORTED(d, "input 0 has rank %d; Trilu needs rank >= 2", rank);
  int64_t upper = 1, k = 0;
  GFX_TRY(ir_attr_int(d, "upper", 1, &upper));
  if (upper != 0 && upper != 1) return IR_UNSUPPORTED(d, "upper = %lld; 0 or 1 is expected", (long long)upper);
  if (d->n_inputs > 1 && d->input_dtypes[1] != GFX_DTYPE_UNDEFINED) {
    if (!d->input_is_const[1]) return IR_UNSUPPORTED(d, "k (input 1) is computed at run time");
    size_t n = 0;
    GFX_TRY(ir_const_ints(d, 1, &k, 1, &n));
    if (n != 1) return IR_UNSUPPORTED(d, "k holds %zu values; a scalar is expected", n);
  }
  memset(&p->index, 0, sizeof p->index);
  p->index.upper = (int8_t)upper;
  p->index.k = k;
  return NULL;
}

gfx_status ir_trilu_geometry(const gfx_shape* s, ir_trilu_geom* g) {
  if (s->rank < 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %s has rank below 2; Trilu needs matrices", SHAPE_STR(s));
  g->rows = s->dims[s->rank - 2];
  g->cols = s->dims[s->rank - 1];
  g->batch = 1;
  for (int i = 0; i < s->rank - 2; i++) g->batch *= s->dims[i];
  return NULL;
}

gfx_status ir_infer_trilu(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  ir_trilu_geom g;
  GFX_TRY(ir_trilu_geometry(&in[0], &g));
  out[0] = in[0];
  return NULL;
}

/* gfxep — QuantizeLinear and DequantizeLinear on their own: which nodes parse claims and which it
 * refuses (and why), the geometry of per-tensor and per-axis scales, and the arithmetic every
 * backend shares (rounding half to even, saturation, NaN).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/half.h"
#include "ir/fuse.h"
#include "ir/graph.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"
#include "ir_test_util.h"

/* x of x_type and shape x, a scale of s_type and shape s, a zero point of zp_type (none when
 * GFX_DTYPE_UNDEFINED) shaped like the scale, y of y_type. */
static ir_node_desc qdesc(const char* op, int opset, attr_table* t, int x_type, gfx_shape x, int s_type, gfx_shape s,
                          int zp_type, int y_type) {
  ir_node_desc d = desc_base(op, opset, "q", t, zp_type ? 3 : 2, x_type);
  d.input_shapes[0] = x;
  d.input_dtypes[1] = s_type;
  d.input_shapes[1] = s;
  if (zp_type) {
    d.input_dtypes[2] = zp_type;
    d.input_shapes[2] = s;
  }
  d.output_dtypes[0] = y_type;
  return d;
}

static void test_parse_quantize(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, axis0 = ATTRS(A_INT("axis", 0)), block = ATTRS(A_INT("block_size", 4));
  const int F32 = GFX_DTYPE_F32, F16 = GFX_DTYPE_F16, I8 = GFX_DTYPE_I8, U8 = GFX_DTYPE_U8;
  ir_node_desc d = qdesc("QuantizeLinear", 13, &none, F32, SHAPE(2, 3), F32, SHAPE(3), I8, I8);
  ir_params p = parse_ok(&d, GFX_OP_QUANTIZE_LINEAR);
  assert_true(p.quant.axis == 1 && p.quant.dtype == I8);
  d = qdesc("QuantizeLinear", 10, &none, F32, SHAPE(2, 3), F32, SHAPE(0), GFX_DTYPE_UNDEFINED, U8);
  d.input_shapes[1].rank = 0;
  parse_ok(&d, GFX_OP_QUANTIZE_LINEAR);
  /* per axis before opset 13, a scale that does not fit the axis */
  d = qdesc("QuantizeLinear", 10, &none, F32, SHAPE(2, 3), F32, SHAPE(3), U8, U8);
  parse_refused(&d, "before opset 13");
  d = qdesc("QuantizeLinear", 13, &axis0, F32, SHAPE(2, 3), F32, SHAPE(3), U8, U8);
  parse_refused(&d, "axis of 2");
  /* float16 x from opset 19, with a float16 scale */
  d = qdesc("QuantizeLinear", 13, &none, F16, SHAPE(2, 3), F16, SHAPE(1), U8, U8);
  parse_refused(&d, "float16");
  d = qdesc("QuantizeLinear", 19, &none, F16, SHAPE(2, 3), F16, SHAPE(1), U8, U8);
  parse_ok(&d, GFX_OP_QUANTIZE_LINEAR);
  d = qdesc("QuantizeLinear", 19, &none, F16, SHAPE(2, 3), F32, SHAPE(1), U8, U8);
  parse_refused(&d, "scale is float32");
  /* 16-bit outputs, block quantization, int32 x */
  d = qdesc("QuantizeLinear", 21, &none, F32, SHAPE(2, 3), F32, SHAPE(1), GFX_DTYPE_I64, GFX_DTYPE_I64);
  parse_refused(&d, "int8 and uint8");
  d = qdesc("QuantizeLinear", 21, &block, F32, SHAPE(2, 8), F32, SHAPE(2, 2), I8, I8);
  parse_refused(&d, "block");
  d = qdesc("QuantizeLinear", 13, &none, GFX_DTYPE_I32, SHAPE(2, 3), F32, SHAPE(1), I8, I8);
  parse_refused(&d, "x is int32");
  d = qdesc("QuantizeLinear", 13, &none, F32, SHAPE(2, 3), F32, SHAPE(1), U8, I8);
  parse_refused(&d, "zero point is uint8");
}

static void test_parse_dequantize(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, last = ATTRS(A_INT("axis", -1));
  const int F32 = GFX_DTYPE_F32, BF16 = GFX_DTYPE_BF16, I8 = GFX_DTYPE_I8, I32 = GFX_DTYPE_I32;
  ir_node_desc d = qdesc("DequantizeLinear", 13, &last, I8, SHAPE(2, 5), F32, SHAPE(5), I8, F32);
  ir_params p = parse_ok(&d, GFX_OP_DEQUANTIZE_LINEAR);
  assert_true(p.quant.axis == -1 && p.quant.dtype == F32);
  d = qdesc("DequantizeLinear", 10, &none, I32, SHAPE(4), F32, SHAPE(1), GFX_DTYPE_UNDEFINED, F32);
  parse_ok(&d, GFX_OP_DEQUANTIZE_LINEAR);
  d = qdesc("DequantizeLinear", 19, &none, GFX_DTYPE_U8, SHAPE(4), BF16, SHAPE(1), GFX_DTYPE_U8, BF16);
  parse_ok(&d, GFX_OP_DEQUANTIZE_LINEAR);
  d = qdesc("DequantizeLinear", 13, &none, GFX_DTYPE_I64, SHAPE(4), F32, SHAPE(1), GFX_DTYPE_I64, F32);
  parse_refused(&d, "x is int64");
  d = qdesc("DequantizeLinear", 13, &none, I8, SHAPE(4), BF16, SHAPE(1), I8, BF16);
  parse_refused(&d, "scale is bfloat16");
  d = qdesc("DequantizeLinear", 13, &none, I8, SHAPE(2, 3), F32, SHAPE(2, 3), I8, F32);
  parse_refused(&d, "rank 2");
  d = qdesc("DequantizeLinear", 13, &none, I8, SHAPE(2, 3), F32, SHAPE(3), I8, F32);
  d.input_shapes[2] = SHAPE(1);
  parse_refused(&d, "zero point's shape");
}

static void test_quant_geometry_and_math(void** unused) {
  (void)unused;
  ir_quant_params p = {.axis = 1, .dtype = GFX_DTYPE_I8};
  ir_quant_geom g;
  gfx_shape x = SHAPE(2, 3, 4), s = SHAPE(3), one = SHAPE(1);
  expect_ok(ir_quant_geometry(&p, &x, &s, &s, &g));
  assert_true(g.per_axis && g.len == 3 && g.inner == 4 && g.outer == 2 && g.count == 24);
  expect_ok(ir_quant_geometry(&p, &x, &one, NULL, &g));
  assert_false(g.per_axis);
  p.axis = 2;
  expect_error(ir_quant_geometry(&p, &x, &s, NULL, &g), GFX_ERR_INVALID_ARGUMENT, "axis 2", NULL);
  /* halves to even, saturation at both ends, NaN to the zero point */
  assert_int_equal(ir_quantize(5.0f, 2.0f, 0, -128, 127), 2);
  assert_int_equal(ir_quantize(7.0f, 2.0f, 0, -128, 127), 4);
  assert_int_equal(ir_quantize(-5.0f, 2.0f, 1, -128, 127), -1);
  assert_int_equal(ir_quantize(1000.0f, 1.0f, 0, -128, 127), 127);
  assert_int_equal(ir_quantize(-1000.0f, 1.0f, 10, 0, 255), 0);
  assert_int_equal(ir_quantize(INFINITY, 1.0f, 0, 0, 255), 255);
  assert_int_equal(ir_quantize(0.0f, 0.0f, 7, 0, 255), 7);
  assert_true(ir_dequantize(-128, 0.5f, 2) == -65.0f);
  assert_true(ir_dequantize(2147483647, 1.0f, 0) == 2147483648.0f);
}

/* A graph DequantizeLinear(w: int8 [2, 3] constant, scale [2] and zero point [2] per axis 0) ->
 * Mul(x, .) -> y, the DequantizeLinear's output of type dtype. */
typedef struct dq_graph {
  ir_graph* g;
  int x, w, scale, zp, dq, y;
} dq_graph;

static dq_graph dq_graph_new(int dtype, int w_const) {
  dq_graph d = {.g = ir_graph_new()};
  assert_non_null(d.g);
  const gfx_shape s23 = SHAPE(2, 3), s2 = SHAPE(2);
  expect_ok(ir_graph_add_value(d.g, "x", dtype, &s23, &d.x));
  expect_ok(ir_graph_add_value(d.g, "w", GFX_DTYPE_I8, &s23, &d.w));
  expect_ok(ir_graph_add_value(d.g, "scale", dtype, &s2, &d.scale));
  expect_ok(ir_graph_add_value(d.g, "zp", GFX_DTYPE_I8, &s2, &d.zp));
  expect_ok(ir_graph_add_value(d.g, "dq", dtype, &s23, &d.dq));
  expect_ok(ir_graph_add_value(d.g, "y", dtype, &s23, &d.y));
  expect_ok(ir_graph_add_input(d.g, d.x));
  const int8_t w[6] = {-128, 0, 5, 127, -3, 2}, zp[2] = {2, -1};
  if (w_const)
    expect_ok(ir_graph_set_constant(d.g, d.w, w, sizeof w));
  else
    expect_ok(ir_graph_add_input(d.g, d.w));
  const float scale[2] = {0.5f, 0.3f};
  if (dtype == GFX_DTYPE_F32) {
    expect_ok(ir_graph_set_constant(d.g, d.scale, scale, sizeof scale));
  } else {
    const uint16_t h[2] = {gfx_float_to_half(scale[0]), gfx_float_to_half(scale[1])};
    expect_ok(ir_graph_set_constant(d.g, d.scale, h, sizeof h));
  }
  expect_ok(ir_graph_set_constant(d.g, d.zp, zp, sizeof zp));
  ir_params p;
  memset(&p, 0, sizeof p);
  p.quant.axis = 0;
  p.quant.dtype = dtype;
  const int dq_in[3] = {d.w, d.scale, d.zp}, mul_in[2] = {d.x, d.dq};
  expect_ok(ir_graph_add_node(d.g, GFX_OP_DEQUANTIZE_LINEAR, "dq", dq_in, 3, &d.dq, 1, &p));
  memset(&p, 0, sizeof p);
  expect_ok(ir_graph_add_node(d.g, GFX_OP_MUL, "mul", mul_in, 2, &d.y, 1, &p));
  return d;
}

/* DequantizeLinear of constants becomes the float constant it computes (per axis, with its zero
 * point, rounded once to float16), its int8 inputs are no longer uploaded; a DequantizeLinear whose
 * x is computed, or whose output is a graph output, stays a node. */
static void test_fold_constant_dequantize(void** unused) {
  (void)unused;
  /* (w - zp) * scale, row 0 with (0.5, 2), row 1 with (0.3, -1), in float32 */
  const float want[6] = {-65.0f, -1.0f, 1.5f, 128.0f * 0.3f, -2.0f * 0.3f, 3.0f * 0.3f};
  dq_graph d = dq_graph_new(GFX_DTYPE_F32, 1);
  expect_ok(ir_graph_add_output(d.g, d.y));
  expect_ok(ir_fuse(d.g));
  assert_int_equal(d.g->n_nodes, 1);
  assert_int_equal(d.g->nodes[0].op, GFX_OP_MUL);
  assert_int_equal(d.g->nodes[0].inputs[1], d.dq);
  assert_int_equal(d.g->values[d.dq].producer, -1);
  assert_int_equal(d.g->values[d.dq].const_bytes, sizeof want);
  assert_memory_equal(d.g->values[d.dq].const_data, want, sizeof want);
  assert_null(d.g->values[d.w].const_data); /* nobody reads the int8 weights any more */
  assert_null(d.g->values[d.zp].const_data);
  ir_graph_free(d.g);

  /* float16: the scale as float16 (0.3 -> 0.2999...), the product rounded once to float16 */
  d = dq_graph_new(GFX_DTYPE_F16, 1);
  expect_ok(ir_graph_add_output(d.g, d.y));
  expect_ok(ir_fuse(d.g));
  assert_int_equal(d.g->n_nodes, 1);
  const uint16_t* h = d.g->values[d.dq].const_data;
  assert_non_null(h);
  const float s1 = gfx_half_to_float(gfx_float_to_half(0.3f));
  assert_int_equal(h[0], gfx_float_to_half(-65.0f));
  assert_int_equal(h[3], gfx_float_to_half(128.0f * s1));
  assert_int_equal(h[4], gfx_float_to_half(-2.0f * s1));
  ir_graph_free(d.g);

  /* computed weights: the node stays */
  d = dq_graph_new(GFX_DTYPE_F32, 0);
  expect_ok(ir_graph_add_output(d.g, d.y));
  expect_ok(ir_fuse(d.g));
  assert_int_equal(d.g->n_nodes, 2);
  ir_graph_free(d.g);

  /* the DequantizeLinear's output is a graph output: the Run must write it, the node stays */
  d = dq_graph_new(GFX_DTYPE_F32, 1);
  expect_ok(ir_graph_add_output(d.g, d.y));
  expect_ok(ir_graph_add_output(d.g, d.dq));
  expect_ok(ir_fuse(d.g));
  assert_int_equal(d.g->n_nodes, 2);
  assert_non_null(d.g->values[d.w].const_data);
  ir_graph_free(d.g);
}

/* QuantizeLinear -> DequantizeLinear of float weights (a quantization-aware model as PyTorch exports
 * it): both fold, the QuantizeLinear rounding half to even and saturating as the kernels do. */
static void test_fold_constant_quantize_dequantize(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  assert_non_null(g);
  const gfx_shape s23 = SHAPE(2, 3), s2 = SHAPE(2);
  int x, w, scale, zp, q, dq, y;
  expect_ok(ir_graph_add_value(g, "x", GFX_DTYPE_F32, &s23, &x));
  expect_ok(ir_graph_add_value(g, "w", GFX_DTYPE_F32, &s23, &w));
  expect_ok(ir_graph_add_value(g, "scale", GFX_DTYPE_F32, &s2, &scale));
  expect_ok(ir_graph_add_value(g, "zp", GFX_DTYPE_I8, &s2, &zp));
  expect_ok(ir_graph_add_value(g, "q", GFX_DTYPE_I8, &s23, &q));
  expect_ok(ir_graph_add_value(g, "dq", GFX_DTYPE_F32, &s23, &dq));
  expect_ok(ir_graph_add_value(g, "y", GFX_DTYPE_F32, &s23, &y));
  expect_ok(ir_graph_add_input(g, x));
  const float wv[6] = {0.26f, -1.0f, 0.74f, 100.0f, -0.3f, 0.1f}, sv[2] = {0.5f, 0.2f};
  const int8_t zv[2] = {0, 3};
  expect_ok(ir_graph_set_constant(g, w, wv, sizeof wv));
  expect_ok(ir_graph_set_constant(g, scale, sv, sizeof sv));
  expect_ok(ir_graph_set_constant(g, zp, zv, sizeof zv));
  ir_params p;
  memset(&p, 0, sizeof p);
  p.quant.axis = 0;
  p.quant.dtype = GFX_DTYPE_I8;
  const int q_in[3] = {w, scale, zp}, dq_in[3] = {q, scale, zp}, mul_in[2] = {x, dq};
  expect_ok(ir_graph_add_node(g, GFX_OP_QUANTIZE_LINEAR, "q", q_in, 3, &q, 1, &p));
  p.quant.dtype = GFX_DTYPE_F32;
  expect_ok(ir_graph_add_node(g, GFX_OP_DEQUANTIZE_LINEAR, "dq", dq_in, 3, &dq, 1, &p));
  memset(&p, 0, sizeof p);
  expect_ok(ir_graph_add_node(g, GFX_OP_MUL, "mul", mul_in, 2, &y, 1, &p));
  expect_ok(ir_graph_add_output(g, y));
  expect_ok(ir_fuse(g));
  assert_int_equal(g->n_nodes, 1);
  assert_int_equal(g->nodes[0].op, GFX_OP_MUL);
  /* row 0 (0.5, 0): 0.52 -> 1, -2, 1.48 -> 1; row 1 (0.2, 3): 500 + 3 saturates at 127, -1.5 -> -2
   * (half to even) + 3 = 1, 0.5 -> 0 + 3 = 3 */
  const float want[6] = {0.5f, -1.0f, 0.5f, 124.0f * 0.2f, -2.0f * 0.2f, 0.0f};
  assert_non_null(g->values[dq].const_data);
  assert_memory_equal(g->values[dq].const_data, want, sizeof want);
  assert_null(g->values[w].const_data);
  assert_null(g->values[q].const_data); /* the int8 step in between is not uploaded either */
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_quantize),
      cmocka_unit_test(test_parse_dequantize),
      cmocka_unit_test(test_quant_geometry_and_math),
      cmocka_unit_test(test_fold_constant_dequantize),
      cmocka_unit_test(test_fold_constant_quantize_dequantize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

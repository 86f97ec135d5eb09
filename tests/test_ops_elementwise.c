/* gfxep — the element-wise ops: which nodes their parse functions claim or refuse, their shape
 * rules, and their reference kernels on small cases worked out by hand, in float32, float16,
 * bfloat16, int32, int64 and bool.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/registry.h"
#include "core/half.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "ir_test_util.h"

/* ---- helpers ---- */

#define NODE_NAME "ew_node"

/* A node of the default domain at `opset` with n_inputs inputs and one output, all of `dtype`,
 * every input of shape [2, 3]. */
static ir_node_desc desc_of(const char* op_type, int opset, attr_table* t, int n_inputs, int dtype) {
  ir_node_desc d = desc_base(op_type, opset, NODE_NAME, t, n_inputs, dtype);
  for (int i = 0; i < n_inputs; i++) d.input_shapes[i] = SHAPE(2, 3);
  return d;
}

/* Makes input i a float32 constant holding `values`. */
static void set_const(ir_node_desc* d, int i, const float* values, int n) {
  d->input_dtypes[i] = GFX_DTYPE_F32;
  d->input_shapes[i] = n == 1 ? SCALAR : SHAPE(n);
  d->input_is_const[i] = 1;
  d->input_const_data[i] = values;
  d->input_const_bytes[i] = sizeof(float) * (size_t)n;
}

/* ---- parse: claimed ---- */

static void test_parse_unary_attributes(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  ir_node_desc d = desc_of("LeakyRelu", 16, &t, 1, GFX_DTYPE_F32);
  assert_true(fabsf(parse_ok(&d, GFX_OP_LEAKY_RELU).elementwise.alpha - 0.01f) < 1e-9f);
  t = ATTRS(A_FLOAT("alpha", 0.3f));
  d = desc_of("LeakyRelu", 16, &t, 1, GFX_DTYPE_F16);
  assert_true(parse_ok(&d, GFX_OP_LEAKY_RELU).elementwise.alpha == 0.3f);

  t = NO_ATTRS;
  d = desc_of("HardSigmoid", 6, &t, 1, GFX_DTYPE_BF16);
  ir_params p = parse_ok(&d, GFX_OP_HARD_SIGMOID);
  assert_true(p.elementwise.alpha == 0.2f && p.elementwise.beta == 0.5f);
  d = desc_of("Selu", 6, &t, 1, GFX_DTYPE_F32);
  p = parse_ok(&d, GFX_OP_SELU);
  assert_true(fabsf(p.elementwise.alpha - 1.6732632f) < 1e-6f && fabsf(p.elementwise.gamma - 1.0507010f) < 1e-6f);

  d = desc_of("Gelu", 20, &t, 1, GFX_DTYPE_F32);
  assert_int_equal(parse_ok(&d, GFX_OP_GELU).elementwise.gelu_tanh, 0);
  t = ATTRS(A_STR("approximate", "tanh"));
  d = desc_of("Gelu", 20, &t, 1, GFX_DTYPE_F32);
  assert_int_equal(parse_ok(&d, GFX_OP_GELU).elementwise.gelu_tanh, 1);

  /* integers where exact */
  t = NO_ATTRS;
  d = desc_of("Neg", 13, &t, 1, GFX_DTYPE_I64);
  parse_ok(&d, GFX_OP_NEG);
  d = desc_of("Abs", 13, &t, 1, GFX_DTYPE_I32);
  parse_ok(&d, GFX_OP_ABS);
  d = desc_of("Identity", 16, &t, 1, GFX_DTYPE_BOOL);
  parse_ok(&d, GFX_OP_IDENTITY);
}

static void test_parse_clip(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  const float lo = -0.5f, hi = 2.0f;
  ir_node_desc d = desc_of("Clip", 13, &t, 3, GFX_DTYPE_F32);
  set_const(&d, 1, &lo, 1);
  set_const(&d, 2, &hi, 1);
  ir_params p = parse_ok(&d, GFX_OP_CLIP);
  assert_true(p.elementwise.has_min && p.elementwise.has_max && p.elementwise.min == lo && p.elementwise.max == hi);

  /* min absent (empty name), max present */
  d = desc_of("Clip", 13, &t, 3, GFX_DTYPE_F32);
  d.input_dtypes[1] = GFX_DTYPE_UNDEFINED;
  set_const(&d, 2, &hi, 1);
  p = parse_ok(&d, GFX_OP_CLIP);
  assert_true(!p.elementwise.has_min && p.elementwise.has_max);
  /* no bounds at all */
  d = desc_of("Clip", 12, &t, 1, GFX_DTYPE_F32);
  p = parse_ok(&d, GFX_OP_CLIP);
  assert_true(!p.elementwise.has_min && !p.elementwise.has_max);

  /* Clip-6: attributes */
  t = ATTRS(A_FLOAT("min", -1.0f), A_FLOAT("max", 1.0f));
  d = desc_of("Clip", 6, &t, 1, GFX_DTYPE_F32);
  p = parse_ok(&d, GFX_OP_CLIP);
  assert_true(p.elementwise.min == -1.0f && p.elementwise.max == 1.0f);
}

static void test_parse_binary_types(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  ir_node_desc d = desc_of("Add", 14, &t, 2, GFX_DTYPE_I64);
  parse_ok(&d, GFX_OP_ADD);
  d = desc_of("Mul", 14, &t, 2, GFX_DTYPE_BF16);
  parse_ok(&d, GFX_OP_MUL);
  d = desc_of("Min", 13, &t, 3, GFX_DTYPE_I32);
  parse_ok(&d, GFX_OP_MIN);
  d = desc_of("Sum", 13, &t, 8, GFX_DTYPE_F16);
  parse_ok(&d, GFX_OP_SUM);
  d = desc_of("Mean", 13, &t, 1, GFX_DTYPE_F32);
  parse_ok(&d, GFX_OP_MEAN);
  d = desc_of("Pow", 15, &t, 2, GFX_DTYPE_F32);
  d.input_dtypes[1] = GFX_DTYPE_I64;
  parse_ok(&d, GFX_OP_POW);
  d = desc_of("Equal", 13, &t, 2, GFX_DTYPE_I64);
  d.output_dtypes[0] = GFX_DTYPE_BOOL;
  parse_ok(&d, GFX_OP_EQUAL);
  d = desc_of("PRelu", 16, &t, 2, GFX_DTYPE_F32);
  parse_ok(&d, GFX_OP_PRELU);
  d = desc_of("Where", 16, &t, 3, GFX_DTYPE_I64);
  d.input_dtypes[0] = GFX_DTYPE_BOOL;
  parse_ok(&d, GFX_OP_WHERE);
}

static void test_parse_cast_batchnorm(void** unused) {
  (void)unused;
  attr_table t = ATTRS(A_INT("to", GFX_DTYPE_I64));
  ir_node_desc d = desc_of("Cast", 13, &t, 1, GFX_DTYPE_F16);
  d.output_dtypes[0] = GFX_DTYPE_I64;
  parse_ok(&d, GFX_OP_CAST);
  t = ATTRS(A_INT("to", GFX_DTYPE_BF16), A_INT("saturate", 1));
  d = desc_of("Cast", 19, &t, 1, GFX_DTYPE_BOOL);
  d.output_dtypes[0] = GFX_DTYPE_BF16;
  parse_ok(&d, GFX_OP_CAST);
  /* a Cast to float32 in a partition computed in float16: its output is float16, 'to' still says
   * float32; parsed as a Cast to float16 there only */
  t = ATTRS(A_INT("to", GFX_DTYPE_F32));
  d = desc_of("Cast", 13, &t, 1, GFX_DTYPE_I64);
  d.output_dtypes[0] = GFX_DTYPE_F16;
  parse_refused(&d, "'to'");
  d.lowered_to = GFX_DTYPE_F16;
  parse_ok(&d, GFX_OP_CAST);
  d.output_dtypes[0] = GFX_DTYPE_BF16; /* lowered to float16, not bfloat16 */
  parse_refused(&d, "'to'");

  t = ATTRS(A_FLOAT("epsilon", 1e-3f), A_FLOAT("momentum", 0.9f), A_INT("training_mode", 0));
  d = desc_of("BatchNormalization", 15, &t, 5, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(2, 3, 4, 4);
  for (int i = 1; i < 5; i++) d.input_shapes[i] = SHAPE(3);
  assert_true(parse_ok(&d, GFX_OP_BATCH_NORM).elementwise.epsilon == 1e-3f);
}

/* ---- parse: refused ---- */

static void test_parse_refuses(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  /* integer Div: division by zero is ORT's error, so only constant divisors without zeros */
  ir_node_desc d = desc_of("Div", 14, &t, 2, GFX_DTYPE_I32);
  parse_refused(&d, "an integer divisor computed at run time");
  static const int32_t divisors[] = {3, 0, -1};
  d.input_is_const[1] = 1;
  d.input_const_data[1] = divisors;
  d.input_const_bytes[1] = sizeof divisors;
  parse_refused(&d, "divisor entry 1 is 0");
  static const int32_t nonzero[] = {3, 7, -1};
  d.input_const_data[1] = nonzero;
  (void)parse_ok(&d, GFX_OP_DIV);
  d.input_dtypes[1] = GFX_DTYPE_I64; /* mixed integer types */
  parse_refused(&d, "int64");
  d = desc_of("Relu", 14, &t, 1, GFX_DTYPE_I32);
  parse_refused(&d, "int32");
  d = desc_of("Sum", 13, &t, 2, GFX_DTYPE_I64);
  parse_refused(&d, "int64");
  d = desc_of("Add", 14, &t, 2, GFX_DTYPE_F32);
  d.input_dtypes[1] = GFX_DTYPE_F16;
  parse_refused(&d, "float16");
  d = desc_of("Pow", 15, &t, 2, GFX_DTYPE_I64); /* integer base */
  parse_refused(&d, "int64");
  d = desc_of("Greater", 13, &t, 2, GFX_DTYPE_F32); /* float output */
  parse_refused(&d, "bool");
  d = desc_of("Equal", 13, &t, 2, GFX_DTYPE_BOOL);
  parse_refused(&d, "bool");
  d = desc_of("Where", 16, &t, 3, GFX_DTYPE_F32); /* float condition */
  parse_refused(&d, "input 0");
  d = desc_of("Sum", 13, &t, 0, GFX_DTYPE_F32);
  parse_refused(&d, "0 inputs");
  d = desc_of("Softplus", 1, &t, 1, GFX_DTYPE_F32);
  d.input_dtypes[0] = d.output_dtypes[0] = 11; /* double */
  parse_refused(&d, "output 0");

  t = ATTRS(A_STR("approximate", "fast"));
  d = desc_of("Gelu", 20, &t, 1, GFX_DTYPE_F32);
  parse_refused(&d, "'fast'");
  t = ATTRS(A_FLOAT("alpha", 1.0f));
  d = desc_of("Sigmoid", 13, &t, 1, GFX_DTYPE_F32);
  parse_refused(&d, "'alpha'");

  /* Clip bounds: computed at run time, or more than one value */
  t = NO_ATTRS;
  d = desc_of("Clip", 13, &t, 2, GFX_DTYPE_F32);
  parse_refused(&d, "constant");
  const float two[2] = {0, 1};
  d = desc_of("Clip", 13, &t, 2, GFX_DTYPE_F32);
  set_const(&d, 1, two, 2);
  parse_refused(&d, "2 values");
  /* Clip-6 takes no inputs beyond x */
  d = desc_of("Clip", 6, &t, 3, GFX_DTYPE_F32);
  parse_refused(&d, "3 inputs");

  t = ATTRS(A_INT("to", 11));
  d = desc_of("Cast", 13, &t, 1, GFX_DTYPE_F32);
  d.output_dtypes[0] = 11; /* double */
  parse_refused(&d, "output 0");
  t = ATTRS(A_INT("to", GFX_DTYPE_I32));
  d = desc_of("Cast", 13, &t, 1, GFX_DTYPE_F32);
  d.output_dtypes[0] = GFX_DTYPE_I64;
  parse_refused(&d, "'to'");
  t = ATTRS(A_INT("to", GFX_DTYPE_I32), A_STR("round_mode", "up"));
  d = desc_of("Cast", 24, &t, 1, GFX_DTYPE_F32);
  d.output_dtypes[0] = GFX_DTYPE_I32;
  parse_refused(&d, "'round_mode'");

  t = ATTRS(A_INT("training_mode", 1));
  d = desc_of("BatchNormalization", 15, &t, 5, GFX_DTYPE_F32);
  parse_refused(&d, "training_mode");
  t = NO_ATTRS;
  d = desc_of("BatchNormalization", 15, &t, 5, GFX_DTYPE_F32);
  d.n_outputs = 3;
  d.output_dtypes[1] = d.output_dtypes[2] = GFX_DTYPE_F32;
  parse_refused(&d, "3 outputs");
  d = desc_of("BatchNormalization", 15, &t, 5, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(6);
  parse_refused(&d, "rank 1");
  d = desc_of("BatchNormalization", 15, &t, 5, GFX_DTYPE_F32);
  d.input_dtypes[3] = GFX_DTYPE_F16; /* mixed parameter types (opset 15's T2) */
  parse_refused(&d, "float16");
  d = desc_of("BatchNormalization", 7, &t, 5, GFX_DTYPE_F32); /* 'spatial' era */
  parse_refused(&d, "opset");
}

/* ---- shape rules ---- */

static void test_infer(void** unused) {
  (void)unused;
  gfx_shape out[1];
  ir_node sum = node_of(GFX_OP_SUM, 3);
  gfx_shape in3[3] = {SHAPE(2, 1, 4), SHAPE(3, 1), SHAPE(4)};
  expect_ok(ir_infer_broadcast_all(&sum, in3, out));
  gfx_shape want = SHAPE(2, 3, 4);
  assert_true(gfx_shape_equal(&out[0], &want));
  in3[2] = SHAPE(5);
  expect_error(ir_infer_broadcast_all(&sum, in3, out), GFX_ERR_INVALID_ARGUMENT, "input 2", "5", NULL);
  /* a broadcast too large to address */
  gfx_shape huge[2] = {SHAPE((int64_t)1 << 32, 1), SHAPE(1, 4)};
  ir_node add = node_of(GFX_OP_ADD, 2);
  expect_error(ir_infer_broadcast_all(&add, huge, out), GFX_ERR_INVALID_ARGUMENT, "2^31", NULL);

  ir_node prelu = node_of(GFX_OP_PRELU, 2);
  gfx_shape pin[2] = {SHAPE(2, 3, 4), SHAPE(3, 1)};
  expect_ok(ir_infer_prelu(&prelu, pin, out));
  assert_true(gfx_shape_equal(&out[0], &pin[0]));
  pin[0] = SHAPE(3, 1);
  pin[1] = SHAPE(4);
  expect_error(ir_infer_prelu(&prelu, pin, out), GFX_ERR_INVALID_ARGUMENT, "slope", NULL);

  ir_node bn = node_of(GFX_OP_BATCH_NORM, 5);
  gfx_shape bin[5] = {SHAPE(2, 3, 5), SHAPE(3), SHAPE(3), SHAPE(3), SHAPE(4)};
  expect_error(ir_infer_batchnorm(&bn, bin, out), GFX_ERR_INVALID_ARGUMENT, "var", "[4]", NULL);
  bin[4] = SHAPE(3);
  expect_ok(ir_infer_batchnorm(&bn, bin, out));
  assert_true(gfx_shape_equal(&out[0], &bin[0]));
}

/* ---- reference kernels ---- */

static gfx_status run(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {.dev = gfx_reference_device(), .stream = NULL, .scratch = NULL, .scratch_bytes = 0};
  return gfx_backend_reference()->node_run(&ctx, node, in, out, NULL);
}

static void expect_near(const float* expected, const float* actual, int n, float tol) {
  for (int i = 0; i < n; i++) {
    int ok = isnan(expected[i]) ? isnan(actual[i]) : fabsf(expected[i] - actual[i]) <= tol;
    if (!ok) print_error("element %d: expected %.9g, got %.9g\n", i, expected[i], actual[i]);
    assert_true(ok);
  }
}

static void test_ref_unary_f32(void** unused) {
  (void)unused;
  float x[6] = {-3.0f, -0.5f, 0.0f, 0.5f, 2.0f, NAN}, y[6];
  gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(6)), out = tensor_of(y, GFX_DTYPE_F32, SHAPE(6));
  ir_node n = node_of(GFX_OP_LEAKY_RELU, 1);
  n.params.elementwise.alpha = 0.1f;
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){-0.3f, -0.05f, 0, 0.5f, 2, NAN}, y, 6, 1e-7f);

  n = node_of(GFX_OP_HARD_SIGMOID, 1);
  n.params.elementwise.alpha = 0.2f;
  n.params.elementwise.beta = 0.5f;
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){0, 0.4f, 0.5f, 0.6f, 0.9f, NAN}, y, 6, 1e-7f); /* NaN stays NaN, as in ORT */

  n = node_of(GFX_OP_HARD_SWISH, 1);
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){0, -0.5f * (2.5f / 6), 0, 0.5f * (3.5f / 6), 2 * (5.0f / 6), NAN}, y, 6, 1e-6f);

  n = node_of(GFX_OP_CLIP, 1);
  n.params.elementwise.has_min = 1;
  n.params.elementwise.min = -1.0f; /* no upper bound */
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){-1, -0.5f, 0, 0.5f, 2, NAN}, y, 6, 0);

  n = node_of(GFX_OP_GELU, 1);
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){-0.00404969f, -0.15426877f, 0, 0.34573123f, 1.95449974f, NAN}, y, 6, 1e-6f);
  n.params.elementwise.gelu_tanh = 1;
  expect_ok(run(&n, &in, &out));
  expect_near((float[]){-0.00363752f, -0.15428599f, 0, 0.34571401f, 1.95459769f, NAN}, y, 6, 1e-6f);

  /* Softplus and Sigmoid stay finite and exact far out */
  float big[4] = {-200.0f, -30.0f, 30.0f, 200.0f}, r[4];
  gfx_tensor bin = tensor_of(big, GFX_DTYPE_F32, SHAPE(4)), bout = tensor_of(r, GFX_DTYPE_F32, SHAPE(4));
  n = node_of(GFX_OP_SOFTPLUS, 1);
  expect_ok(run(&n, &bin, &bout));
  expect_near((float[]){0, 9.35762297e-14f, 30, 200}, r, 4, 1e-6f);
  n = node_of(GFX_OP_SIGMOID, 1);
  expect_ok(run(&n, &bin, &bout));
  expect_near((float[]){0, 9.35762297e-14f, 1, 1}, r, 4, 1e-7f);
}

static void test_ref_unary_half_types(void** unused) {
  (void)unused;
  const float xs[4] = {-2.0f, -0.25f, 0.75f, 3.0f};
  uint16_t h[4], b[4], hy[4], by[4];
  for (int i = 0; i < 4; i++) {
    h[i] = gfx_float_to_half(xs[i]);
    b[i] = gfx_float_to_bf16(xs[i]);
  }
  ir_node n = node_of(GFX_OP_ELU, 1);
  n.params.elementwise.alpha = 1.0f;
  gfx_tensor in = tensor_of(h, GFX_DTYPE_F16, SHAPE(4)), out = tensor_of(hy, GFX_DTYPE_F16, SHAPE(4));
  expect_ok(run(&n, &in, &out));
  in = tensor_of(b, GFX_DTYPE_BF16, SHAPE(4));
  out = tensor_of(by, GFX_DTYPE_BF16, SHAPE(4));
  expect_ok(run(&n, &in, &out));
  for (int i = 0; i < 4; i++) {
    float want = xs[i] < 0 ? expm1f(xs[i]) : xs[i];
    /* one rounding of the exact result: the nearest representable value */
    assert_int_equal(hy[i], gfx_float_to_half(want));
    assert_int_equal(by[i], gfx_float_to_bf16(want));
  }
  /* the output type must be the input's */
  out = tensor_of(hy, GFX_DTYPE_F16, SHAPE(4));
  expect_error(run(&n, &in, &out), GFX_ERR_NOT_SUPPORTED, "output 0", "float16", NULL);
}

static void test_ref_binary_broadcast(void** unused) {
  (void)unused;
  /* bf16 [2,1,3] - [2,1] -> [2,2,3] */
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[2] = {0.5f, -1};
  uint16_t ab[6], bb[2], yb[12];
  for (int i = 0; i < 6; i++) ab[i] = gfx_float_to_bf16(a[i]);
  for (int i = 0; i < 2; i++) bb[i] = gfx_float_to_bf16(b[i]);
  gfx_tensor in[2] = {tensor_of(ab, GFX_DTYPE_BF16, SHAPE(2, 1, 3)), tensor_of(bb, GFX_DTYPE_BF16, SHAPE(2, 1))};
  gfx_tensor out = tensor_of(yb, GFX_DTYPE_BF16, SHAPE(2, 2, 3));
  ir_node n = node_of(GFX_OP_SUB, 2);
  expect_ok(run(&n, in, &out));
  for (int i = 0; i < 12; i++) {
    int batch = i / 6, row = i / 3 % 2, col = i % 3;
    assert_true(gfx_bf16_to_float(yb[i]) == a[batch * 3 + col] - b[row]);
  }

  /* fp16 Mean of three, with a scalar */
  uint16_t p[3], q[3], s[1], m[3];
  for (int i = 0; i < 3; i++) {
    p[i] = gfx_float_to_half((float)i);
    q[i] = gfx_float_to_half(10.0f * i);
  }
  s[0] = gfx_float_to_half(2.0f);
  gfx_tensor in3[3] = {tensor_of(p, GFX_DTYPE_F16, SHAPE(3)), tensor_of(s, GFX_DTYPE_F16, SCALAR),
                       tensor_of(q, GFX_DTYPE_F16, SHAPE(1, 3))};
  out = tensor_of(m, GFX_DTYPE_F16, SHAPE(1, 3));
  n = node_of(GFX_OP_MEAN, 3);
  expect_ok(run(&n, in3, &out));
  for (int i = 0; i < 3; i++) assert_true(gfx_half_to_float(m[i]) == gfx_half_to_float(gfx_float_to_half((11.0f * i + 2) / 3)));

  /* float32 Max propagates NaN; PRelu with a per-channel slope */
  float x[4] = {1, NAN, -2, 3}, w[4] = {0, 0, 0, 5}, y[4];
  gfx_tensor fin[2] = {tensor_of(x, GFX_DTYPE_F32, SHAPE(4)), tensor_of(w, GFX_DTYPE_F32, SHAPE(4))};
  gfx_tensor fout = tensor_of(y, GFX_DTYPE_F32, SHAPE(4));
  n = node_of(GFX_OP_MAX, 2);
  expect_ok(run(&n, fin, &fout));
  expect_near((float[]){1, NAN, 0, 5}, y, 4, 0);
  float slope[2] = {0.5f, 0.25f}, px[4] = {-4, -4, 2, -8}, py[4];
  gfx_tensor pin[2] = {tensor_of(px, GFX_DTYPE_F32, SHAPE(2, 2)), tensor_of(slope, GFX_DTYPE_F32, SHAPE(2))};
  gfx_tensor pout = tensor_of(py, GFX_DTYPE_F32, SHAPE(2, 2));
  n = node_of(GFX_OP_PRELU, 2);
  expect_ok(run(&n, pin, &pout));
  expect_near((float[]){-2, -1, 2, -2}, py, 4, 0);

  /* Pow with an int64 exponent */
  float base[3] = {2, -3, 0.5f}, pw[3];
  int64_t e[3] = {3, 2, -2};
  gfx_tensor powin[2] = {tensor_of(base, GFX_DTYPE_F32, SHAPE(3)), tensor_of(e, GFX_DTYPE_I64, SHAPE(3))};
  gfx_tensor powout = tensor_of(pw, GFX_DTYPE_F32, SHAPE(3));
  n = node_of(GFX_OP_POW, 2);
  expect_ok(run(&n, powin, &powout));
  expect_near((float[]){8, 9, 4}, pw, 3, 0);

  /* shapes that do not broadcast: an error naming them, nothing written */
  gfx_tensor bad[2] = {tensor_of(x, GFX_DTYPE_F32, SHAPE(4)), tensor_of(slope, GFX_DTYPE_F32, SHAPE(2))};
  n = node_of(GFX_OP_ADD, 2);
  expect_error(run(&n, bad, &fout), GFX_ERR_INVALID_ARGUMENT, "[4]", "[2]", NULL);
  /* an output of the wrong shape */
  gfx_tensor small = tensor_of(y, GFX_DTYPE_F32, SHAPE(2));
  expect_error(run(&n, fin, &small), GFX_ERR_INVALID_ARGUMENT, "output 0", NULL);
}

static void test_ref_integers(void** unused) {
  (void)unused;
  /* int64 stays exact beyond 2^53 and wraps like two's complement */
  int64_t a[3] = {((int64_t)1 << 62) + 1, INT64_MAX, -7}, b[1] = {2}, y[3];
  gfx_tensor in[2] = {tensor_of(a, GFX_DTYPE_I64, SHAPE(3)), tensor_of(b, GFX_DTYPE_I64, SHAPE(1))};
  gfx_tensor out = tensor_of(y, GFX_DTYPE_I64, SHAPE(3));
  ir_node n = node_of(GFX_OP_ADD, 2);
  expect_ok(run(&n, in, &out));
  assert_true(y[0] == ((int64_t)1 << 62) + 3 && y[1] == INT64_MIN + 1 && y[2] == -5);
  n = node_of(GFX_OP_MUL, 2);
  expect_ok(run(&n, in, &out));
  assert_true(y[0] == INT64_MIN + 2 && y[2] == -14);

  int32_t p[4] = {5, -9, INT32_MIN, 0}, q[4] = {3, -10, 1, 0}, r[4];
  gfx_tensor in32[2] = {tensor_of(p, GFX_DTYPE_I32, SHAPE(4)), tensor_of(q, GFX_DTYPE_I32, SHAPE(4))};
  gfx_tensor out32 = tensor_of(r, GFX_DTYPE_I32, SHAPE(4));
  n = node_of(GFX_OP_MIN, 2);
  expect_ok(run(&n, in32, &out32));
  assert_true(r[0] == 3 && r[1] == -10 && r[2] == INT32_MIN && r[3] == 0);
  n = node_of(GFX_OP_SUB, 2);
  expect_ok(run(&n, in32, &out32));
  assert_true(r[0] == 2 && r[1] == 1 && r[2] == INT32_MAX);
  n = node_of(GFX_OP_ABS, 1);
  expect_ok(run(&n, in32, &out32));
  assert_true(r[0] == 5 && r[1] == 9 && r[2] == INT32_MIN && r[3] == 0);

  /* comparisons give bool */
  uint8_t m[4];
  gfx_tensor mout = tensor_of(m, GFX_DTYPE_BOOL, SHAPE(4));
  n = node_of(GFX_OP_GREATER, 2);
  expect_ok(run(&n, in32, &mout));
  assert_true(m[0] == 1 && m[1] == 1 && m[2] == 0 && m[3] == 0);
  n = node_of(GFX_OP_EQUAL, 2);
  expect_ok(run(&n, in32, &mout));
  assert_true(m[0] == 0 && m[3] == 1);

  /* integer Div truncates toward zero (ONNX Runtime's C division); INT64_MIN / -1 wraps; a zero
   * divisor, which parse never admits, gives 0 rather than trapping */
  int64_t da[6] = {7, -7, 7, -7, INT64_MIN, 5}, db[6] = {2, 2, -2, -2, -1, 0}, dy[6];
  gfx_tensor din[2] = {tensor_of(da, GFX_DTYPE_I64, SHAPE(6)), tensor_of(db, GFX_DTYPE_I64, SHAPE(6))};
  gfx_tensor dout = tensor_of(dy, GFX_DTYPE_I64, SHAPE(6));
  n = node_of(GFX_OP_DIV, 2);
  expect_ok(run(&n, din, &dout));
  assert_true(dy[0] == 3 && dy[1] == -3 && dy[2] == -3 && dy[3] == 3 && dy[4] == INT64_MIN && dy[5] == 0);
}

static void test_ref_where(void** unused) {
  (void)unused;
  uint8_t cond[2] = {1, 0};
  int64_t x[3] = {((int64_t)1 << 60) + 1, 2, 3}, y[1] = {-1}, out[6];
  gfx_tensor in[3] = {tensor_of(cond, GFX_DTYPE_BOOL, SHAPE(2, 1)), tensor_of(x, GFX_DTYPE_I64, SHAPE(3)),
                      tensor_of(y, GFX_DTYPE_I64, SCALAR)};
  gfx_tensor o = tensor_of(out, GFX_DTYPE_I64, SHAPE(2, 3));
  ir_node n = node_of(GFX_OP_WHERE, 3);
  expect_ok(run(&n, in, &o));
  assert_true(out[0] == x[0] && out[1] == 2 && out[2] == 3 && out[3] == -1 && out[5] == -1);
  /* a float condition is refused */
  float fc[2] = {1, 0};
  in[0] = tensor_of(fc, GFX_DTYPE_F32, SHAPE(2, 1));
  expect_error(run(&n, in, &o), GFX_ERR_NOT_SUPPORTED, "input 0", NULL);
}

static void test_ref_cast(void** unused) {
  (void)unused;
  float x[6] = {2.7f, -2.7f, NAN, 3e9f, -0.0f, INFINITY};
  int32_t i32[6];
  int64_t i64[6];
  uint8_t b[6];
  uint16_t h[6];
  ir_node n = node_of(GFX_OP_CAST, 1);
  gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(6));
  gfx_tensor out = tensor_of(i32, GFX_DTYPE_I32, SHAPE(6));
  expect_ok(run(&n, &in, &out));
  /* truncation toward zero; NaN and out-of-range give the minimum, as ORT's CPU EP does */
  assert_true(i32[0] == 2 && i32[1] == -2 && i32[2] == INT32_MIN && i32[3] == INT32_MIN && i32[4] == 0 &&
              i32[5] == INT32_MIN);
  out = tensor_of(i64, GFX_DTYPE_I64, SHAPE(6));
  expect_ok(run(&n, &in, &out));
  assert_true(i64[0] == 2 && i64[2] == INT64_MIN && i64[3] == 3000000000LL && i64[5] == INT64_MIN);
  out = tensor_of(b, GFX_DTYPE_BOOL, SHAPE(6));
  expect_ok(run(&n, &in, &out));
  assert_true(b[0] == 1 && b[2] == 1 && b[4] == 0);
  out = tensor_of(h, GFX_DTYPE_F16, SHAPE(6));
  expect_ok(run(&n, &in, &out));
  assert_int_equal(h[0], gfx_float_to_half(2.7f));
  assert_int_equal(h[3], 0x7c00); /* 3e9 overflows float16 to +inf */

  /* int64 to bfloat16 and int32 (wrapping) */
  int64_t big[2] = {((int64_t)1 << 40) + 3, -5};
  uint16_t bf[2];
  in = tensor_of(big, GFX_DTYPE_I64, SHAPE(2));
  out = tensor_of(bf, GFX_DTYPE_BF16, SHAPE(2));
  expect_ok(run(&n, &in, &out));
  assert_true(gfx_bf16_to_float(bf[0]) == 1099511627776.0f && gfx_bf16_to_float(bf[1]) == -5.0f);
  out = tensor_of(i32, GFX_DTYPE_I32, SHAPE(2));
  expect_ok(run(&n, &in, &out));
  assert_true(i32[0] == 3 && i32[1] == -5);
}

static void test_ref_batchnorm(void** unused) {
  (void)unused;
  /* x [1, 2, 2]: channel 0 = {1, 3}, channel 1 = {-1, 5} */
  const float xs[4] = {1, 3, -1, 5}, scale[2] = {2, 0.5f}, bias[2] = {1, -1}, mean[2] = {2, 1}, var[2] = {4, 0.25f};
  ir_node n = node_of(GFX_OP_BATCH_NORM, 5);
  n.params.elementwise.epsilon = 0.0f;
  float y[4];
  gfx_tensor in[5] = {tensor_of((void*)xs, GFX_DTYPE_F32, SHAPE(1, 2, 2)),
                      tensor_of((void*)scale, GFX_DTYPE_F32, SHAPE(2)), tensor_of((void*)bias, GFX_DTYPE_F32, SHAPE(2)),
                      tensor_of((void*)mean, GFX_DTYPE_F32, SHAPE(2)), tensor_of((void*)var, GFX_DTYPE_F32, SHAPE(2))};
  gfx_tensor out = tensor_of(y, GFX_DTYPE_F32, SHAPE(1, 2, 2));
  expect_ok(run(&n, in, &out));
  expect_near((float[]){0, 2, -3, 3}, y, 4, 1e-6f);

  /* the same in bfloat16 (every value is exact there) */
  uint16_t hb[5][4], yb[4];
  const float* src[5] = {xs, scale, bias, mean, var};
  for (int t = 0; t < 5; t++)
    for (int i = 0; i < (t == 0 ? 4 : 2); i++) hb[t][i] = gfx_float_to_bf16(src[t][i]);
  for (int t = 0; t < 5; t++) in[t] = tensor_of(hb[t], GFX_DTYPE_BF16, t == 0 ? SHAPE(1, 2, 2) : SHAPE(2));
  out = tensor_of(yb, GFX_DTYPE_BF16, SHAPE(1, 2, 2));
  expect_ok(run(&n, in, &out));
  const float want[4] = {0, 2, -3, 3};
  for (int i = 0; i < 4; i++) assert_true(gfx_bf16_to_float(yb[i]) == want[i]);

  /* a parameter vector of the wrong length */
  in[4].shape = SHAPE(3);
  expect_error(run(&n, in, &out), GFX_ERR_INVALID_ARGUMENT, "var", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_unary_attributes),
      cmocka_unit_test(test_parse_clip),
      cmocka_unit_test(test_parse_binary_types),
      cmocka_unit_test(test_parse_cast_batchnorm),
      cmocka_unit_test(test_parse_refuses),
      cmocka_unit_test(test_infer),
      cmocka_unit_test(test_ref_unary_f32),
      cmocka_unit_test(test_ref_unary_half_types),
      cmocka_unit_test(test_ref_binary_broadcast),
      cmocka_unit_test(test_ref_integers),
      cmocka_unit_test(test_ref_where),
      cmocka_unit_test(test_ref_cast),
      cmocka_unit_test(test_ref_batchnorm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gfxep — convolution and matrix products: the reference kernels in float16 and bfloat16,
 * ConvTranspose, Gemm and 1-D Conv on cases worked out by hand or by a second formulation, their
 * geometry, and the Conv fusions (every activation, a residual Add), both as IR rewrites and
 * numerically against the unfused nodes in every float type.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/registry.h"
#include "core/half.h"
#include "ir/fuse.h"
#include "ir/ops_nn.h"
#include "ir_test_util.h"

/* ---- helpers ---- */

static gfx_status run(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {.dev = gfx_reference_device()};
  return gfx_backend_reference()->node_run(&ctx, node, in, out, NULL);
}

/* Deterministic values in [-1, 1) on a 1/64 grid: exact in float16 and bfloat16, so that 16-bit
 * runs differ from float32 only by the rounding of the result. */
static void fill(float* v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((int)((seed >> 16) % 128) - 64) / 64.0f;
  }
}

static void to16(int dtype, const float* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = dtype == GFX_DTYPE_F16 ? gfx_float_to_half(in[i]) : gfx_float_to_bf16(in[i]);
}

static void from16(int dtype, const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = dtype == GFX_DTYPE_F16 ? gfx_half_to_float(in[i]) : gfx_bf16_to_float(in[i]);
}

/* Runs `node` on float32 inputs and again in dtype (inputs converted exactly), and checks that the
 * 16-bit result is the float32 one rounded: within half an ulp of the 16-bit type, relative. */
static void expect_16bit_matches_f32(const ir_node* node, int dtype, int n_in, float* const* in_f32,
                                     const gfx_shape* shapes, gfx_shape out_shape) {
  const size_t out_n = (size_t)gfx_shape_numel(&out_shape);
  gfx_tensor in32[3], in16[3];
  uint16_t* buffers[3] = {0};
  for (int i = 0; i < n_in; i++) {
    size_t n = (size_t)gfx_shape_numel(&shapes[i]);
    buffers[i] = malloc(n * 2);
    to16(dtype, in_f32[i], buffers[i], n);
    in32[i] = tensor_of(in_f32[i], GFX_DTYPE_F32, shapes[i]);
    in16[i] = tensor_of(buffers[i], dtype, shapes[i]);
  }
  float* y32 = malloc(out_n * sizeof(float));
  float* y16f = malloc(out_n * sizeof(float));
  uint16_t* y16 = malloc(out_n * 2);
  gfx_tensor o32 = tensor_of(y32, GFX_DTYPE_F32, out_shape), o16 = tensor_of(y16, dtype, out_shape);
  expect_ok(run(node, in32, &o32));
  expect_ok(run(node, in16, &o16));
  from16(dtype, y16, y16f, out_n);
  const double half_ulp = dtype == GFX_DTYPE_F16 ? 1.0 / 2048 : 1.0 / 256;
  for (size_t i = 0; i < out_n; i++) {
    double err = fabs((double)y32[i] - (double)y16f[i]);
    double bound = half_ulp * fabs((double)y32[i]) + 1e-6;
    if (!(err <= bound)) print_error("element %zu: float32 %.9g, 16-bit %.9g\n", i, y32[i], y16f[i]);
    assert_true(err <= bound);
  }
  for (int i = 0; i < n_in; i++) free(buffers[i]);
  free(y32);
  free(y16f);
  free(y16);
}

/* ---- Conv and MatMul in float16 / bfloat16 ---- */

static void test_conv_16bit(void** unused) {
  (void)unused;
  float x[2 * 4 * 5 * 5], w[6 * 2 * 3 * 3], b[6];
  fill(x, sizeof x / sizeof x[0], 1);
  fill(w, sizeof w / sizeof w[0], 2);
  fill(b, 6, 3);
  ir_node node = node_of(GFX_OP_CONV, 3);
  node.params.conv = conv_params(2);
  node.params.conv.group = 2;
  node.params.conv.pads[0] = node.params.conv.pads[1] = 1;
  node.params.conv.pads[2] = node.params.conv.pads[3] = 1;
  float* ins[3] = {x, w, b};
  const gfx_shape shapes[3] = {SHAPE(2, 4, 5, 5), SHAPE(6, 2, 3, 3), SHAPE(6)};
  expect_16bit_matches_f32(&node, GFX_DTYPE_F16, 3, ins, shapes, SHAPE(2, 6, 5, 5));
  expect_16bit_matches_f32(&node, GFX_DTYPE_BF16, 3, ins, shapes, SHAPE(2, 6, 5, 5));
}

static void test_matmul_16bit(void** unused) {
  (void)unused;
  float a[2 * 3 * 7], b[7 * 5];
  fill(a, sizeof a / sizeof a[0], 4);
  fill(b, sizeof b / sizeof b[0], 5);
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  float* ins[2] = {a, b};
  const gfx_shape shapes[2] = {SHAPE(2, 3, 7), SHAPE(7, 5)};
  expect_16bit_matches_f32(&node, GFX_DTYPE_F16, 2, ins, shapes, SHAPE(2, 3, 5));
  expect_16bit_matches_f32(&node, GFX_DTYPE_BF16, 2, ins, shapes, SHAPE(2, 3, 5));
}

static void test_mixed_types_are_refused(void** unused) {
  (void)unused;
  float a[4] = {1, 2, 3, 4}, y[4];
  uint16_t b[4] = {0};
  ir_node node = node_of(GFX_OP_MATMUL, 2);
  gfx_tensor in[2] = {tensor_of(a, GFX_DTYPE_F32, SHAPE(2, 2)), tensor_of(b, GFX_DTYPE_F16, SHAPE(2, 2))};
  gfx_tensor out = tensor_of(y, GFX_DTYPE_F32, SHAPE(2, 2));
  gfx_status s = run(&node, in, &out);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_NOT_SUPPORTED);
  assert_non_null(strstr(gfx_status_message(s), "float16"));
  gfx_status_free(s);
}

/* ---- 1-D Conv ---- */

/* A 1-D convolution equals the 2-D one of height 1 with the same parameters along the width. */
static void test_conv_1d_matches_2d(void** unused) {
  (void)unused;
  float x[2 * 4 * 11], w[6 * 2 * 3], b[6], y1[2 * 6 * 5], y2[2 * 6 * 5];
  fill(x, sizeof x / sizeof x[0], 6);
  fill(w, sizeof w / sizeof w[0], 7);
  fill(b, 6, 8);
  ir_node n1 = node_of(GFX_OP_CONV, 3), n2 = node_of(GFX_OP_CONV, 3);
  n1.params.conv = conv_params(1);
  n1.params.conv.group = 2;
  n1.params.conv.strides[0] = 2;
  n1.params.conv.dilations[0] = 2;
  n1.params.conv.pads[0] = 1;
  n1.params.conv.pads[1] = 2;
  n2.params.conv = conv_params(2);
  n2.params.conv.group = 2;
  n2.params.conv.strides[1] = 2;
  n2.params.conv.dilations[1] = 2;
  n2.params.conv.pads[1] = 1;
  n2.params.conv.pads[3] = 2;
  gfx_shape out;
  gfx_shape shapes1[3] = {SHAPE(2, 4, 11), SHAPE(6, 2, 3), SHAPE(6)};
  expect_ok(ir_infer_conv(&n1, shapes1, &out));
  assert_int_equal(out.rank, 3);
  assert_int_equal(out.dims[2], 5); /* (11 + 3 - 5) / 2 + 1 */
  gfx_tensor in1[3] = {tensor_of(x, 1, shapes1[0]), tensor_of(w, 1, shapes1[1]), tensor_of(b, 1, shapes1[2])};
  gfx_tensor in2[3] = {tensor_of(x, 1, SHAPE(2, 4, 1, 11)), tensor_of(w, 1, SHAPE(6, 2, 1, 3)), tensor_of(b, 1, SHAPE(6))};
  gfx_tensor o1 = tensor_of(y1, 1, SHAPE(2, 6, 5)), o2 = tensor_of(y2, 1, SHAPE(2, 6, 1, 5));
  expect_ok(run(&n1, in1, &o1));
  expect_ok(run(&n2, in2, &o2));
  expect_floats_near(y2, y1, sizeof y1 / sizeof y1[0], 0.0);
}

/* ---- ConvTranspose ---- */

/* x [1,1,2,2] = 1 2 / 3 4 with a 2x2 kernel of ones at stride 2: each pixel fills its own 2x2
 * block. output_padding adds a zero row and column; pads crop from the sides. */
static void test_conv_transpose_by_hand(void** unused) {
  (void)unused;
  float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 1}, b[1] = {0.5f};
  ir_node node = node_of(GFX_OP_CONV_TRANSPOSE, 3);
  node.params.conv = conv_params(2);
  node.params.conv.strides[0] = node.params.conv.strides[1] = 2;
  node.params.conv.output_padding[0] = node.params.conv.output_padding[1] = 1;
  gfx_shape shapes[3] = {SHAPE(1, 1, 2, 2), SHAPE(1, 1, 2, 2), SHAPE(1)}, out;
  expect_ok(ir_infer_conv_transpose(&node, shapes, &out));
  assert_int_equal(out.dims[2], 5);
  assert_int_equal(out.dims[3], 5);
  float y[25];
  const float expected[25] = {1.5, 1.5, 2.5, 2.5, 0.5, 1.5, 1.5, 2.5, 2.5, 0.5, 3.5, 3.5, 4.5,
                              4.5, 0.5, 3.5, 3.5, 4.5, 4.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  gfx_tensor in[3] = {tensor_of(x, 1, shapes[0]), tensor_of(w, 1, shapes[1]), tensor_of(b, 1, shapes[2])};
  gfx_tensor o = tensor_of(y, 1, out);
  expect_ok(run(&node, in, &o));
  expect_floats_near(expected, y, 25, 0.0);

  /* asymmetric pads: crop one row at the top and one column at the right of the 5x5 */
  node.params.conv.pads[0] = 1; /* top */
  node.params.conv.pads[3] = 1; /* right */
  expect_ok(ir_infer_conv_transpose(&node, shapes, &out));
  assert_int_equal(out.dims[2], 4);
  assert_int_equal(out.dims[3], 4);
  float yc[16];
  o = tensor_of(yc, 1, out);
  expect_ok(run(&node, in, &o));
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) assert_true(yc[r * 4 + c] == expected[(r + 1) * 5 + c]);
}

/* output_shape sets the total padding; SAME_UPPER puts the odd pixel at the end, NOTSET at the
 * beginning (the spec's rule, which ONNX Runtime follows). */
static void test_conv_transpose_output_shape_pads(void** unused) {
  (void)unused;
  ir_conv_params p = conv_params(2);
  p.strides[0] = p.strides[1] = 2;
  p.has_output_shape = 1;
  p.output_shape[0] = 8;
  p.output_shape[1] = 9;
  gfx_shape x = SHAPE(1, 2, 4, 4), w = SHAPE(2, 3, 3, 3);
  ir_conv_geom g;
  expect_ok(ir_conv_transpose_geometry(&p, &x, &w, &g));
  /* full size 2 * 3 + 3 = 9: total padding 1 along H, 0 along W */
  assert_int_equal(g.out[0], 8);
  assert_int_equal(g.out[1], 9);
  assert_int_equal(g.pad_begin[0], 1);
  assert_int_equal(g.pad_end[0], 0);
  assert_int_equal(g.c_out, 3);
  p.auto_pad = IR_PAD_SAME_UPPER;
  expect_ok(ir_conv_transpose_geometry(&p, &x, &w, &g));
  assert_int_equal(g.pad_begin[0], 0);
  assert_int_equal(g.pad_end[0], 1);
  /* an output larger than the input can produce is an error naming it */
  p.output_shape[0] = 10;
  gfx_status s = ir_conv_transpose_geometry(&p, &x, &w, &g);
  assert_non_null(s);
  assert_non_null(strstr(gfx_status_message(s), "10"));
  gfx_status_free(s);
}

/* Grouped, dilated ConvTranspose against the scatter formulation: every input pixel adds its
 * value times the kernel into the (uncropped) output. */
static void test_conv_transpose_matches_scatter(void** unused) {
  (void)unused;
  enum { N = 1, C = 4, H = 3, W = 4, G = 2, OPG = 3, KH = 2, KW = 3 };
  float x[N * C * H * W], w[C * OPG * KH * KW];
  fill(x, sizeof x / sizeof x[0], 9);
  fill(w, sizeof w / sizeof w[0], 10);
  ir_node node = node_of(GFX_OP_CONV_TRANSPOSE, 2);
  node.params.conv = conv_params(2);
  node.params.conv.group = G;
  node.params.conv.strides[0] = 2;
  node.params.conv.strides[1] = 3;
  node.params.conv.dilations[0] = 2;
  node.params.conv.dilations[1] = 1;
  node.params.conv.pads[0] = 1; /* top */
  node.params.conv.pads[3] = 2; /* right */
  gfx_shape shapes[2] = {SHAPE(N, C, H, W), SHAPE(C, OPG, KH, KW)}, out;
  expect_ok(ir_infer_conv_transpose(&node, shapes, &out));
  const int64_t FH = 2 * (H - 1) + (KH - 1) * 2 + 1, FW = 3 * (W - 1) + KW; /* uncropped */
  assert_int_equal(out.dims[1], G * OPG);
  assert_int_equal(out.dims[2], FH - 1);
  assert_int_equal(out.dims[3], FW - 2);
  double full[G * OPG][FH][FW];
  memset(full, 0, sizeof full);
  for (int c = 0; c < C; c++)
    for (int o = 0; o < OPG; o++)
      for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++)
          for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++)
              full[c / (C / G) * OPG + o][i * 2 + kh * 2][j * 3 + kw] +=
                  (double)x[(c * H + i) * W + j] * w[((c * OPG + o) * KH + kh) * KW + kw];
  const size_t count = (size_t)gfx_shape_numel(&out);
  float* y = malloc(count * sizeof(float));
  float* expected = malloc(count * sizeof(float));
  for (int64_t o = 0; o < out.dims[1]; o++)
    for (int64_t r = 0; r < out.dims[2]; r++)
      for (int64_t c = 0; c < out.dims[3]; c++)
        expected[(o * out.dims[2] + r) * out.dims[3] + c] = (float)full[o][r + 1][c];
  gfx_tensor in[2] = {tensor_of(x, 1, shapes[0]), tensor_of(w, 1, shapes[1])};
  gfx_tensor o = tensor_of(y, 1, out);
  expect_ok(run(&node, in, &o));
  expect_floats_near(expected, y, count, 1e-6);
  free(y);
  free(expected);
}

/* ---- Gemm ---- */

static void test_gemm_trans_and_broadcast(void** unused) {
  (void)unused;
  /* A stored transposed [k=2, m=3], B stored transposed [n=2, k=2], C [n] broadcast over rows */
  float a[6] = {1, 2, 3, 4, 5, 6}; /* op(A) = [[1,4],[2,5],[3,6]] */
  float b[4] = {1, 0, 1, 1};       /* op(B) = [[1,1],[0,1]] */
  float c[2] = {10, 20};
  ir_node node = node_of(GFX_OP_GEMM, 3);
  node.params.gemm = (ir_gemm_params){.trans_a = 1, .trans_b = 1, .alpha = 2.0f, .beta = 0.5f};
  gfx_shape shapes[3] = {SHAPE(2, 3), SHAPE(2, 2), SHAPE(2)}, out;
  expect_ok(ir_infer_gemm(&node, shapes, &out));
  assert_int_equal(out.dims[0], 3);
  assert_int_equal(out.dims[1], 2);
  /* op(A) op(B) = [[1,5],[2,7],[3,9]]; 2x + 0.5 c */
  const float expected[6] = {7, 20, 9, 24, 11, 28};
  float y[6];
  gfx_tensor in[3] = {tensor_of(a, 1, shapes[0]), tensor_of(b, 1, shapes[1]), tensor_of(c, 1, shapes[2])};
  gfx_tensor o = tensor_of(y, 1, out);
  expect_ok(run(&node, in, &o));
  expect_floats_near(expected, y, 6, 0.0);

  /* C [m, 1] broadcasts along columns */
  shapes[2] = SHAPE(3, 1);
  float cm[3] = {2, 4, 6};
  in[2] = tensor_of(cm, 1, shapes[2]);
  node.params.gemm.beta = 1.0f;
  const float expected_m[6] = {4, 12, 8, 18, 12, 24};
  expect_ok(run(&node, in, &o));
  expect_floats_near(expected_m, y, 6, 0.0);

  /* a C that does not broadcast is an error naming its shape */
  shapes[2] = SHAPE(2, 2);
  gfx_status s = ir_infer_gemm(&node, shapes, &out);
  assert_non_null(s);
  assert_non_null(strstr(gfx_status_message(s), "does not broadcast"));
  gfx_status_free(s);
}

/* ---- fusion ---- */

typedef struct conv_relu_graph {
  ir_graph* g;
  int x, w, b, mid, y;
} conv_relu_graph;

/* x -> Conv(w, b) -> mid -> Relu -> y; mid also a graph output when mid_is_output. */
static conv_relu_graph build_conv_relu(int mid_is_output, int with_bias) {
  conv_relu_graph c;
  c.g = ir_graph_new();
  assert_non_null(c.g);
  gfx_shape xs = SHAPE(1, 2, 4, 4), ws = SHAPE(3, 2, 3, 3), bs = SHAPE(3), ys = SHAPE(1, 3, 4, 4);
  expect_ok(ir_graph_add_value(c.g, "x", GFX_DTYPE_F32, &xs, &c.x));
  expect_ok(ir_graph_add_value(c.g, "w", GFX_DTYPE_F32, &ws, &c.w));
  expect_ok(ir_graph_add_value(c.g, "b", GFX_DTYPE_F32, &bs, &c.b));
  expect_ok(ir_graph_add_value(c.g, "mid", GFX_DTYPE_F32, &ys, &c.mid));
  expect_ok(ir_graph_add_value(c.g, "y", GFX_DTYPE_F32, &ys, &c.y));
  float w[54], b[3];
  fill(w, 54, 11);
  fill(b, 3, 12);
  expect_ok(ir_graph_set_constant(c.g, c.w, w, sizeof w));
  expect_ok(ir_graph_set_constant(c.g, c.b, b, sizeof b));
  expect_ok(ir_graph_add_input(c.g, c.x));
  ir_params p;
  memset(&p, 0, sizeof p);
  p.conv = conv_params(2);
  for (int i = 0; i < 4; i++) p.conv.pads[i] = 1;
  int conv_in[3] = {c.x, c.w, c.b};
  expect_ok(ir_graph_add_node(c.g, GFX_OP_CONV, "conv", conv_in, with_bias ? 3 : 2, &c.mid, 1, &p));
  ir_params none;
  memset(&none, 0, sizeof none);
  expect_ok(ir_graph_add_node(c.g, GFX_OP_RELU, "relu", &c.mid, 1, &c.y, 1, &none));
  expect_ok(ir_graph_add_output(c.g, c.y));
  if (mid_is_output) expect_ok(ir_graph_add_output(c.g, c.mid));
  return c;
}

static void test_fuse_conv_relu_rewrites(void** unused) {
  (void)unused;
  for (int with_bias = 0; with_bias <= 1; with_bias++) {
    conv_relu_graph c = build_conv_relu(0, with_bias);
    expect_ok(ir_fuse(c.g));
    assert_int_equal(c.g->n_nodes, 1);
    assert_int_equal(c.g->nodes[0].op, GFX_OP_CONV);
    assert_int_equal(c.g->nodes[0].params.conv.activation, IR_ACT_RELU);
    assert_int_equal(c.g->nodes[0].outputs[0], c.y);
    assert_int_equal(c.g->nodes[0].n_inputs, with_bias ? 3 : 2);
    assert_int_equal(c.g->values[c.y].producer, 0);
    assert_int_equal(c.g->values[c.mid].producer, -1);
    assert_int_equal(gfx_shape_numel(&c.g->values[c.mid].shape), 0); /* nothing plans memory for it */
    ir_graph_free(c.g);
  }
}

static void test_fuse_skips_shared_values(void** unused) {
  (void)unused;
  /* the Conv's output is a graph output: both nodes stay */
  conv_relu_graph c = build_conv_relu(1, 1);
  expect_ok(ir_fuse(c.g));
  assert_int_equal(c.g->n_nodes, 2);
  assert_int_equal(c.g->nodes[0].params.conv.activation, IR_ACT_NONE);
  ir_graph_free(c.g);

  /* the Conv's output has a second reader */
  c = build_conv_relu(0, 1);
  int z;
  gfx_shape ys = SHAPE(1, 3, 4, 4);
  expect_ok(ir_graph_add_value(c.g, "z", GFX_DTYPE_F32, &ys, &z));
  ir_params none;
  memset(&none, 0, sizeof none);
  int add_in[2] = {c.mid, c.y};
  expect_ok(ir_graph_add_node(c.g, GFX_OP_ADD, "add", add_in, 2, &z, 1, &none));
  expect_ok(ir_graph_add_output(c.g, z));
  expect_ok(ir_fuse(c.g));
  assert_int_equal(c.g->n_nodes, 3);
  assert_int_equal(c.g->nodes[0].params.conv.activation, IR_ACT_NONE);
  ir_graph_free(c.g);
}

/* The fused node computes what Conv then Relu compute, through the reference backend. */
static void test_fused_conv_relu_matches_unfused(void** unused) {
  (void)unused;
  for (int with_bias = 0; with_bias <= 1; with_bias++) {
    conv_relu_graph c = build_conv_relu(0, with_bias);
    const ir_node conv = c.g->nodes[0];
    const ir_node relu = c.g->nodes[1];
    float x[32], mid[48], y_unfused[48], y_fused[48];
    fill(x, 32, 13);
    gfx_tensor in[3] = {tensor_of(x, 1, c.g->values[c.x].shape), tensor_of(c.g->values[c.w].const_data, 1, c.g->values[c.w].shape),
                        tensor_of(c.g->values[c.b].const_data, 1, c.g->values[c.b].shape)};
    gfx_tensor m = tensor_of(mid, 1, c.g->values[c.mid].shape);
    gfx_tensor yu = tensor_of(y_unfused, 1, c.g->values[c.y].shape);
    expect_ok(run(&conv, in, &m));
    expect_ok(run(&relu, &m, &yu));
    expect_ok(ir_fuse(c.g));
    assert_int_equal(c.g->n_nodes, 1);
    gfx_tensor yf = tensor_of(y_fused, 1, c.g->values[c.y].shape);
    expect_ok(run(&c.g->nodes[0], in, &yf));
    expect_floats_near(y_unfused, y_fused, 48, 0.0);
    int negatives = 0;
    for (int i = 0; i < 48; i++) negatives += mid[i] < 0;
    assert_true(negatives > 0); /* the activation had something to do */
    ir_graph_free(c.g);
  }
}

/* ---- fusion of every activation and of a residual Add ---- */

/* A small graph under construction: x [1,2,5,4] and r [1,3,5,4] graph inputs, a 3x3 Conv (or
 * ConvTranspose) to 3 channels with pads 1, so every value the tail builds is [1,3,5,4]. */
typedef struct fgraph {
  ir_graph* g;
  int dtype;
  int x, r, conv_out;
  int count; /* for value names */
} fgraph;

static const int64_t FG_OUT = 60; /* elements of [1,3,5,4] */

/* float values stored as dtype */
static void store_as(int dtype, const float* v, void* out, size_t n) {
  if (dtype == GFX_DTYPE_F32)
    memcpy(out, v, n * sizeof(float));
  else
    to16(dtype, v, out, n);
}

static int fg_value(fgraph* f, int dtype, gfx_shape shape) {
  char name[32];
  snprintf(name, sizeof name, "v%d", f->count++);
  int v;
  expect_ok(ir_graph_add_value(f->g, name, dtype, &shape, &v));
  return v;
}

static int fg_const(fgraph* f, gfx_shape shape, unsigned seed) {
  const int v = fg_value(f, f->dtype, shape);
  const size_t n = (size_t)gfx_shape_numel(&shape);
  float values[64];
  unsigned char bytes[64 * sizeof(float)];
  assert_true(n <= 64);
  fill(values, n, seed);
  store_as(f->dtype, values, bytes, n);
  expect_ok(ir_graph_set_constant(f->g, v, bytes, n * gfx_dtype_size(f->dtype)));
  return v;
}

static void fg_node(fgraph* f, gfx_op op, const char* name, const int* in, int n_in, int out, const ir_params* p) {
  expect_ok(ir_graph_add_node(f->g, op, name, in, n_in, &out, 1, p));
}

/* the graph, its inputs and the Conv (named "conv") writing conv_out */
static fgraph fg_new(int dtype, gfx_op conv_op, int with_bias) {
  fgraph f = {.g = ir_graph_new(), .dtype = dtype};
  assert_non_null(f.g);
  f.x = fg_value(&f, dtype, SHAPE(1, 2, 5, 4));
  f.r = fg_value(&f, dtype, SHAPE(1, 3, 5, 4));
  expect_ok(ir_graph_add_input(f.g, f.x));
  expect_ok(ir_graph_add_input(f.g, f.r));
  const int w = fg_const(&f, conv_op == GFX_OP_CONV ? SHAPE(3, 2, 3, 3) : SHAPE(2, 3, 3, 3), 21);
  const int b = fg_const(&f, SHAPE(3), 22);
  ir_params p;
  memset(&p, 0, sizeof p);
  p.conv = conv_params(2);
  p.conv.dtype = dtype;
  for (int i = 0; i < 4; i++) p.conv.pads[i] = 1;
  f.conv_out = fg_value(&f, dtype, SHAPE(1, 3, 5, 4));
  const int in[3] = {f.x, w, b};
  fg_node(&f, conv_op, "conv", in, with_bias ? 3 : 2, f.conv_out, &p);
  return f;
}

/* out = op(in) with the element-wise params given (Clip's bounds also as constant inputs) */
static int fg_unary(fgraph* f, gfx_op op, const ir_elementwise_params* ep, int in, const char* name) {
  ir_params p;
  memset(&p, 0, sizeof p);
  p.elementwise = *ep;
  const int out = fg_value(f, f->dtype, SHAPE(1, 3, 5, 4));
  int ins[3] = {in, -1, -1};
  int n_in = 1;
  if (op == GFX_OP_CLIP) {
    const float bounds[2] = {ep->min, ep->max};
    for (int i = 0; i < 2; i++) {
      unsigned char bytes[4];
      const int v = fg_value(f, f->dtype, SHAPE(1));
      store_as(f->dtype, &bounds[i], bytes, 1);
      expect_ok(ir_graph_set_constant(f->g, v, bytes, gfx_dtype_size(f->dtype)));
      if ((i == 0 && ep->has_min) || (i == 1 && ep->has_max)) ins[1 + i] = v;
    }
    n_in = 3;
  }
  fg_node(f, op, name, ins, n_in, out, &p);
  return out;
}

static int fg_add(fgraph* f, int a, int b, gfx_shape out_shape) {
  ir_params p;
  memset(&p, 0, sizeof p);
  const int out = fg_value(f, f->dtype, out_shape);
  const int in[2] = {a, b};
  fg_node(f, GFX_OP_ADD, "add", in, 2, out, &p);
  return out;
}

/* Runs every node through the reference backend on one buffer per value (declared shapes). */
static void run_graph(const ir_graph* g, void* const* data) {
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    gfx_tensor in[IR_MAX_IO], out[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++) {
      const int v = node->inputs[i];
      in[i] = v < 0 ? (gfx_tensor){.dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}}
                    : tensor_of(g->values[v].const_data ? g->values[v].const_data : data[v], g->values[v].dtype,
                                g->values[v].shape);
    }
    for (int o = 0; o < node->n_outputs; o++) {
      const int v = node->outputs[o];
      out[o] = tensor_of(data[v], g->values[v].dtype, g->values[v].shape);
    }
    expect_ok(run(node, in, out));
  }
}

static float load_as_float(int dtype, const void* p, size_t i) {
  if (dtype == GFX_DTYPE_F32) return ((const float*)p)[i];
  float v;
  from16(dtype, (const uint16_t*)p + i, &v, 1);
  return v;
}

/* Output y of the graph before and after ir_fuse, which must leave `nodes_after` nodes: the same
 * within one rounding of the element type (the unfused graph rounds once more in between). */
static void expect_fusion_keeps_result(fgraph* f, int y, int nodes_after) {
  ir_graph* g = f->g;
  expect_ok(ir_graph_add_output(g, y));
  void* data[64] = {0};
  assert_true(g->n_values <= 64);
  for (int v = 0; v < g->n_values; v++)
    if (!g->values[v].const_data) data[v] = calloc((size_t)gfx_shape_numel(&g->values[v].shape), sizeof(float));
  float in[FG_OUT];
  fill(in, 40, 31);
  store_as(f->dtype, in, data[f->x], 40);
  fill(in, FG_OUT, 32);
  store_as(f->dtype, in, data[f->r], FG_OUT);
  run_graph(g, data);
  float unfused[FG_OUT], fused[FG_OUT];
  for (int64_t i = 0; i < FG_OUT; i++) unfused[i] = load_as_float(f->dtype, data[y], (size_t)i);
  expect_ok(ir_fuse(g));
  assert_int_equal(g->n_nodes, nodes_after);
  memset(data[y], 0, FG_OUT * sizeof(float));
  run_graph(g, data);
  for (int64_t i = 0; i < FG_OUT; i++) fused[i] = load_as_float(f->dtype, data[y], (size_t)i);
  const double ulp = f->dtype == GFX_DTYPE_F32 ? 1.0 / (1 << 23) : f->dtype == GFX_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
  for (int64_t i = 0; i < FG_OUT; i++) {
    const double bound = 4 * ulp * (1.0 + fabs((double)unfused[i]));
    if (!(fabs((double)fused[i] - unfused[i]) <= bound))
      print_error("%s element %lld: unfused %.9g, fused %.9g\n", gfx_dtype_name(f->dtype), (long long)i, unfused[i],
                  fused[i]);
    assert_true(fabs((double)fused[i] - unfused[i]) <= bound);
  }
  for (int v = 0; v < g->n_values; v++) free(data[v]);
}

static const int fuse_dtypes[3] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16};

/* a [3] constant of the graph's type holding v */
static int fg_vec3(fgraph* f, const float* v) {
  const int x = fg_value(f, f->dtype, SHAPE(3));
  unsigned char bytes[3 * sizeof(float)];
  store_as(f->dtype, v, bytes, 3);
  expect_ok(ir_graph_set_constant(f->g, x, bytes, 3 * gfx_dtype_size(f->dtype)));
  return x;
}

/* Conv -> BatchNormalization with constant parameters folds into one Conv with new weights and bias
 * (the old weights keep their values for any other reader), in every float type, with and without
 * the Conv's own bias, and the folded Conv computes what the pair computed. The weights are rounded
 * once more than in the pair, so the bound is looser than one rounding of the output. */
static void test_fuse_conv_batchnorm(void** unused) {
  (void)unused;
  const float scale[3] = {0.5f, -1.25f, 2.0f}, beta[3] = {0.1f, 0.0f, -0.3f};
  const float mean[3] = {0.2f, -0.1f, 0.05f}, var[3] = {0.8f, 1.5f, 0.25f};
  for (int t = 0; t < 3; t++)
    for (int with_bias = 0; with_bias <= 1; with_bias++) {
      fgraph f = fg_new(fuse_dtypes[t], GFX_OP_CONV, with_bias);
      const int w_old = f.g->nodes[0].inputs[1];
      ir_params p;
      memset(&p, 0, sizeof p);
      p.elementwise.epsilon = 1e-3f;
      const int y = fg_value(&f, f.dtype, SHAPE(1, 3, 5, 4));
      const int in[5] = {f.conv_out, fg_vec3(&f, scale), fg_vec3(&f, beta), fg_vec3(&f, mean), fg_vec3(&f, var)};
      fg_node(&f, GFX_OP_BATCH_NORM, "bn", in, 5, y, &p);
      expect_ok(ir_graph_add_output(f.g, y));
      void* data[64] = {0};
      ir_graph* g = f.g;
      for (int v = 0; v < g->n_values; v++)
        if (!g->values[v].const_data) data[v] = calloc((size_t)gfx_shape_numel(&g->values[v].shape), sizeof(float));
      float x[40];
      fill(x, 40, 41);
      store_as(f.dtype, x, data[f.x], 40);
      run_graph(g, data);
      float unfused[FG_OUT], fused[FG_OUT];
      for (int64_t i = 0; i < FG_OUT; i++) unfused[i] = load_as_float(f.dtype, data[y], (size_t)i);
      expect_ok(ir_fuse(g));
      assert_int_equal(g->n_nodes, 1);
      const ir_node* n = &g->nodes[0];
      assert_string_equal(n->name, "conv+bn");
      assert_int_equal(n->n_inputs, 3);
      assert_int_not_equal(n->inputs[1], w_old);
      assert_non_null(g->values[n->inputs[1]].const_data);
      assert_non_null(g->values[n->inputs[2]].const_data);
      assert_int_equal(n->outputs[0], y);
      assert_null(g->values[w_old].const_data); /* nobody reads the old weights: not uploaded */
      memset(data[y], 0, FG_OUT * sizeof(float));
      run_graph(g, data);
      for (int64_t i = 0; i < FG_OUT; i++) fused[i] = load_as_float(f.dtype, data[y], (size_t)i);
      const double ulp = f.dtype == GFX_DTYPE_F32 ? 1.0 / (1 << 23) : f.dtype == GFX_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
      for (int64_t i = 0; i < FG_OUT; i++) {
        const double bound = 32 * ulp * (1.0 + fabs((double)unfused[i]));
        if (!(fabs((double)fused[i] - unfused[i]) <= bound))
          print_error("%s element %lld: unfused %.9g, folded %.9g\n", gfx_dtype_name(f.dtype), (long long)i,
                      unfused[i], fused[i]);
        assert_true(fabs((double)fused[i] - unfused[i]) <= bound);
      }
      for (int v = 0; v < g->n_values; v++) free(data[v]);
      ir_graph_free(g);
    }
}

typedef struct act_case {
  gfx_op op;
  ir_conv_activation act;
  float p_alpha, p_beta;     /* the element-wise op's alpha and beta */
  int has_min, has_max;      /* Clip */
  float min, max;
  float alpha, beta;         /* what the Conv's params must hold */
} act_case;

static const act_case act_cases[] = {
    {GFX_OP_RELU, IR_ACT_RELU, 0, 0, 0, 0, 0, 0, 0, 0},
    {GFX_OP_LEAKY_RELU, IR_ACT_LEAKY_RELU, 0.25f, 0, 0, 0, 0, 0, 0.25f, 0},
    {GFX_OP_CLIP, IR_ACT_CLIP, 0, 0, 1, 1, 0.0f, 0.75f, 0.0f, 0.75f},
    {GFX_OP_CLIP, IR_ACT_CLIP, 0, 0, 0, 1, 0, 0.5f, -INFINITY, 0.5f},
    {GFX_OP_CLIP, IR_ACT_CLIP, 0, 0, 1, 0, -0.25f, 0, -0.25f, INFINITY},
    {GFX_OP_SIGMOID, IR_ACT_SIGMOID, 0, 0, 0, 0, 0, 0, 0, 0},
    {GFX_OP_TANH, IR_ACT_TANH, 0, 0, 0, 0, 0, 0, 0, 0},
    {GFX_OP_HARD_SIGMOID, IR_ACT_HARD_SIGMOID, 0.3f, 0.4f, 0, 0, 0, 0, 0.3f, 0.4f},
    {GFX_OP_HARD_SWISH, IR_ACT_HARD_SWISH, 0, 0, 0, 0, 0, 0, 0, 0},
    {GFX_OP_ELU, IR_ACT_ELU, 0.7f, 0, 0, 0, 0, 0, 0.7f, 0},
};

/* Conv (and ConvTranspose) -> each activation: one node carrying the activation, named "conv+act",
 * computing what the pair computed, in every float type. */
static void test_fuse_every_activation(void** unused) {
  (void)unused;
  for (size_t c = 0; c < sizeof act_cases / sizeof act_cases[0]; c++)
    for (int t = 0; t < 3; t++)
      for (int transpose = 0; transpose <= 1; transpose++) {
        const act_case* k = &act_cases[c];
        ir_elementwise_params ep;
        memset(&ep, 0, sizeof ep);
        ep.alpha = k->p_alpha;
        ep.beta = k->p_beta;
        ep.has_min = k->has_min;
        ep.has_max = k->has_max;
        ep.min = k->min;
        ep.max = k->max;
        fgraph f = fg_new(fuse_dtypes[t], transpose ? GFX_OP_CONV_TRANSPOSE : GFX_OP_CONV, 1);
        const int y = fg_unary(&f, k->op, &ep, f.conv_out, "act");
        expect_fusion_keeps_result(&f, y, 1);
        const ir_node* n = &f.g->nodes[0];
        assert_int_equal(n->op, transpose ? GFX_OP_CONV_TRANSPOSE : GFX_OP_CONV);
        assert_int_equal(n->params.conv.activation, k->act);
        assert_true(n->params.conv.act_alpha == k->alpha);
        assert_true(n->params.conv.act_beta == k->beta);
        assert_int_equal(n->params.conv.residual, IR_RES_NONE);
        assert_string_equal(n->name, "conv+act");
        assert_int_equal(n->outputs[0], y);
        assert_int_equal(f.g->values[y].producer, 0);
        assert_int_equal(f.g->values[f.conv_out].producer, -1);
        ir_graph_free(f.g);
      }
}

/* Conv -> Add(conv, r): the Conv takes r as input 3 and the Add's place; an activation after the
 * Add applies to the sum, one before it (fused first) applies before the add. */
static void test_fuse_residual(void** unused) {
  (void)unused;
  ir_elementwise_params none;
  memset(&none, 0, sizeof none);
  const gfx_shape ys = SHAPE(1, 3, 5, 4);
  for (int t = 0; t < 3; t++)
    for (int with_bias = 0; with_bias <= 1; with_bias++) {
      /* y = conv + r, the Add's operands either way round */
      for (int swap = 0; swap <= 1; swap++) {
        fgraph f = fg_new(fuse_dtypes[t], GFX_OP_CONV, with_bias);
        const int y = swap ? fg_add(&f, f.r, f.conv_out, ys) : fg_add(&f, f.conv_out, f.r, ys);
        expect_fusion_keeps_result(&f, y, 1);
        const ir_node* n = &f.g->nodes[0];
        assert_int_equal(n->n_inputs, 4);
        assert_int_equal(n->inputs[2], with_bias ? n->inputs[2] : -1);
        assert_true(!with_bias || n->inputs[2] >= 0);
        assert_int_equal(n->inputs[IR_CONV_RESIDUAL_INPUT], f.r);
        assert_int_equal(n->params.conv.residual, IR_RES_ADD_THEN_ACT);
        assert_int_equal(n->params.conv.activation, IR_ACT_NONE);
        assert_string_equal(n->name, "conv+add");
        ir_graph_free(f.g);
      }
      /* ResNet: relu(conv + r) */
      fgraph f = fg_new(fuse_dtypes[t], GFX_OP_CONV, with_bias);
      int y = fg_unary(&f, GFX_OP_RELU, &none, fg_add(&f, f.conv_out, f.r, ys), "relu");
      expect_fusion_keeps_result(&f, y, 1);
      assert_int_equal(f.g->nodes[0].params.conv.residual, IR_RES_ADD_THEN_ACT);
      assert_int_equal(f.g->nodes[0].params.conv.activation, IR_ACT_RELU);
      assert_string_equal(f.g->nodes[0].name, "conv+add+relu");
      assert_int_equal(f.g->nodes[0].outputs[0], y);
      ir_graph_free(f.g);
      /* tanh(conv) + r */
      f = fg_new(fuse_dtypes[t], GFX_OP_CONV, with_bias);
      y = fg_add(&f, fg_unary(&f, GFX_OP_TANH, &none, f.conv_out, "tanh"), f.r, ys);
      expect_fusion_keeps_result(&f, y, 1);
      assert_int_equal(f.g->nodes[0].params.conv.residual, IR_RES_ACT_THEN_ADD);
      assert_int_equal(f.g->nodes[0].params.conv.activation, IR_ACT_TANH);
      assert_string_equal(f.g->nodes[0].name, "conv+tanh+add");
      ir_graph_free(f.g);
    }
}

/* The residual is produced after the Conv (ResNet's shortcut branch): the fused Conv moves to the
 * Add's place, after the residual's producer, and the graph stays valid. */
static void test_fuse_residual_moves_the_conv(void** unused) {
  (void)unused;
  ir_elementwise_params none;
  memset(&none, 0, sizeof none);
  fgraph f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  const int s = fg_unary(&f, GFX_OP_SIGMOID, &none, f.r, "shortcut");
  const int y = fg_unary(&f, GFX_OP_RELU, &none, fg_add(&f, f.conv_out, s, SHAPE(1, 3, 5, 4)), "relu");
  expect_fusion_keeps_result(&f, y, 2);
  assert_int_equal(f.g->nodes[0].op, GFX_OP_SIGMOID);
  assert_int_equal(f.g->nodes[1].op, GFX_OP_CONV);
  assert_int_equal(f.g->nodes[1].inputs[IR_CONV_RESIDUAL_INPUT], s);
  assert_int_equal(f.g->nodes[1].params.conv.activation, IR_ACT_RELU);
  assert_int_equal(f.g->values[s].producer, 0);
  assert_int_equal(f.g->values[y].producer, 1);
  ir_graph_free(f.g);
}

/* What must stay unfused: a broadcasting or not fully known residual, one of another type, the
 * Conv's output as a graph output, read twice, or added to itself; a second Add after a fused one. */
static void test_fuse_residual_refusals(void** unused) {
  (void)unused;
  const gfx_shape ys = SHAPE(1, 3, 5, 4);
  /* r broadcasts per channel */
  fgraph f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  int r = fg_value(&f, GFX_DTYPE_F32, SHAPE(1, 3, 1, 1));
  expect_ok(ir_graph_add_input(f.g, r));
  int y = fg_add(&f, f.conv_out, r, ys);
  expect_fusion_keeps_result(&f, y, 2);
  assert_int_equal(f.g->nodes[0].n_inputs, 3);
  ir_graph_free(f.g);
  /* r of the right rank but a dim only known at run time; r of another type */
  for (int k = 0; k < 2; k++) {
    f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
    r = fg_value(&f, k ? GFX_DTYPE_F16 : GFX_DTYPE_F32, k ? ys : SHAPE(1, 3, GFX_DIM_UNKNOWN, 4));
    expect_ok(ir_graph_add_input(f.g, r));
    y = fg_add(&f, f.conv_out, r, ys);
    expect_ok(ir_graph_add_output(f.g, y));
    expect_ok(ir_fuse(f.g));
    assert_int_equal(f.g->n_nodes, 2);
    ir_graph_free(f.g);
  }
  /* the Conv's output is also a graph output */
  f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  expect_ok(ir_graph_add_output(f.g, f.conv_out));
  y = fg_add(&f, f.conv_out, f.r, ys);
  expect_fusion_keeps_result(&f, y, 2);
  ir_graph_free(f.g);
  /* conv + conv: the residual would be the Conv's own output */
  f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  y = fg_add(&f, f.conv_out, f.conv_out, ys);
  expect_fusion_keeps_result(&f, y, 2);
  ir_graph_free(f.g);
  /* the Conv's output has a second reader */
  f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  const int z = fg_add(&f, f.conv_out, f.r, ys);
  y = fg_add(&f, f.conv_out, z, ys);
  expect_fusion_keeps_result(&f, y, 3);
  ir_graph_free(f.g);
  /* ConvTranspose takes no residual (its activation still fuses) */
  f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV_TRANSPOSE, 1);
  y = fg_add(&f, f.conv_out, f.r, ys);
  expect_fusion_keeps_result(&f, y, 2);
  ir_graph_free(f.g);
  /* two Adds: the first one fuses, the second stays */
  f = fg_new(GFX_DTYPE_F32, GFX_OP_CONV, 1);
  y = fg_add(&f, fg_add(&f, f.conv_out, f.r, ys), f.r, ys);
  expect_fusion_keeps_result(&f, y, 2);
  assert_int_equal(f.g->nodes[0].params.conv.residual, IR_RES_ADD_THEN_ACT);
  assert_int_equal(f.g->nodes[1].op, GFX_OP_ADD);
  ir_graph_free(f.g);
}

/* The reference kernel checks the residual input it is handed. */
static void test_conv_residual_input_checks(void** unused) {
  (void)unused;
  ir_node node = node_of(GFX_OP_CONV, 4);
  node.params.conv = conv_params(2);
  node.params.conv.residual = IR_RES_ADD_THEN_ACT;
  float x[4] = {1, 2, 3, 4}, w[1] = {2}, y[4], r[4] = {1, 1, 1, 1}, small[2] = {0};
  gfx_tensor in[4] = {tensor_of(x, GFX_DTYPE_F32, SHAPE(1, 1, 2, 2)), tensor_of(w, GFX_DTYPE_F32, SHAPE(1, 1, 1, 1)),
                      {.dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}},
                      tensor_of(r, GFX_DTYPE_F32, SHAPE(1, 1, 2, 2))};
  gfx_tensor out = tensor_of(y, GFX_DTYPE_F32, SHAPE(1, 1, 2, 2));
  expect_ok(run(&node, in, &out));
  const float expected[4] = {3, 5, 7, 9};
  expect_floats_near(expected, y, 4, 0.0);
  /* a residual that would broadcast */
  in[3] = tensor_of(small, GFX_DTYPE_F32, SHAPE(1, 1, 2, 1));
  gfx_status s = run(&node, in, &out);
  assert_non_null(s);
  gfx_status_free(s);
  /* the residual is the output's memory */
  in[3] = tensor_of(y, GFX_DTYPE_F32, SHAPE(1, 1, 2, 2));
  s = run(&node, in, &out);
  assert_non_null(s);
  assert_non_null(strstr(gfx_status_message(s), "output's own memory"));
  gfx_status_free(s);
  /* a residual mode without the input, an input without the mode */
  node.n_inputs = 3;
  s = run(&node, in, &out);
  assert_non_null(s);
  gfx_status_free(s);
  node.n_inputs = 4;
  node.params.conv.residual = IR_RES_NONE;
  in[3] = tensor_of(r, GFX_DTYPE_F32, SHAPE(1, 1, 2, 2));
  s = run(&node, in, &out);
  assert_non_null(s);
  gfx_status_free(s);
}

/* ---- Gelu written out as Div, Erf, Add, Mul, Mul ---- */

typedef struct gelu_graph {
  ir_graph* g;
  int x, y, mid[4];
} gelu_graph;

/* y = Mul(Mul(x, Add(Erf(Div(x, sqrt2)), one)), half) on [2, 3, 8] float32, as PyTorch exports it.
 * `half` is the last constant: 0.5 makes a Gelu, anything else must stay as it is. */
static gelu_graph build_gelu(float half, int mul_x_first) {
  gelu_graph c;
  c.g = ir_graph_new();
  assert_non_null(c.g);
  const gfx_shape xs = SHAPE(2, 3, 8), scalar = {.rank = 0};
  expect_ok(ir_graph_add_value(c.g, "x", GFX_DTYPE_F32, &xs, &c.x));
  expect_ok(ir_graph_add_input(c.g, c.x));
  const float values[3] = {1.4142135623730951f, 1.0f, half};
  const char* cnames[3] = {"sqrt2", "one", "half"};
  int consts[3];
  for (int i = 0; i < 3; i++) {
    expect_ok(ir_graph_add_value(c.g, cnames[i], GFX_DTYPE_F32, &scalar, &consts[i]));
    expect_ok(ir_graph_set_constant(c.g, consts[i], &values[i], sizeof values[i]));
  }
  const char* mnames[4] = {"div", "erf", "add", "mul"};
  for (int i = 0; i < 4; i++) expect_ok(ir_graph_add_value(c.g, mnames[i], GFX_DTYPE_F32, &xs, &c.mid[i]));
  expect_ok(ir_graph_add_value(c.g, "y", GFX_DTYPE_F32, &xs, &c.y));
  ir_params none;
  memset(&none, 0, sizeof none);
  expect_ok(ir_graph_add_node(c.g, GFX_OP_DIV, "div", (int[]){c.x, consts[0]}, 2, &c.mid[0], 1, &none));
  expect_ok(ir_graph_add_node(c.g, GFX_OP_ERF, "erf", &c.mid[0], 1, &c.mid[1], 1, &none));
  expect_ok(ir_graph_add_node(c.g, GFX_OP_ADD, "add", (int[]){consts[1], c.mid[1]}, 2, &c.mid[2], 1, &none));
  if (mul_x_first)
    expect_ok(ir_graph_add_node(c.g, GFX_OP_MUL, "mul", (int[]){c.x, c.mid[2]}, 2, &c.mid[3], 1, &none));
  else
    expect_ok(ir_graph_add_node(c.g, GFX_OP_MUL, "mul", (int[]){c.mid[2], c.x}, 2, &c.mid[3], 1, &none));
  expect_ok(ir_graph_add_node(c.g, GFX_OP_MUL, "half", (int[]){c.mid[3], consts[2]}, 2, &c.y, 1, &none));
  expect_ok(ir_graph_add_output(c.g, c.y));
  return c;
}

static void test_fuse_gelu(void** unused) {
  (void)unused;
  for (int order = 0; order <= 1; order++) {
    gelu_graph c = build_gelu(0.5f, order);
    float unfused[16][48], fused[16][48];
    assert_true(c.g->n_values <= 16);
    fill(unfused[c.x], 48, 21);
    for (int i = 0; i < 48; i++) unfused[c.x][i] *= 4.0f; /* -4 .. 4: the curve's whole shape */
    memcpy(fused[c.x], unfused[c.x], sizeof fused[c.x]);
    void* u[16], *f[16];
    for (int v = 0; v < 16; v++) {
      u[v] = unfused[v];
      f[v] = fused[v];
    }
    run_graph(c.g, u);
    expect_ok(ir_fuse(c.g));
    assert_int_equal(c.g->n_nodes, 1);
    assert_int_equal(c.g->nodes[0].op, GFX_OP_GELU);
    assert_int_equal(c.g->nodes[0].n_inputs, 1);
    assert_int_equal(c.g->nodes[0].inputs[0], c.x);
    assert_int_equal(c.g->nodes[0].outputs[0], c.y);
    assert_int_equal(c.g->values[c.y].producer, 0);
    for (int i = 0; i < 4; i++) assert_int_equal(c.g->values[c.mid[i]].producer, -1);
    run_graph(c.g, f);
    expect_floats_near(unfused[c.y], fused[c.y], 48, 1e-6);
    ir_graph_free(c.g);
  }
  /* 0.4 instead of 0.5 is not a Gelu: all five nodes stay */
  gelu_graph c = build_gelu(0.4f, 1);
  expect_ok(ir_fuse(c.g));
  assert_int_equal(c.g->n_nodes, 5);
  ir_graph_free(c.g);
  /* the Erf's output is read twice: nothing fuses */
  c = build_gelu(0.5f, 1);
  int z;
  const gfx_shape xs = SHAPE(2, 3, 8);
  expect_ok(ir_graph_add_value(c.g, "z", GFX_DTYPE_F32, &xs, &z));
  ir_params none;
  memset(&none, 0, sizeof none);
  expect_ok(ir_graph_add_node(c.g, GFX_OP_NEG, "neg", &c.mid[1], 1, &z, 1, &none));
  expect_ok(ir_graph_add_output(c.g, z));
  expect_ok(ir_fuse(c.g));
  assert_int_equal(c.g->n_nodes, 6);
  ir_graph_free(c.g);
}

/* ---- attention's q @ k^T * scale: Transpose and Mul folded into the MatMul ---- */

typedef enum attn_variant {
  ATTN_PLAIN,        /* MatMul(q, Transpose(k, 0,1,3,2)) * 0.125 */
  ATTN_CONST_FIRST,  /* Mul(0.125, product) */
  ATTN_BAD_PERM,     /* perm 1,0,3,2 also swaps the batch dims: the Transpose stays */
  ATTN_KT_READ_TWICE, /* k^T also read by a Neg: the Transpose stays */
  ATTN_VECTOR_MUL,   /* Mul by a [6] constant: the Mul stays */
  ATTN_TRANSPOSE_A,  /* the Transpose feeds the MatMul's input 0: it stays */
} attn_variant;

typedef struct attn_graph {
  ir_graph* g;
  int q, k, kt, s, y, c, z; /* z: the Neg's output (ATTN_KT_READ_TWICE), else -1 */
} attn_graph;

static attn_graph build_attn(attn_variant v) {
  attn_graph a = {.g = ir_graph_new(), .z = -1};
  assert_non_null(a.g);
  const int f32 = GFX_DTYPE_F32;
  const gfx_shape qs = v == ATTN_TRANSPOSE_A ? SHAPE(1, 2, 4, 6) : SHAPE(1, 2, 5, 4);
  const gfx_shape ks = v == ATTN_BAD_PERM ? SHAPE(2, 1, 6, 4) : v == ATTN_TRANSPOSE_A ? SHAPE(1, 2, 4, 5) : SHAPE(1, 2, 6, 4);
  const gfx_shape kts = v == ATTN_TRANSPOSE_A ? SHAPE(1, 2, 5, 4) : SHAPE(1, 2, 4, 6), ss = SHAPE(1, 2, 5, 6);
  const gfx_shape cs = v == ATTN_VECTOR_MUL ? SHAPE(6) : (gfx_shape){.rank = 0};
  expect_ok(ir_graph_add_value(a.g, "q", f32, &qs, &a.q));
  expect_ok(ir_graph_add_value(a.g, "k", f32, &ks, &a.k));
  expect_ok(ir_graph_add_input(a.g, a.q));
  expect_ok(ir_graph_add_input(a.g, a.k));
  expect_ok(ir_graph_add_value(a.g, "kt", f32, &kts, &a.kt));
  expect_ok(ir_graph_add_value(a.g, "s", f32, &ss, &a.s));
  expect_ok(ir_graph_add_value(a.g, "y", f32, &ss, &a.y));
  expect_ok(ir_graph_add_value(a.g, "c", f32, &cs, &a.c));
  float cv[6] = {0.125f, 0.125f, 0.125f, 0.125f, 0.125f, 0.125f};
  if (v == ATTN_VECTOR_MUL) fill(cv, 6, 41);
  expect_ok(ir_graph_set_constant(a.g, a.c, cv, (size_t)gfx_shape_numel(&cs) * sizeof(float)));

  ir_params tp, mp, none;
  memset(&tp, 0, sizeof tp);
  memset(&mp, 0, sizeof mp);
  memset(&none, 0, sizeof none);
  tp.layout.dtype = f32;
  tp.layout.has_ints = 1;
  tp.layout.n_ints = 4;
  const int64_t perm[4] = {v == ATTN_BAD_PERM ? 1 : 0, v == ATTN_BAD_PERM ? 0 : 1, 3, 2};
  memcpy(tp.layout.ints, perm, sizeof perm);
  mp.gemm.alpha = 1.0f;
  mp.gemm.dtype = f32;
  expect_ok(ir_graph_add_node(a.g, GFX_OP_TRANSPOSE, "transpose", &a.k, 1, &a.kt, 1, &tp));
  if (v == ATTN_TRANSPOSE_A)
    expect_ok(ir_graph_add_node(a.g, GFX_OP_MATMUL, "matmul", (int[]){a.kt, a.q}, 2, &a.s, 1, &mp));
  else
    expect_ok(ir_graph_add_node(a.g, GFX_OP_MATMUL, "matmul", (int[]){a.q, a.kt}, 2, &a.s, 1, &mp));
  if (v == ATTN_CONST_FIRST)
    expect_ok(ir_graph_add_node(a.g, GFX_OP_MUL, "scale", (int[]){a.c, a.s}, 2, &a.y, 1, &none));
  else
    expect_ok(ir_graph_add_node(a.g, GFX_OP_MUL, "scale", (int[]){a.s, a.c}, 2, &a.y, 1, &none));
  expect_ok(ir_graph_add_output(a.g, a.y));
  if (v == ATTN_KT_READ_TWICE) {
    expect_ok(ir_graph_add_value(a.g, "z", f32, &kts, &a.z));
    expect_ok(ir_graph_add_node(a.g, GFX_OP_NEG, "neg", &a.kt, 1, &a.z, 1, &none));
    expect_ok(ir_graph_add_output(a.g, a.z));
  }
  expect_ok(ir_graph_validate(a.g));
  return a;
}

/* Builds the variant, runs it before and after ir_fuse through the reference kernels and checks
 * that y (and z) agree; returns the fused graph for the caller's checks of its structure. */
static attn_graph fuse_attn_and_compare(attn_variant v) {
  attn_graph a = build_attn(v);
  float unfused[12][64], fused[12][64];
  assert_true(a.g->n_values <= 12);
  memset(unfused, 0, sizeof unfused);
  fill(unfused[a.q], 48, 51);
  fill(unfused[a.k], 48, 52);
  memcpy(fused, unfused, sizeof fused);
  void *u[12], *f[12];
  for (int i = 0; i < 12; i++) {
    u[i] = unfused[i];
    f[i] = fused[i];
  }
  run_graph(a.g, u);
  expect_ok(ir_fuse(a.g));
  memset(fused[a.y], 0, sizeof fused[a.y]);
  run_graph(a.g, f);
  expect_floats_near(unfused[a.y], fused[a.y], 60, 1e-6);
  if (a.z >= 0) expect_floats_near(unfused[a.z], fused[a.z], 48, 0.0);
  return a;
}

static void test_fuse_attention_scores(void** unused) {
  (void)unused;
  for (int v = ATTN_PLAIN; v <= ATTN_CONST_FIRST; v++) {
    attn_graph a = fuse_attn_and_compare((attn_variant)v);
    assert_int_equal(a.g->n_nodes, 1);
    const ir_node* mm = &a.g->nodes[0];
    assert_int_equal(mm->op, GFX_OP_MATMUL);
    assert_string_equal(mm->name, "transpose+matmul+scale");
    assert_int_equal(mm->inputs[0], a.q);
    assert_int_equal(mm->inputs[1], a.k);
    assert_int_equal(mm->outputs[0], a.y);
    assert_int_equal(mm->params.gemm.trans_b, 1);
    assert_true(mm->params.gemm.alpha == 0.125f);
    assert_int_equal(a.g->values[a.y].producer, 0);
    assert_int_equal(a.g->values[a.kt].producer, -1);
    assert_int_equal(a.g->values[a.s].producer, -1);
    assert_null(a.g->values[a.c].const_data); /* nothing reads the constant any more */
    ir_graph_free(a.g);
  }
}

static void test_fuse_attention_refusals(void** unused) {
  (void)unused;
  /* perm 1,0,3,2 is no last-two swap: the Transpose stays, the Mul still goes */
  attn_graph a = fuse_attn_and_compare(ATTN_BAD_PERM);
  assert_int_equal(a.g->n_nodes, 2);
  assert_int_equal(a.g->nodes[0].op, GFX_OP_TRANSPOSE);
  assert_int_equal(a.g->nodes[1].op, GFX_OP_MATMUL);
  assert_int_equal(a.g->nodes[1].params.gemm.trans_b, 0);
  assert_true(a.g->nodes[1].params.gemm.alpha == 0.125f);
  ir_graph_free(a.g);
  /* k^T read by the MatMul and a Neg: the Transpose stays */
  a = fuse_attn_and_compare(ATTN_KT_READ_TWICE);
  assert_int_equal(a.g->n_nodes, 3);
  assert_int_equal(a.g->nodes[0].op, GFX_OP_TRANSPOSE);
  assert_int_equal(a.g->nodes[1].op, GFX_OP_MATMUL);
  assert_int_equal(a.g->nodes[1].params.gemm.trans_b, 0);
  assert_int_equal(a.g->nodes[1].inputs[1], a.kt);
  ir_graph_free(a.g);
  /* a Mul by a [6] vector is no scale: the Mul stays, the Transpose goes */
  a = fuse_attn_and_compare(ATTN_VECTOR_MUL);
  assert_int_equal(a.g->n_nodes, 2);
  assert_int_equal(a.g->nodes[0].op, GFX_OP_MATMUL);
  assert_int_equal(a.g->nodes[0].params.gemm.trans_b, 1);
  assert_true(a.g->nodes[0].params.gemm.alpha == 1.0f);
  assert_int_equal(a.g->nodes[1].op, GFX_OP_MUL);
  assert_non_null(a.g->values[a.c].const_data);
  ir_graph_free(a.g);
  /* the Transpose feeds the MatMul's a: it stays */
  a = fuse_attn_and_compare(ATTN_TRANSPOSE_A);
  assert_int_equal(a.g->n_nodes, 2);
  assert_int_equal(a.g->nodes[0].op, GFX_OP_TRANSPOSE);
  assert_int_equal(a.g->nodes[1].params.gemm.trans_b, 0);
  assert_int_equal(a.g->nodes[1].inputs[0], a.kt);
  ir_graph_free(a.g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_16bit),
      cmocka_unit_test(test_matmul_16bit),
      cmocka_unit_test(test_mixed_types_are_refused),
      cmocka_unit_test(test_conv_1d_matches_2d),
      cmocka_unit_test(test_conv_transpose_by_hand),
      cmocka_unit_test(test_conv_transpose_output_shape_pads),
      cmocka_unit_test(test_conv_transpose_matches_scatter),
      cmocka_unit_test(test_gemm_trans_and_broadcast),
      cmocka_unit_test(test_fuse_conv_relu_rewrites),
      cmocka_unit_test(test_fuse_skips_shared_values),
      cmocka_unit_test(test_fused_conv_relu_matches_unfused),
      cmocka_unit_test(test_fuse_every_activation),
      cmocka_unit_test(test_fuse_residual),
      cmocka_unit_test(test_fuse_conv_batchnorm),
      cmocka_unit_test(test_fuse_residual_moves_the_conv),
      cmocka_unit_test(test_fuse_residual_refusals),
      cmocka_unit_test(test_fuse_gelu),
      cmocka_unit_test(test_fuse_attention_scores),
      cmocka_unit_test(test_fuse_attention_refusals),
      cmocka_unit_test(test_conv_residual_input_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gfxep — the reduction, normalization, pooling and softmax ops on their own: which nodes parse
 * claims and which it refuses (and why), their geometry, and the reference kernels on small cases
 * worked out here, in float32 and float16.
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
#include "ir/ops_reduce.h"
#include "ir/shape.h"
#include "ir_test_util.h"

#define NODE_NAME "node_r"

/* A float32 node with input 0 of shape x and further float32 inputs of unknown shape. */
static ir_node_desc desc(const char* op, int opset, attr_table* t, int n_inputs, gfx_shape x) {
  ir_node_desc d = desc_base(op, opset, NODE_NAME, t, n_inputs, GFX_DTYPE_F32);
  for (int i = 1; i < n_inputs; i++) d.input_shapes[i].rank = -1;
  d.input_shapes[0] = x;
  return d;
}

/* Input i becomes a constant int64 tensor. */
static void const_i64(ir_node_desc* d, int i, const int64_t* v, size_t n) {
  d->input_dtypes[i] = GFX_DTYPE_I64;
  d->input_shapes[i] = SHAPE((int64_t)n);
  d->input_is_const[i] = 1;
  d->input_const_data[i] = v;
  d->input_const_bytes[i] = n * sizeof *v;
}

/* ================================ parse ================================ */

static void test_parse_reduce(void** unused) {
  (void)unused;
  /* opset 13 ReduceMean: axes attribute */
  attr_table t = ATTRS(A_INTS("axes", 1, -1), A_INT("keepdims", 0));
  ir_node_desc d = desc("ReduceMean", 13, &t, 1, SHAPE(2, 3, 4));
  ir_params p = parse_ok(&d, GFX_OP_REDUCE_MEAN);
  assert_int_equal(p.reduce.n_axes, 2);
  assert_int_equal(p.reduce.axes[1], -1);
  assert_int_equal(p.reduce.keepdims, 0);
  /* opset 18: the attribute is gone, axes is a constant input */
  d.since_version = 18;
  parse_refused(&d, "'axes'");
  attr_table t18 = ATTRS(A_INT("keepdims", 1), A_INT("noop_with_empty_axes", 0));
  const int64_t axes[] = {0, 2};
  d = desc("ReduceMax", 18, &t18, 2, SHAPE(2, 3, 4));
  const_i64(&d, 1, axes, 2);
  p = parse_ok(&d, GFX_OP_REDUCE_MAX);
  assert_int_equal(p.reduce.n_axes, 2);
  /* ReduceSum takes axes as an input from 13 */
  d.op_type = "ReduceSum";
  d.since_version = 13;
  parse_ok(&d, GFX_OP_REDUCE_SUM);
  /* an axes input computed at run time */
  d.input_is_const[1] = 0;
  d.input_const_data[1] = NULL;
  parse_refused(&d, "constant");
  /* an axis twice, once negative */
  const int64_t twice[] = {1, -2};
  const_i64(&d, 1, twice, 2);
  parse_refused(&d, "twice");
  /* out of range */
  const int64_t far[] = {3};
  const_i64(&d, 1, far, 1);
  parse_refused(&d, "outside");
  /* ReduceL2 without axes and noop_with_empty_axes */
  attr_table noop = ATTRS(A_INT("noop_with_empty_axes", 1));
  d = desc("ReduceL2", 18, &noop, 1, SHAPE(2, 3));
  parse_refused(&d, "noop_with_empty_axes");
  d.op_type = "ReduceMean";
  assert_int_equal(parse_ok(&d, GFX_OP_REDUCE_MEAN).reduce.noop, 1);
  /* integer Sum/Max/Min/Prod are claimed; the other kinds of integers stay with ONNX Runtime */
  attr_table none = NO_ATTRS;
  d = desc("ReduceSum", 13, &none, 1, SHAPE(2, 3));
  d.input_dtypes[0] = d.output_dtypes[0] = GFX_DTYPE_I64;
  parse_ok(&d, GFX_OP_REDUCE_SUM);
  d.op_type = "ReduceMin";
  d.since_version = 18;
  parse_ok(&d, GFX_OP_REDUCE_MIN);
  d.op_type = "ReduceMean";
  parse_refused(&d, "int64");
  d.op_type = "ReduceL2";
  d.input_dtypes[0] = d.output_dtypes[0] = GFX_DTYPE_I32;
  parse_refused(&d, "int32");
  d.op_type = "ReduceSum";
  /* float16 is claimed */
  d.input_dtypes[0] = d.output_dtypes[0] = GFX_DTYPE_F16;
  parse_ok(&d, GFX_OP_REDUCE_SUM);
  d = desc("GlobalAveragePool", 1, &none, 1, SHAPE(2, 3));
  parse_refused(&d, "rank 2");
}

static void test_parse_pool(void** unused) {
  (void)unused;
  attr_table t = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2), A_INTS("pads", 1, 0, 2, 1),
                       A_INT("ceil_mode", 1));
  ir_node_desc d = desc("MaxPool", 12, &t, 1, SHAPE(1, 3, 10, 10));
  ir_params p = parse_ok(&d, GFX_OP_MAX_POOL);
  assert_int_equal(p.pool.pads[2], 2);
  assert_int_equal(p.pool.ceil_mode, 1);
  d.op_type = "AveragePool";
  parse_ok(&d, GFX_OP_AVERAGE_POOL);
  /* AveragePool before 7 (no count_include_pad) stays with ONNX Runtime */
  d.since_version = 1;
  parse_refused(&d, "opset");
  /* the Indices output */
  d = desc("MaxPool", 12, &t, 1, SHAPE(1, 3, 10, 10));
  d.n_outputs = 2;
  d.output_dtypes[1] = GFX_DTYPE_I64;
  parse_refused(&d, "Indices");
  attr_table so = ATTRS(A_INTS("kernel_shape", 2, 2), A_INT("storage_order", 1));
  d = desc("MaxPool", 12, &so, 1, SHAPE(1, 3, 10, 10));
  parse_refused(&d, "storage_order");
  attr_table dil = ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("dilations", 2, 2));
  d = desc("AveragePool", 19, &dil, 1, SHAPE(1, 3, 10, 10));
  parse_refused(&d, "dilations");
  d.op_type = "MaxPool";
  parse_ok(&d, GFX_OP_MAX_POOL);
  /* 3-D pooling: the kernel decides the spatial dims, pads are three begins then three ends */
  attr_table k3 = ATTRS(A_INTS("kernel_shape", 2, 3, 2), A_INTS("pads", 1, 0, 1, 0, 2, 1));
  d = desc("MaxPool", 12, &k3, 1, SHAPE(1, 3, 4, 4, 4));
  p = parse_ok(&d, GFX_OP_MAX_POOL);
  assert_int_equal(p.pool.n_spatial, 3);
  assert_int_equal(p.pool.kernel[1], 3);
  assert_int_equal(p.pool.pads[4], 2);
  d.op_type = "AveragePool";
  parse_ok(&d, GFX_OP_AVERAGE_POOL);
  d = desc("MaxPool", 12, &k3, 1, SHAPE(1, 3, 4, 4));
  parse_refused(&d, "rank 4");
  attr_table k1 = ATTRS(A_INTS("kernel_shape", 2));
  d = desc("MaxPool", 12, &k1, 1, SHAPE(1, 3, 4));
  parse_refused(&d, "1 entries");
  attr_table k3_pads = ATTRS(A_INTS("kernel_shape", 2, 2, 2), A_INTS("pads", 1, 1, 1, 1));
  d = desc("MaxPool", 12, &k3_pads, 1, SHAPE(1, 3, 4, 4, 4));
  parse_refused(&d, "pads");
  attr_table big_pad = ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("pads", 2, 0, 0, 0));
  d = desc("MaxPool", 12, &big_pad, 1, SHAPE(1, 3, 10, 10));
  parse_refused(&d, "smaller than the kernel");
  /* a ceil_mode window starting in the end padding: ONNX shape inference and ORT disagree */
  attr_table edge = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 3, 3), A_INTS("pads", 0, 0, 2, 0),
                          A_INT("ceil_mode", 1));
  d = desc("MaxPool", 12, &edge, 1, SHAPE(1, 3, 11, 12));
  parse_refused(&d, "end padding");
  attr_table same_ceil = ATTRS(A_INTS("kernel_shape", 3, 3), A_STR("auto_pad", "SAME_UPPER"), A_INT("ceil_mode", 1));
  d = desc("MaxPool", 12, &same_ceil, 1, SHAPE(1, 3, 11, 12));
  parse_refused(&d, "ceil_mode");
}

static void test_parse_softmax_norm(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS;
  ir_node_desc d = desc("Softmax", 13, &none, 1, SHAPE(2, 3, 4));
  ir_params p = parse_ok(&d, GFX_OP_SOFTMAX);
  assert_int_equal(p.softmax.axis, -1);
  assert_int_equal(p.softmax.flatten, 0);
  d.since_version = 11;
  d.op_type = "LogSoftmax";
  p = parse_ok(&d, GFX_OP_LOG_SOFTMAX);
  assert_int_equal(p.softmax.axis, 1); /* the old default */
  assert_int_equal(p.softmax.flatten, 1);
  assert_int_equal(p.softmax.log, 1);
  attr_table ax = ATTRS(A_INT("axis", 3));
  d = desc("Softmax", 13, &ax, 1, SHAPE(2, 3, 4));
  parse_refused(&d, "axis 3");

  attr_table ln = ATTRS(A_INT("axis", -1), A_FLOAT("epsilon", 1e-3f));
  d = desc("LayerNormalization", 17, &ln, 3, SHAPE(2, 3, 8));
  p = parse_ok(&d, GFX_OP_LAYER_NORMALIZATION);
  assert_true(fabsf(p.norm.epsilon - 1e-3f) < 1e-9f);
  /* the optional Mean and InvStdDev outputs: float32 (stash_type 1), or the input's type */
  d.n_outputs = 3;
  d.output_dtypes[1] = d.output_dtypes[2] = GFX_DTYPE_F32;
  parse_ok(&d, GFX_OP_LAYER_NORMALIZATION);
  d.output_dtypes[2] = GFX_DTYPE_BF16;
  parse_refused(&d, "InvStdDev", "bfloat16");
  d.n_outputs = 4;
  parse_refused(&d, "4 outputs");
  /* RMSNormalization: the scale of the normalized shape, or broadcast along one run of its dims */
  attr_table rms = ATTRS(A_INT("axis", 1));
  d = desc("RMSNormalization", 23, &rms, 2, SHAPE(2, 3, 4, 5));
  d.input_shapes[1] = SHAPE(3, 4, 5);
  p = parse_ok(&d, GFX_OP_RMS_NORMALIZATION);
  assert_int_equal(p.norm.kind, IR_NORM_RMS);
  d.input_shapes[1] = SHAPE(4, 1);
  parse_ok(&d, GFX_OP_RMS_NORMALIZATION);
  d.input_shapes[1] = SHAPE(3, 1, 5);
  parse_refused(&d, "one run");
  d.input_shapes[1] = SHAPE(4, 4);
  parse_refused(&d, "one run");
  d.input_shapes[1] = SHAPE(5);
  d.input_dtypes[1] = GFX_DTYPE_F16;
  parse_refused(&d, "input 1 is float16");
  attr_table stash = ATTRS(A_INT("stash_type", 16));
  d = desc("LayerNormalization", 17, &stash, 2, SHAPE(2, 8));
  parse_refused(&d, "stash_type");
  d = desc("LayerNormalization", 17, &none, 2, SHAPE(2, 8));
  d.input_shapes[1] = SHAPE(1, 8);
  parse_refused(&d, "rank 2");

  attr_table g = ATTRS(A_INT("num_groups", 2));
  d = desc("GroupNormalization", 18, &g, 3, SHAPE(1, 4, 5));
  assert_int_equal(parse_ok(&d, GFX_OP_GROUP_NORMALIZATION).norm.per_channel, 0);
  d.since_version = 21;
  assert_int_equal(parse_ok(&d, GFX_OP_GROUP_NORMALIZATION).norm.per_channel, 1);
  attr_table g3 = ATTRS(A_INT("num_groups", 3));
  d = desc("GroupNormalization", 21, &g3, 3, SHAPE(1, 4, 5));
  parse_refused(&d, "divisible");
  d = desc("GroupNormalization", 21, &none, 3, SHAPE(1, 4, 5));
  parse_refused(&d, "num_groups");
  d = desc("InstanceNormalization", 6, &none, 3, SHAPE(1, 4, 5));
  parse_ok(&d, GFX_OP_INSTANCE_NORMALIZATION);
  d.input_dtypes[2] = GFX_DTYPE_F16;
  parse_refused(&d, "input 2");
}

/* ================================ geometry ================================ */

static void test_geometry(void** unused) {
  (void)unused;
  /* axes {0, 2} of [2,3,4,5]: kept dims 3 and 5 (strides 20, 1), reduced 2 and 4 (60, 5) */
  ir_reduce_params r = {.kind = IR_REDUCE_SUM, .n_axes = 2, .axes = {0, -2}, .keepdims = 1};
  ir_reduce_geom g;
  gfx_shape x = SHAPE(2, 3, 4, 5);
  assert_null(ir_reduce_geometry(&r, &x, &g));
  assert_true(gfx_shape_equal(&g.out, &(gfx_shape){.rank = 4, .dims = {1, 3, 1, 5}}));
  assert_int_equal(g.n_kept, 2);
  assert_int_equal(g.kept_strides[0], 20);
  assert_int_equal(g.n_red, 2);
  assert_int_equal(g.red_strides[1], 5);
  assert_int_equal(g.reduce_count, 8);
  /* trailing axes merge into one contiguous run */
  r = (ir_reduce_params){.kind = IR_REDUCE_SUM, .n_axes = 2, .axes = {2, 3}, .keepdims = 0};
  assert_null(ir_reduce_geometry(&r, &x, &g));
  assert_int_equal(g.n_red, 1);
  assert_int_equal(g.red_strides[0], 1);
  assert_int_equal(g.red_dims[0], 20);
  assert_int_equal(g.out.rank, 2);

  /* ceil_mode: 11 + pads 1,1, kernel 3, stride 2 -> ceil(10/2) + 1 = 6; last window starts at 10 - 1 = 9 < 11 */
  ir_pool_params p = {.kind = IR_POOL_MAX, .n_spatial = 2, .ceil_mode = 1, .kernel = {3, 3}, .strides = {2, 2},
                      .dilations = {1, 1}, .pads = {1, 1, 1, 1}};
  ir_pool_geom pg;
  gfx_shape img = SHAPE(1, 1, 11, 10);
  assert_null(ir_pool_geometry(&p, &img, &pg));
  assert_int_equal(pg.out_h, 6);
  assert_int_equal(pg.out_w, 6); /* ceil((10 + 2 - 3) / 2) + 1; the last starts at 10 - 1 = 9 < 10 */
  /* the last window would start in the end padding (12 >= 11 + 0): dropped */
  p = (ir_pool_params){.kind = IR_POOL_MAX, .n_spatial = 2, .ceil_mode = 1, .kernel = {3, 3}, .strides = {3, 3},
                       .dilations = {1, 1}, .pads = {0, 0, 2, 0}};
  img = SHAPE(1, 1, 11, 12);
  assert_null(ir_pool_geometry(&p, &img, &pg));
  assert_int_equal(pg.out_h, 4);
  /* SAME_LOWER puts the odd padding first */
  p = (ir_pool_params){.kind = IR_POOL_MAX, .n_spatial = 2, .auto_pad = IR_PAD_SAME_LOWER, .kernel = {4, 4},
                       .strides = {3, 3}, .dilations = {1, 1}};
  img = SHAPE(1, 1, 10, 13);
  assert_null(ir_pool_geometry(&p, &img, &pg));
  assert_int_equal(pg.out_h, 4);
  assert_int_equal(pg.pad_begin[1], 2); /* total (4-1)*3 + 4 - 10 = 3 */
  assert_int_equal(pg.pad_end[1], 1);
  /* 2-D is a depth of 1 pooled by a window of 1 */
  assert_int_equal(pg.in_d, 1);
  assert_int_equal(pg.out_d, 1);
  assert_int_equal(pg.kernel[0], 1);
  assert_int_equal(pg.pad_begin[0], 0);
  /* 3-D: pads are the depth, height and width begins, then the ends */
  p = (ir_pool_params){.kind = IR_POOL_AVERAGE, .n_spatial = 3, .kernel = {2, 3, 3}, .strides = {2, 1, 2},
                       .dilations = {1, 1, 1}, .pads = {1, 0, 1, 0, 1, 1}};
  img = SHAPE(2, 3, 5, 6, 7);
  assert_null(ir_pool_geometry(&p, &img, &pg));
  assert_int_equal(pg.out_d, 3); /* (5 + 1 - 2) / 2 + 1 */
  assert_int_equal(pg.out_h, 5); /* (6 + 1 - 3) / 1 + 1 */
  assert_int_equal(pg.out_w, 4); /* (7 + 2 - 3) / 2 + 1 */
  assert_int_equal(pg.pad_end[1], 1);
  img = SHAPE(2, 3, 5, 6);
  gfx_status rank_error = ir_pool_geometry(&p, &img, &pg);
  assert_non_null(rank_error);
  gfx_status_free(rank_error);

  ir_softmax_params sp = {.axis = 1, .flatten = 1};
  ir_softmax_geom sg;
  assert_null(ir_softmax_geometry(&sp, &x, &sg));
  assert_int_equal(sg.outer, 2);
  assert_int_equal(sg.n, 60);
  assert_int_equal(sg.inner, 1);
  sp.flatten = 0;
  assert_null(ir_softmax_geometry(&sp, &x, &sg));
  assert_int_equal(sg.n, 3);
  assert_int_equal(sg.inner, 20);

  ir_norm_params np = {.kind = IR_NORM_GROUP, .num_groups = 2, .per_channel = 1};
  ir_norm_geom ng;
  gfx_shape scale = SHAPE(4);
  x = SHAPE(3, 4, 5);
  assert_null(ir_norm_geometry(&np, &x, &scale, &ng));
  assert_int_equal(ng.rows, 6);
  assert_int_equal(ng.count, 10);
  np.per_channel = 0;
  gfx_status s = ir_norm_geometry(&np, &x, &scale, &ng);
  assert_non_null(s); /* opset 18 wants a scale per group */
  gfx_status_free(s);
}

/* ================================ reference kernels ================================ */

static void run(const ir_node* node, gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {.dev = gfx_reference_device()};
  gfx_status s = gfx_backend_reference()->node_run(&ctx, node, in, out, NULL);
  if (s) print_error("run failed: %s\n", gfx_status_message(s));
  assert_null(s);
}

static ir_node reduce_node(gfx_op op, int n_inputs, ir_params p) {
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.name = (char*)NODE_NAME;
  n.n_inputs = n_inputs;
  n.n_outputs = 1;
  n.params = p;
  return n;
}

static gfx_tensor f32(float* data, gfx_shape s) { return (gfx_tensor){.data = data, .dtype = GFX_DTYPE_F32, .shape = s}; }

static void test_ref_reduce(void** unused) {
  (void)unused;
  /* x[i][j][k] = 12i + 4j + k over [2,3,4]; sum over axes {0, 2}: 2*4 terms per j */
  float x[24], y[3];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  ir_params p = {.reduce = {.kind = IR_REDUCE_SUM, .n_axes = 2, .axes = {0, 2}, .keepdims = 0}};
  ir_node n = reduce_node(GFX_OP_REDUCE_SUM, 1, p);
  gfx_tensor in = f32(x, SHAPE(2, 3, 4)), out = f32(y, SHAPE(3));
  run(&n, &in, &out);
  /* per j: 8 terms of 4j, k = 0..3 twice (12), 12i four times for i = 0, 1 (48) */
  for (int j = 0; j < 3; j++) assert_true(fabsf(y[j] - (float)(32 * j + 60)) < 1e-4f);
  /* max and min over axis 1 (negative), keepdims */
  float m[8];
  p.reduce = (ir_reduce_params){.kind = IR_REDUCE_MAX, .n_axes = 1, .axes = {-2}, .keepdims = 1};
  n = reduce_node(GFX_OP_REDUCE_MAX, 1, p);
  out = f32(m, SHAPE(2, 1, 4));
  run(&n, &in, &out);
  assert_true(m[0] == 8.0f && m[7] == 23.0f);
  /* L2 of everything */
  float l2;
  p.reduce = (ir_reduce_params){.kind = IR_REDUCE_L2, .keepdims = 0};
  n = reduce_node(GFX_OP_REDUCE_L2, 1, p);
  out = f32(&l2, SHAPE(0));
  out.shape.rank = 0;
  run(&n, &in, &out);
  double ss = 0;
  for (int i = 0; i < 24; i++) ss += (double)i * i;
  assert_true(fabs(l2 - sqrt(ss)) < 1e-3);
  /* float16 GlobalAveragePool: means of 0..3 and 4..7 are exact in half */
  uint16_t hx[8], hy[2];
  for (int i = 0; i < 8; i++) hx[i] = gfx_float_to_half((float)i);
  p.reduce = (ir_reduce_params){.kind = IR_REDUCE_MEAN, .keepdims = 1, .global_pool = 1};
  n = reduce_node(GFX_OP_GLOBAL_AVERAGE_POOL, 1, p);
  in = (gfx_tensor){.data = hx, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1, 2, 2, 2)};
  out = (gfx_tensor){.data = hy, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1, 2, 1, 1)};
  run(&n, &in, &out);
  assert_true(gfx_half_to_float(hy[0]) == 1.5f && gfx_half_to_float(hy[1]) == 5.5f);
}

/* Integer reductions are exact: int64 beyond 2^53, sums and products wrapping like two's complement
 * (int32 keeping its low 32 bits), an empty Min/Max the type's extreme. */
static void test_ref_reduce_int(void** unused) {
  (void)unused;
  int64_t x[6] = {((int64_t)1 << 60) + 1, 3, -7, INT64_MAX, 2, 5}, y[2];
  ir_params p = {.reduce = {.kind = IR_REDUCE_SUM, .n_axes = 1, .axes = {1}, .keepdims = 0}};
  ir_node n = reduce_node(GFX_OP_REDUCE_SUM, 1, p);
  gfx_tensor in = {x, GFX_DTYPE_I64, SHAPE(2, 3)}, out = {y, GFX_DTYPE_I64, SHAPE(2)};
  run(&n, &in, &out);
  assert_true(y[0] == ((int64_t)1 << 60) - 3 && y[1] == INT64_MIN + 6);
  p.reduce.kind = IR_REDUCE_MIN;
  n = reduce_node(GFX_OP_REDUCE_MIN, 1, p);
  run(&n, &in, &out);
  assert_true(y[0] == -7 && y[1] == 2);
  p.reduce.kind = IR_REDUCE_MAX;
  n = reduce_node(GFX_OP_REDUCE_MAX, 1, p);
  run(&n, &in, &out);
  assert_true(y[0] == ((int64_t)1 << 60) + 1 && y[1] == INT64_MAX);
  int32_t a[4] = {65536, 65536, -3, 4}, b[2];
  p.reduce = (ir_reduce_params){.kind = IR_REDUCE_PROD, .n_axes = 1, .axes = {-1}};
  n = reduce_node(GFX_OP_REDUCE_PROD, 1, p);
  in = (gfx_tensor){a, GFX_DTYPE_I32, SHAPE(2, 2)};
  out = (gfx_tensor){b, GFX_DTYPE_I32, SHAPE(2)};
  run(&n, &in, &out);
  assert_true(b[0] == 0 && b[1] == -12); /* 2^32 keeps no low bits */
  int32_t empty[1], m[3];
  p.reduce = (ir_reduce_params){.kind = IR_REDUCE_MIN, .n_axes = 1, .axes = {0}};
  n = reduce_node(GFX_OP_REDUCE_MIN, 1, p);
  in = (gfx_tensor){empty, GFX_DTYPE_I32, SHAPE(0, 3)};
  out = (gfx_tensor){m, GFX_DTYPE_I32, SHAPE(3)};
  run(&n, &in, &out);
  assert_true(m[0] == INT32_MAX && m[2] == INT32_MAX);
}

static void test_ref_pool(void** unused) {
  (void)unused;
  /* 4x4 image 0..15, kernel 3, stride 2, pads 1 all round, ceil_mode */
  float x[16], y[9];
  for (int i = 0; i < 16; i++) x[i] = (float)i;
  ir_params p = {.pool = {.kind = IR_POOL_AVERAGE, .n_spatial = 2, .kernel = {3, 3}, .strides = {2, 2},
                          .dilations = {1, 1}, .pads = {1, 1, 1, 1}, .ceil_mode = 1}};
  ir_node n = reduce_node(GFX_OP_AVERAGE_POOL, 1, p);
  ir_pool_geom g;
  gfx_shape xs = SHAPE(1, 1, 4, 4);
  assert_null(ir_pool_geometry(&p.pool, &xs, &g));
  assert_int_equal(g.out_h, 3); /* ceil((4 + 2 - 3) / 2) + 1 = 3; the last starts at 3 < 5 */
  gfx_tensor in = f32(x, xs), out = f32(y, SHAPE(1, 1, 3, 3));
  run(&n, &in, &out);
  /* top-left window covers x[0,1][0,1]: (0 + 1 + 4 + 5) / 4 */
  assert_true(fabsf(y[0] - 2.5f) < 1e-6f);
  /* bottom-right window covers rows 3..5, cols 3..5: only x[3][3] = 15 is inside */
  assert_true(fabsf(y[8] - 15.0f) < 1e-6f);
  /* count_include_pad: the same window clipped to the padded input (rows 3..4) counts 4 taps */
  n.params.pool.count_include_pad = 1;
  run(&n, &in, &out);
  assert_true(fabsf(y[0] - 10.0f / 9.0f) < 1e-6f);
  assert_true(fabsf(y[8] - 15.0f / 4.0f) < 1e-6f);
  /* MaxPool with dilation 2: window {0, 2} x {0, 2} */
  float m[4];
  p.pool = (ir_pool_params){.kind = IR_POOL_MAX, .n_spatial = 2, .kernel = {2, 2}, .strides = {1, 1},
                            .dilations = {2, 2}};
  n = reduce_node(GFX_OP_MAX_POOL, 1, p);
  out = f32(m, SHAPE(1, 1, 2, 2));
  run(&n, &in, &out);
  assert_true(m[0] == 10.0f && m[3] == 15.0f);
  /* 3-D: a 2x2x4 volume 0..15 under a 2x2x2 window with stride 2 along width: two windows */
  float a3[2];
  p.pool = (ir_pool_params){.kind = IR_POOL_AVERAGE, .n_spatial = 3, .kernel = {2, 2, 2}, .strides = {1, 1, 2},
                            .dilations = {1, 1, 1}};
  n = reduce_node(GFX_OP_AVERAGE_POOL, 1, p);
  in = f32(x, SHAPE(1, 1, 2, 2, 4));
  out = f32(a3, SHAPE(1, 1, 1, 1, 2));
  run(&n, &in, &out);
  assert_true(fabsf(a3[0] - 6.5f) < 1e-6f); /* (0 + 1 + 4 + 5 + 8 + 9 + 12 + 13) / 8 */
  assert_true(fabsf(a3[1] - 8.5f) < 1e-6f);
}

static void test_ref_softmax(void** unused) {
  (void)unused;
  /* large values: the maximum is subtracted first, so nothing overflows */
  float x[6] = {1000.0f, 1001.0f, 1002.0f, -1.0f, 0.0f, 1.0f}, y[6];
  ir_params p = {.softmax = {.axis = -1}};
  ir_node n = reduce_node(GFX_OP_SOFTMAX, 1, p);
  gfx_tensor in = f32(x, SHAPE(2, 3)), out = f32(y, SHAPE(2, 3));
  run(&n, &in, &out);
  const double e = exp(1.0), s = 1 + e + e * e;
  assert_true(fabs(y[2] - e * e / s) < 1e-6 && fabs(y[3] - 1 / s) < 1e-6);
  /* axis 0 across rows of a [2,3] */
  n.params.softmax.axis = 0;
  run(&n, &in, &out);
  assert_true(fabsf(y[0] - 1.0f) < 1e-6f && y[3] < 1e-30f);
  /* opset 11 LogSoftmax flattened at axis 0: one row of six */
  n = reduce_node(GFX_OP_LOG_SOFTMAX, 1, (ir_params){.softmax = {.axis = 0, .log = 1, .flatten = 1}});
  run(&n, &in, &out);
  assert_true(fabs(y[2] - (2.0 - log(s))) < 1e-4); /* 1002 - log(e^1000 * s) */
  /* float16 */
  uint16_t hx[4], hy[4];
  for (int i = 0; i < 4; i++) hx[i] = gfx_float_to_half(0.0f);
  n = reduce_node(GFX_OP_SOFTMAX, 1, (ir_params){.softmax = {.axis = -1}});
  in = (gfx_tensor){.data = hx, .dtype = GFX_DTYPE_F16, .shape = SHAPE(4)};
  out = (gfx_tensor){.data = hy, .dtype = GFX_DTYPE_F16, .shape = SHAPE(4)};
  run(&n, &in, &out);
  assert_true(gfx_half_to_float(hy[1]) == 0.25f);
}

static void test_ref_norm(void** unused) {
  (void)unused;
  /* LayerNormalization of a row whose values sit far from 0: E[x^2] - E[x]^2 would lose them */
  float x[4] = {10000.0f, 10001.0f, 10002.0f, 10003.0f}, scale[4] = {1, 1, 1, 2}, bias[4] = {0, 0, 0, 1}, y[4];
  ir_params p = {.norm = {.kind = IR_NORM_LAYER, .axis = -1, .epsilon = 0.0f}};
  ir_node n = reduce_node(GFX_OP_LAYER_NORMALIZATION, 3, p);
  gfx_tensor in[3] = {f32(x, SHAPE(1, 4)), f32(scale, SHAPE(4)), f32(bias, SHAPE(4))};
  gfx_tensor out = f32(y, SHAPE(1, 4));
  run(&n, in, &out);
  const double sd = sqrt(1.25);
  assert_true(fabs(y[0] - (-1.5 / sd)) < 1e-5);
  assert_true(fabs(y[3] - (2 * 1.5 / sd + 1)) < 1e-5);
  /* GroupNormalization 21 on [1, 4, 2], two groups, scale per channel */
  float gx[8] = {0, 2, 4, 6, 1, 1, 3, 3}, gs[4] = {1, 2, 3, 4}, gb[4] = {0, 0, 0, 10}, gy[8];
  n = reduce_node(GFX_OP_GROUP_NORMALIZATION, 3,
              (ir_params){.norm = {.kind = IR_NORM_GROUP, .num_groups = 2, .per_channel = 1, .epsilon = 0.0f}});
  gfx_tensor gin[3] = {f32(gx, SHAPE(1, 4, 2)), f32(gs, SHAPE(4)), f32(gb, SHAPE(4))};
  out = f32(gy, SHAPE(1, 4, 2));
  run(&n, gin, &out);
  /* group 0: 0,2,4,6 mean 3 var 5; channel 1 (values 4, 6) scale 2 */
  assert_true(fabs(gy[2] - 2 * (1 / sqrt(5.0))) < 1e-5);
  /* group 1: 1,1,3,3 mean 2 var 1; channel 3 (3, 3) scale 4, bias 10 */
  assert_true(fabs(gy[7] - 14.0) < 1e-5);
  /* float16 InstanceNormalization: [1, 1, 2] -> -1, 1 exactly (epsilon 0) */
  uint16_t hx[2] = {gfx_float_to_half(3.0f), gfx_float_to_half(5.0f)}, hs = gfx_float_to_half(1.0f),
           hb = gfx_float_to_half(0.0f), hy[2];
  n = reduce_node(GFX_OP_INSTANCE_NORMALIZATION, 3, (ir_params){.norm = {.kind = IR_NORM_INSTANCE}});
  gfx_tensor hin[3] = {{.data = hx, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1, 1, 2)},
                       {.data = &hs, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1)},
                       {.data = &hb, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1)}};
  out = (gfx_tensor){.data = hy, .dtype = GFX_DTYPE_F16, .shape = SHAPE(1, 1, 2)};
  run(&n, hin, &out);
  assert_true(gfx_half_to_float(hy[0]) == -1.0f && gfx_half_to_float(hy[1]) == 1.0f);
  /* mixed types are an error, not a guess */
  hin[1].dtype = GFX_DTYPE_F32;
  gfx_exec_ctx ctx = {.dev = gfx_reference_device()};
  gfx_status s = gfx_backend_reference()->node_run(&ctx, &n, hin, &out, NULL);
  assert_non_null(s);
  gfx_status_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_reduce),   cmocka_unit_test(test_parse_pool), cmocka_unit_test(test_parse_softmax_norm),
      cmocka_unit_test(test_geometry),       cmocka_unit_test(test_ref_reduce), cmocka_unit_test(test_ref_reduce_int), cmocka_unit_test(test_ref_pool),
      cmocka_unit_test(test_ref_softmax),    cmocka_unit_test(test_ref_norm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

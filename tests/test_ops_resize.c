/* gfxep — the resampling ops on their own: which Resize, Upsample, DepthToSpace and SpaceToDepth
 * nodes parse claims or refuses (and why), the shared geometry, and the reference kernels in
 * float32 and float16.
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
#include "backend/backend.h"
#include "ir/dynamic.h"
#include "ir/graph.h"
#include "ir/grid_sample_geom.h"
#include "ir/resize_geom.h"
#include "ir/shape.h"
#include "ir_test_util.h"

/* the reference kernels, declared by the op table in the backend */
gfx_status ref_run_resize(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);
gfx_status ref_run_space_depth(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);
gfx_status ref_run_grid_sample(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);

/* ---- node descriptions ---- */

static gfx_shape shape4(int64_t a, int64_t b, int64_t c, int64_t d) { return SHAPE(a, b, c, d); }

static gfx_shape shape1(int64_t n) { return SHAPE(n); }

/* A float32 node with input X of shape x; constant inputs are added with set_const_*. */
static ir_node_desc make_desc(const char* op, int opset, attr_table* t, gfx_shape x) {
  ir_node_desc d = desc_base(op, opset, "rs", t, 1, GFX_DTYPE_F32);
  d.input_shapes[0] = x;
  return d;
}

static void set_const(ir_node_desc* d, int i, int dtype, const void* data, size_t n, size_t es) {
  if (d->n_inputs <= i) d->n_inputs = i + 1;
  d->input_dtypes[i] = dtype;
  d->input_shapes[i] = shape1((int64_t)n);
  d->input_is_const[i] = 1;
  d->input_const_data[i] = data;
  d->input_const_bytes[i] = n * es;
}
#define SET_FLOATS(d, i, arr) set_const(d, i, GFX_DTYPE_F32, arr, sizeof(arr) / sizeof(float), 4)
#define SET_INTS(d, i, arr) set_const(d, i, GFX_DTYPE_I64, arr, sizeof(arr) / sizeof(int64_t), 8)

static void expect_claimed(const ir_node_desc* d, gfx_op want, ir_params* p) {
  gfx_op op = GFX_OP_NONE;
  expect_ok(ir_op_parse(d, &op, p));
  assert_int_equal(op, want);
}

/* ---- parse ---- */

static void test_resize_parse_claims(void** unused) {
  (void)unused;
  static const float scales[] = {1, 1, 2, 1.5f};
  attr_table t = ATTRS(A_STR("mode", "linear"), A_STR("coordinate_transformation_mode", "align_corners"));
  ir_node_desc d = make_desc("Resize", 13, &t, shape4(2, 3, 4, 6));
  d.n_inputs = 3; /* roi absent */
  SET_FLOATS(&d, 2, scales);
  ir_params p;
  expect_claimed(&d, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.mode, IR_RESIZE_LINEAR);
  assert_int_equal(p.resize.coord, IR_COORD_ALIGN_CORNERS);
  assert_int_equal(p.resize.from_sizes, 0);
  assert_true(p.resize.scales[2] == 2.0f && p.resize.scales[3] == 1.5f);
  assert_int_equal(p.resize.leading, 0);

  /* geometry: floor(in * scale) */
  ir_node node = {.op = GFX_OP_RESIZE, .name = "rs", .n_inputs = 3, .n_outputs = 1, .params = p};
  gfx_shape x = shape4(2, 3, 4, 5), out;
  ir_resize_geom g;
  assert_null(ir_resize_geometry(&node, &x, &g, &out));
  assert_int_equal(out.dims[2], 8);
  assert_int_equal(out.dims[3], 7); /* 7.5 truncated */
  assert_int_equal(g.outer, 6);
  assert_false(g.identity);

  /* sizes (opset 18, axes on the last two dims, not_larger keeps the aspect ratio) */
  static const int64_t sizes[] = {8, 20};
  attr_table t18 = ATTRS(A_STR("mode", "cubic"), A_INTS("axes", 2, 3), A_STR("keep_aspect_ratio_policy", "not_larger"));
  ir_node_desc d18 = make_desc("Resize", 18, &t18, shape4(-1, 3, -1, -1));
  d18.n_inputs = 4;
  SET_INTS(&d18, 3, sizes);
  expect_claimed(&d18, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.from_sizes, 1);
  assert_int_equal(p.resize.policy, 1);
  node.params = p;
  x = shape4(1, 3, 4, 5);
  assert_null(ir_resize_geometry(&node, &x, &g, &out));
  assert_int_equal(out.dims[2], 8); /* min(8/4, 20/5) = 2 */
  assert_int_equal(out.dims[3], 10);
  assert_true(g.w.scale == 2.0f);

  /* float16 data and an opset-11 empty roi */
  static const float empty[1] = {0};
  ir_node_desc d16 = make_desc("Resize", 11, &t, shape4(1, 1, 4, 4));
  d16.input_dtypes[0] = d16.output_dtypes[0] = GFX_DTYPE_F16;
  set_const(&d16, 1, GFX_DTYPE_F32, empty, 0, 4);
  SET_FLOATS(&d16, 2, scales);
  expect_claimed(&d16, GFX_OP_RESIZE, &p);
}

/* sizes computed at run time (an image pipeline's resize to a size derived from the frame's): parse
 * marks input 3, the geometry refuses until the values are folded in, then the node is what constant
 * sizes would have made; a value no Resize can take is an INVALID_ARGUMENT naming the entry. */
static void test_resize_computed_sizes(void** unused) {
  (void)unused;
  attr_table t = ATTRS(A_STR("mode", "linear"), A_INTS("axes", 3, 2));
  ir_node_desc d = make_desc("Resize", 18, &t, shape4(1, 3, -1, -1));
  d.n_inputs = 4;
  d.input_dtypes[3] = GFX_DTYPE_I64;
  d.input_shapes[3] = shape1(2);
  ir_params p;
  expect_claimed(&d, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.value_inputs, 8u);
  assert_int_equal(p.resize.n_sizes, 2);
  ir_node node = {.op = GFX_OP_RESIZE, .name = "rs", .n_inputs = 4, .n_outputs = 1, .params = p};
  assert_int_equal(ir_node_value_inputs(&node), 8u);
  gfx_shape x = shape4(1, 3, 4, 5), out;
  ir_resize_geom g;
  expect_error(ir_resize_geometry(&node, &x, &g, &out), GFX_ERR_INTERNAL, "not read back");
  ir_value_data vals[IR_MAX_IO];
  memset(vals, 0, sizeof vals);
  vals[3] = (ir_value_data){.shape = shape1(2), .n = 2, .v = {9, 6}}; /* W then H, as axes lists them */
  ir_node r;
  expect_ok(ir_node_resolve(&node, vals, &r));
  assert_int_equal(ir_node_value_inputs(&r), 0);
  expect_ok(ir_resize_geometry(&r, &x, &g, &out));
  expect_shape(out, shape4(1, 3, 6, 9));
  vals[3] = (ir_value_data){.shape = shape1(2), .n = 2, .v = {9, -6}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "Resize 'rs'", "input 3", "entry 1 is -6");
  vals[3] = (ir_value_data){.shape = shape1(3), .n = 3, .v = {9, 6, 1}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "sizes", "2 entries");

  /* refused: computed sizes of another length or type than the axes need */
  d.input_shapes[3] = shape1(4);
  parse_refused(&d, "not declared as 2 entries");
  d.input_shapes[3] = SHAPE(2, 1);
  parse_refused(&d, "not declared as 2 entries");
  /* a length the model leaves unknown is taken as the one ONNX requires, and checked when read back */
  d.input_shapes[3] = shape1(GFX_DIM_UNKNOWN);
  expect_claimed(&d, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.n_sizes, 2);
  d.input_shapes[3] = shape1(2);
  d.input_dtypes[3] = GFX_DTYPE_I32;
  parse_refused(&d, "sizes (input 3) is int32");
  d.input_dtypes[3] = GFX_DTYPE_I64;
  /* nearest to computed sizes (the FPN's top-down path) is claimed like linear */
  attr_table tn = ATTRS(A_STR("mode", "nearest"), A_INTS("axes", 3, 2));
  d.attrs = reader_for(&tn);
  expect_claimed(&d, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.mode, IR_RESIZE_NEAREST);
  assert_int_equal(p.resize.from_sizes, 1);
}

/* Nearest rounding ties as ONNX Runtime's CPU kernels read them: a position within 1e-6 of a half
 * is a tie, so 7 -> 4 asymmetric (2 / (4/7.f) = 3.4999998) rounds as 3.5 would; one 1.2e-6 away is not. */
static void test_resize_nearest_ties(void** unused) {
  (void)unused;
  const ir_resize_axis a = {.in = 7, .out = 4, .scale = 4.0f / 7.0f, .roi_start = 0, .roi_end = 1};
  const float c = ir_resize_source_coord(&a, IR_COORD_ASYMMETRIC, 2);
  assert_true(c != 3.5f && fabsf(c - 3.5f) < 1e-6f); /* the float quotient misses the half */
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_CEIL, c), 4);
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_FLOOR, c), 3);
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_FLOOR, 3.5000002f), 3);
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_CEIL, 2.5f), 3);
  /* outside the tolerance: the nearest index, whichever the preference */
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_CEIL, 2.4999986f), 2);
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_ROUND_PREFER_FLOOR, 2.5000012f), 3);
  /* floor and ceil take no tolerance */
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_FLOOR, 2.9999998f), 2);
  assert_int_equal(ir_resize_nearest_index(&a, IR_NEAREST_CEIL, 3.0000002f), 4);
}

static void test_resize_parse_refuses(void** unused) {
  (void)unused;
  static const float scale_n[] = {2, 1, 2, 2};
  static const float scales[] = {1, 1, 2, 2};
  static const int64_t sizes[] = {1, 1, 8, 8};
  attr_table none = ATTRS(A_STR("mode", "linear"));
  ir_node_desc d = make_desc("Resize", 13, &none, shape4(1, 1, 4, 4));
  d.n_inputs = 3;
  /* a leading dim resizes: claimed, through the general geometry */
  SET_FLOATS(&d, 2, scale_n);
  ir_params p;
  expect_claimed(&d, GFX_OP_RESIZE, &p);
  assert_int_equal(p.resize.leading, 1);
  ir_node node = {.op = GFX_OP_RESIZE, .name = "rs", .n_inputs = 3, .n_outputs = 1, .params = p};
  gfx_shape x = shape4(3, 1, 4, 5), out;
  ir_resize_geom g;
  assert_null(ir_resize_geometry(&node, &x, &g, &out));
  assert_int_equal(g.general, 1);
  assert_int_equal(g.rank, 4);
  assert_int_equal(out.dims[0], 6);
  assert_int_equal(out.dims[3], 10);
  assert_int_equal(g.axes[0].out, 6);
  assert_true(g.axes[1].scale == 1.0f);
  /* cubic over four dims (256 taps per output) stays with ONNX Runtime */
  static const float scale_4[] = {2, 2, 2, 2};
  attr_table cubic = ATTRS(A_STR("mode", "cubic"));
  ir_node_desc dc = make_desc("Resize", 13, &cubic, shape4(1, 1, 4, 4));
  dc.n_inputs = 3;
  SET_FLOATS(&dc, 2, scale_4);
  parse_refused(&dc, "up to 3 dims");

  SET_FLOATS(&d, 2, scales);
  d.input_is_const[2] = 0;
  d.input_const_data[2] = NULL;
  parse_refused(&d, "computed at run time");

  ir_node_desc both = make_desc("Resize", 13, &none, shape4(1, 1, 4, 4));
  SET_FLOATS(&both, 2, scales);
  SET_INTS(&both, 3, sizes);
  parse_refused(&both, "both scales and sizes");

  attr_table nearest = ATTRS(A_STR("mode", "nearest"));
  ir_node_desc ns = make_desc("Resize", 13, &nearest, shape4(1, 1, 4, 4));
  ns.n_inputs = 4;
  SET_INTS(&ns, 3, sizes);
  expect_claimed(&ns, GFX_OP_RESIZE, &p);

  attr_table aa = ATTRS(A_STR("mode", "linear"), A_INT("antialias", 1));
  ir_node_desc da = make_desc("Resize", 18, &aa, shape4(1, 1, 4, 4));
  SET_FLOATS(&da, 2, scales);
  parse_refused(&da, "antialias");

  attr_table ex = ATTRS(A_STR("mode", "linear"), A_INT("exclude_outside", 1));
  ir_node_desc de = make_desc("Resize", 13, &ex, shape4(1, 1, 4, 4));
  SET_FLOATS(&de, 2, scales);
  parse_refused(&de, "exclude_outside");

  attr_table sym = ATTRS(A_STR("coordinate_transformation_mode", "half_pixel_symmetric"));
  ir_node_desc ds = make_desc("Resize", 13, &sym, shape4(1, 1, 4, 4));
  SET_FLOATS(&ds, 2, scales);
  parse_refused(&ds, "opset 19");

  attr_table bad = ATTRS(A_STR("mode", "area"));
  ir_node_desc db = make_desc("Resize", 13, &bad, shape4(1, 1, 4, 4));
  SET_FLOATS(&db, 2, scales);
  parse_refused(&db, "mode 'area'");

  ir_node_desc dr = make_desc("Resize", 13, &none, shape4(1, 1, 4, 4));
  dr.input_shapes[0].rank = -1;
  SET_FLOATS(&dr, 2, scales);
  parse_refused(&dr, "rank is not known");

  attr_table pol = ATTRS(A_STR("keep_aspect_ratio_policy", "not_smaller"), A_STR("mode", "linear"));
  ir_node_desc dp = make_desc("Resize", 18, &pol, shape4(1, 1, 4, 4));
  SET_INTS(&dp, 3, sizes);
  parse_refused(&dp, "without axes");

  /* Upsample: scales below 1 and opset 7's attribute form stay with ONNX Runtime */
  static const float down[] = {1, 1, 0.5f, 0.5f};
  ir_node_desc du = make_desc("Upsample", 9, &none, shape4(1, 1, 4, 4));
  SET_FLOATS(&du, 1, down);
  parse_refused(&du, "Upsample needs >= 1");
  ir_node_desc du7 = make_desc("Upsample", 7, &none, shape4(1, 1, 4, 4));
  parse_refused(&du7, "versions from 9");
}

/* A float32 RoiAlign node: X of shape x, rois [?, 4], int64 batch indices. */
static ir_node_desc roi_desc(int opset, attr_table* t, gfx_shape x) {
  ir_node_desc d = make_desc("RoiAlign", opset, t, x);
  d.n_inputs = 3;
  d.input_dtypes[1] = GFX_DTYPE_F32;
  d.input_shapes[1] = SHAPE(-1, 4);
  d.input_dtypes[2] = GFX_DTYPE_I64;
  d.input_shapes[2] = SHAPE(-1);
  return d;
}

static void test_roi_align_parse(void** unused) {
  (void)unused;
  attr_table t = ATTRS(A_STR("mode", "max"), A_INT("output_height", 3), A_INT("output_width", 2),
                       A_INT("sampling_ratio", 2), A_FLOAT("spatial_scale", 0.25f));
  ir_node_desc d = roi_desc(16, &t, shape4(1, 3, 8, 8));
  ir_params p;
  expect_claimed(&d, GFX_OP_ROI_ALIGN, &p);
  assert_true(p.roi_align.mode_max == 1 && p.roi_align.half_pixel == 1 && p.roi_align.out_h == 3);
  assert_true(p.roi_align.sampling_ratio == 2 && p.roi_align.spatial_scale == 0.25f);
  /* opset 10 has output_half_pixel only */
  ir_node_desc d10 = d;
  d10.since_version = 10;
  expect_claimed(&d10, GFX_OP_ROI_ALIGN, &p);
  assert_int_equal(p.roi_align.half_pixel, 0);
  /* the output shape: [regions, C, output_height, output_width] */
  ir_node node = {.op = GFX_OP_ROI_ALIGN, .name = "ra", .n_inputs = 3, .n_outputs = 1, .params = p};
  gfx_shape in[3] = {shape4(2, 3, 8, 8), shape_of(2, (int64_t[]){5, 4}), shape_of(1, (int64_t[]){5})}, out;
  assert_null(ir_infer_roi_align(&node, in, &out));
  assert_true(out.rank == 4 && out.dims[0] == 5 && out.dims[1] == 3 && out.dims[2] == 3 && out.dims[3] == 2);
  in[2] = shape_of(1, (int64_t[]){4});
  gfx_status s = ir_infer_roi_align(&node, in, &out);
  assert_non_null(s);
  gfx_status_free(s);
  attr_table neg = ATTRS(A_INT("sampling_ratio", -1));
  ir_node_desc dn = roi_desc(16, &neg, shape4(1, 3, 8, 8));
  parse_refused(&dn, "sampling_ratio");
  attr_table mode = ATTRS(A_STR("mode", "median"));
  ir_node_desc dm = roi_desc(16, &mode, shape4(1, 3, 8, 8));
  parse_refused(&dm, "mode 'median'");
  ir_node_desc di = roi_desc(16, &t, shape4(1, 3, 8, 8));
  di.input_dtypes[2] = GFX_DTYPE_I32;
  parse_refused(&di, "batch_indices is int32");
}

static void test_space_depth_parse(void** unused) {
  (void)unused;
  attr_table crd = ATTRS(A_INT("blocksize", 2), A_STR("mode", "CRD"));
  ir_node_desc d = make_desc("DepthToSpace", 13, &crd, shape4(1, 8, 2, 2));
  d.input_dtypes[0] = d.output_dtypes[0] = GFX_DTYPE_I64;
  ir_params p;
  expect_claimed(&d, GFX_OP_DEPTH_TO_SPACE, &p);
  assert_int_equal(p.space_depth.blocksize, 2);
  assert_int_equal(p.space_depth.crd, 1);

  ir_node_desc d1 = make_desc("DepthToSpace", 1, &crd, shape4(1, 8, 2, 2));
  parse_refused(&d1, "attribute 'mode'");
  attr_table none = ATTRS(A_STR("mode", "DCR"));
  ir_node_desc d0 = make_desc("DepthToSpace", 11, &none, shape4(1, 8, 2, 2));
  parse_refused(&d0, "blocksize");
  attr_table b2 = ATTRS(A_INT("blocksize", 2));
  ir_node_desc d3 = make_desc("SpaceToDepth", 13, &b2, shape4(1, 8, 2, 2));
  d3.input_shapes[0].rank = 3;
  parse_refused(&d3, "rank 3");

  /* infer: channels must divide by blocksize^2 */
  ir_node node = {.op = GFX_OP_DEPTH_TO_SPACE, .name = "d", .n_inputs = 1, .n_outputs = 1, .params = p};
  gfx_shape in = shape4(1, 6, 2, 2), out;
  gfx_status s = ir_infer_depth_to_space(&node, &in, &out);
  assert_non_null(s);
  assert_int_equal(gfx_status_code(s), GFX_ERR_INVALID_ARGUMENT);
  gfx_status_free(s);
}

/* ---- reference kernels ---- */

static ir_node parsed_node(const ir_node_desc* d) {
  ir_node node;
  memset(&node, 0, sizeof node);
  node.name = "rs";
  node.n_inputs = d->n_inputs;
  node.n_outputs = 1;
  expect_claimed(d, ir_op_from_name(d->op_type), &node.params);
  node.op = ir_op_from_name(d->op_type);
  return node;
}

static void run_resize_f32(const ir_node* node, gfx_shape xs, const float* x, float* y, gfx_shape ys) {
  gfx_tensor in[4];
  memset(in, 0, sizeof in);
  in[0] = (gfx_tensor){.data = (void*)x, .dtype = GFX_DTYPE_F32, .shape = xs};
  gfx_tensor out = {.data = y, .dtype = GFX_DTYPE_F32, .shape = ys};
  gfx_status s = ref_run_resize(NULL, node, in, &out);
  if (s) print_error("%s\n", gfx_status_message(s));
  assert_null(s);
}

static void expect_floats(const float* got, const float* want, int n, float tol) {
  for (int i = 0; i < n; i++) {
    if (fabsf(got[i] - want[i]) > tol) print_error("element %d: %.7g, expected %.7g\n", i, got[i], want[i]);
    assert_true(fabsf(got[i] - want[i]) <= tol);
  }
}

static void test_ref_resize_nearest_linear(void** unused) {
  (void)unused;
  static const float scales[] = {1, 1, 2, 2};
  attr_table nn = ATTRS(A_STR("coordinate_transformation_mode", "asymmetric"), A_STR("nearest_mode", "floor"));
  ir_node_desc d = make_desc("Resize", 13, &nn, shape4(1, 1, 2, 2));
  d.n_inputs = 3;
  SET_FLOATS(&d, 2, scales);
  ir_node node = parsed_node(&d);
  const float x[4] = {1, 2, 3, 4};
  float y[16];
  run_resize_f32(&node, shape4(1, 1, 2, 2), x, y, shape4(1, 1, 4, 4));
  const float want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  expect_floats(y, want, 16, 0.0f);

  /* bilinear half_pixel, one row [0, 1] -> four columns; edges clamp */
  static const float scales_w[] = {1, 1, 1, 2};
  attr_table lin = ATTRS(A_STR("mode", "linear"));
  ir_node_desc dl = make_desc("Resize", 13, &lin, shape4(1, 1, 1, 2));
  dl.n_inputs = 3;
  SET_FLOATS(&dl, 2, scales_w);
  ir_node ln = parsed_node(&dl);
  const float xl[2] = {0, 1};
  float yl[4];
  run_resize_f32(&ln, shape4(1, 1, 1, 2), xl, yl, shape4(1, 1, 1, 4));
  const float wl[4] = {0, 0.25f, 0.75f, 1};
  expect_floats(yl, wl, 4, 1e-7f);

  /* the same in float16: one rounding at the store */
  uint16_t xh[2] = {gfx_float_to_half(0), gfx_float_to_half(1)}, yh[4];
  gfx_tensor in[4];
  memset(in, 0, sizeof in);
  in[0] = (gfx_tensor){.data = xh, .dtype = GFX_DTYPE_F16, .shape = shape4(1, 1, 1, 2)};
  gfx_tensor out = {.data = yh, .dtype = GFX_DTYPE_F16, .shape = shape4(1, 1, 1, 4)};
  assert_null(ref_run_resize(NULL, &ln, in, &out));
  for (int i = 0; i < 4; i++) assert_true(gfx_half_to_float(yh[i]) == wl[i]);

  /* a wrong output shape is an error, not a write */
  out.shape = shape4(1, 1, 1, 5);
  gfx_status s = ref_run_resize(NULL, &ln, in, &out);
  assert_non_null(s);
  gfx_status_free(s);
}

static void test_ref_resize_cubic_crop(void** unused) {
  (void)unused;
  /* cubic weights sum to 1: a constant image stays constant, with or without exclude_outside */
  static const float scales[] = {1, 1, 1.7f, 0.6f};
  attr_table cub = ATTRS(A_STR("mode", "cubic"), A_INT("exclude_outside", 1), A_FLOAT("cubic_coeff_a", -0.5f));
  ir_node_desc d = make_desc("Resize", 13, &cub, shape4(1, 2, 5, 5));
  d.n_inputs = 3;
  SET_FLOATS(&d, 2, scales);
  ir_node node = parsed_node(&d);
  float x[50], y[2 * 8 * 3];
  for (int i = 0; i < 50; i++) x[i] = 3.5f;
  run_resize_f32(&node, shape4(1, 2, 5, 5), x, y, shape4(1, 2, 8, 3));
  for (int i = 0; i < 48; i++) assert_true(fabsf(y[i] - 3.5f) < 1e-5f);

  /* tf_crop_and_resize: positions outside the input take extrapolation_value */
  static const float roi[] = {0, 0, -1, 0, 1, 1, 2, 1};
  static const int64_t sizes[] = {1, 1, 3, 2};
  attr_table crop = ATTRS(A_STR("mode", "linear"), A_STR("coordinate_transformation_mode", "tf_crop_and_resize"),
                          A_FLOAT("extrapolation_value", -7.0f));
  ir_node_desc dc = make_desc("Resize", 13, &crop, shape4(1, 1, 2, 2));
  dc.n_inputs = 4;
  SET_FLOATS(&dc, 1, roi);
  SET_INTS(&dc, 3, sizes);
  ir_node cn = parsed_node(&dc);
  const float xc[4] = {1, 2, 3, 4};
  float yc[6];
  run_resize_f32(&cn, shape4(1, 1, 2, 2), xc, yc, shape4(1, 1, 3, 2));
  /* rows map to -1, 0.5, 2 (of 0..1): the first and last fall outside */
  const float wc[6] = {-7, -7, 2, 3, -7, -7};
  expect_floats(yc, wc, 6, 1e-6f);
}

static void test_ref_space_depth(void** unused) {
  (void)unused;
  /* DCR and CRD against ONNX's reshape/transpose definitions on [1, 8, 1, 1] -> [1, 2, 2, 2] */
  attr_table dcr = ATTRS(A_INT("blocksize", 2), A_STR("mode", "DCR"));
  attr_table crd = ATTRS(A_INT("blocksize", 2), A_STR("mode", "CRD"));
  int64_t x[8], y[8], back[8];
  for (int i = 0; i < 8; i++) x[i] = 100 + i;
  gfx_tensor in = {.data = x, .dtype = GFX_DTYPE_I64, .shape = shape4(1, 8, 1, 1)};
  gfx_tensor out = {.data = y, .dtype = GFX_DTYPE_I64, .shape = shape4(1, 2, 2, 2)};

  ir_node_desc dd = make_desc("DepthToSpace", 13, &dcr, shape4(1, 8, 1, 1));
  dd.input_dtypes[0] = dd.output_dtypes[0] = GFX_DTYPE_I64;
  ir_node nd = parsed_node(&dd);
  assert_null(ref_run_space_depth(NULL, &nd, &in, &out));
  /* DCR: y[c][i][j] = x[(i*2 + j)*2 + c] */
  const int64_t want_dcr[8] = {100, 102, 104, 106, 101, 103, 105, 107};
  for (int i = 0; i < 8; i++) assert_int_equal(y[i], want_dcr[i]);

  ir_node_desc dc = make_desc("DepthToSpace", 13, &crd, shape4(1, 8, 1, 1));
  dc.input_dtypes[0] = dc.output_dtypes[0] = GFX_DTYPE_I64;
  ir_node nc = parsed_node(&dc);
  assert_null(ref_run_space_depth(NULL, &nc, &in, &out));
  for (int i = 0; i < 8; i++) assert_int_equal(y[i], 100 + i); /* CRD: y[c][i][j] = x[c*4 + i*2 + j] */

  /* SpaceToDepth undoes DepthToSpace DCR */
  attr_table b2 = ATTRS(A_INT("blocksize", 2));
  ir_node_desc ds = make_desc("SpaceToDepth", 13, &b2, shape4(1, 2, 2, 2));
  ds.input_dtypes[0] = ds.output_dtypes[0] = GFX_DTYPE_I64;
  ir_node ns = parsed_node(&ds);
  assert_null(ref_run_space_depth(NULL, &nd, &in, &out));
  gfx_tensor in2 = {.data = y, .dtype = GFX_DTYPE_I64, .shape = shape4(1, 2, 2, 2)};
  gfx_tensor out2 = {.data = back, .dtype = GFX_DTYPE_I64, .shape = shape4(1, 8, 1, 1)};
  assert_null(ref_run_space_depth(NULL, &ns, &in2, &out2));
  for (int i = 0; i < 8; i++) assert_int_equal(back[i], x[i]);
}

/* ---- GridSample ---- */

static void test_grid_sample_parse(void** unused) {
  (void)unused;
  attr_table cubic = ATTRS(A_STR("mode", "bicubic"), A_STR("padding_mode", "reflection"), A_INT("align_corners", 1));
  ir_node_desc d = make_desc("GridSample", 16, &cubic, shape4(1, 3, 4, 5));
  d.n_inputs = 2;
  d.input_dtypes[1] = GFX_DTYPE_F32;
  d.input_shapes[1] = shape4(1, 6, 7, 2);
  ir_params p;
  expect_claimed(&d, GFX_OP_GRID_SAMPLE, &p);
  assert_int_equal(p.grid_sample.mode, IR_GRID_CUBIC);
  assert_int_equal(p.grid_sample.padding, IR_GRID_PAD_REFLECTION);
  assert_int_equal(p.grid_sample.align_corners, 1);
  /* a float16 input with a float32 grid (a model lowered to float16) */
  d.input_dtypes[0] = d.output_dtypes[0] = GFX_DTYPE_F16;
  expect_claimed(&d, GFX_OP_GRID_SAMPLE, &p);
  d.input_dtypes[1] = GFX_DTYPE_BF16;
  parse_refused(&d, "input 1 is bfloat16");
  d.input_dtypes[0] = d.output_dtypes[0] = d.input_dtypes[1] = GFX_DTYPE_F32;
  /* opset 20's names only from 20 on */
  d.since_version = 20;
  parse_refused(&d, "mode 'bicubic'");
  attr_table cubic20 = ATTRS(A_STR("mode", "cubic"));
  ir_node_desc d20 = make_desc("GridSample", 20, &cubic20, shape4(1, 3, 4, 5));
  d20.n_inputs = 2;
  d20.input_dtypes[1] = GFX_DTYPE_F32;
  d20.input_shapes[1] = shape4(1, 6, 7, 2);
  expect_claimed(&d20, GFX_OP_GRID_SAMPLE, &p);
  assert_int_equal(p.grid_sample.mode, IR_GRID_CUBIC);
  /* volumetric input, reflection about coinciding borders */
  d20.input_shapes[0].rank = 5;
  parse_refused(&d20, "5-D");
  d = make_desc("GridSample", 16, &cubic, shape4(1, 3, 1, 5));
  d.n_inputs = 2;
  d.input_dtypes[1] = GFX_DTYPE_F32;
  d.input_shapes[1] = shape4(1, 6, 7, 2);
  parse_refused(&d, "reflection", "height or width 1");
}

/* One pixel of a 2x2 image [[1, 2], [3, 4]] sampled at each of three grid points. */
static void grid_sample_2x2(const char* mode, const char* padding, int align, const float* grid, const float* want) {
  attr_table t = ATTRS(A_STR("mode", mode), A_STR("padding_mode", padding), A_INT("align_corners", align));
  ir_node_desc d = make_desc("GridSample", 16, &t, shape4(1, 1, 2, 2));
  d.n_inputs = 2;
  d.input_dtypes[1] = GFX_DTYPE_F32;
  d.input_shapes[1] = shape4(1, 1, 3, 2);
  ir_node node = parsed_node(&d);
  const float x[4] = {1, 2, 3, 4};
  float y[3];
  gfx_tensor in[2] = {{.data = (void*)x, .dtype = GFX_DTYPE_F32, .shape = shape4(1, 1, 2, 2)},
                      {.data = (void*)grid, .dtype = GFX_DTYPE_F32, .shape = shape4(1, 1, 3, 2)}};
  gfx_tensor out = {.data = y, .dtype = GFX_DTYPE_F32, .shape = shape4(1, 1, 1, 3)};
  gfx_status s = ref_run_grid_sample(NULL, &node, in, &out);
  if (s) print_error("%s\n", gfx_status_message(s));
  assert_null(s);
  expect_floats(y, want, 3, 1e-6f);
}

static void test_ref_grid_sample(void** unused) {
  (void)unused;
  /* (0, 0) is the image's centre; (-1, -1) the outer corner of pixel (0, 0) without align_corners,
   * its centre with it; (1, 0.5) lies half a pixel right of the image, between its rows */
  const float grid[6] = {0, 0, -1, -1, 1, 0.5f};
  /* zeros: the corner reads one tap of four inside (x = y = -0.5); (1, 0.5) is x = 1.5, y = 1: half
   * of pixel (1, 1) and half a zero; border and reflection read pixel (1, 1) for the tap outside */
  grid_sample_2x2("bilinear", "zeros", 0, grid, (const float[]){2.5f, 0.25f, 2});
  grid_sample_2x2("bilinear", "border", 0, grid, (const float[]){2.5f, 1, 4});
  grid_sample_2x2("bilinear", "reflection", 0, grid, (const float[]){2.5f, 1, 4});
  /* align_corners: (-1, -1) is pixel (0, 0) itself; (1, 0.5) is x = 1, y = 0.75 */
  grid_sample_2x2("bilinear", "zeros", 1, grid, (const float[]){2.5f, 1, 0.25f * 2 + 0.75f * 4});
  /* nearest: x = 0.5 and y = 0.5 round to even (0); (1, 0.5) without align_corners is x = 1.5 -> 2,
   * outside (0, border 1), y = 1 */
  grid_sample_2x2("nearest", "zeros", 0, grid, (const float[]){1, 1, 0});
  grid_sample_2x2("nearest", "border", 0, grid, (const float[]){1, 1, 4});
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resize_parse_claims),     cmocka_unit_test(test_resize_parse_refuses),
      cmocka_unit_test(test_resize_computed_sizes),     cmocka_unit_test(test_resize_nearest_ties),
      cmocka_unit_test(test_space_depth_parse),
      cmocka_unit_test(test_roi_align_parse),       cmocka_unit_test(test_ref_resize_nearest_linear),
      cmocka_unit_test(test_ref_resize_cubic_crop),   cmocka_unit_test(test_ref_space_depth),
      cmocka_unit_test(test_grid_sample_parse),       cmocka_unit_test(test_ref_grid_sample),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

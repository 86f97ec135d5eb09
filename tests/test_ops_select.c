/* gfxep — NonZero and NonMaxSuppression on their own, and the value inputs that make shapes depend on
 * data (ir/dynamic.h): which nodes parse claims and why it refuses others, the bounded shapes, the
 * reference kernels against answers worked out by hand (ORT's order and tie rules, an overlap exactly
 * at the threshold), Slice's run-time starts and ends, and the expansion of a selection into its
 * bounded node and the Slice of its count.
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

#include "backend/registry.h"
#include "backend/wrap.h"
#include "ir/dynamic.h"
#include "ir/graph.h"
#include "ir/ops_select.h"
#include "ir/shape.h"
#include "ir_test_util.h"

#define NODE_NAME "node_x"

gfx_status ir_infer_nonzero(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_nms(const ir_node* node, const gfx_shape* in, gfx_shape* out);
gfx_status ir_infer_slice(const ir_node* node, const gfx_shape* in, gfx_shape* out);

/* Input i becomes a constant of n values (a 1-D tensor; 0-D when scalar). */
static void make_const(ir_node_desc* d, int i, int dtype, const void* v, size_t n, size_t elem, int scalar) {
  d->input_dtypes[i] = dtype;
  d->input_shapes[i] = scalar ? SCALAR : SHAPE((int64_t)n);
  d->input_is_const[i] = 1;
  d->input_const_data[i] = v;
  d->input_const_bytes[i] = n * elem;
}

/* ---- NonZero ---- */

static void test_parse_nonzero(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS;
  static const int types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32,
                              GFX_DTYPE_I64, GFX_DTYPE_BOOL, GFX_DTYPE_U8,  GFX_DTYPE_I8};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    ir_node_desc d = desc_base("NonZero", 13, NODE_NAME, &none, 1, types[t]);
    d.input_shapes[0] = SHAPE(3, 4);
    d.output_dtypes[0] = GFX_DTYPE_I64;
    ir_params p = parse_ok(&d, GFX_OP_NON_ZERO);
    assert_int_equal(p.select.dtype, types[t]);
    assert_true(ir_op_data_dependent(GFX_OP_NON_ZERO, &p) && ir_op_is_selection(GFX_OP_NON_ZERO));
  }
  ir_node_desc d = desc_base("NonZero", 9, NODE_NAME, &none, 1, GFX_DTYPE_F32);
  d.input_shapes[0].rank = -1; /* unknown rank: taken */
  d.output_dtypes[0] = GFX_DTYPE_I64;
  parse_ok(&d, GFX_OP_NON_ZERO);
  d.input_shapes[0] = SCALAR;
  parse_refused(&d, "scalar", "[1, N]");
  d = desc_base("NonZero", 13, NODE_NAME, &none, 1, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(4);
  d.output_dtypes[0] = GFX_DTYPE_I32;
  parse_refused(&d, "int64");
  attr_table extra = ATTRS(A_INT("axis", 0));
  d = desc_base("NonZero", 13, NODE_NAME, &extra, 1, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(4);
  d.output_dtypes[0] = GFX_DTYPE_I64;
  parse_refused(&d, "axis");
  /* the bound: every element's coordinates, then the count */
  ir_node n = node_of(GFX_OP_NON_ZERO, 1);
  n.n_outputs = 2;
  gfx_shape in[1] = {SHAPE(2, 3, 5)}, out[2];
  expect_ok(ir_infer_nonzero(&n, in, out));
  expect_shape(out[0], SHAPE(3, 30));
  expect_shape(out[1], SHAPE(1));
  in[0] = SHAPE(4, 0);
  expect_ok(ir_infer_nonzero(&n, in, out));
  expect_shape(out[0], SHAPE(2, 0));
  in[0] = SCALAR;
  expect_ok(ir_infer_nonzero(&n, in, out));
  expect_shape(out[0], SHAPE(1, 1));
  n.n_outputs = 1;
  expect_error(ir_infer_nonzero(&n, in, out), GFX_ERR_INTERNAL, "bound and count");
}

/* Runs a bounded node on the reference backend; the count into *count. */
static gfx_status run_ref(ir_node* n, gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {gfx_reference_device(), NULL, NULL, 0};
  return gfx_backend_node_run(&ctx, n, in, out, NULL);
}

static void test_nonzero_kernel(void** unused) {
  (void)unused;
  /* float: -0.0 is zero, NaN is not; coordinates in row-major order */
  const float x[2][3] = {{0.0f, -0.0f, 2.5f}, {NAN, 0.0f, -1.0f}};
  int64_t y[2 * 6], count = -1;
  ir_node n = node_of(GFX_OP_NON_ZERO, 1);
  n.n_outputs = 2;
  gfx_tensor in[1] = {tensor_of((void*)x, GFX_DTYPE_F32, SHAPE(2, 3))};
  gfx_tensor out[2] = {tensor_of(y, GFX_DTYPE_I64, SHAPE(2, 6)), tensor_of(&count, GFX_DTYPE_I64, SHAPE(1))};
  expect_ok(run_ref(&n, in, out));
  assert_int_equal(count, 3);
  /* columns 0..2 of [2, 6]: (0, 2), (1, 0), (1, 2) */
  assert_true(y[0] == 0 && y[1] == 1 && y[2] == 1);
  assert_true(y[6] == 2 && y[7] == 0 && y[8] == 2);
  /* float16 and bfloat16: the sign bit alone is zero */
  const uint16_t h[4] = {0x8000, 0x0001, 0x0000, 0x7c00};
  in[0] = tensor_of((void*)h, GFX_DTYPE_F16, SHAPE(4));
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(1, 4));
  expect_ok(run_ref(&n, in, out));
  assert_true(count == 2 && y[0] == 1 && y[1] == 3);
  in[0] = tensor_of((void*)h, GFX_DTYPE_BF16, SHAPE(4));
  expect_ok(run_ref(&n, in, out));
  assert_true(count == 2 && y[0] == 1 && y[1] == 3);
  /* integers and bools: any bit */
  const int64_t big[3] = {INT64_MIN, 0, 7};
  in[0] = tensor_of((void*)big, GFX_DTYPE_I64, SHAPE(3));
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(1, 3));
  expect_ok(run_ref(&n, in, out));
  assert_true(count == 2 && y[0] == 0 && y[1] == 2);
  const uint8_t b[5] = {0, 1, 0, 0, 1};
  in[0] = tensor_of((void*)b, GFX_DTYPE_BOOL, SHAPE(5));
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(1, 5));
  expect_ok(run_ref(&n, in, out));
  assert_true(count == 2 && y[0] == 1 && y[1] == 4);
  /* none, and an empty X */
  const int32_t zeros[4] = {0};
  in[0] = tensor_of((void*)zeros, GFX_DTYPE_I32, SHAPE(2, 2));
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(2, 4));
  expect_ok(run_ref(&n, in, out));
  assert_int_equal(count, 0);
  in[0] = tensor_of(NULL, GFX_DTYPE_I32, SHAPE(3, 0));
  out[0] = tensor_of(NULL, GFX_DTYPE_I64, SHAPE(2, 0));
  expect_ok(run_ref(&n, in, out));
  assert_int_equal(count, 0);
  /* a scalar (not claimed from a model, but the kernel follows ORT: one coordinate, 0) */
  const float one = 1.0f;
  in[0] = tensor_of((void*)&one, GFX_DTYPE_F32, SCALAR);
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(1, 1));
  expect_ok(run_ref(&n, in, out));
  assert_true(count == 1 && y[0] == 0);
  /* an output not shaped as the bound is refused */
  in[0] = tensor_of((void*)x, GFX_DTYPE_F32, SHAPE(2, 3));
  out[0] = tensor_of(y, GFX_DTYPE_I64, SHAPE(2, 3));
  expect_error(run_ref(&n, in, out), GFX_ERR_INVALID_ARGUMENT, "output 0", "[2,3]", "[2,6]");
}

/* ---- NonMaxSuppression ---- */

static ir_node_desc nms_desc(int opset, attr_table* t, int n_inputs) {
  ir_node_desc d = desc_base("NonMaxSuppression", opset, NODE_NAME, t, n_inputs, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(1, 6, 4);
  d.input_shapes[1] = SHAPE(1, 2, 6);
  d.output_dtypes[0] = GFX_DTYPE_I64;
  return d;
}

static void test_parse_nms(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, center = ATTRS(A_INT("center_point_box", 1)), bad = ATTRS(A_INT("center_point_box", 2));
  const int64_t max3 = 3, neg = -4, two[2] = {1, 2};
  const float iou = 0.45f, score = 0.25f, iou_high = 1.5f;
  ir_node_desc d = nms_desc(11, &none, 5);
  make_const(&d, 2, GFX_DTYPE_I64, &max3, 1, 8, 1);
  make_const(&d, 3, GFX_DTYPE_F32, &iou, 1, 4, 1);
  make_const(&d, 4, GFX_DTYPE_F32, &score, 1, 4, 0);
  ir_params p = parse_ok(&d, GFX_OP_NON_MAX_SUPPRESSION);
  assert_true(p.select.max_output == 3 && p.select.iou_threshold == iou && p.select.has_score_threshold &&
              p.select.score_threshold == score && p.select.center_point_box == 0);
  assert_true(ir_op_data_dependent(GFX_OP_NON_MAX_SUPPRESSION, &p));
  /* ORT's defaults: no boxes, threshold 0, no score filter; a negative count keeps nothing */
  d = nms_desc(10, &center, 2);
  p = parse_ok(&d, GFX_OP_NON_MAX_SUPPRESSION);
  assert_true(p.select.max_output == 0 && p.select.iou_threshold == 0.0f && !p.select.has_score_threshold &&
              p.select.center_point_box == 1);
  d = nms_desc(11, &none, 3);
  make_const(&d, 2, GFX_DTYPE_I64, &neg, 1, 8, 1);
  p = parse_ok(&d, GFX_OP_NON_MAX_SUPPRESSION);
  assert_int_equal(p.select.max_output, 0);
  /* an absent middle input */
  d = nms_desc(11, &none, 5);
  d.input_dtypes[2] = GFX_DTYPE_UNDEFINED;
  d.input_dtypes[3] = GFX_DTYPE_UNDEFINED;
  make_const(&d, 4, GFX_DTYPE_F32, &score, 1, 4, 1);
  p = parse_ok(&d, GFX_OP_NON_MAX_SUPPRESSION);
  assert_true(p.select.max_output == 0 && p.select.has_score_threshold);
  /* refused: computed inputs, a threshold outside [0, 1], lists, other attributes, other types */
  d = nms_desc(11, &none, 4);
  make_const(&d, 2, GFX_DTYPE_I64, &max3, 1, 8, 1);
  d.input_dtypes[3] = GFX_DTYPE_F32;
  parse_refused(&d, "iou_threshold", "run time");
  d = nms_desc(11, &none, 3);
  d.input_dtypes[2] = GFX_DTYPE_I64;
  parse_refused(&d, "max_output_boxes_per_class", "run time");
  d = nms_desc(11, &none, 4);
  make_const(&d, 2, GFX_DTYPE_I64, &max3, 1, 8, 1);
  make_const(&d, 3, GFX_DTYPE_F32, &iou_high, 1, 4, 1);
  parse_refused(&d, "iou_threshold = 1.5", "[0, 1]");
  d = nms_desc(11, &none, 3);
  make_const(&d, 2, GFX_DTYPE_I64, two, 2, 8, 0);
  parse_refused(&d, "2 values");
  d = nms_desc(11, &bad, 2);
  parse_refused(&d, "center_point_box = 2");
  d = nms_desc(11, &none, 2);
  d.input_dtypes[1] = GFX_DTYPE_F16;
  parse_refused(&d, "scores are float16");
  d = nms_desc(11, &none, 2);
  d.input_shapes[0] = SHAPE(1, 6, 5);
  parse_refused(&d, "boxes", "[batches, boxes, 4]");
  /* the bound: batches x classes x min(max, boxes) rows */
  ir_node n = node_of(GFX_OP_NON_MAX_SUPPRESSION, 2);
  n.n_outputs = 2;
  n.params.select.max_output = 4;
  gfx_shape in[2] = {SHAPE(2, 10, 4), SHAPE(2, 3, 10)}, out[2];
  expect_ok(ir_infer_nms(&n, in, out));
  expect_shape(out[0], SHAPE(24, 3));
  expect_shape(out[1], SHAPE(1));
  n.params.select.max_output = 1000;
  expect_ok(ir_infer_nms(&n, in, out));
  expect_shape(out[0], SHAPE(60, 3));
  in[1] = SHAPE(2, 3, 9);
  expect_error(ir_infer_nms(&n, in, out), GFX_ERR_INVALID_ARGUMENT, "[2,10,4]", "[2,3,9]");
}

/* The order and overlap rules exactly: ties to the lower index, an IoU of exactly the threshold
 * suppresses nothing, NaN last. */
static void test_nms_rules(void** unused) {
  (void)unused;
  assert_true(ir_nms_before(0.9f, 3, 0.8f, 0) && ir_nms_before(0.5f, 1, 0.5f, 2) && !ir_nms_before(0.5f, 2, 0.5f, 1));
  assert_true(ir_nms_before(-1.0f, 5, NAN, 0) && !ir_nms_before(NAN, 0, -1.0f, 5) && ir_nms_before(NAN, 1, NAN, 2));
  float a[4], b[4], area_a, area_b;
  /* [0, 0, 1, 3] and [0, 1, 1, 4] (y1, x1, y2, x2): intersection 2, union 4 */
  ir_nms_box((const float[]){0, 0, 1, 3}, 0, a, &area_a);
  ir_nms_box((const float[]){1, 4, 0, 1}, 0, b, &area_b); /* the other diagonal */
  assert_true(area_a == 3.0f && area_b == 3.0f && b[0] == 0.0f && b[1] == 1.0f && b[2] == 1.0f && b[3] == 4.0f);
  assert_false(ir_nms_suppresses(a, area_a, b, area_b, 0.5f));
  assert_true(ir_nms_suppresses(a, area_a, b, area_b, 0.4999f));
  /* centred: x, y, w, h */
  ir_nms_box((const float[]){2, 3, 4, 2}, 1, a, &area_a);
  assert_true(a[0] == 2.0f && a[1] == 0.0f && a[2] == 4.0f && a[3] == 4.0f && area_a == 8.0f);
  /* touching boxes never suppress, even at threshold 0 */
  ir_nms_box((const float[]){0, 0, 1, 1}, 0, a, &area_a);
  ir_nms_box((const float[]){0, 1, 1, 2}, 0, b, &area_b);
  assert_false(ir_nms_suppresses(a, area_a, b, area_b, 0.0f));
}

typedef struct nms_run {
  int64_t rows[32][3];
  int64_t count;
} nms_run;

static void run_nms(const float* boxes, gfx_shape bs, const float* scores, gfx_shape ss, ir_select_params p,
                    nms_run* r) {
  ir_node n = node_of(GFX_OP_NON_MAX_SUPPRESSION, 2);
  n.n_outputs = 2;
  n.params.select = p;
  gfx_shape out_shape[2];
  gfx_shape in_shape[2] = {bs, ss};
  expect_ok(ir_infer_nms(&n, in_shape, out_shape));
  assert_true(out_shape[0].dims[0] <= 32);
  gfx_tensor in[2] = {tensor_of((void*)boxes, GFX_DTYPE_F32, bs), tensor_of((void*)scores, GFX_DTYPE_F32, ss)};
  gfx_tensor out[2] = {tensor_of(r->rows, GFX_DTYPE_I64, out_shape[0]), tensor_of(&r->count, GFX_DTYPE_I64, SHAPE(1))};
  r->count = -1;
  expect_ok(run_ref(&n, in, out));
}

static void expect_rows(const nms_run* r, int64_t n, const int64_t (*want)[3]) {
  if (r->count != n) print_error("%lld rows kept, expected %lld\n", (long long)r->count, (long long)n);
  assert_int_equal(r->count, n);
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      if (r->rows[i][k] != want[i][k])
        print_error("row %lld: (%lld, %lld, %lld), expected (%lld, %lld, %lld)\n", (long long)i,
                    (long long)r->rows[i][0], (long long)r->rows[i][1], (long long)r->rows[i][2],
                    (long long)want[i][0], (long long)want[i][1], (long long)want[i][2]);
      assert_int_equal(r->rows[i][k], want[i][k]);
    }
}

static void test_nms_kernel(void** unused) {
  (void)unused;
  /* box 0 and box 3 are the same box with the same score: box 0 (the lower index) is kept and
   * suppresses box 3; box 1 overlaps box 0 by 81 / 119; box 2 is apart */
  const float boxes[1][4][4] = {{{0, 0, 10, 10}, {1, 1, 11, 11}, {20, 20, 30, 30}, {0, 0, 10, 10}}};
  const float scores[1][2][4] = {{{0.9f, 0.8f, 0.7f, 0.9f}, {0.1f, 0.6f, 0.3f, 0.05f}}};
  ir_select_params p = {.max_output = 10, .iou_threshold = 0.5f, .has_score_threshold = 1, .score_threshold = 0.2f};
  nms_run r;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  expect_rows(&r, 4, (const int64_t[][3]){{0, 0, 0}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}});
  /* one box per class */
  p.max_output = 1;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  expect_rows(&r, 2, (const int64_t[][3]){{0, 0, 0}, {0, 1, 1}});
  /* no score threshold: class 1 keeps box 1 (0.6), suppresses box 0 (IoU 0.68 with it), keeps 2 */
  p.max_output = 10;
  p.has_score_threshold = 0;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  expect_rows(&r, 4, (const int64_t[][3]){{0, 0, 0}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}});
  /* threshold 1: nothing overlaps more than everything; all four per class, by score then index */
  p.iou_threshold = 1.0f;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  expect_rows(&r, 8, (const int64_t[][3]){{0, 0, 0}, {0, 0, 3}, {0, 0, 1}, {0, 0, 2},
                                          {0, 1, 1}, {0, 1, 2}, {0, 1, 0}, {0, 1, 3}});
  /* max_output 0 keeps nothing; a score threshold above every score too */
  p.max_output = 0;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  assert_int_equal(r.count, 0);
  p.max_output = 10;
  p.has_score_threshold = 1;
  p.score_threshold = 0.95f;
  run_nms(&boxes[0][0][0], SHAPE(1, 4, 4), &scores[0][0][0], SHAPE(1, 2, 4), p, &r);
  assert_int_equal(r.count, 0);
  /* an overlap of exactly the threshold stays; two batches, centred boxes */
  const float cb[2][2][4] = {{{0.5f, 1.5f, 1, 3}, {0.5f, 2.5f, 1, 3}}, {{0, 0, 2, 2}, {0, 0, 2, 2}}};
  const float cs[2][1][2] = {{{0.3f, 0.4f}}, {{0.5f, 0.5f}}};
  ir_select_params c = {.center_point_box = 1, .max_output = 5, .iou_threshold = 0.5f};
  run_nms(&cb[0][0][0], SHAPE(2, 2, 4), &cs[0][0][0], SHAPE(2, 1, 2), c, &r);
  expect_rows(&r, 3, (const int64_t[][3]){{0, 0, 1}, {0, 0, 0}, {1, 0, 0}});
}

/* ---- Slice with run-time starts and ends, and the expansion of a selection ---- */

static void test_slice_value_inputs(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS;
  const int64_t axes[2] = {0, 1};
  ir_node_desc d = desc_base("Slice", 13, NODE_NAME, &none, 4, GFX_DTYPE_F32);
  d.input_shapes[0] = SHAPE(5, 6);
  d.input_dtypes[1] = d.input_dtypes[2] = GFX_DTYPE_I64;
  d.input_shapes[1] = d.input_shapes[2] = SHAPE(2);
  make_const(&d, 3, GFX_DTYPE_I64, axes, 2, 8, 0);
  ir_params p = parse_ok(&d, GFX_OP_SLICE);
  assert_true(p.layout.value_inputs == 6u && p.layout.n_axes == 2 && ir_op_data_dependent(GFX_OP_SLICE, &p));
  /* refused: an undeclared length, a computed axes list, float starts */
  d.input_shapes[2] = SHAPE(-1);
  parse_refused(&d, "ends", "run time");
  d.input_shapes[2] = SHAPE(2);
  d.input_dtypes[1] = GFX_DTYPE_F32;
  parse_refused(&d, "starts", "float32");
  d.input_dtypes[1] = GFX_DTYPE_I32;
  d.input_is_const[3] = 0;
  d.input_const_data[3] = NULL;
  parse_refused(&d, "input 3");
  /* resolved: exactly as constant starts and ends would have been */
  ir_node n = node_of(GFX_OP_SLICE, 4);
  n.params = p;
  gfx_shape in[4] = {SHAPE(5, 6), SHAPE(2), SHAPE(2), SHAPE(2)}, out[1];
  expect_error(ir_infer_slice(&n, in, out), GFX_ERR_INTERNAL, "read back");
  ir_value_data vals[IR_MAX_IO];
  memset(vals, 0, sizeof vals);
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {1, -4}};
  vals[2] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {INT64_MAX, 5}};
  ir_node r;
  expect_ok(ir_node_resolve(&n, vals, &r));
  assert_int_equal(ir_node_value_inputs(&r), 0);
  expect_ok(ir_infer_slice(&r, in, out));
  expect_shape(out[0], SHAPE(4, 3));
  vals[2] = (ir_value_data){.shape = SHAPE(3), .n = 3};
  expect_error(ir_node_resolve(&n, vals, &r), GFX_ERR_INVALID_ARGUMENT, "ends", "[3]", "2 entries");
}

static void test_selection_expands(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = -1, y = -1;
  expect_ok(ir_graph_add_value(g, "x", GFX_DTYPE_F32, &(gfx_shape){.rank = 2, .dims = {3, 4}}, &x));
  expect_ok(ir_graph_add_value(g, "y", GFX_DTYPE_I64, &(gfx_shape){.rank = 2, .dims = {2, -1}}, &y));
  expect_ok(ir_graph_add_input(g, x));
  ir_params p;
  memset(&p, 0, sizeof p);
  p.select.dtype = GFX_DTYPE_F32;
  expect_ok(ir_graph_add_node(g, GFX_OP_NON_ZERO, "nz", &x, 1, &y, 1, &p));
  expect_ok(ir_graph_add_output(g, y));
  expect_ok(ir_graph_validate(g));
  /* the bounded node (bound, count), then the Slice of the count writing y */
  assert_int_equal(g->n_nodes, 2);
  const ir_node* nz = &g->nodes[0];
  const ir_node* take = &g->nodes[1];
  assert_true(nz->op == GFX_OP_NON_ZERO && nz->n_outputs == 2 && take->op == GFX_OP_SLICE);
  assert_true(take->outputs[0] == y && take->inputs[0] == nz->outputs[0] && take->inputs[2] == nz->outputs[1]);
  assert_int_equal(ir_node_value_inputs(take), 4u);
  assert_true(take->params.layout.axes[0] == 1 && take->params.layout.starts[0] == 0);
  assert_non_null(strstr(g->values[nz->outputs[1]].name, "y:gfxep.count"));
  /* a clone keeps the two nodes as they are (no second expansion) */
  ir_graph* c = NULL;
  expect_ok(ir_graph_clone(g, &c));
  assert_int_equal(c->n_nodes, 2);
  ir_graph_free(c);
  ir_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_nonzero),    cmocka_unit_test(test_nonzero_kernel),
      cmocka_unit_test(test_parse_nms),        cmocka_unit_test(test_nms_rules),
      cmocka_unit_test(test_nms_kernel),       cmocka_unit_test(test_slice_value_inputs),
      cmocka_unit_test(test_selection_expands),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gfxep — the logic ops, Mod, CumSum, Range, Trilu and the index ops on their own: which nodes parse
 * claims and which it refuses (and why), and the shapes their infer functions give.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/dynamic.h"
#include "ir/graph.h"
#include "ir/ops_index.h"
#include "ir/shape.h"
#include "ir_test_util.h"

#define NODE_NAME "node_x"

/* every infer function of the op table, as ir/shape.c declares them */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer_fn, summary) \
  gfx_status infer_fn(const ir_node* node, const gfx_shape* in, gfx_shape* out);
#include "ir/ops.def"
#undef GFX_OP

/* n_inputs inputs of dtype, input 0 of shape x, the others of unknown shape. */
static ir_node_desc desc(const char* op, int opset, attr_table* t, int n_inputs, int dtype, gfx_shape x) {
  ir_node_desc d = desc_base(op, opset, NODE_NAME, t, n_inputs, dtype);
  for (int i = 1; i < n_inputs; i++) d.input_shapes[i].rank = -1;
  d.input_shapes[0] = x;
  return d;
}

/* Input i becomes a constant of n values of dtype (0-D when n is 1 and scalar is set). */
static void make_const(ir_node_desc* d, int i, int dtype, const void* v, size_t n, size_t elem, int scalar) {
  d->input_dtypes[i] = dtype;
  d->input_shapes[i] = scalar ? shape_of(0, NULL) : SHAPE((int64_t)n);
  d->input_is_const[i] = 1;
  d->input_const_data[i] = v;
  d->input_const_bytes[i] = n * elem;
}

/* ---- Not, And, Or, Xor, Mod ---- */

static void test_parse_logic(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  ir_node_desc d = desc("Not", 1, &t, 1, GFX_DTYPE_BOOL, SHAPE(3, 4));
  parse_ok(&d, GFX_OP_NOT);
  d = desc("Xor", 7, &t, 2, GFX_DTYPE_BOOL, SHAPE(3, 4));
  parse_ok(&d, GFX_OP_XOR);
  /* opset 1 had a broadcast attribute: left to ORT */
  d.since_version = 1;
  parse_refused(&d, "opset");
  /* only bool operands */
  d = desc("And", 7, &t, 2, GFX_DTYPE_F32, SHAPE(3));
  parse_refused(&d, "float32");
  d = desc("Or", 7, &t, 2, GFX_DTYPE_BOOL, SHAPE(3));
  d.input_dtypes[1] = GFX_DTYPE_I32;
  parse_refused(&d, "input 1");
}

static void test_parse_mod(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, f1 = ATTRS(A_INT("fmod", 1)), f2 = ATTRS(A_INT("fmod", 2));
  ir_node_desc d = desc("Mod", 10, &none, 2, GFX_DTYPE_I64, SHAPE(3));
  ir_params p = parse_ok(&d, GFX_OP_MOD);
  assert_int_equal(p.index.fmod, 0);
  /* floats only with fmod=1 (ORT fails fmod=0 for them) */
  d = desc("Mod", 13, &none, 2, GFX_DTYPE_F16, SHAPE(3));
  parse_refused(&d, "fmod = 0", "float16");
  d.attrs = reader_for(&f1);
  p = parse_ok(&d, GFX_OP_MOD);
  assert_int_equal(p.index.fmod, 1);
  d.attrs = reader_for(&f2);
  parse_refused(&d, "fmod = 2");
  /* integer widths other than 32 and 64 bits stay with ORT */
  d = desc("Mod", 13, &f1, 2, GFX_DTYPE_I8, SHAPE(3));
  parse_refused(&d, "int8");
  /* opset 9 had no Mod */
  d = desc("Mod", 9, &none, 2, GFX_DTYPE_I32, SHAPE(3));
  parse_refused(&d, "opset");
}

/* ---- CumSum, Range, Trilu ---- */

static void test_parse_cumsum(void** unused) {
  (void)unused;
  attr_table t = ATTRS(A_INT("exclusive", 1), A_INT("reverse", 1));
  ir_node_desc d = desc("CumSum", 14, &t, 2, GFX_DTYPE_BF16, SHAPE(2, 3, 4));
  const int64_t axis = -2;
  make_const(&d, 1, GFX_DTYPE_I64, &axis, 1, 8, 1);
  ir_params p = parse_ok(&d, GFX_OP_CUM_SUM);
  assert_int_equal(p.index.axis, -2);
  assert_int_equal(p.index.exclusive, 1);
  assert_int_equal(p.index.reverse, 1);
  /* an int32 axis of one entry */
  const int32_t axis32[1] = {2};
  make_const(&d, 1, GFX_DTYPE_I32, axis32, 1, 4, 0);
  p = parse_ok(&d, GFX_OP_CUM_SUM);
  assert_int_equal(p.index.axis, 2);
  /* out of range, two values, computed at run time */
  const int64_t far = 3, two[2] = {0, 1};
  make_const(&d, 1, GFX_DTYPE_I64, &far, 1, 8, 1);
  parse_refused(&d, "axis 3");
  make_const(&d, 1, GFX_DTYPE_I64, two, 2, 8, 0);
  parse_refused(&d, "2 values");
  d.input_is_const[1] = 0;
  d.input_const_data[1] = NULL;
  parse_refused(&d, "run time");
  /* bool data is no number */
  d = desc("CumSum", 14, &t, 2, GFX_DTYPE_BOOL, SHAPE(3));
  make_const(&d, 1, GFX_DTYPE_I64, &axis, 1, 8, 1);
  d.input_dtypes[1] = GFX_DTYPE_I64;
  parse_refused(&d, "bool");
}

static void test_parse_range(void** unused) {
  (void)unused;
  attr_table t = NO_ATTRS;
  const float f[3] = {0.0f, 2.0f, 0.1f};
  ir_node_desc d = desc("Range", 11, &t, 3, GFX_DTYPE_F32, shape_of(0, NULL));
  for (int i = 0; i < 3; i++) make_const(&d, i, GFX_DTYPE_F32, &f[i], 1, 4, 1);
  ir_params p = parse_ok(&d, GFX_OP_RANGE);
  assert_int_equal(p.index.count, 20); /* ceil(2 / 0.1f) in double, as ORT counts */
  assert_int_equal(p.index.dtype, GFX_DTYPE_F32);
  ir_node node = node_of(GFX_OP_RANGE, 3);
  node.params = p;
  gfx_shape in[3], out;
  expect_ok(ir_infer_range(&node, in, &out));
  expect_shape(out, SHAPE(20));
  /* integers: falling, and empty when the step points away */
  const int64_t down[3] = {10, -8, -3}, away[3] = {5, 1, 2};
  d = desc("Range", 11, &t, 3, GFX_DTYPE_I64, shape_of(0, NULL));
  for (int i = 0; i < 3; i++) make_const(&d, i, GFX_DTYPE_I64, &down[i], 1, 8, 1);
  p = parse_ok(&d, GFX_OP_RANGE);
  assert_int_equal(p.index.count, 6);
  assert_int_equal(p.index.start_i, 10);
  assert_int_equal(p.index.delta_i, -3);
  for (int i = 0; i < 3; i++) make_const(&d, i, GFX_DTYPE_I64, &away[i], 1, 8, 1);
  p = parse_ok(&d, GFX_OP_RANGE);
  assert_int_equal(p.index.count, 0);
  /* delta 0, a computed limit, more elements than taken */
  const int64_t zero = 0, huge = (int64_t)1 << 40;
  make_const(&d, 2, GFX_DTYPE_I64, &zero, 1, 8, 1);
  parse_refused(&d, "delta is 0");
  make_const(&d, 2, GFX_DTYPE_I64, &away[2], 1, 8, 1);
  d.input_is_const[1] = 0;
  d.input_const_data[1] = NULL;
  parse_refused(&d, "input 1", "run time");
  make_const(&d, 1, GFX_DTYPE_I64, &huge, 1, 8, 1);
  parse_refused(&d, "2^31");
  /* other types (float64, int16 in ONNX) stay with ORT */
  d = desc("Range", 11, &t, 3, GFX_DTYPE_U8, shape_of(0, NULL));
  parse_refused(&d, "does not handle");
}

static void test_parse_trilu(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, lower = ATTRS(A_INT("upper", 0)), bad = ATTRS(A_INT("upper", 2));
  ir_node_desc d = desc("Trilu", 14, &none, 1, GFX_DTYPE_U8, SHAPE(2, 3, 4));
  ir_params p = parse_ok(&d, GFX_OP_TRILU);
  assert_int_equal(p.index.upper, 1);
  assert_int_equal(p.index.k, 0);
  d = desc("Trilu", 14, &lower, 2, GFX_DTYPE_F16, SHAPE(3, 4));
  const int64_t k = -1000000000000;
  make_const(&d, 1, GFX_DTYPE_I64, &k, 1, 8, 1);
  p = parse_ok(&d, GFX_OP_TRILU);
  assert_int_equal(p.index.upper, 0);
  assert_true(p.index.k == k);
  d.input_is_const[1] = 0;
  d.input_const_data[1] = NULL;
  parse_refused(&d, "k", "run time");
  d = desc("Trilu", 14, &bad, 1, GFX_DTYPE_F32, SHAPE(3, 4));
  parse_refused(&d, "upper = 2");
  d = desc("Trilu", 14, &none, 1, GFX_DTYPE_F32, SHAPE(4));
  parse_refused(&d, "rank 1");
  /* the keep rule: on or above diagonal k, or on or below it; any k */
  assert_true(ir_trilu_keeps(1, 0, 2, 2) && !ir_trilu_keeps(1, 1, 2, 2) && ir_trilu_keeps(0, -1, 3, 2));
  assert_true(ir_trilu_keeps(1, INT64_MIN, 5, 0) && !ir_trilu_keeps(0, INT64_MIN, 0, 5));
}

/* ---- TopK ---- */

/* X of dtype and shape x, k a constant int64, Values and int64 Indices. */
static ir_node_desc topk_desc(int opset, attr_table* t, int dtype, gfx_shape x, const int64_t* k) {
  ir_node_desc d = desc("TopK", opset, t, 2, dtype, x);
  make_const(&d, 1, GFX_DTYPE_I64, k, 1, 8, 0);
  d.n_outputs = 2;
  d.output_dtypes[1] = GFX_DTYPE_I64;
  return d;
}

static void test_topk(void** unused) {
  (void)unused;
  attr_table none = NO_ATTRS, smallest = ATTRS(A_INT("axis", 0), A_INT("largest", 0));
  attr_table unsorted = ATTRS(A_INT("sorted", 0)), bad_axis = ATTRS(A_INT("axis", 2));
  const int64_t k3 = 3, k9 = 9, k_neg = -1;
  ir_node_desc d = topk_desc(11, &none, GFX_DTYPE_F16, SHAPE(2, 5), &k3);
  ir_params p = parse_ok(&d, GFX_OP_TOP_K);
  assert_true(p.index.k == 3 && p.index.axis == -1 && p.index.largest == 1);
  d = topk_desc(11, &smallest, GFX_DTYPE_I32, SHAPE(4, 5), &k3);
  p = parse_ok(&d, GFX_OP_TOP_K);
  assert_true(p.index.axis == 0 && p.index.largest == 0);
  d = topk_desc(11, &none, GFX_DTYPE_F32, SHAPE(2, 5), &k9);
  parse_refused(&d, "k = 9", "exceeds");
  d = topk_desc(11, &none, GFX_DTYPE_F32, SHAPE(2, 5), &k_neg);
  parse_refused(&d, "negative");
  d = topk_desc(11, &unsorted, GFX_DTYPE_F32, SHAPE(2, 5), &k3);
  parse_refused(&d, "sorted = 0");
  d = topk_desc(11, &bad_axis, GFX_DTYPE_F32, SHAPE(2, 5), &k3);
  parse_refused(&d, "axis");
  d = topk_desc(10, &smallest, GFX_DTYPE_F32, SHAPE(4, 5), &k3);
  parse_refused(&d, "largest"); /* opset 10 has no largest */
  d = topk_desc(11, &none, GFX_DTYPE_U8, SHAPE(2, 5), &k3);
  parse_refused(&d, "uint8");
  d = topk_desc(11, &none, GFX_DTYPE_F32, SHAPE(2, 5), &k3);
  d.output_dtypes[1] = GFX_DTYPE_I32;
  parse_refused(&d, "Indices");
  /* a computed k: taken, with k left for the executor to read back (a value input), unless its
   * declared shape cannot be ORT's [1] */
  d = topk_desc(11, &none, GFX_DTYPE_F32, SHAPE(2, 5), &k3);
  d.input_is_const[1] = 0;
  d.input_const_data[1] = NULL;
  p = parse_ok(&d, GFX_OP_TOP_K);
  assert_true(p.index.k == -1 && p.index.value_inputs == 2u && ir_op_data_dependent(GFX_OP_TOP_K, &p));
  d.input_shapes[1] = SHAPE(2);
  parse_refused(&d, "k", "run time", "[1]");
  d.input_shapes[1] = shape_of(0, NULL);
  parse_refused(&d, "k", "run time", "[1]");
  d.input_shapes[1].rank = -1;
  parse_ok(&d, GFX_OP_TOP_K);
  {
    /* resolved: the value read back becomes k; no shape before that */
    ir_node t = node_of(GFX_OP_TOP_K, 2);
    t.n_outputs = 2;
    t.params = p;
    t.params.index.axis = 1;
    gfx_shape tin[2] = {SHAPE(3, 4, 5), SHAPE(1)}, tout[2];
    expect_error(ir_infer_topk(&t, tin, tout), GFX_ERR_INTERNAL, "read back", NULL);
    ir_value_data vals[IR_MAX_IO];
    memset(vals, 0, sizeof vals);
    vals[1] = (ir_value_data){.shape = SHAPE(1), .n = 1, .v = {3}};
    ir_node r;
    expect_ok(ir_node_resolve(&t, vals, &r));
    assert_true(r.params.index.k == 3 && ir_node_value_inputs(&r) == 0 && ir_node_value_inputs(&t) == 2u);
    expect_ok(ir_infer_topk(&r, tin, tout));
    expect_shape(tout[0], SHAPE(3, 3, 5));
    vals[1].v[0] = -2;
    expect_error(ir_node_resolve(&t, vals, &r), GFX_ERR_INVALID_ARGUMENT, "k", "negative", NULL);
    vals[1] = (ir_value_data){.shape = shape_of(0, NULL), .n = 1, .v = {3}};
    expect_error(ir_node_resolve(&t, vals, &r), GFX_ERR_INVALID_ARGUMENT, "k", "[]", "one element", NULL);
  }
  /* shapes: k along the axis, for both outputs; a k beyond the axis is an error at run time */
  ir_node n = node_of(GFX_OP_TOP_K, 2);
  n.n_outputs = 2;
  n.params.index.axis = 1;
  n.params.index.k = 2;
  gfx_shape in[2] = {SHAPE(3, 4, 5)}, out[2];
  expect_ok(ir_infer_topk(&n, in, out));
  expect_shape(out[0], SHAPE(3, 2, 5));
  expect_shape(out[1], SHAPE(3, 2, 5));
  n.params.index.k = 5;
  expect_error(ir_infer_topk(&n, in, out), GFX_ERR_INVALID_ARGUMENT, "k = 5", NULL);
  /* the order: larger first, NaN as the largest, ties (and NaNs) by the lower index */
  assert_true(ir_topk_before_float(2.0, 5, 1.0, 0, 1) && !ir_topk_before_float(2.0, 5, 1.0, 0, 0));
  assert_true(ir_topk_before_float(1.0, 0, 1.0, 1, 1) && ir_topk_before_float(1.0, 0, 1.0, 1, 0));
  assert_true(ir_topk_before_float(NAN, 3, 1e30, 0, 1) && !ir_topk_before_float(NAN, 3, 1e30, 0, 0));
  assert_true(ir_topk_before_float(NAN, 1, NAN, 2, 1) && !ir_topk_before_float(NAN, 2, NAN, 1, 0));
  assert_true(ir_topk_before_int(INT64_MAX, 1, INT64_MAX - 1, 0, 1) && ir_topk_before_int(-5, 2, -5, 3, 1));
}

/* ---- the index ops ---- */

static void test_parse_index_ops(void** unused) {
  (void)unused;
  attr_table axis = ATTRS(A_INT("axis", -1));
  ir_node_desc d = desc("GatherElements", 13, &axis, 2, GFX_DTYPE_BOOL, SHAPE(2, 3));
  d.input_dtypes[1] = GFX_DTYPE_I32;
  d.input_shapes[1] = SHAPE(2, 5);
  ir_params p = parse_ok(&d, GFX_OP_GATHER_ELEMENTS);
  assert_int_equal(p.index.axis, -1);
  d.input_shapes[1] = SHAPE(10);
  parse_refused(&d, "rank 1", "rank 2");
  attr_table far = ATTRS(A_INT("axis", 2));
  d = desc("GatherElements", 13, &far, 2, GFX_DTYPE_F32, SHAPE(2, 3));
  d.input_dtypes[1] = GFX_DTYPE_I64;
  parse_refused(&d, "axis 2");
  /* float indices */
  d = desc("GatherElements", 13, &axis, 2, GFX_DTYPE_F32, SHAPE(2, 3));
  parse_refused(&d, "input 1");

  /* reductions: every name, computed types only */
  static const char* const names[] = {"none", "add", "mul", "max", "min"};
  for (int r = 0; r < 5; r++) {
    attr_table t = ATTRS(A_INT("axis", 0), A_STR("reduction", names[r]));
    d = desc("ScatterElements", 18, &t, 3, GFX_DTYPE_F16, SHAPE(4, 3));
    d.input_dtypes[1] = GFX_DTYPE_I64;
    p = parse_ok(&d, GFX_OP_SCATTER_ELEMENTS);
    assert_int_equal(p.index.reduction, r);
    attr_table nd = ATTRS(A_STR("reduction", names[r]));
    d = desc("ScatterND", 18, &nd, 3, GFX_DTYPE_I32, SHAPE(4, 3));
    d.input_dtypes[1] = GFX_DTYPE_I64;
    p = parse_ok(&d, GFX_OP_SCATTER_ND);
    assert_int_equal(p.index.reduction, r);
    d.input_dtypes[0] = d.input_dtypes[2] = d.output_dtypes[0] = GFX_DTYPE_BOOL;
    if (r == 0)
      parse_ok(&d, GFX_OP_SCATTER_ND);
    else
      parse_refused(&d, names[r], "bool");
  }
  attr_table odd = ATTRS(A_STR("reduction", "mean"));
  d = desc("ScatterND", 16, &odd, 3, GFX_DTYPE_F32, SHAPE(4));
  d.input_dtypes[1] = GFX_DTYPE_I64;
  parse_refused(&d, "'mean'");
  /* updates of another type */
  attr_table none = NO_ATTRS;
  d = desc("ScatterND", 11, &none, 3, GFX_DTYPE_F32, SHAPE(4));
  d.input_dtypes[1] = GFX_DTYPE_I64;
  d.input_dtypes[2] = GFX_DTYPE_F16;
  parse_refused(&d, "input 2");

  /* GatherND: batch_dims below both ranks */
  attr_table b2 = ATTRS(A_INT("batch_dims", 2));
  d = desc("GatherND", 12, &b2, 2, GFX_DTYPE_F32, SHAPE(2, 3, 4));
  d.input_dtypes[1] = GFX_DTYPE_I64;
  d.input_shapes[1] = SHAPE(2, 3, 1);
  p = parse_ok(&d, GFX_OP_GATHER_ND);
  assert_int_equal(p.index.batch_dims, 2);
  d.input_shapes[1] = SHAPE(2, 1);
  parse_refused(&d, "batch_dims 2");
}

static void test_infer_index_ops(void** unused) {
  (void)unused;
  gfx_shape out;
  /* GatherElements: the indices' shape; they may be longer only along the axis */
  ir_node ge = node_of(GFX_OP_GATHER_ELEMENTS, 2);
  ge.params.index.axis = 1;
  gfx_shape in[3] = {SHAPE(2, 3), SHAPE(2, 7)};
  expect_ok(ir_infer_gather_elements(&ge, in, &out));
  expect_shape(out, SHAPE(2, 7));
  in[1] = SHAPE(3, 2);
  expect_error(ir_infer_gather_elements(&ge, in, &out), GFX_ERR_INVALID_ARGUMENT, "beyond", NULL);
  /* GatherND: indices' dims but the last, then data's after the indexed ones */
  ir_node gn = node_of(GFX_OP_GATHER_ND, 2);
  gn.params.index.batch_dims = 0;
  in[0] = SHAPE(2, 3, 4), in[1] = SHAPE(5, 2);
  expect_ok(ir_infer_gather_nd(&gn, in, &out));
  expect_shape(out, SHAPE(5, 4));
  gn.params.index.batch_dims = 1;
  in[1] = SHAPE(2, 6, 1);
  expect_ok(ir_infer_gather_nd(&gn, in, &out));
  expect_shape(out, SHAPE(2, 6, 4));
  in[1] = SHAPE(3, 6, 1); /* batch dims differ */
  expect_error(ir_infer_gather_nd(&gn, in, &out), GFX_ERR_INVALID_ARGUMENT, "batch dim 0", NULL);
  in[1] = SHAPE(2, 6, 3); /* tuples longer than the dims after the batch */
  expect_error(ir_infer_gather_nd(&gn, in, &out), GFX_ERR_INVALID_ARGUMENT, "3 entries", NULL);
  /* ScatterND: updates must be indices' dims but the last, then data's after the indexed ones */
  ir_node sn = node_of(GFX_OP_SCATTER_ND, 3);
  in[0] = SHAPE(4, 5), in[1] = SHAPE(2, 1), in[2] = SHAPE(2, 5);
  expect_ok(ir_infer_scatter_nd(&sn, in, &out));
  expect_shape(out, SHAPE(4, 5));
  in[2] = SHAPE(2, 4);
  expect_error(ir_infer_scatter_nd(&sn, in, &out), GFX_ERR_INVALID_ARGUMENT, "updates [2,4]", NULL);
  /* ScatterElements: updates shaped like the indices */
  ir_node se = node_of(GFX_OP_SCATTER_ELEMENTS, 3);
  in[0] = SHAPE(4, 5), in[1] = SHAPE(6, 5), in[2] = SHAPE(6, 5);
  expect_ok(ir_infer_scatter_elements(&se, in, &out));
  expect_shape(out, SHAPE(4, 5));
  in[2] = SHAPE(6, 4);
  expect_error(ir_infer_scatter_elements(&se, in, &out), GFX_ERR_INVALID_ARGUMENT, "updates", NULL);
  /* CumSum and Trilu keep the shape, within their axis and rank */
  ir_node cs = node_of(GFX_OP_CUM_SUM, 2);
  cs.params.index.axis = -3;
  in[0] = SHAPE(2, 3);
  expect_error(ir_infer_cumsum(&cs, in, &out), GFX_ERR_INVALID_ARGUMENT, "axis -3", NULL);
  cs.params.index.axis = -2;
  expect_ok(ir_infer_cumsum(&cs, in, &out));
  expect_shape(out, SHAPE(2, 3));
  ir_node tr = node_of(GFX_OP_TRILU, 1);
  in[0] = SHAPE(7);
  expect_error(ir_infer_trilu(&tr, in, &out), GFX_ERR_INVALID_ARGUMENT, "rank below 2", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_logic),      cmocka_unit_test(test_parse_mod),
      cmocka_unit_test(test_parse_cumsum),     cmocka_unit_test(test_parse_range),
      cmocka_unit_test(test_parse_trilu),      cmocka_unit_test(test_parse_index_ops),
      cmocka_unit_test(test_infer_index_ops),    cmocka_unit_test(test_topk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gfxep — the layout and data movement ops on their own: which nodes parse claims and which it
 * refuses (with the reason), shape inference, the strided copy plans, and the reference kernels on
 * every element size, int64 kept exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/half.h"
#include "ir/graph.h"
#include "ir/plan.h"
#include "ir/shape.h"
#include "ir/dynamic.h"
#include "ir/fuse.h"
#include "ir/layout.h"
#include "ir/shape.h"
#include "ir_test_util.h"

gfx_status ref_run_layout(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out);

/* ---- helpers ---- */

/* A tensor attribute of `count` elements of dtype from `bytes` bytes at data. */
static test_attr tensor_attr(const char* name, int dtype, int64_t count, const void* data, size_t bytes) {
  test_attr a = {.name = name, .kind = ATTR_TENSOR, .tensor_dtype = dtype, .tensor_count = count,
                 .tensor_bytes = bytes};
  memcpy(a.tensor, data, bytes);
  return a;
}

/* A node being described: its desc, attribute table and constant input storage together. */
typedef struct test_node {
  ir_node_desc d;
  test_attr attr_store[4];
  attr_table attrs; /* over attr_store */
  int64_t consts[IR_MAX_IO][16];
} test_node;

/* op_type at `opset` with data input 0 of dtype and `shape`, one output of dtype. */
static void node_init(test_node* t, const char* op_type, int opset, int dtype, gfx_shape shape) {
  memset(t, 0, sizeof *t);
  t->attrs.attrs = t->attr_store;
  t->d = desc_base(op_type, opset, "n", &t->attrs, 1, dtype);
  t->d.input_shapes[0] = shape;
}

static void add_attr(test_node* t, test_attr a) { t->attr_store[t->attrs.n++] = a; }

/* Input i: an int64 constant of n values. */
static void const_input(test_node* t, int i, const int64_t* values, int n) {
  memcpy(t->consts[i], values, (size_t)n * sizeof(int64_t));
  t->d.input_dtypes[i] = GFX_DTYPE_I64;
  t->d.input_shapes[i] = SHAPE(n);
  t->d.input_is_const[i] = 1;
  t->d.input_const_data[i] = t->consts[i];
  t->d.input_const_bytes[i] = (size_t)n * sizeof(int64_t);
  if (t->d.n_inputs <= i) t->d.n_inputs = i + 1;
}
#define CONST_INPUT(t, i, ...) \
  const_input((t), (i), (int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* Input i computed at run time. */
static void runtime_input(test_node* t, int i, int dtype, gfx_shape shape) {
  t->d.input_dtypes[i] = dtype;
  t->d.input_shapes[i] = shape;
  if (t->d.n_inputs <= i) t->d.n_inputs = i + 1;
}

static gfx_status parse(test_node* t, ir_node* node) {
  memset(node, 0, sizeof *node);
  node->name = "n";
  node->n_inputs = t->d.n_inputs;
  node->n_outputs = t->d.n_outputs;
  return ir_op_parse(&t->d, &node->op, &node->params);
}

static void expect_refused(test_node* t, const char* reason) {
  ir_node node;
  gfx_status s = parse(t, &node);
  if (!s) print_error("%s (%s) was claimed; expected refused: %s\n", t->d.op_type, t->d.name, reason);
  expect_error(s, GFX_ERR_NOT_SUPPORTED, reason);
}

/* ================================================================================================
 * parse: claimed and refused nodes
 * ================================================================================================ */

static void test_parse_claims(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;

  node_init(&t, "Concat", 13, GFX_DTYPE_I64, SHAPE(2, 3));
  runtime_input(&t, 1, GFX_DTYPE_I64, SHAPE(2, 3));
  add_attr(&t, (test_attr)A_INT("axis", -1));
  expect_ok(parse(&t, &node));
  assert_int_equal(node.op, GFX_OP_CONCAT);
  assert_int_equal(node.params.layout.dtype, GFX_DTYPE_I64);

  node_init(&t, "Split", 11, GFX_DTYPE_BOOL, SHAPE(2, 6));
  t.d.n_outputs = 2;
  t.d.output_dtypes[1] = GFX_DTYPE_BOOL;
  add_attr(&t, (test_attr)A_INTS("split", 2, 4));
  add_attr(&t, (test_attr)A_INT("axis", 1));
  expect_ok(parse(&t, &node));
  assert_int_equal(node.params.layout.n_ints, 2);
  assert_int_equal(node.params.layout.ints[1], 4);

  node_init(&t, "Split", 18, GFX_DTYPE_F16, SHAPE(7));
  t.d.n_outputs = 3;
  t.d.output_dtypes[1] = t.d.output_dtypes[2] = GFX_DTYPE_F16;
  add_attr(&t, (test_attr)A_INT("num_outputs", 3));
  expect_ok(parse(&t, &node));
  gfx_shape outs[3];
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(7)}, outs));
  expect_shape(outs[0], SHAPE(3));
  expect_shape(outs[2], SHAPE(1));

  node_init(&t, "Slice", 13, GFX_DTYPE_U8, SHAPE(5, 7));
  CONST_INPUT(&t, 1, -1, 6);
  CONST_INPUT(&t, 2, INT64_MIN, 0);
  CONST_INPUT(&t, 3, 0, -1);
  CONST_INPUT(&t, 4, -1, -2);
  expect_ok(parse(&t, &node));
  gfx_shape out;
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(5, 7)}, &out));
  expect_shape(out, SHAPE(5, 3)); /* rows 4..0, columns 6, 4, 2 */

  node_init(&t, "Pad", 18, GFX_DTYPE_I64, SHAPE(2, 3));
  CONST_INPUT(&t, 1, 1, 2);
  t.d.input_dtypes[2] = GFX_DTYPE_UNDEFINED; /* no constant_value */
  CONST_INPUT(&t, 3, -1);
  add_attr(&t, (test_attr)A_STR("mode", "reflect"));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(2, 3)}, &out));
  expect_shape(out, SHAPE(2, 6));

  node_init(&t, "Reshape", 14, GFX_DTYPE_F32, SHAPE(2, 3, 4));
  CONST_INPUT(&t, 1, 0, -1);
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(2, 3, 4)}, &out));
  expect_shape(out, SHAPE(2, 12));

  node_init(&t, "Reshape", 14, GFX_DTYPE_F32, SHAPE(0, 3));
  CONST_INPUT(&t, 1, 3, 0);
  add_attr(&t, (test_attr)A_INT("allowzero", 1));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(0, 3)}, &out));
  expect_shape(out, SHAPE(3, 0));

  node_init(&t, "Unsqueeze", 11, GFX_DTYPE_F32, SHAPE(3));
  add_attr(&t, (test_attr)A_INTS("axes", 0, -1));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(3)}, &out));
  expect_shape(out, SHAPE(1, 3, 1));

  node_init(&t, "Squeeze", 13, GFX_DTYPE_F32, SHAPE(1, 3, 1));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(1, 3, 1)}, &out));
  expect_shape(out, SHAPE(3));

  node_init(&t, "Gather", 13, GFX_DTYPE_I8, SHAPE(5, 3));
  runtime_input(&t, 1, GFX_DTYPE_I32, SHAPE(2, 2));
  add_attr(&t, (test_attr)A_INT("axis", -1));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(5, 3), SHAPE(2, 2)}, &out));
  expect_shape(out, SHAPE(5, 2, 2));

  node_init(&t, "Shape", 15, GFX_DTYPE_F16, SHAPE(2, 3, 4));
  t.d.output_dtypes[0] = GFX_DTYPE_I64;
  add_attr(&t, (test_attr)A_INT("start", -2));
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(2, 3, 4)}, &out));
  expect_shape(out, SHAPE(2));

  node_init(&t, "Expand", 13, GFX_DTYPE_BF16, SHAPE(3, 1));
  CONST_INPUT(&t, 1, 2, 1, 4);
  expect_ok(parse(&t, &node));
  expect_ok(ir_layout_infer(&node, (gfx_shape[]){SHAPE(3, 1)}, &out));
  expect_shape(out, SHAPE(2, 3, 4));
}

static void test_parse_refusals(void** unused) {
  (void)unused;
  test_node t;

  node_init(&t, "Concat", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  expect_refused(&t, "'axis' is missing");

  node_init(&t, "Reshape", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  CONST_INPUT(&t, 1, -1, -1);
  expect_refused(&t, "at most one");

  node_init(&t, "Reshape", 14, GFX_DTYPE_F32, SHAPE(2, 3));
  CONST_INPUT(&t, 1, 0, -1);
  add_attr(&t, (test_attr)A_INT("allowzero", 1));
  expect_refused(&t, "both 0 and -1");

  node_init(&t, "Split", 13, GFX_DTYPE_F32, SHAPE(2, 6));
  t.d.n_outputs = 2;
  t.d.output_dtypes[1] = GFX_DTYPE_F32;
  runtime_input(&t, 1, GFX_DTYPE_I64, SHAPE(2));
  expect_refused(&t, "computed at run time");

  node_init(&t, "Split", 13, GFX_DTYPE_F32, SHAPE(2, 6));
  add_attr(&t, (test_attr)A_INTS("split", 6));
  expect_refused(&t, "attribute 'split' is not handled"); /* an input from opset 13 on */

  node_init(&t, "Split", 18, GFX_DTYPE_F32, SHAPE(2, 6));
  t.d.n_outputs = 2;
  t.d.output_dtypes[1] = GFX_DTYPE_F32;
  add_attr(&t, (test_attr)A_INT("num_outputs", 3));
  expect_refused(&t, "num_outputs is 3");

  node_init(&t, "Slice", 13, GFX_DTYPE_F32, SHAPE(4));
  CONST_INPUT(&t, 1, 0);
  CONST_INPUT(&t, 2, 4);
  t.d.input_dtypes[3] = GFX_DTYPE_UNDEFINED;
  CONST_INPUT(&t, 4, 0);
  expect_refused(&t, "step 0 is 0");

  node_init(&t, "Slice", 13, GFX_DTYPE_F32, SHAPE(4, 4));
  CONST_INPUT(&t, 1, 0, 0);
  CONST_INPUT(&t, 2, 4, 4);
  CONST_INPUT(&t, 3, 1, -1);
  expect_refused(&t, "repeated");

  node_init(&t, "Pad", 18, GFX_DTYPE_F32, SHAPE(4));
  CONST_INPUT(&t, 1, 1, 1);
  add_attr(&t, (test_attr)A_STR("mode", "wrap"));
  expect_refused(&t, "mode 'wrap'"); /* wrap comes with opset 19 */

  node_init(&t, "Pad", 19, GFX_DTYPE_F32, SHAPE(4));
  CONST_INPUT(&t, 1, 5, 0);
  add_attr(&t, (test_attr)A_STR("mode", "wrap"));
  expect_refused(&t, "exceed dim 4");

  node_init(&t, "Pad", 13, GFX_DTYPE_F32, SHAPE(4, 4));
  CONST_INPUT(&t, 1, 1, 1);
  expect_refused(&t, "2 pads for rank 2");

  node_init(&t, "Pad", 13, GFX_DTYPE_I64, SHAPE(4));
  CONST_INPUT(&t, 1, 1, 1);
  runtime_input(&t, 2, GFX_DTYPE_F32, SCALAR);
  expect_refused(&t, "constant_value is float32");

  node_init(&t, "Pad", 11, GFX_DTYPE_F32, SHAPE(4));
  CONST_INPUT(&t, 1, 1, 1);
  t.d.input_dtypes[2] = GFX_DTYPE_UNDEFINED;
  CONST_INPUT(&t, 3, 0);
  expect_refused(&t, "4 inputs"); /* axes come with opset 18 */

  node_init(&t, "Transpose", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  add_attr(&t, (test_attr)A_INTS("perm", 0, 0));
  expect_refused(&t, "not a permutation");

  node_init(&t, "Unsqueeze", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  expect_refused(&t, "axes are required");

  node_init(&t, "Squeeze", 13, GFX_DTYPE_F32, SHAPE(2, 1));
  add_attr(&t, (test_attr)A_INTS("axes", 1));
  expect_refused(&t, "attribute 'axes' is not handled");

  node_init(&t, "Gather", 13, GFX_DTYPE_F32, SHAPE(5, 3));
  CONST_INPUT(&t, 1, 1, 5);
  expect_refused(&t, "index 1 is 5");

  node_init(&t, "Gather", 13, GFX_DTYPE_F32, SHAPE(5, 3));
  runtime_input(&t, 1, GFX_DTYPE_F32, SHAPE(2));
  expect_refused(&t, "input 1 is float32");

  node_init(&t, "Shape", 13, GFX_DTYPE_F32, SHAPE(5, 3));
  add_attr(&t, (test_attr)A_INT("start", 1));
  expect_refused(&t, "attribute 'start' is not handled"); /* from opset 15 */

  node_init(&t, "ConstantOfShape", 13, GFX_DTYPE_I64, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 3);
  add_attr(&t, (test_attr){.name = "value", .kind = ATTR_FLOAT});
  expect_refused(&t, "attribute 'value' is not a tensor");

  /* a value of a type gfxep does not move, of two elements, or of another type than the output */
  node_init(&t, "ConstantOfShape", 13, GFX_DTYPE_F32, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 3);
  add_attr(&t, tensor_attr("value", 11 /* double */, 1, (double[]){1.0}, 8));
  t.d.output_dtypes[0] = 11;
  expect_refused(&t, "value is a tensor of");
  node_init(&t, "ConstantOfShape", 13, GFX_DTYPE_I32, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 3);
  add_attr(&t, tensor_attr("value", GFX_DTYPE_I32, 2, (int32_t[]){1, 2}, 8));
  expect_refused(&t, "'value' holds 2 elements");
  node_init(&t, "ConstantOfShape", 13, GFX_DTYPE_F32, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 3);
  add_attr(&t, tensor_attr("value", GFX_DTYPE_I64, 1, (int64_t[]){1}, 8));
  expect_refused(&t, "output 0 is float32 but value is int64");

  /* a shape computed at run time must have a declared length and an integer type */
  node_init(&t, "Reshape", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  runtime_input(&t, 1, GFX_DTYPE_I64, (gfx_shape){.rank = 1, .dims = {GFX_DIM_UNKNOWN}});
  expect_refused(&t, "shape (input 1) is computed at run time and its length is not declared");
  node_init(&t, "Expand", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  runtime_input(&t, 1, GFX_DTYPE_F32, SHAPE(2));
  expect_refused(&t, "shape (input 1) is float32");

  node_init(&t, "Tile", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  CONST_INPUT(&t, 1, 2);
  expect_refused(&t, "1 repeats for rank 2");

  node_init(&t, "Flatten", 13, GFX_DTYPE_F32, SHAPE(2, 3));
  add_attr(&t, (test_attr)A_INT("axis", 3));
  expect_refused(&t, "outside [-2, 2]");
}

/* Run-time shape errors name the offending dims. */
static void test_infer_errors(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  gfx_shape out[3];

  node_init(&t, "Squeeze", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  CONST_INPUT(&t, 1, 0);
  expect_ok(parse(&t, &node));
  expect_error(ir_layout_infer(&node, (gfx_shape[]){SHAPE(2, 3)}, out), GFX_ERR_INVALID_ARGUMENT, "dim 0 of [2,3]");

  node_init(&t, "Reshape", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  CONST_INPUT(&t, 1, 4, -1);
  expect_ok(parse(&t, &node));
  expect_error(ir_layout_infer(&node, (gfx_shape[]){SHAPE(2, 3)}, out), GFX_ERR_INVALID_ARGUMENT, "[2,3]");

  node_init(&t, "Split", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  t.d.n_outputs = 2;
  t.d.output_dtypes[1] = GFX_DTYPE_F32;
  expect_ok(parse(&t, &node));
  expect_error(ir_layout_infer(&node, (gfx_shape[]){SHAPE(5)}, out), GFX_ERR_INVALID_ARGUMENT, "2 equal parts");

  node_init(&t, "Expand", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  CONST_INPUT(&t, 1, 2, 4);
  expect_ok(parse(&t, &node));
  gfx_status no_broadcast = ir_layout_infer(&node, (gfx_shape[]){SHAPE(3)}, out); /* 3 vs 4 */
  assert_non_null(no_broadcast);
  gfx_status_free(no_broadcast);

  node_init(&t, "Tile", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  CONST_INPUT(&t, 1, (int64_t)1 << 31, (int64_t)1 << 31);
  expect_ok(parse(&t, &node));
  expect_error(ir_layout_infer(&node, (gfx_shape[]){SHAPE(4, 4)}, out), GFX_ERR_INVALID_ARGUMENT, "dim 0 is");

  node_init(&t, "Pad", 13, GFX_DTYPE_F32, (gfx_shape){.rank = -1});
  CONST_INPUT(&t, 1, 1, 1);
  add_attr(&t, (test_attr)A_STR("mode", "edge"));
  expect_ok(parse(&t, &node));
  expect_error(ir_layout_infer(&node, (gfx_shape[]){SHAPE(0)}, out), GFX_ERR_INVALID_ARGUMENT, "empty");
}

/* ================================================================================================
 * reference kernels
 * ================================================================================================ */

/* Runs the node on the reference kernel: inputs in[0..n_in) (data only), outputs of out_shapes. */
static gfx_status run(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  return ref_run_layout(&ctx, node, in, out);
}

static void test_ref_transpose_int64_exact(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Transpose", 13, GFX_DTYPE_I64, SHAPE(2, 3));
  expect_ok(parse(&t, &node));
  int64_t x[6], y[6];
  for (int i = 0; i < 6; i++) x[i] = ((int64_t)1 << 60) + i; /* not representable in double */
  gfx_tensor in = {x, GFX_DTYPE_I64, SHAPE(2, 3)}, out = {y, GFX_DTYPE_I64, SHAPE(3, 2)};
  expect_ok(run(&node, &in, &out));
  const int order[6] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; i++) assert_true(y[i] == x[order[i]]);

  gfx_tensor bad = {y, GFX_DTYPE_I64, SHAPE(2, 3)};
  expect_error(run(&node, &in, &bad), GFX_ERR_INVALID_ARGUMENT, "expected [3,2]");
}

static void test_ref_slice_negative_steps(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Slice", 13, GFX_DTYPE_I32, SHAPE(3, 5));
  CONST_INPUT(&t, 1, 100, -1);
  CONST_INPUT(&t, 2, -100, 0);
  CONST_INPUT(&t, 3, 0, 1);
  CONST_INPUT(&t, 4, -2, -3);
  expect_ok(parse(&t, &node));
  int32_t x[15], y[4];
  for (int i = 0; i < 15; i++) x[i] = i;
  gfx_tensor in[5] = {{x, GFX_DTYPE_I32, SHAPE(3, 5)}};
  gfx_tensor out = {y, GFX_DTYPE_I32, SHAPE(2, 2)};
  expect_ok(run(&node, in, &out));
  /* rows 2, 0; columns 4, 1 */
  assert_int_equal(y[0], 14);
  assert_int_equal(y[1], 11);
  assert_int_equal(y[2], 4);
  assert_int_equal(y[3], 1);

  /* an empty slice writes nothing */
  node_init(&t, "Slice", 13, GFX_DTYPE_I32, SHAPE(3, 5));
  CONST_INPUT(&t, 1, 2);
  CONST_INPUT(&t, 2, 1);
  expect_ok(parse(&t, &node));
  gfx_tensor empty = {NULL, GFX_DTYPE_I32, SHAPE(0, 5)};
  expect_ok(run(&node, in, &empty));
}

static void test_ref_pad_modes(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  const int64_t x[3] = {10, 20, 30};
  int64_t y[9];
  gfx_tensor in = {(void*)x, GFX_DTYPE_I64, SHAPE(3)};
  gfx_tensor out = {y, GFX_DTYPE_I64, SHAPE(9)};
  const struct {
    const char* mode;
    int64_t want[9];
  } cases[] = {
      {"constant", {7, 7, 7, 10, 20, 30, 7, 7, 7}},
      {"edge", {10, 10, 10, 10, 20, 30, 30, 30, 30}},
      {"reflect", {20, 30, 20, 10, 20, 30, 20, 10, 20}},
      {"wrap", {10, 20, 30, 10, 20, 30, 10, 20, 30}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    node_init(&t, "Pad", 19, GFX_DTYPE_I64, SHAPE(3));
    CONST_INPUT(&t, 1, 3, 3);
    CONST_INPUT(&t, 2, 7); /* constant_value: int64, like the data */
    add_attr(&t, (test_attr)A_STR("mode", cases[c].mode));
    expect_ok(parse(&t, &node));
    expect_ok(run(&node, &in, &out));
    for (int i = 0; i < 9; i++) {
      if (y[i] != cases[c].want[i]) print_error("%s: y[%d] = %lld\n", cases[c].mode, i, (long long)y[i]);
      assert_true(y[i] == cases[c].want[i]);
    }
  }

  /* float16 with a float16 constant and negative pads: a crop on one side */
  node_init(&t, "Pad", 13, GFX_DTYPE_F16, SHAPE(3));
  CONST_INPUT(&t, 1, -1, 2);
  uint16_t value = gfx_float_to_half(-2.5f);
  t.d.input_dtypes[2] = GFX_DTYPE_F16;
  t.d.input_shapes[2] = SCALAR;
  t.d.input_is_const[2] = 1;
  t.d.input_const_data[2] = &value;
  t.d.input_const_bytes[2] = 2;
  t.d.n_inputs = 3;
  expect_ok(parse(&t, &node));
  uint16_t hx[3] = {gfx_float_to_half(1), gfx_float_to_half(2), gfx_float_to_half(3)}, hy[4];
  gfx_tensor hin = {hx, GFX_DTYPE_F16, SHAPE(3)}, hout = {hy, GFX_DTYPE_F16, SHAPE(4)};
  expect_ok(run(&node, &hin, &hout));
  assert_int_equal(hy[0], hx[1]);
  assert_int_equal(hy[1], hx[2]);
  assert_int_equal(hy[2], value);
  assert_int_equal(hy[3], value);
}

/* ir_resolve_coord against the definitions, walked step by step (no modulo): edge clamps; reflect
 * bounces between the ends without repeating them; wrap is periodic. Every coordinate from -3n to 3n,
 * so one reflection or wrap (the fast paths) and several (the general formula) are both reached. */
static void test_resolve_coord(void** unused) {
  (void)unused;
  for (int64_t n = 1; n <= 7; n++)
    for (int64_t c = -3 * n; c <= 3 * n; c++) {
      int64_t reflect = 0, dir = 1; /* walk from 0 to c, turning at each end */
      for (int64_t i = 0; i < (c < 0 ? -c : c); i++) {
        const int64_t step = c < 0 ? -dir : dir;
        if (n > 1 && (reflect + step < 0 || reflect + step >= n)) dir = -dir;
        if (n > 1) reflect += c < 0 ? -dir : dir;
      }
      int64_t wrap = c;
      while (wrap < 0) wrap += n;
      while (wrap >= n) wrap -= n;
      const int64_t edge = c < 0 ? 0 : c >= n ? n - 1 : c;
      const int64_t inside = c >= 0 && c < n ? c : -1;
      if (ir_resolve_coord(c, n, IR_PADMODE_REFLECT) != reflect || ir_resolve_coord(c, n, IR_PADMODE_WRAP) != wrap ||
          ir_resolve_coord(c, n, IR_PADMODE_EDGE) != edge || ir_resolve_coord(c, n, IR_PADMODE_CONSTANT) != inside)
        print_error("n %lld c %lld: reflect %lld (want %lld) wrap %lld (want %lld)\n", (long long)n, (long long)c,
                    (long long)ir_resolve_coord(c, n, IR_PADMODE_REFLECT), (long long)reflect,
                    (long long)ir_resolve_coord(c, n, IR_PADMODE_WRAP), (long long)wrap);
      assert_true(ir_resolve_coord(c, n, IR_PADMODE_REFLECT) == reflect);
      assert_true(ir_resolve_coord(c, n, IR_PADMODE_WRAP) == wrap);
      assert_true(ir_resolve_coord(c, n, IR_PADMODE_EDGE) == edge);
      assert_true(ir_resolve_coord(c, n, IR_PADMODE_CONSTANT) == inside);
    }
}

static void test_ref_concat_split(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  /* Concat of [2,1] and [2,2] along axis 1, uint8 */
  node_init(&t, "Concat", 13, GFX_DTYPE_U8, SHAPE(2, 1));
  runtime_input(&t, 1, GFX_DTYPE_U8, SHAPE(2, 2));
  add_attr(&t, (test_attr)A_INT("axis", 1));
  expect_ok(parse(&t, &node));
  uint8_t a[2] = {1, 2}, b[4] = {3, 4, 5, 6}, y[6];
  gfx_tensor in[2] = {{a, GFX_DTYPE_U8, SHAPE(2, 1)}, {b, GFX_DTYPE_U8, SHAPE(2, 2)}};
  gfx_tensor out = {y, GFX_DTYPE_U8, SHAPE(2, 3)};
  expect_ok(run(&node, in, &out));
  const uint8_t want[6] = {1, 3, 4, 2, 5, 6};
  assert_memory_equal(y, want, 6);

  /* Split back, sizes from a constant input */
  node_init(&t, "Split", 13, GFX_DTYPE_U8, SHAPE(2, 3));
  t.d.n_outputs = 2;
  t.d.output_dtypes[1] = GFX_DTYPE_U8;
  CONST_INPUT(&t, 1, 1, 2);
  add_attr(&t, (test_attr)A_INT("axis", -1));
  expect_ok(parse(&t, &node));
  uint8_t s0[2], s1[4];
  gfx_tensor sin[2] = {{y, GFX_DTYPE_U8, SHAPE(2, 3)}};
  gfx_tensor souts[2] = {{s0, GFX_DTYPE_U8, SHAPE(2, 1)}, {s1, GFX_DTYPE_U8, SHAPE(2, 2)}};
  expect_ok(run(&node, sin, souts));
  assert_memory_equal(s0, a, 2);
  assert_memory_equal(s1, b, 4);
}

static void test_ref_tile_expand(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Tile", 13, GFX_DTYPE_BF16, SHAPE(2));
  CONST_INPUT(&t, 1, 3);
  expect_ok(parse(&t, &node));
  uint16_t x[2] = {0x3f80, 0x4000}, y[6];
  gfx_tensor in = {x, GFX_DTYPE_BF16, SHAPE(2)}, out = {y, GFX_DTYPE_BF16, SHAPE(6)};
  expect_ok(run(&node, &in, &out));
  for (int i = 0; i < 6; i++) assert_int_equal(y[i], x[i % 2]);

  node_init(&t, "Expand", 13, GFX_DTYPE_F32, SHAPE(3, 1));
  CONST_INPUT(&t, 1, 2, 1, 2);
  expect_ok(parse(&t, &node));
  float fx[3] = {1, 2, 3}, fy[12];
  gfx_tensor fin = {fx, GFX_DTYPE_F32, SHAPE(3, 1)}, fout = {fy, GFX_DTYPE_F32, SHAPE(2, 3, 2)};
  expect_ok(run(&node, &fin, &fout));
  for (int i = 0; i < 12; i++) assert_true(fy[i] == fx[(i / 2) % 3]);
}

static void test_ref_gather(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Gather", 13, GFX_DTYPE_I64, SHAPE(3, 2));
  runtime_input(&t, 1, GFX_DTYPE_I32, SHAPE(2));
  expect_ok(parse(&t, &node));
  int64_t x[6] = {0, 1, INT64_MAX, INT64_MIN, 4, 5}, y[4];
  int32_t idx[2] = {-2, 0};
  gfx_tensor in[2] = {{x, GFX_DTYPE_I64, SHAPE(3, 2)}, {idx, GFX_DTYPE_I32, SHAPE(2)}};
  gfx_tensor out = {y, GFX_DTYPE_I64, SHAPE(2, 2)};
  expect_ok(run(&node, in, &out));
  assert_true(y[0] == INT64_MAX && y[1] == INT64_MIN && y[2] == 0 && y[3] == 1);

  idx[1] = 3; /* outside [-3, 3): an error, nothing read */
  expect_error(run(&node, in, &out), GFX_ERR_INVALID_ARGUMENT, "index 3 (entry 1)");
}

static void test_ref_shape_fill_copy(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Shape", 15, GFX_DTYPE_BOOL, SHAPE(2, 3, 4));
  t.d.output_dtypes[0] = GFX_DTYPE_I64;
  add_attr(&t, (test_attr)A_INT("start", 1));
  add_attr(&t, (test_attr)A_INT("end", -1));
  expect_ok(parse(&t, &node));
  int64_t y[1];
  gfx_tensor in = {NULL, GFX_DTYPE_BOOL, SHAPE(2, 3, 4)}, out = {y, GFX_DTYPE_I64, SHAPE(1)};
  expect_ok(run(&node, &in, &out));
  assert_int_equal(y[0], 3);

  node_init(&t, "ConstantOfShape", 13, GFX_DTYPE_F32, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 2);
  expect_ok(parse(&t, &node));
  float f[4] = {1, 1, 1, 1};
  gfx_tensor fout = {f, GFX_DTYPE_F32, SHAPE(2, 2)};
  expect_ok(run(&node, (gfx_tensor[]){{NULL, GFX_DTYPE_I64, SHAPE(2)}}, &fout));
  for (int i = 0; i < 4; i++) assert_true(f[i] == 0.0f);

  node_init(&t, "Flatten", 13, GFX_DTYPE_I8, SHAPE(2, 3, 2));
  expect_ok(parse(&t, &node));
  int8_t bx[12], by[12];
  for (int i = 0; i < 12; i++) bx[i] = (int8_t)(i - 6);
  gfx_tensor bin = {bx, GFX_DTYPE_I8, SHAPE(2, 3, 2)}, bout = {by, GFX_DTYPE_I8, SHAPE(2, 6)};
  expect_ok(run(&node, &bin, &bout));
  assert_memory_equal(bx, by, 12);
}

/* ConstantOfShape's value attribute: any type gfxep moves, written exactly; a float32 value in a
 * partition lowered to float16 or bfloat16 follows the output's type. */
static void test_constant_of_shape_values(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "ConstantOfShape", 20, GFX_DTYPE_I64, SHAPE(2));
  CONST_INPUT(&t, 0, 2, 3);
  const int64_t big = ((int64_t)1 << 60) + 7;
  add_attr(&t, tensor_attr("value", GFX_DTYPE_I64, 1, &big, 8));
  expect_ok(parse(&t, &node));
  int64_t y[6] = {0};
  gfx_tensor out = {y, GFX_DTYPE_I64, SHAPE(2, 3)};
  expect_ok(run(&node, (gfx_tensor[]){{NULL, GFX_DTYPE_I64, SHAPE(2)}}, &out));
  for (int i = 0; i < 6; i++) assert_true(y[i] == big);

  node_init(&t, "ConstantOfShape", 20, GFX_DTYPE_F16, SHAPE(1));
  CONST_INPUT(&t, 0, 3);
  add_attr(&t, tensor_attr("value", GFX_DTYPE_F32, 1, (float[]){-2.5f}, 4));
  expect_ok(parse(&t, &node));
  assert_int_equal(node.params.layout.dtype, GFX_DTYPE_F16);
  uint16_t h[3] = {0};
  gfx_tensor hout = {h, GFX_DTYPE_F16, SHAPE(3)};
  expect_ok(run(&node, (gfx_tensor[]){{NULL, GFX_DTYPE_I64, SHAPE(1)}}, &hout));
  for (int i = 0; i < 3; i++) assert_int_equal(h[i], gfx_float_to_half(-2.5f));

  node_init(&t, "ConstantOfShape", 20, GFX_DTYPE_BOOL, SHAPE(1));
  CONST_INPUT(&t, 0, 4);
  add_attr(&t, tensor_attr("value", GFX_DTYPE_BOOL, 1, (uint8_t[]){1}, 1));
  expect_ok(parse(&t, &node));
  uint8_t b[4] = {0};
  gfx_tensor bout = {b, GFX_DTYPE_BOOL, SHAPE(4)};
  expect_ok(run(&node, (gfx_tensor[]){{NULL, GFX_DTYPE_I64, SHAPE(1)}}, &bout));
  for (int i = 0; i < 4; i++) assert_int_equal(b[i], 1);
}

/* Reshape, Expand and ConstantOfShape with a shape computed at run time: parse marks the input,
 * inference refuses until the value is folded in, and the folded node is the one a constant shape
 * would have made; a value the op cannot take is an INVALID_ARGUMENT naming the node, the input and
 * the entry. */
static void test_computed_shapes(void** unused) {
  (void)unused;
  test_node t;
  ir_node node, r;
  gfx_shape out[1];
  ir_value_data vals[IR_MAX_IO];
  memset(vals, 0, sizeof vals);

  node_init(&t, "Reshape", 14, GFX_DTYPE_F32, SHAPE(2, 3, 4));
  runtime_input(&t, 1, GFX_DTYPE_I64, SHAPE(2));
  expect_ok(parse(&t, &node));
  assert_int_equal(ir_node_value_inputs(&node), 2u);
  assert_true(ir_op_data_dependent(node.op, &node.params));
  gfx_shape rin[2] = {SHAPE(2, 3, 4), SHAPE(2)};
  expect_error(ir_layout_infer(&node, rin, out), GFX_ERR_INTERNAL, "not read back");
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {0, -1}};
  expect_ok(ir_node_resolve(&node, vals, &r));
  assert_int_equal(ir_node_value_inputs(&r), 0);
  expect_ok(ir_layout_infer(&r, rin, out));
  expect_shape(out[0], SHAPE(2, 12));
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {-1, -1}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "Reshape 'n'", "input 1",
               "[-1,-1]", "2 entries are -1");
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {4, -3}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "entry 1 is -3");
  vals[1] = (ir_value_data){.shape = SHAPE(3), .n = 3, .v = {4, 3, 2}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "shape", "[3]", "2 entries");
  /* the folded shape still has to fit the data */
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {5, 5}};
  expect_ok(ir_node_resolve(&node, vals, &r));
  expect_error(ir_layout_infer(&r, rin, out), GFX_ERR_INVALID_ARGUMENT, "the new shape 25");

  node_init(&t, "Reshape", 14, GFX_DTYPE_F32, SHAPE(2, 3, 4));
  runtime_input(&t, 1, GFX_DTYPE_I64, SHAPE(2));
  add_attr(&t, (test_attr)A_INT("allowzero", 1));
  expect_ok(parse(&t, &node));
  vals[1] = (ir_value_data){.shape = SHAPE(2), .n = 2, .v = {0, -1}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "both 0 and -1");

  node_init(&t, "Expand", 13, GFX_DTYPE_I8, SHAPE(3, 1));
  runtime_input(&t, 1, GFX_DTYPE_I32, SHAPE(3));
  expect_ok(parse(&t, &node));
  assert_int_equal(ir_node_value_inputs(&node), 2u);
  gfx_shape ein[2] = {SHAPE(3, 1), SHAPE(3)};
  vals[1] = (ir_value_data){.shape = SHAPE(3), .n = 3, .v = {2, 1, 4}};
  expect_ok(ir_node_resolve(&node, vals, &r));
  expect_ok(ir_layout_infer(&r, ein, out));
  expect_shape(out[0], SHAPE(2, 3, 4));
  vals[1] = (ir_value_data){.shape = SHAPE(3), .n = 3, .v = {2, -1, 4}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "Expand 'n'", "entry 1 is -1");

  node_init(&t, "ConstantOfShape", 20, GFX_DTYPE_I32, SHAPE(3));
  t.d.input_dtypes[0] = GFX_DTYPE_I64;
  add_attr(&t, tensor_attr("value", GFX_DTYPE_I32, 1, (int32_t[]){-9}, 4));
  expect_ok(parse(&t, &node));
  assert_int_equal(ir_node_value_inputs(&node), 1u);
  gfx_shape cin[1] = {SHAPE(3)};
  expect_error(ir_layout_infer(&node, cin, out), GFX_ERR_INTERNAL, "not read back");
  memset(vals, 0, sizeof vals);
  vals[0] = (ir_value_data){.shape = SHAPE(3), .n = 3, .v = {2, 0, 5}};
  expect_ok(ir_node_resolve(&node, vals, &r));
  expect_ok(ir_layout_infer(&r, cin, out));
  expect_shape(out[0], SHAPE(2, 0, 5));
  vals[0] = (ir_value_data){.shape = SHAPE(3), .n = 3, .v = {2, ((int64_t)1 << 32), 5}};
  expect_error(ir_node_resolve(&node, vals, &r), GFX_ERR_INVALID_ARGUMENT, "ConstantOfShape 'n'", "input 0",
               "entry 1 is 4294967296");
}

/* The plan of a Concat input writes into the output at its offset, through the output's strides. */
static void test_plan_concat_offsets(void** unused) {
  (void)unused;
  test_node t;
  ir_node node;
  node_init(&t, "Concat", 13, GFX_DTYPE_F32, SHAPE(2, 1));
  runtime_input(&t, 1, GFX_DTYPE_F32, SHAPE(2, 2));
  add_attr(&t, (test_attr)A_INT("axis", 1));
  expect_ok(parse(&t, &node));
  ir_copy_plan plan;
  const gfx_shape in[2] = {SHAPE(2, 1), SHAPE(2, 2)}, out[1] = {SHAPE(2, 3)};
  expect_ok(ir_layout_plan(&node, in, out, 1, &plan));
  assert_int_equal(plan.count, 4);
  assert_int_equal(plan.dst_offset, 1);
  assert_int_equal(plan.dst_strides[0], 3);
  int64_t dst;
  assert_int_equal(ir_copy_plan_source(&plan, 3, &dst), 3);
  assert_int_equal(dst, 5);
  /* a wrong output shape is an error, never an access out of bounds */
  const gfx_shape wrong[1] = {SHAPE(2, 4)};
  expect_error(ir_layout_plan(&node, in, wrong, 0, &plan), GFX_ERR_INVALID_ARGUMENT, "expected [2,3]");
}

/* x -> Relu -> a -> Reshape -> b -> Relu -> y: b shares a's memory (no bytes of its own), a stays live
 * until b's reader, and no other value overlaps it meanwhile; a Reshape that writes a graph output
 * gets its own buffer (ORT's) and is not an alias. */
static void test_plan_views_share_memory(void** unused) {
  (void)unused;
  for (int view_is_output = 0; view_is_output <= 1; view_is_output++) {
    ir_graph* g = ir_graph_new();
    assert_non_null(g);
    const gfx_shape s23 = SHAPE(2, 3), s6 = SHAPE(6);
    int x, a, shape, b, y;
    expect_ok(ir_graph_add_value(g, "x", GFX_DTYPE_F32, &s23, &x));
    expect_ok(ir_graph_add_value(g, "a", GFX_DTYPE_F32, &s23, &a));
    const gfx_shape s1 = SHAPE(1);
    expect_ok(ir_graph_add_value(g, "shape", GFX_DTYPE_I64, &s1, &shape));
    const int64_t six = 6;
    expect_ok(ir_graph_set_constant(g, shape, &six, sizeof six));
    expect_ok(ir_graph_add_value(g, "b", GFX_DTYPE_F32, &s6, &b));
    expect_ok(ir_graph_add_value(g, "y", GFX_DTYPE_F32, &s6, &y));
    expect_ok(ir_graph_add_input(g, x));
    /* the Reshape's params as parse makes them */
    test_node t;
    node_init(&t, "Reshape", 14, GFX_DTYPE_F32, s23);
    CONST_INPUT(&t, 1, 6);
    ir_node reshape;
    expect_ok(parse(&t, &reshape));
    ir_params none;
    memset(&none, 0, sizeof none);
    expect_ok(ir_graph_add_node(g, GFX_OP_RELU, "r1", &x, 1, &a, 1, &none));
    const int rin[2] = {a, shape};
    expect_ok(ir_graph_add_node(g, GFX_OP_RESHAPE, "view", rin, 2, &b, 1, &reshape.params));
    expect_ok(ir_graph_add_node(g, GFX_OP_RELU, "r2", &b, 1, &y, 1, &none));
    expect_ok(ir_graph_add_output(g, y));
    if (view_is_output) expect_ok(ir_graph_add_output(g, b));
    gfx_shape shapes[8];
    expect_ok(ir_infer_shapes(g, &s23, shapes));
    ir_plan plan;
    expect_ok(ir_plan_memory(g, shapes, 64, &plan));
    if (view_is_output) {
      assert_int_equal(plan.alias_of[b], -1);
      assert_true(plan.offsets[b] == IR_PLAN_NO_OFFSET); /* a graph output: ORT's buffer */
    } else {
      assert_int_equal(plan.alias_of[b], a);
      assert_true(plan.offsets[b] == IR_PLAN_NO_OFFSET);
    }
    assert_true(plan.offsets[a] != IR_PLAN_NO_OFFSET);
    assert_true(ir_op_is_view(GFX_OP_RESHAPE));
    assert_false(ir_op_is_view(GFX_OP_RELU));
    ir_plan_free(&plan);
    ir_graph_free(g);
  }
}

/* x -> Relu -> a -> Split(axis 1, num_outputs 2) -> b0, b1 -> Relu each -> y0, y1. With every dim
 * before the axis 1, each piece is a contiguous part of a: the plan makes b0 and b1 views of a at
 * offsets 0 and half its bytes. A leading dim above 1, or pieces not 16-byte aligned, copy. */
static void test_plan_split_views(void** unused) {
  (void)unused;
  const struct {
    gfx_shape x, piece;
    int view;
  } cases[] = {
      {SHAPE(1, 2, 8), SHAPE(1, 1, 8), 1},  /* 32-byte pieces */
      {SHAPE(2, 2, 8), SHAPE(2, 1, 8), 0},  /* pieces interleave in memory */
      {SHAPE(1, 2, 3), SHAPE(1, 1, 3), 0},  /* 12-byte pieces: the second would be misaligned */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ir_graph* g = ir_graph_new();
    assert_non_null(g);
    int x, a, b[2], y[2];
    expect_ok(ir_graph_add_value(g, "x", GFX_DTYPE_F32, &cases[c].x, &x));
    expect_ok(ir_graph_add_value(g, "a", GFX_DTYPE_F32, &cases[c].x, &a));
    expect_ok(ir_graph_add_value(g, "b0", GFX_DTYPE_F32, &cases[c].piece, &b[0]));
    expect_ok(ir_graph_add_value(g, "b1", GFX_DTYPE_F32, &cases[c].piece, &b[1]));
    expect_ok(ir_graph_add_value(g, "y0", GFX_DTYPE_F32, &cases[c].piece, &y[0]));
    expect_ok(ir_graph_add_value(g, "y1", GFX_DTYPE_F32, &cases[c].piece, &y[1]));
    expect_ok(ir_graph_add_input(g, x));
    test_node t;
    node_init(&t, "Split", 18, GFX_DTYPE_F32, cases[c].x);
    t.d.n_outputs = 2;
    t.d.output_dtypes[1] = GFX_DTYPE_F32;
    add_attr(&t, (test_attr)A_INT("num_outputs", 2));
    add_attr(&t, (test_attr)A_INT("axis", 1));
    ir_node split;
    expect_ok(parse(&t, &split));
    ir_params none;
    memset(&none, 0, sizeof none);
    expect_ok(ir_graph_add_node(g, GFX_OP_RELU, "r", &x, 1, &a, 1, &none));
    expect_ok(ir_graph_add_node(g, GFX_OP_SPLIT, "split", &a, 1, b, 2, &split.params));
    for (int i = 0; i < 2; i++) {
      expect_ok(ir_graph_add_node(g, GFX_OP_RELU, i ? "r1" : "r0", &b[i], 1, &y[i], 1, &none));
      expect_ok(ir_graph_add_output(g, y[i]));
    }
    gfx_shape shapes[8];
    expect_ok(ir_infer_shapes(g, &cases[c].x, shapes));
    ir_plan plan;
    expect_ok(ir_plan_memory(g, shapes, 64, &plan));
    for (int i = 0; i < 2; i++) {
      if (cases[c].view) {
        assert_int_equal(plan.alias_of[b[i]], a);
        assert_true(plan.offsets[b[i]] == IR_PLAN_NO_OFFSET);
        assert_int_equal(plan.alias_offset[b[i]], i * plan.sizes[b[0]]);
      } else {
        assert_int_equal(plan.alias_of[b[i]], -1);
        assert_true(plan.offsets[b[i]] != IR_PLAN_NO_OFFSET);
      }
    }
    ir_plan_free(&plan);
    ir_graph_free(g);
  }
}

/* Runs every node of g through the reference layout kernels on one 24-float buffer per value. */
static void run_layout_graph(const ir_graph* g, float (*store)[24]) {
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    gfx_tensor in[IR_MAX_IO], out[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++) {
      const ir_value* v = &g->values[node->inputs[i]];
      in[i] = tensor_of(v->const_data ? v->const_data : store[node->inputs[i]], v->dtype, v->shape);
    }
    for (int o = 0; o < node->n_outputs; o++)
      out[o] = tensor_of(store[node->outputs[o]], GFX_DTYPE_F32, g->values[node->outputs[o]].shape);
    expect_ok(run(node, in, out));
  }
}

/* x [2,3,4] -> Split(axis 1) -> o0 -> Transpose(2,0,1) -> y0; o1 -> Squeeze(1) -> Transpose(1,0) -> y1;
 * o2 a graph output. ir_fuse leaves the Split alone, writing y0 and y1 in their final layouts
 * (split_map [2,0,1] and [2,0]), and the outputs are the unfused ones. */
static void test_fuse_split_transpose(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  assert_non_null(g);
  const gfx_shape xs = SHAPE(2, 3, 4), piece = SHAPE(2, 1, 4);
  int x, o[3], s1, y0, y1;
  expect_ok(ir_graph_add_value(g, "x", GFX_DTYPE_F32, &xs, &x));
  for (int i = 0; i < 3; i++) {
    char name[8];
    snprintf(name, sizeof name, "o%d", i);
    expect_ok(ir_graph_add_value(g, name, GFX_DTYPE_F32, &piece, &o[i]));
  }
  const gfx_shape s1s = SHAPE(2, 4), y0s = SHAPE(4, 2, 1), y1s = SHAPE(4, 2);
  expect_ok(ir_graph_add_value(g, "s1", GFX_DTYPE_F32, &s1s, &s1));
  expect_ok(ir_graph_add_value(g, "y0", GFX_DTYPE_F32, &y0s, &y0));
  expect_ok(ir_graph_add_value(g, "y1", GFX_DTYPE_F32, &y1s, &y1));
  expect_ok(ir_graph_add_input(g, x));
  test_node t;
  ir_node split, t0, sq, t1;
  node_init(&t, "Split", 18, GFX_DTYPE_F32, xs);
  t.d.n_outputs = 3;
  t.d.output_dtypes[1] = t.d.output_dtypes[2] = GFX_DTYPE_F32;
  add_attr(&t, (test_attr)A_INT("num_outputs", 3));
  add_attr(&t, (test_attr)A_INT("axis", 1));
  expect_ok(parse(&t, &split));
  node_init(&t, "Transpose", 13, GFX_DTYPE_F32, piece);
  add_attr(&t, (test_attr)A_INTS("perm", 2, 0, 1));
  expect_ok(parse(&t, &t0));
  node_init(&t, "Squeeze", 11, GFX_DTYPE_F32, piece);
  add_attr(&t, (test_attr)A_INTS("axes", 1));
  expect_ok(parse(&t, &sq));
  node_init(&t, "Transpose", 13, GFX_DTYPE_F32, s1s);
  add_attr(&t, (test_attr)A_INTS("perm", 1, 0));
  expect_ok(parse(&t, &t1));
  expect_ok(ir_graph_add_node(g, GFX_OP_SPLIT, "split", &x, 1, o, 3, &split.params));
  expect_ok(ir_graph_add_node(g, GFX_OP_TRANSPOSE, "t0", &o[0], 1, &y0, 1, &t0.params));
  expect_ok(ir_graph_add_node(g, GFX_OP_SQUEEZE, "sq", &o[1], 1, &s1, 1, &sq.params));
  expect_ok(ir_graph_add_node(g, GFX_OP_TRANSPOSE, "t1", &s1, 1, &y1, 1, &t1.params));
  expect_ok(ir_graph_add_output(g, y0));
  expect_ok(ir_graph_add_output(g, y1));
  expect_ok(ir_graph_add_output(g, o[2]));

  float before[16][24], after[16][24];
  memset(before, 0, sizeof before);
  memset(after, 0, sizeof after);
  for (int i = 0; i < 24; i++) before[x][i] = after[x][i] = (float)(i + 1);
  run_layout_graph(g, before);
  expect_ok(ir_fuse(g));
  assert_int_equal(g->n_nodes, 1);
  const ir_layout_params* p = &g->nodes[0].params.layout;
  assert_int_equal(g->nodes[0].outputs[0], y0);
  assert_int_equal(g->nodes[0].outputs[1], y1);
  assert_int_equal(g->nodes[0].outputs[2], o[2]);
  assert_int_equal(p->split_map_rank[0], 3);
  assert_int_equal(p->split_map[0][0], 2);
  assert_int_equal(p->split_map[0][1], 0);
  assert_int_equal(p->split_map[0][2], 1);
  assert_int_equal(p->split_map_rank[1], 2);
  assert_int_equal(p->split_map[1][0], 2);
  assert_int_equal(p->split_map[1][1], 0);
  assert_int_equal(p->split_map_rank[2], 0);
  gfx_shape outs[3];
  expect_ok(ir_layout_infer(&g->nodes[0], &xs, outs));
  expect_shape(outs[0], y0s);
  expect_shape(outs[1], y1s);
  expect_shape(outs[2], piece);
  run_layout_graph(g, after);
  for (int i = 0; i < 8; i++) {
    assert_true(before[y0][i] == after[y0][i]);
    assert_true(before[y1][i] == after[y1][i]);
    assert_true(before[o[2]][i] == after[o[2]][i]);
  }
  assert_true(after[y1][1] == 17.0f); /* y1[0][1] = x[1][1][0]: a real transpose happened */
  /* a fused Split is never a view: its outputs are copies in their own layout */
  gfx_shape shapes[16];
  expect_ok(ir_infer_shapes(g, &xs, shapes));
  ir_plan plan;
  expect_ok(ir_plan_memory(g, shapes, 64, &plan));
  for (int i = 0; i < 3; i++) assert_int_equal(plan.alias_of[g->nodes[0].outputs[i]], -1);
  ir_plan_free(&plan);
  ir_graph_free(g);
}

/* ---- ir_copy_plan_simplify ---- */

static uint32_t plan_rng(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* Runs a plan element by element (ir_copy_plan_source, the reference definition) over byte buffers. */
static void run_plan_bytes(const ir_copy_plan* p, const unsigned char* src, unsigned char* dst) {
  for (int64_t i = 0; i < p->count; i++) {
    int64_t d;
    const int64_t s = ir_copy_plan_source(p, i, &d);
    memcpy(dst + d * p->elem_size, s < 0 ? p->value : src + s * p->elem_size, (size_t)p->elem_size);
  }
}

/* Random plans of every kind the layout ops make (a box of a larger destination, source starts and
 * steps that leave the source in every pad mode, transposed strides, contiguous runs that merge and
 * widen) copy exactly the same bytes simplified as not; the simplified plans keep every offset and
 * stride a multiple of their wider elements, and the widening happens (the check can fail). */
static void test_copy_plan_simplify(void** unused) {
  (void)unused;
  enum { BYTES = 1 << 16 };
  static unsigned char src[BYTES], dst_a[BYTES], dst_b[BYTES];
  uint32_t rng = 7;
  for (int i = 0; i < BYTES; i++) src[i] = (unsigned char)plan_rng(&rng);
  int widened = 0, merged = 0;
  for (int trial = 0; trial < 3000; trial++) {
    ir_copy_plan p;
    memset(&p, 0, sizeof p);
    const int sizes[4] = {1, 2, 4, 8};
    p.elem_size = sizes[plan_rng(&rng) % 4];
    p.rank = 1 + (int)(plan_rng(&rng) % 5);
    p.mode = (ir_pad_mode)(plan_rng(&rng) % 4);
    const int plain = plan_rng(&rng) % 2; /* a contiguous copy of a box: what merges and widens */
    int64_t box = 1, src_elems = 1, dst_elems = 1;
    int64_t src_dims[GFX_MAX_RANK], dst_dims[GFX_MAX_RANK], off[GFX_MAX_RANK];
    for (int k = 0; k < p.rank; k++) {
      p.dims[k] = 1 + plan_rng(&rng) % (k == p.rank - 1 ? 16 : 4);
      src_dims[k] = plain ? p.dims[k] : 1 + plan_rng(&rng) % 6;
      const int64_t extra = plain && plan_rng(&rng) % 2 ? 0 : plan_rng(&rng) % 3;
      dst_dims[k] = p.dims[k] + extra;
      off[k] = extra ? plan_rng(&rng) % (extra + 1) : 0;
      p.src_extent[k] = src_dims[k];
      p.src_start[k] = plain ? 0 : (int64_t)(plan_rng(&rng) % (src_dims[k] + 3)) - 2;
      p.src_step[k] = plain ? 1 : (int64_t[]){-1, 1, 1, 2}[plan_rng(&rng) % 4];
      box *= p.dims[k];
      src_elems *= src_dims[k];
      dst_elems *= dst_dims[k];
    }
    if (plain) memcpy(p.src_extent, p.dims, sizeof p.dims);
    /* contiguous strides of both tensors; the source's dims taken in a random order sometimes */
    int64_t sd = 1, dd = 1;
    for (int k = p.rank - 1; k >= 0; k--) {
      p.dst_strides[k] = dd;
      p.dst_offset += off[k] * dd;
      dd *= dst_dims[k];
      p.src_strides[k] = sd;
      sd *= src_dims[k];
    }
    if (!plain && plan_rng(&rng) % 2 && p.rank > 1) {
      const int a = (int)(plan_rng(&rng) % (uint32_t)p.rank), b = (int)(plan_rng(&rng) % (uint32_t)p.rank);
      const int64_t t = p.src_strides[a];
      p.src_strides[a] = p.src_strides[b];
      p.src_strides[b] = t;
    }
    p.count = box;
    for (int i = 0; i < 8; i++) p.value[i] = (unsigned char)(0xA0 + i);
    if (src_elems * p.elem_size > BYTES || dst_elems * p.elem_size > BYTES) continue;
    ir_copy_plan q;
    ir_copy_plan_simplify(&p, 16, &q);
    memset(dst_a, 0x5A, (size_t)(dst_elems * p.elem_size));
    memset(dst_b, 0x5A, (size_t)(dst_elems * p.elem_size));
    run_plan_bytes(&p, src, dst_a);
    run_plan_bytes(&q, src, dst_b);
    if (memcmp(dst_a, dst_b, (size_t)(dst_elems * p.elem_size)))
      print_error("trial %d: rank %d -> %d, element %d -> %d bytes, mode %d\n", trial, p.rank, q.rank, p.elem_size,
                  q.elem_size, (int)p.mode);
    assert_memory_equal(dst_a, dst_b, (size_t)(dst_elems * p.elem_size));
    assert_true(q.count * q.elem_size == p.count * p.elem_size);
    assert_true(q.elem_size <= 16);
    widened += q.elem_size > p.elem_size;
    merged += q.rank < p.rank;
  }
  assert_true(widened > 100);
  assert_true(merged > 100);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_claims),
      cmocka_unit_test(test_parse_refusals),
      cmocka_unit_test(test_infer_errors),
      cmocka_unit_test(test_ref_transpose_int64_exact),
      cmocka_unit_test(test_ref_slice_negative_steps),
      cmocka_unit_test(test_ref_pad_modes),
      cmocka_unit_test(test_resolve_coord),
      cmocka_unit_test(test_ref_concat_split),
      cmocka_unit_test(test_ref_tile_expand),
      cmocka_unit_test(test_ref_gather),
      cmocka_unit_test(test_ref_shape_fill_copy),
      cmocka_unit_test(test_constant_of_shape_values),
      cmocka_unit_test(test_computed_shapes),
      cmocka_unit_test(test_plan_concat_offsets),
      cmocka_unit_test(test_plan_views_share_memory),
      cmocka_unit_test(test_plan_split_views),
      cmocka_unit_test(test_fuse_split_transpose),
      cmocka_unit_test(test_copy_plan_simplify),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

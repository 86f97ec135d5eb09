/* gfxep — what the unit tests share: status checks, shapes, tensors and nodes built in one line, and
 * a table-driven attribute reader with node descriptions, so that an op's parse function can be
 * driven without ONNX Runtime. Everything is static inline: a test includes this after cmocka.h and
 * uses what it needs.
 */
#ifndef GFXEP_TESTS_IR_TEST_UTIL_H
#define GFXEP_TESTS_IR_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "ir/graph.h"
#include "ir/shape.h"

/* ---- statuses ---- */

static inline void expect_ok(gfx_status s) {
  if (s) {
    print_error("unexpected error: %s\n", gfx_status_message(s));
    gfx_status_free(s);
    fail();
  }
}

/* The status has `code` and its message contains every string of the NULL-terminated list. */
static inline void expect_error_v(gfx_status s, gfx_code code, va_list ap) {
  if (!s) print_error("expected an error with code %d, got success\n", (int)code);
  assert_non_null(s);
  const char* message = gfx_status_message(s);
  if (gfx_status_code(s) != code) print_error("message: %s\n", message);
  assert_int_equal(gfx_status_code(s), code);
  for (const char* part = va_arg(ap, const char*); part; part = va_arg(ap, const char*)) {
    if (!strstr(message, part)) print_error("\"%s\" not in message: %s\n", part, message);
    assert_non_null(strstr(message, part));
  }
  gfx_status_free(s);
}

static inline void expect_error_list(gfx_status s, gfx_code code, ...) {
  va_list ap;
  va_start(ap, code);
  expect_error_v(s, code, ap);
  va_end(ap);
}

/* expect_error(s, code, part...): the list ends itself, so a trailing NULL is optional. */
#define expect_error(s, code, ...) expect_error_list((s), (code), __VA_ARGS__, (const char*)NULL)

/* ---- shapes, tensors, nodes ---- */

static inline gfx_shape shape_of(int rank, const int64_t* dims) {
  gfx_shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

#define SHAPE(...) shape_of((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
#define SCALAR shape_of(0, NULL)

static inline void expect_shape(gfx_shape got, gfx_shape want) {
  if (!gfx_shape_equal(&got, &want)) {
    char a[96], b[96];
    print_error("shape %s, expected %s\n", gfx_shape_str(&got, a, sizeof a), gfx_shape_str(&want, b, sizeof b));
    fail();
  }
}

static inline gfx_tensor tensor_of(void* data, int dtype, gfx_shape shape) {
  gfx_tensor t = {.data = data, .dtype = dtype, .shape = shape};
  return t;
}

/* A parsed node as the kernels see it, outside any graph: no value ids, default parameters. */
static inline ir_node node_of(gfx_op op, int n_inputs) {
  ir_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.name = "test_node";
  n.n_inputs = n_inputs;
  n.n_outputs = 1;
  for (int i = 0; i < IR_MAX_IO; i++) n.inputs[i] = n.outputs[i] = -1;
  /* the parser's defaults where zero is not one: a product is scaled by alpha = 1 */
  if (op == GFX_OP_MATMUL || op == GFX_OP_GEMM) n.params.gemm.alpha = 1.0f;
  return n;
}

/* Conv parameters of `spatial` dims: one group, unit strides and dilations, no padding. */
static inline ir_conv_params conv_params(int spatial) {
  ir_conv_params p;
  memset(&p, 0, sizeof p);
  p.spatial = spatial;
  p.group = 1;
  for (int i = 0; i < spatial; i++) p.strides[i] = p.dilations[i] = 1;
  return p;
}

/* Every element within `tolerance` of the expected one (a NaN never is). */
static inline void expect_floats_near(const float* expected, const float* actual, size_t count, double tolerance) {
  for (size_t i = 0; i < count; i++) {
    double err = fabs((double)expected[i] - (double)actual[i]);
    if (!(err <= tolerance)) print_error("element %zu: expected %.9g, got %.9g\n", i, expected[i], actual[i]);
    assert_true(err <= tolerance);
  }
}

/* ---- a table-driven attribute reader ---- */

typedef enum attr_kind { ATTR_INT, ATTR_INTS, ATTR_FLOAT, ATTR_STRING, ATTR_TENSOR } attr_kind;

typedef struct test_attr {
  const char* name;
  attr_kind kind;
  int64_t i;
  float f;
  const char* s;
  int64_t ints[8];
  size_t n_ints;
  /* ATTR_TENSOR: element type, element count and bytes (at most 16) */
  int tensor_dtype;
  int64_t tensor_count;
  unsigned char tensor[16];
  size_t tensor_bytes;
} test_attr;

#define A_INT(n, v) {.name = (n), .kind = ATTR_INT, .i = (v)}
#define A_FLOAT(n, v) {.name = (n), .kind = ATTR_FLOAT, .f = (v)}
#define A_STR(n, v) {.name = (n), .kind = ATTR_STRING, .s = (v)}
#define A_INTS(n, ...) \
  {.name = (n), .kind = ATTR_INTS, .ints = {__VA_ARGS__}, .n_ints = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)}

typedef struct attr_table {
  const test_attr* attrs;
  int n;
} attr_table;

#define ATTRS(...) \
  ((attr_table){.attrs = (const test_attr[]){__VA_ARGS__}, .n = (int)(sizeof((test_attr[]){__VA_ARGS__}) / sizeof(test_attr))})
#define NO_ATTRS ((attr_table){.attrs = NULL, .n = 0})

/* The reader's convention: 0 when the attribute is absent, -1 when it has another kind, 1 read. */
static inline const test_attr* attr_find(void* ctx, const char* name, attr_kind kind, int* r) {
  const attr_table* t = ctx;
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->attrs[i].name, name) == 0) {
      *r = t->attrs[i].kind == kind ? 1 : -1;
      return *r == 1 ? &t->attrs[i] : NULL;
    }
  *r = 0;
  return NULL;
}

static inline int attr_get_int(void* ctx, const char* name, int64_t* out) {
  int r;
  const test_attr* a = attr_find(ctx, name, ATTR_INT, &r);
  if (a) *out = a->i;
  return r;
}

static inline int attr_get_float(void* ctx, const char* name, float* out) {
  int r;
  const test_attr* a = attr_find(ctx, name, ATTR_FLOAT, &r);
  if (a) *out = a->f;
  return r;
}

static inline int attr_get_ints(void* ctx, const char* name, int64_t* out, size_t cap, size_t* n) {
  int r;
  const test_attr* a = attr_find(ctx, name, ATTR_INTS, &r);
  if (a) {
    for (size_t i = 0; i < a->n_ints && i < cap; i++) out[i] = a->ints[i];
    *n = a->n_ints;
  }
  return r;
}

static inline int attr_get_string(void* ctx, const char* name, char* out, size_t cap) {
  int r;
  const test_attr* a = attr_find(ctx, name, ATTR_STRING, &r);
  if (a) snprintf(out, cap, "%s", a->s);
  return r;
}

static inline int attr_get_tensor(void* ctx, const char* name, int* dtype, int64_t* count, void* out, size_t cap) {
  int r;
  const test_attr* a = attr_find(ctx, name, ATTR_TENSOR, &r);
  if (!a) return r;
  if (a->tensor_bytes > cap) return -1;
  *dtype = a->tensor_dtype;
  *count = a->tensor_count;
  memcpy(out, a->tensor, a->tensor_bytes);
  return 1;
}

static inline int attr_count(void* ctx) { return ((const attr_table*)ctx)->n; }

static inline const char* attr_name_at(void* ctx, int i) { return ((const attr_table*)ctx)->attrs[i].name; }

static inline ir_attr_reader reader_for(attr_table* t) {
  ir_attr_reader r = {
      .ctx = t,
      .get_int = attr_get_int,
      .get_float = attr_get_float,
      .get_ints = attr_get_ints,
      .get_string = attr_get_string,
      .get_tensor = attr_get_tensor,
      .count = attr_count,
      .name_at = attr_name_at,
  };
  return r;
}

/* ---- node descriptions and their parse ---- */

/* `op_type` of the default domain at `opset`, named `name`, with n_inputs inputs and one output,
 * all of `dtype`; the input shapes are left to the caller (rank 0 until set). */
static inline ir_node_desc desc_base(const char* op_type, int opset, const char* name, attr_table* t, int n_inputs,
                                     int dtype) {
  ir_node_desc d;
  memset(&d, 0, sizeof d);
  d.op_type = op_type;
  d.domain = "";
  d.since_version = opset;
  d.name = name;
  d.n_inputs = n_inputs;
  d.n_outputs = 1;
  for (int i = 0; i < n_inputs; i++) d.input_dtypes[i] = dtype;
  d.output_dtypes[0] = dtype;
  d.attrs = reader_for(t);
  return d;
}

/* The node is claimed as `want`; its parameters (poisoned first, so a field parse forgets shows). */
static inline ir_params parse_ok(const ir_node_desc* d, gfx_op want) {
  gfx_op op = GFX_OP_NONE;
  ir_params p;
  memset(&p, 0xCD, sizeof p);
  expect_ok(ir_op_parse(d, &op, &p));
  assert_int_equal(op, want);
  return p;
}

/* NOT_SUPPORTED; the message names the op type, the node and every given part; the op untouched. */
static inline void parse_refused_list(const ir_node_desc* d, ...) {
  gfx_op op = (gfx_op)-7;
  ir_params p;
  memset(&p, 0xCD, sizeof p);
  gfx_status s = ir_op_parse(d, &op, &p);
  if (s && (!strstr(gfx_status_message(s), d->op_type) || !strstr(gfx_status_message(s), d->name)))
    print_error("message does not name the node: %s\n", gfx_status_message(s));
  assert_true(!s || strstr(gfx_status_message(s), d->op_type));
  assert_true(!s || strstr(gfx_status_message(s), d->name));
  va_list ap;
  va_start(ap, d);
  expect_error_v(s, GFX_ERR_NOT_SUPPORTED, ap);
  va_end(ap);
  assert_int_equal(op, (gfx_op)-7);
}

/* parse_refused(d, part...): like expect_error, the list ends itself. */
#define parse_refused(d, ...) parse_refused_list((d), __VA_ARGS__, (const char*)NULL)

#endif

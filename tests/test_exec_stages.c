/* gfxep — the executor on partitions whose shapes depend on data (exec/model.h, stages), on the
 * reference backend: a partition that ends in a NonZero, a NonZero in the middle whose count sizes
 * the nodes after it, TopK with k computed in the partition or given as its input, three stages in a
 * row, NonMaxSuppression inside a partition, empty counts, the cache of later stages (more distinct
 * counts than it keeps), runs on several threads at once, profiling traces, a caller's capture
 * refused, and bad values read back (a k beyond its axis) failing the Run with a message and leaving
 * the model usable.
 *
 * Graphs are built as compile.c builds them: every node parsed from a description of its values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/registry.h"
#include "backend/wrap.h"
#include "exec/model.h"
#include "ir/graph.h"
#include "ir_test_util.h"

/* ---- building graphs ---- */

static int value(ir_graph* g, const char* name, int dtype, gfx_shape shape) {
  int v = -1;
  expect_ok(ir_graph_add_value(g, name, dtype, &shape, &v));
  return v;
}

static int input(ir_graph* g, const char* name, int dtype, gfx_shape shape) {
  int v = value(g, name, dtype, shape);
  expect_ok(ir_graph_add_input(g, v));
  return v;
}

static int const_i64(ir_graph* g, const char* name, const int64_t* data, int n, int scalar) {
  int v = value(g, name, GFX_DTYPE_I64, scalar ? SCALAR : SHAPE(n));
  expect_ok(ir_graph_set_constant(g, v, data, sizeof(int64_t) * (size_t)n));
  return v;
}

static int const_f32(ir_graph* g, const char* name, float x) {
  int v = value(g, name, GFX_DTYPE_F32, SCALAR);
  expect_ok(ir_graph_set_constant(g, v, &x, sizeof x));
  return v;
}

/* Parses op_type (opset) over these values, as GetCapability and Compile would, and adds it. */
static void node(ir_graph* g, const char* op_type, int opset, attr_table* attrs, const int* in, int n_in,
                 const int* out, int n_out) {
  attr_table none = NO_ATTRS;
  ir_node_desc d = desc_base(op_type, opset, op_type, attrs ? attrs : &none, n_in, GFX_DTYPE_F32);
  d.n_outputs = n_out;
  for (int i = 0; i < n_in; i++) {
    if (in[i] < 0) {
      d.input_dtypes[i] = GFX_DTYPE_UNDEFINED;
      continue;
    }
    const ir_value* v = &g->values[in[i]];
    d.input_dtypes[i] = v->dtype;
    d.input_shapes[i] = v->shape;
    d.input_is_const[i] = v->const_data != NULL;
    d.input_const_data[i] = v->const_data;
    d.input_const_bytes[i] = v->const_bytes;
  }
  for (int o = 0; o < n_out; o++) d.output_dtypes[o] = g->values[out[o]].dtype;
  gfx_op op;
  ir_params p;
  expect_ok(ir_op_parse(&d, &op, &p));
  char name[64];
  snprintf(name, sizeof name, "%s_%d", op_type, g->n_nodes);
  expect_ok(ir_graph_add_node(g, op, name, in, n_in, out, n_out, &p));
}

#define N1(g, op, opset, attrs, out, ...)                                                                        \
  node((g), (op), (opset), (attrs), (const int[]){__VA_ARGS__}, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), \
       &(out), 1)

/* ---- outputs: host buffers, recorded as the executor asks for them ---- */

#define MAX_OUT 4
typedef struct outputs {
  void* data[MAX_OUT];
  gfx_shape shape[MAX_OUT];
  int dtype[MAX_OUT];
  int asked[MAX_OUT];
  int order[MAX_OUT]; /* the order they were asked in */
  int n_asked;
} outputs;

static gfx_status output_fn(void* user, int index, const gfx_shape* shape, void** data) {
  outputs* o = user;
  if (index < 0 || index >= MAX_OUT) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d", index);
  free(o->data[index]);
  int ok = 0;
  const size_t bytes = gfx_shape_bytes(shape, o->dtype[index] ? o->dtype[index] : GFX_DTYPE_F32, &ok);
  o->data[index] = calloc(bytes + 8, 1);
  o->shape[index] = *shape;
  o->asked[index]++;
  o->order[o->n_asked++ % MAX_OUT] = index;
  *data = o->data[index];
  return NULL;
}

static void outputs_init(outputs* o, const ir_graph* g) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < g->n_outputs && i < MAX_OUT; i++) o->dtype[i] = g->values[g->outputs[i]].dtype;
}

static void outputs_free(outputs* o) {
  for (int i = 0; i < MAX_OUT; i++) free(o->data[i]);
  memset(o->data, 0, sizeof o->data);
}

static gfx_model* model_of(ir_graph* g) {
  gfx_model* m = NULL;
  expect_ok(gfx_model_create(gfx_reference_device(), g, &m));
  return m;
}

static uint64_t rng = 20261203;
static uint64_t next_u64(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---- a partition that ends in NonZero ---- */

/* y = NonZero(Relu(x)), x [3, 4]: the count sizes the partition's output. */
static gfx_model* nonzero_at_end(void) {
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(3, 4));
  int r = value(g, "r", GFX_DTYPE_F32, SHAPE(3, 4));
  int y = value(g, "y", GFX_DTYPE_I64, SHAPE(2, -1));
  N1(g, "Relu", 14, NULL, r, x);
  N1(g, "NonZero", 13, NULL, y, r);
  expect_ok(ir_graph_add_output(g, y));
  return model_of(g);
}

/* x with `count` positive elements at seeded places, the rest <= 0; the expected coordinates. */
static void positives(float* x, int n, int count, int64_t* where) {
  for (int i = 0; i < n; i++) x[i] = -(float)(next_u64() % 3);
  int placed = 0;
  while (placed < count) {
    int i = (int)(next_u64() % (uint64_t)n);
    if (x[i] > 0) continue;
    x[i] = 0.5f + (float)(next_u64() % 4);
    placed++;
  }
  int k = 0;
  for (int i = 0; i < n; i++)
    if (x[i] > 0) where[k++] = i;
}

static void check_nonzero_at_end(gfx_model* m, int count) {
  float x[12];
  int64_t where[12];
  positives(x, 12, count, where);
  gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(3, 4));
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
  expect_shape(o.shape[0], SHAPE(2, count));
  const int64_t* y = o.data[0];
  for (int k = 0; k < count; k++) {
    assert_int_equal(y[k], where[k] / 4);
    assert_int_equal(y[count + k], where[k] % 4);
  }
  outputs_free(&o);
}

static void test_partition_ends_in_nonzero(void** unused) {
  (void)unused;
  gfx_model* m = nonzero_at_end();
  assert_int_equal(gfx_model_stages(m), 2);
  const int counts[] = {5, 7, 0, 12, 5};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) check_nonzero_at_end(m, counts[i]);
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_int_equal(st.stages, 2);
  assert_int_equal(st.value_reads, 5); /* one read per Run */
  assert_int_equal(st.stage_builds, 4); /* 5 was seen twice */
  assert_int_equal(st.signatures, 1);
  gfx_model_free(m);
}

/* More distinct counts than the cache keeps: the oldest idle ones go, every Run stays right. */
static void test_stage_cache(void** unused) {
  (void)unused;
  gfx_model* m = nonzero_at_end();
  for (int c = 0; c <= 12; c++) check_nonzero_at_end(m, c);
  check_nonzero_at_end(m, 0);
  check_nonzero_at_end(m, 12);
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_true(st.stage_instances <= 8 && st.stage_instances >= 1);
  assert_true(st.stage_builds >= 13);
  assert_int_equal(st.value_reads, 15);
  gfx_model_free(m);
}

/* ---- NonZero in the middle ---- */

/* vals = GatherND(x, Transpose(NonZero(x > 0.5))), and relu = Relu(x): an output of stage 0 beside
 * one whose shape the count decides. x [2, 3, 4]. */
static gfx_model* nonzero_in_middle(void) {
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(2, 3, 4));
  int half = const_f32(g, "half", 0.5f);
  int mask = value(g, "mask", GFX_DTYPE_BOOL, SHAPE(2, 3, 4));
  int nz = value(g, "nz", GFX_DTYPE_I64, SHAPE(3, -1));
  int idx = value(g, "idx", GFX_DTYPE_I64, SHAPE(-1, 3));
  int vals = value(g, "vals", GFX_DTYPE_F32, SHAPE(-1));
  int relu = value(g, "relu", GFX_DTYPE_F32, SHAPE(2, 3, 4));
  N1(g, "Greater", 13, NULL, mask, x, half);
  N1(g, "NonZero", 13, NULL, nz, mask);
  N1(g, "Transpose", 13, NULL, idx, nz);
  N1(g, "GatherND", 13, NULL, vals, x, idx);
  N1(g, "Relu", 14, NULL, relu, x);
  expect_ok(ir_graph_add_output(g, vals));
  expect_ok(ir_graph_add_output(g, relu));
  return model_of(g);
}

static void test_nonzero_in_the_middle(void** unused) {
  (void)unused;
  gfx_model* m = nonzero_in_middle();
  assert_int_equal(gfx_model_stages(m), 2);
  for (int run = 0; run < 6; run++) {
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)(int)(next_u64() % 5) * 0.3f - 0.2f;
    if (run == 3)
      for (int i = 0; i < 24; i++) x[i] = 0.0f; /* nothing above: an empty count */
    gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(2, 3, 4));
    outputs o;
    outputs_init(&o, gfx_model_graph(m));
    expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
    int count = 0;
    for (int i = 0; i < 24; i++) count += x[i] > 0.5f;
    expect_shape(o.shape[0], SHAPE(count));
    const float* vals = o.data[0];
    for (int i = 0, k = 0; i < 24; i++)
      if (x[i] > 0.5f) assert_true(vals[k++] == x[i]);
    const float* relu = o.data[1];
    for (int i = 0; i < 24; i++) assert_true(relu[i] == (x[i] > 0 ? x[i] : 0.0f));
    /* the static output is asked for in stage 0, before the read; the other after it */
    assert_true(o.n_asked == 2 && o.order[0] == 1 && o.order[1] == 0);
    outputs_free(&o);
  }
  gfx_model_free(m);
}

/* ---- TopK with a run-time k ---- */

/* TopK(x, min(x's dim 1, kin)): k computed in stage 0 from a shape and an input, read back. */
static gfx_model* topk_computed(void) {
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(4, 10));
  int kin = input(g, "kin", GFX_DTYPE_I64, SHAPE(1));
  const int64_t one = 1, two = 2;
  int s1 = const_i64(g, "s1", &one, 1, 0), s2 = const_i64(g, "s2", &two, 1, 0);
  int shape = value(g, "shape", GFX_DTYPE_I64, SHAPE(2));
  int dim1 = value(g, "dim1", GFX_DTYPE_I64, SHAPE(1));
  int k = value(g, "k", GFX_DTYPE_I64, SHAPE(1));
  int vals = value(g, "values", GFX_DTYPE_F32, SHAPE(4, -1));
  int idx = value(g, "indices", GFX_DTYPE_I64, SHAPE(4, -1));
  N1(g, "Shape", 13, NULL, shape, x);
  N1(g, "Slice", 13, NULL, dim1, shape, s1, s2);
  N1(g, "Min", 13, NULL, k, dim1, kin);
  node(g, "TopK", 11, NULL, (const int[]){x, k}, 2, (const int[]){vals, idx}, 2);
  expect_ok(ir_graph_add_output(g, vals));
  expect_ok(ir_graph_add_output(g, idx));
  return model_of(g);
}

static void check_topk(gfx_model* m, int64_t kin) {
  float x[40];
  for (int i = 0; i < 40; i++) x[i] = (float)(int)(next_u64() % 7) - 3.0f; /* ties */
  gfx_tensor in[2] = {tensor_of(x, GFX_DTYPE_F32, SHAPE(4, 10)), tensor_of(&kin, GFX_DTYPE_I64, SHAPE(1))};
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_ok(gfx_model_run(m, NULL, in, output_fn, &o));
  const int64_t k = kin < 10 ? kin : 10;
  expect_shape(o.shape[0], SHAPE(4, k));
  expect_shape(o.shape[1], SHAPE(4, k));
  const float* v = o.data[0];
  const int64_t* ix = o.data[1];
  for (int r = 0; r < 4; r++) {
    char taken[10] = {0};
    for (int64_t j = 0; j < k; j++) {
      /* the largest not yet taken, ties to the lower index */
      int best = -1;
      for (int c = 0; c < 10; c++)
        if (!taken[c] && (best < 0 || x[r * 10 + c] > x[r * 10 + best])) best = c;
      taken[best] = 1;
      assert_int_equal(ix[r * k + j], best);
      assert_true(v[r * k + j] == x[r * 10 + best]);
    }
  }
  outputs_free(&o);
}

static void test_topk_computed_k(void** unused) {
  (void)unused;
  gfx_model* m = topk_computed();
  assert_int_equal(gfx_model_stages(m), 2);
  const int64_t ks[] = {3, 7, 0, 25, 3, 10};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) check_topk(m, ks[i]);
  /* a negative k fails the Run, naming it; the model runs on */
  float x[40] = {0};
  int64_t bad = -2;
  gfx_tensor in[2] = {tensor_of(x, GFX_DTYPE_F32, SHAPE(4, 10)), tensor_of(&bad, GFX_DTYPE_I64, SHAPE(1))};
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_error(gfx_model_run(m, NULL, in, output_fn, &o), GFX_ERR_INVALID_ARGUMENT, "TopK", "k", "-2", "negative");
  outputs_free(&o);
  check_topk(m, 4);
  gfx_model_free(m);
}

/* k is the partition's input: no node before it, so stage 0 is empty. A k beyond the axis fails. */
static void test_topk_k_is_an_input(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(2, 6));
  int k = input(g, "k", GFX_DTYPE_I64, SHAPE(1));
  int vals = value(g, "values", GFX_DTYPE_F32, SHAPE(2, -1));
  int idx = value(g, "indices", GFX_DTYPE_I64, SHAPE(2, -1));
  attr_table smallest = ATTRS(A_INT("largest", 0));
  node(g, "TopK", 11, &smallest, (const int[]){x, k}, 2, (const int[]){vals, idx}, 2);
  expect_ok(ir_graph_add_output(g, vals));
  expect_ok(ir_graph_add_output(g, idx));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 2);
  const float xs[12] = {5, 1, 4, 1, 9, 0, 3, 3, 3, 2, 8, 2};
  int64_t kv = 2;
  gfx_tensor in[2] = {tensor_of((void*)xs, GFX_DTYPE_F32, SHAPE(2, 6)), tensor_of(&kv, GFX_DTYPE_I64, SHAPE(1))};
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_ok(gfx_model_run(m, NULL, in, output_fn, &o));
  const int64_t* ix = o.data[1];
  assert_true(ix[0] == 5 && ix[1] == 1 && ix[2] == 3 && ix[3] == 5);
  outputs_free(&o);
  kv = 7;
  outputs_init(&o, gfx_model_graph(m));
  expect_error(gfx_model_run(m, NULL, in, output_fn, &o), GFX_ERR_INVALID_ARGUMENT, "k = 7", "6 elements");
  outputs_free(&o);
  gfx_model_free(m);
}

/* ---- shape arithmetic: computed on the host, never read back ---- */

/* k = min(x's dim 1, 3) is shape arithmetic: the host computes it while resolving the shapes, so the
 * partition is one stage and no Run reads anything back (x [4, W], W per Run). */
static void test_k_from_shapes_needs_no_read(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(4, -1));
  const int64_t one = 1, two = 2, three = 3;
  int s1 = const_i64(g, "s1", &one, 1, 0), s2 = const_i64(g, "s2", &two, 1, 0), c3 = const_i64(g, "c3", &three, 1, 0);
  int shape = value(g, "shape", GFX_DTYPE_I64, SHAPE(2));
  int dim1 = value(g, "dim1", GFX_DTYPE_I64, SHAPE(1));
  int k = value(g, "k", GFX_DTYPE_I64, SHAPE(1));
  int vals = value(g, "values", GFX_DTYPE_F32, SHAPE(4, -1));
  int idx = value(g, "indices", GFX_DTYPE_I64, SHAPE(4, -1));
  N1(g, "Shape", 13, NULL, shape, x);
  N1(g, "Slice", 13, NULL, dim1, shape, s1, s2);
  N1(g, "Min", 13, NULL, k, dim1, c3);
  node(g, "TopK", 11, NULL, (const int[]){x, k}, 2, (const int[]){vals, idx}, 2);
  expect_ok(ir_graph_add_output(g, vals));
  expect_ok(ir_graph_add_output(g, idx));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 1);
  const int64_t widths[] = {10, 2, 5, 2};
  for (size_t r = 0; r < sizeof widths / sizeof widths[0]; r++) {
    const int64_t w = widths[r], kk = w < 3 ? w : 3;
    float xs[40];
    for (int i = 0; i < 4 * w; i++) xs[i] = (float)((i * 7) % 11);
    gfx_tensor in = tensor_of(xs, GFX_DTYPE_F32, SHAPE(4, w));
    outputs o;
    outputs_init(&o, gfx_model_graph(m));
    expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
    expect_shape(o.shape[0], SHAPE(4, kk));
    const float* v = o.data[0];
    for (int row = 0; row < 4; row++)
      for (int64_t j = 1; j < kk; j++) assert_true(v[row * kk + j - 1] >= v[row * kk + j]);
    outputs_free(&o);
  }
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_true(st.value_reads == 0 && st.signatures == 3);
  gfx_model_free(m);
}

/* TopK's k = min(count, 4) where the count is NonZero's: the count is read back once, and k, which is
 * arithmetic on the shape it gives, comes with it: two stages, one read per Run. x [10]. */
static void test_k_from_a_count_costs_no_second_read(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(10));
  const int64_t one = 1, two = 2, four = 4, flat = -1;
  int s1 = const_i64(g, "s1", &one, 1, 0), s2 = const_i64(g, "s2", &two, 1, 0), c4 = const_i64(g, "c4", &four, 1, 0);
  int flat_shape = const_i64(g, "flat", &flat, 1, 0);
  int nz = value(g, "nz", GFX_DTYPE_I64, SHAPE(1, -1));
  int idx = value(g, "idx", GFX_DTYPE_I64, SHAPE(-1));
  int sel = value(g, "sel", GFX_DTYPE_F32, SHAPE(-1));
  int shape = value(g, "shape", GFX_DTYPE_I64, SHAPE(2));
  int count = value(g, "count", GFX_DTYPE_I64, SHAPE(1));
  int k = value(g, "k", GFX_DTYPE_I64, SHAPE(1));
  int top = value(g, "top", GFX_DTYPE_F32, SHAPE(-1));
  int top_i = value(g, "top_i", GFX_DTYPE_I64, SHAPE(-1));
  N1(g, "NonZero", 13, NULL, nz, x);
  N1(g, "Reshape", 14, NULL, idx, nz, flat_shape);
  attr_table axis0 = ATTRS(A_INT("axis", 0));
  N1(g, "Gather", 13, &axis0, sel, x, idx);
  N1(g, "Shape", 13, NULL, shape, nz);
  N1(g, "Slice", 13, NULL, count, shape, s1, s2);
  N1(g, "Min", 13, NULL, k, count, c4);
  node(g, "TopK", 11, NULL, (const int[]){sel, k}, 2, (const int[]){top, top_i}, 2);
  expect_ok(ir_graph_add_output(g, top));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 2);
  for (int run = 0; run < 5; run++) {
    float xs[10];
    int c = 0;
    for (int i = 0; i < 10; i++) {
      xs[i] = (next_u64() % 3 == 0) ? 0.0f : (float)(i + 1);
      c += xs[i] != 0.0f;
    }
    gfx_tensor in = tensor_of(xs, GFX_DTYPE_F32, SHAPE(10));
    outputs o;
    outputs_init(&o, gfx_model_graph(m));
    expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
    const int kk = c < 4 ? c : 4;
    expect_shape(o.shape[0], SHAPE(kk));
    /* the largest nonzero elements, from the top */
    const float* t = o.data[0];
    for (int j = 0, i = 9; j < kk; i--)
      if (xs[i] != 0.0f) assert_true(t[j++] == xs[i]);
    outputs_free(&o);
  }
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_int_equal(st.value_reads, 5);
  gfx_model_free(m);
}

/* ---- three stages ---- */

/* z = NonZero(Gather(x, NonZero(x)) > 2): the second count is known only after the first. x [12]. */
static void test_three_stages(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(12));
  const int64_t flat[1] = {-1};
  int flat_shape = const_i64(g, "flat", flat, 1, 0);
  int two = const_f32(g, "two", 2.0f);
  int nz = value(g, "nz", GFX_DTYPE_I64, SHAPE(1, -1));
  int idx = value(g, "idx", GFX_DTYPE_I64, SHAPE(-1));
  int sel = value(g, "sel", GFX_DTYPE_F32, SHAPE(-1));
  int big = value(g, "big", GFX_DTYPE_BOOL, SHAPE(-1));
  int z = value(g, "z", GFX_DTYPE_I64, SHAPE(1, -1));
  N1(g, "NonZero", 13, NULL, nz, x);
  N1(g, "Reshape", 14, NULL, idx, nz, flat_shape);
  attr_table axis0 = ATTRS(A_INT("axis", 0));
  N1(g, "Gather", 13, &axis0, sel, x, idx);
  N1(g, "Greater", 13, NULL, big, sel, two);
  N1(g, "NonZero", 13, NULL, z, big);
  expect_ok(ir_graph_add_output(g, z));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 3);
  for (int run = 0; run < 4; run++) {
    float xs[12];
    for (int i = 0; i < 12; i++) xs[i] = (float)(int)(next_u64() % 5) - (run == 2 ? 5.0f : 1.0f);
    gfx_tensor in = tensor_of(xs, GFX_DTYPE_F32, SHAPE(12));
    outputs o;
    outputs_init(&o, gfx_model_graph(m));
    expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
    int k = 0, want = 0;
    int64_t expect_pos[12];
    for (int i = 0; i < 12; i++) {
      if (xs[i] == 0.0f) continue;
      if (xs[i] > 2.0f) expect_pos[want++] = k;
      k++;
    }
    expect_shape(o.shape[0], SHAPE(1, want));
    for (int j = 0; j < want; j++) assert_int_equal(((const int64_t*)o.data[0])[j], expect_pos[j]);
    outputs_free(&o);
  }
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_int_equal(st.value_reads, 8); /* two per Run */
  gfx_model_free(m);
}

/* ---- NonMaxSuppression inside a partition ---- */

static void test_nms_in_a_partition(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int boxes = input(g, "boxes", GFX_DTYPE_F32, SHAPE(1, 4, 4));
  int scores = input(g, "scores", GFX_DTYPE_F32, SHAPE(1, 2, 4));
  const int64_t max3 = 3, col = 2;
  int max_out = const_i64(g, "max", &max3, 1, 0);
  int iou = const_f32(g, "iou", 0.5f), thr = const_f32(g, "thr", 0.2f);
  int column = const_i64(g, "column", &col, 1, 1);
  int sel = value(g, "sel", GFX_DTYPE_I64, SHAPE(-1, 3));
  int pick = value(g, "pick", GFX_DTYPE_I64, SHAPE(-1));
  int kept = value(g, "kept", GFX_DTYPE_F32, SHAPE(1, -1, 4));
  N1(g, "NonMaxSuppression", 11, NULL, sel, boxes, scores, max_out, iou, thr);
  attr_table axis1 = ATTRS(A_INT("axis", 1));
  N1(g, "Gather", 13, &axis1, pick, sel, column);
  N1(g, "Gather", 13, &axis1, kept, boxes, pick);
  expect_ok(ir_graph_add_output(g, sel));
  expect_ok(ir_graph_add_output(g, kept));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 2);
  const float bx[1][4][4] = {{{0, 0, 10, 10}, {1, 1, 11, 11}, {20, 20, 30, 30}, {0, 0, 10, 10}}};
  const float sc[1][2][4] = {{{0.9f, 0.8f, 0.7f, 0.9f}, {0.1f, 0.6f, 0.3f, 0.05f}}};
  gfx_tensor in[2] = {tensor_of((void*)bx, GFX_DTYPE_F32, SHAPE(1, 4, 4)),
                      tensor_of((void*)sc, GFX_DTYPE_F32, SHAPE(1, 2, 4))};
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_ok(gfx_model_run(m, NULL, in, output_fn, &o));
  expect_shape(o.shape[0], SHAPE(4, 3));
  const int64_t want[4][3] = {{0, 0, 0}, {0, 0, 2}, {0, 1, 1}, {0, 1, 2}};
  assert_memory_equal(o.data[0], want, sizeof want);
  expect_shape(o.shape[1], SHAPE(1, 4, 4));
  const float* k = o.data[1];
  assert_true(k[0] == 0 && k[4] == 20 && k[8] == 1 && k[12] == 20);
  outputs_free(&o);
  gfx_model_free(m);
}

/* ---- threads, traces, captures ---- */

typedef struct worker {
  gfx_model* m;
  int id, failures;
} worker;

static void* work(void* arg) {
  worker* w = arg;
  void* stream = NULL;
  gfx_status s = gfx_backend_stream_create(gfx_reference_device(), &stream);
  if (s) {
    gfx_status_free(s);
    w->failures++;
    return NULL;
  }
  for (int r = 0; r < 60; r++) {
    const int count = (w->id * 5 + r) % 13;
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = i < count ? 1.0f + (float)w->id : -1.0f;
    gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(3, 4));
    outputs o;
    memset(&o, 0, sizeof o);
    o.dtype[0] = GFX_DTYPE_I64;
    s = gfx_model_run(w->m, stream, &in, output_fn, &o);
    if (!s) s = gfx_backend_stream_sync(gfx_reference_device(), stream);
    if (s) {
      w->failures++;
      gfx_status_free(s);
    } else {
      const int64_t* y = o.data[0];
      int bad = o.shape[0].rank != 2 || o.shape[0].dims[1] != count;
      for (int k = 0; k < count && !bad; k++) bad = y[k] != k / 4 || y[count + k] != k % 4;
      w->failures += bad;
    }
    outputs_free(&o);
  }
  gfx_backend_stream_destroy(gfx_reference_device(), stream);
  return NULL;
}

static void test_concurrent_staged_runs(void** unused) {
  (void)unused;
  gfx_model* m = nonzero_at_end();
  pthread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.m = m, .id = i};
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_true(st.stage_instances <= 8);
  assert_int_equal(st.value_reads, 240);
  gfx_model_free(m);
}

static void test_traced_and_captured(void** unused) {
  (void)unused;
  gfx_model* m = nonzero_in_middle();
  const ir_graph* g = gfx_model_graph(m);
  void* stream = NULL;
  expect_ok(gfx_backend_stream_create(gfx_reference_device(), &stream));
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)(i % 3);
  gfx_tensor in = tensor_of(x, GFX_DTYPE_F32, SHAPE(2, 3, 4));
  outputs o;
  outputs_init(&o, g);
  /* profiling: every node once, across both stages */
  gfx_node_trace* trace = calloc((size_t)g->n_nodes, sizeof *trace);
  expect_ok(gfx_model_run_traced(m, stream, &in, output_fn, &o, trace));
  int* seen = calloc((size_t)g->n_nodes, sizeof(int));
  for (int n = 0; n < g->n_nodes; n++) {
    assert_true(trace[n].node >= 0 && trace[n].node < g->n_nodes);
    seen[trace[n].node]++;
    assert_true(trace[n].device_us >= 0);
  }
  for (int n = 0; n < g->n_nodes; n++) assert_int_equal(seen[n], 1);
  expect_shape(o.shape[0], SHAPE(16)); /* the 1s and 2s */
  outputs_free(&o);
  /* a caller's capture cannot hold the read back: refused before anything is queued */
  outputs_init(&o, g);
  expect_error(gfx_model_run_captured(m, stream, &in, output_fn, &o, 1), GFX_ERR_NOT_SUPPORTED, "2 stages",
               "read back");
  assert_int_equal(o.n_asked, 0);
  outputs_free(&o);
  free(seen);
  free(trace);
  gfx_backend_stream_destroy(gfx_reference_device(), stream);
  gfx_model_free(m);
}

/* A partition without such nodes stays one stage, and reads nothing back. */
static void test_static_partition_is_one_stage(void** unused) {
  (void)unused;
  ir_graph* g = ir_graph_new();
  int x = input(g, "x", GFX_DTYPE_F32, SHAPE(2, 3));
  int y = value(g, "y", GFX_DTYPE_F32, SHAPE(2, 3));
  N1(g, "Relu", 14, NULL, y, x);
  expect_ok(ir_graph_add_output(g, y));
  gfx_model* m = model_of(g);
  assert_int_equal(gfx_model_stages(m), 1);
  float xs[6] = {-1, 2, -3, 4, -5, 6};
  gfx_tensor in = tensor_of(xs, GFX_DTYPE_F32, SHAPE(2, 3));
  outputs o;
  outputs_init(&o, gfx_model_graph(m));
  expect_ok(gfx_model_run(m, NULL, &in, output_fn, &o));
  gfx_model_stats st;
  gfx_model_get_stats(m, &st);
  assert_true(st.stages == 1 && st.value_reads == 0 && st.stage_builds == 0);
  outputs_free(&o);
  gfx_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_partition_ends_in_nonzero),
      cmocka_unit_test(test_stage_cache),
      cmocka_unit_test(test_nonzero_in_the_middle),
      cmocka_unit_test(test_topk_computed_k),
      cmocka_unit_test(test_topk_k_is_an_input),
      cmocka_unit_test(test_k_from_shapes_needs_no_read),
      cmocka_unit_test(test_k_from_a_count_costs_no_second_read),
      cmocka_unit_test(test_three_stages),
      cmocka_unit_test(test_nms_in_a_partition),
      cmocka_unit_test(test_concurrent_staged_runs),
      cmocka_unit_test(test_traced_and_captured),
      cmocka_unit_test(test_static_partition_is_one_stage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* gfxep — the transformer fusions of ir_fuse_for on graphs built as ONNX Runtime hands them over:
 * attention (ir/fuse_attention.c) as ViT exports it at ORT's default level (Gathers and Transposes
 * of one projection), as PyTorch's exporter writes it with Split and Squeeze, and as Swin writes it
 * (q scaled, a relative position bias, a shift mask added through a 5-D Reshape); residual Add +
 * LayerNormalization (ir/fuse_norm.c); the layout transformer's Transposes folded into the first
 * channels-last Conv and into a DepthToSpace (ir/fuse_layout.c); two 3x3 Convs fused into one
 * convolution chain (ir/fuse_chain.c). Each graph runs through the reference kernels before and
 * after the fusion: the node count says the pattern fired (or, for the graphs that must be left
 * alone, did not), and the outputs must agree. Every node is parsed from a description, as
 * GetCapability parses it, so the fusions see the parameters a model gives them.
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
#include "ir/graph.h"
#include "ir/ops_nn.h"
#include "ir/shape.h"
#include "ir_test_util.h"

#define MAX_VALUES 96

/* ---- a graph builder: values and parsed nodes ---- */

typedef struct builder {
  ir_graph* g;
  int dtype;    /* the float type of the graph */
  unsigned seed; /* for constants */
} builder;

static builder b_new(int dtype) {
  builder b = {.g = ir_graph_new(), .dtype = dtype, .seed = 11};
  assert_non_null(b.g);
  return b;
}

static int b_value(builder* b, int dtype, gfx_shape s) {
  char name[32];
  snprintf(name, sizeof name, "v%d", b->g->n_values);
  int v;
  expect_ok(ir_graph_add_value(b->g, name, dtype, &s, &v));
  return v;
}

/* Float data in the graph's type, from floats. */
static void store(int dtype, const float* x, void* out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dtype == GFX_DTYPE_F32) {
      ((float*)out)[i] = x[i];
    } else {
      ((uint16_t*)out)[i] = dtype == GFX_DTYPE_F16 ? gfx_float_to_half(x[i]) : gfx_float_to_bf16(x[i]);
    }
  }
}

static float load(int dtype, const void* p, size_t i) {
  if (dtype == GFX_DTYPE_F32) return ((const float*)p)[i];
  const uint16_t h = ((const uint16_t*)p)[i];
  return dtype == GFX_DTYPE_F16 ? gfx_half_to_float(h) : gfx_bf16_to_float(h);
}

/* Deterministic values in [-1, 1) on a 1/64 grid: exact in every float type. */
static void fill(float* v, size_t n, unsigned* seed) {
  for (size_t i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    v[i] = (float)((int)((*seed >> 16) % 128) - 64) / 64.0f;
  }
}

static int b_float_const(builder* b, gfx_shape s, const float* data) {
  const int v = b_value(b, b->dtype, s);
  const size_t n = (size_t)gfx_shape_numel(&s);
  void* bytes = malloc(n * 4 + 4);
  store(b->dtype, data, bytes, n);
  expect_ok(ir_graph_set_constant(b->g, v, bytes, n * gfx_dtype_size(b->dtype)));
  free(bytes);
  return v;
}

static int b_scalar(builder* b, float x) { return b_float_const(b, SCALAR, &x); }

static int b_ints(builder* b, gfx_shape s, const int64_t* data) {
  const int v = b_value(b, GFX_DTYPE_I64, s);
  expect_ok(ir_graph_set_constant(b->g, v, data, (size_t)gfx_shape_numel(&s) * 8));
  return v;
}

/* A node of op_type in `domain` parsed from its inputs as declared (types, shapes, constants),
 * writing n_out new values of the graph's type with the given shapes; returns the first. */
static int b_node_in(builder* b, const char* domain, const char* op_type, int opset, attr_table* t, const int* in,
                     int n_in, const gfx_shape* out_shapes, int n_out) {
  ir_node_desc d = desc_base(op_type, opset, op_type, t, n_in, b->dtype);
  d.domain = domain;
  d.n_outputs = n_out;
  for (int i = 0; i < n_in; i++) {
    const ir_value* x = &b->g->values[in[i]];
    d.input_dtypes[i] = x->dtype;
    d.input_shapes[i] = x->shape;
    d.input_is_const[i] = x->const_data != NULL;
    d.input_const_data[i] = x->const_data;
    d.input_const_bytes[i] = x->const_bytes;
  }
  for (int o = 0; o < n_out; o++) d.output_dtypes[o] = b->dtype;
  gfx_op op;
  ir_params p;
  expect_ok(ir_op_parse(&d, &op, &p));
  int outs[IR_MAX_IO];
  for (int o = 0; o < n_out; o++) outs[o] = b_value(b, b->dtype, out_shapes[o]);
  char name[32];
  snprintf(name, sizeof name, "%s%d", op_type, b->g->n_nodes);
  expect_ok(ir_graph_add_node(b->g, op, name, in, n_in, outs, n_out, &p));
  return outs[0];
}

static int b_node_n(builder* b, const char* op_type, int opset, attr_table* t, const int* in, int n_in,
                    const gfx_shape* out_shapes, int n_out) {
  return b_node_in(b, "", op_type, opset, t, in, n_in, out_shapes, n_out);
}

static int b_node(builder* b, const char* op_type, int opset, attr_table t, const int* in, int n_in, gfx_shape out) {
  return b_node_n(b, op_type, opset, &t, in, n_in, &out, 1);
}

static int b_reshape(builder* b, int x, gfx_shape to) {
  const int shape = b_ints(b, SHAPE(to.rank), to.dims);
  return b_node(b, "Reshape", 14, NO_ATTRS, (int[]){x, shape}, 2, to);
}

static int b_transpose(builder* b, int x, const int64_t* perm, int rank) {
  const gfx_shape* s = &b->g->values[x].shape;
  gfx_shape o = {.rank = rank};
  test_attr a = {.name = "perm", .kind = ATTR_INTS, .n_ints = (size_t)rank};
  for (int i = 0; i < rank; i++) o.dims[i] = s->dims[perm[i]], a.ints[i] = perm[i];
  attr_table t = {.attrs = &a, .n = 1};
  return b_node_n(b, "Transpose", 13, &t, &x, 1, &o, 1);
}

static int b_gather(builder* b, int x, int axis, int64_t index) {
  const int idx = b_ints(b, SCALAR, &index);
  const gfx_shape* s = &b->g->values[x].shape;
  gfx_shape o = {.rank = s->rank - 1};
  for (int i = 0, k = 0; i < s->rank; i++)
    if (i != axis) o.dims[k++] = s->dims[i];
  test_attr a = A_INT("axis", axis);
  attr_table t = {.attrs = &a, .n = 1};
  return b_node_n(b, "Gather", 13, &t, (int[]){x, idx}, 2, &o, 1);
}

/* x @ y with numpy's batch broadcasting (equal batch dims here) */
static int b_matmul(builder* b, int x, int y) {
  gfx_shape o = b->g->values[x].shape;
  o.dims[o.rank - 1] = b->g->values[y].shape.dims[b->g->values[y].shape.rank - 1];
  return b_node(b, "MatMul", 13, NO_ATTRS, (int[]){x, y}, 2, o);
}

/* an element-wise op of x and y, numpy broadcasting */
static int b_binary(builder* b, const char* op, int x, int y) {
  const gfx_shape *a = &b->g->values[x].shape, *c = &b->g->values[y].shape;
  gfx_shape o = {.rank = a->rank > c->rank ? a->rank : c->rank};
  for (int i = 0; i < o.rank; i++) {
    const int ia = i - (o.rank - a->rank), ic = i - (o.rank - c->rank);
    const int64_t da = ia >= 0 ? a->dims[ia] : 1, dc = ic >= 0 ? c->dims[ic] : 1;
    o.dims[i] = da > dc ? da : dc;
  }
  return b_node(b, op, 14, NO_ATTRS, (int[]){x, y}, 2, o);
}

static int b_softmax(builder* b, int x, int axis) {
  return b_node(b, "Softmax", 13, ATTRS(A_INT("axis", axis)), &x, 1, b->g->values[x].shape);
}

/* ---- running a graph on the reference kernels ---- */

typedef struct run_data {
  void* data[MAX_VALUES];
} run_data;

static gfx_status run_node(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  gfx_exec_ctx ctx = {.dev = gfx_reference_device()};
  return gfx_backend_reference()->node_run(&ctx, node, in, out, NULL);
}

/* Buffers for every value (declared shapes), the graph inputs filled from the seed. */
static void data_new(const ir_graph* g, run_data* r, unsigned seed) {
  assert_true(g->n_values <= MAX_VALUES);
  memset(r, 0, sizeof *r);
  for (int v = 0; v < g->n_values; v++) {
    if (g->values[v].const_data) continue;
    const size_t n = (size_t)gfx_shape_numel(&g->values[v].shape);
    r->data[v] = calloc(n + 1, 8);
    if (g->values[v].graph_input >= 0) {
      float* x = malloc((n + 1) * sizeof(float));
      fill(x, n, &seed);
      store(g->values[v].dtype, x, r->data[v], n);
      free(x);
    }
  }
}

static void data_free(run_data* r) {
  for (int v = 0; v < MAX_VALUES; v++) free(r->data[v]);
}

static void run_graph(const ir_graph* g, run_data* r) {
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    gfx_tensor in[IR_MAX_IO], out[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++) {
      const int v = node->inputs[i];
      in[i] = v < 0 ? (gfx_tensor){.dtype = GFX_DTYPE_UNDEFINED, .shape = {.rank = -1}}
                    : tensor_of(g->values[v].const_data ? g->values[v].const_data : r->data[v], g->values[v].dtype,
                                g->values[v].shape);
    }
    for (int o = 0; o < node->n_outputs; o++) {
      const int v = node->outputs[o];
      out[o] = tensor_of(r->data[v], g->values[v].dtype, g->values[v].shape);
    }
    gfx_status s = run_node(node, in, out);
    if (s) print_error("node '%s' (%s): %s\n", node->name, ir_op_name(node->op), gfx_status_message(s));
    assert_null(s);
  }
}

static int count_op(const ir_graph* g, gfx_op op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].op == op;
  return n;
}

/* A target that runs everything but the ops in `declined`. */
static gfx_status declining(void* user, const ir_graph* g, const ir_node* node) {
  (void)g;
  const gfx_op* declined = user;
  for (int i = 0; declined[i] != GFX_OP_NONE; i++)
    if (node->op == declined[i]) return gfx_error(GFX_ERR_NOT_SUPPORTED, "declined by the test");
  return NULL;
}

static double ulp_of(int dtype) {
  return dtype == GFX_DTYPE_F32 ? 1.0 / (1 << 23) : dtype == GFX_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
}

/* Fuses g for `target`, checks it has `nodes_after` nodes of which `fused` are `op`, and that every
 * graph output agrees with the unfused graph's within `ulps` units of the type per unit of magnitude
 * (0: bit for bit). The outputs must carry a signal (not all zero). */
static void expect_fused(builder* b, const ir_fuse_target* target, int nodes_after, gfx_op op, int fused, double ulps) {
  ir_graph* g = b->g;
  run_data before, after;
  data_new(g, &before, 5);
  run_graph(g, &before);
  expect_ok(ir_fuse_for(g, target));
  if (g->n_nodes != nodes_after || count_op(g, op) != fused) {
    for (int n = 0; n < g->n_nodes; n++) print_error("  node %d: %s '%s'\n", n, ir_op_name(g->nodes[n].op), g->nodes[n].name);
  }
  assert_int_equal(g->n_nodes, nodes_after);
  assert_int_equal(count_op(g, op), fused);
  data_new(g, &after, 5);
  run_graph(g, &after);
  for (int k = 0; k < g->n_outputs; k++) {
    const int y = g->outputs[k];
    const int64_t n = gfx_shape_numel(&g->values[y].shape);
    double peak = 0.0;
    for (int64_t i = 0; i < n; i++) {
      const double want = load(b->dtype, before.data[y], (size_t)i), got = load(b->dtype, after.data[y], (size_t)i);
      const double bound = ulps * ulp_of(b->dtype) * (1.0 + fabs(want));
      if (!(fabs(got - want) <= bound))
        print_error("%s output %d element %lld: unfused %.9g, fused %.9g\n", gfx_dtype_name(b->dtype), k, (long long)i,
                    want, got);
      assert_true(fabs(got - want) <= bound);
      peak = fabs(want) > peak ? fabs(want) : peak;
    }
    assert_true(peak > 0.05); /* a comparison that can fail */
  }
  data_free(&before);
  data_free(&after);
  ir_graph_free(g);
}

static const int dtypes[3] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16};
/* how far the unfused graph's extra roundings (scores, probabilities in the type) may move Y */
static const double attention_ulps[3] = {16.0, 6.0, 6.0};

/* ---- attention ---- */

enum { S = 10, H = 2, D = 8 }; /* tokens, heads, head size */

/* ViT's attention as ORT's transpose optimizer leaves it: the projection [1, S, 3 H D] reshaped to
 * [1, S, 3, H, D], q, k, v gathered along dim 2, q and v transposed to [1, H, S, D], k to
 * [1, H, D, S], the scores scaled by a Mul, Softmax, @ v, Transpose back and Reshape to [1, S, H D].
 * reshape_output: the first Reshape is a graph output too, so it must stay. */
static builder vit_graph(int dtype, int reshape_output, int softmax_axis) {
  builder b = b_new(dtype);
  const int x = b_value(&b, dtype, SHAPE(1, S, 3 * H * D));
  expect_ok(ir_graph_add_input(b.g, x));
  const int r = b_reshape(&b, x, SHAPE(1, S, 3, H, D));
  const int q = b_transpose(&b, b_gather(&b, r, 2, 0), (int64_t[]){0, 2, 1, 3}, 4);
  const int kt = b_transpose(&b, b_gather(&b, r, 2, 1), (int64_t[]){0, 2, 3, 1}, 4);
  const int v = b_transpose(&b, b_gather(&b, r, 2, -1), (int64_t[]){0, 2, 1, 3}, 4);
  const int s = b_binary(&b, "Mul", b_matmul(&b, q, kt), b_scalar(&b, 1.0f / sqrtf((float)D)));
  const int o = b_matmul(&b, b_softmax(&b, s, softmax_axis), v);
  const int y = b_reshape(&b, b_transpose(&b, o, (int64_t[]){0, 2, 1, 3}, 4), SHAPE(1, S, H * D));
  expect_ok(ir_graph_add_output(b.g, y));
  if (reshape_output) expect_ok(ir_graph_add_output(b.g, r));
  return b;
}

/* 13 nodes become the Attention node and the final Reshape (a view). */
static void test_attention_vit(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++) {
    builder b = vit_graph(dtypes[t], 0, -1);
    assert_int_equal(b.g->n_nodes, 13);
    expect_fused(&b, NULL, 2, GFX_OP_ATTENTION, 1, attention_ulps[t]);
  }
  /* the fused node reads the projection itself through views: q, k, v at offsets 0, H D, 2 H D */
  builder b = vit_graph(GFX_DTYPE_F32, 0, -1);
  expect_ok(ir_fuse_for(b.g, NULL));
  const ir_node* a = &b.g->nodes[0];
  assert_int_equal(a->op, GFX_OP_ATTENTION);
  const ir_attention_params* p = &a->params.attention;
  assert_true(p->fused && !p->has_mask && p->heads == H && p->q_seq == S && p->kv_seq == S && p->head_size == D);
  assert_int_equal(a->inputs[0], b.g->inputs[0]);
  assert_int_equal(a->inputs[1], b.g->inputs[0]);
  assert_true(p->q.offset == 0 && p->k.offset == H * D && p->v.offset == 2 * H * D);
  assert_true(p->q.stride[1] == D && p->q.stride[2] == 3 * H * D && p->q.stride[3] == 1);
  assert_true(p->k.stride[2] == 3 * H * D && p->k.stride[3] == 1);
  /* Y in the Transpose's layout [1, S, H, D] */
  assert_true(p->y.stride[1] == D && p->y.stride[2] == H * D && p->y.stride[3] == 1);
  assert_true(fabsf(p->scale - 1.0f / sqrtf((float)D)) < 1e-7f);
  ir_graph_free(b.g);
}

/* The same with the projection's Reshape a graph output: it stays, and the Gathers still go. */
static void test_attention_shared_source(void** unused) {
  (void)unused;
  builder b = vit_graph(GFX_DTYPE_F32, 1, -1);
  expect_fused(&b, NULL, 3, GFX_OP_ATTENTION, 1, attention_ulps[0]);
}

/* Left alone: a Softmax over the queries, and a backend that declines the fused node (the other
 * fusions still fold the Mul into the MatMul). */
static void test_attention_left_alone(void** unused) {
  (void)unused;
  builder b = vit_graph(GFX_DTYPE_F32, 0, -2);
  expect_fused(&b, NULL, 12, GFX_OP_ATTENTION, 0, 2.0);
  static const gfx_op no_attention[] = {GFX_OP_ATTENTION, GFX_OP_NONE};
  const ir_fuse_target target = {.supports = declining, .user = (void*)no_attention};
  for (int t = 0; t < 3; t++) {
    builder c = vit_graph(dtypes[t], 0, -1);
    expect_fused(&c, &target, 12, GFX_OP_ATTENTION, 0, 2.0);
  }
}

/* PyTorch's export: Reshape, Transpose(2,0,3,1,4), Split into three along dim 0, Squeeze each,
 * q @ Transpose(k), Mul, Softmax, @ v, Transpose, Reshape. */
static void test_attention_split(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++) {
    builder b = b_new(dtypes[t]);
    const int x = b_value(&b, b.dtype, SHAPE(1, S, 3 * H * D));
    expect_ok(ir_graph_add_input(b.g, x));
    const int r = b_transpose(&b, b_reshape(&b, x, SHAPE(1, S, 3, H, D)), (int64_t[]){2, 0, 3, 1, 4}, 5);
    const gfx_shape piece = SHAPE(1, 1, H, S, D);
    const gfx_shape pieces[3] = {piece, piece, piece};
    const int sizes = b_ints(&b, SHAPE(3), (int64_t[]){1, 1, 1});
    attr_table axis0 = ATTRS(A_INT("axis", 0));
    const int first = b_node_n(&b, "Split", 13, &axis0, (int[]){r, sizes}, 2, pieces, 3);
    const int ax = b_ints(&b, SHAPE(1), (int64_t[]){0});
    int qkv[3];
    for (int i = 0; i < 3; i++) qkv[i] = b_node(&b, "Squeeze", 13, NO_ATTRS, (int[]){first + i, ax}, 2, SHAPE(1, H, S, D));
    const int kt = b_transpose(&b, qkv[1], (int64_t[]){0, 1, 3, 2}, 4);
    const int s = b_binary(&b, "Mul", b_matmul(&b, qkv[0], kt), b_scalar(&b, 0.35f));
    const int o = b_matmul(&b, b_softmax(&b, s, -1), qkv[2]);
    const int y = b_reshape(&b, b_transpose(&b, o, (int64_t[]){0, 2, 1, 3}, 4), SHAPE(1, S, H * D));
    expect_ok(ir_graph_add_output(b.g, y));
    assert_int_equal(b.g->n_nodes, 13);
    expect_fused(&b, NULL, 2, GFX_OP_ATTENTION, 1, attention_ulps[t]);
  }
}

/* Swin's window attention: q scaled before the product, a relative position bias [1, H, N, N], and
 * (shifted) a mask [1, W, 1, N, N] added through a Reshape to [1, W, H, N, N] and back. */
enum { W = 3, N = 9 }; /* windows, tokens per window */

static void swin_case(int dtype, int shifted) {
  builder b = b_new(dtype);
  const int x = b_value(&b, dtype, SHAPE(W, N, 3 * H * D));
  expect_ok(ir_graph_add_input(b.g, x));
  const int r = b_transpose(&b, b_reshape(&b, x, SHAPE(W, N, 3, H, D)), (int64_t[]){2, 0, 3, 1, 4}, 5);
  const int q = b_binary(&b, "Mul", b_gather(&b, r, 0, 0), b_scalar(&b, 1.0f / sqrtf((float)D)));
  const int kt = b_transpose(&b, b_gather(&b, r, 0, 1), (int64_t[]){0, 1, 3, 2}, 4);
  const int v = b_gather(&b, r, 0, 2);
  float bias[H * N * N], mask[W * N * N];
  fill(bias, H * N * N, &b.seed);
  for (int w = 0; w < W; w++) /* windows 1 and 2 split their tokens into two regions, -100 across */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) mask[(w * N + i) * N + j] = w > 0 && (i < 3 * w) != (j < 3 * w) ? -100.0f : 0.0f;
  int s = b_binary(&b, "Add", b_matmul(&b, q, kt), b_float_const(&b, SHAPE(1, H, N, N), bias));
  if (shifted) {
    s = b_reshape(&b, s, SHAPE(1, W, H, N, N));
    s = b_binary(&b, "Add", s, b_float_const(&b, SHAPE(1, W, 1, N, N), mask));
    s = b_reshape(&b, s, SHAPE(W, H, N, N));
  }
  const int o = b_matmul(&b, b_softmax(&b, s, -1), v);
  const int y = b_reshape(&b, b_transpose(&b, o, (int64_t[]){0, 2, 1, 3}, 4), SHAPE(W, N, H * D));
  expect_ok(ir_graph_add_output(b.g, y));
  assert_int_equal(b.g->n_nodes, shifted ? 16 : 13);
  const int di = dtype == GFX_DTYPE_F32 ? 0 : dtype == GFX_DTYPE_F16 ? 1 : 2;
  expect_fused(&b, NULL, 2, GFX_OP_ATTENTION, 1, attention_ulps[di]);
}

static void test_attention_swin(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++) {
    swin_case(dtypes[t], 0);
    swin_case(dtypes[t], 1);
  }
}

/* The mask strides the fusion gives the shifted window's mask: per window, none per head. */
static void test_attention_swin_mask_views(void** unused) {
  (void)unused;
  builder b = b_new(GFX_DTYPE_F32);
  const int q = b_value(&b, GFX_DTYPE_F32, SHAPE(W, H, N, D));
  const int kt = b_value(&b, GFX_DTYPE_F32, SHAPE(W, H, D, N));
  const int v = b_value(&b, GFX_DTYPE_F32, SHAPE(W, H, N, D));
  expect_ok(ir_graph_add_input(b.g, q));
  expect_ok(ir_graph_add_input(b.g, kt));
  expect_ok(ir_graph_add_input(b.g, v));
  float bias[H * N * N], mask[W * N * N];
  fill(bias, H * N * N, &b.seed);
  fill(mask, W * N * N, &b.seed);
  int s = b_binary(&b, "Add", b_matmul(&b, q, kt), b_float_const(&b, SHAPE(1, H, N, N), bias));
  s = b_reshape(&b, s, SHAPE(1, W, H, N, N));
  s = b_binary(&b, "Add", b_float_const(&b, SHAPE(1, W, 1, N, N), mask), s); /* the mask first this time */
  s = b_reshape(&b, s, SHAPE(W, H, N, N));
  const int y = b_matmul(&b, b_softmax(&b, s, 3), v);
  expect_ok(ir_graph_add_output(b.g, y));
  expect_ok(ir_fuse_for(b.g, NULL));
  assert_int_equal(b.g->n_nodes, 1);
  const ir_attention_params* p = &b.g->nodes[0].params.attention;
  assert_true(p->has_mask && p->has_mask2 && p->scale == 1.0f);
  assert_true(p->mask_stride[0] == 0 && p->mask_stride[1] == N * N && p->mask_stride[2] == N && p->mask_stride[3] == 1);
  assert_true(p->mask2_stride[0] == N * N && p->mask2_stride[1] == 0 && p->mask2_stride[2] == N);
  /* K read from kᵀ as it is: keys along the last dim */
  assert_true(p->k.stride[2] == 1 && p->k.stride[3] == N);
  ir_graph_free(b.g);
}

/* A fused node refuses inputs of a size it was not made for. */
static void test_attention_geometry_refuses(void** unused) {
  (void)unused;
  builder b = vit_graph(GFX_DTYPE_F32, 0, -1);
  expect_ok(ir_fuse_for(b.g, NULL));
  const ir_node* a = &b.g->nodes[0];
  gfx_shape in[3] = {SHAPE(1, S + 1, 3 * H * D), SHAPE(1, S + 1, 3 * H * D), SHAPE(1, S + 1, 3 * H * D)};
  ir_attention_geom g;
  expect_error(ir_attention_geometry(&a->params.attention, in, &g), GFX_ERR_INVALID_ARGUMENT, "fused for");
  gfx_shape out;
  expect_error(ir_infer_attention(a, in, &out), GFX_ERR_INVALID_ARGUMENT, "fused for");
  ir_graph_free(b.g);
}

/* ---- residual Add + LayerNormalization ---- */

/* x + f -> LayerNormalization; the sum read again by an Add (the next residual) unless last. */
static builder residual_graph(int dtype, int sum_read_again, int with_bias) {
  builder b = b_new(dtype);
  const int x = b_value(&b, dtype, SHAPE(2, 5, 24)), f = b_value(&b, dtype, SHAPE(2, 5, 24));
  expect_ok(ir_graph_add_input(b.g, x));
  expect_ok(ir_graph_add_input(b.g, f));
  float sc[24], bi[24];
  fill(sc, 24, &b.seed);
  fill(bi, 24, &b.seed);
  for (int i = 0; i < 24; i++) sc[i] += 1.5f;
  const int sum = b_binary(&b, "Add", x, f);
  int in[3] = {sum, b_float_const(&b, SHAPE(24), sc), with_bias ? b_float_const(&b, SHAPE(24), bi) : -1};
  const int y = b_node(&b, "LayerNormalization", 17, ATTRS(A_INT("axis", -1), A_FLOAT("epsilon", 1e-5f)), in,
                       with_bias ? 3 : 2, SHAPE(2, 5, 24));
  expect_ok(ir_graph_add_output(b.g, y));
  if (sum_read_again) expect_ok(ir_graph_add_output(b.g, b_binary(&b, "Add", sum, y)));
  return b;
}

/* The Add goes, the normalization adds: bit for bit the pair's result, the sum written where
 * another node reads it. */
static void test_residual_layer_norm(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++)
    for (int again = 0; again < 2; again++) {
      builder b = residual_graph(dtypes[t], again, again);
      expect_fused(&b, NULL, again ? 2 : 1, GFX_OP_LAYER_NORMALIZATION, 1, 0.0);
    }
  builder b = residual_graph(GFX_DTYPE_F16, 1, 1);
  expect_ok(ir_fuse_for(b.g, NULL));
  const ir_node* n = &b.g->nodes[0];
  assert_int_equal(n->op, GFX_OP_LAYER_NORMALIZATION);
  assert_true(n->params.norm.residual && n->n_inputs == 4 && n->n_outputs == 2);
  assert_int_equal(n->inputs[IR_NORM_RESIDUAL_INPUT], b.g->inputs[1]);
  ir_graph_free(b.g);
  /* a backend without the fused kernel (the Vulkan one) keeps the pair */
  static const gfx_op no_norm[] = {GFX_OP_LAYER_NORMALIZATION, GFX_OP_NONE};
  const ir_fuse_target target = {.supports = declining, .user = (void*)no_norm};
  builder c = residual_graph(GFX_DTYPE_F32, 1, 1);
  expect_fused(&c, &target, 3, GFX_OP_ADD, 2, 0.0);
}

/* An Add that broadcasts is left alone. */
static void test_residual_broadcast_left_alone(void** unused) {
  (void)unused;
  builder b = b_new(GFX_DTYPE_F32);
  const int x = b_value(&b, GFX_DTYPE_F32, SHAPE(2, 5, 24)), f = b_value(&b, GFX_DTYPE_F32, SHAPE(1, 5, 24));
  expect_ok(ir_graph_add_input(b.g, x));
  expect_ok(ir_graph_add_input(b.g, f));
  float sc[24];
  fill(sc, 24, &b.seed);
  const int sum = b_binary(&b, "Add", x, f);
  const int y = b_node(&b, "LayerNormalization", 17, ATTRS(A_INT("axis", -1)), (int[]){sum, b_float_const(&b, SHAPE(24), sc)},
                       2, SHAPE(2, 5, 24));
  expect_ok(ir_graph_add_output(b.g, y));
  expect_fused(&b, NULL, 2, GFX_OP_ADD, 1, 0.0);
}

/* ---- InstanceNormalization's epilogue: Add, Relu, reflect Pad ---- */

/* x [2, 4, 9, 11] -> InstanceNormalization -> (Add r) -> (Relu) -> Pad of H and W (pads top 2, left
 * 1, bottom 1, right 3) in `mode`; with relu_read_twice the Relu's result is a graph output too. */
static builder norm_epilogue_graph(int dtype, int with_add, const char* mode, int relu_read_twice) {
  builder b = b_new(dtype);
  const gfx_shape xs = SHAPE(2, 4, 9, 11);
  const int x = b_value(&b, dtype, xs), r = b_value(&b, dtype, xs);
  expect_ok(ir_graph_add_input(b.g, x));
  expect_ok(ir_graph_add_input(b.g, r));
  float sc[4], bi[4];
  fill(sc, 4, &b.seed);
  fill(bi, 4, &b.seed);
  for (int i = 0; i < 4; i++) sc[i] += 1.5f;
  int y = b_node(&b, "InstanceNormalization", 6, ATTRS(A_FLOAT("epsilon", 1e-5f)),
                 (int[]){x, b_float_const(&b, SHAPE(4), sc), b_float_const(&b, SHAPE(4), bi)}, 3, xs);
  if (with_add) y = b_binary(&b, "Add", y, r);
  y = b_node(&b, "Relu", 14, ATTRS(), (int[]){y}, 1, xs);
  if (relu_read_twice) expect_ok(ir_graph_add_output(b.g, y));
  const int pads = b_ints(&b, SHAPE(8), (const int64_t[]){0, 0, 2, 1, 0, 0, 1, 3});
  y = b_node(&b, "Pad", 13, ATTRS(A_STR("mode", mode)), (int[]){y, pads}, 2, SHAPE(2, 4, 12, 15));
  expect_ok(ir_graph_add_output(b.g, y));
  return b;
}

/* The chain becomes one InstanceNormalization writing the padded result, bit for bit the separate
 * nodes' (every intermediate rounded where they stored it); what may not fuse stays apart. */
static void test_norm_epilogue(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++)
    for (int add = 0; add < 2; add++) {
      builder b = norm_epilogue_graph(dtypes[t], add, "reflect", 0);
      expect_fused(&b, NULL, 1, GFX_OP_INSTANCE_NORMALIZATION, 1, 0.0);
    }
  builder b = norm_epilogue_graph(GFX_DTYPE_F16, 1, "reflect", 0);
  expect_ok(ir_fuse_for(b.g, NULL));
  const ir_norm_params* p = &b.g->nodes[0].params.norm;
  assert_true(p->add_after && p->activation == IR_ACT_RELU && p->reflect_pad);
  assert_true(p->out_pads[0] == 2 && p->out_pads[1] == 1 && p->out_pads[2] == 1 && p->out_pads[3] == 3);
  assert_int_equal(b.g->nodes[0].inputs[IR_NORM_RESIDUAL_INPUT], b.g->inputs[1]);
  ir_graph_free(b.g);
  /* a constant-mode Pad stays; so does a Pad after a Relu that another reader needs */
  builder c = norm_epilogue_graph(GFX_DTYPE_F32, 1, "constant", 0);
  expect_fused(&c, NULL, 2, GFX_OP_PAD, 1, 0.0);
  builder d = norm_epilogue_graph(GFX_DTYPE_F32, 0, "reflect", 1);
  expect_fused(&d, NULL, 2, GFX_OP_PAD, 1, 0.0);
  /* a backend without the fused kernel (the Vulkan one) keeps all four */
  static const gfx_op no_norm[] = {GFX_OP_INSTANCE_NORMALIZATION, GFX_OP_NONE};
  const ir_fuse_target target = {.supports = declining, .user = (void*)no_norm};
  builder e = norm_epilogue_graph(GFX_DTYPE_F32, 1, "reflect", 0);
  expect_fused(&e, &target, 4, GFX_OP_ADD, 1, 0.0);
}

/* ---- layout: a Transpose back to NCHW folded into the DepthToSpace after it ---- */

/* A channels-last Conv's output [1, H, W, C] (a graph input here) -> Transpose(0, 3, 1, 2) ->
 * DepthToSpace; with `also_output` the Transpose's result is a graph output as well. */
static builder shuffle_graph(int dtype, int crd, int also_output) {
  builder b = b_new(dtype);
  const int x = b_value(&b, dtype, SHAPE(1, 5, 7, 12));
  expect_ok(ir_graph_add_input(b.g, x));
  const int t = b_transpose(&b, x, (const int64_t[]){0, 3, 1, 2}, 4);
  const int y = b_node(&b, "DepthToSpace", 13, ATTRS(A_INT("blocksize", 2), A_STR("mode", crd ? "CRD" : "DCR")),
                       (int[]){t}, 1, SHAPE(1, 3, 10, 14));
  expect_ok(ir_graph_add_output(b.g, y));
  if (also_output) expect_ok(ir_graph_add_output(b.g, t));
  return b;
}

/* An image [1, 3, 9, 11] -> Transpose(0, 2, 3, 1) -> channels-last Conv 3 -> 8, 3x3, pads 1 (as ORT's
 * layout transformer hands it over, domain com.ms.internal.nhwc); with `also_output` the Transpose's
 * result is a graph output as well. */
static builder first_layer_graph(int dtype, int also_output) {
  builder b = b_new(dtype);
  const int x = b_value(&b, dtype, SHAPE(1, 3, 9, 11));
  expect_ok(ir_graph_add_input(b.g, x));
  const int t = b_transpose(&b, x, (const int64_t[]){0, 2, 3, 1}, 4);
  float w[8 * 3 * 3 * 3], bias[8];
  fill(w, 8 * 27, &b.seed);
  fill(bias, 8, &b.seed);
  const int in[3] = {t, b_float_const(&b, SHAPE(8, 3, 3, 3), w), b_float_const(&b, SHAPE(8), bias)};
  attr_table attrs = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("pads", 1, 1, 1, 1));
  const gfx_shape out = SHAPE(1, 9, 11, 8);
  const int y = b_node_in(&b, IR_NHWC_DOMAIN, "Conv", 11, &attrs, in, 3, &out, 1);
  expect_ok(ir_graph_add_output(b.g, y));
  if (also_output) expect_ok(ir_graph_add_output(b.g, t));
  return b;
}

/* The Conv reads the NCHW image itself, bit for bit the pair's result (the same sums in the same
 * order); the pair stays where the Transpose's result is needed too or the backend declines. */
static void test_layout_first_conv(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++) {
    builder b = first_layer_graph(dtypes[t], 0);
    expect_fused(&b, NULL, 1, GFX_OP_CONV, 1, 0.0);
  }
  builder b = first_layer_graph(GFX_DTYPE_F16, 0);
  expect_ok(ir_fuse_for(b.g, NULL));
  assert_int_equal(b.g->n_nodes, 1);
  assert_true(b.g->nodes[0].params.conv.channels_last && b.g->nodes[0].params.conv.nchw_input);
  assert_false(b.g->nodes[0].params.conv.weights_channels_last); /* the few-channel kernel reads W as given */
  assert_int_equal(b.g->nodes[0].inputs[0], b.g->inputs[0]);
  ir_graph_free(b.g);
  builder kept = first_layer_graph(GFX_DTYPE_F32, 1);
  expect_fused(&kept, NULL, 2, GFX_OP_TRANSPOSE, 1, 0.0);
  static const gfx_op no_conv[] = {GFX_OP_CONV, GFX_OP_NONE};
  const ir_fuse_target target = {.supports = declining, .user = (void*)no_conv};
  builder declined = first_layer_graph(GFX_DTYPE_F32, 0);
  expect_fused(&declined, &target, 2, GFX_OP_TRANSPOSE, 1, 0.0);
}

/* One DepthToSpace reading the channels-last tensor, bit for bit the pair's result; kept as a pair
 * where the Transpose's result is needed too or the backend declines the fused node. */
static void test_layout_depth_to_space(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++)
    for (int crd = 0; crd < 2; crd++) {
      builder b = shuffle_graph(dtypes[t], crd, 0);
      expect_fused(&b, NULL, 1, GFX_OP_DEPTH_TO_SPACE, 1, 0.0);
    }
  builder b = shuffle_graph(GFX_DTYPE_F16, 1, 0);
  expect_ok(ir_fuse_for(b.g, NULL));
  assert_int_equal(b.g->n_nodes, 1);
  assert_true(b.g->nodes[0].params.space_depth.nhwc_input);
  assert_int_equal(b.g->nodes[0].inputs[0], b.g->inputs[0]);
  ir_graph_free(b.g);
  builder kept = shuffle_graph(GFX_DTYPE_F32, 0, 1);
  expect_fused(&kept, NULL, 2, GFX_OP_TRANSPOSE, 1, 0.0);
  static const gfx_op no_shuffle[] = {GFX_OP_DEPTH_TO_SPACE, GFX_OP_NONE};
  const ir_fuse_target target = {.supports = declining, .user = (void*)no_shuffle};
  builder declined = shuffle_graph(GFX_DTYPE_F32, 1, 0);
  expect_fused(&declined, &target, 2, GFX_OP_TRANSPOSE, 1, 0.0);
}

/* ---- convolution chains: Conv -> Conv, both 3x3 of stride 1 (ir/fuse_chain.c) ---- */

/* One Conv of a test graph: output channels, square window, stride, dilation, pads (all four sides),
 * group, auto_pad (NULL: the explicit pads) and whether it has a bias. */
typedef struct conv_spec {
  int64_t cout, kernel, stride, dilation, pad, group;
  const char* auto_pad;
  int bias;
} conv_spec;

/* What a chain takes: 3x3, stride 1, dilation 1, pads 1, one group, a bias. */
static conv_spec link3x3(int64_t cout) { return (conv_spec){cout, 3, 1, 1, 1, 1, NULL, 1}; }

static int64_t conv_out_dim(int64_t in, conv_spec s) {
  if (s.auto_pad) return (in + s.stride - 1) / s.stride; /* SAME_UPPER / SAME_LOWER */
  return (in + 2 * s.pad - s.dilation * (s.kernel - 1) - 1) / s.stride + 1;
}

/* Conv of x (NCHW, or NHWC in the layout transformer's domain when channels_last) as s says, its
 * weights and bias constants of the graph's type. */
static int b_conv(builder* b, int x, conv_spec s, int channels_last) {
  const gfx_shape xs = b->g->values[x].shape;
  const int64_t n = xs.dims[0], cin = xs.dims[channels_last ? 3 : 1];
  const int64_t oh = conv_out_dim(xs.dims[channels_last ? 1 : 2], s);
  const int64_t ow = conv_out_dim(xs.dims[channels_last ? 2 : 3], s);
  const int64_t w_count = s.cout * (cin / s.group) * s.kernel * s.kernel;
  float* w = malloc(sizeof(float) * (size_t)w_count);
  float bias[64];
  fill(w, (size_t)w_count, &b->seed);
  fill(bias, (size_t)s.cout, &b->seed);
  const int in[3] = {x, b_float_const(b, SHAPE(s.cout, cin / s.group, s.kernel, s.kernel), w),
                     s.bias ? b_float_const(b, SHAPE(s.cout), bias) : -1};
  free(w);
  test_attr a[5] = {A_INTS("kernel_shape", s.kernel, s.kernel), A_INTS("strides", s.stride, s.stride),
                    A_INTS("dilations", s.dilation, s.dilation), A_INT("group", s.group)};
  a[4] = s.auto_pad ? (test_attr)A_STR("auto_pad", s.auto_pad) : (test_attr)A_INTS("pads", s.pad, s.pad, s.pad, s.pad);
  attr_table t = {.attrs = a, .n = 5};
  const gfx_shape out = channels_last ? SHAPE(n, oh, ow, s.cout) : SHAPE(n, s.cout, oh, ow);
  return b_node_in(b, channels_last ? IR_NHWC_DOMAIN : "", "Conv", 11, &t, in, s.bias ? 3 : 2, &out, 1);
}

/* act of x: "Relu", "LeakyRelu" (alpha 0.1), "Tanh" or "Clip" (-0.5, 0.75); x itself for NULL. */
static int b_act(builder* b, const char* act, int x) {
  const gfx_shape s = b->g->values[x].shape;
  if (!act) return x;
  if (!strcmp(act, "LeakyRelu")) return b_node(b, act, 16, ATTRS(A_FLOAT("alpha", 0.1f)), &x, 1, s);
  if (!strcmp(act, "Clip"))
    return b_node(b, act, 13, NO_ATTRS, (int[]){x, b_scalar(b, -0.5f), b_scalar(b, 0.75f)}, 3, s);
  return b_node(b, act, 14, NO_ATTRS, &x, 1, s);
}

/* The input of a chain test: [2, 8, 7, 9] NCHW, or [2, 7, 9, 8] channels-last. */
static int b_image(builder* b, int channels_last) {
  const int x = b_value(b, b->dtype, channels_last ? SHAPE(2, 7, 9, 8) : SHAPE(2, 8, 7, 9));
  expect_ok(ir_graph_add_input(b->g, x));
  return x;
}

/* x -> Conv a -> act_a -> Conv c -> act_c -> y */
static builder pair_graph(int dtype, int channels_last, conv_spec a, const char* act_a, conv_spec c,
                          const char* act_c) {
  builder b = b_new(dtype);
  const int mid = b_act(&b, act_a, b_conv(&b, b_image(&b, channels_last), a, channels_last));
  expect_ok(ir_graph_add_output(b.g, b_act(&b, act_c, b_conv(&b, mid, c, channels_last))));
  return b;
}

/* A target that declines every chain node (as the Vulkan backend does) and runs the rest. */
static gfx_status declining_chains(void* user, const ir_graph* g, const ir_node* node) {
  (void)user;
  (void)g;
  if (node->op == GFX_OP_CONV && node->params.conv.chain) return gfx_error(GFX_ERR_NOT_SUPPORTED, "declined by the test");
  return NULL;
}

/* A target that runs everything, counting the chain nodes it was asked about. */
static gfx_status counting_chains(void* user, const ir_graph* g, const ir_node* node) {
  (void)g;
  if (node->op == GFX_OP_CONV && node->params.conv.chain) (*(int*)user)++;
  return NULL;
}

/* Conv + Relu -> Conv becomes one chain node computing the pair's result bit for bit (the reference
 * kernels round the middle map to the type as the first Conv's output was), in both layouts and every
 * float type, with each activation and either bias left out; a target that runs it is asked first.
 * The pair compared is the one ir_fuse leaves, its activations fused: a LeakyRelu or Tanh fused into
 * its Conv rounds once where the separate node rounded twice, which is ir_fuse's doing, not the chain's. */
static void test_chain_fused(void** unused) {
  (void)unused;
  static const char* const acts[][2] = {{"Relu", NULL}, {NULL, "Relu"}, {"LeakyRelu", "Tanh"}, {"Clip", "Relu"}};
  for (int t = 0; t < 3; t++)
    for (int layout = 0; layout < 2; layout++)
      for (int k = 0; k < 4; k++) {
        conv_spec a = link3x3(6), c = link3x3(5);
        a.bias = k != 1;
        c.bias = k != 2;
        builder b = pair_graph(dtypes[t], layout, a, acts[k][0], c, acts[k][1]);
        expect_ok(ir_fuse(b.g));
        assert_int_equal(b.g->n_nodes, 2);
        int asked = 0;
        const ir_fuse_target target = {.supports = counting_chains, .user = &asked};
        expect_fused(&b, &target, 1, GFX_OP_CONV, 1, 0.0);
        assert_int_equal(asked, 1);
      }
}

/* The chain node's inputs and parameters as ir/graph.h lays them out. */
static void test_chain_node_layout(void** unused) {
  (void)unused;
  for (int layout = 0; layout < 2; layout++) {
    conv_spec c = link3x3(5);
    c.bias = layout; /* the second Conv's bias absent in NCHW */
    builder b = pair_graph(GFX_DTYPE_F16, layout, link3x3(6), "LeakyRelu", c, "Tanh");
    const ir_node a0 = b.g->nodes[0];
    const int x = b.g->inputs[0], w_a = a0.inputs[1], b_a = a0.inputs[2];
    const ir_node* second = &b.g->nodes[b.g->n_nodes - 2]; /* the second Conv, before its Tanh */
    const int w = second->inputs[1], bias = c.bias ? second->inputs[2] : -1;
    expect_ok(ir_fuse_for(b.g, NULL));
    assert_int_equal(b.g->n_nodes, 1);
    const ir_node* n = &b.g->nodes[0];
    const ir_conv_params* p = &n->params.conv;
    assert_int_equal(n->op, GFX_OP_CONV);
    assert_int_equal(n->n_inputs, IR_CONV_CHAIN_WEIGHT_INPUT + 2);
    assert_int_equal(n->inputs[0], x);
    assert_int_equal(n->inputs[1], w);
    assert_int_equal(n->inputs[2], bias);
    assert_int_equal(n->inputs[IR_CONV_RESIDUAL_INPUT], -1);
    assert_int_equal(n->inputs[IR_CONV_CHAIN_WEIGHT_INPUT], w_a);
    assert_int_equal(n->inputs[IR_CONV_CHAIN_WEIGHT_INPUT + 1], b_a);
    assert_int_equal(n->outputs[0], b.g->outputs[0]);
    assert_true(p->chain && p->spatial == 2 && p->group == 1 && p->channels_last == layout && !p->nchw_input);
    assert_true(p->residual == IR_RES_NONE && p->auto_pad == IR_PAD_NOTSET && p->dtype == GFX_DTYPE_F16);
    for (int i = 0; i < 2; i++) assert_true(p->kernel[i] == 3 && p->strides[i] == 1 && p->dilations[i] == 1);
    for (int i = 0; i < 4; i++) assert_int_equal(p->pads[i], 1);
    assert_true(p->chain_activation == IR_ACT_LEAKY_RELU && p->chain_alpha == 0.1f);
    assert_true(p->activation == IR_ACT_TANH);
    /* both names, in data-flow order */
    assert_non_null(strstr(n->name, "Conv"));
    assert_true(strstr(n->name, "LeakyRelu") < strstr(n->name, "Tanh"));
    ir_graph_free(b.g);
  }
  /* Clip's bounds as fuse_conv_activation stores them */
  builder b = pair_graph(GFX_DTYPE_F32, 0, link3x3(6), "Clip", link3x3(5), NULL);
  expect_ok(ir_fuse_for(b.g, NULL));
  const ir_conv_params* p = &b.g->nodes[0].params.conv;
  assert_true(p->chain && p->chain_activation == IR_ACT_CLIP && p->chain_alpha == -0.5f && p->chain_beta == 0.75f);
  assert_int_equal(p->activation, IR_ACT_NONE);
  ir_graph_free(b.g);
}

/* auto_pad SAME_UPPER and SAME_LOWER pad a 3x3 window of stride 1 by 1 on each side: fused, the pads
 * written out. */
static void test_chain_same_pads(void** unused) {
  (void)unused;
  conv_spec a = link3x3(6), c = link3x3(5);
  a.auto_pad = "SAME_UPPER";
  c.auto_pad = "SAME_LOWER";
  builder b = pair_graph(GFX_DTYPE_F32, 0, a, "Relu", c, NULL);
  expect_fused(&b, NULL, 1, GFX_OP_CONV, 1, 0.0);
  builder d = pair_graph(GFX_DTYPE_F16, 1, a, NULL, c, "Relu");
  expect_ok(ir_fuse_for(d.g, NULL));
  const ir_conv_params* p = &d.g->nodes[0].params.conv;
  assert_true(p->chain && p->auto_pad == IR_PAD_NOTSET);
  for (int i = 0; i < 4; i++) assert_int_equal(p->pads[i], 1);
  ir_graph_free(d.g);
}

/* Three 3x3 Convs in a row: a chain of the first two, then the third as it was. */
static void test_chain_of_three(void** unused) {
  (void)unused;
  for (int t = 0; t < 2; t++) {
    builder b = b_new(dtypes[t]);
    int v = b_image(&b, 0);
    v = b_act(&b, "Relu", b_conv(&b, v, link3x3(6), 0));
    v = b_act(&b, "Relu", b_conv(&b, v, link3x3(4), 0));
    expect_ok(ir_graph_add_output(b.g, b_conv(&b, v, link3x3(5), 0)));
    expect_fused(&b, NULL, 2, GFX_OP_CONV, 2, 0.0);
  }
  builder b = b_new(GFX_DTYPE_F32);
  int v = b_image(&b, 0);
  v = b_conv(&b, v, link3x3(6), 0);
  v = b_conv(&b, v, link3x3(4), 0);
  expect_ok(ir_graph_add_output(b.g, b_conv(&b, v, link3x3(5), 0)));
  expect_ok(ir_fuse_for(b.g, NULL));
  assert_int_equal(b.g->n_nodes, 2);
  assert_true(b.g->nodes[0].params.conv.chain && !b.g->nodes[1].params.conv.chain);
  assert_int_equal(b.g->nodes[1].inputs[0], b.g->nodes[0].outputs[0]);
  ir_graph_free(b.g);
}

/* Pairs a chain does not take stay two Convs, computing what they did. */
static void test_chain_left_alone(void** unused) {
  (void)unused;
  /* one Conv of the pair changed: stride 2, a 5x5 window, dilation 2, pads 0, two groups */
  conv_spec changed[5];
  for (int k = 0; k < 5; k++) changed[k] = link3x3(4);
  changed[0].stride = 2;
  changed[1].kernel = 5, changed[1].pad = 2;
  changed[2].dilation = 2, changed[2].pad = 2;
  changed[3].pad = 0;
  changed[4].group = 2;
  for (int k = 0; k < 5; k++)
    for (int which = 0; which < 2; which++) {
      builder b = which ? pair_graph(GFX_DTYPE_F32, 0, link3x3(6), "Relu", changed[k], NULL)
                        : pair_graph(GFX_DTYPE_F32, 0, changed[k], "Relu", link3x3(6), NULL);
      expect_fused(&b, NULL, 2, GFX_OP_CONV, 2, 0.0);
    }
  /* the middle map read by another node too, or a graph output */
  for (int shared = 0; shared < 2; shared++) {
    builder b = b_new(GFX_DTYPE_F16);
    const int mid = b_conv(&b, b_image(&b, 0), link3x3(6), 0);
    expect_ok(ir_graph_add_output(b.g, b_conv(&b, mid, link3x3(5), 0)));
    expect_ok(ir_graph_add_output(b.g, shared ? b_act(&b, "Tanh", mid) : mid));
    expect_fused(&b, NULL, 2 + shared, GFX_OP_CONV, 2, 0.0);
  }
  /* a residual on either Conv (an Add of a graph input the Conv's output's shape) */
  for (int which = 0; which < 2; which++) {
    builder b = b_new(GFX_DTYPE_F32);
    int v = b_conv(&b, b_image(&b, 0), link3x3(6), 0);
    if (!which) {
      const int r = b_value(&b, b.dtype, b.g->values[v].shape);
      expect_ok(ir_graph_add_input(b.g, r));
      v = b_binary(&b, "Add", v, r);
    }
    v = b_conv(&b, v, link3x3(5), 0);
    if (which) {
      const int r = b_value(&b, b.dtype, b.g->values[v].shape);
      expect_ok(ir_graph_add_input(b.g, r));
      v = b_binary(&b, "Add", v, r);
    }
    expect_ok(ir_graph_add_output(b.g, v));
    expect_fused(&b, NULL, 2, GFX_OP_CONV, 2, 0.0);
  }
  /* a backend that declines the chain (the Vulkan one) */
  const ir_fuse_target target = {.supports = declining_chains, .user = NULL};
  for (int layout = 0; layout < 2; layout++) {
    builder b = pair_graph(GFX_DTYPE_F16, layout, link3x3(6), "Relu", link3x3(5), NULL);
    expect_fused(&b, &target, 2, GFX_OP_CONV, 2, 0.0);
  }
}

/* A chain node's shapes: its output from X, W_a and W in both layouts, and errors naming the inputs
 * whose channels disagree. */
static void test_chain_shapes(void** unused) {
  (void)unused;
  for (int layout = 0; layout < 2; layout++) {
    builder b = pair_graph(GFX_DTYPE_F32, layout, link3x3(6), "Relu", link3x3(5), NULL);
    expect_ok(ir_fuse_for(b.g, NULL));
    const ir_node* n = &b.g->nodes[0];
    gfx_shape in[IR_CONV_CHAIN_WEIGHT_INPUT + 2], out;
    for (int i = 0; i < n->n_inputs; i++)
      in[i] = n->inputs[i] < 0 ? (gfx_shape){.rank = -1} : b.g->values[n->inputs[i]].shape;
    in[0] = layout ? SHAPE(3, 11, 4, 8) : SHAPE(3, 8, 11, 4); /* any batch and image size */
    expect_ok(ir_infer_conv(n, in, &out));
    expect_shape(out, layout ? SHAPE(3, 11, 4, 5) : SHAPE(3, 5, 11, 4));
    gfx_shape mid, y;
    expect_ok(ir_conv_chain_shapes(&n->params.conv, n->n_inputs, in, &mid, &y));
    expect_shape(mid, layout ? SHAPE(3, 11, 4, 6) : SHAPE(3, 6, 11, 4));
    /* X of 7 channels for W_a of 8 */
    gfx_shape bad[IR_CONV_CHAIN_WEIGHT_INPUT + 2];
    memcpy(bad, in, sizeof bad);
    bad[0] = layout ? SHAPE(3, 11, 4, 7) : SHAPE(3, 7, 11, 4);
    expect_error(ir_infer_conv(n, bad, &out), GFX_ERR_INVALID_ARGUMENT, "W_a (input 4)", "takes 8 input channels",
                 "X (input 0)", "has 7");
    /* W of 4 input channels after W_a's 6 */
    memcpy(bad, in, sizeof bad);
    bad[1] = SHAPE(5, 4, 3, 3);
    expect_error(ir_infer_conv(n, bad, &out), GFX_ERR_INVALID_ARGUMENT, "W (input 1)", "takes 4 input channels",
                 "W_a (input 4)", "makes 6");
    /* a bias of the wrong length, a weight that is not 3x3, a residual */
    memcpy(bad, in, sizeof bad);
    bad[IR_CONV_CHAIN_WEIGHT_INPUT + 1] = SHAPE(5);
    expect_error(ir_infer_conv(n, bad, &out), GFX_ERR_INVALID_ARGUMENT, "B_a (input 5)", "[6]");
    memcpy(bad, in, sizeof bad);
    bad[IR_CONV_CHAIN_WEIGHT_INPUT] = SHAPE(6, 8, 5, 5);
    expect_error(ir_infer_conv(n, bad, &out), GFX_ERR_INVALID_ARGUMENT, "W_a (input 4)", "[M, C, 3, 3]");
    memcpy(bad, in, sizeof bad);
    bad[IR_CONV_RESIDUAL_INPUT] = out;
    expect_error(ir_infer_conv(n, bad, &out), GFX_ERR_INVALID_ARGUMENT, "residual");
    /* the graph as fused is valid and infers its declared shapes */
    expect_ok(ir_graph_validate(b.g));
    ir_graph_free(b.g);
  }
}

/* ---- channels-last weights (ir/fuse_layout.c) ---- */

/* A target that declines Convs with weights stored channels-last and runs the rest. */
static gfx_status declining_weight_order(void* user, const ir_graph* g, const ir_node* node) {
  (void)user;
  (void)g;
  if (node->op == GFX_OP_CONV && node->params.conv.weights_channels_last)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "declined by the test");
  return NULL;
}

/* x -> Conv 3x3 stride 2, two groups -> Conv 1x1 -> y, channels-last or NCHW; neither a chain. */
static builder weight_order_graph(int dtype, int channels_last) {
  const conv_spec a = {12, 3, 2, 1, 1, 2, NULL, 1}, c = {6, 1, 1, 1, 0, 1, NULL, 0};
  return pair_graph(dtype, channels_last, a, "Relu", c, NULL);
}

/* A copy of value v's constant bytes. */
static void* const_copy(const ir_graph* g, int v) {
  void* copy = malloc(g->values[v].const_bytes);
  assert_non_null(copy);
  memcpy(copy, g->values[v].const_data, g->values[v].const_bytes);
  return copy;
}

/* A channels-last Conv's constant W of a window over 1x1 is stored [M, kH, kW, C/group] once, and the
 * graph computes bit for bit what it did (the reference backend sums in the same order); a 1x1 window,
 * an NCHW Conv, weights another node reads too, and a target that declines keep W as it was. */
static void test_layout_weights_channels_last(void** unused) {
  (void)unused;
  for (int t = 0; t < 3; t++) {
    builder b = weight_order_graph(dtypes[t], 1);
    expect_fused(&b, NULL, 2, GFX_OP_CONV, 2, 0.0); /* the Relu fused, W reordered */
  }
  builder b = weight_order_graph(GFX_DTYPE_F16, 1);
  const int w = b.g->nodes[0].inputs[1], w1 = b.g->nodes[2].inputs[1];
  unsigned short* given = const_copy(b.g, w);
  void* given1 = const_copy(b.g, w1);
  expect_ok(ir_fuse_for(b.g, NULL));
  assert_int_equal(b.g->n_nodes, 2); /* Conv+Relu, Conv 1x1 */
  assert_true(b.g->nodes[0].params.conv.weights_channels_last);
  assert_false(b.g->nodes[1].params.conv.weights_channels_last);
  assert_memory_equal(b.g->values[w1].const_data, given1, b.g->values[w1].const_bytes);
  /* w [12, 4, 3, 3] now [12, 3, 3, 4]: every element where that order puts it */
  const unsigned short* stored = b.g->values[w].const_data;
  assert_int_equal(b.g->values[w].shape.dims[1], 4); /* the declared shape stays ONNX's */
  for (int o = 0; o < 12; o++)
    for (int c = 0; c < 4; c++)
      for (int k = 0; k < 9; k++) assert_int_equal(stored[(o * 9 + k) * 4 + c], given[(o * 4 + c) * 9 + k]);
  free(given);
  free(given1);
  ir_graph_free(b.g);

  builder nchw = weight_order_graph(GFX_DTYPE_F32, 0);
  expect_ok(ir_fuse_for(nchw.g, NULL));
  for (int n = 0; n < nchw.g->n_nodes; n++) assert_false(nchw.g->nodes[n].params.conv.weights_channels_last);
  ir_graph_free(nchw.g);

  const ir_fuse_target target = {.supports = declining_weight_order};
  builder declined = weight_order_graph(GFX_DTYPE_F32, 1);
  const int wd = declined.g->nodes[0].inputs[1];
  void* before = const_copy(declined.g, wd);
  expect_ok(ir_fuse_for(declined.g, &target));
  assert_false(declined.g->nodes[0].params.conv.weights_channels_last);
  assert_memory_equal(declined.g->values[wd].const_data, before, declined.g->values[wd].const_bytes);
  free(before);
  ir_graph_free(declined.g);

  /* two Convs of one W: neither may reorder it for itself */
  builder shared = b_new(GFX_DTYPE_F32);
  const int x = b_image(&shared, 1);
  float wdata[8 * 8 * 9];
  fill(wdata, 8 * 8 * 9, &shared.seed);
  const int ws = b_float_const(&shared, SHAPE(8, 8, 3, 3), wdata);
  attr_table attrs = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2));
  const gfx_shape out = SHAPE(2, 4, 5, 8);
  for (int k = 0; k < 2; k++)
    expect_ok(ir_graph_add_output(shared.g, b_node_in(&shared, IR_NHWC_DOMAIN, "Conv", 11, &attrs, (int[]){x, ws}, 2,
                                                      &out, 1)));
  expect_ok(ir_fuse_for(shared.g, NULL));
  assert_int_equal(shared.g->n_nodes, 2);
  for (int n = 0; n < 2; n++) assert_false(shared.g->nodes[n].params.conv.weights_channels_last);
  assert_memory_equal(shared.g->values[ws].const_data, wdata, sizeof wdata);
  ir_graph_free(shared.g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attention_vit),
      cmocka_unit_test(test_attention_shared_source),
      cmocka_unit_test(test_attention_left_alone),
      cmocka_unit_test(test_attention_split),
      cmocka_unit_test(test_attention_swin),
      cmocka_unit_test(test_attention_swin_mask_views),
      cmocka_unit_test(test_attention_geometry_refuses),
      cmocka_unit_test(test_residual_layer_norm),
      cmocka_unit_test(test_norm_epilogue),
      cmocka_unit_test(test_residual_broadcast_left_alone),
      cmocka_unit_test(test_layout_depth_to_space),
      cmocka_unit_test(test_layout_first_conv),
      cmocka_unit_test(test_layout_weights_channels_last),
      cmocka_unit_test(test_chain_fused),
      cmocka_unit_test(test_chain_node_layout),
      cmocka_unit_test(test_chain_same_pads),
      cmocka_unit_test(test_chain_of_three),
      cmocka_unit_test(test_chain_left_alone),
      cmocka_unit_test(test_chain_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

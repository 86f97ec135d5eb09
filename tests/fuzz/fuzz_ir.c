/* gfxep fuzz target: the IR on its own, then the reference executor.
 *
 * The input bytes are decoded into a small graph: graph inputs with random element types and declared
 * shapes (dynamic, zero and huge dims), constants, up to 12 nodes whose op type, domain, opset, arity,
 * signature and attributes (right and wrong types and lengths, through a table-driven ir_attr_reader)
 * come from the bytes. Every node goes through ir_op_parse; the ones that parse are added to an
 * ir_graph, wired to random values (a node whose description was mutated to disagree with the graph
 * tests the parser only: ONNX Runtime describes nodes from the value infos the graph is built from).
 * Then ir_graph_validate, ir_infer_shapes with random concrete input shapes, ir_plan_memory, and, when
 * everything succeeded and the graph is small, the graph runs twice on the reference backend through
 * gfx_model_create / gfx_model_run. FUZZ_IR_DUMP=1 prints each graph (for reading a reproducer).
 *
 * Invariants (a violation traps):
 *  - every call returns a status or succeeds, never crashes; error statuses carry a message, and
 *    parse errors are GFX_ERR_NOT_SUPPORTED, name the node and leave the outputs untouched;
 *  - ir_graph_add_node and ir_graph_validate accept exactly what this file computes independently;
 *  - after ir_infer_shapes, every graph input has the shape it was given and every produced value a
 *    concrete shape (rank 0..8, dims >= 0) equal to what an independent, overflow-free computation
 *    gives for its node;
 *  - the plan gives a workspace offset to exactly the intermediates, aligned, inside the workspace,
 *    and values whose lifetimes (producer .. last reader, computed here) overlap never share bytes;
 *  - a run of a graph that validated, inferred and planned succeeds, asks for every output once with
 *    the inferred shape, and a second run gives bit-identical outputs; Relu outputs are >= 0 or NaN.
 * Everything is freed (LeakSanitizer is on).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/registry.h"
#include "exec/model.h"
#include "ir/dynamic.h"
#include "ir/fuse.h"
#include "ir/graph.h"
#include "ir/plan.h"
#include "ir/shape.h"

#define FUZZ_TARGET "fuzz_ir"
#include "fuzz_common.h"

#define MAX_NODES 12
#define MAX_VALUES 64
#define RUN_BYTES_LIMIT ((size_t)1 << 20) /* run only graphs whose values fit in 1 MiB together */
#define RUN_FLOPS_LIMIT 4.0e6             /* and whose multiply-adds stay cheap */

/* clang-format off */
static const int64_t special_dims[] = {
    0, 1, 2, 3, 4, 7, 8, 16, 31, 64, -1, -2, -7,
    (int64_t)1 << 20, (int64_t)1 << 31, (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62,
    INT64_MAX, INT64_MAX - 1, INT64_MAX / 2 + 1, INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 40)};
/* clang-format on */
#define N_SPECIAL (sizeof special_dims / sizeof special_dims[0])

/* Mostly small, sometimes 0, dynamic, negative or huge. */
static int64_t any_dim(reader* r) {
  uint8_t b = u8(r);
  if (b < 150) return b % 5;           /* 0..4 */
  if (b < 200) return b % 9;           /* 0..8 */
  if (b < 210) return (int64_t)u64(r); /* anything */
  return special_dims[b % N_SPECIAL];
}
/* A concrete dim for running: small, zero now and then, huge rarely. */
static int64_t run_dim(reader* r) {
  uint8_t b = u8(r);
  if (b < 240) return 1 + b % 4; /* 1..4 */
  if (b < 250) return 0;
  return special_dims[b % N_SPECIAL];
}

/* clang-format off */
static const int dtypes[] = {GFX_DTYPE_F32, GFX_DTYPE_F32, GFX_DTYPE_F32, GFX_DTYPE_UNDEFINED, GFX_DTYPE_U8,
                             GFX_DTYPE_I64, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_BOOL, 11 /* double */,
                             -3, 99};
/* clang-format on */
static int any_dtype(reader* r) { return dtypes[u8(r) % (sizeof dtypes / sizeof dtypes[0])]; }

static gfx_shape any_shape(reader* r) {
  gfx_shape s;
  memset(&s, 0, sizeof s);
  uint8_t b = u8(r);
  s.rank = b < 230 ? b % 6 : (b < 245 ? -1 : (b < 250 ? GFX_MAX_RANK : GFX_MAX_RANK + 1 + b % 3));
  for (int d = 0; d < s.rank && d < GFX_MAX_RANK; d++) s.dims[d] = any_dim(r);
  if (b >= 253) s.rank = -2; /* invalid rank */
  return s;
}

/* ---- a table-driven attribute reader ---- */

enum { K_INT, K_INTS, K_FLOAT, K_STRING, K_COUNT };

typedef struct fz_attr {
  const char* name;
  int kind;
  int64_t i;
  float f;
  char s[48];
  int64_t ints[12];
  size_t n_ints;
} fz_attr;

typedef struct fz_attrs {
  fz_attr a[6];
  int n;
} fz_attrs;

/* clang-format off */
static const struct {
  const char* name;
  int kind; /* the kind ONNX gives it */
} attr_names[] = {
    {"kernel_shape", K_INTS}, {"strides", K_INTS}, {"dilations", K_INTS}, {"pads", K_INTS},
    {"group", K_INT},        {"auto_pad", K_STRING}, {"alpha", K_FLOAT}, {"Strides", K_INTS},
    {"", K_INT}};
/* clang-format on */

/* clang-format off */
static const char* const pad_strings[] = {
    "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "same_upper", "", "VALID ",
    "SAME_UPPER_SAME_UPPER_SAME_UPPER_SAME_UPPER_" /* longer than the parser's buffer */};
/* clang-format on */

static const fz_attr* fz_find(void* ctx, const char* name) {
  const fz_attrs* t = ctx;
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->a[i].name, name) == 0) return &t->a[i];
  return NULL;
}
static int fz_get_int(void* ctx, const char* name, int64_t* out) {
  const fz_attr* a = fz_find(ctx, name);
  if (!a) return 0;
  if (a->kind != K_INT) return -1;
  *out = a->i;
  return 1;
}
static int fz_get_float(void* ctx, const char* name, float* out) {
  const fz_attr* a = fz_find(ctx, name);
  if (!a) return 0;
  if (a->kind != K_FLOAT) return -1;
  *out = a->f;
  return 1;
}
static int fz_get_ints(void* ctx, const char* name, int64_t* out, size_t cap, size_t* n) {
  const fz_attr* a = fz_find(ctx, name);
  if (!a) return 0;
  if (a->kind != K_INTS) return -1;
  for (size_t i = 0; i < a->n_ints && i < cap; i++) out[i] = a->ints[i];
  *n = a->n_ints;
  return 1;
}
static int fz_get_string(void* ctx, const char* name, char* out, size_t cap) {
  const fz_attr* a = fz_find(ctx, name);
  if (!a) return 0;
  if (a->kind != K_STRING) return -1;
  if (cap) snprintf(out, cap, "%s", a->s);
  return 1;
}
static int fz_count(void* ctx) { return ((const fz_attrs*)ctx)->n; }
static const char* fz_name_at(void* ctx, int i) { return ((const fz_attrs*)ctx)->a[i].name; }

static void make_attrs(reader* r, fz_attrs* t) {
  memset(t, 0, sizeof *t);
  uint8_t b = u8(r);
  t->n = b < 100 ? 0 : b % 7;
  if (t->n > 6) t->n = 6;
  for (int i = 0; i < t->n; i++) {
    fz_attr* a = &t->a[i];
    int which = u8(r) % (int)(sizeof attr_names / sizeof attr_names[0]);
    a->name = attr_names[which].name;
    a->kind = chance(r, 200) ? attr_names[which].kind : u8(r) % K_COUNT;
    switch (a->kind) {
      case K_INT: a->i = chance(r, 180) ? 1 + u8(r) % 4 : any_dim(r); break;
      case K_FLOAT: a->f = (float)(int8_t)u8(r) / 4.0f; break;
      case K_STRING:
        snprintf(a->s, sizeof a->s, "%s", pad_strings[u8(r) % (sizeof pad_strings / sizeof pad_strings[0])]);
        break;
      default: {
        uint8_t c = u8(r);
        a->n_ints = c < 200 ? 2 + (c % 2) * 2 : c % 13; /* mostly 2 or 4 entries */
        for (size_t k = 0; k < a->n_ints; k++)
          a->ints[k] = chance(r, 200) ? u8(r) % 3 + (a->name[0] != 'p') : any_dim(r);
      }
    }
  }
}

/* ---- building the graph ---- */

typedef struct fuzz_graph {
  ir_graph* g;
  int n_dangling;
} fuzz_graph;

static const char* const unknown_ops[] = {"Hardmax", "add", "", "Conv2D", "MatMulInteger"}; /* none in the table */

/* The expected arity of an op. */
/* The ops this fuzzer models in detail (arity, parameters, an independent shape oracle). Every other
 * op of the table is fuzzed for robustness only: parse, infer, plan and run must not crash, must
 * answer with clean statuses, and inferred shapes must be concrete; each family's unit tests and the
 * op cases check their semantics. */
static int modelled(gfx_op op) {
  switch (op) {
    case GFX_OP_ADD: case GFX_OP_SUB: case GFX_OP_MUL: case GFX_OP_DIV: case GFX_OP_RELU: case GFX_OP_CONV:
    case GFX_OP_MATMUL: return 1;
    default: return 0;
  }
}

static void arity(gfx_op op, int* min_in, int* max_in) {
  switch (op) {
    case GFX_OP_RELU: *min_in = *max_in = 1; break;
    case GFX_OP_CONV: *min_in = 2, *max_in = 3; break;
    case GFX_OP_ADD: case GFX_OP_SUB: case GFX_OP_MUL: case GFX_OP_DIV: case GFX_OP_MATMUL: *min_in = *max_in = 2; break;
    default: *min_in = 1, *max_in = 5; /* what the table's ops take, mostly */
  }
}

static void expect_error(gfx_status s, const char* what) {
  CHECK(s, "%s: expected an error status, got success", what);
  CHECK(gfx_status_code(s) != GFX_OK, "%s: error status with code OK", what);
  CHECK(gfx_status_message(s)[0], "%s: error status with an empty message", what);
  gfx_status_free(s);
}

static int is_known(const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK) return 0;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] < 0) return 0;
  return 1;
}

/* Bytes of a value, with no overflow: -1 when unknown or too large. */
static int64_t value_bytes(const gfx_shape* s, int dtype) {
  if (!is_known(s)) return -1;
  size_t es = gfx_dtype_size(dtype);
  if (!es) return -1;
  __int128 n = (__int128)es;
  for (int d = 0; d < s->rank; d++) {
    n *= s->dims[d];
    if (n > ((__int128)1 << 62)) return -1;
  }
  return (int64_t)n;
}

/* Fills a buffer with small numbers (and now and then a zero) from a seed. */
static void fill(void* data, size_t bytes, uint64_t seed) {
  uint8_t* p = data;
  uint64_t x = seed | 1;
  if (bytes % 4 == 0) {
    for (size_t i = 0; i < bytes / 4; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      float f = (float)((int)(x % 17) - 8) / 4.0f;
      memcpy(p + 4 * i, &f, 4);
    }
  } else {
    for (size_t i = 0; i < bytes; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      p[i] = (uint8_t)x;
    }
  }
}

static int add_value(fuzz_graph* fg, const char* prefix, int dtype, const gfx_shape* shape) {
  ir_graph* g = fg->g;
  char name[32];
  snprintf(name, sizeof name, "%s%d", prefix, g->n_values);
  int before = g->n_values;
  int index = -1;
  gfx_status s = ir_graph_add_value(g, name, dtype, shape, &index);
  int ok_rank = !shape || (shape->rank >= -1 && shape->rank <= GFX_MAX_RANK);
  if (!ok_rank) {
    expect_error(s, "ir_graph_add_value with a bad rank");
    CHECK(g->n_values == before, "a refused value was added");
    return -1;
  }
  CHECK(!s, "ir_graph_add_value('%s') failed: %s", name, gfx_status_message(s));
  CHECK(index == before && g->n_values == before + 1, "value index %d, count %d", index, g->n_values);
  CHECK(ir_graph_find_value(g, name) == index, "find_value('%s')", name);
  return index;
}

/* Describes node `k` to the parser and, when it parses, adds it. */
static void add_fuzzed_node(reader* r, fuzz_graph* fg, int k) {
  ir_graph* g = fg->g;
  ir_node_desc d;
  memset(&d, 0, sizeof d);

  int which = u8(r) % (GFX_OP_COUNT - 1 + 2);
  gfx_op intended = which < GFX_OP_COUNT - 1 ? (gfx_op)(which + 1) : GFX_OP_NONE;
  d.op_type = intended != GFX_OP_NONE ? ir_op_name(intended) : unknown_ops[u8(r) % 5];
  static const char* const domains[] = {"", "", "", "", "", "ai.onnx", "com.microsoft", NULL};
  d.domain = domains[u8(r) % 8];
  static const int opsets[] = {13, 13, 13, 1, 6, 7, 22, 0, -1, 5};
  d.since_version = opsets[u8(r) % 10];

  char name[700];
  if (chance(r, 3)) { /* a long name, longer than the status prefix buffer */
    memset(name, 'N', 600);
    snprintf(name + 600, 100, "%d", k);
  } else {
    snprintf(name, sizeof name, "node%d", k);
  }
  d.name = name;

  int min_in = 1, max_in = 1;
  arity(intended, &min_in, &max_in);
  uint8_t ab = u8(r);
  d.n_inputs = ab < 220 ? min_in + (max_in > min_in ? ab % 2 : 0) : ab % 10;
  d.n_outputs = chance(r, 245) ? 1 : u8(r) % 10;

  int faithful = 1;
  int inputs[IR_MAX_IO];
  for (int i = 0; i < d.n_inputs && i < IR_MAX_IO; i++) {
    uint8_t b = u8(r);
    int v = b >= 250 ? -1 : (g->n_values ? b % g->n_values : -1);
    /* prefer recent values, so that nodes chain */
    if (b < 128 && g->n_values > 0) v = g->n_values - 1 - (b % (g->n_values < 3 ? g->n_values : 3));
    inputs[i] = v;
    if (v >= 0) {
      d.input_dtypes[i] = g->values[v].dtype;
      d.input_shapes[i] = g->values[v].shape;
      d.input_is_const[i] = g->values[v].const_data != NULL;
    } else {
      d.input_dtypes[i] = GFX_DTYPE_UNDEFINED;
      d.input_shapes[i] = (gfx_shape){.rank = -1};
    }
    /* a description that disagrees with the graph tests the parser only: ONNX Runtime describes a
     * node from the same value infos the graph is built from, so such a node is never added */
    if (chance(r, 12)) {
      d.input_dtypes[i] = any_dtype(r);
      faithful = 0;
    }
    if (chance(r, 12)) {
      d.input_shapes[i] = any_shape(r);
      faithful = 0;
    }
    if (chance(r, 4)) {
      d.input_is_const[i] = !d.input_is_const[i];
      faithful = 0;
    }
  }
  for (int o = 0; o < d.n_outputs && o < IR_MAX_IO; o++)
    d.output_dtypes[o] = chance(r, 240) ? GFX_DTYPE_F32 : any_dtype(r);

  fz_attrs attrs;
  make_attrs(r, &attrs);
  d.attrs = (ir_attr_reader){.ctx = &attrs,
                             .get_int = fz_get_int,
                             .get_float = fz_get_float,
                             .get_ints = fz_get_ints,
                             .get_string = fz_get_string,
                             .count = fz_count,
                             .name_at = fz_name_at};
  if (chance(r, 4)) { /* a reader that offers nothing at all */
    d.attrs = (ir_attr_reader){0};
    d.attrs.ctx = &attrs;
  }

  gfx_op op = (gfx_op)-7;
  ir_params params;
  memset(&params, 0xA5, sizeof params);
  ir_params untouched = params;
  gfx_status s = ir_op_parse(&d, &op, &params);
  if (s) {
    CHECK(gfx_status_code(s) == GFX_ERR_NOT_SUPPORTED, "parse error with code %d: %s", gfx_status_code(s),
          gfx_status_message(s));
    char head[65];
    snprintf(head, sizeof head, "%s", name);
    CHECK(strstr(gfx_status_message(s), head), "parse error does not name the node: %s", gfx_status_message(s));
    CHECK(op == (gfx_op)-7 && memcmp(&params, &untouched, sizeof params) == 0, "a refused parse wrote its outputs");
    gfx_status_free(s);
    return;
  }
  /* an accepted Einsum is a MatMul from the parser on (ir_op_parse) */
  const gfx_op expected = intended == GFX_OP_EINSUM ? GFX_OP_MATMUL : intended;
  CHECK(op > GFX_OP_NONE && op < GFX_OP_COUNT && op == expected, "parse gave op %d for '%s'", (int)op, d.op_type);
  CHECK(!modelled(op) || (d.n_inputs >= min_in && d.n_inputs <= max_in && d.n_outputs == 1),
        "parse accepted %s with %d inputs and %d outputs", d.op_type, d.n_inputs, d.n_outputs);
  if (op == GFX_OP_CONV) {
    const ir_conv_params* c = &params.conv;
    CHECK(c->spatial >= 1 && c->spatial <= 3 && c->group >= 1, "conv params: spatial %d group %lld", c->spatial,
          (long long)c->group);
    for (int i = 0; i < c->spatial; i++)
      CHECK(c->strides[i] >= 1 && c->dilations[i] >= 1 && c->pads[i] >= 0 && c->pads[c->spatial + i] >= 0 &&
                c->kernel[i] >= 0,
            "conv params out of range");
  }

  if (!faithful) return;

  /* the output: a new value, or now and then an existing one (refused if it has a producer) */
  int out = -1;
  int existing = chance(r, 10) && g->n_values > 0;
  if (existing) {
    out = u8(r) % g->n_values;
  } else {
    gfx_shape decl;
    int declared = chance(r, 50);
    if (declared) decl = any_shape(r);
    if (declared && (decl.rank < -1 || decl.rank > GFX_MAX_RANK)) declared = 0;
    out = add_value(fg, "v", d.output_dtypes[0], declared ? &decl : NULL);
  }

  const ir_value* ov = &g->values[out];
  int should_fail = ov->producer >= 0 || ov->const_data || ov->graph_input >= 0;
  if (!should_fail && ov->dtype != d.output_dtypes[0]) return; /* described with another type */
  int before = g->n_nodes;
  s = ir_graph_add_node(g, op, name, inputs, d.n_inputs, &out, 1, &params);
  if (should_fail) {
    expect_error(s, "ir_graph_add_node writing a value that has a producer");
    CHECK(g->n_nodes == before, "a refused node was added");
    return;
  }
  CHECK(!s, "ir_graph_add_node failed: %s", gfx_status_message(s));
  /* a selection (NonZero, NonMaxSuppression) is its bounded node and the Slice of its count (ir/dynamic.h) */
  const int added = ir_op_is_selection(op) ? 2 : 1;
  CHECK(g->n_nodes == before + added && g->values[out].producer == before + added - 1, "node not recorded");
}

/* Whether validation must pass, computed here from the graph's plain data. */
static int expect_valid(const ir_graph* g) {
  char ready[MAX_VALUES + 8] = {0};
  for (int v = 0; v < g->n_values; v++) ready[v] = g->values[v].graph_input >= 0 || g->values[v].const_data;
  for (int n = 0; n < g->n_nodes; n++) {
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0 && !ready[g->nodes[n].inputs[i]]) return 0;
    for (int o = 0; o < g->nodes[n].n_outputs; o++) ready[g->nodes[n].outputs[o]] = 1;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (!ready[g->outputs[i]]) return 0;
  for (int v = 0; v < g->n_values; v++)
    if (gfx_dtype_size(g->values[v].dtype) == 0 && (g->values[v].producer >= 0 || g->values[v].graph_input >= 0))
      return 0;
  return 1;
}

/* ---- an independent shape oracle (128-bit arithmetic, no overflow) ---- */

typedef struct big_shape {
  int rank;
  __int128 dims[GFX_MAX_RANK + 2];
} big_shape;

static int oracle_broadcast(const gfx_shape* a, const gfx_shape* b, big_shape* out) {
  int rank = a->rank > b->rank ? a->rank : b->rank;
  out->rank = rank;
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da == db || db == 1)
      out->dims[i] = da;
    else if (da == 1)
      out->dims[i] = db;
    else
      return 0;
  }
  return 1;
}

static __int128 floor_div(__int128 a, __int128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Output shape of a node from its concrete input shapes; 0 where the node is invalid for them, -1 for
 * an op this independent oracle does not model (its inference is checked by its family's unit tests;
 * here it still has to parse, infer and plan without crashing and with clean errors). */
static int oracle(const ir_node* node, const gfx_shape* in, big_shape* out) {
  switch (node->op) {
    case GFX_OP_ADD:
    case GFX_OP_SUB:
    case GFX_OP_MUL:
    case GFX_OP_DIV: return oracle_broadcast(&in[0], &in[1], out);
    case GFX_OP_RELU:
      out->rank = in[0].rank;
      for (int i = 0; i < in[0].rank; i++) out->dims[i] = in[0].dims[i];
      return 1;
    case GFX_OP_MATMUL: {
      const gfx_shape *a = &in[0], *b = &in[1];
      if (a->rank < 2 || b->rank < 2 || a->dims[a->rank - 1] != b->dims[b->rank - 2]) return 0;
      gfx_shape ba = *a, bb = *b;
      ba.rank -= 2, bb.rank -= 2;
      if (!oracle_broadcast(&ba, &bb, out)) return 0;
      out->dims[out->rank] = a->dims[a->rank - 2];
      out->dims[out->rank + 1] = b->dims[b->rank - 1];
      out->rank += 2;
      return 1;
    }
    case GFX_OP_CONV: {
      const ir_conv_params* p = &node->params.conv;
      const gfx_shape *x = &in[0], *w = &in[1];
      if (p->spatial != 2) return -1; /* 1-D runs as 2-D: the family's tests check it */
      if (x->rank != 4 || w->rank != 4 || p->group < 1) return 0;
      __int128 group = p->group, c_in = x->dims[1], c_out = w->dims[0];
      if (c_in % group || c_out % group || (__int128)w->dims[1] * group != c_in) return 0;
      if (node->n_inputs > 2 && in[2].rank >= 0 && (in[2].rank != 1 || in[2].dims[0] != w->dims[0])) return 0;
      out->rank = 4;
      out->dims[0] = x->dims[0];
      out->dims[1] = c_out;
      for (int i = 0; i < 2; i++) {
        __int128 n = x->dims[2 + i], k = w->dims[2 + i], s = p->strides[i], dl = p->dilations[i];
        if (p->kernel[i] && p->kernel[i] != k) return 0;
        __int128 ek = (k - 1) * dl + 1, pb, pe;
        if (p->auto_pad == IR_PAD_VALID) {
          pb = pe = 0;
        } else if (p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER) {
          __int128 o = (n + s - 1) / s, total = (o - 1) * s + ek - n;
          if (total < 0) total = 0;
          pb = p->auto_pad == IR_PAD_SAME_UPPER ? total / 2 : total - total / 2;
          pe = total - pb;
        } else {
          pb = p->pads[i], pe = p->pads[2 + i];
        }
        __int128 span = n + pb + pe - ek;
        if (span < 0) return 0;
        out->dims[2 + i] = floor_div(span, s) + 1;
      }
      return 1;
    }
    default: return -1;
  }
}

/* ---- the run ---- */

typedef struct run_ctx {
  const ir_graph* g;
  const gfx_shape* shapes;
  void* out[MAX_VALUES];
  size_t out_bytes[MAX_VALUES];
  int asked[MAX_VALUES];
  uint64_t seed;
} run_ctx;

static gfx_status output_fn(void* user, int index, const gfx_shape* shape, void** data) {
  run_ctx* c = user;
  CHECK(index >= 0 && index < c->g->n_outputs, "output callback for index %d of %d", index, c->g->n_outputs);
  CHECK(!c->asked[index], "output %d asked for twice in one run", index);
  c->asked[index] = 1;
  const gfx_shape* want = &c->shapes[c->g->outputs[index]];
  CHECK(is_known(shape), "output %d has shape rank %d with a negative dim", index, shape->rank);
  CHECK(gfx_shape_equal(shape, want), "output %d shape differs from the inferred one", index);
  int ok = 0;
  size_t bytes = gfx_shape_bytes(shape, c->g->values[c->g->outputs[index]].dtype, &ok);
  CHECK(ok, "output %d has no size", index);
  c->out[index] = malloc(bytes ? bytes : 1);
  if (!c->out[index]) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "fuzz output");
  fill(c->out[index], bytes, c->seed + (uint64_t)index); /* garbage the run must overwrite */
  c->out_bytes[index] = bytes;
  *data = c->out[index];
  return NULL;
}

static void free_outputs(run_ctx* c) {
  for (int i = 0; i < MAX_VALUES; i++) free(c->out[i]);
  memset(c->out, 0, sizeof c->out);
  memset(c->asked, 0, sizeof c->asked);
}

static double node_flops(const ir_node* node, const gfx_shape* shapes) {
  const gfx_shape* o = &shapes[node->outputs[0]];
  double n = 1;
  for (int d = 0; d < o->rank; d++) n *= (double)o->dims[d];
  /* the reference kernels' loop trip counts, empty inner loops included */
  if (node->op == GFX_OP_MATMUL) {
    const gfx_shape* a = &shapes[node->inputs[0]];
    n *= 1.0 + (double)a->dims[a->rank - 1];
  } else if (node->op == GFX_OP_CONV) {
    const gfx_shape* w = &shapes[node->inputs[1]];
    n *= (double)w->dims[1] * (1.0 + (double)w->dims[2] * (1.0 + (double)w->dims[3]));
  }
  return n;
}

/* Runs the graph (ownership passes to the model) twice and compares. */
/* The graph that ran, through ir_fuse (the fusions every backend's compile applies): it must stay
 * valid, infer the same output shapes, compile and run on the same inputs. Its values are not
 * compared: a fused kernel rounds differently, and random data reaches every corner of float. */
static void run_fused(ir_graph* fused, const gfx_tensor* inputs, const gfx_shape* in_shapes, const run_ctx* plain,
                      uint64_t seed) {
  gfx_status s = ir_fuse(fused);
  CHECK(!s, "ir_fuse failed on a graph that ran: %s", gfx_status_message(s));
  s = ir_graph_validate(fused);
  CHECK(!s, "ir_fuse left a graph that does not validate: %s", gfx_status_message(s));
  gfx_shape* shapes = calloc((size_t)fused->n_values + 1, sizeof *shapes);
  CHECK(shapes, "out of memory for the fused graph's shapes");
  s = ir_infer_shapes(fused, in_shapes, shapes);
  CHECK(!s, "the fused graph's shapes could not be inferred: %s", gfx_status_message(s));
  CHECK(fused->n_outputs == plain->g->n_outputs, "ir_fuse changed the output count");
  for (int o = 0; o < fused->n_outputs; o++)
    CHECK(gfx_shape_equal(&shapes[fused->outputs[o]], &plain->shapes[plain->g->outputs[o]]) &&
              fused->values[fused->outputs[o]].dtype == plain->g->values[plain->g->outputs[o]].dtype,
          "ir_fuse changed output %d's shape or type", o);
  gfx_model* m = NULL;
  s = gfx_model_create(gfx_reference_device(), fused, &m); /* takes fused */
  CHECK(!s, "the fused graph did not compile: %s", gfx_status_message(s));
  run_ctx c;
  memset(&c, 0, sizeof c);
  c.g = gfx_model_graph(m);
  c.shapes = shapes;
  c.seed = seed ^ 0xf00d;
  s = gfx_model_run(m, NULL, inputs, output_fn, &c);
  CHECK(!s, "the fused graph failed to run where the graph ran: %s", gfx_status_message(s));
  for (int o = 0; o < c.g->n_outputs; o++)
    CHECK(c.asked[o] && c.out_bytes[o] == plain->out_bytes[o], "fused output %d was not written in full", o);
  free_outputs(&c);
  gfx_model_free(m);
  free(shapes);
}

static void run_graph(fuzz_graph* fg, const gfx_shape* in_shapes, const gfx_shape* shapes, uint64_t seed) {
  ir_graph* g = fg->g;
  fg->g = NULL;
  int n_in = g->n_inputs, n_out = g->n_outputs;
  int out_values[MAX_VALUES], relu_out[MAX_VALUES];
  for (int o = 0; o < n_out; o++) {
    out_values[o] = g->outputs[o];
    int p = g->values[g->outputs[o]].producer;
    relu_out[o] = p >= 0 && g->nodes[p].op == GFX_OP_RELU;
  }
  int out_dtypes[MAX_VALUES];
  for (int o = 0; o < n_out; o++) out_dtypes[o] = g->values[out_values[o]].dtype;
  gfx_tensor inputs[MAX_VALUES];
  memset(inputs, 0, sizeof inputs);
  for (int i = 0; i < n_in; i++) {
    int ok = 0;
    size_t bytes = gfx_shape_bytes(&in_shapes[i], g->values[g->inputs[i]].dtype, &ok);
    inputs[i].data = malloc(bytes ? bytes : 1);
    CHECK(inputs[i].data, "out of memory for an input");
    fill(inputs[i].data, bytes, seed + 100 + (uint64_t)i);
    inputs[i].dtype = g->values[g->inputs[i]].dtype;
    inputs[i].shape = in_shapes[i];
  }

  ir_graph* fused = NULL;
  gfx_status s = ir_graph_clone(g, &fused);
  CHECK(!s, "ir_graph_clone failed: %s", gfx_status_message(s));
  gfx_model* m = NULL;
  s = gfx_model_create(gfx_reference_device(), g, &m); /* takes g */
  CHECK(!s, "gfx_model_create failed on a graph that validated, inferred and planned: %s", gfx_status_message(s));
  run_ctx c1, c2;
  memset(&c1, 0, sizeof c1);
  c1.g = gfx_model_graph(m);
  c1.shapes = shapes;
  c1.seed = seed;
  c2 = c1;
  c2.seed = seed ^ 0x5555;
  s = gfx_model_run(m, NULL, inputs, output_fn, &c1);
  /* random data may hold an index outside its axis (Gather, GatherElements, the scatters): the run
   * must then fail naming it, never read or write out of bounds (ASan watches) */
  const int bad_index = s && gfx_status_code(s) == GFX_ERR_INVALID_ARGUMENT && strstr(gfx_status_message(s), "is outside [");
  CHECK(!s || bad_index, "a graph that validated, inferred and planned failed to run: %s", gfx_status_message(s));
  gfx_status_free(s);
  if (!bad_index) {
    for (int o = 0; o < n_out; o++) CHECK(c1.asked[o], "output %d was never asked for", o);
    s = gfx_model_run(m, NULL, inputs, output_fn, &c2);
    CHECK(!s, "the second run failed where the first succeeded: %s", gfx_status_message(s));
    for (int o = 0; o < n_out; o++) {
      CHECK(c1.out_bytes[o] == c2.out_bytes[o] && memcmp(c1.out[o], c2.out[o], c1.out_bytes[o]) == 0,
            "output %d differs between two runs of the same inputs", o);
      if (relu_out[o] && out_dtypes[o] == GFX_DTYPE_F32)
        for (size_t e = 0; e < c1.out_bytes[o] / 4; e++) {
          float f;
          memcpy(&f, (char*)c1.out[o] + 4 * e, 4);
          CHECK(!(f < 0.0f), "Relu output %d element %zu is %g", o, e, (double)f);
        }
    }
    gfx_model_stats st;
    gfx_model_get_stats(m, &st);
    CHECK(st.signatures == 1, "%d shape signatures after two runs of one shape", st.signatures);
    CHECK(st.workspaces >= 1, "no workspace after a run");
    run_fused(fused, inputs, in_shapes, &c1, seed);
  } else {
    ir_graph_free(fused);
  }
  free_outputs(&c1);
  free_outputs(&c2);
  gfx_model_free(m);
  for (int i = 0; i < n_in; i++) free(inputs[i].data);
}

/* ---- the target ---- */

/* FUZZ_IR_DUMP=1 prints each graph: for reading a reproducer. */
static void dump(const ir_graph* g, const gfx_shape* in_shapes, const char* stage) {
  static int on = -1;
  if (on < 0) on = getenv("FUZZ_IR_DUMP") && getenv("FUZZ_IR_DUMP")[0] == '1';
  if (!on) return;
  char b[160];
  fprintf(stderr, "---- %s: %d values, %d nodes\n", stage, g->n_values, g->n_nodes);
  for (int v = 0; v < g->n_values; v++) {
    const ir_value* val = &g->values[v];
    fprintf(stderr, "  value %d '%.40s' %s %s%s%s", v, val->name, gfx_dtype_name(val->dtype),
            val->shape.rank >= 0 ? gfx_shape_str(&val->shape, b, sizeof b) : "[rank ?]",
            val->const_data ? " const" : "", val->graph_output >= 0 ? " output" : "");
    if (val->graph_input >= 0 && in_shapes)
      fprintf(stderr, " input, given %s", gfx_shape_str(&in_shapes[val->graph_input], b, sizeof b));
    fprintf(stderr, "\n");
  }
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    fprintf(stderr, "  node %d '%.40s' %s in", n, node->name, ir_op_name(node->op));
    for (int i = 0; i < node->n_inputs; i++) fprintf(stderr, " %d", node->inputs[i]);
    fprintf(stderr, " out %d", node->outputs[0]);
    if (node->op == GFX_OP_CONV) {
      const ir_conv_params* c = &node->params.conv;
      fprintf(stderr,
              " group %lld kernel %lld,%lld strides %lld,%lld dilations %lld,%lld pads %lld,%lld,%lld,%lld auto_pad %d",
              (long long)c->group, (long long)c->kernel[0], (long long)c->kernel[1], (long long)c->strides[0],
              (long long)c->strides[1], (long long)c->dilations[0], (long long)c->dilations[1], (long long)c->pads[0],
              (long long)c->pads[1], (long long)c->pads[2], (long long)c->pads[3], (int)c->auto_pad);
    }
    fprintf(stderr, "\n");
  }
}

static void check_plan(const ir_graph* g, const gfx_shape* shapes, const ir_plan* plan, size_t alignment) {
  size_t a = alignment ? alignment : 256;
  int last_use[MAX_VALUES];
  CHECK(plan->n_values == g->n_values, "plan for %d of %d values", plan->n_values, g->n_values);
  for (int v = 0; v < g->n_values; v++) last_use[v] = g->values[v].producer;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0 && n > last_use[g->nodes[n].inputs[i]]) last_use[g->nodes[n].inputs[i]] = n;
  /* a view's output shares its input's memory (ir_op_is_view): it must be exactly that; a Split's
   * outputs may be consecutive, 16-byte aligned pieces of its input, in order; and the memory's
   * owner (root) must stay live until the last reader of any view of it */
  int root[MAX_VALUES];
  for (int v = 0; v < g->n_values; v++) root[v] = v;
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    size_t piece_at = 0;
    for (int o = 0; o < node->n_outputs; o++) {
      const int out = node->outputs[o];
      if (out < 0) continue;
      if (plan->alias_of[out] < 0) {
        CHECK(node->op != GFX_OP_SPLIT || o == 0 || plan->alias_of[node->outputs[0]] < 0,
              "Split output '%s' is not a view though output 0 is", g->values[out].name);
        continue;
      }
      if (node->op == GFX_OP_SPLIT) {
        CHECK(node->inputs[0] == plan->alias_of[out] && plan->alias_offset[out] == piece_at && piece_at % 16 == 0 &&
                  piece_at + plan->sizes[out] <= plan->sizes[node->inputs[0]],
              "Split output '%s' is a view of '%s' at %zu, expected its piece at %zu", g->values[out].name,
              g->values[plan->alias_of[out]].name, plan->alias_offset[out], piece_at);
        piece_at += plan->sizes[out];
      } else {
        CHECK(o == 0 && ir_op_is_view(node->op) && node->n_inputs >= 1 && node->inputs[0] == plan->alias_of[out] &&
                  plan->sizes[out] == plan->sizes[node->inputs[0]] && plan->alias_offset[out] == 0,
              "value '%s' aliases '%s' without being its view", g->values[out].name,
              g->values[plan->alias_of[out]].name);
      }
      root[out] = root[node->inputs[0]];
    }
    if (node->op == GFX_OP_SPLIT && node->n_outputs > 0 && node->outputs[0] >= 0 && plan->alias_of[node->outputs[0]] >= 0)
      CHECK(piece_at == plan->sizes[node->inputs[0]], "Split views cover %zu of %zu bytes", piece_at,
            plan->sizes[node->inputs[0]]);
  }
  for (int v = 0; v < g->n_values; v++)
    if (root[v] != v && last_use[v] > last_use[root[v]]) last_use[root[v]] = last_use[v];
  CHECK(plan->workspace_bytes % a == 0, "workspace of %zu bytes, alignment %zu", plan->workspace_bytes, a);
  CHECK(plan->workspace_bytes <= plan->sum_bytes, "workspace %zu > unshared sum %zu", plan->workspace_bytes,
        plan->sum_bytes);
  for (int v = 0; v < g->n_values; v++) {
    const ir_value* val = &g->values[v];
    int ok = 0;
    size_t bytes = gfx_shape_bytes(&shapes[v], val->dtype, &ok);
    if (!ok && val->producer < 0 && val->graph_input < 0 && !val->const_data) {
      /* a value nothing produces and nobody gives: no shape, no bytes, no place */
      CHECK(plan->sizes[v] == 0 && plan->offsets[v] == IR_PLAN_NO_OFFSET, "dangling value '%s' was planned",
            val->name);
      continue;
    }
    CHECK(ok && plan->sizes[v] == bytes, "value '%s': planned %zu bytes, its shape needs %zu", val->name,
          plan->sizes[v], bytes);
    int in_ws = val->producer >= 0 && val->graph_output < 0 && plan->alias_of[v] < 0;
    CHECK(in_ws == (plan->offsets[v] != IR_PLAN_NO_OFFSET), "value '%s' %s a workspace offset", val->name,
          in_ws ? "lacks" : "has");
    if (!in_ws) continue;
    CHECK(plan->offsets[v] % a == 0, "value '%s' at unaligned offset %zu", val->name, plan->offsets[v]);
    CHECK(plan->offsets[v] <= plan->workspace_bytes && bytes <= plan->workspace_bytes - plan->offsets[v],
          "value '%s' [%zu, +%zu) runs past the %zu-byte workspace", val->name, plan->offsets[v], bytes,
          plan->workspace_bytes);
    for (int u = 0; u < v; u++) {
      const ir_value* uv = &g->values[u];
      if (!(uv->producer >= 0 && uv->graph_output < 0) || plan->alias_of[u] >= 0) continue;
      int live_together = val->producer <= last_use[u] && uv->producer <= last_use[v];
      size_t ub = plan->sizes[u];
      int overlap =
          bytes && ub && plan->offsets[v] < plan->offsets[u] + ub && plan->offsets[u] < plan->offsets[v] + bytes;
      CHECK(!(live_together && overlap),
            "values '%s' (nodes %d..%d, [%zu,+%zu)) and '%s' (nodes %d..%d, [%zu,+%zu)) are live together and overlap",
            val->name, val->producer, last_use[v], plan->offsets[v], bytes, uv->name, uv->producer, last_use[u],
            plan->offsets[u], ub);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reader rd = {data, size, 0};
  reader* r = &rd;
  fuzz_graph fg = {.g = ir_graph_new()};
  CHECK(fg.g, "ir_graph_new");
  ir_graph* g = fg.g;

  /* graph inputs */
  int n_inputs = 1 + u8(r) % 4;
  for (int i = 0; i < n_inputs; i++) {
    int dtype = chance(r, 220) ? GFX_DTYPE_F32 : any_dtype(r);
    gfx_shape decl = any_shape(r);
    int v = add_value(&fg, "x", dtype, chance(r, 20) ? NULL : &decl);
    if (v < 0) continue;
    CHECK(!ir_graph_add_input(g, v), "ir_graph_add_input");
    CHECK(g->values[v].graph_input == g->n_inputs - 1, "graph_input index");
  }
  /* constants: right size (copied) or wrong size (refused, nothing changes) */
  int n_consts = u8(r) % 4;
  for (int i = 0; i < n_consts; i++) {
    int dtype = chance(r, 220) ? GFX_DTYPE_F32 : any_dtype(r);
    gfx_shape shape = {.rank = u8(r) % 5};
    for (int d = 0; d < shape.rank; d++) shape.dims[d] = chance(r, 240) ? 1 + u8(r) % 4 : any_dim(r);
    int v = add_value(&fg, "c", dtype, &shape);
    if (v < 0) continue;
    int64_t bytes = value_bytes(&shape, dtype);
    int wrong = chance(r, 20);
    if (bytes >= 0 && bytes <= 65536 && !wrong) {
      void* buf = malloc(bytes ? (size_t)bytes : 1);
      CHECK(buf, "out of memory");
      fill(buf, (size_t)bytes, (uint64_t)v);
      gfx_status s = ir_graph_set_constant(g, v, bytes ? buf : NULL, (size_t)bytes);
      CHECK(!s, "set_constant of %lld bytes: %s", (long long)bytes, gfx_status_message(s));
      CHECK(g->values[v].const_data && g->values[v].const_bytes == (size_t)bytes, "constant not recorded");
      CHECK(bytes == 0 || memcmp(g->values[v].const_data, buf, (size_t)bytes) == 0, "constant not copied");
      free(buf);
    } else {
      size_t claimed = bytes >= 0 ? (size_t)bytes + 1 + u8(r) % 7 : (size_t)u8(r);
      if (bytes < 0 && (claimed == 0)) claimed = 1;
      uint8_t small[16] = {0};
      gfx_status s = ir_graph_set_constant(g, v, claimed <= sizeof small ? small : NULL, claimed);
      if (bytes < 0 || (size_t)bytes != claimed) {
        expect_error(s, "set_constant with a wrong size");
        CHECK(!g->values[v].const_data, "a refused constant was recorded");
      } else {
        gfx_status_free(s);
      }
    }
  }
  /* a value nothing produces, now and then */
  if (chance(r, 20)) {
    gfx_shape s4 = {.rank = 1, .dims = {4}};
    if (add_value(&fg, "dangling", GFX_DTYPE_F32, chance(r, 128) ? &s4 : NULL) >= 0) fg.n_dangling++;
  }

  int n_nodes = 1 + u8(r) % MAX_NODES;
  for (int k = 0; k < n_nodes && g->n_values < MAX_VALUES - 2; k++) add_fuzzed_node(r, &fg, k);

  /* graph outputs: mostly what the last nodes produce, now and then anything; no duplicates */
  int n_outputs = 1 + u8(r) % 3;
  for (int o = 0; o < n_outputs && g->n_values > 0; o++) {
    int v;
    if (chance(r, 200) && g->n_nodes > 0) {
      int back = u8(r) % (g->n_nodes < 3 ? g->n_nodes : 3);
      v = g->nodes[g->n_nodes - 1 - back].outputs[0];
    } else {
      v = u8(r) % g->n_values;
    }
    if (g->values[v].graph_output >= 0) continue;
    CHECK(!ir_graph_add_output(g, v), "ir_graph_add_output");
  }

  dump(g, NULL, "built");
  int valid = expect_valid(g);
  gfx_status s = ir_graph_validate(g);
  if (!valid) {
    expect_error(s, "ir_graph_validate of an invalid graph");
    ir_graph_free(g);
    return 0;
  }
  CHECK(!s, "ir_graph_validate refused a valid graph: %s", gfx_status_message(s));

  /* concrete input shapes: the declared ones with dynamic dims filled, or now and then anything */
  gfx_shape in_shapes[MAX_VALUES];
  for (int i = 0; i < g->n_inputs; i++) {
    const gfx_shape* decl = &g->values[g->inputs[i]].shape;
    gfx_shape c;
    memset(&c, 0, sizeof c);
    if (decl->rank >= 0 && chance(r, 235)) {
      c = *decl;
      for (int d = 0; d < c.rank; d++)
        if (c.dims[d] < 0) c.dims[d] = run_dim(r);
    } else {
      c.rank = decl->rank >= 0 ? decl->rank : u8(r) % 5;
      if (chance(r, 10)) c.rank = u8(r) % (GFX_MAX_RANK + 1);
      for (int d = 0; d < c.rank; d++) c.dims[d] = chance(r, 230) ? run_dim(r) : any_dim(r);
    }
    in_shapes[i] = c;
  }
  gfx_shape shapes[MAX_VALUES];
  memset(shapes, 0, sizeof shapes);
  dump(g, in_shapes, "inferring");
  s = ir_infer_shapes(g, in_shapes, shapes);
  /* a graph whose shapes depend on values read back during a Run (TopK's computed k, a selection's
   * count) has no shapes before it runs: one clean error here (the executor's stages run it) */
  int staged = 0;
  for (int n = 0; n < g->n_nodes; n++) staged |= ir_node_value_inputs(&g->nodes[n]) != 0;
  CHECK(!staged || s, "shapes inferred without the values a node needs");
  if (s) {
    expect_error(s, "ir_infer_shapes");
    ir_graph_free(g);
    return 0;
  }
  for (int i = 0; i < g->n_inputs; i++)
    CHECK(gfx_shape_equal(&shapes[g->inputs[i]], &in_shapes[i]), "graph input %d lost its shape", i);
  for (int n = 0; n < g->n_nodes; n++) {
    const ir_node* node = &g->nodes[n];
    const ir_value* ov = &g->values[node->outputs[0]];
    const gfx_shape* got = &shapes[node->outputs[0]];
    CHECK(is_known(got), "node '%.40s' (%s): inferred output '%s' has rank %d or a negative dim", node->name,
          ir_op_name(node->op), ov->name, got->rank);
    gfx_shape in[IR_MAX_IO];
    for (int i = 0; i < node->n_inputs; i++)
      in[i] = node->inputs[i] >= 0 ? shapes[node->inputs[i]] : (gfx_shape){.rank = -1};
    big_shape want;
    const int modelled = oracle(node, in, &want);
    if (modelled < 0) continue;
    CHECK(modelled, "node '%.40s' (%s): shapes inferred for inputs the op cannot take", node->name,
          ir_op_name(node->op));
    CHECK(want.rank == got->rank, "node '%.40s': inferred rank %d, expected %d", node->name, got->rank, want.rank);
    for (int d = 0; d < got->rank; d++)
      CHECK(want.dims[d] == got->dims[d], "node '%.40s' (%s): output dim %d inferred as %lld, expected %lld",
            node->name, ir_op_name(node->op), d, (long long)got->dims[d], (long long)want.dims[d]);
    if (ov->shape.rank >= 0) CHECK(ov->shape.rank == got->rank, "declared rank ignored");
  }

  static const size_t alignments[] = {0, 1, 3, 8, 64, 256, 4096};
  size_t alignment = alignments[u8(r) % 7];
  ir_plan plan;
  s = ir_plan_memory(g, shapes, alignment, &plan);
  if (s) {
    expect_error(s, "ir_plan_memory");
    CHECK(!plan.offsets && !plan.sizes, "a failed plan kept its arrays");
    ir_graph_free(g);
    return 0;
  }
  check_plan(g, shapes, &plan, alignment);
  ir_plan_free(&plan);
  /* and the plan the executor will make: with the reference backend's alignment */
  size_t ref_alignment = gfx_backend_reference()->alignment;
  if (ref_alignment != alignment) {
    s = ir_plan_memory(g, shapes, ref_alignment, &plan);
    int huge = 0; /* near a size limit, another alignment may tip a value over it */
    for (int v = 0; v < g->n_values; v++) {
      int64_t b = value_bytes(&shapes[v], g->values[v].dtype);
      huge |= b < 0 || b > ((int64_t)1 << 40);
    }
    if (s && huge) {
      expect_error(s, "ir_plan_memory with the backend's alignment");
      ir_graph_free(g);
      return 0;
    }
    CHECK(!s, "ir_plan_memory failed with alignment %zu after succeeding with %zu: %s", ref_alignment, alignment,
          gfx_status_message(s));
    check_plan(g, shapes, &plan, ref_alignment);
    ir_plan_free(&plan);
  }

  /* run small graphs */
  double total = 0, flops = 0;
  int small = 1;
  for (int v = 0; v < g->n_values && small; v++) {
    int64_t b = value_bytes(&shapes[v], g->values[v].dtype);
    if (b < 0) small = 0; /* beyond 2^62 bytes (the plan accepted every size) */
    total += (double)b;
  }
  for (int n = 0; n < g->n_nodes; n++) flops += node_flops(&g->nodes[n], shapes);
  small = small && total <= (double)RUN_BYTES_LIMIT && flops <= RUN_FLOPS_LIMIT;
  if (small && !chance(r, 8)) {
    run_graph(&fg, in_shapes, shapes, (uint64_t)size * 2654435761u);
  } else {
    ir_graph_free(g);
  }
  return 0;
}

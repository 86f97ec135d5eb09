/* gfxep — every op family of the op table on one backend against the reference backend (the
 * oracle), in the manner of ggml's test-backend-ops: seeded random data and shapes, broadcast
 * patterns, the kernels' fast paths (contiguous, scalar, per-channel and last-dim broadcasts, rows
 * that are no multiple of a vector, views one element off alignment), the reduction, normalization
 * and softmax row strategies (short rows, one group per row, few long rows split through scratch),
 * convolutions and matrix products, the data movement ops (Pad in every mode, Slice, Concat, Split,
 * Transpose, Tile, Expand, DepthToSpace, SpaceToDepth, nearest Resize) over their 16-byte vector and
 * tile paths and the fallbacks; every output written between guard bytes that must stay untouched.
 *
 *   test_backend_ops [-b BACKEND] [-o OP[,OP...]] [-v]   (default: cuda, every op; -v names each case
 *                                                       on stderr before it runs)
 *
 * OP is an op of the table in its ONNX spelling, or ConvChain for the convolution chains alone (fused
 * Conv pairs, ir/graph.h; -o Conv runs them too). Their cases are counted apart, as ConvChain.
 *
 * Each case first asks the backend's supports_node, as GetCapability does: a case it declines (an
 * element type or feature it has no kernel for; those nodes stay with ONNX Runtime) is counted as
 * declined, never as passed. Tolerances per output type, |got - want| <= atol + rtol * |want|:
 * float32 1e-5 + 1e-4, float16 1e-3 + 2e-3 (11 significant bits), bfloat16 1e-2 + 1.6e-2 (8 bits);
 * integers and bools exactly; NaN must meet NaN and an infinity the same infinity. Ops of the table
 * with no case here are listed as such: test_op_cases covers every op through ONNX Runtime.
 *
 * Prints one JSON line (per op: cases, passed, declined, max abs error) and "N passed, M failed".
 * Exits 0 when every case that ran passed (and at least one ran), 1 otherwise, 77 when the backend
 * has no device. GFXEP_<NAME>_MODULE overrides where a backend module is loaded from.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/registry.h"
#include "backend/wrap.h"
#include "core/half.h"
#include "ir/ops_quant.h"
#include "ir/ops_reduce.h"
#include "ir/resize_geom.h"
#include "ir/shape.h"

#define GUARD 256
#define GUARD_BYTE 0x5A

static uint64_t rng_state = 20261129;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rand_unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }
static int rand_int(int lo, int hi) { return lo + (int)(next_u64() % (uint64_t)(hi - lo + 1)); }

/* Device 0 of the backend called name (from the registry; GFXEP_<NAME>_MODULE names its module), or
 * NULL with the reason printed. */
static gfx_dev* open_backend(const char* name) {
  const char* why = NULL;
  const gfx_backend* be = gfx_registry_find(name, &why);
  if (!be) {
    fprintf(stderr, "# %s backend: %s\n", name, why);
    return NULL;
  }
  gfx_dev* dev = NULL;
  gfx_status s = be->device_count() > 0 ? be->device_get(0, &dev) : NULL;
  if (s) fprintf(stderr, "# %s backend: %s\n", name, gfx_status_message(s));
  gfx_status_free(s);
  return dev;
}

/* Random element i of dtype: floats in [-scale, scale) (positive when `positive`) moved by offset
 * (multiples of `grid` when it is > 0), integers in [-50, 50], bools half true. */
static void fill(void* data, int dtype, int64_t n, double scale, int positive, double offset, double grid) {
  for (int64_t i = 0; i < n; i++) {
    double v = rand_unit() * scale;
    if (positive) v = fabs(v) + 0.01;
    v += offset;
    if (grid > 0) v = nearbyint(v / grid) * grid;
    switch (dtype) {
      case GFX_DTYPE_F32: ((float*)data)[i] = (float)v; break;
      case GFX_DTYPE_F16: ((uint16_t*)data)[i] = gfx_float_to_half((float)v); break;
      case GFX_DTYPE_BF16: ((uint16_t*)data)[i] = gfx_float_to_bf16((float)v); break;
      case GFX_DTYPE_I32: ((int32_t*)data)[i] = (int32_t)(next_u64() % 101) - 50; break;
      case GFX_DTYPE_I64: ((int64_t*)data)[i] = (int64_t)(next_u64() % 101) - 50; break;
      case GFX_DTYPE_BOOL: ((uint8_t*)data)[i] = next_u64() & 1; break;
      default: break;
    }
  }
}

/* Integers in [lo, hi] (int32 or int64 tensors). */
static void fill_ints(void* data, int dtype, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = 0; i < n; i++) {
    const int64_t v = lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1));
    if (dtype == GFX_DTYPE_I64) ((int64_t*)data)[i] = v;
    if (dtype == GFX_DTYPE_I32) ((int32_t*)data)[i] = (int32_t)v;
    if (dtype == GFX_DTYPE_I8) ((int8_t*)data)[i] = (int8_t)v;
    if (dtype == GFX_DTYPE_U8) ((uint8_t*)data)[i] = (uint8_t)v;
  }
}

/* n distinct indices of [0, dim) (n <= dim), every other one as its negative equivalent. */
static void fill_distinct(void* data, int dtype, int64_t n, int64_t dim) {
  int64_t* perm = malloc(sizeof(int64_t) * (size_t)dim);
  for (int64_t i = 0; i < dim; i++) perm[i] = i;
  for (int64_t i = dim - 1; i > 0; i--) {
    const int64_t j = (int64_t)(next_u64() % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int64_t i = 0; i < n && i < dim; i++) {
    const int64_t v = i % 2 ? perm[i] - dim : perm[i];
    if (dtype == GFX_DTYPE_I64) ((int64_t*)data)[i] = v;
    if (dtype == GFX_DTYPE_I32) ((int32_t*)data)[i] = (int32_t)v;
  }
  free(perm);
}

static double value_at(const void* data, int dtype, int64_t i) {
  switch (dtype) {
    case GFX_DTYPE_F32: return ((const float*)data)[i];
    case GFX_DTYPE_F16: return gfx_half_to_float(((const uint16_t*)data)[i]);
    case GFX_DTYPE_BF16: return gfx_bf16_to_float(((const uint16_t*)data)[i]);
    case GFX_DTYPE_I32: return ((const int32_t*)data)[i];
    case GFX_DTYPE_I64: return (double)((const int64_t*)data)[i];
    case GFX_DTYPE_BOOL: return ((const uint8_t*)data)[i];
    case GFX_DTYPE_I8: return ((const int8_t*)data)[i];
    case GFX_DTYPE_U8: return ((const uint8_t*)data)[i];
    default: return 0;
  }
}

/* atol, rtol per output type: float16 has 11 significant bits, bfloat16 8; a float computation
 * rounded once may land one unit away from the double one. */
static void tolerance(int dtype, double* atol, double* rtol) {
  *atol = dtype == GFX_DTYPE_F32 ? 1e-5 : dtype == GFX_DTYPE_F16 ? 1e-3 : dtype == GFX_DTYPE_BF16 ? 1e-2 : 0;
  *rtol = dtype == GFX_DTYPE_F32 ? 1e-4 : dtype == GFX_DTYPE_F16 ? 2e-3 : dtype == GFX_DTYPE_BF16 ? 1.6e-2 : 0;
}

typedef struct ew_case {
  ir_node node;
  int n_in;
  int in_dtype[IR_MAX_IO];
  gfx_shape in[IR_MAX_IO]; /* rank -1: an optional input left out (value -1, no tensor) */
  int out_dtype;
  double scale;
  double in_scale[IR_MAX_IO]; /* > 0: float input i is drawn from [-in_scale[i], in_scale[i]) instead */
  int positive; /* inputs > 0 (Log, Sqrt, Pow's base) */
  double grid;  /* > 0: float inputs are multiples of it (exact halves for Round, ties for ArgMax) */
  double offset; /* added to float inputs (ReduceProd near 1, ReduceLogSumExp far from 0) */
  int misalign; /* inputs and output one element past an aligned address */
  /* integer input i is drawn from [int_lo[i], int_hi[i]] when ranged[i] (indices, divisors) */
  int ranged[IR_MAX_IO];
  int64_t int_lo[IR_MAX_IO], int_hi[IR_MAX_IO];
  /* distinct indices instead: input i holds distinct values of [0, int_hi[i]], every other one
   * written negative (v - (int_hi[i] + 1), the same entry counted from the end) */
  int distinct[IR_MAX_IO];
  int n_out;       /* outputs (0 means 1) */
  /* > 0: the absolute tolerance is this many units of the type at magnitude 1 instead of atol, for
   * results rounded twice where the first rounding is at a larger magnitude than the result */
  double atol_units;
  int stats_dtype; /* the type of outputs 1.. (LayerNormalization's Mean and InvStdDev) */
  char label[200]; /* "" for the one built from the op, types and shapes */
} ew_case;

typedef struct op_tally {
  int run, passed, declined;
  double max_abs;
  char declined_why[200]; /* the first reason */
} op_tally;

/* per op, and one more for the convolution chains (Conv nodes with params.conv.chain), counted apart
 * so that what a backend makes of them shows on its own line */
#define CHAIN_TALLY GFX_OP_COUNT
#define CHAIN_NAME "ConvChain"
static op_tally tally[GFX_OP_COUNT + 1];
static int verbose; /* -v: each case's label on stderr before it runs */
static int wanted[GFX_OP_COUNT + 1]; /* -o: the ops to run (ConvChain: the chains); all when none is named */
static int any_wanted;

static int is_chain(const ew_case* c) { return c->node.op == GFX_OP_CONV && c->node.params.conv.chain; }
static int tally_of(const ew_case* c) { return is_chain(c) ? CHAIN_TALLY : (int)c->node.op; }
static const char* tally_name(int k) { return k == CHAIN_TALLY ? CHAIN_NAME : ir_op_name((gfx_op)k); }

/* every infer function the op table names, declared here as ir/shape.c does, since the families
 * declare theirs in no header */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer_fn, summary) \
  gfx_status infer_fn(const ir_node* node, const gfx_shape* in, gfx_shape* out);
#include "ir/ops.def"
#undef GFX_OP

static const ir_infer_fn infer[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer_fn, summary) [GFX_OP_##id] = infer_fn,
#include "ir/ops.def"
#undef GFX_OP
};

/* Whether the backend runs the node, asked as GetCapability asks: its op, parameters, declared
 * element types and shapes. */
static gfx_status supported(gfx_dev* gpu, const ew_case* c) {
  ir_node_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.op_type = ir_op_name(c->node.op);
  desc.domain = "";
  desc.name = c->node.name;
  desc.n_inputs = c->n_in;
  desc.n_outputs = c->n_out > 0 ? c->n_out : 1;
  for (int i = 0; i < c->n_in; i++) {
    desc.input_dtypes[i] = c->in[i].rank < 0 ? GFX_DTYPE_UNDEFINED : c->in_dtype[i];
    desc.input_shapes[i] = c->in[i];
  }
  for (int o = 0; o < desc.n_outputs; o++) desc.output_dtypes[o] = o == 0 ? c->out_dtype : c->stats_dtype;
  gfx_node_query q = {.op = c->node.op, .params = &c->node.params, .desc = &desc};
  return gfx_backend_supports_node(gpu, &q);
}

/* Output o of a case: its element type (out_dtype for output 0, stats_dtype for the others). */
static int out_type(const ew_case* c, int o) { return o == 0 ? c->out_dtype : c->stats_dtype; }

/* Compares output o of the backend (got, between guard bytes) with the reference's (want). */
static int check_output(const ew_case* c, const char* label, int o, const gfx_shape* shape, const unsigned char* want,
                        const unsigned char* got, size_t lead, size_t bytes, op_tally* t) {
  int ok = 1;
  for (size_t g = 0; g < lead && ok; g++)
    if (got[g] != GUARD_BYTE || (g < GUARD && got[lead + bytes + g] != GUARD_BYTE)) {
      printf("FAIL %s: write outside output %d\n", label, o);
      ok = 0;
    }
  const int dtype = out_type(c, o);
  double atol, rtol;
  tolerance(dtype, &atol, &rtol);
  if (c->atol_units > 0)
    atol = c->atol_units * (dtype == GFX_DTYPE_F16 ? 1.0 / 1024 : dtype == GFX_DTYPE_BF16 ? 1.0 / 128 : 1.0 / (1 << 23));
  int64_t count = gfx_shape_numel(shape), bad = 0;
  for (int64_t e = 0; e < count; e++) {
    double w = value_at(want, dtype, e), g = value_at(got + lead, dtype, e);
    int agree = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs(g - w) <= atol + rtol * fabs(w);
    if (!isnan(w) && !isinf(w) && fabs(g - w) > t->max_abs) t->max_abs = fabs(g - w);
    if (!agree && bad++ < 3) printf("  %s: output %d element %lld: want %.9g got %.9g\n", label, o, (long long)e, w, g);
  }
  if (bad) {
    printf("FAIL %s: %lld elements of output %d differ\n", label, (long long)bad, o);
    ok = 0;
  }
  return ok;
}

static void run_case(gfx_dev* gpu, void* stream, ew_case* c) {
  const gfx_op op = c->node.op;
  /* -o Conv takes the chains too; -o ConvChain the chains alone */
  if (any_wanted && !wanted[op] && !(is_chain(c) && wanted[CHAIN_TALLY])) return;
  op_tally* t = &tally[tally_of(c)];
  gfx_dev* ref = gfx_reference_device();
  gfx_status s = NULL;
  char label[512];
  int ok = 1;
  const int n_out = c->n_out > 0 ? c->n_out : 1;
  if (c->label[0]) {
    snprintf(label, sizeof label, "%s", c->label);
  } else {
    snprintf(label, sizeof label, "%s %s ->%s%s", ir_op_name(op), gfx_dtype_name(c->in_dtype[0]),
             gfx_dtype_name(c->out_dtype), c->misalign ? " misaligned" : "");
    for (int i = 0; i < c->n_in; i++) {
      char b[96];
      snprintf(label + strlen(label), sizeof label - strlen(label), " %s%s%s", gfx_shape_str(&c->in[i], b, sizeof b),
               c->in_dtype[i] != c->in_dtype[0] ? ":" : "", c->in_dtype[i] != c->in_dtype[0] ? gfx_dtype_name(c->in_dtype[i]) : "");
    }
  }
  if (verbose) fprintf(stderr, "case: %s\n", label);
  c->node.n_inputs = c->n_in;
  c->node.n_outputs = n_out;
  c->node.name = "case";
  /* value indices as a graph gives them: every input given, the outputs after them */
  for (int i = 0; i < IR_MAX_IO; i++) c->node.inputs[i] = c->node.outputs[i] = -1;
  for (int i = 0; i < c->n_in; i++) c->node.inputs[i] = c->in[i].rank < 0 ? -1 : i;
  for (int o = 0; o < n_out; o++) c->node.outputs[o] = c->n_in + o;
  if ((s = supported(gpu, c))) {
    if (verbose) fprintf(stderr, "declined: %s\n", gfx_status_message(s));
    if (!t->declined++) snprintf(t->declined_why, sizeof t->declined_why, "%s", gfx_status_message(s));
    gfx_status_free(s);
    return;
  }
  gfx_shape out_shape[IR_MAX_IO];
  if ((s = infer[op](&c->node, c->in, out_shape))) {
    printf("FAIL %s: shape inference: %s\n", label, gfx_status_message(s));
    gfx_status_free(s);
    t->run++;
    return;
  }
  void* host[IR_MAX_IO] = {0};
  void* dev[IR_MAX_IO] = {0};
  gfx_tensor rin[IR_MAX_IO], gin[IR_MAX_IO], rout[IR_MAX_IO], gout[IR_MAX_IO];
  unsigned char* want[IR_MAX_IO] = {0};
  unsigned char* got[IR_MAX_IO] = {0};
  void* dev_out[IR_MAX_IO] = {0};
  void *dev_scratch = NULL, *host_scratch = NULL, *ref_state = NULL, *state = NULL;
  size_t out_bytes[IR_MAX_IO] = {0}, total[IR_MAX_IO] = {0};
  for (int i = 0; i < c->n_in; i++) {
    if (c->in[i].rank < 0) { /* left out: no tensor, as the executor hands it over */
      rin[i] = gin[i] = (gfx_tensor){.data = NULL, .dtype = GFX_DTYPE_UNDEFINED, .shape = c->in[i]};
      continue;
    }
    int okb;
    size_t b = gfx_shape_bytes(&c->in[i], c->in_dtype[i], &okb);
    host[i] = malloc(b + 8);
    /* BatchNorm's variance must be positive */
    fill(host[i], c->in_dtype[i], gfx_shape_numel(&c->in[i]), c->in_scale[i] > 0 ? c->in_scale[i] : c->scale,
         c->positive || (op == GFX_OP_BATCH_NORM && i == 4), c->offset, c->grid);
    if (c->ranged[i]) fill_ints(host[i], c->in_dtype[i], gfx_shape_numel(&c->in[i]), c->int_lo[i], c->int_hi[i]);
    if (c->distinct[i]) fill_distinct(host[i], c->in_dtype[i], gfx_shape_numel(&c->in[i]), c->int_hi[i] + 1);
    const size_t shift = c->misalign ? gfx_dtype_size(c->in_dtype[i]) : 0;
    if ((s = gfx_backend_mem_alloc(gpu, b + 16, &dev[i]))) goto done;
    if (b && (s = gfx_backend_copy(gpu, (char*)dev[i] + shift, host[i], b, GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
    rin[i] = (gfx_tensor){host[i], c->in_dtype[i], c->in[i]};
    gin[i] = (gfx_tensor){(char*)dev[i] + shift, c->in_dtype[i], c->in[i]};
  }
  /* each output starts lead[o] bytes into its buffer, guard bytes on both sides */
  size_t lead[IR_MAX_IO] = {0};
  for (int o = 0; o < n_out; o++) {
    int okb;
    lead[o] = GUARD + (c->misalign ? gfx_dtype_size(out_type(c, o)) : 0);
    out_bytes[o] = gfx_shape_bytes(&out_shape[o], out_type(c, o), &okb);
    total[o] = lead[o] + out_bytes[o] + GUARD;
    want[o] = malloc(out_bytes[o] + 8);
    got[o] = malloc(total[o]);
    rout[o] = (gfx_tensor){want[o], out_type(c, o), out_shape[o]};
  }
  size_t ref_scratch = 0, scratch = 0;
  if ((s = gfx_backend_node_prepare(ref, &c->node, c->in, out_shape, &ref_state, &ref_scratch))) goto done;
  if (ref_scratch) host_scratch = malloc(ref_scratch);
  gfx_exec_ctx rctx = {ref, NULL, host_scratch, ref_scratch};
  if ((s = gfx_backend_node_run(&rctx, &c->node, rin, rout, ref_state))) goto done;
  for (int o = 0; o < n_out; o++) {
    memset(got[o], GUARD_BYTE, total[o]);
    /* the output itself starts as all-ones bytes (NaN in every float type): a kernel that reads its
     * output before writing it, or leaves part of it unwritten, does not meet the reference */
    memset(got[o] + lead[o], 0xFF, out_bytes[o]);
    if ((s = gfx_backend_mem_alloc(gpu, total[o], &dev_out[o]))) goto done;
    if ((s = gfx_backend_copy(gpu, dev_out[o], got[o], total[o], GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
    gout[o] = (gfx_tensor){(char*)dev_out[o] + lead[o], out_type(c, o), out_shape[o]};
  }
  if ((s = gfx_backend_node_prepare(gpu, &c->node, c->in, out_shape, &state, &scratch))) goto done;
  if (scratch && (s = gfx_backend_mem_alloc(gpu, scratch, &dev_scratch))) goto done;
  gfx_exec_ctx gctx = {gpu, stream, dev_scratch, scratch};
  if ((s = gfx_backend_node_run(&gctx, &c->node, gin, gout, state))) goto done;
  if ((s = gfx_backend_stream_sync(gpu, stream))) goto done;
  for (int o = 0; o < n_out; o++) {
    if ((s = gfx_backend_copy(gpu, got[o], dev_out[o], total[o], GFX_COPY_DEVICE_TO_HOST, NULL))) goto done;
    ok &= check_output(c, label, o, &out_shape[o], want[o], got[o], lead[o], out_bytes[o], t);
  }
done:
  if (ref_state) gfx_backend_node_release(ref, ref_state);
  if (state) gfx_backend_node_release(gpu, state);
  for (int o = 0; o < n_out; o++) {
    free(want[o]);
    free(got[o]);
    if (dev_out[o]) gfx_backend_mem_free(gpu, dev_out[o]);
  }
  free(host_scratch);
  if (dev_scratch) gfx_backend_mem_free(gpu, dev_scratch);
  for (int i = 0; i < c->n_in; i++) {
    free(host[i]);
    if (dev[i]) gfx_backend_mem_free(gpu, dev[i]);
  }
  if (s) {
    printf("FAIL %s: %s\n", label, gfx_status_message(s));
    gfx_status_free(s);
    ok = 0;
  }
  t->run++;
  t->passed += ok;
}

static ew_case case_of(gfx_op op, int dtype, int n_in, const gfx_shape* shapes) {
  ew_case c;
  memset(&c, 0, sizeof c);
  c.node.op = op;
  for (int i = 0; i < IR_MAX_IO; i++) c.node.inputs[i] = c.node.outputs[i] = -1;
  c.n_in = n_in;
  for (int i = 0; i < n_in; i++) {
    c.in_dtype[i] = dtype;
    if (shapes) c.in[i] = shapes[i];
  }
  c.out_dtype = dtype;
  c.scale = 4.0;
  return c;
}

static gfx_shape shape(int rank, const int64_t* dims) {
  gfx_shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}
#define SHAPE(...) shape((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static const int float_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16};
static const int all_math_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32, GFX_DTYPE_I64};

/* Random broadcast partner of a: each dim kept or set to 1, leading dims maybe dropped. */
static gfx_shape broadcast_partner(const gfx_shape* a) {
  gfx_shape b = *a;
  for (int i = 0; i < b.rank; i++)
    if (rand_int(0, 2) == 0) b.dims[i] = 1;
  int drop = rand_int(0, b.rank);
  if (rand_int(0, 1)) {
    memmove(b.dims, b.dims + drop, sizeof(int64_t) * (size_t)(b.rank - drop));
    b.rank -= drop;
  }
  return b;
}

static void random_broadcast_cases(gfx_dev* gpu, void* stream, gfx_op op) {
  for (int k = 0; k < 40; k++) {
    ew_case c = case_of(op, GFX_DTYPE_F32, 2, NULL);
    c.scale = 1.0;
    int rank = rand_int(0, 5);
    int64_t d[8];
    for (int i = 0; i < rank; i++) d[i] = rand_int(1, 9);
    if (k == 0) d[0] = 70001, rank = 1; /* many elements: grid-stride loops */
    c.in[0] = shape(rank, d);
    c.in[1] = k % 5 == 0 ? c.in[0] : broadcast_partner(&c.in[0]);
    if (rand_int(0, 1)) {
      gfx_shape tmp = c.in[0];
      c.in[0] = c.in[1];
      c.in[1] = tmp;
    }
    run_case(gpu, stream, &c);
  }
}

static void unary_cases(gfx_dev* gpu, void* stream) {
  static const gfx_op ops[] = {GFX_OP_RELU, GFX_OP_LEAKY_RELU, GFX_OP_SIGMOID, GFX_OP_TANH, GFX_OP_HARD_SIGMOID,
                               GFX_OP_HARD_SWISH, GFX_OP_CLIP, GFX_OP_ELU, GFX_OP_SELU, GFX_OP_GELU, GFX_OP_ERF,
                               GFX_OP_SOFTPLUS, GFX_OP_SQRT, GFX_OP_EXP, GFX_OP_LOG, GFX_OP_NEG, GFX_OP_ABS,
                               GFX_OP_RECIPROCAL, GFX_OP_IDENTITY, GFX_OP_FLOOR, GFX_OP_CEIL, GFX_OP_ROUND,
                               GFX_OP_SIGN, GFX_OP_SIN, GFX_OP_COS, GFX_OP_SOFTSIGN, GFX_OP_MISH, GFX_OP_CELU,
                               GFX_OP_THRESHOLDED_RELU};
  gfx_shape s[1] = {SHAPE(3, 517)};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (int t = 0; t < 5; t++) {
      int dtype = all_math_types[t];
      int int_ok = ops[k] == GFX_OP_NEG || ops[k] == GFX_OP_ABS || ops[k] == GFX_OP_IDENTITY;
      if (t >= 3 && !int_ok) continue;
      ew_case c = case_of(ops[k], dtype, 1, s);
      c.positive = ops[k] == GFX_OP_SQRT || ops[k] == GFX_OP_LOG;
      ir_elementwise_params* p = &c.node.params.elementwise;
      p->alpha = ops[k] == GFX_OP_HARD_SIGMOID ? 0.2f : ops[k] == GFX_OP_SELU ? 1.6732632f : 0.3f;
      p->beta = 0.5f;
      p->gamma = 1.0507010f;
      p->has_min = p->has_max = 1;
      p->min = -1.5f;
      p->max = 0.75f;
      run_case(gpu, stream, &c);
      if (ops[k] == GFX_OP_GELU) {
        p->gelu_tanh = 1;
        run_case(gpu, stream, &c);
      }
      if (ops[k] == GFX_OP_SOFTPLUS || ops[k] == GFX_OP_SIGMOID || ops[k] == GFX_OP_MISH) {
        c.scale = 200.0; /* far out: no overflow */
        run_case(gpu, stream, &c);
      }
      if (ops[k] == GFX_OP_SIN || ops[k] == GFX_OP_COS) {
        c.scale = 3000.0; /* many periods: the argument reduction */
        run_case(gpu, stream, &c);
      }
      if (ops[k] == GFX_OP_FLOOR || ops[k] == GFX_OP_CEIL || ops[k] == GFX_OP_ROUND || ops[k] == GFX_OP_SIGN) {
        c.grid = 0.5; /* integers and exact halves (Round: halves to even), zeros for Sign */
        run_case(gpu, stream, &c);
      }
    }
}

static void broadcast_cases(gfx_dev* gpu, void* stream) {
  static const gfx_op ops[] = {GFX_OP_ADD, GFX_OP_SUB, GFX_OP_MUL, GFX_OP_DIV, GFX_OP_POW, GFX_OP_MIN, GFX_OP_MAX,
                               GFX_OP_SUM, GFX_OP_MEAN, GFX_OP_PRELU, GFX_OP_EQUAL, GFX_OP_GREATER, GFX_OP_LESS,
                               GFX_OP_GREATER_OR_EQUAL, GFX_OP_LESS_OR_EQUAL};
  const gfx_shape pats[][2] = {{SHAPE(4, 33, 17), SHAPE(4, 33, 17)}, {SHAPE(4, 33, 17), SHAPE(17)},
                               {SHAPE(4, 33, 17), SHAPE(1)},         {SHAPE(1), SHAPE(4, 33, 17)},
                               {SHAPE(4, 1, 17), SHAPE(33, 1)},      {SHAPE(2, 3, 4, 5), SHAPE(3, 1, 5)}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (int t = 0; t < 5; t++)
      for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        gfx_op op = ops[k];
        int compare = op == GFX_OP_EQUAL || op == GFX_OP_GREATER || op == GFX_OP_LESS || op == GFX_OP_GREATER_OR_EQUAL ||
                      op == GFX_OP_LESS_OR_EQUAL;
        /* integer Div: parse admits constant divisors without zeros only; the random ones here may
         * hold zeros, which both sides turn into 0 */
        int int_ok = op == GFX_OP_ADD || op == GFX_OP_SUB || op == GFX_OP_MUL || op == GFX_OP_DIV || op == GFX_OP_MIN ||
                     op == GFX_OP_MAX || compare;
        if (t >= 3 && !int_ok) continue;
        if (op == GFX_OP_PRELU && (p == 3 || p == 4)) continue; /* the slope must broadcast to x */
        ew_case c = case_of(op, all_math_types[t], 2, pats[p]);
        if (compare) c.out_dtype = GFX_DTYPE_BOOL;
        c.positive = op == GFX_OP_POW;
        if (op == GFX_OP_POW) c.scale = 2.0;
        run_case(gpu, stream, &c);
      }
  /* Pow with integer exponents; variadic ops with 3 and 8 inputs */
  for (int t = 0; t < 3; t++) {
    ew_case c = case_of(GFX_OP_POW, float_types[t], 2, pats[4]);
    c.in_dtype[1] = GFX_DTYPE_I64;
    c.scale = 1.0;
    run_case(gpu, stream, &c);
    c.in_dtype[1] = GFX_DTYPE_I32;
    run_case(gpu, stream, &c);
  }
  const gfx_shape eight[8] = {SHAPE(2, 3, 40), SHAPE(40), SHAPE(3, 1), SHAPE(1), SHAPE(2, 1, 1),
                              SHAPE(2, 3, 40), SHAPE(1, 40), SHAPE(3, 40)};
  static const gfx_op variadic[] = {GFX_OP_SUM, GFX_OP_MEAN, GFX_OP_MIN, GFX_OP_MAX};
  for (int k = 0; k < 4; k++)
    for (int t = 0; t < 5; t++) {
      if (t >= 3 && (variadic[k] == GFX_OP_SUM || variadic[k] == GFX_OP_MEAN)) continue;
      for (int n = 1; n <= 8; n += n == 1 ? 2 : 5) {
        ew_case c = case_of(variadic[k], all_math_types[t], n, eight);
        run_case(gpu, stream, &c);
      }
    }
}

static void other_cases(gfx_dev* gpu, void* stream) {
  /* Where over every element size */
  static const int where_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
  const gfx_shape ws[3] = {SHAPE(5, 1, 33), SHAPE(7, 1), SHAPE(5, 7, 33)};
  for (int t = 0; t < 4; t++) {
    ew_case c = case_of(GFX_OP_WHERE, where_types[t], 3, ws);
    c.in_dtype[0] = GFX_DTYPE_BOOL;
    run_case(gpu, stream, &c);
  }
  /* Cast between every pair */
  static const int cast_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16,
                                   GFX_DTYPE_I32, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
  const gfx_shape cs[1] = {SHAPE(1000)};
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 6; b++) {
      ew_case c = case_of(GFX_OP_CAST, cast_types[a], 1, cs);
      c.out_dtype = cast_types[b];
      c.scale = 300.0;
      run_case(gpu, stream, &c);
    }
  /* BatchNormalization, rank 2..5 */
  const gfx_shape xs[] = {SHAPE(4, 6), SHAPE(2, 6, 50), SHAPE(2, 6, 9, 11), SHAPE(1, 6, 3, 4, 5)};
  for (int t = 0; t < 3; t++)
    for (int r = 0; r < 4; r++) {
      gfx_shape s[5] = {xs[r], SHAPE(6), SHAPE(6), SHAPE(6), SHAPE(6)};
      ew_case c = case_of(GFX_OP_BATCH_NORM, float_types[t], 5, s);
      c.node.params.elementwise.epsilon = 1e-5f;
      c.scale = 2.0;
      run_case(gpu, stream, &c);
    }
}

/* The row-form fast paths: same shapes (odd sizes leave a tail after the last vector), scalars,
 * per-channel ([N,C,H,W] with [1,C,1,1] or [C,1,1]) and last-dim ([..., K] with [K]) operands,
 * rows that are no multiple of a 16-byte vector, and all of it again one element off alignment. */
static void fast_path_cases(gfx_dev* gpu, void* stream) {
  const gfx_shape pats[][2] = {
      {SHAPE(3, 1001), SHAPE(3, 1001)},          {SHAPE(64, 1024), SHAPE(64, 1024)},
      {SHAPE(2, 16, 24, 40), SHAPE(1, 16, 1, 1)}, {SHAPE(1, 16, 40, 40), SHAPE(16, 1, 1)},
      {SHAPE(1, 16, 1, 1), SHAPE(2, 16, 9, 11)},  {SHAPE(1, 197, 192), SHAPE(192)},
      {SHAPE(5, 7, 100), SHAPE(100)},             {SHAPE(4099), SHAPE(1)},
      {SHAPE(1), SHAPE(3, 1001)},                 {SHAPE(2, 16, 24, 40), SHAPE(2, 1, 24, 40)}};
  static const gfx_op ops[] = {GFX_OP_ADD, GFX_OP_SUB, GFX_OP_MUL, GFX_OP_DIV, GFX_OP_MAX, GFX_OP_POW, GFX_OP_GREATER};
  for (int misalign = 0; misalign < 2; misalign++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      for (int t = 0; t < 5; t++)
        for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
          const gfx_op op = ops[k];
          if (t >= 3 && (op == GFX_OP_DIV || op == GFX_OP_POW)) continue;
          ew_case c = case_of(op, all_math_types[t], 2, pats[p]);
          if (op == GFX_OP_GREATER) c.out_dtype = GFX_DTYPE_BOOL;
          c.positive = op == GFX_OP_POW || op == GFX_OP_DIV;
          if (op == GFX_OP_POW) c.scale = 2.0;
          c.misalign = misalign;
          run_case(gpu, stream, &c);
        }
  /* unary and Cast over contiguous tensors with a tail, aligned and not; and unary over a whole
   * number of 16-byte groups (the element-wise kernels' grouped path, aligned; misaligned, per element) */
  const gfx_shape u[1] = {SHAPE(3, 1001)}, whole[1] = {SHAPE(5, 1024)};
  for (int misalign = 0; misalign < 2; misalign++) {
    for (int t = 0; t < 5; t++)
      for (int w = 0; w < 2; w++) {
        ew_case c = case_of(t >= 3 ? GFX_OP_NEG : GFX_OP_RELU, all_math_types[t], 1, w ? whole : u);
        c.misalign = misalign;
        run_case(gpu, stream, &c);
        if (t < 3) {
          c.node.op = GFX_OP_SIGMOID;
          run_case(gpu, stream, &c);
        }
      }
    static const int cast_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16,
                                     GFX_DTYPE_I32, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 6; b++) {
        ew_case c = case_of(GFX_OP_CAST, cast_types[a], 1, u);
        c.out_dtype = cast_types[b];
        c.scale = 300.0;
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
    /* Where: same shapes, per-channel condition, scalar branch */
    static const int where_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
    const gfx_shape wp[][3] = {{SHAPE(3, 1001), SHAPE(3, 1001), SHAPE(3, 1001)},
                               {SHAPE(1, 16, 1, 1), SHAPE(2, 16, 8, 40), SHAPE(1)},
                               {SHAPE(5, 192), SHAPE(192), SHAPE(5, 192)}};
    for (int t = 0; t < 4; t++)
      for (int p = 0; p < 3; p++) {
        ew_case c = case_of(GFX_OP_WHERE, where_types[t], 3, wp[p]);
        c.in_dtype[0] = GFX_DTYPE_BOOL;
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
    /* BatchNormalization with planes long enough for the row kernel, vector-sized or not */
    const gfx_shape xs[] = {SHAPE(2, 6, 16, 40), SHAPE(2, 6, 9, 11)};
    for (int t = 0; t < 3; t++)
      for (int r = 0; r < 2; r++) {
        gfx_shape bs[5] = {xs[r], SHAPE(6), SHAPE(6), SHAPE(6), SHAPE(6)};
        ew_case c = case_of(GFX_OP_BATCH_NORM, float_types[t], 5, bs);
        c.node.params.elementwise.epsilon = 1e-5f;
        c.scale = 2.0;
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
  }
}

/* Reductions, normalizations and softmax across their row strategies: short rows (one warp each),
 * medium rows (one block each), few long rows (split across blocks, with scratch memory), rows
 * whose length is no multiple of a 16-byte vector, and misaligned views. */
static void reduce_norm_cases(gfx_dev* gpu, void* stream) {
  for (int misalign = 0; misalign < 2; misalign++)
    for (int t = 0; t < 3; t++) {
      const int dtype = float_types[t];
      /* LayerNormalization over the last dim */
      const gfx_shape ln[][3] = {{SHAPE(1, 197, 192), SHAPE(192), SHAPE(192)},
                                 {SHAPE(4, 1000), SHAPE(1000), SHAPE(1000)},
                                 {SHAPE(2, 3000), SHAPE(3000), SHAPE(3000)},
                                 {SHAPE(1, 50001), SHAPE(50001), SHAPE(50001)}};
      for (int k = 0; k < 4; k++)
        for (int stats = 0; stats < 3; stats++) {
          /* with Mean and InvStdDev in float32 (stash_type 1), or Mean alone in the input's type (a
           * model lowered to float16) */
          ew_case c = case_of(GFX_OP_LAYER_NORMALIZATION, dtype, 3, ln[k]);
          c.node.params.norm = (ir_norm_params){.kind = IR_NORM_LAYER, .axis = -1, .epsilon = 1e-5f};
          c.misalign = misalign;
          c.n_out = stats == 0 ? 1 : stats == 1 ? 3 : 2;
          c.stats_dtype = stats == 1 ? GFX_DTYPE_F32 : dtype;
          if (stats) snprintf(c.label, sizeof c.label, "LayerNormalization %s rows of %lld, %s%s%s", gfx_dtype_name(dtype),
                              (long long)ln[k][1].dims[0], stats == 1 ? "Mean and InvStdDev float32" : "Mean",
                              stats == 2 ? " in the input's type" : "", misalign ? " misaligned" : "");
          run_case(gpu, stream, &c);
        }
      /* LayerNormalization over the last two dims and over all three, with Mean and InvStdDev */
      const gfx_shape ln2[][3] = {{SHAPE(2, 3, 40, 50), SHAPE(40, 50), SHAPE(40, 50)},
                                  {SHAPE(3, 7, 11), SHAPE(3, 7, 11), SHAPE(3, 7, 11)}};
      for (int k = 0; k < 2; k++) {
        ew_case c = case_of(GFX_OP_LAYER_NORMALIZATION, dtype, k == 0 ? 3 : 2, ln2[k]);
        c.node.params.norm = (ir_norm_params){.kind = IR_NORM_LAYER, .axis = (int8_t)(k == 0 ? -2 : 0), .epsilon = 1e-3f};
        c.misalign = misalign;
        c.n_out = 3;
        c.stats_dtype = GFX_DTYPE_F32;
        snprintf(c.label, sizeof c.label, "LayerNormalization %s axis %d with Mean and InvStdDev%s", gfx_dtype_name(dtype),
                 c.node.params.norm.axis, misalign ? " misaligned" : "");
        run_case(gpu, stream, &c);
      }
      /* RMSNormalization: short rows (warp), long rows (block), few very long rows (split); the scale of
       * the normalized shape, and broadcast along the trailing, leading or middle normalized dims */
      const gfx_shape rms[][2] = {{SHAPE(1, 197, 192), SHAPE(192)},     {SHAPE(4, 1000), SHAPE(1000)},
                                  {SHAPE(2, 3000), SHAPE(3000)},        {SHAPE(1, 50001), SHAPE(50001)},
                                  {SHAPE(2, 3, 40, 50), SHAPE(40, 50)}, {SHAPE(2, 3, 40, 50), SHAPE(1)},
                                  {SHAPE(2, 3, 40, 50), SHAPE(3, 1, 1)}, {SHAPE(2, 3, 40, 50), SHAPE(40, 1)}};
      static const int8_t rms_axes[] = {-1, -1, -1, -1, 1, 1, 1, 1};
      for (int k = 0; k < 8; k++) {
        ew_case c = case_of(GFX_OP_RMS_NORMALIZATION, dtype, 2, rms[k]);
        c.node.params.norm = (ir_norm_params){.kind = IR_NORM_RMS, .axis = rms_axes[k], .epsilon = 1e-5f};
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
      /* LpNormalization, p 1 and 2: long rows (a block each), columns of an inner axis (a thread each),
       * and rows of three values in {-1, 0, 1}, most of them 0, so that zero norms are common (they
       * give zeros) among nonzero ones */
      const gfx_shape lp[] = {SHAPE(4, 3000), SHAPE(5, 7, 33), SHAPE(300, 3)};
      static const int8_t lp_axes[] = {-1, 1, -1};
      for (int k = 0; k < 3; k++)
        for (int p = 1; p <= 2; p++) {
          ew_case c = case_of(GFX_OP_LP_NORMALIZATION, dtype, 1, &lp[k]);
          c.node.params.softmax = (ir_softmax_params){.axis = lp_axes[k], .lp = (int8_t)p};
          if (k == 2) c.scale = 0.6, c.grid = 1.0;
          c.misalign = misalign;
          run_case(gpu, stream, &c);
        }
      /* LRN over rank 3, 4 and 5, odd and even window sizes, a window wider than the channels */
      const gfx_shape lrn[] = {SHAPE(2, 7, 33), SHAPE(2, 16, 9, 11), SHAPE(1, 3, 4, 5, 6), SHAPE(2, 6, 50, 50)};
      static const int lrn_sizes[] = {3, 4, 7, 5};
      for (int k = 0; k < 4; k++) {
        ew_case c = case_of(GFX_OP_LRN, dtype, 1, &lrn[k]);
        c.node.params.lrn = (ir_lrn_params){.size = lrn_sizes[k], .alpha = 0.5f, .beta = 0.75f, .bias = 1.5f};
        c.scale = 2.0;
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
      /* InstanceNormalization: few long planes (split), odd-sized planes, many short planes */
      const gfx_shape in[][3] = {{SHAPE(1, 8, 256, 256), SHAPE(8), SHAPE(8)},
                                 {SHAPE(2, 3, 100, 101), SHAPE(3), SHAPE(3)},
                                 {SHAPE(2, 64, 8, 8), SHAPE(64), SHAPE(64)}};
      for (int k = 0; k < 3; k++) {
        ew_case c = case_of(GFX_OP_INSTANCE_NORMALIZATION, dtype, 3, in[k]);
        c.node.params.norm = (ir_norm_params){.kind = IR_NORM_INSTANCE, .epsilon = 1e-5f};
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
      /* InstanceNormalization with its fused epilogue (ir/fuse_norm_epilogue.c): + r, Relu and a
       * reflect Pad of H and W, each alone and all together, on the same planes */
      for (int k = 0; k < 3; k++)
        for (int e = 1; e < 8; e++) {
          const int add = e & 1, relu = e & 2, pad = e & 4;
          const gfx_shape with_r[4] = {in[k][0], in[k][1], in[k][2], in[k][0]};
          ew_case c = case_of(GFX_OP_INSTANCE_NORMALIZATION, dtype, add ? 4 : 3, with_r);
          c.node.params.norm = (ir_norm_params){.kind = IR_NORM_INSTANCE, .epsilon = 1e-5f, .add_after = (int8_t)add,
                                                .activation = relu ? IR_ACT_RELU : IR_ACT_NONE,
                                                .reflect_pad = (int8_t)(pad != 0), .out_pads = {1, 4, 3, 2}};
          c.misalign = misalign;
          /* the normalized value is rounded before r is added, as the separate nodes store it: where
           * the sum cancels, that first rounding (one unit at the normalized value's magnitude, up
           * to 8 here) is the sum's error; a float computation may land on the other side of it */
          if (add) c.atol_units = 8;
          snprintf(c.label, sizeof c.label, "InstanceNormalization%s%s%s %s", add ? " +r" : "", relu ? " Relu" : "",
                   pad ? " reflect Pad 1,4,3,2" : "", gfx_dtype_name(dtype));
          run_case(gpu, stream, &c);
        }
      /* GroupNormalization 18 (per group) and 21 (per channel) over long groups (split) */
      for (int per_channel = 0; per_channel < 2; per_channel++) {
        const gfx_shape gn[3] = {SHAPE(1, 32, 64, 64), per_channel ? SHAPE(32) : SHAPE(4),
                                 per_channel ? SHAPE(32) : SHAPE(4)};
        ew_case c = case_of(GFX_OP_GROUP_NORMALIZATION, dtype, 3, gn);
        c.node.params.norm = (ir_norm_params){.kind = IR_NORM_GROUP, .per_channel = (int8_t)per_channel,
                                              .num_groups = 4, .epsilon = 1e-5f};
        c.misalign = misalign;
        run_case(gpu, stream, &c);
      }
      /* GlobalAveragePool / GlobalMaxPool over few large planes (split) and many small ones */
      const gfx_shape gp[][1] = {{SHAPE(1, 16, 128, 128)}, {SHAPE(2, 64, 7, 7)}, {SHAPE(1, 5, 99, 101)}};
      for (int k = 0; k < 3; k++)
        for (int mx = 0; mx < 2; mx++) {
          ew_case c = case_of(mx ? GFX_OP_GLOBAL_MAX_POOL : GFX_OP_GLOBAL_AVERAGE_POOL, dtype, 1, gp[k]);
          c.node.params.reduce = (ir_reduce_params){.kind = mx ? IR_REDUCE_MAX : IR_REDUCE_MEAN, .keepdims = 1,
                                                    .global_pool = 1};
          c.misalign = misalign;
          run_case(gpu, stream, &c);
          /* channels-last (ORT's NHWC domain): a mean or maximum over H and W of N, H, W, C */
          const int64_t* d = gp[k][0].dims;
          c.in[0] = SHAPE(d[0], d[2], d[3], d[1]);
          c.node.params.reduce = (ir_reduce_params){.kind = mx ? IR_REDUCE_MAX : IR_REDUCE_MEAN, .keepdims = 1,
                                                    .n_axes = 2, .axes = {1, 2}};
          snprintf(c.label, sizeof c.label, "%s NHWC [%lld,%lld,%lld,%lld] %s", mx ? "GlobalMaxPool" : "GlobalAveragePool",
                   (long long)d[0], (long long)d[2], (long long)d[3], (long long)d[1], gfx_dtype_name(dtype));
          run_case(gpu, stream, &c);
        }
      /* ReduceMean / ReduceSum over the last axis: many short rows (warp), few long rows (split) */
      const gfx_shape rs[][1] = {{SHAPE(2000, 192)}, {SHAPE(3, 40000)}};
      for (int k = 0; k < 2; k++)
        for (int sum = 0; sum < 2; sum++) {
          ew_case c = case_of(sum ? GFX_OP_REDUCE_SUM : GFX_OP_REDUCE_MEAN, dtype, 1, rs[k]);
          c.node.params.reduce = (ir_reduce_params){.kind = sum ? IR_REDUCE_SUM : IR_REDUCE_MEAN, .n_axes = 1,
                                                    .keepdims = 1, .axes = {-1}};
          c.scale = sum ? 0.01 : 4.0; /* sums of 40000 stay small enough for float16 */
          c.misalign = misalign;
          run_case(gpu, stream, &c);
        }
      /* Softmax / LogSoftmax along the last axis: rows of 197 and 1000 (warp), 3000 (block) */
      const gfx_shape sm[][1] = {{SHAPE(3, 197, 197)}, {SHAPE(64, 1000)}, {SHAPE(4, 3000)}};
      for (int k = 0; k < 3; k++)
        for (int lg = 0; lg < 2; lg++) {
          ew_case c = case_of(lg ? GFX_OP_LOG_SOFTMAX : GFX_OP_SOFTMAX, dtype, 1, sm[k]);
          c.node.params.softmax = (ir_softmax_params){.axis = -1, .log = (int8_t)lg};
          c.misalign = misalign;
          run_case(gpu, stream, &c);
        }
    }
}

/* "<op> <type> <shape> axes=a,b keepdims=k[ select_last][ misaligned]<note>" */
static void reduce_label(ew_case* c, const char* note) {
  const ir_reduce_params* p = &c->node.params.reduce;
  char b[96];
  int n = snprintf(c->label, sizeof c->label, "%s %s %s axes=", ir_op_name(c->node.op), gfx_dtype_name(c->in_dtype[0]),
                   gfx_shape_str(&c->in[0], b, sizeof b));
  for (int a = 0; a < p->n_axes; a++) n += snprintf(c->label + n, sizeof c->label - (size_t)n, a ? ",%d" : "%d", p->axes[a]);
  snprintf(c->label + n, sizeof c->label - (size_t)n, "%s keepdims=%d%s%s%s", p->n_axes ? "" : "all", p->keepdims,
           p->select_last ? " select_last" : "", c->misalign ? " misaligned" : "", note);
}

/* ReduceL1, ReduceSumSquare, ReduceProd (values near 1) and ReduceLogSumExp (with keepdims, values of
 * 60 to 100) through the reduction strategies (many short rows, few long rows split
 * through scratch, a strided axis, two axes, an outer axis, every axis), keepdims both ways, one
 * element off alignment too. */
static void reduce_kind_cases(gfx_dev* gpu, void* stream) {
  static const gfx_op ops[] = {GFX_OP_REDUCE_L1, GFX_OP_REDUCE_SUM_SQUARE, GFX_OP_REDUCE_PROD, GFX_OP_REDUCE_LOG_SUM_EXP};
  static const ir_reduce_kind kinds[] = {IR_REDUCE_L1, IR_REDUCE_SUM_SQUARE, IR_REDUCE_PROD, IR_REDUCE_LOG_SUM_EXP};
  const gfx_shape xs[] = {SHAPE(2000, 192), SHAPE(3, 40000), SHAPE(4, 33, 17),
                          SHAPE(4, 33, 17), SHAPE(5, 3000),  SHAPE(4, 33, 17)};
  static const int n_axes[] = {1, 1, 1, 2, 1, 0};
  static const int8_t axes[][2] = {{-1}, {1}, {1}, {0, 2}, {0}, {0}};
  for (int misalign = 0; misalign < 2; misalign++)
    for (int t = 0; t < 3; t++)
      for (int k = 0; k < 4; k++)
        for (size_t r = 0; r < sizeof xs / sizeof xs[0]; r++)
          for (int keep = 0; keep < 2; keep++) {
            ew_case c = case_of(ops[k], float_types[t], 1, &xs[r]);
            ir_reduce_params* p = &c.node.params.reduce;
            *p = (ir_reduce_params){.kind = kinds[k], .n_axes = (int8_t)n_axes[r], .keepdims = (int8_t)keep};
            for (int a = 0; a < n_axes[r]; a++) p->axes[a] = axes[r][a];
            c.scale = r == 1 ? 0.01 : 1.0; /* sums of 40000 stay small enough for float16 */
            if (kinds[k] == IR_REDUCE_PROD) c.scale = 0.05, c.offset = 1.0; /* products of thousands stay finite */
            /* values of 60 to 100 overflow exp in float32 unless the maximum is subtracted first */
            if (kinds[k] == IR_REDUCE_LOG_SUM_EXP && keep) c.scale = 20.0, c.offset = 80.0;
            c.misalign = misalign;
            reduce_label(&c, "");
            run_case(gpu, stream, &c);
          }
}

/* ReduceSum, ReduceMax, ReduceMin and ReduceProd of int32 and int64 (exact and wrapping, random
 * integers in -50..50, so sums and products of long rows wrap): along every axis, two axes, all
 * axes, a long row and an axis of size 0 (the identities), keepdims both ways. */
static void reduce_int_cases(gfx_dev* gpu, void* stream) {
  static const gfx_op ops[] = {GFX_OP_REDUCE_SUM, GFX_OP_REDUCE_MAX, GFX_OP_REDUCE_MIN, GFX_OP_REDUCE_PROD};
  static const ir_reduce_kind kinds[] = {IR_REDUCE_SUM, IR_REDUCE_MAX, IR_REDUCE_MIN, IR_REDUCE_PROD};
  static const int int_types[] = {GFX_DTYPE_I32, GFX_DTYPE_I64};
  const gfx_shape xs[] = {SHAPE(4, 33, 17), SHAPE(4, 33, 17), SHAPE(4, 33, 17), SHAPE(3, 5000), SHAPE(3, 0, 4)};
  static const int n_axes[] = {1, 2, 0, 1, 1};
  static const int8_t axes[][2] = {{1}, {0, 2}, {0}, {-1}, {1}};
  for (int t = 0; t < 2; t++)
    for (int k = 0; k < 4; k++)
      for (size_t r = 0; r < sizeof xs / sizeof xs[0]; r++)
        for (int keep = 0; keep < 2; keep++) {
          ew_case c = case_of(ops[k], int_types[t], 1, &xs[r]);
          ir_reduce_params* p = &c.node.params.reduce;
          *p = (ir_reduce_params){.kind = kinds[k], .n_axes = (int8_t)n_axes[r], .keepdims = (int8_t)keep};
          for (int a = 0; a < n_axes[r]; a++) p->axes[a] = axes[r][a];
          reduce_label(&c, "");
          run_case(gpu, stream, &c);
        }
}

/* ReduceProd and ReduceLogSumExp with noop_with_empty_axes (the output is the input) */
static void reduce_noop_cases(gfx_dev* gpu, void* stream) {
  const gfx_shape xs[1] = {SHAPE(4, 33, 17)};
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < 2; k++) {
      ew_case c = case_of(k ? GFX_OP_REDUCE_LOG_SUM_EXP : GFX_OP_REDUCE_PROD, float_types[t], 1, xs);
      c.node.params.reduce = (ir_reduce_params){.kind = k ? IR_REDUCE_LOG_SUM_EXP : IR_REDUCE_PROD, .keepdims = 1, .noop = 1};
      reduce_label(&c, " noop_with_empty_axes");
      run_case(gpu, stream, &c);
    }
}

/* ArgMax and ArgMin along every axis, keepdims both ways, the first and the last index among equal
 * extremes (inputs on a grid of integers, so that ties are common); long rows, an outer axis with
 * many outputs and an axis of size 1 on random data. */
static void arg_cases(gfx_dev* gpu, void* stream) {
  static const gfx_op ops[] = {GFX_OP_ARG_MAX, GFX_OP_ARG_MIN};
  const gfx_shape tied[1] = {SHAPE(4, 33, 17)};
  static const int8_t tied_axes[] = {0, 1, 2, -2};
  const gfx_shape xs[] = {SHAPE(3, 517), SHAPE(3000, 7), SHAPE(4, 1, 17)};
  static const int8_t x_axes[] = {-1, 0, 1};
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < 2; k++) {
      for (int a = 0; a < 4; a++)
        for (int keep = 0; keep < 2; keep++)
          for (int last = 0; last < 2; last++) {
            ew_case c = case_of(ops[k], float_types[t], 1, tied);
            c.out_dtype = GFX_DTYPE_I64;
            c.node.params.reduce = (ir_reduce_params){.kind = ops[k] == GFX_OP_ARG_MAX ? IR_REDUCE_ARGMAX : IR_REDUCE_ARGMIN,
                                                      .n_axes = 1, .keepdims = (int8_t)keep,
                                                      .select_last = (int8_t)last, .axes = {tied_axes[a]}};
            c.grid = 1.0;
            reduce_label(&c, " ties");
            run_case(gpu, stream, &c);
          }
      for (size_t r = 0; r < sizeof xs / sizeof xs[0]; r++) {
        ew_case c = case_of(ops[k], float_types[t], 1, &xs[r]);
        c.out_dtype = GFX_DTYPE_I64;
        c.node.params.reduce = (ir_reduce_params){.kind = ops[k] == GFX_OP_ARG_MAX ? IR_REDUCE_ARGMAX : IR_REDUCE_ARGMIN,
                                                  .n_axes = 1, .keepdims = 1, .axes = {x_axes[r]}};
        c.misalign = (int)r == 0;
        reduce_label(&c, "");
        run_case(gpu, stream, &c);
      }
    }
}

/* Not, And, Or, Xor over bool tensors (broadcast patterns, a long tensor for the grid-stride loops);
 * Mod in every type and both fmod modes, integer divisors including 0 and -1 (the defined 0) and
 * the full int range (fill's [-50, 50]), one case with only zero divisors. */
/* MaxPool / AveragePool, 2-D and 3-D: random windows, strides, dilations (MaxPool), pads below the
 * kernel, ceil_mode and count_include_pad, SAME_* padding; windows partly in the padding. Every 2-D
 * case again channels-last (N, H, W, C, as ORT's layout transformer hands it over). */
static void pool_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 48; k++) {
    const int ns = k % 2 ? 3 : 2, mx = k % 4 < 2;
    const int dtype = float_types[k % 3];
    ew_case c = case_of(mx ? GFX_OP_MAX_POOL : GFX_OP_AVERAGE_POOL, dtype, 1, NULL);
    ir_pool_params* p = &c.node.params.pool;
    p->kind = mx ? IR_POOL_MAX : IR_POOL_AVERAGE;
    p->n_spatial = (int8_t)ns;
    p->ceil_mode = (int8_t)(k % 5 == 1);
    p->count_include_pad = (int8_t)(!mx && k % 3 == 0);
    p->auto_pad = k % 7 == 3 ? IR_PAD_SAME_UPPER : k % 7 == 5 ? IR_PAD_SAME_LOWER : IR_PAD_NOTSET;
    if (p->auto_pad != IR_PAD_NOTSET) p->ceil_mode = 0;
    int64_t x[5] = {rand_int(1, 2), rand_int(1, 4)};
    for (int i = 0; i < ns; i++) {
      x[2 + i] = rand_int(ns == 3 ? 3 : 4, ns == 3 ? 9 : 17);
      p->kernel[i] = rand_int(1, 3);
      p->strides[i] = rand_int(1, 3);
      p->dilations[i] = mx && p->auto_pad == IR_PAD_NOTSET ? rand_int(1, 2) : 1;
      if (p->auto_pad == IR_PAD_NOTSET) {
        p->pads[i] = rand_int(0, p->kernel[i] - 1);
        p->pads[ns + i] = rand_int(0, p->kernel[i] - 1);
      }
    }
    c.in[0] = shape(2 + ns, x);
    snprintf(c.label, sizeof c.label,
             "%s %dd x[%lld,%lld,%lld,%lld,%lld] k=%d,%d,%d s=%d,%d,%d d=%d,%d,%d pads=%d,%d,%d,%d,%d,%d auto_pad=%d "
             "ceil=%d incl=%d %s", mx ? "MaxPool" : "AveragePool", ns, (long long)x[0], (long long)x[1],
             (long long)x[2], (long long)x[3], (long long)(ns == 3 ? x[4] : 0), p->kernel[0], p->kernel[1],
             p->kernel[2], p->strides[0], p->strides[1], p->strides[2], p->dilations[0], p->dilations[1],
             p->dilations[2], p->pads[0], p->pads[1], p->pads[2], p->pads[3], p->pads[4], p->pads[5],
             (int)p->auto_pad, p->ceil_mode, p->count_include_pad, gfx_dtype_name(dtype));
    ir_pool_geom g;
    gfx_status s = ir_pool_geometry(p, &c.in[0], &g);
    if (s) { /* a window larger than the padded input: not a case */
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c);
    if (ns == 2) {
      p->channels_last = 1;
      c.in[0] = SHAPE(x[0], x[2], x[3], x[1]);
      const size_t at = strlen(c.label);
      snprintf(c.label + at, sizeof c.label - at, " NHWC");
      run_case(gpu, stream, &c);
    }
  }
  /* channels-last with wide channel counts (the CUDA kernel's 16-byte loads of 4 or 8 channels) */
  for (int k = 0; k < 12; k++) {
    const int mx = k % 2 == 0, dtype = float_types[k % 3];
    ew_case c = case_of(mx ? GFX_OP_MAX_POOL : GFX_OP_AVERAGE_POOL, dtype, 1, NULL);
    ir_pool_params* p = &c.node.params.pool;
    *p = (ir_pool_params){.kind = mx ? IR_POOL_MAX : IR_POOL_AVERAGE, .n_spatial = 2, .channels_last = 1,
                          .count_include_pad = (int8_t)(k % 4 == 1), .kernel = {k % 3 == 0 ? 2 : 3, 3},
                          .strides = {2, k % 5 == 0 ? 1 : 2}, .dilations = {1, mx && k % 3 == 2 ? 2 : 1},
                          .pads = {k % 3 == 0 ? 0 : 1, 1, k % 3 == 0 ? 0 : 1, 1}};
    const int64_t ch = k % 4 < 2 ? 64 : 24;
    c.in[0] = SHAPE(1 + k % 2, rand_int(5, 33), rand_int(5, 33), ch);
    snprintf(c.label, sizeof c.label, "%s NHWC x[%lld,%lld,%lld,%lld] k=%d,%d s=%d,%d d=%d,%d incl=%d %s",
             mx ? "MaxPool" : "AveragePool", (long long)c.in[0].dims[0], (long long)c.in[0].dims[1],
             (long long)c.in[0].dims[2], (long long)ch, p->kernel[0], p->kernel[1], p->strides[0], p->strides[1],
             p->dilations[0], p->dilations[1], p->count_include_pad, gfx_dtype_name(dtype));
    run_case(gpu, stream, &c);
  }
}

/* Resize over random subsets of the dims of rank 2..5 inputs (the general geometry when a leading
 * dim resizes, the two-dim fast path otherwise): every mode, coordinate transformation and nearest
 * mode, scales up and down, tf_crop_and_resize regions reaching outside the input. */
static void resize_cases(gfx_dev* gpu, void* stream) {
  static const float scale_set[] = {0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 3.0f};
  for (int k = 0; k < 60; k++) {
    const int dtype = float_types[k % 3], rank = rand_int(2, 5);
    ew_case c = case_of(GFX_OP_RESIZE, dtype, 1, NULL);
    ir_resize_params* p = &c.node.params.resize;
    p->rank = rank;
    p->mode = k % 3 == 2 ? IR_RESIZE_CUBIC : rand_int(0, 1);
    p->coord = rand_int(0, 6);
    p->nearest = rand_int(0, 3);
    p->exclude_outside = p->mode == IR_RESIZE_CUBIC && rand_int(0, 1);
    p->cubic_a = p->exclude_outside ? -0.5f : -0.75f;
    p->extrapolation = 3.5f;
    c.positive = 1; /* positive data: up to 64 cubic taps summed in float32 on a device cancel nowhere */
    int64_t x[5];
    int resized = 0;
    for (int i = 0; i < rank; i++) {
      x[i] = rand_int(1, 6);
      const int may = i >= rank - 2 || k % 4 != 0; /* every fourth case keeps the leading dims */
      p->scales[i] = may && !(p->mode == IR_RESIZE_CUBIC && resized == 3) ? scale_set[rand_int(0, 5)] : 1.0f;
      resized += p->scales[i] != 1.0f;
      p->leading |= i < rank - 2 && p->scales[i] != 1.0f;
      p->roi[i] = (float)rand_int(-2, 3) / 10.0f;
      p->roi[rank + i] = (float)rand_int(7, 12) / 10.0f;
    }
    c.in[0] = shape(rank, x);
    snprintf(c.label, sizeof c.label, "Resize x[%lld,%lld,%lld,%lld,%lld] scales %g,%g,%g,%g,%g mode %d coord %d "
             "nearest %d excl %d %s", (long long)x[0], (long long)x[1], rank > 2 ? (long long)x[2] : 0,
             rank > 3 ? (long long)x[3] : 0, rank > 4 ? (long long)x[4] : 0, (double)p->scales[0],
             (double)p->scales[1], (double)p->scales[2], (double)p->scales[3], (double)p->scales[4], p->mode,
             p->coord, p->nearest, p->exclude_outside, gfx_dtype_name(dtype));
    ir_resize_geom g;
    gfx_shape out;
    gfx_status s = ir_resize_geometry(&c.node, &c.in[0], &g, &out);
    if (s || gfx_shape_numel(&out) == 0) { /* a dim scaled to 0: not a case */
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c);
  }
  /* channels-last: N, H, W, C with H and W resizing, as ORT's layout transformer hands a Resize over
   * (the CUDA backend's own kernel for it); every mode, up and down, channel counts odd and wide */
  for (int k = 0; k < 18; k++) {
    const int dtype = float_types[k % 3];
    ew_case c = case_of(GFX_OP_RESIZE, dtype, 1, NULL);
    ir_resize_params* p = &c.node.params.resize;
    p->rank = 4;
    p->mode = k % 3;
    p->coord = k % 6 == 5 ? IR_COORD_ASYMMETRIC : k % 6 == 4 ? IR_COORD_ALIGN_CORNERS : IR_COORD_HALF_PIXEL;
    p->nearest = k % 4;
    p->cubic_a = -0.75f;
    p->leading = 1;
    c.positive = 1;
    const int64_t x[4] = {rand_int(1, 2), rand_int(3, 19), rand_int(3, 23), k % 2 ? 64 : rand_int(1, 7)};
    const float sh = scale_set[k % 6], sw = scale_set[(k + 2) % 6];
    p->scales[0] = p->scales[3] = 1.0f;
    p->scales[1] = sh, p->scales[2] = sw;
    c.in[0] = shape(4, x);
    snprintf(c.label, sizeof c.label, "Resize NHWC x[%lld,%lld,%lld,%lld] scales %g,%g mode %d coord %d nearest %d %s",
             (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (double)sh, (double)sw, p->mode,
             p->coord, p->nearest, gfx_dtype_name(dtype));
    run_case(gpu, stream, &c);
  }
}

/* QuantizeLinear / DequantizeLinear: every type pair, per tensor and per axis (each axis), with and
 * without a zero point; scales of either sign and near zero (quotients that saturate, NaN from 0/0),
 * zero points over the whole range; integer results compared exactly. */
static void quant_cases(gfx_dev* gpu, void* stream) {
  static const int q_types[] = {GFX_DTYPE_I8, GFX_DTYPE_U8, GFX_DTYPE_I32};
  for (int k = 0; k < 72; k++) {
    const int quantize = k % 2 == 0, f = float_types[k / 2 % 3], q = q_types[k / 6 % (quantize ? 2 : 3)];
    const int64_t x[3] = {rand_int(1, 3), rand_int(1, 70), rand_int(1, 9)};
    const int per_axis = k % 3 != 0, axis = rand_int(0, 2), has_zp = k % 5 != 0 && q != GFX_DTYPE_I32;
    const gfx_shape shapes[3] = {shape(3, x), per_axis ? shape(1, &x[axis]) : shape(0, NULL),
                                 per_axis ? shape(1, &x[axis]) : shape(0, NULL)};
    ew_case c = case_of(quantize ? GFX_OP_QUANTIZE_LINEAR : GFX_OP_DEQUANTIZE_LINEAR, f, has_zp ? 3 : 2, shapes);
    c.node.params.quant = (ir_quant_params){.axis = axis - (k % 4 == 1 ? 3 : 0), .dtype = quantize ? q : f};
    c.in_dtype[0] = quantize ? f : q;
    c.in_dtype[2] = q;
    c.out_dtype = quantize ? q : f;
    const int64_t lo = q == GFX_DTYPE_I8 ? -128 : q == GFX_DTYPE_U8 ? 0 : -1000000;
    const int64_t hi = q == GFX_DTYPE_I8 ? 127 : q == GFX_DTYPE_U8 ? 255 : 1000000;
    for (int i = 0; i < 3; i++)
      if (c.in_dtype[i] == q && (i == 2 || !quantize)) c.ranged[i] = 1, c.int_lo[i] = lo, c.int_hi[i] = hi;
    c.grid = k % 7 == 3 ? 0.5 : 0; /* halves: quotients on rounding ties */
    run_case(gpu, stream, &c);
  }
}

/* RoiAlign: random planes and regions (inside, across the edges, some reversed), avg and max, both
 * coordinate rules, fixed and adaptive sampling, a spatial scale. */
static void roi_align_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 36; k++) {
    const int dtype = float_types[k % 3];
    const int64_t x[4] = {rand_int(1, 3), rand_int(1, 4), rand_int(2, 20), rand_int(2, 20)}, r = rand_int(1, 9);
    const gfx_shape shapes[3] = {shape(4, x), SHAPE(r, 4), shape(1, &r)};
    ew_case c = case_of(GFX_OP_ROI_ALIGN, dtype, 3, shapes);
    c.in_dtype[2] = GFX_DTYPE_I64;
    c.ranged[2] = 1, c.int_lo[2] = 0, c.int_hi[2] = x[0] - 1;
    c.scale = 12.0;
    c.positive = 1; /* no cancellation: the float sums on a device stay within float32's tolerance */
    ir_roi_align_params* p = &c.node.params.roi_align;
    p->mode_max = k % 2;
    p->half_pixel = k % 5 != 2;
    p->out_h = rand_int(1, 5);
    p->out_w = rand_int(1, 5);
    p->sampling_ratio = k % 3 == 0 ? 0 : rand_int(1, 3);
    p->spatial_scale = k % 4 == 1 ? 0.5f : 1.0f;
    run_case(gpu, stream, &c);
  }
  /* regions hundreds of pixels across over small planes, adaptive: bins of up to ~100 x 100 samples,
   * nearly all more than a pixel outside (Vulkan visits only the window near the plane) */
  for (int k = 0; k < 8; k++) {
    const int64_t x[4] = {1, 2, rand_int(2, 7), rand_int(2, 7)}, r = 3;
    const gfx_shape shapes[3] = {shape(4, x), SHAPE(r, 4), shape(1, &r)};
    ew_case c = case_of(GFX_OP_ROI_ALIGN, float_types[k % 2], 3, shapes);
    c.in_dtype[2] = GFX_DTYPE_I64;
    c.ranged[2] = 1, c.int_lo[2] = 0, c.int_hi[2] = 0;
    c.scale = 400.0;
    c.positive = 1;
    ir_roi_align_params* p = &c.node.params.roi_align;
    p->mode_max = k / 2 % 2;
    p->half_pixel = k / 4;
    p->out_h = rand_int(1, 4);
    p->out_w = rand_int(1, 4);
    p->sampling_ratio = 0;
    p->spatial_scale = 1.0f;
    run_case(gpu, stream, &c);
  }
}

/* One node of two outputs (TopK's values and indices) on the backend and on the reference, from
 * the same inputs: both outputs must agree bit for bit (values are copies of X's elements, indices
 * exact), and the guard bytes after each output stay untouched. */
static void two_output_case(gfx_dev* gpu, void* stream, ir_node* node, const gfx_tensor* host_in, int n_in,
                            const int out_dtype[2], const char* label) {
  op_tally* t = &tally[node->op];
  if (any_wanted && !wanted[node->op]) return;
  if (verbose) fprintf(stderr, "case: %s\n", label);
  gfx_dev* ref = gfx_reference_device();
  ir_node_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.op_type = ir_op_name(node->op);
  desc.domain = "";
  desc.name = "case";
  desc.n_inputs = n_in;
  desc.n_outputs = 2;
  for (int i = 0; i < n_in; i++) desc.input_dtypes[i] = host_in[i].dtype, desc.input_shapes[i] = host_in[i].shape;
  desc.output_dtypes[0] = out_dtype[0], desc.output_dtypes[1] = out_dtype[1];
  gfx_node_query q = {.op = node->op, .params = &node->params, .desc = &desc};
  gfx_status s = gfx_backend_supports_node(gpu, &q);
  if (s) {
    if (verbose) fprintf(stderr, "declined: %s\n", gfx_status_message(s));
    if (!t->declined++) snprintf(t->declined_why, sizeof t->declined_why, "%s", gfx_status_message(s));
    gfx_status_free(s);
    return;
  }
  node->n_inputs = n_in, node->n_outputs = 2, node->name = "case";
  for (int i = 0; i < IR_MAX_IO; i++) node->inputs[i] = node->outputs[i] = -1;
  for (int i = 0; i < n_in; i++) node->inputs[i] = i;
  node->outputs[0] = n_in, node->outputs[1] = n_in + 1;
  gfx_shape in_shapes[IR_MAX_IO], out_shapes[2];
  for (int i = 0; i < n_in; i++) in_shapes[i] = host_in[i].shape;
  int ok = 1;
  void* dev[IR_MAX_IO + 2] = {0};
  unsigned char* want[2] = {0};
  unsigned char* got[2] = {0};
  size_t bytes[2] = {0};
  void *ref_state = NULL, *state = NULL, *dev_scratch = NULL, *host_scratch = NULL;
  gfx_tensor gin[IR_MAX_IO], rout[2], gout[2];
  if ((s = infer[node->op](node, in_shapes, out_shapes))) goto done;
  for (int o = 0; o < 2; o++) {
    int okb;
    bytes[o] = gfx_shape_bytes(&out_shapes[o], out_dtype[o], &okb);
    want[o] = malloc(bytes[o] + 8);
    got[o] = malloc(bytes[o] + GUARD);
    memset(got[o], GUARD_BYTE, bytes[o] + GUARD);
    rout[o] = (gfx_tensor){want[o], out_dtype[o], out_shapes[o]};
    if ((s = gfx_backend_mem_alloc(gpu, bytes[o] + GUARD, &dev[n_in + o]))) goto done;
    if ((s = gfx_backend_copy(gpu, dev[n_in + o], got[o], bytes[o] + GUARD, GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
    gout[o] = (gfx_tensor){dev[n_in + o], out_dtype[o], out_shapes[o]};
  }
  for (int i = 0; i < n_in; i++) {
    int okb;
    const size_t b = gfx_shape_bytes(&host_in[i].shape, host_in[i].dtype, &okb);
    if ((s = gfx_backend_mem_alloc(gpu, b + 8, &dev[i]))) goto done;
    if (b && (s = gfx_backend_copy(gpu, dev[i], host_in[i].data, b, GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
    gin[i] = (gfx_tensor){dev[i], host_in[i].dtype, host_in[i].shape};
  }
  size_t ref_scratch = 0, scratch = 0;
  if ((s = gfx_backend_node_prepare(ref, node, in_shapes, out_shapes, &ref_state, &ref_scratch))) goto done;
  if (ref_scratch) host_scratch = malloc(ref_scratch);
  gfx_exec_ctx rctx = {ref, NULL, host_scratch, ref_scratch};
  if ((s = gfx_backend_node_run(&rctx, node, host_in, rout, ref_state))) goto done;
  if ((s = gfx_backend_node_prepare(gpu, node, in_shapes, out_shapes, &state, &scratch))) goto done;
  /* the scratch starts as garbage, as an arena's reused bytes do: the kernels must not rely on it */
  if (scratch && (s = gfx_backend_mem_alloc(gpu, scratch, &dev_scratch))) goto done;
  if (scratch) {
    host_scratch = realloc(host_scratch, scratch);
    memset(host_scratch, 0xA5, scratch);
    if ((s = gfx_backend_copy(gpu, dev_scratch, host_scratch, scratch, GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
  }
  gfx_exec_ctx gctx = {gpu, stream, dev_scratch, scratch};
  if ((s = gfx_backend_node_run(&gctx, node, gin, gout, state))) goto done;
  if ((s = gfx_backend_stream_sync(gpu, stream))) goto done;
  for (int o = 0; o < 2; o++) {
    if ((s = gfx_backend_copy(gpu, got[o], dev[n_in + o], bytes[o] + GUARD, GFX_COPY_DEVICE_TO_HOST, NULL))) goto done;
    for (size_t g = 0; g < GUARD && ok; g++)
      if (got[o][bytes[o] + g] != GUARD_BYTE) {
        printf("FAIL %s: write past output %d\n", label, o);
        ok = 0;
      }
    if (ok && memcmp(got[o], want[o], bytes[o]) != 0) {
      const int64_t n = gfx_shape_numel(&out_shapes[o]);
      for (int64_t e = 0, shown = 0; e < n && shown < 3; e++) {
        const double w = value_at(want[o], out_dtype[o], e), g = value_at(got[o], out_dtype[o], e);
        if (w != g && !(isnan(w) && isnan(g)) && shown++ < 3)
          printf("  %s: output %d element %lld: want %.9g got %.9g\n", label, o, (long long)e, w, g);
      }
      printf("FAIL %s: output %d differs\n", label, o);
      ok = 0;
    }
  }
done:
  if (ref_state) gfx_backend_node_release(ref, ref_state);
  if (state) gfx_backend_node_release(gpu, state);
  for (int i = 0; i < n_in + 2; i++)
    if (dev[i]) gfx_backend_mem_free(gpu, dev[i]);
  if (dev_scratch) gfx_backend_mem_free(gpu, dev_scratch);
  free(host_scratch);
  for (int o = 0; o < 2; o++) free(want[o]), free(got[o]);
  if (s) {
    printf("FAIL %s: %s\n", label, gfx_status_message(s));
    gfx_status_free(s);
    ok = 0;
  }
  t->run++;
  t->passed += ok;
}

/* TopK: lines short and long (up to 5000), every axis, k from 1 to the whole line, largest and
 * smallest, values on a grid of halves (many ties, which go to the lower index) and NaNs in some
 * float cases; every element type. */
static void topk_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 40; k++) {
    const int dtype = all_math_types[k % 5], rank = rand_int(1, 3), axis = rand_int(0, rank - 1);
    int64_t dims[3];
    for (int i = 0; i < rank; i++) dims[i] = rand_int(1, 6);
    if (k % 8 == 5) dims[axis] = rand_int(500, 5000);
    const gfx_shape xs = shape(rank, dims);
    const int64_t n = gfx_shape_numel(&xs), kk = k % 4 == 0 ? dims[axis] : rand_int(1, (int)dims[axis]);
    int okb;
    void* x = malloc(gfx_shape_bytes(&xs, dtype, &okb) + 8);
    fill(x, dtype, n, 4.0, 0, 0.0, 0.5);
    if (k % 3 == 1) /* every third element a quiet NaN */
      for (int64_t i = 0; i < n; i += 3) {
        if (dtype == GFX_DTYPE_F32) ((float*)x)[i] = NAN;
        if (dtype == GFX_DTYPE_F16) ((uint16_t*)x)[i] = 0x7E00u;
        if (dtype == GFX_DTYPE_BF16) ((uint16_t*)x)[i] = 0x7FC0u;
      }
    int64_t kv = kk;
    const gfx_tensor in[2] = {{x, dtype, xs}, {&kv, GFX_DTYPE_I64, SHAPE(1)}};
    ir_node node;
    memset(&node, 0, sizeof node);
    node.op = GFX_OP_TOP_K;
    node.params.index.axis = axis - (k % 2 ? rank : 0);
    node.params.index.k = kk;
    node.params.index.largest = (int8_t)(k % 5 != 2);
    node.params.index.dtype = dtype;
    const int out_dtype[2] = {dtype, GFX_DTYPE_I64};
    char label[200];
    snprintf(label, sizeof label, "TopK %s rank %d axis %lld dims %lld,%lld,%lld k %lld largest %d",
             gfx_dtype_name(dtype), rank, (long long)node.params.index.axis, (long long)dims[0],
             rank > 1 ? (long long)dims[1] : 0, rank > 2 ? (long long)dims[2] : 0, (long long)kk,
             node.params.index.largest);
    two_output_case(gpu, stream, &node, in, 2, out_dtype, label);
    free(x);
  }
}

/* TopK on long lines (4096 to 250000 elements, one to three of them), the shape of a detector
 * keeping its best boxes: the CUDA backend's radix selection (k up to 4096) and, beyond it, rank
 * counting. Values continuous (float16 and bfloat16 still tie often), on a grid of halves (more ties
 * at the k-th value than the candidate list holds: the fallback), with NaNs and signed zeros, or
 * scores in [0, 1] with a saturated tail at exactly 1 and 0; largest and smallest. */
static void topk_long_cases(gfx_dev* gpu, void* stream) {
  static const int float_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16};
  static const int64_t lens[] = {4096, 5003, 65536, 250000};
  static const int64_t ks[] = {1, 37, 1000, 4096, 4097};
  for (int c = 0; c < 24; c++) {
    const int dtype = float_types[c % 3], values = c / 3 % 4, largest = c % 2 == 0 || values == 3;
    int64_t dims[2] = {1 + c / 2 % 3, lens[c % 4]};
    int64_t kk = ks[c % 5];
    if (kk > dims[1]) kk = dims[1];
    const gfx_shape xs = shape(2, dims);
    const int64_t n = gfx_shape_numel(&xs);
    int okb;
    void* x = malloc(gfx_shape_bytes(&xs, dtype, &okb) + 8);
    fill(x, dtype, n, 4.0, values == 3, 0.0, values == 1 ? 0.5 : 0.0);
    for (int64_t i = 0; i < n; i++) {
      float v = NAN;
      if (values == 2 && i % 7 == 3) v = NAN;
      else if (values == 2 && i % 11 == 5) v = i % 2 ? -0.0f : 0.0f;
      else if (values == 3 && i % 13 == 0) v = i % 2 ? 1.0f : 0.0f;
      else continue;
      if (dtype == GFX_DTYPE_F32) ((float*)x)[i] = v;
      if (dtype == GFX_DTYPE_F16) ((uint16_t*)x)[i] = gfx_float_to_half(v);
      if (dtype == GFX_DTYPE_BF16) ((uint16_t*)x)[i] = gfx_float_to_bf16(v);
    }
    if (values == 3) /* scores: squash the positive values into (0, 1) */
      for (int64_t i = 0; i < n; i++) {
        if (i % 13 == 0) continue;
        const double v = value_at(x, dtype, i), sq = v / (1.0 + v);
        if (dtype == GFX_DTYPE_F32) ((float*)x)[i] = (float)sq;
        if (dtype == GFX_DTYPE_F16) ((uint16_t*)x)[i] = gfx_float_to_half((float)sq);
        if (dtype == GFX_DTYPE_BF16) ((uint16_t*)x)[i] = gfx_float_to_bf16((float)sq);
      }
    int64_t kv = kk;
    const gfx_tensor in[2] = {{x, dtype, xs}, {&kv, GFX_DTYPE_I64, SHAPE(1)}};
    ir_node node;
    memset(&node, 0, sizeof node);
    node.op = GFX_OP_TOP_K;
    node.params.index.axis = c % 2 ? -1 : 1;
    node.params.index.k = kk;
    node.params.index.largest = (int8_t)largest;
    node.params.index.dtype = dtype;
    const int out_dtype[2] = {dtype, GFX_DTYPE_I64};
    static const char* const kinds[] = {"continuous", "halves", "NaN and signed zeros", "scores"};
    char label[200];
    snprintf(label, sizeof label, "TopK long %s dims %lld,%lld k %lld largest %d values %s", gfx_dtype_name(dtype),
             (long long)dims[0], (long long)dims[1], (long long)kk, largest, kinds[values]);
    two_output_case(gpu, stream, &node, in, 2, out_dtype, label);
    free(x);
  }
}

/* ---- selections: NonZero and NonMaxSuppression as bounded nodes ---- */

/* A bounded node (output 0 at its bound, output 1 the count) on the backend against the reference:
 * the counts equal, and the part of output 0 the count says is written (NonZero: the first `count`
 * columns of each row; NonMaxSuppression: the first `count` rows) equal; nothing written past either
 * output. The node runs twice on the backend, in the same scratch, to show nothing of a Run stays in
 * it. */
static void bounded_case(gfx_dev* gpu, void* stream, ir_node* node, const gfx_tensor* host_in, int n_in,
                         const char* label) {
  op_tally* t = &tally[node->op];
  if (any_wanted && !wanted[node->op]) return;
  if (verbose) fprintf(stderr, "case: %s\n", label);
  gfx_dev* ref = gfx_reference_device();
  ir_node_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.op_type = ir_op_name(node->op);
  desc.domain = "";
  desc.name = "case";
  desc.n_inputs = n_in;
  desc.n_outputs = 1;
  for (int i = 0; i < n_in; i++) desc.input_dtypes[i] = host_in[i].dtype, desc.input_shapes[i] = host_in[i].shape;
  desc.output_dtypes[0] = GFX_DTYPE_I64;
  gfx_node_query q = {.op = node->op, .params = &node->params, .desc = &desc};
  gfx_status s = gfx_backend_supports_node(gpu, &q);
  if (s) {
    if (verbose) fprintf(stderr, "declined: %s\n", gfx_status_message(s));
    if (!t->declined++) snprintf(t->declined_why, sizeof t->declined_why, "%s", gfx_status_message(s));
    gfx_status_free(s);
    return;
  }
  node->n_inputs = n_in, node->n_outputs = 2, node->name = "case";
  for (int i = 0; i < IR_MAX_IO; i++) node->inputs[i] = node->outputs[i] = -1;
  for (int i = 0; i < n_in; i++) node->inputs[i] = i;
  node->outputs[0] = n_in, node->outputs[1] = n_in + 1;
  gfx_shape in_shapes[IR_MAX_IO], out_shapes[2];
  for (int i = 0; i < n_in; i++) in_shapes[i] = host_in[i].shape;
  int ok = 1;
  void* dev[IR_MAX_IO + 2] = {0};
  void* dev_scratch = NULL;
  unsigned char* want[2] = {0};
  unsigned char* got[2] = {0};
  size_t bytes[2] = {0};
  void *ref_state = NULL, *state = NULL;
  gfx_tensor gin[IR_MAX_IO], rout[2], gout[2];
  if ((s = infer[node->op](node, in_shapes, out_shapes))) goto done;
  for (int o = 0; o < 2; o++) {
    int okb;
    bytes[o] = gfx_shape_bytes(&out_shapes[o], GFX_DTYPE_I64, &okb);
    want[o] = malloc(bytes[o] + 8);
    got[o] = malloc(bytes[o] + GUARD);
    rout[o] = (gfx_tensor){want[o], GFX_DTYPE_I64, out_shapes[o]};
    if ((s = gfx_backend_mem_alloc(gpu, bytes[o] + GUARD, &dev[n_in + o]))) goto done;
    gout[o] = (gfx_tensor){dev[n_in + o], GFX_DTYPE_I64, out_shapes[o]};
  }
  for (int i = 0; i < n_in; i++) {
    int okb;
    const size_t b = gfx_shape_bytes(&host_in[i].shape, host_in[i].dtype, &okb);
    if ((s = gfx_backend_mem_alloc(gpu, b + 8, &dev[i]))) goto done;
    if (b && (s = gfx_backend_copy(gpu, dev[i], host_in[i].data, b, GFX_COPY_HOST_TO_DEVICE, NULL))) goto done;
    gin[i] = (gfx_tensor){dev[i], host_in[i].dtype, host_in[i].shape};
  }
  size_t scratch = 0;
  if ((s = gfx_backend_node_prepare(ref, node, in_shapes, out_shapes, &ref_state, &scratch))) goto done;
  gfx_exec_ctx rctx = {ref, NULL, NULL, 0};
  if ((s = gfx_backend_node_run(&rctx, node, host_in, rout, ref_state))) goto done;
  if ((s = gfx_backend_node_prepare(gpu, node, in_shapes, out_shapes, &state, &scratch))) goto done;
  if (scratch && (s = gfx_backend_mem_alloc(gpu, scratch, &dev_scratch))) goto done;
  const int64_t count = *(const int64_t*)want[1];
  for (int pass = 0; pass < 2 && ok; pass++) {
    for (int o = 0; o < 2; o++) {
      memset(got[o], GUARD_BYTE, bytes[o] + GUARD);
      if ((s = gfx_backend_copy(gpu, dev[n_in + o], got[o], bytes[o] + GUARD, GFX_COPY_HOST_TO_DEVICE, NULL)))
        goto done;
    }
    gfx_exec_ctx gctx = {gpu, stream, dev_scratch, scratch};
    if ((s = gfx_backend_node_run(&gctx, node, gin, gout, state))) goto done;
    if ((s = gfx_backend_stream_sync(gpu, stream))) goto done;
    for (int o = 0; o < 2; o++) {
      if ((s = gfx_backend_copy(gpu, got[o], dev[n_in + o], bytes[o] + GUARD, GFX_COPY_DEVICE_TO_HOST, NULL)))
        goto done;
      for (size_t g = 0; g < GUARD && ok; g++)
        if (got[o][bytes[o] + g] != GUARD_BYTE) {
          printf("FAIL %s: write past output %d\n", label, o);
          ok = 0;
        }
    }
    const int64_t got_count = *(const int64_t*)got[1];
    if (ok && got_count != count) {
      printf("FAIL %s: count %lld, the reference has %lld\n", label, (long long)got_count, (long long)count);
      ok = 0;
    }
    const int64_t* w = (const int64_t*)want[0];
    const int64_t* g = (const int64_t*)got[0];
    const int64_t rows = out_shapes[0].dims[0], cols = out_shapes[0].dims[1];
    for (int64_t r = 0, shown = 0; r < rows && ok; r++)
      for (int64_t c = 0; c < cols; c++) {
        const int written = node->op == GFX_OP_NON_ZERO ? c < count : r < count;
        if (!written || w[r * cols + c] == g[r * cols + c]) continue;
        if (shown++ < 3)
          printf("  %s: pass %d, output 0 [%lld, %lld]: want %lld got %lld\n", label, pass, (long long)r, (long long)c,
                 (long long)w[r * cols + c], (long long)g[r * cols + c]);
        ok = 0;
      }
    if (!ok) printf("FAIL %s: output 0 differs (pass %d)\n", label, pass);
  }
done:
  if (ref_state) gfx_backend_node_release(ref, ref_state);
  if (state) gfx_backend_node_release(gpu, state);
  for (int i = 0; i < n_in + 2; i++)
    if (dev[i]) gfx_backend_mem_free(gpu, dev[i]);
  if (dev_scratch) gfx_backend_mem_free(gpu, dev_scratch);
  for (int o = 0; o < 2; o++) free(want[o]), free(got[o]);
  if (s) {
    printf("FAIL %s: %s\n", label, gfx_status_message(s));
    gfx_status_free(s);
    ok = 0;
  }
  t->run++;
  t->passed += ok;
}

/* NonZero: every element type, ranks 1 to 4, densities from none to all (with -0.0, which is zero,
 * and NaN, which is not), and sizes around the kernels' blocks of 4096 elements up to a million. */
static void nonzero_cases(gfx_dev* gpu, void* stream) {
  static const int types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16,  GFX_DTYPE_BF16, GFX_DTYPE_I32,
                              GFX_DTYPE_I64, GFX_DTYPE_BOOL, GFX_DTYPE_U8,   GFX_DTYPE_I8};
  /* 4096 elements are one Vulkan chunk; 2100001 make more chunks than one scan tile of 256 */
  static const int64_t sizes[] = {1, 7, 4095, 4096, 4097, 12289, 1000003, 2100001};
  for (int k = 0; k < 40; k++) {
    const int dtype = types[k % 8];
    const int density = k % 5; /* 0: none, 4: all, otherwise density in quarters */
    int64_t dims[4];
    int rank;
    if (k % 3 == 0) {
      rank = 1;
      dims[0] = sizes[(k / 3) % 8];
    } else {
      rank = rand_int(1, 4);
      for (int i = 0; i < rank; i++) dims[i] = rand_int(1, 9);
      if (k % 7 == 1) dims[0] = 0;
    }
    const gfx_shape xs = shape(rank, dims);
    const int64_t n = gfx_shape_numel(&xs);
    const size_t es = gfx_dtype_size(dtype);
    unsigned char* x = calloc((size_t)n * es + 8, 1);
    for (int64_t i = 0; i < n; i++) {
      const int on = density == 4 || (density > 0 && (int)(next_u64() % 4) < density);
      uint64_t bits = 0;
      if (on) {
        bits = 1 + next_u64() % 100;
        if (dtype == GFX_DTYPE_F32 && i % 11 == 3) bits = 0x7fc00000u; /* NaN */
        if (dtype == GFX_DTYPE_BOOL) bits = 1;
        if (dtype == GFX_DTYPE_I64 && i % 3 == 1) bits <<= 32; /* only the high word set */
      } else if (i % 5 == 2) {
        /* -0.0 in the float types; a plain 0 otherwise */
        bits = dtype == GFX_DTYPE_F32 ? 0x80000000u : dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16 ? 0x8000u : 0;
      }
      memcpy(x + (size_t)i * es, &bits, es);
    }
    const gfx_tensor in[1] = {{x, dtype, xs}};
    ir_node node;
    memset(&node, 0, sizeof node);
    node.op = GFX_OP_NON_ZERO;
    node.params.select.dtype = dtype;
    char label[200];
    snprintf(label, sizeof label, "NonZero %s rank %d dims %lld,%lld,%lld,%lld density %d/4", gfx_dtype_name(dtype),
             rank, (long long)dims[0], rank > 1 ? (long long)dims[1] : 0, rank > 2 ? (long long)dims[2] : 0,
             rank > 3 ? (long long)dims[3] : 0, density);
    bounded_case(gpu, stream, &node, in, 1, label);
    free(x);
  }
}

/* NonMaxSuppression: corner and centred boxes, float32/float16/bfloat16, one or several batches and
 * classes, box counts around the 64-box words (63, 64, 65, 129) and up to 20000 in one class, every
 * score and overlap threshold kind, integer coordinates and scores on a coarse grid (many ties and
 * overlaps exactly at the threshold), max_output_boxes_per_class from 0 to beyond the box count;
 * two cases large enough that the suppression mask is built in several chunks of rows. */
static void nms_cases(gfx_dev* gpu, void* stream) {
  static const float ious[] = {0.0f, 0.3f, 0.5f, 0.7f, 1.0f};
  for (int k = 0; k < 37; k++) {
    int64_t batches = rand_int(1, 2), classes = rand_int(1, 4), boxes = rand_int(1, 40);
    static const int64_t edges[] = {63, 64, 65, 129};
    if (k % 6 == 1) boxes = edges[(k / 6) % 4];
    float extent = 20.0f, size = 8.0f;
    if (k == 34) batches = 2, classes = 32, boxes = 5000, extent = 1500.0f, size = 40.0f;
    if (k == 35) batches = 1, classes = 1, boxes = 20000, extent = 2500.0f, size = 40.0f;
    /* as many boxes per class as the Vulkan backend walks on a CPU device */
    if (k == 36) batches = 2, classes = 3, boxes = 2000, extent = 600.0f, size = 40.0f;
    const int dtype = k < 34 ? float_types[k % 3] : k == 36 ? GFX_DTYPE_F16 : GFX_DTYPE_F32;
    const int grid = k % 4 == 3; /* integer coordinates, scores in tenths: ties */
    const gfx_shape bs = SHAPE(batches, boxes, 4), ss = SHAPE(batches, classes, boxes);
    const int64_t nb = gfx_shape_numel(&bs), ns = gfx_shape_numel(&ss);
    float* fb = malloc(sizeof(float) * (size_t)nb + 8);
    float* fs = malloc(sizeof(float) * (size_t)ns + 8);
    ir_node node;
    memset(&node, 0, sizeof node);
    node.op = GFX_OP_NON_MAX_SUPPRESSION;
    ir_select_params* p = &node.params.select;
    p->dtype = dtype;
    p->center_point_box = k % 5 == 4;
    for (int64_t b = 0; b < nb / 4; b++) {
      float v[4];
      for (int c = 0; c < 4; c++) v[c] = (float)((rand_unit() + 1.0) * 0.5) * (c < 2 ? extent : size);
      if (!p->center_point_box) v[2] += v[0], v[3] += v[1]; /* corners: a size past the first */
      if (!p->center_point_box && b % 3 == 1) { /* the other diagonal */
        const float t0 = v[0], t1 = v[1];
        v[0] = v[2], v[1] = v[3], v[2] = t0, v[3] = t1;
      }
      for (int c = 0; c < 4; c++) fb[4 * b + c] = grid ? nearbyintf(v[c]) : v[c];
    }
    for (int64_t i = 0; i < ns; i++) {
      const float u = (float)((rand_unit() + 1.0) * 0.5);
      fs[i] = grid ? nearbyintf(u * 10.0f) / 10.0f : u;
    }
    static const int64_t maxes[] = {0, 1, 3, 10, 100000};
    p->max_output = k >= 34 ? (k == 36 ? 300 : 100000) : maxes[k % 5];
    p->iou_threshold = ious[(k / 2) % 5];
    p->has_score_threshold = k % 3 != 0;
    p->score_threshold = 0.25f;
    /* the boxes and scores in the case's type (the reference reads them the same way) */
    void* hb = malloc(gfx_dtype_size(dtype) * (size_t)nb + 8);
    void* hs = malloc(gfx_dtype_size(dtype) * (size_t)ns + 8);
    for (int64_t i = 0; i < nb; i++) {
      if (dtype == GFX_DTYPE_F32) ((float*)hb)[i] = fb[i];
      else ((uint16_t*)hb)[i] = dtype == GFX_DTYPE_F16 ? gfx_float_to_half(fb[i]) : gfx_float_to_bf16(fb[i]);
    }
    for (int64_t i = 0; i < ns; i++) {
      if (dtype == GFX_DTYPE_F32) ((float*)hs)[i] = fs[i];
      else ((uint16_t*)hs)[i] = dtype == GFX_DTYPE_F16 ? gfx_float_to_half(fs[i]) : gfx_float_to_bf16(fs[i]);
    }
    const gfx_tensor in[2] = {{hb, dtype, bs}, {hs, dtype, ss}};
    char label[200];
    snprintf(label, sizeof label,
             "NonMaxSuppression %s batches %lld classes %lld boxes %lld center %d max %lld iou %g score %s%s",
             gfx_dtype_name(dtype), (long long)batches, (long long)classes, (long long)boxes, p->center_point_box,
             (long long)p->max_output, (double)p->iou_threshold, p->has_score_threshold ? "0.25" : "none",
             grid ? " grid" : "");
    bounded_case(gpu, stream, &node, in, 2, label);
    free(fb), free(fs), free(hb), free(hs);
  }
}

/* Attention: rank 4 and rank 3 inputs, grouped kv heads, no mask, a bool mask or a float one of
 * every broadcast rank, is_causal with fewer, as many or more queries than keys, a scale; one case
 * of more keys than the CUDA kernel keeps in shared memory (its scratch path). */
static void attention_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 37; k++) {
    const int dtype = float_types[k % 3], rank = k % 4 == 3 ? 3 : 4, mask = k % 3;
    const int64_t b = rand_int(1, 2), kvh = rand_int(1, 3), qh = kvh * rand_int(1, 3), d = rand_int(1, 40);
    const int64_t dv = k % 5 == 0 ? rand_int(1, 20) : d, sq = rand_int(1, 12);
    const int64_t skv = k == 36 ? 9000 : rand_int(1, 300);
    gfx_shape shapes[4];
    if (rank == 4) {
      shapes[0] = SHAPE(b, qh, sq, d), shapes[1] = SHAPE(b, kvh, skv, d), shapes[2] = SHAPE(b, kvh, skv, dv);
    } else {
      shapes[0] = SHAPE(b, sq, qh * d), shapes[1] = SHAPE(b, skv, kvh * d), shapes[2] = SHAPE(b, skv, kvh * dv);
    }
    const int64_t full[4] = {b, qh, sq, skv};
    const int mrank = (int)rand_int(1, 4);
    int64_t m[4];
    for (int a = 0; a < mrank; a++) m[a] = full[4 - mrank + a] == 1 || rand_int(0, 2) ? full[4 - mrank + a] : 1;
    shapes[3] = shape(mrank, m);
    ew_case c = case_of(GFX_OP_ATTENTION, dtype, mask ? 4 : 3, shapes);
    if (mask == 1) c.in_dtype[3] = GFX_DTYPE_BOOL;
    c.scale = 1.0;
    ir_attention_params* p = &c.node.params.attention;
    p->has_mask = mask != 0;
    p->mask_bool = mask == 1;
    p->is_causal = k % 4 == 1;
    p->scale = k % 6 == 2 ? 0.7f : 0.0f;
    if (rank == 3) p->q_heads = qh, p->kv_heads = kvh;
    run_case(gpu, stream, &c);
  }
  /* more queries than one 16- or 64-query tile of the tiled kernels, causal among them (each tile of
   * queries then stops at its own last key), heads the 16-byte loads take, float16 and bfloat16 */
  for (int k = 0; k < 8; k++) {
    const int dtype = k % 2 ? GFX_DTYPE_BF16 : GFX_DTYPE_F16, mask = k % 3 == 2 ? 1 : 0;
    const int64_t b = 1 + k % 2, h = 1 + k % 3, d = k % 4 < 2 ? 64 : 32;
    const int64_t sq = (int64_t[]){40, 100, 70, 17}[k % 4], skv = k % 4 == 1 ? sq : (int64_t[]){40, 150, 33}[k % 3];
    gfx_shape shapes[4] = {SHAPE(b, h, sq, d), SHAPE(b, h, skv, d), SHAPE(b, h, skv, d), SHAPE(b, 1, sq, skv)};
    ew_case c = case_of(GFX_OP_ATTENTION, dtype, mask ? 4 : 3, shapes);
    if (mask) c.in_dtype[3] = GFX_DTYPE_BOOL;
    c.scale = 2.0;
    ir_attention_params* p = &c.node.params.attention;
    p->has_mask = mask;
    p->mask_bool = mask;
    p->is_causal = k % 2 == 0;
    run_case(gpu, stream, &c);
  }
}

/* A fused attention node (ir/fuse_attention.c) over the layouts the fusion finds in models. Q, K and
 * V are read in place from [batch, seq, 3, heads, head] projections (ViT; Swin's windows as the
 * batch), Y written as [batch, seq, heads, head]; K may come as kᵀ [batch, heads, head, seq] (unit
 * stride along the keys, which the row kernel takes) or broadcast over the heads; up to two float
 * masks with their broadcast strides (Swin's relative position bias [1, heads, N, N] and shift mask
 * [windows, 1, N, N]). */
typedef struct fused_layout {
  int64_t batch, heads, sq, skv, d, dv;
  int kt;     /* K given transposed */
  int k_bcast; /* K and V of one head for all */
  int masks;  /* 0, 1 (bias), 2 (bias and shift mask) */
  const char* what;
} fused_layout;

static void fused_attention_case(gfx_dev* gpu, void* stream, int dtype, const fused_layout* f, int misalign) {
  const int64_t b = f->batch, h = f->heads, sq = f->sq, skv = f->skv, d = f->d, dv = f->dv;
  ew_case c = case_of(GFX_OP_ATTENTION, dtype, 3 + f->masks, NULL);
  ir_attention_params* p = &c.node.params.attention;
  p->fused = 1;
  p->batch = b, p->heads = h, p->q_seq = sq, p->kv_seq = skv, p->head_size = d, p->v_head_size = dv;
  p->scale = 1.0f / sqrtf((float)d);
  /* Q from a [b, sq, 3, h, d] projection: its first part */
  c.in[0] = SHAPE(b, sq, 3, h, d);
  p->q = (ir_attention_view){0, {sq * 3 * h * d, d, 3 * h * d, 1}};
  if (f->kt) { /* kᵀ [b, h, d, skv] */
    c.in[1] = SHAPE(b, h, d, skv);
    p->k = (ir_attention_view){0, {h * d * skv, d * skv, 1, skv}};
  } else if (f->k_bcast) { /* [b, skv, d]: one head for all */
    c.in[1] = SHAPE(b, skv, d);
    p->k = (ir_attention_view){0, {skv * d, 0, d, 1}};
  } else { /* the second part of a [b, skv, 3, h, d] projection */
    c.in[1] = SHAPE(b, skv, 3, h, d);
    p->k = (ir_attention_view){h * d, {skv * 3 * h * d, d, 3 * h * d, 1}};
  }
  if (f->k_bcast) {
    c.in[2] = SHAPE(b, skv, dv);
    p->v = (ir_attention_view){0, {skv * dv, 0, dv, 1}};
  } else { /* the third part of a [b, skv, 3, h, dv] projection */
    c.in[2] = SHAPE(b, skv, 3, h, dv);
    p->v = (ir_attention_view){2 * h * dv, {skv * 3 * h * dv, dv, 3 * h * dv, 1}};
  }
  p->y_shape = SHAPE(b, sq, h, dv);
  p->y = (ir_attention_view){0, {sq * h * dv, dv, h * dv, 1}};
  if (f->masks > 0) { /* a bias per head, as Swin's relative positions */
    c.in[3] = SHAPE(1, h, sq, skv);
    p->has_mask = 1;
    p->mask_stride[1] = sq * skv, p->mask_stride[2] = skv, p->mask_stride[3] = 1;
  }
  if (f->masks > 1) { /* a mask per batch entry (window), the same for every head */
    c.in[4] = SHAPE(b, 1, sq, skv);
    p->has_mask2 = 1;
    p->mask2_stride[0] = sq * skv, p->mask2_stride[2] = skv, p->mask2_stride[3] = 1;
  }
  for (int i = 0; i < c.n_in; i++) p->in_numel[i] = gfx_shape_numel(&c.in[i]);
  c.scale = 2.0; /* scores of a few units: softmax weights far from uniform */
  c.misalign = misalign;
  snprintf(c.label, sizeof c.label, "Attention fused %s %s: %lld x %lld heads, %lld queries, %lld keys, head %lld/%lld%s",
           f->what, gfx_dtype_name(dtype), (long long)b, (long long)h, (long long)sq, (long long)skv, (long long)d,
           (long long)dv, misalign ? " misaligned" : "");
  run_case(gpu, stream, &c);
}

static const fused_layout fused_layouts[] = {
    {1, 3, 197, 197, 64, 64, 0, 0, 0, "ViT-tiny"},
    {64, 3, 49, 49, 32, 32, 0, 0, 1, "Swin window, bias"},
    {16, 6, 49, 49, 32, 32, 0, 0, 2, "Swin shifted window, bias and mask"},
    {2, 2, 77, 130, 128, 128, 0, 0, 1, "head 128"},
    {2, 3, 40, 33, 40, 24, 0, 0, 2, "heads 40/24"},
    {1, 4, 17, 29, 100, 72, 0, 0, 0, "head 100"},
    {2, 2, 21, 35, 16, 16, 1, 0, 1, "k transposed"},
    {2, 4, 30, 50, 64, 64, 0, 1, 0, "one kv head"},
    {1, 2, 9, 11, 160, 160, 0, 0, 1, "head 160"},
};

/* Every fused layout in every float type (misaligned once per type: the tiled kernels' scalar
 * loads), and the same layouts again on the row kernel (GFXEP_CUDA_ATTENTION=rows), with the
 * unfused cases of more keys than it keeps in shared memory. */
static void fused_attention_cases(gfx_dev* gpu, void* stream) {
  const int n = (int)(sizeof fused_layouts / sizeof fused_layouts[0]);
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < n; k++) fused_attention_case(gpu, stream, float_types[t], &fused_layouts[k], k == 1);
  setenv("GFXEP_CUDA_ATTENTION", "rows", 1);
  for (int t = 0; t < 3; t++) fused_attention_case(gpu, stream, float_types[t], &fused_layouts[t == 0 ? 0 : 2], 0);
  unsetenv("GFXEP_CUDA_ATTENTION");
}

/* LayerNormalization of x + r with a residual Add fused in (ir/fuse_norm.c): ViT's rows of 192,
 * Swin's of 96 and 768, rows for one warp of 32 elements a lane, rows for a block; the sum written
 * too (output 1) or not. */
static void add_norm_cases(gfx_dev* gpu, void* stream) {
  const gfx_shape rows[] = {SHAPE(1, 197, 192), SHAPE(1, 3136, 96), SHAPE(1, 49, 768), SHAPE(4, 1000), SHAPE(2, 3000),
                            SHAPE(3, 7)};
  for (int t = 0; t < 3; t++)
    for (int k = 0; k < 6; k++)
      for (int with_sum = 0; with_sum < 2; with_sum++) {
        const gfx_shape x = rows[k], a = SHAPE(x.dims[x.rank - 1]);
        const gfx_shape shapes[4] = {x, a, a, x};
        ew_case c = case_of(GFX_OP_LAYER_NORMALIZATION, float_types[t], 4, shapes);
        c.node.params.norm = (ir_norm_params){.kind = IR_NORM_LAYER, .axis = -1, .epsilon = 1e-5f, .residual = 1};
        c.n_out = with_sum ? 2 : 1;
        c.stats_dtype = float_types[t];
        c.misalign = k == 0 && with_sum;
        char b[96];
        snprintf(c.label, sizeof c.label, "LayerNormalization of x + r %s %s%s%s", gfx_dtype_name(float_types[t]),
                 gfx_shape_str(&x, b, sizeof b), with_sum ? ", the sum written" : "", c.misalign ? " misaligned" : "");
        run_case(gpu, stream, &c);
      }
}

static void logic_mod_cases(gfx_dev* gpu, void* stream) {
  const gfx_shape pats[][2] = {{SHAPE(4, 33, 17), SHAPE(4, 33, 17)}, {SHAPE(4, 33, 17), SHAPE(17)},
                               {SHAPE(1), SHAPE(4, 33, 17)},         {SHAPE(4, 1, 17), SHAPE(33, 1)},
                               {SHAPE(70001), SHAPE(70001)},         {SHAPE(2, 3, 4, 5), SHAPE(3, 1, 5)}};
  static const gfx_op logic[] = {GFX_OP_NOT, GFX_OP_AND, GFX_OP_OR, GFX_OP_XOR};
  for (int k = 0; k < 4; k++)
    for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
      if (logic[k] == GFX_OP_NOT && p != 0 && p != 4) continue;
      ew_case c = case_of(logic[k], GFX_DTYPE_BOOL, logic[k] == GFX_OP_NOT ? 1 : 2, pats[p]);
      c.misalign = p == 1;
      run_case(gpu, stream, &c);
    }
  for (int t = 0; t < 5; t++)
    for (int fm = 0; fm < 2; fm++) {
      if (t < 3 && fm == 0) continue; /* floats: fmod=1 only */
      for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
        ew_case c = case_of(GFX_OP_MOD, all_math_types[t], 2, pats[p]);
        c.node.params.index.fmod = (int8_t)fm;
        c.misalign = p == 1;
        run_case(gpu, stream, &c);
      }
      if (t >= 3) {
        ew_case c = case_of(GFX_OP_MOD, all_math_types[t], 2, pats[0]);
        c.node.params.index.fmod = (int8_t)fm;
        c.ranged[1] = 1; /* every divisor 0 */
        snprintf(c.label, sizeof c.label, "Mod %s fmod=%d by zero", gfx_dtype_name(all_math_types[t]), fm);
        run_case(gpu, stream, &c);
        c.ranged[0] = 1, c.int_lo[0] = all_math_types[t] == GFX_DTYPE_I64 ? INT64_MIN : INT32_MIN;
        c.int_hi[0] = c.int_lo[0] + 3;
        c.int_lo[1] = c.int_hi[1] = -1; /* the minimum mod -1: 0, no overflow */
        snprintf(c.label, sizeof c.label, "Mod %s fmod=%d minimum by -1", gfx_dtype_name(all_math_types[t]), fm);
        run_case(gpu, stream, &c);
      }
    }
}

/* CumSum along each kind of axis (first, middle of size 1, last, one long line) with exclusive and
 * reverse, every type, int32 sums that wrap; Range in each type, rising and falling; Trilu over every
 * element size with k inside, on and beyond the matrix, both triangles. */
static void scan_cases(gfx_dev* gpu, void* stream) {
  const gfx_shape xs[] = {SHAPE(3, 517), SHAPE(3, 517), SHAPE(4, 1, 17), SHAPE(70001), SHAPE(2, 3, 4, 5)};
  static const int64_t axes[] = {-1, 0, 1, 0, 2};
  for (int t = 0; t < 5; t++)
    for (size_t r = 0; r < sizeof xs / sizeof xs[0]; r++)
      for (int mode = 0; mode < 4; mode++) {
        if (r == 3 && mode != 3) continue; /* the long line once, exclusive and reverse */
        ew_case c = case_of(GFX_OP_CUM_SUM, all_math_types[t], 1, &xs[r]);
        c.node.params.index.axis = axes[r];
        c.node.params.index.exclusive = (int8_t)(mode & 1);
        c.node.params.index.reverse = (int8_t)(mode >> 1);
        c.scale = 1.0;
        c.misalign = r == 1 && mode == 0;
        snprintf(c.label, sizeof c.label, "CumSum %s case %zu axis %lld exclusive %d reverse %d%s",
                 gfx_dtype_name(all_math_types[t]), r, (long long)axes[r], mode & 1, mode >> 1,
                 c.misalign ? " misaligned" : "");
        run_case(gpu, stream, &c);
      }
  for (int t = 3; t < 5; t++) { /* int sums past the type's range wrap */
    ew_case c = case_of(GFX_OP_CUM_SUM, all_math_types[t], 1, xs);
    c.node.params.index.axis = 1;
    c.ranged[0] = 1;
    c.int_hi[0] = t == 3 ? INT32_MAX : INT64_MAX;
    c.int_lo[0] = c.int_hi[0] - 1000;
    snprintf(c.label, sizeof c.label, "CumSum %s wrapping", gfx_dtype_name(all_math_types[t]));
    run_case(gpu, stream, &c);
  }
  static const int range_types[] = {GFX_DTYPE_F32, GFX_DTYPE_I32, GFX_DTYPE_I64};
  for (int t = 0; t < 3; t++)
    for (int dir = 0; dir < 2; dir++) {
      ew_case c = case_of(GFX_OP_RANGE, range_types[t], 0, NULL);
      ir_index_params* p = &c.node.params.index;
      p->dtype = range_types[t];
      p->count = dir ? 70001 : 37;
      p->start = p->start_i = dir ? 1000 : -7;
      p->delta = t == 0 ? (dir ? -0.125 : 0.3) : (dir ? -3 : 5);
      p->delta_i = (int64_t)p->delta;
      snprintf(c.label, sizeof c.label, "Range %s count %lld delta %g", gfx_dtype_name(range_types[t]),
               (long long)p->count, p->delta);
      run_case(gpu, stream, &c);
    }
  static const int trilu_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
  const gfx_shape ts[] = {SHAPE(2, 3, 33, 17), SHAPE(17, 33)};
  static const int64_t ks[] = {0, 3, -5, 100, -100};
  for (int t = 0; t < 4; t++)
    for (int r = 0; r < 2; r++)
      for (int k = 0; k < 5; k++)
        for (int upper = 0; upper < 2; upper++) {
          ew_case c = case_of(GFX_OP_TRILU, trilu_types[t], 1, &ts[r]);
          c.node.params.index.k = ks[k];
          c.node.params.index.upper = (int8_t)upper;
          c.misalign = k == 1;
          snprintf(c.label, sizeof c.label, "Trilu %s case %d k %lld upper %d%s", gfx_dtype_name(trilu_types[t]), r,
                   (long long)ks[k], upper, c.misalign ? " misaligned" : "");
          run_case(gpu, stream, &c);
        }
}

/* The index ops: indices drawn over [-dim, dim) of the axis they index (int32 and int64), data of
 * every element size, batch_dims, every reduction with duplicate indices (applied in index order on
 * both sides, so even float sums agree), ScatterElements' duplicates with reduction none (the last
 * wins on both), ScatterND's reduction none with distinct tuples only. */
static void index_case(gfx_dev* gpu, void* stream, ew_case* c, const char* what) {
  snprintf(c->label, sizeof c->label, "%s %s data, %s indices: %s%s", ir_op_name(c->node.op),
           gfx_dtype_name(c->in_dtype[0]), gfx_dtype_name(c->in_dtype[1]), what, c->misalign ? " misaligned" : "");
  run_case(gpu, stream, c);
}

static ew_case index_of(gfx_op op, int dtype, int idx_dtype, int n_in, const gfx_shape* shapes, int64_t dim) {
  ew_case c = case_of(op, dtype, n_in, shapes);
  c.in_dtype[1] = idx_dtype;
  c.ranged[1] = 1;
  c.int_lo[1] = -dim, c.int_hi[1] = dim - 1;
  return c;
}

static void index_cases(gfx_dev* gpu, void* stream) {
  static const int data_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_I64, GFX_DTYPE_BOOL, GFX_DTYPE_I32,
                                   GFX_DTYPE_BF16};
  static const int idx_types[] = {GFX_DTYPE_I64, GFX_DTYPE_I32};
  for (int t = 0; t < 6; t++)
    for (int it = 0; it < 2; it++) {
      const int dt = data_types[t], ix = idx_types[it];
      /* GatherElements and ScatterElements (reduction none) along each axis */
      const gfx_shape ge[][3] = {{SHAPE(5, 33, 17), SHAPE(7, 20, 17), SHAPE(7, 20, 17)},
                                 {SHAPE(5, 33, 17), SHAPE(5, 40, 17), SHAPE(5, 40, 17)},
                                 {SHAPE(5, 33, 17), SHAPE(3, 33, 9), SHAPE(3, 33, 9)}};
      static const int64_t ge_axes[] = {0, 1, -1};
      static const int64_t ge_dims[] = {5, 33, 17};
      for (int a = 0; a < 3; a++) {
        ew_case c = index_of(GFX_OP_GATHER_ELEMENTS, dt, ix, 2, ge[a], ge_dims[a]);
        c.node.params.index.axis = ge_axes[a];
        c.misalign = a == 2;
        index_case(gpu, stream, &c, a == 0 ? "axis 0" : a == 1 ? "axis 1" : "axis -1");
        ew_case s = index_of(GFX_OP_SCATTER_ELEMENTS, dt, ix, 3, ge[a], ge_dims[a]);
        s.node.params.index.axis = ge_axes[a];
        index_case(gpu, stream, &s, "duplicates, the last wins");
      }
      /* GatherND: slices, elements, batch_dims 1 and 2 */
      const gfx_shape nd[][2] = {{SHAPE(4, 6, 5, 3), SHAPE(10, 2)}, {SHAPE(6, 7), SHAPE(100, 2)},
                                 {SHAPE(4, 6, 5), SHAPE(4, 7, 1)},    {SHAPE(4, 6, 5), SHAPE(4, 6, 3, 1)}};
      static const int64_t nd_dims[] = {4, 6, 6, 5};
      static const int8_t nd_batch[] = {0, 0, 1, 2};
      for (int k = 0; k < 4; k++) {
        ew_case c = index_of(GFX_OP_GATHER_ND, dt, ix, 2, nd[k], nd_dims[k]);
        c.node.params.index.batch_dims = nd_batch[k];
        c.misalign = k == 0;
        char what[32];
        snprintf(what, sizeof what, "batch_dims %d", nd_batch[k]);
        index_case(gpu, stream, &c, what);
      }
      /* ScatterND, reduction none: distinct rows */
      const gfx_shape sn[3] = {SHAPE(40, 33), SHAPE(25, 1), SHAPE(25, 33)};
      ew_case c = index_of(GFX_OP_SCATTER_ND, dt, ix, 3, sn, 40);
      c.ranged[1] = 0, c.distinct[1] = 1;
      index_case(gpu, stream, &c, "distinct rows");
    }
  /* the reductions, with duplicates */
  for (int t = 0; t < 6; t++)
    for (int r = IR_SCATTER_ADD; r <= IR_SCATTER_MIN; r++) {
      const int dt = data_types[t];
      if (dt == GFX_DTYPE_BOOL) continue;
      static const char* const names[] = {"none", "add", "mul", "max", "min"};
      const gfx_shape se[3] = {SHAPE(6, 33, 17), SHAPE(6, 40, 17), SHAPE(6, 40, 17)};
      ew_case c = index_of(GFX_OP_SCATTER_ELEMENTS, dt, GFX_DTYPE_I64, 3, se, 33);
      c.node.params.index.axis = 1;
      c.node.params.index.reduction = (int8_t)r;
      c.scale = 2.0;
      index_case(gpu, stream, &c, names[r]);
      const gfx_shape sn[3] = {SHAPE(5, 6, 17), SHAPE(60, 2), SHAPE(60, 17)};
      ew_case d = index_of(GFX_OP_SCATTER_ND, dt, GFX_DTYPE_I32, 3, sn, 5);
      d.node.params.index.reduction = (int8_t)r;
      d.scale = 2.0;
      d.misalign = r == IR_SCATTER_ADD;
      index_case(gpu, stream, &d, names[r]);
      const gfx_shape sn1[3] = {SHAPE(7, 9), SHAPE(300, 2), SHAPE(300)};
      ew_case e = index_of(GFX_OP_SCATTER_ND, dt, GFX_DTYPE_I64, 3, sn1, 7);
      e.node.params.index.reduction = (int8_t)r;
      e.scale = r == IR_SCATTER_MUL ? 1.0 : 2.0;
      index_case(gpu, stream, &e, names[r]);
    }
}

/* GridSample: every mode, padding mode and align_corners in float32 and float16, over a grid that
 * reaches past the borders (scale 1.3) and far past them (scale 4: reflection bounces several
 * times); nearest-mode ties (a grid of quarters on 4- and 5-pixel axes lands on halves); a larger
 * image with many pixels per channel, one element off alignment. */
static void grid_sample_cases(gfx_dev* gpu, void* stream) {
  static const char* const modes[] = {"nearest", "linear", "cubic"};
  static const char* const pads[] = {"zeros", "border", "reflection"};
  static const int types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16};
  for (int t = 0; t < 2; t++)
    for (int m = 0; m < 3; m++)
      for (int pad = 0; pad < 3; pad++)
        for (int align = 0; align < 2; align++)
          for (int v = 0; v < 4; v++) {
            const gfx_shape small[2] = {SHAPE(2, 3, 9, 11), SHAPE(2, 13, 17, 2)};
            const gfx_shape tie[2] = {SHAPE(1, 2, 4 + align, 4 + align), SHAPE(1, 9, 10, 2)};
            const gfx_shape large[2] = {SHAPE(1, 4, 64, 80), SHAPE(1, 70, 90, 2)};
            ew_case c = case_of(GFX_OP_GRID_SAMPLE, types[t], 2, v == 2 ? tie : v == 3 ? large : small);
            c.node.params.grid_sample = (ir_grid_sample_params){.mode = m, .padding = pad, .align_corners = align};
            c.scale = v == 1 ? 4.0 : 1.3;
            if (v == 2) c.grid = 0.25;
            c.misalign = v == 3;
            snprintf(c.label, sizeof c.label, "GridSample %s %s %s align_corners=%d %s%s", gfx_dtype_name(types[t]),
                     modes[m], pads[pad], align, v == 0 ? "near" : v == 1 ? "far" : v == 2 ? "ties" : "large",
                     c.misalign ? " misaligned" : "");
            run_case(gpu, stream, &c);
          }
  /* an input and a grid of different types (a model lowered to float16 keeps its grid float32) */
  for (int t = 0; t < 2; t++)
    for (int m = 0; m < 3; m++) {
      const gfx_shape s[2] = {SHAPE(2, 3, 9, 11), SHAPE(2, 13, 17, 2)};
      ew_case c = case_of(GFX_OP_GRID_SAMPLE, types[t], 2, s);
      c.in_dtype[1] = types[1 - t];
      c.node.params.grid_sample = (ir_grid_sample_params){.mode = m, .padding = m, .align_corners = m == 1};
      c.scale = 1.3;
      snprintf(c.label, sizeof c.label, "GridSample %s with a %s grid, %s %s", gfx_dtype_name(types[t]),
               gfx_dtype_name(types[1 - t]), modes[m], pads[m]);
      run_case(gpu, stream, &c);
    }
}

/* Channels-last Conv case `given` again (new random data) with its W stored [M, kH, kW, C/group]
 * (params.conv.weights_channels_last, how ir_fuse_for stores a constant W): the reference backend reads
 * W in that order too (test_fuse_transformer checks it against the order ONNX gives). */
static void run_case_weights_channels_last(gfx_dev* gpu, void* stream, const ew_case* given) {
  ew_case c = *given;
  c.node.params.conv.weights_channels_last = 1;
  const size_t len = strlen(c.label);
  snprintf(c.label + len, sizeof c.label - len, " W stored NHWC");
  run_case(gpu, stream, &c);
}

static void conv_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 60; k++) {
    /* every third case in float16 */
    ew_case c = case_of(GFX_OP_CONV, k % 3 == 2 ? GFX_DTYPE_F16 : GFX_DTYPE_F32, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 2;
    p->dtype = c.out_dtype;
    int depthwise = k % 6 == 1;
    p->group = depthwise ? rand_int(2, 8) : (rand_int(0, 3) == 0 ? rand_int(2, 3) : 1);
    int64_t cin = p->group * (depthwise ? 1 : rand_int(1, 4));
    int64_t cout = p->group * (depthwise ? rand_int(1, 2) : rand_int(1, 4));
    int64_t kh = rand_int(1, 4), kw = rand_int(1, 4);
    p->auto_pad = (ir_auto_pad)(k % 5 == 4 ? rand_int(1, 3) : 0);
    for (int i = 0; i < 2; i++) {
      p->strides[i] = rand_int(1, 3);
      p->dilations[i] = p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER ? 1 : rand_int(1, 2);
      if (p->auto_pad == IR_PAD_NOTSET) {
        p->pads[i] = rand_int(0, 2);
        p->pads[2 + i] = rand_int(0, 2); /* asymmetric on purpose */
      }
    }
    int64_t x[4] = {rand_int(1, 2), cin, rand_int(5, 20), rand_int(5, 20)};
    int64_t w[4] = {cout, cin / p->group, kh, kw};
    int64_t b[1] = {cout};
    c.in[0] = shape(4, x);
    c.in[1] = shape(4, w);
    c.in[2] = shape(1, b);
    c.n_in = rand_int(0, 2) ? 3 : 2;
    snprintf(c.label, sizeof c.label,
             "Conv x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] g=%lld s=%lld,%lld d=%lld,%lld pads=%lld,%lld,%lld,%lld "
             "auto=%d bias=%d",
             (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)w[0], (long long)w[1],
             (long long)w[2], (long long)w[3], (long long)p->group, (long long)p->strides[0],
             (long long)p->strides[1], (long long)p->dilations[0], (long long)p->dilations[1], (long long)p->pads[0],
             (long long)p->pads[1], (long long)p->pads[2], (long long)p->pads[3], (int)p->auto_pad, c.n_in == 3);
    snprintf(c.label + strlen(c.label), sizeof c.label - strlen(c.label), " %s", gfx_dtype_name(c.out_dtype));
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(p, &c.in[0], &c.in[1], &g);
    if (s) { /* a random geometry that is not valid: not a case */
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c);
  }
  /* 3-D (video, volumes): symmetric pads, as the CUDA backend takes them */
  for (int k = 0; k < 24; k++) {
    ew_case c = case_of(GFX_OP_CONV, k % 3 == 2 ? GFX_DTYPE_F16 : GFX_DTYPE_F32, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 3;
    p->dtype = c.out_dtype;
    p->group = k % 4 == 3 ? 2 : 1;
    int64_t cin = p->group * rand_int(1, 3), cout = p->group * rand_int(1, 3);
    int64_t x[5] = {rand_int(1, 2), cin, rand_int(3, 8), rand_int(4, 12), rand_int(4, 12)};
    int64_t w[5] = {cout, cin / p->group, rand_int(1, 3), rand_int(1, 3), rand_int(1, 3)};
    int64_t b[1] = {cout};
    for (int i = 0; i < 3; i++) {
      p->strides[i] = rand_int(1, 2);
      p->dilations[i] = rand_int(1, 2);
      p->pads[i] = p->pads[3 + i] = rand_int(0, 1);
    }
    c.in[0] = shape(5, x);
    c.in[1] = shape(5, w);
    c.in[2] = shape(1, b);
    c.n_in = k % 2 ? 3 : 2;
    snprintf(c.label, sizeof c.label,
             "Conv3d x[%lld,%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld,%lld] g=%lld s=%lld,%lld,%lld d=%lld,%lld,%lld "
             "pads=%lld,%lld,%lld bias=%d %s",
             (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)x[4], (long long)w[0],
             (long long)w[1], (long long)w[2], (long long)w[3], (long long)w[4], (long long)p->group,
             (long long)p->strides[0], (long long)p->strides[1], (long long)p->strides[2], (long long)p->dilations[0],
             (long long)p->dilations[1], (long long)p->dilations[2], (long long)p->pads[0], (long long)p->pads[1],
             (long long)p->pads[2], c.n_in == 3, gfx_dtype_name(c.out_dtype));
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(p, &c.in[0], &c.in[1], &g);
    if (s) { /* a random geometry that is not valid: not a case */
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c);
  }
  /* one large case typical of image models */
  ew_case big = case_of(GFX_OP_CONV, GFX_DTYPE_F32, 3, NULL);
  big.scale = 1.0;
  ir_conv_params* p = &big.node.params.conv;
  p->spatial = 2;
  p->group = 1;
  p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
  p->pads[0] = p->pads[1] = p->pads[2] = p->pads[3] = 1;
  big.in[0] = shape(4, (int64_t[]){1, 32, 128, 128});
  big.in[1] = shape(4, (int64_t[]){32, 32, 3, 3});
  big.in[2] = shape(1, (int64_t[]){32});
  snprintf(big.label, sizeof big.label, "Conv 1x32x128x128 3x3 pad 1");
  run_case(gpu, stream, &big);
  /* an image net's last layers: few output channels on a map large enough that the Vulkan backend
   * takes the 16-row tiled blocks for them (3 for RGB, 12 before a x2 pixel shuffle; K of 216 and 36) */
  const int64_t last_layers[][3] = {{24, 3, GFX_DTYPE_F32}, {24, 3, GFX_DTYPE_F16}, {4, 12, GFX_DTYPE_F16}};
  for (int k = 0; k < 3; k++) {
    ew_case c = case_of(GFX_OP_CONV, (int)last_layers[k][2], 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->group = 1, q->dtype = (int)last_layers[k][2];
    q->strides[0] = q->strides[1] = q->dilations[0] = q->dilations[1] = 1;
    q->pads[0] = q->pads[1] = q->pads[2] = q->pads[3] = 1;
    q->activation = k == 2 ? IR_ACT_RELU : IR_ACT_NONE;
    c.in[0] = SHAPE(1, last_layers[k][0], 272, 256);
    c.in[1] = SHAPE(last_layers[k][1], last_layers[k][0], 3, 3);
    c.in[2] = SHAPE(last_layers[k][1]);
    snprintf(c.label, sizeof c.label, "Conv %s 1x%lldx272x256 -> %lld channels 3x3 pad 1",
             last_layers[k][2] == GFX_DTYPE_F16 ? "fp16" : "fp32", (long long)last_layers[k][0],
             (long long)last_layers[k][1]);
    run_case(gpu, stream, &c);
  }
  /* few output channels (1 to 4: an image net's RGB output; the CUDA backend's own kernel for them):
   * windows 3x3 to 9x9, strides and dilations up to 2, pads on some sides only, with and without a
   * bias, a ReLU and a residual, every float type, maps both smaller and larger than one tile */
  for (int k = 0; k < 18; k++) {
    const int dtype = float_types[k % 3];
    ew_case c = case_of(GFX_OP_CONV, dtype, k % 4 == 3 ? 2 : 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->group = 1, q->dtype = dtype;
    const int64_t cin = (int64_t[]){32, 8, 17}[k % 3], cout = 1 + k % 4, kernel = (int64_t[]){3, 9, 5, 3, 7}[k % 5];
    for (int i = 0; i < 2; i++) {
      q->strides[i] = k % 5 == 3 ? 2 : 1;
      q->dilations[i] = k % 7 == 4 ? 2 : 1;
      q->pads[i] = k % 3 == 1 ? 0 : kernel / 2;
      q->pads[2 + i] = k % 6 == 2 ? 0 : kernel / 2;
    }
    q->activation = k % 2 ? IR_ACT_RELU : IR_ACT_NONE;
    const int64_t n = k % 8 == 5 ? 2 : 1, h = k % 2 ? rand_int(40, 70) : rand_int(9, 20), w = rand_int(20, 80);
    c.in[0] = SHAPE(n, cin, h, w);
    c.in[1] = SHAPE(cout, cin, kernel, kernel);
    /* weights of a trained layer's size (1 / sqrt(fan-in)): the output stays O(1), so float32's
     * tolerance measures the kernel, not the cancellation of 2592 unit-sized terms */
    c.in_scale[1] = 1.0 / sqrt((double)(cin * kernel * kernel));
    if (c.n_in == 3) c.in[2] = SHAPE(cout);
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    if (k % 4 == 1) { /* a residual added before the activation */
      q->residual = IR_RES_ADD_THEN_ACT;
      c.n_in = IR_CONV_RESIDUAL_INPUT + 1;
      c.in[2] = SHAPE(cout);
      c.in_dtype[IR_CONV_RESIDUAL_INPUT] = dtype;
      c.in[IR_CONV_RESIDUAL_INPUT] = SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
    }
    snprintf(c.label, sizeof c.label, "Conv few outputs %s %lldx%lldx%lldx%lld -> %lld, %lldx%lld s%d d%d pads %d,%d,%d,%d%s%s%s",
             gfx_dtype_name(dtype), (long long)n, (long long)cin, (long long)h, (long long)w, (long long)cout,
             (long long)kernel, (long long)kernel, (int)q->strides[0], (int)q->dilations[0], (int)q->pads[0],
             (int)q->pads[1], (int)q->pads[2], (int)q->pads[3], c.n_in == 2 ? " no bias" : "",
             q->activation == IR_ACT_RELU ? " +ReLU" : "", q->residual ? " +residual" : "");
    run_case(gpu, stream, &c);
  }
  /* bias with ReLU or no activation, and a residual added before it: what the CUDA backend hands to
   * cuDNN's fused call (bias + activation inside the convolution) in both layouts and every float
   * type; tensor-core channel counts (multiples of 8) and the few odd ones beside them */
  for (int k = 0; k < 16; k++) {
    const int dtype = k % 3 == 0 ? GFX_DTYPE_F32 : k % 3 == 1 ? GFX_DTYPE_F16 : GFX_DTYPE_BF16;
    const int nhwc = k % 2, residual = k % 4 >= 2;
    ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->dtype = dtype, q->channels_last = nhwc, q->group = k % 8 == 5 ? 2 : 1;
    const int64_t cin = (int64_t[]){16, 32, 64, 12}[k % 4], cout = (int64_t[]){32, 16, 64, 8, 12}[k % 5];
    const int64_t kernel = k % 7 == 3 ? 5 : 3, stride = k % 6 == 4 ? 2 : 1;
    for (int i = 0; i < 2; i++) {
      q->strides[i] = stride;
      q->dilations[i] = 1;
      q->pads[i] = q->pads[2 + i] = kernel / 2;
    }
    q->activation = k % 5 == 2 ? IR_ACT_NONE : IR_ACT_RELU;
    const int64_t n = k % 8 == 7 ? 2 : 1, h = rand_int(9, 40), w = rand_int(9, 40);
    c.in[0] = nhwc ? SHAPE(n, h, w, cin) : SHAPE(n, cin, h, w);
    c.in[1] = SHAPE(cout, cin / q->group, kernel, kernel);
    c.in[2] = SHAPE(cout);
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (!s && residual) {
      q->residual = IR_RES_ADD_THEN_ACT;
      c.n_in = 4;
      c.in_dtype[3] = dtype;
      c.in[3] = nhwc ? SHAPE(g.n, g.out[0], g.out[1], g.c_out) : SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
    }
    gfx_status_free(s);
    snprintf(c.label, sizeof c.label, "Conv bias%s%s %s %s x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] g=%lld s=%lld",
             residual ? "+residual" : "", q->activation == IR_ACT_RELU ? "+ReLU" : "", nhwc ? "NHWC" : "NCHW",
             gfx_dtype_name(dtype), (long long)c.in[0].dims[0], (long long)c.in[0].dims[1], (long long)c.in[0].dims[2],
             (long long)c.in[0].dims[3], (long long)cout, (long long)(cin / q->group), (long long)kernel,
             (long long)kernel, (long long)q->group, (long long)stride);
    run_case(gpu, stream, &c);
    if (nhwc) run_case_weights_channels_last(gpu, stream, &c);
  }
  /* float32 NCHW 3x3 and 5x5 convolutions of stride 1 as SR and denoiser nets have them: channel
   * counts off multiples of 8 and 16 and over 64 and 128 (3 for a first layer), maps that are no
   * multiple of a kernel's tiles, batches, pads of 1, 0, 2 and asymmetric ones (a padded copy on
   * CUDA's cuDNN path), with and without a bias, each activation kind, a residual before or after it. Weights of a trained
   * layer's size keep the output O(1): float32's tolerance then measures the products, which a TF32
   * product (11 significant bits) misses by far. */
  for (int k = 0; k < 24; k++) {
    /* no bias in some cases, except where a residual needs the bias slot */
    ew_case c = case_of(GFX_OP_CONV, GFX_DTYPE_F32, k % 5 == 3 && k % 4 != 2 ? 2 : 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->group = 1, q->dtype = GFX_DTYPE_F32;
    const int64_t cin = (int64_t[]){8, 24, 64, 40, 16, 128, 33, 32, 3}[k % 9];
    const int64_t cout = (int64_t[]){12, 32, 64, 8, 72, 130, 40, 5, 20}[k % 9 == 8 ? 8 : k % 7];
    const int64_t kernel = k % 6 == 4 ? 5 : 3;
    static const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {2, 2, 2, 2}, {0, 1, 1, 0}};
    const int64_t* pad = pads[kernel == 5 && k % 12 == 4 ? 2 : k % 4 == 1 ? 1 + (k / 4) % 3 : 0];
    for (int i = 0; i < 2; i++) {
      q->strides[i] = q->dilations[i] = 1;
      q->pads[i] = pad[i];
      q->pads[2 + i] = pad[2 + i];
    }
    q->activation = (int[]){IR_ACT_RELU, IR_ACT_NONE, IR_ACT_LEAKY_RELU, IR_ACT_RELU, IR_ACT_TANH}[k % 5];
    q->act_alpha = 0.1f;
    const int64_t n = k % 6 == 5 ? 2 : 1, h = k % 3 ? rand_int(9, 40) : rand_int(1, 8),
                  w = rand_int(20, 100);
    c.in[0] = SHAPE(n, cin, h, w);
    c.in[1] = SHAPE(cout, cin, kernel, kernel);
    c.in_scale[1] = 1.0 / sqrt((double)(cin * kernel * kernel));
    c.in[2] = SHAPE(cout);
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (s) { /* a 1-row map with no pads has no output rows: not a case */
      gfx_status_free(s);
      continue;
    }
    if (k % 4 == 2) {
      q->residual = k % 8 == 2 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = IR_CONV_RESIDUAL_INPUT + 1; /* the bias stays in[2] */
      c.in_dtype[IR_CONV_RESIDUAL_INPUT] = GFX_DTYPE_F32;
      c.in[IR_CONV_RESIDUAL_INPUT] = SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
    }
    snprintf(c.label, sizeof c.label, "Conv fp32 %lldx%lld %lldx%lldx%lldx%lld -> %lld pads %d,%d,%d,%d act=%d res=%d%s",
             (long long)kernel, (long long)kernel, (long long)n, (long long)cin, (long long)h, (long long)w, (long long)cout, (int)q->pads[0],
             (int)q->pads[1], (int)q->pads[2], (int)q->pads[3], q->activation, q->residual,
             c.n_in == 2 ? " no bias" : "");
    run_case(gpu, stream, &c);
  }
  /* float16 NCHW convolutions whose input channels are a multiple of 8, the geometry the Vulkan
   * backend's channels-last tensor-core path takes (GFXEP_VULKAN_COOP_NHWC): 1x1, 3x3 and 5x5 windows
   * (25 taps), strides and dilations of 2, asymmetric pads, output channels for each block height (3
   * and 12 to 130), maps past one 128-column block and batches of 2, with and without a bias, with an
   * activation and a residual before or after it */
  for (int k = 0; k < 16; k++) {
    ew_case c = case_of(GFX_OP_CONV, GFX_DTYPE_F16, k % 7 == 3 ? 2 : 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->group = 1, q->dtype = GFX_DTYPE_F16;
    const int64_t cin = (int64_t[]){8, 16, 32, 64, 24}[k % 5];
    const int64_t cout = (int64_t[]){3, 12, 32, 64, 72, 130}[k % 6];
    const int64_t kernel = (int64_t[]){3, 1, 3, 5}[k % 4];
    static const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {2, 2, 2, 2}, {0, 1, 1, 0}};
    const int64_t* pad = pads[kernel == 1 ? 1 : kernel == 5 ? (k % 8 == 3 ? 2 : 3) : k % 3 == 2 ? 3 : 0];
    for (int i = 0; i < 2; i++) {
      q->strides[i] = k % 5 == 2 ? 2 : 1;
      q->dilations[i] = k % 6 == 4 && kernel > 1 ? 2 : 1;
      q->pads[i] = pad[i];
      q->pads[2 + i] = pad[2 + i];
    }
    q->activation = (int[]){IR_ACT_RELU, IR_ACT_NONE, IR_ACT_LEAKY_RELU}[k % 3];
    q->act_alpha = 0.1f;
    const int64_t n = k % 4 == 2 ? 2 : 1, h = rand_int(9, 30), w = rand_int(9, 30);
    c.in[0] = SHAPE(n, cin, h, w);
    c.in[1] = SHAPE(cout, cin, kernel, kernel);
    c.in_scale[1] = 1.0 / sqrt((double)(cin * kernel * kernel));
    c.in[2] = SHAPE(cout);
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    if (k % 5 == 1 && c.n_in == 3) {
      q->residual = k % 10 == 1 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = IR_CONV_RESIDUAL_INPUT + 1; /* the bias stays in[2] */
      c.in_dtype[IR_CONV_RESIDUAL_INPUT] = GFX_DTYPE_F16;
      c.in[IR_CONV_RESIDUAL_INPUT] = SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
    }
    snprintf(c.label, sizeof c.label,
             "Conv fp16 c_in x8 %lldx%lld %lldx%lldx%lldx%lld -> %lld s%d d%d pads %d,%d,%d,%d act=%d res=%d%s",
             (long long)kernel, (long long)kernel, (long long)n, (long long)cin, (long long)h, (long long)w,
             (long long)cout, (int)q->strides[0], (int)q->dilations[0], (int)q->pads[0], (int)q->pads[1],
             (int)q->pads[2], (int)q->pads[3], q->activation, q->residual, c.n_in == 2 ? " no bias" : "");
    run_case(gpu, stream, &c);
  }
  /* channels-last 2-D convolutions (layout=nhwc: X, Y and the residual N, H, W, C; W as ONNX has it):
   * groups, depthwise, strides, dilations, symmetric pads, bias, the fused epilogue; float32, float16
   * and bfloat16. Backends without them (Vulkan) decline every one. */
  for (int k = 0; k < 18; k++) {
    const int dtype = k % 3 == 0 ? GFX_DTYPE_F32 : k % 3 == 1 ? GFX_DTYPE_F16 : GFX_DTYPE_BF16;
    ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->dtype = dtype, q->channels_last = 1;
    const int depthwise = k % 6 == 4;
    q->group = depthwise ? 8 : k % 5 == 3 ? 2 : 1;
    const int64_t cin = depthwise ? 8 : q->group * (int64_t[]){3, 8, 16}[k % 3];
    const int64_t cout = depthwise ? 8 : q->group * (int64_t[]){8, 12, 32}[(k / 3) % 3];
    const int64_t kh = (int64_t[]){3, 1, 5}[k % 3], kw = k % 4 == 1 ? 1 : kh;
    for (int i = 0; i < 2; i++) {
      q->strides[i] = k % 4 == 2 ? 2 : 1;
      q->dilations[i] = k % 7 == 5 ? 2 : 1;
    }
    q->pads[0] = q->pads[2] = kh / 2 * q->dilations[0];
    q->pads[1] = q->pads[3] = kw / 2 * q->dilations[1];
    q->activation = k % 4 == 1 ? IR_ACT_RELU : k % 4 == 3 ? IR_ACT_LEAKY_RELU : IR_ACT_NONE;
    q->act_alpha = 0.1f;
    const int64_t x[4] = {k % 5 == 4 ? 2 : 1, rand_int(6, 24), rand_int(6, 24), cin};
    c.in[0] = shape(4, x);
    c.in[1] = SHAPE(cout, cin / q->group, kh, kw);
    c.in[2] = SHAPE(cout);
    c.n_in = k % 3 == 2 ? 2 : 3;
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g); /* fits: a refused one fails in run_case */
    if (!s && k % 6 == 1) { /* a residual input, channels-last like the output */
      q->residual = k % 12 == 1 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = 4;
      c.in_dtype[3] = dtype;
      c.in[3] = SHAPE(g.n, g.out[0], g.out[1], g.c_out);
    }
    gfx_status_free(s);
    snprintf(c.label, sizeof c.label, "Conv NHWC %s x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] g=%lld s=%lld d=%lld act=%d res=%d",
             gfx_dtype_name(dtype), (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)cout,
             (long long)(cin / q->group), (long long)kh, (long long)kw, (long long)q->group, (long long)q->strides[0],
             (long long)q->dilations[0], q->activation, q->residual);
    run_case(gpu, stream, &c);
    if (kh * kw > 1) run_case_weights_channels_last(gpu, stream, &c);
  }
  /* first layers of image nets: 1-4 input channels through wide windows (up to 9x9) over large images,
   * strides, dilations, batches, bias, activations and residuals, in every float type */
  for (int k = 0; k < 9; k++) {
    const int dtype = k % 3 == 0 ? GFX_DTYPE_F32 : k % 3 == 1 ? GFX_DTYPE_F16 : GFX_DTYPE_BF16;
    ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->dtype = dtype, q->group = 1;
    const int64_t cin = 1 + k % 4, cout = (int64_t[]){16, 32, 12}[k % 3], kh = (int64_t[]){3, 5, 9, 7}[k % 4];
    const int64_t stride = k % 4 == 3 ? 2 : 1, dilation = k == 4 ? 2 : 1;
    for (int i = 0; i < 2; i++) {
      q->strides[i] = stride;
      q->dilations[i] = dilation;
      q->pads[i] = q->pads[i + 2] = kh / 2 * dilation;
    }
    q->activation = k % 3 == 1 ? IR_ACT_RELU : k % 3 == 2 ? IR_ACT_TANH : IR_ACT_NONE;
    const int64_t side = k == 6 ? 200 : stride == 2 ? 260 : 130;
    const int64_t x[4] = {k % 4 == 1 ? 2 : 1, cin, side, side + 3};
    c.in[0] = shape(4, x);
    c.in[1] = SHAPE(cout, cin, kh, kh);
    c.in[2] = SHAPE(cout);
    c.n_in = k % 5 == 3 ? 2 : 3;
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (!s && k % 4 == 2) { /* a residual input */
      q->residual = k % 8 == 2 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = 4;
      c.in_dtype[3] = dtype;
      c.in[3] = SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
    }
    gfx_status_free(s);
    snprintf(c.label, sizeof c.label, "Conv few-channel %s x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] s=%lld d=%lld act=%d res=%d",
             gfx_dtype_name(dtype), (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)cout,
             (long long)cin, (long long)kh, (long long)kh, (long long)stride, (long long)dilation, q->activation,
             q->residual);
    run_case(gpu, stream, &c);
  }
  /* first layers in both layouts (on CUDA the few-channel tensor-core kernel), 16-bit and then
   * float32 (cuDNN on CUDA; weights of a trained layer's size so that float32's tolerance measures
   * the products, not the cancellation of 256 unit terms): output channels
   * below one 8-channel piece, between pieces and over one 64-channel group; taps up to 256; odd and
   * even widths; images smaller than a tile; asymmetric pads, strides, dilations, batches, and every
   * part of the epilogue */
  static const struct {
    int cin, cout, kh, kw, stride, dilation, pad_begin, pad_end, h, w, batch, act, res;
  } narrow[] = {
      {3, 64, 5, 5, 1, 1, 2, 2, 68, 120, 1, IR_ACT_RELU, 0}, /* ESPCN's first layer, scaled down */
      {3, 3, 3, 3, 1, 1, 1, 1, 37, 41, 1, IR_ACT_NONE, 0},
      {3, 96, 9, 9, 1, 1, 4, 4, 40, 64, 1, IR_ACT_TANH, 0},  /* two channel groups, 243 taps */
      {4, 20, 7, 7, 2, 1, 2, 3, 45, 77, 2, IR_ACT_LEAKY_RELU, 0},
      {1, 130, 3, 3, 1, 2, 2, 2, 30, 34, 1, IR_ACT_RELU, IR_RES_ADD_THEN_ACT},
      {4, 8, 8, 8, 1, 1, 3, 4, 33, 50, 1, IR_ACT_NONE, IR_RES_ACT_THEN_ADD}, /* 256 taps, even window */
      {2, 32, 1, 1, 1, 1, 0, 0, 17, 300, 1, IR_ACT_HARD_SWISH, 0},
      {3, 12, 5, 3, 3, 1, 2, 1, 50, 97, 1, IR_ACT_NONE, IR_RES_ADD_THEN_ACT},
      {3, 64, 3, 3, 1, 1, 1, 1, 5, 9, 3, IR_ACT_SIGMOID, 0},
      {3, 1, 3, 3, 1, 1, 0, 0, 19, 35, 1, IR_ACT_NONE, 0},
      {1, 40, 11, 11, 3, 2, 10, 10, 64, 70, 1, IR_ACT_ELU, 0},
      {3, 64, 3, 3, 1, 1, 1, 1, 24, 64, 1, IR_ACT_NONE, IR_RES_ACT_THEN_ADD}, /* widths and channels in 8s */
      {2, 16, 5, 5, 1, 1, 2, 2, 16, 40, 2, IR_ACT_RELU, IR_RES_ADD_THEN_ACT},
      /* a 16x16 stride-16 patch embedding: its tile's window (247 KB) fits no device's shared memory,
       * so CUDA runs it on cuDNN and declines the NCHW-input kind */
      {1, 16, 16, 16, 16, 1, 0, 0, 256, 544, 1, IR_ACT_NONE, 0},
  };
  /* their own random stream, so that the cases after them keep their data */
  const uint64_t rng_saved = rng_state;
  rng_state = 20261204;
  /* layout 0: NCHW; 1: channels-last; 2: channels-last of an NCHW input (params.conv.nchw_input) */
  for (int f32 = 0; f32 < 2; f32++)
    for (int k = 0; k < (int)(sizeof narrow / sizeof narrow[0]); k++)
      for (int layout = 0; layout < 3; layout++) {
        const int symmetric = narrow[k].pad_begin == narrow[k].pad_end, channels_last = layout > 0;
        if (channels_last && !symmetric) continue; /* not a shape the layout transformer hands over */
        const int dtype = f32 ? GFX_DTYPE_F32 : (k + layout) % 2 ? GFX_DTYPE_BF16 : GFX_DTYPE_F16;
        ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
        c.scale = 1.0;
        if (f32) c.in_scale[1] = 1.0 / sqrt((double)(narrow[k].cin * narrow[k].kh * narrow[k].kw));
        ir_conv_params* q = &c.node.params.conv;
        q->spatial = 2, q->dtype = dtype, q->group = 1, q->channels_last = channels_last, q->nchw_input = layout == 2;
        for (int i = 0; i < 2; i++) {
          q->strides[i] = narrow[k].stride;
          q->dilations[i] = narrow[k].dilation;
          q->pads[i] = narrow[k].pad_begin;
          q->pads[i + 2] = narrow[k].pad_end;
        }
        q->activation = narrow[k].act;
        q->act_alpha = 0.1f;
        q->act_beta = 0.0f;
        const int64_t n = narrow[k].batch, cin = narrow[k].cin, h = narrow[k].h, w = narrow[k].w;
        c.in[0] = layout == 1 ? SHAPE(n, h, w, cin) : SHAPE(n, cin, h, w);
        c.in[1] = SHAPE(narrow[k].cout, cin, narrow[k].kh, narrow[k].kw);
        c.in[2] = SHAPE(narrow[k].cout);
        c.n_in = k % 4 == 3 ? 2 : 3;
        ir_conv_geom g;
        gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
        if (!s && narrow[k].res) {
          q->residual = narrow[k].res;
          c.n_in = 4;
          c.in_dtype[3] = dtype;
          c.in[3] = channels_last ? SHAPE(g.n, g.out[0], g.out[1], g.c_out) : SHAPE(g.n, g.c_out, g.out[0], g.out[1]);
        }
        gfx_status_free(s);
        snprintf(c.label, sizeof c.label,
                 "Conv few-channel %s %s x[%lld,%lld,%lld,%lld] w[%d,%d,%d,%d] s=%d d=%d pads %d,%d act=%d res=%d",
                 layout == 2 ? "NCHW->NHWC" : channels_last ? "NHWC" : "NCHW", gfx_dtype_name(dtype), (long long)c.in[0].dims[0],
                 (long long)c.in[0].dims[1], (long long)c.in[0].dims[2], (long long)c.in[0].dims[3], narrow[k].cout,
                 narrow[k].cin, narrow[k].kh, narrow[k].kw, narrow[k].stride, narrow[k].dilation, narrow[k].pad_begin,
                 narrow[k].pad_end, narrow[k].act, narrow[k].res);
        run_case(gpu, stream, &c);
      }
  rng_state = rng_saved;
  /* channels-last 1x1 convolutions (on CUDA one matrix product over the pixels): odd and even channel
   * counts (rows of 3 or 33 16-bit values are not 16-byte aligned), batches, with and without bias,
   * activations and residuals, in every float type */
  for (int k = 0; k < 12; k++) {
    const int dtype = k % 3 == 0 ? GFX_DTYPE_F32 : k % 3 == 1 ? GFX_DTYPE_F16 : GFX_DTYPE_BF16;
    ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 2, q->dtype = dtype, q->channels_last = 1, q->group = 1;
    for (int i = 0; i < 2; i++) q->strides[i] = q->dilations[i] = 1;
    const int64_t cin = (int64_t[]){3, 64, 33, 256}[k % 4], cout = (int64_t[]){64, 24, 7, 128}[(k / 2) % 4];
    q->activation = k % 4 == 1 ? IR_ACT_RELU : k % 4 == 2 ? IR_ACT_HARD_SWISH : IR_ACT_NONE;
    const int64_t x[4] = {k % 5 == 2 ? 2 : 1, rand_int(5, 40), rand_int(5, 40), cin};
    c.in[0] = shape(4, x);
    c.in[1] = SHAPE(cout, cin, 1, 1);
    c.in[2] = SHAPE(cout);
    c.n_in = k % 6 == 5 ? 2 : 3;
    if (k % 3 == 1) { /* a residual input, channels-last like the output */
      q->residual = k % 2 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = 4;
      c.in_dtype[3] = dtype;
      c.in[3] = SHAPE(x[0], x[1], x[2], cout);
    }
    snprintf(c.label, sizeof c.label, "Conv NHWC 1x1 %s x[%lld,%lld,%lld,%lld] w[%lld,%lld,1,1] bias=%d act=%d res=%d",
             gfx_dtype_name(dtype), (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)cout,
             (long long)cin, c.n_in > 2, q->activation, q->residual);
    run_case(gpu, stream, &c);
  }
  /* 3-D products large enough for the Vulkan backend's block kernels (a video net's layers: 3x3x3,
   * 1x3x3, 3x1x1 and pointwise windows, strided, dilated, grouped, batched, with the fused epilogue) */
  const int64_t windows3d[][3] = {{3, 3, 3}, {1, 3, 3}, {3, 1, 1}, {1, 1, 1}};
  for (int k = 0; k < 16; k++) {
    const int dtype = k % 2 ? GFX_DTYPE_F16 : GFX_DTYPE_F32;
    ew_case c = case_of(GFX_OP_CONV, dtype, 3, NULL);
    /* inputs within +-0.5: float32 sums of up to 864 taps in a device's order stay within 1e-5 of the
     * exact ones (within +-1 one output of a 648-tap sum cancelling to 0.0167 came out 1.3e-5 off on
     * llvmpipe, plain rounding); a wrong tap or bound is still off by whole products */
    c.scale = 0.5;
    ir_conv_params* q = &c.node.params.conv;
    q->spatial = 3, q->dtype = dtype;
    q->group = k % 5 == 4 ? 2 : 1;
    const int64_t* win = windows3d[k % 4];
    const int64_t cin = q->group * (int64_t[]){3, 16, 24, 32}[k / 4], cout = q->group * (int64_t[]){16, 24, 40, 64}[k % 3];
    for (int i = 0; i < 3; i++) {
      q->strides[i] = k % 3 == 2 && i > 0 ? 2 : 1;
      q->dilations[i] = k % 7 == 5 ? 2 : 1;
      q->pads[i] = q->pads[3 + i] = win[i] / 2 * q->dilations[i];
    }
    q->activation = k % 4 == 1 ? IR_ACT_RELU : IR_ACT_NONE;
    const int64_t x[5] = {k % 6 == 5 ? 2 : 1, cin, rand_int(4, 8), rand_int(10, 24), rand_int(10, 24)};
    c.in[0] = shape(5, x);
    c.in[1] = SHAPE(cout, cin / q->group, win[0], win[1], win[2]);
    c.in[2] = SHAPE(cout);
    ir_conv_geom g;
    /* the windows fit every input drawn: a geometry refused here fails the case in run_case */
    gfx_status s = ir_conv_geometry(q, &c.in[0], &c.in[1], &g);
    if (!s && k % 4 == 2) { /* a residual input, added before or after the activation */
      q->residual = k % 8 == 2 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = 4;
      c.in_dtype[3] = dtype;
      c.in[3] = SHAPE(g.n, g.c_out, g.out[0], g.out[1], g.out[2]);
    }
    gfx_status_free(s);
    snprintf(c.label, sizeof c.label, "Conv3d %s x[%lld,%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld,%lld] g=%lld s=%lld d=%lld act=%d res=%d",
             gfx_dtype_name(dtype), (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)x[4],
             (long long)cout, (long long)(cin / q->group), (long long)win[0], (long long)win[1], (long long)win[2],
             (long long)q->group, (long long)q->strides[1], (long long)q->dilations[0], q->activation, q->residual);
    run_case(gpu, stream, &c);
  }
}

/* Convolution chains (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT: two 3x3 convolutions of stride 1 and
 * pads 1 in one node, y = act(conv(act_a(conv(x, W_a) + B_a), W) + B)) as image nets have them:
 * ESPCN's middle layers, sizes that are no multiple of any tile, batches, 1-pixel and 3-pixel-high
 * images; NCHW and channels-last, each first and second activation, either bias left out; float16 and
 * bfloat16 (the types a chain kernel takes), float32 on two shapes. Selected by -o Conv or -o ConvChain
 * and counted as ConvChain. Weights are drawn from +-1/sqrt(9 C) so that every map stays O(1), as in
 * a trained net. The type's own tolerance holds for two layers: both sides round the middle map to
 * the type, a device's float32 sums round a middle value one unit away from the double ones only next
 * to a rounding boundary (rarely), and that unit reaches y scaled down by a weight. */
static void conv_chain_cases(gfx_dev* gpu, void* stream) {
  static const struct {
    int n, c_in, c_mid, c_out, h, w;
    int act_a, act, bias_a, bias, float32;
  } chains[] = {
      {1, 64, 32, 12, 37, 70, IR_ACT_RELU, IR_ACT_NONE, 1, 1, 0}, /* ESPCN's 64 -> 32 -> 12 (x2: 3 x 2 x 2) */
      {1, 16, 16, 3, 20, 33, IR_ACT_LEAKY_RELU, IR_ACT_TANH, 1, 1, 1},
      {2, 32, 32, 32, 17, 40, IR_ACT_NONE, IR_ACT_RELU, 0, 1, 0},
      {1, 48, 16, 8, 9, 9, IR_ACT_CLIP, IR_ACT_RELU, 1, 1, 1},
      {1, 64, 64, 64, 33, 65, IR_ACT_RELU, IR_ACT_RELU, 1, 0, 0},
      {1, 16, 32, 16, 1, 1, IR_ACT_LEAKY_RELU, IR_ACT_TANH, 1, 1, 0},
      {1, 16, 16, 16, 3, 100, IR_ACT_RELU, IR_ACT_NONE, 1, 1, 0},
  };
  static const int types[] = {GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_F32};
  const int wa = IR_CONV_CHAIN_WEIGHT_INPUT, ba = IR_CONV_CHAIN_WEIGHT_INPUT + 1;
  /* their own random stream, so that the cases after them keep their data */
  const uint64_t rng_saved = rng_state;
  rng_state = 20261211;
  for (int k = 0; k < (int)(sizeof chains / sizeof chains[0]); k++)
    for (int layout = 0; layout < 2; layout++)
      for (int t = 0; t < 3; t++) {
        if (types[t] == GFX_DTYPE_F32 && !chains[k].float32) continue;
        const int dtype = types[t];
        const int64_t n = chains[k].n, c_in = chains[k].c_in, c_mid = chains[k].c_mid, c_out = chains[k].c_out;
        const int64_t h = chains[k].h, w = chains[k].w;
        ew_case c = case_of(GFX_OP_CONV, dtype, ba + 1, NULL);
        c.scale = 1.0; /* x */
        ir_conv_params* q = &c.node.params.conv;
        q->spatial = 2, q->group = 1, q->dtype = dtype, q->channels_last = layout, q->chain = 1;
        for (int i = 0; i < 2; i++) q->kernel[i] = 3, q->strides[i] = q->dilations[i] = 1;
        for (int i = 0; i < 4; i++) q->pads[i] = 1;
        q->chain_activation = chains[k].act_a;
        q->activation = chains[k].act;
        q->chain_alpha = chains[k].act_a == IR_ACT_CLIP ? -0.5f : 0.1f; /* LeakyRelu's alpha, Clip's min */
        q->chain_beta = chains[k].act_a == IR_ACT_CLIP ? 0.5f : 0.0f;
        c.in[0] = layout ? SHAPE(n, h, w, c_in) : SHAPE(n, c_in, h, w);
        c.in[1] = SHAPE(c_out, c_mid, 3, 3);
        c.in[2] = chains[k].bias ? SHAPE(c_out) : (gfx_shape){.rank = -1};
        c.in[IR_CONV_RESIDUAL_INPUT] = (gfx_shape){.rank = -1};
        c.in[wa] = SHAPE(c_mid, c_in, 3, 3);
        c.in[ba] = chains[k].bias_a ? SHAPE(c_mid) : (gfx_shape){.rank = -1};
        c.in_scale[1] = 1.0 / sqrt(9.0 * (double)c_mid);
        c.in_scale[wa] = 1.0 / sqrt(9.0 * (double)c_in);
        c.in_scale[2] = c.in_scale[ba] = 0.25;
        snprintf(c.label, sizeof c.label, "%s %s %s x[%lld,%lld,%lld,%lld] %lld -> %lld -> %lld act=%d,%d bias=%d,%d",
                 CHAIN_NAME, layout ? "NHWC" : "NCHW", gfx_dtype_name(dtype), (long long)c.in[0].dims[0],
                 (long long)c.in[0].dims[1], (long long)c.in[0].dims[2], (long long)c.in[0].dims[3], (long long)c_in,
                 (long long)c_mid, (long long)c_out, q->chain_activation, q->activation, chains[k].bias_a,
                 chains[k].bias);
        run_case(gpu, stream, &c);
      }
  rng_state = rng_saved;
}

static void matmul_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 40; k++) {
    ew_case c = case_of(GFX_OP_MATMUL, k % 3 == 2 ? GFX_DTYPE_F16 : GFX_DTYPE_F32, 2, NULL);
    c.scale = 1.0;
    c.node.params.gemm.alpha = 1.0f;
    c.node.params.gemm.dtype = c.out_dtype;
    int64_t m = rand_int(1, 40), n = rand_int(1, 40), kk = rand_int(1, 64);
    int batch_rank = rand_int(0, 2);
    int64_t a[6], b[6];
    int ra = 0, rb = 0;
    for (int i = 0; i < batch_rank; i++) {
      int64_t d = rand_int(1, 4);
      int mode = rand_int(0, 3); /* 0: both, 1: a only (b broadcast 1), 2: b only, 3: drop from b */
      a[ra++] = mode == 2 ? 1 : d;
      if (mode != 3) b[rb++] = mode == 1 ? 1 : d;
    }
    a[ra++] = m, a[ra++] = kk;
    b[rb++] = kk, b[rb++] = n;
    c.in[0] = shape(ra, a);
    c.in[1] = shape(rb, b);
    if (k == 0) { /* a larger GEMM */
      c.in[0] = shape(2, (int64_t[]){256, 384});
      c.in[1] = shape(2, (int64_t[]){384, 200});
    }
    ir_matmul_geom g;
    gfx_status s = ir_matmul_geometry(&c.in[0], &c.in[1], 0, &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    run_case(gpu, stream, &c);
  }
}


/* float16 Conv, MatMul and Gemm shaped for the tensor-core kernels (the Vulkan backend's mm_coop.comp
 * takes products of at least 8 x 8 x 16 on devices with cooperative matrices): partial 64x64 blocks
 * and 32-deep steps, strides, dilations, asymmetric pads, groups, batches, the fused epilogue
 * (activation, residual), transposes, broadcast batches and Gemm's C. Elsewhere they test the
 * portable kernels on the same shapes. */
static void coop_cases(gfx_dev* gpu, void* stream) {
  for (int k = 0; k < 24; k++) {
    ew_case c = case_of(GFX_OP_CONV, GFX_DTYPE_F16, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 2;
    p->dtype = GFX_DTYPE_F16;
    p->group = k % 6 == 5 ? 2 : 1;
    const int64_t cin = p->group * (int64_t[]){3, 16, 33, 64}[k % 4];
    const int64_t cout = p->group * (int64_t[]){8, 16, 40, 64, 96, 12}[k % 6];
    const int64_t kh = (int64_t[]){3, 1, 5, 3}[k % 4], kw = k % 7 == 3 ? 1 : kh;
    for (int i = 0; i < 2; i++) {
      p->strides[i] = k % 5 == 2 ? 2 : 1;
      p->dilations[i] = k % 8 == 6 ? 2 : 1;
      p->pads[i] = kh / 2;
      p->pads[2 + i] = k % 3 == 1 ? 0 : kh / 2; /* asymmetric on purpose */
    }
    p->activation = k % 4 == 1 ? IR_ACT_RELU : k % 4 == 2 ? IR_ACT_LEAKY_RELU : IR_ACT_NONE;
    p->act_alpha = 0.1f;
    int64_t x[4] = {k % 5 == 4 ? 2 : 1, cin, rand_int(9, 40), rand_int(9, 40)};
    int64_t w[4] = {cout, cin / p->group, kh, kw};
    c.in[0] = shape(4, x);
    c.in[1] = shape(4, w);
    c.in[2] = shape(1, (int64_t[]){cout});
    ir_conv_geom g;
    gfx_status s = ir_conv_geometry(p, &c.in[0], &c.in[1], &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    if (k % 6 == 3) { /* a residual input, added before or after the activation */
      p->residual = k % 12 == 3 ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;
      c.n_in = 4;
      c.in_dtype[3] = GFX_DTYPE_F16;
      c.in[3] = shape(4, (int64_t[]){g.n, g.c_out, g.out[0], g.out[1]});
    }
    snprintf(c.label, sizeof c.label, "Conv fp16 x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] g=%lld s=%lld d=%lld act=%d res=%d",
             (long long)x[0], (long long)x[1], (long long)x[2], (long long)x[3], (long long)w[0], (long long)w[1],
             (long long)w[2], (long long)w[3], (long long)p->group, (long long)p->strides[0], (long long)p->dilations[0],
             p->activation, p->residual);
    run_case(gpu, stream, &c);
  }
  { /* a layer of an image net: 64 -> 64 channels, 3x3, on a 64x96 map */
    ew_case c = case_of(GFX_OP_CONV, GFX_DTYPE_F16, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 2, p->group = 1, p->dtype = GFX_DTYPE_F16;
    p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
    p->pads[0] = p->pads[1] = p->pads[2] = p->pads[3] = 1;
    c.in[0] = SHAPE(1, 64, 64, 96);
    c.in[1] = SHAPE(64, 64, 3, 3);
    c.in[2] = SHAPE(64);
    snprintf(c.label, sizeof c.label, "Conv fp16 1x64x64x96 3x3 pad 1");
    run_case(gpu, stream, &c);
  }
  /* few output blocks and a long K: the tensor-core kernel splits K into slices and adds them after
   * (ResNet's last stage; a grouped one; a residual and an activation on the sums) */
  const int64_t split_convs[][6] = {{1, 256, 7, 7, 256, 1}, {2, 128, 9, 5, 64, 2}, {1, 512, 4, 4, 40, 1}};
  for (int k = 0; k < 3; k++) {
    const int64_t* sc = split_convs[k];
    ew_case c = case_of(GFX_OP_CONV, GFX_DTYPE_F16, 3, NULL);
    c.scale = 1.0;
    ir_conv_params* p = &c.node.params.conv;
    p->spatial = 2, p->group = sc[5], p->dtype = GFX_DTYPE_F16;
    p->strides[0] = p->strides[1] = p->dilations[0] = p->dilations[1] = 1;
    p->pads[0] = p->pads[1] = p->pads[2] = p->pads[3] = 1;
    p->activation = k == 0 ? IR_ACT_RELU : IR_ACT_NONE;
    c.in[0] = SHAPE(sc[0], sc[1], sc[2], sc[3]);
    c.in[1] = SHAPE(sc[4], sc[1] / sc[5], 3, 3);
    c.in[2] = SHAPE(sc[4]);
    if (k == 0) {
      p->residual = IR_RES_ADD_THEN_ACT;
      c.n_in = 4;
      c.in_dtype[3] = GFX_DTYPE_F16;
      c.in[3] = SHAPE(sc[0], sc[4], sc[2], sc[3]);
    }
    snprintf(c.label, sizeof c.label, "Conv fp16 split K x[%lld,%lld,%lld,%lld] w[%lld,%lld,3,3] g=%lld", (long long)sc[0],
             (long long)sc[1], (long long)sc[2], (long long)sc[3], (long long)sc[4], (long long)(sc[1] / sc[5]),
             (long long)sc[5]);
    run_case(gpu, stream, &c);
  }
  for (int f16 = 0; f16 < 2; f16++) { /* a MatMul of many blocks (the tiled kernel without a split) */
    ew_case c = case_of(GFX_OP_MATMUL, f16 ? GFX_DTYPE_F16 : GFX_DTYPE_F32, 2,
                        (gfx_shape[]){SHAPE(520, 300), SHAPE(300, 610)});
    c.scale = 1.0;
    c.node.params.gemm = (ir_gemm_params){.alpha = 1.0f, .dtype = c.out_dtype};
    snprintf(c.label, sizeof c.label, "MatMul %s [520 x 300] x [300 x 610]", f16 ? "fp16" : "fp32");
    run_case(gpu, stream, &c);
  }
  { /* a MatMul of two batches, 64 x 2000 x 70: K split */
    ew_case c = case_of(GFX_OP_MATMUL, GFX_DTYPE_F16, 2, (gfx_shape[]){SHAPE(2, 64, 2000), SHAPE(2, 2000, 70)});
    c.scale = 1.0;
    c.node.params.gemm = (ir_gemm_params){.alpha = 1.0f, .dtype = GFX_DTYPE_F16};
    snprintf(c.label, sizeof c.label, "MatMul fp16 split K 2 x [64 x 2000] x [2000 x 70]");
    run_case(gpu, stream, &c);
  }
  { /* a Gemm with C and both scales, K split */
    ew_case c = case_of(GFX_OP_GEMM, GFX_DTYPE_F16, 3, (gfx_shape[]){SHAPE(1500, 33), SHAPE(50, 1500), SHAPE(33, 50)});
    c.scale = 1.0;
    c.node.params.gemm = (ir_gemm_params){.trans_a = 1, .trans_b = 1, .alpha = 0.5f, .beta = 2.0f, .dtype = GFX_DTYPE_F16};
    snprintf(c.label, sizeof c.label, "Gemm fp16 split K [33 x 1500]^T x [1500 x 50]^T alpha 0.5 beta 2 C full");
    run_case(gpu, stream, &c);
  }
  for (int k = 0; k < 12; k++) { /* MatMul, some with a broadcast batch and a folded transpose of b */
    ew_case c = case_of(GFX_OP_MATMUL, GFX_DTYPE_F16, 2, NULL);
    c.scale = 1.0;
    c.node.params.gemm = (ir_gemm_params){.alpha = k % 4 == 3 ? 0.125f : 1.0f, .trans_b = k % 3 == 1,
                                          .dtype = GFX_DTYPE_F16};
    const int64_t m = rand_int(8, 150), n = rand_int(8, 150), kk = rand_int(16, 300);
    const int64_t batch = k % 2 ? rand_int(2, 3) : 1;
    if (batch > 1) {
      c.in[0] = SHAPE(batch, m, kk);
      c.in[1] = k % 4 == 1 ? (c.node.params.gemm.trans_b ? SHAPE(n, kk) : SHAPE(kk, n)) /* b broadcast */
                           : (c.node.params.gemm.trans_b ? SHAPE(batch, n, kk) : SHAPE(batch, kk, n));
    } else {
      c.in[0] = SHAPE(m, kk);
      c.in[1] = c.node.params.gemm.trans_b ? SHAPE(n, kk) : SHAPE(kk, n);
    }
    ir_matmul_geom g;
    gfx_status s = ir_matmul_geometry(&c.in[0], &c.in[1], c.node.params.gemm.trans_b, &g);
    if (s) {
      gfx_status_free(s);
      continue;
    }
    snprintf(c.label, sizeof c.label, "MatMul fp16 %lld x [%lld x %lld] x [%lld x %lld] trans_b=%d alpha=%g", (long long)batch,
             (long long)m, (long long)kk, (long long)kk, (long long)n, c.node.params.gemm.trans_b,
             (double)c.node.params.gemm.alpha);
    run_case(gpu, stream, &c);
  }
  for (int k = 0; k < 8; k++) { /* Gemm: transposes, alpha, beta, C as a row, a column or whole */
    ew_case c = case_of(GFX_OP_GEMM, GFX_DTYPE_F16, k % 4 == 0 ? 2 : 3, NULL);
    c.scale = 1.0;
    ir_gemm_params* p = &c.node.params.gemm;
    *p = (ir_gemm_params){.trans_a = k % 2, .trans_b = (k / 2) % 2, .alpha = k % 3 ? 1.0f : 0.5f,
                          .beta = k % 4 == 2 ? 0.0f : 1.5f, .dtype = GFX_DTYPE_F16};
    const int64_t m = rand_int(8, 130), n = rand_int(8, 130), kk = rand_int(16, 200);
    c.in[0] = p->trans_a ? SHAPE(kk, m) : SHAPE(m, kk);
    c.in[1] = p->trans_b ? SHAPE(n, kk) : SHAPE(kk, n);
    c.in[2] = k % 4 == 1 ? SHAPE(n) : k % 4 == 3 ? SHAPE(m, 1) : SHAPE(m, n);
    snprintf(c.label, sizeof c.label, "Gemm fp16 [%lld x %lld] x [%lld x %lld] ta=%d tb=%d alpha=%g beta=%g C=%s", (long long)m,
             (long long)kk, (long long)kk, (long long)n, p->trans_a, p->trans_b, (double)p->alpha, (double)p->beta,
             c.n_in == 2 ? "none" : k % 4 == 1 ? "row" : k % 4 == 3 ? "column" : "full");
    run_case(gpu, stream, &c);
  }
}

/* ---- the data movement ops: the CUDA kernels' 16-byte paths and their fallbacks ----
 *
 * Every element size (uint8, float16, bfloat16, float32, int64), aligned and one element off
 * alignment, over shapes that take each path: rows long enough for vectors (aligned, shifted
 * against their source as a Slice starting at 1 or a Pad's border makes them, with a head and a
 * tail where the row is no multiple of a vector), innermost dims of 1, 3, 8 and 17, every Pad
 * mode, transposes through the tile kernel (packed words and not) and the element kernels. */
static const int move_types[] = {GFX_DTYPE_U8, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_F32, GFX_DTYPE_I64};

/* A data movement case of op on inputs of dtype; uint8 data spans every byte value. */
static ew_case move_case(gfx_op op, int dtype, int n_in, const gfx_shape* shapes, int misalign) {
  ew_case c = case_of(op, dtype, n_in, shapes);
  c.node.params.layout.dtype = dtype;
  c.misalign = misalign;
  for (int i = 0; i < n_in; i++)
    if (dtype == GFX_DTYPE_U8) c.ranged[i] = 1, c.int_lo[i] = 0, c.int_hi[i] = 255;
  return c;
}

/* "<op> <type> <shape>[ misaligned] <what>" */
static void move_label(ew_case* c, const char* what) {
  char b[96];
  snprintf(c->label, sizeof c->label, "%s %s %s%s %s", ir_op_name(c->node.op), gfx_dtype_name(c->in_dtype[0]),
           gfx_shape_str(&c->in[0], b, sizeof b), c->misalign ? " misaligned" : "", what);
}

/* v as one element of dtype */
static void element_bytes(int dtype, double v, unsigned char out[8]) {
  memset(out, 0, 8);
  switch (dtype) {
    case GFX_DTYPE_F32: { const float f = (float)v; memcpy(out, &f, 4); break; }
    case GFX_DTYPE_F16: { const uint16_t h = gfx_float_to_half((float)v); memcpy(out, &h, 2); break; }
    case GFX_DTYPE_BF16: { const uint16_t h = gfx_float_to_bf16((float)v); memcpy(out, &h, 2); break; }
    case GFX_DTYPE_I64: { const int64_t i = (int64_t)v; memcpy(out, &i, 8); break; }
    default: out[0] = (unsigned char)(int)v; break;
  }
}

static void layout_cases(gfx_dev* gpu, void* stream) {
  for (int misalign = 0; misalign < 2; misalign++)
    for (int t = 0; t < 5; t++) {
      const int dtype = move_types[t];
      /* Pad: a reflection border of one around a feature map (the benchmark's, smaller), wider pads,
       * crops, rows of 1, 3, 8 and 17 and of 530 to 2100 */
      static const struct {
        int64_t dims[4];
        int64_t pads[8];
      } pads[] = {
          {{1, 3, 30, 62}, {0, 0, 1, 1, 0, 0, 1, 1}}, {{2, 3, 9, 130}, {0, 0, 2, 3, 0, 0, 1, 5}},
          {{1, 2, 7, 40}, {0, 1, 0, 8, 0, 0, 2, 8}},  {{2, 4, 5, 1}, {0, 0, 1, 0, 0, 0, 2, 0}},
          {{2, 4, 5, 3}, {0, 0, 1, 2, 0, 0, 1, 1}},   {{1, 3, 6, 8}, {0, 0, 1, 4, 0, 0, 3, 4}},
          {{1, 3, 6, 17}, {0, 0, 2, 7, 0, 0, 1, 9}},
          /* wide borders (longer than a vector on either side), a row with no whole vector inside
           * its source run, and a channel pad (whole z outside the source) */
          {{1, 2, 4, 21}, {0, 0, 0, 37, 0, 1, 1, 40}}, {{1, 2, 6, 40}, {0, 0, 0, 10, 0, 0, 0, 9}},
          {{1, 3, 5, 12}, {0, 0, 1, 1, 0, 0, 1, 1}},  {{1, 3, 9, 20}, {0, 0, 0, 3, 0, 0, 0, 2}},
          /* rows long enough for the Vulkan backend's rows of 8 x 256 (over two spans, borders wider
           * than a span's share, whole rows outside) */
          {{1, 2, 5, 700}, {0, 0, 1, 3, 0, 0, 2, 4}}, {{2, 1, 3, 2100}, {0, 0, 0, 600, 0, 0, 1, 9}},
          {{1, 2, 2, 530}, {0, 1, 0, 0, 0, 1, 0, 0}},
      };
      for (size_t k = 0; k < sizeof pads / sizeof pads[0]; k++)
        for (int mode = IR_PADMODE_CONSTANT; mode <= IR_PADMODE_WRAP; mode++) {
          const gfx_shape x = shape(4, pads[k].dims);
          ew_case c = move_case(GFX_OP_PAD, dtype, 1, &x, misalign);
          ir_layout_params* p = &c.node.params.layout;
          p->mode = (ir_pad_mode)mode;
          p->n_ints = 8;
          p->has_ints = 1;
          int ok = 1;
          for (int i = 0; i < 8; i++) {
            p->ints[i] = pads[k].pads[i];
            ok &= mode != IR_PADMODE_REFLECT || p->ints[i] < x.dims[i % 4]; /* ONNX's rule for reflect */
          }
          if (!ok) continue;
          element_bytes(dtype, 1.5, p->value);
          char what[96];
          snprintf(what, sizeof what, "pads %lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld mode %d", (long long)p->ints[0],
                   (long long)p->ints[1], (long long)p->ints[2], (long long)p->ints[3], (long long)p->ints[4],
                   (long long)p->ints[5], (long long)p->ints[6], (long long)p->ints[7], mode);
          move_label(&c, what);
          run_case(gpu, stream, &c);
        }
      /* crops: negative pads (constant mode) */
      {
        const gfx_shape x = SHAPE(1, 3, 12, 70);
        ew_case c = move_case(GFX_OP_PAD, dtype, 1, &x, misalign);
        ir_layout_params* p = &c.node.params.layout;
        static const int64_t crop[8] = {0, 0, -1, -3, 0, 0, 2, -1};
        p->n_ints = 8;
        p->has_ints = 1;
        memcpy(p->ints, crop, sizeof crop);
        element_bytes(dtype, -2.0, p->value);
        move_label(&c, "pads 0,0,-1,-3,0,0,2,-1 (crop)");
        run_case(gpu, stream, &c);
      }
      /* Slice: a crop (the benchmark's, smaller), a start of 1 along rows (misaligned against the
       * destination), step 2, a negative step, rows of 1, 3, 8, 17, and long rows stepped both ways */
      static const struct {
        int64_t dims[4];
        int n_axes;
        int64_t axes[2], starts[2], ends[2], steps[2];
      } slices[] = {
          {{1, 3, 40, 72}, 2, {2, 3}, {4, 4}, {36, 68}, {1, 1}},  {{2, 3, 5, 67}, 1, {3}, {1}, {67}, {1}},
          {{2, 3, 5, 67}, 1, {3}, {3}, {60}, {1}},                {{1, 4, 6, 50}, 1, {3}, {0}, {50}, {2}},
          {{1, 4, 6, 50}, 1, {3}, {48}, {-1000}, {-1}},          {{3, 5, 7, 1}, 2, {1, 2}, {1, 2}, {4, 7}, {1, 1}},
          {{3, 5, 7, 3}, 1, {3}, {1}, {3}, {1}},                  {{3, 5, 7, 8}, 2, {0, 3}, {1, 0}, {3, 8}, {1, 1}},
          {{3, 5, 7, 17}, 1, {2}, {2}, {7}, {1}},                 {{4, 9, 33, 16}, 1, {1}, {1}, {9}, {1}},               {{1, 2, 3, 1200}, 1, {3}, {1100}, {-1000}, {-1}},
          {{1, 2, 3, 1300}, 1, {3}, {1}, {1300}, {2}},
      };
      for (size_t k = 0; k < sizeof slices / sizeof slices[0]; k++) {
        const gfx_shape x = shape(4, slices[k].dims);
        ew_case c = move_case(GFX_OP_SLICE, dtype, 1, &x, misalign);
        ir_layout_params* p = &c.node.params.layout;
        p->n_axes = slices[k].n_axes;
        for (int i = 0; i < p->n_axes; i++) {
          p->axes[i] = slices[k].axes[i];
          p->starts[i] = slices[k].starts[i];
          p->ends[i] = slices[k].ends[i];
          p->steps[i] = slices[k].steps[i];
        }
        char what[96];
        snprintf(what, sizeof what, "axes %lld,%lld starts %lld,%lld ends %lld,%lld steps %lld,%lld",
                 (long long)p->axes[0], (long long)p->axes[1], (long long)p->starts[0], (long long)p->starts[1],
                 (long long)p->ends[0], (long long)p->ends[1], (long long)p->steps[0], (long long)p->steps[1]);
        move_label(&c, what);
        run_case(gpu, stream, &c);
      }
      /* Transpose: NCHW to NHWC and back (tile kernels, packed words where aligned), 64 channels and
       * fewer, 3 channels (the element kernels), a reversal, rows of 1, 3, 8, 17, tiles cut at both
       * edges, the other dims around the two that swap */
      static const struct {
        int rank;
        int64_t dims[4];
        int perm[4];
      } transposes[] = {
          {4, {1, 64, 6, 20}, {0, 2, 3, 1}}, {4, {2, 40, 5, 7}, {0, 2, 3, 1}}, {4, {1, 3, 9, 33}, {0, 2, 3, 1}},
          {4, {1, 6, 20, 64}, {0, 3, 1, 2}}, {4, {2, 17, 9, 8}, {3, 1, 2, 0}}, {2, {70, 33}, {1, 0}},
          {3, {5, 17, 8}, {2, 0, 1}},        {3, {5, 8, 1}, {1, 0, 2}},        {3, {4, 3, 40}, {2, 1, 0}},
          {4, {2, 3, 40, 17}, {1, 0, 3, 2}}, {4, {1, 48, 37, 45}, {0, 2, 3, 1}}, {4, {2, 37, 70, 1}, {0, 2, 1, 3}},
          {4, {3, 2, 33, 16}, {3, 1, 0, 2}},
      };
      for (size_t k = 0; k < sizeof transposes / sizeof transposes[0]; k++) {
        const gfx_shape x = shape(transposes[k].rank, transposes[k].dims);
        ew_case c = move_case(GFX_OP_TRANSPOSE, dtype, 1, &x, misalign);
        ir_layout_params* p = &c.node.params.layout;
        p->has_ints = 1;
        p->n_ints = x.rank;
        for (int i = 0; i < x.rank; i++) p->ints[i] = transposes[k].perm[i];
        char what[64];
        snprintf(what, sizeof what, "perm %d,%d,%d,%d", transposes[k].perm[0], transposes[k].perm[1],
                 x.rank > 2 ? transposes[k].perm[2] : -1, x.rank > 3 ? transposes[k].perm[3] : -1);
        move_label(&c, what);
        run_case(gpu, stream, &c);
      }
      /* Concat: channels (one contiguous run per input), rows (each input at an offset no multiple of
       * a vector), rows of 1 and 3 */
      static const struct {
        int axis, n;
        int64_t dims[3][4];
      } concats[] = {
          {1, 2, {{1, 3, 10, 64}, {1, 3, 10, 64}}},
          {3, 3, {{2, 3, 5, 17}, {2, 3, 5, 8}, {2, 3, 5, 33}}},
          {2, 2, {{1, 2, 3, 40}, {1, 2, 5, 40}}},
          {3, 2, {{2, 3, 5, 1}, {2, 3, 5, 3}}},
          {0, 2, {{1, 3, 4, 3}, {2, 3, 4, 3}}},
      };
      for (size_t k = 0; k < sizeof concats / sizeof concats[0]; k++) {
        gfx_shape xs[3];
        for (int i = 0; i < concats[k].n; i++) xs[i] = shape(4, concats[k].dims[i]);
        ew_case c = move_case(GFX_OP_CONCAT, dtype, concats[k].n, xs, misalign);
        c.node.params.layout.axis = concats[k].axis;
        char what[32];
        snprintf(what, sizeof what, "axis %d, %d inputs", concats[k].axis, concats[k].n);
        move_label(&c, what);
        run_case(gpu, stream, &c);
      }
      /* Split along rows (the second piece starts 17 elements in) and along channels */
      for (int axis = 1; axis <= 3; axis += 2) {
        const gfx_shape x = SHAPE(2, 6, 5, 40);
        ew_case c = move_case(GFX_OP_SPLIT, dtype, 1, &x, misalign);
        ir_layout_params* p = &c.node.params.layout;
        p->axis = axis;
        p->has_ints = 1;
        p->n_ints = 2;
        p->ints[0] = axis == 3 ? 17 : 2;
        p->ints[1] = x.dims[axis] - p->ints[0];
        c.n_out = 2;
        c.stats_dtype = dtype;
        move_label(&c, axis == 3 ? "axis 3, sizes 17,23" : "axis 1, sizes 2,4");
        run_case(gpu, stream, &c);
      }
      /* Tile (wrap-around reads) and Expand of a leading dim */
      {
        const gfx_shape x = SHAPE(2, 3, 17);
        ew_case c = move_case(GFX_OP_TILE, dtype, 1, &x, misalign);
        c.node.params.layout.n_ints = 3;
        c.node.params.layout.ints[0] = 1, c.node.params.layout.ints[1] = 2, c.node.params.layout.ints[2] = 3;
        move_label(&c, "repeats 1,2,3");
        run_case(gpu, stream, &c);
        const gfx_shape e = SHAPE(3, 1, 40);
        c = move_case(GFX_OP_EXPAND, dtype, 1, &e, misalign);
        c.node.params.layout.n_ints = 3;
        c.node.params.layout.ints[0] = 3, c.node.params.layout.ints[1] = 5, c.node.params.layout.ints[2] = 40;
        move_label(&c, "to 3,5,40");
        run_case(gpu, stream, &c);
      }
    }
}

/* DepthToSpace (DCR and CRD) and SpaceToDepth: blocksizes 2 and 4 (the vector loads where rows are
 * aligned) and 3, rows that are a multiple of a vector and rows that are not, every element size,
 * aligned and not. */
static void space_depth_cases(gfx_dev* gpu, void* stream) {
  static const struct {
    int64_t b, dims[4]; /* DepthToSpace's input; SpaceToDepth takes its output's shape */
  } geo[] = {
      {2, {1, 12, 9, 32}}, {2, {2, 8, 5, 13}}, {4, {1, 32, 3, 8}}, {4, {1, 16, 4, 5}}, {3, {1, 18, 4, 11}},
      {2, {1, 4, 3, 64}},
  };
  for (int misalign = 0; misalign < 2; misalign++)
    for (int t = 0; t < 5; t++)
      for (size_t k = 0; k < sizeof geo / sizeof geo[0]; k++)
        for (int kind = 0; kind < 3; kind++) { /* DCR, CRD, SpaceToDepth */
          const int64_t b = geo[k].b;
          gfx_shape x = shape(4, geo[k].dims);
          if (kind == 2) x = SHAPE(x.dims[0], x.dims[1] / (b * b), x.dims[2] * b, x.dims[3] * b);
          ew_case c = move_case(kind == 2 ? GFX_OP_SPACE_TO_DEPTH : GFX_OP_DEPTH_TO_SPACE, move_types[t], 1, &x,
                                misalign);
          c.node.params.space_depth.blocksize = b;
          c.node.params.space_depth.crd = kind == 1;
          char what[32];
          snprintf(what, sizeof what, "blocksize %lld%s", (long long)b, kind == 0 ? " DCR" : kind == 1 ? " CRD" : "");
          move_label(&c, what);
          run_case(gpu, stream, &c);
        }
  /* DepthToSpace reading a channels-last input [N, H, W, C] (a Transpose folded in, ir/fuse_layout.c):
   * the shapes above, and rows longer than the CUDA kernel's run of pixels, batched */
  static const struct {
    int64_t b, dims[4]; /* the input as [N, C, H, W] */
  } nhwc[] = {
      {2, {1, 12, 9, 32}}, {2, {2, 8, 5, 13}}, {4, {1, 32, 3, 8}}, {4, {1, 16, 4, 5}}, {3, {1, 18, 4, 11}},
      {2, {1, 4, 3, 64}}, {2, {2, 12, 7, 300}}, {3, {1, 27, 5, 100}},
  };
  for (int t = 0; t < 5; t++)
    for (size_t k = 0; k < sizeof nhwc / sizeof nhwc[0]; k++)
      for (int crd = 0; crd < 2; crd++) {
        const int64_t* d = nhwc[k].dims;
        gfx_shape x = SHAPE(d[0], d[2], d[3], d[1]);
        ew_case c = move_case(GFX_OP_DEPTH_TO_SPACE, move_types[t], 1, &x, 0);
        c.node.params.space_depth.blocksize = nhwc[k].b;
        c.node.params.space_depth.crd = crd;
        c.node.params.space_depth.nhwc_input = 1;
        char what[48];
        snprintf(what, sizeof what, "blocksize %lld %s, NHWC input", (long long)nhwc[k].b, crd ? "CRD" : "DCR");
        move_label(&c, what);
        run_case(gpu, stream, &c);
      }
}

/* Resize nearest over rows long enough for the 16-byte kernel (an output row a multiple of a vector)
 * and rows that are not, every coordinate transformation and nearest mode, up and down, aligned
 * and not; the upscalings from first_whole on in linear and cubic mode as well. */
static void resize_nearest_cases(gfx_dev* gpu, void* stream) {
  static const struct {
    int64_t dims[4];
    float sh, sw;
  } geo[] = {
      {{1, 3, 7, 32}, 2.0f, 2.0f}, {{2, 2, 5, 37}, 2.0f, 2.0f}, {{1, 2, 9, 48}, 1.5f, 0.5f},
      {{1, 2, 6, 24}, 0.5f, 3.0f}, {{1, 1, 20, 64}, 2.0f, 1.0f},
      /* whole upscaling factors (on CUDA the kernel that reads whole source runs where the mapping is
       * ox / fx and oy / fy): fx 1, 2, 4 and 8, fy 1 to 4, row counts past its 4-row steps */
      {{1, 2, 5, 16}, 3.0f, 4.0f}, {{2, 3, 4, 8}, 1.0f, 8.0f}, {{1, 2, 6, 40}, 2.0f, 1.0f},
      {{1, 1, 3, 12}, 4.0f, 2.0f}, {{1, 4, 9, 24}, 2.0f, 2.0f},
      /* a fractional scale, and a map of 320 x 40 outputs (several kernel blocks each way) */
      {{1, 2, 6, 16}, 1.5f, 1.5f}, {{1, 2, 20, 160}, 2.0f, 2.0f},
      /* rows of 2200 and 2400 outputs: several blocks along a row (CUDA's linear x2 / x4 kernel
       * hands neighbouring source columns across them) */
      {{1, 1, 3, 1100}, 2.0f, 2.0f}, {{1, 1, 2, 600}, 1.0f, 4.0f},
  };
  const int first_whole = 5; /* their own random streams, so that the cases after them keep their data */
  for (int misalign = 0; misalign < 2; misalign++)
    for (int t = 0; t < 3; t++)
      for (size_t k = 0; k < sizeof geo / sizeof geo[0]; k++)
        for (int mode = 0; mode < ((int)k >= first_whole ? 3 : 1); mode++) {
          for (int coord = 0; coord < 7; coord++) {
            const gfx_shape x = shape(4, geo[k].dims);
            ew_case c = case_of(GFX_OP_RESIZE, float_types[t], 1, &x);
            ir_resize_params* p = &c.node.params.resize;
            p->rank = 4;
            p->mode = mode == 2 ? IR_RESIZE_CUBIC : mode ? IR_RESIZE_LINEAR : IR_RESIZE_NEAREST;
            p->coord = coord;
            p->nearest = (int)((k + (size_t)coord) % 4);
            p->exclude_outside = mode == 2 && coord % 2;
            p->cubic_a = p->exclude_outside ? -0.5f : -0.75f;
            c.positive = mode == 2; /* as in resize_cases: cubic taps of either sign cancel nowhere */
            p->extrapolation = 3.5f;
            p->scales[0] = p->scales[1] = 1.0f;
            p->scales[2] = geo[k].sh;
            p->scales[3] = geo[k].sw;
            for (int i = 0; i < 4; i++) p->roi[i] = 0.0f, p->roi[4 + i] = 1.0f;
            p->roi[2] = -0.2f, p->roi[6] = 1.1f, p->roi[3] = 0.1f, p->roi[7] = 0.9f;
            c.misalign = misalign;
            const uint64_t rng_before = rng_state;
            if ((int)k >= first_whole)
              rng_state = 20261205 + k * 97 + (uint64_t)(t * 7 + coord + 100 * misalign + 1000 * mode);
            char b[96];
            snprintf(c.label, sizeof c.label, "Resize %s %s %s%s scales %g,%g coord %d nearest %d",
                     mode == 2 ? "cubic" : mode ? "linear" : "nearest", gfx_dtype_name(float_types[t]),
                     gfx_shape_str(&x, b, sizeof b),
                     misalign ? " misaligned" : "", (double)geo[k].sh, (double)geo[k].sw, coord, p->nearest);
            run_case(gpu, stream, &c);
            if ((int)k >= first_whole) rng_state = rng_before;
          }
        }
}

/* -o: comma-separated op names (ONNX spelling) or ConvChain, 0 when one is neither */
static int want_ops(const char* list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (!strcmp(tok, CHAIN_NAME)) {
      wanted[CHAIN_TALLY] = any_wanted = 1;
      continue;
    }
    gfx_op op = ir_op_from_name(tok);
    if (op == GFX_OP_NONE) {
      fprintf(stderr, "test_backend_ops: -o %s: no op of that name in the op table\n", tok);
      return 0;
    }
    wanted[op] = any_wanted = 1;
  }
  return 1;
}

int main(int argc, char** argv) {
  const char* backend = "cuda";
  setvbuf(stdout, NULL, _IOLBF, 0); /* what was found is printed even if a case crashes */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-b") && i + 1 < argc) {
      backend = argv[++i];
    } else if (!strcmp(argv[i], "-v")) {
      verbose = 1;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      if (!want_ops(argv[++i])) return 2;
    } else {
      fprintf(stderr, "usage: test_backend_ops [-b BACKEND] [-o OP[,OP...]] [-v]   (OP: an ONNX op or ConvChain)\n");
      return 2;
    }
  }
  gfx_dev* gpu = open_backend(backend);
  if (!gpu) {
    printf("# no %s device: backend op tests skipped\n", backend);
    return 77;
  }
  gfx_device_info info;
  gfx_status s = gfx_backend_device_info(gpu, &info);
  if (s) {
    printf("FAIL device_info: %s\n", gfx_status_message(s));
    return 1;
  }
  printf("# %s backend on %s (%s)\n", gfx_backend_name(gpu), info.name, info.pci_bus_id);
  void* stream = NULL;
  if ((s = gfx_backend_stream_create(gpu, &stream))) {
    printf("FAIL stream_create: %s\n", gfx_status_message(s));
    return 1;
  }
  static const gfx_op random_ops[] = {GFX_OP_ADD, GFX_OP_SUB, GFX_OP_MUL, GFX_OP_DIV};
  for (int k = 0; k < 4; k++) random_broadcast_cases(gpu, stream, random_ops[k]);
  unary_cases(gpu, stream);
  broadcast_cases(gpu, stream);
  other_cases(gpu, stream);
  fast_path_cases(gpu, stream);
  reduce_norm_cases(gpu, stream);
  reduce_kind_cases(gpu, stream);
  reduce_noop_cases(gpu, stream);
  reduce_int_cases(gpu, stream);
  arg_cases(gpu, stream);
  logic_mod_cases(gpu, stream);
  scan_cases(gpu, stream);
  index_cases(gpu, stream);
  grid_sample_cases(gpu, stream);
  conv_cases(gpu, stream);
  conv_chain_cases(gpu, stream);
  matmul_cases(gpu, stream);
  coop_cases(gpu, stream);
  pool_cases(gpu, stream);
  resize_cases(gpu, stream);
  quant_cases(gpu, stream);
  roi_align_cases(gpu, stream);
  topk_cases(gpu, stream);
  topk_long_cases(gpu, stream);
  attention_cases(gpu, stream);
  fused_attention_cases(gpu, stream);
  add_norm_cases(gpu, stream);
  layout_cases(gpu, stream);
  space_depth_cases(gpu, stream);
  resize_nearest_cases(gpu, stream);
  /* last: their random draws leave every case above as it was */
  nonzero_cases(gpu, stream);
  nms_cases(gpu, stream);
  gfx_backend_stream_destroy(gpu, stream);

  int run = 0, passed = 0, declined = 0, listed = 0;
  printf("{\"backend\": \"%s\", \"backend_ops\": [", backend);
  for (int op = GFX_OP_NONE + 1; op <= CHAIN_TALLY; op++) {
    const op_tally* t = &tally[op];
    if (t->run == 0 && t->declined == 0) continue;
    printf("%s{\"op\": \"%s\", \"cases\": %d, \"passed\": %d, \"declined\": %d, \"max_abs_err\": %.3g}",
           listed++ ? ", " : "", tally_name(op), t->run, t->passed, t->declined, t->max_abs);
    run += t->run;
    passed += t->passed;
    declined += t->declined;
  }
  printf("], \"ops_without_backend_cases\": [");
  listed = 0;
  for (int op = GFX_OP_NONE + 1; op < GFX_OP_COUNT; op++)
    if (tally[op].run == 0 && tally[op].declined == 0 && (!any_wanted || wanted[op]))
      printf("%s\"%s\"", listed++ ? ", " : "", ir_op_name((gfx_op)op));
  printf("]}\n");
  for (int op = GFX_OP_NONE + 1; op <= CHAIN_TALLY; op++)
    if (tally[op].declined)
      printf("# %s: %d cases declined by the backend (left to ONNX Runtime), e.g. %s\n", tally_name(op),
             tally[op].declined, tally[op].declined_why);
  printf("%d passed, %d failed, %d declined\n", passed, run - passed, declined);
  return passed == run && run > 0 ? 0 : 1;
}

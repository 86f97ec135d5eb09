/* gfxep — parse and infer functions of the reduction, normalization and pooling ops (see ir/ops.def). */
#include "ir/ops_reduce.h"

#include <string.h>

#include "ir/ops_common.h"
#include "ir/shape.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* Dims and counts beyond this are refused, so products of a few of them stay exact in int64. */
#define DIM_LIMIT ((int64_t)1 << 31)

static gfx_status check_dims(const char* op, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s: input rank %d is outside 0..%d", op, s->rank, GFX_MAX_RANK);
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0 || s->dims[i] > DIM_LIMIT)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s: input %s has dim %d outside 0..2^31", op, SHAPE_STR(s), i);
  return NULL;
}

/* Product of dims[from, to), refused past 2^62 (never reached by a tensor that fits in memory). */
static gfx_status dims_product(const gfx_shape* s, int from, int to, int64_t* out) {
  int64_t n = 1;
  for (int i = from; i < to; i++) {
    if (s->dims[i] != 0 && n > ((int64_t)1 << 62) / s->dims[i])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shape %s has too many elements", SHAPE_STR(s));
    n *= s->dims[i];
  }
  *out = n;
  return NULL;
}

static gfx_status check_binary_flag(const ir_node_desc* d, const char* name, int64_t fallback, int8_t* out) {
  int64_t v;
  GFX_TRY(ir_attr_int(d, name, fallback, &v));
  if (v != 0 && v != 1) return IR_UNSUPPORTED(d, "%s = %lld (must be 0 or 1)", name, (long long)v);
  *out = (int8_t)v;
  return NULL;
}

/* ================================ reductions ================================ */

static gfx_status parse_reduce(const ir_node_desc* d, ir_params* p, ir_reduce_kind kind) {
  /* axes moved from an attribute to an optional second input: ReduceSum at opset 13, the others at
   * 18, together with noop_with_empty_axes */
  const int axes_input = d->since_version >= (kind == IR_REDUCE_SUM ? 13 : 18);
  if (axes_input) {
    GFX_TRY(ir_check_io(d, 1, 2, 1));
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"keepdims", "noop_with_empty_axes", NULL}));
  } else {
    GFX_TRY(ir_check_io(d, 1, 1, 1));
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axes", "keepdims", NULL}));
  }
  /* Sum, Max, Min and Prod of int32/int64 too (exact, wrapping): detection graphs take the minimum of
   * a few sizes (a TopK's k) or multiply dims, shape arithmetic gfxep computes on the host */
  const int int_ok = kind == IR_REDUCE_SUM || kind == IR_REDUCE_MAX || kind == IR_REDUCE_MIN || kind == IR_REDUCE_PROD;
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT | (int_ok ? IR_TYPES_INDEX : 0), NULL));

  int64_t axes[GFX_MAX_RANK];
  size_t n = 0;
  if (axes_input) {
    /* an empty constant may come without data: its shape [0] says enough */
    const int empty = d->n_inputs >= 2 && d->input_is_const[1] && d->input_shapes[1].rank == 1 &&
                      d->input_shapes[1].dims[0] == 0;
    if (d->n_inputs >= 2 && d->input_dtypes[1] != GFX_DTYPE_UNDEFINED && !empty)
      GFX_TRY(ir_const_ints(d, 1, axes, GFX_MAX_RANK, &n));
  } else {
    int present;
    GFX_TRY(ir_attr_ints(d, "axes", axes, GFX_MAX_RANK, &n, &present));
  }
  ir_reduce_params r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  GFX_TRY(check_binary_flag(d, "keepdims", 1, &r.keepdims));
  int8_t noop = 0;
  if (axes_input) GFX_TRY(check_binary_flag(d, "noop_with_empty_axes", 0, &noop));

  const int rank = d->input_shapes[0].rank;
  for (size_t i = 0; i < n; i++) {
    int lo = rank >= 0 ? -rank : -GFX_MAX_RANK, hi = rank >= 0 ? rank : GFX_MAX_RANK;
    if (axes[i] < lo || axes[i] >= hi)
      return IR_UNSUPPORTED(d, "axis %lld is outside [%d, %d)", (long long)axes[i], lo, hi);
    for (size_t j = 0; j < i; j++) {
      /* the same axis twice (perhaps once negative) is an invalid model; refuse rather than guess */
      int same = axes[j] == axes[i] || (rank >= 0 && (axes[j] + rank) % rank == (axes[i] + rank) % rank);
      if (same) return IR_UNSUPPORTED(d, "axis %lld is listed twice", (long long)axes[i]);
    }
    r.axes[i] = (int8_t)axes[i];
  }
  r.n_axes = (int8_t)n;
  if (n == 0 && noop) {
    /* "no reduction" of ReduceL2, ReduceL1 and ReduceSumSquare is ambiguous (x, or |x| and x^2): leave
     * it to ONNX Runtime */
    if (kind == IR_REDUCE_L2 || kind == IR_REDUCE_L1 || kind == IR_REDUCE_SUM_SQUARE)
      return IR_UNSUPPORTED(d, "noop_with_empty_axes = 1 without axes is not handled");
    r.noop = 1;
  }
  p->reduce = r;
  return NULL;
}

gfx_status ir_parse_reduce_sum(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_SUM); }
gfx_status ir_parse_reduce_mean(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_MEAN); }
gfx_status ir_parse_reduce_max(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_MAX); }
gfx_status ir_parse_reduce_min(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_MIN); }
gfx_status ir_parse_reduce_l2(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_L2); }
gfx_status ir_parse_reduce_l1(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_L1); }
gfx_status ir_parse_reduce_prod(const ir_node_desc* d, ir_params* p) { return parse_reduce(d, p, IR_REDUCE_PROD); }
gfx_status ir_parse_reduce_log_sum_exp(const ir_node_desc* d, ir_params* p) {
  return parse_reduce(d, p, IR_REDUCE_LOG_SUM_EXP);
}

/* ArgMax / ArgMin: one axis (attribute, default 0), keepdims, select_last_index (opset 12; absent
 * before, which means 0); a float input and an int64 output. */
static gfx_status parse_arg(const ir_node_desc* d, ir_params* p, ir_reduce_kind kind) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "keepdims", "select_last_index", NULL}));
  GFX_TRY(ir_check_input_type(d, 0, IR_TYPES_FLOAT));
  if (d->output_dtypes[0] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "output 0 is %s; int64 is expected", gfx_dtype_name(d->output_dtypes[0]));
  int64_t axis = 0;
  GFX_TRY(ir_attr_int(d, "axis", 0, &axis));
  const int rank = d->input_shapes[0].rank;
  const int lo = rank >= 0 ? -rank : -GFX_MAX_RANK, hi = rank >= 0 ? rank : GFX_MAX_RANK;
  if (axis < lo || axis >= hi) return IR_UNSUPPORTED(d, "axis %lld is outside [%d, %d)", (long long)axis, lo, hi);
  ir_reduce_params r;
  memset(&r, 0, sizeof r);
  r.kind = kind;
  r.n_axes = 1;
  r.axes[0] = (int8_t)axis;
  GFX_TRY(check_binary_flag(d, "keepdims", 1, &r.keepdims));
  GFX_TRY(check_binary_flag(d, "select_last_index", 0, &r.select_last));
  p->reduce = r;
  return NULL;
}
gfx_status ir_parse_arg_max(const ir_node_desc* d, ir_params* p) { return parse_arg(d, p, IR_REDUCE_ARGMAX); }
gfx_status ir_parse_arg_min(const ir_node_desc* d, ir_params* p) { return parse_arg(d, p, IR_REDUCE_ARGMIN); }
gfx_status ir_parse_reduce_sum_square(const ir_node_desc* d, ir_params* p) {
  return parse_reduce(d, p, IR_REDUCE_SUM_SQUARE);
}

static gfx_status parse_global_pool(const ir_node_desc* d, ir_params* p, ir_reduce_kind kind) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  if (d->domain && strcmp(d->domain, IR_NHWC_DOMAIN) == 0) {
    /* channels-last (ONNX Runtime's layout transformer): N, H, W, C reduced over H and W, kept as
     * N, 1, 1, C; the rank must be known to name those axes */
    if (d->input_shapes[0].rank < 0)
      return IR_UNSUPPORTED(d, "a channels-last global pool of an input whose rank is not known; rank 4 is handled");
    if (d->input_shapes[0].rank != 4)
      return IR_UNSUPPORTED(d, "a channels-last global pool of a rank-%d input; rank 4 is handled",
                            d->input_shapes[0].rank);
    memset(&p->reduce, 0, sizeof p->reduce);
    p->reduce.kind = kind;
    p->reduce.keepdims = 1;
    p->reduce.n_axes = 2;
    p->reduce.axes[0] = 1;
    p->reduce.axes[1] = 2;
    return NULL;
  }
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank < 3)
    return IR_UNSUPPORTED(d, "input rank %d; N x C x spatial (rank >= 3) is handled", d->input_shapes[0].rank);
  memset(&p->reduce, 0, sizeof p->reduce);
  p->reduce.kind = kind;
  p->reduce.keepdims = 1;
  p->reduce.global_pool = 1;
  return NULL;
}

gfx_status ir_parse_global_average_pool(const ir_node_desc* d, ir_params* p) {
  return parse_global_pool(d, p, IR_REDUCE_MEAN);
}
gfx_status ir_parse_global_max_pool(const ir_node_desc* d, ir_params* p) { return parse_global_pool(d, p, IR_REDUCE_MAX); }

/* Which dims of `in` are reduced, as a bit mask. */
static gfx_status reduce_mask(const ir_reduce_params* p, const gfx_shape* in, unsigned* mask) {
  const int rank = in->rank;
  *mask = 0;
  if (p->global_pool) {
    if (rank < 3)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "global pooling needs N x C x spatial, got %s", SHAPE_STR(in));
    for (int i = 2; i < rank; i++) *mask |= 1u << i;
    return NULL;
  }
  if (p->noop) return NULL;
  if (p->n_axes == 0) {
    for (int i = 0; i < rank; i++) *mask |= 1u << i;
    return NULL;
  }
  for (int i = 0; i < p->n_axes; i++) {
    int a = p->axes[i];
    if (a < -rank || a >= rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reduction axis %d is outside [-%d, %d) for input %s", a, rank, rank,
                       SHAPE_STR(in));
    *mask |= 1u << (a < 0 ? a + rank : a);
  }
  return NULL;
}

/* Appends a dim to a (dims, strides) list, merging it into the previous one when the two are
 * walked as one (the previous stride spans exactly this dim). */
static void push_dim(int64_t* dims, int64_t* strides, int* n, int64_t dim, int64_t stride) {
  if (*n > 0 && strides[*n - 1] == stride * dim) {
    dims[*n - 1] *= dim;
    strides[*n - 1] = stride;
    return;
  }
  dims[*n] = dim;
  strides[*n] = stride;
  (*n)++;
}

gfx_status ir_reduce_geometry(const ir_reduce_params* p, const gfx_shape* in, ir_reduce_geom* g) {
  memset(g, 0, sizeof *g);
  GFX_TRY(check_dims("reduction", in));
  int64_t elements;
  GFX_TRY(dims_product(in, 0, in->rank, &elements)); /* every stride and count below fits then */
  (void)elements;
  unsigned mask;
  GFX_TRY(reduce_mask(p, in, &mask));
  g->copy = p->noop;
  int64_t strides[GFX_MAX_RANK], stride = 1;
  for (int i = in->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= in->dims[i];
  }
  const int keep = p->keepdims || p->global_pool;
  g->out.rank = 0;
  g->out_count = g->reduce_count = 1;
  for (int i = 0; i < in->rank; i++) {
    const int reduced = (mask >> i) & 1u;
    if (!reduced || keep) g->out.dims[g->out.rank++] = reduced ? 1 : in->dims[i];
    if (reduced)
      g->reduce_count *= in->dims[i];
    else
      g->out_count *= in->dims[i];
    if (in->dims[i] == 1) continue; /* contributes nothing to the index math */
    if (reduced)
      push_dim(g->red_dims, g->red_strides, &g->n_red, in->dims[i], strides[i]);
    else
      push_dim(g->kept_dims, g->kept_strides, &g->n_kept, in->dims[i], strides[i]);
  }
  return NULL;
}

gfx_status ir_infer_reduce(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_reduce_geom g;
  GFX_TRY(ir_reduce_geometry(&node->params.reduce, &in[0], &g));
  out[0] = g.out;
  return NULL;
}

/* ================================ pooling ================================ */

static gfx_status parse_auto_pad(const ir_node_desc* d, ir_auto_pad* out) {
  char pad[32];
  GFX_TRY(ir_attr_string(d, "auto_pad", "NOTSET", pad, sizeof pad));
  if (strcmp(pad, "NOTSET") == 0)
    *out = IR_PAD_NOTSET;
  else if (strcmp(pad, "SAME_UPPER") == 0)
    *out = IR_PAD_SAME_UPPER;
  else if (strcmp(pad, "SAME_LOWER") == 0)
    *out = IR_PAD_SAME_LOWER;
  else if (strcmp(pad, "VALID") == 0)
    *out = IR_PAD_VALID;
  else
    return IR_UNSUPPORTED(d, "auto_pad = '%s' is not an ONNX value", pad);
  return NULL;
}

/* ONNX Runtime's kernels drop a ceil_mode window that would start in the end padding, but the ONNX
 * shape inference it declares output shapes with may keep it; where the input size is known and the
 * two disagree, the node is left to ONNX Runtime rather than fail on a declared-shape mismatch. */
static gfx_status check_ceil_rules(const ir_node_desc* d, const ir_pool_params* c) {
  const int ns = c->n_spatial;
  if (!c->ceil_mode || c->auto_pad != IR_PAD_NOTSET || d->input_shapes[0].rank != 2 + ns) return NULL;
  for (int i = 0; i < ns; i++) {
    const int64_t in = d->input_shapes[0].dims[(c->channels_last ? 1 : 2) + i];
    if (in < 0) continue;
    const int64_t s = c->strides[i];
    const int64_t room = in + c->pads[i] + c->pads[i + ns] - ((int64_t)c->dilations[i] * (c->kernel[i] - 1) + 1);
    if (room < 0) continue;
    const int64_t out = (room + s - 1) / s + 1;
    if ((out - 1) * s >= in + c->pads[i])
      return IR_UNSUPPORTED(d, "ceil_mode: the last window along dim %d would start in the end padding, where "
                               "ONNX shape inference and ONNX Runtime's kernels disagree on the output size", i);
  }
  return NULL;
}

static gfx_status check_pool_attrs(const ir_node_desc* d, ir_pool_kind kind) {
  if (kind == IR_POOL_MAX)
    return ir_check_known_attrs(d, (const char* const[]){"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                                                        "storage_order", "strides", NULL});
  return ir_check_known_attrs(d, (const char* const[]){"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                                                      "kernel_shape", "pads", "strides", NULL});
}

/* The window attributes of ns spatial dims into c (kernel_shape decides ns: 2 or 3). */
static gfx_status read_pool_windows(const ir_node_desc* d, ir_pool_params* c) {
  int64_t kernel[3], strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1}, pads[6] = {0, 0, 0, 0, 0, 0};
  int present, pads_present;
  size_t n;
  GFX_TRY(ir_attr_ints(d, "kernel_shape", kernel, 3, &n, &present));
  if (!present) return IR_UNSUPPORTED(d, "attribute 'kernel_shape' is missing");
  if (n != 2 && n != 3)
    return IR_UNSUPPORTED(d, "kernel_shape has %zu entries; 2-D and 3-D pooling are handled", n);
  const int ns = (int)n;
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0 && rank != 2 + ns)
    return IR_UNSUPPORTED(d, "input rank %d with a kernel of %d dims; %d-D pooling needs rank %d", rank, ns, ns,
                          2 + ns);
  for (int i = 0; i < ns; i++)
    if (kernel[i] < 1) return IR_UNSUPPORTED(d, "kernel_shape[%d] = %lld (must be >= 1)", i, (long long)kernel[i]);
  GFX_TRY(ir_read_ints(d, "strides", strides, (size_t)ns, 1, &present));
  GFX_TRY(ir_read_ints(d, "dilations", dilations, (size_t)ns, 1, &present));
  GFX_TRY(ir_read_ints(d, "pads", pads, 2 * (size_t)ns, 0, &pads_present));
  int any_pad = 0, any_dilation = 0;
  for (int i = 0; i < 2 * ns; i++) any_pad |= pads[i] != 0;
  for (int i = 0; i < ns; i++) any_dilation |= dilations[i] != 1;
  if (c->kind == IR_POOL_AVERAGE && any_dilation)
    return IR_UNSUPPORTED(d, "dilations other than 1 are not handled for AveragePool");
  if (c->auto_pad != IR_PAD_NOTSET) {
    if (pads_present && any_pad) return IR_UNSUPPORTED(d, "both auto_pad and non-zero pads are set");
    if (c->ceil_mode) return IR_UNSUPPORTED(d, "ceil_mode = 1 with auto_pad is not handled");
    if (c->auto_pad != IR_PAD_VALID && any_dilation)
      return IR_UNSUPPORTED(d, "auto_pad SAME_* with dilations > 1 is not handled");
  }
  for (int i = 0; i < ns; i++) {
    if (kernel[i] > 65535 || strides[i] > 65535 || dilations[i] > 65535)
      return IR_UNSUPPORTED(d, "kernel %lld, stride %lld or dilation %lld along dim %d is too large",
                            (long long)kernel[i], (long long)strides[i], (long long)dilations[i], i);
    /* ONNX Runtime rejects pads as large as the kernel: a window could then lie wholly in padding */
    if (pads[i] >= kernel[i] || pads[i + ns] >= kernel[i])
      return IR_UNSUPPORTED(d, "pads %lld, %lld along dim %d are not smaller than the kernel %lld", (long long)pads[i],
                            (long long)pads[i + ns], i, (long long)kernel[i]);
    c->kernel[i] = (int32_t)kernel[i];
    c->strides[i] = (int32_t)strides[i];
    c->dilations[i] = (int32_t)dilations[i];
  }
  for (int i = 0; i < 2 * ns; i++) c->pads[i] = (int32_t)pads[i];
  c->n_spatial = (int8_t)ns;
  return NULL;
}

static gfx_status parse_pool(const ir_node_desc* d, ir_params* p, ir_pool_kind kind) {
  if (kind == IR_POOL_MAX && d->n_outputs == 2)
    return IR_UNSUPPORTED(d, "the optional Indices output is not handled");
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(check_pool_attrs(d, kind));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));

  ir_pool_params c;
  memset(&c, 0, sizeof c);
  c.kind = kind;
  c.channels_last = d->domain && strcmp(d->domain, IR_NHWC_DOMAIN) == 0;
  GFX_TRY(parse_auto_pad(d, &c.auto_pad));
  GFX_TRY(check_binary_flag(d, "ceil_mode", 0, &c.ceil_mode));
  if (kind == IR_POOL_AVERAGE) GFX_TRY(check_binary_flag(d, "count_include_pad", 0, &c.count_include_pad));
  if (kind == IR_POOL_MAX) {
    int8_t storage_order;
    GFX_TRY(check_binary_flag(d, "storage_order", 0, &storage_order));
    if (storage_order) return IR_UNSUPPORTED(d, "storage_order = 1 is not handled");
  }
  GFX_TRY(read_pool_windows(d, &c));
  if (c.channels_last && c.n_spatial != 2)
    return IR_UNSUPPORTED(d, "channels-last pooling over %d spatial dims; 2 are handled", c.n_spatial);
  GFX_TRY(check_ceil_rules(d, &c));
  p->pool = c;
  return NULL;
}

gfx_status ir_parse_max_pool(const ir_node_desc* d, ir_params* p) { return parse_pool(d, p, IR_POOL_MAX); }
gfx_status ir_parse_average_pool(const ir_node_desc* d, ir_params* p) { return parse_pool(d, p, IR_POOL_AVERAGE); }

/* Output size and pads along spatial dim i of the params (geometry slot j), as ONNX defines them:
 *  explicit pads: floor or (ceil_mode) ceil of (in + pads - dilated kernel) / stride, plus 1; with
 *    ceil_mode the last window must still start inside the input or the leading padding;
 *  SAME_*: ceil(in / stride), the padding needed split evenly, the odd one at the end (UPPER) or
 *    the beginning (LOWER);
 *  VALID: no padding, floor. */
static gfx_status pool_dim(const ir_pool_params* p, int i, int j, int64_t in, int64_t* out_size, ir_pool_geom* g) {
  const int64_t k = p->kernel[i], s = p->strides[i], dil = p->dilations[i];
  const int64_t span = dil * (k - 1) + 1;
  int64_t out, begin = p->pads[i], end = p->pads[i + p->n_spatial];
  if (p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER) {
    out = (in + s - 1) / s;
    int64_t total = (out - 1) * s + span - in;
    if (total < 0) total = 0;
    begin = p->auto_pad == IR_PAD_SAME_UPPER ? total / 2 : (total + 1) / 2;
    end = total - begin;
  } else {
    if (p->auto_pad == IR_PAD_VALID) begin = end = 0;
    const int64_t room = in + begin + end - span;
    if (room < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "pooling window %lld (dilated) is larger than the padded input %lld along spatial dim %d",
                       (long long)span, (long long)(in + begin + end), i);
    out = (p->ceil_mode ? (room + s - 1) / s : room / s) + 1;
    if (p->ceil_mode && (out - 1) * s >= in + begin) out--;
  }
  *out_size = out;
  g->kernel[j] = k;
  g->strides[j] = s;
  g->dilations[j] = dil;
  g->pad_begin[j] = begin;
  g->pad_end[j] = end;
  return NULL;
}

gfx_status ir_pool_geometry(const ir_pool_params* p, const gfx_shape* in, ir_pool_geom* g) {
  memset(g, 0, sizeof *g);
  GFX_TRY(check_dims("pooling", in));
  const int ns = p->n_spatial;
  if (ns != 2 && ns != 3)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "pooling over %d spatial dims; 2 or 3 are handled", ns);
  if (in->rank != 2 + ns)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d-D pooling needs a rank-%d input, got %s", ns, 2 + ns, SHAPE_STR(in));
  int64_t elements;
  GFX_TRY(dims_product(in, 0, in->rank, &elements)); /* every plane and volume size below fits then */
  (void)elements;
  for (int i = 0; i < ns; i++)
    if (p->kernel[i] < 1 || p->strides[i] < 1 || p->dilations[i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "pooling kernel %d, stride %d and dilation %d must be >= 1",
                       p->kernel[i], p->strides[i], p->dilations[i]);
  if (p->channels_last && ns != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "channels-last pooling over %d spatial dims; 2 are handled", ns);
  g->channels_last = p->channels_last;
  g->n = in->dims[0];
  g->c = in->dims[p->channels_last ? 3 : 1];
  const int first_spatial = p->channels_last ? 1 : 2;
  /* 2-D: a depth of 1, pooled by a window of 1 */
  int64_t* const in_size[3] = {&g->in_d, &g->in_h, &g->in_w};
  int64_t* const out_size[3] = {&g->out_d, &g->out_h, &g->out_w};
  g->in_d = g->out_d = 1;
  g->kernel[0] = g->strides[0] = g->dilations[0] = 1;
  for (int i = 0; i < ns; i++) {
    const int j = i + 3 - ns;
    *in_size[j] = in->dims[first_spatial + i];
    GFX_TRY(pool_dim(p, i, j, *in_size[j], out_size[j], g));
  }
  return NULL;
}

gfx_status ir_infer_pool(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_pool_geom g;
  GFX_TRY(ir_pool_geometry(&node->params.pool, &in[0], &g));
  if (node->params.pool.n_spatial == 3)
    out[0] = (gfx_shape){.rank = 5, .dims = {g.n, g.c, g.out_d, g.out_h, g.out_w}};
  else if (g.channels_last)
    out[0] = (gfx_shape){.rank = 4, .dims = {g.n, g.out_h, g.out_w, g.c}};
  else
    out[0] = (gfx_shape){.rank = 4, .dims = {g.n, g.c, g.out_h, g.out_w}};
  return NULL;
}

/* ================================ softmax ================================ */

static gfx_status parse_softmax(const ir_node_desc* d, ir_params* p, int log) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  /* before opset 13 the input is flattened to 2-D at axis (default 1) and each row normalized */
  const int flatten = d->since_version < 13;
  int64_t axis;
  GFX_TRY(ir_attr_int(d, "axis", flatten ? 1 : -1, &axis));
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0) {
    int normalized;
    /* the flattened form also accepts axis == rank (every row one element) */
    if (!(flatten && axis == rank)) GFX_TRY(ir_norm_axis(d, axis, rank, &normalized));
  } else if (axis < -GFX_MAX_RANK || axis > GFX_MAX_RANK) {
    return IR_UNSUPPORTED(d, "axis %lld is outside the ranks handled", (long long)axis);
  }
  p->softmax = (ir_softmax_params){.axis = (int8_t)axis, .log = (int8_t)log, .flatten = (int8_t)flatten};
  return NULL;
}

gfx_status ir_parse_softmax(const ir_node_desc* d, ir_params* p) { return parse_softmax(d, p, 0); }
gfx_status ir_parse_log_softmax(const ir_node_desc* d, ir_params* p) { return parse_softmax(d, p, 1); }

/* LpNormalization: along one axis (default -1), p 1 or 2 (ONNX Runtime computes no other). */
gfx_status ir_parse_lp_norm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "p", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  int64_t axis, order;
  GFX_TRY(ir_attr_int(d, "axis", -1, &axis));
  GFX_TRY(ir_attr_int(d, "p", 2, &order));
  if (order != 1 && order != 2) return IR_UNSUPPORTED(d, "p = %lld; 1 and 2 are handled", (long long)order);
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0) {
    int normalized;
    GFX_TRY(ir_norm_axis(d, axis, rank, &normalized));
  } else if (axis < -GFX_MAX_RANK || axis >= GFX_MAX_RANK) {
    return IR_UNSUPPORTED(d, "axis %lld is outside the ranks handled", (long long)axis);
  }
  p->softmax = (ir_softmax_params){.axis = (int8_t)axis, .lp = (int8_t)order};
  return NULL;
}

gfx_status ir_softmax_geometry(const ir_softmax_params* p, const gfx_shape* in, ir_softmax_geom* g) {
  GFX_TRY(check_dims("softmax", in));
  const int rank = in->rank;
  int axis = p->axis < 0 ? p->axis + rank : p->axis;
  if (axis < 0 || axis > rank || (axis == rank && !p->flatten) || rank == 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "softmax axis %d is outside the input %s", p->axis, SHAPE_STR(in));
  GFX_TRY(dims_product(in, 0, axis, &g->outer));
  if (p->flatten) {
    GFX_TRY(dims_product(in, axis, rank, &g->n));
    g->inner = 1;
  } else {
    g->n = in->dims[axis];
    GFX_TRY(dims_product(in, axis + 1, rank, &g->inner));
  }
  return NULL;
}

gfx_status ir_infer_softmax(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_softmax_geom g;
  GFX_TRY(ir_softmax_geometry(&node->params.softmax, &in[0], &g));
  out[0] = in[0];
  return NULL;
}

/* ================================ normalizations ================================ */

/* stash_type is the precision of the mean and variance: 1 (float32) is what gfxep computes in. */
static gfx_status check_stash_type(const ir_node_desc* d) {
  int64_t stash;
  GFX_TRY(ir_attr_int(d, "stash_type", 1, &stash));
  if (stash != 1) return IR_UNSUPPORTED(d, "stash_type = %lld; only 1 (float32) is handled", (long long)stash);
  return NULL;
}

static gfx_status read_epsilon(const ir_node_desc* d, float* eps) {
  GFX_TRY(ir_attr_float(d, "epsilon", 1e-5f, eps));
  if (!(*eps >= 0.0f)) return IR_UNSUPPORTED(d, "epsilon %g is negative or NaN", (double)*eps);
  return NULL;
}

/* The type checks of a LayerNormalization: X, Scale, B and Y share one float type; the optional Mean
 * and InvStdDev outputs are float32 (stash_type 1), or Y's type where a float16 conversion of the
 * model lowered them with everything else. */
static gfx_status check_layer_norm_types(const ir_node_desc* d) {
  ir_node_desc y_only = *d;
  y_only.n_outputs = 1;
  int dtype;
  GFX_TRY(ir_check_same_type(&y_only, 0, 2, IR_TYPES_FLOAT, &dtype));
  for (int o = 1; o < d->n_outputs; o++)
    if (d->output_dtypes[o] != GFX_DTYPE_F32 && d->output_dtypes[o] != dtype)
      return IR_UNSUPPORTED(d, "output %d (%s) is %s; float32 is expected", o, o == 1 ? "Mean" : "InvStdDev",
                            gfx_dtype_name(d->output_dtypes[o]));
  return NULL;
}

gfx_status ir_parse_layer_norm(const ir_node_desc* d, ir_params* p) {
  if (d->n_outputs < 1 || d->n_outputs > 3) return IR_UNSUPPORTED(d, "%d outputs (expected 1..3)", d->n_outputs);
  GFX_TRY(ir_check_io(d, 2, 3, d->n_outputs));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "epsilon", "stash_type", NULL}));
  GFX_TRY(check_layer_norm_types(d));
  GFX_TRY(check_stash_type(d));
  ir_norm_params n = {.kind = IR_NORM_LAYER};
  GFX_TRY(read_epsilon(d, &n.epsilon));
  int64_t axis;
  GFX_TRY(ir_attr_int(d, "axis", -1, &axis));
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0) {
    int a;
    GFX_TRY(ir_norm_axis(d, axis, rank, &a));
    /* Scale and B have the normalized shape; broadcasting them is not handled */
    for (int i = 1; i < d->n_inputs; i++) {
      const gfx_shape* s = &d->input_shapes[i];
      if (d->input_dtypes[i] != GFX_DTYPE_UNDEFINED && s->rank >= 0 && s->rank != rank - a)
        return IR_UNSUPPORTED(d, "input %d has rank %d; the normalized shape has rank %d", i, s->rank, rank - a);
    }
  } else if (axis < -GFX_MAX_RANK || axis >= GFX_MAX_RANK) {
    return IR_UNSUPPORTED(d, "axis %lld is outside the ranks handled", (long long)axis);
  }
  n.axis = (int8_t)axis;
  p->norm = n;
  return NULL;
}

/* RMSNormalization's scale broadcasts to the normalized dims norm[0..n) (aligned on the last dims).
 * Handled when its dims that are neither 1 nor facing a dim of 1 equal the dims they face and form
 * one run, with no broadcast dim inside it: element j of a row then reads scale[j / div % wrap]
 * (wrap 0: no wrap needed, the run starts the row). Returns 0 for any other layout. */
static int rms_scale_layout(const int64_t* norm, int n, const gfx_shape* s, int64_t* div, int64_t* wrap) {
  if (s->rank < 0 || s->rank > n) return 0;
  int first = -1, last = -1, gap = 0;
  for (int i = 0; i < n; i++) {
    const int k = i - (n - s->rank); /* the scale dim facing norm[i], or < 0 for an implicit 1 */
    const int64_t sd = k >= 0 ? s->dims[k] : 1;
    if (norm[i] == 1 && sd == 1) continue; /* neutral */
    if (sd != norm[i]) {
      if (sd != 1) return 0; /* neither equal nor broadcast */
      if (first >= 0) gap = 1;
      continue;
    }
    if (gap) return 0; /* a second run */
    if (first < 0) first = i;
    last = i;
  }
  int64_t before = 1, in_run = 1, after = 1;
  for (int i = 0; i < n; i++) {
    if (first < 0 || i > last) after *= norm[i];
    else if (i < first) before *= norm[i];
    else in_run *= norm[i];
  }
  *div = after > 0 ? after : 1;
  *wrap = before > 1 ? in_run : 0;
  return 1;
}

gfx_status ir_parse_rms_norm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "epsilon", "stash_type", NULL}));
  /* X (T) and Scale, Y (V) may differ in type; one type for all is handled */
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT, NULL));
  GFX_TRY(check_stash_type(d));
  ir_norm_params n = {.kind = IR_NORM_RMS};
  GFX_TRY(read_epsilon(d, &n.epsilon));
  int64_t axis;
  GFX_TRY(ir_attr_int(d, "axis", -1, &axis));
  const gfx_shape *x = &d->input_shapes[0], *scale = &d->input_shapes[1];
  if (x->rank >= 0) {
    int a;
    GFX_TRY(ir_norm_axis(d, axis, x->rank, &a));
    /* a dim only known at run time is taken as the scale's where that is not 1, as broadcast where it
     * is: a layout accepted so is accepted for every input the model allows */
    int64_t norm[GFX_MAX_RANK];
    for (int i = a; i < x->rank; i++) {
      const int k = i - (x->rank - scale->rank);
      const int64_t sd = scale->rank >= 0 && k >= 0 ? scale->dims[k] : 1;
      norm[i - a] = x->dims[i] >= 0 ? x->dims[i] : sd != 1 ? sd : 2;
    }
    for (int k = 0; k < scale->rank; k++)
      if (scale->dims[k] < 0) return IR_UNSUPPORTED(d, "the scale's shape is only known at run time");
    int64_t div, wrap;
    if (scale->rank < 0 || !rms_scale_layout(norm, x->rank - a, scale, &div, &wrap))
      return IR_UNSUPPORTED(d, "scale %s does not broadcast to the normalized dims of %s along one run of them",
                            SHAPE_STR(scale), SHAPE_STR(x));
  } else if (axis < -GFX_MAX_RANK || axis >= GFX_MAX_RANK) {
    return IR_UNSUPPORTED(d, "axis %lld is outside the ranks handled", (long long)axis);
  }
  n.axis = (int8_t)axis;
  p->norm = n;
  return NULL;
}

gfx_status ir_parse_instance_norm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"epsilon", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, NULL));
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank < 3)
    return IR_UNSUPPORTED(d, "input rank %d; N x C x spatial (rank >= 3) is handled", d->input_shapes[0].rank);
  ir_norm_params n = {.kind = IR_NORM_INSTANCE};
  GFX_TRY(read_epsilon(d, &n.epsilon));
  p->norm = n;
  return NULL;
}

gfx_status ir_parse_group_norm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  if (d->since_version >= 21) {
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"epsilon", "num_groups", "stash_type", NULL}));
    GFX_TRY(check_stash_type(d));
  } else {
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"epsilon", "num_groups", NULL}));
  }
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, NULL));
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank < 3)
    return IR_UNSUPPORTED(d, "input rank %d; N x C x spatial (rank >= 3) is handled", d->input_shapes[0].rank);
  /* opset 18 has scale and bias per group; 21 per channel */
  ir_norm_params n = {.kind = IR_NORM_GROUP, .per_channel = (int8_t)(d->since_version >= 21)};
  GFX_TRY(read_epsilon(d, &n.epsilon));
  int64_t groups;
  GFX_TRY(ir_attr_int(d, "num_groups", 0, &groups));
  if (groups < 1 || groups > DIM_LIMIT)
    return IR_UNSUPPORTED(d, "num_groups = %lld (must be given and >= 1)", (long long)groups);
  const gfx_shape* x = &d->input_shapes[0];
  if (x->rank >= 2 && x->dims[1] >= 0 && x->dims[1] % groups != 0)
    return IR_UNSUPPORTED(d, "%lld channels are not divisible into %lld groups", (long long)x->dims[1],
                          (long long)groups);
  n.num_groups = (int32_t)groups;
  p->norm = n;
  return NULL;
}

gfx_status ir_norm_geometry(const ir_norm_params* p, const gfx_shape* x, const gfx_shape* scale, ir_norm_geom* g) {
  memset(g, 0, sizeof *g);
  GFX_TRY(check_dims("normalization", x));
  const int rank = x->rank;
  if (p->kind == IR_NORM_RMS) {
    const int axis = p->axis < 0 ? p->axis + rank : p->axis;
    if (axis < 0 || axis >= rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "RMSNormalization axis %d is outside the input %s", p->axis, SHAPE_STR(x));
    GFX_TRY(dims_product(x, 0, axis, &g->rows));
    GFX_TRY(dims_product(x, axis, rank, &g->count));
    g->affine_mod = 1, g->affine_mul = 0;
    if (!rms_scale_layout(x->dims + axis, rank - axis, scale, &g->affine_div, &g->affine_wrap))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "RMSNormalization scale %s does not broadcast to the normalized dims "
                       "of %s at axis %d along one run of them", SHAPE_STR(scale), SHAPE_STR(x), axis);
    return dims_product(scale, 0, scale->rank, &g->affine_count);
  }
  if (p->kind == IR_NORM_LAYER) {
    int axis = p->axis < 0 ? p->axis + rank : p->axis;
    if (axis < 0 || axis >= rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "LayerNormalization axis %d is outside the input %s", p->axis,
                       SHAPE_STR(x));
    GFX_TRY(dims_product(x, 0, axis, &g->rows));
    GFX_TRY(dims_product(x, axis, rank, &g->count));
    g->affine_mod = 1, g->affine_mul = 0, g->affine_div = 1;
    g->affine_count = g->count;
    /* Scale has exactly the normalized shape */
    int ok = scale->rank == rank - axis;
    for (int i = 0; ok && i < scale->rank; i++) ok = scale->dims[i] == x->dims[axis + i];
    if (!ok)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "LayerNormalization scale %s is not the normalized shape of %s at axis %d",
                       SHAPE_STR(scale), SHAPE_STR(x), axis);
    return NULL;
  }
  if (rank < 3)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "normalization needs N x C x spatial, got %s", SHAPE_STR(x));
  const int64_t n = x->dims[0], c = x->dims[1];
  int64_t spatial;
  GFX_TRY(dims_product(x, 2, rank, &spatial));
  if (p->kind == IR_NORM_INSTANCE) {
    g->rows = n * c;
    g->count = spatial;
    g->affine_mod = c > 0 ? c : 1, g->affine_mul = 1, g->affine_div = spatial > 0 ? spatial : 1;
    g->affine_count = c;
  } else {
    const int64_t groups = p->num_groups;
    if (groups < 1 || c % groups != 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "GroupNormalization: %lld channels of %s are not divisible into %lld groups",
                       (long long)c, SHAPE_STR(x), (long long)groups);
    const int64_t per_group = c / groups;
    g->rows = n * groups;
    GFX_TRY(dims_product(&(gfx_shape){.rank = 2, .dims = {per_group, spatial}}, 0, 2, &g->count));
    g->affine_mod = groups;
    if (p->per_channel) {
      g->affine_mul = per_group, g->affine_div = spatial > 0 ? spatial : 1;
      g->affine_count = c;
    } else {
      g->affine_mul = 1, g->affine_div = g->count > 0 ? g->count : 1;
      g->affine_count = groups;
    }
  }
  if (scale->rank != 1 || scale->dims[0] != g->affine_count)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "scale %s of input %s should have shape [%lld]", SHAPE_STR(scale),
                     SHAPE_STR(x), (long long)g->affine_count);
  return NULL;
}

gfx_status ir_infer_norm(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_norm_geom g;
  GFX_TRY(ir_norm_geometry(&node->params.norm, &in[0], &in[1], &g));
  /* the bias, when there is one, matches the scale */
  if (node->n_inputs >= 3 && in[2].rank >= 0 && !gfx_shape_equal(&in[1], &in[2]))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "bias %s and scale %s differ", SHAPE_STR(&in[2]), SHAPE_STR(&in[1]));
  out[0] = in[0];
  const ir_norm_params* p = &node->params.norm;
  if (ir_norm_has_epilogue(p)) {
    if (p->kind != IR_NORM_INSTANCE || in[0].rank != 4 || node->n_outputs != 1 ||
        (p->add_after && (node->n_inputs <= IR_NORM_RESIDUAL_INPUT || !gfx_shape_equal(&in[IR_NORM_RESIDUAL_INPUT], &in[0]))))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "an InstanceNormalization epilogue needs X of rank 4 (got %s), one "
                       "output and an added input %d of X's shape", SHAPE_STR(&in[0]), IR_NORM_RESIDUAL_INPUT);
    if (p->reflect_pad) {
      /* reflect padding mirrors without the edge: a pad must stay below its dim */
      for (int i = 0; i < 4; i++)
        if (p->out_pads[i] < 0 || (in[0].dims[2 + i % 2] >= 0 && p->out_pads[i] >= in[0].dims[2 + i % 2]))
          return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reflect pad %d of dim %d of %s: 0 up to the dim less 1 is handled",
                           p->out_pads[i], 2 + i % 2, SHAPE_STR(&in[0]));
      for (int d = 2; d < 4; d++)
        if (out[0].dims[d] >= 0) out[0].dims[d] += p->out_pads[d - 2] + p->out_pads[d];
    }
    return NULL;
  }
  if (node->params.norm.residual) {
    /* a residual Add fused in: its other operand has X's shape, and output 1 is the sum */
    if (node->params.norm.kind != IR_NORM_LAYER || node->n_inputs <= IR_NORM_RESIDUAL_INPUT ||
        !gfx_shape_equal(&in[IR_NORM_RESIDUAL_INPUT], &in[0]) || node->n_outputs > 2)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "LayerNormalization with a residual: input %d must have X's shape %s",
                       IR_NORM_RESIDUAL_INPUT, SHAPE_STR(&in[0]));
    if (node->n_outputs > 1) out[1] = in[0];
    return NULL;
  }
  /* LayerNormalization's Mean and InvStdDev: X's shape with the normalized dims 1 */
  for (int o = 1; o < node->n_outputs; o++) GFX_TRY(ir_norm_stats_shape(&node->params.norm, &in[0], &out[o]));
  return NULL;
}

gfx_status ir_norm_stats_shape(const ir_norm_params* p, const gfx_shape* x, gfx_shape* out) {
  const int axis = p->axis < 0 ? p->axis + x->rank : p->axis;
  if (p->kind != IR_NORM_LAYER || axis < 0 || axis >= x->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "normalization statistics of %s at axis %d: LayerNormalization only",
                     SHAPE_STR(x), p->axis);
  *out = *x;
  for (int i = axis; i < x->rank; i++) out->dims[i] = 1;
  return NULL;
}

/* ================================ LRN ================================ */

gfx_status ir_parse_lrn(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", "beta", "bias", "size", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank < 3)
    return IR_UNSUPPORTED(d, "input rank %d; N x C x spatial (rank >= 3) is handled", d->input_shapes[0].rank);
  ir_lrn_params l;
  memset(&l, 0, sizeof l);
  GFX_TRY(ir_attr_int(d, "size", 0, &l.size));
  if (l.size < 1 || l.size > DIM_LIMIT) return IR_UNSUPPORTED(d, "size = %lld (must be given and >= 1)", (long long)l.size);
  GFX_TRY(ir_attr_float(d, "alpha", 1e-4f, &l.alpha));
  GFX_TRY(ir_attr_float(d, "beta", 0.75f, &l.beta));
  GFX_TRY(ir_attr_float(d, "bias", 1.0f, &l.bias));
  p->lrn = l;
  return NULL;
}

gfx_status ir_lrn_geometry(const ir_lrn_params* p, const gfx_shape* x, ir_lrn_geom* g) {
  memset(g, 0, sizeof *g);
  GFX_TRY(check_dims("LRN", x));
  if (x->rank < 3) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "LRN needs N x C x spatial, got %s", SHAPE_STR(x));
  if (p->size < 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "LRN size %lld", (long long)p->size);
  g->n = x->dims[0];
  g->c = x->dims[1];
  GFX_TRY(dims_product(x, 2, x->rank, &g->spatial));
  g->size = p->size;
  g->pre = (p->size - 1) / 2;
  return NULL;
}

gfx_status ir_infer_lrn(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_lrn_geom g;
  GFX_TRY(ir_lrn_geometry(&node->params.lrn, &in[0], &g));
  out[0] = in[0];
  return NULL;
}

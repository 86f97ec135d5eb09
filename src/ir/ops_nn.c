/* gfxep — parse and shape functions of convolution and matrix products (see ir/ops.def). */
#include "ir/ops_nn.h"

#include <math.h>
#include <string.h>

#include "ir/ops_common.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* ---- MatMul ---- */

gfx_status ir_parse_matmul(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  memset(&p->gemm, 0, sizeof p->gemm);
  p->gemm.alpha = 1.0f;
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT, &p->gemm.dtype));
  for (int i = 0; i < 2; i++)
    if (d->input_shapes[i].rank < 2)
      return IR_UNSUPPORTED(d, "input %d has rank %d; operands of rank >= 2 are handled", i, d->input_shapes[i].rank);
  return NULL;
}

/* ---- Einsum as a batched matrix product ---- */

/* The letters of one term, spaces dropped; refuses an ellipsis, a repeated letter or anything but
 * letters. */
static gfx_status einsum_term(const ir_node_desc* d, const char* from, const char* to, char* out, int* n) {
  *n = 0;
  for (const char* c = from; c < to; c++) {
    if (*c == ' ') continue;
    if (*c == '.') return IR_UNSUPPORTED(d, "an ellipsis ('...') in the equation");
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
      return IR_UNSUPPORTED(d, "character '%c' in the equation", *c);
    for (int i = 0; i < *n; i++)
      if (out[i] == *c) return IR_UNSUPPORTED(d, "letter '%c' twice in one term (a diagonal)", *c);
    if (*n == GFX_MAX_RANK) return IR_UNSUPPORTED(d, "a term of more than %d letters", GFX_MAX_RANK);
    out[(*n)++] = *c;
  }
  return NULL;
}

/* Einsum equations that are a MatMul: "<batch>ik,<batch>kj-><batch>ij" and, with b read transposed
 * (gemm.trans_b), "<batch>ik,<batch>jk-><batch>ij", where <batch> is the same letters in the same
 * order in all three terms. Attention blocks are written so (q k^T, then attn v). */
gfx_status ir_parse_einsum(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"equation", NULL}));
  char eq[128];
  GFX_TRY(ir_attr_string(d, "equation", "", eq, sizeof eq));
  const char* arrow = strstr(eq, "->");
  const char* comma = strchr(eq, ',');
  if (!arrow) return IR_UNSUPPORTED(d, "equation '%s' has no explicit output ('->')", eq);
  if (!comma || comma > arrow || strchr(comma + 1, ',') != NULL)
    return IR_UNSUPPORTED(d, "equation '%s': two operands are handled", eq);
  char a[GFX_MAX_RANK], b[GFX_MAX_RANK], o[GFX_MAX_RANK];
  int na, nb, no;
  GFX_TRY(einsum_term(d, eq, comma, a, &na));
  GFX_TRY(einsum_term(d, comma + 1, arrow, b, &nb));
  GFX_TRY(einsum_term(d, arrow + 2, eq + strlen(eq), o, &no));
  if (na < 2 || na != nb || na != no)
    return IR_UNSUPPORTED(d, "equation '%s': terms of one rank >= 2 are handled (batched matrix products)", eq);
  for (int i = 0; i < 2; i++)
    if (d->input_shapes[i].rank >= 0 && d->input_shapes[i].rank != na)
      return IR_UNSUPPORTED(d, "equation '%s' names %d dims; input %d has rank %d", eq, na, i, d->input_shapes[i].rank);
  const int r = na;
  for (int i = 0; i < r - 2; i++)
    if (b[i] != a[i] || o[i] != a[i]) return IR_UNSUPPORTED(d, "equation '%s': the leading (batch) letters differ", eq);
  const char ai = a[r - 2], ak = a[r - 1];
  int trans_b;
  if (b[r - 2] == ak && b[r - 1] != ai && b[r - 1] != ak)
    trans_b = 0; /* ...ik,...kj */
  else if (b[r - 1] == ak && b[r - 2] != ai && b[r - 2] != ak)
    trans_b = 1; /* ...ik,...jk */
  else
    return IR_UNSUPPORTED(d, "equation '%s' is not a matrix product over the last dims", eq);
  const char bj = trans_b ? b[r - 2] : b[r - 1];
  if (o[r - 2] != ai || o[r - 1] != bj)
    return IR_UNSUPPORTED(d, "equation '%s': the output is not [..., i, j] of the product", eq);
  for (int i = 0; i < r - 2; i++)
    if (a[i] == ai || a[i] == ak || a[i] == bj) return IR_UNSUPPORTED(d, "equation '%s': a batch letter repeats", eq);
  memset(&p->gemm, 0, sizeof p->gemm);
  p->gemm.alpha = 1.0f;
  p->gemm.trans_b = trans_b;
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT, &p->gemm.dtype));
  return NULL;
}

/* ---- Conv and ConvTranspose: the attributes they share ---- */

static gfx_status parse_auto_pad(const ir_node_desc* d, ir_auto_pad* out, char* name, size_t cap) {
  GFX_TRY(ir_attr_string(d, "auto_pad", "NOTSET", name, cap));
  if (strcmp(name, "NOTSET") == 0)
    *out = IR_PAD_NOTSET;
  else if (strcmp(name, "SAME_UPPER") == 0)
    *out = IR_PAD_SAME_UPPER;
  else if (strcmp(name, "SAME_LOWER") == 0)
    *out = IR_PAD_SAME_LOWER;
  else if (strcmp(name, "VALID") == 0)
    *out = IR_PAD_VALID;
  else
    return IR_UNSUPPORTED(d, "auto_pad = '%s' is not an ONNX value", name);
  return NULL;
}

/* Rank of the operands (3 for 1-D, 4 for 2-D, 5 for 3-D where max_rank allows), kernel_shape, strides,
 * dilations, pads, group and auto_pad, with the checks Conv and ConvTranspose share. */
static gfx_status parse_conv_common(const ir_node_desc* d, int max_rank, ir_conv_params* c, int* pads_present) {
  int rank = d->input_shapes[1].rank >= 0 ? d->input_shapes[1].rank : d->input_shapes[0].rank;
  if (rank < 3 || rank > max_rank)
    return IR_UNSUPPORTED(d, "rank %d; %s convolution (rank 3 to %d, NC[D][H]W) is handled", rank,
                          max_rank == 5 ? "1-D, 2-D and 3-D" : "1-D and 2-D", max_rank);
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank != rank)
    return IR_UNSUPPORTED(d, "input rank %d and weight rank %d differ", d->input_shapes[0].rank, rank);
  memset(c, 0, sizeof *c);
  c->spatial = rank - 2;
  c->group = 1;
  for (int i = 0; i < c->spatial; i++) c->strides[i] = c->dilations[i] = 1;

  int present;
  GFX_TRY(ir_read_ints(d, "kernel_shape", c->kernel, (size_t)c->spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "strides", c->strides, (size_t)c->spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "dilations", c->dilations, (size_t)c->spatial, 1, &present));
  GFX_TRY(ir_read_ints(d, "pads", c->pads, 2 * (size_t)c->spatial, 0, pads_present));
  GFX_TRY(ir_attr_int(d, "group", 1, &c->group));
  if (c->group < 1) return IR_UNSUPPORTED(d, "group = %lld (must be >= 1)", (long long)c->group);

  char pad[32];
  GFX_TRY(parse_auto_pad(d, &c->auto_pad, pad, sizeof pad));
  if (c->auto_pad != IR_PAD_NOTSET && *pads_present) {
    for (int i = 0; i < 2 * c->spatial; i++)
      if (c->pads[i] != 0) return IR_UNSUPPORTED(d, "both auto_pad = '%s' and non-zero pads are set", pad);
  }
  if (c->auto_pad == IR_PAD_SAME_UPPER || c->auto_pad == IR_PAD_SAME_LOWER)
    for (int i = 0; i < c->spatial; i++)
      if (c->dilations[i] != 1)
        /* ONNX Runtime's own kernels refuse this combination, so there is no oracle to agree with */
        return IR_UNSUPPORTED(d, "auto_pad = '%s' with dilations > 1", pad);
  return NULL;
}

gfx_status ir_parse_conv(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"auto_pad", "dilations", "group", "kernel_shape", "pads",
                                                      "strides", NULL}));
  int dtype;
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, &dtype));
  ir_conv_params c;
  int pads_present = 0;
  GFX_TRY(parse_conv_common(d, 5, &c, &pads_present));
  c.dtype = dtype;
  const gfx_shape* w = &d->input_shapes[1];
  const gfx_shape* x = &d->input_shapes[0];
  /* the channels are the last dim of a channels-last input (ir_op_parse marks the node so) */
  const int c_axis = d->domain && strcmp(d->domain, IR_NHWC_DOMAIN) == 0 ? x->rank - 1 : 1;
  if (w->rank >= 3 && w->dims[1] > 0 && x->rank >= 3 && x->dims[c_axis] > 0 &&
      (w->dims[1] > INT64_MAX / c.group || w->dims[1] * c.group != x->dims[c_axis]))
    return IR_UNSUPPORTED(d, "weight %lld input channels x group %lld != input channels %lld", (long long)w->dims[1],
                          (long long)c.group, (long long)x->dims[c_axis]);
  p->conv = c;
  return NULL;
}

/* ---- ConvTranspose ---- */

/* output_shape holds the spatial dims, or (as ONNX Runtime also accepts) N, C and the spatial dims. */
static gfx_status parse_output_shape(const ir_node_desc* d, ir_conv_params* c, int pads_present) {
  int64_t shape[IR_MAX_SPATIAL + 2];
  size_t n = 0;
  int present = 0;
  GFX_TRY(ir_attr_ints(d, "output_shape", shape, IR_MAX_SPATIAL + 2, &n, &present));
  if (!present) return NULL;
  size_t sp = (size_t)c->spatial;
  if (n != sp && n != sp + 2)
    return IR_UNSUPPORTED(d, "output_shape has %zu entries; %zu (spatial) or %zu are handled", n, sp, sp + 2);
  for (size_t i = 0; i < sp; i++) {
    c->output_shape[i] = shape[n - sp + i];
    if (c->output_shape[i] < 0)
      return IR_UNSUPPORTED(d, "output_shape[%zu] = %lld is negative", n - sp + i, (long long)c->output_shape[i]);
  }
  if (pads_present)
    for (int i = 0; i < 2 * c->spatial; i++)
      if (c->pads[i] != 0)
        /* the spec derives the pads from output_shape; explicit ones would contradict it */
        return IR_UNSUPPORTED(d, "both output_shape and non-zero pads are set");
  c->has_output_shape = 1;
  return NULL;
}

gfx_status ir_parse_conv_transpose(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"auto_pad", "dilations", "group", "kernel_shape",
                                                      "output_padding", "output_shape", "pads", "strides", NULL}));
  int dtype;
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, &dtype));
  ir_conv_params c;
  int pads_present = 0, present = 0;
  GFX_TRY(parse_conv_common(d, 5, &c, &pads_present));
  c.dtype = dtype;
  GFX_TRY(ir_read_ints(d, "output_padding", c.output_padding, (size_t)c.spatial, 0, &present));
  for (int i = 0; i < c.spatial; i++)
    if (c.output_padding[i] >= c.strides[i])
      /* ONNX allows output_padding < dilation too, but then the extra rows lie beyond every tap and
       * cuDNN's backward-data geometry cannot express them */
      return IR_UNSUPPORTED(d, "output_padding[%d] = %lld is not below stride %lld", i, (long long)c.output_padding[i],
                            (long long)c.strides[i]);
  GFX_TRY(parse_output_shape(d, &c, pads_present));
  const gfx_shape* w = &d->input_shapes[1];
  const gfx_shape* x = &d->input_shapes[0];
  if (w->rank >= 3 && w->dims[0] >= 0 && w->dims[0] % c.group != 0)
    return IR_UNSUPPORTED(d, "weight dim 0 (%lld input channels) is not divisible by group %lld", (long long)w->dims[0],
                          (long long)c.group);
  if (w->rank >= 3 && w->dims[0] >= 0 && x->rank >= 3 && x->dims[1] >= 0 && w->dims[0] != x->dims[1])
    return IR_UNSUPPORTED(d, "weight dim 0 (%lld) != input channels %lld", (long long)w->dims[0], (long long)x->dims[1]);
  if (c.has_output_shape || c.auto_pad == IR_PAD_SAME_UPPER || c.auto_pad == IR_PAD_SAME_LOWER) {
    /* an output (output_shape, or input x stride for SAME padding) larger than what the taps reach
     * means negative pads (outputs beyond every tap, holding the bias alone), which gfxep does not
     * compute; it is only known to fit when the input's spatial dims and the kernel are static, so
     * anything else stays with ONNX Runtime */
    for (int i = 0; i < c.spatial; i++) {
      /* with SAME padding the shortfall, in x stride minus the reach, does not depend on the input size */
      const int64_t in = !c.has_output_shape ? 1 : x->rank == c.spatial + 2 ? x->dims[2 + i] : -1;
      const int64_t k = w->rank == c.spatial + 2 ? w->dims[2 + i] : -1;
      if (in < 1 || k < 1)
        return IR_UNSUPPORTED(d, "%s with spatial dim %d of the input or kernel not static",
                              c.has_output_shape ? "output_shape" : "SAME padding", i);
      const int64_t full = c.strides[i] * (in - 1) + c.output_padding[i] + (k - 1) * c.dilations[i] + 1;
      const int64_t want = c.has_output_shape ? c.output_shape[i] : in * c.strides[i];
      if (want > full)
        return IR_UNSUPPORTED(d,
                              "%s[%d] = %lld exceeds the %lld the input's taps reach (negative pads are not "
                              "implemented)",
                              c.has_output_shape ? "output_shape" : "the SAME-padded output", i, (long long)want,
                              (long long)full);
    }
  }
  p->conv = c;
  return NULL;
}

/* Splits a total padding as the spec's ConvTranspose rule says: SAME_UPPER puts the odd pixel at
 * the end, every other mode at the beginning. */
static void split_transpose_padding(ir_auto_pad mode, int64_t total, int64_t* begin, int64_t* end) {
  if (mode == IR_PAD_SAME_UPPER) {
    *begin = total / 2;
    *end = total - total / 2;
  } else {
    *begin = total - total / 2;
    *end = total / 2;
  }
}

gfx_status ir_conv_transpose_geometry(const ir_conv_params* p, const gfx_shape* x, const gfx_shape* w,
                                      ir_conv_geom* g) {
  const int sp = p->spatial;
  if (sp < 1 || sp > IR_MAX_SPATIAL)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose with %d spatial dims; 1..%d are handled", sp,
                     IR_MAX_SPATIAL);
  if (x->rank != sp + 2 || w->rank != sp + 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose input %s and weight %s must both have rank %d",
                     SHAPE_STR(x), SHAPE_STR(w), sp + 2);
  /* As in ir_conv_geometry: every quantity at most 2^31 keeps the arithmetic far from overflow. */
  const int64_t limit = (int64_t)1 << 31;
  for (int i = 0; i < sp + 2; i++)
    if (x->dims[i] < 0 || x->dims[i] > limit || w->dims[i] < 0 || w->dims[i] > limit)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose input %s or weight %s has a dim outside 0..2^31",
                       SHAPE_STR(x), SHAPE_STR(w));
  if (p->group < 1 || p->group > limit || w->dims[0] != x->dims[1] || w->dims[0] % p->group != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "conv transpose input %s, weight %s and group=%lld disagree (weight dim 0 must equal the input "
                     "channels and be divisible by group)",
                     SHAPE_STR(x), SHAPE_STR(w), (long long)p->group);
  memset(g, 0, sizeof *g);
  g->spatial = sp;
  g->n = x->dims[0];
  g->c_in = x->dims[1];
  g->c_out = w->dims[1] * p->group;
  g->group = p->group;
  for (int i = 0; i < sp; i++) {
    const int64_t in = x->dims[2 + i], k = w->dims[2 + i], s = p->strides[i], d = p->dilations[i];
    const int64_t op = p->output_padding[i];
    if (k < 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose weight %s has an empty kernel", SHAPE_STR(w));
    if (p->kernel[i] && p->kernel[i] != k)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose kernel_shape[%d]=%lld but the weight has %lld", i,
                       (long long)p->kernel[i], (long long)k);
    if (s < 1 || s > limit || d < 1 || d > limit || op < 0 || op >= s || p->pads[i] < 0 || p->pads[i] > limit ||
        p->pads[sp + i] < 0 || p->pads[sp + i] > limit || p->output_shape[i] < 0 || p->output_shape[i] > limit)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "conv transpose spatial dim %d: stride %lld, dilation %lld, output_padding %lld, pads %lld/%lld "
                       "or output_shape %lld out of range",
                       i, (long long)s, (long long)d, (long long)op, (long long)p->pads[i], (long long)p->pads[sp + i],
                       (long long)p->output_shape[i]);
    if (in < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose input %s has an empty spatial dim %d", SHAPE_STR(x), i);
    const int64_t full = s * (in - 1) + op + (k - 1) * d + 1; /* before any pad is cropped */
    int64_t pb, pe;
    if (p->has_output_shape || p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER) {
      const int64_t want = p->has_output_shape ? p->output_shape[i] : in * s;
      const int64_t total = full - want;
      if (total < 0)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                         "conv transpose spatial dim %d: output size %lld exceeds the %lld the input can produce", i,
                         (long long)want, (long long)full);
      split_transpose_padding(p->auto_pad, total, &pb, &pe);
    } else if (p->auto_pad == IR_PAD_VALID) {
      pb = pe = 0;
    } else {
      pb = p->pads[i];
      pe = p->pads[sp + i];
    }
    if (full - pb - pe < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose spatial dim %d: pads %lld+%lld exceed the output %lld",
                       i, (long long)pb, (long long)pe, (long long)full);
    g->in[i] = in;
    g->kernel[i] = k;
    g->strides[i] = s;
    g->dilations[i] = d;
    g->pad_begin[i] = pb;
    g->pad_end[i] = pe;
    g->out[i] = full - pb - pe;
  }
  return NULL;
}

gfx_status ir_infer_conv_transpose(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_conv_geom g;
  GFX_TRY(ir_conv_transpose_geometry(&node->params.conv, &in[0], &in[1], &g));
  if (node->n_inputs > 2 && in[2].rank >= 0 && (in[2].rank != 1 || in[2].dims[0] != g.c_out))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv transpose bias %s must be [%lld]", SHAPE_STR(&in[2]),
                     (long long)g.c_out);
  gfx_shape o = {.rank = g.spatial + 2};
  o.dims[0] = g.n;
  o.dims[1] = g.c_out;
  for (int i = 0; i < g.spatial; i++) o.dims[2 + i] = g.out[i];
  out[0] = o;
  return NULL;
}

void ir_conv_as_2d(const ir_conv_params* p, const gfx_shape* x, const gfx_shape* w, ir_conv_params* p2,
                   gfx_shape* x2, gfx_shape* w2) {
  *p2 = *p;
  *x2 = *x;
  *w2 = *w;
  if (p->spatial != 1) return;
  p2->spatial = 2;
  p2->kernel[0] = p->kernel[0] ? 1 : 0;
  p2->kernel[1] = p->kernel[0];
  p2->strides[0] = 1;
  p2->strides[1] = p->strides[0];
  p2->dilations[0] = 1;
  p2->dilations[1] = p->dilations[0];
  p2->pads[0] = 0;
  p2->pads[1] = p->pads[0];
  p2->pads[2] = 0;
  p2->pads[3] = p->pads[1];
  p2->output_padding[0] = 0;
  p2->output_padding[1] = p->output_padding[0];
  p2->output_shape[0] = 1;
  p2->output_shape[1] = p->output_shape[0];
  const gfx_shape* from[2] = {x, w};
  gfx_shape* to[2] = {x2, w2};
  for (int t = 0; t < 2; t++) {
    if (from[t]->rank != 3) continue; /* left as it is: the geometry check names the bad rank */
    to[t]->rank = 4;
    to[t]->dims[0] = from[t]->dims[0];
    to[t]->dims[1] = from[t]->dims[1];
    to[t]->dims[2] = 1;
    to[t]->dims[3] = from[t]->dims[2];
  }
}

/* ---- convolution chains (ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT) ---- */

void ir_conv_chain_split(const ir_conv_params* chain, ir_conv_params* first, ir_conv_params* second) {
  *second = *chain;
  second->chain = 0;
  second->chain_activation = IR_ACT_NONE;
  second->chain_alpha = second->chain_beta = 0.0f;
  *first = *second;
  first->activation = chain->chain_activation;
  first->act_alpha = chain->chain_alpha;
  first->act_beta = chain->chain_beta;
}

/* The geometry every chain has; the fusion (ir/fuse_chain.c) writes its pads out, even for auto_pad. */
static gfx_status check_chain_params(const ir_conv_params* p) {
  if (!p->chain) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "params.conv.chain is 0: not a convolution chain");
  if (p->spatial != 2 || p->group != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "a convolution chain with %d spatial dims and group %lld; a chain is 2-D with one group",
                     p->spatial, (long long)p->group);
  if (p->residual != IR_RES_NONE || p->nchw_input)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "a convolution chain with residual mode %d and nchw_input %d; a chain has neither", p->residual,
                     p->nchw_input);
  if (p->auto_pad != IR_PAD_NOTSET)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "a convolution chain with auto_pad %d; a chain's pads are explicit",
                     (int)p->auto_pad);
  for (int i = 0; i < 2; i++)
    if ((p->kernel[i] != 0 && p->kernel[i] != 3) || p->strides[i] != 1 || p->dilations[i] != 1 || p->pads[i] != 1 ||
        p->pads[2 + i] != 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "a convolution chain with kernel_shape %lld, stride %lld, dilation %lld and pads %lld/%lld "
                       "along spatial dim %d; a chain's convolutions are 3x3 of stride 1, dilation 1 and pads 1",
                       (long long)p->kernel[i], (long long)p->strides[i], (long long)p->dilations[i],
                       (long long)p->pads[i], (long long)p->pads[2 + i], i);
  if (p->activation < IR_ACT_NONE || p->activation >= IR_ACT_COUNT || p->chain_activation < IR_ACT_NONE ||
      p->chain_activation >= IR_ACT_COUNT)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "a convolution chain with activations %d (first) and %d (second); 0 to %d exist",
                     p->chain_activation, p->activation, IR_ACT_COUNT - 1);
  return NULL;
}

static gfx_status check_chain_weight(const char* what, const gfx_shape* w) {
  if (w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "convolution chain: %s is %s; it must be [M, C, 3, 3]", what,
                     SHAPE_STR(w));
  return NULL;
}

/* An optional bias: absent (rank -1) or one value per channel. */
static gfx_status check_chain_bias(const char* what, const gfx_shape* b, int64_t channels) {
  if (b->rank >= 0 && (b->rank != 1 || b->dims[0] != channels))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "convolution chain: %s is %s; it must be [%lld]", what, SHAPE_STR(b),
                     (long long)channels);
  return NULL;
}

gfx_status ir_conv_chain_shapes(const ir_conv_params* p, int n_inputs, const gfx_shape* in, gfx_shape* mid,
                                gfx_shape* y) {
  const int wa = IR_CONV_CHAIN_WEIGHT_INPUT, ba = IR_CONV_CHAIN_WEIGHT_INPUT + 1;
  GFX_TRY(check_chain_params(p));
  if (n_inputs < wa + 1 || n_inputs > ba + 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "a convolution chain with %d inputs; it has %d or %d (X, W, B, no residual, W_a, B_a)", n_inputs,
                     wa + 1, ba + 1);
  if (in[IR_CONV_RESIDUAL_INPUT].rank >= 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "convolution chain: input %d (a residual) %s is given; a chain has none",
                     IR_CONV_RESIDUAL_INPUT, SHAPE_STR(&in[IR_CONV_RESIDUAL_INPUT]));
  const gfx_shape *x = &in[0], *w_a = &in[wa], *w = &in[1];
  GFX_TRY(check_chain_weight("the first weight W_a (input 4)", w_a));
  GFX_TRY(check_chain_weight("the second weight W (input 1)", w));
  const int64_t x_channels = x->rank == 4 ? x->dims[p->channels_last ? 3 : 1] : -1;
  if (x->rank == 4 && w_a->dims[1] != x_channels)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "convolution chain: the first weight W_a (input 4) %s takes %lld input channels, X (input 0) %s "
                     "has %lld",
                     SHAPE_STR(w_a), (long long)w_a->dims[1], SHAPE_STR(x), (long long)x_channels);
  if (w->dims[1] != w_a->dims[0])
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "convolution chain: the second weight W (input 1) %s takes %lld input channels, the first weight "
                     "W_a (input 4) %s makes %lld",
                     SHAPE_STR(w), (long long)w->dims[1], SHAPE_STR(w_a), (long long)w_a->dims[0]);
  const gfx_shape absent = {.rank = -1};
  GFX_TRY(check_chain_bias("the first bias B_a (input 5)", n_inputs > ba ? &in[ba] : &absent, w_a->dims[0]));
  GFX_TRY(check_chain_bias("the second bias B (input 2)", &in[2], w->dims[0]));
  ir_conv_params first, second;
  ir_conv_chain_split(p, &first, &second);
  ir_conv_geom g;
  GFX_TRY(ir_conv_geometry(&first, x, w_a, &g));
  *mid = ir_conv_output_shape(&g, p->channels_last);
  GFX_TRY(ir_conv_geometry(&second, mid, w, &g));
  *y = ir_conv_output_shape(&g, p->channels_last);
  return NULL;
}

/* ---- Gemm ---- */

gfx_status ir_parse_gemm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", "beta", "transA", "transB", NULL}));
  int dtype;
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, &dtype));
  if (d->since_version < 11 && (d->n_inputs < 3 || d->input_dtypes[2] == GFX_DTYPE_UNDEFINED))
    return IR_UNSUPPORTED(d, "opset %d requires input C", d->since_version);
  for (int i = 0; i < 2; i++)
    if (d->input_shapes[i].rank >= 0 && d->input_shapes[i].rank != 2)
      return IR_UNSUPPORTED(d, "input %d has rank %d; Gemm takes matrices", i, d->input_shapes[i].rank);
  if (d->n_inputs > 2 && d->input_shapes[2].rank > 2)
    return IR_UNSUPPORTED(d, "input C has rank %d; at most 2 broadcasts to [M, N]", d->input_shapes[2].rank);
  ir_gemm_params gp;
  memset(&gp, 0, sizeof gp);
  int64_t ta = 0, tb = 0;
  GFX_TRY(ir_attr_int(d, "transA", 0, &ta));
  GFX_TRY(ir_attr_int(d, "transB", 0, &tb));
  GFX_TRY(ir_attr_float(d, "alpha", 1.0f, &gp.alpha));
  GFX_TRY(ir_attr_float(d, "beta", 1.0f, &gp.beta));
  gp.trans_a = ta != 0;
  gp.trans_b = tb != 0;
  gp.dtype = dtype;
  p->gemm = gp;
  return NULL;
}

/* C's strides along [m, n]: unidirectional broadcasting aligns C's dims with the last of [m, n]. */
static gfx_status gemm_c_strides(const gfx_shape* c, int64_t m, int64_t n, ir_gemm_geom* g) {
  if (c->rank > 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "gemm C %s has rank > 2", SHAPE_STR(c));
  const int64_t rows = c->rank == 2 ? c->dims[0] : 1;
  const int64_t cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
  if ((rows != 1 && rows != m) || (cols != 1 && cols != n))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "gemm C %s does not broadcast to [%lld, %lld]", SHAPE_STR(c),
                     (long long)m, (long long)n);
  g->c_col_stride = cols == 1 ? 0 : 1;
  g->c_row_stride = rows == 1 ? 0 : cols;
  return NULL;
}

gfx_status ir_gemm_geometry(const ir_gemm_params* p, const gfx_shape* a, const gfx_shape* b, const gfx_shape* c,
                            ir_gemm_geom* g) {
  if (a->rank != 2 || b->rank != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "gemm operands %s and %s must be matrices", SHAPE_STR(a), SHAPE_STR(b));
  const int64_t limit = (int64_t)1 << 31;
  for (int i = 0; i < 2; i++)
    if (a->dims[i] < 0 || a->dims[i] > limit || b->dims[i] < 0 || b->dims[i] > limit)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "gemm operands %s and %s have a dim outside 0..2^31", SHAPE_STR(a),
                       SHAPE_STR(b));
  memset(g, 0, sizeof *g);
  g->m = p->trans_a ? a->dims[1] : a->dims[0];
  g->k = p->trans_a ? a->dims[0] : a->dims[1];
  const int64_t kb = p->trans_b ? b->dims[1] : b->dims[0];
  g->n = p->trans_b ? b->dims[0] : b->dims[1];
  if (kb != g->k)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "gemm %s x %s (transA %d, transB %d): inner dims %lld and %lld differ",
                     SHAPE_STR(a), SHAPE_STR(b), p->trans_a, p->trans_b, (long long)g->k, (long long)kb);
  g->has_c = c && c->rank >= 0;
  if (g->has_c) GFX_TRY(gemm_c_strides(c, g->m, g->n, g));
  return NULL;
}

gfx_status ir_infer_gemm(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_gemm_geom g;
  const gfx_shape* c = node->n_inputs > 2 && in[2].rank >= 0 ? &in[2] : NULL;
  GFX_TRY(ir_gemm_geometry(&node->params.gemm, &in[0], &in[1], c, &g));
  gfx_shape o = {.rank = 2, .dims = {g.m, g.n}};
  out[0] = o;
  return NULL;
}

/* ---- Attention (23) ---- */

/* Q, K, V float32/float16/bfloat16 alike, all of rank 4, or all of rank 3 with q_num_heads and
 * kv_num_heads; an optional mask, bool or Q's type; is_causal, scale. Past key/value inputs, the
 * present and qk outputs, a softcap and softmax_precision are left to ONNX Runtime. */
gfx_status ir_parse_attention(const ir_node_desc* d, ir_params* params) {
  static const char* const known[] = {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale",
                                      "softcap", "softmax_precision", NULL};
  ir_attention_params* p = &params->attention;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 3, 6, 1));
  GFX_TRY(ir_check_known_attrs(d, known));
  for (int i = 4; i < d->n_inputs; i++)
    if (d->input_dtypes[i] != GFX_DTYPE_UNDEFINED) return IR_UNSUPPORTED(d, "past key/value input %d", i);
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPES_FLOAT, NULL));
  p->has_mask = d->n_inputs > 3 && d->input_dtypes[3] != GFX_DTYPE_UNDEFINED;
  if (p->has_mask) {
    p->mask_bool = d->input_dtypes[3] == GFX_DTYPE_BOOL;
    if (!p->mask_bool && d->input_dtypes[3] != d->input_dtypes[0])
      return IR_UNSUPPORTED(d, "attn_mask is %s; bool or Q's type is handled", gfx_dtype_name(d->input_dtypes[3]));
    const int mr = d->input_shapes[3].rank;
    if (mr >= 0 && (mr < 1 || mr > 4)) return IR_UNSUPPORTED(d, "attn_mask has rank %d", mr);
  }
  const int rank = d->input_shapes[0].rank;
  if (rank != 3 && rank != 4) return IR_UNSUPPORTED(d, "Q has rank %d; 3 or 4 is handled", rank);
  for (int i = 1; i < 3; i++)
    if (d->input_shapes[i].rank != rank)
      return IR_UNSUPPORTED(d, "input %d has rank %d, Q %d", i, d->input_shapes[i].rank, rank);
  int64_t causal = 0, qk_mode = 0, precision = 0;
  float softcap = 0.0f;
  GFX_TRY(ir_attr_int(d, "is_causal", 0, &causal));
  GFX_TRY(ir_attr_int(d, "qk_matmul_output_mode", 0, &qk_mode));
  GFX_TRY(ir_attr_int(d, "softmax_precision", 0, &precision));
  GFX_TRY(ir_attr_float(d, "softcap", 0.0f, &softcap));
  GFX_TRY(ir_attr_float(d, "scale", 0.0f, &p->scale));
  GFX_TRY(ir_attr_int(d, "q_num_heads", 0, &p->q_heads));
  GFX_TRY(ir_attr_int(d, "kv_num_heads", 0, &p->kv_heads));
  if (causal != 0 && causal != 1) return IR_UNSUPPORTED(d, "is_causal = %lld", (long long)causal);
  if (softcap != 0.0f) return IR_UNSUPPORTED(d, "softcap = %g", (double)softcap);
  /* the scores are accumulated in float32 at least, which every softmax_precision admits */
  if (precision != 0 && precision != GFX_DTYPE_F32 && precision != d->input_dtypes[0])
    return IR_UNSUPPORTED(d, "softmax_precision = %lld", (long long)precision);
  if (!isfinite(p->scale)) return IR_UNSUPPORTED(d, "scale is not finite");
  if (rank == 3 && (p->q_heads < 1 || p->kv_heads < 1 || p->q_heads % p->kv_heads != 0 || p->q_heads > 65535))
    return IR_UNSUPPORTED(d, "rank-3 inputs with q_num_heads %lld, kv_num_heads %lld", (long long)p->q_heads,
                          (long long)p->kv_heads);
  if (rank == 4) p->q_heads = p->kv_heads = 0;
  p->is_causal = (int)causal;
  return NULL;
}

static gfx_status attention_error(const char* what, const gfx_shape* in, int n) {
  char s[4][96];
  for (int i = 0; i < 4; i++) {
    s[i][0] = 0;
    if (i < n) gfx_shape_str(&in[i], s[i], sizeof s[i]);
  }
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "Attention: %s (Q %s, K %s, V %s, mask %s)", what, s[0], s[1], s[2],
                   n > 3 ? s[3] : "none");
}

/* Strides of [b, heads, seq, dim] (rank 4) or [b, seq, heads x dim] (rank 3) per b, head, seq and
 * element. */
static void attention_strides(int rank, int64_t heads, int64_t seq, int64_t dim, int64_t st[4]) {
  if (rank == 4) {
    st[0] = heads * seq * dim, st[1] = seq * dim, st[2] = dim;
  } else {
    st[0] = seq * heads * dim, st[1] = dim, st[2] = heads * dim;
  }
  st[3] = 1;
}

/* Whether a view of sizes[4] at `offset` with non-negative strides stays inside `numel` elements. */
static int view_inside(int64_t offset, const int64_t* stride, const int64_t* sizes, int64_t numel) {
  int64_t last = offset;
  for (int a = 0; a < 4; a++) {
    if (sizes[a] == 0) return 1; /* nothing is read */
    if (stride[a] < 0) return 0;
    last += (sizes[a] - 1) * stride[a];
  }
  return offset >= 0 && last < numel;
}

/* A fused node (ir/fuse_attention.c): the views it was made with, checked against the tensors it
 * gets, so that no shape it was not made for can make a kernel read outside its inputs. */
static gfx_status fused_attention_geometry(const ir_attention_params* p, const gfx_shape* in, ir_attention_geom* g) {
  if (p->has_mask2 && !p->has_mask) return gfx_error(GFX_ERR_INTERNAL, "fused attention: a second mask without a first");
  if (p->mask_bool || p->is_causal) return gfx_error(GFX_ERR_INTERNAL, "fused attention: a bool mask or causality");
  const int n = 3 + (p->has_mask != 0) + (p->has_mask2 != 0);
  for (int i = 0; i < n; i++)
    if (gfx_shape_numel(&in[i]) != p->in_numel[i])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "fused attention: input %d has %lld elements; it was fused for %lld", i,
                       (long long)gfx_shape_numel(&in[i]), (long long)p->in_numel[i]);
  g->batch = p->batch, g->q_heads = g->kv_heads = p->heads, g->group = 1;
  g->q_seq = p->q_seq, g->kv_seq = p->kv_seq, g->head_size = p->head_size, g->v_head_size = p->v_head_size;
  g->q_offset = p->q.offset, g->k_offset = p->k.offset, g->v_offset = p->v.offset, g->y_offset = p->y.offset;
  memcpy(g->q_stride, p->q.stride, sizeof g->q_stride);
  memcpy(g->k_stride, p->k.stride, sizeof g->k_stride);
  memcpy(g->v_stride, p->v.stride, sizeof g->v_stride);
  memcpy(g->y_stride, p->y.stride, sizeof g->y_stride);
  g->has_mask = p->has_mask, g->has_mask2 = p->has_mask2;
  memcpy(g->mask_stride, p->mask_stride, sizeof g->mask_stride);
  memcpy(g->mask2_stride, p->mask2_stride, sizeof g->mask2_stride);
  g->scale = p->scale;
  g->y = p->y_shape;
  const int64_t qs[4] = {g->batch, g->q_heads, g->q_seq, g->head_size};
  const int64_t ks[4] = {g->batch, g->kv_heads, g->kv_seq, g->head_size};
  const int64_t vs[4] = {g->batch, g->kv_heads, g->kv_seq, g->v_head_size};
  const int64_t ys[4] = {g->batch, g->q_heads, g->q_seq, g->v_head_size};
  const int64_t ms[4] = {g->batch, g->q_heads, g->q_seq, g->kv_seq};
  if (!view_inside(g->q_offset, g->q_stride, qs, p->in_numel[0]) ||
      !view_inside(g->k_offset, g->k_stride, ks, p->in_numel[1]) ||
      !view_inside(g->v_offset, g->v_stride, vs, p->in_numel[2]) ||
      !view_inside(g->y_offset, g->y_stride, ys, gfx_shape_numel(&g->y)) ||
      (g->has_mask && !view_inside(0, g->mask_stride, ms, p->in_numel[3])) ||
      (g->has_mask2 && !view_inside(0, g->mask2_stride, ms, p->in_numel[4])))
    return gfx_error(GFX_ERR_INTERNAL, "fused attention: a view reaches outside its tensor");
  if (!isfinite(g->scale) || g->scale == 0.0f) return gfx_error(GFX_ERR_INTERNAL, "fused attention: scale %g", (double)g->scale);
  return NULL;
}

gfx_status ir_attention_geometry(const ir_attention_params* p, const gfx_shape* in, ir_attention_geom* g) {
  memset(g, 0, sizeof *g);
  if (p->fused) return fused_attention_geometry(p, in, g);
  const int n = p->has_mask ? 4 : 3, rank = in[0].rank;
  for (int i = 0; i < 3; i++) {
    if (in[i].rank != rank || (rank != 3 && rank != 4)) return attention_error("Q, K, V ranks differ", in, n);
    for (int k = 0; k < rank; k++)
      if (in[i].dims[k] < 0 || in[i].dims[k] > INT32_MAX) return attention_error("a dim is outside [0, 2^31)", in, n);
  }
  const gfx_shape *q = &in[0], *k = &in[1], *v = &in[2];
  g->batch = q->dims[0];
  if (rank == 4) {
    g->q_heads = q->dims[1], g->kv_heads = k->dims[1];
    g->q_seq = q->dims[2], g->kv_seq = k->dims[2], g->head_size = q->dims[3], g->v_head_size = v->dims[3];
    if (v->dims[1] != g->kv_heads || v->dims[2] != g->kv_seq || k->dims[3] != g->head_size)
      return attention_error("K and V do not fit Q", in, n);
  } else {
    g->q_heads = p->q_heads, g->kv_heads = p->kv_heads;
    g->q_seq = q->dims[1], g->kv_seq = k->dims[1];
    if (q->dims[2] % g->q_heads || k->dims[2] % g->kv_heads || v->dims[2] % g->kv_heads || v->dims[1] != g->kv_seq)
      return attention_error("the hidden sizes are not multiples of the heads", in, n);
    g->head_size = q->dims[2] / g->q_heads, g->v_head_size = v->dims[2] / g->kv_heads;
    if (k->dims[2] / g->kv_heads != g->head_size) return attention_error("K's head size is not Q's", in, n);
  }
  if (k->dims[0] != g->batch || v->dims[0] != g->batch || g->kv_heads < 1 || g->q_heads % g->kv_heads)
    return attention_error("the batch or the heads do not fit", in, n);
  g->group = g->q_heads / g->kv_heads;
  attention_strides(rank, g->q_heads, g->q_seq, g->head_size, g->q_stride);
  attention_strides(rank, g->kv_heads, g->kv_seq, g->head_size, g->k_stride);
  attention_strides(rank, g->kv_heads, g->kv_seq, g->v_head_size, g->v_stride);
  attention_strides(rank, g->q_heads, g->q_seq, g->v_head_size, g->y_stride);
  if (rank == 4)
    g->y = (gfx_shape){.rank = 4, .dims = {g->batch, g->q_heads, g->q_seq, g->v_head_size}};
  else
    g->y = (gfx_shape){.rank = 3, .dims = {g->batch, g->q_seq, g->q_heads * g->v_head_size}};
  if (gfx_shape_numel(&g->y) < 0 || gfx_shape_numel(&g->y) > INT32_MAX * (int64_t)64)
    return attention_error("the output is too large", in, n);
  /* the mask broadcasts (numpy rules, aligned right) to [batch, q heads, q seq, kv seq] */
  g->has_mask = p->has_mask;
  if (p->has_mask) {
    const gfx_shape* m = &in[3];
    const int64_t full[4] = {g->batch, g->q_heads, g->q_seq, g->kv_seq};
    if (m->rank < 1 || m->rank > 4) return attention_error("the mask's rank is not 1..4", in, n);
    int64_t stride = 1;
    for (int a = 3, md = m->rank - 1; a >= 0; a--, md--) {
      const int64_t dim = md >= 0 ? m->dims[md] : 1;
      if (dim != full[a] && dim != 1) return attention_error("the mask does not broadcast to the scores", in, n);
      g->mask_stride[a] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  g->scale = p->scale != 0.0f ? p->scale : (float)(1.0 / sqrt((double)(g->head_size > 0 ? g->head_size : 1)));
  return NULL;
}

gfx_status ir_infer_attention(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_attention_geom g;
  GFX_TRY(ir_attention_geometry(&node->params.attention, in, &g));
  *out = g.y;
  return NULL;
}

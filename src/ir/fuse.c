/* gfxep — compile-time fusions (see ir/fuse.h). */
#include "ir/fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "core/log.h"
#include "ir/fuse_util.h"

/* Node `conv`'s single output when it may disappear into a following node: no graph output, read
 * by exactly one node (returned through *reader), or -1. */
static int fusable_output(const ir_graph* g, const int* readers, int conv, int* reader) {
  const ir_node* c = &g->nodes[conv];
  if (c->n_outputs != 1) return -1;
  const int mid = c->outputs[0];
  if (mid < 0 || g->values[mid].graph_output >= 0) return -1;
  *reader = ir_fuse_sole_reader(g, readers, mid);
  return *reader > conv ? mid : -1;
}

/* The conv activation that node n computes on its input 0, with its parameters; 0 for any other node.
 * The parameters come from the node's parsed element-wise params, so the fused formula is the
 * element-wise op's own. */
static int activation_of(const ir_node* n, float* alpha, float* beta) {
  const ir_elementwise_params* p = &n->params.elementwise;
  *alpha = *beta = 0.0f;
  switch (n->op) {
    case GFX_OP_RELU: return IR_ACT_RELU;
    case GFX_OP_SIGMOID: return IR_ACT_SIGMOID;
    case GFX_OP_TANH: return IR_ACT_TANH;
    case GFX_OP_HARD_SWISH: return IR_ACT_HARD_SWISH;
    case GFX_OP_LEAKY_RELU: *alpha = p->alpha; return IR_ACT_LEAKY_RELU;
    case GFX_OP_ELU: *alpha = p->alpha; return IR_ACT_ELU;
    case GFX_OP_HARD_SIGMOID:
      *alpha = p->alpha;
      *beta = p->beta;
      return IR_ACT_HARD_SIGMOID;
    case GFX_OP_CLIP:
      /* an absent bound as an infinite one: x < -inf and x > +inf never hold, NaN included */
      *alpha = p->has_min ? p->min : -INFINITY;
      *beta = p->has_max ? p->max : INFINITY;
      return IR_ACT_CLIP;
    default: return IR_ACT_NONE;
  }
}

/* Conv (or ConvTranspose) -> activation becomes one node with the activation, writing the
 * activation's output. A Conv that already adds a residual takes it as act(conv + b + r). */
static int fuse_conv_activation(ir_graph* g, int* readers, int conv) {
  ir_node* c = &g->nodes[conv];
  if (c->op != GFX_OP_CONV && c->op != GFX_OP_CONV_TRANSPOSE) return 0;
  if (c->params.conv.activation != IR_ACT_NONE || c->params.conv.residual == IR_RES_ACT_THEN_ADD) return 0;
  int r;
  const int mid = fusable_output(g, readers, conv, &r);
  if (mid < 0) return 0;
  const ir_node* a = &g->nodes[r];
  float alpha, beta;
  const int act = activation_of(a, &alpha, &beta);
  /* Clip's inputs 1 and 2 are constant bounds already in its params; the others take one input */
  if (act == IR_ACT_NONE || a->n_inputs < 1 || a->inputs[0] != mid || a->n_outputs != 1) return 0;
  if (a->op != GFX_OP_CLIP && a->n_inputs != 1) return 0;
  const int y = a->outputs[0];
  if (y < 0 || g->values[y].dtype != g->values[mid].dtype) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused %s '%s' and %s '%s' into one %s with a %s activation", ir_op_name(c->op),
          ir_fuse_name_of(c), ir_op_name(a->op), ir_fuse_name_of(a), ir_op_name(c->op), ir_op_name(a->op));
  ir_fuse_join_names(c, a);
  c->params.conv.activation = act;
  c->params.conv.act_alpha = alpha;
  c->params.conv.act_beta = beta;
  c->outputs[0] = y;
  g->values[y].producer = conv;
  for (int i = 0; i < a->n_inputs; i++)
    if (a->inputs[i] >= 0) readers[a->inputs[i]]--; /* mid and Clip's bounds */
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, r); /* r > conv: the graph is in topological order */
  return 1;
}

/* ---- BatchNormalization folded into the Conv before it ---- */

/* Conv(x, W, B) -> BatchNormalization(scale, beta, mean, var, epsilon), all of them constants,
 * becomes Conv(x, W', B') with, per output channel m and s = scale[m] / sqrt(var[m] + epsilon),
 *   W'[m, ...] = W[m, ...] * s,   B'[m] = (B[m] - mean[m]) * s + beta[m]
 * computed in double and rounded once to the weights' type. W' and B' are new constants (the old
 * ones may have other readers). ORT folds this itself at its default optimization level; this covers
 * sessions that turn ORT's optimizations off and models whose BatchNormalization reaches gfxep. */
static gfx_status fuse_conv_batchnorm(ir_graph* g, int* readers, int conv, int* fused) {
  *fused = 0;
  ir_node* c = &g->nodes[conv];
  /* a channels-last Conv's output does not have BatchNormalization's channels on axis 1 */
  if (c->op != GFX_OP_CONV || c->params.conv.activation != IR_ACT_NONE || c->params.conv.residual != IR_RES_NONE ||
      c->params.conv.channels_last || c->n_inputs < 2 || c->n_inputs > 3)
    return NULL;
  int r;
  const int mid = fusable_output(g, readers, conv, &r);
  if (mid < 0 || g->nodes[r].op != GFX_OP_BATCH_NORM || g->nodes[r].n_inputs != 5 || g->nodes[r].n_outputs != 1 ||
      g->nodes[r].inputs[0] != mid)
    return NULL;
  const int dtype = g->values[mid].dtype;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) return NULL;
  const int w = c->inputs[1], b = c->n_inputs > 2 ? c->inputs[2] : -1;
  if (w < 0 || !g->values[w].const_data || g->values[w].dtype != dtype || g->values[w].shape.rank < 3) return NULL;
  const int64_t m_count = g->values[w].shape.dims[0], w_count = gfx_shape_numel(&g->values[w].shape);
  if (m_count < 1 || w_count < m_count || w_count % m_count) return NULL;
  const ir_node* bn = &g->nodes[r];
  const ir_value* scale = ir_fuse_float_const(g, bn->inputs[1], dtype, m_count);
  const ir_value* beta = ir_fuse_float_const(g, bn->inputs[2], dtype, m_count);
  const ir_value* mean = ir_fuse_float_const(g, bn->inputs[3], dtype, m_count);
  const ir_value* var = ir_fuse_float_const(g, bn->inputs[4], dtype, m_count);
  const ir_value* bias = b >= 0 ? ir_fuse_float_const(g, b, dtype, m_count) : NULL;
  if (!scale || !beta || !mean || !var || (b >= 0 && !bias)) return NULL;

  const size_t es = gfx_dtype_size(dtype);
  void* w_new = malloc((size_t)w_count * es + 1);
  void* b_new = malloc((size_t)m_count * es + 1);
  if (!w_new || !b_new) {
    free(w_new);
    free(b_new);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "folding BatchNormalization into Conv '%s'", ir_fuse_name_of(c));
  }
  const double eps = bn->params.elementwise.epsilon;
  const int64_t per_m = w_count / m_count;
  for (int64_t m = 0; m < m_count; m++) {
    const double s = ir_fuse_const_at(scale, m) / sqrt(ir_fuse_const_at(var, m) + eps);
    for (int64_t k = 0; k < per_m; k++) ir_fuse_const_put(w_new, dtype, m * per_m + k, ir_fuse_const_at(&g->values[w], m * per_m + k) * s);
    const double b0 = bias ? ir_fuse_const_at(bias, m) : 0.0;
    ir_fuse_const_put(b_new, dtype, m, (b0 - ir_fuse_const_at(mean, m)) * s + ir_fuse_const_at(beta, m));
  }
  /* new values may move the value table: keep indices, not pointers, from here on */
  char name[256];
  int w2 = -1, b2 = -1;
  const gfx_shape w_shape = g->values[w].shape, b_shape = {.rank = 1, .dims = {m_count}};
  snprintf(name, sizeof name, "%s (BatchNormalization folded)", g->values[w].name);
  gfx_status s = ir_graph_add_value(g, name, dtype, &w_shape, &w2);
  if (!s) s = ir_graph_set_constant(g, w2, w_new, (size_t)w_count * es);
  snprintf(name, sizeof name, "%s bias (BatchNormalization folded)", g->values[w].name);
  if (!s) s = ir_graph_add_value(g, name, dtype, &b_shape, &b2);
  if (!s) s = ir_graph_set_constant(g, b2, b_new, (size_t)m_count * es);
  free(w_new);
  free(b_new);
  if (s) return s;
  /* readers has room for these values: ir_fuse sized it for two per BatchNormalization */
  c = &g->nodes[conv];
  bn = &g->nodes[r];
  gfx_log(GFX_LOG_INFO, "gfxep: folded BatchNormalization '%s' into Conv '%s'", ir_fuse_name_of(bn), ir_fuse_name_of(c));
  ir_fuse_join_names(c, bn);
  const int y = bn->outputs[0];
  for (int i = 0; i < bn->n_inputs; i++) readers[bn->inputs[i]]--;
  readers[w]--;
  if (b >= 0) readers[b]--;
  readers[w2] = readers[b2] = 1;
  c->inputs[1] = w2;
  c->inputs[2] = b2;
  c->n_inputs = 3;
  c->outputs[0] = y;
  g->values[y].producer = conv;
  for (int i = 1; i < 5; i++) ir_fuse_drop_if_unread(g, readers, g->nodes[r].inputs[i]);
  ir_fuse_drop_if_unread(g, readers, w);
  ir_fuse_drop_if_unread(g, readers, b);
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, r);
  *fused = 1;
  return NULL;
}

/* Whether the declared shapes are fully known and equal: the residual must not broadcast. */
static int same_known_shape(const gfx_shape* a, const gfx_shape* b) {
  if (a->rank < 0 || a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] < 0 || a->dims[i] != b->dims[i]) return 0;
  return 1;
}

/* Conv -> Add(conv output, r) with r shaped exactly like the output becomes one Conv with r as its
 * residual input. The fused node takes the Add's place in the node order: r may be produced
 * between the Conv and the Add (ResNet's shortcut), and the Conv's own inputs are ready earlier. */
static int fuse_conv_residual(ir_graph* g, int* readers, int conv) {
  ir_node* c = &g->nodes[conv];
  if (c->op != GFX_OP_CONV || c->params.conv.residual != IR_RES_NONE || c->n_inputs > 3) return 0;
  int add;
  const int mid = fusable_output(g, readers, conv, &add);
  if (mid < 0) return 0;
  const ir_node* a = &g->nodes[add];
  if (a->op != GFX_OP_ADD || a->n_inputs != 2 || a->n_outputs != 1) return 0;
  const int r = a->inputs[0] == mid ? a->inputs[1] : a->inputs[0];
  const int y = a->outputs[0];
  /* r == mid (x + x) would be read after the convolution overwrote it; sole_reader refuses it
   * already, the check says so here */
  if (r < 0 || r == mid || y < 0 || r == y) return 0;
  const ir_value *vm = &g->values[mid], *vr = &g->values[r], *vy = &g->values[y];
  if (vr->dtype != vm->dtype || vy->dtype != vm->dtype) return 0;
  if (!same_known_shape(&vm->shape, &vr->shape)) return 0;
  if (vy->shape.rank >= 0 && vy->shape.rank != vm->shape.rank) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Conv '%s' and Add '%s' into one Conv adding '%s' as a residual", ir_fuse_name_of(c),
          ir_fuse_name_of(a), vr->name ? vr->name : "");

  ir_node fused = *c; /* takes over the Conv's name */
  ir_fuse_join_names(&fused, a);
  if (fused.n_inputs < 3) fused.inputs[2] = -1; /* no bias */
  fused.inputs[IR_CONV_RESIDUAL_INPUT] = r;
  fused.n_inputs = IR_CONV_RESIDUAL_INPUT + 1;
  fused.outputs[0] = y;
  /* with an activation already fused, it came first: act(conv + b) + r */
  fused.params.conv.residual = fused.params.conv.activation == IR_ACT_NONE ? IR_RES_ADD_THEN_ACT : IR_RES_ACT_THEN_ADD;

  /* The Add's slot gets the fused node, then the Conv's slot goes. Reads: the Add's of mid end;
   * its read of r and the Conv's of x, w, b carry over to the fused node. */
  readers[mid]--;
  free(g->nodes[add].name);
  g->nodes[add] = fused;
  g->values[y].producer = add;
  g->nodes[conv].name = NULL; /* owned by the fused node now */
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, conv);
  return 1;
}

/* ---- Gelu written out as element-wise ops ---- */

/* Whether a constant holds `want` as well as its type can: float16 rounds sqrt(2) to 1.4140625. */
static int near(double got, double want, int dtype) {
  const double tol = dtype == GFX_DTYPE_F32 ? 1e-6 : dtype == GFX_DTYPE_F16 ? 1e-3 : 8e-3;
  return fabs(got - want) <= tol * fabs(want);
}

/* The node after `node` in a chain: the sole reader (of type op) of its single output, which is no
 * graph output; -1 otherwise. */
static int chain_next(const ir_graph* g, const int* readers, int node, gfx_op op) {
  const ir_node* n = &g->nodes[node];
  if (n->n_outputs != 1 || n->outputs[0] < 0 || g->values[n->outputs[0]].graph_output >= 0) return -1;
  const int r = ir_fuse_sole_reader(g, readers, n->outputs[0]);
  return r > node && g->nodes[r].op == op ? r : -1;
}

/* Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(., 0.5), the exact Gelu as PyTorch's exporter
 * writes it before opset 20 (constants in either operand order of Add and Mul), becomes one Gelu
 * node in the Div's place: five kernels and four intermediate tensors become one pass. Float16 and
 * bfloat16 models hold sqrt(2) rounded; the fused kernel uses the exact constant and rounds once. */
static int fuse_gelu(ir_graph* g, int* readers, int div) {
  const ir_node* d = &g->nodes[div];
  if (d->op != GFX_OP_DIV || d->n_inputs != 2 || d->n_outputs != 1) return 0;
  const int x = d->inputs[0], dtype = x >= 0 ? g->values[x].dtype : 0;
  double c;
  if (x < 0 || !ir_fuse_scalar_const(g, d->inputs[1], dtype, &c) || !near(c, 1.4142135623730951, dtype)) return 0;
  const int erf = chain_next(g, readers, div, GFX_OP_ERF);
  const int add = erf < 0 ? -1 : chain_next(g, readers, erf, GFX_OP_ADD);
  if (add < 0 || !ir_fuse_scalar_const(g, ir_fuse_other_input(&g->nodes[add], g->nodes[erf].outputs[0]), dtype, &c) || c != 1.0) return 0;
  const int mul = chain_next(g, readers, add, GFX_OP_MUL);
  if (mul < 0 || ir_fuse_other_input(&g->nodes[mul], g->nodes[add].outputs[0]) != x) return 0;
  const int half = chain_next(g, readers, mul, GFX_OP_MUL);
  if (half < 0 || !ir_fuse_scalar_const(g, ir_fuse_other_input(&g->nodes[half], g->nodes[mul].outputs[0]), dtype, &c) || c != 0.5)
    return 0;
  const int chain[5] = {div, erf, add, mul, half};
  for (int i = 0; i < 5; i++) {
    const int out = g->nodes[chain[i]].outputs[0];
    if (g->values[out].dtype != dtype) return 0;
  }
  const int y = g->nodes[half].outputs[0];
  int mids[4]; /* the intermediates, which go */
  for (int i = 0; i < 4; i++) mids[i] = g->nodes[chain[i]].outputs[0];
  gfx_log(GFX_LOG_INFO, "gfxep: fused Div '%s', Erf, Add, Mul and Mul '%s' into one Gelu", ir_fuse_name_of(d),
          ir_fuse_name_of(&g->nodes[half]));
  /* every read of the chain ends except the Div's read of x, which the Gelu keeps */
  for (int i = 0; i < 5; i++) {
    const ir_node* n = &g->nodes[chain[i]];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) readers[n->inputs[k]]--;
  }
  readers[x]++;
  ir_node* gelu = &g->nodes[div];
  const int sqrt2 = gelu->inputs[1];
  const int one = ir_fuse_other_input(&g->nodes[add], g->nodes[erf].outputs[0]);
  const int point5 = ir_fuse_other_input(&g->nodes[half], g->nodes[mul].outputs[0]);
  for (int i = 1; i < 5; i++) ir_fuse_join_names(gelu, &g->nodes[chain[i]]);
  gelu->op = GFX_OP_GELU;
  memset(&gelu->params, 0, sizeof gelu->params); /* approximate = "none" */
  gelu->n_inputs = 1;
  gelu->outputs[0] = y;
  for (int i = 0; i < 4; i++) ir_fuse_retire_value(g, mids[i]);
  g->values[y].producer = div;
  for (int i = 4; i >= 1; i--) ir_fuse_remove_node(g, chain[i]); /* highest index first: the others stay put */
  ir_fuse_drop_if_unread(g, readers, sqrt2);
  ir_fuse_drop_if_unread(g, readers, one);
  ir_fuse_drop_if_unread(g, readers, point5);
  return 1;
}

/* ---- attention's products: a Transpose of b and a scalar Mul folded into the MatMul ---- */

/* Whether Transpose node t swaps exactly its input's last two dims. Without perm it reverses the
 * dims, a last-two swap only for a declared rank of 2. */
static int swaps_last_two(const ir_graph* g, const ir_node* t) {
  const ir_layout_params* p = &t->params.layout;
  if (!p->has_ints) return g->values[t->inputs[0]].shape.rank == 2;
  const int n = p->n_ints;
  if (n < 2 || p->ints[n - 2] != n - 1 || p->ints[n - 1] != n - 2) return 0;
  for (int i = 0; i < n - 2; i++)
    if (p->ints[i] != i) return 0;
  return 1;
}

/* Transpose(x, perm swapping the last two dims) -> MatMul(a, .) becomes MatMul(a, x) with
 * trans_b = 1: the product reads x's matrices as [n, k] (cuBLASLt's transpose flag, a strided read
 * in the reference kernel), and the copy the Transpose made is gone. PyTorch exports attention's
 * q @ k^T this way. The Transpose's output must be read by that MatMul alone, as its b. */
static int fuse_transpose_matmul(ir_graph* g, int* readers, int t) {
  const ir_node* tr = &g->nodes[t];
  if (tr->op != GFX_OP_TRANSPOSE || tr->n_inputs != 1 || tr->n_outputs != 1) return 0;
  const int x = tr->inputs[0];
  int r;
  const int mid = fusable_output(g, readers, t, &r);
  if (x < 0 || mid < 0 || g->values[x].dtype != g->values[mid].dtype || !swaps_last_two(g, tr)) return 0;
  ir_node* mm = &g->nodes[r];
  if (mm->op != GFX_OP_MATMUL || mm->n_inputs != 2 || mm->inputs[1] != mid || mm->inputs[0] == mid ||
      mm->params.gemm.trans_b)
    return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Transpose '%s' into MatMul '%s' (b read transposed)", ir_fuse_name_of(tr), ir_fuse_name_of(mm));
  /* the name in data-flow order, "transpose+matmul": the MatMul takes the Transpose's name first,
   * and the Transpose, about to go, frees the MatMul's old one */
  ir_node* trw = &g->nodes[t];
  char* mm_name = mm->name;
  mm->name = trw->name;
  trw->name = mm_name;
  ir_fuse_join_names(mm, trw);
  mm->inputs[1] = x; /* x's reader count stays: the MatMul's read replaces the Transpose's */
  mm->params.gemm.trans_b = 1;
  readers[mid]--;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, t); /* t < r: the MatMul moves down one place */
  return 1;
}

/* MatMul -> Mul(product, c), c a one-element constant of the product's type in either operand
 * order, becomes one MatMul with alpha *= c (cuBLASLt's alpha; the reference kernel scales its
 * double sum), writing the Mul's output: attention's scores * 1/sqrt(d). alpha is float32, so for
 * float16 and bfloat16 the fused result rounds once where the two nodes rounded twice. c = 0 and a
 * non-finite c stay a Mul: a BLAS may skip the product for alpha 0, and Inf or NaN in the inputs
 * would not reach the output as Mul's 0 * Inf = NaN does. */
static int fuse_matmul_scale(ir_graph* g, int* readers, int node) {
  ir_node* mm = &g->nodes[node];
  if (mm->op != GFX_OP_MATMUL) return 0;
  int r;
  const int mid = fusable_output(g, readers, node, &r);
  if (mid < 0) return 0;
  const ir_node* mul = &g->nodes[r];
  if (mul->op != GFX_OP_MUL || mul->n_outputs != 1) return 0;
  const int c = ir_fuse_other_input(mul, mid), y = mul->outputs[0], dtype = g->values[mid].dtype;
  double scale;
  if (c < 0 || c == mid || y < 0 || !ir_fuse_scalar_const(g, c, dtype, &scale) || g->values[y].dtype != dtype) return 0;
  if (scale == 0.0 || !isfinite(scale)) return 0;
  /* a one-element constant of higher rank than the product would raise the output's rank (the
   * product has rank >= 2) */
  const int c_rank = g->values[c].shape.rank, mid_rank = g->values[mid].shape.rank;
  if (c_rank > 2 && (mid_rank < 0 || c_rank > mid_rank)) return 0;
  const double alpha = (double)mm->params.gemm.alpha * scale;
  if (!isfinite((float)alpha) || (float)alpha == 0.0f) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Mul '%s' by %g into MatMul '%s' (alpha %g)", ir_fuse_name_of(mul), scale, ir_fuse_name_of(mm),
          alpha);
  ir_fuse_join_names(mm, mul);
  mm->params.gemm.alpha = (float)alpha;
  mm->outputs[0] = y;
  g->values[y].producer = node;
  readers[mid]--;
  readers[c]--;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, r); /* r > node */
  ir_fuse_drop_if_unread(g, readers, c);
  return 1;
}

/* ---- a Split's outputs written already squeezed and transposed ---- */

/* Output `i` of Split node `split` -> (Squeeze with constant axes ->)* Transpose, each value read by
 * the next node alone and no graph output, becomes that output written in the Transpose's layout
 * directly: the Split's copy of the piece and the Transpose's copy are one copy, and the Squeezes
 * (views) go too. This is the shape ONNX Runtime's transpose optimizer leaves attention in: it
 * pushes the kᵀ Transpose up through Squeeze and Split, so each of q, k and v is a Split piece and
 * a Transpose. */
static int fuse_split_output(ir_graph* g, int* readers, int split, int i) {
  ir_node* s = &g->nodes[split];
  ir_layout_params* p = &s->params.layout;
  const int x = s->inputs[0], o = s->outputs[i];
  if (x < 0 || o < 0 || p->split_map_rank[i] || g->values[o].graph_output >= 0) return 0;
  const int rank = g->values[x].shape.rank, dtype = g->values[o].dtype;
  if (rank < 1 || rank > GFX_MAX_RANK) return 0;
  /* a Split whose dims before the axis are all 1 is free (its outputs are views, ir/plan.c), and a
   * Transpose after it may still fold into a MatMul: leave it */
  const int64_t axis = p->axis < 0 ? p->axis + rank : p->axis;
  int leading_ones = axis >= 0 && axis < rank;
  for (int k = 0; k < axis && leading_ones; k++) leading_ones = g->values[x].shape.dims[k] == 1;
  if (leading_ones) return 0;
  int map[GFX_MAX_RANK], n = rank;
  for (int k = 0; k < rank; k++) map[k] = k;
  int chain[IR_MAX_IO + 1], len = 0; /* the nodes that go: Squeezes, then the Transpose */
  int node = split, value = o, transpose = -1;
  while (len < IR_MAX_IO && transpose < 0) {
    if (g->values[value].graph_output >= 0) return 0;
    const int r = ir_fuse_sole_reader(g, readers, value);
    if (r <= node || g->nodes[r].inputs[0] != value || g->nodes[r].n_outputs != 1) return 0;
    const ir_node* next = &g->nodes[r];
    const ir_layout_params* q = &next->params.layout;
    if (g->values[next->outputs[0]].dtype != dtype) return 0;
    if (next->op == GFX_OP_SQUEEZE) {
      if (!q->has_ints) return 0; /* which dims go would depend on run-time sizes */
      int drop[GFX_MAX_RANK] = {0};
      for (int a = 0; a < q->n_ints; a++) {
        const int64_t axis = q->ints[a] < 0 ? q->ints[a] + n : q->ints[a];
        if (axis < 0 || axis >= n) return 0;
        drop[axis] = 1;
      }
      int m = 0;
      for (int k = 0; k < n; k++)
        if (!drop[k]) map[m++] = map[k];
      n = m;
    } else if (next->op == GFX_OP_TRANSPOSE) {
      if (q->has_ints && q->n_ints != n) return 0;
      int permuted[GFX_MAX_RANK];
      for (int k = 0; k < n; k++) {
        const int64_t from = q->has_ints ? q->ints[k] : n - 1 - k;
        if (from < 0 || from >= n) return 0;
        permuted[k] = map[from];
      }
      memcpy(map, permuted, sizeof(int) * (size_t)n);
      transpose = r;
    } else {
      return 0;
    }
    chain[len++] = r;
    node = r;
    value = next->outputs[0];
  }
  if (transpose < 0 || n < 1) return 0;
  const int y = g->nodes[transpose].outputs[0];
  gfx_log(GFX_LOG_INFO, "gfxep: fused Split '%s' output %d with Transpose '%s' (and %d Squeeze): one copy", ir_fuse_name_of(s), i,
          ir_fuse_name_of(&g->nodes[transpose]), len - 1);
  p->split_map_rank[i] = (signed char)n;
  for (int k = 0; k < n; k++) p->split_map[i][k] = (signed char)map[k];
  /* the chain's values and reads go; the Squeezes' constant axes inputs may go with them */
  int dropped[IR_MAX_IO * IR_MAX_IO], n_dropped = 0;
  for (int c = 0; c < len; c++) {
    const ir_node* gone = &g->nodes[chain[c]];
    for (int k = 0; k < gone->n_inputs; k++)
      if (gone->inputs[k] >= 0) {
        readers[gone->inputs[k]]--;
        if (k > 0) dropped[n_dropped++] = gone->inputs[k];
      }
    if (c < len - 1) ir_fuse_retire_value(g, gone->outputs[0]);
  }
  ir_fuse_retire_value(g, o);
  s->outputs[i] = y;
  g->values[y].producer = split;
  for (int c = len - 1; c >= 0; c--) ir_fuse_remove_node(g, chain[c]); /* after the Split, highest first */
  for (int k = 0; k < n_dropped; k++) ir_fuse_drop_if_unread(g, readers, dropped[k]);
  return 1;
}

/* The fusions of ir_fuse (fuse.h), in one walk over the nodes. */
static gfx_status fuse_nodes(ir_graph* g) {
  int* readers = NULL;
  /* room for the two values each BatchNormalization fold adds */
  int folds = 0;
  for (int n = 0; n < g->n_nodes; n++) folds += g->nodes[n].op == GFX_OP_BATCH_NORM;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 2 * folds));
  /* first, so that the nodes after them see constant weights */
  int quant_folds = 0;
  size_t quant_bytes = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    size_t bytes = 0;
    gfx_status s = ir_fuse_fold_quant(g, readers, n, &bytes);
    if (s) {
      free(readers);
      return s;
    }
    if (bytes) {
      quant_folds++;
      quant_bytes += bytes;
      n--; /* index n holds the next node now */
    }
  }
  if (quant_folds)
    gfx_log(GFX_LOG_INFO, "gfxep: folded %d QuantizeLinear/DequantizeLinear nodes of constants into constants (%zu bytes)",
            quant_folds, quant_bytes);
  for (int n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].op == GFX_OP_DIV) fuse_gelu(g, readers, n);
    if (g->nodes[n].op == GFX_OP_SPLIT)
      for (int i = 0; i < g->nodes[n].n_outputs; i++) fuse_split_output(g, readers, n, i);
    /* the MatMul after the Transpose is met later, where a following Mul may join it; index n
     * holds the next node now */
    if (fuse_transpose_matmul(g, readers, n)) {
      n--;
      continue;
    }
    while (fuse_matmul_scale(g, readers, n)) {
    }
    if (g->nodes[n].op != GFX_OP_CONV && g->nodes[n].op != GFX_OP_CONV_TRANSPOSE) continue;
    int folded = 0;
    gfx_status s = fuse_conv_batchnorm(g, readers, n, &folded);
    if (s) {
      free(readers);
      return s;
    }
    fuse_conv_activation(g, readers, n);
    /* the fused Conv moved forward to its Add's place, where the loop meets it again (and may fuse
     * a following activation); index n holds the next node now */
    if (fuse_conv_residual(g, readers, n)) n--;
  }
  free(readers);
  return NULL;
}

gfx_status ir_fuse_for(ir_graph* g, const ir_fuse_target* target) {
  if (!g) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no graph to fuse");
  int count = 0;
  /* first, while Q, K and V still reach the products through the layout nodes it absorbs */
  GFX_TRY(ir_fuse_attention(g, target, &count));
  GFX_TRY(fuse_nodes(g));
  /* after fuse_nodes, whose activations the chain carries; before the layout folds, which would give
   * the first Conv of a chain an NCHW input (params.conv.nchw_input) that no chain has: a backend that
   * takes both saves more by not writing the middle map (Cmid channels) than by not transposing the
   * input (Cin), and on CUDA the two never compete (the NCHW-input kernel takes at most 4 channels,
   * the chain kernel multiples of 16); ESPCN's first Conv, the one with the Transpose, is 5x5 anyway */
  GFX_TRY(ir_fuse_chains(g, target, &count));
  GFX_TRY(ir_fuse_residual_norm(g, target, &count));
  GFX_TRY(ir_fuse_norm_epilogue(g, target, &count));
  GFX_TRY(ir_fuse_layout(g, target, &count));
  return ir_graph_validate(g);
}

gfx_status ir_fuse(ir_graph* g) {
  if (!g) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no graph to fuse");
  GFX_TRY(fuse_nodes(g));
  return ir_graph_validate(g);
}

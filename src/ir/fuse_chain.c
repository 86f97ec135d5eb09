/* gfxep — two 3x3 convolutions fused into one convolution chain (see ir/fuse.h; the node in
 * ir/graph.h, IR_CONV_CHAIN_WEIGHT_INPUT).
 *
 * Small-channel image nets (super-resolution, denoisers) are runs of 3x3 convolutions of 16 to 64
 * channels over large maps. Run one by one, every intermediate map is written to memory and read
 * back: ESPCN x2's 64-channel map at 540x960 is 66 MB in float16. A backend with a chain kernel
 * computes the first convolution tile by tile into on-chip memory and the second from there, so the
 * middle map never reaches memory; one that has none declines the node and keeps the pair. */
#include <stdlib.h>

#include "core/log.h"
#include "ir/fuse_util.h"

static int dtype_of(const ir_conv_params* p) { return p->dtype ? p->dtype : GFX_DTYPE_F32; }

/* Whether p describes a convolution a chain takes as either of its two: 2-D, one group, a window of
 * 3x3 (or not given: the weight says), stride 1, dilation 1 and pads of 1 on every side, explicit or
 * by auto_pad SAME_UPPER / SAME_LOWER (which pad a 3x3 window of stride 1 by 1 on each side); no
 * residual, not a chain already, X in the Conv's own layout. */
static int chainable_params(const ir_conv_params* p) {
  if (p->spatial != 2 || p->group != 1 || p->chain || p->residual != IR_RES_NONE || p->nchw_input) return 0;
  for (int i = 0; i < 2; i++)
    if ((p->kernel[i] != 0 && p->kernel[i] != 3) || p->strides[i] != 1 || p->dilations[i] != 1) return 0;
  if (p->auto_pad == IR_PAD_SAME_UPPER || p->auto_pad == IR_PAD_SAME_LOWER) return 1;
  if (p->auto_pad != IR_PAD_NOTSET) return 0;
  for (int i = 0; i < 4; i++)
    if (p->pads[i] != 1) return 0;
  return 1;
}

/* Whether value v is of element type dtype with a declared shape like `want` (a dim of -1 matches
 * any known dim): a chain's weights must be known for the backend to judge the node. */
static int known_like(const ir_graph* g, int v, int dtype, const gfx_shape* want) {
  if (v < 0) return 0;
  const ir_value* x = &g->values[v];
  if (x->dtype != dtype || x->shape.rank != want->rank || !ir_fuse_shape_known(&x->shape)) return 0;
  for (int i = 0; i < want->rank; i++)
    if (want->dims[i] >= 0 && x->shape.dims[i] != want->dims[i]) return 0;
  return 1;
}

/* Node n when it is a Conv a chain can take: chainable parameters, X of rank 4, weights a known
 * [M, C, 3, 3] and the bias (if any) a known [M], all of its type, and one output. */
static int chainable_conv(const ir_graph* g, int n) {
  const ir_node* c = &g->nodes[n];
  if (c->op != GFX_OP_CONV || c->n_inputs < 2 || c->n_inputs > 3 || c->n_outputs != 1 || c->outputs[0] < 0 ||
      c->inputs[0] < 0 || !chainable_params(&c->params.conv))
    return 0;
  const int dtype = dtype_of(&c->params.conv);
  const int w = c->inputs[1];
  if (g->values[c->inputs[0]].dtype != dtype || g->values[c->inputs[0]].shape.rank != 4 ||
      g->values[c->outputs[0]].dtype != dtype || !known_like(g, w, dtype, &(gfx_shape){4, {-1, -1, 3, 3}}))
    return 0;
  const int64_t m = g->values[w].shape.dims[0];
  return c->n_inputs < 3 || c->inputs[2] < 0 || known_like(g, c->inputs[2], dtype, &(gfx_shape){1, {m}});
}

/* The Conv that the Conv `first` hands its output to, when the two make a chain: its output is no
 * graph output and read by that Conv alone (as X), and both agree on type, layout and math mode.
 * Its index, or -1. */
static int second_of(const ir_graph* g, const int* readers, int first) {
  if (!chainable_conv(g, first)) return -1;
  const ir_node* a = &g->nodes[first];
  const int mid = a->outputs[0];
  if (g->values[mid].graph_output >= 0) return -1;
  const int second = ir_fuse_sole_reader(g, readers, mid);
  if (second <= first || !chainable_conv(g, second)) return -1;
  const ir_node* b = &g->nodes[second];
  if (b->inputs[0] != mid || dtype_of(&b->params.conv) != dtype_of(&a->params.conv) ||
      b->params.conv.channels_last != a->params.conv.channels_last || b->math_mode != a->math_mode)
    return -1;
  /* W's input channels are the middle map's: a model that disagrees is left to fail as it is */
  if (g->values[b->inputs[1]].shape.dims[1] != g->values[a->inputs[1]].shape.dims[0]) return -1;
  return second;
}

/* Explicit pads of 1 on every side for a chainable convolution's auto_pad and kernel_shape. */
static void normalize_window(ir_conv_params* p) {
  p->auto_pad = IR_PAD_NOTSET;
  for (int i = 0; i < 2; i++) p->kernel[i] = 3;
  for (int i = 0; i < 4; i++) p->pads[i] = 1;
}

/* The chain node the pair (first, second) becomes: the second Conv with the first one's input, its
 * weights and bias as inputs IR_CONV_CHAIN_WEIGHT_INPUT and the one after, and its activation as the
 * chain's (the parameters fuse_conv_activation in ir/fuse.c stored). */
static ir_node chain_node(const ir_graph* g, int first, int second) {
  const ir_node* a = &g->nodes[first];
  ir_node c = g->nodes[second];
  c.inputs[0] = a->inputs[0];
  if (c.n_inputs < 3) c.inputs[2] = -1; /* no bias */
  c.inputs[IR_CONV_RESIDUAL_INPUT] = -1;
  c.inputs[IR_CONV_CHAIN_WEIGHT_INPUT] = a->inputs[1];
  c.inputs[IR_CONV_CHAIN_WEIGHT_INPUT + 1] = a->n_inputs > 2 ? a->inputs[2] : -1;
  c.n_inputs = IR_CONV_CHAIN_WEIGHT_INPUT + 2;
  ir_conv_params* p = &c.params.conv;
  normalize_window(p);
  p->chain = 1;
  p->chain_activation = a->params.conv.activation;
  p->chain_alpha = a->params.conv.act_alpha;
  p->chain_beta = a->params.conv.act_beta;
  return c;
}

/* The pair starting at Conv `first` becomes one chain node in the second's place, named "first+second",
 * when the target runs it. The reads of X, the weights and the biases carry over; the middle map goes. */
static int fuse_at(ir_graph* g, const ir_fuse_target* target, int* readers, int first) {
  const int second = second_of(g, readers, first);
  if (second < 0) return 0;
  ir_node fused = chain_node(g, first, second);
  if (!ir_fuse_accepted(target, g, &fused)) return 0;
  ir_node *a = &g->nodes[first], *b = &g->nodes[second];
  gfx_log(GFX_LOG_INFO, "gfxep: fused Conv '%s' and Conv '%s' into one convolution chain", ir_fuse_name_of(a),
          ir_fuse_name_of(b));
  const int mid = a->outputs[0];
  /* the fused node takes the first Conv's name and joins the second's; the first, about to go, frees
   * what was the second's */
  fused.name = a->name;
  a->name = b->name;
  *b = fused;
  ir_fuse_join_names(b, a);
  readers[mid]--;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, first); /* first < second: the graph is in topological order */
  return 1;
}

gfx_status ir_fuse_chains(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  int* readers = NULL;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 0));
  for (int n = 0; n < g->n_nodes; n++)
    if (fuse_at(g, target, readers, n)) {
      (*count)++;
      n--; /* index n holds the node after the first Conv now */
    }
  free(readers);
  return NULL;
}

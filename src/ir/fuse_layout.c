/* gfxep — layout changes folded into the node that reads them (see ir/fuse.h).
 *
 * With layout=nhwc ONNX Runtime's layout transformer hands over channels-last Convs with a Transpose
 * to NHWC before the first and one back to NCHW before every node it did not convert. A
 * super-resolution net starts and ends that way: image -> Transpose(0, 2, 3, 1) -> first Conv, and
 * last Conv -> Transpose(0, 3, 1, 2) -> DepthToSpace (the pixel shuffle). The first Conv can read the
 * NCHW image itself (params.conv.nchw_input) and the DepthToSpace the channels-last tensor
 * (params.space_depth.nhwc_input), each where the backend says it can: on the H200 ESPCN x2's two
 * Transposes took 17 and 40 us of its float16 run. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ir/fuse_util.h"

/* Whether Transpose node t moves NHWC to NCHW: perm (0, 3, 1, 2) of a rank-4 input. */
static int nhwc_to_nchw(const ir_graph* g, const ir_node* t) {
  const ir_layout_params* p = &t->params.layout;
  return t->op == GFX_OP_TRANSPOSE && t->n_inputs == 1 && t->n_outputs == 1 && t->inputs[0] >= 0 &&
         g->values[t->inputs[0]].shape.rank == 4 && p->has_ints && p->n_ints == 4 && p->ints[0] == 0 &&
         p->ints[1] == 3 && p->ints[2] == 1 && p->ints[3] == 2;
}

/* Whether Transpose node t moves NCHW to NHWC: perm (0, 2, 3, 1) of a rank-4 input. */
static int nchw_to_nhwc(const ir_graph* g, const ir_node* t) {
  const ir_layout_params* p = &t->params.layout;
  return t->op == GFX_OP_TRANSPOSE && t->n_inputs == 1 && t->n_outputs == 1 && t->inputs[0] >= 0 &&
         g->values[t->inputs[0]].shape.rank == 4 && p->has_ints && p->n_ints == 4 && p->ints[0] == 0 &&
         p->ints[1] == 2 && p->ints[2] == 3 && p->ints[3] == 1;
}

/* The Transpose whose output node n reads as its input 0, when it can be folded into n: its perm
 * passes perm_ok, its output is read by n alone (once) and is no graph output, and its input has the
 * same type and a known shape. Its index, or -1. */
static int foldable_transpose(const ir_graph* g, const int* readers, int n,
                              int (*perm_ok)(const ir_graph*, const ir_node*)) {
  const ir_node* r = &g->nodes[n];
  if (r->n_inputs < 1 || r->inputs[0] < 0) return -1;
  const int mid = r->inputs[0], t = g->values[mid].producer;
  if (t < 0 || !perm_ok(g, &g->nodes[t]) || g->values[mid].graph_output >= 0 || ir_fuse_sole_reader(g, readers, mid) != n)
    return -1;
  for (int i = 1; i < r->n_inputs; i++)
    if (r->inputs[i] == mid) return -1;
  const int x = g->nodes[t].inputs[0];
  if (g->values[x].dtype != g->values[mid].dtype || !ir_fuse_shape_known(&g->values[x].shape)) return -1;
  return t;
}

/* Node n becomes `fused` (n with its new params) reading the Transpose t's input, and t goes, when the
 * target runs the fused node. n takes the Transpose's name first, "transpose+n", and the Transpose,
 * about to go, frees the old one; t < n, so n moves down one place. */
static int fold(ir_graph* g, const ir_fuse_target* target, int* readers, int t, int n, ir_node* fused, const char* how) {
  const int mid = g->nodes[n].inputs[0];
  fused->inputs[0] = g->nodes[t].inputs[0]; /* its count of readers stays: this read replaces the Transpose's */
  if (!ir_fuse_accepted(target, g, fused)) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Transpose '%s' into %s '%s' (%s)", ir_fuse_name_of(&g->nodes[t]),
          ir_op_name(fused->op), ir_fuse_name_of(&g->nodes[n]), how);
  ir_node* tr = &g->nodes[t];
  ir_node* r = &g->nodes[n];
  r->params = fused->params;
  r->inputs[0] = fused->inputs[0];
  char* name = r->name;
  r->name = tr->name;
  tr->name = name;
  ir_fuse_join_names(r, tr);
  readers[mid]--;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, t);
  return 1;
}

/* The Transpose to NHWC before a channels-last Conv: the Conv reads the NCHW tensor itself
 * (params.conv.nchw_input) where the backend can, which on CUDA is the few-channel kernel of an
 * image net's first layer: ORT transposes the RGB input for it. */
static int fuse_into_conv(ir_graph* g, const ir_fuse_target* target, int* readers, int conv) {
  const ir_node* c = &g->nodes[conv];
  /* a chain's X is in its own layout (ir/graph.h) */
  if (c->op != GFX_OP_CONV || !c->params.conv.channels_last || c->params.conv.nchw_input || c->params.conv.chain ||
      c->n_inputs < 2)
    return 0;
  const int t = foldable_transpose(g, readers, conv, nchw_to_nhwc);
  if (t < 0) return 0;
  ir_node fused = *c;
  fused.params.conv.nchw_input = 1;
  return fold(g, target, readers, t, conv, &fused, "NCHW input read in place");
}

/* The Transpose back to NCHW before a DepthToSpace: it reads the channels-last tensor itself
 * (params.space_depth.nhwc_input). */
static int fuse_into_depth_to_space(ir_graph* g, const ir_fuse_target* target, int* readers, int d2s) {
  const ir_node* d = &g->nodes[d2s];
  if (d->op != GFX_OP_DEPTH_TO_SPACE || d->params.space_depth.nhwc_input || d->n_inputs != 1) return 0;
  const int t = foldable_transpose(g, readers, d2s, nhwc_to_nchw);
  if (t < 0) return 0;
  ir_node fused = *d;
  fused.params.space_depth.nhwc_input = 1;
  return fold(g, target, readers, t, d2s, &fused, "channels-last input read in place");
}

/* A channels-last Conv's constant weights, read by it alone, stored once in the order its kernels read
 * (params.conv.weights_channels_last): on CUDA cuDNN's channels-last convolutions otherwise rewrite
 * them on every run, one more kernel per Conv. Not for a 1x1 window, where both orders are one. */
static gfx_status weights_to_channels_last(ir_graph* g, const ir_fuse_target* target, const int* readers, int conv,
                                           int* done) {
  *done = 0;
  const ir_node* c = &g->nodes[conv];
  const ir_conv_params* p = &c->params.conv;
  if (c->op != GFX_OP_CONV || !p->channels_last || p->weights_channels_last || p->nchw_input || p->chain ||
      p->spatial != 2 || c->n_inputs < 2 || c->inputs[1] < 0)
    return NULL;
  const int w = c->inputs[1];
  ir_value* wv = &g->values[w];
  const gfx_shape* s = &wv->shape;
  if (!wv->const_data || wv->graph_output >= 0 || ir_fuse_sole_reader(g, readers, w) != conv || s->rank != 4 ||
      !ir_fuse_shape_known(s) || (s->dims[2] == 1 && s->dims[3] == 1))
    return NULL;
  const size_t elem = gfx_dtype_size(wv->dtype);
  const int64_t m = s->dims[0], cg = s->dims[1], taps = s->dims[2] * s->dims[3];
  /* nothing to reorder in an empty W (and malloc(0) may answer NULL) */
  if (elem == 0 || wv->const_bytes == 0 || wv->const_bytes != (size_t)(m * cg * taps) * elem) return NULL;
  ir_node fused = *c;
  fused.params.conv.weights_channels_last = 1;
  if (!ir_fuse_accepted(target, g, &fused)) return NULL;
  unsigned char* from = wv->const_data;
  unsigned char* to = malloc(wv->const_bytes);
  if (!to)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "no host memory (%zu bytes) to reorder the weights of Conv node '%s'",
                     wv->const_bytes, ir_fuse_name_of(c));
  /* [M, C/group, taps] -> [M, taps, C/group] */
  for (int64_t o = 0; o < m; o++)
    for (int64_t ch = 0; ch < cg; ch++)
      for (int64_t t = 0; t < taps; t++)
        memcpy(to + (size_t)((o * taps + t) * cg + ch) * elem, from + (size_t)((o * cg + ch) * taps + t) * elem, elem);
  free(wv->const_data);
  wv->const_data = to;
  g->nodes[conv].params.conv.weights_channels_last = 1;
  gfx_log(GFX_LOG_INFO, "gfxep: weights of channels-last Conv '%s' stored channels-last ([%lld, %lld, %lld, %lld])",
          ir_fuse_name_of(c), (long long)m, (long long)s->dims[2], (long long)s->dims[3], (long long)cg);
  *done = 1;
  return NULL;
}

gfx_status ir_fuse_layout(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  int* readers = NULL;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 0));
  for (int n = 0; n < g->n_nodes; n++)
    if (fuse_into_conv(g, target, readers, n) || fuse_into_depth_to_space(g, target, readers, n)) {
      (*count)++;
      n--; /* index n holds the next node now */
    }
  /* after the folds: a Conv that now reads an NCHW input runs the few-channel kernel, which reads W as given */
  gfx_status s = NULL;
  for (int n = 0; n < g->n_nodes && !s; n++) {
    int done = 0;
    s = weights_to_channels_last(g, target, readers, n, &done);
    *count += done;
  }
  free(readers);
  return s;
}

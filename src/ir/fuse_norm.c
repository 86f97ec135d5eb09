/* gfxep — a residual Add fused into the LayerNormalization that follows it (see ir/fuse.h).
 *
 * Pre-norm transformers (ViT, Swin) add each block's output to the residual stream and normalize
 * the sum at once: x = x + f(LN(x)). Written out that is an Add kernel writing the sum and a
 * LayerNormalization kernel reading it back; fused, one kernel reads both operands, normalizes
 * their sum and writes it as well when the stream goes on to the next block's Add. The sum is
 * rounded to the element type before it is normalized, as the Add wrote it, so the fused node
 * computes exactly what the pair did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ir/fuse_util.h"

/* Whether value v is produced before node `before` (or needs no producer). */
static int ready_before(const ir_graph* g, int v, int before) { return v < 0 || g->values[v].producer < before; }

static gfx_status fuse_at(ir_graph* g, const ir_fuse_target* target, int ln, int* done) {
  *done = 0;
  const ir_node* l = &g->nodes[ln];
  if (l->op != GFX_OP_LAYER_NORMALIZATION || l->params.norm.kind != IR_NORM_LAYER || l->params.norm.residual ||
      l->n_inputs < 2 || l->n_inputs > 3 || l->n_outputs != 1 || l->inputs[0] < 0)
    return NULL;
  const int s = l->inputs[0], add = g->values[s].producer;
  if (add < 0 || g->nodes[add].op != GFX_OP_ADD || g->nodes[add].n_inputs != 2 || g->nodes[add].n_outputs != 1) return NULL;
  const ir_node* a = &g->nodes[add];
  const int x = a->inputs[0], r = a->inputs[1], dtype = g->values[s].dtype;
  if (x < 0 || r < 0) return NULL;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) return NULL;
  /* no broadcasting: both operands have the sum's shape, every dim known */
  const gfx_shape* ss = &g->values[s].shape;
  if (!ir_fuse_shape_known(ss) || !gfx_shape_equal(&g->values[x].shape, ss) || !gfx_shape_equal(&g->values[r].shape, ss) ||
      g->values[x].dtype != dtype || g->values[r].dtype != dtype)
    return NULL;
  for (int i = 1; i < l->n_inputs; i++)
    if (l->inputs[i] == s) return NULL; /* the sum as a scale or bias too */
  /* who else reads the sum, and where */
  int others = 0, between = 0;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == s && n != ln) {
        others++;
        between |= n > add && n < ln;
      }
  const int has_sum = others > 0 || g->values[s].graph_output >= 0;
  /* The fused node goes where the LayerNormalization was; if a reader of the sum sits between the
   * two, it goes where the Add was instead, which needs the scale and bias ready there. */
  int slot = ln;
  if (between) {
    if (!ready_before(g, l->inputs[1], add) || (l->n_inputs > 2 && !ready_before(g, l->inputs[2], add))) return NULL;
    slot = add;
  }
  ir_node fused = *l;
  /* the name in data-flow order, "add+layernorm" */
  const char *na = ir_fuse_name_of(a), *nl = ir_fuse_name_of(l);
  fused.name = malloc(strlen(na) + strlen(nl) + 2);
  if (!fused.name) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "naming a fused LayerNormalization");
  sprintf(fused.name, "%s+%s", na, nl);
  fused.params.norm.residual = 1;
  fused.n_inputs = IR_NORM_RESIDUAL_INPUT + 1;
  fused.inputs[0] = x;
  if (l->n_inputs < 3) fused.inputs[2] = -1; /* no bias */
  fused.inputs[IR_NORM_RESIDUAL_INPUT] = r;
  fused.n_outputs = has_sum ? 2 : 1;
  fused.outputs[1] = has_sum ? s : -1;
  if (!ir_fuse_accepted(target, g, &fused)) {
    free(fused.name);
    return NULL;
  }
  gfx_log(GFX_LOG_INFO, "gfxep: fused Add '%s' into LayerNormalization '%s' (%s)", ir_fuse_name_of(a),
          ir_fuse_name_of(l), has_sum ? "the sum written too" : "the sum read by nothing else");
  const int gone = slot == ln ? add : ln;
  free(g->nodes[slot].name);
  g->nodes[slot] = fused;
  g->values[fused.outputs[0]].producer = slot;
  if (has_sum)
    g->values[s].producer = slot;
  else
    ir_fuse_retire_value(g, s);
  ir_fuse_remove_node(g, gone);
  *done = 1;
  return NULL;
}

gfx_status ir_fuse_residual_norm(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    int done = 0;
    GFX_TRY(fuse_at(g, target, n, &done));
    if (done) {
      (*count)++;
      n = -1; /* the indices moved */
    }
  }
  return NULL;
}

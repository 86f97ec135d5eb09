/* gfxep — InstanceNormalization's epilogue fused into it: a following Add, Relu and reflection Pad
 * (see ir/fuse.h).
 *
 * Style-transfer and image-to-image nets follow each InstanceNormalization with a Relu and a
 * reflection Pad for the next convolution (or with the residual Add): three kernels that each read
 * and write the whole map. Fused, the normalization's own pass writes the activated, padded result
 * (each padded element reads its mirrored source), and the intermediates are never stored. Each
 * value is rounded to the element type where the separate node would have stored it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ir/fuse_util.h"

/* The Pad as (top, left, bottom, right) reflect pads of H and W of the 4-D value x, or 0. */
static int reflect_pads_of(const ir_graph* g, const ir_node* pad, int x, int32_t out[4]) {
  const ir_layout_params* p = &pad->params.layout;
  if (pad->op != GFX_OP_PAD || p->mode != IR_PADMODE_REFLECT || pad->inputs[0] != x || pad->n_outputs != 1 ||
      p->n_ints != 8 || p->n_axes != 0)
    return 0;
  for (int i = 2; i < pad->n_inputs; i++)
    if (pad->inputs[i] == x) return 0;
  const int64_t* v = p->ints; /* begins of N, C, H, W, then their ends */
  if (v[0] || v[1] || v[4] || v[5]) return 0;
  const int64_t pads[4] = {v[2], v[3], v[6], v[7]};
  for (int i = 0; i < 4; i++) {
    if (pads[i] < 0 || pads[i] >= g->values[x].shape.dims[2 + i % 2]) return 0;
    out[i] = (int32_t)pads[i];
  }
  return 1;
}

static gfx_status epilogue_at(ir_graph* g, const ir_fuse_target* target, int* readers, int in_node, int* done) {
  *done = 0;
  const ir_node* n = &g->nodes[in_node];
  if (n->op != GFX_OP_INSTANCE_NORMALIZATION || n->params.norm.kind != IR_NORM_INSTANCE || n->params.norm.residual ||
      n->params.norm.reflect_pad || n->n_outputs != 1 || n->n_inputs < 2)
    return NULL;
  const int mid = n->outputs[0];
  if (mid < 0 || g->values[mid].graph_output >= 0) return NULL;
  const int next = ir_fuse_sole_reader(g, readers, mid);
  if (next <= in_node) return NULL;
  const ir_value* m = &g->values[mid];
  const int dtype = m->dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || m->shape.rank != 4 ||
      !ir_fuse_shape_known(&m->shape))
    return NULL;
  const ir_node* r = &g->nodes[next];
  if (r->n_outputs != 1 || r->outputs[0] < 0 || g->values[r->outputs[0]].dtype != dtype) return NULL;
  ir_node fused = *n;
  ir_norm_params* p = &fused.params.norm;
  switch (r->op) {
    case GFX_OP_ADD: {
      const int other = ir_fuse_other_input(r, mid);
      if (p->add_after || p->activation != IR_ACT_NONE || r->n_inputs != 2 || other < 0 || other == mid ||
          g->values[other].dtype != dtype || !gfx_shape_equal(&g->values[other].shape, &m->shape) ||
          !gfx_shape_equal(&g->values[r->outputs[0]].shape, &m->shape))
        return NULL;
      p->add_after = 1;
      fused.n_inputs = IR_NORM_RESIDUAL_INPUT + 1;
      if (n->n_inputs < 3) fused.inputs[2] = -1; /* no bias */
      fused.inputs[IR_NORM_RESIDUAL_INPUT] = other;
      break;
    }
    case GFX_OP_RELU:
      if (p->activation != IR_ACT_NONE || r->n_inputs != 1 || r->inputs[0] != mid) return NULL;
      p->activation = IR_ACT_RELU;
      break;
    case GFX_OP_PAD:
      if (!reflect_pads_of(g, r, mid, p->out_pads)) return NULL;
      p->reflect_pad = 1;
      break;
    default: return NULL;
  }
  fused.outputs[0] = r->outputs[0];
  const char *nn = ir_fuse_name_of(n), *nr = ir_fuse_name_of(r);
  fused.name = malloc(strlen(nn) + strlen(nr) + 2);
  if (!fused.name) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "naming a fused InstanceNormalization");
  sprintf(fused.name, "%s+%s", nn, nr);
  if (!ir_fuse_accepted(target, g, &fused)) {
    free(fused.name);
    return NULL;
  }
  gfx_log(GFX_LOG_INFO, "gfxep: fused %s '%s' into InstanceNormalization '%s'", ir_op_name(r->op), nr, nn);
  /* the fused node takes the later slot: the normalization's inputs and the Add's other operand are
   * all ready there */
  for (int i = 0; i < r->n_inputs; i++)
    if (r->inputs[i] >= 0) readers[r->inputs[i]]--;
  if (r->op == GFX_OP_ADD) readers[fused.inputs[IR_NORM_RESIDUAL_INPUT]]++;
  for (int i = 1; i < r->n_inputs; i++) ir_fuse_drop_if_unread(g, readers, r->inputs[i]); /* the Pad's constants */
  free(g->nodes[next].name);
  g->nodes[next] = fused;
  g->values[fused.outputs[0]].producer = next;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, in_node);
  *done = 1;
  return NULL;
}

gfx_status ir_fuse_norm_epilogue(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  int* readers = NULL;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 0));
  for (int n = 0; n < g->n_nodes; n++) {
    int done = 0;
    gfx_status s = epilogue_at(g, target, readers, n, &done);
    if (s) {
      free(readers);
      return s;
    }
    if (done) {
      (*count)++;
      n = -1; /* the indices moved; the fused node may take the next step */
    }
  }
  free(readers);
  return NULL;
}

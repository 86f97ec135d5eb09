/* gfxep — a layout change folded into the node that reads it (see ir/fuse.h).
 *
 * With layout=nhwc ONNX Runtime's layout transformer hands over channels-last Convs and puts a
 * Transpose back to NCHW before every node it did not convert. A super-resolution net ends that way:
 * last Conv -> Transpose(0, 3, 1, 2) -> DepthToSpace (the pixel shuffle). Both are pure data
 * movement, so the DepthToSpace reads the channels-last tensor itself (params.space_depth.nhwc_input)
 * and one pass over the image replaces two: on the H200 ESPCN x2's Transpose of its 12-channel
 * 540x960 float16 output took 40 us and the DepthToSpace after it 9. */
#include <stdlib.h>

#include "core/log.h"
#include "ir/fuse_util.h"

/* Whether Transpose node t moves NHWC to NCHW: perm (0, 3, 1, 2) of a rank-4 input. */
static int nhwc_to_nchw(const ir_graph* g, const ir_node* t) {
  const ir_layout_params* p = &t->params.layout;
  return t->op == GFX_OP_TRANSPOSE && t->n_inputs == 1 && t->n_outputs == 1 && t->inputs[0] >= 0 &&
         g->values[t->inputs[0]].shape.rank == 4 && p->has_ints && p->n_ints == 4 && p->ints[0] == 0 &&
         p->ints[1] == 3 && p->ints[2] == 1 && p->ints[3] == 2;
}

static int fuse_at(ir_graph* g, const ir_fuse_target* target, int* readers, int d2s) {
  const ir_node* d = &g->nodes[d2s];
  if (d->op != GFX_OP_DEPTH_TO_SPACE || d->params.space_depth.nhwc_input || d->n_inputs != 1 || d->inputs[0] < 0)
    return 0;
  const int mid = d->inputs[0], t = g->values[mid].producer;
  if (t < 0 || !nhwc_to_nchw(g, &g->nodes[t]) || g->values[mid].graph_output >= 0 ||
      ir_fuse_sole_reader(g, readers, mid) != d2s)
    return 0;
  const int x = g->nodes[t].inputs[0];
  if (g->values[x].dtype != g->values[mid].dtype || !ir_fuse_shape_known(&g->values[x].shape)) return 0;
  ir_node fused = *d;
  fused.inputs[0] = x;
  fused.params.space_depth.nhwc_input = 1;
  if (!ir_fuse_accepted(target, g, &fused)) return 0;
  gfx_log(GFX_LOG_INFO, "gfxep: fused Transpose '%s' into DepthToSpace '%s' (channels-last input read in place)",
          ir_fuse_name_of(&g->nodes[t]), ir_fuse_name_of(d));
  /* the name in data-flow order, "transpose+depthtospace": the DepthToSpace takes the Transpose's
   * name first, and the Transpose, about to go, frees the old one */
  ir_node* tr = &g->nodes[t];
  ir_node* ds = &g->nodes[d2s];
  char* ds_name = ds->name;
  ds->name = tr->name;
  tr->name = ds_name;
  ir_fuse_join_names(ds, tr);
  ds->inputs[0] = x; /* x's reader count stays: the DepthToSpace's read replaces the Transpose's */
  ds->params.space_depth.nhwc_input = 1;
  readers[mid]--;
  ir_fuse_retire_value(g, mid);
  ir_fuse_remove_node(g, t); /* t < d2s: the DepthToSpace moves down one place */
  return 1;
}

gfx_status ir_fuse_layout(ir_graph* g, const ir_fuse_target* target, int* count) {
  *count = 0;
  int* readers = NULL;
  GFX_TRY(ir_fuse_count_readers(g, &readers, 0));
  for (int n = 0; n < g->n_nodes; n++)
    if (fuse_at(g, target, readers, n)) {
      (*count)++;
      n--; /* index n holds the next node now */
    }
  free(readers);
  return NULL;
}

#include "ir/shape.h"

#include <string.h>

#include "ir/ops_nn.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

gfx_status ir_broadcast_shapes(const gfx_shape* a, const gfx_shape* b, gfx_shape* out) {
  int rank = a->rank > b->rank ? a->rank : b->rank;
  gfx_shape r = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    /* align from the right, as numpy does */
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;
    if (da == db || db == 1) {
      r.dims[i] = da;
    } else if (da == 1) {
      r.dims[i] = db;
    } else {
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                       SHAPE_STR(a), SHAPE_STR(b), i, (long long)da, (long long)db);
    }
  }
  *out = r;
  return NULL;
}

gfx_status ir_infer_broadcast(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  return ir_broadcast_shapes(&in[0], &in[1], &out[0]);
}

gfx_status ir_infer_same(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  out[0] = in[0];
  return NULL;
}

gfx_shape ir_nhwc_as_nchw(const gfx_shape* s) {
  gfx_shape r = *s;
  if (s->rank == 4) r.dims[1] = s->dims[3], r.dims[2] = s->dims[1], r.dims[3] = s->dims[2];
  return r;
}

gfx_shape ir_nchw_as_nhwc(const gfx_shape* s) {
  gfx_shape r = *s;
  if (s->rank == 4) r.dims[1] = s->dims[2], r.dims[2] = s->dims[3], r.dims[3] = s->dims[1];
  return r;
}

gfx_status ir_conv_geometry(const ir_conv_params* p, const gfx_shape* x_held, const gfx_shape* w, ir_conv_geom* g) {
  int sp = p->spatial;
  if (p->channels_last && sp != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "a channels-last conv with %d spatial dims; 2 are handled", sp);
  const gfx_shape x_nchw = ir_nhwc_as_nchw(x_held);
  const gfx_shape* x = p->channels_last && !p->nchw_input ? &x_nchw : x_held;
  if (sp < 1 || sp > IR_MAX_SPATIAL)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv with %d spatial dims; 1..%d are handled", sp, IR_MAX_SPATIAL);
  for (int i = 0; i < sp; i++)
    if (p->strides[i] < 1 || p->dilations[i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv stride %lld and dilation %lld must be >= 1",
                       (long long)p->strides[i], (long long)p->dilations[i]);
  if (x->rank != sp + 2 || w->rank != sp + 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv input %s and weight %s must both have rank %d",
                     SHAPE_STR(x), SHAPE_STR(w), sp + 2);
  /* Every quantity below stays far from int64 overflow when each is at most 2^31: dims that large
   * are no image anyway, and refusing them keeps the arithmetic exact. */
  const int64_t limit = (int64_t)1 << 31;
  for (int i = 0; i < sp + 2; i++)
    if (x->dims[i] < 0 || x->dims[i] > limit || w->dims[i] < 0 || w->dims[i] > limit)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv input %s or weight %s has a dim outside 0..2^31", SHAPE_STR(x),
                       SHAPE_STR(w));
  for (int i = 0; i < sp; i++) {
    if (w->dims[2 + i] < 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv weight %s has an empty kernel", SHAPE_STR(w));
    if (p->strides[i] > limit || p->dilations[i] > limit || p->pads[i] < 0 || p->pads[i] > limit ||
        p->pads[sp + i] < 0 || p->pads[sp + i] > limit || p->group > limit)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "conv stride %lld, dilation %lld, pads %lld/%lld or group %lld is outside 0..2^31",
                       (long long)p->strides[i], (long long)p->dilations[i], (long long)p->pads[i],
                       (long long)p->pads[sp + i], (long long)p->group);
  }
  memset(g, 0, sizeof *g);
  g->spatial = sp;
  g->n = x->dims[0];
  g->c_in = x->dims[1];
  g->c_out = w->dims[0];
  g->group = p->group;
  if (g->group <= 0 || g->c_in % g->group != 0 || g->c_out % g->group != 0 || w->dims[1] * g->group != g->c_in)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "conv input %s, weight %s and group=%lld disagree (input channels must equal weight dim 1 x group)",
                     SHAPE_STR(x), SHAPE_STR(w), (long long)g->group);
  for (int i = 0; i < sp; i++) {
    int64_t in = x->dims[2 + i], k = w->dims[2 + i];
    if (p->kernel[i] && p->kernel[i] != k)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv kernel_shape[%d]=%lld but the weight has %lld", i,
                       (long long)p->kernel[i], (long long)k);
    int64_t s = p->strides[i], d = p->dilations[i];
    int64_t ek = (k - 1) * d + 1; /* extent of the dilated kernel */
    int64_t pb, pe;
    switch (p->auto_pad) {
      case IR_PAD_VALID:
        pb = pe = 0;
        break;
      case IR_PAD_SAME_UPPER:
      case IR_PAD_SAME_LOWER: {
        int64_t o = (in + s - 1) / s;
        int64_t total = (o - 1) * s + ek - in;
        if (total < 0) total = 0;
        /* SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the beginning */
        pb = p->auto_pad == IR_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        pe = total - pb;
        break;
      }
      default:
        pb = p->pads[i];
        pe = p->pads[sp + i];
    }
    int64_t span = in + pb + pe - ek;
    if (span < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                       "conv spatial dim %d: input %lld with pads %lld+%lld is smaller than the dilated kernel %lld", i,
                       (long long)in, (long long)pb, (long long)pe, (long long)ek);
    g->in[i] = in;
    g->kernel[i] = k;
    g->strides[i] = s;
    g->dilations[i] = d;
    g->pad_begin[i] = pb;
    g->pad_end[i] = pe;
    g->out[i] = span / s + 1;
  }
  return NULL;
}

gfx_shape ir_conv_output_shape(const ir_conv_geom* g, int channels_last) {
  gfx_shape o = {.rank = g->spatial + 2};
  o.dims[0] = g->n;
  o.dims[1] = g->c_out;
  for (int i = 0; i < g->spatial; i++) o.dims[2 + i] = g->out[i];
  return channels_last ? ir_nchw_as_nhwc(&o) : o;
}

gfx_status ir_infer_conv(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  if (node->params.conv.chain) {
    gfx_shape mid;
    return ir_conv_chain_shapes(&node->params.conv, node->n_inputs, in, &mid, &out[0]);
  }
  ir_conv_geom g;
  GFX_TRY(ir_conv_geometry(&node->params.conv, &in[0], &in[1], &g));
  if (node->n_inputs > 2 && in[2].rank >= 0 && (in[2].rank != 1 || in[2].dims[0] != g.c_out))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "conv bias %s must be [%lld]", SHAPE_STR(&in[2]), (long long)g.c_out);
  out[0] = ir_conv_output_shape(&g, node->params.conv.channels_last);
  return NULL;
}

gfx_status ir_matmul_geometry(const gfx_shape* a, const gfx_shape* b, int trans_b, ir_matmul_geom* g) {
  if (a->rank < 2 || b->rank < 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "matmul operands %s and %s must have rank >= 2", SHAPE_STR(a),
                     SHAPE_STR(b));
  int64_t m = a->dims[a->rank - 2], k = a->dims[a->rank - 1];
  /* b's matrix is [k, n], or [n, k] stored when the product reads it transposed */
  int64_t kb = b->dims[b->rank - (trans_b ? 1 : 2)], n = b->dims[b->rank - (trans_b ? 2 : 1)];
  if (k != kb)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "matmul %s x %s%s: inner dims %lld and %lld differ", SHAPE_STR(a),
                     SHAPE_STR(b), trans_b ? " (transposed)" : "", (long long)k, (long long)kb);
  gfx_shape ba = {.rank = a->rank - 2}, bb = {.rank = b->rank - 2}, bo;
  memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.rank);
  memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
  gfx_status s = ir_broadcast_shapes(&ba, &bb, &bo);
  if (s) return gfx_status_wrap(s, "matmul batch dims");
  g->m = m;
  g->n = n;
  g->k = k;
  g->batch = gfx_shape_numel(&bo);
  g->out = bo;
  g->out.rank = bo.rank + 2;
  g->out.dims[bo.rank] = m;
  g->out.dims[bo.rank + 1] = n;
  return NULL;
}

gfx_status ir_infer_matmul(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_matmul_geom g;
  GFX_TRY(ir_matmul_geometry(&in[0], &in[1], node->params.gemm.trans_b, &g));
  out[0] = g.out;
  return NULL;
}

/* every infer function the table names, declared here so that a family file needs no header */
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) \
  gfx_status infer(const ir_node* node, const gfx_shape* in, gfx_shape* out);
#include "ir/ops.def"
#undef GFX_OP

static const ir_infer_fn infer_table[GFX_OP_COUNT] = {
#define GFX_OP(id, name, min_opset, kernel, memory, parse, infer, summary) [GFX_OP_##id] = infer,
#include "ir/ops.def"
#undef GFX_OP
};

gfx_status ir_infer_shapes(const ir_graph* g, const gfx_shape* input_shapes, gfx_shape* shapes) {
  GFX_TRY(ir_infer_inputs(g, input_shapes, shapes));
  for (int n = 0; n < g->n_nodes; n++) GFX_TRY(ir_infer_node(g, &g->nodes[n], shapes));
  return NULL;
}

gfx_status ir_infer_inputs(const ir_graph* g, const gfx_shape* input_shapes, gfx_shape* shapes) {
  for (int v = 0; v < g->n_values; v++) shapes[v] = g->values[v].shape;
  for (int i = 0; i < g->n_inputs; i++) {
    const ir_value* val = &g->values[g->inputs[i]];
    const gfx_shape* got = &input_shapes[i];
    if (val->shape.rank >= 0 && got->rank != val->shape.rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input '%s' has shape %s, the model declares rank %d", val->name,
                       SHAPE_STR(got), val->shape.rank);
    for (int d = 0; d < got->rank; d++) {
      if (got->dims[d] < 0)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input '%s' has negative dim %d in %s", val->name, d,
                         SHAPE_STR(got));
      if (val->shape.rank >= 0 && val->shape.dims[d] >= 0 && val->shape.dims[d] != got->dims[d])
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input '%s' has shape %s, the model declares %s", val->name,
                         SHAPE_STR(got), SHAPE_STR(&val->shape));
    }
    shapes[g->inputs[i]] = *got;
  }
  return NULL;
}

gfx_status ir_infer_node(const ir_graph* g, const ir_node* node, gfx_shape* shapes) {
  gfx_shape in[IR_MAX_IO], out[IR_MAX_IO];
  for (int i = 0; i < node->n_inputs; i++) {
    if (node->inputs[i] < 0) {
      in[i] = (gfx_shape){.rank = -1};
    } else {
      in[i] = shapes[node->inputs[i]];
      if (!gfx_shape_is_known(&in[i]))
        return gfx_error(GFX_ERR_INTERNAL, "node '%s': input '%s' has no known shape", node->name,
                         g->values[node->inputs[i]].name);
    }
  }
  gfx_status s = infer_table[node->op](node, in, out);
  if (s) return gfx_status_wrap(s, "node '%s' (%s)", node->name, ir_op_name(node->op));
  for (int o = 0; o < node->n_outputs; o++) {
    const ir_value* val = &g->values[node->outputs[o]];
    /* a declared static dim that disagrees means the model is inconsistent: refuse, never guess */
    if (val->shape.rank >= 0 && val->shape.rank == out[o].rank) {
      for (int d = 0; d < out[o].rank; d++)
        if (val->shape.dims[d] >= 0 && val->shape.dims[d] != out[o].dims[d])
          return gfx_error(GFX_ERR_INVALID_ARGUMENT, "node '%s': output '%s' computes to %s, the model declares %s",
                           node->name, val->name, SHAPE_STR(&out[o]), SHAPE_STR(&val->shape));
    } else if (val->shape.rank >= 0) {
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "node '%s': output '%s' computes to %s, the model declares %s",
                       node->name, val->name, SHAPE_STR(&out[o]), SHAPE_STR(&val->shape));
    }
    shapes[node->outputs[o]] = out[o];
  }
  return NULL;
}

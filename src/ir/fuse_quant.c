/* gfxep — QuantizeLinear and DequantizeLinear of constants folded into constants at compile time.
 *
 * ORT's own constant folding leaves DequantizeLinear alone (so that execution providers see the QDQ
 * pattern), and a QDQ model's int8 weights and int32 biases reach the partition behind one each.
 * Run as they are, every frame dequantizes every weight again, and the Conv after it sees a computed
 * input, not a constant (no BatchNormalization fold, no weight preparation). Folded, the weights
 * become the float constants the DequantizeLinear would produce, computed with the same float32
 * arithmetic as the run-time kernels (ir_dequantize), rounded once to the output type.
 * A quantization-aware-trained model as PyTorch exports it keeps float weights behind a
 * QuantizeLinear -> DequantizeLinear pair: the QuantizeLinear folds first (ir_quantize, as the
 * kernels round), then the DequantizeLinear after it.
 */
#include <stdlib.h>

#include "ir/fuse_util.h"
#include "ir/ops_quant.h"
#include "ir/shape.h"

/* Larger results stay a run-time DequantizeLinear: they keep the 4x smaller int8 copy in memory. */
#define FOLD_MAX_BYTES ((size_t)64 << 20)

static int64_t int_at(const ir_value* v, int64_t i) {
  switch (v->dtype) {
    case GFX_DTYPE_I8: return ((const int8_t*)v->const_data)[i];
    case GFX_DTYPE_U8: return ((const uint8_t*)v->const_data)[i];
    default: return ((const int32_t*)v->const_data)[i];
  }
}

static int is_const(const ir_graph* g, int v) {
  return v >= 0 && g->values[v].const_data && g->values[v].producer < 0;
}

/* Whether the node's element types are ones the run-time kernels take: DequantizeLinear from
 * int8/uint8/int32 to the scale's float type, QuantizeLinear from a float type (the scale's) to
 * int8/uint8, the zero point of the integer side's type. */
static int types_ok(const ir_graph* g, int quantize, int x, int scale, int zp, int y) {
  const int xt = g->values[x].dtype, st = g->values[scale].dtype, yt = g->values[y].dtype;
  const int ft = quantize ? xt : yt, it = quantize ? yt : xt;
  if (ft != GFX_DTYPE_F32 && ft != GFX_DTYPE_F16 && ft != GFX_DTYPE_BF16) return 0;
  if (st != ft) return 0;
  if (it != GFX_DTYPE_I8 && it != GFX_DTYPE_U8 && (quantize || it != GFX_DTYPE_I32)) return 0;
  return zp < 0 || g->values[zp].dtype == it;
}

gfx_status ir_fuse_fold_quant(ir_graph* g, int* readers, int node, size_t* folded) {
  *folded = 0;
  const ir_node* d = &g->nodes[node];
  const int quantize = d->op == GFX_OP_QUANTIZE_LINEAR;
  if ((!quantize && d->op != GFX_OP_DEQUANTIZE_LINEAR) || d->n_outputs != 1 || d->n_inputs < 2 || d->n_inputs > 3)
    return NULL;
  const int x = d->inputs[0], scale = d->inputs[1], zp = d->n_inputs > 2 ? d->inputs[2] : -1, y = d->outputs[0];
  if (!is_const(g, x) || !is_const(g, scale) || (zp >= 0 && !is_const(g, zp))) return NULL;
  /* a partition output is written by the Run: it stays a node */
  if (y < 0 || g->values[y].graph_output >= 0) return NULL;
  if (!types_ok(g, quantize, x, scale, zp, y)) return NULL;
  ir_quant_geom geom;
  gfx_status s = ir_quant_geometry(&d->params.quant, &g->values[x].shape, &g->values[scale].shape,
                                   zp >= 0 ? &g->values[zp].shape : NULL, &geom);
  if (s) {
    /* shapes the run-time kernel would refuse too: leave the node, and its error, to run time */
    gfx_status_free(s);
    return NULL;
  }
  const int dtype = g->values[y].dtype;
  const size_t bytes = (size_t)geom.count * gfx_dtype_size(dtype);
  if (bytes > FOLD_MAX_BYTES) return NULL;

  void* out = malloc(bytes ? bytes : 1);
  if (!out)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "folding %s '%s' (%zu bytes)", quantize ? "QuantizeLinear" : "DequantizeLinear",
                     ir_fuse_name_of(d), bytes);
  const ir_value *xv = &g->values[x], *sv = &g->values[scale], *zv = zp >= 0 ? &g->values[zp] : NULL;
  const int32_t lo = dtype == GFX_DTYPE_I8 ? -128 : 0, hi = dtype == GFX_DTYPE_I8 ? 127 : 255;
  for (int64_t e = 0; e < geom.count; e++) {
    const int64_t c = geom.per_axis ? e / geom.inner % geom.len : 0;
    const float s_c = (float)ir_fuse_const_at(sv, c);
    const int64_t z_c = zv ? int_at(zv, c) : 0;
    if (!quantize) {
      ir_fuse_const_put(out, dtype, e, ir_dequantize(int_at(xv, e), s_c, z_c));
    } else {
      const int32_t q = ir_quantize((float)ir_fuse_const_at(xv, e), s_c, (int32_t)z_c, lo, hi);
      if (dtype == GFX_DTYPE_I8)
        ((int8_t*)out)[e] = (int8_t)q;
      else
        ((uint8_t*)out)[e] = (uint8_t)q;
    }
  }
  const gfx_shape shape = xv->shape;
  g->values[y].shape = shape;
  s = ir_graph_set_constant(g, y, out, bytes);
  free(out);
  if (s) return s;
  g->values[y].producer = -1;
  for (int i = 0; i < d->n_inputs; i++)
    if (d->inputs[i] >= 0) readers[d->inputs[i]]--;
  const int inputs[3] = {x, scale, zp};
  ir_fuse_remove_node(g, node);
  for (int i = 0; i < 3; i++) ir_fuse_drop_if_unread(g, readers, inputs[i]);
  *folded = bytes ? bytes : 1;
  return NULL;
}

/* gfxep — reference kernels of the resampling ops: plain C loops on host memory.
 *
 * Resize and Upsample take their geometry and coordinate mapping from ir/resize_geom.h (the same
 * float mapping the CUDA kernels use) and interpolate in double, rounding once at the store.
 * DepthToSpace and SpaceToDepth copy elements byte for byte, whatever their type.
 */
#include "backend/ref/ref_kernels.h"

#include "backend/ref/ref_dtype.h"
#include "ir/resize_geom.h"
#include "ir/shape.h"

static gfx_status check_tensor(const ir_node* node, const char* what, const gfx_tensor* t, int dtype) {
  GFX_TRY(ref_check_concrete_shape(what, &t->shape));
  if (t->dtype != dtype)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": %s is %s, expected %s", ir_op_name(node->op),
                     node->name ? node->name : "", what, gfx_dtype_name(t->dtype), gfx_dtype_name(dtype));
  if (!t->data && gfx_shape_numel(&t->shape) != 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": %s has no memory", ir_op_name(node->op),
                     node->name ? node->name : "", what);
  return NULL;
}

static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, gfx_shape* expected) {
  if (node->n_inputs < 1 || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": %d inputs and %d outputs", ir_op_name(node->op),
                     node->name ? node->name : "", node->n_inputs, node->n_outputs);
  if (gfx_dtype_size(in[0].dtype) == 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": input 0 is %s", ir_op_name(node->op),
                     node->name ? node->name : "", gfx_dtype_name(in[0].dtype));
  GFX_TRY(check_tensor(node, "input 0", &in[0], in[0].dtype));
  GFX_TRY(check_tensor(node, "output 0", &out[0], in[0].dtype));
  return ref_check_shape_is("output 0", &out[0].shape, expected);
}

/* ---- Resize, Upsample ---- */

/* X[plane][y][x] of one [h.in, w.in] plane */
static double pixel(const void* x, int dtype, const ir_resize_geom* g, int64_t plane, int64_t y, int64_t xi) {
  return ref_load(x, dtype, (plane * g->h.in + y) * g->w.in + xi);
}

static double sample_nearest(const void* x, int dtype, const ir_resize_geom* g, int64_t plane, float cy, float cx) {
  const int64_t iy = ir_resize_nearest_index(&g->h, g->nearest, cy);
  const int64_t ix = ir_resize_nearest_index(&g->w, g->nearest, cx);
  return pixel(x, dtype, g, plane, iy, ix);
}

static double sample_linear(const void* x, int dtype, const ir_resize_geom* g, int64_t plane, float cy, float cx) {
  int64_t y0, y1, x0, x1;
  float wy0, wy1, wx0, wx1;
  ir_resize_linear_taps(&g->h, cy, &y0, &y1, &wy0, &wy1);
  ir_resize_linear_taps(&g->w, cx, &x0, &x1, &wx0, &wx1);
  const double top = wx0 * pixel(x, dtype, g, plane, y0, x0) + wx1 * pixel(x, dtype, g, plane, y0, x1);
  const double bottom = wx0 * pixel(x, dtype, g, plane, y1, x0) + wx1 * pixel(x, dtype, g, plane, y1, x1);
  return wy0 * top + wy1 * bottom;
}

static double sample_cubic(const void* x, int dtype, const ir_resize_geom* g, int64_t plane, float cy, float cx) {
  int64_t iy[4], ix[4];
  float wy[4], wx[4];
  ir_resize_cubic_taps(&g->h, g->cubic_a, g->exclude_outside, cy, iy, wy);
  ir_resize_cubic_taps(&g->w, g->cubic_a, g->exclude_outside, cx, ix, wx);
  double sum = 0.0;
  for (int r = 0; r < 4; r++) {
    double row = 0.0;
    for (int c = 0; c < 4; c++) row += (double)wx[c] * pixel(x, dtype, g, plane, iy[r], ix[c]);
    sum += (double)wy[r] * row;
  }
  return sum;
}

/* The general geometry (a leading dim resizes): output element i (row-major over the output) sums
 * the products of the per-dim tap weights over every combination of taps, in double. */
static double sample_general(const void* x, int dtype, const ir_resize_geom* g, int64_t i) {
  int64_t idx[GFX_MAX_RANK][4];
  float w[GFX_MAX_RANK][4];
  int n[GFX_MAX_RANK], pick[GFX_MAX_RANK];
  for (int k = g->rank - 1; k >= 0; k--) {
    const ir_resize_axis* a = &g->axes[k];
    n[k] = ir_resize_axis_taps(g, a, i % a->out, idx[k], w[k]);
    if (n[k] == 0) return g->extrapolation;
    i /= a->out;
    pick[k] = 0;
  }
  double sum = 0.0;
  for (;;) { /* an odometer over the taps, the last dim fastest */
    int64_t offset = 0;
    double weight = 1.0;
    for (int k = 0; k < g->rank; k++) {
      offset = offset * g->axes[k].in + idx[k][pick[k]];
      weight *= (double)w[k][pick[k]];
    }
    sum += weight * ref_load(x, dtype, offset);
    int k = g->rank - 1;
    while (k >= 0 && ++pick[k] == n[k]) pick[k--] = 0;
    if (k < 0) return sum;
  }
}

gfx_status ref_run_resize(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  ir_resize_geom g;
  gfx_shape expected;
  GFX_TRY(ir_resize_geometry(node, &in[0].shape, &g, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s node \"%s\": %s is not handled", ir_op_name(node->op),
                     node->name ? node->name : "", gfx_dtype_name(dtype));
  const int64_t count = gfx_shape_numel(&expected);
  if (count == 0) return NULL;
  if (g.identity) { /* nothing resizes: a copy, as ONNX Runtime does whatever the mode */
    memcpy(out[0].data, in[0].data, (size_t)count * gfx_dtype_size(dtype));
    return NULL;
  }
  const void* x = in[0].data;
  if (g.general) {
    for (int64_t i = 0; i < count; i++) ref_store(out[0].data, dtype, i, sample_general(x, dtype, &g, i));
    return NULL;
  }
  int64_t i = 0;
  for (int64_t plane = 0; plane < g.outer; plane++) {
    for (int64_t oy = 0; oy < g.h.out; oy++) {
      const float cy = ir_resize_source_coord(&g.h, g.coord, oy);
      for (int64_t ox = 0; ox < g.w.out; ox++, i++) {
        const float cx = ir_resize_source_coord(&g.w, g.coord, ox);
        double v;
        if (ir_resize_outside(&g.h, g.coord, cy) || ir_resize_outside(&g.w, g.coord, cx))
          v = g.extrapolation;
        else if (g.mode == IR_RESIZE_NEAREST)
          v = sample_nearest(x, dtype, &g, plane, cy, cx);
        else if (g.mode == IR_RESIZE_LINEAR)
          v = sample_linear(x, dtype, &g, plane, cy, cx);
        else
          v = sample_cubic(x, dtype, &g, plane, cy, cx);
        ref_store(out[0].data, dtype, i, v);
      }
    }
  }
  return NULL;
}

/* ---- DepthToSpace, SpaceToDepth ---- */

gfx_status ref_run_space_depth(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  gfx_shape expected;
  const int to_space = node->op == GFX_OP_DEPTH_TO_SPACE;
  GFX_TRY(to_space ? ir_infer_depth_to_space(node, &in[0].shape, &expected)
                   : ir_infer_space_to_depth(node, &in[0].shape, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const size_t es = gfx_dtype_size(in[0].dtype);
  const int64_t count = gfx_shape_numel(&expected);
  const char* x = in[0].data;
  char* y = out[0].data;
  const ir_space_depth_params* p = &node->params.space_depth;
  for (int64_t i = 0; i < count; i++) {
    const int64_t src = ir_space_depth_source(to_space, p->crd, p->blocksize, expected.dims, i);
    memcpy(y + (size_t)i * es, x + (size_t)src * es, es);
  }
  return NULL;
}

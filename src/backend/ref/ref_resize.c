/* gfxep — reference kernels of the resampling ops: plain C loops on host memory.
 *
 * Resize and Upsample take their geometry and coordinate mapping from ir/resize_geom.h (the same
 * float mapping the CUDA kernels use) and interpolate in double, rounding once at the store.
 * DepthToSpace and SpaceToDepth copy elements byte for byte, whatever their type. GridSample finds
 * its taps with ir/grid_sample_geom.h (float, as ONNX Runtime) and sums them in double.
 */
#include "backend/ref/ref_kernels.h"

#include "backend/ref/ref_dtype.h"
#include "ir/grid_sample_geom.h"
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
    const int64_t src = ir_space_depth_source(to_space, p->crd, to_space && p->nhwc_input, p->blocksize, expected.dims, i);
    memcpy(y + (size_t)i * es, x + (size_t)src * es, es);
  }
  return NULL;
}

/* ---- GridSample ---- */

/* One output pixel of one plane: the taps of ir/grid_sample_geom.h (float, as ONNX Runtime finds
 * them), summed in double in their order; a tap index of -1 reads 0. */
static double grid_sample_one(const void* plane, int dtype, const ir_grid_geom* g, float gx, float gy) {
  int64_t ix[4], iy[4];
  float wx[4], wy[4];
  const int nx = ir_grid_axis_taps(g, ir_grid_denormalize(gx, g->in_w, g->align_corners), g->in_w, ix, wx);
  const int ny = ir_grid_axis_taps(g, ir_grid_denormalize(gy, g->in_h, g->align_corners), g->in_h, iy, wy);
  double out = 0.0;
  for (int r = 0; r < ny; r++) {
    double row = 0.0;
    for (int c = 0; c < nx; c++) {
      const double p = iy[r] < 0 || ix[c] < 0 ? 0.0 : ref_load(plane, dtype, iy[r] * g->in_w + ix[c]);
      row += (double)wx[c] * p;
    }
    out += (double)wy[r] * row;
  }
  return out;
}

gfx_status ref_run_grid_sample(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (node->n_inputs != 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": %d inputs, expected 2", ir_op_name(node->op),
                     node->name ? node->name : "", node->n_inputs);
  ir_grid_geom g;
  gfx_shape expected;
  GFX_TRY(ir_grid_sample_geometry(node, &in[0].shape, &in[1].shape, &g, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype, grid_dtype = in[1].dtype;
  if (grid_dtype != GFX_DTYPE_F32 && grid_dtype != GFX_DTYPE_F16)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": the grid is %s", ir_op_name(node->op),
                     node->name ? node->name : "", gfx_dtype_name(grid_dtype));
  GFX_TRY(check_tensor(node, "input 1 (grid)", &in[1], grid_dtype));
  const size_t es = gfx_dtype_size(dtype);
  const int64_t pixels = g.out_h * g.out_w, plane_in = g.in_h * g.in_w;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t c = 0; c < g.c; c++) {
      const char* plane = (const char*)in[0].data + (size_t)((n * g.c + c) * plane_in) * es;
      for (int64_t p = 0; p < pixels; p++) {
        const int64_t gi = (n * pixels + p) * 2;
        const float gx = (float)ref_load(in[1].data, grid_dtype, gi), gy = (float)ref_load(in[1].data, grid_dtype, gi + 1);
        ref_store(out[0].data, dtype, (n * g.c + c) * pixels + p, grid_sample_one(plane, dtype, &g, gx, gy));
      }
    }
  return NULL;
}

/* ---- RoiAlign ---- */

/* Output element (c, ph, pw) of one region over plane x (of height h, width w): the mean of the
 * bin's bilinear samples (each the weighted sum of its four taps), or their maximum where each
 * sample is the largest of its four weighted taps (ONNX Runtime's max rule); a sample more than a
 * pixel outside the plane counts as 0. Positions in float32 (ir/resize_geom.h), sums in double. */
static double roi_align_one(const ir_roi_align_params* p, const ir_roi_box* b, const void* x, int dtype, int64_t plane,
                            int64_t h, int64_t w, int64_t ph, int64_t pw) {
  double acc = 0.0;
  int first = 1;
  for (int64_t iy = 0; iy < b->grid_h; iy++) {
    const float y = ir_roi_align_coord(b->start_h, ph, b->bin_h, iy, b->grid_h);
    for (int64_t ix = 0; ix < b->grid_w; ix++) {
      const float xx = ir_roi_align_coord(b->start_w, pw, b->bin_w, ix, b->grid_w);
      int64_t pos[4];
      float wt[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      double v[4] = {0.0, 0.0, 0.0, 0.0};
      if (ir_roi_align_taps(y, xx, h, w, pos, wt))
        for (int t = 0; t < 4; t++) v[t] = (double)wt[t] * ref_load(x, dtype, plane + pos[t]);
      if (p->mode_max) {
        const double m = fmax(fmax(fmax(v[0], v[1]), v[2]), v[3]);
        acc = first || m > acc ? m : acc;
        first = 0;
      } else {
        acc += v[0] + v[1] + v[2] + v[3];
      }
    }
  }
  if (p->mode_max) return acc;
  const int64_t count = b->grid_h * b->grid_w > 1 ? b->grid_h * b->grid_w : 1;
  return acc / (double)count;
}

gfx_status ref_run_roi_align(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (node->n_inputs != 3 || node->n_outputs != 1 || !in || !out)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 3 and 1", node->n_inputs,
                     node->n_outputs);
  const gfx_shape shapes[3] = {in[0].shape, in[1].shape, in[2].shape};
  gfx_shape expected;
  GFX_TRY(ir_infer_roi_align(node, shapes, &expected));
  GFX_TRY(check_io(node, in, out, &expected));
  const int dtype = in[0].dtype;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || in[1].dtype != dtype ||
      in[2].dtype != GFX_DTYPE_I64)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "X %s, rois %s, batch_indices %s are not handled", gfx_dtype_name(dtype),
                     gfx_dtype_name(in[1].dtype), gfx_dtype_name(in[2].dtype));
  const ir_roi_align_params* p = &node->params.roi_align;
  const int64_t n = in[0].shape.dims[0], c = in[0].shape.dims[1], h = in[0].shape.dims[2], w = in[0].shape.dims[3];
  const int64_t regions = in[1].shape.dims[0];
  if (regions > 0 && (!in[1].data || !in[2].data))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "rois or batch_indices has no data");
  int64_t e = 0;
  for (int64_t r = 0; r < regions; r++) {
    const int64_t batch = ((const int64_t*)in[2].data)[r];
    if (batch < 0 || batch >= n)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)r,
                       (long long)batch, (long long)n);
    float roi[4];
    for (int k = 0; k < 4; k++) roi[k] = (float)ref_load(in[1].data, dtype, r * 4 + k);
    const ir_roi_box b = ir_roi_align_box(roi, p->spatial_scale, p->half_pixel, p->out_h, p->out_w, p->sampling_ratio);
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t ph = 0; ph < p->out_h; ph++)
        for (int64_t pw = 0; pw < p->out_w; pw++)
          ref_store(out[0].data, dtype, e++,
                    roi_align_one(p, &b, in[0].data, dtype, (batch * c + ch) * h * w, h, w, ph, pw));
  }
  return NULL;
}

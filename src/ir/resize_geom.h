/* gfxep — Resize/Upsample geometry and coordinate mapping, shared by the IR (which computes the
 * geometry once per input shape), the reference backend and the CUDA kernels.
 *
 * The functions below are the single definition of how an output index maps back to the input:
 * both backends call them, in float, exactly as written, so they cannot disagree about which input
 * pixels an output reads or where a nearest pixel rounds. The float arithmetic follows the ONNX
 * spec's formulas in the order ONNX Runtime's CPU kernels evaluate them, so rounding ties land on
 * the same side as there.
 *
 * This header compiles as C11 and as CUDA C++: it includes nothing but <stdint.h> and <math.h>
 * in that case (the part after `#ifndef __CUDACC__` is for the C side only).
 */
#ifndef GFXEP_IR_RESIZE_GEOM_H
#define GFXEP_IR_RESIZE_GEOM_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define IR_RESIZE_FN static inline __host__ __device__
#else
#define IR_RESIZE_FN static inline
#endif

/* interpolation (ir_resize_params.mode) */
enum { IR_RESIZE_NEAREST = 0, IR_RESIZE_LINEAR = 1, IR_RESIZE_CUBIC = 2 };

/* coordinate_transformation_mode (ir_resize_params.coord) */
enum {
  IR_COORD_HALF_PIXEL = 0,
  IR_COORD_HALF_PIXEL_SYMMETRIC,
  IR_COORD_PYTORCH_HALF_PIXEL,
  IR_COORD_ALIGN_CORNERS,
  IR_COORD_ASYMMETRIC,
  IR_COORD_TF_HALF_PIXEL_FOR_NN,
  IR_COORD_TF_CROP_AND_RESIZE,
};

/* nearest_mode (ir_resize_params.nearest); SIMPLE is Upsample's rule (truncate when enlarging,
 * ceil when shrinking) */
enum { IR_NEAREST_ROUND_PREFER_FLOOR = 0, IR_NEAREST_ROUND_PREFER_CEIL, IR_NEAREST_FLOOR, IR_NEAREST_CEIL, IR_NEAREST_SIMPLE };

/* One resized axis. */
typedef struct ir_resize_axis {
  int64_t in, out;
  float scale;     /* the scale the coordinate mapping uses: the given scale, or out/in from sizes */
  float roi_start; /* tf_crop_and_resize region, normalized; 0 and 1 otherwise */
  float roi_end;
} ir_resize_axis;

/* Everything a kernel needs, passed to the CUDA kernels by value. When only the last two dims
 * resize (general == 0), the input is seen as [outer, h.in, w.in] and the output as
 * [outer, h.out, w.out]. Otherwise (general == 1: some leading dim resizes too, e.g. the depth of a
 * video volume) every dim is an axis of its own in `axes` and outer, h, w are unused: each output
 * interpolates separably over the dims that resize (1, 2 or 4 taps along each). */
typedef struct ir_resize_geom {
  int64_t outer;         /* product of the leading (not resized) dims */
  ir_resize_axis h, w;
  int general;
  int rank;              /* general: the dims in axes */
  ir_resize_axis axes[8]; /* general: every dim, outermost first (8 = GFX_MAX_RANK) */
  int identity;          /* output shape == input shape: a plain copy, whatever the mode */
  int mode, coord, nearest;
  int exclude_outside;
  float cubic_a;
  float extrapolation;   /* tf_crop_and_resize: the value of outputs that map outside the input */
} ir_resize_geom;

/* Whether axis a maps one to one (no resizing along it): a scale of exactly 1 is read that way by
 * ir_resize_source_coord whatever the mode, so such an axis takes one tap at the output's index. */
IR_RESIZE_FN int ir_resize_axis_kept(const ir_resize_axis* a) { return a->scale == 1.0f && a->out == a->in; }

/* float32 a * b, never fused into a neighbouring addition: nvcc contracts a * b + c into one fma
 * in device code, which rounds once where the host rounds twice; RoiAlign's box edges decide a
 * sample count by ceil, so both sides must round alike. */
IR_RESIZE_FN float ir_fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/* The input coordinate of output index x along axis a. An axis whose scale is exactly 1 maps
 * one to one, whatever the mode (no resizing happens along it). */
IR_RESIZE_FN float ir_resize_source_coord(const ir_resize_axis* a, int coord, int64_t x_index) {
  const float x = (float)x_index;
  const float scale = a->scale;
  if (scale == 1.0f) return x;
  const float len_out = (float)a->out, len_in = (float)a->in;
  switch (coord) {
    case IR_COORD_ASYMMETRIC: return x / scale;
    case IR_COORD_PYTORCH_HALF_PIXEL: return len_out > 1.0f ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case IR_COORD_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / scale;
    case IR_COORD_ALIGN_CORNERS: return len_out == 1.0f ? 0.0f : x * (len_in - 1.0f) / (len_out - 1.0f);
    case IR_COORD_TF_CROP_AND_RESIZE: {
      const float start = a->roi_start, end = a->roi_end;
      /* the product kept apart from the sum (ir_fmul): an output whose coordinate lands exactly on the
       * input's first or last pixel must be inside on the device as on the host */
      if (len_out > 1.0f) return ir_fmul(start, len_in - 1.0f) + (x * (end - start) * (len_in - 1.0f)) / (len_out - 1.0f);
      return (float)(0.5 * (double)(start + end) * (double)(len_in - 1.0f));
    }
    case IR_COORD_HALF_PIXEL_SYMMETRIC: {
      /* half_pixel around the centre: when out is a rounded in * scale, the sampling grid is
       * shifted so that it stays symmetric about the input's centre */
      const float resized_width = scale * len_in;
      const float adjustment = len_out / resized_width;
      const float center = len_in / 2.0f;
      const float offset = center * (1.0f - adjustment);
      return (float)((double)offset + ((double)x + 0.5) / (double)scale - 0.5);
    }
    default: return (x + 0.5f) / scale - 0.5f; /* half_pixel */
  }
}

/* Whether coordinate c lies outside the input (tf_crop_and_resize then writes the extrapolation
 * value instead of sampling). */
IR_RESIZE_FN int ir_resize_outside(const ir_resize_axis* a, int coord, float c) {
  return coord == IR_COORD_TF_CROP_AND_RESIZE && (c < 0.0f || c > (float)(a->in - 1));
}

/* Whether coordinate c counts as a rounding tie (halfway between two input indices). ONNX Runtime's
 * CPU kernels (1.29 on) take any c within 1e-6 of a half as a tie, so that a position that is a
 * half in exact arithmetic stays one after float rounding (sizes 7 -> 4 asymmetric: 2 / (4/7.f) is
 * 3.4999998, read as 3.5). c - floor(c) and its difference to 0.5 are exact in float here. */
IR_RESIZE_FN int ir_resize_is_tie(float c) {
  const float below_half = c - floorf(c) - 0.5f;
  return fabsf(below_half) <= 1e-6f;
}

/* The input index nearest_mode picks for coordinate c, clamped into the input. */
IR_RESIZE_FN int64_t ir_resize_nearest_index(const ir_resize_axis* a, int nearest, float c) {
  int64_t i;
  switch (nearest) {
    case IR_NEAREST_ROUND_PREFER_CEIL: /* ties up, the rest to the nearest */
      i = ir_resize_is_tie(c) ? (int64_t)floorf(c) + 1 : (int64_t)roundf(c);
      break;
    case IR_NEAREST_FLOOR: i = (int64_t)floorf(c); break;
    case IR_NEAREST_CEIL: i = (int64_t)ceilf(c); break;
    case IR_NEAREST_SIMPLE: i = a->scale < 1.0f ? (int64_t)ceilf(c) : (int64_t)c; break;
    default: /* round_prefer_floor: ties down */
      i = ir_resize_is_tie(c) ? (int64_t)floorf(c) : (int64_t)roundf(c);
      break;
  }
  if (i > a->in - 1) i = a->in - 1;
  if (i < 0) i = 0;
  return i;
}

/* Linear taps: the two input indices around coordinate c (clamped into the input) and their
 * weights; when both taps are the same index each weighs one half. */
IR_RESIZE_FN void ir_resize_linear_taps(const ir_resize_axis* a, float c, int64_t* i0, int64_t* i1, float* w0,
                                        float* w1) {
  const float last = (float)(a->in - 1);
  c = c < 0.0f ? 0.0f : c > last ? last : c;
  int64_t lo = (int64_t)c;
  if (lo > a->in - 1) lo = a->in - 1;
  int64_t hi = lo + 1 < a->in - 1 ? lo + 1 : a->in - 1;
  float d_lo = fabsf(c - (float)lo), d_hi = fabsf(c - (float)hi);
  if (lo == hi) d_lo = d_hi = 0.5f;
  *i0 = lo;
  *i1 = hi;
  *w0 = d_hi; /* the nearer tap weighs more: the weight of lo is the distance to hi */
  *w1 = d_lo;
}

/* Cubic taps: input indices floor(c)-1 .. floor(c)+2 (clamped into the input, i.e. edge pixels
 * repeat) and Keys' cubic convolution weights with coefficient a. With exclude_outside, taps outside
 * the input weigh 0 and the others are renormalized to sum to 1. */
IR_RESIZE_FN void ir_resize_cubic_taps(const ir_resize_axis* ax, float cubic_a, int exclude_outside, float c,
                                       int64_t idx[4], float w[4]) {
  const float base = floorf(c);
  const float s = fabsf(c - base);
  const float a = cubic_a;
  const float s1 = s + 1.0f, t = 1.0f - s, t1 = 2.0f - s;
  w[0] = ((a * s1 - 5.0f * a) * s1 + 8.0f * a) * s1 - 4.0f * a;
  w[1] = ((a + 2.0f) * s - (a + 3.0f)) * s * s + 1.0f;
  w[2] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[3] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
  const int64_t first = (int64_t)base - 1;
  float sum = 0.0f;
  for (int k = 0; k < 4; k++) {
    int64_t i = first + k;
    if (exclude_outside && (i < 0 || i >= ax->in)) w[k] = 0.0f;
    sum += w[k];
    idx[k] = i < 0 ? 0 : i > ax->in - 1 ? ax->in - 1 : i;
  }
  if (exclude_outside)
    for (int k = 0; k < 4; k++) w[k] /= sum;
}

/* The taps of output index o along axis a of a general geometry (g->general): their count (1 for an
 * axis kept as it is and for nearest, 2 for linear, 4 for cubic), input indices and weights; 0 when
 * the coordinate lies outside the input under tf_crop_and_resize (the output is then the
 * extrapolation value). */
IR_RESIZE_FN int ir_resize_axis_taps(const ir_resize_geom* g, const ir_resize_axis* a, int64_t o, int64_t idx[4],
                                     float w[4]) {
  if (ir_resize_axis_kept(a)) {
    idx[0] = o;
    w[0] = 1.0f;
    return 1;
  }
  const float c = ir_resize_source_coord(a, g->coord, o);
  if (ir_resize_outside(a, g->coord, c)) return 0;
  if (g->mode == IR_RESIZE_NEAREST) {
    idx[0] = ir_resize_nearest_index(a, g->nearest, c);
    w[0] = 1.0f;
    return 1;
  }
  if (g->mode == IR_RESIZE_LINEAR) {
    ir_resize_linear_taps(a, c, &idx[0], &idx[1], &w[0], &w[1]);
    return 2;
  }
  ir_resize_cubic_taps(a, g->cubic_a, g->exclude_outside, c, idx, w);
  return 4;
}


/* One RoiAlign region: its top-left corner and bin sizes in input pixels and the sample grid of
 * each bin, in float32 as ONNX Runtime's CPU kernel computes them. */
typedef struct ir_roi_box {
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
} ir_roi_box;

/* The box of roi (x1, y1, x2, y2): scaled by spatial_scale, shifted by half a pixel (half_pixel),
 * or at least 1 pixel on each side (output_half_pixel); sampling_ratio samples per bin along each
 * dim, or (0) ceil(roi size / output size). */
IR_RESIZE_FN ir_roi_box ir_roi_align_box(const float roi[4], float spatial_scale, int half_pixel, int64_t out_h,
                                         int64_t out_w, int64_t sampling_ratio) {
  ir_roi_box b;
  const float offset = half_pixel ? 0.5f : 0.0f;
  b.start_w = ir_fmul(roi[0], spatial_scale) - offset;
  b.start_h = ir_fmul(roi[1], spatial_scale) - offset;
  float width = ir_fmul(roi[2], spatial_scale) - offset - b.start_w;
  float height = ir_fmul(roi[3], spatial_scale) - offset - b.start_h;
  if (!half_pixel) {
    width = width > 1.0f ? width : 1.0f;
    height = height > 1.0f ? height : 1.0f;
  }
  b.bin_h = height / (float)out_h;
  b.bin_w = width / (float)out_w;
  b.grid_h = sampling_ratio > 0 ? sampling_ratio : (int64_t)ceilf(height / (float)out_h);
  b.grid_w = sampling_ratio > 0 ? sampling_ratio : (int64_t)ceilf(width / (float)out_w);
  return b;
}

/* Sample i of grid samples within bin p of a box edge at start with bins of bin. */
IR_RESIZE_FN float ir_roi_align_coord(float start, int64_t p, float bin, int64_t i, int64_t grid) {
  return start + ir_fmul((float)p, bin) + ir_fmul((float)i + 0.5f, bin) / (float)grid;
}

/* The bilinear taps of point (y, x) in a height x width plane: 0 (no taps, the sample counts as 0)
 * when it lies more than a pixel outside; otherwise the four offsets and weights, the point clamped
 * to the plane (ONNX Runtime's rule). */
IR_RESIZE_FN int ir_roi_align_taps(float y, float x, int64_t height, int64_t width, int64_t pos[4], float w[4]) {
  if (y < -1.0f || y > (float)height || x < -1.0f || x > (float)width) return 0;
  if (y <= 0.0f) y = 0.0f;
  if (x <= 0.0f) x = 0.0f;
  int64_t y_low = (int64_t)y, x_low = (int64_t)x, y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = (float)y_low;
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = (float)x_low;
  } else {
    x_high = x_low + 1;
  }
  const float ly = y - (float)y_low, lx = x - (float)x_low, hy = 1.0f - ly, hx = 1.0f - lx;
  pos[0] = y_low * width + x_low;
  pos[1] = y_low * width + x_high;
  pos[2] = y_high * width + x_low;
  pos[3] = y_high * width + x_high;
  w[0] = ir_fmul(hy, hx);
  w[1] = ir_fmul(hy, lx);
  w[2] = ir_fmul(ly, hx);
  w[3] = ir_fmul(ly, lx);
  return 1;
}

/* DepthToSpace (to_space = 1, CRD or DCR channel order) and SpaceToDepth (to_space = 0): the
 * input element that output element i copies. out_dims is the output shape [N, C, H, W]; with
 * nhwc_input (DepthToSpace only) the input is laid out [N, H, W, C]. */
IR_RESIZE_FN int64_t ir_space_depth_source(int to_space, int crd, int nhwc_input, int64_t b, const int64_t out_dims[4],
                                           int64_t i) {
  const int64_t out_c = out_dims[1], out_h = out_dims[2], out_w = out_dims[3];
  const int64_t w_o = i % out_w;
  int64_t rest = i / out_w;
  const int64_t h_o = rest % out_h;
  rest /= out_h;
  const int64_t c_o = rest % out_c;
  const int64_t n = rest / out_c;
  if (to_space) {
    const int64_t in_c = out_c * b * b, in_h = out_h / b, in_w = out_w / b;
    const int64_t bi = h_o % b, bj = w_o % b;
    /* DCR: the block offset is the outer part of the channel index, CRD: the inner part */
    const int64_t c = crd ? c_o * b * b + bi * b + bj : (bi * b + bj) * out_c + c_o;
    if (nhwc_input) return ((n * in_h + h_o / b) * in_w + w_o / b) * in_c + c;
    return ((n * in_c + c) * in_h + h_o / b) * in_w + w_o / b;
  }
  const int64_t in_c = out_c / (b * b), in_h = out_h * b, in_w = out_w * b;
  const int64_t block = c_o / in_c, c = c_o % in_c;
  return ((n * in_c + c) * in_h + h_o * b + block / b) * in_w + w_o * b + block % b;
}

#ifndef __CUDACC__
#include "ir/graph.h"

/* The geometry of a Resize or Upsample node for input shape x: output shape, per-axis scales and
 * roi, exactly as ONNX Runtime derives them (output size floor(in * scale) in float arithmetic
 * from scales; scale out/in from sizes; keep_aspect_ratio_policy applied). Errors name the
 * offending dims. */
gfx_status ir_resize_geometry(const ir_node* node, const gfx_shape* x, ir_resize_geom* g, gfx_shape* out);
#endif

#endif

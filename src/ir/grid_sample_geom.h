/* gfxep — GridSample geometry and sampling taps, shared by the IR (which checks the shapes), the
 * reference backend and the CUDA kernels; the Vulkan shader (shaders/grid_sample.comp) mirrors the
 * same float arithmetic in GLSL.
 *
 * An output pixel (n, oy, ox) reads grid[n, oy, ox] = (gx, gy), normalized to [-1, 1], maps it to
 * an input location (x, y) and interpolates the input there. How ONNX Runtime's CPU kernel does it,
 * and so how gfxep does it:
 *  - denormalize in float: align_corners ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
 *  - nearest: the pixel at (nearbyint(y), nearbyint(x)), halves to even;
 *    linear: taps floor(c) and floor(c) + 1 with weights (floor(c) + 1 - c) and (c - floor(c));
 *    cubic: taps floor(c) - 1 .. floor(c) + 2 with Keys' weights for a = -0.75 at |c - floor(c)|;
 *  - padding applies to each tap on its own, never to the location: zeros reads 0 outside the
 *    input, border the nearest edge pixel, reflection the tap mirrored about the borders (-0.5 and
 *    len - 0.5 without align_corners, 0 and len - 1 with it) as often as it takes to land inside;
 *  - out = sum_r wy[r] * (sum_c wx[c] * pixel(row r, column c)), summed in that order.
 * Locations are clamped to +-2^22 pixels first (the kernels keep every index and mirrored tap exact
 * in float and int32 that way; a grid reaching that far out reads only padding anyway). The one
 * reflection ONNX Runtime cannot do (align_corners with an input dim of 1: the borders coincide)
 * reads the only pixel there is.
 *
 * This header compiles as C11 and as CUDA C++: it includes nothing but <stdint.h> and <math.h>
 * in that case (the part after `#ifndef __CUDACC__` is for the C side only).
 */
#ifndef GFXEP_IR_GRID_SAMPLE_GEOM_H
#define GFXEP_IR_GRID_SAMPLE_GEOM_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define IR_GRID_FN static inline __host__ __device__
#else
#define IR_GRID_FN static inline
#endif

/* The denormalization rounds after every operation, as on the CPU: a contracted multiply-add would
 * move a location that is a rounding tie (nearest mode) by an ulp. */
#if defined(__CUDA_ARCH__)
#define IR_GRID_MUL(a, b) __fmul_rn((a), (b))
#define IR_GRID_ADD(a, b) __fadd_rn((a), (b))
#else
#define IR_GRID_MUL(a, b) ((a) * (b))
#define IR_GRID_ADD(a, b) ((a) + (b))
#endif

/* mode (ir_grid_sample_params.mode) */
enum { IR_GRID_NEAREST = 0, IR_GRID_LINEAR = 1, IR_GRID_CUBIC = 2 };
/* padding_mode */
enum { IR_GRID_PAD_ZEROS = 0, IR_GRID_PAD_BORDER = 1, IR_GRID_PAD_REFLECTION = 2 };

#define IR_GRID_COORD_LIMIT 4194304.0f /* 2^22 */

/* Everything a kernel needs, passed to the CUDA kernels by value: X is [n, c, in_h, in_w], grid
 * [n, out_h, out_w, 2] and the output [n, c, out_h, out_w]. */
typedef struct ir_grid_geom {
  int64_t n, c, in_h, in_w, out_h, out_w;
  int mode, padding, align_corners;
} ir_grid_geom;

/* The input location of normalized coordinate v along an axis of len pixels (float throughout, as
 * ONNX Runtime computes it), clamped to +-2^22; NaN goes to the low end. */
IR_GRID_FN float ir_grid_denormalize(float v, int64_t len, int align_corners) {
  const float c = align_corners ? IR_GRID_MUL((v + 1.0f) / 2.0f, (float)(len - 1))
                                : IR_GRID_ADD(IR_GRID_MUL(v + 1.0f, (float)len), -1.0f) / 2.0f;
  if (!(c >= -IR_GRID_COORD_LIMIT)) return -IR_GRID_COORD_LIMIT;
  return c > IR_GRID_COORD_LIMIT ? IR_GRID_COORD_LIMIT : c;
}

/* Tap i (an integer) mirrored about lo and hi until it lies between them: ONNX Runtime's
 * arithmetic, whose results are whole numbers for the borders above. */
IR_GRID_FN float ir_grid_reflect(float v, float lo, float hi) {
  const float range = hi - lo;
  if (v < lo) {
    const float d = lo - v;
    const int k = (int)(d / range);
    const float r = d - (float)k * range;
    return k % 2 == 0 ? lo + r : hi - r;
  }
  if (v > hi) {
    const float d = v - hi;
    const int k = (int)(d / range);
    const float r = d - (float)k * range;
    return k % 2 == 0 ? hi - r : lo + r;
  }
  return v;
}

/* The input index tap i of an axis of len pixels reads after padding, or -1 for a zero (zeros
 * padding outside the input). */
IR_GRID_FN int64_t ir_grid_tap(const ir_grid_geom* g, int64_t i, int64_t len) {
  if (i >= 0 && i < len) return i;
  if (g->padding == IR_GRID_PAD_ZEROS || len <= 0) return -1;
  if (g->padding == IR_GRID_PAD_BORDER) return i < 0 ? 0 : len - 1;
  const float lo = g->align_corners ? 0.0f : -0.5f;
  const float hi = g->align_corners ? (float)(len - 1) : (float)len - 0.5f;
  if (!(hi > lo)) return 0; /* a single pixel with align_corners: nothing to mirror */
  int64_t r = (int64_t)ir_grid_reflect((float)i, lo, hi);
  return r < 0 ? 0 : r > len - 1 ? len - 1 : r; /* already so; kept for memory safety */
}

/* Keys' cubic convolution weights (a = -0.75) of the taps at distances 1 + t, t, 1 - t, 2 - t. */
IR_GRID_FN void ir_grid_cubic_weights(float t, float w[4]) {
  const float a = -0.75f;
  t = fabsf(t);
  w[0] = ((a * (t + 1.0f) - 5.0f * a) * (t + 1.0f) + 8.0f * a) * (t + 1.0f) - 4.0f * a;
  w[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[2] = ((a + 2.0f) * (1.0f - t) - (a + 3.0f)) * (1.0f - t) * (1.0f - t) + 1.0f;
  w[3] = ((a * (2.0f - t) - 5.0f * a) * (2.0f - t) + 8.0f * a) * (2.0f - t) - 4.0f * a;
}

/* The taps of location c along an axis of len pixels: their input indices (-1: reads 0) and
 * weights; returns how many (1 nearest, 2 linear, 4 cubic). */
IR_GRID_FN int ir_grid_axis_taps(const ir_grid_geom* g, float c, int64_t len, int64_t idx[4], float w[4]) {
  if (g->mode == IR_GRID_NEAREST) {
    idx[0] = ir_grid_tap(g, (int64_t)rintf(c), len); /* rintf: halves to even, as nearbyint */
    w[0] = 1.0f;
    return 1;
  }
  const float f = floorf(c);
  const int64_t first = (int64_t)f;
  if (g->mode == IR_GRID_LINEAR) {
    idx[0] = ir_grid_tap(g, first, len);
    idx[1] = ir_grid_tap(g, first + 1, len);
    w[0] = (float)(first + 1) - c;
    w[1] = c - f;
    return 2;
  }
  for (int k = 0; k < 4; k++) idx[k] = ir_grid_tap(g, first - 1 + k, len);
  /* ONNX Runtime's c - (floor(c) - 1) - 1, in float */
  ir_grid_cubic_weights((c - (float)(first - 1)) - 1.0f, w);
  return 4;
}

#ifndef __CUDACC__
#include "ir/graph.h"

/* The geometry of a GridSample node for input shape x and grid shape grid, and its output shape;
 * an error names the shapes that do not fit together. */
gfx_status ir_grid_sample_geometry(const ir_node* node, const gfx_shape* x, const gfx_shape* grid, ir_grid_geom* g,
                                   gfx_shape* out);
#endif

#endif

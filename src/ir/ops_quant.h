/* gfxep — what the backends share of QuantizeLinear and DequantizeLinear (ir/ops_quant.c): the
 * geometry for concrete shapes and the arithmetic, written once so that every backend rounds alike.
 */
#ifndef GFXEP_IR_OPS_QUANT_H
#define GFXEP_IR_OPS_QUANT_H

#include <math.h>
#include <stdint.h>

#include "ir/graph.h"

/* x as [outer, len, inner] around the axis; the scale and zero point entry of element e is
 * (e / inner) % len when per_axis, else 0. */
typedef struct ir_quant_geom {
  int64_t count, outer, len, inner;
  int per_axis;
} ir_quant_geom;

/* scale (and zero_point, when not NULL) must hold one value (rank 0 or 1) or, per axis, x's extent
 * along the axis (rank 1); INVALID_ARGUMENT otherwise. */
gfx_status ir_quant_geometry(const ir_quant_params* p, const gfx_shape* x, const gfx_shape* scale,
                             const gfx_shape* zero_point, ir_quant_geom* g);

/* QuantizeLinear of one value, as ONNX Runtime's CPU kernels compute it: x / scale in float32
 * arithmetic (not double, so that a quotient near a half rounds as there), rounded half to even,
 * plus the zero point, saturated to [lo, hi]. NaN gives the zero point. */
static inline int32_t ir_quantize(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi) {
  const float q = x / scale;
  if (q != q) return zero_point;
  const float r = rintf(q) + (float)zero_point;
  return r <= (float)lo ? lo : r >= (float)hi ? hi : (int32_t)r;
}

/* DequantizeLinear of one value: (x - zero_point) as float32 times the scale, in float32. */
static inline float ir_dequantize(int64_t x, float scale, int64_t zero_point) {
  return (float)(x - zero_point) * scale;
}

#endif

// gfxep Vulkan backend — QuantizeLinear and DequantizeLinear (vk_quant.c), as ir_quantize and
// ir_dequantize (src/ir/ops_quant.h) compute them in float32.
//
// One source per float type (-DT_F16: float16 x / y and scale, moved as 16-bit words and converted
// bit by bit, so no float16 arithmetic and no driver rounding mode is involved). Specialization
// constants pick the direction, the integer type (int8, uint8, int32) and whether a zero point is
// there. The scale and zero point entry of element e is (e / inner) % len (len = inner = 1 per
// tensor). Tensors below 2^32 elements.
//
// Vulkan lets a float division be off by a few ulps, and a quotient next to a rounding half must
// land on the reference's integer: the quotient is corrected to the correctly rounded one by exact
// residuals (fma, `precise`). Dequantize's (x - zero point) is formed without 64-bit integers: its
// magnitude fits a uint, converted to float with one rounding, as the C code's int64 -> float.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

#include "div_rn.glsl"
#include "half_bits.glsl"

#define Q_I8 0
#define Q_U8 1
#define Q_I32 2

layout(local_size_x = 256) in;
layout(constant_id = 0) const int QUANTIZE = 1;
layout(constant_id = 1) const int QTYPE = Q_I8;
layout(constant_id = 2) const int HAS_ZP = 0;

layout(push_constant) uniform Push {
  uvec2 x_addr, scale_addr, zp_addr, y_addr;
  uint count, len, inner;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 1) buffer BI8 { int8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer BU8 { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v[]; };

float load_float(uvec2 a, uint i) {
#ifdef T_F16
  return uintBitsToFloat(f16_to_f32_bits(uint(B16(a).v[i])));
#else
  return uintBitsToFloat(B32(a).v[i]);
#endif
}

void store_float(uvec2 a, uint i, float v) {
#ifdef T_F16
  B16(a).v[i] = uint16_t(f32_to_f16_bits(floatBitsToUint(v)));
#else
  B32(a).v[i] = floatBitsToUint(v);
#endif
}

int load_int(uvec2 a, uint i) {
  if (QTYPE == Q_I8) return int(BI8(a).v[i]);
  if (QTYPE == Q_U8) return int(uint(BU8(a).v[i]));
  return int(B32(a).v[i]);
}

void quantize(uint e, uint c) {
  const int z = HAS_ZP != 0 ? load_int(pc.zp_addr, c) : 0;
  const float q = div_rn(load_float(pc.x_addr, e), load_float(pc.scale_addr, c));
  int v;
  if (isnan(q)) {
    v = z;
  } else {
    precise float r = roundEven(q) + float(z);
    const int lo = QTYPE == Q_I8 ? -128 : 0, hi = QTYPE == Q_I8 ? 127 : 255;
    v = r <= float(lo) ? lo : r >= float(hi) ? hi : int(r);
  }
  if (QTYPE == Q_I8) BI8(pc.y_addr).v[e] = int8_t(v);
  else BU8(pc.y_addr).v[e] = uint8_t(v);
}

void dequantize(uint e, uint c) {
  const int x = load_int(pc.x_addr, e), z = HAS_ZP != 0 ? load_int(pc.zp_addr, c) : 0;
  // |x - z| < 2^32: as a uint, then signed, one rounding to float
  const float d = x >= z ? float(uint(x) - uint(z)) : -float(uint(z) - uint(x));
  precise float y = d * load_float(pc.scale_addr, c);
  store_float(pc.y_addr, e, y);
}

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    const uint c = e / pc.inner % pc.len;
    if (QUANTIZE != 0) quantize(e, c);
    else dequantize(e, c);
  }
}

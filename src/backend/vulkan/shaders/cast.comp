// gfxep Vulkan backend — Cast among float32, float16, bfloat16, int32, int64 and bool (vk_misc.c).
//
// One shader; the source and destination types are specialization constants (CAST_* below, the
// codes vk_misc.c passes). Every conversion follows the reference's (src/backend/ref/ref_elementwise.c,
// cast_element) exactly, in integer arithmetic where rounding matters, so no driver rounding mode is
// relied on: float16 and bfloat16 are converted bit by bit with round-to-nearest-even, as
// gfx_float_to_half / gfx_float_to_bf16 do (src/core/half.h); float to integer truncates toward
// zero and gives the type's minimum for NaN and out-of-range values (ref's float_to_int); integer to
// float goes through float32 (one rounding, as static_cast<float>); int32 keeps the low 32 bits;
// bool is v != 0 (NaN is true). 16-bit values are moved as uint16_t (storage only, no float16
// arithmetic), bool as bytes; int64 needs shaderInt64. Tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

#define CAST_F32 0
#define CAST_F16 1
#define CAST_BF16 2
#define CAST_I32 3
#define CAST_I64 4
#define CAST_BOOL 5

layout(local_size_x = 256) in;
layout(constant_id = 0) const int SRC = CAST_F32;
layout(constant_id = 1) const int DST = CAST_F32;

layout(push_constant) uniform Push {
  uvec2 src_addr, dst_addr;
  uint count;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 1) buffer B8 { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer B16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer B32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer B64 { int64_t v[]; };

#include "half_bits.glsl"


void store_float_bits(uint i, uint bits) {
  if (DST == CAST_F32) B32(pc.dst_addr).v[i] = bits;
  else if (DST == CAST_F16) B16(pc.dst_addr).v[i] = uint16_t(f32_to_f16_bits(bits));
  else if (DST == CAST_BF16) B16(pc.dst_addr).v[i] = uint16_t(f32_to_bf16_bits(bits));
}

void main() {
  const bool src_float = SRC == CAST_F32 || SRC == CAST_F16 || SRC == CAST_BF16;
  const bool dst_float = DST == CAST_F32 || DST == CAST_F16 || DST == CAST_BF16;
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < count; i = count - i > step ? i + step : count) {
    if (src_float) {
      uint bits;
      if (SRC == CAST_F32) bits = B32(pc.src_addr).v[i];
      else if (SRC == CAST_F16) bits = f16_to_f32_bits(uint(B16(pc.src_addr).v[i]));
      else bits = uint(B16(pc.src_addr).v[i]) << 16;
      if (dst_float) {
        store_float_bits(i, bits);
      } else if (DST == CAST_BOOL) {
        B8(pc.dst_addr).v[i] = uint8_t((bits & 0x7fffffffu) != 0u ? 1u : 0u);
      } else {
        const float f = uintBitsToFloat(bits);
        if (DST == CAST_I32)
          B32(pc.dst_addr).v[i] = f >= -2147483648.0 && f < 2147483648.0 ? uint(int(f)) : 0x80000000u;
        else
          B64(pc.dst_addr).v[i] = f >= -9223372036854775808.0 && f < 9223372036854775808.0
                                      ? int64_t(f) : int64_t(0x8000000000000000ul);
      }
    } else {
      int64_t v;
      if (SRC == CAST_I32) v = int64_t(int(B32(pc.src_addr).v[i]));
      else if (SRC == CAST_I64) v = B64(pc.src_addr).v[i];
      else v = uint(B8(pc.src_addr).v[i]) != 0u ? 1l : 0l;
      if (dst_float) store_float_bits(i, floatBitsToUint(float(v)));
      else if (DST == CAST_I32) B32(pc.dst_addr).v[i] = uint(uint64_t(v) & 0xfffffffful);
      else if (DST == CAST_I64) B64(pc.dst_addr).v[i] = v;
      else B8(pc.dst_addr).v[i] = uint8_t(v != 0l ? 1u : 0u);
    }
  }
}

// gfxep Vulkan backend — CumSum (vk_index.c): the running sums along the middle dim of the IR's
// [outer, len, inner] view (ir/ops_index.h), exclusive and/or reverse, as ref_index.c's
// ref_run_cumsum: one invocation per line, its elements in order.
//
// The reference sums in double; a Vulkan device need not have float64, so float types carry the
// sum as an unevaluated pair hi + lo of float32 values (each addition an error-free TwoSum, then
// renormalized): about 48 significant bits, so each output, hi + lo rounded once to float32 and
// then to the element type, is the reference's value or one unit of float32 away. -DT_F32,
// -DT_F16, -DT_BF16 (bits converted exactly, narrowed to nearest even); -DT_I32 and -DT_I64 sum
// with wrap-around. 32-bit offsets: tensors below 2^32 elements.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define ALIGN 2
#define FLOAT_SUM
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define ALIGN 2
#define FLOAT_SUM
#define LOAD(x) uintBitsToFloat(uint(x) << 16)
#define STORE(x) uint16_t(bf16_bits(x))
uint bf16_bits(float f) {
  const uint b = floatBitsToUint(f);
  if (isnan(f)) return (b >> 16) | 0x40u;
  return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
}
#elif defined(T_I64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ELEM int64_t
#define ALIGN 8
#elif defined(T_I32)
#define ELEM int
#define ALIGN 4
#else
#define ELEM float
#define ALIGN 4
#define FLOAT_SUM
#endif
#ifndef LOAD
#define LOAD(x) x
#define STORE(x) ELEM(x)
#endif

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
  uvec2 x_addr, y_addr;
  uint lines, len, inner, exclusive, reverse;
} pc;

layout(buffer_reference, std430, buffer_reference_align = ALIGN) readonly buffer In { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ALIGN) writeonly buffer Out { ELEM v[]; };

#if defined(FLOAT_SUM)
// (hi, lo) += v: TwoSum gives hi + v exactly as s + e; lo absorbs e, then one Fast2Sum renormalizes
// (|s| >= |lo + e| but for cancellations that leave both tiny). `precise`: no reassociation.
void add_to(inout float hi, inout float lo, float v) {
  precise float s = hi + v;
  precise float bv = s - hi;
  precise float e = (hi - (s - bv)) + (v - bv);
  precise float t = lo + e;
  precise float h = s + t;
  precise float l = t - (h - s);
  hi = h;
  lo = l;
}
#endif

void main() {
  const uint lines = pc.lines;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint line = gl_GlobalInvocationID.x; line < lines; line = lines - line > step ? line + step : lines) {
    const uint base = line / pc.inner * pc.len * pc.inner + line % pc.inner;
#if defined(FLOAT_SUM)
    float hi = 0.0, lo = 0.0;
#elif defined(T_I64)
    int64_t sum = 0;
#else
    int sum = 0;
#endif
    for (uint i = 0u; i < pc.len; i++) {
      const uint at = base + (pc.reverse != 0u ? pc.len - 1u - i : i) * pc.inner;
#if defined(FLOAT_SUM)
      const float v = float(LOAD(In(pc.x_addr).v[at]));
      if (pc.exclusive == 0u) add_to(hi, lo, v);
      Out(pc.y_addr).v[at] = STORE(hi + lo);
      if (pc.exclusive != 0u) add_to(hi, lo, v);
#else
      const ELEM v = In(pc.x_addr).v[at];
      if (pc.exclusive == 0u) sum += v; // integer addition wraps
      Out(pc.y_addr).v[at] = sum;
      if (pc.exclusive != 0u) sum += v;
#endif
    }
  }
}

// gfxep Vulkan backend — Not, And, Or, Xor (-DLOGIC, bool bytes) and Mod (-DT_F32, -DT_F16, -DT_BF16,
// -DT_I32, -DT_I64) with numpy broadcasting of two operands (vk_index.c), as ref_index.c computes them.
//
// OP (a specialization constant) is the logic op (0 Not, 1 And, 2 Or, 3 Xor) or Mod's fmod flag.
// With a geometry block (by address) each operand has an element stride per output dim, 0 where it
// is broadcast; without one (geom_addr 0) both have the output's shape. 32-bit indices: tensors below
// 2^32 elements (vk_index.c refuses larger ones).
//
// Integer Mod: a divisor of 0 or -1 gives 0 (the reference's rule: no trap, no overflow of the
// minimum mod -1); the remainder is taken on magnitudes in unsigned arithmetic, since GLSL leaves %
// of negative operands undefined. Float Mod is C fmod, computed exactly: the largest multiple
// y * 2^k not above the running remainder is subtracted (exact by Sterbenz's lemma) until the
// remainder is below |y|; float16 and bfloat16 compute in float32, where their fmod is exact too.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#if defined(LOGIC)
#extension GL_EXT_shader_8bit_storage : require
#define ELEM uint8_t
#define WIDE uint // bytes are only converted, never computed on (no shaderInt8 needed)
#define ALIGN 1
#elif defined(T_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define ALIGN 2
#elif defined(T_BF16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#define WIDE float
#define ALIGN 2
// bfloat16 as bits: widened exactly, narrowed to nearest even (NaN stays a quiet NaN), as the
// other backends' conversions do
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
#define UELEM uint64_t
#define ALIGN 8
#elif defined(T_I32)
#define ELEM int
#define UELEM uint
#define ALIGN 4
#else
#define ELEM float
#define ALIGN 4
#endif
#ifndef WIDE
#define WIDE ELEM
#endif
#ifndef LOAD
#define LOAD(x) WIDE(x)
#define STORE(x) ELEM(x)
#endif

#define MAX_RANK 8
layout(local_size_x = 256) in;
layout(constant_id = 0) const int OP = 0;

layout(push_constant) uniform Push {
  uvec2 a_addr, b_addr, y_addr, geom_addr;
  uint count;
} pc;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Geom {
  uint rank;
  uint dims[MAX_RANK];
  uint strides[2 * MAX_RANK]; // a's, b's
};
layout(buffer_reference, std430, buffer_reference_align = ALIGN) readonly buffer Src { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ALIGN) writeonly buffer Dst { ELEM v[]; };

#if defined(LOGIC)
WIDE compute(WIDE a, WIDE b) {
  const bool x = a != 0u, y = b != 0u;
  const bool r = OP == 1 ? x && y : OP == 2 ? x || y : OP == 3 ? x != y : !x;
  return r ? 1u : 0u;
}
#elif defined(T_I32) || defined(T_I64)
WIDE compute(WIDE a, WIDE b) {
  if (b == ELEM(0) || b == ELEM(-1)) return ELEM(0);
  // negation wraps, so the minimum's magnitude still reads right as unsigned
  const UELEM m = UELEM(a < ELEM(0) ? -a : a) % UELEM(b < ELEM(0) ? -b : b);
  ELEM r = a < ELEM(0) ? -ELEM(m) : ELEM(m);
  if (OP == 0 && r != ELEM(0) && (r < ELEM(0)) != (b < ELEM(0))) r += b;
  return r;
}
#else // float types: in float32
float fmod_exact(float x, float y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == 0.0) return uintBitsToFloat(0x7fc00000u);
  if (isinf(y)) return x;
  const float ay = abs(y);
  float r = abs(x);
  int ey;
  frexp(ay, ey);
  // at most one step per binade between x and y (under 300 for any float)
  for (int guard = 0; r >= ay && guard < 300; guard++) {
    int er;
    frexp(r, er);
    float t = ldexp(ay, er - ey);
    if (t > r) t = ldexp(ay, er - ey - 1);
    r -= t;
  }
  return x < 0.0 ? -r : r;
}
WIDE compute(WIDE a, WIDE b) { return WIDE(fmod_exact(float(a), float(b))); }
#endif

void main() {
  const uint count = pc.count;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const bool strided = pc.geom_addr != uvec2(0);
  for (uint e = gl_GlobalInvocationID.x; e < count; e = count - e > step ? e + step : count) {
    uint oa = e, ob = e;
    if (strided) {
      Geom g = Geom(pc.geom_addr);
      uint rest = e;
      oa = ob = 0u;
      for (int k = int(g.rank) - 1; k >= 0; k--) {
        const uint n = g.dims[k];
        const uint i = rest % n;
        rest /= n;
        oa += i * g.strides[k];
        ob += i * g.strides[MAX_RANK + k];
      }
    }
    const WIDE a = LOAD(Src(pc.a_addr).v[oa]);
    const WIDE b = pc.b_addr == uvec2(0) ? a : LOAD(Src(pc.b_addr).v[ob]); // Not has one operand
    Dst(pc.y_addr).v[e] = STORE(compute(a, b));
  }
}

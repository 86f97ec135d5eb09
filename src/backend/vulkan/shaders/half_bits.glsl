// gfxep Vulkan backend — float16 <-> float32 bit conversions in integer arithmetic, as src/core/half.h
// computes them, so that no driver rounding mode is relied on (cast.comp, quant.comp).

// gfx_half_to_float (src/core/half.h): exact
uint f16_to_f32_bits(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) return m == 0u ? sign : sign | floatBitsToUint(float(m) * 5.9604644775390625e-8); // m * 2^-24
  if (e == 31u) return sign | 0x7f800000u | (m << 13);
  return sign | ((e + 112u) << 23) | (m << 13);
}

// gfx_float_to_half (src/core/half.h), step for step: round to nearest even, NaN keeps the quiet bit
uint f32_to_f16_bits(uint u) {
  const uint sign = (u >> 16) & 0x8000u;
  const uint a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);
  if (a >= 0x477ff000u) return sign | 0x7c00u; // rounds to >= 65520: overflow
  if (a < 0x38800000u) {
    // subnormal or zero: a * 2^24 rounded to nearest even, in integers (the C code's float steps
    // are exact there too)
    if (a < 0x33000000u) return sign; // below 2^-25 (2^-25 itself ties to 0)
    const uint e = a >> 23;          // 102 .. 112
    const uint m = (a & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - e;     // 14 .. 24
    uint q = m >> shift;
    const uint rem = m & ((1u << shift) - 1u), half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) q++;
    return sign | q;
  }
  uint h = (((a >> 23) - 112u) << 10) | ((a & 0x7fffffu) >> 13);
  const uint rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) != 0u)) h++; // may carry into the exponent
  return sign | h;
}

// gfx_float_to_bf16 (src/core/half.h): round to nearest even, NaN stays a quiet NaN
uint f32_to_bf16_bits(uint u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return ((u >> 16) | 0x40u) & 0xffffu;
  return ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) & 0xffffu;
}

// bfloat16 to float32: exact
float bf16_to_f32(uint b) { return uintBitsToFloat(b << 16); }

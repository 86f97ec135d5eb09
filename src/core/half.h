/* gfxep — IEEE 754 binary16 (float16) and bfloat16 conversions for host code.
 *
 * Host code sees 16-bit floats only as bits: the reference backend computes in float or double and
 * rounds once when it stores, and the IR reads float16 constants. Conversions round to nearest, ties
 * to even, as the GPU's own conversion instructions do, and keep infinities and NaNs.
 */
#ifndef GFXEP_CORE_HALF_H
#define GFXEP_CORE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t gfx_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float gfx_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float gfx_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return gfx_bits_float(sign | 0x7f800000u | (mant << 13)); /* inf, NaN */
  if (exp == 0) {
    /* zero or subnormal: mant x 2^-24, exact in float */
    float v = (float)mant * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return gfx_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t gfx_float_to_half(float f) {
  uint32_t u = gfx_float_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* inf or NaN (NaN keeps a set quiet bit) */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: overflow */
  if (abs < 0x38800000u) {
    /* result is subnormal or zero: scale to units of 2^-24 and round to nearest even */
    float a = gfx_bits_float(abs) * 16777216.0f;
    uint32_t q = (uint32_t)a;
    float rem = a - (float)q;
    if (rem > 0.5f || (rem == 0.5f && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 112u;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* may carry into the exponent: still right */
  return (uint16_t)(sign | h);
}

static inline float gfx_bf16_to_float(uint16_t b) { return gfx_bits_float((uint32_t)b << 16); }

static inline uint16_t gfx_float_to_bf16(float f) {
  uint32_t u = gfx_float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)((u + rounding) >> 16);
}

#endif

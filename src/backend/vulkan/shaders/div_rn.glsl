// gfxep Vulkan backend — float32 division rounded as IEEE rounds it (quant.comp, roi_align.comp).
//
// Vulkan lets a float division be off by a few ulps; the reference divides in IEEE float32, and a
// quotient next to a rounding half or a ceil must land where the reference's does.

// x - s * q, exactly when q is within an ulp or so of x / s (a single-rounding fma)
float residual(float x, float s, float q) {
  precise float r = fma(-q, s, x);
  return r;
}

// x / s rounded to nearest even, from a quotient a few ulps off: of q and its neighbours, the one
// with the smallest residual, the even one on a tie. Only quotients below 2^23 are refined (the
// callers' larger quotients saturate or lie far outside a plane whatever their last bits), and none
// that is 0, NaN or infinite.
float div_rn(float x, float s) {
  precise float q = x / s;
  if (!(abs(q) < 8388608.0) || q == 0.0) return q;
  for (int i = 0; i < 3; i++) {
    const uint b = floatBitsToUint(q);
    const float lo = uintBitsToFloat(b - 1u), hi = uintBitsToFloat(b + 1u); // neighbours toward 0 / away
    const float r = abs(residual(x, s, q)), rl = abs(residual(x, s, lo)), rh = abs(residual(x, s, hi));
    if (rl < r || (rl == r && (b & 1u) != 0u)) {
      q = lo;
    } else if (rh < r || (rh == r && (b & 1u) != 0u)) {
      q = hi;
    } else {
      break;
    }
  }
  return q;
}

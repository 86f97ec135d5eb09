// gfxep Vulkan backend — float helpers every shader shares: NaN-preserving clamps, erf, tanh and
// sigmoid with the accuracy the element-wise ops promise, and the Conv epilogue's activations
// (ir_conv_activation), which are the element-wise ops of the same names.

#define NAN_F uintBitsToFloat(0x7fc00000u)
#define INF_F uintBitsToFloat(0x7f800000u)

// NaN passes through explicitly: drivers may turn a compare-and-select into min/max, which drop NaN
float clamp01(float v) { return isnan(v) ? v : (v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v)); }

float erf_f(float x) {
  float a = abs(x);
  if (a < 0.5) {
    // Maclaurin series of erf, to x^13: below 2e-8 for |x| < 0.5
    float x2 = x * x;
    float s = 1.0 / 75600.0;
    s = s * x2 - 1.0 / 9360.0;
    s = s * x2 + 1.0 / 1320.0;
    s = s * x2 - 1.0 / 216.0;
    s = s * x2 + 1.0 / 42.0;
    s = s * x2 - 1.0 / 10.0;
    s = s * x2 + 1.0 / 3.0;
    s = s * x2 - 1.0;
    return -1.1283791670955126 * x * s;
  }
  if (a >= 6.0) return x > 0.0 ? 1.0 : -1.0;
  // Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  float r = 1.0 - p * exp(-a * a);
  return x < 0.0 ? -r : r;
}

float tanh_f(float x) {
  float a = abs(x);
  if (a < 0.004) return x - x * x * x / 3.0;
  if (a > 10.0) return x > 0.0 ? 1.0 : -1.0;
  float e = exp(-2.0 * a);
  float r = (1.0 - e) / (1.0 + e);
  return x < 0.0 ? -r : r;
}

float sigmoid_f(float x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}

// ir_conv_activation's codes (ir/graph.h)
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_LEAKY_RELU 2
#define ACT_CLIP 3
#define ACT_SIGMOID 4
#define ACT_TANH 5
#define ACT_HARD_SIGMOID 6
#define ACT_HARD_SWISH 7
#define ACT_ELU 8

// The activation fused into a Conv: CLIP's bounds are alpha (min) and beta (max).
float activation_f(int act, float x, float alpha, float beta) {
  if (isnan(x)) return x; // every activation keeps NaN (compare-and-select may become max on the GPU)
  switch (act) {
    case ACT_RELU: return x < 0.0 ? 0.0 : x;
    case ACT_LEAKY_RELU: return x < 0.0 ? alpha * x : x;
    case ACT_CLIP: {
      float v = x < alpha ? alpha : x;
      return v > beta ? beta : v;
    }
    case ACT_SIGMOID: return sigmoid_f(x);
    case ACT_TANH: return tanh_f(x);
    case ACT_HARD_SIGMOID: return clamp01(alpha * x + beta);
    case ACT_HARD_SWISH: return x * clamp01(x / 6.0 + 0.5);
    case ACT_ELU: return x < 0.0 ? alpha * (exp(x) - 1.0) : x;
  }
  return x;
}

// sin and cos the same on every driver (the built-ins' precision is each driver's choice): x reduced
// by a multiple k of pi/2 in three parts (Cody-Waite: the products are exact for |k| up to about 1e4,
// so the result stays within a few ulps for |x| up to about 1e4), then the float minimax polynomials
// of sin and cos on [-pi/4, pi/4]; NaN and infinities give NaN.
float sin_poly(float r) {
  float r2 = r * r;
  return r + r * r2 * (-1.6666654611e-1 + r2 * (8.3321608736e-3 + r2 * -1.9515295891e-4));
}
float cos_poly(float r) {
  float r2 = r * r;
  return 1.0 - 0.5 * r2 + r2 * r2 * (4.166664568298827e-2 + r2 * (-1.388731625493765e-3 + r2 * 2.443315711809948e-5));
}
int quadrant_of(float x, out float r) {
  float k = roundEven(x * 0.63661977236758134); // 2 / pi
  r = x - k * 1.5703125;
  r = r - k * 4.837512969970703125e-4;
  r = r - k * 7.54978995489188216e-8;
  return isinf(k) || isnan(k) ? 0 : int(mod(k, 4.0));
}
float sin_f(float x) {
  float r;
  int q = quadrant_of(x, r);
  float v = (q & 1) == 0 ? sin_poly(r) : cos_poly(r);
  return q >= 2 ? -v : v;
}
float cos_f(float x) {
  float r;
  int q = quadrant_of(x, r);
  float v = (q & 1) == 0 ? cos_poly(r) : sin_poly(r);
  return q == 1 || q == 2 ? -v : v;
}

/* gfxep CUDA backend — the activation formulas, defined once: the element-wise kernels
 * (cuda_elementwise.cu) and the convolution epilogue (cuda_pad.cu) both call these, so a fused Conv
 * computes exactly what the unfused Conv + activation pair computes.
 *
 * Comparisons rather than fminf/fmaxf, so that NaN passes through as in ONNX Runtime. */
#ifndef GFXEP_BACKEND_CUDA_ACTIVATION_CUH
#define GFXEP_BACKEND_CUDA_ACTIVATION_CUH

__device__ inline float cuda_clampf01(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; }
/* "x < 0" rather than fmaxf, which would turn NaN into 0 */
__device__ inline float cuda_relu(float x) { return x < 0.0f ? 0.0f : x; }
__device__ inline float cuda_leaky_relu(float x, float alpha) { return x < 0.0f ? alpha * x : x; }
/* two forms so that exp never overflows into inf/inf */
__device__ inline float cuda_sigmoid(float x) {
  float e = expf(-fabsf(x));
  return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
__device__ inline float cuda_hard_sigmoid(float x, float alpha, float beta) { return cuda_clampf01(alpha * x + beta); }
__device__ inline float cuda_hard_swish(float x) { return x * cuda_clampf01(x / 6.0f + 0.5f); }
/* -inf / +inf stand for absent bounds */
__device__ inline float cuda_clip(float x, float lo, float hi) {
  if (x < lo) x = lo;
  if (x > hi) x = hi;
  return x;
}
__device__ inline float cuda_elu(float x, float alpha) { return x < 0.0f ? alpha * expm1f(x) : x; }

#endif

/* gfxep CUDA backend — kernels of QuantizeLinear and DequantizeLinear.
 *
 * One thread per element, grid-stride with 64-bit indices. The arithmetic mirrors ir_quantize and
 * ir_dequantize (ir/ops_quant.h) operation for operation in float32, with the IEEE-rounded
 * intrinsics, so that no contraction or fast division moves a quotient across a rounding half.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cuda_quant.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename F> __device__ inline F from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename Q> struct int_range;
template <> struct int_range<int8_t> { static constexpr int32_t lo = -128, hi = 127; };
template <> struct int_range<uint8_t> { static constexpr int32_t lo = 0, hi = 255; };

__device__ inline int64_t channel(const cuda_quant_args& a, int64_t e) { return a.per_axis ? e / a.inner % a.len : 0; }

/* ir_quantize: x / scale, NaN to the zero point, rounded half to even, plus the zero point,
 * saturated */
template <typename F, typename Q>
__global__ void quantize_kernel(const F* x, const F* scale, const Q* zp, Q* y, cuda_quant_args a) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < a.count; e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t c = channel(a, e);
    const int32_t z = zp ? (int32_t)zp[c] : 0;
    const float q = __fdiv_rn(to_float(x[e]), to_float(scale[c]));
    int32_t v;
    if (q != q) {
      v = z;
    } else {
      const float r = __fadd_rn(rintf(q), (float)z);
      const int32_t lo = int_range<Q>::lo, hi = int_range<Q>::hi;
      v = r <= (float)lo ? lo : r >= (float)hi ? hi : (int32_t)r;
    }
    y[e] = (Q)v;
  }
}

/* ir_dequantize: (x - zero point) as float32 times the scale */
template <typename Q, typename F>
__global__ void dequantize_kernel(const Q* x, const F* scale, const Q* zp, F* y, cuda_quant_args a) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < a.count; e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t c = channel(a, e);
    const int64_t z = zp ? (int64_t)zp[c] : 0;
    y[e] = from_float<F>(__fmul_rn((float)((int64_t)x[e] - z), to_float(scale[c])));
  }
}

/* Calls f(F()) with F the C++ type of a float dtype; false for another type. */
template <typename Fn>
bool with_float(int dtype, Fn f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    default: return false;
  }
}

/* The same over the quantized types: int8, uint8, and (dequantize only) int32. */
template <typename Fn>
bool with_int(int dtype, bool allow_i32, Fn f) {
  switch (dtype) {
    case GFX_DTYPE_I8: f(int8_t()); return true;
    case GFX_DTYPE_U8: f(uint8_t()); return true;
    case GFX_DTYPE_I32:
      if (!allow_i32) return false;
      f(int32_t());
      return true;
    default: return false;
  }
}

template <typename K>
void preload(K* kernel, cudaError_t* e) {
  cudaFuncAttributes attr;
  if (*e == cudaSuccess) *e = cudaFuncGetAttributes(&attr, kernel);
}

}  // namespace

extern "C" cudaError_t cuda_quantize(int float_dtype, int int_dtype, const void* x, const void* scale,
                                     const void* zero_point, void* y, cuda_quant_args a, cudaStream_t stream) {
  if (a.count <= 0) return cudaSuccess;
  bool ok = false;
  with_float(float_dtype, [&](auto fzero) {
    typedef decltype(fzero) F;
    ok = with_int(int_dtype, false, [&](auto qzero) {
      typedef decltype(qzero) Q;
      if constexpr (sizeof(Q) == 1)
        quantize_kernel<F, Q><<<grid_for(a.count), kBlockSize, 0, stream>>>((const F*)x, (const F*)scale,
                                                                              (const Q*)zero_point, (Q*)y, a);
    });
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_dequantize(int int_dtype, int float_dtype, const void* x, const void* scale,
                                       const void* zero_point, void* y, cuda_quant_args a, cudaStream_t stream) {
  if (a.count <= 0) return cudaSuccess;
  bool ok = false;
  with_float(float_dtype, [&](auto fzero) {
    typedef decltype(fzero) F;
    ok = with_int(int_dtype, true, [&](auto qzero) {
      typedef decltype(qzero) Q;
      dequantize_kernel<Q, F><<<grid_for(a.count), kBlockSize, 0, stream>>>((const Q*)x, (const F*)scale,
                                                                              (const Q*)zero_point, (F*)y, a);
    });
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_quant_preload(void) {
  cudaError_t e = cudaSuccess;
  static const int floats[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16};
  for (int f : floats)
    with_float(f, [&](auto fzero) {
      typedef decltype(fzero) F;
      preload(quantize_kernel<F, int8_t>, &e);
      preload(quantize_kernel<F, uint8_t>, &e);
      preload(dequantize_kernel<int8_t, F>, &e);
      preload(dequantize_kernel<uint8_t, F>, &e);
      preload(dequantize_kernel<int32_t, F>, &e);
    });
  return e;
}

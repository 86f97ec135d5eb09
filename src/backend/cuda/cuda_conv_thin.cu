// gfxep CUDA backend — convolutions with few output channels (see cuda_conv_thin.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdlib.h>

#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_conv_thin.h"
#include "ir/tensor.h"

namespace {

const int kTileH = 16, kTileW = 32, kThreadsX = 16, kThreadsY = 16; /* two pixels per thread, 16 apart */
const size_t kSharedLimit = 48 << 10;

__device__ inline float to_f(float v) { return v; }
__device__ inline float to_f(__half v) { return __half2float(v); }
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline void put(float* p, float v) { *p = v; }
__device__ inline void put(__half* p, float v) { *p = __float2half_rn(v); }
__device__ inline void put(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <typename T>
__global__ void __launch_bounds__(kThreadsX* kThreadsY)
    thin_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                const T* __restrict__ residual, T* __restrict__ y, cuda_conv_thin p) {
  extern __shared__ float shared[];
  const int win_h = (kTileH - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1;
  const int win_w = (kTileW - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1;
  const int taps = p.kernel_h * p.kernel_w;
  float* window = shared;
  float* weights = shared + win_h * win_w;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreadsX + tx;
  const int n = blockIdx.z, oy0 = blockIdx.y * kTileH, ox0 = blockIdx.x * kTileW;
  const int iy0 = oy0 * p.stride_h - p.pad_top, ix0 = ox0 * p.stride_w - p.pad_left;
  float acc[CUDA_CONV_THIN_MAX_OUT_CHANNELS][2] = {};
  for (int c = 0; c < p.c_in; c++) {
    __syncthreads(); /* the previous channel's window is read */
    const T* plane = x + ((size_t)n * p.c_in + c) * p.in_h * p.in_w;
    for (int i = tid; i < win_h * win_w; i += kThreadsX * kThreadsY) {
      const int iy = iy0 + i / win_w, ix = ix0 + i % win_w;
      window[i] = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w ? to_f(plane[(size_t)iy * p.in_w + ix]) : 0.0f;
    }
    for (int i = tid; i < p.c_out * taps; i += kThreadsX * kThreadsY)
      weights[i] = to_f(w[((size_t)(i / taps) * p.c_in + c) * taps + i % taps]);
    __syncthreads();
    for (int ky = 0; ky < p.kernel_h; ky++) {
      const float* row = window + (ty * p.stride_h + ky * p.dilation_h) * win_w;
      for (int kx = 0; kx < p.kernel_w; kx++) {
        const int col = kx * p.dilation_w;
        const float a0 = row[tx * p.stride_w + col], a1 = row[(tx + kThreadsX) * p.stride_w + col];
        const float* wk = weights + ky * p.kernel_w + kx;
#pragma unroll
        for (int m = 0; m < CUDA_CONV_THIN_MAX_OUT_CHANNELS; m++)
          if (m < p.c_out) {
            const float wv = wk[m * taps];
            acc[m][0] = fmaf(a0, wv, acc[m][0]);
            acc[m][1] = fmaf(a1, wv, acc[m][1]);
          }
      }
    }
  }
  const int oy = oy0 + ty;
  if (oy >= p.out_h) return;
#pragma unroll
  for (int m = 0; m < CUDA_CONV_THIN_MAX_OUT_CHANNELS; m++) {
    if (m >= p.c_out) break;
    const float b = bias ? to_f(bias[m]) : 0.0f;
    const size_t row = (((size_t)n * p.c_out + m) * p.out_h + oy) * p.out_w;
#pragma unroll
    for (int k = 0; k < 2; k++) {
      const int ox = ox0 + tx + k * kThreadsX;
      if (ox >= p.out_w) continue;
      const float r = residual ? to_f(residual[row + ox]) : 0.0f;
      put(&y[row + ox], cuda_conv_finish(p.epilogue, acc[m][k] + b, r));
    }
  }
}

size_t shared_of(const cuda_conv_thin& p) {
  const size_t win_h = (size_t)(kTileH - 1) * p.stride_h + (size_t)(p.kernel_h - 1) * p.dilation_h + 1;
  const size_t win_w = (size_t)(kTileW - 1) * p.stride_w + (size_t)(p.kernel_w - 1) * p.dilation_w + 1;
  return (win_h * win_w + (size_t)p.c_out * p.kernel_h * p.kernel_w) * sizeof(float);
}

}  // namespace

extern "C" int cuda_conv_thin_applies(int dtype, int spatial, int group, int channels_last, int c_in, int c_out,
                                      const int* kernel) {
  const char* env = getenv("GFXEP_CUDA_CONV_THIN");
  if (env && env[0] == '0') return 0;
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || spatial != 2 || group != 1 ||
      channels_last || c_out < 1 || c_out > CUDA_CONV_THIN_MAX_OUT_CHANNELS || c_in < 1)
    return 0;
  if (env && env[0] == '1') return 1;
  /* 16-bit layers stay with cuDNN's tensor cores, which were as fast or faster (H100: style transfer
   * float16 1.62 ms with cuDNN against 1.77 with this kernel; UNet 0.432 against 0.436) */
  return dtype == GFX_DTYPE_F32 && (long long)c_in * kernel[0] * kernel[1] >= 64;
}

extern "C" cudaError_t cuda_conv_thin_plan(cuda_conv_thin* p) {
  if (p->c_out < 1 || p->c_out > CUDA_CONV_THIN_MAX_OUT_CHANNELS || p->kernel_h < 1 || p->kernel_w < 1 ||
      p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 || p->dilation_w < 1 || p->n > 65535 ||
      (p->out_h + kTileH - 1) / kTileH > 65535)
    return cudaErrorInvalidValue;
  p->shared_bytes = shared_of(*p);
  return p->shared_bytes <= kSharedLimit ? cudaSuccess : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_conv_thin_run(const cuda_conv_thin* p, const void* x, const void* w, const void* bias,
                                          const void* residual, void* y, cudaStream_t stream) {
  if (p->n == 0 || p->out_h == 0 || p->out_w == 0) return cudaSuccess;
  const dim3 grid((unsigned)((p->out_w + kTileW - 1) / kTileW), (unsigned)((p->out_h + kTileH - 1) / kTileH),
                  (unsigned)p->n);
  const dim3 block(kThreadsX, kThreadsY);
  switch (p->dtype) {
    case GFX_DTYPE_F32:
      thin_kernel<float><<<grid, block, p->shared_bytes, stream>>>((const float*)x, (const float*)w, (const float*)bias,
                                                                    (const float*)residual, (float*)y, *p);
      break;
    case GFX_DTYPE_F16:
      thin_kernel<__half><<<grid, block, p->shared_bytes, stream>>>((const __half*)x, (const __half*)w,
                                                                     (const __half*)bias, (const __half*)residual,
                                                                     (__half*)y, *p);
      break;
    case GFX_DTYPE_BF16:
      thin_kernel<__nv_bfloat16><<<grid, block, p->shared_bytes, stream>>>(
          (const __nv_bfloat16*)x, (const __nv_bfloat16*)w, (const __nv_bfloat16*)bias,
          (const __nv_bfloat16*)residual, (__nv_bfloat16*)y, *p);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_conv_thin_preload(void) {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, thin_kernel<float>);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, thin_kernel<__half>);
  return e == cudaSuccess ? cudaFuncGetAttributes(&attr, thin_kernel<__nv_bfloat16>) : e;
}

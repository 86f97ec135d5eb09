// gfxep CUDA backend — LayerNormalization of a residual sum x + r in one pass (see cuda_reduce.h).
//
// The fused node (ir/fuse_norm.c) replaces Add -> LayerNormalization: each row is read from both
// operands once, their sum is rounded to the element type exactly as the Add kernel wrote it, and
// that sum is what is normalized and, when another node reads it, stored. Rows of up to 1024
// elements get one warp each and stay in registers between the passes (ViT and Swin rows are 192 to
// 1024 wide); longer rows get a block each and read the operands again in each pass.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cuda_reduce.h"
#include "backend/cuda/cuda_preload.cuh"

namespace {

const int kBlockSize = 256;
const int kWarpsPerBlock = kBlockSize / 32;
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t items, int64_t per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* x[i] + r[i] as the Add wrote it: rounded once to T. */
template <typename T>
__device__ __forceinline__ T add_rounded(const T* __restrict__ x, const T* __restrict__ r, int64_t i) {
  return from_float<T>(to_float(x[i]) + to_float(r[i]));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

/* Every thread of the block gets the block's sum; every thread must call it. */
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads(); /* a previous call's readers are done */
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  /* every warp sums all the partials (by lane), so every thread, not only warp 0's, gets the total */
  v = lane < warps ? partial[lane] : 0.0f;
  return warp_sum(v);
}

/* One warp per row of up to 32 * PerLane elements: lane l holds elements l, l + 32, ... */
template <typename T, int PerLane>
__global__ void add_norm_warp_kernel(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ scale,
                                     const T* __restrict__ bias, T* __restrict__ y, T* __restrict__ sum,
                                     cuda_add_norm_args a) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = blockIdx.x * (int64_t)kWarpsPerBlock + (threadIdx.x >> 5); row < a.rows;
       row += (int64_t)gridDim.x * kWarpsPerBlock) {
    const int64_t base = row * a.count;
    float v[PerLane];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t j = lane + 32 * i;
      v[i] = 0.0f;
      if (j < a.count) {
        const T t = add_rounded(x, r, base + j);
        if (sum) sum[base + j] = t;
        v[i] = to_float(t);
      }
      s += v[i];
    }
    const float mean = warp_sum(s) / (float)a.count;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const float d = lane + 32 * i < a.count ? v[i] - mean : 0.0f;
      q += d * d;
    }
    const float inv_std = rsqrtf(warp_sum(q) / (float)a.count + a.epsilon);
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t j = lane + 32 * i;
      if (j < a.count) {
        float o = (v[i] - mean) * inv_std * to_float(scale[j]);
        if (bias) o += to_float(bias[j]);
        y[base + j] = from_float<T>(o);
      }
    }
  }
}

/* One block per row: the mean (storing the sum), the mean squared deviation, then the output, each
 * pass forming the sum again from both operands. */
template <typename T>
__global__ void add_norm_block_kernel(const T* __restrict__ x, const T* __restrict__ r, const T* __restrict__ scale,
                                      const T* __restrict__ bias, T* __restrict__ y, T* __restrict__ sum,
                                      cuda_add_norm_args a) {
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const int64_t base = row * a.count;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < a.count; j += blockDim.x) {
      const T t = add_rounded(x, r, base + j);
      if (sum) sum[base + j] = t;
      s += to_float(t);
    }
    const float mean = block_sum(s) / (float)a.count;
    float q = 0.0f;
    for (int64_t j = threadIdx.x; j < a.count; j += blockDim.x) {
      const float d = to_float(add_rounded(x, r, base + j)) - mean;
      q += d * d;
    }
    const float inv_std = rsqrtf(block_sum(q) / (float)a.count + a.epsilon);
    for (int64_t j = threadIdx.x; j < a.count; j += blockDim.x) {
      float o = (to_float(add_rounded(x, r, base + j)) - mean) * inv_std * to_float(scale[j]);
      if (bias) o += to_float(bias[j]);
      y[base + j] = from_float<T>(o);
    }
  }
}

template <typename T>
void launch(const void* x, const void* r, const void* scale, const void* bias, void* y, void* sum,
            const cuda_add_norm_args& a, cudaStream_t stream) {
  const T *xt = static_cast<const T*>(x), *rt = static_cast<const T*>(r);
  const T *st = static_cast<const T*>(scale), *bt = static_cast<const T*>(bias);
  T *yt = static_cast<T*>(y), *sumt = static_cast<T*>(sum);
  if (a.count <= 256)
    add_norm_warp_kernel<T, 8><<<grid_for(a.rows, kWarpsPerBlock), kBlockSize, 0, stream>>>(xt, rt, st, bt, yt, sumt, a);
  else if (a.count <= 1024)
    add_norm_warp_kernel<T, 32><<<grid_for(a.rows, kWarpsPerBlock), kBlockSize, 0, stream>>>(xt, rt, st, bt, yt, sumt, a);
  else
    add_norm_block_kernel<T><<<grid_for(a.rows, 1), kBlockSize, 0, stream>>>(xt, rt, st, bt, yt, sumt, a);
}

}  // namespace

extern "C" cudaError_t cuda_add_norm_run(int dtype, const void* x, const void* r, const void* scale, const void* bias,
                                         void* y, void* sum, cuda_add_norm_args args, cudaStream_t stream) {
  if (args.rows <= 0 || args.count <= 0) return cudaSuccess;
  switch (dtype) {
    case GFX_DTYPE_F32: launch<float>(x, r, scale, bias, y, sum, args, stream); break;
    case GFX_DTYPE_F16: launch<__half>(x, r, scale, bias, y, sum, args, stream); break;
    case GFX_DTYPE_BF16: launch<__nv_bfloat16>(x, r, scale, bias, y, sum, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T>
static cudaError_t preload_add_norm() {
  const void* kernels[] = {(const void*)add_norm_warp_kernel<T, 8>, (const void*)add_norm_warp_kernel<T, 32>,
                           (const void*)add_norm_block_kernel<T>};
  return CUDA_LOAD_KERNELS(kernels);
}

extern "C" cudaError_t cuda_add_norm_preload(void) {
  cudaError_t e;
  if ((e = preload_add_norm<float>()) != cudaSuccess) return e;
  if ((e = preload_add_norm<__half>()) != cudaSuccess) return e;
  return preload_add_norm<__nv_bfloat16>();
}

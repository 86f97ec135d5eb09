// gfxep CUDA backend — what the element-by-element kernel files share: the launch geometry of a
// grid-stride loop (64-bit indices, a capped grid covers any size), loads of every element type to
// its compute type (float for the float types, int64 for the integers) and round-to-nearest-even
// stores back, and dispatch from a dtype code to a C++ type. Everything is inline or a template, so
// each file that includes it gets what it uses and nothing else.
#ifndef GFXEP_CUDA_KERNEL_UTIL_CUH
#define GFXEP_CUDA_KERNEL_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "ir/tensor.h"

namespace gfx_cuda {

const int kBlockSize = 256;
/* Enough blocks to fill any current GPU several times over; grid-stride loops do the rest. */
const int64_t kMaxBlocks = 65535;

/* The blocks of kBlockSize threads for count items, at least 1 and at most kMaxBlocks. */
inline unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

inline int64_t element_count(const gfx_shape* s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

__device__ inline float load(float v) { return v; }
__device__ inline float load(__half v) { return __half2float(v); }
__device__ inline float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline int64_t load(int32_t v) { return v; }
__device__ inline int64_t load(int64_t v) { return v; }
__device__ inline int64_t load(bool v) { return v ? 1 : 0; }

/* Round-to-nearest-even conversions; an int64 result wraps to int32 by keeping the low bits. */
template <typename T> __device__ inline T store(float v);
template <> __device__ inline float store<float>(float v) { return v; }
template <> __device__ inline __half store<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 store<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ inline bool store<bool>(float v) { return v != 0.0f; }
template <typename T> __device__ inline T store(int64_t v);
template <> __device__ inline int32_t store<int32_t>(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
template <> __device__ inline int64_t store<int64_t>(int64_t v) { return v; }
template <> __device__ inline bool store<bool>(int64_t v) { return v != 0; }

/* Calls f(T()) with T the C++ type of a float dtype; false for any other type. */
template <typename F>
bool with_float_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    default: return false;
  }
}

/* The same for the float types and int32/int64. */
template <typename F>
bool with_math_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_I32: f(int32_t()); return true;
    case GFX_DTYPE_I64: f(int64_t()); return true;
    default: return with_float_type(dtype, f);
  }
}

}  // namespace gfx_cuda

#define GRID_STRIDE_LOOP(i, count) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (count); i += (int64_t)blockDim.x * gridDim.x)

#endif

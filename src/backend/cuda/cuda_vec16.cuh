// gfxep CUDA backend — 16-byte vectors and element conversions shared by the data movement and
// resampling kernels (cuda_layout.cu, cuda_resize.cu, cuda_resize_up.cu).
#ifndef GFXEP_BACKEND_CUDA_VEC16_CUH
#define GFXEP_BACKEND_CUDA_VEC16_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* 16 bytes as one vector or as elements; the element indices are always compile-time constants
 * (unrolled loops), so the union stays in registers. */
template <typename T>
union vec16 {
  uint4 v;
  T e[16 / sizeof(T)];
};

/* n elements of E read or written as one aligned access */
template <typename E, int N>
struct alignas(sizeof(E) * N) elems {
  E e[N];
};

static __device__ __forceinline__ uint4 load16(const void* p) { return *reinterpret_cast<const uint4*>(p); }
static __device__ __forceinline__ void store16(void* p, uint4 v) { *reinterpret_cast<uint4*>(p) = v; }

/* floating point elements to and from float: interpolation runs in float and rounds once at the store */
static __device__ __forceinline__ float to_float(float v) { return v; }
static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

#endif

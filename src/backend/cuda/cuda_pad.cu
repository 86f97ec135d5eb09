/* gfxep CUDA backend — padding, epilogue and broadcast kernels of the nn ops (see cuda_pad.h). */
#include "backend/cuda/cuda_pad.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ir/tensor.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

unsigned int blocks_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  return (unsigned int)(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline T from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* ---- pad / crop ---- */

/* The geometry, passed by value. */
struct pad_geometry {
  int64_t height, width;               /* source plane */
  int64_t top, left;                   /* where the source starts inside the destination plane */
  int64_t padded_height, padded_width; /* destination plane */
};

/* One thread per destination element, grid-stride; reads are coalesced along x like the writes.
 * T is a storage type of the element's size: the zero bit pattern is 0 in every float type. */
template <typename T>
__global__ void pad2d_kernel(const T* src, T* dst, int64_t count, pad_geometry g) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    int64_t x = i % g.padded_width;
    int64_t rest = i / g.padded_width;
    int64_t y = rest % g.padded_height;
    int64_t plane = rest / g.padded_height;
    int64_t sx = x - g.left, sy = y - g.top;
    bool inside = sx >= 0 && sx < g.width && sy >= 0 && sy < g.height;
    dst[i] = inside ? src[(plane * g.height + sy) * g.width + sx] : T(0);
  }
}

template <typename T>
void launch_pad2d(const void* src, int64_t planes, const pad_geometry& g, void* dst, cudaStream_t stream) {
  const int64_t count = planes * g.padded_height * g.padded_width;
  if (count <= 0) return;
  pad2d_kernel<T><<<blocks_for(count), kBlockSize, 0, stream>>>((const T*)src, (T*)dst, count, g);
}

/* ---- bias + activation ---- */

struct epilogue_args {
  int64_t count, channels, plane;
  int relu;
};

template <typename T>
__global__ void bias_activation_kernel(T* y, const T* bias, epilogue_args a) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.count; i += (int64_t)blockDim.x * gridDim.x) {
    float v = to_float(y[i]);
    if (bias) v += to_float(bias[(i / a.plane) % a.channels]);
    if (a.relu) v = v > 0.0f ? v : 0.0f;
    y[i] = from_float<T>(v);
  }
}

template <typename T>
void launch_bias_activation(void* y, const void* bias, const epilogue_args& a, cudaStream_t stream) {
  if (a.count <= 0 || a.plane <= 0 || a.channels <= 0) return;
  bias_activation_kernel<T><<<blocks_for(a.count), kBlockSize, 0, stream>>>((T*)y, (const T*)bias, a);
}

/* ---- Gemm's C ---- */

struct fill_args {
  int64_t row_stride, col_stride, m, n;
  float scale;
};

template <typename T>
__global__ void gemm_fill_c_kernel(const T* c, T* y, fill_args a) {
  const int64_t count = a.m * a.n;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    int64_t row = i / a.n, col = i % a.n;
    y[i] = from_float<T>(to_float(c[row * a.row_stride + col * a.col_stride]) * a.scale);
  }
}

template <typename T>
void launch_fill_c(const void* c, void* y, const fill_args& a, cudaStream_t stream) {
  if (a.m <= 0 || a.n <= 0) return;
  gemm_fill_c_kernel<T><<<blocks_for(a.m * a.n), kBlockSize, 0, stream>>>((const T*)c, (T*)y, a);
}

}  // namespace

extern "C" cudaError_t cuda_pad2d(int dtype, const void* src, int64_t planes, int64_t height, int64_t width,
                                  int64_t top, int64_t left, void* dst, int64_t padded_height, int64_t padded_width,
                                  cudaStream_t stream) {
  pad_geometry g = {height, width, top, left, padded_height, padded_width};
  if (dtype == GFX_DTYPE_F32)
    launch_pad2d<float>(src, planes, g, dst, stream);
  else if (dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16)
    launch_pad2d<unsigned short>(src, planes, g, dst, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_bias_activation(int dtype, void* y, const void* bias, int64_t count, int64_t channels,
                                            int64_t plane, int relu, cudaStream_t stream) {
  epilogue_args a = {count, channels, plane, relu};
  if (dtype == GFX_DTYPE_F32)
    launch_bias_activation<float>(y, bias, a, stream);
  else if (dtype == GFX_DTYPE_F16)
    launch_bias_activation<__half>(y, bias, a, stream);
  else if (dtype == GFX_DTYPE_BF16)
    launch_bias_activation<__nv_bfloat16>(y, bias, a, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_gemm_fill_c(int dtype, const void* c, int64_t row_stride, int64_t col_stride, float scale,
                                        void* y, int64_t m, int64_t n, cudaStream_t stream) {
  fill_args a = {row_stride, col_stride, m, n, scale};
  if (dtype == GFX_DTYPE_F32)
    launch_fill_c<float>(c, y, a, stream);
  else if (dtype == GFX_DTYPE_F16)
    launch_fill_c<__half>(c, y, a, stream);
  else if (dtype == GFX_DTYPE_BF16)
    launch_fill_c<__nv_bfloat16>(c, y, a, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_pad_preload(void) {
  const void* kernels[] = {
      (const void*)pad2d_kernel<float>,           (const void*)pad2d_kernel<unsigned short>,
      (const void*)bias_activation_kernel<float>, (const void*)bias_activation_kernel<__half>,
      (const void*)bias_activation_kernel<__nv_bfloat16>, (const void*)gemm_fill_c_kernel<float>,
      (const void*)gemm_fill_c_kernel<__half>,    (const void*)gemm_fill_c_kernel<__nv_bfloat16>,
  };
  for (const void* k : kernels) {
    cudaFuncAttributes attr;
    cudaError_t err = cudaFuncGetAttributes(&attr, k);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

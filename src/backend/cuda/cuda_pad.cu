/* gfxep CUDA backend — padding, epilogue and broadcast kernels of the nn ops (see cuda_pad.h). */
#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_pad.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdint.h>

#include "ir/graph.h"
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

/* ---- the convolution epilogue: bias, activation, residual ---- */

struct epilogue_args {
  int64_t planes;   /* n * channels */
  int64_t channels;
  int64_t vectors;  /* per plane: plane elements / V */
  cuda_conv_epilogue e;
};

/* V elements moved as one load or store (16 bytes when V > 1). */
template <typename T, int V>
struct alignas(sizeof(T) * V) pack {
  T v[V];
};

/* In place on y: blockIdx.y walks the planes (one channel of one image each, so the bias is one
 * value per plane and no element needs a division), x threads walk a plane's V-element vectors.
 * Both loops are grid-stride. V > 1 only when every plane starts on a 16-byte boundary (the host
 * checks the plane size and the pointers). */
template <typename T, int V>
__global__ void conv_epilogue_kernel(T* y, const T* bias, const T* residual, epilogue_args a) {
  for (int64_t p = blockIdx.y; p < a.planes; p += gridDim.y) {
    const float b = bias ? to_float(bias[p % a.channels]) : 0.0f;
    pack<T, V>* yp = reinterpret_cast<pack<T, V>*>(y) + p * a.vectors;
    const pack<T, V>* rp = residual ? reinterpret_cast<const pack<T, V>*>(residual) + p * a.vectors : nullptr;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.vectors;
         i += (int64_t)blockDim.x * gridDim.x) {
      pack<T, V> out = yp[i];
      pack<T, V> r;
      if (rp) r = rp[i];
#pragma unroll
      for (int k = 0; k < V; k++) {
        float v = to_float(out.v[k]) + b;
        out.v[k] = from_float<T>(cuda_conv_finish(a.e, v, rp ? to_float(r.v[k]) : 0.0f)); /* the one rounding */
      }
      yp[i] = out;
    }
  }
}

template <typename T, int V>
void launch_epilogue_v(T* y, const T* bias, const T* residual, epilogue_args a, int64_t plane, cudaStream_t stream) {
  a.vectors = plane / V;
  int64_t x_blocks = (a.vectors + kBlockSize - 1) / kBlockSize;
  if (x_blocks > kMaxBlocks) x_blocks = kMaxBlocks;
  const int64_t y_blocks = a.planes > kMaxBlocks ? kMaxBlocks : a.planes;
  dim3 grid((unsigned int)x_blocks, (unsigned int)y_blocks);
  conv_epilogue_kernel<T, V><<<grid, kBlockSize, 0, stream>>>(y, bias, residual, a);
}

template <typename T>
void launch_epilogue(void* y, const void* bias, const void* residual, const epilogue_args& a, int64_t plane,
                     cudaStream_t stream) {
  if (a.planes <= 0 || plane <= 0 || a.channels <= 0) return;
  constexpr int V = 16 / sizeof(T);
  const uintptr_t addresses = (uintptr_t)y | (uintptr_t)residual; /* residual may be NULL (0) */
  if (plane % V == 0 && addresses % 16 == 0)
    launch_epilogue_v<T, V>((T*)y, (const T*)bias, (const T*)residual, a, plane, stream);
  else
    launch_epilogue_v<T, 1>((T*)y, (const T*)bias, (const T*)residual, a, plane, stream);
}

/* Channels-last: element e of y [n, h, w, channels] has channel e % channels. One flat grid-stride
 * loop; a vector of V elements stays within one pixel where channels % V == 0. */
template <typename T, int V>
__global__ void conv_epilogue_nhwc_kernel(T* y, const T* bias, const T* residual, int64_t vectors, int64_t channels,
                                          cuda_conv_epilogue e) {
  pack<T, V>* yp = reinterpret_cast<pack<T, V>*>(y);
  const pack<T, V>* rp = reinterpret_cast<const pack<T, V>*>(residual);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < vectors; i += (int64_t)blockDim.x * gridDim.x) {
    pack<T, V> out = yp[i];
    pack<T, V> r;
    if (rp) r = rp[i];
    const int64_t c0 = i * V % channels;
#pragma unroll
    for (int k = 0; k < V; k++) {
      float v = to_float(out.v[k]) + (bias ? to_float(bias[c0 + k]) : 0.0f);
      out.v[k] = from_float<T>(cuda_conv_finish(e, v, rp ? to_float(r.v[k]) : 0.0f));
    }
    yp[i] = out;
  }
}

template <typename T>
void launch_epilogue_nhwc(void* y, const void* bias, const void* residual, int64_t count, int64_t channels,
                          cuda_conv_epilogue e, cudaStream_t stream) {
  if (count <= 0 || channels <= 0) return;
  constexpr int V = 16 / sizeof(T);
  const uintptr_t addresses = (uintptr_t)y | (uintptr_t)residual;
  if (channels % V == 0 && addresses % 16 == 0)
    conv_epilogue_nhwc_kernel<T, V><<<blocks_for(count / V), kBlockSize, 0, stream>>>(
        (T*)y, (const T*)bias, (const T*)residual, count / V, channels, e);
  else
    conv_epilogue_nhwc_kernel<T, 1><<<blocks_for(count), kBlockSize, 0, stream>>>((T*)y, (const T*)bias,
                                                                                  (const T*)residual, count, channels, e);
}

extern "C" cudaError_t cuda_conv_epilogue_nhwc_run(int dtype, void* y, const void* bias, const void* residual,
                                                   int64_t count, int64_t channels, cuda_conv_epilogue e,
                                                   cudaStream_t stream) {
  if (count < 0 || channels < 0) return cudaErrorInvalidValue;
  if (dtype == GFX_DTYPE_F32)
    launch_epilogue_nhwc<float>(y, bias, residual, count, channels, e, stream);
  else if (dtype == GFX_DTYPE_F16)
    launch_epilogue_nhwc<__half>(y, bias, residual, count, channels, e, stream);
  else if (dtype == GFX_DTYPE_BF16)
    launch_epilogue_nhwc<__nv_bfloat16>(y, bias, residual, count, channels, e, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
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

extern "C" cudaError_t cuda_conv_epilogue_run(int dtype, void* y, const void* bias, const void* residual, int64_t n,
                                              int64_t channels, int64_t plane, cuda_conv_epilogue e,
                                              cudaStream_t stream) {
  if (n < 0 || channels < 0 || (channels > 0 && n > INT64_MAX / channels)) return cudaErrorInvalidValue;
  epilogue_args a = {n * channels, channels, 0, e};
  if (dtype == GFX_DTYPE_F32)
    launch_epilogue<float>(y, bias, residual, a, plane, stream);
  else if (dtype == GFX_DTYPE_F16)
    launch_epilogue<__half>(y, bias, residual, a, plane, stream);
  else if (dtype == GFX_DTYPE_BF16)
    launch_epilogue<__nv_bfloat16>(y, bias, residual, a, plane, stream);
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
      (const void*)conv_epilogue_kernel<float, 4>, (const void*)conv_epilogue_kernel<float, 1>,
      (const void*)conv_epilogue_kernel<__half, 8>, (const void*)conv_epilogue_kernel<__half, 1>,
      (const void*)conv_epilogue_kernel<__nv_bfloat16, 8>, (const void*)conv_epilogue_kernel<__nv_bfloat16, 1>,
      (const void*)conv_epilogue_nhwc_kernel<float, 4>, (const void*)conv_epilogue_nhwc_kernel<float, 1>,
      (const void*)conv_epilogue_nhwc_kernel<__half, 8>, (const void*)conv_epilogue_nhwc_kernel<__half, 1>,
      (const void*)conv_epilogue_nhwc_kernel<__nv_bfloat16, 8>,
      (const void*)conv_epilogue_nhwc_kernel<__nv_bfloat16, 1>,
      (const void*)gemm_fill_c_kernel<float>,
      (const void*)gemm_fill_c_kernel<__half>,    (const void*)gemm_fill_c_kernel<__nv_bfloat16>,
  };
  for (const void* k : kernels) {
    cudaFuncAttributes attr;
    cudaError_t err = cudaFuncGetAttributes(&attr, k);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

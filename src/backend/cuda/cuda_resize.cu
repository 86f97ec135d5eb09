// gfxep CUDA backend — kernels of the resampling ops: Resize/Upsample (nearest, linear, cubic over
// the last two dims) and DepthToSpace/SpaceToDepth.
//
// One output element per thread, grid-stride loops with 64-bit indices. The coordinate mapping and
// the tap weights come from ir/resize_geom.h, the same functions the reference backend calls, so
// both pick the same input pixels; interpolation runs in float and rounds once at the store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_resize.h"
#include "ir/tensor.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ inline float load_f(const float* p, int64_t i) { return p[i]; }
__device__ inline float load_f(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ inline float load_f(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }

__device__ inline void store_f(float* p, int64_t i, float v) { p[i] = v; }
__device__ inline void store_f(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ inline void store_f(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

// ---- Resize ----

template <typename T>
__device__ inline float pixel(const T* x, const ir_resize_geom& g, int64_t plane, int64_t y, int64_t xi) {
  return load_f(x, (plane * g.h.in + y) * g.w.in + xi);
}

template <typename T, int Mode>
__device__ float sample(const T* x, const ir_resize_geom& g, int64_t plane, float cy, float cx) {
  if (Mode == IR_RESIZE_NEAREST) {
    const int64_t iy = ir_resize_nearest_index(&g.h, g.nearest, cy);
    const int64_t ix = ir_resize_nearest_index(&g.w, g.nearest, cx);
    return pixel(x, g, plane, iy, ix);
  } else if (Mode == IR_RESIZE_LINEAR) {
    int64_t y0, y1, x0, x1;
    float wy0, wy1, wx0, wx1;
    ir_resize_linear_taps(&g.h, cy, &y0, &y1, &wy0, &wy1);
    ir_resize_linear_taps(&g.w, cx, &x0, &x1, &wx0, &wx1);
    const float top = wx0 * pixel(x, g, plane, y0, x0) + wx1 * pixel(x, g, plane, y0, x1);
    const float bottom = wx0 * pixel(x, g, plane, y1, x0) + wx1 * pixel(x, g, plane, y1, x1);
    return wy0 * top + wy1 * bottom;
  } else {
    int64_t iy[4], ix[4];
    float wy[4], wx[4];
    ir_resize_cubic_taps(&g.h, g.cubic_a, g.exclude_outside, cy, iy, wy);
    ir_resize_cubic_taps(&g.w, g.cubic_a, g.exclude_outside, cx, ix, wx);
    float sum = 0.0f;
    for (int r = 0; r < 4; r++) {
      float row = 0.0f;
      for (int c = 0; c < 4; c++) row += wx[c] * pixel(x, g, plane, iy[r], ix[c]);
      sum += wy[r] * row;
    }
    return sum;
  }
}

template <typename T, int Mode>
__global__ void resize_kernel(const T* x, T* y, ir_resize_geom g, int64_t count) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    const int64_t ox = i % g.w.out;
    const int64_t rest = i / g.w.out;
    const int64_t oy = rest % g.h.out;
    const int64_t plane = rest / g.h.out;
    const float cy = ir_resize_source_coord(&g.h, g.coord, oy);
    const float cx = ir_resize_source_coord(&g.w, g.coord, ox);
    float v;
    if (ir_resize_outside(&g.h, g.coord, cy) || ir_resize_outside(&g.w, g.coord, cx))
      v = g.extrapolation;
    else
      v = sample<T, Mode>(x, g, plane, cy, cx);
    store_f(y, i, v);
  }
}

template <typename T>
cudaError_t launch_resize(const void* x, void* y, const ir_resize_geom& g, int64_t count, cudaStream_t stream) {
  const unsigned int grid = grid_for(count);
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  switch (g.mode) {
    case IR_RESIZE_NEAREST: resize_kernel<T, IR_RESIZE_NEAREST><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, count); break;
    case IR_RESIZE_LINEAR: resize_kernel<T, IR_RESIZE_LINEAR><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, count); break;
    case IR_RESIZE_CUBIC: resize_kernel<T, IR_RESIZE_CUBIC><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, count); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// ---- DepthToSpace, SpaceToDepth ----

struct space_depth_args {
  int to_space, crd;
  int64_t blocksize;
  int64_t out_dims[4];
  int64_t count;
};

// E is an unsigned integer type of the element's size: pure data movement, bit-exact for any type.
template <typename E>
__global__ void space_depth_kernel(const E* x, E* y, space_depth_args a) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.count; i += (int64_t)blockDim.x * gridDim.x)
    y[i] = x[ir_space_depth_source(a.to_space, a.crd, a.blocksize, a.out_dims, i)];
}

template <typename E>
cudaError_t launch_space_depth(const void* x, void* y, const space_depth_args& a, cudaStream_t stream) {
  space_depth_kernel<E><<<grid_for(a.count), kBlockSize, 0, stream>>>(static_cast<const E*>(x), static_cast<E*>(y), a);
  return cudaGetLastError();
}

template <typename T>
cudaError_t preload_resize() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_NEAREST>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_LINEAR>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_CUBIC>);
}

}  // namespace

extern "C" cudaError_t cuda_resize(int dtype, const void* x, void* y, ir_resize_geom g, cudaStream_t stream) {
  const int64_t count = g.outer * g.h.out * g.w.out;
  if (count <= 0) return cudaSuccess;
  if (g.identity) {  // nothing resizes: a copy, whatever the mode (device to device, capturable)
    size_t es = dtype == GFX_DTYPE_F32 ? 4 : 2;
    return cudaMemcpyAsync(y, x, (size_t)count * es, cudaMemcpyDeviceToDevice, stream);
  }
  switch (dtype) {
    case GFX_DTYPE_F32: return launch_resize<float>(x, y, g, count, stream);
    case GFX_DTYPE_F16: return launch_resize<__half>(x, y, g, count, stream);
    case GFX_DTYPE_BF16: return launch_resize<__nv_bfloat16>(x, y, g, count, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t cuda_space_depth(size_t elem_size, int to_space, int crd, int64_t blocksize,
                                        const int64_t out_dims[4], const void* x, void* y, cudaStream_t stream) {
  space_depth_args a;
  a.to_space = to_space;
  a.crd = crd;
  a.blocksize = blocksize;
  a.count = 1;
  for (int k = 0; k < 4; k++) {
    a.out_dims[k] = out_dims[k];
    a.count *= out_dims[k];
  }
  if (a.count <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch_space_depth<uint8_t>(x, y, a, stream);
    case 2: return launch_space_depth<uint16_t>(x, y, a, stream);
    case 4: return launch_space_depth<uint32_t>(x, y, a, stream);
    case 8: return launch_space_depth<uint64_t>(x, y, a, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t cuda_resize_preload(void) {
  cudaError_t e;
  if ((e = preload_resize<float>()) != cudaSuccess) return e;
  if ((e = preload_resize<__half>()) != cudaSuccess) return e;
  if ((e = preload_resize<__nv_bfloat16>()) != cudaSuccess) return e;
  cudaFuncAttributes attr;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint8_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint16_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint32_t>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, space_depth_kernel<uint64_t>);
}

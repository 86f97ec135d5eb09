// gfxep CUDA backend — the GridSample kernel (see cuda_resize.h).
//
// One thread per output pixel (n, oy, ox), neighbouring threads on neighbouring x: a thread reads
// its grid point once, finds its taps and weights with ir/grid_sample_geom.h (the functions the
// reference backend calls, in the same float arithmetic, so both read the same input pixels and a
// nearest-mode tie rounds the same way), then walks every channel with them. Loads of the grid and
// stores of the output are coalesced across a warp; the input reads are the gathers the grid asks
// for (through the read-only cache: the pointers are __restrict__). Interpolation runs in float and
// rounds once at the store.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_resize.h"
#include "ir/tensor.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 1 << 20;

__device__ inline float load_f(const float* p, int64_t i) { return p[i]; }
__device__ inline float load_f(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ inline void store_f(float* p, int64_t i, float v) { p[i] = v; }
__device__ inline void store_f(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }

/* T: the input's and output's element type, G: the grid's. Taps is 1 (nearest), 2 (linear) or 4
 * (cubic): the mode as a compile-time count, so the tap arrays live in registers. */
template <typename T, typename G, int Mode, int Taps>
__global__ void grid_sample_kernel(const T* __restrict__ x, const G* __restrict__ grid, T* __restrict__ y,
                                   ir_grid_geom g) {
  const int64_t pixels = g.out_h * g.out_w, plane_in = g.in_h * g.in_w;
  const int64_t total = g.n * pixels;
  ir_grid_geom gm = g;
  gm.mode = Mode; /* a constant for the tap functions */
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)blockDim.x * gridDim.x) {
    const int64_t n = i / pixels, p = i - n * pixels;
    const float gx = load_f(grid, 2 * i), gy = load_f(grid, 2 * i + 1);
    int64_t ix[4], iy[4];
    float wx[4], wy[4];
    ir_grid_axis_taps(&gm, ir_grid_denormalize(gx, g.in_w, g.align_corners), g.in_w, ix, wx);
    ir_grid_axis_taps(&gm, ir_grid_denormalize(gy, g.in_h, g.align_corners), g.in_h, iy, wy);
    /* the offsets of the taps within a plane, -1 for a zero */
    int64_t off[Taps][Taps];
#pragma unroll
    for (int r = 0; r < Taps; r++)
#pragma unroll
      for (int c = 0; c < Taps; c++) off[r][c] = iy[r] < 0 || ix[c] < 0 ? -1 : iy[r] * g.in_w + ix[c];
    const T* src = x + n * g.c * plane_in;
    T* dst = y + n * g.c * pixels + p;
    for (int64_t ch = 0; ch < g.c; ch++, src += plane_in, dst += pixels) {
      float v = 0.0f;
#pragma unroll
      for (int r = 0; r < Taps; r++) {
        float row = 0.0f;
#pragma unroll
        for (int c = 0; c < Taps; c++) row += wx[c] * (off[r][c] < 0 ? 0.0f : load_f(src, off[r][c]));
        v += wy[r] * row;
      }
      store_f(dst, 0, v);
    }
  }
}

template <typename T, typename G>
cudaError_t launch_grid_sample(const void* x, const void* grid, void* y, const ir_grid_geom& g, cudaStream_t stream) {
  const int64_t total = g.n * g.out_h * g.out_w;
  const int64_t blocks = (total + kBlockSize - 1) / kBlockSize;
  const unsigned int n_blocks = (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  const T* xt = static_cast<const T*>(x);
  const G* gt = static_cast<const G*>(grid);
  T* yt = static_cast<T*>(y);
  switch (g.mode) {
    case IR_GRID_NEAREST:
      grid_sample_kernel<T, G, IR_GRID_NEAREST, 1><<<n_blocks, kBlockSize, 0, stream>>>(xt, gt, yt, g);
      break;
    case IR_GRID_LINEAR:
      grid_sample_kernel<T, G, IR_GRID_LINEAR, 2><<<n_blocks, kBlockSize, 0, stream>>>(xt, gt, yt, g);
      break;
    case IR_GRID_CUBIC:
      grid_sample_kernel<T, G, IR_GRID_CUBIC, 4><<<n_blocks, kBlockSize, 0, stream>>>(xt, gt, yt, g);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename T, typename G>
cudaError_t preload_grid_sample() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, grid_sample_kernel<T, G, IR_GRID_NEAREST, 1>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, grid_sample_kernel<T, G, IR_GRID_LINEAR, 2>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, grid_sample_kernel<T, G, IR_GRID_CUBIC, 4>);
}

}  // namespace

extern "C" cudaError_t cuda_grid_sample(int dtype, int grid_dtype, const void* x, const void* grid, void* y,
                                        ir_grid_geom g, cudaStream_t stream) {
  if (g.n * g.c * g.out_h * g.out_w <= 0) return cudaSuccess;
  const int f16 = dtype == GFX_DTYPE_F16, grid_f16 = grid_dtype == GFX_DTYPE_F16;
  if ((!f16 && dtype != GFX_DTYPE_F32) || (!grid_f16 && grid_dtype != GFX_DTYPE_F32)) return cudaErrorInvalidValue;
  if (f16)
    return grid_f16 ? launch_grid_sample<__half, __half>(x, grid, y, g, stream)
                    : launch_grid_sample<__half, float>(x, grid, y, g, stream);
  return grid_f16 ? launch_grid_sample<float, __half>(x, grid, y, g, stream)
                  : launch_grid_sample<float, float>(x, grid, y, g, stream);
}

extern "C" cudaError_t cuda_grid_sample_preload(void) {
  cudaError_t e;
  if ((e = preload_grid_sample<float, float>()) != cudaSuccess) return e;
  if ((e = preload_grid_sample<__half, __half>()) != cudaSuccess) return e;
  if ((e = preload_grid_sample<__half, float>()) != cudaSuccess) return e;
  return preload_grid_sample<float, __half>();
}

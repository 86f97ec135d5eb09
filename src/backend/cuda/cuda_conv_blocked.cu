// gfxep CUDA backend — register-blocked float32 convolutions (see cuda_conv_blocked.h).
#include <cuda_runtime.h>
#include <stdlib.h>

#include "backend/cuda/cuda_conv_blocked.h"
#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "ir/tensor.h"

namespace {

const int kRows = 8;  /* output rows per block, all of them summed by each thread of its column */
const int kCols = 64; /* output columns per block, one per thread */
const int kOutPerThread = 8; /* output channels per thread */

/* Input channels per shared-memory chunk: 8 for 3x3, 4 for 5x5, so that a block's window and weights
 * stay near 30 KiB and two blocks of 256 threads share an SM. */
template <int K> struct chunk_channels { static const int value = K == 3 ? 8 : 4; };

/* One element from global to shared memory: asynchronously (cp.async, compute capability 8.0 on) when
 * the kernel is pipelined, so that the next chunk arrives while this one is summed; zero when
 * !inside. */
template <bool ASYNC>
__device__ __forceinline__ void put_shared(float* dst, const float* src, bool inside) {
#if __CUDA_ARCH__ >= 800
  if (ASYNC) {
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(src), "r"(inside ? 4 : 0)
                 : "memory");
    return;
  }
#endif
  *dst = inside ? __ldg(src) : 0.0f;
}

__device__ __forceinline__ void copies_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Waits for all but the newest `pending` groups of copies (0 or 1). */
template <int PENDING>
__device__ __forceinline__ void copies_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#endif
}

template <int K, int G, bool PIPELINED>
struct blocked_shape {
  static const int CK = chunk_channels<K>::value;
  static const int WIN_H = kRows + K - 1, WIN_W = kCols + K - 1;
  static const int COUT = kOutPerThread * G, THREADS = kCols * G, TAPS = K * K;
  static const int WINDOW = CK * WIN_H * WIN_W, WEIGHTS = CK * TAPS * COUT;
  static const int STAGE = (WINDOW + WEIGHTS + 3) / 4 * 4; /* floats, a multiple of 16 bytes */
  static const int STAGES = PIPELINED ? 2 : 1;
  static const size_t BYTES = (size_t)STAGES * STAGE * sizeof(float);
};

template <int K, int G, bool PIPELINED>
__global__ void __launch_bounds__(kCols* G, 8 / G)
    blocked_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                   const float* __restrict__ residual, float* __restrict__ y, cuda_conv_blocked p) {
  typedef blocked_shape<K, G, PIPELINED> S;
  constexpr int CK = S::CK, WIN_H = S::WIN_H, WIN_W = S::WIN_W, COUT = S::COUT, THREADS = S::THREADS,
                TAPS = S::TAPS;
  extern __shared__ float4 shared4[];
  float* const shared = reinterpret_cast<float*>(shared4);
  /* stage s: window [CK][WIN_H][WIN_W] at s·STAGE, then weights [CK][TAPS][COUT] (output channel fastest) */
  const int tx = threadIdx.x, ty = threadIdx.y; /* column in the tile, group of output channels */
  const int tid = ty * kCols + tx, lane = tid & 31, warp = tid >> 5;
  const int cout_tiles = (p.c_out + COUT - 1) / COUT;
  const int n = blockIdx.z / cout_tiles, co0 = (blockIdx.z % cout_tiles) * COUT;
  const int oy0 = blockIdx.y * kRows, ox0 = blockIdx.x * kCols;
  const int iy0 = oy0 - p.pad_top, ix0 = ox0 - p.pad_left;
  const size_t plane = (size_t)p.in_h * p.in_w;
  const float* xn = x + (size_t)n * p.c_in * plane;

  /* one chunk of input channels into a stage: the window one row per warp at a time, so that a warp
   * reads consecutive words; the weights output channel fastest, so that the stores are free of bank
   * conflicts */
  auto fill = [&](float* stage, int c0) {
    float* window = stage;
    for (int r = warp; r < CK * WIN_H; r += THREADS / 32) {
      const int ci = r / WIN_H, wy = r % WIN_H;
      const int c = c0 + ci, iy = iy0 + wy;
      const bool row_in = c < p.c_in && iy >= 0 && iy < p.in_h;
      const float* src = row_in ? xn + (size_t)c * plane + (size_t)iy * p.in_w : xn;
      for (int wx = lane; wx < WIN_W; wx += 32) {
        const int ix = ix0 + wx;
        const bool inside = row_in && ix >= 0 && ix < p.in_w;
        put_shared<PIPELINED>(window + r * WIN_W + wx, inside ? src + ix : xn, inside);
      }
    }
    float* weights = stage + S::WINDOW;
    for (int i = tid; i < S::WEIGHTS; i += THREADS) {
      const int co = i % COUT, rest = i / COUT;
      const int ci = rest / TAPS, t = rest % TAPS;
      const int c = c0 + ci, o = co0 + co;
      const bool inside = c < p.c_in && o < p.c_out;
      put_shared<PIPELINED>(weights + i, inside ? w + ((size_t)o * p.c_in + c) * TAPS + t : w, inside);
    }
  };

  float acc[kRows][kOutPerThread];
#pragma unroll
  for (int i = 0; i < kRows; i++)
#pragma unroll
    for (int o = 0; o < kOutPerThread; o++) acc[i][o] = 0.0f;

  if (PIPELINED) {
    fill(shared, 0);
    copies_commit();
  }
  for (int c0 = 0, chunk = 0; c0 < p.c_in; c0 += CK, chunk++) {
    float* stage = shared + (PIPELINED ? (chunk & 1) * S::STAGE : 0);
    if (PIPELINED) {
      if (c0 + CK < p.c_in) { /* the next chunk into the other stage, read two barriers ago */
        fill(shared + ((chunk + 1) & 1) * S::STAGE, c0 + CK);
        copies_commit();
        copies_wait<1>();
      } else {
        copies_wait<0>();
      }
    } else {
      fill(stage, c0);
    }
    __syncthreads(); /* the chunk is in shared memory */
    const float* window = stage;
    const float* weights = stage + S::WINDOW;
    const int channels = min(CK, p.c_in - c0);
#pragma unroll 1
    for (int ci = 0; ci < channels; ci++) {
#pragma unroll
      for (int kx = 0; kx < K; kx++) {
        float v[WIN_H]; /* this column's window values, each used by up to K rows of taps */
#pragma unroll
        for (int r = 0; r < WIN_H; r++) v[r] = window[(ci * WIN_H + r) * WIN_W + tx + kx];
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
          const float* wk = weights + (ci * TAPS + ky * K + kx) * COUT + ty * kOutPerThread;
          const float4 wa = *reinterpret_cast<const float4*>(wk);
          const float4 wb = *reinterpret_cast<const float4*>(wk + 4);
          const float wv[kOutPerThread] = {wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w};
#pragma unroll
          for (int i = 0; i < kRows; i++)
#pragma unroll
            for (int o = 0; o < kOutPerThread; o++) acc[i][o] = fmaf(v[i + ky], wv[o], acc[i][o]);
        }
      }
    }
    __syncthreads(); /* the stage is read before it is filled again */
  }

  const int ox = ox0 + tx;
  if (ox >= p.out_w) return;
#pragma unroll
  for (int o = 0; o < kOutPerThread; o++) {
    const int co = co0 + ty * kOutPerThread + o;
    if (co < p.c_out) {
      const float b = bias ? bias[co] : 0.0f;
      const size_t base = ((size_t)n * p.c_out + co) * p.out_h * p.out_w + ox;
#pragma unroll
      for (int i = 0; i < kRows; i++) {
        const int oy = oy0 + i;
        if (oy < p.out_h) {
          const size_t at = base + (size_t)oy * p.out_w;
          const float r = residual ? residual[at] : 0.0f;
          y[at] = cuda_conv_finish(p.epilogue, acc[i][o] + b, r);
        }
      }
    }
  }
}

/* The pipelined kernel needs compute capability 8.0 (cp.async) and two stages of shared memory;
 * GFXEP_CUDA_CONV_BLOCKED_PIPELINE=0 keeps the one-stage kernel, to compare. */
bool pipelined() {
  static int on = -1;
  if (on < 0) {
    const char* env = getenv("GFXEP_CUDA_CONV_BLOCKED_PIPELINE");
    int device = 0, major = 0;
    on = !(env && env[0] == '0') && cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 8;
  }
  return on;
}

template <int K, int G, bool PIPELINED>
void launch(const cuda_conv_blocked* p, const float* x, const float* w, const float* bias, const float* residual,
            float* y, cudaStream_t stream) {
  const int cout_tiles = (p->c_out + kOutPerThread * G - 1) / (kOutPerThread * G);
  const dim3 grid((unsigned)((p->out_w + kCols - 1) / kCols), (unsigned)((p->out_h + kRows - 1) / kRows),
                  (unsigned)(p->n * cout_tiles));
  blocked_kernel<K, G, PIPELINED><<<grid, dim3(kCols, G), blocked_shape<K, G, PIPELINED>::BYTES, stream>>>(
      x, w, bias, residual, y, *p);
}

template <int K, int G>
void launch(const cuda_conv_blocked* p, const float* x, const float* w, const float* bias, const float* residual,
            float* y, cudaStream_t stream) {
  if (pipelined()) launch<K, G, true>(p, x, w, bias, residual, y, stream);
  else launch<K, G, false>(p, x, w, bias, residual, y, stream);
}

/* Loads one kernel and lets it have its shared memory (over the default 48 KiB when pipelined). */
template <int K, int G, bool PIPELINED>
cudaError_t prepare() {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, blocked_kernel<K, G, PIPELINED>);
  if (e == cudaSuccess && PIPELINED && pipelined())
    e = cudaFuncSetAttribute(blocked_kernel<K, G, PIPELINED>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)blocked_shape<K, G, PIPELINED>::BYTES);
  return e;
}

}  // namespace

extern "C" int cuda_conv_blocked_applies(int dtype, int reduced_f32, int spatial, int group, int channels_last,
                                         int c_out, int out_w, const int* kernel, const int* stride,
                                         const int* dilation) {
  const char* env = getenv("GFXEP_CUDA_CONV_BLOCKED");
  if (env && env[0] == '0') return 0;
  if (dtype != GFX_DTYPE_F32 || reduced_f32 || spatial != 2 || group != 1 || channels_last || c_out <= 4 ||
      kernel[0] != kernel[1] || (kernel[0] != 3 && kernel[0] != 5) || stride[0] != 1 || stride[1] != 1 ||
      dilation[0] != 1 || dilation[1] != 1)
    return 0;
  return (env && env[0] == '1') || out_w >= kCols;
}

extern "C" cudaError_t cuda_conv_blocked_plan(cuda_conv_blocked* p) {
  if ((p->kernel != 3 && p->kernel != 5) || p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->out_h < 1 || p->out_w < 1)
    return cudaErrorInvalidValue;
  p->channel_groups = p->c_out > 2 * kOutPerThread ? 4 : 2;
  const long long cout_tiles = (p->c_out + kOutPerThread * p->channel_groups - 1) / (kOutPerThread * p->channel_groups);
  if ((long long)p->n * cout_tiles > 65535 || (p->out_h + kRows - 1) / kRows > 65535) return cudaErrorInvalidValue;
  return cudaSuccess;
}

extern "C" cudaError_t cuda_conv_blocked_run(const cuda_conv_blocked* p, const float* x, const float* w,
                                             const float* bias, const float* residual, float* y, cudaStream_t stream) {
  if (p->kernel == 3 && p->channel_groups == 4) launch<3, 4>(p, x, w, bias, residual, y, stream);
  else if (p->kernel == 3 && p->channel_groups == 2) launch<3, 2>(p, x, w, bias, residual, y, stream);
  else if (p->kernel == 5 && p->channel_groups == 4) launch<5, 4>(p, x, w, bias, residual, y, stream);
  else if (p->kernel == 5 && p->channel_groups == 2) launch<5, 2>(p, x, w, bias, residual, y, stream);
  else return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_conv_blocked_preload(void) {
  cudaError_t e = prepare<3, 4, false>();
  if (e == cudaSuccess) e = prepare<3, 2, false>();
  if (e == cudaSuccess) e = prepare<5, 4, false>();
  if (e == cudaSuccess) e = prepare<5, 2, false>();
  if (e == cudaSuccess) e = prepare<3, 4, true>();
  if (e == cudaSuccess) e = prepare<3, 2, true>();
  if (e == cudaSuccess) e = prepare<5, 4, true>();
  return e == cudaSuccess ? prepare<5, 2, true>() : e;
}

/* gfxep CUDA backend — float32 3x3 convolutions as three TF32 tensor-core products (see
 * cuda_conv_tf32x3.h).
 *
 * The matrix product: A is the output row's 32 pixels (two 16-row operands) by K, B is K by the
 * group's channels, K walked as 9 taps x 16 input channels per pass, 8 channels of one tap per
 * mma.sync.m16n8k8. ldmatrix moves 8x8 matrices of 16-bit elements, that is 8 rows of four 32-bit
 * ones: with lane's group g = lane / 4 and t = lane % 4 it hands lane element [g][t] of each matrix,
 * exactly where the TF32 product wants A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4] and
 * B[t][g], B[t+4][g] (PTX's m16n8k8 .tf32 layout). So both operands are stored [row][k] in shared
 * memory, pixels by channel and channels by tap and channel, each row padded to an odd number of
 * 16-byte units so that ldmatrix's 8 rows fall in 8 different bank groups.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_conv_tf32x3.h"
#include "backend/cuda/cuda_tf32x3.cuh"
#include "ir/tensor.h"

namespace {

const int kWarps = 8, kThreads = kWarps * 32;
const int kTileH = kWarps, kTileW = 32;            /* a warp's output row: two 16-pixel A operands */
const int kChunk = 16;                             /* input channels per pass through shared memory */
const int kWinH = kTileH + 2, kWinW = kTileW + 2;  /* the 3x3 window's input region */
const int kWinPixels = kWinH * kWinW;
const int kPixelPitch = kChunk + 4;                /* floats per window pixel: 80 bytes, 5 units */
const int kWeightPitch = 9 * kChunk + 4;           /* floats per weight row: 592 bytes, 37 units */
const int kMaxPieces = 8;                          /* 8-channel pieces per block: 64 channels */

struct conv_args {
  int n, c_in, in_h, in_w, c_out, out_h, out_w, pad_top, pad_left, tiles_x, tiles_per_image;
  cuda_conv_epilogue epilogue;
};

__device__ __forceinline__ uint32_t shared_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Four 8x8 matrices of 16-bit elements, i.e. of 8 rows of four floats; lanes 8i..8i+7 give matrix
 * i's row addresses. */
__device__ __forceinline__ void load_matrices(uint32_t* r, uint32_t address) {
#ifdef GFX_TF32_MMA
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
#else
  r[0] = r[1] = r[2] = r[3] = 0u;
  (void)address;
#endif
}

/* One pass: the tile's input window for channels [c0, c0 + 16) as [pixel][channel], and the group's
 * weights for them as [output channel][tap][channel]; zeros outside the image and past the channels. */
template <int PIECES>
__device__ __forceinline__ void load_pass(const conv_args& a, const float* __restrict__ x, const float* __restrict__ w,
                                          int image, int iy0, int ix0, int co0, int c0, float* window, float* weights) {
  const float* plane0 = x + ((int64_t)image * a.c_in + c0) * a.in_h * a.in_w;
  for (int e = threadIdx.x; e < kChunk * kWinPixels; e += kThreads) {
    const int ci = e / kWinPixels, px = e - ci * kWinPixels;
    const int r = px / kWinW, c = px - r * kWinW;
    const int iy = iy0 + r, ix = ix0 + c;
    float v = 0.0f;
    if (c0 + ci < a.c_in && iy >= 0 && iy < a.in_h && ix >= 0 && ix < a.in_w)
      v = __ldg(plane0 + ((int64_t)ci * a.in_h + iy) * a.in_w + ix);
    window[px * kPixelPitch + ci] = v;
  }
  const int per_row = kChunk * 9; /* a row's weights for this pass are contiguous in W: channel-major, then tap */
  for (int e = threadIdx.x; e < PIECES * 8 * per_row; e += kThreads) {
    const int row = e / per_row, k = e - row * per_row;
    const int ci = k / 9, tap = k - ci * 9;
    float v = 0.0f;
    if (co0 + row < a.c_out && c0 + ci < a.c_in) v = __ldg(w + ((int64_t)(co0 + row) * a.c_in + c0 + ci) * 9 + tap);
    weights[row * kWeightPitch + tap * kChunk + ci] = v;
  }
}

template <int PIECES>
__global__ void __launch_bounds__(kThreads, 2)
    conv_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                const float* __restrict__ residual, float* __restrict__ y, conv_args a) {
  extern __shared__ __align__(16) float shared[];
  float* window = shared;
  float* weights = shared + kWinPixels * kPixelPitch;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int image = blockIdx.x / a.tiles_per_image, rest = blockIdx.x - image * a.tiles_per_image;
  const int ty = rest / a.tiles_x, tx = rest - ty * a.tiles_x;
  const int oy0 = ty * kTileH, ox0 = tx * kTileW, co0 = blockIdx.y * PIECES * 8;
  const int iy0 = oy0 - a.pad_top, ix0 = ox0 - a.pad_left;
  /* lane l addresses A row (pixel) l % 16 of each operand at float 4 (l / 16), and B row (output
   * channel) l % 8 + 8 (l / 16) at float 4 ((l / 8) % 2): ldmatrix's order for the layouts above */
  uint32_t a_address[2];
  for (int i = 0; i < 2; i++)
    a_address[i] = shared_address(window + (warp * kWinW + i * 16 + (lane & 15)) * kPixelPitch + (lane >> 4) * 4);
  const uint32_t b_address =
      shared_address(weights + ((lane & 7) + ((lane >> 4) << 3)) * kWeightPitch + ((lane >> 3) & 1) * 4);
  float acc[2][PIECES][4];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < PIECES; j++)
#pragma unroll
      for (int k = 0; k < 4; k++) acc[i][j][k] = 0.0f;
  for (int c0 = 0; c0 < a.c_in; c0 += kChunk) {
    __syncthreads(); /* the previous pass's operands are read */
    load_pass<PIECES>(a, x, w, image, iy0, ix0, co0, c0, window, weights);
    __syncthreads();
    const int k_steps = a.c_in - c0 >= kChunk ? 2 : 1; /* a last pass of 8 channels skips its zero half */
    for (int tap = 0; tap < 9; tap++) {
      const int dy = tap / 3, dx = tap - dy * 3;
      for (int ks = 0; ks < k_steps; ks++) {
        const uint32_t a_off = (uint32_t)(((dy * kWinW + dx) * kPixelPitch + ks * 8) * 4);
        const uint32_t b_off = (uint32_t)((tap * kChunk + ks * 8) * 4);
        uint32_t a_head[2][4], a_tail[2][4];
#pragma unroll
        for (int i = 0; i < 2; i++) {
          uint32_t raw[4];
          load_matrices(raw, a_address[i] + a_off);
#pragma unroll
          for (int k = 0; k < 4; k++) cuda_tf32_split(__uint_as_float(raw[k]), a_head[i][k], a_tail[i][k]);
        }
#pragma unroll
        for (int j = 0; j < PIECES; j += 2) {
          uint32_t raw[4], b_head[4], b_tail[4];
          load_matrices(raw, b_address + b_off + (uint32_t)(j * 8 * kWeightPitch * 4));
#pragma unroll
          for (int k = 0; k < 4; k++) cuda_tf32_split(__uint_as_float(raw[k]), b_head[k], b_tail[k]);
#pragma unroll
          for (int i = 0; i < 2; i++) {
            cuda_mma_tf32x3(acc[i][j], a_head[i], a_tail[i], b_head[0], b_head[1], b_tail[0], b_tail[1]);
            cuda_mma_tf32x3(acc[i][j + 1], a_head[i], a_tail[i], b_head[2], b_head[3], b_tail[2], b_tail[3]);
          }
        }
      }
    }
  }
  /* lane (g, t) holds pixels g and g + 8 of each operand, channels 2t and 2t + 1 of each piece; the
   * lanes of one t store 8 consecutive floats of one output row: whole 32-byte sectors */
  const int oy = oy0 + warp;
  if (oy >= a.out_h) return;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < PIECES; j++)
#pragma unroll
    for (int k = 0; k < 2; k++) {
      const int channel = co0 + j * 8 + 2 * t + k;
      if (channel >= a.c_out) continue;
      const float b = bias ? __ldg(bias + channel) : 0.0f;
      const int64_t row = (((int64_t)image * a.c_out + channel) * a.out_h + oy) * a.out_w;
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
          const int ox = ox0 + i * 16 + half * 8 + g;
          if (ox >= a.out_w) continue;
          const float r = residual ? __ldg(residual + row + ox) : 0.0f;
          y[row + ox] = cuda_conv_finish(a.epilogue, acc[i][j][2 * half + k] + b, r);
        }
    }
}

size_t shared_of(int pieces) {
  return ((size_t)kWinPixels * kPixelPitch + (size_t)pieces * 8 * kWeightPitch) * sizeof(float);
}

const void* kernel_for(int pieces) {
  return pieces == 2   ? reinterpret_cast<const void*>(&conv_kernel<2>)
         : pieces == 4 ? reinterpret_cast<const void*>(&conv_kernel<4>)
                       : reinterpret_cast<const void*>(&conv_kernel<8>);
}

}  // namespace

extern "C" int cuda_conv_tf32x3_applies(int dtype, int reduced_precision, int spatial, int group, int channels_last,
                                        int c_in, int c_out, const int* kernel, const int* stride, const int* dilation,
                                        int cc_major) {
  const char* env = getenv("GFXEP_CUDA_CONV_TF32X3");
  if (!env || strcmp(env, "1") != 0) return 0; /* not yet measured on a device: asked for only */
  return dtype == GFX_DTYPE_F32 && !reduced_precision && spatial == 2 && group == 1 && !channels_last && c_in >= 8 &&
         c_out >= 8 && kernel[0] == 3 && kernel[1] == 3 && stride[0] == 1 && stride[1] == 1 && dilation[0] == 1 &&
         dilation[1] == 1 && cc_major >= 8;
}

extern "C" cudaError_t cuda_conv_tf32x3_plan(cuda_conv_tf32x3* p) {
  if (p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->in_h < 1 || p->in_w < 1 || p->out_h < 1 || p->out_w < 1 ||
      p->pad_top < 0 || p->pad_left < 0)
    return cudaErrorInvalidValue;
  /* a map much narrower than the tile leaves most of each product empty (ResNet's 14- and 7-wide
   * maps: 44% and 22%): cuDNN's kernels for small maps do better there */
  const int tiles_x = (p->out_w + kTileW - 1) / kTileW;
  if (4 * p->out_w < 3 * tiles_x * kTileW) return cudaErrorInvalidValue;
  p->channel_tiles = p->c_out <= 16 ? 2 : p->c_out <= 32 ? 4 : kMaxPieces;
  p->groups = (p->c_out + p->channel_tiles * 8 - 1) / (p->channel_tiles * 8);
  const int64_t tiles = (int64_t)p->n * ((p->out_h + kTileH - 1) / kTileH) * ((p->out_w + kTileW - 1) / kTileW);
  if (tiles > INT32_MAX || p->groups > 65535) return cudaErrorInvalidValue;
  p->tiles = (int)tiles;
  p->shared_bytes = shared_of(p->channel_tiles);
  return cudaSuccess;
}

extern "C" cudaError_t cuda_conv_tf32x3_run(const cuda_conv_tf32x3* p, const float* x, const float* w,
                                            const float* bias, const float* residual, float* y, cudaStream_t stream) {
  if (p->tiles < 1 || p->groups < 1) return cudaErrorInvalidValue;
  const int tiles_x = (p->out_w + kTileW - 1) / kTileW, tiles_y = (p->out_h + kTileH - 1) / kTileH;
  const conv_args a = {p->n, p->c_in, p->in_h, p->in_w, p->c_out, p->out_h, p->out_w, p->pad_top, p->pad_left,
                       tiles_x, tiles_x * tiles_y, p->epilogue};
  const dim3 grid((unsigned)p->tiles, (unsigned)p->groups), block(kThreads);
  switch (p->channel_tiles) {
    case 2: conv_kernel<2><<<grid, block, p->shared_bytes, stream>>>(x, w, bias, residual, y, a); break;
    case 4: conv_kernel<4><<<grid, block, p->shared_bytes, stream>>>(x, w, bias, residual, y, a); break;
    case 8: conv_kernel<8><<<grid, block, p->shared_bytes, stream>>>(x, w, bias, residual, y, a); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

/* Loads the kernels and lets them use more than 48 KiB of shared memory (the 64-channel one needs 64 KiB). */
extern "C" cudaError_t cuda_conv_tf32x3_preload(void) {
  cudaError_t e = cudaSuccess;
  for (int pieces = 2; pieces <= kMaxPieces && e == cudaSuccess; pieces *= 2)
    e = cudaFuncSetAttribute(kernel_for(pieces), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared_of(pieces));
  return e;
}

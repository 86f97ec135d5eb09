/* gfxep CUDA backend — float32 convolutions as three TF32 tensor-core products (see cuda_conv_tf32x3.h).
 *
 * mma.sync.m16n8k8 with TF32 operands, PTX's documented register layout, with lane's group
 * g = lane / 4 and t = lane % 4:
 *   A (16x8, row-major): a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
 *   B (8x8, column-major): b0 = B[t][g], b1 = B[t+4][g]
 *   C (16x8, float32): c0, c1 = C[g][2t, 2t+1]; c2, c3 = C[g+8][2t, 2t+1]
 * Rows of A are a warp's pixels (16 consecutive columns of its output row), its columns the taps
 * (input channel, kernel row, kernel column) of the chunk; B holds the weights, 8 output channels
 * per piece.
 */
#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_conv_thin.h"
#include "backend/cuda/cuda_conv_tf32x3.h"
#include "backend/cuda/cuda_mma.cuh"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/tensor.h"

namespace {

const int kWarps = 8;
const int kThreads = kWarps * 32;
const int kTileW = 32; /* output columns per tile: one warp's row, two 16-pixel A operands */
const int kTileH = kWarps;
const int kPitchCF = kTileW + 4; /* the staging tile's [channel][pixel] pitch: 32 lanes' writes in 32 banks */
/* taps per chunk are kept near this many (k steps of 8): the chunk's weights, NT x 32 lanes x 16 bytes per
 * step, and its window stay within shared memory at two blocks per multiprocessor */
const int kChunkTaps = 80;

struct tc_args {
  int n, c_in, in_h, in_w, c_out, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int area;        /* kernel_h x kernel_w */
  int chunk;       /* input channels per chunk */
  int chunks;      /* c_in / chunk, rounded up */
  int chunk_steps; /* chunk x area taps / 8, rounded up */
  int window_h, window_w;
  int pitch; /* words per window row: window_w rounded up to 16 mod 32, so that the rows a k step reads
              * (taps of the next kernel row) fall in other banks than the row it started in */
  int plane; /* words per channel of the window, also 16 mod 32 */
  int tiles_y, tiles_x;
  cuda_conv_epilogue e;
};

__host__ __device__ inline int round_up_to_16_mod_32(int v) { return v <= 16 ? 16 : ((v - 16 + 31) / 32) * 32 + 16; }

/* The window's run of zeros after its last channel: as long as the largest pixel base, so that taps
 * past the chunk read zeros (times zero weights: never 0 x Inf from whatever else is in memory). */
__host__ __device__ inline int zero_run(const tc_args& a) {
  return (kTileH - 1) * a.stride_h * a.pitch + (kTileW - 1) * a.stride_w + 1;
}

/* Shared memory, in bytes from the start: tap offsets and bias; then either the chunk's window (hi,
 * lo) and B fragments, or, after the last chunk, the warps' staging tiles in the same bytes. */
struct shared_layout {
  size_t bias, region, win_lo, b_frag, total;
};
__host__ __device__ inline size_t round_up16(size_t v) { return (v + 15) & ~(size_t)15; }
__host__ __device__ inline shared_layout layout_of(const tc_args& a, int nt) {
  shared_layout l;
  l.bias = round_up16((size_t)a.chunk_steps * 8 * sizeof(int));
  l.region = round_up16(l.bias + (size_t)nt * 8 * sizeof(float));
  const size_t window = (size_t)a.chunk * a.plane + zero_run(a);
  l.win_lo = l.region + round_up16(window * sizeof(uint32_t));
  l.b_frag = l.win_lo + round_up16(window * sizeof(uint32_t));
  const size_t loads_end = l.b_frag + (size_t)a.chunk_steps * nt * 32 * sizeof(uint4);
  const size_t stage_end = l.region + (size_t)kWarps * nt * 8 * kPitchCF * sizeof(float);
  l.total = loads_end > stage_end ? loads_end : stage_end;
  return l;
}

/* x = hi + lo: hi is x with the low 13 mantissa bits cleared (so it never rounds up into Inf), lo the
 * rest rounded to TF32. Inf and NaN go whole into lo, hi 0: the three terms then carry them through
 * lo x hi of the other operand alone (Inf x w stays Inf, a NaN stays NaN), where hi = Inf would meet
 * the other operand's lo (often 0, or of the other sign) and make Inf x 0 = NaN. Only both operands
 * non-finite at once (an Inf input times an Inf weight) comes out NaN instead of Inf. */
__device__ __forceinline__ void split_tf32(float x, uint32_t* hi, uint32_t* lo) {
  const uint32_t bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) {
    *hi = 0;
    *lo = (bits & 0x007fffffu) ? 0x7fc00000u : bits; /* a NaN with TF32's mantissa bits set */
    return;
  }
  *hi = bits & 0xffffe000u;
  const float rest = x - __uint_as_float(*hi);
#ifdef GFX_CUDA_MMA
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(*lo) : "f"(rest));
#else
  *lo = __float_as_uint(rest);
#endif
}

/* One chunk's input window into shared memory as [channel][row][column], split: a warp per window row,
 * its lanes along the row, so that reads follow memory; zeros outside the image and for channels past
 * c_in (the last chunk's). A lane issues the loads of kRowBatch rows (two columns each) before it stores
 * any, so that their latencies overlap. */
const int kRowBatch = 4;
__device__ __forceinline__ void load_window(const float* __restrict__ x, const tc_args& a, int img, int c0, int iy0,
                                            int ix0, uint32_t* win_hi, uint32_t* win_lo) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rows = a.chunk * a.window_h;
  for (int r0 = warp; r0 < rows; r0 += kWarps * kRowBatch) {
    float v[kRowBatch][2];
#pragma unroll
    for (int j = 0; j < kRowBatch; j++) {
      const int r = r0 + j * kWarps;
      const int cl = r / a.window_h, wy = r - cl * a.window_h, iy = iy0 + wy, c = c0 + cl;
      const bool inside = r < rows && iy >= 0 && iy < a.in_h && c < a.c_in;
      const float* src = x + (((int64_t)img * a.c_in + (inside ? c : 0)) * a.in_h + (inside ? iy : 0)) * a.in_w;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int wx = lane + h * 32, ix = ix0 + wx;
        v[j][h] = inside && wx < a.window_w && ix >= 0 && ix < a.in_w ? src[ix] : 0.0f;
      }
    }
#pragma unroll
    for (int j = 0; j < kRowBatch; j++) {
      const int r = r0 + j * kWarps;
      if (r >= rows) break;
      const int cl = r / a.window_h, wy = r - cl * a.window_h, at = cl * a.plane + wy * a.pitch;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const int wx = lane + h * 32;
        if (wx < a.window_w) split_tf32(v[j][h], win_hi + at + wx, win_lo + at + wx);
      }
    }
  }
  /* windows wider than 64 columns (strides of 2 and more): the rest, row by row */
  for (int r = warp; a.window_w > 64 && r < rows; r += kWarps) {
    const int cl = r / a.window_h, wy = r - cl * a.window_h, iy = iy0 + wy, c = c0 + cl;
    const bool inside = iy >= 0 && iy < a.in_h && c < a.c_in;
    const float* src = x + (((int64_t)img * a.c_in + (inside ? c : 0)) * a.in_h + (inside ? iy : 0)) * a.in_w;
    const int at = cl * a.plane + wy * a.pitch;
    for (int wx = 64 + lane; wx < a.window_w; wx += 32) {
      const int ix = ix0 + wx;
      split_tf32(inside && ix >= 0 && ix < a.in_w ? src[ix] : 0.0f, win_hi + at + wx, win_lo + at + wx);
    }
  }
}

/* One chunk's weights in B register order, split: b_frag[(step x NT + piece) x 32 + lane] holds
 * (b0 hi, b1 hi, b0 lo, b1 lo). Threads walk the weights in memory order (a channel's taps lie
 * together in [M, C, kH, kW]), kWeightBatch loads in flight before the stores; zeros past the chunk's
 * taps and past the output channels. */
const int kWeightBatch = 6;
template <int NT>
__device__ __forceinline__ void load_weights(const float* __restrict__ w, const tc_args& a, int ch0, int c0,
                                             uint32_t* b_words) {
  const int taps = a.chunk_steps * 8, total = NT * 8 * taps;
  const int valid = (a.c_in - c0 < a.chunk ? a.c_in - c0 : a.chunk) * a.area;
  const int64_t row_taps = (int64_t)a.c_in * a.area;
  for (int i0 = threadIdx.x; i0 < total; i0 += kThreads * kWeightBatch) {
    float v[kWeightBatch];
#pragma unroll
    for (int j = 0; j < kWeightBatch; j++) {
      const int i = i0 + j * kThreads, n = i / taps, k = i - n * taps, ch = ch0 + n;
      v[j] = i < total && ch < a.c_out && k < valid ? w[(int64_t)ch * row_taps + (int64_t)c0 * a.area + k] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kWeightBatch; j++) {
      const int i = i0 + j * kThreads, n = i / taps, k = i - n * taps;
      if (i >= total) break;
      uint32_t hi, lo;
      split_tf32(v[j], &hi, &lo);
      const int step = k >> 3, kk = k & 7, lane = (n & 7) * 4 + (kk & 3), half = kk >> 2;
      uint32_t* at = b_words + ((size_t)(step * NT + (n >> 3)) * 32 + lane) * 4;
      at[half] = hi;
      at[2 + half] = lo;
    }
  }
}

/* A warp's staged output row (32 pixels x this block's channels) through the epilogue into y: a
 * channel's 32 pixels per store, consecutive words. */
template <int NT, int ACT>
__device__ __forceinline__ void store_row(const float* stage, const float* bias_of, const float* __restrict__ residual,
                                          float* __restrict__ y, const tc_args& a, int img, int oy, int ox0, int ch0) {
  const int lane = threadIdx.x & 31;
  if (ox0 + lane >= a.out_w) return;
  const int64_t plane = (int64_t)a.out_h * a.out_w;
  const int64_t at0 = ((int64_t)img * a.c_out + ch0) * plane + (int64_t)oy * a.out_w + ox0 + lane;
  const int channels = a.c_out - ch0 < NT * 8 ? a.c_out - ch0 : NT * 8;
  for (int cl = 0; cl < channels; cl++) {
    const int64_t at = at0 + cl * plane;
    const float r = residual ? residual[at] : 0.0f;
    y[at] = cuda_conv_finish_as<ACT>(a.e, stage[cl * kPitchCF + lane] + bias_of[cl], r);
  }
}

/* A's registers for S k steps (their hi and lo halves) and the loads that fill them from the window. */
template <int S>
struct a_regs {
  uint32_t hi[S][2][4], lo[S][2][4];
};
template <int S>
__device__ __forceinline__ void load_a(a_regs<S>& r, const uint32_t* win_hi, const uint32_t* win_lo,
                                       const int* tap_offset, const int (&base)[2][2], int ks, int t) {
#pragma unroll
  for (int s = 0; s < S; s++) {
    const int o0 = tap_offset[(ks + s) * 8 + t], o4 = tap_offset[(ks + s) * 8 + t + 4];
#pragma unroll
    for (int m = 0; m < 2; m++) {
      const int p0 = base[m][0], p8 = base[m][1];
      r.hi[s][m][0] = win_hi[p0 + o0], r.lo[s][m][0] = win_lo[p0 + o0];
      r.hi[s][m][1] = win_hi[p8 + o0], r.lo[s][m][1] = win_lo[p8 + o0];
      r.hi[s][m][2] = win_hi[p0 + o4], r.lo[s][m][2] = win_lo[p0 + o4];
      r.hi[s][m][3] = win_hi[p8 + o4], r.lo[s][m][3] = win_lo[p8 + o4];
    }
  }
}

/* S k steps of 8 taps, from ks on: each output's S x 8 taps summed on the tensor cores from zero, the
 * small terms (lo x hi, hi x lo) first, then added to the running sums in IEEE float32. The tensor
 * cores' own accumulation truncates each addition, which over hundreds of taps missed float32's
 * tolerance; over S x 8 taps it stays within float32's rounding of the whole sum. */
template <int NT, int S>
__device__ __forceinline__ void mma_steps(float (&acc)[2][NT][4], const a_regs<S>& r, const uint4* b_frag, int ks,
                                          int lane) {
#pragma unroll
  for (int nt = 0; nt < NT; nt++) {
    uint4 b[S];
#pragma unroll
    for (int s = 0; s < S; s++) b[s] = b_frag[((ks + s) * NT + nt) * 32 + lane];
#pragma unroll
    for (int m = 0; m < 2; m++) {
      float d[4];
      cuda_mma_tf32_from_zero(d, r.lo[0][m], b[0].x, b[0].y);
      cuda_mma_tf32(d, r.hi[0][m], b[0].z, b[0].w);
#pragma unroll
      for (int s = 1; s < S; s++) {
        cuda_mma_tf32(d, r.lo[s][m], b[s].x, b[s].y);
        cuda_mma_tf32(d, r.hi[s][m], b[s].z, b[s].w);
      }
#pragma unroll
      for (int s = 0; s < S; s++) cuda_mma_tf32(d, r.hi[s][m], b[s].x, b[s].y);
#pragma unroll
      for (int j = 0; j < 4; j++) acc[m][nt][j] += d[j];
    }
  }
}

/* A chunk's k steps, two per float32 addition (an odd last one alone). H100, 2 against 1: ESPCN's 3 -> 64
 * 5x5 0.219 ms against 0.223, its 64 -> 32 0.733 against 0.743, SR64's 64 -> 64 0.260 against 0.266,
 * the float32 SR64 net 2.31 against 2.37; loading the next step's A ahead (0.229, 0.768, 0.277) and
 * filling the next chunk by cp.async while this one is summed (0.238, 0.966, 0.328) were slower. */
template <int NT>
__device__ __forceinline__ void chunk_steps(float (&acc)[2][NT][4], const uint32_t* win_hi, const uint32_t* win_lo,
                                            const uint4* b_frag, const int* tap_offset, const int (&base)[2][2],
                                            int steps, int lane, int t) {
  int ks = 0;
#pragma unroll 1
  for (; ks + 2 <= steps; ks += 2) {
    a_regs<2> r;
    load_a(r, win_hi, win_lo, tap_offset, base, ks, t);
    mma_steps<NT, 2>(acc, r, b_frag, ks, lane);
  }
  if (ks < steps) {
    a_regs<1> r;
    load_a(r, win_hi, win_lo, tap_offset, base, ks, t);
    mma_steps<NT, 1>(acc, r, b_frag, ks, lane);
  }
}

template <int NT>
__global__ void __launch_bounds__(kThreads, 2)
    tf32x3_conv_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                       const float* __restrict__ residual, float* __restrict__ y, tc_args a) {
#ifdef GFX_CUDA_MMA
  extern __shared__ __align__(16) unsigned char smem[];
  const shared_layout l = layout_of(a, NT);
  int* tap_offset = reinterpret_cast<int*>(smem);
  float* bias_of = reinterpret_cast<float*>(smem + l.bias); /* this block's channels' bias, 0 for none */
  uint32_t* win_hi = reinterpret_cast<uint32_t*>(smem + l.region);
  uint32_t* win_lo = reinterpret_cast<uint32_t*>(smem + l.win_lo);
  uint32_t* b_words = reinterpret_cast<uint32_t*>(smem + l.b_frag);
  const uint4* b_frag = reinterpret_cast<const uint4*>(b_words);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int ch0 = blockIdx.y * NT * 8;
  const int tx = blockIdx.x % a.tiles_x, ty = (blockIdx.x / a.tiles_x) % a.tiles_y;
  const int img = blockIdx.x / (a.tiles_x * a.tiles_y), oy0 = ty * kTileH, ox0 = tx * kTileW;
  const int oy = oy0 + warp;
  const int window_size = a.chunk * a.plane;

  /* the tap -> window offset table of a chunk (the same for every chunk), the zeros after the window, the bias */
  for (int k = threadIdx.x; k < a.chunk_steps * 8; k += kThreads) {
    int offset = window_size; /* the run of zeros */
    if (k < a.chunk * a.area) {
      const int c = k / a.area, r = k - c * a.area, ky = r / a.kernel_w, kx = r - ky * a.kernel_w;
      offset = c * a.plane + ky * a.dilation_h * a.pitch + kx * a.dilation_w;
    }
    tap_offset[k] = offset;
  }
  for (int cl = threadIdx.x; cl < NT * 8; cl += kThreads)
    bias_of[cl] = bias && ch0 + cl < a.c_out ? bias[ch0 + cl] : 0.0f;

  float acc[2][NT][4];
#pragma unroll
  for (int m = 0; m < 2; m++)
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
      for (int j = 0; j < 4; j++) acc[m][nt][j] = 0.0f;
  /* where pixels g and g + 8 of each 16-pixel operand start reading the window */
  int base[2][2];
#pragma unroll
  for (int m = 0; m < 2; m++)
#pragma unroll
    for (int h = 0; h < 2; h++) base[m][h] = warp * a.stride_h * a.pitch + (m * 16 + g + h * 8) * a.stride_w;

  const int iy0 = oy0 * a.stride_h - a.pad_top, ix0 = ox0 * a.stride_w - a.pad_left;
  for (int c0 = 0; c0 < a.c_in; c0 += a.chunk) {
    __syncthreads(); /* the previous chunk is read (and the table above written) */
    load_window(x, a, img, c0, iy0, ix0, win_hi, win_lo);
    if (c0 == 0)
      for (int i = threadIdx.x; i < zero_run(a); i += kThreads) win_hi[window_size + i] = win_lo[window_size + i] = 0;
    load_weights<NT>(w, a, ch0, c0, b_words);
    __syncthreads();
    if (oy >= a.out_h) continue;
    chunk_steps<NT>(acc, win_hi, win_lo, b_frag, tap_offset, base, a.chunk_steps, lane, t);
  }

  __syncthreads(); /* the staging tiles reuse the window's and weights' bytes */
  if (oy >= a.out_h) return;
  float* stage = reinterpret_cast<float*>(smem + l.region) + warp * NT * 8 * kPitchCF;
#pragma unroll
  for (int m = 0; m < 2; m++)
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
      for (int j = 0; j < 4; j++)
        stage[(nt * 8 + 2 * t + (j & 1)) * kPitchCF + m * 16 + g + (j >> 1) * 8] = acc[m][nt][j];
  __syncwarp();
  switch (a.e.activation) { /* the common activations compiled into the loop, the rest looked up */
    case IR_ACT_NONE: store_row<NT, IR_ACT_NONE>(stage, bias_of, residual, y, a, img, oy, ox0, ch0); break;
    case IR_ACT_RELU: store_row<NT, IR_ACT_RELU>(stage, bias_of, residual, y, a, img, oy, ox0, ch0); break;
    default: store_row<NT, kCudaAnyActivation>(stage, bias_of, residual, y, a, img, oy, ox0, ch0); break;
  }
#else
  (void)x, (void)w, (void)bias, (void)residual, (void)y, (void)a;
#endif
}

/* NT: pieces of 8 output channels per block */
int pieces_for(int c_out) { return c_out <= 8 ? 1 : c_out <= 16 ? 2 : c_out <= 32 ? 4 : c_out <= 48 ? 6 : 8; }

const void* kernel_for(int nt) {
  switch (nt) {
    case 1: return (const void*)tf32x3_conv_kernel<1>;
    case 2: return (const void*)tf32x3_conv_kernel<2>;
    case 4: return (const void*)tf32x3_conv_kernel<4>;
    case 6: return (const void*)tf32x3_conv_kernel<6>;
    default: return (const void*)tf32x3_conv_kernel<8>;
  }
}
const int kPieceCounts[] = {1, 2, 4, 6, 8};

tc_args args_of(const cuda_conv_tf32x3* p) {
  tc_args a;
  a.n = p->n;
  a.c_in = p->c_in;
  a.in_h = p->in_h;
  a.in_w = p->in_w;
  a.c_out = p->c_out;
  a.out_h = p->out_h;
  a.out_w = p->out_w;
  a.kernel_h = p->kernel_h;
  a.kernel_w = p->kernel_w;
  a.stride_h = p->stride_h;
  a.stride_w = p->stride_w;
  a.dilation_h = p->dilation_h;
  a.dilation_w = p->dilation_w;
  a.pad_top = p->pad_top;
  a.pad_left = p->pad_left;
  a.area = p->kernel_h * p->kernel_w;
  a.chunk = p->chunk;
  a.chunks = (p->c_in + p->chunk - 1) / p->chunk;
  a.chunk_steps = (p->chunk * a.area + 7) / 8;
  a.window_h = (kTileH - 1) * p->stride_h + (p->kernel_h - 1) * p->dilation_h + 1;
  a.window_w = (kTileW - 1) * p->stride_w + (p->kernel_w - 1) * p->dilation_w + 1;
  a.pitch = round_up_to_16_mod_32(a.window_w);
  a.plane = a.window_h * a.pitch;
  if (a.plane % 32 == 0) a.plane += 16;
  a.tiles_y = (p->out_h + kTileH - 1) / kTileH;
  a.tiles_x = (p->out_w + kTileW - 1) / kTileW;
  a.e = p->epilogue;
  return a;
}

/* The opt-in shared memory limit of the current device, granted to every kernel here. */
cudaError_t allow_shared(int* limit) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  for (int i = 0; i < 5 && err == cudaSuccess; i++)
    err = cudaFuncSetAttribute(kernel_for(kPieceCounts[i]), cudaFuncAttributeMaxDynamicSharedMemorySize, *limit);
  return err;
}

void launch(int nt, dim3 grid, size_t shared, cudaStream_t stream, const float* x, const float* w, const float* bias,
            const float* residual, float* y, const tc_args& a) {
  switch (nt) {
    case 1: tf32x3_conv_kernel<1><<<grid, kThreads, shared, stream>>>(x, w, bias, residual, y, a); break;
    case 2: tf32x3_conv_kernel<2><<<grid, kThreads, shared, stream>>>(x, w, bias, residual, y, a); break;
    case 4: tf32x3_conv_kernel<4><<<grid, kThreads, shared, stream>>>(x, w, bias, residual, y, a); break;
    case 6: tf32x3_conv_kernel<6><<<grid, kThreads, shared, stream>>>(x, w, bias, residual, y, a); break;
    default: tf32x3_conv_kernel<8><<<grid, kThreads, shared, stream>>>(x, w, bias, residual, y, a); break;
  }
}

}  // namespace

extern "C" int cuda_conv_tf32x3_applies(int dtype, int allow_tf32, int spatial, int group, int channels_last, int c_in,
                                        int c_out, const int* kernel, int cc_major) {
  const char* env = getenv("GFXEP_CUDA_CONV_TF32X3"); /* unset or "auto": where measured faster (plan) */
  if (env && strcmp(env, "0") == 0) return 0;
  return dtype == GFX_DTYPE_F32 && !allow_tf32 && spatial == 2 && group == 1 && !channels_last && c_in >= 1 &&
         c_out > CUDA_CONV_THIN_MAX_OUT_CHANNELS && kernel[0] >= 1 && kernel[1] >= 1 &&
         (int64_t)kernel[0] * kernel[1] >= 2 && cc_major >= 8;
}

extern "C" cudaError_t cuda_conv_tf32x3_plan(cuda_conv_tf32x3* p) {
  if (p->n < 1 || p->c_in < 1 || p->c_out < 1 || p->out_h < 1 || p->out_w < 1 || p->in_h < 1 || p->in_w < 1 ||
      p->kernel_h < 1 || p->kernel_w < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 ||
      p->dilation_w < 1 || p->kernel_h > 64 || p->kernel_w > 64 || p->stride_h > 64 || p->stride_w > 64 ||
      p->dilation_h > 64 || p->dilation_w > 64)
    return cudaErrorInvalidValue;
  const int area = p->kernel_h * p->kernel_w;
  const int nt = pieces_for(p->c_out);
  /* taps per chunk: more taps mean fewer barriers and loads per tile but more shared memory per block.
   * H100, ESPCN's 64 -> 32 3x3 at 540x960: 0.855 ms at 40 taps, 0.754 at 80, 0.668 at 144 (cuDNN
   * 0.695); SR64's 64 -> 64: 0.311, 0.269, 0.345 (at 144 its 64 channels' weights leave room for one
   * block per multiprocessor). GFXEP_CUDA_CONV_TF32X3_TAPS sets it, to measure. */
  const char* taps_env = getenv("GFXEP_CUDA_CONV_TF32X3_TAPS");
  const int chunk_taps = taps_env && atoi(taps_env) > 0 ? atoi(taps_env) : kChunkTaps;
  int chunk = chunk_taps / area;
  if (chunk < 1) chunk = 1;
  if (chunk > p->c_in) chunk = p->c_in;
  p->chunk = chunk;
  const tc_args a = args_of(p);
  const int64_t tiles = (int64_t)a.n * a.tiles_y * a.tiles_x;
  const int64_t channel_tiles = (p->c_out + nt * 8 - 1) / (nt * 8);
  if (tiles > INT_MAX || channel_tiles > 65535) return cudaErrorInvalidValue;
  p->channel_tiles = (int)channel_tiles;
  p->shared_bytes = layout_of(a, nt).total;
  int limit = 0;
  cudaError_t err = allow_shared(&limit);
  if (err != cudaSuccess) return err;
  if (p->shared_bytes > (size_t)limit) return cudaErrorInvalidValue;
  /* a build whose only code for this device is PTX of an older architecture has the kernel empty */
  cudaFuncAttributes attr;
  err = cudaFuncGetAttributes(&attr, kernel_for(nt));
  if (err != cudaSuccess) return err;
  if (attr.ptxVersion < 80) return cudaErrorNotSupported;
  /* "auto": the kinds of layer it was measured faster than cuDNN on (H100, 80-tap chunks): the tiles
   * mostly full and filling the device twice over (ResNet-18's 14- and 7-wide maps took 4.86 ms with it
   * on every Conv against cuDNN's 1.10), and either at most 16 output channels (ESPCN's 32 -> 12 0.278
   * ms against 0.345) or one chunk holding every input channel (a first layer: ESPCN's 3 -> 64 5x5
   * 0.226 against 0.286). Layers of 32 output channels and more over several chunks were slower or
   * within a few percent (64 -> 32 0.754 against 0.695, 0.668 in 144-tap chunks; 64 -> 64 0.269
   * against 0.242; 128 -> 128 0.171 against 0.133) and stay with cuDNN, except where the output
   * channels are fewer than 64 and no multiple of 32: SR64's last layer, 64 -> 48 3x3 at 270x480, took
   * 0.221 ms against cuDNN's 0.339 (H100, 2026-12-07; the same run: 64 -> 32 0.746 against 0.694,
   * 64 -> 64 0.260 against 0.242). */
  const char* env = getenv("GFXEP_CUDA_CONV_TF32X3");
  if (env && strcmp(env, "1") == 0) return cudaSuccess;
  int device = 0, sms = 0;
  err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  const bool fills = p->out_w >= kTileW * 3 / 4 && tiles * channel_tiles >= 2 * (int64_t)sms;
  const bool pays = nt <= 2 || chunk == p->c_in || (p->c_out < 64 && p->c_out % 32 != 0);
  return fills && pays ? cudaSuccess : cudaErrorNotSupported;
}

extern "C" cudaError_t cuda_conv_tf32x3_run(const cuda_conv_tf32x3* p, const float* x, const float* w,
                                            const float* bias, const float* residual, float* y, cudaStream_t stream) {
  if (p->channel_tiles < 1 || p->chunk < 1) return cudaErrorInvalidValue;
  const tc_args a = args_of(p);
  const dim3 grid((unsigned)(a.n * a.tiles_y * a.tiles_x), (unsigned)p->channel_tiles);
  launch(pieces_for(p->c_out), grid, p->shared_bytes, stream, x, w, bias, residual, y, a);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_conv_tf32x3_preload(void) {
  int limit = 0;
  cudaError_t err = allow_shared(&limit);
  for (int i = 0; i < 5 && err == cudaSuccess; i++) {
    cudaFuncAttributes attr;
    err = cudaFuncGetAttributes(&attr, kernel_for(kPieceCounts[i]));
  }
  return err;
}

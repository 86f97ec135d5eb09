/* gfxep CUDA backend — a chain of two 3x3 convolutions in one kernel (see cuda_conv_chain.h).
 *
 * A block is 16 warps and walks output tiles of tile_h x tile_w pixels of one image with a stride of
 * the grid. Per tile:
 *   1. the input window, the tile plus 2 pixels on every side, is in shared memory as [pixel][channel]
 *      (zeros outside the image), put there by cp.async while the block computed the previous tile's
 *      second convolution (NHWC), or by plain loads (NCHW);
 *   2. the first convolution over the tile plus 1 pixel on every side (the middle region: 16 x 32
 *      pixels for the largest tile, exactly 16 pairs of 16-pixel A operands, one per warp): an
 *      implicit matrix product, K = 9 taps x C_in in k-steps of 16 channels of one tap, A's rows read
 *      by ldmatrix straight from the window at the tap's offset. Bias and activation are applied to
 *      the float32 sums, pixels outside the image are set to 0 (the second convolution's zero pad),
 *      and the result is rounded once into shared memory;
 *   3. the second convolution from there over the tile, written to y with its bias and activation.
 * Weights are in shared memory for all of a block's tiles as [output channel][tap][input channel],
 * the layout whose rows ldmatrix hands out in mma.sync's B order.
 *
 * Every pixel row and weight row in shared memory is followed by 16 bytes of padding: a row pitch of
 * an odd number of 16-byte units puts the 8 rows of an ldmatrix in 8 different bank groups.
 */
#include "backend/cuda/cuda_conv_chain.h"
#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_mma.cuh"
#include "backend/cuda/cuda_vec16.cuh"

#include <limits.h>
#include <stdint.h>

#include "ir/tensor.h"

namespace {

const int kWarps = 16;
const int kThreads = kWarps * 32;
const int kRowPad = 8; /* 16-bit elements after every pixel row and weight row in shared memory */

/* Output tiles in order of preference; the middle region (tile + 2) of the first two is 512 pixels,
 * 16 pairs of A operands: one per warp. */
const int kTiles[][2] = {{14, 30}, {6, 30}, {14, 14}, {6, 14}};

struct chain_args {
  int n, h, w, c_in, c_mid, c_out;
  int tile_h, tile_w, tiles_y, tiles_x, tiles;
  int win_w, mid_h, mid_w;     /* the input window is (tile_h + 4) x win_w, the middle region mid_h x mid_w */
  int mid_w_log2;              /* mid_w is a power of two (kTiles): pixel q is row q >> log2, column q & (mid_w - 1) */
  int in_pitch, mid_pitch;     /* elements per pixel in shared memory */
  int wa_pitch, wb_pitch;      /* elements per weight row */
  int nb;                      /* rows of the second weights: c_out rounded up to 16 (zeros past c_out) */
  int window_pixels;
  unsigned off_mid, off_wa, off_wb, off_bias; /* byte offsets in shared memory */
  cuda_conv_epilogue ea, eb;
};

__host__ __device__ inline unsigned round16(size_t v) { return (unsigned)((v + 15) / 16 * 16); }

/* Fills the geometry for a tile; returns the shared memory it needs. */
size_t geometry(const cuda_conv_chain* p, int tile_h, int tile_w, chain_args* a) {
  *a = chain_args{};
  a->n = p->n, a->h = p->h, a->w = p->w, a->c_in = p->c_in, a->c_mid = p->c_mid, a->c_out = p->c_out;
  a->tile_h = tile_h, a->tile_w = tile_w;
  a->tiles_y = (p->h + tile_h - 1) / tile_h;
  a->tiles_x = (p->w + tile_w - 1) / tile_w;
  a->win_w = tile_w + 4;
  a->mid_h = tile_h + 2, a->mid_w = tile_w + 2;
  while ((1 << a->mid_w_log2) < a->mid_w) a->mid_w_log2++;
  a->window_pixels = (tile_h + 4) * a->win_w;
  a->in_pitch = p->c_in + kRowPad;
  a->mid_pitch = p->c_mid + kRowPad;
  a->wa_pitch = 9 * p->c_in + kRowPad;
  a->wb_pitch = 9 * p->c_mid + kRowPad;
  a->nb = (p->c_out + 15) / 16 * 16;
  a->ea = p->first, a->eb = p->second;
  const size_t e = 2; /* bytes per element */
  a->off_mid = round16((size_t)a->window_pixels * a->in_pitch * e);
  a->off_wa = a->off_mid + round16((size_t)a->mid_h * a->mid_w * a->mid_pitch * e);
  a->off_wb = a->off_wa + round16((size_t)p->c_mid * a->wa_pitch * e);
  a->off_bias = a->off_wb + round16((size_t)a->nb * a->wb_pitch * e);
  return a->off_bias + (size_t)(p->c_mid + a->nb) * sizeof(float);
}

__device__ __forceinline__ uint32_t shared_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Four 8x8 matrices of 16-bit elements; lanes 8i..8i+7 give matrix i's row addresses. */
__device__ __forceinline__ void load_matrices(uint32_t* r, uint32_t address) {
#ifdef GFX_CUDA_MMA
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
#else
  r[0] = r[1] = r[2] = r[3] = 0u;
  (void)address;
#endif
}

/* 16 bytes from global to shared memory without passing through registers; zeros when !inside. */
__device__ __forceinline__ void copy16_async(uint32_t dst, const void* src, bool inside) {
#ifdef GFX_CUDA_MMA
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside ? 16 : 0)
               : "memory");
#else
  (void)dst, (void)src, (void)inside;
#endif
}

__device__ __forceinline__ void copies_commit() {
#ifdef GFX_CUDA_MMA
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void copies_wait() {
#ifdef GFX_CUDA_MMA
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

struct tile_pos {
  int image, y0, x0;
};

__device__ __forceinline__ tile_pos tile_at(const chain_args& a, int tile) {
  const int per_image = a.tiles_y * a.tiles_x;
  const int image = tile / per_image, rest = tile - image * per_image;
  const int ty = rest / a.tiles_x, tx = rest - ty * a.tiles_x;
  return tile_pos{image, ty * a.tile_h, tx * a.tile_w};
}

/* The input window of a tile into shared memory [pixel][channel], zeros outside the image. */
template <typename T, bool NHWC>
__device__ __forceinline__ void load_window(const chain_args& a, const T* x, T* window, int tile) {
  const tile_pos t = tile_at(a, tile);
  if (NHWC) {
    const int vectors = a.c_in / 8; /* 16-byte pieces of a pixel's channels: 2, 4, 6 or 8 */
    const int total = a.window_pixels * vectors;
    const int stride = kThreads / vectors * vectors; /* a multiple of the pieces: a thread keeps its piece */
    const int piece = threadIdx.x % vectors;
    for (int v = threadIdx.x; v < total && threadIdx.x < stride; v += stride) {
      const int px = v / vectors;
      const int r = px / a.win_w, c = px - r * a.win_w;
      const int iy = t.y0 - 2 + r, ix = t.x0 - 2 + c;
      const bool inside = iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
      const T* src = inside ? x + (((int64_t)t.image * a.h + iy) * a.w + ix) * a.c_in + piece * 8 : x;
      copy16_async(shared_address(window + px * a.in_pitch + piece * 8), src, inside);
    }
    copies_commit();
  } else {
    const int total = a.c_in * a.window_pixels;
    const T zero = from_float<T>(0.0f);
    for (int e = threadIdx.x; e < total; e += kThreads) {
      const int ci = e / a.window_pixels, px = e - ci * a.window_pixels;
      const int r = px / a.win_w, c = px - r * a.win_w;
      const int iy = t.y0 - 2 + r, ix = t.x0 - 2 + c;
      const bool inside = iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
      window[px * a.in_pitch + ci] = inside ? x[(((int64_t)t.image * a.c_in + ci) * a.h + iy) * a.w + ix] : zero;
    }
  }
}

/* Weights [rows][c_src][3][3] (rows past `valid` zero) into [row][tap][channel] with `pitch`, and a
 * bias (NULL: zeros) into float32. */
template <typename T>
__device__ void load_weights(const T* w, const T* bias, int valid, int rows, int c_src, int pitch, T* dst,
                             float* bias_dst) {
  const int taps = 9 * c_src;
  for (int e = threadIdx.x; e < rows * taps; e += kThreads) {
    const int row = e / taps, k = e - row * taps;
    const int tap = k / c_src, ci = k - tap * c_src;
    dst[row * pitch + k] = row < valid ? w[((int64_t)row * c_src + ci) * 9 + tap] : from_float<T>(0.0f);
  }
  for (int e = threadIdx.x; e < rows; e += kThreads) bias_dst[e] = bias && e < valid ? to_float(bias[e]) : 0.0f;
}

/* One 3x3 convolution of the chain from shared memory: the output region is rows x cols pixels
 * (pixel q = r * cols + c), the source region (rows + 2) x (cols + 2) at src with src_pitch elements
 * per pixel and c_src channels, weights w [channels][9 * c_src] with w_pitch. A warp's item is 32
 * pixels (two A operands) by NT * 8 output channels; store(q, channel, v0, v1) receives the float32
 * sums of channels `channel` and `channel + 1` of pixel q. */
template <typename T, int NT, typename Store>
__device__ __forceinline__ void conv3x3(const T* src, int src_pitch, int rows, int cols, int c_src, const T* w,
                                        int w_pitch, int channels, Store store) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int pixels = rows * cols, pairs = (pixels + 31) / 32, chunks = channels / (NT * 8);
  const int src_w = cols + 2, k_chunks = c_src / 16;
  for (int item = warp; item < pairs * chunks; item += kWarps) {
    const int pair = item % pairs, chunk = item / pairs;
    /* lane l addresses A row l % 16 (of each operand) at channel 8 (l / 16): ldmatrix's order */
    uint32_t a_address[2];
    for (int i = 0; i < 2; i++) {
      int q = pair * 32 + i * 16 + (lane & 15);
      q = q < pixels ? q : pixels - 1; /* rows past the region read a real pixel; not stored */
      const int r = q / cols, c = q - r * cols;
      a_address[i] = shared_address(src + (r * src_w + c) * src_pitch + (lane >> 4) * 8);
    }
    /* and B row (output channel) l % 8 + 8 (l / 16) at element 8 ((l / 8) % 2) */
    const int b_row = chunk * NT * 8 + (lane & 7) + ((lane >> 4) << 3);
    const uint32_t b_address = shared_address(w + b_row * w_pitch + ((lane >> 3) & 1) * 8);
    float acc[2][NT][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < NT; j++)
#pragma unroll
        for (int k = 0; k < 4; k++) acc[i][j][k] = 0.0f;
    /* k-step s is channels 16 (s % k_chunks) of tap s / k_chunks; its operands are loaded one step
     * ahead into the other of two register sets, so the products wait on no shared-memory load. The
     * offsets advance step by step (no division in the loop). */
    const int steps = 9 * k_chunks;
    int kc = 0, kx = 0;
    uint32_t a_off = 0, b_off = 0;
    auto load = [&](uint32_t(&fa)[2][4], uint32_t(&fb)[NT][2]) {
      load_matrices(fa[0], a_address[0] + a_off);
      load_matrices(fa[1], a_address[1] + a_off);
#pragma unroll
      for (int j = 0; j < NT; j += 2) {
        uint32_t r[4];
        load_matrices(r, b_address + b_off + (uint32_t)(j * 8 * w_pitch * 2));
        fb[j][0] = r[0], fb[j][1] = r[1], fb[j + 1][0] = r[2], fb[j + 1][1] = r[3];
      }
      /* the next step: 16 channels on, or the next tap (one pixel right, or the next row's first) */
      b_off += 32;
      if (++kc < k_chunks) {
        a_off += 32;
      } else {
        kc = 0;
        a_off += (uint32_t)(src_pitch * 2 - (k_chunks - 1) * 32);
        if (++kx == 3) {
          kx = 0;
          a_off += (uint32_t)((src_w - 3) * src_pitch * 2);
        }
      }
    };
    auto multiply = [&](const uint32_t(&fa)[2][4], const uint32_t(&fb)[NT][2]) {
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) cuda_mma_traits<T>::mma(acc[i][j], fa[i], fb[j][0], fb[j][1]);
    };
    uint32_t a0[2][4], b0[NT][2], a1[2][4], b1[NT][2];
    load(a0, b0);
    int s = 0;
    for (; s + 2 <= steps; s += 2) {
      load(a1, b1);
      multiply(a0, b0);
      if (s + 2 < steps) load(a0, b0);
      multiply(a1, b1);
    }
    if (s < steps) multiply(a0, b0); /* an odd count: the last step is in the first set */
    /* lane (g, t) holds pixels g and g + 8 of each operand, channels 2t and 2t + 1 of each piece */
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
      for (int j = 0; j < NT; j++)
#pragma unroll
        for (int half = 0; half < 2; half++) {
          const int q = pair * 32 + i * 16 + g + half * 8;
          if (q < pixels) store(q, chunk * NT * 8 + j * 8 + 2 * t, acc[i][j][2 * half], acc[i][j][2 * half + 1]);
        }
  }
}

template <typename T, int NTA, int NTB, bool NHWC>
__global__ void __launch_bounds__(kThreads, 1)
    chain_kernel(const T* __restrict__ x, const T* __restrict__ wa, const T* __restrict__ ba,
                 const T* __restrict__ wb, const T* __restrict__ bb, T* __restrict__ y, chain_args a) {
  extern __shared__ __align__(16) unsigned char shared[];
  T* window = reinterpret_cast<T*>(shared);
  T* mid = reinterpret_cast<T*>(shared + a.off_mid);
  T* wa_s = reinterpret_cast<T*>(shared + a.off_wa);
  T* wb_s = reinterpret_cast<T*>(shared + a.off_wb);
  float* ba_s = reinterpret_cast<float*>(shared + a.off_bias);
  float* bb_s = ba_s + a.c_mid;
  load_weights(wa, ba, a.c_mid, a.c_mid, a.c_in, a.wa_pitch, wa_s, ba_s);
  load_weights(wb, bb, a.c_out, a.nb, a.c_mid, a.wb_pitch, wb_s, bb_s);
  int tile = blockIdx.x;
  if (tile < a.tiles) load_window<T, NHWC>(a, x, window, tile);
  for (; tile < a.tiles; tile += gridDim.x) {
    copies_wait();
    __syncthreads(); /* the window (and the weights) in place; the last tile's second product done */
    const tile_pos t = tile_at(a, tile);
    /* the first convolution over the middle region, pixel (r, c) at image (y0 - 1 + r, x0 - 1 + c) */
    conv3x3<T, NTA>(window, a.in_pitch, a.mid_h, a.mid_w, a.c_in, wa_s, a.wa_pitch, a.c_mid,
                    [&](int q, int ch, float v0, float v1) {
                      const int r = q >> a.mid_w_log2, c = q & (a.mid_w - 1);
                      const int iy = t.y0 - 1 + r, ix = t.x0 - 1 + c;
                      const bool inside = iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
                      float o0 = 0.0f, o1 = 0.0f;
                      if (inside && a.ea.activation == IR_ACT_RELU) { /* the usual one, without the switch */
                        o0 = cuda_relu(v0 + ba_s[ch]), o1 = cuda_relu(v1 + ba_s[ch + 1]);
                      } else if (inside) {
                        o0 = cuda_conv_activate(a.ea, v0 + ba_s[ch]), o1 = cuda_conv_activate(a.ea, v1 + ba_s[ch + 1]);
                      }
                      *reinterpret_cast<uint32_t*>(mid + q * a.mid_pitch + ch) = cuda_mma_traits<T>::pack(o0, o1);
                    });
    __syncthreads(); /* the middle region complete; the window free */
    if (tile + (int)gridDim.x < a.tiles) load_window<T, NHWC>(a, x, window, tile + gridDim.x);
    /* the second convolution over the tile, while the next window arrives */
    conv3x3<T, NTB>(mid, a.mid_pitch, a.tile_h, a.tile_w, a.c_mid, wb_s, a.wb_pitch, a.nb,
                    [&](int q, int ch, float v0, float v1) {
                      const int r = q / a.tile_w, c = q - r * a.tile_w;
                      const int oy = t.y0 + r, ox = t.x0 + c;
                      if (oy >= a.h || ox >= a.w || ch >= a.c_out) return;
                      const bool second = ch + 1 < a.c_out;
                      const float f0 = cuda_conv_activate(a.eb, v0 + bb_s[ch]);
                      const float f1 = second ? cuda_conv_activate(a.eb, v1 + bb_s[ch + 1]) : 0.0f;
                      const T o0 = from_float<T>(f0), o1 = from_float<T>(f1);
                      if (NHWC) {
                        T* dst = y + (((int64_t)t.image * a.h + oy) * a.w + ox) * a.c_out + ch;
                        if (second && a.c_out % 2 == 0) {
                          *reinterpret_cast<uint32_t*>(dst) = cuda_mma_traits<T>::pack(f0, f1);
                        } else {
                          dst[0] = o0;
                          if (second) dst[1] = o1;
                        }
                      } else {
                        const int64_t plane = (int64_t)a.h * a.w;
                        T* dst = y + ((int64_t)t.image * a.c_out + ch) * plane + (int64_t)oy * a.w + ox;
                        dst[0] = o0;
                        if (second) dst[plane] = o1;
                      }
                    });
  }
}

template <typename T, int NTA, int NTB, bool NHWC>
const void* kernel_address() {
  return reinterpret_cast<const void*>(&chain_kernel<T, NTA, NTB, NHWC>);
}

template <typename T>
const void* kernel_for_type(int nta, int ntb, bool nhwc) {
  if (nta == 4)
    return ntb == 4 ? (nhwc ? kernel_address<T, 4, 4, true>() : kernel_address<T, 4, 4, false>())
                    : (nhwc ? kernel_address<T, 4, 2, true>() : kernel_address<T, 4, 2, false>());
  return ntb == 4 ? (nhwc ? kernel_address<T, 2, 4, true>() : kernel_address<T, 2, 4, false>())
                  : (nhwc ? kernel_address<T, 2, 2, true>() : kernel_address<T, 2, 2, false>());
}

/* Output channels per warp item: 32 where the count divides, else 16. */
int pieces_of(int channels) { return channels % 32 == 0 ? 4 : 2; }

const void* kernel_for(int dtype, int c_mid, int nb, bool nhwc) {
  const int nta = pieces_of(c_mid), ntb = pieces_of(nb);
  return dtype == GFX_DTYPE_F16 ? kernel_for_type<__half>(nta, ntb, nhwc) : kernel_for_type<__nv_bfloat16>(nta, ntb, nhwc);
}

/* Every kernel here may use the device's opt-in shared memory; *limit is that limit. */
cudaError_t allow_shared(int* limit) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  static const int dtypes[2] = {GFX_DTYPE_F16, GFX_DTYPE_BF16};
  for (int d = 0; d < 2 && err == cudaSuccess; d++)
    for (int nta = 16; nta <= 32 && err == cudaSuccess; nta += 16)
      for (int ntb = 16; ntb <= 32 && err == cudaSuccess; ntb += 16)
        for (int nhwc = 0; nhwc < 2 && err == cudaSuccess; nhwc++)
          err = cudaFuncSetAttribute(kernel_for(dtypes[d], nta, ntb, nhwc != 0),
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, *limit);
  return err;
}

template <typename T>
void launch(const cuda_conv_chain* p, const chain_args& a, const void* x, const void* wa, const void* ba,
            const void* wb, const void* bb, void* y, cudaStream_t stream) {
  const int nta = pieces_of(p->c_mid), ntb = pieces_of(a.nb);
  const dim3 grid((unsigned)p->blocks), block(kThreads);
  const T *xt = (const T*)x, *wat = (const T*)wa, *bat = (const T*)ba, *wbt = (const T*)wb, *bbt = (const T*)bb;
  T* yt = (T*)y;
#define GFX_CHAIN_LAUNCH(A, B, L) chain_kernel<T, A, B, L><<<grid, block, p->shared_bytes, stream>>>(xt, wat, bat, wbt, bbt, yt, a)
  if (nta == 4 && ntb == 4) {
    if (p->channels_last) GFX_CHAIN_LAUNCH(4, 4, true); else GFX_CHAIN_LAUNCH(4, 4, false);
  } else if (nta == 4) {
    if (p->channels_last) GFX_CHAIN_LAUNCH(4, 2, true); else GFX_CHAIN_LAUNCH(4, 2, false);
  } else if (ntb == 4) {
    if (p->channels_last) GFX_CHAIN_LAUNCH(2, 4, true); else GFX_CHAIN_LAUNCH(2, 4, false);
  } else {
    if (p->channels_last) GFX_CHAIN_LAUNCH(2, 2, true); else GFX_CHAIN_LAUNCH(2, 2, false);
  }
#undef GFX_CHAIN_LAUNCH
}

}  // namespace

extern "C" int cuda_conv_chain_applies(int dtype, int c_in, int c_mid, int c_out, int cc_major) {
  return (dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && cc_major >= 8 && c_in >= 16 && c_in % 16 == 0 &&
         c_in <= CUDA_CONV_CHAIN_MAX_CHANNELS && c_mid >= 16 && c_mid % 16 == 0 &&
         c_mid <= CUDA_CONV_CHAIN_MAX_CHANNELS && c_out >= 1 && c_out <= CUDA_CONV_CHAIN_MAX_CHANNELS;
}

extern "C" cudaError_t cuda_conv_chain_plan(cuda_conv_chain* p) {
  if (!cuda_conv_chain_applies(p->dtype, p->c_in, p->c_mid, p->c_out, 8) || p->n < 1 || p->h < 1 || p->w < 1 ||
      p->first.residual != IR_RES_NONE || p->second.residual != IR_RES_NONE)
    return cudaErrorInvalidValue;
  int limit = 0, device = 0, sms = 0, per_sm = 0;
  cudaError_t err = allow_shared(&limit);
  if (err == cudaSuccess) err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  for (size_t i = 0; i < sizeof kTiles / sizeof kTiles[0]; i++) {
    chain_args a;
    const size_t bytes = geometry(p, kTiles[i][0], kTiles[i][1], &a);
    if (bytes > (size_t)limit) continue;
    const int64_t tiles = (int64_t)p->n * a.tiles_y * a.tiles_x;
    if (tiles > INT_MAX) return cudaErrorInvalidValue;
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_for(p->dtype, p->c_mid, a.nb, p->channels_last != 0),
                                                        kThreads, bytes);
    if (err != cudaSuccess) return err;
    if (per_sm < 1) continue;
    const int64_t resident = (int64_t)sms * per_sm;
    p->tile_h = kTiles[i][0], p->tile_w = kTiles[i][1];
    p->tiles = (int)tiles;
    p->blocks = (int)(resident < tiles ? resident : tiles);
    p->shared_bytes = bytes;
    return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_conv_chain_run(const cuda_conv_chain* p, const void* x, const void* w_first,
                                           const void* b_first, const void* w_second, const void* b_second, void* y,
                                           cudaStream_t stream) {
  if (p->blocks < 1 || p->tiles < 1) return cudaErrorInvalidValue;
  if (p->channels_last && (uintptr_t)x % 16 != 0) return cudaErrorMisalignedAddress;
  chain_args a;
  geometry(p, p->tile_h, p->tile_w, &a);
  a.tiles = p->tiles;
  if (p->dtype == GFX_DTYPE_F16)
    launch<__half>(p, a, x, w_first, b_first, w_second, b_second, y, stream);
  else if (p->dtype == GFX_DTYPE_BF16)
    launch<__nv_bfloat16>(p, a, x, w_first, b_first, w_second, b_second, y, stream);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_conv_chain_preload(void) {
  int limit = 0;
  return allow_shared(&limit); /* cudaFuncSetAttribute loads each kernel */
}

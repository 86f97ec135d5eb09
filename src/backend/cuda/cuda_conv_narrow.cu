/* gfxep CUDA backend — few-input-channel convolutions on tensor cores (see cuda_conv_narrow.h).
 *
 * A block is 8 warps over a tile of 8 output rows x 32 columns of one image and one group of up to
 * 64 output channels (NT pieces of 8). Per tile:
 *   1. the input window the tile reads (every channel, rows and columns the strides, dilations and
 *      kernel reach) is copied into shared memory as [c][row][column], zeros outside the image;
 *   2. warp w computes output row w: its 32 pixels (two 16-row A operands) times the weights (B),
 *      K = C·kH·kW taps in steps of 16. A's element (pixel p, tap k) is window[base(p) + offset(k)]:
 *      the tap -> offset table and the weights, already in mma.sync's B register order, were put in
 *      shared memory once per block; taps past K read a run of zeros after the window;
 *   3. the float32 sums go to a per-warp staging tile in shared memory, from which each lane takes
 *      runs of 8 outputs that lie together in y (8 pixels of a channel, or 8 channels of a pixel when
 *      channels-last), applies bias, residual and activation, rounds once and stores 16 bytes.
 * The grid holds as many blocks as the device runs at once, each walking tiles with a stride.
 *
 * What shaped it (H200, ESPCN's first layer, profile and Nsight Compute): with the epilogue unrolled
 * over a thread's 64 sums, every activation's code inlined 64 times, the layer took 195 us; with the
 * sums staged and the epilogue in a loop, 142 us and 68 M instructions; with the activation fixed at
 * compile time and 8 outputs per 16-byte store, 80 us and 27 M. Eight warps per block beat four (79
 * against 81 us); what remains is mostly waiting on the window's loads and on shared memory (long
 * and short scoreboard stalls) at 16 warps per multiprocessor.
 */
#include "backend/cuda/cuda_conv_epilogue.cuh"
#include "backend/cuda/cuda_conv_narrow.h"
#include "backend/cuda/cuda_mma.cuh"

#include <limits.h>
#include <stdint.h>

#include "ir/tensor.h"

namespace {

const int kWarps = 8;
const int kThreads = kWarps * 32;
const int kTileW = 32; /* output columns per tile: one warp's row, two 16-pixel A operands */
const int kTileH = kWarps;

__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T> __device__ __forceinline__ uint16_t bits_of(T v) { return *reinterpret_cast<uint16_t*>(&v); }

struct narrow_args {
  int n, c_in, in_h, in_w, c_out, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
  int taps, k_steps;      /* K = C·kH·kW, and K / 16 rounded up */
  int window_h, window_w; /* the input window of one tile */
  int tiles_y, tiles_x;   /* per image */
  int vector_stores;      /* runs of 8 outputs (along the width, or the channels when channels-last)
                           * start on 16-byte boundaries */
  cuda_conv_epilogue e;
};

/* The staging tile of a warp holds its float32 sums: [channel][pixel] (NCHW, a pitch of 36 puts the
 * 32 lanes' writes in 32 banks) or [pixel][channel] (NHWC). */
const int kPitchCF = kTileW + 4;
__host__ __device__ constexpr int pitch_cl(int nt) { return nt * 8 + 4; }
__host__ __device__ constexpr int stage_elements(int nt) {
  return (nt * 8) * kPitchCF > kTileW * pitch_cl(nt) ? (nt * 8) * kPitchCF : kTileW * pitch_cl(nt);
}

/* Eight 16-bit values as one 16-byte store, rounded once from float32. */
template <typename T>
__device__ __forceinline__ void store8(T* dst, const float* v) {
  uint4 out;
  uint32_t* w = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
  for (int i = 0; i < 4; i++) w[i] = cuda_mma_traits<T>::pack(v[2 * i], v[2 * i + 1]);
  *reinterpret_cast<uint4*>(dst) = out;
}

/* Eight 16-bit values of a residual, as float32. */
template <typename T>
__device__ __forceinline__ void load8(const T* src, float* v) {
  const uint4 in = *reinterpret_cast<const uint4*>(src);
  const T* e = reinterpret_cast<const T*>(&in);
#pragma unroll
  for (int i = 0; i < 8; i++) v[i] = to_float(e[i]);
}

/* A warp's staged row of output (32 pixels x this block's channels) through the epilogue into y. With
 * vector stores (a.vector_stores, and the whole row inside the image for NCHW), each lane finishes
 * runs of 8 elements that lie together in y (8 pixels of a channel, or 8 channels of a pixel) and
 * stores them as one 16-byte write; otherwise element by element, in runs along y. */
template <typename T, int NT, bool CL, int ACT>
__device__ __forceinline__ void store_tile(const float* stage, const float* bias_of, const T* __restrict__ residual,
                                           T* __restrict__ y, const narrow_args& a, int img, int oy, int ox0,
                                           int ch0) {
  const int lane = threadIdx.x & 31;
  if (CL) {
    const int64_t row = (((int64_t)img * a.out_h + oy) * a.out_w + ox0) * a.c_out + ch0; /* pixel ox0, channel ch0 */
    if (a.vector_stores) { /* c_out % 8 == 0: a pixel's channels in runs of 8 */
      for (int run = lane; run < kTileW * NT; run += 32) {
        const int px = run / NT, cl = (run % NT) * 8;
        if (ox0 + px >= a.out_w || ch0 + cl >= a.c_out) continue;
        const int64_t at = row + (int64_t)px * a.c_out + cl;
        float v[8], r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (residual) load8(residual + at, r);
#pragma unroll
        for (int i = 0; i < 8; i++)
          v[i] = cuda_conv_finish_as<ACT>(a.e, stage[px * pitch_cl(NT) + cl + i] + bias_of[cl + i], r[i]);
        store8(y + at, v);
      }
      return;
    }
    for (int px = 0; px < kTileW && ox0 + px < a.out_w; px++)
      for (int cl = lane; cl < NT * 8 && ch0 + cl < a.c_out; cl += 32) {
        const int64_t at = row + (int64_t)px * a.c_out + cl;
        const float r = residual ? to_float(residual[at]) : 0.0f;
        y[at] = from_float<T>(cuda_conv_finish_as<ACT>(a.e, stage[px * pitch_cl(NT) + cl] + bias_of[cl], r));
      }
    return;
  }
  const int64_t plane = (int64_t)a.out_h * a.out_w;
  const int64_t row = ((int64_t)img * a.c_out + ch0) * plane + (int64_t)oy * a.out_w + ox0; /* channel ch0, pixel ox0 */
  if (a.vector_stores && ox0 + kTileW <= a.out_w) { /* out_w % 8 == 0: a channel's pixels in runs of 8 */
    for (int run = lane; run < NT * 8 * (kTileW / 8); run += 32) {
      const int cl = run / (kTileW / 8), px = (run % (kTileW / 8)) * 8;
      if (ch0 + cl >= a.c_out) break; /* runs go channel by channel */
      const int64_t at = row + cl * plane + px;
      float v[8], r[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (residual) load8(residual + at, r);
#pragma unroll
      for (int i = 0; i < 8; i++)
        v[i] = cuda_conv_finish_as<ACT>(a.e, stage[cl * kPitchCF + px + i] + bias_of[cl], r[i]);
      store8(y + at, v);
    }
    return;
  }
  for (int cl = 0; cl < NT * 8 && ch0 + cl < a.c_out; cl++) {
    if (ox0 + lane >= a.out_w) continue;
    const int64_t at = row + cl * plane + lane;
    const float r = residual ? to_float(residual[at]) : 0.0f;
    y[at] = from_float<T>(cuda_conv_finish_as<ACT>(a.e, stage[cl * kPitchCF + lane] + bias_of[cl], r));
  }
}

__host__ __device__ inline size_t round_up8(size_t v) { return (v + 7) & ~(size_t)7; }

/* Taps past K read window[base(pixel) + window size]: a run of zeros after the window as long as the
 * largest pixel base, so that they multiply their zero weights by 0 and never by whatever else is in
 * shared memory (an Inf or NaN pattern there would turn the sum into NaN). */
__host__ __device__ inline int zero_run(const narrow_args& a) {
  return (kTileH - 1) * a.stride_h * a.window_w + (kTileW - 1) * a.stride_w + 1;
}

/* The shared memory layout, in bytes from the start: B fragments, tap offsets, bias, window and its
 * run of zeros, staging. */
struct shared_layout {
  size_t offsets, bias, window, stage, total;
};
__host__ __device__ inline shared_layout layout_of(const narrow_args& a, int nt) {
  shared_layout l;
  l.offsets = (size_t)a.k_steps * nt * 32 * sizeof(uint2);
  l.bias = l.offsets + round_up8((size_t)a.k_steps * 16 * sizeof(int));
  l.window = l.bias + (size_t)nt * 8 * sizeof(float);
  l.stage = l.window + round_up8(((size_t)a.c_in * a.window_h * a.window_w + zero_run(a)) * sizeof(uint16_t));
  l.total = l.stage + (size_t)kWarps * stage_elements(nt) * sizeof(float);
  return l;
}

/* The input window of a tile into shared memory as [c][row][column], zeros outside the image: a warp
 * per window row, its lanes along the row, so that reads follow memory (for channels-last a row is
 * the pixels' channels, interleaved) and no element needs a division. */
template <bool CL>
__device__ __forceinline__ void load_window(const uint16_t* __restrict__ xb, const narrow_args& a, int img, int iy0,
                                            int ix0, uint16_t* window) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rows = CL ? a.window_h : a.c_in * a.window_h;
  for (int r = warp; r < rows; r += kWarps) {
    const int c = CL ? 0 : r / a.window_h, wy = CL ? r : r - c * a.window_h, iy = iy0 + wy;
    const bool inside = iy >= 0 && iy < a.in_h;
    if (CL) {
      const uint16_t* src = xb + ((int64_t)img * a.in_h + iy) * a.in_w * a.c_in;
#pragma unroll 4
      for (int e = lane; e < a.window_w * a.c_in; e += 32) {
        const int wx = e / a.c_in, ch = e - wx * a.c_in, ix = ix0 + wx;
        window[(ch * a.window_h + wy) * a.window_w + wx] =
            inside && ix >= 0 && ix < a.in_w ? src[(int64_t)ix * a.c_in + ch] : (uint16_t)0;
      }
    } else {
      const uint16_t* src = xb + (((int64_t)img * a.c_in + c) * a.in_h + iy) * a.in_w;
      uint16_t* dst = window + r * a.window_w;
#pragma unroll 4
      for (int wx = lane; wx < a.window_w; wx += 32) {
        const int ix = ix0 + wx;
        dst[wx] = inside && ix >= 0 && ix < a.in_w ? src[ix] : (uint16_t)0;
      }
    }
  }
}

/* The tensors' layouts, a template parameter of the kernel: x and y NCHW, both channels-last, or a
 * channels-last y of an NCHW x (a Transpose before the Conv folded in, params.conv.nchw_input). */
enum { kNCHW = 0, kNHWC = 1, kNCHWtoNHWC = 2, kLayouts = 3 };
__host__ __device__ constexpr bool input_cl(int layout) { return layout == kNHWC; }
__host__ __device__ constexpr bool output_cl(int layout) { return layout != kNCHW; }

template <typename T, int NT, int LAYOUT>
__global__ void __launch_bounds__(kThreads, 2)
    narrow_conv_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                       const T* __restrict__ residual, T* __restrict__ y, narrow_args a) {
#ifdef GFX_CUDA_MMA
  typedef cuda_mma_traits<T> mt;
  extern __shared__ __align__(16) unsigned char smem[];
  const shared_layout l = layout_of(a, NT);
  uint2* b_frag = reinterpret_cast<uint2*>(smem);
  int* tap_offset = reinterpret_cast<int*>(smem + l.offsets);
  float* bias_of = reinterpret_cast<float*>(smem + l.bias); /* this block's channels' bias, 0 for none */
  uint16_t* window = reinterpret_cast<uint16_t*>(smem + l.window);
  const int window_size = a.c_in * a.window_h * a.window_w;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  float* stage = reinterpret_cast<float*>(smem + l.stage) + warp * stage_elements(NT);
  const int ch0 = blockIdx.y * NT * 8;
  const uint16_t* xb = reinterpret_cast<const uint16_t*>(x);
  const uint16_t* wb = reinterpret_cast<const uint16_t*>(w);

  /* once per block: the weights in B order (zeros past K and past the channels), the tap offsets */
#pragma unroll 4
  for (int i = threadIdx.x; i < a.k_steps * NT * 32; i += kThreads) {
    const int fl = i & 31, nt = (i >> 5) % NT, ks = (i >> 5) / NT;
    const int ch = ch0 + nt * 8 + (fl >> 2), k = ks * 16 + (fl & 3) * 2;
    uint16_t v[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int kj = k + (j & 1) + (j >> 1) * 8;
      v[j] = ch < a.c_out && kj < a.taps ? wb[(int64_t)ch * a.taps + kj] : (uint16_t)0;
    }
    b_frag[i] = make_uint2((uint32_t)v[0] | ((uint32_t)v[1] << 16), (uint32_t)v[2] | ((uint32_t)v[3] << 16));
  }
  const int kernel_area = a.kernel_h * a.kernel_w;
  for (int k = threadIdx.x; k < a.k_steps * 16; k += kThreads) {
    int offset = window_size; /* the run of zeros */
    if (k < a.taps) {
      const int c = k / kernel_area, r = k % kernel_area, ky = r / a.kernel_w, kx = r % a.kernel_w;
      offset = (c * a.window_h + ky * a.dilation_h) * a.window_w + kx * a.dilation_w;
    }
    tap_offset[k] = offset;
  }
  for (int i = threadIdx.x; i < zero_run(a); i += kThreads) window[window_size + i] = 0;
  for (int cl = threadIdx.x; cl < NT * 8; cl += kThreads)
    bias_of[cl] = bias && ch0 + cl < a.c_out ? to_float(bias[ch0 + cl]) : 0.0f;

  const int tiles = a.n * a.tiles_y * a.tiles_x;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int tx = tile % a.tiles_x, ty = (tile / a.tiles_x) % a.tiles_y;
    const int img = tile / (a.tiles_x * a.tiles_y), oy0 = ty * kTileH, ox0 = tx * kTileW;
    __syncthreads(); /* the previous tile's window is read */
    load_window<input_cl(LAYOUT)>(xb, a, img, oy0 * a.stride_h - a.pad_top, ox0 * a.stride_w - a.pad_left, window);
    __syncthreads();
    const int oy = oy0 + warp;
    if (oy >= a.out_h) continue;

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
      for (int h = 0; h < 2; h++) base[m][h] = warp * a.stride_h * a.window_w + (m * 16 + g + h * 8) * a.stride_w;
#pragma unroll 2
    for (int ks = 0; ks < a.k_steps; ks++) {
      const int k0 = ks * 16 + 2 * t;
      const int o0 = tap_offset[k0], o1 = tap_offset[k0 + 1], o8 = tap_offset[k0 + 8], o9 = tap_offset[k0 + 9];
      uint32_t af[2][4];
#pragma unroll
      for (int m = 0; m < 2; m++) {
        const uint16_t* lo = window + base[m][0];
        const uint16_t* hi = window + base[m][1];
        af[m][0] = (uint32_t)lo[o0] | ((uint32_t)lo[o1] << 16);
        af[m][1] = (uint32_t)hi[o0] | ((uint32_t)hi[o1] << 16);
        af[m][2] = (uint32_t)lo[o8] | ((uint32_t)lo[o9] << 16);
        af[m][3] = (uint32_t)hi[o8] | ((uint32_t)hi[o9] << 16);
      }
#pragma unroll
      for (int nt = 0; nt < NT; nt++) {
        const uint2 b = b_frag[(ks * NT + nt) * 32 + lane];
        mt::mma(acc[0][nt], af[0], b.x, b.y);
        mt::mma(acc[1][nt], af[1], b.x, b.y);
      }
    }

    /* the float32 sums into the staging tile; the epilogue runs on them below, in a loop that is not
     * unrolled: with 64 inlined copies of every activation's code per thread the kernel took 195 us
     * for ESPCN's first layer, against 142 staged (80 with the stores below) */
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const int px = m * 16 + g + (j >> 1) * 8, cl = nt * 8 + 2 * t + (j & 1);
          stage[output_cl(LAYOUT) ? px * pitch_cl(NT) + cl : cl * kPitchCF + px] = acc[m][nt][j];
        }
    __syncwarp();
    switch (a.e.activation) { /* the common activations compiled into the loop, the rest looked up */
      case IR_ACT_NONE:
        store_tile<T, NT, output_cl(LAYOUT), IR_ACT_NONE>(stage, bias_of, residual, y, a, img, oy, ox0, ch0);
        break;
      case IR_ACT_RELU:
        store_tile<T, NT, output_cl(LAYOUT), IR_ACT_RELU>(stage, bias_of, residual, y, a, img, oy, ox0, ch0);
        break;
      default:
        store_tile<T, NT, output_cl(LAYOUT), kCudaAnyActivation>(stage, bias_of, residual, y, a, img, oy, ox0, ch0);
        break;
    }
    __syncwarp(); /* the staging tile is free for the next tile */
  }
#else
  (void)x, (void)w, (void)bias, (void)residual, (void)y, (void)a;
#endif
}

/* NT: pieces of 8 output channels per block */
int pieces_for(int c_out) { return c_out <= 8 ? 1 : c_out <= 16 ? 2 : c_out <= 32 ? 4 : 8; }

template <typename T, int LAYOUT>
const void* kernel_for_nt(int nt) {
  switch (nt) {
    case 1: return (const void*)narrow_conv_kernel<T, 1, LAYOUT>;
    case 2: return (const void*)narrow_conv_kernel<T, 2, LAYOUT>;
    case 4: return (const void*)narrow_conv_kernel<T, 4, LAYOUT>;
    default: return (const void*)narrow_conv_kernel<T, 8, LAYOUT>;
  }
}

template <typename T>
const void* kernel_for_layout(int nt, int layout) {
  return layout == kNCHW ? kernel_for_nt<T, kNCHW>(nt)
         : layout == kNHWC ? kernel_for_nt<T, kNHWC>(nt)
                           : kernel_for_nt<T, kNCHWtoNHWC>(nt);
}

const void* kernel_for(int dtype, int nt, int layout) {
  if (dtype == GFX_DTYPE_F16) return kernel_for_layout<__half>(nt, layout);
  if (dtype == GFX_DTYPE_BF16) return kernel_for_layout<__nv_bfloat16>(nt, layout);
  return nullptr;
}

int layout_of_plan(const cuda_conv_narrow* p) {
  return !p->channels_last ? kNCHW : p->nchw_input ? kNCHWtoNHWC : kNHWC;
}

narrow_args args_of(const cuda_conv_narrow* p) {
  narrow_args a;
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
  a.taps = p->c_in * p->kernel_h * p->kernel_w;
  a.k_steps = (a.taps + 15) / 16;
  a.window_h = (kTileH - 1) * p->stride_h + (p->kernel_h - 1) * p->dilation_h + 1;
  a.window_w = (kTileW - 1) * p->stride_w + (p->kernel_w - 1) * p->dilation_w + 1;
  a.tiles_y = (p->out_h + kTileH - 1) / kTileH;
  a.tiles_x = (p->out_w + kTileW - 1) / kTileW;
  a.vector_stores = 0; /* set by the launch, which sees the pointers */
  a.e = p->epilogue;
  return a;
}

/* The opt-in shared memory limit of the current device, granted to every kernel here. */
cudaError_t allow_shared(int* limit) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  static const int dtypes[2] = {GFX_DTYPE_F16, GFX_DTYPE_BF16};
  for (int d = 0; d < 2 && err == cudaSuccess; d++)
    for (int nt = 1; nt <= 8 && err == cudaSuccess; nt *= 2)
      for (int layout = 0; layout < kLayouts && err == cudaSuccess; layout++)
        err = cudaFuncSetAttribute(kernel_for(dtypes[d], nt, layout), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   *limit);
  return err;
}

template <typename T, int LAYOUT>
void launch_layout(int nt, dim3 grid, size_t shared, cudaStream_t stream, const void* x, const void* w,
                   const void* bias, const void* residual, void* y, const narrow_args& a) {
  const T *xt = (const T*)x, *wt = (const T*)w, *bt = (const T*)bias, *rt = (const T*)residual;
  switch (nt) {
    case 1: narrow_conv_kernel<T, 1, LAYOUT><<<grid, kThreads, shared, stream>>>(xt, wt, bt, rt, (T*)y, a); break;
    case 2: narrow_conv_kernel<T, 2, LAYOUT><<<grid, kThreads, shared, stream>>>(xt, wt, bt, rt, (T*)y, a); break;
    case 4: narrow_conv_kernel<T, 4, LAYOUT><<<grid, kThreads, shared, stream>>>(xt, wt, bt, rt, (T*)y, a); break;
    default: narrow_conv_kernel<T, 8, LAYOUT><<<grid, kThreads, shared, stream>>>(xt, wt, bt, rt, (T*)y, a); break;
  }
}

template <typename T>
void launch(int nt, int layout, dim3 grid, size_t shared, cudaStream_t stream, const void* x, const void* w,
            const void* bias, const void* residual, void* y, const narrow_args& a) {
  if (layout == kNCHW)
    launch_layout<T, kNCHW>(nt, grid, shared, stream, x, w, bias, residual, y, a);
  else if (layout == kNHWC)
    launch_layout<T, kNHWC>(nt, grid, shared, stream, x, w, bias, residual, y, a);
  else
    launch_layout<T, kNCHWtoNHWC>(nt, grid, shared, stream, x, w, bias, residual, y, a);
}

}  // namespace

extern "C" int cuda_conv_narrow_applies(int dtype, int spatial, int group, int c_in, const int* kernel, int cc_major) {
  return (dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && spatial == 2 && group == 1 && c_in >= 1 &&
         c_in <= CUDA_CONV_NARROW_MAX_CHANNELS && kernel[0] >= 1 && kernel[1] >= 1 &&
         (int64_t)c_in * kernel[0] * kernel[1] <= CUDA_CONV_NARROW_MAX_TAPS && cc_major >= 8;
}

extern "C" cudaError_t cuda_conv_narrow_plan(cuda_conv_narrow* p) {
  const int kernel[2] = {p->kernel_h, p->kernel_w};
  if (!cuda_conv_narrow_applies(p->dtype, 2, 1, p->c_in, kernel, 8) || p->n < 1 || p->c_out < 1 || p->out_h < 1 ||
      p->out_w < 1 || p->in_h < 1 || p->in_w < 1 || p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 1 ||
      p->dilation_w < 1 || p->stride_h > 64 || p->stride_w > 64 || p->dilation_h > 64 || p->dilation_w > 64)
    return cudaErrorInvalidValue;
  const int nt = pieces_for(p->c_out);
  const narrow_args a = args_of(p);
  const int64_t tiles = (int64_t)a.n * a.tiles_y * a.tiles_x;
  const int64_t channel_tiles = (p->c_out + nt * 8 - 1) / (nt * 8);
  if (tiles > INT_MAX || channel_tiles > 65535) return cudaErrorInvalidValue;
  p->shared_bytes = layout_of(a, nt).total;
  int limit = 0, device = 0, sms = 0, per_sm = 0;
  cudaError_t err = allow_shared(&limit);
  if (err != cudaSuccess) return err;
  if (p->shared_bytes > (size_t)limit) return cudaErrorInvalidValue;
  err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_for(p->dtype, nt, layout_of_plan(p)), kThreads,
                                                        p->shared_bytes);
  if (err != cudaSuccess) return err;
  if (per_sm < 1) return cudaErrorInvalidValue;
  const int64_t resident = (int64_t)sms * per_sm;
  p->channel_tiles = (int)channel_tiles;
  /* every block loads the weights once: enough blocks to fill the device, split across the channel groups */
  int64_t blocks = (resident + channel_tiles - 1) / channel_tiles;
  p->blocks = (int)(blocks < tiles ? blocks : tiles);
  return cudaSuccess;
}

extern "C" cudaError_t cuda_conv_narrow_run(const cuda_conv_narrow* p, const void* x, const void* w, const void* bias,
                                            const void* residual, void* y, cudaStream_t stream) {
  if (p->blocks < 1 || p->channel_tiles < 1) return cudaErrorInvalidValue;
  narrow_args a = args_of(p);
  const uintptr_t addresses = (uintptr_t)y | (uintptr_t)residual; /* residual may be NULL (0) */
  a.vector_stores = (p->channels_last ? p->c_out % 8 == 0 : p->out_w % 8 == 0) && addresses % 16 == 0;
  const dim3 grid((unsigned)p->blocks, (unsigned)p->channel_tiles);
  const int nt = pieces_for(p->c_out);
  const int layout = layout_of_plan(p);
  if (p->dtype == GFX_DTYPE_F16)
    launch<__half>(nt, layout, grid, p->shared_bytes, stream, x, w, bias, residual, y, a);
  else if (p->dtype == GFX_DTYPE_BF16)
    launch<__nv_bfloat16>(nt, layout, grid, p->shared_bytes, stream, x, w, bias, residual, y, a);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_conv_narrow_preload(void) {
  int limit = 0;
  cudaError_t err = allow_shared(&limit);
  static const int dtypes[2] = {GFX_DTYPE_F16, GFX_DTYPE_BF16};
  for (int d = 0; d < 2 && err == cudaSuccess; d++)
    for (int nt = 1; nt <= 8 && err == cudaSuccess; nt *= 2)
      for (int layout = 0; layout < kLayouts && err == cudaSuccess; layout++) {
        cudaFuncAttributes attr;
        err = cudaFuncGetAttributes(&attr, kernel_for(dtypes[d], nt, layout));
      }
  return err;
}

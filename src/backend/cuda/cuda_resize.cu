// gfxep CUDA backend — kernels of the resampling ops: Resize/Upsample (nearest, linear, cubic over
// the last two dims, and over any dims through the general geometry) and DepthToSpace/SpaceToDepth.
//
// One output row per block (grid-stride over rows, 64-bit offsets), one element per thread along
// it. The coordinate mapping and the tap weights come from ir/resize_geom.h, the same functions the
// reference backend calls, so both pick the same input pixels; interpolation runs in float and
// rounds once at the store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <string.h>

#include <type_traits>

#include "backend/cuda/cuda_resize.h"
#include "backend/cuda/cuda_vec16.cuh"
#include "ir/tensor.h"

namespace {

const int kBlockSize = 256;

/* The coordinate mapping is a switch over seven transformation modes. Inlined into the unrolled
 * loops below, the compiler's optimizer specialised every unrolled copy over every mode and took
 * minutes per architecture for this file; as a call it compiles in seconds. The grid kernel calls it
 * once per thread (its column) and once per row of the block (shared), not once per output, and
 * for nearest and linear also finds the taps there, so an output costs its loads and one store. */
/* The axis travels by value, not as a pointer into the kernel's parameter struct: with the pointer,
 * once ir_resize_geom grew its eight general axes (over 300 bytes), the two-dim kernels ran 8.8x
 * slower on the H200 (x2 nearest of a 64x540x960 float16 map: 2.02 ms against 0.23 ms by value). */
__device__ __noinline__ float source_coord(ir_resize_axis a, int coord, int64_t x) {
  return ir_resize_source_coord(&a, coord, x);
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

/* One output row (plane, oy) per block, grid-stride over rows, its threads across the row (a long
 * row is split over blockIdx.y). Thread 0 splits the row index once: 64-bit divisions per element
 * made this kernel compute-bound at a tenth of the copy bandwidth. */
const int64_t kRowChunk = 2048; /* output elements of a row one block covers */
const int kUnroll = 4;          /* outputs per thread per step */

struct row_origin {
  int64_t plane, oy;
  float cy;
  bool outside;
};

template <typename T, int Mode>
__global__ void resize_kernel(const T* x, T* y, ir_resize_geom g, int64_t rows) {
  __shared__ row_origin origin;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    if (threadIdx.x == 0) {
      origin.plane = row / g.h.out;
      origin.oy = row - origin.plane * g.h.out;
      origin.cy = source_coord(g.h, g.coord, origin.oy);
      origin.outside = ir_resize_outside(&g.h, g.coord, origin.cy);
    }
    __syncthreads();
    const row_origin o = origin;
    T* out_row = y + row * g.w.out;
    for (int64_t x0 = blockIdx.y * kRowChunk; x0 < g.w.out; x0 += (int64_t)gridDim.y * kRowChunk) {
      const int64_t end = x0 + kRowChunk < g.w.out ? x0 + kRowChunk : g.w.out;
      for (int64_t ox = x0 + threadIdx.x; ox < end; ox += kUnroll * (int64_t)blockDim.x) {
        /* kUnroll samples per thread before any store: their reads are in flight together */
        float v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t xu = ox + u * (int64_t)blockDim.x;
          const float cx = source_coord(g.w, g.coord, xu < end ? xu : ox);
          if (o.outside || ir_resize_outside(&g.w, g.coord, cx))
            v[u] = g.extrapolation;
          else
            v[u] = sample<T, Mode>(x, g, o.plane, o.cy, cx);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t xu = ox + u * (int64_t)blockDim.x;
          if (xu < end) store_f(out_row, xu, v[u]);
        }
      }
    }
    __syncthreads(); /* origin is rewritten for the next row */
  }
}

/* The common case without any division: x along the output row, y blocks of kGridRows output rows,
 * z the plane (both within the grid's 65535 limit). Each thread computes one column of kGridRows
 * outputs, all reads before any store, so enough bytes are in flight to cover the memory latency. */
const int kGridRows = 8;

template <typename T, int Mode>
__global__ void resize_grid_kernel(const T* x, T* y, ir_resize_geom g) {
  /* The block's kGridRows rows share their source rows: mapped once, by the first threads, into
   * shared memory (nearest: the source row's offset; linear and cubic: the taps' offsets and weights). */
  __shared__ bool row_outside[kGridRows];
  __shared__ int64_t row_off[4][kGridRows];
  __shared__ float row_w[4][kGridRows];
  const int64_t plane = blockIdx.z, oy0 = (int64_t)blockIdx.y * kGridRows;
  if (threadIdx.x < kGridRows) {
    const int t = threadIdx.x;
    const int64_t oy = oy0 + t < g.h.out ? oy0 + t : g.h.out - 1;
    const float cy = source_coord(g.h, g.coord, oy);
    row_outside[t] = ir_resize_outside(&g.h, g.coord, cy);
    if (Mode == IR_RESIZE_NEAREST) {
      row_off[0][t] = (plane * g.h.in + ir_resize_nearest_index(&g.h, g.nearest, cy)) * g.w.in;
    } else if (Mode == IR_RESIZE_LINEAR) {
      int64_t y0, y1;
      ir_resize_linear_taps(&g.h, cy, &y0, &y1, &row_w[0][t], &row_w[1][t]);
      row_off[0][t] = (plane * g.h.in + y0) * g.w.in;
      row_off[1][t] = (plane * g.h.in + y1) * g.w.in;
    } else {
      int64_t iy[4];
      float wy[4];
      ir_resize_cubic_taps(&g.h, g.cubic_a, g.exclude_outside, cy, iy, wy);
      for (int k = 0; k < 4; k++) {
        row_off[k][t] = (plane * g.h.in + iy[k]) * g.w.in;
        row_w[k][t] = wy[k];
      }
    }
  }
  __syncthreads();
  const int64_t ox = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (ox >= g.w.out) return;
  const float cx = source_coord(g.w, g.coord, ox);
  const bool x_outside = ir_resize_outside(&g.w, g.coord, cx);
  float v[kGridRows];
  if (Mode == IR_RESIZE_NEAREST) {
    /* the column's source index once; each output is then one load */
    const int64_t ix = ir_resize_nearest_index(&g.w, g.nearest, cx);
#pragma unroll
    for (int u = 0; u < kGridRows; u++)
      v[u] = x_outside || row_outside[u] ? g.extrapolation : load_f(x, row_off[0][u] + ix);
  } else if (Mode == IR_RESIZE_LINEAR) {
    /* the column's taps once; the arithmetic is sample()'s, in its order */
    int64_t x0, x1;
    float wx0, wx1;
    ir_resize_linear_taps(&g.w, cx, &x0, &x1, &wx0, &wx1);
#pragma unroll
    for (int u = 0; u < kGridRows; u++) {
      const float top = wx0 * load_f(x, row_off[0][u] + x0) + wx1 * load_f(x, row_off[0][u] + x1);
      const float bottom = wx0 * load_f(x, row_off[1][u] + x0) + wx1 * load_f(x, row_off[1][u] + x1);
      v[u] = x_outside || row_outside[u] ? g.extrapolation : row_w[0][u] * top + row_w[1][u] * bottom;
    }
  } else {
    /* the column's four taps once, the rows' from shared memory: sample()'s sums in its order
     * (finding both axes' taps per output made this kernel compute-bound at 4% of the copy
     * bandwidth) */
    int64_t ix[4];
    float wx[4];
    ir_resize_cubic_taps(&g.w, g.cubic_a, g.exclude_outside, cx, ix, wx);
#pragma unroll
    for (int u = 0; u < kGridRows; u++) {
      float sum = 0.0f;
#pragma unroll
      for (int r = 0; r < 4; r++) {
        float row = 0.0f;
#pragma unroll
        for (int c = 0; c < 4; c++) row += wx[c] * load_f(x, row_off[r][u] + ix[c]);
        sum += row_w[r][u] * row;
      }
      v[u] = x_outside || row_outside[u] ? g.extrapolation : sum;
    }
  }
#pragma unroll
  for (int u = 0; u < kGridRows; u++)
    if (oy0 + u < g.h.out) store_f(y, (plane * g.h.out + oy0 + u) * g.w.out + ox, v[u]);
}

/* Nearest where every output row starts on a 16-byte boundary (w.out a multiple of V = 16 / element
 * size, y aligned): 16-byte stores. A block is bx x by threads over bx * V output columns and
 * by * kNearestRows rows of one plane (z); the source column of each of its columns and the source
 * row of each of its rows are mapped once per block into shared memory (one mapping per thread at
 * most). A thread then writes V columns of kNearestRows rows: each output element is one 2- or
 * 4-byte load of its source element (a neighbour's load is reused where two columns, or two rows,
 * read the same source, as upscaling does), all loads before the first store. Elements are moved as
 * their bits (E), so a nearest copy is exact; the extrapolation value arrives already rounded. */
const int kNearestRows = 8;

template <typename E>
__global__ void __launch_bounds__(256, 1) resize_nearest_vec_kernel(const E* __restrict__ x, E* __restrict__ y,
                                                                 ir_resize_geom g, E extrapolation) {
  constexpr int V = 16 / sizeof(E);
  __shared__ int64_t col_ix[256], row_off[256];
  __shared__ bool col_outside[256], row_outside[256];
  const int64_t plane = blockIdx.z;
  const int64_t ox0 = (int64_t)blockIdx.x * blockDim.x * V, oy0 = (int64_t)blockIdx.y * blockDim.y * kNearestRows;
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  if (t < (int)blockDim.x * V) {
    const int64_t ox = ox0 + t < g.w.out ? ox0 + t : g.w.out - 1;
    const float cx = source_coord(g.w, g.coord, ox);
    col_ix[t] = ir_resize_nearest_index(&g.w, g.nearest, cx);
    col_outside[t] = ir_resize_outside(&g.w, g.coord, cx);
  }
  if (t < (int)blockDim.y * kNearestRows) {
    const int64_t oy = oy0 + t < g.h.out ? oy0 + t : g.h.out - 1;
    const float cy = source_coord(g.h, g.coord, oy);
    row_off[t] = (plane * g.h.in + ir_resize_nearest_index(&g.h, g.nearest, cy)) * g.w.in;
    row_outside[t] = ir_resize_outside(&g.h, g.coord, cy);
  }
  __syncthreads();
  const int c = threadIdx.x * V;
  const int64_t ox = ox0 + c;
  if (ox >= g.w.out) return;
  int64_t ix[V];
  bool x_outside[V];
#pragma unroll
  for (int i = 0; i < V; i++) {
    ix[i] = col_ix[c + i];
    x_outside[i] = col_outside[c + i];
  }
  vec16<E> v[kNearestRows];
#pragma unroll
  for (int u = 0; u < kNearestRows; u++) {
    const int r = threadIdx.y * kNearestRows + u;
    if (u > 0 && row_off[r] == row_off[r - 1] && row_outside[r] == row_outside[r - 1]) {
      v[u] = v[u - 1]; /* the same source row */
      continue;
    }
    const E* src = x + row_off[r];
#pragma unroll
    for (int i = 0; i < V; i++) {
      if (row_outside[r] || x_outside[i])
        v[u].e[i] = extrapolation;
      else if (i > 0 && ix[i] == ix[i - 1] && !x_outside[i - 1])
        v[u].e[i] = v[u].e[i - 1];
      else
        v[u].e[i] = src[ix[i]];
    }
  }
#pragma unroll
  for (int u = 0; u < kNearestRows; u++) {
    const int64_t oy = oy0 + threadIdx.y * kNearestRows + u;
    if (oy < g.h.out) store16(y + (plane * g.h.out + oy) * g.w.out + ox, v[u].v);
  }
}

/* Nearest upscaling by whole factors: output column ox reads source column ox / FX, output row oy
 * reads source row oy / fy (the host has checked this against the geometry's own mapping). A thread
 * takes one 16-byte output vector of kUpRows source rows: the V / FX source elements it repeats are
 * one aligned load, and each source row becomes fy identical stores. So the source is read once in
 * whole runs and the output written in 16-byte vectors (resize_nearest_vec_kernel above loads every
 * output element on its own: 58% of the copy bandwidth for x2 of a 64x540x960 float16 map). */
const int kUpRows = 4;

template <typename E, int FX>
__global__ void __launch_bounds__(256) resize_nearest_up_kernel(const E* __restrict__ x, E* __restrict__ y,
                                                                int64_t planes, int32_t w_in, int32_t h_in,
                                                                int32_t fy) {
  constexpr int V = 16 / sizeof(E), S = V / FX;
  typedef elems<E, S> run;
  const int32_t slot = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (slot >= w_in / S) return;
  const int64_t w_out = (int64_t)w_in * FX;
  const int32_t iy0 = (int32_t)(blockIdx.y * blockDim.y + threadIdx.y) * kUpRows;
  for (int64_t p = blockIdx.z; p < planes; p += gridDim.z) {
    const E* xp = x + p * h_in * w_in + (int64_t)slot * S;
    E* yp = y + p * h_in * fy * w_out + (int64_t)slot * V;
    run in[kUpRows];
#pragma unroll
    for (int u = 0; u < kUpRows; u++)
      if (iy0 + u < h_in) in[u] = *reinterpret_cast<const run*>(xp + (int64_t)(iy0 + u) * w_in);
#pragma unroll
    for (int u = 0; u < kUpRows; u++) {
      if (iy0 + u >= h_in) continue;
      vec16<E> o;
#pragma unroll
      for (int i = 0; i < V; i++) o.e[i] = in[u].e[i / FX];
      for (int r = 0; r < fy; r++) store16(yp + ((int64_t)(iy0 + u) * fy + r) * w_out, o.v);
    }
  }
}

template <typename E, int FX>
void launch_nearest_up(const void* x, void* y, const ir_resize_geom& g, int fy, cudaStream_t stream) {
  constexpr int S = 16 / sizeof(E) / FX;
  const int64_t slots = g.w.in / S;
  int bx = 32;
  while (bx < 256 && bx < slots) bx *= 2;
  const int by = 256 / bx;
  const int64_t gx = (slots + bx - 1) / bx, gy = (g.h.in + by * kUpRows - 1) / (by * kUpRows);
  resize_nearest_up_kernel<E, FX><<<dim3((unsigned int)gx, (unsigned int)gy,
                                         (unsigned int)(g.outer < 65535 ? g.outer : 65535)),
                                    dim3(bx, by), 0, stream>>>(static_cast<const E*>(x), static_cast<E*>(y), g.outer,
                                                               (int32_t)g.w.in, (int32_t)g.h.in, fy);
}

template <typename E>
cudaError_t launch_nearest_up_of(const void* x, void* y, const ir_resize_geom& g, int fx, int fy,
                                 cudaStream_t stream) {
  constexpr int V = 16 / sizeof(E);
  /* the source runs (16 / fx bytes) and the output rows (16-byte vectors) start aligned */
  if (fx < 1 || fy < 1 || V % fx != 0 || (fx == 1 && fy == 1) || g.w.out % V != 0 || (uintptr_t)y % 16 != 0 ||
      (uintptr_t)x % (16 / fx) != 0 || g.w.in > INT32_MAX / 8 || g.h.in > INT32_MAX / fy ||
      (g.h.in + kUpRows - 1) / kUpRows > 65535)
    return cudaErrorNotSupported;
  switch (fx) {
    case 1: launch_nearest_up<E, 1>(x, y, g, fy, stream); break;
    case 2: launch_nearest_up<E, 2>(x, y, g, fy, stream); break;
    case 4: launch_nearest_up<E, 4>(x, y, g, fy, stream); break;
    default:
      if constexpr (V >= 8) {
        launch_nearest_up<E, 8>(x, y, g, fy, stream);
        break;
      }
      return cudaErrorNotSupported;
  }
  return cudaGetLastError();
}

/* The general geometry (a leading dim resizes, e.g. the depth of a volume): one thread per output
 * element, grid-stride; the per-dim taps come from ir_resize_axis_taps, as in the reference, and
 * every combination of them is summed with the product of its weights, in float. */
template <typename T>
__global__ void resize_general_kernel(const T* x, T* y, ir_resize_geom g, int64_t count) {
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < count; e += (int64_t)blockDim.x * gridDim.x) {
    int64_t idx[8][4];
    float w[8][4];
    int n[8], pick[8];
    bool outside = false;
    int64_t rest = e;
    for (int k = g.rank - 1; k >= 0; k--) {
      const ir_resize_axis* a = &g.axes[k];
      n[k] = ir_resize_axis_taps(&g, a, rest % a->out, idx[k], w[k]);
      outside |= n[k] == 0;
      rest /= a->out;
      pick[k] = 0;
    }
    if (outside) {
      store_f(y, e, g.extrapolation);
      continue;
    }
    float sum = 0.0f;
    for (;;) { /* an odometer over the taps, the last dim fastest */
      int64_t offset = 0;
      float weight = 1.0f;
      for (int k = 0; k < g.rank; k++) {
        offset = offset * g.axes[k].in + idx[k][pick[k]];
        weight *= w[k][pick[k]];
      }
      sum += weight * load_f(x, offset);
      int k = g.rank - 1;
      while (k >= 0 && ++pick[k] == n[k]) pick[k--] = 0;
      if (k < 0) break;
    }
    store_f(y, e, sum);
  }
}

/* The channels-last case of the general geometry: N, H, W, C with only H and W resizing (how ONNX
 * Runtime's layout transformer hands a Resize over), nearest or linear. One thread per output pixel
 * and run of V channels (one 16-byte load per tap where C allows), so a warp reads and writes
 * consecutive channels; index arithmetic in I (32-bit where the tensors allow). The taps are
 * ir_resize_axis_taps' and are summed in the general kernel's order (H outer, W inner), so the two
 * agree bit for bit. The axes and the few scalars travel by value, not the whole geometry (see
 * source_coord above). */
struct nhwc_resize_args {
  ir_resize_axis h, w;
  int coord, nearest;
  int64_t c;
};

template <int Mode>
__device__ __forceinline__ int nhwc_axis_taps(ir_resize_axis ax, int coord, int nearest, int64_t o, int64_t idx[2],
                                              float w[2]) {
  if (ir_resize_axis_kept(&ax)) {
    idx[0] = o;
    w[0] = 1.0f;
    return 1;
  }
  const float c = source_coord(ax, coord, o);
  if (Mode == IR_RESIZE_NEAREST) {
    idx[0] = ir_resize_nearest_index(&ax, nearest, c);
    w[0] = 1.0f;
    return 1;
  }
  ir_resize_linear_taps(&ax, c, &idx[0], &idx[1], &w[0], &w[1]);
  return 2;
}

template <typename T, int V, int Mode, typename I>
__global__ void resize_nhwc_kernel(const T* x, T* y, nhwc_resize_args a, I count) {
  const I runs = (I)a.c / V, c = (I)a.c, h = (I)a.h.in, w = (I)a.w.in, oh = (I)a.h.out, ow = (I)a.w.out;
  for (I e = blockIdx.x * (I)blockDim.x + threadIdx.x; e < count; e += (I)blockDim.x * gridDim.x) {
    const I run = e % runs;
    I rest = e / runs;
    const I ox = rest % ow;
    rest /= ow;
    const I oy = rest % oh, b = rest / oh;
    int64_t iy[2], ix[2];
    float wy[2], wx[2];
    const int ny = nhwc_axis_taps<Mode>(a.h, a.coord, a.nearest, oy, iy, wy);
    const int nx = nhwc_axis_taps<Mode>(a.w, a.coord, a.nearest, ox, ix, wx);
    float acc[V];
    for (int k = 0; k < V; k++) acc[k] = 0.0f;
    for (int i = 0; i < ny; i++)
      for (int j = 0; j < nx; j++) {
        const float weight = wy[i] * wx[j];
        const elems<T, V> p =
            *reinterpret_cast<const elems<T, V>*>(x + ((b * h + (I)iy[i]) * w + (I)ix[j]) * c + run * V);
        for (int k = 0; k < V; k++) acc[k] += weight * load_f(p.e, k);
      }
    elems<T, V> out;
    for (int k = 0; k < V; k++) store_f(out.e, k, acc[k]);
    *reinterpret_cast<elems<T, V>*>(y + e * V) = out;
  }
}

template <typename T, int V, int Mode>
void launch_resize_nhwc_of(const T* x, T* y, const nhwc_resize_args& a, int64_t count, int64_t in_count,
                           cudaStream_t stream) {
  const int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  const unsigned int grid = (unsigned int)(blocks < (1 << 20) ? blocks : (1 << 20));
  if (count * V < INT32_MAX && in_count < INT32_MAX)
    resize_nhwc_kernel<T, V, Mode, int32_t><<<grid, kBlockSize, 0, stream>>>(x, y, a, (int32_t)count);
  else
    resize_nhwc_kernel<T, V, Mode, int64_t><<<grid, kBlockSize, 0, stream>>>(x, y, a, count);
}

/* Whether the general geometry g is the channels-last case: rank 4, N and C kept, nearest or linear
 * (cubic and tf_crop_and_resize stay on the general kernel). */
static bool nhwc_case(const ir_resize_geom& g, nhwc_resize_args* a) {
  if (!g.general || g.rank != 4 || !ir_resize_axis_kept(&g.axes[0]) || !ir_resize_axis_kept(&g.axes[3]) ||
      g.mode == IR_RESIZE_CUBIC || g.coord == IR_COORD_TF_CROP_AND_RESIZE)
    return false;
  *a = nhwc_resize_args{g.axes[1], g.axes[2], g.coord, g.nearest, g.axes[3].in};
  return true;
}

template <typename T, int V>
void launch_resize_nhwc(const T* x, T* y, const ir_resize_geom& g, const nhwc_resize_args& a, int64_t count,
                        cudaStream_t stream) {
  const int64_t in_count = g.axes[0].in * a.h.in * a.w.in * a.c;
  if (g.mode == IR_RESIZE_NEAREST)
    launch_resize_nhwc_of<T, V, IR_RESIZE_NEAREST>(x, y, a, count / V, in_count, stream);
  else
    launch_resize_nhwc_of<T, V, IR_RESIZE_LINEAR>(x, y, a, count / V, in_count, stream);
}

template <typename T>
cudaError_t launch_resize_general(const void* x, void* y, const ir_resize_geom& g, int64_t count,
                                  cudaStream_t stream) {
  nhwc_resize_args a;
  if (nhwc_case(g, &a)) {
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    const int v = 16 / sizeof(T);
    if (a.c % v == 0 && ((uintptr_t)x | (uintptr_t)y) % 16 == 0)
      launch_resize_nhwc<T, 16 / sizeof(T)>(in, out, g, a, count, stream);
    else
      launch_resize_nhwc<T, 1>(in, out, g, a, count, stream);
    return cudaGetLastError();
  }
  const int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  const unsigned int grid = (unsigned int)(blocks < (1 << 20) ? blocks : (1 << 20));
  resize_general_kernel<T><<<grid, kBlockSize, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g, count);
  return cudaGetLastError();
}

/* resize_nearest_vec_kernel where the geometry and the pointers allow it; false leaves it to the
 * kernels below. */
template <typename T>
bool launch_nearest_vec(const void* x, void* y, const ir_resize_geom& g, cudaStream_t stream) {
  typedef typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type E;
  constexpr int V = 16 / sizeof(T);
  if (g.mode != IR_RESIZE_NEAREST || g.w.out % V != 0 || (uintptr_t)y % 16 != 0 || (uintptr_t)x % sizeof(T) != 0)
    return false;
  const int64_t slots = g.w.out / V;
  const int bx = slots >= 32 ? 32 : slots >= 16 ? 16 : 8, by = 256 / bx;
  const int64_t gx = (slots + bx - 1) / bx, gy = (g.h.out + by * kNearestRows - 1) / (by * kNearestRows);
  if (gx > INT32_MAX || gy > 65535 || g.outer > 65535) return false;
  const T rounded = T(g.extrapolation); /* what store_f writes */
  E extrapolation;
  memcpy(&extrapolation, &rounded, sizeof extrapolation);
  resize_nearest_vec_kernel<E><<<dim3((unsigned int)gx, (unsigned int)gy, (unsigned int)g.outer), dim3(bx, by), 0,
                                  stream>>>(static_cast<const E*>(x), static_cast<E*>(y), g, extrapolation);
  return true;
}

template <typename T>
cudaError_t launch_resize(const void* x, void* y, const ir_resize_geom& g, int64_t count, cudaStream_t stream) {
  if (launch_nearest_vec<T>(x, y, g, stream)) return cudaGetLastError();
  const int64_t rows = count / g.w.out, chunks = (g.w.out + kRowChunk - 1) / kRowChunk;
  const dim3 grid((unsigned int)(rows < (1 << 20) ? rows : (1 << 20)), (unsigned int)(chunks < 65535 ? chunks : 65535));
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  const int64_t x_blocks = (g.w.out + kBlockSize - 1) / kBlockSize;
  const int64_t y_blocks = (g.h.out + kGridRows - 1) / kGridRows;
  if (y_blocks <= 65535 && g.outer <= 65535 && x_blocks <= INT32_MAX) {
    const dim3 g3((unsigned int)x_blocks, (unsigned int)y_blocks, (unsigned int)g.outer);
    switch (g.mode) {
      case IR_RESIZE_NEAREST: resize_grid_kernel<T, IR_RESIZE_NEAREST><<<g3, kBlockSize, 0, stream>>>(xt, yt, g); break;
      case IR_RESIZE_LINEAR: resize_grid_kernel<T, IR_RESIZE_LINEAR><<<g3, kBlockSize, 0, stream>>>(xt, yt, g); break;
      case IR_RESIZE_CUBIC: resize_grid_kernel<T, IR_RESIZE_CUBIC><<<g3, kBlockSize, 0, stream>>>(xt, yt, g); break;
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  switch (g.mode) {
    case IR_RESIZE_NEAREST: resize_kernel<T, IR_RESIZE_NEAREST><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, rows); break;
    case IR_RESIZE_LINEAR: resize_kernel<T, IR_RESIZE_LINEAR><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, rows); break;
    case IR_RESIZE_CUBIC: resize_kernel<T, IR_RESIZE_CUBIC><<<grid, kBlockSize, 0, stream>>>(xt, yt, g, rows); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// ---- RoiAlign ----

/* One thread per output element (region, channel, ph, pw), grid-stride: the region's box and every
 * sample's taps from ir/resize_geom.h as the reference computes them (float32 positions, products
 * never fused), the samples' mean or maximum (ref_resize.c's roi_align_one) in float. A batch index
 * outside [0, N) gives 0 (the reference fails the run), so nothing is read outside X. */
template <typename T>
__global__ void roi_align_kernel(const T* x, const T* rois, const int64_t* batch_indices, T* y,
                                 cuda_roi_align_args a) {
  const int64_t count = a.regions * a.c * a.out_h * a.out_w;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < count; e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t pw = e % a.out_w, ph = e / a.out_w % a.out_h, ch = e / (a.out_w * a.out_h) % a.c;
    const int64_t r = e / (a.out_w * a.out_h * a.c);
    const int64_t batch = batch_indices[r];
    if (batch < 0 || batch >= a.n) {
      store_f(y, e, 0.0f);
      continue;
    }
    float roi[4];
    for (int k = 0; k < 4; k++) roi[k] = load_f(rois, r * 4 + k);
    const ir_roi_box b = ir_roi_align_box(roi, a.spatial_scale, a.half_pixel, a.out_h, a.out_w, a.sampling_ratio);
    const T* plane = x + (batch * a.c + ch) * a.h * a.w;
    float acc = 0.0f;
    bool first = true;
    for (int64_t iy = 0; iy < b.grid_h; iy++) {
      const float yy = ir_roi_align_coord(b.start_h, ph, b.bin_h, iy, b.grid_h);
      for (int64_t ix = 0; ix < b.grid_w; ix++) {
        const float xx = ir_roi_align_coord(b.start_w, pw, b.bin_w, ix, b.grid_w);
        int64_t pos[4];
        float wt[4];
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (ir_roi_align_taps(yy, xx, a.h, a.w, pos, wt))
          for (int t = 0; t < 4; t++) v[t] = __fmul_rn(wt[t], load_f(plane, pos[t]));
        if (a.mode_max) {
          const float m = fmaxf(fmaxf(fmaxf(v[0], v[1]), v[2]), v[3]);
          acc = first || m > acc ? m : acc;
          first = false;
        } else {
          acc += v[0] + v[1] + v[2] + v[3];
        }
      }
    }
    if (!a.mode_max) {
      const int64_t samples = b.grid_h * b.grid_w > 1 ? b.grid_h * b.grid_w : 1;
      acc /= (float)samples;
    }
    store_f(y, e, acc);
  }
}

// ---- DepthToSpace, SpaceToDepth ----

struct space_depth_args {
  int to_space, crd, nhwc_input;
  int64_t blocksize;
  int64_t out_dims[4];
  int64_t count;
};

/* One output row (n, c, y) per block, grid-stride over rows; thread 0 finds where the row's source
 * starts, so each element costs one small division (x by the block size) instead of the 64-bit
 * decomposition of its linear index. E is an unsigned integer type of the element's size: pure
 * data movement, bit-exact for any type. */
__device__ int64_t space_depth_row_base(const space_depth_args& a, int64_t row, int64_t* lane_stride) {
  const int64_t b = a.blocksize, out_c = a.out_dims[1], out_h = a.out_dims[2];
  const int64_t h_o = row % out_h, c_o = (row / out_h) % out_c, n = row / (out_h * out_c);
  if (a.to_space) { /* source channel = row part + (x mod b) * lane step; source x = x / b */
    const int64_t in_c = out_c * b * b, in_h = out_h / b, in_w = a.out_dims[3] / b;
    const int64_t bi = h_o % b;
    const int64_t c = a.crd ? c_o * b * b + bi * b : bi * b * out_c + c_o;
    *lane_stride = (a.crd ? 1 : out_c) * in_h * in_w;
    return ((n * in_c + c) * in_h + h_o / b) * in_w;
  }
  /* SpaceToDepth: source x = x * b + block % b, the rest fixed by the row */
  const int64_t in_c = out_c / (b * b), in_h = out_h * b, in_w = a.out_dims[3] * b;
  const int64_t block = c_o / in_c, c = c_o % in_c;
  *lane_stride = 0;
  return ((n * in_c + c) * in_h + h_o * b + block / b) * in_w + block % b;
}

const int64_t kSpaceDepthChunk = 2048;

template <typename E>
__global__ void space_depth_kernel(const E* x, E* y, space_depth_args a, int64_t rows) {
  __shared__ int64_t row_base, lane_stride;
  const int64_t out_w = a.out_dims[3], b = a.blocksize;
  const bool wide = out_w > UINT32_MAX || b > UINT32_MAX;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    if (threadIdx.x == 0) {
      int64_t stride;
      row_base = space_depth_row_base(a, row, &stride);
      lane_stride = stride;
    }
    __syncthreads();
    const int64_t base = row_base, stride = lane_stride;
    E* out_row = y + row * out_w;
    for (int64_t x0 = blockIdx.y * kSpaceDepthChunk; x0 < out_w; x0 += (int64_t)gridDim.y * kSpaceDepthChunk) {
      const int64_t end = x0 + kSpaceDepthChunk < out_w ? x0 + kSpaceDepthChunk : out_w;
      for (int64_t ox = x0 + threadIdx.x; ox < end; ox += kUnroll * (int64_t)blockDim.x) {
        E v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t xu = ox + u * (int64_t)blockDim.x;
          if (xu >= end) break;
          if (a.to_space) {
            /* a 32-bit division where the values fit (always, in practice): a tenth of the 64-bit one */
            const int64_t q = wide ? xu / b : (int64_t)((uint32_t)xu / (uint32_t)b);
            v[u] = x[base + (xu - q * b) * stride + q];
          } else {
            v[u] = x[base + xu * b];
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t xu = ox + u * (int64_t)blockDim.x;
          if (xu < end) out_row[xu] = v[u];
        }
      }
    }
    __syncthreads(); /* row_base is rewritten for the next row */
  }
}

/* DepthToSpace / SpaceToDepth with 16-byte stores: x along an output row in slots of V elements (as
 * plan_vec_kernel's in cuda_layout.cu: slot s covers the row's elements [s*V - a, s*V - a + V), a
 * being the row start's offset within its destination vector), y over the rows (kSpaceDepthRows per
 * thread), z over the planes (n, c), so the per-element index math is a multiply-add: the source of
 * a row is fixed by (n, c, row), and a DepthToSpace column's offset (x mod b, x / b) is found once
 * per thread for the whole plane and kept while the rows start at the same offset.
 *
 * With B > 0 (the blocksize, 2 or 4; every row aligned; the source aligned too) the loads are
 * vectors as well: DepthToSpace reads V / B elements of each of the B source rows an output slot
 * interleaves, SpaceToDepth the B vectors that hold every B-th element its slot takes. Otherwise
 * (B = 0) each element is one load of its size. */
const int kSpaceDepthRows = 4;

template <typename E, int B>
__global__ void __launch_bounds__(256, 1) space_depth_vec_kernel(const E* __restrict__ x, E* __restrict__ y,
                                                              space_depth_args a, int64_t planes) {
  constexpr int V = 16 / sizeof(E);
  const int64_t b = B > 0 ? B : a.blocksize;
  const int64_t out_c = a.out_dims[1], out_h = a.out_dims[2], out_w = a.out_dims[3];
  const int64_t in_c = a.to_space ? out_c * b * b : out_c / (b * b);
  const int64_t in_h = a.to_space ? out_h / b : out_h * b, in_w = a.to_space ? out_w / b : out_w * b;
  /* DepthToSpace: source distance between the lanes bj and bj + 1, and between the rows bi, bi + 1 */
  const int64_t lane_stride = (a.crd ? 1 : out_c) * in_h * in_w, bi_stride = lane_stride * b;
  const int64_t dst_mis = (int64_t)(((uintptr_t)y / sizeof(E)) & (V - 1));
  const int64_t slot = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t col[V]; /* DepthToSpace: source offsets of the slot's elements within the row, for x0 = col_x0 */
  int64_t col_x0 = INT64_MIN;
#pragma unroll
  for (int i = 0; i < V; i++) col[i] = 0;
  for (int64_t z = blockIdx.z; z < planes; z += gridDim.z) {
    const int64_t c_o = z % out_c, n = z / out_c;
    int64_t plane_src, bj = 0;
    if (a.to_space) {
      plane_src = (n * in_c + (a.crd ? c_o * b * b : c_o)) * in_h * in_w;
    } else {
      const int64_t block = c_o / in_c, c = c_o - block * in_c;
      bj = block % b;
      plane_src = ((n * in_c + c) * in_h + block / b) * in_w; /* + bj: added per element */
    }
    for (int64_t h0 = ((int64_t)blockIdx.y * blockDim.y + threadIdx.y) * kSpaceDepthRows; h0 < out_h;
         h0 += (int64_t)gridDim.y * blockDim.y * kSpaceDepthRows) {
      vec16<E> v[kSpaceDepthRows];
#pragma unroll
      for (int u = 0; u < kSpaceDepthRows; u++) {
        const int64_t h_o = h0 + u, dst_row = (z * out_h + h_o) * out_w;
        const int64_t x0 = slot * V - ((dst_mis + dst_row) & (V - 1));
        v[u].v = make_uint4(0, 0, 0, 0);
        if (h_o >= out_h || x0 >= out_w) continue;
        if (a.to_space) {
          const int64_t bi = h_o % b, src_row = plane_src + bi * bi_stride + (h_o / b) * in_w;
          if constexpr (B > 0) {
            elems<E, V / B> lane[B];
#pragma unroll
            for (int j = 0; j < B; j++)
              lane[j] = *reinterpret_cast<const elems<E, V / B>*>(x + src_row + j * lane_stride + x0 / B);
#pragma unroll
            for (int k = 0; k < V; k++) v[u].e[k] = lane[k % B].e[k / B];
          } else {
            if (x0 != col_x0) { /* (x mod b, x / b) of the slot's elements, walked from the first */
              const int64_t first = x0 < 0 ? 0 : x0;
              int64_t q = first / b, r = first - q * b;
#pragma unroll
              for (int i = 0; i < V; i++) {
                if (x0 + i < 0) continue;
                col[i] = r * lane_stride + q;
                if (++r == b) r = 0, q++;
              }
              col_x0 = x0;
            }
#pragma unroll
            for (int i = 0; i < V; i++)
              if (x0 + i >= 0 && x0 + i < out_w) v[u].e[i] = x[src_row + col[i]];
          }
        } else {
          const int64_t src_row = plane_src + h_o * b * in_w;
          if constexpr (B > 0) {
            vec16<E> chunk[B];
#pragma unroll
            for (int m = 0; m < B; m++) chunk[m].v = *reinterpret_cast<const uint4*>(x + src_row + x0 * B + m * V);
#pragma unroll
            for (int k = 0; k < V; k++) {
              E e = chunk[(k * B) / V].e[(k * B) % V];
#pragma unroll
              for (int j = 1; j < B; j++)
                if (bj == j) e = chunk[(k * B + j) / V].e[(k * B + j) % V];
              v[u].e[k] = e;
            }
          } else {
#pragma unroll
            for (int i = 0; i < V; i++)
              if (x0 + i >= 0 && x0 + i < out_w) v[u].e[i] = x[src_row + (x0 + i) * b + bj];
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kSpaceDepthRows; u++) {
        const int64_t h_o = h0 + u, dst_row = (z * out_h + h_o) * out_w;
        const int64_t x0 = slot * V - ((dst_mis + dst_row) & (V - 1));
        if (h_o >= out_h || x0 >= out_w) continue;
        if (x0 >= 0 && x0 + V <= out_w) {
          store16(y + dst_row + x0, v[u].v);
          continue;
        }
#pragma unroll
        for (int i = 0; i < V; i++)
          if (x0 + i >= 0 && x0 + i < out_w) y[dst_row + x0 + i] = v[u].e[i];
      }
    }
  }
}

/* space_depth_vec_kernel for rows of at least a vector; false leaves them to space_depth_kernel. */
template <typename E>
bool launch_space_depth_vec(const void* x, void* y, const space_depth_args& a, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(E);
  const int64_t b = a.blocksize, out_w = a.out_dims[3], out_h = a.out_dims[2];
  if (out_w < V || (uintptr_t)x % sizeof(E) != 0 || (uintptr_t)y % sizeof(E) != 0) return false;
  const int64_t planes = a.out_dims[0] * a.out_dims[1];
  const bool aligned_rows = out_w % V == 0 && (uintptr_t)y % 16 == 0;
  const int64_t slots = aligned_rows ? out_w / V : (out_w + 2 * V - 2) / V;
  int bx = 256;
  while (bx > 4 && bx / 2 >= slots) bx /= 2;
  const int by = 256 / bx;
  const int64_t gx = (slots + bx - 1) / bx, gy = (out_h + (int64_t)by * kSpaceDepthRows - 1) / ((int64_t)by * kSpaceDepthRows);
  if (gx > INT32_MAX) return false;
  const dim3 grid((unsigned int)gx, (unsigned int)(gy < 65535 ? gy : 65535), (unsigned int)(planes < 65535 ? planes : 65535));
  const dim3 block(bx, by);
  /* vector loads: every row aligned, the source too, and (DepthToSpace) each source row's part of a
   * slot a whole aligned vector */
  const bool vector_loads = aligned_rows && (uintptr_t)x % 16 == 0 && V % b == 0 &&
                            (!a.to_space || (out_w / b) % (V / b) == 0);
  const E* xe = static_cast<const E*>(x);
  E* ye = static_cast<E*>(y);
  if (vector_loads && b == 2)
    space_depth_vec_kernel<E, 2><<<grid, block, 0, stream>>>(xe, ye, a, planes);
  else if constexpr (V % 4 == 0) {
    if (vector_loads && b == 4)
      space_depth_vec_kernel<E, 4><<<grid, block, 0, stream>>>(xe, ye, a, planes);
    else
      space_depth_vec_kernel<E, 0><<<grid, block, 0, stream>>>(xe, ye, a, planes);
  } else {
    space_depth_vec_kernel<E, 0><<<grid, block, 0, stream>>>(xe, ye, a, planes);
  }
  return true;
}

/* DepthToSpace of a channels-last input [N, H, W, C] into NCHW. A block takes a run of `run` pixels
 * of one input row: it reads their channels (run x C elements, contiguous) into shared memory in
 * one coalesced sweep, then writes the b x b output pixels each input pixel becomes, output row by
 * output row (c_o, i), its threads along the row. Reading the input element by element instead
 * (one element of each pixel's channels per thread) took 92 us for ESPCN's 12-channel 540x960 float16
 * image on the H200, more than a Transpose and a plain DepthToSpace together (49). */
template <typename E>
__global__ void depth_to_space_nhwc_kernel(const E* __restrict__ x, E* __restrict__ y, space_depth_args a, int run) {
  extern __shared__ __align__(16) unsigned char tile_bytes[];
  E* tile = reinterpret_cast<E*>(tile_bytes);
  const int64_t b = a.blocksize, out_c = a.out_dims[1], out_h = a.out_dims[2], out_w = a.out_dims[3];
  const int64_t in_c = out_c * b * b, in_h = out_h / b, in_w = out_w / b, runs = (in_w + run - 1) / run;
  for (int64_t task = blockIdx.x; task < a.out_dims[0] * in_h * runs; task += gridDim.x) {
    const int64_t w0 = task % runs * run, row = task / runs, h = row % in_h, n = row / in_h;
    const int64_t pixels = in_w - w0 < run ? in_w - w0 : run;
    const E* src = x + (row * in_w + w0) * in_c;
    __syncthreads(); /* the previous task's tile is read */
    const int64_t count = pixels * in_c;
    if ((uintptr_t)src % 16 == 0 && count * (int64_t)sizeof(E) % 16 == 0) { /* one 16-byte load per thread or so */
      const int64_t vectors = count * (int64_t)sizeof(E) / 16;
      for (int64_t k = threadIdx.x; k < vectors; k += blockDim.x)
        reinterpret_cast<uint4*>(tile)[k] = reinterpret_cast<const uint4*>(src)[k];
    } else {
#pragma unroll 4
      for (int64_t k = threadIdx.x; k < count; k += blockDim.x) tile[k] = src[k];
    }
    __syncthreads();
    /* 32-bit index math within the run: pixels * b <= the block size, out_c * b * b = C fits a tile */
    const int bb = (int)b, oc = (int)out_c, ic = (int)in_c, width = (int)(pixels * b);
    E* out = y + (n * out_c * out_h + h * b) * out_w + w0 * b; /* channel 0, output row h * b, column w0 * b */
    for (int xo = threadIdx.x; xo < width; xo += blockDim.x) {
      const int w = xo / bb, j = xo - w * bb;
      for (int c_o = 0; c_o < oc; c_o++)
        for (int i = 0; i < bb; i++) {
          const int c = a.crd ? (c_o * bb + i) * bb + j : (i * bb + j) * oc + c_o;
          out[((int64_t)c_o * out_h + i) * out_w + xo] = tile[w * ic + c];
        }
    }
  }
}

template <typename E>
cudaError_t launch_space_depth(const void* x, void* y, const space_depth_args& a, cudaStream_t stream) {
  if (a.nhwc_input) {
    /* a run of pixels whose b x b outputs per output row fill the block, within 48 KiB of channels */
    const int64_t b = a.blocksize, in_c = a.out_dims[1] * b * b, in_w = a.out_dims[3] / b;
    int64_t run = kBlockSize / b > 0 ? kBlockSize / b : 1;
    if (run * in_c * (int64_t)sizeof(E) > 49152) run = 49152 / (in_c * (int64_t)sizeof(E));
    if (run < 1) return cudaErrorInvalidValue; /* one pixel's channels past 48 KiB */
    if (run > in_w) run = in_w;
    const int64_t tasks = a.out_dims[0] * (a.out_dims[2] / b) * ((in_w + run - 1) / run);
    const unsigned int blocks = (unsigned int)(tasks < (1 << 20) ? tasks : (1 << 20));
    depth_to_space_nhwc_kernel<E><<<blocks, kBlockSize, (size_t)(run * in_c) * sizeof(E), stream>>>(
        static_cast<const E*>(x), static_cast<E*>(y), a, (int)run);
    return cudaGetLastError();
  }
  if (launch_space_depth_vec<E>(x, y, a, stream)) return cudaGetLastError();
  const int64_t rows = a.count / a.out_dims[3], chunks = (a.out_dims[3] + kSpaceDepthChunk - 1) / kSpaceDepthChunk;
  const dim3 grid((unsigned int)(rows < (1 << 20) ? rows : (1 << 20)), (unsigned int)(chunks < 65535 ? chunks : 65535));
  space_depth_kernel<E><<<grid, kBlockSize, 0, stream>>>(static_cast<const E*>(x), static_cast<E*>(y), a, rows);
  return cudaGetLastError();
}

template <typename T>
cudaError_t preload_resize() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_NEAREST>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_LINEAR>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_grid_kernel<T, IR_RESIZE_NEAREST>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_grid_kernel<T, IR_RESIZE_LINEAR>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_grid_kernel<T, IR_RESIZE_CUBIC>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, resize_general_kernel<T>)) != cudaSuccess) return e;
  const void* nhwc[] = {
      (const void*)resize_nhwc_kernel<T, 1, IR_RESIZE_NEAREST, int32_t>,
      (const void*)resize_nhwc_kernel<T, 1, IR_RESIZE_LINEAR, int32_t>,
      (const void*)resize_nhwc_kernel<T, 1, IR_RESIZE_NEAREST, int64_t>,
      (const void*)resize_nhwc_kernel<T, 1, IR_RESIZE_LINEAR, int64_t>,
      (const void*)resize_nhwc_kernel<T, 16 / sizeof(T), IR_RESIZE_NEAREST, int32_t>,
      (const void*)resize_nhwc_kernel<T, 16 / sizeof(T), IR_RESIZE_LINEAR, int32_t>,
      (const void*)resize_nhwc_kernel<T, 16 / sizeof(T), IR_RESIZE_NEAREST, int64_t>,
      (const void*)resize_nhwc_kernel<T, 16 / sizeof(T), IR_RESIZE_LINEAR, int64_t>};
  for (const void* k : nhwc)
    if ((e = cudaFuncGetAttributes(&attr, k)) != cudaSuccess) return e;
  typedef typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type E;
  if ((e = cudaFuncGetAttributes(&attr, resize_nearest_vec_kernel<E>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, resize_kernel<T, IR_RESIZE_CUBIC>);
}

template <typename E>
cudaError_t preload_space_depth_vec() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_vec_kernel<E, 0>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_vec_kernel<E, 2>)) != cudaSuccess) return e;
  if constexpr (16 / sizeof(E) % 4 == 0) return cudaFuncGetAttributes(&attr, space_depth_vec_kernel<E, 4>);
  return cudaSuccess;
}

}  // namespace

/* Whether every index along axis a is `o / factor` for a whole factor, by the geometry's own mapping. */
static int whole_factor(const ir_resize_axis* a, int coord, int nearest, int* factor) {
  if (a->in < 1 || a->out < a->in || a->out % a->in != 0 || a->out / a->in > 64) return 0;
  const int64_t f = a->out / a->in;
  for (int64_t o = 0; o < a->out; o++) {
    const float c = ir_resize_source_coord(a, coord, o);
    if (ir_resize_outside(a, coord, c) || ir_resize_nearest_index(a, nearest, c) != o / f) return 0;
  }
  *factor = (int)f;
  return 1;
}

extern "C" int cuda_resize_nearest_factors(const ir_resize_geom* g, int* fx, int* fy) {
  *fx = *fy = 0;
  if (g->general || g->identity || g->mode != IR_RESIZE_NEAREST) return 0;
  int x = 0, y = 0;
  if (!whole_factor(&g->w, g->coord, g->nearest, &x) || !whole_factor(&g->h, g->coord, g->nearest, &y)) return 0;
  *fx = x;
  *fy = y;
  return 1;
}

extern "C" cudaError_t cuda_resize_nearest_up(int dtype, const void* x, void* y, const ir_resize_geom* g, int fx,
                                              int fy, cudaStream_t stream) {
  if (g->outer * g->h.out * g->w.out <= 0) return cudaSuccess;
  switch (dtype) {
    case GFX_DTYPE_F32: return launch_nearest_up_of<uint32_t>(x, y, *g, fx, fy, stream);
    case GFX_DTYPE_F16:
    case GFX_DTYPE_BF16: return launch_nearest_up_of<uint16_t>(x, y, *g, fx, fy, stream);
    default: return cudaErrorNotSupported;
  }
}

extern "C" cudaError_t cuda_resize(int dtype, const void* x, void* y, ir_resize_geom g, cudaStream_t stream) {
  int64_t count = g.outer * g.h.out * g.w.out;
  if (g.general) {
    count = 1;
    for (int k = 0; k < g.rank; k++) count *= g.axes[k].out;
  }
  if (count <= 0) return cudaSuccess;
  if (g.identity) {  // nothing resizes: a copy, whatever the mode (device to device, capturable)
    size_t es = dtype == GFX_DTYPE_F32 ? 4 : 2;
    return cudaMemcpyAsync(y, x, (size_t)count * es, cudaMemcpyDeviceToDevice, stream);
  }
  if (g.general) switch (dtype) {
      case GFX_DTYPE_F32: return launch_resize_general<float>(x, y, g, count, stream);
      case GFX_DTYPE_F16: return launch_resize_general<__half>(x, y, g, count, stream);
      case GFX_DTYPE_BF16: return launch_resize_general<__nv_bfloat16>(x, y, g, count, stream);
      default: return cudaErrorInvalidValue;
    }
  switch (dtype) {
    case GFX_DTYPE_F32: return launch_resize<float>(x, y, g, count, stream);
    case GFX_DTYPE_F16: return launch_resize<__half>(x, y, g, count, stream);
    case GFX_DTYPE_BF16: return launch_resize<__nv_bfloat16>(x, y, g, count, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t cuda_roi_align(int dtype, const void* x, const void* rois, const int64_t* batch_indices,
                                      void* y, cuda_roi_align_args a, cudaStream_t stream) {
  const int64_t count = a.regions * a.c * a.out_h * a.out_w;
  if (count <= 0) return cudaSuccess;
  const int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  const unsigned int grid = (unsigned int)(blocks < (1 << 20) ? blocks : (1 << 20));
  switch (dtype) {
    case GFX_DTYPE_F32:
      roi_align_kernel<float><<<grid, kBlockSize, 0, stream>>>((const float*)x, (const float*)rois, batch_indices,
                                                                (float*)y, a);
      break;
    case GFX_DTYPE_F16:
      roi_align_kernel<__half><<<grid, kBlockSize, 0, stream>>>((const __half*)x, (const __half*)rois, batch_indices,
                                                                 (__half*)y, a);
      break;
    case GFX_DTYPE_BF16:
      roi_align_kernel<__nv_bfloat16><<<grid, kBlockSize, 0, stream>>>(
          (const __nv_bfloat16*)x, (const __nv_bfloat16*)rois, batch_indices, (__nv_bfloat16*)y, a);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_space_depth(size_t elem_size, int to_space, int crd, int nhwc_input, int64_t blocksize,
                                        const int64_t out_dims[4], const void* x, void* y, cudaStream_t stream) {
  space_depth_args a;
  a.to_space = to_space;
  a.crd = crd;
  a.nhwc_input = to_space && nhwc_input;
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
  const void* up[] = {(const void*)resize_nearest_up_kernel<uint32_t, 1>, (const void*)resize_nearest_up_kernel<uint32_t, 2>,
                      (const void*)resize_nearest_up_kernel<uint32_t, 4>, (const void*)resize_nearest_up_kernel<uint16_t, 1>,
                      (const void*)resize_nearest_up_kernel<uint16_t, 2>, (const void*)resize_nearest_up_kernel<uint16_t, 4>,
                      (const void*)resize_nearest_up_kernel<uint16_t, 8>};
  for (const void* k : up) {
    cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, k)) != cudaSuccess) return e;
  }
  if ((e = preload_resize<__half>()) != cudaSuccess) return e;
  if ((e = preload_resize<__nv_bfloat16>()) != cudaSuccess) return e;
  cudaFuncAttributes attr;
  if ((e = cudaFuncGetAttributes(&attr, roi_align_kernel<float>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, roi_align_kernel<__half>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, roi_align_kernel<__nv_bfloat16>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint8_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint16_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint32_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, space_depth_kernel<uint64_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, depth_to_space_nhwc_kernel<uint8_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, depth_to_space_nhwc_kernel<uint16_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, depth_to_space_nhwc_kernel<uint32_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, depth_to_space_nhwc_kernel<uint64_t>)) != cudaSuccess) return e;
  if ((e = preload_space_depth_vec<uint8_t>()) != cudaSuccess) return e;
  if ((e = preload_space_depth_vec<uint16_t>()) != cudaSuccess) return e;
  if ((e = preload_space_depth_vec<uint32_t>()) != cudaSuccess) return e;
  if ((e = preload_space_depth_vec<uint64_t>()) != cudaSuccess) return e;
  if ((e = cuda_resize_up_preload()) != cudaSuccess) return e; /* cuda_resize_up.cu */
  return cuda_grid_sample_preload();                            /* cuda_grid_sample.cu */
}

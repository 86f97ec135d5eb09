// gfxep CUDA backend — linear and cubic Resize that upscale the rows by a whole factor (x2, x4: the
// bilinear and bicubic upsampling of UNets, feature pyramids, decoders and SR nets), on 16-byte
// output vectors.
//
// Along such a row the taps repeat with the factor: output column o reads the K source columns from
// o / FX + d on (K = 2 linear, 4 cubic) with the weights of its phase o % FX. The host finds the
// phases once per shape from the geometry's own mapping (ir/resize_geom.h) and checks them at every
// output column; the columns near the row's ends, where the taps clamp, keep the general
// arithmetic. Rows take any taps, found per output row.
#include <cuda_runtime.h>
#include <string.h>

#include "backend/cuda/cuda_preload.cuh"
#include "backend/cuda/cuda_resize.h"
#include "backend/cuda/cuda_vec16.cuh"
#include "ir/tensor.h"

namespace {

const int kBlock = 256, kWarp = 32;

/* output rows per thread: the K source rows of each are K loads in flight */
template <int K>
struct taps_traits {
  static const int rows = K == 2 ? 4 : 2;
  static const int block_rows = kBlock / kWarp * rows; /* at most, with one warp along a row */
};

struct resize_up_args {
  int64_t planes;
  int32_t w_in, h_in, w_out, h_out;
  int32_t slot_lo, slot_hi; /* the output vectors (V columns each) whose columns all follow the phases */
  int32_t edge;             /* columns per row outside them: [0, slot_lo * V) and [slot_hi * V, w_out) */
  int32_t d[4];             /* per phase: the first tap's offset from o / FX */
  float w[4][4];            /* per phase: the taps' weights */
};

/* The coordinate mapping as a call (see cuda_resize.cu's source_coord: inlined, it is specialised
 * over its seven modes at every call site). */
__device__ __noinline__ float source_coord_of(ir_resize_axis a, int coord, int64_t x) {
  return ir_resize_source_coord(&a, coord, x);
}

/* The K taps of coordinate c along a (K = 2: linear, 4: cubic). */
template <int K>
__device__ __forceinline__ void taps_of(const ir_resize_geom& g, const ir_resize_axis& a, float c, int64_t idx[K],
                                        float w[K]) {
  if constexpr (K == 2) ir_resize_linear_taps(&a, c, &idx[0], &idx[1], &w[0], &w[1]);
  else ir_resize_cubic_taps(&a, g.cubic_a, g.exclude_outside, c, idx, w);
}

/* N words as elements of T */
template <typename T, int N>
union words {
  uint32_t w[N];
  T e[N * 4 / sizeof(T)];
};

/* A warp takes 30 neighbouring output vectors (V columns each: slots) of `rows` output rows: lane l
 * the slot 30 w + l - 1, lanes 0 and 31 only as the neighbours of lanes 1 and 30. The V columns of
 * a slot read its S = V / FX source columns (its core: one aligned load per source row) and N = K / 2
 * columns on either side, which end and start the neighbouring lanes' cores (shuffles; hence
 * S >= N). The vertical sums come first, then the horizontal ones (sample() in cuda_resize.cu
 * sums the other way round: the results differ by float rounding only); the block's row taps sit
 * in shared memory. After the vectors, the first block along the rows computes their edge columns
 * element by element (sample()'s order), in warps of their own. */
template <typename T, int FX, int K>
__global__ void __launch_bounds__(kBlock, 4) resize_up_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                             ir_resize_geom g, resize_up_args a) {
  constexpr int V = 16 / sizeof(T), S = V / FX, N = K / 2, R = taps_traits<K>::rows;
  constexpr int W = S * (int)sizeof(T) / 4;                       /* words in a core */
  constexpr int NW = (N * (int)sizeof(T) + 3) / 4;                /* words holding N elements of a core's end */
  constexpr int NE = NW * 4 / (int)sizeof(T);                     /* the elements of those words */
  static_assert(S >= N, "the neighbours of a core are in the next lanes' cores");
  typedef elems<T, S> core_t;
  union core_u {
    core_t c;
    uint32_t w[W];
  };
  __shared__ int32_t row_off[K][taps_traits<K>::block_rows];
  __shared__ float row_w[K][taps_traits<K>::block_rows];
  const int tid = (int)(threadIdx.y * blockDim.x + threadIdx.x), lane = tid & (kWarp - 1);
  const int32_t warp_x = (int32_t)(blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp);
  const int32_t slot = warp_x * (kWarp - 2) + lane - 1;
  const bool has_core = slot >= 0 && slot < a.w_out / V;
  const bool body = lane >= 1 && lane <= kWarp - 2 && slot >= a.slot_lo && slot < a.slot_hi;
  const int32_t i0 = slot * S; /* the core's first source column */
  const int rows_per_block = (int)blockDim.y * R;
  for (int64_t plane = blockIdx.z; plane < a.planes; plane += gridDim.z) {
    const T* xp = x + plane * a.h_in * a.w_in;
    T* yp = y + plane * a.h_out * a.w_out;
    for (int32_t yb = (int32_t)blockIdx.y * rows_per_block; yb < a.h_out; yb += (int32_t)gridDim.y * rows_per_block) {
      if (tid < rows_per_block) {
        const int32_t oy = yb + tid < a.h_out ? yb + tid : a.h_out - 1;
        int64_t idx[K];
        float w[K];
        taps_of<K>(g, g.h, source_coord_of(g.h, g.coord, oy), idx, w);
#pragma unroll
        for (int t = 0; t < K; t++) {
          row_off[t][tid] = (int32_t)idx[t] * a.w_in;
          row_w[t][tid] = w[t];
        }
      }
      __syncthreads();
      core_u in[R][K];
#pragma unroll
      for (int k = 0; k < R; k++) {
        const int r = (int)threadIdx.y * R + k;
        const bool load = yb + r < a.h_out && has_core;
#pragma unroll
        for (int t = 0; t < K; t++) {
#pragma unroll
          for (int j = 0; j < W; j++) in[k][t].w[j] = 0;
          if (load) in[k][t].c = *reinterpret_cast<const core_t*>(xp + row_off[t][r] + i0);
        }
      }
#pragma unroll
      for (int k = 0; k < R; k++) {
        const int r = (int)threadIdx.y * R + k;
        /* the K source rows' windows summed with the row weights first, then each column's taps
         * over the sums: (S + 2N + V) K products per vector where the other order takes 2 V K (cubic
         * x2 of a float16 map ran compute-bound at 30% of the memory bandwidth that way) */
        float col[S + 2 * N];
#pragma unroll
        for (int t = 0; t < K; t++) {
          /* every lane shuffles: the loop bounds are the block's */
          words<T, NW> left, right;
#pragma unroll
          for (int j = 0; j < NW; j++) {
            left.w[j] = __shfl_up_sync(0xffffffffu, in[k][t].w[W - NW + j], 1);
            right.w[j] = __shfl_down_sync(0xffffffffu, in[k][t].w[j], 1);
          }
          /* the window: [0, N) left of the core, [N, N + S) the core, [N + S, S + 2N) right of it */
          const float wy = row_w[t][r];
#pragma unroll
          for (int j = 0; j < S + 2 * N; j++) {
            const float e = to_float(j < N ? left.e[NE - N + j] : j < N + S ? in[k][t].c.e[j - N] : right.e[j - N - S]);
            col[j] = t == 0 ? wy * e : col[j] + wy * e;
          }
        }
        vec16<T> out;
#pragma unroll
        for (int i = 0; i < V; i++) {
          const int c = i / FX, p = i % FX;
          const bool shifted = a.d[p] + N != 0; /* the taps start at col[c + 1], else at col[c] */
          float h = a.w[p][0] * (shifted ? col[c + 1] : col[c]);
#pragma unroll
          for (int q = 1; q < K; q++) h += a.w[p][q] * (shifted ? col[c + q + 1] : col[c + q]);
          out.e[i] = from_float<T>(h);
        }
        if (!body || yb + r >= a.h_out) continue;
        store16(yp + (int64_t)(yb + r) * a.w_out + (int64_t)slot * V, out.v);
      }
      if (blockIdx.x == 0) {
        const int32_t count = rows_per_block * a.edge, left = a.slot_lo * V, right = a.slot_hi * V;
        for (int32_t i = tid; i < count; i += (int32_t)(blockDim.x * blockDim.y)) {
          const int32_t q = i / a.edge, oy = yb + q, e = i - q * a.edge;
          if (oy >= a.h_out) break;
          const int32_t ox = e < left ? e : right + (e - left);
          int64_t idx[K];
          float w[K];
          taps_of<K>(g, g.w, source_coord_of(g.w, g.coord, ox), idx, w);
          float o = 0.0f;
#pragma unroll
          for (int t = 0; t < K; t++) {
            const T* row = xp + row_off[t][q];
            float h = w[0] * to_float(row[idx[0]]);
#pragma unroll
            for (int j = 1; j < K; j++) h += w[j] * to_float(row[idx[j]]);
            o = t == 0 ? row_w[0][q] * h : o + row_w[t][q] * h;
          }
          yp[(int64_t)oy * a.w_out + ox] = from_float<T>(o);
        }
      }
      __syncthreads(); /* the row taps are rewritten for the next rows */
    }
  }
}

template <typename T, int FX, int K>
void launch_up(const T* x, T* y, const ir_resize_geom& g, const resize_up_args& a, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T), R = taps_traits<K>::rows;
  const int64_t slots = a.w_out / V, warps = (slots + kWarp - 3) / (kWarp - 2);
  int wx = 1;
  while (wx < kBlock / kWarp && wx < warps) wx *= 2;
  const int bx = wx * kWarp, by = kBlock / bx;
  const int64_t gx = (warps + wx - 1) / wx, gy = (a.h_out + by * R - 1) / (by * R);
  const dim3 grid((unsigned int)gx, (unsigned int)(gy < 65535 ? gy : 65535),
                  (unsigned int)(a.planes < 65535 ? a.planes : 65535));
  resize_up_kernel<T, FX, K><<<grid, dim3(bx, by), 0, stream>>>(x, y, g, a);
}

template <typename T>
cudaError_t launch_up_of(const void* x, void* y, const ir_resize_geom& g, const cuda_resize_pattern& p,
                         cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int K = p.taps, N = K / 2;
  /* whole output vectors per row, aligned; the cores (16 / fx bytes) aligned too and holding the N
   * neighbours either side; 32-bit offsets inside a plane */
  if ((p.fx != 2 && p.fx != 4) || (K != 2 && K != 4) || V % p.fx != 0 || V / p.fx < N || g.w.out % V != 0 ||
      (uintptr_t)y % 16 != 0 || (uintptr_t)x % (16 / p.fx) != 0 || g.h.in * g.w.in > INT32_MAX ||
      g.h.out * g.w.out > INT32_MAX || g.w.out > (1 << 24))
    return cudaErrorNotSupported;
  resize_up_args a;
  memset(&a, 0, sizeof a);
  a.planes = g.outer;
  a.w_in = (int32_t)g.w.in;
  a.h_in = (int32_t)g.h.in;
  a.w_out = (int32_t)g.w.out;
  a.h_out = (int32_t)g.h.out;
  a.slot_lo = (int32_t)((p.col_lo + V - 1) / V);
  a.slot_hi = (int32_t)(p.col_hi / V);
  if (a.slot_hi <= a.slot_lo) return cudaErrorNotSupported;
  a.edge = a.slot_lo * V + (a.w_out - a.slot_hi * V);
  for (int q = 0; q < p.fx; q++) {
    a.d[q] = p.d[q];
    for (int t = 0; t < K; t++) a.w[q][t] = p.w[q][t];
  }
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (K == 2) {
    if (p.fx == 2) launch_up<T, 2, 2>(xt, yt, g, a, stream);
    else launch_up<T, 4, 2>(xt, yt, g, a, stream);
  } else if constexpr (V / 4 >= 2) { /* cubic x4 needs 2 source columns per core */
    if (p.fx == 2) launch_up<T, 2, 4>(xt, yt, g, a, stream);
    else launch_up<T, 4, 4>(xt, yt, g, a, stream);
  } else {
    if (p.fx != 2) return cudaErrorNotSupported;
    launch_up<T, 2, 4>(xt, yt, g, a, stream);
  }
  return cudaGetLastError();
}

}  // namespace

/* Whether output column o along g->w takes the taps of its phase in p. */
static int follows_phases(const ir_resize_geom* g, const cuda_resize_pattern* p, int64_t o) {
  int64_t idx[4];
  float w[4];
  const float c = ir_resize_source_coord(&g->w, g->coord, o);
  if (p->taps == 2) ir_resize_linear_taps(&g->w, c, &idx[0], &idx[1], &w[0], &w[1]);
  else ir_resize_cubic_taps(&g->w, g->cubic_a, g->exclude_outside, c, idx, w);
  const int q = (int)(o % p->fx);
  for (int t = 0; t < p->taps; t++)
    if (idx[t] != o / p->fx + p->d[q] + t || w[t] != p->w[q][t]) return 0;
  return 1;
}

extern "C" int cuda_resize_pattern_of(const ir_resize_geom* g, cuda_resize_pattern* p) {
  memset(p, 0, sizeof *p);
  const ir_resize_axis* w = &g->w;
  if (g->general || g->identity || (g->mode != IR_RESIZE_LINEAR && g->mode != IR_RESIZE_CUBIC) ||
      g->coord == IR_COORD_TF_CROP_AND_RESIZE || w->in < 4 || (w->out != 2 * w->in && w->out != 4 * w->in))
    return 0;
  p->fx = (int)(w->out / w->in);
  p->taps = g->mode == IR_RESIZE_LINEAR ? 2 : 4;
  /* the phases as the middle of the row has them (each tap offset by 0 or 1 from the kernel's
   * window), then the run of columns around it that follows them */
  const int64_t mid = w->in / 2 * p->fx;
  for (int q = 0; q < p->fx; q++) {
    int64_t idx[4];
    const float c = ir_resize_source_coord(w, g->coord, mid + q);
    if (p->taps == 2) ir_resize_linear_taps(w, c, &idx[0], &idx[1], &p->w[q][0], &p->w[q][1]);
    else ir_resize_cubic_taps(w, g->cubic_a, g->exclude_outside, c, idx, p->w[q]);
    p->d[q] = (int)(idx[0] - (mid + q) / p->fx);
    if (p->d[q] + p->taps / 2 != 0 && p->d[q] + p->taps / 2 != 1) return 0;
  }
  int64_t lo = mid, hi = mid;
  while (lo > 0 && follows_phases(g, p, lo - 1)) lo--;
  while (hi < w->out && follows_phases(g, p, hi)) hi++;
  /* mostly clamped (a tiny input) or drifting (align_corners): the general kernel takes it */
  if (hi - lo < w->out / 2) return 0;
  p->col_lo = lo;
  p->col_hi = hi;
  return 1;
}

extern "C" cudaError_t cuda_resize_up(int dtype, const void* x, void* y, const ir_resize_geom* g,
                                      const cuda_resize_pattern* p, cudaStream_t stream) {
  if (g->outer * g->h.out * g->w.out <= 0) return cudaSuccess;
  switch (dtype) {
    case GFX_DTYPE_F32: return launch_up_of<float>(x, y, *g, *p, stream);
    case GFX_DTYPE_F16: return launch_up_of<__half>(x, y, *g, *p, stream);
    case GFX_DTYPE_BF16: return launch_up_of<__nv_bfloat16>(x, y, *g, *p, stream);
    default: return cudaErrorNotSupported;
  }
}

template <typename T>
static cudaError_t preload_up() {
  const void* kernels[] = {(const void*)resize_up_kernel<T, 2, 2>, (const void*)resize_up_kernel<T, 4, 2>,
                           (const void*)resize_up_kernel<T, 2, 4>};
  const cudaError_t e = CUDA_LOAD_KERNELS(kernels);
  if (e != cudaSuccess) return e;
  if constexpr (16 / sizeof(T) / 4 >= 2) {
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, resize_up_kernel<T, 4, 4>);
  }
  return cudaSuccess;
}

extern "C" cudaError_t cuda_resize_up_preload(void) {
  cudaError_t e;
  if ((e = preload_up<float>()) != cudaSuccess) return e;
  if ((e = preload_up<__half>()) != cudaSuccess) return e;
  return preload_up<__nv_bfloat16>();
}

// gfxep CUDA backend — kernels of the reduction, normalization, pooling and softmax ops (see cuda_reduce.h).
//
// Rows that are reduced as a whole (a reduction over the innermost dims, softmax along the last
// axis, every normalization) get one block each: the block's threads stride over the row (16-byte
// loads where contiguous) and combine their partial results with warp shuffles and a little shared
// memory. Short rows (up to 1024 elements) get one warp each instead, and few long rows are split
// into chunks reduced by separate blocks into scratch memory, then combined (see cuda_row_split). Reductions over outer dims
// give each thread one output, so that neighbouring threads read neighbouring elements. Pooling,
// ArgMax and ArgMin have one thread per output. All loops are grid-stride with 64-bit indices.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "backend/cuda/cuda_reduce.h"
#include "backend/cuda/cuda_vec16.cuh"

namespace {

const int kBlockSize = 256;
/* Enough blocks to fill any current GPU several times over; grid-stride loops do the rest. */
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t items, int64_t per_block) {
  int64_t blocks = (items + per_block - 1) / per_block;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

/* ---- element types: loaded as float, stored with one rounding ---- */

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

/* ---- combining operations; max and min let a NaN win, as the reference does ---- */

struct sum_op {
  __device__ float identity() const { return 0.0f; }
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct max_op {
  __device__ float identity() const { return -INFINITY; }
  __device__ float operator()(float a, float b) const { return (a != a || a >= b) ? a : b; }
};
struct min_op {
  __device__ float identity() const { return INFINITY; }
  __device__ float operator()(float a, float b) const { return (a != a || a <= b) ? a : b; }
};

struct prod_op {
  __device__ float identity() const { return 1.0f; }
  __device__ float operator()(float a, float b) const { return a * b; }
};

template <typename Op>
__device__ float warp_reduce(float v, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/* Combines one value per thread of the block; every thread gets the result. Every thread of the
 * block must call it (the callers' loops are uniform across the block). */
template <typename Op>
__device__ float block_reduce(float v, Op op) {
  __shared__ float partial[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce(v, op);
  __syncthreads(); /* a previous call's readers are done with partial[] */
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = (int)threadIdx.x < warps ? partial[threadIdx.x] : op.identity();
  if (warp == 0) v = warp_reduce(v, op);
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  return partial[0];
}

/* ---- vectorized walks over a contiguous range ---- */

/* N elements of T as one aligned 16-byte access. */
template <typename T>
struct alignas(16) pack16 {
  static const int N = 16 / sizeof(T);
  T v[16 / sizeof(T)];
};

/* to_float / from_float: cuda_vec16.cuh */

/* Calls f(j, x[j]) for every j in [begin, end), spread over `threads` threads numbered `tid`:
 * scalar up to the first 16-byte boundary, then 16-byte loads (8 halves or 4 floats: fewer, wider
 * accesses keep more bytes in flight, which is what a memory-bound pass needs), then a scalar tail. */
template <typename T, typename F>
__device__ __forceinline__ void range_for(const T* x, int64_t begin, int64_t end, int tid, int threads, F f) {
  const int N = pack16<T>::N;
  const int64_t mis = (int64_t)(((uintptr_t)(x + begin) & 15) / sizeof(T));
  int64_t vbegin = begin + (mis ? N - mis : 0);
  if (vbegin > end) vbegin = end;
  const int64_t vectors = (end - vbegin) / N;
  for (int64_t j = begin + tid; j < vbegin; j += threads) f(j, load(x, j));
  const pack16<T>* xv = (const pack16<T>*)(x + vbegin);
  for (int64_t v = tid; v < vectors; v += threads) {
    const pack16<T> p = xv[v];
#pragma unroll
    for (int i = 0; i < N; i++) f(vbegin + v * N + i, to_float(p.v[i]));
  }
  for (int64_t j = vbegin + vectors * N + tid; j < end; j += threads) f(j, load(x, j));
}

/* y[j] = f(j, x[j]) for j in [begin, end): like range_for, with 16-byte stores too when x and y
 * are equally aligned (always, for tensors from the allocator); scalar otherwise. */
template <typename T, typename F>
__device__ __forceinline__ void range_map(const T* x, T* y, int64_t begin, int64_t end, int tid, int threads, F f) {
  const int N = pack16<T>::N;
  if ((((uintptr_t)x ^ (uintptr_t)y) & 15) != 0) {
    for (int64_t j = begin + tid; j < end; j += threads) store(y, j, f(j, load(x, j)));
    return;
  }
  const int64_t mis = (int64_t)(((uintptr_t)(x + begin) & 15) / sizeof(T));
  int64_t vbegin = begin + (mis ? N - mis : 0);
  if (vbegin > end) vbegin = end;
  const int64_t vectors = (end - vbegin) / N;
  for (int64_t j = begin + tid; j < vbegin; j += threads) store(y, j, f(j, load(x, j)));
  const pack16<T>* xv = (const pack16<T>*)(x + vbegin);
  pack16<T>* yv = (pack16<T>*)(y + vbegin);
  for (int64_t v = tid; v < vectors; v += threads) {
    pack16<T> p = xv[v];
#pragma unroll
    for (int i = 0; i < N; i++) p.v[i] = from_float<T>(f(vbegin + v * N + i, to_float(p.v[i])));
    yv[v] = p;
  }
  for (int64_t j = vbegin + vectors * N + tid; j < end; j += threads) store(y, j, f(j, load(x, j)));
}

/* ---- reductions ---- */

__device__ __forceinline__ int64_t offset_of(int64_t linear, int n, const int64_t* dims, const int64_t* strides) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; d--) {
    off += linear % dims[d] * strides[d];
    linear /= dims[d];
  }
  return off;
}

template <int Kind>
struct reduce_traits;
template <>
struct reduce_traits<CUDA_REDUCE_SUM> {
  typedef sum_op op;
  static __device__ float prepare(float v) { return v; }
  static __device__ float finish(float acc, int64_t) { return acc; }
};
template <>
struct reduce_traits<CUDA_REDUCE_MEAN> {
  typedef sum_op op;
  static __device__ float prepare(float v) { return v; }
  static __device__ float finish(float acc, int64_t n) { return acc / (float)n; }
};
template <>
struct reduce_traits<CUDA_REDUCE_MAX> {
  typedef max_op op;
  static __device__ float prepare(float v) { return v; }
  static __device__ float finish(float acc, int64_t) { return acc; }
};
template <>
struct reduce_traits<CUDA_REDUCE_MIN> {
  typedef min_op op;
  static __device__ float prepare(float v) { return v; }
  static __device__ float finish(float acc, int64_t) { return acc; }
};
template <>
struct reduce_traits<CUDA_REDUCE_L2> {
  typedef sum_op op;
  static __device__ float prepare(float v) { return v * v; }
  static __device__ float finish(float acc, int64_t) { return sqrtf(acc); }
};
template <>
struct reduce_traits<CUDA_REDUCE_L1> {
  typedef sum_op op;
  static __device__ float prepare(float v) { return fabsf(v); }
  static __device__ float finish(float acc, int64_t) { return acc; }
};
template <>
struct reduce_traits<CUDA_REDUCE_SUM_SQUARE> {
  typedef sum_op op;
  static __device__ float prepare(float v) { return v * v; }
  static __device__ float finish(float acc, int64_t) { return acc; }
};

template <>
struct reduce_traits<CUDA_REDUCE_PROD> {
  typedef prod_op op;
  static __device__ float prepare(float v) { return v; }
  static __device__ float finish(float acc, int64_t) { return acc; }
};

/* ---- short rows: one warp per row ---- */

/* Rows of up to 32 * PerLane elements get one warp each, 8 rows per block: a block per row would
 * leave most of its 256 threads idle on a 192-element row and pay block-wide barriers for it. The
 * row is read once into registers (lane l holds elements l, l + 32, ...; neighbouring lanes read
 * neighbouring elements) and every later pass works from there. */
const int kWarpsPerBlock = kBlockSize / 32;

/* the scale/bias index of element j of a row whose first index is base (see cuda_norm_args),
 * without a division in the two common layouts */
__device__ __forceinline__ int64_t affine_index(const cuda_norm_args& a, int64_t base, int64_t j) {
  if (a.affine_wrap) return base + j / a.affine_div % a.affine_wrap; /* a broadcast RMSNormalization scale */
  if (a.affine_div == 1) return base + j;    /* LayerNormalization: per element */
  if (a.affine_div >= a.count) return base;  /* InstanceNormalization: one per row */
  return base + j / a.affine_div;
}

/* A row's statistics to LayerNormalization's optional outputs, where the node has them. */
template <typename T>
__device__ __forceinline__ void store_stats(const cuda_norm_args& a, int64_t row, float mean, float inv_std) {
  if (a.mean) {
    if (a.stats_f32)
      static_cast<float*>(a.mean)[row] = mean;
    else
      store(static_cast<T*>(a.mean), row, mean);
  }
  if (a.inv_std) {
    if (a.stats_f32)
      static_cast<float*>(a.inv_std)[row] = inv_std;
    else
      store(static_cast<T*>(a.inv_std), row, inv_std);
  }
}

template <typename T, int PerLane>
__global__ void norm_warp_kernel(const T* x, const T* scale, const T* bias, T* y, cuda_norm_args a) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = blockIdx.x * (int64_t)kWarpsPerBlock + (threadIdx.x >> 5); row < a.rows;
       row += (int64_t)gridDim.x * kWarpsPerBlock) {
    const T* in = x + row * a.count;
    T* out = y + row * a.count;
    float v[PerLane];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t j = lane + 32 * i;
      v[i] = j < a.count ? load(in, j) : 0.0f;
      s += v[i];
    }
    /* RMSNormalization: the mean square, from 0 */
    const float mean = a.rms ? 0.0f : warp_reduce(s, sum_op()) / (float)a.count;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const float d = lane + 32 * i < a.count ? v[i] - mean : 0.0f;
      q += d * d;
    }
    const float inv_std = rsqrtf(warp_reduce(q, sum_op()) / (float)a.count + a.epsilon);
    if (lane == 0) store_stats<T>(a, row, mean, inv_std);
    const int64_t affine_base = row % a.affine_mod * a.affine_mul;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t j = lane + 32 * i;
      if (j < a.count) {
        const int64_t k = affine_index(a, affine_base, j);
        float r = (v[i] - mean) * inv_std * load(scale, k);
        if (bias) r += load(bias, k);
        store(out, j, r);
      }
    }
  }
}

template <typename T, int PerLane>
__global__ void softmax_warp_kernel(const T* x, T* y, cuda_softmax_args a) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = blockIdx.x * (int64_t)kWarpsPerBlock + (threadIdx.x >> 5); row < a.outer;
       row += (int64_t)gridDim.x * kWarpsPerBlock) {
    const T* in = x + row * a.n;
    T* out = y + row * a.n;
    float v[PerLane];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t k = lane + 32 * i;
      v[i] = k < a.n ? load(in, k) : -INFINITY;
      m = max_op()(m, v[i]);
    }
    m = warp_reduce(m, max_op());
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PerLane; i++)
      if (lane + 32 * i < a.n) s += expf(v[i] - m);
    s = warp_reduce(s, sum_op());
    const float log_s = logf(s), inv_s = 1.0f / s;
#pragma unroll
    for (int i = 0; i < PerLane; i++) {
      const int64_t k = lane + 32 * i;
      if (k < a.n) store(out, k, a.log ? v[i] - m - log_s : expf(v[i] - m) * inv_s);
    }
  }
}

/* Contiguous reductions of up to 1024 elements per output: one warp per output, single pass. */
template <typename T, int Kind>
__global__ void reduce_warp_kernel(const T* x, T* y, cuda_reduce_args a) {
  typedef reduce_traits<Kind> traits;
  typename traits::op op;
  const int lane = threadIdx.x & 31;
  for (int64_t o = blockIdx.x * (int64_t)kWarpsPerBlock + (threadIdx.x >> 5); o < a.out_count;
       o += (int64_t)gridDim.x * kWarpsPerBlock) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float acc = op.identity();
    for (int64_t r = lane; r < a.reduce_count; r += 32) acc = op(acc, traits::prepare(load(x, base + r)));
    acc = warp_reduce(acc, op);
    if (lane == 0) store(y, o, traits::finish(acc, a.reduce_count));
  }
}

/* ---- few long rows: split across blocks (see cuda_row_split) ---- */

/* Block (chunk, row) reduces its chunk into scratch[row * chunks + chunk]. */
template <typename T, int Kind>
__global__ void reduce_partial_kernel(const T* x, cuda_reduce_args a) {
  typedef reduce_traits<Kind> traits;
  typename traits::op op;
  float* partial = (float*)a.scratch;
  for (int64_t o = blockIdx.y; o < a.out_count; o += gridDim.y) {
    const T* row = x + offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    const int64_t begin = blockIdx.x * a.chunk_len;
    const int64_t end = min(begin + a.chunk_len, a.reduce_count);
    float acc = op.identity();
    range_for(row, begin, end, threadIdx.x, blockDim.x, [&](int64_t, float v) { acc = op(acc, traits::prepare(v)); });
    acc = block_reduce(acc, op);
    if (threadIdx.x == 0) partial[o * a.chunks + blockIdx.x] = acc;
  }
}

/* One warp per output combines its chunks' partial results. */
template <typename T, int Kind>
__global__ void reduce_finish_kernel(T* y, cuda_reduce_args a) {
  typedef reduce_traits<Kind> traits;
  typename traits::op op;
  const float* partial = (const float*)a.scratch;
  const int lane = threadIdx.x & 31;
  for (int64_t o = blockIdx.x * (int64_t)kWarpsPerBlock + (threadIdx.x >> 5); o < a.out_count;
       o += (int64_t)gridDim.x * kWarpsPerBlock) {
    float acc = op.identity();
    for (int64_t c = lane; c < a.chunks; c += 32) acc = op(acc, partial[o * a.chunks + c]);
    acc = warp_reduce(acc, op);
    if (lane == 0) store(y, o, traits::finish(acc, a.reduce_count));
  }
}

/* Block (chunk, row) writes its chunk's mean and sum of squared deviations from that mean (two
 * passes over the chunk; the second reads it from the cache) to scratch. */
template <typename T>
__global__ void norm_stats_kernel(const T* x, cuda_norm_args a) {
  float2* stats = (float2*)a.scratch;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    const T* in = x + row * a.count;
    const int64_t begin = blockIdx.x * a.chunk_len;
    const int64_t end = min(begin + a.chunk_len, a.count);
    float s = 0.0f;
    if (!a.rms) range_for(in, begin, end, threadIdx.x, blockDim.x, [&](int64_t, float v) { s += v; });
    /* RMSNormalization: deviations from 0, so the combined "variance" is the mean square */
    const float mean = a.rms ? 0.0f : block_reduce(s, sum_op()) / (float)(end - begin);
    float q = 0.0f;
    range_for(in, begin, end, threadIdx.x, blockDim.x, [&](int64_t, float v) {
      const float d = v - mean;
      q += d * d;
    });
    q = block_reduce(q, sum_op());
    if (threadIdx.x == 0) stats[row * a.chunks + blockIdx.x] = make_float2(mean, q);
  }
}

/* The row's mean and 1/sqrt(variance + epsilon) from its chunks' statistics, by the parallel
 * (Chan et al.) combination: mean = sum(n_c mean_c) / n, M2 = sum(M2_c + n_c (mean_c - mean)^2),
 * as stable as the two-pass form within each chunk. Every thread of the block gets the result. */
__device__ float2 row_stats(const cuda_norm_args& a, int64_t row) {
  const float2* stats = (const float2*)a.scratch + row * a.chunks;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < a.chunks; c += blockDim.x) {
    const float n_c = (float)(min((c + 1) * a.chunk_len, a.count) - c * a.chunk_len);
    s += n_c * stats[c].x;
  }
  const float mean = block_reduce(s, sum_op()) / (float)a.count;
  float q = 0.0f;
  for (int64_t c = threadIdx.x; c < a.chunks; c += blockDim.x) {
    const float n_c = (float)(min((c + 1) * a.chunk_len, a.count) - c * a.chunk_len);
    const float d = stats[c].x - mean;
    q += stats[c].y + n_c * d * d;
  }
  const float var = block_reduce(q, sum_op()) / (float)a.count;
  return make_float2(mean, rsqrtf(var + a.epsilon));
}

/* Block (chunk, row) normalizes its chunk. */
template <typename T>
__global__ void norm_apply_kernel(const T* x, const T* scale, const T* bias, T* y, cuda_norm_args a) {
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    const float2 st = row_stats(a, row);
    if (blockIdx.x == 0 && threadIdx.x == 0) store_stats<T>(a, row, st.x, st.y);
    const int64_t begin = blockIdx.x * a.chunk_len;
    const int64_t end = min(begin + a.chunk_len, a.count);
    const int64_t affine_base = row % a.affine_mod * a.affine_mul;
    range_map(x + row * a.count, y + row * a.count, begin, end, threadIdx.x, blockDim.x, [&](int64_t j, float v) {
      const int64_t k = affine_index(a, affine_base, j);
      float r = (v - st.x) * st.y * load(scale, k);
      if (bias) r += load(bias, k);
      return r;
    });
  }
}

/* InstanceNormalization's fused epilogue (cuda_norm_epilogue_args), after norm_stats_kernel: a
 * grid-stride pass over each padded output plane, every element reading its mirrored source. The
 * normalized value and the sum are rounded to T where the separate nodes stored them. */
template <typename T>
__device__ __forceinline__ float rounded(float v) {
  T t;
  store(&t, 0, v);
  return load(&t, 0);
}

template <typename T>
__global__ void norm_epilogue_kernel(const T* x, const T* scale, const T* bias, T* y, cuda_norm_epilogue_args e) {
  const cuda_norm_args& a = e.norm;
  const T* addend = static_cast<const T*>(e.addend);
  const int64_t plane = e.out_h * e.out_w;
  for (int64_t row = blockIdx.y; row < a.rows; row += gridDim.y) {
    const float2 st = row_stats(a, row);
    const int64_t k = row % a.affine_mod * a.affine_mul;
    const float sc = load(scale, k), bi = bias ? load(bias, k) : 0.0f;
    const T* in = x + row * a.count;
    T* out = y + row * plane;
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < plane; j += (int64_t)gridDim.x * blockDim.x) {
      int64_t iy = j / e.out_w - e.pad_top, ix = j % e.out_w - e.pad_left;
      iy = iy < 0 ? -iy : iy >= e.h ? 2 * (e.h - 1) - iy : iy;
      ix = ix < 0 ? -ix : ix >= e.w ? 2 * (e.w - 1) - ix : ix;
      const int64_t src = iy * e.w + ix;
      float r = (load(in, src) - st.x) * st.y * sc;
      if (bias) r += bi;
      r = rounded<T>(r);
      if (addend) r = rounded<T>(r + load(addend + row * a.count, src));
      if (e.relu && r < 0.0f) r = 0.0f;
      store(out, j, r);
    }
  }
}

template <typename T>
void launch_norm_epilogue(const void* x, const void* scale, const void* bias, void* y, const cuda_norm_epilogue_args& e,
                          cudaStream_t stream) {
  const cuda_norm_args& a = e.norm;
  if (a.rows <= 0 || a.count <= 0) return;
  const T* in = static_cast<const T*>(x);
  const dim3 grid((unsigned)a.chunks, (unsigned)(a.rows < 65535 ? a.rows : 65535));
  norm_stats_kernel<T><<<grid, kBlockSize, 0, stream>>>(in, a);
  norm_epilogue_kernel<T><<<grid, kBlockSize, 0, stream>>>(in, static_cast<const T*>(scale), static_cast<const T*>(bias),
                                                           static_cast<T*>(y), e);
}

/* One block per output element. */
template <typename T, int Kind>
__global__ void reduce_rows_kernel(const T* x, T* y, cuda_reduce_args a) {
  typedef reduce_traits<Kind> traits;
  typename traits::op op;
  for (int64_t o = blockIdx.x; o < a.out_count; o += gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float acc = op.identity();
    if (a.n_red == 1 && a.red_strides[0] == 1) { /* contiguous: 16-byte loads */
      range_for(x + base, 0, a.reduce_count, threadIdx.x, blockDim.x,
                [&](int64_t, float v) { acc = op(acc, traits::prepare(v)); });
    } else if (a.n_red == 1) {
      const int64_t stride = a.red_strides[0];
      for (int64_t r = threadIdx.x; r < a.reduce_count; r += blockDim.x)
        acc = op(acc, traits::prepare(load(x, base + r * stride)));
    } else {
      for (int64_t r = threadIdx.x; r < a.reduce_count; r += blockDim.x)
        acc = op(acc, traits::prepare(load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides))));
    }
    acc = block_reduce(acc, op);
    if (threadIdx.x == 0) store(y, o, traits::finish(acc, a.reduce_count));
  }
}

/* One thread per output element. */
template <typename T, int Kind>
__global__ void reduce_columns_kernel(const T* x, T* y, cuda_reduce_args a) {
  typedef reduce_traits<Kind> traits;
  typename traits::op op;
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < a.out_count; o += (int64_t)blockDim.x * gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float acc = op.identity();
    for (int64_t r = 0; r < a.reduce_count; r++)
      acc = op(acc, traits::prepare(load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides))));
    store(y, o, traits::finish(acc, a.reduce_count));
  }
}

template <typename T, int Kind>
void launch_reduce(const T* x, T* y, const cuda_reduce_args& a, cudaStream_t stream) {
  /* A block per output when its elements are contiguous and many, or when outputs are too few to
   * keep the GPU busy one thread each; otherwise neighbouring threads take neighbouring outputs. */
  const bool contiguous = a.n_red >= 1 && a.red_strides[a.n_red - 1] == 1;
  const bool flat = a.n_red == 1 && a.red_strides[0] == 1;
  if (flat && a.chunks > 1 && a.scratch) {
    /* few long rows: chunks of each row in parallel, then one warp per output combines them */
    const dim3 grid((unsigned)a.chunks, (unsigned)(a.out_count < 65535 ? a.out_count : 65535));
    reduce_partial_kernel<T, Kind><<<grid, kBlockSize, 0, stream>>>(x, a);
    reduce_finish_kernel<T, Kind><<<grid_for(a.out_count, kWarpsPerBlock), kBlockSize, 0, stream>>>(y, a);
  } else if (flat && a.reduce_count >= 32 && a.reduce_count <= 1024 && a.out_count >= 1024) {
    reduce_warp_kernel<T, Kind><<<grid_for(a.out_count, kWarpsPerBlock), kBlockSize, 0, stream>>>(x, y, a);
  } else if ((contiguous && a.reduce_count >= 32) || a.out_count < 2048)
    reduce_rows_kernel<T, Kind><<<grid_for(a.out_count, 1), kBlockSize, 0, stream>>>(x, y, a);
  else
    reduce_columns_kernel<T, Kind><<<grid_for(a.out_count, kBlockSize), kBlockSize, 0, stream>>>(x, y, a);
}

/* ---- ReduceLogSumExp: the maximum, then the sum of exponentials shifted by it ---- */

/* The shift: the maximum where it is finite, else 0 (all -inf gives -inf, a +inf gives +inf). */
__device__ __forceinline__ float lse_shift(float m) { return isfinite(m) ? m : 0.0f; }

/* One block per output, two passes over its elements (the second from the caches). */
template <typename T>
__global__ void lse_rows_kernel(const T* x, T* y, cuda_reduce_args a) {
  for (int64_t o = blockIdx.x; o < a.out_count; o += gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float m = -INFINITY;
    for (int64_t r = threadIdx.x; r < a.reduce_count; r += blockDim.x)
      m = fmaxf(m, load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides)));
    const float shift = lse_shift(block_reduce(m, max_op()));
    float s = 0.0f;
    for (int64_t r = threadIdx.x; r < a.reduce_count; r += blockDim.x)
      s += expf(load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides)) - shift);
    s = block_reduce(s, sum_op());
    if (threadIdx.x == 0) store(y, o, shift + logf(s));
  }
}

/* One thread per output (neighbouring threads read neighbouring elements of an outer reduction). */
template <typename T>
__global__ void lse_columns_kernel(const T* x, T* y, cuda_reduce_args a) {
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < a.out_count; o += (int64_t)blockDim.x * gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float m = -INFINITY, s = 0.0f;
    for (int64_t r = 0; r < a.reduce_count; r++)
      m = fmaxf(m, load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides)));
    const float shift = lse_shift(m);
    for (int64_t r = 0; r < a.reduce_count; r++)
      s += expf(load(x, base + offset_of(r, a.n_red, a.red_dims, a.red_strides)) - shift);
    store(y, o, shift + logf(s));
  }
}

template <typename T>
void launch_lse(const T* x, T* y, const cuda_reduce_args& a, cudaStream_t stream) {
  const bool contiguous = a.n_red >= 1 && a.red_strides[a.n_red - 1] == 1;
  if ((contiguous && a.reduce_count >= 32) || a.out_count < 2048)
    lse_rows_kernel<T><<<grid_for(a.out_count, 1), kBlockSize, 0, stream>>>(x, y, a);
  else
    lse_columns_kernel<T><<<grid_for(a.out_count, kBlockSize), kBlockSize, 0, stream>>>(x, y, a);
}

template <typename T>
void dispatch_reduce(const void* x, void* y, const cuda_reduce_args& a, cudaStream_t stream) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  switch (a.kind) {
    case CUDA_REDUCE_SUM: launch_reduce<T, CUDA_REDUCE_SUM>(in, out, a, stream); break;
    case CUDA_REDUCE_MEAN: launch_reduce<T, CUDA_REDUCE_MEAN>(in, out, a, stream); break;
    case CUDA_REDUCE_MAX: launch_reduce<T, CUDA_REDUCE_MAX>(in, out, a, stream); break;
    case CUDA_REDUCE_MIN: launch_reduce<T, CUDA_REDUCE_MIN>(in, out, a, stream); break;
    case CUDA_REDUCE_L2: launch_reduce<T, CUDA_REDUCE_L2>(in, out, a, stream); break;
    case CUDA_REDUCE_L1: launch_reduce<T, CUDA_REDUCE_L1>(in, out, a, stream); break;
    case CUDA_REDUCE_SUM_SQUARE: launch_reduce<T, CUDA_REDUCE_SUM_SQUARE>(in, out, a, stream); break;
    case CUDA_REDUCE_PROD: launch_reduce<T, CUDA_REDUCE_PROD>(in, out, a, stream); break;
    case CUDA_REDUCE_LOG_SUM_EXP: launch_lse<T>(in, out, a, stream); break;
    default: break;
  }
}

/* ---- ArgMax, ArgMin ---- */

/* One thread per output walks its reduced elements in order, exactly as the reference does: the
 * same comparisons in the same order give the same index, ties and NaN included (values compare
 * in float, which holds every float16 and bfloat16 value exactly). Neighbouring threads take
 * neighbouring outputs, which read neighbouring elements unless the axis is the innermost. */
template <typename T, bool IsMax>
__global__ void arg_kernel(const T* x, int64_t* y, cuda_reduce_args a) {
  for (int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; o < a.out_count; o += (int64_t)blockDim.x * gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    float best = load(x, base);
    int64_t best_i = 0;
    for (int64_t r = 1; r < a.reduce_count; r++) {
      /* one axis is reduced: a single (dim, stride) pair, which needs no division */
      const int64_t at = base + (a.n_red == 1 ? r * a.red_strides[0] : offset_of(r, a.n_red, a.red_dims, a.red_strides));
      const float v = load(x, at);
      /* comparisons with NaN are false: a NaN is never better, nor is anything better than a NaN */
      const bool better = IsMax ? (a.select_last ? v >= best : v > best) : (a.select_last ? v <= best : v < best);
      if (better) {
        best = v;
        best_i = r;
      }
    }
    y[o] = best_i;
  }
}

template <typename T>
void launch_arg(const void* x, int64_t* y, const cuda_reduce_args& a, cudaStream_t stream) {
  const T* in = static_cast<const T*>(x);
  const unsigned int grid = grid_for(a.out_count, kBlockSize);
  if (a.kind == CUDA_REDUCE_ARGMAX)
    arg_kernel<T, true><<<grid, kBlockSize, 0, stream>>>(in, y, a);
  else
    arg_kernel<T, false><<<grid, kBlockSize, 0, stream>>>(in, y, a);
}

/* ---- pooling ---- */

/* One thread per output element; taps in the padding are skipped. AveragePool divides by the taps
 * inside the input, or with count_include_pad by the window clipped to the padded input. */
template <typename T>
__global__ void pool_kernel(const T* x, T* y, int64_t count, cuda_pool_args a) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    /* channels-last: the channel is the fastest index, so neighbouring threads read neighbouring
     * elements (coalesced); NCHW: channels is 1 and the volume index takes N x C */
    const int64_t c = i % a.channels;
    int64_t start[3], rest = i / a.channels;
    for (int j = 2; j >= 0; j--) {
      start[j] = rest % a.out_size[j] * a.strides[j] - a.pad_begin[j];
      rest /= a.out_size[j];
    }
    const int64_t step = a.channels;
    const T* src = x + rest * a.in_size[0] * a.in_size[1] * a.in_size[2] * step + c;
    float acc = a.kind == 0 ? -INFINITY : 0.0f;
    int64_t taps = 0;
    for (int64_t kd = 0; kd < a.kernel[0]; kd++) {
      const int64_t id = start[0] + kd * a.dilations[0];
      if (id < 0 || id >= a.in_size[0]) continue;
      for (int64_t kh = 0; kh < a.kernel[1]; kh++) {
        const int64_t ih = start[1] + kh * a.dilations[1];
        if (ih < 0 || ih >= a.in_size[1]) continue;
        for (int64_t kw = 0; kw < a.kernel[2]; kw++) {
          const int64_t iw = start[2] + kw * a.dilations[2];
          if (iw < 0 || iw >= a.in_size[2]) continue;
          const float v = load(src, ((id * a.in_size[1] + ih) * a.in_size[2] + iw) * step);
          if (a.kind == 0)
            acc = max_op()(acc, v);
          else
            acc += v;
          taps++;
        }
      }
    }
    if (a.kind != 0) {
      if (a.count_include_pad) {
        taps = 1;
        for (int j = 0; j < 3; j++) taps *= min(start[j] + a.kernel[j], a.in_size[j] + a.pad_end[j]) - start[j];
      }
      acc = taps > 0 ? acc / (float)taps : NAN;
    }
    store(y, i, acc);
  }
}

/* 2-D pooling, channels-last or NCHW (each of the N x C planes an image of one channel): one thread
 * per output pixel and run of V channels (V of them in one 16-byte load per tap where C allows),
 * index arithmetic in I (32-bit where the tensors allow: the 64-bit divisions and the depth loop of
 * the general kernel above cost more than its loads). Taps, the NaN rule and the divisor are the
 * general kernel's. */
template <typename T, int V, typename I>
__global__ void pool2d_kernel(const T* x, T* y, I count, cuda_pool_args a) {
  const I c = (I)a.channels, runs = c / V, h = (I)a.in_size[1], w = (I)a.in_size[2];
  const I oh = (I)a.out_size[1], ow = (I)a.out_size[2];
  const I kh = (I)a.kernel[1], kw = (I)a.kernel[2], sh = (I)a.strides[1], sw = (I)a.strides[2];
  const I dh = (I)a.dilations[1], dw = (I)a.dilations[2], ph = (I)a.pad_begin[1], pw = (I)a.pad_begin[2];
  for (I e = blockIdx.x * (I)blockDim.x + threadIdx.x; e < count; e += (I)blockDim.x * gridDim.x) {
    const I run = e % runs;
    I rest = e / runs;
    const I ox = rest % ow;
    rest /= ow;
    const I oy = rest % oh, b = rest / oh;
    const I ys = oy * sh - ph, xs = ox * sw - pw;
    float acc[V];
    for (int j = 0; j < V; j++) acc[j] = a.kind == 0 ? -INFINITY : 0.0f;
    I taps = 0;
    for (I ky = 0; ky < kh; ky++) {
      const I iy = ys + ky * dh;
      if (iy < 0 || iy >= h) continue;
      for (I kx = 0; kx < kw; kx++) {
        const I ix = xs + kx * dw;
        if (ix < 0 || ix >= w) continue;
        const elems<T, V> p = *reinterpret_cast<const elems<T, V>*>(x + ((b * h + iy) * w + ix) * c + run * V);
        for (int j = 0; j < V; j++) {
          const float v = load(p.e, j);
          acc[j] = a.kind == 0 ? max_op()(acc[j], v) : acc[j] + v;
        }
        taps++;
      }
    }
    if (a.kind != 0) {
      if (a.count_include_pad)
        taps = (min(ys + kh, h + (I)a.pad_end[1]) - ys) * (min(xs + kw, w + (I)a.pad_end[2]) - xs);
      for (int j = 0; j < V; j++) acc[j] = taps > 0 ? acc[j] / (float)taps : NAN;
    }
    elems<T, V> out;
    for (int j = 0; j < V; j++) store(out.e, j, acc[j]);
    *reinterpret_cast<elems<T, V>*>(y + e * V) = out;
  }
}

template <typename T, int V>
void launch_pool2d_of(const T* x, T* y, const cuda_pool_args& a, int64_t count, cudaStream_t stream) {
  if (count < INT32_MAX && a.volumes * a.in_size[1] * a.in_size[2] * a.channels < INT32_MAX)
    pool2d_kernel<T, V, int32_t><<<grid_for(count, kBlockSize), kBlockSize, 0, stream>>>(x, y, (int32_t)count, a);
  else
    pool2d_kernel<T, V, int64_t><<<grid_for(count, kBlockSize), kBlockSize, 0, stream>>>(x, y, count, a);
}

/* ---- softmax ---- */

/* inner == 1: one block per row of n contiguous elements. Three passes over the row (maximum, sum
 * of exponentials, output); the second and third read what the first brought into the caches. */
template <typename T>
__global__ void softmax_rows_kernel(const T* x, T* y, cuda_softmax_args a) {
  for (int64_t row = blockIdx.x; row < a.outer; row += gridDim.x) {
    const T* in = x + row * a.n;
    T* out = y + row * a.n;
    float m = -INFINITY;
    for (int64_t k = threadIdx.x; k < a.n; k += blockDim.x) m = max_op()(m, load(in, k));
    m = block_reduce(m, max_op());
    float s = 0.0f;
    for (int64_t k = threadIdx.x; k < a.n; k += blockDim.x) s += expf(load(in, k) - m);
    s = block_reduce(s, sum_op());
    const float log_s = logf(s), inv_s = 1.0f / s;
    for (int64_t k = threadIdx.x; k < a.n; k += blockDim.x) {
      const float v = load(in, k) - m;
      store(out, k, a.log ? v - log_s : expf(v) * inv_s);
    }
  }
}

/* inner > 1: one thread per (outer, inner) column, which neighbouring threads read side by side. */
template <typename T>
__global__ void softmax_columns_kernel(const T* x, T* y, cuda_softmax_args a) {
  const int64_t columns = a.outer * a.inner;
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < columns; c += (int64_t)blockDim.x * gridDim.x) {
    const int64_t base = c / a.inner * a.n * a.inner + c % a.inner;
    float m = -INFINITY, s = 0.0f;
    for (int64_t k = 0; k < a.n; k++) m = max_op()(m, load(x, base + k * a.inner));
    for (int64_t k = 0; k < a.n; k++) s += expf(load(x, base + k * a.inner) - m);
    const float log_s = logf(s), inv_s = 1.0f / s;
    for (int64_t k = 0; k < a.n; k++) {
      const float v = load(x, base + k * a.inner) - m;
      store(y, base + k * a.inner, a.log ? v - log_s : expf(v) * inv_s);
    }
  }
}

/* ---- LpNormalization ---- */

/* inner == 1: one block per row, the norm combined across the block, then the scaled row. */
template <typename T>
__global__ void lp_rows_kernel(const T* x, T* y, cuda_softmax_args a) {
  for (int64_t row = blockIdx.x; row < a.outer; row += gridDim.x) {
    const T* in = x + row * a.n;
    float s = 0.0f;
    range_for(in, 0, a.n, threadIdx.x, blockDim.x, [&](int64_t, float v) { s += a.lp == 1 ? fabsf(v) : v * v; });
    s = block_reduce(s, sum_op());
    const float norm = a.lp == 1 ? s : sqrtf(s);
    range_map(in, y + row * a.n, 0, a.n, threadIdx.x, blockDim.x,
              [&](int64_t, float v) { return norm != 0.0f ? v / norm : 0.0f; });
  }
}

/* inner > 1: one thread per (outer, inner) column, which neighbouring threads read side by side. */
template <typename T>
__global__ void lp_columns_kernel(const T* x, T* y, cuda_softmax_args a) {
  const int64_t columns = a.outer * a.inner;
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < columns; c += (int64_t)blockDim.x * gridDim.x) {
    const int64_t base = c / a.inner * a.n * a.inner + c % a.inner;
    float s = 0.0f;
    for (int64_t k = 0; k < a.n; k++) {
      const float v = load(x, base + k * a.inner);
      s += a.lp == 1 ? fabsf(v) : v * v;
    }
    const float norm = a.lp == 1 ? s : sqrtf(s);
    for (int64_t k = 0; k < a.n; k++)
      store(y, base + k * a.inner, norm != 0.0f ? load(x, base + k * a.inner) / norm : 0.0f);
  }
}

/* ---- LRN ---- */

/* One thread per element; neighbouring threads take neighbouring spatial positions of a channel,
 * so each of the window's loads is coalesced. */
template <typename T>
__global__ void lrn_kernel(const T* x, T* y, cuda_lrn_args a) {
  const int64_t total = a.n * a.c * a.spatial;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)blockDim.x * gridDim.x) {
    const int64_t s = i % a.spatial, c = i / a.spatial % a.c, n = i / (a.spatial * a.c);
    const int64_t lo = max(c - a.pre, (int64_t)0), hi = min(c - a.pre + a.size - 1, a.c - 1);
    const T* plane = x + n * a.c * a.spatial + s;
    float sum = 0.0f;
    for (int64_t k = lo; k <= hi; k++) {
      const float v = load(plane, k * a.spatial);
      sum += v * v;
    }
    store(y, i, load(x, i) * powf(a.bias + a.alpha_over_size * sum, -a.beta));
  }
}

/* ---- normalizations ---- */



/* One block per row: the mean, then the mean squared deviation from it (two passes, which stays
 * accurate where E[x^2] - E[x]^2 cancels), then the normalized, scaled and shifted output. */
template <typename T>
__global__ void norm_kernel(const T* x, const T* scale, const T* bias, T* y, cuda_norm_args a) {
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const T* in = x + row * a.count;
    float s = 0.0f;
    if (!a.rms) range_for(in, 0, a.count, threadIdx.x, blockDim.x, [&](int64_t, float v) { s += v; });
    const float mean = a.rms ? 0.0f : block_reduce(s, sum_op()) / (float)a.count; /* RMSNormalization: 0 */
    float q = 0.0f;
    range_for(in, 0, a.count, threadIdx.x, blockDim.x, [&](int64_t, float v) {
      const float d = v - mean;
      q += d * d;
    });
    const float var = block_reduce(q, sum_op()) / (float)a.count;
    const float inv_std = rsqrtf(var + a.epsilon);
    if (threadIdx.x == 0) store_stats<T>(a, row, mean, inv_std);
    const int64_t affine_base = row % a.affine_mod * a.affine_mul;
    range_map(in, y + row * a.count, 0, a.count, threadIdx.x, blockDim.x, [&](int64_t j, float v) {
      const int64_t k = affine_index(a, affine_base, j);
      float r = (v - mean) * inv_std * load(scale, k);
      if (bias) r += load(bias, k);
      return r;
    });
  }
}

/* ---- dispatch over element types ---- */

template <typename T>
void launch_pool(const void* x, void* y, const cuda_pool_args& a, cudaStream_t stream) {
  const int64_t count = a.volumes * a.out_size[0] * a.out_size[1] * a.out_size[2] * a.channels;
  if (count <= 0) return;
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  if (a.in_size[0] == 1) { /* 2-D: channels-last, or NCHW as images of one channel (a.channels 1) */
    const int v = 16 / sizeof(T);
    if (a.channels % v == 0 && ((uintptr_t)x | (uintptr_t)y) % 16 == 0)
      launch_pool2d_of<T, 16 / sizeof(T)>(in, out, a, count / v, stream);
    else
      launch_pool2d_of<T, 1>(in, out, a, count, stream);
    return;
  }
  pool_kernel<T><<<grid_for(count, kBlockSize), kBlockSize, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                        count, a);
}

template <typename T>
void launch_softmax(const void* x, void* y, const cuda_softmax_args& a, cudaStream_t stream) {
  if (a.outer <= 0 || a.n <= 0 || a.inner <= 0) return;
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  if (a.lp && a.inner == 1)
    lp_rows_kernel<T><<<grid_for(a.outer, 1), kBlockSize, 0, stream>>>(in, out, a);
  else if (a.lp)
    lp_columns_kernel<T><<<grid_for(a.outer * a.inner, kBlockSize), kBlockSize, 0, stream>>>(in, out, a);
  else if (a.inner == 1 && a.n <= 256)
    softmax_warp_kernel<T, 8><<<grid_for(a.outer, kWarpsPerBlock), kBlockSize, 0, stream>>>(in, out, a);
  else if (a.inner == 1 && a.n <= 1024)
    softmax_warp_kernel<T, 32><<<grid_for(a.outer, kWarpsPerBlock), kBlockSize, 0, stream>>>(in, out, a);
  else if (a.inner == 1)
    softmax_rows_kernel<T><<<grid_for(a.outer, 1), kBlockSize, 0, stream>>>(static_cast<const T*>(x),
                                                                            static_cast<T*>(y), a);
  else
    softmax_columns_kernel<T><<<grid_for(a.outer * a.inner, kBlockSize), kBlockSize, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), a);
}

template <typename T>
void launch_norm(const void* x, const void* scale, const void* bias, void* y, const cuda_norm_args& a,
                 cudaStream_t stream) {
  if (a.rows <= 0 || a.count <= 0) return;
  const T* in = static_cast<const T*>(x);
  const T *sc = static_cast<const T*>(scale), *bi = static_cast<const T*>(bias);
  T* out = static_cast<T*>(y);
  if (a.chunks > 1 && a.scratch) {
    /* few long rows (InstanceNorm over large planes): chunk statistics, then the normalizing pass */
    const dim3 grid((unsigned)a.chunks, (unsigned)(a.rows < 65535 ? a.rows : 65535));
    norm_stats_kernel<T><<<grid, kBlockSize, 0, stream>>>(in, a);
    norm_apply_kernel<T><<<grid, kBlockSize, 0, stream>>>(in, sc, bi, out, a);
  } else if (a.count <= 256) {
    norm_warp_kernel<T, 8><<<grid_for(a.rows, kWarpsPerBlock), kBlockSize, 0, stream>>>(in, sc, bi, out, a);
  } else if (a.count <= 1024) {
    norm_warp_kernel<T, 32><<<grid_for(a.rows, kWarpsPerBlock), kBlockSize, 0, stream>>>(in, sc, bi, out, a);
  } else {
    norm_kernel<T><<<grid_for(a.rows, 1), kBlockSize, 0, stream>>>(in, sc, bi, out, a);
  }
}

template <typename T, int Kind>
cudaError_t preload_reduce_kind() {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, reduce_rows_kernel<T, Kind>);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, reduce_warp_kernel<T, Kind>);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, reduce_partial_kernel<T, Kind>);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&attr, reduce_finish_kernel<T, Kind>);
  return e != cudaSuccess ? e : cudaFuncGetAttributes(&attr, reduce_columns_kernel<T, Kind>);
}

template <typename T>
cudaError_t preload_type() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_SUM>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_MEAN>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_MAX>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_MIN>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_L2>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_L1>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_SUM_SQUARE>()) != cudaSuccess) return e;
  if ((e = preload_reduce_kind<T, CUDA_REDUCE_PROD>()) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, lse_rows_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, lse_columns_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, arg_kernel<T, true>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, arg_kernel<T, false>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, pool_kernel<T>)) != cudaSuccess) return e;
  const void* pools[] = {(const void*)pool2d_kernel<T, 1, int32_t>, (const void*)pool2d_kernel<T, 1, int64_t>,
                         (const void*)pool2d_kernel<T, 16 / sizeof(T), int32_t>,
                         (const void*)pool2d_kernel<T, 16 / sizeof(T), int64_t>};
  for (const void* k : pools)
    if ((e = cudaFuncGetAttributes(&attr, k)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, softmax_rows_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, softmax_columns_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, softmax_warp_kernel<T, 8>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, softmax_warp_kernel<T, 32>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, lp_rows_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, lrn_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, lp_columns_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, norm_warp_kernel<T, 8>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, norm_warp_kernel<T, 32>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, norm_stats_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, norm_apply_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, norm_epilogue_kernel<T>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, norm_kernel<T>);
}

}  // namespace

/* Integer Sum/Max/Min/Prod (int32/int64), exact: sums and products wrap as two's complement (int32
 * keeps the low 32 bits), an empty Min/Max is the type's largest/smallest value, as the reference
 * (ref_reduce.c) computes them. One block per output, its threads striding over the reduced
 * elements, combined in shared memory: integer reductions in vision graphs are shape arithmetic of a
 * few elements, so nothing here is tuned for size. */
const int kIntReduceThreads = 128;

template <typename T>
__global__ void reduce_int_kernel(const T* x, T* y, cuda_reduce_args a) {
  __shared__ unsigned long long part[kIntReduceThreads];
  const bool i64 = sizeof(T) == 8;
  const long long hi = i64 ? INT64_MAX : INT32_MAX, lo = i64 ? INT64_MIN : INT32_MIN;
  const unsigned long long identity = a.kind == CUDA_REDUCE_MIN   ? (unsigned long long)hi
                                      : a.kind == CUDA_REDUCE_MAX  ? (unsigned long long)lo
                                      : a.kind == CUDA_REDUCE_PROD ? 1ull
                                                                   : 0ull;
  for (int64_t o = blockIdx.x; o < a.out_count; o += gridDim.x) {
    const int64_t base = offset_of(o, a.n_kept, a.kept_dims, a.kept_strides);
    unsigned long long acc = identity;
    for (int64_t r = threadIdx.x; r < a.reduce_count; r += blockDim.x) {
      const long long v = x[base + offset_of(r, a.n_red, a.red_dims, a.red_strides)];
      if (a.kind == CUDA_REDUCE_SUM) acc += (unsigned long long)v;
      else if (a.kind == CUDA_REDUCE_PROD) acc *= (unsigned long long)v;
      else if (a.kind == CUDA_REDUCE_MIN && v < (long long)acc) acc = (unsigned long long)v;
      else if (a.kind == CUDA_REDUCE_MAX && v > (long long)acc) acc = (unsigned long long)v;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step /= 2) {
      if (threadIdx.x < step) {
        const unsigned long long b = part[threadIdx.x + step];
        unsigned long long& m = part[threadIdx.x];
        if (a.kind == CUDA_REDUCE_SUM) m += b;
        else if (a.kind == CUDA_REDUCE_PROD) m *= b;
        else if (a.kind == CUDA_REDUCE_MIN && (long long)b < (long long)m) m = b;
        else if (a.kind == CUDA_REDUCE_MAX && (long long)b > (long long)m) m = b;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[o] = (T)part[0];
    __syncthreads();
  }
}

template <typename T>
void launch_reduce_int(const void* x, void* y, const cuda_reduce_args& a, cudaStream_t stream) {
  const int64_t blocks = a.out_count < 65535 ? a.out_count : 65535;
  reduce_int_kernel<T><<<(unsigned)blocks, kIntReduceThreads, 0, stream>>>((const T*)x, (T*)y, a);
}

extern "C" cudaError_t cuda_reduce_run(int dtype, const void* x, void* y, cuda_reduce_args args, cudaStream_t stream) {
  if (args.out_count <= 0) return cudaSuccess;
  const bool int_kind = args.kind == CUDA_REDUCE_SUM || args.kind == CUDA_REDUCE_MAX || args.kind == CUDA_REDUCE_MIN ||
                        args.kind == CUDA_REDUCE_PROD;
  switch (dtype) {
    case GFX_DTYPE_F32: dispatch_reduce<float>(x, y, args, stream); break;
    case GFX_DTYPE_F16: dispatch_reduce<__half>(x, y, args, stream); break;
    case GFX_DTYPE_BF16: dispatch_reduce<__nv_bfloat16>(x, y, args, stream); break;
    case GFX_DTYPE_I32:
      if (!int_kind) return cudaErrorInvalidValue;
      launch_reduce_int<int32_t>(x, y, args, stream);
      break;
    case GFX_DTYPE_I64:
      if (!int_kind) return cudaErrorInvalidValue;
      launch_reduce_int<int64_t>(x, y, args, stream);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_arg_run(int dtype, const void* x, int64_t* y, cuda_reduce_args args, cudaStream_t stream) {
  if (args.out_count <= 0) return cudaSuccess;
  if (args.reduce_count <= 0) return cudaErrorInvalidValue; /* no index to give (the caller refuses it first) */
  if (args.kind != CUDA_REDUCE_ARGMAX && args.kind != CUDA_REDUCE_ARGMIN) return cudaErrorInvalidValue;
  switch (dtype) {
    case GFX_DTYPE_F32: launch_arg<float>(x, y, args, stream); break;
    case GFX_DTYPE_F16: launch_arg<__half>(x, y, args, stream); break;
    case GFX_DTYPE_BF16: launch_arg<__nv_bfloat16>(x, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_pool_run(int dtype, const void* x, void* y, cuda_pool_args args, cudaStream_t stream) {
  switch (dtype) {
    case GFX_DTYPE_F32: launch_pool<float>(x, y, args, stream); break;
    case GFX_DTYPE_F16: launch_pool<__half>(x, y, args, stream); break;
    case GFX_DTYPE_BF16: launch_pool<__nv_bfloat16>(x, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_softmax_run(int dtype, const void* x, void* y, cuda_softmax_args args,
                                        cudaStream_t stream) {
  switch (dtype) {
    case GFX_DTYPE_F32: launch_softmax<float>(x, y, args, stream); break;
    case GFX_DTYPE_F16: launch_softmax<__half>(x, y, args, stream); break;
    case GFX_DTYPE_BF16: launch_softmax<__nv_bfloat16>(x, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_lrn_run(int dtype, const void* x, void* y, cuda_lrn_args args, cudaStream_t stream) {
  const int64_t total = args.n * args.c * args.spatial;
  if (total <= 0) return cudaSuccess;
  const unsigned int grid = grid_for(total, kBlockSize);
  switch (dtype) {
    case GFX_DTYPE_F32:
      lrn_kernel<float><<<grid, kBlockSize, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(y), args);
      break;
    case GFX_DTYPE_F16:
      lrn_kernel<__half><<<grid, kBlockSize, 0, stream>>>(static_cast<const __half*>(x), static_cast<__half*>(y), args);
      break;
    case GFX_DTYPE_BF16:
      lrn_kernel<__nv_bfloat16><<<grid, kBlockSize, 0, stream>>>(static_cast<const __nv_bfloat16*>(x),
                                                                 static_cast<__nv_bfloat16*>(y), args);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_norm_run(int dtype, const void* x, const void* scale, const void* bias, void* y,
                                     cuda_norm_args args, cudaStream_t stream) {
  switch (dtype) {
    case GFX_DTYPE_F32: launch_norm<float>(x, scale, bias, y, args, stream); break;
    case GFX_DTYPE_F16: launch_norm<__half>(x, scale, bias, y, args, stream); break;
    case GFX_DTYPE_BF16: launch_norm<__nv_bfloat16>(x, scale, bias, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_norm_epilogue_run(int dtype, const void* x, const void* scale, const void* bias, void* y,
                                              cuda_norm_epilogue_args args, cudaStream_t stream) {
  if (args.norm.chunks < 1 || !args.norm.scratch) return cudaErrorInvalidValue;
  switch (dtype) {
    case GFX_DTYPE_F32: launch_norm_epilogue<float>(x, scale, bias, y, args, stream); break;
    case GFX_DTYPE_F16: launch_norm_epilogue<__half>(x, scale, bias, y, args, stream); break;
    case GFX_DTYPE_BF16: launch_norm_epilogue<__nv_bfloat16>(x, scale, bias, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_reduce_preload(void) {
  cudaError_t e;
  cudaFuncAttributes attr;
  if ((e = preload_type<float>()) != cudaSuccess) return e;
  if ((e = preload_type<__half>()) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, reduce_int_kernel<int32_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, reduce_int_kernel<int64_t>)) != cudaSuccess) return e;
  return preload_type<__nv_bfloat16>();
}

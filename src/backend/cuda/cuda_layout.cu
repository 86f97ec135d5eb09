// gfxep CUDA backend — kernels of the layout and data movement ops (see cuda_layout.h).
//
// One kernel per primitive, templated on the element's unsigned integer type of 1, 2, 4 or 8
// bytes. Every kernel uses a grid-stride loop with 64-bit indices, so a capped grid covers any size.
#include <cuda_runtime.h>
#include <stdint.h>

#include "backend/cuda/cuda_layout.h"
#include "backend/cuda/cuda_vec16.cuh"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

template <typename T>
__global__ void plan_kernel(const T* __restrict__ src, T* __restrict__ dst, ir_copy_plan plan) {
  T constant;
  memcpy(&constant, plan.value, sizeof(T));
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < plan.count; i += (int64_t)blockDim.x * gridDim.x) {
    int64_t linear = i, s = 0, d = plan.dst_offset;
    bool outside = false;
    for (int k = plan.rank - 1; k >= 0; k--) {
      const int64_t c = linear % plan.dims[k];
      linear /= plan.dims[k];
      d += c * plan.dst_strides[k];
      const int64_t sc = ir_resolve_coord(plan.src_start[k] + c * plan.src_step[k], plan.src_extent[k], plan.mode);
      if (sc < 0)
        outside = true;
      else
        s += sc * plan.src_strides[k];
    }
    dst[d] = outside ? constant : src[s];
  }
}

/* One row of the box per block (grid-stride over rows): thread 0 resolves the row's outer
 * coordinates once (64-bit divisions cost ~100 instructions each: done per element they made this
 * kernel compute-bound at a sixth of the copy bandwidth), then the block's threads walk the last
 * dim, so the per-element cost is one multiply-add and the accesses along a contiguous last dim
 * coalesce. Chosen when the last dim is long enough to keep a warp busy; the element-wise
 * plan_kernel above handles the rest. */
const int64_t kRowChunk = 4096; /* elements of a row one block walks: long rows spread over blocks */
const int kUnroll = 4;          /* elements per thread per step, loaded before any is stored */

struct row_start {
  int64_t src, dst;
  bool outside;
};

__device__ row_start resolve_row(const ir_copy_plan& plan, int64_t row) {
  row_start r = {0, plan.dst_offset, false};
  int64_t linear = row;
  for (int k = plan.rank - 2; k >= 0; k--) {
    const int64_t c = linear % plan.dims[k];
    linear /= plan.dims[k];
    r.dst += c * plan.dst_strides[k];
    const int64_t sc = ir_resolve_coord(plan.src_start[k] + c * plan.src_step[k], plan.src_extent[k], plan.mode);
    if (sc < 0)
      r.outside = true;
    else
      r.src += sc * plan.src_strides[k];
  }
  return r;
}

template <typename T>
__global__ void plan_rows_kernel(const T* __restrict__ src, T* __restrict__ dst, ir_copy_plan plan, int64_t rows) {
  __shared__ row_start start_of_row;
  T constant;
  memcpy(&constant, plan.value, sizeof(T));
  const int last = plan.rank - 1;
  const int64_t inner = plan.dims[last], start = plan.src_start[last], step = plan.src_step[last];
  const int64_t extent = plan.src_extent[last], ss = plan.src_strides[last], ds = plan.dst_strides[last];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    if (threadIdx.x == 0) start_of_row = resolve_row(plan, row);
    __syncthreads();
    const row_start r = start_of_row;
    for (int64_t j0 = blockIdx.y * kRowChunk; j0 < inner; j0 += (int64_t)gridDim.y * kRowChunk) {
      const int64_t j_end = j0 + kRowChunk < inner ? j0 + kRowChunk : inner;
      for (int64_t j = j0 + threadIdx.x; j < j_end; j += kUnroll * (int64_t)blockDim.x) {
        /* all loads of the group first: kUnroll reads in flight per thread, not one */
        T v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t jj = j + u * (int64_t)blockDim.x, c = start + jj * step;
          v[u] = constant;
          if (jj < j_end && !r.outside) {
            const int64_t sc = c >= 0 && c < extent ? c : ir_resolve_coord(c, extent, plan.mode);
            if (sc >= 0) v[u] = src[r.src + sc * ss];
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
          const int64_t jj = j + u * (int64_t)blockDim.x;
          if (jj < j_end) dst[r.dst + jj * ds] = v[u];
        }
      }
    }
    __syncthreads(); /* start_of_row is rewritten for the next row */
  }
}

/* Plans of rank 3 or less (after merging), the common case (Pad and Resize-like copies of NCHW
 * maps merge N and C): the grid is the box itself, x along the last dim, y blocks of kGridRows rows
 * of the dim before it, z the dim before that, so a thread finds its coordinates without a single
 * division. Each thread copies one column of kGridRows rows, all loads before any store: with one
 * 2- or 4-byte element per thread too few bytes are in flight to cover the memory latency (Little's
 * law), and a Pad ran at a fifth of the copy bandwidth. */
const int64_t kGridDimLimit = 65535;
const int kGridRows = 8;

template <typename T>
__global__ void plan_grid_kernel(const T* __restrict__ src, T* __restrict__ dst, ir_copy_plan plan) {
  const int last = plan.rank - 1;
  const int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (j >= plan.dims[last]) return;
  T constant;
  memcpy(&constant, plan.value, sizeof(T));
  /* the last dim and the z dim are the same for the thread's whole column */
  int64_t s_base = 0, d_base = plan.dst_offset + j * plan.dst_strides[last];
  bool outside = false;
  const int64_t sj = ir_resolve_coord(plan.src_start[last] + j * plan.src_step[last], plan.src_extent[last], plan.mode);
  if (sj < 0) outside = true;
  else s_base = sj * plan.src_strides[last];
  if (last >= 2) {
    const int64_t z = blockIdx.z;
    d_base += z * plan.dst_strides[last - 2];
    const int64_t sz = ir_resolve_coord(plan.src_start[last - 2] + z * plan.src_step[last - 2], plan.src_extent[last - 2], plan.mode);
    if (sz < 0) outside = true;
    else s_base += sz * plan.src_strides[last - 2];
  }
  const int64_t rows = last >= 1 ? plan.dims[last - 1] : 1;
  const int64_t y0 = (int64_t)blockIdx.y * kGridRows;
  T v[kGridRows];
#pragma unroll
  for (int u = 0; u < kGridRows; u++) {
    v[u] = constant;
    const int64_t y = y0 + u;
    if (y >= rows || outside) continue;
    int64_t s = s_base;
    if (last >= 1) {
      const int64_t sy = ir_resolve_coord(plan.src_start[last - 1] + y * plan.src_step[last - 1], plan.src_extent[last - 1], plan.mode);
      if (sy < 0) continue;
      s += sy * plan.src_strides[last - 1];
    }
    v[u] = src[s];
  }
#pragma unroll
  for (int u = 0; u < kGridRows; u++) {
    const int64_t y = y0 + u;
    if (y < rows) dst[d_base + (last >= 1 ? y * plan.dst_strides[last - 1] : 0)] = v[u];
  }
}

/* ---- 16-byte vectors ----
 *
 * The kernels above move one element per access: 2-byte loads and stores cannot keep the memory
 * system busy (a Pad of a float16 map ran at 37% of the copy bandwidth). The ones below move 16
 * bytes per access wherever the plan allows it and keep 4 such vectors in flight per thread. */

/* The 16 bytes that start `shift` bytes (0..15) into the 32 bytes lo:hi, little-endian: an unaligned
 * run read as two aligned vectors. Selects and funnel shifts only (a runtime index into a register
 * array would put it in local memory). */
__device__ __forceinline__ uint4 window16(uint4 lo, uint4 hi, int shift) {
  const bool two = shift & 8, one = shift & 4;
  const unsigned bits = (unsigned)(shift & 3) * 8u;
  const uint32_t u0 = two ? lo.z : lo.x, u1 = two ? lo.w : lo.y, u2 = two ? hi.x : lo.z;
  const uint32_t u3 = two ? hi.y : lo.w, u4 = two ? hi.z : hi.x, u5 = two ? hi.w : hi.y;
  const uint32_t t0 = one ? u1 : u0, t1 = one ? u2 : u1, t2 = one ? u3 : u2, t3 = one ? u4 : u3, t4 = one ? u5 : u4;
  return make_uint4(__funnelshift_r(t0, t1, bits), __funnelshift_r(t1, t2, bits), __funnelshift_r(t2, t3, bits),
                    __funnelshift_r(t3, t4, bits));
}

/* Source element of coordinate c along a dim of n valid coordinates (the plan's mode outside), or
 * the constant. */
template <typename T>
__device__ __forceinline__ T load_resolved(const T* src, int64_t row, int64_t c, int64_t n, ir_pad_mode mode,
                                           T constant) {
  const int64_t sc = c >= 0 && c < n ? c : ir_resolve_coord(c, n, mode);
  return sc < 0 ? constant : src[row + sc];
}

/* ---- copy plans whose last box dim is contiguous in the destination and read forwards with unit
 * stride from the source (after simplify_plan): Pad in every mode, Slice with step 1 along the last
 * dim, Concat, Split, Tile and Expand of leading dims.
 *
 * Each destination row splits in two parts, done in separate phases of a block, so that no warp
 * ever mixes the two kinds of work. The body is every aligned 16-byte destination vector (a slot)
 * whose elements all read from inside the source row: one 16-byte store each, its source read as
 * aligned 16-byte vectors (below). The edge is the rest: the columns before the first and after
 * the last body slot (a pad's border, the head and tail of a row that starts or ends inside a
 * vector), resolved element by element. With both in one path a warp holding one edge slot ran
 * the element path beside its 31 vector slots, and a 1-pixel Pad of a float16 1080p map ran at 49%
 * of the copy bandwidth; a crop without edge slots ran at 77%.
 *
 * Source reads load only aligned 16-byte vectors that hold at least one valid element of the
 * source row; such a vector never leaves the allocation (allocations are aligned to far more than
 * 16 bytes and padded to it). */
const int kVecLog2 = 2, kVecPerThread = 1 << kVecLog2;
const int kVecMinBlocks = 4;

struct vec_launch {
  int slots_log2;   /* log2 of the vectors a thread takes along a row (U); it takes kVecPerThread / U rows */
  int32_t rows;     /* the box dim before the last (1 for rank 1) */
  int64_t outer;    /* the product of the dims before that */
  int32_t body_lo;  /* the destination columns [body_lo, body_hi) read from inside the source row */
  int32_t body_hi;
  int32_t edge_max; /* columns of the widest edge */
};

/* The body of a row whose first column sits `a` elements into a 16-byte vector: the slot
 * boundaries (columns j with (j + a) % V == 0) nearest inside [lo, hi). */
template <int V>
__device__ __forceinline__ int32_t body_first(int32_t lo, uint32_t a) {
  return lo + (int32_t)((0u - ((uint32_t)lo + a)) & (V - 1));
}
template <int V>
__device__ __forceinline__ int32_t body_end(int32_t hi, uint32_t a) {
  return hi - (int32_t)(((uint32_t)hi + a) & (V - 1));
}

/* Where one z (the product of the dims before the rows) starts in source and destination; outside
 * when a pad puts it outside the source in constant mode. */
struct z_start {
  int64_t src, dst;
  bool outside;
};

__device__ __forceinline__ z_start resolve_z(const ir_copy_plan& plan, int64_t z) {
  z_start r = {0, plan.dst_offset, false};
  int64_t rest = z;
  for (int k = plan.rank - 3; k >= 0; k--) {
    int64_t c = rest;
    if (k > 0) {
      c = rest % plan.dims[k];
      rest /= plan.dims[k];
    }
    r.dst += c * plan.dst_strides[k];
    const int64_t sc = ir_resolve_coord(plan.src_start[k] + c * plan.src_step[k], plan.src_extent[k], plan.mode);
    if (sc < 0)
      r.outside = true;
    else
      r.src += sc * plan.src_strides[k];
  }
  return r;
}

/* The row parameters both kernels share, 32-bit (the host checks that every offset inside one z
 * fits). */
struct row_params {
  int32_t width, extent, x_start, y_start, y_step, y_extent, y_src, y_dst;
};

__device__ __forceinline__ row_params row_params_of(const ir_copy_plan& plan) {
  const int last = plan.rank - 1;
  row_params r;
  r.width = (int32_t)plan.dims[last];
  r.extent = (int32_t)plan.src_extent[last];
  r.x_start = (int32_t)plan.src_start[last];
  r.y_start = last >= 1 ? (int32_t)plan.src_start[last - 1] : 0;
  r.y_step = last >= 1 ? (int32_t)plan.src_step[last - 1] : 0;
  r.y_extent = last >= 1 ? (int32_t)plan.src_extent[last - 1] : 1;
  r.y_src = last >= 1 ? (int32_t)plan.src_strides[last - 1] : 0;
  r.y_dst = last >= 1 ? (int32_t)plan.dst_strides[last - 1] : 0;
  return r;
}

/* Edge column e (0 .. edge_max) of row y, if the row has that many: a row's edge is
 * [0, first body slot) and [end of the last body slot, width), the whole row where it has no body
 * slot. */
template <typename T>
__device__ __forceinline__ void edge_element(const T* sz, T* dz, bool z_outside, uint32_t dst_mis, const row_params& P,
                                             const vec_launch& L, ir_pad_mode mode, T constant, int32_t y, int32_t e) {
  constexpr int V = 16 / sizeof(T);
  const int32_t dst_row = y * P.y_dst;
  const uint32_t a = (dst_mis + (uint32_t)dst_row) & (V - 1);
  const int32_t lo = body_first<V>(L.body_lo, a), hi = body_end<V>(L.body_hi, a);
  const int32_t left = hi > lo ? lo : P.width, right = hi > lo ? hi : P.width;
  const int32_t j = e < left ? e : right + (e - left);
  if (j >= P.width) return;
  const int32_t sy = (int32_t)ir_resolve_coord(P.y_start + y * P.y_step, P.y_extent, mode);
  dz[dst_row + j] = z_outside || sy < 0 ? constant
                                        : load_resolved(sz, (int64_t)sy * P.y_src, P.x_start + j, P.extent, mode, constant);
}

/* The body: the grid is the box, x along the row in slots, y over rows (R = kVecPerThread / U rows
 * per thread), z over the product of the dims before (one decomposition per z, none for rank 3).
 * A slot's source run starts `r` elements into an aligned source vector, the same r for every slot
 * of a row: each thread loads its own aligned vector and takes the next one from its neighbour
 * lane, which holds the next slot (a shuffle, not a second load); the last lane of a run of
 * threads loads it itself. Every control decision a shuffle depends on is uniform across the warp.
 * A row outside the source (constant mode) stores the constant. Held to 64 registers so that four
 * blocks of 256 threads share an SM (at 128 registers a crop ran at 53% of the copy bandwidth). */
template <typename T>
__global__ void __launch_bounds__(256, kVecMinBlocks) plan_vec_kernel(const T* __restrict__ src, T* __restrict__ dst,
                                                                      ir_copy_plan plan, vec_launch L) {
  constexpr int V = 16 / sizeof(T);
  const row_params P = row_params_of(plan);
  const int ul = L.slots_log2, rows_per_thread = kVecPerThread >> ul;
  T constant;
  memcpy(&constant, plan.value, sizeof(T));
  vec16<T> constant_vec;
#pragma unroll
  for (int i = 0; i < V; i++) constant_vec.e[i] = constant;
  const int lane = (int)((threadIdx.y * blockDim.x + threadIdx.x) & 31);
  /* the next lane holds this thread's next slot unless the warp or the block's row of threads ends */
  const bool run_end = lane == 31 || threadIdx.x + 1 == blockDim.x;
  const int32_t slot0 = (int32_t)((blockIdx.x << ul) * blockDim.x + threadIdx.x);
  const int32_t rows_per_block = (int32_t)blockDim.y * rows_per_thread;
  for (int64_t z = blockIdx.z; z < L.outer; z += gridDim.z) {
    const z_start zs = resolve_z(plan, z);
    const T* sz = src + zs.src;
    T* dz = dst + zs.dst;
    const uint32_t src_mis = (uint32_t)((uintptr_t)sz / sizeof(T)), dst_mis = (uint32_t)((uintptr_t)dz / sizeof(T));
    /* the loop bound is the block's, not the thread's: every lane of a warp reaches the shuffles */
    for (int32_t yb = (int32_t)blockIdx.y * rows_per_block; yb < L.rows; yb += (int32_t)gridDim.y * rows_per_block) {
      const int32_t y0 = yb + (int32_t)threadIdx.y * rows_per_thread;
      uint4 lo[kVecPerThread], hi[kVecPerThread];
      int shift[kVecPerThread];
#pragma unroll
      for (int k = 0; k < kVecPerThread; k++) {
        const int32_t y = y0 + (k >> ul), slot = slot0 + (k & ((1 << ul) - 1)) * (int32_t)blockDim.x;
        const int32_t j0 = slot * V - (int32_t)((dst_mis + (uint32_t)(y * P.y_dst)) & (V - 1));
        lo[k] = hi[k] = make_uint4(0, 0, 0, 0);
        shift[k] = 0;
        if (y >= L.rows) continue;
        const int32_t sy = (int32_t)ir_resolve_coord(P.y_start + y * P.y_step, P.y_extent, plan.mode);
        if (zs.outside || sy < 0) {
          lo[k] = constant_vec.v;
          continue;
        }
        const int32_t src_row = sy * P.y_src, c0 = P.x_start + j0;
        const int32_t r = (int32_t)((src_mis + (uint32_t)(src_row + c0)) & (V - 1));
        const int32_t first = c0 - r; /* the aligned vector holding the slot's first element */
        shift[k] = r * (int)sizeof(T);
        const T* row = sz + src_row;
        if (first < P.extent && first + V > 0) lo[k] = load16(row + first);
        if (run_end && r != 0 && j0 >= L.body_lo && j0 + V <= L.body_hi) hi[k] = load16(row + first + V);
      }
#pragma unroll
      for (int k = 0; k < kVecPerThread; k++) {
        uint4 next;
        next.x = __shfl_down_sync(0xffffffffu, lo[k].x, 1);
        next.y = __shfl_down_sync(0xffffffffu, lo[k].y, 1);
        next.z = __shfl_down_sync(0xffffffffu, lo[k].z, 1);
        next.w = __shfl_down_sync(0xffffffffu, lo[k].w, 1);
        if (run_end) next = hi[k];
        const int32_t y = y0 + (k >> ul), slot = slot0 + (k & ((1 << ul) - 1)) * (int32_t)blockDim.x;
        const int32_t dst_row = y * P.y_dst;
        const int32_t j0 = slot * V - (int32_t)((dst_mis + (uint32_t)dst_row) & (V - 1));
        if (y < L.rows && j0 >= L.body_lo && j0 + V <= L.body_hi)
          store16(dz + dst_row + j0, window16(lo[k], next, shift[k]));
      }
      /* the edge of the same rows, by the first block along them, element by element: right after
       * the body, so the sectors both write merge in L2 (a separate edge kernel after the whole
       * body found them evicted and cost a read-modify-write each: 16 us of a 1-pixel Pad's 153) */
      if (blockIdx.x == 0) {
        const int32_t count = rows_per_block * L.edge_max;
        for (int32_t t = (int32_t)(threadIdx.y * blockDim.x + threadIdx.x); t < count;
             t += (int32_t)(blockDim.x * blockDim.y)) {
          const int32_t q = t / L.edge_max, y = yb + q;
          if (y >= L.rows) break;
          edge_element(sz, dz, zs.outside, dst_mis, P, L, plan.mode, constant, y, t - q * L.edge_max);
        }
      }
    }
  }
}

/* Transposes: the last box dim (c) is contiguous in the destination, another dim (p) in the source.
 * A block moves a tile of 32 K x 32 K elements through shared memory: warps read it along p and
 * write it along c, so both sides coalesce. Global accesses are words of K elements (K = 2 for
 * 2-byte, 4 for 1-byte elements where the strides and offsets allow, else 1): 128 bytes per warp
 * access at K * size >= 4. A word read holds K elements of one row c; K of them from K neighbouring
 * rows are transposed in registers into K words of K rows p. The shared tile is rows of 33 words
 * (conflict-free along a row) with the word column xor'ed by row / 32, which keeps the column reads
 * of the write phase conflict-free too. Every dim is read in range (no pad modes); the others are
 * batch dims, one decomposition per block. A block takes kTileSub neighbouring tiles along p, so a
 * thread has 16 words in flight. */
struct tile_args {
  int64_t p_len, c_len;    /* extents of the p and c dims */
  int64_t src_c, dst_p;    /* source stride along c, destination stride along p (the other two are 1) */
  int64_t src_base, dst_base;
  int n_batch;
  int64_t batches;         /* the product of the batch dims */
  int64_t batch_dims[GFX_MAX_RANK], batch_src[GFX_MAX_RANK], batch_dst[GFX_MAX_RANK];
};

const int kTileSub = 2; /* tiles along p per block: 16 words in flight per thread */

template <typename T, int K>
struct tile_word {
  typedef uint32_t type; /* K elements of 1 or 2 bytes */
};
template <typename T>
struct tile_word<T, 1> {
  typedef T type;
};

template <typename T, int K>
__global__ void __launch_bounds__(128 * K) plan_tile_kernel(const T* __restrict__ src, T* __restrict__ dst, tile_args a) {
  typedef typename tile_word<T, K>::type W;
  union word {
    W w;
    T e[K];
  };
  constexpr int kTile = 32 * K, kWarps = 4 * K;
  __shared__ W tile[kTileSub][kTile][33];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t p0 = (int64_t)blockIdx.x * kTileSub * kTile;
  for (int64_t c0 = (int64_t)blockIdx.y * kTile; c0 < a.c_len; c0 += (int64_t)gridDim.y * kTile)
    for (int64_t b = blockIdx.z; b < a.batches; b += gridDim.z) {
      int64_t s = a.src_base, d = a.dst_base, rest = b;
      for (int k = a.n_batch - 1; k >= 0; k--) {
        int64_t c = rest;
        if (k > 0) {
          c = rest % a.batch_dims[k];
          rest /= a.batch_dims[k];
        }
        s += c * a.batch_src[k];
        d += c * a.batch_dst[k];
      }
      /* read: warp w takes tile rows w, w + kWarps, ..., a lane one word of each along p */
      W in[kTileSub][8];
#pragma unroll
      for (int t = 0; t < kTileSub; t++) {
        const int64_t p = p0 + t * kTile + lane * K;
#pragma unroll
        for (int i = 0; i < 8; i++) {
          const int64_t c = c0 + warp + i * kWarps;
          in[t][i] = W(0);
          if (c < a.c_len && p < a.p_len) in[t][i] = *reinterpret_cast<const W*>(src + s + c * a.src_c + p);
        }
      }
#pragma unroll
      for (int t = 0; t < kTileSub; t++)
#pragma unroll
        for (int i = 0; i < 8; i++) {
          const int r = warp + i * kWarps;
          tile[t][r][lane ^ (r >> 5)] = in[t][i];
        }
      __syncthreads();
      /* write: warp w takes the groups of K rows p w, w + kWarps, ..., a lane K rows c of each */
      const int64_t c = c0 + lane * K;
#pragma unroll
      for (int t = 0; t < kTileSub; t++)
#pragma unroll
        for (int i = 0; i < 8 / K; i++) {
          const int pk = warp + i * kWarps;
          word x[K], y[K];
#pragma unroll
          for (int j = 0; j < K; j++) {
            const int r = lane * K + j;
            x[j].w = tile[t][r][pk ^ (r >> 5)];
          }
#pragma unroll
          for (int j = 0; j < K; j++)
#pragma unroll
            for (int m = 0; m < K; m++) y[m].e[j] = x[j].e[m];
#pragma unroll
          for (int m = 0; m < K; m++) {
            const int64_t pp = p0 + t * kTile + pk * K + m;
            if (pp < a.p_len && c < a.c_len) *reinterpret_cast<W*>(dst + d + pp * a.dst_p + c) = y[m].w;
          }
        }
      __syncthreads(); /* the tile is rewritten for the next batch */
    }
}

/* Merges neighbouring box dims that are one run in both source and destination and never leave the
 * source (start 0, step 1, the whole extent): fewer dims to decompose, longer rows. */
void simplify_plan(ir_copy_plan* p) {
  /* a dim of 1 read at coordinate 0 of a non-empty source moves nothing: drop it (a fused Split's
   * size-1 dims would otherwise keep the plan above the division-free kernel's rank 3) */
  int kept = 0;
  for (int k = 0; k < p->rank; k++) {
    if (p->dims[k] == 1 && p->src_start[k] == 0 && p->src_extent[k] >= 1) continue;
    p->dims[kept] = p->dims[k];
    p->dst_strides[kept] = p->dst_strides[k];
    p->src_extent[kept] = p->src_extent[k];
    p->src_start[kept] = p->src_start[k];
    p->src_step[kept] = p->src_step[k];
    p->src_strides[kept] = p->src_strides[k];
    kept++;
  }
  p->rank = kept;
  int r = 0;
  for (int k = 0; k < p->rank; k++) {
    if (r > 0) {
      const int a = r - 1;
      const bool plain_a = p->src_start[a] == 0 && p->src_step[a] == 1 && p->src_extent[a] == p->dims[a];
      const bool plain_k = p->src_start[k] == 0 && p->src_step[k] == 1 && p->src_extent[k] == p->dims[k];
      if (plain_a && plain_k && p->src_strides[a] == p->src_strides[k] * p->dims[k] &&
          p->dst_strides[a] == p->dst_strides[k] * p->dims[k]) {
        p->dims[a] *= p->dims[k];
        p->src_extent[a] = p->dims[a];
        p->src_strides[a] = p->src_strides[k];
        p->dst_strides[a] = p->dst_strides[k];
        continue;
      }
    }
    p->dims[r] = p->dims[k];
    p->dst_strides[r] = p->dst_strides[k];
    p->src_extent[r] = p->src_extent[k];
    p->src_start[r] = p->src_start[k];
    p->src_step[r] = p->src_step[k];
    p->src_strides[r] = p->src_strides[k];
    r++;
  }
  p->rank = r;
}

template <typename T, typename Index>
__global__ void gather_kernel(const T* __restrict__ data, const Index* __restrict__ indices, T* __restrict__ out,
                              ir_gather_geom g, int64_t count) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    const int64_t inner = i % g.inner;
    const int64_t rest = i / g.inner;
    const int64_t j = rest % g.n_indices;
    const int64_t o = rest / g.n_indices;
    int64_t idx = (int64_t)indices[j];
    if (idx < 0) idx += g.axis_dim;
    out[i] = idx >= 0 && idx < g.axis_dim ? data[(o * g.axis_dim + idx) * g.inner + inner] : T(0);
  }
}

template <typename T>
__global__ void fill_kernel(T* dst, int64_t count, T value) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x)
    dst[i] = value;
}

struct i64_values {
  int64_t v[GFX_MAX_RANK];
  int n;
};

__global__ void write_i64_kernel(int64_t* dst, i64_values values) {
  const int i = threadIdx.x;
  if (i < values.n) dst[i] = values.v[i];
}

/* plan_vec_kernel where the plan allows it (see there); false leaves the plan to the others. */
template <typename T>
bool launch_plan_vec(const ir_copy_plan* p, const void* src, void* dst, cudaStream_t stream) {
  constexpr int V = 16 / sizeof(T);
  const int last = p->rank - 1;
  if (p->rank < 1 || p->dst_strides[last] != 1 || p->src_strides[last] != 1 || p->src_step[last] != 1) return false;
  const int64_t width = p->dims[last], limit = (int64_t)1 << 30;
  if (width < V || (uintptr_t)src % sizeof(T) || (uintptr_t)dst % sizeof(T)) return false;
  /* the kernel's arithmetic inside one z is 32-bit: every offset within a row and between the rows
   * of one z stays below 2^31 */
  const int64_t rows = p->rank >= 2 ? p->dims[last - 1] : 1;
  const int64_t y_start = last >= 1 ? p->src_start[last - 1] : 0, y_step = last >= 1 ? p->src_step[last - 1] : 0;
  const int64_t y_extent = last >= 1 ? p->src_extent[last - 1] : 1, y_src = last >= 1 ? p->src_strides[last - 1] : 0;
  const int64_t y_dst = last >= 1 ? p->dst_strides[last - 1] : 0;
  const int64_t bounded[] = {width, p->src_extent[last], p->src_start[last], rows, y_start, y_step, y_extent, y_src,
                             y_dst};
  for (size_t i = 0; i < sizeof bounded / sizeof bounded[0]; i++)
    if (bounded[i] > limit || bounded[i] < -limit) return false;
  if (y_extent * (y_src < 0 ? -y_src : y_src) > limit || rows * (y_dst < 0 ? -y_dst : y_dst) > limit ||
      rows * (y_step < 0 ? -y_step : y_step) > limit)
    return false;
  vec_launch L;
  L.rows = (int32_t)rows;
  L.outer = 1;
  for (int k = 0; k + 1 < last; k++) L.outer *= p->dims[k];
  int rows_log2 = 0;
  while (rows_log2 < kVecLog2 && L.rows >= (2 << rows_log2)) rows_log2++;
  L.slots_log2 = kVecLog2 - rows_log2;
  /* slots per row: exact when every row starts at the same offset within a 16-byte vector */
  bool same_offset = true;
  for (int k = 0; k < last; k++) same_offset &= p->dst_strides[k] % V == 0;
  const int64_t a = (int64_t)(((uintptr_t)dst / sizeof(T) + (uint64_t)p->dst_offset) & (V - 1));
  const int64_t slots = same_offset ? (a + width + V - 1) / V : (width + 2 * V - 2) / V;
  const int64_t thread_slots = (slots + (1 << L.slots_log2) - 1) >> L.slots_log2;
  int bx = 256;
  while (bx > 4 && bx / 2 >= thread_slots) bx /= 2;
  const int by = 256 / bx;
  const int64_t gx = (thread_slots + bx - 1) / bx, rows_per_block = (int64_t)by << rows_log2;
  const int64_t gy = (L.rows + rows_per_block - 1) / rows_per_block;
  if (gx > INT32_MAX) return false;
  /* the body: destination columns whose source column is inside the row */
  const int64_t extent = p->src_extent[last], x_start = p->src_start[last];
  const int64_t body_lo = x_start < 0 ? (-x_start < width ? -x_start : width) : 0;
  int64_t body_hi = extent - x_start < width ? extent - x_start : width;
  if (body_hi < body_lo) body_hi = body_lo;
  L.body_lo = (int32_t)body_lo;
  L.body_hi = (int32_t)body_hi;
  /* the widest edge: exact where every row starts at the same offset in a vector (none for an
   * aligned copy), else the bound over all offsets; a body under two vectors may hold no slot */
  int64_t edge = width;
  if (same_offset) {
    const int64_t lo = body_lo + ((V - (body_lo + a) % V) % V), hi = body_hi - (body_hi + a) % V;
    if (hi > lo) edge = lo + (width - hi);
  } else if (body_hi - body_lo >= 2 * V) {
    edge = body_lo + (width - body_hi) + 2 * (V - 1);
    if (edge > width) edge = width;
  }
  if (edge * ((int64_t)by << rows_log2) > INT32_MAX) return false;
  L.edge_max = (int32_t)edge;
  const dim3 grid((unsigned int)gx, (unsigned int)(gy < kGridDimLimit ? gy : kGridDimLimit),
                  (unsigned int)(L.outer < kGridDimLimit ? L.outer : kGridDimLimit));
  plan_vec_kernel<T><<<grid, dim3(bx, by), 0, stream>>>((const T*)src, (T*)dst, *p, L);
  return true;
}

/* plan_tile_kernel where the plan is a transpose read wholly in range (see there); false leaves
 * the plan to the others. */
template <typename T>
bool launch_plan_tile(const ir_copy_plan* p, const void* src, void* dst, cudaStream_t stream) {
  const int last = p->rank - 1;
  if (p->rank < 2 || p->dst_strides[last] != 1 || p->src_strides[last] == 1 || p->src_step[last] != 1) return false;
  int pd = -1;
  for (int k = 0; k < p->rank; k++) {
    const int64_t first = p->src_start[k], end = first + (p->dims[k] - 1) * p->src_step[k];
    if (first < 0 || first >= p->src_extent[k] || end < 0 || end >= p->src_extent[k]) return false;
    if (k != last && pd < 0 && p->src_strides[k] == 1 && p->src_step[k] == 1) pd = k;
  }
  /* a narrow tile would leave most of a block idle: the element kernels do better there */
  if (pd < 0 || p->dims[last] < 8 || p->dims[pd] < 8) return false;
  tile_args a;
  a.p_len = p->dims[pd];
  a.c_len = p->dims[last];
  a.src_c = p->src_strides[last];
  a.dst_p = p->dst_strides[pd];
  a.src_base = 0;
  a.dst_base = p->dst_offset;
  a.n_batch = 0;
  a.batches = 1;
  for (int k = 0; k < p->rank; k++) {
    a.src_base += p->src_start[k] * p->src_strides[k];
    if (k == pd || k == last) continue;
    a.batch_dims[a.n_batch] = p->dims[k];
    a.batch_src[a.n_batch] = p->src_step[k] * p->src_strides[k];
    a.batch_dst[a.n_batch] = p->dst_strides[k];
    a.batches *= p->dims[k];
    a.n_batch++;
  }
  /* words of K elements where every word read and written is whole and aligned */
  constexpr int K = sizeof(T) == 1 ? 4 : sizeof(T) == 2 ? 2 : 1;
  bool packed = K > 1 && (uintptr_t)src % (K * sizeof(T)) == 0 && (uintptr_t)dst % (K * sizeof(T)) == 0 &&
                a.src_base % K == 0 && a.dst_base % K == 0 && a.src_c % K == 0 && a.dst_p % K == 0 &&
                a.p_len % K == 0 && a.c_len % K == 0;
  for (int k = 0; k < a.n_batch; k++) packed = packed && a.batch_src[k] % K == 0 && a.batch_dst[k] % K == 0;
  const int tile = packed ? 32 * K : 32;
  const int64_t gx = (a.p_len + kTileSub * tile - 1) / (kTileSub * tile), gy = (a.c_len + tile - 1) / tile;
  if (gx > INT32_MAX) return false;
  const dim3 grid((unsigned int)gx, (unsigned int)(gy < kGridDimLimit ? gy : kGridDimLimit),
                  (unsigned int)(a.batches < kGridDimLimit ? a.batches : kGridDimLimit));
  if constexpr (K > 1) {
    if (packed) {
      plan_tile_kernel<T, K><<<grid, 128 * K, 0, stream>>>((const T*)src, (T*)dst, a);
      return true;
    }
  }
  plan_tile_kernel<T, 1><<<grid, 128, 0, stream>>>((const T*)src, (T*)dst, a);
  return true;
}

template <typename T>
void launch_plan(const ir_copy_plan* plan, const void* src, void* dst, cudaStream_t stream) {
  if (launch_plan_vec<T>(plan, src, dst, stream) || launch_plan_tile<T>(plan, src, dst, stream)) return;
  const int64_t inner = plan->rank > 0 ? plan->dims[plan->rank - 1] : 1;
  const int64_t dim_y = plan->rank >= 2 ? plan->dims[plan->rank - 2] : 1;
  const int64_t dim_z = plan->rank >= 3 ? plan->dims[plan->rank - 3] : 1;
  const int64_t y_blocks = (dim_y + kGridRows - 1) / kGridRows;
  /* rank 1 (a whole contiguous run, e.g. a channel Concat's input) stays with the rows kernel below:
   * with no rows to stack, this one would copy a single element per thread */
  if (inner >= 32 && plan->rank >= 2 && plan->rank <= 3 && y_blocks <= kGridDimLimit && dim_z <= kGridDimLimit) {
    const int threads = inner >= kBlockSize ? kBlockSize : (int)((inner + 31) / 32 * 32);
    const int64_t blocks = (inner + threads - 1) / threads;
    if (blocks <= INT32_MAX) {
      plan_grid_kernel<T><<<dim3((unsigned int)blocks, (unsigned int)y_blocks, (unsigned int)dim_z), threads, 0, stream>>>(
          (const T*)src, (T*)dst, *plan);
      return;
    }
  }
  if (inner >= 64) {
    const int64_t rows = plan->count / inner;
    const int threads = inner >= kBlockSize ? kBlockSize : (int)((inner + 31) / 32 * 32);
    /* x: rows, y: chunks of a row, so a few very long rows (a channel Concat merges to one row per
     * input) still spread over the whole GPU */
    const int64_t chunks = (inner + kRowChunk - 1) / kRowChunk;
    dim3 grid((unsigned int)(rows < (1 << 20) ? rows : (1 << 20)), (unsigned int)(chunks < 65535 ? chunks : 65535));
    plan_rows_kernel<T><<<grid, threads, 0, stream>>>((const T*)src, (T*)dst, *plan, rows);
  } else {
    plan_kernel<T><<<grid_for(plan->count), kBlockSize, 0, stream>>>((const T*)src, (T*)dst, *plan);
  }
}

template <typename T>
void launch_gather(const void* data, const void* indices, int indices_i64, void* out, const ir_gather_geom* g,
                   int64_t count, cudaStream_t stream) {
  if (indices_i64)
    gather_kernel<T, int64_t><<<grid_for(count), kBlockSize, 0, stream>>>((const T*)data, (const int64_t*)indices,
                                                                           (T*)out, *g, count);
  else
    gather_kernel<T, int32_t><<<grid_for(count), kBlockSize, 0, stream>>>((const T*)data, (const int32_t*)indices,
                                                                           (T*)out, *g, count);
}

template <typename T>
void launch_fill(void* dst, int64_t count, const unsigned char* value, cudaStream_t stream) {
  T v;
  memcpy(&v, value, sizeof v);
  fill_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>((T*)dst, count, v);
}

template <typename T>
cudaError_t preload_size() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, plan_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, plan_rows_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, plan_grid_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, plan_vec_kernel<T>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, plan_tile_kernel<T, 1>)) != cudaSuccess) return e;
  if constexpr (sizeof(T) <= 2)
    if ((e = cudaFuncGetAttributes(&attr, plan_tile_kernel<T, 4 / sizeof(T)>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, gather_kernel<T, int64_t>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, gather_kernel<T, int32_t>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, fill_kernel<T>);
}

}  // namespace

extern "C" cudaError_t cuda_layout_run_plan(const ir_copy_plan* given, const void* src, void* dst, cudaStream_t stream) {
  if (given->count <= 0) return cudaSuccess;
  ir_copy_plan simplified = *given;
  simplify_plan(&simplified);
  const ir_copy_plan* plan = &simplified;
  switch (plan->elem_size) {
    case 1: launch_plan<uint8_t>(plan, src, dst, stream); break;
    case 2: launch_plan<uint16_t>(plan, src, dst, stream); break;
    case 4: launch_plan<uint32_t>(plan, src, dst, stream); break;
    case 8: launch_plan<unsigned long long>(plan, src, dst, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_layout_gather(const void* data, const void* indices, int indices_i64, void* out,
                                          const ir_gather_geom* g, int elem_size, cudaStream_t stream) {
  const int64_t count = g->outer * g->n_indices * g->inner;
  if (count <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: launch_gather<uint8_t>(data, indices, indices_i64, out, g, count, stream); break;
    case 2: launch_gather<uint16_t>(data, indices, indices_i64, out, g, count, stream); break;
    case 4: launch_gather<uint32_t>(data, indices, indices_i64, out, g, count, stream); break;
    case 8: launch_gather<unsigned long long>(data, indices, indices_i64, out, g, count, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_layout_fill(void* dst, int64_t count, const unsigned char* value, int elem_size,
                                        cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: launch_fill<uint8_t>(dst, count, value, stream); break;
    case 2: launch_fill<uint16_t>(dst, count, value, stream); break;
    case 4: launch_fill<uint32_t>(dst, count, value, stream); break;
    case 8: launch_fill<unsigned long long>(dst, count, value, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_layout_write_i64(int64_t* dst, const int64_t* values, int n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (n > GFX_MAX_RANK) return cudaErrorInvalidValue;
  i64_values v = {};
  for (int i = 0; i < n; i++) v.v[i] = values[i];
  v.n = n;
  write_i64_kernel<<<1, GFX_MAX_RANK, 0, stream>>>(dst, v);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_layout_preload(void) {
  cudaError_t e;
  if ((e = preload_size<uint8_t>()) != cudaSuccess) return e;
  if ((e = preload_size<uint16_t>()) != cudaSuccess) return e;
  if ((e = preload_size<uint32_t>()) != cudaSuccess) return e;
  if ((e = preload_size<unsigned long long>()) != cudaSuccess) return e;
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, write_i64_kernel);
}

/* gfxep CUDA backend — the tiled Attention kernels (flash-attention style; see cuda_attention.h).
 *
 * A block owns a tile of queries of one (batch, head) and streams keys and values through shared
 * memory one tile at a time. Each query row keeps a running maximum m of its scores, a running sum l
 * of exp(score - m) and an accumulator o of exp(score - m) x V; when a tile raises the maximum, l and
 * o are first multiplied by exp(m_old - m_new) (the online softmax). So a row's scores are never
 * stored whole, and K and V are read once per tile of queries instead of once per query. Every sum
 * is float32. The semantics are the row kernel's (cuda_attention.cu) and the reference's: a key
 * hidden by causality or a false bool mask, or whose score is -inf or NaN, adds nothing, and a row
 * with no key left is zeros.
 *
 * MMA (float16, bfloat16; compute capability 8.0+): 4 warps, 16 query rows each. Q's fragments are
 * loaded into registers once; per tile S = Q Kᵀ and O += P V are mma.sync.m16n8k16 products with
 * float32 accumulators, whose documented register layout (thread lane: group g = lane / 4 holds rows
 * g and g + 8, t = lane % 4 holds columns 2t, 2t + 1 of each 8-column piece) lets the softmax run in
 * registers, each row's maximum and sum combined across the 4 threads of its group by shuffles, and
 * lets the probabilities P become the A operand of the second product without leaving registers.
 * SIMT (float32, and the half types on older GPUs): 8 threads per query row, 16 rows per block; each
 * thread takes every 8th key of a tile for the scores and every 8th element of the head for the
 * output, and the row's probabilities travel between its 8 threads by shuffles.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_preload.cuh"
#include "backend/cuda/cuda_mma.cuh"
#include "ir/tensor.h"

namespace {

const int kThreads = 128;
const int64_t kMaxGridY = 65535;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* The score of key j for query i of (b, h) once the masks apply: x plus the float masks, or -inf for
 * a key hidden by causality or a bool mask, a NaN score, and any query or key past the end (tiles
 * overhang the sequences). */
template <typename T>
__device__ __forceinline__ float masked_score(float x, const void* __restrict__ mask, const T* __restrict__ mask2,
                                              const cuda_attention_args& a, int64_t b, int64_t h, int64_t i,
                                              int64_t j) {
  if (i >= a.q_seq || j >= a.kv_seq || (a.is_causal && j > i)) return -INFINITY;
  if (a.mask_kind) {
    const int64_t at = b * a.mask_stride[0] + h * a.mask_stride[1] + i * a.mask_stride[2] + j * a.mask_stride[3];
    if (a.mask_kind == 1) {
      if (static_cast<const uint8_t*>(mask)[at] == 0) return -INFINITY;
    } else {
      x += to_float(static_cast<const T*>(mask)[at]);
    }
  }
  if (a.has_mask2)
    x += to_float(mask2[b * a.mask2_stride[0] + h * a.mask2_stride[1] + i * a.mask2_stride[2] + j * a.mask2_stride[3]]);
  return isnan(x) ? -INFINITY : x;
}

/* The online softmax step of one row for a new tile whose largest (masked) score is `tile_max`:
 * returns the factor that rescales the row's running sum and accumulator, and the maximum the
 * tile's exponentials are taken against (0 while every score so far is -inf, so that exp gives 0
 * rather than NaN). */
__device__ __forceinline__ float online_step(float* m, float tile_max, float* m_use) {
  const float m_new = fmaxf(*m, tile_max);
  *m_use = m_new == -INFINITY ? 0.0f : m_new;
  const float alpha = __expf(*m - *m_use); /* 0 when nothing came before */
  *m = m_new;
  return alpha;
}

/* A row's sum is 0 only when every key was hidden: the row is zeros then (a NaN sum stays NaN). */
__device__ __forceinline__ float inverse_sum(float l) { return l == 0.0f ? 0.0f : 1.0f / l; }

/* ================================ MMA: float16 / bfloat16 ================================ */

/* Two neighbouring 16-bit elements of a shared tile as one register (the first in the low half). */
__device__ __forceinline__ uint32_t ld_pair(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
/* Two 16-bit elements a row apart (a column of B), the upper row's in the high half. */
__device__ __forceinline__ uint32_t ld_column_pair(const uint16_t* p, int ld) {
  return (uint32_t)p[0] | ((uint32_t)p[ld] << 16);
}

/* Rows [r0, r0 + rows) of an [n, dim] matrix of 16-bit elements (row stride `stride`, unit stride
 * along a row) into a shared tile of row pitch LD (16-bit elements), zeros past n and dim; with
 * `vec`, 16 bytes at a time (dim is then a multiple of 8 and every row 16-byte aligned). */
template <int DMAX, int LD>
__device__ __forceinline__ void load_tile16(uint16_t* tile, const uint16_t* __restrict__ src, int64_t stride,
                                            int64_t r0, int64_t n, int64_t dim, int rows, int vec) {
  if (vec) {
    const int chunks = DMAX / 8;
    for (int idx = threadIdx.x; idx < rows * chunks; idx += blockDim.x) {
      const int r = idx / chunks, c = idx % chunks;
      uint4 val = make_uint4(0u, 0u, 0u, 0u);
      if (r0 + r < n && c * 8 < dim) val = *reinterpret_cast<const uint4*>(src + (r0 + r) * stride + c * 8);
      *reinterpret_cast<uint4*>(tile + r * LD + c * 8) = val;
    }
  } else {
    for (int idx = threadIdx.x; idx < rows * DMAX; idx += blockDim.x) {
      const int r = idx / DMAX, d = idx % DMAX;
      tile[r * LD + d] = r0 + r < n && d < dim ? src[(r0 + r) * stride + d] : (uint16_t)0;
    }
  }
}

/* The next K and V tiles held in registers, 16 bytes per load (the vector path): fetched before the
 * current tile's products, so that those loads are in flight while the tensor cores work, and
 * stored to shared memory once the tile is done with. Thread i takes the 16-byte pieces i, i + 128,
 * ... of each tile (row r = piece / (DMAX / 8)). */
template <int DMAX, int BC, int LD>
struct kv_prefetch {
  static constexpr int kPieces = BC * (DMAX / 8);
  static constexpr int kPer = (kPieces + kThreads - 1) / kThreads;
  uint4 k[kPer], v[kPer];

  __device__ __forceinline__ void fetch(const uint16_t* __restrict__ kb, const uint16_t* __restrict__ vb,
                                        const cuda_attention_args& a, int64_t j0) {
#pragma unroll
    for (int u = 0; u < kPer; u++) {
      const int piece = threadIdx.x + u * kThreads, r = piece / (DMAX / 8), c = piece % (DMAX / 8);
      k[u] = v[u] = make_uint4(0u, 0u, 0u, 0u);
      if (piece < kPieces && j0 + r < a.kv_seq) {
        if (c * 8 < a.head_size) k[u] = *reinterpret_cast<const uint4*>(kb + (j0 + r) * a.k_stride[2] + c * 8);
        if (c * 8 < a.v_head_size) v[u] = *reinterpret_cast<const uint4*>(vb + (j0 + r) * a.v_stride[2] + c * 8);
      }
    }
  }

  __device__ __forceinline__ void store(uint16_t* ks, uint16_t* vs) const {
#pragma unroll
    for (int u = 0; u < kPer; u++) {
      const int piece = threadIdx.x + u * kThreads, r = piece / (DMAX / 8), c = piece % (DMAX / 8);
      if (piece < kPieces) {
        *reinterpret_cast<uint4*>(ks + r * LD + c * 8) = k[u];
        *reinterpret_cast<uint4*>(vs + r * LD + c * 8) = v[u];
      }
    }
  }
};

/* A warp's 16 query rows (i0 = its group's row, i1 = i0 + 8) against one tile of BC keys from j0, K and
 * V in shared memory (ks, vs, rows LD apart): S = Q Kᵀ, scale and masks, the online softmax step, and
 * O += P V; o, the running maxima m0 / m1 and sums l0 / l1 (this thread's share) carry over tiles.
 * Shared by the whole-block and split kernels. */
#ifdef GFX_CUDA_MMA
template <typename T, int DMAX, int BC, int LD>
__device__ __forceinline__ void rows_take_tile(const uint32_t (&qa)[DMAX / 16][4], const uint16_t* ks,
                                               const uint16_t* vs, float (&o)[DMAX / 8][4], float& m0, float& m1,
                                               float& l0, float& l1, const void* __restrict__ mask,
                                               const T* __restrict__ mask2, const cuda_attention_args& a, int64_t b,
                                               int64_t h, int64_t i0, int64_t i1, int64_t j0, int g, int t) {
  typedef cuda_mma_traits<T> mt;
    /* S = Q Kᵀ: n-tile nt holds keys j0 + nt * 8 .. + 7 */
    float s[BC / 8][4];
#pragma unroll
    for (int nt = 0; nt < BC / 8; nt++) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
      for (int kc = 0; kc < DMAX / 16; kc++) {
        const uint16_t* kr = &ks[(nt * 8 + g) * LD + kc * 16 + 2 * t];
        mt::mma(s[nt], qa[kc], ld_pair(kr), ld_pair(kr + 8));
      }
    }
    /* scale, masks, and each row's maximum over the tile (across the 4 threads of the group) */
    float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int64_t j = j0 + nt * 8 + 2 * t + (e & 1);
        const float x = masked_score<T>(s[nt][e] * a.scale, mask, mask2, a, b, h, e < 2 ? i0 : i1, j);
        s[nt][e] = x;
        if (e < 2)
          mx0 = fmaxf(mx0, x);
        else
          mx1 = fmaxf(mx1, x);
      }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    float use0, use1;
    const float alpha0 = online_step(&m0, mx0, &use0), alpha1 = online_step(&m1, mx1, &use1);
    l0 *= alpha0;
    l1 *= alpha1;
#pragma unroll
    for (int dt = 0; dt < DMAX / 8; dt++) {
      o[dt][0] *= alpha0, o[dt][1] *= alpha0;
      o[dt][2] *= alpha1, o[dt][3] *= alpha1;
    }
#pragma unroll
    for (int nt = 0; nt < BC / 8; nt++) {
      s[nt][0] = __expf(s[nt][0] - use0), s[nt][1] = __expf(s[nt][1] - use0);
      s[nt][2] = __expf(s[nt][2] - use1), s[nt][3] = __expf(s[nt][3] - use1);
      l0 += s[nt][0] + s[nt][1];
      l1 += s[nt][2] + s[nt][3];
    }
    /* O += P V, 16 keys at a time: the accumulators of n-tiles 2kc and 2kc + 1 are the A fragment */
#pragma unroll
    for (int kc = 0; kc < BC / 16; kc++) {
      const uint32_t pa[4] = {mt::pack(s[2 * kc][0], s[2 * kc][1]), mt::pack(s[2 * kc][2], s[2 * kc][3]),
                              mt::pack(s[2 * kc + 1][0], s[2 * kc + 1][1]),
                              mt::pack(s[2 * kc + 1][2], s[2 * kc + 1][3])};
      const uint16_t* vr = &vs[(kc * 16 + 2 * t) * LD + g];
#pragma unroll
      for (int dt = 0; dt < DMAX / 8; dt++)
        mt::mma(o[dt], pa, ld_column_pair(vr + dt * 8, LD), ld_column_pair(vr + 8 * LD + dt * 8, LD));
    }
}
#endif

/* One block: 64 queries (4 warps of 16 rows) of each (batch, head) it is given, keys and values in
 * tiles of BC; DMAX (a multiple of 16, at least both head sizes) is the padded head. */
template <typename T, int DMAX, int BC>
__global__ void __launch_bounds__(kThreads) attention_mma_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                                 const T* __restrict__ v, const void* __restrict__ mask,
                                                                 const T* __restrict__ mask2, T* __restrict__ y,
                                                                 cuda_attention_args a) {
#ifdef GFX_CUDA_MMA
  constexpr int BR = 64, LD = DMAX + 8; /* 8 elements of padding: rows 16 bytes apart in the banks */
  __shared__ __align__(16) uint16_t qs[BR * LD];
  __shared__ __align__(16) uint16_t ks[BC * LD];
  __shared__ __align__(16) uint16_t vs[BC * LD];
  typedef cuda_mma_traits<T> mt;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int r0 = warp * 16 + g; /* this thread's rows in the tile: r0 and r0 + 8 */
  const int64_t q0 = (int64_t)blockIdx.x * BR;
  const int64_t i0 = q0 + r0, i1 = i0 + 8;
  /* with causality no query of the tile sees a key past its last query */
  const int64_t kv_end = a.is_causal && q0 + BR < a.kv_seq ? q0 + BR : a.kv_seq;
  for (int64_t bh = blockIdx.y; bh < a.batch * a.q_heads; bh += gridDim.y) {
    const int64_t b = bh / a.q_heads, h = bh % a.q_heads, kh = h / a.group;
    const uint16_t* qb = reinterpret_cast<const uint16_t*>(q + b * a.q_stride[0] + h * a.q_stride[1]);
    const uint16_t* kb = reinterpret_cast<const uint16_t*>(k + b * a.k_stride[0] + kh * a.k_stride[1]);
    const uint16_t* vb = reinterpret_cast<const uint16_t*>(v + b * a.v_stride[0] + kh * a.v_stride[1]);
    __syncthreads(); /* the previous (b, h) is done with the tiles */
    load_tile16<DMAX, LD>(qs, qb, a.q_stride[2], q0, a.q_seq, a.head_size, BR, a.vector_loads);
    __syncthreads();
    uint32_t qa[DMAX / 16][4];
#pragma unroll
    for (int kc = 0; kc < DMAX / 16; kc++) {
      qa[kc][0] = ld_pair(&qs[r0 * LD + kc * 16 + 2 * t]);
      qa[kc][1] = ld_pair(&qs[(r0 + 8) * LD + kc * 16 + 2 * t]);
      qa[kc][2] = ld_pair(&qs[r0 * LD + kc * 16 + 2 * t + 8]);
      qa[kc][3] = ld_pair(&qs[(r0 + 8) * LD + kc * 16 + 2 * t + 8]);
    }
    float o[DMAX / 8][4];
#pragma unroll
    for (int dt = 0; dt < DMAX / 8; dt++) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
    kv_prefetch<DMAX, BC, LD> next;
    if (a.vector_loads) next.fetch(kb, vb, a, 0);
    for (int64_t j0 = 0; j0 < kv_end; j0 += BC) {
      __syncthreads(); /* every warp is done with the previous K and V tiles */
      if (a.vector_loads) {
        next.store(ks, vs);
      } else {
        load_tile16<DMAX, LD>(ks, kb, a.k_stride[2], j0, a.kv_seq, a.head_size, BC, 0);
        load_tile16<DMAX, LD>(vs, vb, a.v_stride[2], j0, a.kv_seq, a.v_head_size, BC, 0);
      }
      __syncthreads();
      if (a.vector_loads && j0 + BC < kv_end) next.fetch(kb, vb, a, j0 + BC);
      rows_take_tile<T, DMAX, BC, LD>(qa, ks, vs, o, m0, m1, l0, l1, mask, mask2, a, b, h, i0, i1, j0, g, t);
    }
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    const float inv0 = inverse_sum(l0), inv1 = inverse_sum(l1);
    T* yb = y + b * a.y_stride[0] + h * a.y_stride[1];
#pragma unroll
    for (int dt = 0; dt < DMAX / 8; dt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int64_t i = e < 2 ? i0 : i1, d = dt * 8 + 2 * t + (e & 1);
        if (i < a.q_seq && d < a.v_head_size)
          yb[i * a.y_stride[2] + d * a.y_stride[3]] = from_float<T>(o[dt][e] * (e < 2 ? inv0 : inv1));
      }
  }
#else
  (void)q, (void)k, (void)v, (void)mask, (void)mask2, (void)y, (void)a;
#endif
}

/* The same products for few (batch, head) pairs and short sequences, where 64-query blocks leave most
 * of the GPU idle and each warp walks every key tile in turn (ViT-tiny: 12 blocks, 4 tiles per warp):
 * one block per 16 queries, its 4 warps sharing those rows and taking every 4th tile of BC keys each,
 * each warp with its own tiles in shared memory, its own running maximum, sum and accumulator. At the
 * end the warps' partial results meet in shared memory (over the tiles' space) and are combined as
 * the online softmax combines tiles: m = max m_w, l = sum l_w exp(m_w - m), o likewise. */
template <typename T, int DMAX, int BC>
__global__ void __launch_bounds__(kThreads) attention_mma_split_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                                       const T* __restrict__ v,
                                                                       const void* __restrict__ mask,
                                                                       const T* __restrict__ mask2, T* __restrict__ y,
                                                                       cuda_attention_args a) {
#ifdef GFX_CUDA_MMA
  constexpr int BR = 16, LD = DMAX + 8, WARPS = kThreads / 32;
  constexpr int TILE = BC * LD;                               /* 16-bit elements of one K or V tile */
  constexpr int TILE_BYTES = 2 * WARPS * TILE * 2;            /* every warp's K and V tiles */
  constexpr int COMBINE_BYTES = WARPS * BR * (DMAX + 2) * 4;  /* every warp's o, m and l, float32 */
  static_assert(COMBINE_BYTES <= TILE_BYTES, "the combine reuses the tiles' space");
  __shared__ __align__(16) uint16_t qs[BR * LD];
  __shared__ __align__(16) unsigned char pool[TILE_BYTES];
  typedef cuda_mma_traits<T> mt;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  uint16_t* ks = reinterpret_cast<uint16_t*>(pool) + (2 * warp) * TILE;
  uint16_t* vs = ks + TILE;
  const int64_t q0 = (int64_t)blockIdx.x * BR;
  const int64_t i0 = q0 + g, i1 = i0 + 8;
  const int64_t kv_end = a.is_causal && q0 + BR < a.kv_seq ? q0 + BR : a.kv_seq;
  for (int64_t bh = blockIdx.y; bh < a.batch * a.q_heads; bh += gridDim.y) {
    const int64_t b = bh / a.q_heads, h = bh % a.q_heads, kh = h / a.group;
    const uint16_t* qb = reinterpret_cast<const uint16_t*>(q + b * a.q_stride[0] + h * a.q_stride[1]);
    const uint16_t* kb = reinterpret_cast<const uint16_t*>(k + b * a.k_stride[0] + kh * a.k_stride[1]);
    const uint16_t* vb = reinterpret_cast<const uint16_t*>(v + b * a.v_stride[0] + kh * a.v_stride[1]);
    __syncthreads(); /* the previous (b, h) is done with Q and with the combine's space */
    load_tile16<DMAX, LD>(qs, qb, a.q_stride[2], q0, a.q_seq, a.head_size, BR, a.vector_loads);
    __syncthreads();
    uint32_t qa[DMAX / 16][4];
#pragma unroll
    for (int kc = 0; kc < DMAX / 16; kc++) {
      qa[kc][0] = ld_pair(&qs[g * LD + kc * 16 + 2 * t]);
      qa[kc][1] = ld_pair(&qs[(g + 8) * LD + kc * 16 + 2 * t]);
      qa[kc][2] = ld_pair(&qs[g * LD + kc * 16 + 2 * t + 8]);
      qa[kc][3] = ld_pair(&qs[(g + 8) * LD + kc * 16 + 2 * t + 8]);
    }
    float o[DMAX / 8][4];
#pragma unroll
    for (int dt = 0; dt < DMAX / 8; dt++) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
    for (int64_t j0 = (int64_t)warp * BC; j0 < kv_end; j0 += (int64_t)WARPS * BC) {
      __syncwarp(); /* this warp is done with its previous tiles */
      /* this warp's K and V tiles, zeros past the ends; 16 bytes at a time where the heads allow */
      if (a.vector_loads) {
        for (int idx = lane; idx < BC * (DMAX / 8); idx += 32) {
          const int r = idx / (DMAX / 8), c = idx % (DMAX / 8);
          uint4 kv = make_uint4(0u, 0u, 0u, 0u), vv = kv;
          if (j0 + r < a.kv_seq) {
            if (c * 8 < a.head_size) kv = *reinterpret_cast<const uint4*>(kb + (j0 + r) * a.k_stride[2] + c * 8);
            if (c * 8 < a.v_head_size) vv = *reinterpret_cast<const uint4*>(vb + (j0 + r) * a.v_stride[2] + c * 8);
          }
          *reinterpret_cast<uint4*>(ks + r * LD + c * 8) = kv;
          *reinterpret_cast<uint4*>(vs + r * LD + c * 8) = vv;
        }
      } else {
        for (int idx = lane; idx < BC * DMAX; idx += 32) {
          const int r = idx / DMAX, d = idx % DMAX;
          const int in = j0 + r < a.kv_seq;
          ks[r * LD + d] = in && d < a.head_size ? kb[(j0 + r) * a.k_stride[2] + d] : (uint16_t)0;
          vs[r * LD + d] = in && d < a.v_head_size ? vb[(j0 + r) * a.v_stride[2] + d] : (uint16_t)0;
        }
      }
      __syncwarp();
      rows_take_tile<T, DMAX, BC, LD>(qa, ks, vs, o, m0, m1, l0, l1, mask, mask2, a, b, h, i0, i1, j0, g, t);
    }
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    /* the warps' partial rows meet: os[w][row][d], then ms[w][row] and ls[w][row] */
    __syncthreads(); /* every warp is done with its tiles: their space becomes the combine's */
    float* os = reinterpret_cast<float*>(pool);
    float* ms = os + WARPS * BR * DMAX;
    float* ls = ms + WARPS * BR;
#pragma unroll
    for (int dt = 0; dt < DMAX / 8; dt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int row = e < 2 ? g : g + 8, d = dt * 8 + 2 * t + (e & 1);
        os[(warp * BR + row) * DMAX + d] = o[dt][e];
      }
    if (t == 0) {
      ms[warp * BR + g] = m0, ms[warp * BR + g + 8] = m1;
      ls[warp * BR + g] = l0, ls[warp * BR + g + 8] = l1;
    }
    __syncthreads();
    T* yb = y + b * a.y_stride[0] + h * a.y_stride[1];
    for (int idx = threadIdx.x; idx < BR * DMAX; idx += blockDim.x) {
      const int row = idx / DMAX, d = idx % DMAX;
      const int64_t i = q0 + row;
      if (i >= a.q_seq || d >= a.v_head_size) continue;
      float m = -INFINITY;
#pragma unroll
      for (int w = 0; w < WARPS; w++) m = fmaxf(m, ms[w * BR + row]);
      const float ref = m == -INFINITY ? 0.0f : m; /* no key anywhere: every weight 0, the row zeros */
      float l = 0.0f, acc = 0.0f;
#pragma unroll
      for (int w = 0; w < WARPS; w++) {
        const float f = __expf(ms[w * BR + row] - ref);
        l += ls[w * BR + row] * f;
        acc += os[(w * BR + row) * DMAX + d] * f;
      }
      yb[i * a.y_stride[2] + d * a.y_stride[3]] = from_float<T>(acc * inverse_sum(l));
    }
  }
#else
  (void)q, (void)k, (void)v, (void)mask, (void)mask2, (void)y, (void)a;
#endif
}

/* ================================ SIMT: float32 and the rest ================================ */

/* One block: 16 queries, 8 threads each, of each (batch, head) it is given; keys and values in tiles
 * of BC (a multiple of 8), the tiles held as float32. */
template <typename T, int DMAX, int BC>
__global__ void __launch_bounds__(kThreads) attention_simt_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                                                  const T* __restrict__ v, const void* __restrict__ mask,
                                                                  const T* __restrict__ mask2, T* __restrict__ y,
                                                                  cuda_attention_args a) {
  constexpr int TPR = 8, BR = kThreads / TPR, KPT = BC / TPR, DPT = DMAX / TPR;
  /* one float of padding: the rows threads read side by side fall in different banks */
  __shared__ float qs[BR][DMAX + 1];
  __shared__ float ks[BC][DMAX + 1];
  __shared__ float vs[BC][DMAX];
  const int lane = threadIdx.x & 31, r = threadIdx.x / TPR, t = threadIdx.x % TPR;
  const int group = lane & ~(TPR - 1); /* the first lane of this row's threads */
  const int64_t q0 = (int64_t)blockIdx.x * BR, i = q0 + r;
  const int64_t kv_end = a.is_causal && q0 + BR < a.kv_seq ? q0 + BR : a.kv_seq;
  for (int64_t bh = blockIdx.y; bh < a.batch * a.q_heads; bh += gridDim.y) {
    const int64_t b = bh / a.q_heads, h = bh % a.q_heads, kh = h / a.group;
    const T* qb = q + b * a.q_stride[0] + h * a.q_stride[1];
    const T* kb = k + b * a.k_stride[0] + kh * a.k_stride[1];
    const T* vb = v + b * a.v_stride[0] + kh * a.v_stride[1];
    __syncthreads();
    for (int idx = threadIdx.x; idx < BR * DMAX; idx += blockDim.x) {
      const int rr = idx / DMAX, d = idx % DMAX;
      qs[rr][d] = q0 + rr < a.q_seq && d < a.head_size ? to_float(qb[(q0 + rr) * a.q_stride[2] + d]) : 0.0f;
    }
    float o[DPT];
#pragma unroll
    for (int w = 0; w < DPT; w++) o[w] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (int64_t j0 = 0; j0 < kv_end; j0 += BC) {
      __syncthreads(); /* Q is in; the previous K and V tiles are done with */
      for (int idx = threadIdx.x; idx < BC * DMAX; idx += blockDim.x) {
        const int c = idx / DMAX, d = idx % DMAX;
        const int in = j0 + c < a.kv_seq;
        ks[c][d] = in && d < a.head_size ? to_float(kb[(j0 + c) * a.k_stride[2] + d]) : 0.0f;
        vs[c][d] = in && d < a.v_head_size ? to_float(vb[(j0 + c) * a.v_stride[2] + d]) : 0.0f;
      }
      __syncthreads();
      float s[KPT];
      float mx = -INFINITY;
#pragma unroll
      for (int u = 0; u < KPT; u++) {
        const int c = t + TPR * u;
        float dot = 0.0f;
#pragma unroll 8
        for (int d = 0; d < DMAX; d++) dot = fmaf(qs[r][d], ks[c][d], dot);
        s[u] = masked_score<T>(dot * a.scale, mask, mask2, a, b, h, i, j0 + c);
        mx = fmaxf(mx, s[u]);
      }
#pragma unroll
      for (int off = 1; off < TPR; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      float use;
      const float alpha = online_step(&m, mx, &use);
      l *= alpha;
#pragma unroll
      for (int w = 0; w < DPT; w++) o[w] *= alpha;
#pragma unroll
      for (int u = 0; u < KPT; u++) {
        s[u] = expf(s[u] - use);
        l += s[u];
      }
      /* every key of the tile: its probability from the thread that holds it */
#pragma unroll
      for (int u = 0; u < KPT; u++)
#pragma unroll
        for (int src = 0; src < TPR; src++) {
          const float p = __shfl_sync(0xffffffffu, s[u], group | src);
          const float* vr = vs[src + TPR * u];
#pragma unroll
          for (int w = 0; w < DPT; w++) o[w] = fmaf(p, vr[t + TPR * w], o[w]);
        }
    }
#pragma unroll
    for (int off = 1; off < TPR; off <<= 1) l += __shfl_xor_sync(0xffffffffu, l, off);
    const float inv = inverse_sum(l);
    if (i < a.q_seq) {
      T* yr = y + b * a.y_stride[0] + h * a.y_stride[1] + i * a.y_stride[2];
#pragma unroll
      for (int w = 0; w < DPT; w++) {
        const int64_t d = t + TPR * w;
        if (d < a.v_head_size) yr[d * a.y_stride[3]] = from_float<T>(o[w] * inv);
      }
    }
  }
}

/* ================================ launches ================================ */

dim3 grid_of(const cuda_attention_args& a, int rows_per_block) {
  const int64_t bh = a.batch * a.q_heads;
  return dim3((unsigned)((a.q_seq + rows_per_block - 1) / rows_per_block), (unsigned)(bh < kMaxGridY ? bh : kMaxGridY));
}

/* the smallest padded head that holds both head sizes */
int padded_head(const cuda_attention_args& a) {
  const int64_t d = a.head_size > a.v_head_size ? a.head_size : a.v_head_size;
  return d <= 32 ? 32 : d <= 64 ? 64 : 128;
}

template <typename T, int DMAX, int BC>
void launch_mma(const void* q, const void* k, const void* v, const void* mask, const void* mask2, void* y,
                const cuda_attention_args& a, cudaStream_t stream) {
  attention_mma_kernel<T, DMAX, BC><<<grid_of(a, 64), kThreads, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, static_cast<const T*>(mask2),
      static_cast<T*>(y), a);
}

template <typename T, int DMAX, int BC>
void launch_mma_split(const void* q, const void* k, const void* v, const void* mask, const void* mask2, void* y,
                      const cuda_attention_args& a, cudaStream_t stream) {
  attention_mma_split_kernel<T, DMAX, BC><<<grid_of(a, 16), kThreads, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, static_cast<const T*>(mask2),
      static_cast<T*>(y), a);
}

/* Whether the MMA path splits each block's keys over its warps: forced by GFXEP_CUDA_ATTENTION_SPLIT=1
 * or 0, else where 64-query blocks would number fewer than kSplitBelow (two per SM of an H200). */
const int64_t kSplitBelow = 264;
int split_forced() { /* 1 or 0 as GFXEP_CUDA_ATTENTION_SPLIT asks, -1 when it does not */
  const char* e = getenv("GFXEP_CUDA_ATTENTION_SPLIT");
  return e && (e[0] == '0' || e[0] == '1') && !e[1] ? e[0] - '0' : -1;
}

bool split_keys(const cuda_attention_args& a) {
  static const int forced = split_forced(); /* read once per process, not at every launch */
  if (forced >= 0) return forced == 1;
  return (a.q_seq + 63) / 64 * a.batch * a.q_heads < kSplitBelow;
}

template <typename T, int DMAX, int BC>
void launch_simt(const void* q, const void* k, const void* v, const void* mask, const void* mask2, void* y,
                 const cuda_attention_args& a, cudaStream_t stream) {
  attention_simt_kernel<T, DMAX, BC><<<grid_of(a, kThreads / 8), kThreads, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), mask, static_cast<const T*>(mask2),
      static_cast<T*>(y), a);
}

/* Tile sizes per padded head, within 48 KiB of static shared memory: MMA 64 keys (32 for a head of
 * 128: 34 KiB), SIMT 32 keys (16 for 128). */
template <typename T>
cudaError_t launch_tiled(cuda_attention_path path, const void* q, const void* k, const void* v, const void* mask,
                         const void* mask2, void* y, const cuda_attention_args& a, cudaStream_t stream) {
  const int dmax = padded_head(a);
  if (path == CUDA_ATTENTION_SIMT) {
    if (dmax == 32) launch_simt<T, 32, 32>(q, k, v, mask, mask2, y, a, stream);
    else if (dmax == 64) launch_simt<T, 64, 32>(q, k, v, mask, mask2, y, a, stream);
    else launch_simt<T, 128, 16>(q, k, v, mask, mask2, y, a, stream);
    return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t launch_tiled_half(cuda_attention_path path, const void* q, const void* k, const void* v, const void* mask,
                              const void* mask2, void* y, const cuda_attention_args& a, cudaStream_t stream) {
  if (path != CUDA_ATTENTION_MMA) return launch_tiled<T>(path, q, k, v, mask, mask2, y, a, stream);
  const int dmax = padded_head(a);
  if (split_keys(a)) { /* tiles of 32 keys (16 for a head of 128): each warp's pair within 48 KiB in all */
    if (dmax == 32) launch_mma_split<T, 32, 32>(q, k, v, mask, mask2, y, a, stream);
    else if (dmax == 64) launch_mma_split<T, 64, 32>(q, k, v, mask, mask2, y, a, stream);
    else launch_mma_split<T, 128, 16>(q, k, v, mask, mask2, y, a, stream);
    return cudaGetLastError();
  }
  if (dmax == 32) launch_mma<T, 32, 64>(q, k, v, mask, mask2, y, a, stream);
  else if (dmax == 64) launch_mma<T, 64, 64>(q, k, v, mask, mask2, y, a, stream);
  else launch_mma<T, 128, 32>(q, k, v, mask, mask2, y, a, stream);
  return cudaGetLastError();
}

}  // namespace

cudaError_t cuda_attention_tiled(int dtype, cuda_attention_path path, const void* q, const void* k, const void* v,
                                 const void* mask, const void* mask2, void* y, const cuda_attention_args* a,
                                 cudaStream_t stream) {
  if (a->batch * a->q_heads * a->q_seq == 0 || a->v_head_size == 0) return cudaSuccess;
  if (a->head_size > CUDA_ATTENTION_TILED_MAX_HEAD || a->v_head_size > CUDA_ATTENTION_TILED_MAX_HEAD)
    return cudaErrorInvalidValue;
  switch (dtype) {
    case GFX_DTYPE_F32: return launch_tiled<float>(path, q, k, v, mask, mask2, y, *a, stream);
    case GFX_DTYPE_F16: return launch_tiled_half<__half>(path, q, k, v, mask, mask2, y, *a, stream);
    case GFX_DTYPE_BF16: return launch_tiled_half<__nv_bfloat16>(path, q, k, v, mask, mask2, y, *a, stream);
    default: return cudaErrorInvalidValue;
  }
}

template <typename T>
static cudaError_t preload_simt() {
  const void* kernels[] = {(const void*)attention_simt_kernel<T, 32, 32>, (const void*)attention_simt_kernel<T, 64, 32>,
                           (const void*)attention_simt_kernel<T, 128, 16>};
  return CUDA_LOAD_KERNELS(kernels);
}

template <typename T>
static cudaError_t preload_mma() {
  const void* kernels[] = {(const void*)attention_mma_kernel<T, 32, 64>,       (const void*)attention_mma_kernel<T, 64, 64>,
                           (const void*)attention_mma_kernel<T, 128, 32>,      (const void*)attention_mma_split_kernel<T, 32, 32>,
                           (const void*)attention_mma_split_kernel<T, 64, 32>, (const void*)attention_mma_split_kernel<T, 128, 16>};
  const cudaError_t e = CUDA_LOAD_KERNELS(kernels);
  return e != cudaSuccess ? e : preload_simt<T>();
}

extern "C" cudaError_t cuda_attention_tiled_preload(void) {
  cudaError_t e;
  if ((e = preload_simt<float>()) != cudaSuccess) return e;
  if ((e = preload_mma<__half>()) != cudaSuccess) return e;
  return preload_mma<__nv_bfloat16>();
}

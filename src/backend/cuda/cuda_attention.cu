/* gfxep CUDA backend — the Attention row kernel and the choice of kernel (the tiled ones are in
 * cuda_attention_tiled.cu).
 *
 * One block per query row (grid-stride over the rows of every batch and head): the scores of all
 * keys, their maximum, the exponentials and their sum, then the weighted sum of V, every sum in
 * float32. A key hidden by causality or a false bool mask is marked NaN in the scores; a row with
 * no key left (every one hidden, or -inf in a float mask) is zeros, as the reference backend and
 * ONNX Runtime give.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cuda_attention.h"
#include "backend/cuda/cuda_preload.cuh"
#include "ir/tensor.h"

namespace {

const int kBlockSize = 128;
const int64_t kMaxBlocks = 65535;
/* blocks of the scratch path (each holds one row of scores in scratch) */
const int64_t kScratchBlocks = 1024;

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename F> __device__ inline F from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* The block's sum (max = 0) or maximum (max = 1) of v, in every thread. red holds 32 floats. */
__device__ float block_reduce(float v, int max, float* red) {
  for (int off = 16; off > 0; off >>= 1) {
    const float o = __shfl_down_sync(0xffffffffu, v, off);
    v = max ? fmaxf(v, o) : v + o;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  __syncthreads(); /* red may still be read from the previous reduction */
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float r = red[0];
  for (int w = 1; w < warps; w++) r = max ? fmaxf(r, red[w]) : r + red[w];
  return r;
}

/* scale * q.k + the float masks' values, or NaN for a hidden key */
template <typename T>
__device__ float score(const T* __restrict__ q, const T* __restrict__ k, const void* __restrict__ mask,
                       const T* __restrict__ mask2, const cuda_attention_args& a, int64_t b, int64_t h, int64_t i,
                       int64_t j) {
  if (a.is_causal && j > i) return __int_as_float(0x7fc00000);
  float bias = 0.0f;
  if (a.mask_kind) {
    const int64_t at = b * a.mask_stride[0] + h * a.mask_stride[1] + i * a.mask_stride[2] + j * a.mask_stride[3];
    if (a.mask_kind == 1 && ((const uint8_t*)mask)[at] == 0) return __int_as_float(0x7fc00000);
    if (a.mask_kind == 2) bias = to_float(((const T*)mask)[at]);
  }
  if (a.has_mask2)
    bias += to_float(mask2[b * a.mask2_stride[0] + h * a.mask2_stride[1] + i * a.mask2_stride[2] + j * a.mask2_stride[3]]);
  const T* qr = q + b * a.q_stride[0] + h * a.q_stride[1] + i * a.q_stride[2];
  const T* kr = k + b * a.k_stride[0] + (h / a.group) * a.k_stride[1] + j * a.k_stride[2];
  float dot = 0.0f;
  for (int64_t d = 0; d < a.head_size; d++) dot += to_float(qr[d * a.q_stride[3]]) * to_float(kr[d * a.k_stride[3]]);
  return dot * a.scale + bias;
}

template <typename T>
__global__ void attention_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                 const void* __restrict__ mask, const T* __restrict__ mask2, T* __restrict__ y,
                                 cuda_attention_args a, float* scratch) {
  extern __shared__ float shared_scores[];
  __shared__ float red[32];
  float* s = scratch ? scratch + (int64_t)blockIdx.x * a.kv_seq : shared_scores;
  const int64_t rows = a.batch * a.q_heads * a.q_seq;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t i = row % a.q_seq, h = row / a.q_seq % a.q_heads, b = row / (a.q_seq * a.q_heads);
    float max = -INFINITY, open = 0.0f;
    for (int64_t j = threadIdx.x; j < a.kv_seq; j += blockDim.x) {
      const float sc = score(q, k, mask, mask2, a, b, h, i, j);
      s[j] = sc;
      if (!isnan(sc)) max = fmaxf(max, sc), open += 1.0f;
    }
    max = block_reduce(max, 1, red);
    open = block_reduce(open, 0, red);
    const int none = open == 0.0f || max == -INFINITY;
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < a.kv_seq; j += blockDim.x) {
      const float w = none || isnan(s[j]) ? 0.0f : expf(s[j] - max);
      s[j] = w;
      sum += w;
    }
    sum = block_reduce(sum, 0, red); /* its barriers also publish every s[j] */
    const T* vb = v + b * a.v_stride[0] + (h / a.group) * a.v_stride[1];
    T* yr = y + b * a.y_stride[0] + h * a.y_stride[1] + i * a.y_stride[2];
    for (int64_t d = threadIdx.x; d < a.v_head_size; d += blockDim.x) {
      float acc = 0.0f;
      for (int64_t j = 0; j < a.kv_seq; j++) acc += s[j] * to_float(vb[j * a.v_stride[2] + d * a.v_stride[3]]);
      yr[d * a.y_stride[3]] = from_float<T>(none ? 0.0f : acc / sum);
    }
    __syncthreads(); /* the next row overwrites s */
  }
}

int64_t blocks_for(const cuda_attention_args& a) {
  const int64_t rows = a.batch * a.q_heads * a.q_seq;
  const int64_t cap = a.kv_seq > CUDA_ATTENTION_SHARED_KEYS ? kScratchBlocks : kMaxBlocks;
  return rows < cap ? rows : cap;
}

template <typename T>
cudaError_t launch(const void* q, const void* k, const void* v, const void* mask, const void* mask2, void* y,
                   const cuda_attention_args& a, void* scratch, cudaStream_t stream) {
  const int64_t blocks = blocks_for(a);
  if (blocks <= 0) return cudaSuccess;
  const int in_shared = a.kv_seq <= CUDA_ATTENTION_SHARED_KEYS;
  const size_t shared = in_shared ? (size_t)a.kv_seq * sizeof(float) : 0;
  if (!in_shared && !scratch) return cudaErrorInvalidValue;
  attention_kernel<T><<<(unsigned int)blocks, kBlockSize, shared, stream>>>(
      (const T*)q, (const T*)k, (const T*)v, mask, (const T*)mask2, (T*)y, a, in_shared ? nullptr : (float*)scratch);
  return cudaGetLastError();
}

/* ---- one warp per query row (CUDA_ATTENTION_WARP) ---- */

const int kWarpRowsPerBlock = 4;
const int kWarpKeysPerLane = CUDA_ATTENTION_WARP_KEYS / 32;
/* rows of V loaded before they are summed: a ViT's few rows (591 for ViT-tiny) leave few warps per SM
 * to hide load latency, so each warp keeps a whole group of 32 rows in flight */
const int kWarpVRows = 32;

/* HeadPerLane: head elements of V each lane owns (2 up to 64, 4 up to 128), which sizes the registers */
template <typename T, int HeadPerLane>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock)
    attention_warp_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                          T* __restrict__ y, cuda_attention_args a) {
  __shared__ __align__(16) float query[kWarpRowsPerBlock][CUDA_ATTENTION_TILED_MAX_HEAD];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t rows = a.batch * a.q_heads * a.q_seq;
  const int head = (int)a.head_size, v_head = (int)a.v_head_size, keys = (int)a.kv_seq;
  for (int64_t row = (int64_t)blockIdx.x * kWarpRowsPerBlock + warp; row < rows;
       row += (int64_t)gridDim.x * kWarpRowsPerBlock) {
    const int64_t i = row % a.q_seq, h = row / a.q_seq % a.q_heads, b = row / (a.q_seq * a.q_heads);
    const T* qr = q + b * a.q_stride[0] + h * a.q_stride[1] + i * a.q_stride[2];
    __syncwarp(); /* the previous row's query is read */
    for (int d = lane; d < head; d += 32) query[warp][d] = to_float(qr[d]);
    __syncwarp();
    /* scores: lane owns keys lane, lane + 32, ...; -inf marks a key that is not there or hidden */
    const T* kb = k + b * a.k_stride[0] + (h / a.group) * a.k_stride[1];
    float s[kWarpKeysPerLane];
    float max = -INFINITY;
#pragma unroll
    for (int t = 0; t < kWarpKeysPerLane; t++) {
      const int j = lane + 32 * t;
      s[t] = -INFINITY;
      if (j >= keys || (a.is_causal && j > i)) continue;
      const T* kr = kb + j * a.k_stride[2];
      float dot = 0.0f;
      if (sizeof(T) == 4 && a.vector_loads) { /* the key's row 16 bytes at a time */
        const float4* k4 = reinterpret_cast<const float4*>(kr);
#pragma unroll 4
        for (int d = 0; d < head / 4; d++) {
          const float4 kv = k4[d];
          const float4 qd = reinterpret_cast<const float4*>(query[warp])[d];
          dot += qd.x * kv.x;
          dot += qd.y * kv.y;
          dot += qd.z * kv.z;
          dot += qd.w * kv.w;
        }
      } else {
        for (int d = 0; d < head; d++) dot += query[warp][d] * to_float(kr[d]);
      }
      s[t] = dot * a.scale;
      max = fmaxf(max, s[t]);
    }
    for (int off = 16; off > 0; off >>= 1) max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, off));
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < kWarpKeysPerLane; t++) {
      s[t] = s[t] == -INFINITY || max == -INFINITY ? 0.0f : expf(s[t] - max);
      sum += s[t];
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    /* the weighted sum of V: lane owns head elements lane, lane + 32, ...; key j's weight comes from
     * the lane that scored it (0 past the last key, whose row index is clamped to a real one) */
    const T* vb = v + b * a.v_stride[0] + (h / a.group) * a.v_stride[1];
    float acc[HeadPerLane] = {};
#pragma unroll
    for (int t = 0; t < kWarpKeysPerLane; t++) {
      if (32 * t >= keys) break;
#pragma unroll 1
      for (int src0 = 0; src0 < 32; src0 += kWarpVRows) {
        float rows_v[kWarpVRows][HeadPerLane];
#pragma unroll
        for (int r = 0; r < kWarpVRows; r++) {
          const int j = min(32 * t + src0 + r, keys - 1);
          const T* vr = vb + j * a.v_stride[2];
#pragma unroll
          for (int u = 0; u < HeadPerLane; u++)
            rows_v[r][u] = lane + 32 * u < v_head ? to_float(vr[lane + 32 * u]) : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < kWarpVRows; r++) {
          const float p = __shfl_sync(0xffffffffu, s[t], src0 + r);
#pragma unroll
          for (int u = 0; u < HeadPerLane; u++) acc[u] += p * rows_v[r][u];
        }
      }
    }
    T* yr = y + b * a.y_stride[0] + h * a.y_stride[1] + i * a.y_stride[2];
    const int none = max == -INFINITY;
#pragma unroll
    for (int u = 0; u < HeadPerLane; u++)
      if (lane + 32 * u < v_head) yr[(lane + 32 * u) * a.y_stride[3]] = from_float<T>(none ? 0.0f : acc[u] / sum);
  }
}

template <typename T>
cudaError_t launch_warp(const void* q, const void* k, const void* v, void* y, const cuda_attention_args& a,
                        cudaStream_t stream) {
  const int64_t rows = a.batch * a.q_heads * a.q_seq;
  if (rows <= 0) return cudaSuccess;
  int64_t blocks = (rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (a.v_head_size <= 64)
    attention_warp_kernel<T, 2><<<(unsigned int)blocks, 32 * kWarpRowsPerBlock, 0, stream>>>((const T*)q, (const T*)k,
                                                                                           (const T*)v, (T*)y, a);
  else
    attention_warp_kernel<T, 4><<<(unsigned int)blocks, 32 * kWarpRowsPerBlock, 0, stream>>>((const T*)q, (const T*)k,
                                                                                           (const T*)v, (T*)y, a);
  return cudaGetLastError();
}

/* Whether p is 16-byte aligned and each stride moves it by whole 16-byte pieces. */
int aligned16(const void* p, const int64_t* stride, int n, size_t es) {
  if ((uintptr_t)p % 16) return 0;
  for (int i = 0; i < n; i++)
    if ((stride[i] * (int64_t)es) % 16) return 0;
  return 1;
}

}  // namespace

static int simt_asked(void) {
  const char* e = getenv("GFXEP_CUDA_ATTENTION");
  return e && strcmp(e, "simt") == 0;
}

cuda_attention_path cuda_attention_choose(int dtype, const cuda_attention_args* a, int cc_major, int rows_only) {
  if (rows_only || a->head_size < 1 || a->v_head_size < 1 || a->kv_seq < 1 || a->q_seq < 1 ||
      a->head_size > CUDA_ATTENTION_TILED_MAX_HEAD || a->v_head_size > CUDA_ATTENTION_TILED_MAX_HEAD ||
      a->q_stride[3] != 1 || a->k_stride[3] != 1 || a->v_stride[3] != 1)
    return CUDA_ATTENTION_ROWS;
  if ((dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16) && cc_major >= 8) return CUDA_ATTENTION_MMA;
  /* float32 rows of few keys and no mask: a warp per row */
  if (dtype == GFX_DTYPE_F32 && !simt_asked() && a->kv_seq <= CUDA_ATTENTION_WARP_KEYS && a->mask_kind == 0 &&
      !a->has_mask2)
    return CUDA_ATTENTION_WARP;
  /* the tiled float32 kernel measured slower than cuBLASLt's products on ViT-tiny (the fused float32
   * node is declined for that reason, cuda_backend.c); a plain float32 Attention keeps the row kernel
   * it had before the tiled kernels, unless asked for by GFXEP_CUDA_ATTENTION=simt */
  return dtype == GFX_DTYPE_F32 && !simt_asked() ? CUDA_ATTENTION_ROWS : CUDA_ATTENTION_SIMT;
}

int cuda_attention_vector_loads(const cuda_attention_args* a, const void* q, const void* k, const void* v, size_t es) {
  if (es == 0 || (a->head_size * (int64_t)es) % 16 || (a->v_head_size * (int64_t)es) % 16) return 0;
  return aligned16(q, a->q_stride, 3, es) && aligned16(k, a->k_stride, 3, es) && aligned16(v, a->v_stride, 3, es);
}

size_t cuda_attention_scratch(const cuda_attention_args* a, cuda_attention_path path) {
  if (path != CUDA_ATTENTION_ROWS || a->kv_seq <= CUDA_ATTENTION_SHARED_KEYS) return 0;
  return (size_t)blocks_for(*a) * (size_t)a->kv_seq * sizeof(float);
}

cudaError_t cuda_attention(int dtype, cuda_attention_path path, const void* q, const void* k, const void* v,
                           const void* mask, const void* mask2, void* y, cuda_attention_args a, void* scratch,
                           cudaStream_t stream) {
  if (path == CUDA_ATTENTION_WARP) {
    if (dtype != GFX_DTYPE_F32 || a.mask_kind || a.has_mask2 || a.kv_seq > CUDA_ATTENTION_WARP_KEYS ||
        a.head_size > CUDA_ATTENTION_TILED_MAX_HEAD || a.v_head_size > CUDA_ATTENTION_TILED_MAX_HEAD ||
        a.q_stride[3] != 1 || a.k_stride[3] != 1 || a.v_stride[3] != 1)
      return cudaErrorInvalidValue;
    return launch_warp<float>(q, k, v, y, a, stream);
  }
  if (path != CUDA_ATTENTION_ROWS) return cuda_attention_tiled(dtype, path, q, k, v, mask, mask2, y, &a, stream);
  switch (dtype) {
    case GFX_DTYPE_F32: return launch<float>(q, k, v, mask, mask2, y, a, scratch, stream);
    case GFX_DTYPE_F16: return launch<__half>(q, k, v, mask, mask2, y, a, scratch, stream);
    case GFX_DTYPE_BF16: return launch<__nv_bfloat16>(q, k, v, mask, mask2, y, a, scratch, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t cuda_attention_preload(void) {
  const void* kernels[] = {(const void*)attention_kernel<float>, (const void*)attention_kernel<__half>,
                           (const void*)attention_kernel<__nv_bfloat16>, (const void*)attention_warp_kernel<float, 2>,
                           (const void*)attention_warp_kernel<float, 4>};
  const cudaError_t e = CUDA_LOAD_KERNELS(kernels);
  return e != cudaSuccess ? e : cuda_attention_tiled_preload();
}

/* gfxep CUDA backend — TopK, by rank counting or by radix selection.
 *
 * Both give the reference's result element for element (ref_index.c, ir_topk_before_*): the larger
 * (largest) or smaller value first, NaN as if the largest value, -0 equal to +0, equal values by the
 * lower index.
 *
 * Rank counting: one thread per element counts the elements of its line that come before it,
 * stopping at k. Cheap for short lines, but each of the k winners scans its whole line alone: on a
 * line of 600k scores (a detector keeping its 1000 best boxes per level) that serial scan is the
 * whole cost, milliseconds per node.
 *
 * Radix selection, for long contiguous lines of a float type: every value becomes a 32-bit key that
 * grows along TopK's order (order_key). Four histogram passes of 8 bits find the k-th largest key T
 * and how many of the elements equal to T are taken; one pass gathers every element with a key of
 * at least T into a candidate list (at most k - 1 above T, then the ties); the candidates are ranked
 * among themselves, which is their rank in the line since every other element comes after them. A
 * line with more ties at T than the list holds (a constant line, say) raises a flag, and rank
 * counting, launched behind it and gated on that flag, decides that line instead: the result never
 * depends on the data. No count goes back to the host and nothing allocates, so the launches can be
 * captured into a CUDA graph; the per-line state lives in the node's scratch.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backend/cuda/cuda_topk.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;
const int kBins = 256;
/* radix selection for lines at least this long (rank counting's serial scans grow with the line)
 * and k at most this large (the candidates are ranked pairwise: O(candidates^2) per line) */
const int64_t kRadixMinLen = 4096;
const int64_t kRadixMaxK = 4096;
/* elements per thread in a histogram or gather pass: enough to amortize the shared bins' flush */
const int64_t kPerThread = 16;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

#define GRID_STRIDE_LOOP(i, count) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (count); i += (int64_t)blockDim.x * gridDim.x)

__device__ inline float load(float v) { return v; }
__device__ inline float load(__half v) { return __half2float(v); }
__device__ inline float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline int64_t load(int32_t v) { return v; }
__device__ inline int64_t load(int64_t v) { return v; }

/* Calls f(T()) with T the C++ type of a TopK dtype (float32/float16/bfloat16, int32/int64). */
template <typename F>
bool with_topk_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    case GFX_DTYPE_I32: f(int32_t()); return true;
    case GFX_DTYPE_I64: f(int64_t()); return true;
    default: return false;
  }
}

template <typename F>
bool with_float_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    default: return false;
  }
}

/* ir_topk_before_float / ir_topk_before_int (ir/ops_index.h), which the host-only header cannot lend
 * a device function. float holds float32/float16/bfloat16 exactly. */
__device__ inline bool topk_before(float a, int64_t ia, float b, int64_t ib, int largest) {
  const bool na = a != a, nb = b != b;
  if (na || nb) {
    if (na && nb) return ia < ib;
    return largest ? na : nb;
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

__device__ inline bool topk_before(int64_t a, int64_t ia, int64_t b, int64_t ib, int largest) {
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

/* The state of one line's radix selection (in scratch, zeroed before the first pass). */
struct radix_line {
  uint32_t prefix;     /* the digits of T found so far, in place */
  uint32_t remaining;  /* how many of the elements that share prefix are still to be taken */
  uint32_t count;      /* candidates gathered (may pass the list's capacity) */
  uint32_t overflow;   /* 1: more candidates than the list holds; rank counting decides the line */
  uint32_t hist[kBins];
};

/* A key that grows along TopK's order: a NaN first when largest (the top key) and last otherwise
 * (key 0); -0 as +0; no other value reaches either end, so NaNs tie only with NaNs. */
__device__ inline uint32_t order_key(float v, int largest) {
  if (v != v) return largest ? 0xFFFFFFFFu : 0u;
  uint32_t b = __float_as_uint(v);
  if ((b << 1) == 0) b = 0;
  const uint32_t up = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return largest ? up : ~up;
}

/* Rank counting: one thread per element of X as [outer, len, inner]. With `gate`, only lines whose
 * radix selection overflowed (inner is 1 there, so the line is o). */
template <typename T>
__global__ void topk_rank_count_kernel(const T* x, T* values, int64_t* indices, int64_t count, int64_t len,
                                       int64_t inner, int64_t k, int largest, const radix_line* gate) {
  GRID_STRIDE_LOOP(e, count) {
    const int64_t c = e % inner, j = e / inner % len, o = e / (inner * len);
    if (gate && !gate[o].overflow) continue;
    const int64_t base = o * len * inner + c;
    const auto v = load(x[base + j * inner]);
    int64_t rank = 0;
    for (int64_t m = 0; m < len && rank < k; m++)
      if (m != j && topk_before(load(x[base + m * inner]), m, v, j, largest)) rank++;
    if (rank >= k) continue;
    const int64_t dst = (o * k + rank) * inner + c;
    values[dst] = x[base + j * inner];
    indices[dst] = j;
  }
}

/* One histogram pass over line blockIdx.y: the counts of digit `pass` (8 bits, most significant
 * first) among the keys whose higher digits are the prefix found so far. */
template <typename T>
__global__ void radix_hist_kernel(const T* x, int64_t len, int largest, int pass, radix_line* lines) {
  __shared__ uint32_t bins[kBins];
  radix_line* line = &lines[blockIdx.y];
  const T* row = x + blockIdx.y * len;
  for (int i = threadIdx.x; i < kBins; i += blockDim.x) bins[i] = 0;
  __syncthreads();
  const int shift = 24 - 8 * pass;
  const uint32_t high = pass ? line->prefix >> (shift + 8) : 0;
  GRID_STRIDE_LOOP(i, len) {
    const uint32_t key = order_key(load(row[i]), largest);
    if (pass == 0 || key >> (shift + 8) == high) atomicAdd(&bins[(key >> shift) & (kBins - 1)], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kBins; i += blockDim.x)
    if (bins[i]) atomicAdd(&line->hist[i], bins[i]);
}

/* After a histogram pass, one block per line: the digit of the k-th key (counting from the top
 * digit down until the elements at or above it reach those still to be taken), then the
 * histogram cleared for the next pass. */
__global__ void radix_pick_kernel(int pass, int64_t k, radix_line* lines) {
  radix_line* line = &lines[blockIdx.x];
  __shared__ uint32_t bins[kBins];
  for (int i = threadIdx.x; i < kBins; i += blockDim.x) bins[i] = line->hist[i], line->hist[i] = 0;
  __syncthreads();
  if (threadIdx.x != 0) return;
  const int shift = 24 - 8 * pass;
  uint32_t left = pass ? line->remaining : (uint32_t)k;
  int d = kBins - 1;
  for (; d > 0 && bins[d] < left; d--) left -= bins[d];
  line->prefix = (pass ? line->prefix : 0u) | (uint32_t)d << shift;
  line->remaining = left;
}

/* Every element with a key of at least T (the prefix, complete after four passes) into the line's
 * candidate list, in no particular order; the overflow flag when the list is full. */
template <typename T>
__global__ void radix_gather_kernel(const T* x, int64_t len, int largest, radix_line* lines, int32_t* candidates,
                                    uint32_t capacity) {
  radix_line* line = &lines[blockIdx.y];
  const T* row = x + blockIdx.y * len;
  int32_t* list = candidates + (int64_t)blockIdx.y * capacity;
  const uint32_t t = line->prefix;
  GRID_STRIDE_LOOP(i, len) {
    if (order_key(load(row[i]), largest) < t) continue;
    const uint32_t slot = atomicAdd(&line->count, 1u);
    if (slot < capacity)
      list[slot] = (int32_t)i;
    else
      line->overflow = 1;
  }
}

/* Each candidate's rank among the line's candidates (tiles of them through shared memory); ranks
 * below k are written. Skipped for a line that overflowed. */
template <typename T>
__global__ void radix_rank_kernel(const T* x, int64_t len, int64_t k, int largest, const radix_line* lines,
                                  const int32_t* candidates, uint32_t capacity, T* values, int64_t* indices) {
  __shared__ float tile_value[kBlockSize];
  __shared__ int32_t tile_index[kBlockSize];
  const radix_line* line = &lines[blockIdx.y];
  const uint32_t n = line->count < capacity ? line->count : capacity;
  if (line->overflow || blockIdx.x * blockDim.x >= n) return; /* the whole block leaves together */
  const T* row = x + blockIdx.y * len;
  const int32_t* list = candidates + (int64_t)blockIdx.y * capacity;
  const uint32_t me = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = me < n;
  const int32_t j = active ? list[me] : 0;
  const float v = active ? load(row[j]) : 0.0f;
  int64_t rank = 0;
  for (uint32_t base = 0; base < n; base += blockDim.x) {
    if (base + threadIdx.x < n) {
      const int32_t m = list[base + threadIdx.x];
      tile_index[threadIdx.x] = m;
      tile_value[threadIdx.x] = load(row[m]);
    }
    __syncthreads();
    const uint32_t tile = n - base < blockDim.x ? n - base : blockDim.x;
    if (active)
      for (uint32_t m = 0; m < tile; m++) rank += topk_before(tile_value[m], tile_index[m], v, j, largest);
    __syncthreads();
  }
  if (active && rank < k) {
    values[blockIdx.y * k + rank] = row[j];
    indices[blockIdx.y * k + rank] = j;
  }
}

bool use_radix(int dtype, int64_t outer, int64_t len, int64_t inner, int64_t k) {
  const bool float_type = dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
  return float_type && inner == 1 && len >= kRadixMinLen && len <= INT32_MAX && k >= 1 && k <= kRadixMaxK &&
         outer >= 1 && outer <= kMaxBlocks;
}

/* the candidate list: every element above T (fewer than k) and room for k + 1024 ties at T */
uint32_t candidate_capacity(int64_t k) { return (uint32_t)(2 * k + 1024); }

template <typename K>
void preload(K* kernel, cudaError_t* e) {
  cudaFuncAttributes attr;
  if (*e == cudaSuccess) *e = cudaFuncGetAttributes(&attr, kernel);
}

}  // namespace

extern "C" size_t cuda_topk_scratch(int dtype, int64_t outer, int64_t len, int64_t inner, int64_t k) {
  if (!use_radix(dtype, outer, len, inner, k)) return 0;
  return (size_t)outer * (sizeof(radix_line) + sizeof(int32_t) * candidate_capacity(k));
}

extern "C" cudaError_t cuda_topk(int dtype, const void* x, void* values, int64_t* indices, int64_t outer,
                                 int64_t len, int64_t inner, int64_t k, int largest, void* scratch,
                                 size_t scratch_bytes, cudaStream_t stream) {
  const int64_t count = outer * len * inner;
  if (count <= 0 || k <= 0) return cudaSuccess;
  const size_t need = cuda_topk_scratch(dtype, outer, len, inner, k);
  if (need && (!scratch || scratch_bytes < need)) return cudaErrorInvalidValue;
  if (!need) {
    const bool ok = with_topk_type(dtype, [&](auto zero) {
      typedef decltype(zero) T;
      topk_rank_count_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>((const T*)x, (T*)values, indices, count,
                                                                             len, inner, k, largest, nullptr);
    });
    return ok ? cudaGetLastError() : cudaErrorInvalidValue;
  }
  radix_line* lines = (radix_line*)scratch;
  int32_t* candidates = (int32_t*)(lines + outer);
  const uint32_t capacity = candidate_capacity(k);
  cudaError_t e = cudaMemsetAsync(lines, 0, sizeof(radix_line) * outer, stream);
  if (e != cudaSuccess) return e;
  int64_t blocks = (len + kBlockSize * kPerThread - 1) / (kBlockSize * kPerThread);
  if (blocks > kMaxBlocks / outer) blocks = kMaxBlocks / outer > 0 ? kMaxBlocks / outer : 1;
  const dim3 pass_grid((unsigned int)blocks, (unsigned int)outer);
  const bool ok = with_float_type(dtype, [&](auto zero) {
    typedef decltype(zero) T;
    for (int pass = 0; pass < 4; pass++) {
      radix_hist_kernel<T><<<pass_grid, kBlockSize, 0, stream>>>((const T*)x, len, largest, pass, lines);
      radix_pick_kernel<<<(unsigned int)outer, kBins, 0, stream>>>(pass, k, lines);
    }
    radix_gather_kernel<T><<<pass_grid, kBlockSize, 0, stream>>>((const T*)x, len, largest, lines, candidates,
                                                                 capacity);
    const dim3 rank_grid((capacity + kBlockSize - 1) / kBlockSize, (unsigned int)outer);
    radix_rank_kernel<T><<<rank_grid, kBlockSize, 0, stream>>>((const T*)x, len, k, largest, lines, candidates,
                                                               capacity, (T*)values, indices);
    topk_rank_count_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>((const T*)x, (T*)values, indices, count,
                                                                           len, inner, k, largest, lines);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_topk_preload(void) {
  cudaError_t e = cudaSuccess;
  static const int types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32, GFX_DTYPE_I64};
  for (int t : types)
    with_topk_type(t, [&](auto zero) {
      typedef decltype(zero) T;
      preload(topk_rank_count_kernel<T>, &e);
    });
  for (int t : types)
    with_float_type(t, [&](auto zero) {
      typedef decltype(zero) T;
      preload(radix_hist_kernel<T>, &e);
      preload(radix_gather_kernel<T>, &e);
      preload(radix_rank_kernel<T>, &e);
    });
  preload(radix_pick_kernel, &e);
  return e;
}

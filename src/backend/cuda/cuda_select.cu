/* gfxep CUDA backend — NonZero and NonMaxSuppression as bounded nodes (see cuda_select.h).
 *
 * Both mirror the reference backend (ref_select.c) exactly: NonZero's coordinates in row-major order,
 * and NonMaxSuppression's order and overlap test in ORT's float32 arithmetic, each operation rounded
 * on its own (__fmul_rn and friends: no fused multiply-add may change an overlap near the threshold).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdint.h>

#include "backend/cuda/cuda_select.h"
#include "backend/cuda/cuda_preload.cuh"

namespace {

/* ---- NonZero ---- */

const int kNzThreads = 256;
const int kNzRounds = CUDA_NONZERO_CHUNK / kNzThreads;

struct nz_shape {
  int rank;
  int64_t dims[GFX_MAX_RANK];
};

template <typename U>
__device__ inline bool nonzero_at(const U* x, int64_t i, U keep) {
  return (x[i] & keep) != 0;
}

/* the sum of v over the block (every thread gets it) */
__device__ inline int64_t block_sum(int64_t v, int64_t* warp_sums) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  int64_t total = 0;
  for (int w = 0; w < (int)(blockDim.x / 32); w++) total += warp_sums[w];
  __syncthreads();
  return total;
}

template <typename U>
__global__ void nz_count(const U* x, int64_t numel, U keep, int64_t* block_counts) {
  __shared__ int64_t warp_sums[32];
  const int64_t base = (int64_t)blockIdx.x * CUDA_NONZERO_CHUNK;
  int64_t n = 0;
  for (int r = 0; r < kNzRounds; r++) {
    const int64_t e = base + r * kNzThreads + threadIdx.x;
    if (e < numel && nonzero_at(x, e, keep)) n++;
  }
  const int64_t total = block_sum(n, warp_sums);
  if (threadIdx.x == 0) block_counts[blockIdx.x] = total;
}

/* In place: the exclusive prefix sums of v[0..n), the total into *total; one block of 1024. */
__global__ void exclusive_scan(int64_t* v, int64_t n, int64_t* total) {
  __shared__ int64_t warp_sums[32];
  __shared__ int64_t carry;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t t0 = 0; t0 < n; t0 += blockDim.x) {
    const int64_t i = t0 + threadIdx.x;
    const int64_t x = i < n ? v[i] : 0;
    /* inclusive scan within the warp, then across the warps */
    int64_t s = x;
    for (int o = 1; o < 32; o <<= 1) {
      const int64_t y = __shfl_up_sync(0xffffffffu, s, o);
      if (lane >= o) s += y;
    }
    if (lane == 31) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
      int64_t w = lane < (int)(blockDim.x / 32) ? warp_sums[lane] : 0;
      for (int o = 1; o < 32; o <<= 1) {
        const int64_t y = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += y;
      }
      warp_sums[lane] = w; /* inclusive over the warps */
    }
    __syncthreads();
    const int64_t before = carry + (warp ? warp_sums[warp - 1] : 0) + s - x;
    if (i < n) v[i] = before;
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1) carry = before + x;
    __syncthreads();
  }
  if (threadIdx.x == 0 && total) *total = carry;
}

template <typename U>
__global__ void nz_write(const U* x, int64_t numel, U keep, nz_shape shape, const int64_t* offsets, int64_t* y) {
  __shared__ int warp_counts[kNzThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t base = (int64_t)blockIdx.x * CUDA_NONZERO_CHUNK;
  int64_t at = offsets[blockIdx.x];
  for (int r = 0; r < kNzRounds; r++) {
    const int64_t e = base + r * kNzThreads + threadIdx.x;
    const bool hit = e < numel && nonzero_at(x, e, keep);
    const unsigned ballot = __ballot_sync(0xffffffffu, hit);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int64_t pos = at + __popc(ballot & ((1u << lane) - 1u));
    int round_total = 0;
    for (int w = 0; w < kNzThreads / 32; w++) {
      if (w < warp) pos += warp_counts[w];
      round_total += warp_counts[w];
    }
    if (hit) {
      if (shape.rank == 0) {
        y[pos] = 0;
      } else {
        int64_t rest = e;
        for (int d = shape.rank - 1; d >= 0; d--) {
          y[d * numel + pos] = rest % shape.dims[d];
          rest /= shape.dims[d];
        }
      }
    }
    at += round_total;
    __syncthreads();
  }
}

template <typename U>
cudaError_t nonzero_typed(uint64_t sign_mask, const void* x, const gfx_shape* s, int64_t* y, int64_t* count,
                          void* scratch, cudaStream_t stream) {
  int64_t numel = 1;
  nz_shape shape;
  shape.rank = s->rank;
  for (int i = 0; i < s->rank; i++) numel *= shape.dims[i] = s->dims[i];
  if (numel == 0) return cudaMemsetAsync(count, 0, sizeof(int64_t), stream);
  const U keep = (U)~(U)sign_mask;
  const int64_t blocks = (numel + CUDA_NONZERO_CHUNK - 1) / CUDA_NONZERO_CHUNK;
  int64_t* offsets = (int64_t*)scratch;
  nz_count<U><<<(unsigned)blocks, kNzThreads, 0, stream>>>((const U*)x, numel, keep, offsets);
  exclusive_scan<<<1, 1024, 0, stream>>>(offsets, blocks, count);
  nz_write<U><<<(unsigned)blocks, kNzThreads, 0, stream>>>((const U*)x, numel, keep, shape, offsets, y);
  return cudaGetLastError();
}

/* ---- NonMaxSuppression ---- */

__device__ inline float load_f(float v) { return v; }
__device__ inline float load_f(__half v) { return __half2float(v); }
__device__ inline float load_f(__nv_bfloat16 v) { return __bfloat162float(v); }

/* ir_nms_before: higher score first, ties to the lower index, NaN last */
__device__ inline bool before(float sa, int a, float sb, int b) {
  const bool na = sa != sa, nb = sb != sb;
  if (na || nb) return na && nb ? a < b : nb;
  if (sa != sb) return sa > sb;
  return a < b;
}

__device__ inline float nms_max(float a, float b) { return a < b ? b : a; }
__device__ inline float nms_min(float a, float b) { return b < a ? b : a; }

/* ir_nms_box: [y_min, x_min, y_max, x_max] in xyzw, the area apart */
__device__ inline void nms_box(const float* in, int center, float4* box, float* area) {
  if (!center) {
    if (in[1] >= in[3]) box->y = in[3], box->w = in[1];
    else box->y = in[1], box->w = in[3];
    if (in[0] >= in[2]) box->x = in[2], box->z = in[0];
    else box->x = in[0], box->z = in[2];
    *area = __fmul_rn(__fsub_rn(box->z, box->x), __fsub_rn(box->w, box->y));
  } else {
    const float half_w = __fmul_rn(in[2], 0.5f), half_h = __fmul_rn(in[3], 0.5f);
    *area = __fmul_rn(in[2], in[3]);
    box->y = __fsub_rn(in[0], half_w);
    box->w = __fadd_rn(in[0], half_w);
    box->x = __fsub_rn(in[1], half_h);
    box->z = __fadd_rn(in[1], half_h);
  }
}

/* ir_nms_suppresses(a = the candidate, b = the kept box) */
__device__ inline bool nms_suppresses(float4 a, float area_a, float4 b, float area_b, float thr) {
  const float x_min = nms_max(a.y, b.y), x_max = nms_min(a.w, b.w);
  if (x_max <= x_min) return false;
  const float y_min = nms_max(a.x, b.x), y_max = nms_min(a.z, b.z);
  if (y_max <= y_min) return false;
  const float inter = __fmul_rn(__fsub_rn(x_max, x_min), __fsub_rn(y_max, y_min));
  if (inter <= 0.0f) return false;
  const float uni = __fsub_rn(__fadd_rn(area_a, area_b), inter);
  return __fdiv_rn(inter, uni) > thr;
}

const int kRankThreads = 128;
const int kScanThreads = 256;
const size_t kMaskBudget = (size_t)64 << 20;

struct nms_layout {
  int64_t S, N, cap, W, R;
  size_t cand_count, sel_count, removed, order, sbox, sarea, sel, offsets, mask, total;
};

size_t align256(size_t v) { return (v + 255) / 256 * 256; }

nms_layout layout_of(int64_t batches, int64_t classes, int64_t boxes, int64_t per_class) {
  nms_layout l = {};
  l.S = batches * classes;
  l.N = boxes;
  l.cap = per_class;
  if (l.S <= 0 || l.N <= 0 || l.cap <= 0) return l;
  l.W = (l.N + 63) / 64;
  const int64_t all_rows = l.W * 64;
  int64_t r = (int64_t)(kMaskBudget / ((size_t)l.S * (size_t)l.W * 8)) / 64 * 64;
  l.R = r < 64 ? 64 : r > all_rows ? all_rows : r;
  size_t at = 0;
  l.cand_count = at, at += sizeof(int) * (size_t)l.S;
  l.sel_count = at, at += sizeof(int) * (size_t)l.S;
  at = align256(at);
  l.removed = at, at = align256(at + sizeof(uint64_t) * (size_t)(l.S * l.W));
  l.order = at, at = align256(at + sizeof(int) * (size_t)(l.S * l.N));
  l.sbox = at, at = align256(at + sizeof(float4) * (size_t)(l.S * l.N));
  l.sarea = at, at = align256(at + sizeof(float) * (size_t)(l.S * l.N));
  l.sel = at, at = align256(at + sizeof(int) * (size_t)(l.S * l.cap));
  l.offsets = at, at = align256(at + sizeof(int64_t) * (size_t)l.S);
  l.mask = at, at = align256(at + sizeof(uint64_t) * (size_t)(l.S * l.R * l.W));
  l.total = at;
  return l;
}

/* Ranks every candidate of its segment by counting those before it; writes order[rank] = index. */
template <typename T>
__global__ void nms_rank(const T* scores, int64_t N, int64_t blocks_per_seg, int has_thr, float thr, int* cand_count,
                         int* order) {
  __shared__ float tile_score[kRankThreads];
  __shared__ int tile_cand[kRankThreads];
  const int64_t seg = blockIdx.x / blocks_per_seg;
  const int64_t i = (blockIdx.x % blocks_per_seg) * kRankThreads + threadIdx.x;
  const T* s = scores + seg * N;
  const float si = i < N ? load_f(s[i]) : 0.0f;
  const bool ci = i < N && (!has_thr || si > thr);
  int rank = 0;
  for (int64_t j0 = 0; j0 < N; j0 += kRankThreads) {
    const int64_t j = j0 + threadIdx.x;
    const float sj = j < N ? load_f(s[j]) : 0.0f;
    tile_score[threadIdx.x] = sj;
    tile_cand[threadIdx.x] = j < N && (!has_thr || sj > thr);
    __syncthreads();
    if (ci) {
      const int n = (int)(N - j0 < kRankThreads ? N - j0 : kRankThreads);
      for (int t = 0; t < n; t++)
        if (tile_cand[t] && before(tile_score[t], (int)(j0 + t), si, (int)i)) rank++;
    }
    __syncthreads();
  }
  if (ci) {
    order[seg * N + rank] = (int)i;
    atomicAdd(&cand_count[seg], 1);
  }
}

/* The ranked candidates' boxes as ORT keeps them. */
template <typename T>
__global__ void nms_boxes(const T* boxes, int64_t S, int64_t classes, int64_t N, int center, const int* cand_count,
                          const int* order, float4* sbox, float* sarea) {
  const int64_t total = S * N;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)blockDim.x * gridDim.x) {
    const int64_t seg = t / N, r = t % N;
    if (r >= cand_count[seg]) continue;
    const int64_t b = seg / classes, i = order[t];
    const T* p = boxes + (b * N + i) * 4;
    const float in[4] = {load_f(p[0]), load_f(p[1]), load_f(p[2]), load_f(p[3])};
    nms_box(in, center, &sbox[t], &sarea[t]);
  }
}

/* Suppression bits of rows [r0, r0 + R) against the later candidates: word w of row r has bit c set
 * when row r (kept) would suppress candidate 64 w + c. Only the words from the row's own on. */
__global__ void nms_mask(int64_t seg_base, int64_t N, int64_t W, int64_t R, int64_t r0, float thr,
                         const int* cand_count, const float4* sbox, const float* sarea, uint64_t* mask) {
  __shared__ float4 col_box[64];
  __shared__ float col_area[64];
  const int64_t seg = seg_base + blockIdx.z;
  const int64_t M = cand_count[seg];
  const int64_t tile = r0 + (int64_t)blockIdx.y * 64, w = blockIdx.x;
  if (tile >= M || w * 64 >= M || w < tile / 64) return;
  const int64_t j = w * 64 + threadIdx.x;
  if (j < M) {
    col_box[threadIdx.x] = sbox[seg * N + j];
    col_area[threadIdx.x] = sarea[seg * N + j];
  }
  __syncthreads();
  const int64_t row = tile + threadIdx.x;
  if (row >= M) return;
  const float4 rb = sbox[seg * N + row];
  const float ra = sarea[seg * N + row];
  uint64_t bits = 0;
  for (int c = 0; c < 64; c++) {
    const int64_t col = w * 64 + c;
    if (col > row && col < M && nms_suppresses(col_box[c], col_area[c], rb, ra, thr)) bits |= (uint64_t)1 << c;
  }
  mask[((seg * R) + (row - r0)) * W + w] = bits;
}

/* Walks rows [r0, r0 + R) of one segment in rank order, 64 at a time: thread 0 keeps each row the
 * kept rows before it did not remove (their bits in `removed`, and in the diagonal words for the rows
 * of the same 64), until `cap` are kept; then every thread ors the new kept rows' later words into
 * `removed`. */
__global__ void nms_scan(int64_t N, int64_t W, int64_t R, int64_t r0, int64_t cap, const int* cand_count,
                         const int* order, const uint64_t* mask, uint64_t* removed, int* sel, int* sel_count) {
  __shared__ uint64_t diag[64];
  __shared__ uint64_t kept_bits;
  __shared__ int kept;
  const int64_t seg = blockIdx.x;
  const int64_t M = cand_count[seg];
  if (r0 >= M) return;
  if (threadIdx.x == 0) kept = sel_count[seg];
  __syncthreads();
  if (kept >= cap) return;
  const int64_t end = r0 + R < M ? r0 + R : M;
  const int64_t words = (M + 63) / 64; /* the words past the candidates are never written nor needed */
  uint64_t* rem = removed + seg * W;
  for (int64_t g0 = r0; g0 < end; g0 += 64) {
    const int64_t w = g0 / 64;
    if (threadIdx.x < 64) {
      const int64_t row = g0 + threadIdx.x;
      diag[threadIdx.x] = row < end ? mask[((seg * R) + (row - r0)) * W + w] : 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t word = rem[w], bits = 0;
      int n = kept;
      for (int b = 0; b < 64 && g0 + b < end && n < cap; b++) {
        if ((word >> b) & 1) continue;
        sel[seg * cap + n++] = order[seg * N + g0 + b];
        bits |= (uint64_t)1 << b;
        word |= diag[b];
      }
      kept_bits = bits;
      kept = n;
    }
    __syncthreads();
    const uint64_t bits = kept_bits;
    if (bits)
      for (int64_t ww = w + 1 + threadIdx.x; ww < words; ww += blockDim.x) {
        uint64_t acc = 0;
        for (uint64_t b = bits; b; b &= b - 1) acc |= mask[((seg * R) + (g0 + __ffsll((long long)b) - 1 - r0)) * W + ww];
        rem[ww] |= acc;
      }
    __syncthreads();
    if (kept >= cap) break;
  }
  if (threadIdx.x == 0) sel_count[seg] = kept;
}

__global__ void nms_counts(const int* sel_count, int64_t S, int64_t* offsets) {
  for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < S; s += (int64_t)blockDim.x * gridDim.x)
    offsets[s] = sel_count[s];
}

__global__ void nms_write(int64_t classes, int64_t cap, const int* sel_count, const int* sel, const int64_t* offsets,
                          int64_t* y) {
  const int64_t seg = blockIdx.x;
  const int64_t b = seg / classes, c = seg % classes, at = offsets[seg];
  for (int k = threadIdx.x; k < sel_count[seg]; k += blockDim.x) {
    int64_t* row = y + (at + k) * 3;
    row[0] = b;
    row[1] = c;
    row[2] = sel[seg * cap + k];
  }
}

unsigned grid_for(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return (unsigned)(b < 65535 ? b : 65535);
}

template <typename T>
cudaError_t nms_typed(const cuda_nms_args* a, int64_t* y, int64_t* count, void* scratch, size_t scratch_bytes,
                      cudaStream_t stream) {
  const nms_layout l = layout_of(a->batches, a->classes, a->boxes_n, a->per_class);
  if (l.total == 0) return cudaMemsetAsync(count, 0, sizeof(int64_t), stream);
  if (scratch_bytes < l.total || !scratch) return cudaErrorInvalidValue;
  char* base = (char*)scratch;
  int* cand_count = (int*)(base + l.cand_count);
  int* sel_count = (int*)(base + l.sel_count);
  uint64_t* removed = (uint64_t*)(base + l.removed);
  int* order = (int*)(base + l.order);
  float4* sbox = (float4*)(base + l.sbox);
  float* sarea = (float*)(base + l.sarea);
  int* sel = (int*)(base + l.sel);
  int64_t* offsets = (int64_t*)(base + l.offsets);
  uint64_t* mask = (uint64_t*)(base + l.mask);
  cudaError_t err = cudaMemsetAsync(base, 0, l.order, stream); /* the counts and `removed` */
  if (err != cudaSuccess) return err;
  const int64_t bps = (l.N + kRankThreads - 1) / kRankThreads;
  if (l.S * bps > 0x7fffffffLL || l.S > 0x7fffffffLL || l.W > 0x7fffffffLL || l.R / 64 > 65535)
    return cudaErrorInvalidConfiguration;
  nms_rank<T><<<(unsigned)(l.S * bps), kRankThreads, 0, stream>>>((const T*)a->scores, l.N, bps,
                                                                   a->has_score_threshold, a->score_threshold,
                                                                   cand_count, order);
  nms_boxes<T><<<grid_for(l.S * l.N, 256), 256, 0, stream>>>((const T*)a->boxes, l.S, a->classes, l.N,
                                                              a->center_point_box, cand_count, order, sbox, sarea);
  for (int64_t r0 = 0; r0 < l.N; r0 += l.R) {
    const int64_t rows = l.N - r0 < l.R ? l.N - r0 : l.R;
    for (int64_t s0 = 0; s0 < l.S; s0 += 65535) {
      const int64_t segs = l.S - s0 < 65535 ? l.S - s0 : 65535;
      const dim3 grid((unsigned)l.W, (unsigned)((rows + 63) / 64), (unsigned)segs);
      nms_mask<<<grid, 64, 0, stream>>>(s0, l.N, l.W, l.R, r0, a->iou_threshold, cand_count, sbox, sarea, mask);
    }
    nms_scan<<<(unsigned)l.S, kScanThreads, 0, stream>>>(l.N, l.W, l.R, r0, l.cap, cand_count, order, mask, removed,
                                                         sel, sel_count);
  }
  nms_counts<<<grid_for(l.S, 256), 256, 0, stream>>>(sel_count, l.S, offsets);
  exclusive_scan<<<1, 1024, 0, stream>>>(offsets, l.S, count);
  nms_write<<<(unsigned)l.S, 128, 0, stream>>>(a->classes, l.cap, sel_count, sel, offsets, y);
  return cudaGetLastError();
}

}  // namespace

extern "C" size_t cuda_nonzero_scratch(int64_t numel) {
  const int64_t blocks = (numel + CUDA_NONZERO_CHUNK - 1) / CUDA_NONZERO_CHUNK;
  return (size_t)(blocks > 0 ? blocks : 1) * sizeof(int64_t);
}

extern "C" cudaError_t cuda_select_nonzero(int elem_size, uint64_t sign_mask, const void* x, const gfx_shape* x_shape,
                                           int64_t* y, int64_t* count, void* scratch, cudaStream_t stream) {
  switch (elem_size) {
    case 1: return nonzero_typed<uint8_t>(sign_mask, x, x_shape, y, count, scratch, stream);
    case 2: return nonzero_typed<uint16_t>(sign_mask, x, x_shape, y, count, scratch, stream);
    case 4: return nonzero_typed<uint32_t>(sign_mask, x, x_shape, y, count, scratch, stream);
    case 8: return nonzero_typed<uint64_t>(sign_mask, x, x_shape, y, count, scratch, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" size_t cuda_nms_scratch(int64_t batches, int64_t classes, int64_t boxes, int64_t per_class) {
  return layout_of(batches, classes, boxes, per_class).total;
}

extern "C" cudaError_t cuda_select_nms(const cuda_nms_args* a, int64_t* y, int64_t* count, void* scratch,
                                       size_t scratch_bytes, cudaStream_t stream) {
  switch (a->dtype) {
    case GFX_DTYPE_F32: return nms_typed<float>(a, y, count, scratch, scratch_bytes, stream);
    case GFX_DTYPE_F16: return nms_typed<__half>(a, y, count, scratch, scratch_bytes, stream);
    case GFX_DTYPE_BF16: return nms_typed<__nv_bfloat16>(a, y, count, scratch, scratch_bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

template <typename U>
static cudaError_t preload_nonzero() {
  const void* kernels[] = {(const void*)nz_count<U>, (const void*)nz_write<U>};
  return CUDA_LOAD_KERNELS(kernels);
}

template <typename T>
static cudaError_t preload_nms() {
  const void* kernels[] = {(const void*)nms_rank<T>, (const void*)nms_boxes<T>};
  return CUDA_LOAD_KERNELS(kernels);
}

extern "C" cudaError_t cuda_select_preload(void) {
  cudaError_t e;
  if ((e = preload_nonzero<uint8_t>()) != cudaSuccess || (e = preload_nonzero<uint16_t>()) != cudaSuccess ||
      (e = preload_nonzero<uint32_t>()) != cudaSuccess || (e = preload_nonzero<uint64_t>()) != cudaSuccess ||
      (e = preload_nms<float>()) != cudaSuccess || (e = preload_nms<__half>()) != cudaSuccess ||
      (e = preload_nms<__nv_bfloat16>()) != cudaSuccess)
    return e;
  const void* kernels[] = {(const void*)exclusive_scan, (const void*)nms_mask, (const void*)nms_scan,
                           (const void*)nms_counts, (const void*)nms_write};
  return CUDA_LOAD_KERNELS(kernels);
}

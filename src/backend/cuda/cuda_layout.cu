// gfxep CUDA backend — kernels of the layout and data movement ops (see cuda_layout.h).
//
// One kernel per primitive, templated on the element's unsigned integer type of 1, 2, 4 or 8
// bytes. Every kernel uses a grid-stride loop with 64-bit indices, so a capped grid covers any size.
#include <cuda_runtime.h>
#include <stdint.h>

#include "backend/cuda/cuda_layout.h"

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

template <typename T>
void launch_plan(const ir_copy_plan* plan, const void* src, void* dst, cudaStream_t stream) {
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

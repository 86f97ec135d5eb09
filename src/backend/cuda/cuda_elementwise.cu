/* gfxep CUDA backend — float32 element-wise kernels: Add, Sub, Mul, Div (numpy broadcasting), Relu.
 *
 * Three layers per op: a `static __global__` kernel, a host launcher that picks the kernel and the
 * grid for a cudaStream_t, and an extern "C" entry for the C code that returns the launch error.
 * Every kernel uses a grid-stride loop with 64-bit element indices, so a capped grid covers any size.
 */
#include "backend/cuda/cuda_elementwise.h"

namespace {

const int kBlockSize = 256;
/* Enough blocks to fill any current GPU several times over; grid-stride loops do the rest. */
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

int64_t element_count(const gfx_shape* s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

/* ---- the operations ---- */

struct add_op {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct sub_op {
  __device__ float operator()(float a, float b) const { return a - b; }
};
struct mul_op {
  __device__ float operator()(float a, float b) const { return a * b; }
};
/* Plain `/` is IEEE division as long as nothing builds this file with --use_fast_math. */
struct div_op {
  __device__ float operator()(float a, float b) const { return a / b; }
};

/* ---- broadcasting ---- */

/* How an output index maps to input offsets: dims of the (simplified) output and, per dim, each
 * input's element stride, 0 where that input is broadcast. Passed to kernels by value. Index is
 * int32_t when every offset fits, because 64-bit division is several times slower on the GPU. */
template <typename Index>
struct broadcast_map {
  int rank;
  Index dims[GFX_MAX_RANK];
  Index a_strides[GFX_MAX_RANK];
  Index b_strides[GFX_MAX_RANK];
};

/* Row-major strides of `in` right-aligned to the output's rank, 0 for broadcast (size-1) dims. */
void broadcast_strides(const gfx_shape* in, const gfx_shape* out, int64_t* strides) {
  int64_t stride = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    int in_d = d - (out->rank - in->rank);
    int64_t dim = in_d >= 0 ? in->dims[in_d] : 1;
    strides[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

/* Drops size-1 output dims and merges neighbours that both inputs walk contiguously (or both
 * broadcast), so the kernel divides as few times as possible: [8,16,32] + [8,1,32] keeps 3 dims,
 * [8,16,32] + [1,1,32] becomes [128,32]. */
template <typename Index>
broadcast_map<Index> simplified_map(const gfx_shape* a, const gfx_shape* b, const gfx_shape* out) {
  int64_t a_strides[GFX_MAX_RANK], b_strides[GFX_MAX_RANK];
  broadcast_strides(a, out, a_strides);
  broadcast_strides(b, out, b_strides);
  broadcast_map<Index> map;
  map.rank = 0;
  for (int d = 0; d < out->rank; d++) {
    int64_t dim = out->dims[d];
    if (dim == 1) continue;
    int last = map.rank - 1;
    if (last >= 0 && (int64_t)map.a_strides[last] == a_strides[d] * dim &&
        (int64_t)map.b_strides[last] == b_strides[d] * dim) {
      map.dims[last] = (Index)((int64_t)map.dims[last] * dim);
      map.a_strides[last] = (Index)a_strides[d];
      map.b_strides[last] = (Index)b_strides[d];
      continue;
    }
    map.dims[map.rank] = (Index)dim;
    map.a_strides[map.rank] = (Index)a_strides[d];
    map.b_strides[map.rank] = (Index)b_strides[d];
    map.rank++;
  }
  return map;
}

/* ---- kernels ---- */

template <typename Op>
static __global__ void binary_same_shape_kernel(const float* a, const float* b, float* out, int64_t count) {
  Op op;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x)
    out[i] = op(a[i], b[i]);
}

template <typename Op>
static __global__ void binary_scalar_b_kernel(const float* a, const float* b, float* out, int64_t count) {
  Op op;
  const float scalar = *b;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x)
    out[i] = op(a[i], scalar);
}

template <typename Op>
static __global__ void binary_scalar_a_kernel(const float* a, const float* b, float* out, int64_t count) {
  Op op;
  const float scalar = *a;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x)
    out[i] = op(scalar, b[i]);
}

template <typename Op, typename Index>
static __global__ void binary_broadcast_kernel(const float* a, const float* b, float* out, int64_t count,
                                               broadcast_map<Index> map) {
  Op op;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    Index rest = (Index)i, a_offset = 0, b_offset = 0;
    for (int d = map.rank - 1; d >= 0; d--) {
      Index coord = rest % map.dims[d];
      rest /= map.dims[d];
      a_offset += coord * map.a_strides[d];
      b_offset += coord * map.b_strides[d];
    }
    out[i] = op(a[a_offset], b[b_offset]);
  }
}

static __global__ void relu_kernel(const float* x, float* y, int64_t count) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count; i += (int64_t)blockDim.x * gridDim.x) {
    float v = x[i];
    y[i] = v < 0.0f ? 0.0f : v; /* not fmaxf, which would turn NaN into 0 */
  }
}

/* ---- host launchers ---- */

template <typename Op>
void launch_binary(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape, float* out,
                   const gfx_shape* out_shape, cudaStream_t stream) {
  const int64_t count = element_count(out_shape);
  if (count == 0) return;
  const int64_t a_count = element_count(a_shape), b_count = element_count(b_shape);
  const unsigned int grid = grid_for(count);
  if (a_count == count && b_count == count) {
    binary_same_shape_kernel<Op><<<grid, kBlockSize, 0, stream>>>(a, b, out, count);
  } else if (b_count == 1 && a_count == count) {
    binary_scalar_b_kernel<Op><<<grid, kBlockSize, 0, stream>>>(a, b, out, count);
  } else if (a_count == 1 && b_count == count) {
    binary_scalar_a_kernel<Op><<<grid, kBlockSize, 0, stream>>>(a, b, out, count);
  } else if (count <= INT32_MAX) {
    /* Input offsets never exceed the output count here: each input has at most as many elements. */
    binary_broadcast_kernel<Op, int32_t><<<grid, kBlockSize, 0, stream>>>(
        a, b, out, count, simplified_map<int32_t>(a_shape, b_shape, out_shape));
  } else {
    binary_broadcast_kernel<Op, int64_t><<<grid, kBlockSize, 0, stream>>>(
        a, b, out, count, simplified_map<int64_t>(a_shape, b_shape, out_shape));
  }
}

void launch_relu(const float* x, float* y, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  relu_kernel<<<grid_for(count), kBlockSize, 0, stream>>>(x, y, count);
}

/* Looking a kernel up loads it. CUDA loads modules lazily by default (CUDA_MODULE_LOADING=LAZY), and
 * loading on first launch can wait for work already queued on the device: a first Run queued behind
 * a semaphore wait (the interop frame loop) would then block the host until the renderer signals,
 * which it cannot do while its thread is blocked. */
template <typename Op>
cudaError_t preload_binary() {
  cudaFuncAttributes attr;
  cudaError_t e;
  if ((e = cudaFuncGetAttributes(&attr, binary_same_shape_kernel<Op>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, binary_scalar_b_kernel<Op>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, binary_scalar_a_kernel<Op>)) != cudaSuccess) return e;
  if ((e = cudaFuncGetAttributes(&attr, binary_broadcast_kernel<Op, int32_t>)) != cudaSuccess) return e;
  return cudaFuncGetAttributes(&attr, binary_broadcast_kernel<Op, int64_t>);
}

}  // namespace

extern "C" cudaError_t cuda_elementwise_preload(void) {
  cudaError_t e;
  if ((e = preload_binary<add_op>()) != cudaSuccess) return e;
  if ((e = preload_binary<sub_op>()) != cudaSuccess) return e;
  if ((e = preload_binary<mul_op>()) != cudaSuccess) return e;
  if ((e = preload_binary<div_op>()) != cudaSuccess) return e;
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, relu_kernel);
}

/* ---- C entries ---- */

extern "C" cudaError_t cuda_add_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                                    float* out, const gfx_shape* out_shape, cudaStream_t stream) {
  launch_binary<add_op>(a, a_shape, b, b_shape, out, out_shape, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_sub_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                                    float* out, const gfx_shape* out_shape, cudaStream_t stream) {
  launch_binary<sub_op>(a, a_shape, b, b_shape, out, out_shape, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_mul_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                                    float* out, const gfx_shape* out_shape, cudaStream_t stream) {
  launch_binary<mul_op>(a, a_shape, b, b_shape, out, out_shape, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_div_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                                    float* out, const gfx_shape* out_shape, cudaStream_t stream) {
  launch_binary<div_op>(a, a_shape, b, b_shape, out, out_shape, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_relu_f32(const float* x, float* y, int64_t count, cudaStream_t stream) {
  launch_relu(x, y, count, stream);
  return cudaGetLastError();
}

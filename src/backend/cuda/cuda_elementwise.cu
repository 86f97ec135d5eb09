/* gfxep CUDA backend — element-wise kernels: unary math and activations, numpy-broadcasting binary
 * and variadic ops, comparisons, Where, Cast and inference BatchNormalization.
 *
 * Kernels are templates over the stored element type (float, __half, __nv_bfloat16, int32_t,
 * int64_t); the operation is a runtime enum in a by-value argument struct, the same for every
 * thread, so the switch costs a uniform branch. Float types compute in float and round once at the
 * store; integers compute in int64 with wrap-around. Every kernel uses a grid-stride loop with
 * 64-bit element indices, so a capped grid covers any size. Nothing here allocates or syncs: the
 * launches can be captured into CUDA graphs.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <type_traits>

#include "backend/cuda/cuda_activation.cuh"
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

#define GRID_STRIDE_LOOP(i, count) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (count); i += (int64_t)blockDim.x * gridDim.x)

/* ---- element types: load to the compute type, store from it ---- */

/* float types compute in float, integer types in int64 */
template <typename T> struct compute_of { typedef float type; };
template <> struct compute_of<int32_t> { typedef int64_t type; };
template <> struct compute_of<int64_t> { typedef int64_t type; };
template <> struct compute_of<bool> { typedef int64_t type; };

__device__ inline float load(float v) { return v; }
__device__ inline float load(__half v) { return __half2float(v); }
__device__ inline float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline int64_t load(int32_t v) { return v; }
__device__ inline int64_t load(int64_t v) { return v; }
__device__ inline int64_t load(bool v) { return v ? 1 : 0; }

/* Round-to-nearest-even conversions; an int64 result wraps to int32 by keeping the low bits. */
template <typename T> __device__ inline T store(float v);
template <> __device__ inline float store<float>(float v) { return v; }
template <> __device__ inline __half store<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 store<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <typename T> __device__ inline T store(int64_t v);
template <> __device__ inline int32_t store<int32_t>(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
template <> __device__ inline int64_t store<int64_t>(int64_t v) { return v; }
template <> __device__ inline bool store<bool>(int64_t v) { return v != 0; }
template <> __device__ inline bool store<bool>(float v) { return v != 0.0f; }

/* An element of any handled type as float; for Pow's exponent, whose type may differ from the base. */
__device__ inline float load_any_as_float(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case GFX_DTYPE_F32: return ((const float*)p)[i];
    case GFX_DTYPE_F16: return __half2float(((const __half*)p)[i]);
    case GFX_DTYPE_BF16: return __bfloat162float(((const __nv_bfloat16*)p)[i]);
    case GFX_DTYPE_I32: return (float)((const int32_t*)p)[i];
    case GFX_DTYPE_I64: return (float)((const int64_t*)p)[i];
    default: return 0.0f;
  }
}

/* ---- unary ---- */

__device__ inline float unary_op(const cuda_ew_unary_args& a, float x) {
  switch (a.op) {
    /* the activations a Conv epilogue applies too: one definition (cuda_activation.cuh) */
    case GFX_OP_RELU: return cuda_relu(x);
    case GFX_OP_LEAKY_RELU: return cuda_leaky_relu(x, a.alpha);
    case GFX_OP_SIGMOID: return cuda_sigmoid(x);
    case GFX_OP_TANH: return tanhf(x);
    case GFX_OP_HARD_SIGMOID: return cuda_hard_sigmoid(x, a.alpha, a.beta);
    case GFX_OP_HARD_SWISH: return cuda_hard_swish(x);
    case GFX_OP_CLIP: return cuda_clip(x, a.has_min ? a.min : -INFINITY, a.has_max ? a.max : INFINITY);
    case GFX_OP_ELU: return cuda_elu(x, a.alpha);
    case GFX_OP_SELU: return x > 0.0f ? a.gamma * x : a.gamma * a.alpha * expm1f(x);
    case GFX_OP_GELU:
      if (a.gelu_tanh) return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
      return 0.5f * x * (1.0f + erff(x * 0.7071067812f));
    case GFX_OP_ERF: return erff(x);
    /* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no loss for small */
    case GFX_OP_SOFTPLUS: return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    case GFX_OP_SQRT: return sqrtf(x);
    case GFX_OP_EXP: return expf(x);
    case GFX_OP_LOG: return logf(x);
    case GFX_OP_NEG: return -x;
    case GFX_OP_ABS: return fabsf(x);
    case GFX_OP_RECIPROCAL: return 1.0f / x;
    case GFX_OP_FLOOR: return floorf(x);
    case GFX_OP_CEIL: return ceilf(x);
    /* rintf rounds halves to even (the default rounding mode), as Round asks; roundf would round
     * them away from zero */
    case GFX_OP_ROUND: return rintf(x);
    /* 0, -0 and NaN pass through */
    case GFX_OP_SIGN: return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;
    /* sinf/cosf stay within 2 ulp at any argument (a slow but exact reduction for large ones); the
     * __sinf/__cosf intrinsics (and --use_fast_math) lose all accuracy a few periods out */
    case GFX_OP_SIN: return sinf(x);
    case GFX_OP_COS: return cosf(x);
    case GFX_OP_SOFTSIGN: return x / (1.0f + fabsf(x));
    /* x * tanh(softplus(x)), softplus in Softplus's overflow-free form */
    case GFX_OP_MISH: return x * tanhf(fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))));
    /* fmaxf/fminf as the reference's fmax/fmin: a NaN input gives 0 there too */
    case GFX_OP_CELU: return fmaxf(x, 0.0f) + fminf(0.0f, a.alpha * expm1f(x / a.alpha));
    case GFX_OP_THRESHOLDED_RELU: return x > a.alpha || isnan(x) ? x : 0.0f;
    default: return 0.0f;
  }
}

/* Integers: only Neg and Abs (0 - x in unsigned arithmetic: the minimum wraps to itself). */
__device__ inline int64_t unary_op(const cuda_ew_unary_args& a, int64_t x) {
  int64_t neg = (int64_t)(0ull - (uint64_t)x);
  return a.op == GFX_OP_ABS ? (x < 0 ? neg : x) : neg;
}

template <typename T>
__global__ void unary_kernel(cuda_ew_unary_args args, const T* x, T* y, int64_t count) {
  GRID_STRIDE_LOOP(i, count) y[i] = store<T>(unary_op(args, load(x[i])));
}

/* ---- broadcasting ---- */

/* How an output index maps to each input's offset: dims of the (simplified) output and, per input
 * and dim, the element stride, 0 where that input is broadcast. Passed to kernels by value. Index is
 * int32_t when every offset fits, because 64-bit division is several times slower on the GPU. */
template <typename Index>
struct broadcast_map {
  int rank, n;
  Index dims[GFX_MAX_RANK];
  Index strides[IR_MAX_IO][GFX_MAX_RANK];
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

/* Drops size-1 output dims and merges neighbours that every input walks contiguously (or
 * broadcasts), so the kernel divides as few times as possible: [8,16,32] + [8,1,32] keeps 3 dims,
 * [8,16,32] + [1,1,32] becomes [128,32], same shapes become one dim. */
template <typename Index>
broadcast_map<Index> simplified_map(int n, const gfx_shape* const* in, const gfx_shape* out) {
  int64_t strides[IR_MAX_IO][GFX_MAX_RANK];
  for (int i = 0; i < n; i++) broadcast_strides(in[i], out, strides[i]);
  broadcast_map<Index> map;
  map.rank = 0;
  map.n = n;
  for (int d = 0; d < out->rank; d++) {
    int64_t dim = out->dims[d];
    if (dim == 1) continue;
    int last = map.rank - 1;
    bool merge = last >= 0;
    for (int i = 0; i < n && merge; i++) merge = (int64_t)map.strides[i][last] == strides[i][d] * dim;
    if (merge) {
      map.dims[last] = (Index)((int64_t)map.dims[last] * dim);
      for (int i = 0; i < n; i++) map.strides[i][last] = (Index)strides[i][d];
      continue;
    }
    map.dims[map.rank] = (Index)dim;
    for (int i = 0; i < n; i++) map.strides[i][map.rank] = (Index)strides[i][d];
    map.rank++;
  }
  return map;
}

/* Every input's offset of output element i. */
template <typename Index>
__device__ inline void offsets_of(const broadcast_map<Index>& map, int64_t i, Index* offsets) {
  for (int k = 0; k < map.n; k++) offsets[k] = 0;
  Index rest = (Index)i;
  for (int d = map.rank - 1; d >= 0; d--) {
    Index coord = d == 0 ? rest : rest % map.dims[d]; /* the outermost dim needs no division */
    rest /= map.dims[d];
    for (int k = 0; k < map.n; k++) offsets[k] += coord * map.strides[k][d];
  }
}

/* Pointers of a broadcast launch, by value. */
struct operands {
  const void* in[IR_MAX_IO];
  int exponent_dtype; /* Pow: the element type of in[1] */
  int base_dtype;     /* the element type of in[0] */
};

__device__ inline float nan_min(float a, float b) { return isnan(a) || isnan(b) ? a + b : fminf(a, b); }
__device__ inline float nan_max(float a, float b) { return isnan(a) || isnan(b) ? a + b : fmaxf(a, b); }

__device__ inline float binary_op(gfx_op op, float a, float b) {
  switch (op) {
    case GFX_OP_ADD:
    case GFX_OP_SUM:
    case GFX_OP_MEAN: return a + b;
    case GFX_OP_SUB: return a - b;
    case GFX_OP_MUL: return a * b;
    /* plain `/` is IEEE division as long as nothing builds this file with --use_fast_math */
    case GFX_OP_DIV: return a / b;
    case GFX_OP_POW: return powf(a, b);
    case GFX_OP_PRELU: return a < 0.0f ? b * a : a;
    case GFX_OP_EQUAL: return a == b;
    case GFX_OP_GREATER: return a > b;
    case GFX_OP_LESS: return a < b;
    case GFX_OP_GREATER_OR_EQUAL: return a >= b; /* false against NaN, like the others */
    case GFX_OP_LESS_OR_EQUAL: return a <= b;
    case GFX_OP_MIN: return nan_min(a, b);
    case GFX_OP_MAX: return nan_max(a, b);
    default: return 0.0f;
  }
}

__device__ inline int64_t binary_op(gfx_op op, int64_t a, int64_t b) {
  switch (op) {
    case GFX_OP_ADD:
    case GFX_OP_SUM: return (int64_t)((uint64_t)a + (uint64_t)b);
    case GFX_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case GFX_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    /* parse admits only constant divisors without zeros; -1 wraps INT64_MIN instead of trapping */
    case GFX_OP_DIV: return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
    case GFX_OP_EQUAL: return a == b;
    case GFX_OP_GREATER: return a > b;
    case GFX_OP_LESS: return a < b;
    case GFX_OP_GREATER_OR_EQUAL: return a >= b;
    case GFX_OP_LESS_OR_EQUAL: return a <= b;
    case GFX_OP_MIN: return a < b ? a : b;
    case GFX_OP_MAX: return a > b ? a : b;
    default: return 0;
  }
}

/* Variadic ops fold left over their inputs; two-operand ops are the case n == 2. Mean divides the
 * sum once at the end. */
template <typename In, typename Out, typename Index>
__global__ void broadcast_kernel(gfx_op op, operands ops, Out* out, int64_t count, broadcast_map<Index> map) {
  typedef typename compute_of<In>::type C;
  GRID_STRIDE_LOOP(i, count) {
    Index off[IR_MAX_IO];
    offsets_of(map, i, off);
    C r = load(((const In*)ops.in[0])[off[0]]);
    if (op == GFX_OP_POW) {
      r = (C)binary_op(op, (float)r, load_any_as_float(ops.in[1], ops.exponent_dtype, off[1]));
    } else {
      for (int k = 1; k < map.n; k++) r = binary_op(op, r, load(((const In*)ops.in[k])[off[k]]));
    }
    if (op == GFX_OP_MEAN) r = (C)(r / (C)map.n);
    out[i] = store<Out>(r);
  }
}

/* ---- fast paths: contiguous rows with 16-byte vectors ----
 *
 * The generic kernels above move one element per thread and iteration and find every input's
 * offset through a division chain: fine for odd broadcasts, but a same-shape fp16 Add then reaches
 * about a fifth of the memory bandwidth (2-byte accesses keep too few bytes in flight, and the index
 * math costs more than the add). Almost every broadcast in a real network is one of: same shapes
 * or a scalar operand ([N,C,H,W] + [N,C,H,W] or + [1]), a per-channel operand ([N,C,H,W] +
 * [1,C,1,1]) or a last-dim operand ([..., K] + [K]). After simplified_map these all share one
 * form: the output is `rows` rows of K contiguous elements, and within a row every input either
 * walks with the output (column stride 1) or holds one value (column stride 0). The row kernels
 * find each input's row offset once per row (a short division chain over the outer dims, 32-bit
 * when it fits), then move 16 bytes per access along the row with no index math at all. */

/* N elements of T as one aligned 16-byte (or smaller, for bool outputs) memory access. */
template <typename T, int N>
struct alignas(sizeof(T) * N) pack {
  T v[N];
};

/* A broadcast in row form (see above): outer dims and per-input outer strides, each input's
 * column stride (0 or 1). Passed by value. */
struct row_map {
  int n, outer_rank;
  int64_t rows, K;
  int64_t outer_dims[GFX_MAX_RANK];
  int64_t outer_strides[IR_MAX_IO][GFX_MAX_RANK];
  int col[IR_MAX_IO];
};

/* Every input's element offset of the start of `row`. The outermost dim needs no division, so the
 * common 2-D forms ([rows, K] with a row vector or a per-row value) cost no division at all. */
__device__ inline void row_offsets(const row_map& m, int64_t row, int64_t* off) {
  for (int k = 0; k < m.n; k++) off[k] = 0;
  if (m.rows <= (int64_t)UINT32_MAX) {
    uint32_t rest = (uint32_t)row;
    for (int d = m.outer_rank - 1; d >= 0; d--) {
      const uint32_t dim = (uint32_t)m.outer_dims[d];
      const uint32_t coord = d == 0 ? rest : rest % dim;
      if (d > 0) rest /= dim;
      for (int k = 0; k < m.n; k++) off[k] += (int64_t)coord * m.outer_strides[k][d];
    }
  } else {
    int64_t rest = row;
    for (int d = m.outer_rank - 1; d >= 0; d--) {
      const int64_t coord = d == 0 ? rest : rest % m.outer_dims[d];
      if (d > 0) rest /= m.outer_dims[d];
      for (int k = 0; k < m.n; k++) off[k] += coord * m.outer_strides[k][d];
    }
  }
}

/* The 2-D launch of a row kernel: threadIdx.x walks a row's columns (vectors), threadIdx.y picks
 * one of several rows per block when rows are short, so no more than half the lanes idle; about
 * four waves of blocks on the largest GPUs (grid-stride loops cover the rest). */
struct row_launch {
  dim3 grid, block;
};

row_launch row_launch_for(int64_t rows, int64_t columns) {
  int64_t tx = columns >= kBlockSize ? kBlockSize : (columns + 31) / 32 * 32;
  if (tx < 32) tx = 32;
  const int64_t ty = kBlockSize / tx;
  int64_t bx = (columns + tx - 1) / tx;
  if (bx > 4096) bx = 4096;
  if (bx < 1) bx = 1;
  int64_t by = (rows + ty - 1) / ty;
  if (by > 65535) by = 65535;
  row_launch l;
  l.grid = dim3((unsigned)bx, (unsigned)by, 1);
  l.block = dim3((unsigned)tx, (unsigned)ty, 1);
  return l;
}

/* binary_op with the operation fixed at compile time (Op >= 0: the switch folds away) or read at
 * run time (Op < 0, the less common ops). */
template <int Op, typename C>
__device__ inline C binary_fixed(gfx_op op, C a, C b) {
  return binary_op(Op >= 0 ? (gfx_op)Op : op, a, b);
}

/* out row element by element, column `e` (the scalar path and the vector path's tail). */
template <typename In, typename Out, int Op>
__device__ inline void row_element(gfx_op op, const operands& ops, const row_map& m, const int64_t* off,
                                   Out* out_row, int64_t e) {
  typedef typename compute_of<In>::type C;
  C r = load(((const In*)ops.in[0])[off[0] + (m.col[0] ? e : 0)]);
  for (int k = 1; k < m.n; k++) r = binary_fixed<Op>(op, r, load(((const In*)ops.in[k])[off[k] + (m.col[k] ? e : 0)]));
  if (op == GFX_OP_MEAN) r = (C)(r / (C)m.n);
  out_row[e] = store<Out>(r);
}

/* N == 1: scalar accesses (misaligned pointers or rows whose length is no multiple of the vector);
 * N > 1: 16-byte accesses of In, the host has checked every pointer's alignment and that rows start
 * on a vector boundary (K % N == 0, or a single row whose tail the first threads finish). */
template <typename In, typename Out, int Op, int N>
__global__ void rows_kernel(gfx_op op, operands ops, Out* out, row_map m) {
  typedef typename compute_of<In>::type C;
  const int64_t vectors = m.K / N;
  const int64_t tail_begin = vectors * N;
  const int64_t col0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, col_step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; row < m.rows;
       row += (int64_t)blockDim.y * gridDim.y) {
    int64_t off[IR_MAX_IO];
    row_offsets(m, row, off);
    Out* out_row = out + row * m.K;
    for (int64_t v = col0; v < vectors; v += col_step) {
      C r[N];
      if (m.col[0]) {
        const pack<In, N> p = *(const pack<In, N>*)((const In*)ops.in[0] + off[0] + v * N);
#pragma unroll
        for (int j = 0; j < N; j++) r[j] = load(p.v[j]);
      } else {
        const C s = load(((const In*)ops.in[0])[off[0]]);
#pragma unroll
        for (int j = 0; j < N; j++) r[j] = s;
      }
      for (int k = 1; k < m.n; k++) {
        const In* src = (const In*)ops.in[k] + off[k];
        if (m.col[k]) {
          const pack<In, N> p = *(const pack<In, N>*)(src + v * N);
#pragma unroll
          for (int j = 0; j < N; j++) r[j] = binary_fixed<Op>(op, r[j], load(p.v[j]));
        } else {
          const C s = load(*src);
#pragma unroll
          for (int j = 0; j < N; j++) r[j] = binary_fixed<Op>(op, r[j], s);
        }
      }
      pack<Out, N> o;
#pragma unroll
      for (int j = 0; j < N; j++) o.v[j] = store<Out>(op == GFX_OP_MEAN ? (C)(r[j] / (C)m.n) : r[j]);
      *(pack<Out, N>*)(out_row + v * N) = o;
    }
    for (int64_t e = tail_begin + col0; e < m.K; e += col_step) row_element<In, Out, Op>(op, ops, m, off, out_row, e);
  }
}

bool aligned(const void* p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

/* The row form of a broadcast map, false when there is none: the innermost dim must be walked
 * with stride 0 or 1 by every input (always so after simplification) and long enough that the
 * row kernels keep at least half their lanes busy. */
bool row_form(const broadcast_map<int64_t>& map, int64_t count, row_map* m) {
  memset(m, 0, sizeof *m);
  m->n = map.n;
  if (map.rank == 0) { /* a single element */
    m->rows = 1;
    m->K = count;
    return true;
  }
  const int last = map.rank - 1;
  m->K = map.dims[last];
  m->rows = count / m->K;
  m->outer_rank = last;
  for (int d = 0; d < last; d++) m->outer_dims[d] = map.dims[d];
  for (int k = 0; k < map.n; k++) {
    if (map.strides[k][last] != 0 && map.strides[k][last] != 1) return false;
    m->col[k] = (int)map.strides[k][last];
    for (int d = 0; d < last; d++) m->outer_strides[k][d] = map.strides[k][d];
  }
  return m->rows == 1 || m->K >= 16;
}

/* Vector width in elements of In for a row launch: 16 bytes when every pointer allows it and
 * rows start on vector boundaries; 1 otherwise. */
template <typename In, typename Out>
int row_vector_width(const row_map& m, const operands& ops, const void* out) {
  const int N = 16 / (int)sizeof(In);
  if (N <= 1) return 1;
  if (m.rows > 1 && m.K % N != 0) return 1;
  if (!aligned(out, (size_t)N * sizeof(Out))) return 1;
  for (int k = 0; k < m.n; k++)
    if (m.col[k] && !aligned(ops.in[k], 16)) return 1;
  return N;
}

/* In is 2..8 bytes here, so a 16-byte vector holds 2..8 elements. */
template <typename In, typename Out, int Op>
void launch_rows_op(gfx_op op, const operands& ops, Out* out, const row_map& m, int N, cudaStream_t stream) {
  constexpr int V = 16 / (int)sizeof(In);
  if (N > 1) {
    const row_launch l = row_launch_for(m.rows, m.K / V > 0 ? m.K / V : 1);
    rows_kernel<In, Out, Op, V><<<l.grid, l.block, 0, stream>>>(op, ops, out, m);
  } else {
    const row_launch l = row_launch_for(m.rows, m.K);
    rows_kernel<In, Out, -1, 1><<<l.grid, l.block, 0, stream>>>(op, ops, out, m);
  }
}

/* The hot arithmetic ops get their own vector kernels (no per-element switch); the rest share
 * one that reads the op at run time. */
template <typename In, typename Out>
void launch_rows(gfx_op op, const operands& ops, Out* out, const row_map& m, cudaStream_t stream) {
  const int N = row_vector_width<In, Out>(m, ops, out);
  if (N > 1 && std::is_same<In, Out>::value) {
    switch (op) {
      case GFX_OP_ADD: launch_rows_op<In, Out, GFX_OP_ADD>(op, ops, out, m, N, stream); return;
      case GFX_OP_SUB: launch_rows_op<In, Out, GFX_OP_SUB>(op, ops, out, m, N, stream); return;
      case GFX_OP_MUL: launch_rows_op<In, Out, GFX_OP_MUL>(op, ops, out, m, N, stream); return;
      case GFX_OP_DIV: launch_rows_op<In, Out, GFX_OP_DIV>(op, ops, out, m, N, stream); return;
      default: break;
    }
  }
  launch_rows_op<In, Out, -1>(op, ops, out, m, N, stream);
}


/* The launch, with 32-bit offsets when the output count allows (an input never has more
 * elements than the output, so its offsets fit too). */
template <typename In, typename Out>
void launch_broadcast(gfx_op op, int n, const operands& ops, const gfx_shape* const* shapes, Out* out,
                      const gfx_shape* out_shape, cudaStream_t stream) {
  const int64_t count = element_count(out_shape);
  if (count == 0) return;
  /* the row kernels read every input as In: Pow only when its exponent has the base's type */
  const bool same_types = op != GFX_OP_POW || ops.exponent_dtype == ops.base_dtype;
  row_map m;
  if (same_types && row_form(simplified_map<int64_t>(n, shapes, out_shape), count, &m)) {
    launch_rows<In, Out>(op, ops, out, m, stream);
    return;
  }
  if (count <= INT32_MAX)
    broadcast_kernel<In, Out, int32_t><<<grid_for(count), kBlockSize, 0, stream>>>(
        op, ops, out, count, simplified_map<int32_t>(n, shapes, out_shape));
  else
    broadcast_kernel<In, Out, int64_t><<<grid_for(count), kBlockSize, 0, stream>>>(
        op, ops, out, count, simplified_map<int64_t>(n, shapes, out_shape));
}

/* ---- Where ---- */

/* Elements are moved as unsigned integers of their size: no conversion, bit-exact for any type. */
template <typename Bits, typename Index>
__global__ void where_kernel(const bool* cond, const Bits* x, const Bits* y, Bits* out, int64_t count,
                             broadcast_map<Index> map) {
  GRID_STRIDE_LOOP(i, count) {
    Index off[IR_MAX_IO];
    offsets_of(map, i, off);
    out[i] = cond[off[0]] ? x[off[1]] : y[off[2]];
  }
}

/* Where in row form (in 0 = cond, 1 = x, 2 = y); N elements of Bits per access. */
template <typename Bits, int N>
__global__ void where_rows_kernel(const bool* cond, const Bits* x, const Bits* y, Bits* out, row_map m) {
  const int64_t vectors = m.K / N;
  const int64_t col0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, col_step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; row < m.rows;
       row += (int64_t)blockDim.y * gridDim.y) {
    int64_t off[IR_MAX_IO];
    row_offsets(m, row, off);
    Bits* out_row = out + row * m.K;
    for (int64_t v = col0; v < vectors; v += col_step) {
      pack<bool, N> c;
      pack<Bits, N> a, b, o;
      if (m.col[0]) c = *(const pack<bool, N>*)(cond + off[0] + v * N);
      else
        for (int j = 0; j < N; j++) c.v[j] = cond[off[0]];
      if (m.col[1]) a = *(const pack<Bits, N>*)(x + off[1] + v * N);
      else
        for (int j = 0; j < N; j++) a.v[j] = x[off[1]];
      if (m.col[2]) b = *(const pack<Bits, N>*)(y + off[2] + v * N);
      else
        for (int j = 0; j < N; j++) b.v[j] = y[off[2]];
#pragma unroll
      for (int j = 0; j < N; j++) o.v[j] = c.v[j] ? a.v[j] : b.v[j];
      *(pack<Bits, N>*)(out_row + v * N) = o;
    }
    for (int64_t e = vectors * N + col0; e < m.K; e += col_step)
      out_row[e] = cond[off[0] + (m.col[0] ? e : 0)] ? x[off[1] + (m.col[1] ? e : 0)] : y[off[2] + (m.col[2] ? e : 0)];
  }
}


/* Where in row form: 16 bytes of x, y and out per access when the pointers and rows allow. */
template <typename Bits>
void launch_where_rows(const bool* cond, const void* x, const void* y, void* out, const row_map& m,
                       cudaStream_t stream) {
  constexpr int V = 16 / (int)sizeof(Bits);
  const bool vec = (m.rows == 1 || m.K % V == 0) && aligned(out, 16) && (!m.col[0] || aligned(cond, V)) &&
                   (!m.col[1] || aligned(x, 16)) && (!m.col[2] || aligned(y, 16));
  if (vec) {
    const row_launch l = row_launch_for(m.rows, m.K / V > 0 ? m.K / V : 1);
    where_rows_kernel<Bits, V><<<l.grid, l.block, 0, stream>>>(cond, (const Bits*)x, (const Bits*)y, (Bits*)out, m);
  } else {
    const row_launch l = row_launch_for(m.rows, m.K);
    where_rows_kernel<Bits, 1><<<l.grid, l.block, 0, stream>>>(cond, (const Bits*)x, (const Bits*)y, (Bits*)out, m);
  }
}

template <typename Bits>
void launch_where(const bool* cond, const void* x, const void* y, void* out, const gfx_shape* const* shapes,
                  const gfx_shape* out_shape, cudaStream_t stream) {
  const int64_t count = element_count(out_shape);
  if (count == 0) return;
  row_map m;
  if (row_form(simplified_map<int64_t>(3, shapes, out_shape), count, &m)) {
    launch_where_rows<Bits>(cond, x, y, out, m, stream);
    return;
  }
  if (count <= INT32_MAX)
    where_kernel<Bits, int32_t><<<grid_for(count), kBlockSize, 0, stream>>>(
        cond, (const Bits*)x, (const Bits*)y, (Bits*)out, count, simplified_map<int32_t>(3, shapes, out_shape));
  else
    where_kernel<Bits, int64_t><<<grid_for(count), kBlockSize, 0, stream>>>(
        cond, (const Bits*)x, (const Bits*)y, (Bits*)out, count, simplified_map<int64_t>(3, shapes, out_shape));
}

/* ---- Cast ---- */

/* Float to integer as ONNX Runtime's CPU provider computes it on x86-64: truncation toward zero,
 * and the type's minimum for NaN and out-of-range values (the GPU's own conversion would saturate). */
template <typename To> __device__ inline To float_to_int(float v);
template <> __device__ inline int32_t float_to_int<int32_t>(float v) {
  return v >= -2147483648.0f && v < 2147483648.0f ? (int32_t)v : INT32_MIN;
}
template <> __device__ inline int64_t float_to_int<int64_t>(float v) {
  return v >= -9223372036854775808.0f && v < 9223372036854775808.0f ? (int64_t)v : INT64_MIN;
}

template <typename From, typename To> struct converter {
  /* float -> float: one rounding; float -> bool: v != 0 (NaN is true) */
  __device__ static To go(From v) { return store<To>(load(v)); }
};
template <typename From> struct converter<From, int32_t> {
  __device__ static int32_t go(From v) { return float_to_int<int32_t>(load(v)); }
};
template <typename From> struct converter<From, int64_t> {
  __device__ static int64_t go(From v) { return float_to_int<int64_t>(load(v)); }
};
/* from integers and bool: integer conversions wrap; to float types through float, as
 * static_cast<float> rounds an int64 once */
#define GFX_INT_SOURCE(From)                                                                           \
  template <typename To> struct converter<From, To> {                                                  \
    __device__ static To go(From v) { return store<To>((float)load(v)); }                              \
  };                                                                                                   \
  template <> struct converter<From, int32_t> {                                                        \
    __device__ static int32_t go(From v) { return store<int32_t>(load(v)); }                           \
  };                                                                                                   \
  template <> struct converter<From, int64_t> {                                                        \
    __device__ static int64_t go(From v) { return load(v); }                                           \
  };                                                                                                   \
  template <> struct converter<From, bool> {                                                           \
    __device__ static bool go(From v) { return load(v) != 0; }                                         \
  };
GFX_INT_SOURCE(int32_t)
GFX_INT_SOURCE(int64_t)
GFX_INT_SOURCE(bool)
#undef GFX_INT_SOURCE

template <typename From, typename To>
__global__ void cast_kernel(const From* x, To* y, int64_t count) {
  GRID_STRIDE_LOOP(i, count) y[i] = converter<From, To>::go(x[i]);
}

/* ---- BatchNormalization ---- */

template <typename T>
__global__ void batchnorm_kernel(const T* x, const T* scale, const T* bias, const T* mean, const T* var,
                                 float epsilon, T* y, int64_t count, int64_t channels, int64_t inner) {
  GRID_STRIDE_LOOP(i, count) {
    const int64_t c = i / inner % channels;
    /* rsqrtf is within 2 ulp, well inside the float tolerance */
    const float inv_std = rsqrtf(load(var[c]) + epsilon);
    y[i] = store<T>((load(x[i]) - load(mean[c])) * inv_std * load(scale[c]) + load(bias[c]));
  }
}

/* ---- unary, Cast, Where and BatchNormalization fast paths ---- */

/* Unary ops over contiguous tensors, 16 bytes per access; the op is fixed per instantiation
 * (unary_vec_body below is called from a switch outside the loop), so the loop carries no switch. */
template <typename T, int N, int Op>
__device__ inline void unary_vec_body(const cuda_ew_unary_args& a, const T* x, T* y, int64_t count) {
  cuda_ew_unary_args c = a;
  c.op = (gfx_op)Op;
  const int64_t vectors = count / N;
  const int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t v = first; v < vectors; v += step) {
    pack<T, N> p = ((const pack<T, N>*)x)[v];
#pragma unroll
    for (int j = 0; j < N; j++) p.v[j] = store<T>(unary_op(c, load(p.v[j])));
    ((pack<T, N>*)y)[v] = p;
  }
  for (int64_t i = vectors * N + first; i < count; i += step) y[i] = store<T>(unary_op(c, load(x[i])));
}

#define GFX_UNARY_CASE(OP) \
  case OP: unary_vec_body<T, N, OP>(a, x, y, count); break;

template <typename T, int N>
__global__ void unary_vec_kernel(cuda_ew_unary_args a, const T* x, T* y, int64_t count) {
  switch (a.op) {
    GFX_UNARY_CASE(GFX_OP_RELU)
    GFX_UNARY_CASE(GFX_OP_LEAKY_RELU)
    GFX_UNARY_CASE(GFX_OP_SIGMOID)
    GFX_UNARY_CASE(GFX_OP_TANH)
    GFX_UNARY_CASE(GFX_OP_HARD_SIGMOID)
    GFX_UNARY_CASE(GFX_OP_HARD_SWISH)
    GFX_UNARY_CASE(GFX_OP_CLIP)
    GFX_UNARY_CASE(GFX_OP_ELU)
    GFX_UNARY_CASE(GFX_OP_SELU)
    GFX_UNARY_CASE(GFX_OP_GELU)
    GFX_UNARY_CASE(GFX_OP_ERF)
    GFX_UNARY_CASE(GFX_OP_SOFTPLUS)
    GFX_UNARY_CASE(GFX_OP_SQRT)
    GFX_UNARY_CASE(GFX_OP_EXP)
    GFX_UNARY_CASE(GFX_OP_LOG)
    GFX_UNARY_CASE(GFX_OP_NEG)
    GFX_UNARY_CASE(GFX_OP_ABS)
    GFX_UNARY_CASE(GFX_OP_RECIPROCAL)
    GFX_UNARY_CASE(GFX_OP_FLOOR)
    GFX_UNARY_CASE(GFX_OP_CEIL)
    GFX_UNARY_CASE(GFX_OP_ROUND)
    GFX_UNARY_CASE(GFX_OP_SIGN)
    GFX_UNARY_CASE(GFX_OP_SIN)
    GFX_UNARY_CASE(GFX_OP_COS)
    GFX_UNARY_CASE(GFX_OP_SOFTSIGN)
    GFX_UNARY_CASE(GFX_OP_MISH)
    GFX_UNARY_CASE(GFX_OP_CELU)
    GFX_UNARY_CASE(GFX_OP_THRESHOLDED_RELU)
    default: break;
  }
}
#undef GFX_UNARY_CASE

/* Integers (Neg, Abs): their unary_op reads only whether the op is Abs. */
template <typename T, int N>
__global__ void unary_int_vec_kernel(cuda_ew_unary_args a, const T* x, T* y, int64_t count) {
  const int64_t vectors = count / N;
  const int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t v = first; v < vectors; v += step) {
    pack<T, N> p = ((const pack<T, N>*)x)[v];
#pragma unroll
    for (int j = 0; j < N; j++) p.v[j] = store<T>(unary_op(a, load(p.v[j])));
    ((pack<T, N>*)y)[v] = p;
  }
  for (int64_t i = vectors * N + first; i < count; i += step) y[i] = store<T>(unary_op(a, load(x[i])));
}

/* Blocks for a vectorized 1-D kernel: one vector per thread up to about 4 waves of the largest
 * GPUs (132 SMs x 8 blocks of 256), grid-stride beyond. */
unsigned int vec_grid_for(int64_t count, int N) {
  int64_t blocks = (count / N + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  return (unsigned int)(blocks < 4096 ? blocks : 4096);
}

/* Cast over contiguous tensors, N elements per access (16 bytes of the wider type). */
template <typename From, typename To, int N>
__global__ void cast_vec_kernel(const From* x, To* y, int64_t count) {
  const int64_t vectors = count / N;
  const int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t v = first; v < vectors; v += step) {
    const pack<From, N> p = ((const pack<From, N>*)x)[v];
    pack<To, N> q;
#pragma unroll
    for (int j = 0; j < N; j++) q.v[j] = converter<From, To>::go(p.v[j]);
    ((pack<To, N>*)y)[v] = q;
  }
  for (int64_t i = vectors * N + first; i < count; i += step) y[i] = converter<From, To>::go(x[i]);
}

/* BatchNormalization as rows of `inner` elements, one channel per row: the channel's factors are
 * computed once per row instead of a 64-bit division and five loads per element. N == 1 when a
 * pointer or the row length rules out 16-byte accesses. */
template <typename T, int N>
__global__ void batchnorm_rows_kernel(const T* x, const T* scale, const T* bias, const T* mean, const T* var,
                                      float epsilon, T* y, int64_t rows, int64_t channels, int64_t inner) {
  const int64_t vectors = inner / N;
  const int64_t col0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, col_step = (int64_t)blockDim.x * gridDim.x;
  for (int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; row < rows;
       row += (int64_t)blockDim.y * gridDim.y) {
    const int64_t c = row % channels;
    const float inv_std = rsqrtf(load(var[c]) + epsilon);
    const float m = load(mean[c]), s = load(scale[c]), b = load(bias[c]);
    const T* in = x + row * inner;
    T* out = y + row * inner;
    for (int64_t v = col0; v < vectors; v += col_step) {
      pack<T, N> p = ((const pack<T, N>*)in)[v];
#pragma unroll
      for (int j = 0; j < N; j++) p.v[j] = store<T>((load(p.v[j]) - m) * inv_std * s + b);
      ((pack<T, N>*)out)[v] = p;
    }
    for (int64_t e = vectors * N + col0; e < inner; e += col_step) out[e] = store<T>((load(in[e]) - m) * inv_std * s + b);
  }
}

/* ---- dispatch by element type ---- */

/* Calls f.template operator()<T>() with T the C++ type of dtype; false for a type not handled. */
template <typename F>
bool with_float_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    default: return false;
  }
}

template <typename F>
bool with_math_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_I32: f(int32_t()); return true;
    case GFX_DTYPE_I64: f(int64_t()); return true;
    default: return with_float_type(dtype, f);
  }
}

template <typename F>
bool with_cast_type(int dtype, F f) {
  if (dtype == GFX_DTYPE_BOOL) {
    f(bool());
    return true;
  }
  return with_math_type(dtype, f);
}

/* ---- preloading ---- */

/* Looking a kernel up loads it. CUDA loads modules lazily by default (CUDA_MODULE_LOADING=LAZY), and
 * loading on first launch can wait for work already queued on the device: a first Run queued behind
 * a semaphore wait (the interop frame loop) would then block the host until the renderer signals,
 * which it cannot do while its thread is blocked. */
template <typename K>
void preload(K* kernel, cudaError_t* e) {
  cudaFuncAttributes attr;
  if (*e == cudaSuccess) *e = cudaFuncGetAttributes(&attr, kernel);
}

template <typename In, typename Out>
void preload_broadcast(cudaError_t* e) {
  constexpr int V = 16 / (int)sizeof(In);
  preload(broadcast_kernel<In, Out, int32_t>, e);
  preload(broadcast_kernel<In, Out, int64_t>, e);
  preload(rows_kernel<In, Out, -1, 1>, e);
  preload(rows_kernel<In, Out, -1, V>, e);
  if (std::is_same<In, Out>::value) {
    preload(rows_kernel<In, Out, GFX_OP_ADD, V>, e);
    preload(rows_kernel<In, Out, GFX_OP_SUB, V>, e);
    preload(rows_kernel<In, Out, GFX_OP_MUL, V>, e);
    preload(rows_kernel<In, Out, GFX_OP_DIV, V>, e);
  }
}

template <typename Bits>
void preload_where(cudaError_t* e) {
  preload(where_kernel<Bits, int32_t>, e);
  preload(where_kernel<Bits, int64_t>, e);
  preload(where_rows_kernel<Bits, 1>, e);
  preload(where_rows_kernel<Bits, 16 / (int)sizeof(Bits)>, e);
}

}  // namespace

/* ---- C entries ---- */

extern "C" cudaError_t cuda_ew_unary(const cuda_ew_unary_args* args, int dtype, const void* x, void* y,
                                     int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const cuda_ew_unary_args a = *args;
  /* 16-byte accesses whenever both pointers allow (tensors from the allocator always do); the
   * scalar kernel serves misaligned views */
  const bool vec = aligned(x, 16) && aligned(y, 16);
  bool ok = with_math_type(dtype, [&](auto zero) {
    typedef decltype(zero) T;
    constexpr int V = 16 / (int)sizeof(T);
    if (!vec)
      unary_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>(a, (const T*)x, (T*)y, count);
    else if (std::is_integral<T>::value)
      unary_int_vec_kernel<T, V><<<vec_grid_for(count, V), kBlockSize, 0, stream>>>(a, (const T*)x, (T*)y, count);
    else
      unary_vec_kernel<T, V><<<vec_grid_for(count, V), kBlockSize, 0, stream>>>(a, (const T*)x, (T*)y, count);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_ew_broadcast(gfx_op op, int n, const void* const* in, const int* in_dtypes,
                                         const gfx_shape* in_shapes, void* out, int out_dtype,
                                         const gfx_shape* out_shape, cudaStream_t stream) {
  if (n < 1 || n > IR_MAX_IO) return cudaErrorInvalidValue;
  operands ops = {};
  const gfx_shape* shapes[IR_MAX_IO];
  for (int i = 0; i < n; i++) {
    ops.in[i] = in[i];
    shapes[i] = &in_shapes[i];
  }
  ops.exponent_dtype = n > 1 ? in_dtypes[1] : 0;
  ops.base_dtype = in_dtypes[0];
  const bool to_bool = out_dtype == GFX_DTYPE_BOOL;
  bool ok = with_math_type(in_dtypes[0], [&](auto zero) {
    typedef decltype(zero) T;
    if (to_bool)
      launch_broadcast<T, bool>(op, n, ops, shapes, (bool*)out, out_shape, stream);
    else
      launch_broadcast<T, T>(op, n, ops, shapes, (T*)out, out_shape, stream);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_ew_where(const void* cond, const gfx_shape* cond_shape, const void* x,
                                     const gfx_shape* x_shape, const void* y, const gfx_shape* y_shape,
                                     size_t elem_size, void* out, const gfx_shape* out_shape, cudaStream_t stream) {
  const gfx_shape* shapes[3] = {cond_shape, x_shape, y_shape};
  const bool* c = (const bool*)cond;
  switch (elem_size) {
    case 1: launch_where<uint8_t>(c, x, y, out, shapes, out_shape, stream); break;
    case 2: launch_where<uint16_t>(c, x, y, out, shapes, out_shape, stream); break;
    case 4: launch_where<uint32_t>(c, x, y, out, shapes, out_shape, stream); break;
    case 8: launch_where<uint64_t>(c, x, y, out, shapes, out_shape, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_ew_cast(int from, const void* x, int to, void* y, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  bool ok_to = false;
  bool ok_from = with_cast_type(from, [&](auto from_zero) {
    typedef decltype(from_zero) From;
    ok_to = with_cast_type(to, [&](auto to_zero) {
      typedef decltype(to_zero) To;
      /* 16 bytes of the wider type per access when both pointers allow */
      constexpr int V = 16 / (int)(sizeof(From) > sizeof(To) ? sizeof(From) : sizeof(To));
      if (aligned(x, V * sizeof(From)) && aligned(y, V * sizeof(To)))
        cast_vec_kernel<From, To, V><<<vec_grid_for(count, V), kBlockSize, 0, stream>>>((const From*)x, (To*)y, count);
      else
        cast_kernel<From, To><<<grid_for(count), kBlockSize, 0, stream>>>((const From*)x, (To*)y, count);
    });
  });
  return ok_from && ok_to ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_ew_batchnorm(int dtype, const void* x, const void* scale, const void* bias,
                                         const void* mean, const void* var, float epsilon, void* y, int64_t count,
                                         int64_t channels, int64_t inner, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  bool ok = with_float_type(dtype, [&](auto zero) {
    typedef decltype(zero) T;
    constexpr int V = 16 / (int)sizeof(T);
    /* one channel per row when rows are long enough to keep the lanes busy */
    if (inner >= 16) {
      const int64_t rows = count / inner;
      const bool vec = inner % V == 0 && aligned(x, 16) && aligned(y, 16);
      const row_launch l = row_launch_for(rows, vec ? inner / V : inner);
      if (vec)
        batchnorm_rows_kernel<T, V><<<l.grid, l.block, 0, stream>>>((const T*)x, (const T*)scale, (const T*)bias,
                                                                    (const T*)mean, (const T*)var, epsilon, (T*)y,
                                                                    rows, channels, inner);
      else
        batchnorm_rows_kernel<T, 1><<<l.grid, l.block, 0, stream>>>((const T*)x, (const T*)scale, (const T*)bias,
                                                                    (const T*)mean, (const T*)var, epsilon, (T*)y,
                                                                    rows, channels, inner);
      return;
    }
    batchnorm_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>(
        (const T*)x, (const T*)scale, (const T*)bias, (const T*)mean, (const T*)var, epsilon, (T*)y, count,
        channels, inner);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_elementwise_preload(void) {
  cudaError_t e = cudaSuccess;
  static const int math_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32, GFX_DTYPE_I64};
  static const int cast_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16,
                                   GFX_DTYPE_I32, GFX_DTYPE_I64, GFX_DTYPE_BOOL};
  for (int t : math_types)
    with_math_type(t, [&](auto zero) {
      typedef decltype(zero) T;
      constexpr int V = 16 / (int)sizeof(T);
      preload(unary_kernel<T>, &e);
      if (std::is_integral<T>::value)
        preload(unary_int_vec_kernel<T, V>, &e);
      else
        preload(unary_vec_kernel<T, V>, &e);
      preload_broadcast<T, T>(&e);
      preload_broadcast<T, bool>(&e);
    });
  for (int t : math_types)
    with_float_type(t, [&](auto zero) {
      typedef decltype(zero) T;
      preload(batchnorm_kernel<T>, &e);
      preload(batchnorm_rows_kernel<T, 1>, &e);
      preload(batchnorm_rows_kernel<T, 16 / (int)sizeof(T)>, &e);
    });
  preload_where<uint8_t>(&e);
  preload_where<uint16_t>(&e);
  preload_where<uint32_t>(&e);
  preload_where<uint64_t>(&e);
  for (int from : cast_types)
    for (int to : cast_types)
      with_cast_type(from, [&](auto from_zero) {
        with_cast_type(to, [&](auto to_zero) {
          typedef decltype(from_zero) From;
          typedef decltype(to_zero) To;
          constexpr int V = 16 / (int)(sizeof(From) > sizeof(To) ? sizeof(From) : sizeof(To));
          preload(cast_kernel<From, To>, &e);
          preload(cast_vec_kernel<From, To, V>, &e);
        });
      });
  return e;
}

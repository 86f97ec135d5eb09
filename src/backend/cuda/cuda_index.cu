/* gfxep CUDA backend — kernels of the logic ops, Mod, and the scans, generators and index ops that
 * follow them in the op table.
 *
 * Every kernel mirrors the reference backend's loop (ref_index.c) element for element: float types
 * compute in float and round once at the store (CumSum and Range in double, as the reference does),
 * integers in int64 with wrap-around; the index ops move elements as bits. Grid-stride loops with 64-bit
 * indices, so a capped grid covers any size; nothing here allocates or syncs, so the launches can
 * be captured into CUDA graphs.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backend/cuda/cuda_index.h"

namespace {

const int kBlockSize = 256;
const int64_t kMaxBlocks = 65535;

unsigned int grid_for(int64_t count) {
  int64_t blocks = (count + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  return (unsigned int)(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

int64_t element_count(const gfx_shape* s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

#define GRID_STRIDE_LOOP(i, count) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (count); i += (int64_t)blockDim.x * gridDim.x)

/* ---- element types ---- */

__device__ inline float load(float v) { return v; }
__device__ inline float load(__half v) { return __half2float(v); }
__device__ inline float load(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline int64_t load(int32_t v) { return v; }
__device__ inline int64_t load(int64_t v) { return v; }

template <typename T> __device__ inline T store(float v);
template <> __device__ inline float store<float>(float v) { return v; }
template <> __device__ inline __half store<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 store<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <typename T> __device__ inline T store(int64_t v);
template <> __device__ inline int32_t store<int32_t>(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
template <> __device__ inline int64_t store<int64_t>(int64_t v) { return v; }

/* ---- numpy broadcasting of two operands ---- */

/* The output's dims and, per operand and dim, its element stride (0 where it is broadcast);
 * `a_same`/`b_same`: the operand has the output's shape, so its offset is the output's index. */
struct bmap {
  int rank;
  int a_same, b_same;
  int64_t dims[GFX_MAX_RANK];
  int64_t sa[GFX_MAX_RANK], sb[GFX_MAX_RANK];
};

void operand_strides(const gfx_shape* in, const gfx_shape* out, int64_t* strides) {
  int64_t stride = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    const int in_d = d - (out->rank - in->rank);
    const int64_t dim = in_d >= 0 ? in->dims[in_d] : 1;
    strides[d] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

bool same_shape(const gfx_shape* a, const gfx_shape* b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

bmap make_bmap(const gfx_shape* a, const gfx_shape* b, const gfx_shape* out) {
  bmap m = {};
  m.rank = out->rank;
  for (int d = 0; d < out->rank; d++) m.dims[d] = out->dims[d];
  operand_strides(a, out, m.sa);
  operand_strides(b, out, m.sb);
  m.a_same = same_shape(a, out);
  m.b_same = same_shape(b, out);
  return m;
}

__device__ inline void bmap_offsets(const bmap& m, int64_t i, int64_t* ia, int64_t* ib) {
  if (m.a_same && m.b_same) {
    *ia = *ib = i;
    return;
  }
  int64_t rest = i, oa = 0, ob = 0;
  for (int d = m.rank - 1; d >= 0; d--) {
    const int64_t c = rest % m.dims[d];
    rest /= m.dims[d];
    oa += c * m.sa[d];
    ob += c * m.sb[d];
  }
  *ia = m.a_same ? i : oa;
  *ib = m.b_same ? i : ob;
}

/* ---- Not, And, Or, Xor ---- */

__device__ inline unsigned char logic_op(gfx_op op, bool a, bool b) {
  switch (op) {
    case GFX_OP_AND: return a && b;
    case GFX_OP_OR: return a || b;
    case GFX_OP_XOR: return a != b;
    default: return !a;
  }
}

__global__ void not_kernel(const unsigned char* a, unsigned char* y, int64_t count) {
  GRID_STRIDE_LOOP(i, count) y[i] = a[i] == 0;
}

__global__ void logic_kernel(gfx_op op, const unsigned char* a, const unsigned char* b, unsigned char* y,
                             int64_t count, bmap m) {
  GRID_STRIDE_LOOP(i, count) {
    int64_t ia, ib;
    bmap_offsets(m, i, &ia, &ib);
    y[i] = logic_op(op, a[ia] != 0, b[ib] != 0);
  }
}

/* ---- Mod ---- */

/* ref_index.c's mod_int: a divisor of 0 or -1 gives 0 (no trap, no INT64_MIN % -1). */
__device__ inline int64_t mod_value(int64_t a, int64_t b, int fmod) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}
/* floats: C fmod (the only mode ONNX allows for them), exact in any precision */
__device__ inline float mod_value(float a, float b, int fmod) {
  (void)fmod;
  return fmodf(a, b);
}

template <typename T>
__global__ void mod_kernel(int fmod, const T* a, const T* b, T* y, int64_t count, bmap m) {
  GRID_STRIDE_LOOP(i, count) {
    int64_t ia, ib;
    bmap_offsets(m, i, &ia, &ib);
    y[i] = store<T>(mod_value(load(a[ia]), load(b[ib]), fmod));
  }
}

/* Calls f(T()) with T the C++ type of a Mod dtype; false for a type not handled. */
template <typename F>
bool with_mod_type(int dtype, F f) {
  switch (dtype) {
    case GFX_DTYPE_F32: f(float()); return true;
    case GFX_DTYPE_F16: f(__half()); return true;
    case GFX_DTYPE_BF16: f(__nv_bfloat16()); return true;
    case GFX_DTYPE_I32: f(int32_t()); return true;
    case GFX_DTYPE_I64: f(int64_t()); return true;
    default: return false;
  }
}

template <typename K>
void preload(K* kernel, cudaError_t* e) {
  cudaFuncAttributes attr;
  if (*e == cudaSuccess) *e = cudaFuncGetAttributes(&attr, kernel);
}

/* ---- CumSum ---- */

/* float types sum in double (the reference's accumulator: no error grows along long lines),
 * integers in uint64 (wrap-around; an int32 sum keeps its low bits) */
template <typename T> struct sum_of { typedef double type; };
template <> struct sum_of<int32_t> { typedef uint64_t type; };
template <> struct sum_of<int64_t> { typedef uint64_t type; };

__device__ inline double widen(float v) { return v; }
__device__ inline uint64_t widen(int64_t v) { return (uint64_t)v; }

template <typename T> __device__ inline T narrow(double v) { return store<T>((float)v); }
template <> __device__ inline float narrow<float>(double v) { return (float)v; }
/* float16/bfloat16: double -> float -> 16 bits, the same two steps as the reference's ref_store */
template <typename T> __device__ inline T narrow(uint64_t v) { return store<T>((int64_t)v); }

template <typename T>
__global__ void cumsum_kernel(const T* x, T* y, int64_t outer, int64_t len, int64_t inner, int exclusive,
                              int reverse) {
  typedef typename sum_of<T>::type S;
  GRID_STRIDE_LOOP(line, outer * inner) {
    const int64_t base = line / inner * len * inner + line % inner;
    S sum = 0;
    for (int64_t step = 0; step < len; step++) {
      const int64_t at = base + (reverse ? len - 1 - step : step) * inner;
      const S v = widen(load(x[at]));
      if (!exclusive) sum += v;
      y[at] = narrow<T>(sum);
      if (exclusive) sum += v;
    }
  }
}

/* ---- Range ---- */

template <typename T>
__global__ void range_int_kernel(int64_t start, int64_t delta, T* y, int64_t count) {
  GRID_STRIDE_LOOP(i, count) y[i] = store<T>((int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta));
}

/* the product and the sum rounded separately (no fused multiply-add), as the reference computes */
__global__ void range_float_kernel(double start, double delta, float* y, int64_t count) {
  GRID_STRIDE_LOOP(i, count) y[i] = (float)__dadd_rn(start, __dmul_rn((double)i, delta));
}

/* ---- Trilu ---- */

template <typename Bits>
__global__ void trilu_kernel(const Bits* x, Bits* y, int64_t count, int64_t rows, int64_t cols, int upper,
                             int64_t k) {
  GRID_STRIDE_LOOP(e, count) {
    const int64_t col = e % cols, row = e / cols % rows;
    /* ir_trilu_keeps (ir/ops_index.h), which the host-only header cannot lend a device function */
    const bool keep = upper ? col - row >= k : col - row <= k;
    y[e] = keep ? x[e] : (Bits)0;
  }
}

/* Calls f(T()) with T the C++ type of a CumSum dtype. */
template <typename F>
bool with_sum_type(int dtype, F f) {
  return with_mod_type(dtype, f);
}

/* ---- GatherElements, GatherND, ScatterElements, ScatterND ---- */

/* Index entry i resolved against dim (negative ones from the end); false outside [-dim, dim). */
template <typename Index>
__device__ inline bool index_at(const Index* indices, int64_t i, int64_t dim, int64_t* out) {
  const int64_t v = indices[i];
  if (v < -dim || v >= dim) return false;
  *out = v < 0 ? v + dim : v;
  return true;
}

/* The data offset of GatherElements/ScatterElements index entry e (ref_index.c's elements_offset). */
template <typename Index>
__device__ inline bool elements_offset(const ir_elements_geom& g, const Index* indices, int64_t e, int64_t* out) {
  int64_t idx = 0, off = 0, rest = e;
  if (!index_at(indices, e, g.axis_dim, &idx)) return false;
  for (int d = g.rank - 1; d >= 0; d--) {
    const int64_t c = rest % g.idx_dims[d];
    rest /= g.idx_dims[d];
    off += (d == g.axis ? idx : c) * g.data_strides[d];
  }
  *out = off;
  return true;
}

/* The data offset of the slice GatherND/ScatterND index tuple t selects (ref_index.c's nd_offset). */
template <typename Index>
__device__ inline bool nd_offset(const ir_nd_geom& g, const Index* indices, int64_t t, int64_t* out) {
  int64_t off = t / g.n * g.data_batch_stride;
  for (int k = 0; k < g.m; k++) {
    int64_t idx = 0;
    if (!index_at(indices, t * g.m + k, g.dims[k], &idx)) return false;
    off += idx * g.strides[k];
  }
  *out = off;
  return true;
}

/* Moves: elements as unsigned integers of their size. */
template <typename Bits, typename Index>
__global__ void gather_elements_kernel(const Bits* data, const Index* indices, Bits* out, ir_elements_geom g) {
  GRID_STRIDE_LOOP(e, g.count) {
    int64_t off;
    out[e] = elements_offset(g, indices, e, &off) ? data[off] : (Bits)0;
  }
}

template <typename Bits, typename Index>
__global__ void gather_nd_kernel(const Bits* data, const Index* indices, Bits* out, ir_nd_geom g, int64_t count) {
  GRID_STRIDE_LOOP(o, count) {
    int64_t off;
    out[o] = nd_offset(g, indices, o / g.slice, &off) ? data[off + o % g.slice] : (Bits)0;
  }
}

/* reduction none, ScatterND: one thread per update element; with duplicate tuples some thread's
 * write wins (ONNX leaves the result undefined) */
template <typename Bits, typename Index>
__global__ void scatter_nd_kernel(const Index* indices, const Bits* updates, Bits* out, ir_nd_geom g, int64_t count) {
  GRID_STRIDE_LOOP(u, count) {
    int64_t off;
    if (nd_offset(g, indices, u / g.slice, &off)) out[off + u % g.slice] = updates[u];
  }
}

/* the reductions in the compute type (float for float types, int64 for integers), one rounding to
 * T per update as the reference's load-reduce-store */
__device__ inline float reduce_value(int reduction, float cur, float v) {
  switch (reduction) {
    case IR_SCATTER_ADD: return cur + v;
    case IR_SCATTER_MUL: return cur * v;
    case IR_SCATTER_MAX: return cur < v ? v : cur;
    case IR_SCATTER_MIN: return v < cur ? v : cur;
    default: return v;
  }
}
__device__ inline int64_t reduce_value(int reduction, int64_t cur, int64_t v) {
  switch (reduction) {
    case IR_SCATTER_ADD: return (int64_t)((uint64_t)cur + (uint64_t)v);
    case IR_SCATTER_MUL: return (int64_t)((uint64_t)cur * (uint64_t)v);
    case IR_SCATTER_MAX: return cur < v ? v : cur;
    case IR_SCATTER_MIN: return v < cur ? v : cur;
    default: return v;
  }
}

/* T is an unsigned integer of the element's size for reduction none (the element moves as it is),
 * a compute type (float types, int32/int64) for the reductions */
template <typename T>
__device__ inline void apply(int reduction, T* out, int64_t at, const T* updates, int64_t from) {
  if constexpr (std::is_unsigned<T>::value)
    out[at] = updates[from];
  else
    out[at] = reduction == IR_SCATTER_NONE ? updates[from]
                                           : store<T>(reduce_value(reduction, load(out[at]), load(updates[from])));
}

/* ScatterElements: one thread per line along the axis (the only updates that can meet on one data
 * element), its updates in index order: deterministic, no atomics, and the last of duplicates wins
 * with reduction none, as in the reference. */
template <typename T, typename Index>
__global__ void scatter_elements_kernel(const Index* indices, const T* updates, T* out, ir_elements_geom g,
                                        int reduction) {
  const int64_t len = g.idx_dims[g.axis], step = g.idx_strides[g.axis];
  const int64_t inner = step, lines = g.count / len;
  GRID_STRIDE_LOOP(line, lines) {
    const int64_t first = line / inner * len * inner + line % inner; /* the line's entry at axis 0 */
    for (int64_t j = 0; j < len; j++) {
      const int64_t e = first + j * step;
      int64_t off;
      if (elements_offset(g, indices, e, &off)) apply(reduction, out, off, updates, e);
    }
  }
}

/* ScatterND with a reduction: one thread per (batch, slice element), walking the batch's tuples in
 * order (tuples of different batches never meet). */
template <typename T, typename Index>
__global__ void scatter_nd_reduce_kernel(const Index* indices, const T* updates, T* out, ir_nd_geom g, int reduction) {
  GRID_STRIDE_LOOP(w, g.batch * g.slice) {
    const int64_t b = w / g.slice, s = w % g.slice;
    for (int64_t t = b * g.n; t < (b + 1) * g.n; t++) {
      int64_t off;
      if (nd_offset(g, indices, t, &off)) apply(reduction, out, off + s, updates, t * g.slice + s);
    }
  }
}

/* Calls f(Bits()) with the unsigned type of elem_size bytes. */
template <typename F>
bool with_bits(size_t elem_size, F f) {
  switch (elem_size) {
    case 1: f(uint8_t()); return true;
    case 2: f(uint16_t()); return true;
    case 4: f(uint32_t()); return true;
    case 8: f(uint64_t()); return true;
    default: return false;
  }
}

/* Calls f(Index()) with int32_t or int64_t. */
template <typename F>
void with_index(int indices_i64, F f) {
  if (indices_i64)
    f(int64_t());
  else
    f(int32_t());
}

}  // namespace


/* ---- C entries ---- */

extern "C" cudaError_t cuda_index_logic(gfx_op op, const void* a, const gfx_shape* a_shape, const void* b,
                                        const gfx_shape* b_shape, void* y, const gfx_shape* y_shape,
                                        cudaStream_t stream) {
  const int64_t count = element_count(y_shape);
  if (count <= 0) return cudaSuccess;
  if (!b) {
    not_kernel<<<grid_for(count), kBlockSize, 0, stream>>>((const unsigned char*)a, (unsigned char*)y, count);
  } else {
    logic_kernel<<<grid_for(count), kBlockSize, 0, stream>>>(op, (const unsigned char*)a, (const unsigned char*)b,
                                                             (unsigned char*)y, count,
                                                             make_bmap(a_shape, b_shape, y_shape));
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_index_mod(int dtype, int fmod, const void* a, const gfx_shape* a_shape, const void* b,
                                      const gfx_shape* b_shape, void* y, const gfx_shape* y_shape,
                                      cudaStream_t stream) {
  const int64_t count = element_count(y_shape);
  if (count <= 0) return cudaSuccess;
  const bmap m = make_bmap(a_shape, b_shape, y_shape);
  const bool ok = with_mod_type(dtype, [&](auto zero) {
    typedef decltype(zero) T;
    mod_kernel<T><<<grid_for(count), kBlockSize, 0, stream>>>(fmod, (const T*)a, (const T*)b, (T*)y, count, m);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_index_cumsum(int dtype, const void* x, void* y, int64_t outer, int64_t len,
                                         int64_t inner, int exclusive, int reverse, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines <= 0 || len <= 0) return cudaSuccess;
  const bool ok = with_sum_type(dtype, [&](auto zero) {
    typedef decltype(zero) T;
    cumsum_kernel<T><<<grid_for(lines), kBlockSize, 0, stream>>>((const T*)x, (T*)y, outer, len, inner, exclusive,
                                                                 reverse);
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_index_range(int dtype, double start, double delta, int64_t start_i, int64_t delta_i,
                                        void* y, int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  switch (dtype) {
    case GFX_DTYPE_F32:
      range_float_kernel<<<grid_for(count), kBlockSize, 0, stream>>>(start, delta, (float*)y, count);
      break;
    case GFX_DTYPE_I32:
      range_int_kernel<int32_t><<<grid_for(count), kBlockSize, 0, stream>>>(start_i, delta_i, (int32_t*)y, count);
      break;
    case GFX_DTYPE_I64:
      range_int_kernel<int64_t><<<grid_for(count), kBlockSize, 0, stream>>>(start_i, delta_i, (int64_t*)y, count);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_index_trilu(const void* x, void* y, size_t elem_size, int64_t batch, int64_t rows,
                                        int64_t cols, int upper, int64_t k, cudaStream_t stream) {
  const int64_t count = batch * rows * cols;
  if (count <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1:
      trilu_kernel<uint8_t><<<grid_for(count), kBlockSize, 0, stream>>>((const uint8_t*)x, (uint8_t*)y, count, rows,
                                                                        cols, upper, k);
      break;
    case 2:
      trilu_kernel<uint16_t><<<grid_for(count), kBlockSize, 0, stream>>>((const uint16_t*)x, (uint16_t*)y, count,
                                                                         rows, cols, upper, k);
      break;
    case 4:
      trilu_kernel<uint32_t><<<grid_for(count), kBlockSize, 0, stream>>>((const uint32_t*)x, (uint32_t*)y, count,
                                                                         rows, cols, upper, k);
      break;
    case 8:
      trilu_kernel<uint64_t><<<grid_for(count), kBlockSize, 0, stream>>>((const uint64_t*)x, (uint64_t*)y, count,
                                                                         rows, cols, upper, k);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuda_index_elements(int dtype, size_t elem_size, const void* data, const void* indices,
                                           int indices_i64, const void* updates, void* out, const ir_elements_geom* g,
                                           int reduction, cudaStream_t stream) {
  if (g->count <= 0) return cudaSuccess;
  const ir_elements_geom geom = *g;
  bool ok = true;
  with_index(indices_i64, [&](auto izero) {
    typedef decltype(izero) Index;
    if (!updates) {
      ok = with_bits(elem_size, [&](auto bzero) {
        typedef decltype(bzero) Bits;
        gather_elements_kernel<Bits, Index><<<grid_for(geom.count), kBlockSize, 0, stream>>>(
            (const Bits*)data, (const Index*)indices, (Bits*)out, geom);
      });
      return;
    }
    const int64_t lines = geom.count / geom.idx_dims[geom.axis];
    if (reduction == IR_SCATTER_NONE) {
      ok = with_bits(elem_size, [&](auto bzero) {
        typedef decltype(bzero) Bits;
        scatter_elements_kernel<Bits, Index><<<grid_for(lines), kBlockSize, 0, stream>>>(
            (const Index*)indices, (const Bits*)updates, (Bits*)out, geom, reduction);
      });
    } else {
      ok = with_mod_type(dtype, [&](auto tzero) {
        typedef decltype(tzero) T;
        scatter_elements_kernel<T, Index><<<grid_for(lines), kBlockSize, 0, stream>>>(
            (const Index*)indices, (const T*)updates, (T*)out, geom, reduction);
      });
    }
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_index_nd(int dtype, size_t elem_size, const void* data, const void* indices,
                                     int indices_i64, const void* updates, void* out, const ir_nd_geom* g,
                                     int reduction, cudaStream_t stream) {
  const ir_nd_geom geom = *g;
  const int64_t count = geom.batch * geom.n * geom.slice;
  if (count <= 0) return cudaSuccess;
  bool ok = true;
  with_index(indices_i64, [&](auto izero) {
    typedef decltype(izero) Index;
    if (!updates) {
      ok = with_bits(elem_size, [&](auto bzero) {
        typedef decltype(bzero) Bits;
        gather_nd_kernel<Bits, Index><<<grid_for(count), kBlockSize, 0, stream>>>((const Bits*)data,
                                                                                  (const Index*)indices, (Bits*)out,
                                                                                  geom, count);
      });
    } else if (reduction == IR_SCATTER_NONE) {
      ok = with_bits(elem_size, [&](auto bzero) {
        typedef decltype(bzero) Bits;
        scatter_nd_kernel<Bits, Index><<<grid_for(count), kBlockSize, 0, stream>>>(
            (const Index*)indices, (const Bits*)updates, (Bits*)out, geom, count);
      });
    } else {
      ok = with_mod_type(dtype, [&](auto tzero) {
        typedef decltype(tzero) T;
        scatter_nd_reduce_kernel<T, Index><<<grid_for(geom.batch * geom.slice), kBlockSize, 0, stream>>>(
            (const Index*)indices, (const T*)updates, (T*)out, geom, reduction);
      });
    }
  });
  return ok ? cudaGetLastError() : cudaErrorInvalidValue;
}

extern "C" cudaError_t cuda_index_preload(void) {
  cudaError_t e = cudaSuccess;
  preload(not_kernel, &e);
  preload(logic_kernel, &e);
  static const int mod_types[] = {GFX_DTYPE_F32, GFX_DTYPE_F16, GFX_DTYPE_BF16, GFX_DTYPE_I32, GFX_DTYPE_I64};
  for (int t : mod_types)
    with_mod_type(t, [&](auto zero) {
      typedef decltype(zero) T;
      preload(mod_kernel<T>, &e);
      preload(cumsum_kernel<T>, &e);
    });
  preload(range_float_kernel, &e);
  preload(range_int_kernel<int32_t>, &e);
  preload(range_int_kernel<int64_t>, &e);
  preload(trilu_kernel<uint8_t>, &e);
  preload(trilu_kernel<uint16_t>, &e);
  preload(trilu_kernel<uint32_t>, &e);
  preload(trilu_kernel<uint64_t>, &e);
  for (int i64 = 0; i64 < 2; i64++)
    with_index(i64, [&](auto izero) {
      typedef decltype(izero) Index;
      for (size_t es = 1; es <= 8; es *= 2)
        with_bits(es, [&](auto bzero) {
          typedef decltype(bzero) Bits;
          preload(gather_elements_kernel<Bits, Index>, &e);
          preload(gather_nd_kernel<Bits, Index>, &e);
          preload(scatter_nd_kernel<Bits, Index>, &e);
          preload(scatter_elements_kernel<Bits, Index>, &e);
        });
      for (int t : mod_types)
        with_mod_type(t, [&](auto tzero) {
          typedef decltype(tzero) T;
          preload(scatter_elements_kernel<T, Index>, &e);
          preload(scatter_nd_reduce_kernel<T, Index>, &e);
        });
    });
  return e;
}

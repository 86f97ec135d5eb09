/* gfxep CUDA backend — kernels of the logic ops, Mod, and the scans, generators and index ops that
 * follow them in the op table.
 *
 * Every kernel mirrors the reference backend's loop (ref_index.c) element for element: float types
 * compute in float and round once at the store, integers in int64. Grid-stride loops with 64-bit
 * indices, so a capped grid covers any size; nothing here allocates or syncs, so the launches can
 * be captured into CUDA graphs.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

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
  return e;
}

/* gfxep CUDA backend — kernels of the logic ops, Mod, and the scans, generators and index ops that
 * follow them in the op table (cuda_index.cu), callable from C.
 *
 * Each entry queues its kernels on `stream` and returns cudaGetLastError() after the launches
 * (cudaSuccess when there was nothing to launch; cudaErrorInvalidValue for an element type the
 * kernels do not have, which the C side, cuda_index_ops.c, has already refused). Tensors are
 * contiguous row-major; element types are gfx_dtype numbers. The semantics are the reference
 * backend's (ref_index.c), element for element.
 */
#ifndef GFXEP_BACKEND_CUDA_INDEX_H
#define GFXEP_BACKEND_CUDA_INDEX_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/graph.h"
#include "ir/ops_index.h"
#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = op(a[, b]) of bool tensors (one byte per element, nonzero is true): Not when b is NULL,
 * And, Or or Xor with numpy broadcasting of a and b to y_shape. */
cudaError_t cuda_index_logic(gfx_op op, const void* a, const gfx_shape* a_shape, const void* b,
                             const gfx_shape* b_shape, void* y, const gfx_shape* y_shape, cudaStream_t stream);

/* y = a mod b with numpy broadcasting, every tensor of dtype (float32/float16/bfloat16 with fmod;
 * int32/int64 either way; an integer divisor of 0 or -1 gives 0). */
cudaError_t cuda_index_mod(int dtype, int fmod, const void* a, const gfx_shape* a_shape, const void* b,
                           const gfx_shape* b_shape, void* y, const gfx_shape* y_shape, cudaStream_t stream);

/* y = the running sums of x (dtype: float types, int32/int64) along the middle dim of
 * [outer, len, inner]: one thread per line, floats summed in double as the reference does. */
cudaError_t cuda_index_cumsum(int dtype, const void* x, void* y, int64_t outer, int64_t len, int64_t inner,
                              int exclusive, int reverse, cudaStream_t stream);

/* y[i] = start + i * delta for i < count: float32 in double rounded once, int32/int64 in int64 with
 * wrap-around. */
cudaError_t cuda_index_range(int dtype, double start, double delta, int64_t start_i, int64_t delta_i, void* y,
                             int64_t count, cudaStream_t stream);

/* Trilu over batch matrices of rows x cols, elements of elem_size bytes (1, 2, 4 or 8). */
cudaError_t cuda_index_trilu(const void* x, void* y, size_t elem_size, int64_t batch, int64_t rows, int64_t cols,
                             int upper, int64_t k, cudaStream_t stream);

/* GatherElements (updates NULL: out = data at the indices, out shaped like the indices) and
 * ScatterElements (out = data, already copied there by the caller, with the updates applied by
 * `reduction` in index order along each line of the axis). Index entries are int32 (indices_i64 0)
 * or int64; one outside [-axis_dim, axis_dim) gathers 0 or skips its update. elem_size: 1, 2, 4 or
 * 8 bytes for reduction none; reductions take dtype (float types, int32/int64). */
cudaError_t cuda_index_elements(int dtype, size_t elem_size, const void* data, const void* indices, int indices_i64,
                                const void* updates, void* out, const ir_elements_geom* g, int reduction,
                                cudaStream_t stream);

/* GatherND (updates NULL) and ScatterND (out = data, already copied there by the caller) over
 * int32/int64 index tuples; the same index and type rules as cuda_index_elements. ScatterND with a
 * reduction applies the tuples in order, one thread per slice element of each batch. */
cudaError_t cuda_index_nd(int dtype, size_t elem_size, const void* data, const void* indices, int indices_i64,
                          const void* updates, void* out, const ir_nd_geom* g, int reduction, cudaStream_t stream);

/* Loads every kernel of cuda_index.cu into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_index_preload(void);

#ifdef __cplusplus
}
#endif

#endif

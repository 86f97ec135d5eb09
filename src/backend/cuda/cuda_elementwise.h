/* gfxep CUDA backend — element-wise kernels, callable from C.
 *
 * Each entry queues its kernel on `stream` and returns cudaGetLastError() after the launch
 * (cudaSuccess when there was nothing to launch; cudaErrorInvalidValue for an element type or
 * operation the kernels do not have, which the C side has already refused). Tensors are contiguous
 * row-major; element types are gfx_dtype numbers. Float types compute in float and round once at
 * the store; int32/int64 compute in int64 with two's-complement wrap-around.
 */
#ifndef GFXEP_BACKEND_CUDA_ELEMENTWISE_H
#define GFXEP_BACKEND_CUDA_ELEMENTWISE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/graph.h"
#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The element-wise kernels take the op table's own gfx_op (ir/ops.def): no second list of ops to keep
 * in step. They handle the ops of the unary family but Identity (a copy), and the binary family. */

/* A unary op and its attributes, passed to the kernel by value. */
typedef struct cuda_ew_unary_args {
  gfx_op op;
  float alpha, beta, gamma;
  int has_min, has_max;
  float min, max;
  int gelu_tanh;
} cuda_ew_unary_args;

/* y = op(x) over count elements of dtype (float types; int32/int64 for Neg and Abs). x and y may be
 * the same buffer. */
cudaError_t cuda_ew_unary(const cuda_ew_unary_args* args, int dtype, const void* x, void* y, int64_t count,
                          cudaStream_t stream);

/* out = op(in[0], ..., in[n-1]) with numpy broadcasting. Every input has in_dtypes[0] except Pow's
 * exponent (any float or integer type); out has that type too, bool for comparisons. out_shape
 * must be the broadcast of the input shapes (the caller checks; the kernels trust it). */
cudaError_t cuda_ew_broadcast(gfx_op op, int n, const void* const* in, const int* in_dtypes,
                              const gfx_shape* in_shapes, void* out, int out_dtype, const gfx_shape* out_shape,
                              cudaStream_t stream);

/* out = cond ? x : y with numpy broadcasting of all three; elem_size is x's (and y's, and out's)
 * element size in bytes: 1, 2, 4 or 8. */
cudaError_t cuda_ew_where(const void* cond, const gfx_shape* cond_shape, const void* x, const gfx_shape* x_shape,
                          const void* y, const gfx_shape* y_shape, size_t elem_size, void* out,
                          const gfx_shape* out_shape, cudaStream_t stream);

/* y = x converted from `from` to `to` (float32, float16, bfloat16, int32, int64, bool). Float to
 * integer truncates toward zero; NaN and out-of-range values give the integer type's minimum. */
cudaError_t cuda_ew_cast(int from, const void* x, int to, void* y, int64_t count, cudaStream_t stream);

/* Inference batch normalization of x [N, channels, inner...] with per-channel vectors of dtype. */
cudaError_t cuda_ew_batchnorm(int dtype, const void* x, const void* scale, const void* bias, const void* mean,
                              const void* var, float epsilon, void* y, int64_t count, int64_t channels,
                              int64_t inner, cudaStream_t stream);

/* Loads every kernel of this file into the current device's context (see the .cu file for why). */
cudaError_t cuda_elementwise_preload(void);

#ifdef __cplusplus
}
#endif

#endif

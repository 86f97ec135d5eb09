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

/* The operations of the element-wise kernels (the C side maps gfx_op onto these). */
typedef enum cuda_ew_op {
  /* unary */
  CUDA_EW_RELU,
  CUDA_EW_LEAKY_RELU,
  CUDA_EW_SIGMOID,
  CUDA_EW_TANH,
  CUDA_EW_HARD_SIGMOID,
  CUDA_EW_HARD_SWISH,
  CUDA_EW_CLIP,
  CUDA_EW_ELU,
  CUDA_EW_SELU,
  CUDA_EW_GELU,
  CUDA_EW_ERF,
  CUDA_EW_SOFTPLUS,
  CUDA_EW_SQRT,
  CUDA_EW_EXP,
  CUDA_EW_LOG,
  CUDA_EW_NEG,
  CUDA_EW_ABS,
  CUDA_EW_RECIPROCAL,
  /* broadcasting, 2 operands */
  CUDA_EW_ADD,
  CUDA_EW_SUB,
  CUDA_EW_MUL,
  CUDA_EW_DIV,
  CUDA_EW_POW,
  CUDA_EW_PRELU,
  CUDA_EW_EQUAL,
  CUDA_EW_GREATER,
  CUDA_EW_LESS,
  /* broadcasting, 1..IR_MAX_IO operands */
  CUDA_EW_MIN,
  CUDA_EW_MAX,
  CUDA_EW_SUM,
  CUDA_EW_MEAN,
} cuda_ew_op;

/* A unary op and its attributes, passed to the kernel by value. */
typedef struct cuda_ew_unary_args {
  cuda_ew_op op;
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
cudaError_t cuda_ew_broadcast(cuda_ew_op op, int n, const void* const* in, const int* in_dtypes,
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

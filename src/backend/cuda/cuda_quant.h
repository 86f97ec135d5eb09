/* gfxep CUDA backend — kernels of QuantizeLinear and DequantizeLinear (cuda_quant.cu), callable
 * from C.
 *
 * Each entry queues its kernel on `stream` and returns cudaGetLastError() after the launch
 * (cudaSuccess when there was nothing to launch; cudaErrorInvalidValue for a type pair the kernels
 * do not have, which cuda_quant_ops.c has already refused). The arithmetic is ir/ops_quant.h's,
 * in float32 as the reference computes it.
 */
#ifndef GFXEP_BACKEND_CUDA_QUANT_H
#define GFXEP_BACKEND_CUDA_QUANT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* x seen as [outer, len, inner] (ir_quant_geom); the scale and zero point entry of element e is
 * (e / inner) % len when per_axis, else 0. */
typedef struct cuda_quant_args {
  int64_t count, len, inner;
  int per_axis;
} cuda_quant_args;

/* y = saturate(round_half_even(x / scale) + zero_point): x and scale of float_dtype (float32,
 * float16, bfloat16), y and zero_point (NULL: 0) of int_dtype (int8, uint8). */
cudaError_t cuda_quantize(int float_dtype, int int_dtype, const void* x, const void* scale, const void* zero_point,
                          void* y, cuda_quant_args a, cudaStream_t stream);

/* y = (x - zero_point) * scale: x and zero_point (NULL: 0) of int_dtype (int8, uint8, int32), scale
 * and y of float_dtype. */
cudaError_t cuda_dequantize(int int_dtype, int float_dtype, const void* x, const void* scale, const void* zero_point,
                            void* y, cuda_quant_args a, cudaStream_t stream);

/* Loads every kernel of cuda_quant.cu into the current device's context. */
cudaError_t cuda_quant_preload(void);

#ifdef __cplusplus
}
#endif

#endif

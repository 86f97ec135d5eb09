/* gfxep CUDA backend — float32 element-wise kernels, callable from C.
 *
 * Each entry queues its kernel on `stream` and returns cudaGetLastError() after the launch
 * (cudaSuccess when there was nothing to launch). Tensors are contiguous row-major.
 */
#ifndef GFXEP_BACKEND_CUDA_ELEMENTWISE_H
#define GFXEP_BACKEND_CUDA_ELEMENTWISE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = a (op) b with numpy broadcasting. out_shape must be the broadcast of a_shape and b_shape
 * (the caller checks; the kernels trust it). */
cudaError_t cuda_add_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                         float* out, const gfx_shape* out_shape, cudaStream_t stream);
cudaError_t cuda_sub_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                         float* out, const gfx_shape* out_shape, cudaStream_t stream);
cudaError_t cuda_mul_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                         float* out, const gfx_shape* out_shape, cudaStream_t stream);
cudaError_t cuda_div_f32(const float* a, const gfx_shape* a_shape, const float* b, const gfx_shape* b_shape,
                         float* out, const gfx_shape* out_shape, cudaStream_t stream);

/* y = max(x, 0) over count elements; NaN stays NaN. x and y may be the same buffer. */
cudaError_t cuda_relu_f32(const float* x, float* y, int64_t count, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

/* Loads every kernel of this file into the current device's context (see the .cu file for why). */
#ifdef __cplusplus
extern "C"
#endif
    cudaError_t cuda_elementwise_preload(void);

#endif

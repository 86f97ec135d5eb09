/* gfxep CUDA backend — zero padding of NCHW images, callable from C.
 *
 * cuDNN takes one pad per spatial dim, applied to both sides; Conv's asymmetric pads are made
 * symmetric by padding the difference into a scratch copy of the input first.
 */
#ifndef GFXEP_BACKEND_CUDA_PAD_H
#define GFXEP_BACKEND_CUDA_PAD_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes dst[p, y, x] = src[p, y - top, x - left] for every plane p < planes (N*C) and every
 * y < padded_height, x < padded_width, with 0 where the source index falls outside
 * [0, height) x [0, width). Queues on stream; returns the launch error. */
cudaError_t cuda_pad2d_f32(const float* src, int64_t planes, int64_t height, int64_t width, int64_t top, int64_t left,
                           float* dst, int64_t padded_height, int64_t padded_width, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

/* Loads the padding kernel into the current device's context (see cuda_elementwise.cu). */
#ifdef __cplusplus
extern "C"
#endif
    cudaError_t cuda_pad_preload(void);

#endif

/* gfxep CUDA backend — the small kernels around cuDNN and cuBLASLt for convolution and matrix
 * products, callable from C: zero padding or cropping of NCHW images, the bias + activation +
 * residual epilogue of a convolution, and Gemm's broadcast of C into the output.
 *
 * cuDNN takes one pad per spatial dim, applied to both sides; Conv's asymmetric pads are made
 * symmetric by padding the difference into a scratch copy of the input first, and ConvTranspose's
 * by cropping the difference from a larger result.
 *
 * dtype is a GFX_DTYPE_* number: float32, float16 or bfloat16 (the others return
 * cudaErrorInvalidValue). Every function queues on stream and returns the launch error; nothing
 * is launched for an empty tensor.
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
 * [0, height) x [0, width). Negative top/left crop. Pure data movement: element size only. */
cudaError_t cuda_pad2d(int dtype, const void* src, int64_t planes, int64_t height, int64_t width, int64_t top,
                       int64_t left, void* dst, int64_t padded_height, int64_t padded_width, cudaStream_t stream);

/* What a convolution applies after its bias (ir_conv_params' epilogue fields): activation is an
 * ir_conv_activation with its alpha / beta, residual an ir_conv_residual. */
typedef struct cuda_conv_epilogue {
  int activation;
  float alpha, beta;
  int residual;
} cuda_conv_epilogue;

/* In place on y [n, channels, plane]: y = act(y + bias[c] + r) or act(y + bias[c]) + r as
 * e.residual says, r = residual[same index] (NULL: no residual, r = 0; it must not be y), bias NULL
 * for none. Math in float with the element-wise ops' formulas, one rounding at the store; 16-byte
 * vectors when the plane size and the pointers allow. */
cudaError_t cuda_conv_epilogue_run(int dtype, void* y, const void* bias, const void* residual, int64_t n,
                                   int64_t channels, int64_t plane, cuda_conv_epilogue e, cudaStream_t stream);

/* The same on a channels-last y of `count` elements [n, h, w, channels]: element e's channel is
 * e % channels; 16-byte vectors when the channel count and the pointers allow. */
cudaError_t cuda_conv_epilogue_nhwc_run(int dtype, void* y, const void* bias, const void* residual, int64_t count,
                                        int64_t channels, cuda_conv_epilogue e, cudaStream_t stream);

/* y[i, j] = c[i * row_stride + j * col_stride] * scale for i < m, j < n (strides 0 broadcast). */
cudaError_t cuda_gemm_fill_c(int dtype, const void* c, int64_t row_stride, int64_t col_stride, float scale, void* y,
                             int64_t m, int64_t n, cudaStream_t stream);

/* Loads these kernels into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_pad_preload(void);

#ifdef __cplusplus
}
#endif

#endif

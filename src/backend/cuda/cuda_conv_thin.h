/* gfxep CUDA backend — convolutions with few output channels (an image net's last layer: features
 * back to RGB through a 3x3 to 9x9 window), NCHW, float32, float16 and bfloat16.
 *
 * Such a layer is a matrix product of the pixels by K = C·kH·kW taps with only M <= 4 output
 * channels: cuDNN's tiles are mostly empty along M, and on an H100 its best float32 algorithm spent
 * 1.93 ms of a style-transfer net's 4.75 on the 32 -> 3 9x9 layer at 512x512 (4 GFLOP). Here a block
 * computes a 16 x 32 output tile: for each input channel it copies the tile's input window and that
 * channel's M x kH x kW weights into shared memory (zeros where the pads are, so any pads, strides
 * and dilations need no padded copy), and each thread sums the taps of two pixels (16 columns apart,
 * so a warp reads consecutive words) for every output channel in float32. Bias, residual and
 * activation (cuda_conv_epilogue.cuh) are applied before the one rounding at the store.
 */
#ifndef GFXEP_CUDA_CONV_THIN_H
#define GFXEP_CUDA_CONV_THIN_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_pad.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUDA_CONV_THIN_MAX_OUT_CHANNELS 4

typedef struct cuda_conv_thin {
  int dtype; /* GFX_DTYPE_F32, GFX_DTYPE_F16 or GFX_DTYPE_BF16 */
  int n, c_in, in_h, in_w;
  int c_out, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int pad_top, pad_left; /* the bottom and right pads follow from the output size */
  cuda_conv_epilogue epilogue;
  size_t shared_bytes; /* set by cuda_conv_thin_plan */
} cuda_conv_thin;

/* Whether a convolution of these dims is one for this kernel: 2-D, NCHW, one group, at most
 * CUDA_CONV_THIN_MAX_OUT_CHANNELS output channels, float32, and enough taps per output (c_in·kH·kW
 * of at least 64) that cuDNN's mostly empty tiles cost more than this kernel's plain float32 sums
 * (H100, float32: style transfer's 32 -> 3 9x9 at 512x512 405 us against cuDNN's 1925; UNet's
 * 32 -> 3 3x3 made the net 1.64 ms against 1.71). GFXEP_CUDA_CONV_THIN=0 turns it off, =1 takes it
 * for any such convolution, float16 and bfloat16 included. */
int cuda_conv_thin_applies(int dtype, int spatial, int group, int channels_last, int c_in, int c_out,
                           const int* kernel);

/* Fills shared_bytes; cudaErrorInvalidValue when the input window does not fit 48 KiB. */
cudaError_t cuda_conv_thin_plan(cuda_conv_thin* p);

/* y = epilogue(conv(x, w) + bias) on stream; bias and residual may be NULL (residual not y). */
cudaError_t cuda_conv_thin_run(const cuda_conv_thin* p, const void* x, const void* w, const void* bias,
                               const void* residual, void* y, cudaStream_t stream);

cudaError_t cuda_conv_thin_preload(void); /* its kernels into the current context */

#ifdef __cplusplus
}
#endif

#endif

/* gfxep CUDA backend — float32 convolutions on the tensor cores as three TF32 products, NCHW.
 *
 * A float32 value x is split into two TF32 values, hi (x with its low 13 mantissa bits cleared) and
 * lo (x - hi, rounded to TF32), so that x = hi + lo to 22 significant bits. The product of two such
 * values is taken as hi·hi + hi·lo + lo·hi (the lo·lo term is below float32's rounding of the sum),
 * three mma.sync.m16n8k8 TF32 products with float32 accumulators. That keeps float32's accuracy
 * (the float32 operator cases, which a plain TF32 product misses by far, hold) at the tensor cores'
 * rate: the H100's float32 FMA peak is about 67 TFLOP/s, its TF32 tensor-core peak about 490, so three
 * products still leave room over cuDNN's float32 algorithms, which reach 20-36 TFLOP/s on the SR and
 * denoiser layers (3x3, 32 to 64 channels).
 *
 * A block is 8 warps over a tile of 8 output rows x 32 columns of one image and up to 64 output
 * channels (NT pieces of 8). The input channels go in chunks: per chunk the tile's input window (zeros
 * where the pads are, so any pads, strides and dilations need no padded copy) and the chunk's weights
 * are split into hi and lo as they are copied into shared memory, the weights already in mma.sync's
 * B register order; warp w then multiplies output row w's 32 pixels by the chunk's taps in steps of 8,
 * reading A straight from the window through a tap -> offset table. Bias, residual and activation
 * (cuda_conv_epilogue.cuh) are applied to the float32 sums before the store.
 */
#ifndef GFXEP_CUDA_CONV_TF32X3_H
#define GFXEP_CUDA_CONV_TF32X3_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_pad.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuda_conv_tf32x3 {
  int n, c_in, in_h, in_w;
  int c_out, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int pad_top, pad_left; /* the bottom and right pads follow from the output size */
  cuda_conv_epilogue epilogue;
  /* set by cuda_conv_tf32x3_plan */
  int chunk;         /* input channels per chunk */
  int channel_tiles; /* groups of up to 64 output channels */
  size_t shared_bytes;
} cuda_conv_tf32x3;

/* Whether a convolution is one for this kernel: float32 (TF32 not allowed, else cuDNN's TF32 is
 * faster), 2-D, NCHW, one group, a window of more than one tap, more than CUDA_CONV_THIN's output
 * channels, compute capability 8.0 or later. cuda_conv_tf32x3_plan then keeps it where it was measured
 * faster than cuDNN (GFXEP_CUDA_CONV_TF32X3 unset or "auto"); =1 takes it wherever it can run, =0 never. */
int cuda_conv_tf32x3_applies(int dtype, int allow_tf32, int spatial, int group, int channels_last, int c_in,
                             int c_out, const int* kernel, int cc_major);

/* Fills the launch fields for the current device; cudaErrorInvalidValue for a geometry whose window
 * and weights do not fit its shared memory or whose grid is too large. */
cudaError_t cuda_conv_tf32x3_plan(cuda_conv_tf32x3* p);

/* y = epilogue(conv(x, w) + bias) on stream; bias and residual may be NULL (residual not y). */
cudaError_t cuda_conv_tf32x3_run(const cuda_conv_tf32x3* p, const float* x, const float* w, const float* bias,
                                 const float* residual, float* y, cudaStream_t stream);

/* Loads the kernels into the current device's context and lets them use more than 48 KiB of shared
 * memory. */
cudaError_t cuda_conv_tf32x3_preload(void);

#ifdef __cplusplus
}
#endif

#endif

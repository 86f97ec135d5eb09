/* gfxep CUDA backend — convolutions with few input channels (an image net's first layer: RGB through
 * a 3x3 to 9x9 window) as one tensor-core kernel, float16 and bfloat16.
 *
 * Such a layer is a matrix product of the pixels by K = C·kH·kW taps (75 for RGB 5x5) and M output
 * channels: too thin for cuDNN's tiles (on the H200 it spent 283 us of ESPCN's 627 in float16 on
 * the 5 GFLOP first layer, with layout transforms around its NHWC kernel and a separate epilogue
 * pass), and an explicit im2col into memory costs more than the product. Here a
 * block copies the input window of 8 output rows x 32 columns into shared memory once (zeros where
 * the pads are, so any pads, strides and dilations need no padded copy), each warp multiplies one
 * output row's 32 pixels by up to 64 channels' weights with mma.sync, reading the taps straight
 * from that window through a tap -> offset table, and the bias, activation and residual are applied
 * to the float32 sums before the one rounding and a row-contiguous store. Weights stay in shared
 * memory for all of a block's tiles (the grid is what the device holds at once).
 *
 * Input and output are NCHW, both NHWC (channels_last), or NCHW in and NHWC out (nchw_input: the
 * Transpose before a channels-last first layer folded in); weights [M, C, kH, kW] as ONNX gives them.
 *
 * Measured on the H200, float16, a model of the one Conv + Relu (p50 latency, this kernel against
 * cuDNN): ESPCN's 3 -> 64 5x5 at 540x960 0.089 against 0.295 ms; a style net's 3 -> 32 9x9 at
 * 512x512 0.052 against 0.229; a UNet's 3 -> 32 3x3 at 512x512 0.032 against 0.062; ResNet's
 * 3 -> 64 7x7 stride 2 at 224x224 0.024 against 0.031.
 */
#ifndef GFXEP_CUDA_CONV_NARROW_H
#define GFXEP_CUDA_CONV_NARROW_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_pad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most input channels, and taps, this kernel takes. Larger layers are cuDNN's. */
#define CUDA_CONV_NARROW_MAX_CHANNELS 4
#define CUDA_CONV_NARROW_MAX_TAPS 256

typedef struct cuda_conv_narrow {
  int dtype; /* GFX_DTYPE_F16 or GFX_DTYPE_BF16 */
  int channels_last; /* y (and the residual) N, H, W, C; x too unless nchw_input */
  int nchw_input;
  int n, c_in, in_h, in_w;
  int c_out, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int pad_top, pad_left; /* the bottom and right pads follow from the output size */
  cuda_conv_epilogue epilogue;
  /* set by cuda_conv_narrow_plan */
  int channel_tiles; /* groups of up to 64 output channels */
  int blocks;        /* per channel group */
  size_t shared_bytes;
} cuda_conv_narrow;

/* Whether a 2-D convolution of these dims can run here: 16-bit, one group, at most
 * CUDA_CONV_NARROW_MAX_CHANNELS input channels and CUDA_CONV_NARROW_MAX_TAPS taps, compute
 * capability 8.0 or later. */
int cuda_conv_narrow_applies(int dtype, int spatial, int group, int c_in, const int* kernel, int cc_major);

/* Fills the launch fields for the current device; cudaErrorInvalidValue for a geometry outside
 * cuda_conv_narrow_applies or too large for shared memory. */
cudaError_t cuda_conv_narrow_plan(cuda_conv_narrow* p);

/* y = epilogue(conv(x, w) + bias) on stream; bias and residual may be NULL. */
cudaError_t cuda_conv_narrow_run(const cuda_conv_narrow* p, const void* x, const void* w, const void* bias,
                                 const void* residual, void* y, cudaStream_t stream);

/* Loads the kernels into the current device's context and lets them use more than 48 KiB of shared
 * memory (see cuda_elementwise.cu on lazy loading). */
cudaError_t cuda_conv_narrow_preload(void);

#ifdef __cplusplus
}
#endif

#endif

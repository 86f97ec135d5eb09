/* gfxep CUDA backend — float32 3x3 convolutions on the tensor cores, each product as three TF32
 * products of split operands (NCHW, stride 1, dilation 1, any pads).
 *
 * Without TF32, cuDNN runs float32 convolutions on the CUDA cores: ESPCN x2's 64 -> 32 and 32 -> 12
 * layers at 540x960, 23 GFLOP, reach about a third of the H100's float32 peak, and the SR and
 * denoiser nets spend nearly all their time there. A TF32 tensor-core product keeps only 11 of a
 * float's 24 significant bits, which is what the float32 mode must not do. Split each operand into
 * a TF32 head and a TF32 tail (a = a_hi + a_lo, the tail the rounding error of the head, itself
 * rounded to TF32) and a·b = a_hi·b_hi + a_hi·b_lo + a_lo·b_hi + a_lo·b_lo; the last term is below
 * float32's own rounding (2^-22 of the product) and is dropped. Three tensor-core products per
 * product, summed in float32, give float32's accuracy at the tensor cores' rate.
 *
 * A block computes an 8 x 32 output tile for a group of up to 64 output channels: per 16 input
 * channels it copies the tile's 10 x 34 input window and the group's weights into shared memory
 * (zeros outside the image, so any pads need no padded copy), each warp multiplies its output row's
 * 32 pixels by the group's channels with mma.sync.m16n8k8 (operands read by ldmatrix, split in
 * registers), and the bias, residual and activation (cuda_conv_epilogue.cuh) are applied to the
 * float32 sums before the one store.
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
  int pad_top, pad_left; /* the bottom and right pads follow from the output size */
  cuda_conv_epilogue epilogue;
  /* set by cuda_conv_tf32x3_plan */
  int channel_tiles; /* 8-channel pieces per block: 2, 4 or 8 */
  int groups;        /* blocks along the output channels */
  int tiles;         /* 8 x 32 output tiles over the batch */
  size_t shared_bytes;
} cuda_conv_tf32x3;

/* Whether a convolution of these dims is one for this kernel: float32 in its exact mode (not the
 * TF32 one), 2-D, NCHW, one group, a 3x3 window of stride 1 and dilation 1, at least 8 input and 8
 * output channels, compute capability 8.0 or later; only with GFXEP_CUDA_CONV_TF32X3=1 for now. */
int cuda_conv_tf32x3_applies(int dtype, int reduced_precision, int spatial, int group, int channels_last, int c_in,
                             int c_out, const int* kernel, const int* stride, const int* dilation, int cc_major);

/* Fills the launch fields; cudaErrorInvalidValue for dims it cannot take (empty, negative pads, more
 * tiles or channel groups than a grid holds) or should not: an output width that fills less than 3/4
 * of its 32-wide tiles (cuDNN then). */
cudaError_t cuda_conv_tf32x3_plan(cuda_conv_tf32x3* p);

/* y = epilogue(conv(x, w) + bias) on stream; bias and residual may be NULL (residual not y). */
cudaError_t cuda_conv_tf32x3_run(const cuda_conv_tf32x3* p, const float* x, const float* w, const float* bias,
                                 const float* residual, float* y, cudaStream_t stream);

cudaError_t cuda_conv_tf32x3_preload(void); /* its kernels into the current context */

#ifdef __cplusplus
}
#endif

#endif

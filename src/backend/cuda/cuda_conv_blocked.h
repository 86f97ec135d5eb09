/* gfxep CUDA backend — float32 3x3 and 5x5 convolutions on the CUDA cores, register-blocked.
 *
 * cuDNN runs float32 convolutions (TF32 off, the default precision) at about a third of the CUDA
 * cores' FMA rate on the small-channel layers of SR and denoiser nets: on an H100 ESPCN x2 at
 * 540x960 spent 1.33 ms in its three Conv nodes, 27.7 GFLOP, 21 TFLOP/s. This kernel is a direct
 * convolution laid out for the FMA pipes. A block computes an 8-row x 64-column output tile for
 * 8·G output channels (G = 2 or 4 warps' worth of channel groups); each thread owns one column of
 * the tile: 8 pixels down it, for 8 output channels, 64 sums in registers. For each chunk of input
 * channels the block copies the tile's input window (zeros where the pads are) and those channels'
 * weights (output channel fastest) into shared memory; then, per channel and kernel column, a thread
 * reads the 8 + k - 1 window values of its column once and uses each for up to k rows of taps, with
 * the weights of 8 channels as two broadcast 16-byte reads: 10 + 6 shared reads per 192 FMAs for
 * 3x3. The warp's 32 threads read 32 consecutive words, so the reads are free of bank conflicts.
 * From compute capability 8.0 the chunks go through two stages of shared memory filled by cp.async, so
 * the next chunk arrives while the block sums this one (GFXEP_CUDA_CONV_BLOCKED_PIPELINE=0: one
 * stage, filled and then summed). Every sum is a float32 FMA, as cuDNN's are; bias, residual and
 * activation (cuda_conv_epilogue.cuh) are applied before the store.
 */
#ifndef GFXEP_CUDA_CONV_BLOCKED_H
#define GFXEP_CUDA_CONV_BLOCKED_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_pad.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuda_conv_blocked {
  int n, c_in, in_h, in_w;
  int c_out, out_h, out_w;
  int kernel;            /* 3 or 5, square; stride 1, dilation 1 */
  int pad_top, pad_left; /* the bottom and right pads follow from the output size */
  cuda_conv_epilogue epilogue;
  int channel_groups; /* set by cuda_conv_blocked_plan: 2 or 4 groups of 8 output channels per block */
} cuda_conv_blocked;

/* Whether a convolution is one for this kernel: 2-D, NCHW, one group, float32 without TF32, a square
 * 3x3 or 5x5 window with stride and dilation 1, more than 4 output channels (fewer go to the
 * few-output-channel kernel), and an output at least 64 wide (narrower maps leave most of the
 * 64-column tiles empty). GFXEP_CUDA_CONV_BLOCKED=0 turns it off; =1 takes any such convolution
 * whatever its width. */
int cuda_conv_blocked_applies(int dtype, int reduced_f32, int spatial, int group, int channels_last, int c_out,
                              int out_w, const int* kernel, const int* stride, const int* dilation);

/* Chooses channel_groups; cudaErrorInvalidValue for dims the grid cannot cover. */
cudaError_t cuda_conv_blocked_plan(cuda_conv_blocked* p);

/* y = epilogue(conv(x, w) + bias) on stream; bias and residual may be NULL (residual not y). */
cudaError_t cuda_conv_blocked_run(const cuda_conv_blocked* p, const float* x, const float* w, const float* bias,
                                  const float* residual, float* y, cudaStream_t stream);

cudaError_t cuda_conv_blocked_preload(void); /* its kernels into the current context */

#ifdef __cplusplus
}
#endif

#endif

/* gfxep CUDA backend — two 3x3 convolutions in one tensor-core kernel, the first one's output kept in
 * shared memory (a convolution chain, ir/graph.h: IR_CONV_CHAIN_WEIGHT_INPUT), float16 and bfloat16.
 *
 * Small-channel image nets (super-resolution, denoisers) are chains of 3x3 convolutions of 16 to 64
 * channels over large images. Run layer by layer, every intermediate map goes to memory and back
 * (ESPCN x2's 64- and 32-channel maps at 540x960 are 66 and 33 MB in float16), and cuDNN's kernels
 * for so few channels use the tensor cores poorly. Here a block takes a tile of the output, copies
 * the input window it needs (two pixels of halo on every side) into shared memory, computes the
 * first convolution over the tile plus one pixel of halo into shared memory, and the second from
 * there, both as implicit matrix products on mma.sync. The halo is computed twice by neighbouring
 * tiles: that is the price of never writing the intermediate.
 *
 * Input and output are NCHW, or both NHWC (channels_last); weights [M, C, 3, 3] as ONNX gives them.
 */
#ifndef GFXEP_CUDA_CONV_CHAIN_H
#define GFXEP_CUDA_CONV_CHAIN_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_pad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most channels of any of the three maps the kernel takes; input and middle channel counts are
 * multiples of 16 (whole mma.sync k-steps). */
#define CUDA_CONV_CHAIN_MAX_CHANNELS 64

typedef struct cuda_conv_chain {
  int dtype;         /* GFX_DTYPE_F16 or GFX_DTYPE_BF16 */
  int channels_last; /* x and y N, H, W, C */
  int n, h, w;       /* the output has the input's height and width */
  int c_in, c_mid, c_out;
  cuda_conv_epilogue first, second; /* activations only: a chain has no residual */
  /* set by cuda_conv_chain_plan */
  int tile_h, tile_w;
  int tiles;   /* over the whole batch */
  int blocks;  /* resident at once; each walks tiles with a stride */
  size_t shared_bytes;
} cuda_conv_chain;

/* Whether the kernel takes these channel counts and type on a device of this compute capability
 * (8.0 or later). */
int cuda_conv_chain_applies(int dtype, int c_in, int c_mid, int c_out, int cc_major);

/* Fills the launch fields for the current device: the largest tile whose shared memory fits.
 * cudaErrorInvalidValue for dims outside cuda_conv_chain_applies or that no tile fits. */
cudaError_t cuda_conv_chain_plan(cuda_conv_chain* p);

/* y = second(conv(first(conv(x, w_first) + b_first), w_second) + b_second) on stream; either bias
 * may be NULL. x and y must be 16-byte aligned when channels_last. */
cudaError_t cuda_conv_chain_run(const cuda_conv_chain* p, const void* x, const void* w_first, const void* b_first,
                                const void* w_second, const void* b_second, void* y, cudaStream_t stream);

/* Loads the kernels into the current device's context and lets them use more than 48 KiB of shared
 * memory (see cuda_elementwise.cu on lazy loading). */
cudaError_t cuda_conv_chain_preload(void);

#ifdef __cplusplus
}
#endif

#endif

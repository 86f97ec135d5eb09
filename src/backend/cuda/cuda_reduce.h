/* gfxep CUDA backend — kernels of the reduction, normalization, pooling and softmax ops, callable
 * from C.
 *
 * The host side (cuda_reduce_ops.c) turns the IR's geometry (ir/ops_reduce.h) into these plain
 * argument structs, which the kernels receive by value: runs may be captured into CUDA graphs, so
 * nothing is read from host memory later. Tensors are contiguous row-major, of one element type:
 * GFX_DTYPE_F32, GFX_DTYPE_F16 or GFX_DTYPE_BF16. Math is in float with one rounding at the store.
 * Each entry queues its kernels on `stream` and returns cudaGetLastError() after the launch
 * (cudaSuccess when there was nothing to launch); an unknown dtype returns cudaErrorInvalidValue.
 */
#ifndef GFXEP_BACKEND_CUDA_REDUCE_H
#define GFXEP_BACKEND_CUDA_REDUCE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CUDA_REDUCE_SUM = 0,
  CUDA_REDUCE_MEAN,
  CUDA_REDUCE_MAX,
  CUDA_REDUCE_MIN,
  CUDA_REDUCE_L2,
  CUDA_REDUCE_L1,
  CUDA_REDUCE_SUM_SQUARE,
  CUDA_REDUCE_ARGMAX, /* cuda_arg_run only */
  CUDA_REDUCE_ARGMIN,
  CUDA_REDUCE_PROD,
  CUDA_REDUCE_LOG_SUM_EXP /* max + log(sum(exp(x - max))); chunks must be 1 */
};

/* y[o] = reduction of x[base(o) + offset(r)] over r < reduce_count, where base and offset split
 * their index over (dims, strides) lists, last dim fastest (see ir_reduce_geom). */
typedef struct cuda_reduce_args {
  int kind;
  int select_last; /* ArgMax/ArgMin: the last index among equal extremes rather than the first */
  int n_kept, n_red;
  int64_t out_count, reduce_count;
  int64_t kept_dims[GFX_MAX_RANK], kept_strides[GFX_MAX_RANK];
  int64_t red_dims[GFX_MAX_RANK], red_strides[GFX_MAX_RANK];
  /* chunks > 1 (contiguous reductions only, see cuda_row_split): each output's elements are split
   * into chunks of chunk_len, reduced by separate blocks into scratch (out_count * chunks floats),
   * then combined. chunks == 1: no scratch. */
  int64_t chunks, chunk_len;
  void* scratch;
} cuda_reduce_args;

/* 3-D pooling of `volumes` (N*C) NCDHW volumes, 2-D pooling being a depth of 1 with a window of 1
 * along it (ir_pool_geom); kind 0 max, 1 average. The arrays are indexed depth, height, width. */
typedef struct cuda_pool_args {
  int kind;
  int count_include_pad;
  /* channels > 1: X and Y are N, spatial, C (channels-last), volumes counting N only; else each of
   * the volumes (N x C) is contiguous */
  int64_t channels;
  int64_t volumes, in_size[3], out_size[3];
  int64_t kernel[3], strides[3], dilations[3], pad_begin[3], pad_end[3];
} cuda_pool_args;

/* Softmax over the middle dim of [outer, n, inner]; lp 1 or 2: LpNormalization there instead
 * (each row divided by its L1 or L2 norm, zeros where that is 0). */
typedef struct cuda_softmax_args {
  int log;
  int lp;
  int64_t outer, n, inner;
} cuda_softmax_args;

/* rows contiguous rows of count elements, each normalized (rms: divided by the root mean square,
 * no mean subtracted); the scale (and bias) of element j of row r is at (r % affine_mod) *
 * affine_mul + j / affine_div, that quotient taken modulo affine_wrap when affine_wrap is not 0 (a
 * broadcast RMSNormalization scale). mean and inv_std, when not NULL,
 * receive each row's mean and 1 / sqrt(variance + epsilon) (LayerNormalization's optional outputs),
 * as float32 when stats_f32, else in the tensors' element type. */
typedef struct cuda_norm_args {
  int64_t rows, count;
  int64_t affine_mod, affine_mul, affine_div, affine_wrap;
  float epsilon;
  int rms;
  int stats_f32;
  void* mean;
  void* inv_std;
  /* chunks > 1: rows are split into chunks of chunk_len whose statistics go to scratch (rows *
   * chunks * 2 floats) before the normalizing pass; chunks == 1: no scratch. */
  int64_t chunks, chunk_len;
  void* scratch;
} cuda_norm_args;

/* LRN of [n, c, spatial]: y = x * (bias + alpha_over_size * sum of x^2 over channels
 * [k - pre, k - pre + size - 1] inside [0, c))^-beta. */
typedef struct cuda_lrn_args {
  int64_t n, c, spatial, size, pre;
  float alpha_over_size, beta, bias;
} cuda_lrn_args;

/* How rows of `count` contiguous elements are split across blocks: few long rows would leave most
 * of the GPU idle with one block each (128 rows of 512x512 on 132 SMs), so such rows are cut into
 * chunks of at least 2048 elements until there are about 1024 blocks. chunk_len is a multiple of 8
 * elements, so chunks start 16-byte aligned when rows do. *chunks == 1: no split. */
static inline void cuda_row_split(int64_t rows, int64_t count, int64_t* chunks, int64_t* chunk_len) {
  const int64_t target_blocks = 1024, min_chunk = 2048;
  *chunks = 1;
  *chunk_len = count;
  if (rows <= 0 || rows >= target_blocks / 2 || count < 2 * min_chunk) return;
  int64_t want = (target_blocks + rows - 1) / rows;
  const int64_t most = count / min_chunk;
  if (want > most) want = most;
  if (want < 2) return;
  int64_t len = (count + want - 1) / want;
  len = (len + 7) / 8 * 8;
  *chunk_len = len;
  *chunks = (count + len - 1) / len;
}

cudaError_t cuda_reduce_run(int dtype, const void* x, void* y, cuda_reduce_args args, cudaStream_t stream);
/* ArgMax / ArgMin (args.kind CUDA_REDUCE_ARGMAX or CUDA_REDUCE_ARGMIN): y[o] is the int64 position,
 * along the reduced elements, of the first extreme (the last with select_last); a NaN never compares
 * better, so it wins only at position 0. reduce_count must be at least 1 where out_count is not 0;
 * chunks and scratch are not used. */
cudaError_t cuda_arg_run(int dtype, const void* x, int64_t* y, cuda_reduce_args args, cudaStream_t stream);
cudaError_t cuda_pool_run(int dtype, const void* x, void* y, cuda_pool_args args, cudaStream_t stream);
cudaError_t cuda_softmax_run(int dtype, const void* x, void* y, cuda_softmax_args args, cudaStream_t stream);
/* bias may be NULL */
cudaError_t cuda_norm_run(int dtype, const void* x, const void* scale, const void* bias, void* y, cuda_norm_args args,
                          cudaStream_t stream);

/* InstanceNormalization with its fused epilogue (ir_norm_params): each of the rows (N x C planes of
 * h x w = count elements) normalized, rounded to the element type, addend (NULL: none; X's shape)
 * added and rounded, negatives set to 0 where relu, and written as an out_h x out_w plane whose
 * element (oy, ox) is that of source (oy - pad_top, ox - pad_left) mirrored into the plane (reflect
 * padding). The statistics go through args.scratch (rows * chunks float2, chunks >= 1). */
typedef struct cuda_norm_epilogue_args {
  cuda_norm_args norm;
  const void* addend;
  int relu;
  int64_t h, w, out_h, out_w, pad_top, pad_left;
} cuda_norm_epilogue_args;
cudaError_t cuda_norm_epilogue_run(int dtype, const void* x, const void* scale, const void* bias, void* y,
                                   cuda_norm_epilogue_args args, cudaStream_t stream);

/* LayerNormalization of x + r (a residual Add fused in): rows contiguous rows of count elements,
 * scale and bias (NULL: none) of one row's shape; sum, when not NULL, receives x + r as rounded to
 * the element type, which is also what is normalized (cuda_add_norm.cu). */
typedef struct cuda_add_norm_args {
  int64_t rows, count;
  float epsilon;
} cuda_add_norm_args;
cudaError_t cuda_add_norm_run(int dtype, const void* x, const void* r, const void* scale, const void* bias, void* y,
                              void* sum, cuda_add_norm_args args, cudaStream_t stream);
cudaError_t cuda_add_norm_preload(void); /* its kernels into the current context */

cudaError_t cuda_lrn_run(int dtype, const void* x, void* y, cuda_lrn_args args, cudaStream_t stream);

/* Loads every kernel of cuda_reduce.cu into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_reduce_preload(void);

#ifdef __cplusplus
}
#endif

#endif

/* gfxep CUDA backend — kernels of the resampling ops, callable from C.
 *
 * Each entry queues its work on `stream` and returns the launch error (cudaSuccess when there was
 * nothing to launch). Tensors are contiguous row-major; the caller has checked every shape.
 */
#ifndef GFXEP_BACKEND_CUDA_RESIZE_H
#define GFXEP_BACKEND_CUDA_RESIZE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/grid_sample_geom.h"
#include "ir/resize_geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Resize/Upsample of x ([g.outer, g.h.in, g.w.in]) into y ([g.outer, g.h.out, g.w.out]), or with
 * g.general of x (g.axes[k].in) into y (g.axes[k].out); dtype is GFX_DTYPE_F32, F16 or BF16
 * (anything else returns cudaErrorInvalidValue). */
cudaError_t cuda_resize(int dtype, const void* x, void* y, ir_resize_geom g, cudaStream_t stream);

/* The whole factors of a nearest upscaling: 1 with *fx and *fy when output column ox reads source
 * column ox / fx and row oy reads oy / fy for every output (as the geometry's own mapping gives them,
 * nothing outside the input), else 0. It evaluates the mapping at every output column and row: once
 * per shape, on the host. */
int cuda_resize_nearest_factors(const ir_resize_geom* g, int* fx, int* fy);

/* cuda_resize of a geometry cuda_resize_nearest_factors accepted, on a kernel that reads the source in
 * whole runs; cudaErrorNotSupported (nothing queued) where the factors, dtype or alignment do not
 * suit it, and cuda_resize does it then. */
cudaError_t cuda_resize_nearest_up(int dtype, const void* x, void* y, const ir_resize_geom* g, int fx, int fy,
                                   cudaStream_t stream);

/* The phases of a linear (taps = 2) or cubic (taps = 4) Resize that upscales the rows by fx = 2 or
 * 4: output column o reads the source columns from o / fx + d[o % fx] on, weighted w[o % fx], for
 * every o in [col_lo, col_hi) (the columns near the ends, where the taps clamp, excepted). */
typedef struct cuda_resize_pattern {
  int fx, taps;
  int d[4];
  float w[4][4];
  int64_t col_lo, col_hi;
} cuda_resize_pattern;

/* 1 with *p when g is such a Resize (as the geometry's own mapping gives it at every output column,
 * on the host: once per shape) and the phases hold for at least half of the row, else 0. */
int cuda_resize_pattern_of(const ir_resize_geom* g, cuda_resize_pattern* p);

/* cuda_resize of a geometry cuda_resize_pattern_of accepted, on a kernel that reads each source row
 * in whole runs and writes 16-byte vectors (in cuda_resize_up.cu); cudaErrorNotSupported (nothing
 * queued) where the dtype or alignment do not suit it, and cuda_resize does it then. */
cudaError_t cuda_resize_up(int dtype, const void* x, void* y, const ir_resize_geom* g, const cuda_resize_pattern* p,
                           cudaStream_t stream);
cudaError_t cuda_resize_up_preload(void);

/* RoiAlign of x ([n, c, h, w]) over `regions` rois ([regions, 4], x's type) with int64
 * batch_indices into y ([regions, c, out_h, out_w]); dtype GFX_DTYPE_F32, F16 or BF16. */
typedef struct cuda_roi_align_args {
  int64_t n, c, h, w, regions, out_h, out_w, sampling_ratio;
  float spatial_scale;
  int half_pixel, mode_max;
} cuda_roi_align_args;
cudaError_t cuda_roi_align(int dtype, const void* x, const void* rois, const int64_t* batch_indices, void* y,
                           cuda_roi_align_args a, cudaStream_t stream);

/* DepthToSpace (to_space = 1) or SpaceToDepth of elements of elem_size bytes (1, 2, 4 or 8);
 * out_dims is the output shape [N, C, H, W]. With nhwc_input (DepthToSpace only) x is [N, H, W, C]. */
cudaError_t cuda_space_depth(size_t elem_size, int to_space, int crd, int nhwc_input, int64_t blocksize,
                             const int64_t out_dims[4], const void* x, void* y, cudaStream_t stream);

/* GridSample of x ([g.n, g.c, g.in_h, g.in_w]) at grid ([g.n, g.out_h, g.out_w, 2]) into y ([g.n, g.c,
 * g.out_h, g.out_w]); x and y of dtype, the grid of grid_dtype, each GFX_DTYPE_F32 or F16 (anything
 * else returns cudaErrorInvalidValue); in cuda_grid_sample.cu. */
cudaError_t cuda_grid_sample(int dtype, int grid_dtype, const void* x, const void* grid, void* y, ir_grid_geom g,
                             cudaStream_t stream);
cudaError_t cuda_grid_sample_preload(void);

/* Loads every kernel of cuda_resize.cu into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_resize_preload(void);

#ifdef __cplusplus
}
#endif

#endif

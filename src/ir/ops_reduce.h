/* gfxep — geometry of the reduction, normalization, pooling and softmax ops: what every backend's
 * kernels index with, computed once from the node's params and the concrete input shape, so that the
 * reference and CUDA kernels share one definition of each op's shapes.
 */
#ifndef GFXEP_IR_OPS_REDUCE_H
#define GFXEP_IR_OPS_REDUCE_H

#include "ir/graph.h"

/* A reduction as index math: output element o (row-major over the kept dims) starts at input
 * offset sum(coord_k * kept_strides[k]); its reduced elements are at that base plus
 * sum(coord_r * red_strides[r]). Size-1 dims are dropped and neighbours of the same class merged,
 * so a contiguous reduction has n_red == 1 and red_strides[0] == 1. */
typedef struct ir_reduce_geom {
  gfx_shape out;
  int64_t out_count, reduce_count;
  int copy; /* noop_with_empty_axes: the output is the input */
  int n_kept, n_red;
  int64_t kept_dims[GFX_MAX_RANK], kept_strides[GFX_MAX_RANK];
  int64_t red_dims[GFX_MAX_RANK], red_strides[GFX_MAX_RANK];
} ir_reduce_geom;

gfx_status ir_reduce_geometry(const ir_reduce_params* p, const gfx_shape* in, ir_reduce_geom* g);

/* Pooling with pads resolved (auto_pad) and the output size rule applied, always as 3-D: the arrays
 * are indexed depth, height, width, and 2-D pooling (NCHW) is a depth of 1 with a kernel of 1 along
 * it, so one kernel per backend serves both. */
typedef struct ir_pool_geom {
  int64_t n, c, in_d, in_h, in_w, out_d, out_h, out_w;
  int channels_last; /* X and Y are N, H, W, C (2-D only) */
  int64_t kernel[3], strides[3], dilations[3];
  int64_t pad_begin[3], pad_end[3];
} ir_pool_geom;

gfx_status ir_pool_geometry(const ir_pool_params* p, const gfx_shape* in, ir_pool_geom* g);

/* Softmax over the middle dim of [outer, n, inner]; inner == 1 for the flattened (opset < 13) form. */
typedef struct ir_softmax_geom {
  int64_t outer, n, inner;
} ir_softmax_geom;

gfx_status ir_softmax_geometry(const ir_softmax_params* p, const gfx_shape* in, ir_softmax_geom* g);

/* A normalization as `rows` contiguous rows of `count` elements, each normalized on its own; the
 * scale and bias of element j of row r are at index (r % affine_mod) * affine_mul + j / affine_div
 * (taken modulo affine_wrap when that is not 0), which covers LayerNormalization (per element of the
 * row), InstanceNormalization (per channel), GroupNormalization 18 (per group) and 21 (per
 * channel), and RMSNormalization's scale broadcast along the row (j / affine_div % affine_wrap). */
typedef struct ir_norm_geom {
  int64_t rows, count;
  int64_t affine_mod, affine_mul, affine_div, affine_wrap;
  int64_t affine_count; /* elements scale and bias must have */
} ir_norm_geom;

/* scale: the Scale input's shape. */
gfx_status ir_norm_geometry(const ir_norm_params* p, const gfx_shape* x, const gfx_shape* scale, ir_norm_geom* g);

/* LRN as [n, c, spatial]: the window of channel k is [k - pre, k - pre + size - 1], clipped to the
 * channels there are. */
typedef struct ir_lrn_geom {
  int64_t n, c, spatial, size, pre;
} ir_lrn_geom;

gfx_status ir_lrn_geometry(const ir_lrn_params* p, const gfx_shape* x, ir_lrn_geom* g);

/* The shape of LayerNormalization's optional Mean and InvStdDev outputs (one value per row): X's
 * shape with the normalized dims set to 1. Row r of the geometry is element r of each. */
gfx_status ir_norm_stats_shape(const ir_norm_params* p, const gfx_shape* x, gfx_shape* out);

#endif

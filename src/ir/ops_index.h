/* gfxep — what the backends share of the logic, Mod, scan, generator and index ops (ir/ops_index.c):
 * the integer Mod every backend computes, and the geometry of each op for concrete shapes. */
#ifndef GFXEP_IR_OPS_INDEX_H
#define GFXEP_IR_OPS_INDEX_H

#include <stdint.h>

#include "ir/graph.h"

/* A tensor seen as [outer, len, inner] around one axis (CumSum). */
typedef struct ir_axis_geom {
  int64_t outer, len, inner;
} ir_axis_geom;

/* The geometry of `s` around `axis` (in [-rank, rank)); INVALID_ARGUMENT for an axis outside. */
gfx_status ir_axis_geometry(const gfx_shape* s, int64_t axis, ir_axis_geom* g);

/* TopK: X as [outer, len, inner] around the axis; INVALID_ARGUMENT for an axis outside X's rank or
 * k outside [0, len]. */
gfx_status ir_topk_geometry(const gfx_shape* x, int64_t axis, int64_t k, ir_axis_geom* g);
/* Values and Indices: X's shape with k along the axis (out[0], out[1]). */
gfx_status ir_infer_topk(const ir_node* node, const gfx_shape* in, gfx_shape* out);

/* Whether element (a, ia) comes before (b, ib) in TopK's output: the larger (largest) or smaller
 * value first, NaN before every number when largest and after every number otherwise (as if NaN
 * were the largest value), equal values (and two NaNs) by the lower index. A strict total order, so
 * the k first elements are one definite set in one definite order on every backend. Float types
 * compare as double (exact for float32/float16/bfloat16), int32/int64 as int64 (exact). */
static inline int ir_topk_before_float(double a, int64_t ia, double b, int64_t ib, int largest) {
  const int na = a != a, nb = b != b;
  if (na || nb) {
    if (na && nb) return ia < ib;
    return largest ? na : nb;
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

static inline int ir_topk_before_int(int64_t a, int64_t ia, int64_t b, int64_t ib, int largest) {
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

/* Trilu: `batch` matrices of rows x cols, the last two dims. */
typedef struct ir_trilu_geom {
  int64_t batch, rows, cols;
} ir_trilu_geom;

/* INVALID_ARGUMENT below rank 2. */
gfx_status ir_trilu_geometry(const gfx_shape* s, ir_trilu_geom* g);

/* Whether Trilu keeps element (row, col): on or above diagonal k (upper), on or below it (lower).
 * No arithmetic on k, so any int64 k is exact. */
static inline int ir_trilu_keeps(int upper, int64_t k, int64_t row, int64_t col) {
  return upper ? col - row >= k : col - row <= k;
}

/* GatherElements and ScatterElements: element e of the indices (and of the updates; of Gather's
 * output) at coordinates c over idx_dims reads or writes data at sum c[d] * data_strides[d], with
 * c[axis] replaced by the index read there. Lines: the elements that differ only along the axis,
 * the only ones that can reach the same data element. */
typedef struct ir_elements_geom {
  int rank, axis;
  int64_t axis_dim; /* data's extent along the axis: indices lie in [-axis_dim, axis_dim) */
  int64_t count;    /* elements of the indices */
  int64_t idx_dims[GFX_MAX_RANK], idx_strides[GFX_MAX_RANK], data_strides[GFX_MAX_RANK];
} ir_elements_geom;

/* INVALID_ARGUMENT unless data and indices (and updates, when not NULL, shaped like the indices)
 * have one rank >= 1 and the indices fit in data on every dim but the axis. */
gfx_status ir_elements_geometry(const gfx_shape* data, const gfx_shape* indices, const gfx_shape* updates,
                                int64_t axis, ir_elements_geom* g);

/* GatherND and ScatterND: `batch` batches (the first batch_dims dims) of n index tuples of m
 * entries; tuple t (over all batches; batch t / n) selects a slice of `slice` contiguous elements of
 * data at (t / n) * data_batch_stride + sum idx[k] * strides[k], idx[k] in [-dims[k], dims[k]). */
typedef struct ir_nd_geom {
  int64_t batch, n, slice, data_batch_stride;
  int m;
  int64_t dims[GFX_MAX_RANK], strides[GFX_MAX_RANK];
} ir_nd_geom;

/* The geometry, and GatherND's output shape into *gathered when it is not NULL; INVALID_ARGUMENT
 * for shapes that do not fit (updates, when not NULL, must be ScatterND's). */
gfx_status ir_nd_geometry(const gfx_shape* data, const gfx_shape* indices, const gfx_shape* updates, int batch_dims,
                          ir_nd_geom* g, gfx_shape* gathered);

/* The reductions of ScatterElements and ScatterND on values held in double (floats) or int64
 * (integers, wrap-around); max and min as std::max/std::min, the first operand the current value. */
static inline double ir_scatter_reduce_f(int reduction, double cur, double v) {
  switch (reduction) {
    case IR_SCATTER_ADD: return cur + v;
    case IR_SCATTER_MUL: return cur * v;
    case IR_SCATTER_MAX: return cur < v ? v : cur;
    case IR_SCATTER_MIN: return v < cur ? v : cur;
    default: return v;
  }
}
static inline int64_t ir_scatter_reduce_i(int reduction, int64_t cur, int64_t v) {
  switch (reduction) {
    case IR_SCATTER_ADD: return (int64_t)((uint64_t)cur + (uint64_t)v);
    case IR_SCATTER_MUL: return (int64_t)((uint64_t)cur * (uint64_t)v);
    case IR_SCATTER_MAX: return cur < v ? v : cur;
    case IR_SCATTER_MIN: return v < cur ? v : cur;
    default: return v;
  }
}

#endif

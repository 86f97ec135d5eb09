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

#endif

/* gfxep — what the backends share of NonZero and NonMaxSuppression (ir/ops_select.c): their bounded
 * shapes, the nonzero test, and NonMaxSuppression's boxes, order and overlap test exactly as ONNX
 * Runtime's CPU kernel computes them (float32 arithmetic, operation for operation), so that every
 * backend keeps the same boxes as ORT, near-equal overlaps included.
 *
 * In the IR both are bounded nodes (graph.h, ir_select_params): output 0 is written at an upper bound
 * the input shapes decide and output 1 is the count; the Slice ir_graph_add_node puts after them cuts
 * the bound to the count once the executor has read it back (ir/dynamic.h).
 */
#ifndef GFXEP_IR_OPS_SELECT_H
#define GFXEP_IR_OPS_SELECT_H

#include <stdint.h>

#include "ir/graph.h"

/* NonZero over x: the coordinates it writes per element (rows: max(rank, 1); a scalar's one
 * coordinate is 0, as ORT gives) and how many elements it looks at (numel). INVALID_ARGUMENT for a
 * shape that is not concrete. */
gfx_status ir_nonzero_geometry(const gfx_shape* x, int64_t* rows, int64_t* numel);

/* Whether an element of dtype, given by its bits (the low gfx_dtype_size(dtype) bytes of `bits`),
 * counts as nonzero: any bit set, except that a float's sign bit alone (-0.0) does not; NaN counts. */
static inline int ir_nonzero_bits(int dtype, uint64_t bits) {
  switch (dtype) {
    case GFX_DTYPE_F32: return (bits & 0x7fffffffu) != 0;
    case GFX_DTYPE_F16:
    case GFX_DTYPE_BF16: return (bits & 0x7fffu) != 0;
    default: return bits != 0;
  }
}

/* NonMaxSuppression for concrete shapes: boxes [batches, boxes, 4], scores [batches, classes, boxes];
 * each (batch, class) keeps at most per_class = min(max_output, boxes) boxes, so the output holds at
 * most bound = batches x classes x per_class rows. INVALID_ARGUMENT for shapes that do not agree (the
 * message names them) or sizes beyond 2^31 boxes per class. */
typedef struct ir_nms_geom {
  int64_t batches, classes, boxes;
  int64_t per_class;
  int64_t bound;
} ir_nms_geom;
gfx_status ir_nms_geometry(const ir_select_params* p, const gfx_shape* boxes, const gfx_shape* scores, ir_nms_geom* g);

/* std::max / std::min as ORT calls them (the first operand unless the second is greater / smaller). */
static inline float ir_nms_max(float a, float b) { return a < b ? b : a; }
static inline float ir_nms_min(float a, float b) { return b < a ? b : a; }

/* A box as ORT's kernel keeps it: box[0..3] = y_min, x_min, y_max, x_max, and its area. Corners
 * (center_point_box 0: [y1, x1, y2, x2], any diagonal) are ordered per axis; a centred box (1: [x, y,
 * w, h]) spans x -+ w / 2 and y -+ h / 2, and its area is w * h as given. */
static inline void ir_nms_box(const float* in, int center_point_box, float* box, float* area) {
  if (!center_point_box) {
    if (in[1] >= in[3]) box[1] = in[3], box[3] = in[1];
    else box[1] = in[1], box[3] = in[3];
    if (in[0] >= in[2]) box[0] = in[2], box[2] = in[0];
    else box[0] = in[0], box[2] = in[2];
    const float h = box[2] - box[0], w = box[3] - box[1];
    *area = h * w;
  } else {
    const float half_w = in[2] / 2, half_h = in[3] / 2;
    *area = in[2] * in[3];
    box[1] = in[0] - half_w;
    box[3] = in[0] + half_w;
    box[0] = in[1] - half_h;
    box[2] = in[1] + half_h;
  }
}

/* Whether the kept box b suppresses candidate a: their intersection over union is above the
 * threshold. Empty or inverted intersections never suppress. In ORT's order of operations: the
 * union is (area_a + area_b) - intersection, the ratio one float division. */
static inline int ir_nms_suppresses(const float* a, float area_a, const float* b, float area_b, float iou_threshold) {
  const float x_min = ir_nms_max(a[1], b[1]), x_max = ir_nms_min(a[3], b[3]);
  if (x_max <= x_min) return 0;
  const float y_min = ir_nms_max(a[0], b[0]), y_max = ir_nms_min(a[2], b[2]);
  if (y_max <= y_min) return 0;
  const float w = x_max - x_min, h = y_max - y_min;
  const float inter = w * h;
  if (inter <= 0.0f) return 0;
  const float sum = area_a + area_b;
  const float uni = sum - inter;
  const float iou = inter / uni;
  return iou > iou_threshold;
}

/* Whether candidate (score sa, box index a) is taken before (sb, b): the higher score first, equal
 * scores by the lower index (ORT's order). A NaN score (ORT's order is undefined there: a NaN is
 * never above a score threshold) comes after every number, NaNs by index. A strict total order. */
static inline int ir_nms_before(float sa, int64_t a, float sb, int64_t b) {
  const int na = sa != sa, nb = sb != sb;
  if (na || nb) return na && nb ? a < b : nb;
  if (sa != sb) return sa > sb;
  return a < b;
}

#endif

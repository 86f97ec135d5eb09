/* gfxep — parse and shape functions of the selections whose output count the data decides:
 * NonZero and NonMaxSuppression (see ir/ops.def, ir/ops_select.h and ir/dynamic.h). */
#include <string.h>

#include "ir/ops_common.h"
#include "ir/ops_select.h"

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

static int input_present(const ir_node_desc* d, int i) {
  return i < d->n_inputs && d->input_dtypes[i] != GFX_DTYPE_UNDEFINED;
}

/* A concrete shape of at most GFX_MAX_RANK dims whose element count fits comfortably in int64. */
static gfx_status check_concrete(const char* what, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has rank %d; 0..%d are handled", what, s->rank, GFX_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    const int64_t d = s->dims[i], e = d > 1 ? d : 1;
    if (d < 0 || n > ((int64_t)1 << 48) / e)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %s is no concrete shape of a size gfxep handles", what,
                       SHAPE_STR(s));
    n *= e;
  }
  return NULL;
}

/* ---- NonZero ---- */

#define NONZERO_TYPES                                                                                         \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL) | IR_TYPE_BIT(GFX_DTYPE_U8) |                 \
   IR_TYPE_BIT(GFX_DTYPE_I8))

/* Opset 9 and 13 (the same semantics): X of a float type, int32/int64, int8/uint8 or bool; int64
 * coordinates out. */
gfx_status ir_parse_nonzero(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(ir_check_input_type(d, 0, NONZERO_TYPES));
  if (d->output_dtypes[0] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "output 0 is %s; int64 is expected", gfx_dtype_name(d->output_dtypes[0]));
  /* ONNX's shape inference makes a scalar's output [0, N], ORT's CPU kernel [1, N]: the model's
   * declared output and ORT's result disagree, so the node stays with ORT */
  if (d->input_shapes[0].rank == 0)
    return IR_UNSUPPORTED(d, "X is a scalar (ONNX declares its output [0, N], ONNX Runtime gives [1, N])");
  memset(&p->select, 0, sizeof p->select);
  p->select.dtype = d->input_dtypes[0];
  return NULL;
}

gfx_status ir_nonzero_geometry(const gfx_shape* x, int64_t* rows, int64_t* numel) {
  GFX_TRY(check_concrete("NonZero: X", x));
  *rows = x->rank > 0 ? x->rank : 1;
  *numel = gfx_shape_numel(x);
  return NULL;
}

/* The bounded node: every element's coordinates fit in [rows, numel]; then the count, int64 [1]. */
gfx_status ir_infer_nonzero(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  int64_t rows, numel;
  GFX_TRY(ir_nonzero_geometry(&in[0], &rows, &numel));
  if (node->n_outputs != 2)
    return gfx_error(GFX_ERR_INTERNAL, "NonZero '%s' has %d outputs; the IR gives it its bound and count",
                     node->name, node->n_outputs);
  out[0] = (gfx_shape){.rank = 2, .dims = {rows, numel}};
  out[1] = (gfx_shape){.rank = 1, .dims = {1}};
  return NULL;
}

/* ---- NonMaxSuppression ---- */

/* Opset 10 and 11 (the same semantics): boxes and scores float32 (float16/bfloat16 where a partition
 * is lowered), center_point_box 0 or 1; max_output_boxes_per_class, iou_threshold and score_threshold
 * constant scalars when present (ORT's defaults when absent: 0 boxes, threshold 0, no score filter).
 * Computed ones are left to ORT, and so is an iou_threshold outside [0, 1], which ORT fails with its
 * own message. */
gfx_status ir_parse_nms(const ir_node_desc* d, ir_params* params) {
  GFX_TRY(ir_check_io(d, 2, 5, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"center_point_box", NULL}));
  GFX_TRY(ir_check_input_type(d, 0, IR_TYPES_FLOAT));
  if (d->input_dtypes[1] != d->input_dtypes[0])
    return IR_UNSUPPORTED(d, "scores are %s, boxes %s", gfx_dtype_name(d->input_dtypes[1]),
                          gfx_dtype_name(d->input_dtypes[0]));
  if (d->output_dtypes[0] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "output 0 is %s; int64 is expected", gfx_dtype_name(d->output_dtypes[0]));
  ir_select_params* p = &params->select;
  memset(p, 0, sizeof *p);
  p->dtype = d->input_dtypes[0];
  int64_t center = 0;
  GFX_TRY(ir_attr_int(d, "center_point_box", 0, &center));
  if (center != 0 && center != 1)
    return IR_UNSUPPORTED(d, "center_point_box = %lld; 0 or 1 is expected", (long long)center);
  p->center_point_box = (int)center;
  static const char* const names[] = {NULL, NULL, "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (int i = 2; i < 5; i++) {
    if (!input_present(d, i)) continue;
    if (!d->input_is_const[i])
      return IR_UNSUPPORTED(d, "%s (input %d) is computed at run time; a constant is handled", names[i], i);
    size_t n = 0;
    if (i == 2) {
      int64_t v[2];
      GFX_TRY(ir_const_ints(d, i, v, 2, &n));
      if (n != 1) return IR_UNSUPPORTED(d, "%s holds %zu values; one is expected", names[i], n);
      p->max_output = v[0] > 0 ? v[0] : 0; /* ORT: a negative count keeps nothing */
    } else {
      float v[2];
      GFX_TRY(ir_const_floats(d, i, v, 2, &n));
      if (n != 1) return IR_UNSUPPORTED(d, "%s holds %zu values; one is expected", names[i], n);
      if (i == 3) {
        if (!(v[0] >= 0.0f && v[0] <= 1.0f))
          return IR_UNSUPPORTED(d, "iou_threshold = %g is outside [0, 1] (ONNX Runtime fails the node)", (double)v[0]);
        p->iou_threshold = v[0];
      } else {
        p->score_threshold = v[0];
        p->has_score_threshold = 1;
      }
    }
  }
  /* shapes that cannot agree at run time: left to ORT, which reports them */
  const gfx_shape *b = &d->input_shapes[0], *s = &d->input_shapes[1];
  if (b->rank >= 0 && (b->rank != 3 || (b->dims[2] >= 0 && b->dims[2] != 4)))
    return IR_UNSUPPORTED(d, "boxes are declared %s; [batches, boxes, 4] is expected", SHAPE_STR(b));
  if (s->rank >= 0 && s->rank != 3)
    return IR_UNSUPPORTED(d, "scores are declared %s; [batches, classes, boxes] is expected", SHAPE_STR(s));
  return NULL;
}

gfx_status ir_nms_geometry(const ir_select_params* p, const gfx_shape* boxes, const gfx_shape* scores, ir_nms_geom* g) {
  GFX_TRY(check_concrete("NonMaxSuppression: boxes", boxes));
  GFX_TRY(check_concrete("NonMaxSuppression: scores", scores));
  if (boxes->rank != 3 || scores->rank != 3 || boxes->dims[2] != 4 || boxes->dims[0] != scores->dims[0] ||
      boxes->dims[1] != scores->dims[2])
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "NonMaxSuppression: boxes %s and scores %s do not agree ([batches, boxes, 4] and [batches, "
                     "classes, boxes] are expected)",
                     SHAPE_STR(boxes), SHAPE_STR(scores));
  g->batches = boxes->dims[0];
  g->classes = scores->dims[1];
  g->boxes = boxes->dims[1];
  if (g->boxes > INT32_MAX)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "NonMaxSuppression: %lld boxes per class; at most 2^31 - 1 are handled",
                     (long long)g->boxes);
  g->per_class = p->max_output < g->boxes ? p->max_output : g->boxes;
  g->bound = g->batches * g->classes * g->per_class; /* at most the scores' element count, below 2^48 */
  return NULL;
}

/* The bounded node: at most `bound` rows of [batch, class, box]; then the count, int64 [1]. */
gfx_status ir_infer_nms(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_nms_geom g;
  GFX_TRY(ir_nms_geometry(&node->params.select, &in[0], &in[1], &g));
  if (node->n_outputs != 2)
    return gfx_error(GFX_ERR_INTERNAL, "NonMaxSuppression '%s' has %d outputs; the IR gives it its bound and count",
                     node->name, node->n_outputs);
  out[0] = (gfx_shape){.rank = 2, .dims = {g.bound, 3}};
  out[1] = (gfx_shape){.rank = 1, .dims = {1}};
  return NULL;
}

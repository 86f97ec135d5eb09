/* gfxep — parse and infer functions of the layout and data movement ops (see ir/ops.def), and the
 * strided copy plans their kernels run (ir/layout.h).
 *
 * These ops move bytes and never convert them, so every element type of gfxep is handled by its
 * size alone. Shape-like inputs (shapes, pads, axes, starts, repeats, split sizes) must be constant
 * initializers: their values are copied into ir_layout_params at parse time, and a node whose
 * shape input is computed at run time stays with ONNX Runtime.
 */
#include <stdio.h>
#include <string.h>

#include "core/half.h"

#include "ir/layout.h"
#include "ir/ops_common.h"
#include "ir/shape.h"

/* every element type gfxep knows: the layout ops only move them */
#define TYPES_ALL                                                                                         \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_I8) | IR_TYPE_BIT(GFX_DTYPE_U8) |             \
   IR_TYPE_BIT(GFX_DTYPE_BOOL))

/* Dims and element counts beyond these are refused, so that no offset computation can overflow:
 * offsets are products of at most 2^40 elements and strides below 2^40. */
#define MAX_DIM ((int64_t)1 << 31)
#define MAX_ELEMS ((int64_t)1 << 40)

#define SHAPE_STR(s) gfx_shape_str((s), (char[160]){0}, 160)

/* ================================================================================================
 * shared checks
 * ================================================================================================ */

/* A shape an op computed: rank within GFX_MAX_RANK, every dim in [0, 2^31], the element count
 * below 2^40. */
static gfx_status check_result_shape(const char* what, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s would have rank %d; at most %d is handled", what, s->rank,
                     GFX_MAX_RANK);
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0 || s->dims[i] > MAX_DIM)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s dim %d is %lld; dims in [0, 2^31] are handled", what, i,
                       (long long)s->dims[i]);
  int64_t n = gfx_shape_numel(s);
  if (n < 0 || n > MAX_ELEMS)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %s has more than 2^40 elements", what, SHAPE_STR(s));
  return NULL;
}

/* An input's shape must be concrete before anything is computed from it. */
static gfx_status check_input_shape(const gfx_shape* s, int i) {
  char what[32];
  snprintf(what, sizeof what, "input %d", i);
  return check_result_shape(what, s);
}

/* Normalizes axis to [0, rank) at run time. */
static gfx_status norm_axis(const char* what, int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %lld is outside [-%d, %d)", what, (long long)axis, rank, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return NULL;
}

/* The input's rank when parse knows it, else -1. */
static int known_rank(const ir_node_desc* d, int i) { return d->input_shapes[i].rank; }

/* An attribute-or-axis that parse can check when the rank is known. */
static gfx_status parse_check_axis(const ir_node_desc* d, int64_t axis, int rank) {
  if (rank < 0) return NULL;
  int unused;
  return ir_norm_axis(d, axis, rank, &unused);
}

/* Axes (for a given rank) must be distinct once normalized; written normalized into out. */
static gfx_status norm_axes(const int64_t* axes, int n, int rank, int* out) {
  int seen[GFX_MAX_RANK + 1] = {0};
  for (int i = 0; i < n; i++) {
    GFX_TRY(norm_axis("axis", axes[i], rank, &out[i]));
    if (seen[out[i]]++) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
  }
  return NULL;
}

/* norm_axes at parse time: a bad axis list means the node is not taken. */
static gfx_status parse_norm_axes(const ir_node_desc* d, const int64_t* axes, int n, int rank, int* out) {
  gfx_status s = norm_axes(axes, n, rank, out);
  if (!s) return NULL;
  gfx_status r = IR_UNSUPPORTED(d, "%s", gfx_status_message(s));
  gfx_status_free(s);
  return r;
}

/* Reads an int list from constant input i into p->ints (at most cap values). */
static gfx_status const_list(const ir_node_desc* d, int i, int64_t* out, size_t cap, int* n) {
  size_t count = 0;
  GFX_TRY(ir_const_ints(d, i, out, cap, &count));
  *n = (int)count;
  return NULL;
}

static int input_present(const ir_node_desc* d, int i) {
  return i < d->n_inputs && d->input_dtypes[i] != GFX_DTYPE_UNDEFINED;
}

/* Input 0 and output 0 share one element type of any kind; recorded in p->dtype. */
static gfx_status parse_data_io(const ir_node_desc* d, ir_layout_params* p) {
  return ir_check_same_type(d, 0, 0, TYPES_ALL, &p->dtype);
}

static void contiguous_strides(const gfx_shape* s, int64_t* strides) {
  int64_t stride = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= s->dims[i];
  }
}

/* ================================================================================================
 * Concat
 * ================================================================================================ */

gfx_status ir_parse_concat(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 1, IR_MAX_IO, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", NULL}));
  for (int i = 0; i < d->n_inputs; i++)
    if (!input_present(d, i)) return IR_UNSUPPORTED(d, "input %d is absent", i);
  GFX_TRY(ir_check_same_type(d, 0, d->n_inputs - 1, TYPES_ALL, &p->dtype));
  int64_t axis = INT64_MIN;
  GFX_TRY(ir_attr_int(d, "axis", INT64_MIN, &axis));
  if (axis == INT64_MIN) return IR_UNSUPPORTED(d, "the required attribute 'axis' is missing");
  p->axis = axis;
  return parse_check_axis(d, axis, known_rank(d, 0));
}

gfx_status ir_infer_concat(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(&in[0], 0));
  int axis = 0;
  GFX_TRY(norm_axis("axis", p->axis, in[0].rank, &axis));
  gfx_shape r = in[0];
  for (int i = 1; i < node->n_inputs; i++) {
    GFX_TRY(check_input_shape(&in[i], i));
    if (in[i].rank != r.rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d %s and input 0 %s differ in rank", i, SHAPE_STR(&in[i]),
                       SHAPE_STR(&in[0]));
    for (int k = 0; k < r.rank; k++)
      if (k != axis && in[i].dims[k] != r.dims[k])
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d %s and input 0 %s differ in dim %d", i,
                         SHAPE_STR(&in[i]), SHAPE_STR(&in[0]), k);
    r.dims[axis] += in[i].dims[axis]; /* each below 2^31, at most 8 of them */
  }
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

/* ================================================================================================
 * Split
 * ================================================================================================ */

gfx_status ir_parse_split(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  const int v = d->since_version;
  if (d->n_outputs < 1) return IR_UNSUPPORTED(d, "no outputs");
  GFX_TRY(ir_check_io(d, 1, v >= 13 ? 2 : 1, d->n_outputs));
  if (v >= 18)
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "num_outputs", NULL}));
  else if (v >= 13)
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", NULL}));
  else
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", "split", NULL}));
  GFX_TRY(parse_data_io(d, p));
  GFX_TRY(ir_attr_int(d, "axis", 0, &p->axis));
  GFX_TRY(parse_check_axis(d, p->axis, known_rank(d, 0)));

  size_t n = 0;
  int present = 0;
  if (v < 13) {
    GFX_TRY(ir_attr_ints(d, "split", p->ints, IR_MAX_IO, &n, &present));
    p->n_ints = (int)n;
  } else if (input_present(d, 1)) {
    GFX_TRY(const_list(d, 1, p->ints, IR_MAX_IO, &p->n_ints));
    present = 1;
  }
  p->has_ints = present;
  if (present) {
    if (p->n_ints != d->n_outputs)
      return IR_UNSUPPORTED(d, "%d split sizes for %d outputs", p->n_ints, d->n_outputs);
    for (int i = 0; i < p->n_ints; i++)
      if (p->ints[i] < 0) return IR_UNSUPPORTED(d, "split size %d is %lld", i, (long long)p->ints[i]);
  }
  int64_t num_outputs = 0;
  GFX_TRY(ir_attr_int(d, "num_outputs", 0, &num_outputs));
  if (num_outputs != 0) {
    if (present) return IR_UNSUPPORTED(d, "both split sizes and num_outputs are given");
    if (num_outputs != d->n_outputs)
      return IR_UNSUPPORTED(d, "num_outputs is %lld but the node has %d outputs", (long long)num_outputs,
                            d->n_outputs);
    p->num_outputs = (int)num_outputs;
  }
  return NULL;
}

/* The size of every output along the axis: the given sizes; or with num_outputs, chunks of
 * ceil(dim / n) and a smaller last one; or else equal parts, which must divide the dim. */
static gfx_status split_sizes(const ir_node* node, const gfx_shape* in, int* axis, int64_t* sizes) {
  const ir_layout_params* p = &node->params.layout;
  const int n = node->n_outputs;
  GFX_TRY(check_input_shape(in, 0));
  GFX_TRY(norm_axis("axis", p->axis, in->rank, axis));
  const int64_t dim = in->dims[*axis];
  if (p->has_ints) {
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += sizes[i] = p->ints[i]; /* each came from a checked int list */
    if (total != dim)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "split sizes sum to %lld but dim %d of %s is %lld",
                       (long long)total, *axis, SHAPE_STR(in), (long long)dim);
    return NULL;
  }
  if (p->num_outputs) {
    int64_t chunk = (dim + n - 1) / n;
    int64_t left = dim;
    for (int i = 0; i < n; i++) {
      sizes[i] = left < chunk ? left : chunk;
      left -= sizes[i];
    }
    /* ONNX: n chunks of ceil(dim/n), the last smaller; a dim too small for n chunks is invalid */
    if (n > 1 && sizes[n - 1] <= 0 && dim > 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "dim %d of %s is too small for %d outputs", *axis, SHAPE_STR(in), n);
    return NULL;
  }
  if (dim % n)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "dim %d of %s does not split into %d equal parts", *axis,
                     SHAPE_STR(in), n);
  for (int i = 0; i < n; i++) sizes[i] = dim / n;
  return NULL;
}

/* Output i of a Split whose Squeeze/Transpose was fused in: the piece's dims as split_map orders
 * them; every piece dim left out must be 1. */
static gfx_status split_mapped_shape(const ir_layout_params* p, int i, const gfx_shape* piece, gfx_shape* out) {
  const int rank = p->split_map_rank[i];
  int used[GFX_MAX_RANK] = {0};
  out->rank = rank;
  for (int k = 0; k < rank; k++) {
    const int d = p->split_map[i][k];
    if (d < 0 || d >= piece->rank || used[d])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "Split output %d: dim map entry %d does not fit its piece %s", i, d,
                       SHAPE_STR(piece));
    used[d] = 1;
    out->dims[k] = piece->dims[d];
  }
  for (int d = 0; d < piece->rank; d++)
    if (!used[d] && piece->dims[d] != 1)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "Split output %d: dim %d of its piece %s is squeezed but is not 1", i, d,
                       SHAPE_STR(piece));
  return NULL;
}

gfx_status ir_infer_split(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  int axis = 0;
  int64_t sizes[IR_MAX_IO];
  GFX_TRY(split_sizes(node, &in[0], &axis, sizes));
  for (int i = 0; i < node->n_outputs; i++) {
    gfx_shape piece = in[0];
    piece.dims[axis] = sizes[i];
    if (node->params.layout.split_map_rank[i])
      GFX_TRY(split_mapped_shape(&node->params.layout, i, &piece, &out[i]));
    else
      out[i] = piece;
  }
  return NULL;
}

/* ================================================================================================
 * Slice
 * ================================================================================================ */

/* Steps beyond this are refused so that start + count * step cannot overflow. */
#define MAX_STEP ((int64_t)1 << 40)

/* Slice before opset 10: starts, ends and axes are attributes, steps are 1. */
static gfx_status parse_slice_v1(const ir_node_desc* d, ir_layout_params* p) {
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"starts", "ends", "axes", NULL}));
  GFX_TRY(parse_data_io(d, p));
  size_t n_starts = 0, n_ends = 0, n_axes = 0;
  int present = 0;
  GFX_TRY(ir_attr_ints(d, "starts", p->starts, GFX_MAX_RANK, &n_starts, &present));
  if (!present) return IR_UNSUPPORTED(d, "attribute 'starts' is missing");
  GFX_TRY(ir_attr_ints(d, "ends", p->ends, GFX_MAX_RANK, &n_ends, &present));
  if (!present) return IR_UNSUPPORTED(d, "attribute 'ends' is missing");
  if (n_starts != n_ends) return IR_UNSUPPORTED(d, "%zu starts but %zu ends", n_starts, n_ends);
  p->n_axes = (int)n_starts;
  GFX_TRY(ir_attr_ints(d, "axes", p->axes, GFX_MAX_RANK, &n_axes, &present));
  if (present && n_axes != n_starts) return IR_UNSUPPORTED(d, "%zu axes for %zu starts", n_axes, n_starts);
  if (present) p->has_ints = 1;
  for (size_t i = 0; i < n_starts; i++) {
    if (!present) p->axes[i] = (int64_t)i;
    p->steps[i] = 1;
  }
  int rank = known_rank(d, 0);
  if (rank >= 0) {
    int norm[GFX_MAX_RANK];
    GFX_TRY(parse_norm_axes(d, p->axes, p->n_axes, rank, norm));
  }
  return NULL;
}

/* An int list input (Slice's starts or ends; the shape of Reshape, Expand or ConstantOfShape): a
 * constant list, or a list computed at run time whose length the model declares (a 1-D int32/int64
 * tensor of at most GFX_MAX_RANK entries); the executor reads such a list back before the node, or
 * computes it on the host when it is shape arithmetic, and folds it in (ir_node_resolve), so its
 * entries are 0 until then and bit i of *value_inputs marks it. */
static gfx_status value_list(const ir_node_desc* d, int i, const char* what, int64_t* out, int* n,
                             unsigned char* value_inputs) {
  if (!input_present(d, i) || d->input_is_const[i]) return const_list(d, i, out, GFX_MAX_RANK, n);
  if (d->input_dtypes[i] != GFX_DTYPE_I64 && d->input_dtypes[i] != GFX_DTYPE_I32)
    return IR_UNSUPPORTED(d, "%s (input %d) is %s; int32 or int64 is expected", what, i,
                          gfx_dtype_name(d->input_dtypes[i]));
  const gfx_shape* s = &d->input_shapes[i];
  if (s->rank != 1 || s->dims[0] < 0 || s->dims[0] > GFX_MAX_RANK)
    return IR_UNSUPPORTED(d, "%s (input %d) is computed at run time and its length is not declared as 0..%d", what,
                          i, GFX_MAX_RANK);
  *n = (int)s->dims[0];
  for (int k = 0; k < *n; k++) out[k] = 0;
  *value_inputs |= (unsigned char)(1u << i);
  return NULL;
}

gfx_status ir_parse_slice(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  if (d->since_version < 10) return parse_slice_v1(d, p);
  GFX_TRY(ir_check_io(d, 3, 5, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(parse_data_io(d, p));
  int n_starts, n_ends;
  GFX_TRY(value_list(d, 1, "starts", p->starts, &n_starts, &p->value_inputs));
  GFX_TRY(value_list(d, 2, "ends", p->ends, &n_ends, &p->value_inputs));
  if (p->value_inputs && (n_starts < 1 || n_ends < 1))
    return IR_UNSUPPORTED(d, "starts or ends is computed at run time and declared empty");
  if (n_starts != n_ends) return IR_UNSUPPORTED(d, "%d starts but %d ends", n_starts, n_ends);
  p->n_axes = n_starts;
  if (input_present(d, 3)) {
    int n_axes;
    GFX_TRY(const_list(d, 3, p->axes, GFX_MAX_RANK, &n_axes));
    if (n_axes != n_starts) return IR_UNSUPPORTED(d, "%d axes for %d starts", n_axes, n_starts);
    p->has_ints = 1; /* axes given */
  } else {
    for (int i = 0; i < n_starts; i++) p->axes[i] = i;
  }
  if (input_present(d, 4)) {
    int n_steps;
    GFX_TRY(const_list(d, 4, p->steps, GFX_MAX_RANK, &n_steps));
    if (n_steps != n_starts) return IR_UNSUPPORTED(d, "%d steps for %d starts", n_steps, n_starts);
    for (int i = 0; i < n_steps; i++)
      if (p->steps[i] == 0 || p->steps[i] > MAX_STEP || p->steps[i] < -MAX_STEP)
        return IR_UNSUPPORTED(d, "step %d is %lld; nonzero steps within +-2^40 are handled", i,
                              (long long)p->steps[i]);
  } else {
    for (int i = 0; i < n_starts; i++) p->steps[i] = 1;
  }
  int rank = known_rank(d, 0);
  if (rank >= 0) {
    int norm[GFX_MAX_RANK];
    GFX_TRY(parse_norm_axes(d, p->axes, p->n_axes, rank, norm));
  }
  return NULL;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Per dim of the input: the first source coordinate, the step and the output extent, per the
 * ONNX rules: negative starts/ends count from the end, then clamp to [0, dim] for positive steps
 * and to [-1, dim - 1] (end) / [0, dim - 1] (start) for negative ones. */
static gfx_status slice_resolve(const ir_node* node, const gfx_shape* in, int64_t* start, int64_t* step,
                                gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(in, 0));
  int axes[GFX_MAX_RANK];
  GFX_TRY(norm_axes(p->axes, p->n_axes, in->rank, axes));
  *out = *in;
  for (int k = 0; k < in->rank; k++) start[k] = 0, step[k] = 1;
  for (int i = 0; i < p->n_axes; i++) {
    const int k = axes[i];
    const int64_t dim = in->dims[k], st = p->steps[i];
    int64_t b = p->starts[i], e = p->ends[i];
    if (b < 0) b = b < -dim ? -1 - dim : b + dim; /* stays far from INT64_MIN; clamped below */
    if (e < 0) e = e < -dim ? -1 - dim : e + dim;
    int64_t count;
    if (dim == 0) {
      count = 0;
    } else if (st > 0) {
      b = clamp64(b, 0, dim);
      e = clamp64(e, 0, dim);
      count = e > b ? (e - b + st - 1) / st : 0;
    } else {
      b = clamp64(b, 0, dim - 1);
      e = clamp64(e, -1, dim - 1);
      count = b > e ? (b - e + (-st) - 1) / (-st) : 0;
    }
    start[k] = count > 0 ? b : 0;
    step[k] = st;
    out->dims[k] = count;
  }
  return check_result_shape("output", out);
}

gfx_status ir_infer_slice(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  if (node->params.layout.value_inputs)
    return gfx_error(GFX_ERR_INTERNAL, "Slice: starts/ends computed at run time were not read back before its shape");
  int64_t start[GFX_MAX_RANK], step[GFX_MAX_RANK];
  return slice_resolve(node, &in[0], start, step, &out[0]);
}

/* ================================================================================================
 * Pad
 * ================================================================================================ */

/* Pad before opset 11: pads and a float value are attributes. */
static gfx_status parse_pad_v2(const ir_node_desc* d, ir_layout_params* p) {
  size_t n = 0;
  int present = 0;
  GFX_TRY(ir_attr_ints(d, "pads", p->ints, 2 * GFX_MAX_RANK, &n, &present));
  if (!present) return IR_UNSUPPORTED(d, "attribute 'pads' is missing");
  p->n_ints = (int)n;
  float value = 0.0f;
  GFX_TRY(ir_attr_float(d, "value", 0.0f, &value));
  /* the value attribute is a float; the data of these opsets is a float type */
  if (p->dtype == GFX_DTYPE_F32) {
    memcpy(p->value, &value, sizeof value);
  } else if (p->dtype == GFX_DTYPE_F16 || p->dtype == GFX_DTYPE_BF16) {
    uint16_t h = p->dtype == GFX_DTYPE_F16 ? gfx_float_to_half(value) : gfx_float_to_bf16(value);
    memcpy(p->value, &h, sizeof h);
  } else if (value != 0.0f) {
    return IR_UNSUPPORTED(d, "a non-zero float 'value' for %s data", gfx_dtype_name(p->dtype));
  }
  return NULL;
}

gfx_status ir_parse_pad(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  const int v = d->since_version;
  GFX_TRY(ir_check_io(d, v >= 11 ? 2 : 1, v >= 18 ? 4 : v >= 11 ? 3 : 1, 1));
  GFX_TRY(ir_check_known_attrs(d, v >= 11 ? (const char* const[]){"mode", NULL}
                                          : (const char* const[]){"mode", "pads", "value", NULL}));
  GFX_TRY(parse_data_io(d, p));
  char mode[16];
  GFX_TRY(ir_attr_string(d, "mode", "constant", mode, sizeof mode));
  if (strcmp(mode, "constant") == 0)
    p->mode = IR_PADMODE_CONSTANT;
  else if (strcmp(mode, "edge") == 0)
    p->mode = IR_PADMODE_EDGE;
  else if (strcmp(mode, "reflect") == 0)
    p->mode = IR_PADMODE_REFLECT;
  else if (strcmp(mode, "wrap") == 0 && v >= 19)
    p->mode = IR_PADMODE_WRAP;
  else
    return IR_UNSUPPORTED(d, "mode '%s' is not handled", mode);

  if (v >= 11)
    GFX_TRY(const_list(d, 1, p->ints, 2 * GFX_MAX_RANK, &p->n_ints));
  else
    GFX_TRY(parse_pad_v2(d, p));
  if (p->n_ints % 2) return IR_UNSUPPORTED(d, "%d pads; an even count is expected", p->n_ints);
  for (int i = 0; i < p->n_ints; i++)
    if (p->ints[i] > MAX_DIM || p->ints[i] < -MAX_DIM)
      return IR_UNSUPPORTED(d, "pad %d is %lld; pads within +-2^31 are handled", i, (long long)p->ints[i]);

  /* the constant is a tensor of the data's type: its bytes are kept as they are, so int64 is exact */
  if (input_present(d, 2)) {
    if (d->input_dtypes[2] != p->dtype)
      return IR_UNSUPPORTED(d, "constant_value is %s but the data is %s", gfx_dtype_name(d->input_dtypes[2]),
                            gfx_dtype_name(p->dtype));
    if (!d->input_is_const[2] || !d->input_const_data[2])
      return IR_UNSUPPORTED(d, "input 2 is computed at run time; gfxep needs it as a constant initializer");
    size_t es = gfx_dtype_size(p->dtype);
    if (d->input_const_bytes[2] != 0 && d->input_const_bytes[2] != es)
      return IR_UNSUPPORTED(d, "constant_value holds %zu bytes; one element is expected", d->input_const_bytes[2]);
    if (d->input_const_bytes[2] == es) memcpy(p->value, d->input_const_data[2], es);
  }

  const int rank = known_rank(d, 0);
  if (input_present(d, 3)) {
    GFX_TRY(const_list(d, 3, p->axes, GFX_MAX_RANK, &p->n_axes));
    if (2 * p->n_axes != p->n_ints) return IR_UNSUPPORTED(d, "%d pads for %d axes", p->n_ints, p->n_axes);
    if (rank >= 0) {
      int norm[GFX_MAX_RANK];
      GFX_TRY(parse_norm_axes(d, p->axes, p->n_axes, rank, norm));
    }
  } else if (rank >= 0 && p->n_ints != 2 * rank) {
    return IR_UNSUPPORTED(d, "%d pads for rank %d", p->n_ints, rank);
  }
  /* wrap pads longer than the dim repeat the input more than once (numpy's and the ONNX reference's
   * reading, which gfxep follows); ONNX Runtime's CPU EP reads them otherwise: leave those to it */
  if (p->mode == IR_PADMODE_WRAP && rank >= 0) {
    const int n = p->n_ints / 2;
    for (int i = 0; i < n; i++) {
      int64_t a = p->n_axes ? p->axes[i] : i;
      if (a < -rank || a >= rank) continue;
      const int64_t dim = d->input_shapes[0].dims[a < 0 ? a + rank : a];
      if (dim >= 0 && (p->ints[i] > dim || p->ints[n + i] > dim))
        return IR_UNSUPPORTED(d, "wrap pads %lld and %lld exceed dim %lld", (long long)p->ints[i],
                              (long long)p->ints[n + i], (long long)dim);
    }
  }
  return NULL;
}

/* Pads before and after each dim of the input. */
static gfx_status pad_resolve(const ir_node* node, const gfx_shape* in, int64_t* begin, int64_t* end,
                              gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(in, 0));
  const int rank = in->rank;
  for (int k = 0; k < rank; k++) begin[k] = end[k] = 0;
  if (p->n_axes > 0) {
    int axes[GFX_MAX_RANK];
    GFX_TRY(norm_axes(p->axes, p->n_axes, rank, axes));
    for (int i = 0; i < p->n_axes; i++) {
      begin[axes[i]] = p->ints[i];
      end[axes[i]] = p->ints[p->n_axes + i];
    }
  } else {
    if (p->n_ints != 2 * rank)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d pads for input %s of rank %d", p->n_ints, SHAPE_STR(in), rank);
    for (int k = 0; k < rank; k++) begin[k] = p->ints[k], end[k] = p->ints[rank + k];
  }
  *out = *in;
  for (int k = 0; k < rank; k++) {
    const int64_t dim = in->dims[k] + begin[k] + end[k]; /* each term within +-2^31 */
    if (dim < 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "pads %lld and %lld make dim %d of %s negative",
                       (long long)begin[k], (long long)end[k], k, SHAPE_STR(in));
    /* edge, reflect and wrap read the input to fill the padding: there must be something to read */
    if (p->mode != IR_PADMODE_CONSTANT && in->dims[k] == 0 && dim > 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "dim %d of %s is empty and cannot be padded in this mode", k,
                       SHAPE_STR(in));
    out->dims[k] = dim;
  }
  return check_result_shape("output", out);
}

gfx_status ir_infer_pad(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  int64_t begin[GFX_MAX_RANK], end[GFX_MAX_RANK];
  return pad_resolve(node, &in[0], begin, end, &out[0]);
}

/* ================================================================================================
 * Reshape, Flatten, Squeeze, Unsqueeze: new dims, the same bytes
 * ================================================================================================ */

gfx_status ir_parse_reshape(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  if (d->since_version >= 14)
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"allowzero", NULL}));
  else
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(parse_data_io(d, p));
  int64_t allowzero = 0;
  GFX_TRY(ir_attr_int(d, "allowzero", 0, &allowzero));
  if (allowzero != 0 && allowzero != 1) return IR_UNSUPPORTED(d, "allowzero is %lld", (long long)allowzero);
  p->allowzero = (int)allowzero;
  GFX_TRY(value_list(d, 1, "shape", p->ints, &p->n_ints, &p->value_inputs));
  if (p->value_inputs) return NULL; /* checked when it is read back (ir_node_resolve) */
  gfx_status s = ir_check_shape_list(GFX_OP_RESHAPE, p->ints, p->n_ints, p->allowzero);
  if (s) {
    gfx_status r = IR_UNSUPPORTED(d, "shape %s: %s", ir_shape_list_str(p->ints, p->n_ints, (char[96]){0}, 96),
                                  gfx_status_message(s));
    gfx_status_free(s);
    return r;
  }
  return NULL;
}

gfx_status ir_check_shape_list(gfx_op op, const int64_t* v, int n, int allowzero) {
  const int64_t lowest = op == GFX_OP_RESHAPE ? -1 : 0;
  int minus_ones = 0, zeros = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] < lowest || v[i] > MAX_DIM)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "entry %d is %lld, outside %lld..2^31", i, (long long)v[i],
                       (long long)lowest);
    minus_ones += v[i] == -1;
    zeros += v[i] == 0;
  }
  if (minus_ones > 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d entries are -1; at most one is allowed", minus_ones);
  if (allowzero && zeros && minus_ones)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "it holds both 0 and -1, which allowzero forbids");
  return NULL;
}

const char* ir_shape_list_str(const int64_t* v, int n, char* buf, size_t cap) {
  size_t used = 0;
  used += (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, i ? ",%lld" : "%lld", (long long)v[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}

/* A Reshape, Expand or ConstantOfShape whose shape is computed at run time has it folded in by
 * ir_node_resolve before its shapes are inferred. */
static gfx_status shape_resolved(const ir_node* node) {
  if (node->params.layout.value_inputs)
    return gfx_error(GFX_ERR_INTERNAL, "%s '%s': its shape is computed at run time and was not read back before "
                     "its output shape", ir_op_name(node->op), node->name);
  return NULL;
}

gfx_status ir_infer_reshape(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(shape_resolved(node));
  GFX_TRY(check_input_shape(&in[0], 0));
  gfx_shape r = {.rank = p->n_ints};
  int unknown = -1;
  int64_t known = 1; /* product of the dims other than -1 */
  for (int i = 0; i < p->n_ints; i++) {
    int64_t v = p->ints[i];
    if (v == 0 && !p->allowzero) {
      if (i >= in[0].rank)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "shape entry %d is 0 but input %s has no dim %d", i,
                         SHAPE_STR(&in[0]), i);
      v = in[0].dims[i];
    }
    if (v == -1) {
      unknown = i;
      continue;
    }
    r.dims[i] = v;
    /* bounded: past 2^40 the count is wrong anyway and the check below fails */
    if (v == 0)
      known = 0;
    else if (known > MAX_ELEMS / v)
      known = MAX_ELEMS + 1;
    else
      known *= v;
  }
  const int64_t total = gfx_shape_numel(&in[0]);
  if (unknown >= 0) {
    if (known == 0 || total % known)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %s cannot be reshaped: the -1 dim cannot be inferred",
                       SHAPE_STR(&in[0]));
    r.dims[unknown] = total / known;
    known = total;
  }
  if (known != total)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %s has %lld elements, the new shape %lld", SHAPE_STR(&in[0]),
                     (long long)total, (long long)known);
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

gfx_status ir_parse_flatten(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", NULL}));
  GFX_TRY(parse_data_io(d, p));
  GFX_TRY(ir_attr_int(d, "axis", 1, &p->axis));
  int rank = known_rank(d, 0);
  /* Flatten's axis may equal the rank */
  if (rank >= 0 && (p->axis < -rank || p->axis > rank))
    return IR_UNSUPPORTED(d, "axis %lld is outside [-%d, %d]", (long long)p->axis, rank, rank);
  return NULL;
}

gfx_status ir_infer_flatten(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  GFX_TRY(check_input_shape(&in[0], 0));
  const int rank = in[0].rank;
  int64_t axis = node->params.layout.axis;
  if (axis < -rank || axis > rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d]", (long long)axis, rank, rank);
  if (axis < 0) axis += rank;
  gfx_shape r = {.rank = 2, .dims = {1, 1}};
  for (int k = 0; k < rank; k++) r.dims[k < axis ? 0 : 1] *= in[0].dims[k]; /* the total is below 2^40 */
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

/* Squeeze and Unsqueeze: axes from the attribute (opsets < 13) or constant input 1. */
static gfx_status parse_axes_list(const ir_node_desc* d, ir_layout_params* p, int required) {
  const int v = d->since_version;
  GFX_TRY(ir_check_io(d, 1, v >= 13 ? 2 : 1, 1));
  if (v >= 13)
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  else
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axes", NULL}));
  GFX_TRY(parse_data_io(d, p));
  if (v >= 13) {
    if (input_present(d, 1)) {
      GFX_TRY(const_list(d, 1, p->ints, GFX_MAX_RANK, &p->n_ints));
      p->has_ints = 1;
    }
  } else {
    size_t n = 0;
    GFX_TRY(ir_attr_ints(d, "axes", p->ints, GFX_MAX_RANK, &n, &p->has_ints));
    p->n_ints = (int)n;
  }
  if (required && !p->has_ints) return IR_UNSUPPORTED(d, "axes are required");
  return NULL;
}

gfx_status ir_parse_squeeze(const ir_node_desc* d, ir_params* params) {
  return parse_axes_list(d, &params->layout, 0);
}

gfx_status ir_parse_unsqueeze(const ir_node_desc* d, ir_params* params) {
  GFX_TRY(parse_axes_list(d, &params->layout, 1));
  if (params->layout.n_ints == 0) return IR_UNSUPPORTED(d, "the axes list is empty");
  return NULL;
}

gfx_status ir_infer_squeeze(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(&in[0], 0));
  int drop[GFX_MAX_RANK] = {0};
  if (p->has_ints) {
    int axes[GFX_MAX_RANK];
    GFX_TRY(norm_axes(p->ints, p->n_ints, in[0].rank, axes));
    for (int i = 0; i < p->n_ints; i++) {
      if (in[0].dims[axes[i]] != 1)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "dim %d of %s is not 1 and cannot be squeezed", axes[i],
                         SHAPE_STR(&in[0]));
      drop[axes[i]] = 1;
    }
  } else {
    for (int k = 0; k < in[0].rank; k++) drop[k] = in[0].dims[k] == 1;
  }
  gfx_shape r = {.rank = 0};
  for (int k = 0; k < in[0].rank; k++)
    if (!drop[k]) r.dims[r.rank++] = in[0].dims[k];
  out[0] = r;
  return NULL;
}

gfx_status ir_infer_unsqueeze(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(&in[0], 0));
  const int rank = in[0].rank + p->n_ints;
  if (rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output would have rank %d; at most %d is handled", rank,
                     GFX_MAX_RANK);
  int axes[GFX_MAX_RANK], added[GFX_MAX_RANK] = {0};
  GFX_TRY(norm_axes(p->ints, p->n_ints, rank, axes));
  for (int i = 0; i < p->n_ints; i++) added[axes[i]] = 1;
  gfx_shape r = {.rank = rank};
  for (int k = 0, j = 0; k < rank; k++) r.dims[k] = added[k] ? 1 : in[0].dims[j++];
  out[0] = r;
  return NULL;
}

/* ================================================================================================
 * Transpose, Tile, Expand
 * ================================================================================================ */

gfx_status ir_parse_transpose(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"perm", NULL}));
  GFX_TRY(parse_data_io(d, p));
  size_t n = 0;
  GFX_TRY(ir_attr_ints(d, "perm", p->ints, GFX_MAX_RANK, &n, &p->has_ints));
  p->n_ints = (int)n;
  if (p->has_ints) {
    int seen[GFX_MAX_RANK] = {0};
    for (int i = 0; i < p->n_ints; i++) {
      if (p->ints[i] < 0 || p->ints[i] >= p->n_ints || seen[p->ints[i]]++)
        return IR_UNSUPPORTED(d, "perm is not a permutation of 0..%d", p->n_ints - 1);
    }
    int rank = known_rank(d, 0);
    if (rank >= 0 && rank != p->n_ints) return IR_UNSUPPORTED(d, "perm has %d entries for rank %d", p->n_ints, rank);
  }
  return NULL;
}

/* Output dim k is input dim perm[k]; the default reverses the dims. */
static gfx_status transpose_perm(const ir_node* node, const gfx_shape* in, int* perm) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(in, 0));
  if (!p->has_ints) {
    for (int k = 0; k < in->rank; k++) perm[k] = in->rank - 1 - k;
    return NULL;
  }
  if (p->n_ints != in->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "perm has %d entries for input %s", p->n_ints, SHAPE_STR(in));
  for (int k = 0; k < in->rank; k++) perm[k] = (int)p->ints[k];
  return NULL;
}

gfx_status ir_infer_transpose(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  int perm[GFX_MAX_RANK];
  GFX_TRY(transpose_perm(node, &in[0], perm));
  out[0].rank = in[0].rank;
  for (int k = 0; k < in[0].rank; k++) out[0].dims[k] = in[0].dims[perm[k]];
  return NULL;
}

gfx_status ir_parse_tile(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(parse_data_io(d, p));
  GFX_TRY(const_list(d, 1, p->ints, GFX_MAX_RANK, &p->n_ints));
  for (int i = 0; i < p->n_ints; i++)
    if (p->ints[i] < 0 || p->ints[i] > MAX_DIM) return IR_UNSUPPORTED(d, "repeat %d is %lld", i, (long long)p->ints[i]);
  int rank = known_rank(d, 0);
  if (rank >= 0 && rank != p->n_ints) return IR_UNSUPPORTED(d, "%d repeats for rank %d", p->n_ints, rank);
  return NULL;
}

gfx_status ir_infer_tile(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(check_input_shape(&in[0], 0));
  if (p->n_ints != in[0].rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d repeats for input %s", p->n_ints, SHAPE_STR(&in[0]));
  gfx_shape r = in[0];
  for (int k = 0; k < r.rank; k++) r.dims[k] *= p->ints[k]; /* both below 2^31 */
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

gfx_status ir_parse_expand(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(parse_data_io(d, p));
  GFX_TRY(value_list(d, 1, "shape", p->ints, &p->n_ints, &p->value_inputs));
  for (int i = 0; i < p->n_ints; i++)
    if (p->ints[i] < 0 || p->ints[i] > MAX_DIM)
      return IR_UNSUPPORTED(d, "shape entry %d is %lld", i, (long long)p->ints[i]);
  return NULL;
}

gfx_status ir_infer_expand(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(shape_resolved(node));
  GFX_TRY(check_input_shape(&in[0], 0));
  gfx_shape target = {.rank = p->n_ints};
  for (int i = 0; i < p->n_ints; i++) target.dims[i] = p->ints[i];
  GFX_TRY(ir_broadcast_shapes(&in[0], &target, &out[0]));
  return check_result_shape("output", &out[0]);
}

/* ================================================================================================
 * Gather
 * ================================================================================================ */

/* Run-time indices are checked by the reference kernel, which reports an index outside
 * [-dim, dim) as an error. The CUDA kernel cannot report: it writes zeros for such an index (ONNX
 * leaves the result of invalid indices undefined; ONNX Runtime's CPU EP fails the run). Constant
 * indices are checked here whenever the data's extent along the axis is known at parse time. */
gfx_status ir_parse_gather(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"axis", NULL}));
  GFX_TRY(parse_data_io(d, p));
  GFX_TRY(ir_check_input_type(d, 1, IR_TYPES_INDEX));
  GFX_TRY(ir_attr_int(d, "axis", 0, &p->axis));
  const int rank = known_rank(d, 0);
  GFX_TRY(parse_check_axis(d, p->axis, rank));
  if (rank < 0 || !d->input_is_const[1] || !d->input_const_data[1]) return NULL;
  const int64_t dim = d->input_shapes[0].dims[p->axis < 0 ? p->axis + rank : p->axis];
  if (dim < 0) return NULL;
  const int t = d->input_dtypes[1];
  const size_t es = t == GFX_DTYPE_I64 ? 8 : 4;
  const size_t n = d->input_const_bytes[1] / es;
  for (size_t i = 0; i < n; i++) {
    int64_t v;
    if (es == 8) {
      memcpy(&v, (const char*)d->input_const_data[1] + 8 * i, 8);
    } else {
      int32_t w;
      memcpy(&w, (const char*)d->input_const_data[1] + 4 * i, 4);
      v = w;
    }
    if (v < -dim || v >= dim)
      return IR_UNSUPPORTED(d, "index %zu is %lld, outside [-%lld, %lld)", i, (long long)v, (long long)dim,
                            (long long)dim);
  }
  return NULL;
}

gfx_status ir_gather_geometry(const ir_node* node, const gfx_shape* data, const gfx_shape* indices,
                              ir_gather_geom* g) {
  GFX_TRY(check_input_shape(data, 0));
  GFX_TRY(check_input_shape(indices, 1));
  if (data->rank < 1) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the data is a scalar; Gather needs rank >= 1");
  int axis = 0;
  GFX_TRY(norm_axis("axis", node->params.layout.axis, data->rank, &axis));
  g->outer = g->inner = 1;
  for (int k = 0; k < axis; k++) g->outer *= data->dims[k];
  for (int k = axis + 1; k < data->rank; k++) g->inner *= data->dims[k];
  g->axis_dim = data->dims[axis];
  g->n_indices = gfx_shape_numel(indices);
  return NULL;
}

gfx_status ir_infer_gather(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_gather_geom g;
  GFX_TRY(ir_gather_geometry(node, &in[0], &in[1], &g));
  int axis = 0;
  GFX_TRY(norm_axis("axis", node->params.layout.axis, in[0].rank, &axis));
  const int rank = in[0].rank - 1 + in[1].rank;
  if (rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "output would have rank %d; at most %d is handled", rank,
                     GFX_MAX_RANK);
  gfx_shape r = {.rank = rank};
  int j = 0;
  for (int k = 0; k < axis; k++) r.dims[j++] = in[0].dims[k];
  for (int k = 0; k < in[1].rank; k++) r.dims[j++] = in[1].dims[k];
  for (int k = axis + 1; k < in[0].rank; k++) r.dims[j++] = in[0].dims[k];
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

/* ================================================================================================
 * Shape, ConstantOfShape
 * ================================================================================================ */

gfx_status ir_parse_shape(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  if (d->since_version >= 15)
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"start", "end", NULL}));
  else
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(ir_check_input_type(d, 0, TYPES_ALL));
  if (d->output_dtypes[0] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "output 0 is %s; Shape gives int64", gfx_dtype_name(d->output_dtypes[0]));
  p->dtype = GFX_DTYPE_I64;
  GFX_TRY(ir_attr_int(d, "start", 0, &p->starts[0]));
  GFX_TRY(ir_attr_int(d, "end", INT64_MAX, &p->ends[0]));
  return NULL;
}

void ir_shape_values(const ir_node* node, const gfx_shape* in, int64_t* values, int* n) {
  const int64_t rank = in->rank;
  int64_t b = node->params.layout.starts[0], e = node->params.layout.ends[0];
  if (b < 0) b = b < -rank ? 0 : b + rank;
  if (e < 0) e = e < -rank ? 0 : e + rank;
  b = clamp64(b, 0, rank);
  e = clamp64(e, 0, rank);
  *n = e > b ? (int)(e - b) : 0;
  for (int i = 0; i < *n; i++) values[i] = in->dims[b + i];
}

gfx_status ir_infer_shape(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  GFX_TRY(check_input_shape(&in[0], 0));
  int64_t values[GFX_MAX_RANK];
  int n;
  ir_shape_values(node, &in[0], values, &n);
  out[0] = (gfx_shape){.rank = 1, .dims = {n}};
  return NULL;
}

/* ConstantOfShape: the value attribute (a one-element tensor of any type gfxep moves; float32 0
 * when absent) repeated over a shape that is constant or computed at run time. */
gfx_status ir_parse_constant_of_shape(const ir_node_desc* d, ir_params* params) {
  ir_layout_params* p = &params->layout;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"value", NULL}));
  int dtype = GFX_DTYPE_F32, present = 0;
  GFX_TRY(ir_attr_scalar_tensor(d, "value", &dtype, p->value, &present));
  if (!(IR_TYPE_BIT(dtype) & TYPES_ALL))
    return IR_UNSUPPORTED(d, "value is a tensor of %s", gfx_dtype_name(dtype));
  const int out = d->output_dtypes[0];
  if (dtype == GFX_DTYPE_F32 && (out == GFX_DTYPE_F16 || out == GFX_DTYPE_BF16)) {
    /* a partition lowered to float16 or bfloat16 (precision=fp16, bf16): the value follows */
    float f;
    memcpy(&f, p->value, sizeof f);
    const uint16_t h = out == GFX_DTYPE_F16 ? gfx_float_to_half(f) : gfx_float_to_bf16(f);
    memset(p->value, 0, sizeof p->value);
    memcpy(p->value, &h, sizeof h);
    dtype = out;
  }
  if (out != dtype)
    return IR_UNSUPPORTED(d, "output 0 is %s but value is %s", gfx_dtype_name(d->output_dtypes[0]),
                          gfx_dtype_name(dtype));
  p->dtype = dtype;
  if (input_present(d, 0) && !d->input_is_const[0]) GFX_TRY(ir_check_input_type(d, 0, IR_TYPES_INDEX));
  GFX_TRY(value_list(d, 0, "shape", p->ints, &p->n_ints, &p->value_inputs));
  for (int i = 0; i < p->n_ints; i++)
    if (p->ints[i] < 0 || p->ints[i] > MAX_DIM)
      return IR_UNSUPPORTED(d, "shape entry %d is %lld", i, (long long)p->ints[i]);
  return NULL;
}

gfx_status ir_infer_constant_of_shape(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)in;
  const ir_layout_params* p = &node->params.layout;
  GFX_TRY(shape_resolved(node));
  gfx_shape r = {.rank = p->n_ints};
  for (int i = 0; i < p->n_ints; i++) r.dims[i] = p->ints[i];
  GFX_TRY(check_result_shape("output", &r));
  out[0] = r;
  return NULL;
}

/* ================================================================================================
 * strided copy plans
 * ================================================================================================ */

ir_layout_kind ir_layout_kind_of(gfx_op op) {
  switch (op) {
    case GFX_OP_RESHAPE:
    case GFX_OP_FLATTEN:
    case GFX_OP_SQUEEZE:
    case GFX_OP_UNSQUEEZE: return IR_LAYOUT_COPY;
    case GFX_OP_GATHER: return IR_LAYOUT_GATHER;
    case GFX_OP_SHAPE: return IR_LAYOUT_SHAPE;
    case GFX_OP_CONSTANT_OF_SHAPE: return IR_LAYOUT_FILL;
    default: return IR_LAYOUT_PLANS;
  }
}

gfx_status ir_layout_infer(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  switch (node->op) {
    case GFX_OP_CONCAT: return ir_infer_concat(node, in, out);
    case GFX_OP_SPLIT: return ir_infer_split(node, in, out);
    case GFX_OP_SLICE: return ir_infer_slice(node, in, out);
    case GFX_OP_PAD: return ir_infer_pad(node, in, out);
    case GFX_OP_RESHAPE: return ir_infer_reshape(node, in, out);
    case GFX_OP_FLATTEN: return ir_infer_flatten(node, in, out);
    case GFX_OP_TRANSPOSE: return ir_infer_transpose(node, in, out);
    case GFX_OP_SQUEEZE: return ir_infer_squeeze(node, in, out);
    case GFX_OP_UNSQUEEZE: return ir_infer_unsqueeze(node, in, out);
    case GFX_OP_TILE: return ir_infer_tile(node, in, out);
    case GFX_OP_EXPAND: return ir_infer_expand(node, in, out);
    case GFX_OP_GATHER: return ir_infer_gather(node, in, out);
    case GFX_OP_SHAPE: return ir_infer_shape(node, in, out);
    case GFX_OP_CONSTANT_OF_SHAPE: return ir_infer_constant_of_shape(node, in, out);
    default: return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s is no layout op", ir_op_name(node->op));
  }
}

int ir_layout_plan_count(const ir_node* node) {
  if (node->op == GFX_OP_CONCAT) return node->n_inputs;
  if (node->op == GFX_OP_SPLIT) return node->n_outputs;
  return 1;
}

/* The identity plan: `box` written contiguously from the start of a destination, read from a
 * contiguous source of the same shape. Callers then change what differs. */
static void plan_identity(ir_copy_plan* plan, const gfx_shape* box, int elem_size) {
  memset(plan, 0, sizeof *plan);
  plan->rank = box->rank;
  plan->elem_size = elem_size;
  plan->mode = IR_PADMODE_CONSTANT;
  plan->count = gfx_shape_numel(box);
  contiguous_strides(box, plan->dst_strides);
  contiguous_strides(box, plan->src_strides);
  for (int k = 0; k < box->rank; k++) {
    plan->dims[k] = box->dims[k];
    plan->src_extent[k] = box->dims[k];
    plan->src_step[k] = 1;
  }
}

static gfx_status expect_shape(const char* what, const gfx_shape* got, const gfx_shape* want) {
  if (gfx_shape_equal(got, want)) return NULL;
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has shape %s; expected %s", what, SHAPE_STR(got), SHAPE_STR(want));
}

gfx_status ir_layout_plan(const ir_node* node, const gfx_shape* in, const gfx_shape* out, int index,
                          ir_copy_plan* plan) {
  const ir_layout_params* p = &node->params.layout;
  const int es = (int)gfx_dtype_size(p->dtype);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "element type %s has no size", gfx_dtype_name(p->dtype));
  if (index < 0 || index >= ir_layout_plan_count(node))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "plan %d of %d", index, ir_layout_plan_count(node));
  if (ir_layout_kind_of(node->op) != IR_LAYOUT_PLANS)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s runs no copy plan", ir_op_name(node->op));
  /* the output shapes handed in must be what the node computes: everything below trusts them */
  gfx_shape want[IR_MAX_IO];
  GFX_TRY(ir_layout_infer(node, in, want));
  for (int o = 0; o < node->n_outputs; o++) {
    char what[32];
    snprintf(what, sizeof what, "output %d", o);
    GFX_TRY(expect_shape(what, &out[o], &want[o]));
  }

  int64_t in_strides[GFX_MAX_RANK];
  contiguous_strides(&in[0], in_strides);
  switch (node->op) {
    case GFX_OP_CONCAT: {
      int axis = 0;
      GFX_TRY(norm_axis("axis", p->axis, out[0].rank, &axis));
      plan_identity(plan, &in[index], es);
      contiguous_strides(&out[0], plan->dst_strides);
      int64_t offset = 0;
      for (int i = 0; i < index; i++) offset += in[i].dims[axis];
      plan->dst_offset = offset * plan->dst_strides[axis];
      return NULL;
    }
    case GFX_OP_SPLIT: {
      int axis = 0;
      int64_t sizes[IR_MAX_IO], start = 0;
      GFX_TRY(split_sizes(node, &in[0], &axis, sizes));
      for (int i = 0; i < index; i++) start += sizes[i];
      const int map_rank = p->split_map_rank[index];
      if (!map_rank) {
        plan_identity(plan, &out[index], es);
        for (int k = 0; k < in[0].rank; k++) {
          plan->src_strides[k] = in_strides[k];
          plan->src_extent[k] = in[0].dims[k];
        }
        plan->src_start[axis] = start;
        return NULL;
      }
      /* the box: first the piece dims the map leaves out (each 1, destination stride 0: they only
       * place the read, e.g. at the piece's start along a squeezed split axis), then the output's dims
       * in the map's order, so the last box dim is the output's contiguous one */
      plan_identity(plan, &out[index], es);
      int used[GFX_MAX_RANK] = {0};
      for (int k = 0; k < map_rank; k++) used[(int)p->split_map[index][k]] = 1;
      int lead = 0;
      for (int d = 0; d < in[0].rank; d++) lead += !used[d];
      if (lead + map_rank > GFX_MAX_RANK || lead + map_rank != in[0].rank)
        return gfx_error(GFX_ERR_INVALID_ARGUMENT, "Split output %d: dim map of rank %d for input %s", index, map_rank,
                         SHAPE_STR(&in[0]));
      int64_t out_strides[GFX_MAX_RANK];
      contiguous_strides(&out[index], out_strides);
      plan->rank = in[0].rank;
      int b = 0;
      for (int d = 0; d < in[0].rank; d++) {
        if (used[d]) continue;
        plan->dims[b] = 1;
        plan->dst_strides[b] = 0;
        plan->src_strides[b] = in_strides[d];
        plan->src_extent[b] = in[0].dims[d];
        plan->src_start[b] = d == axis ? start : 0;
        plan->src_step[b] = 1;
        b++;
      }
      for (int k = 0; k < map_rank; k++, b++) {
        const int d = p->split_map[index][k];
        plan->dims[b] = out[index].dims[k];
        plan->dst_strides[b] = out_strides[k];
        plan->src_strides[b] = in_strides[d];
        plan->src_extent[b] = in[0].dims[d];
        plan->src_start[b] = d == axis ? start : 0;
        plan->src_step[b] = 1;
      }
      return NULL;
    }
    case GFX_OP_SLICE: {
      int64_t start[GFX_MAX_RANK], step[GFX_MAX_RANK];
      gfx_shape r;
      GFX_TRY(slice_resolve(node, &in[0], start, step, &r));
      plan_identity(plan, &out[0], es);
      for (int k = 0; k < in[0].rank; k++) {
        plan->src_strides[k] = in_strides[k];
        plan->src_extent[k] = in[0].dims[k];
        plan->src_start[k] = start[k];
        plan->src_step[k] = step[k];
      }
      return NULL;
    }
    case GFX_OP_PAD: {
      int64_t begin[GFX_MAX_RANK], end[GFX_MAX_RANK];
      gfx_shape r;
      GFX_TRY(pad_resolve(node, &in[0], begin, end, &r));
      plan_identity(plan, &out[0], es);
      plan->mode = p->mode;
      memcpy(plan->value, p->value, sizeof plan->value);
      for (int k = 0; k < in[0].rank; k++) {
        plan->src_strides[k] = in_strides[k];
        plan->src_extent[k] = in[0].dims[k];
        plan->src_start[k] = -begin[k];
      }
      return NULL;
    }
    case GFX_OP_TRANSPOSE: {
      int perm[GFX_MAX_RANK];
      GFX_TRY(transpose_perm(node, &in[0], perm));
      plan_identity(plan, &out[0], es);
      for (int k = 0; k < out[0].rank; k++) {
        plan->src_strides[k] = in_strides[perm[k]];
        plan->src_extent[k] = in[0].dims[perm[k]];
      }
      return NULL;
    }
    case GFX_OP_TILE: {
      /* output coordinate c reads input coordinate c mod dim: the wrap mode does exactly that */
      plan_identity(plan, &out[0], es);
      plan->mode = IR_PADMODE_WRAP;
      for (int k = 0; k < in[0].rank; k++) {
        plan->src_strides[k] = in_strides[k];
        plan->src_extent[k] = in[0].dims[k];
      }
      return NULL;
    }
    case GFX_OP_EXPAND: {
      /* dims the input lacks (numpy aligns on the last dims) or has as 1 are read with step 0 */
      plan_identity(plan, &out[0], es);
      const int lead = out[0].rank - in[0].rank;
      for (int k = 0; k < out[0].rank; k++) {
        const int ik = k - lead;
        const int broadcast = ik < 0 || in[0].dims[ik] == 1;
        plan->src_strides[k] = broadcast ? 0 : in_strides[ik];
        plan->src_extent[k] = broadcast ? 1 : in[0].dims[ik];
        plan->src_step[k] = broadcast ? 0 : 1;
      }
      return NULL;
    }
    default: return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s runs no copy plan", ir_op_name(node->op));
  }
}

int64_t ir_copy_plan_source(const ir_copy_plan* plan, int64_t linear, int64_t* dst) {
  int64_t src = plan->src_offset, d = plan->dst_offset;
  int outside = 0;
  for (int k = plan->rank - 1; k >= 0; k--) {
    const int64_t i = linear % plan->dims[k];
    linear /= plan->dims[k];
    d += i * plan->dst_strides[k];
    const int64_t c = ir_resolve_coord(plan->src_start[k] + i * plan->src_step[k], plan->src_extent[k], plan->mode);
    if (c < 0)
      outside = 1;
    else
      src += c * plan->src_strides[k];
  }
  *dst = d;
  return outside ? -1 : src;
}

/* Whether plan dim k reads only inside the source: every coordinate start + i * step in [0, extent). */
static int dim_in_range(const ir_copy_plan* p, int k) {
  const int64_t first = p->src_start[k], last = first + (p->dims[k] - 1) * p->src_step[k];
  return first >= 0 && first < p->src_extent[k] && last >= 0 && last < p->src_extent[k];
}

static void remove_dim(ir_copy_plan* p, int k) {
  for (int j = k; j + 1 < p->rank; j++) {
    p->dims[j] = p->dims[j + 1];
    p->dst_strides[j] = p->dst_strides[j + 1];
    p->src_extent[j] = p->src_extent[j + 1];
    p->src_start[j] = p->src_start[j + 1];
    p->src_step[j] = p->src_step[j + 1];
    p->src_strides[j] = p->src_strides[j + 1];
  }
  p->rank--;
}

/* Whether every offset and stride of the plan but the last dim's is a multiple of f. */
static int divisible(const ir_copy_plan* p, int64_t f) {
  if (p->dst_offset % f || p->src_offset % f) return 0;
  for (int k = 0; k + 1 < p->rank; k++)
    if (p->dst_strides[k] % f || p->src_strides[k] % f) return 0;
  return 1;
}

void ir_copy_plan_simplify(const ir_copy_plan* in, int max_elem_size, ir_copy_plan* out) {
  *out = *in;
  ir_copy_plan* p = out;
  if (p->count <= 0) return;
  /* dims that never leave the source: start and step into the offset and the stride */
  int may_write_constant = 0;
  for (int k = 0; k < p->rank; k++) {
    if (!dim_in_range(p, k)) {
      may_write_constant |= p->mode == IR_PADMODE_CONSTANT;
      continue;
    }
    p->src_offset += p->src_start[k] * p->src_strides[k];
    p->src_strides[k] *= p->src_step[k];
    p->src_start[k] = 0;
    p->src_step[k] = 1;
    p->src_extent[k] = p->dims[k];
  }
  /* size-1 dims that stay inside read one place (now in src_offset): dropped */
  for (int k = p->rank - 1; k >= 0; k--)
    if (p->dims[k] == 1 && dim_in_range(p, k)) remove_dim(p, k);
  /* an outer dim contiguous with the inner one next to it in both tensors: one dim */
  for (int k = p->rank - 2; k >= 0; k--) {
    if (!dim_in_range(p, k) || !dim_in_range(p, k + 1)) continue;
    if (p->dst_strides[k] != p->dims[k + 1] * p->dst_strides[k + 1] ||
        p->src_strides[k] != p->dims[k + 1] * p->src_strides[k + 1])
      continue;
    p->dims[k + 1] *= p->dims[k];
    p->src_extent[k + 1] = p->dims[k + 1];
    remove_dim(p, k);
  }
  /* a contiguous last dim inside the source: elements grouped into wider ones */
  const int r = p->rank - 1;
  if (r < 0 || !dim_in_range(p, r) || p->dst_strides[r] != 1 || p->src_strides[r] != 1) return;
  const int cap = may_write_constant && max_elem_size > 8 ? 8 : max_elem_size;
  int64_t f = cap / p->elem_size;
  while (f > 1 && (p->dims[r] % f || !divisible(p, f))) f /= 2;
  if (f <= 1) return;
  const int es = p->elem_size;
  unsigned char value[8];
  memcpy(value, p->value, sizeof value);
  for (int64_t i = 0; i < f && (i + 1) * es <= (int64_t)sizeof value; i++) memcpy(p->value + i * es, value, (size_t)es);
  p->elem_size = (int)(es * f);
  p->dims[r] /= f;
  p->src_extent[r] = p->dims[r];
  p->dst_offset /= f;
  p->src_offset /= f;
  for (int k = 0; k < r; k++) {
    p->dst_strides[k] /= f;
    p->src_strides[k] /= f;
  }
  p->count /= f;
}

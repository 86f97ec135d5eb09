/* gfxep — parse and shape functions of the logic ops (Not, And, Or, Xor), Mod, and of the scans,
 * generators and index ops that follow them in the op table (see ir/ops.def). */
#include <math.h>
#include <string.h>

#include "ir/ops_common.h"
#include "ir/ops_index.h"
#include "ir/shape.h"

static const char* const no_attrs[] = {NULL};

#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* ---- Not, And, Or, Xor ---- */

/* bool operands and a bool result; And/Or/Xor broadcast (opset 7 on), Not has one operand. */
gfx_status ir_parse_logic(const ir_node_desc* d, ir_params* p) {
  (void)p;
  const int unary = ir_op_from_name(d->op_type) == GFX_OP_NOT;
  GFX_TRY(ir_check_io(d, unary ? 1 : 2, unary ? 1 : 2, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  return ir_check_same_type(d, 0, d->n_inputs - 1, IR_TYPE_BIT(GFX_DTYPE_BOOL), NULL);
}

/* ---- Mod ---- */

/* Two operands of one type. fmod=0 is the integer remainder with the divisor's sign; ONNX forbids
 * it for floats (ONNX Runtime fails such a node), so a float Mod is taken only with fmod=1. The
 * integer types gfxep computes are int32 and int64; the other integer widths stay with ORT. */
gfx_status ir_parse_mod(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"fmod", NULL}));
  int64_t fmod = 0;
  GFX_TRY(ir_attr_int(d, "fmod", 0, &fmod));
  if (fmod != 0 && fmod != 1) return IR_UNSUPPORTED(d, "fmod = %lld; 0 or 1 is expected", (long long)fmod);
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT | IR_TYPES_INDEX, &dtype));
  if (fmod == 0 && !(IR_TYPES_INDEX & IR_TYPE_BIT(dtype)))
    return IR_UNSUPPORTED(d, "fmod = 0 with %s operands; ONNX defines it for integers only", gfx_dtype_name(dtype));
  memset(&p->index, 0, sizeof p->index);
  p->index.fmod = (int8_t)fmod;
  return NULL;
}

/* ---- shapes the geometry helpers accept ---- */

/* A concrete shape whose dims, each counted as at least 1, multiply without overflow: then every
 * product of some of its dims (strides, line counts, offsets) fits in int64. */
static gfx_status check_extent(const char* what, const gfx_shape* s) {
  if (s->rank < 0 || s->rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s has rank %d; 0..%d are handled", what, s->rank, GFX_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    const int64_t d = s->dims[i], e = d > 1 ? d : 1;
    if (d < 0 || n > INT64_MAX / e)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %s is no concrete shape of a size gfxep handles", what,
                       SHAPE_STR(s));
    n *= e;
  }
  return NULL;
}

/* ---- CumSum ---- */

/* axis: a constant input of one int32/int64 value (0-D or [1]); a computed axis is left to ORT.
 * exclusive and reverse attributes; float types (float16/bfloat16 from opset 14, which the type
 * check of the model enforces) and int32/int64. */
gfx_status ir_parse_cumsum(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"exclusive", "reverse", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT | IR_TYPES_INDEX, NULL));
  if (!d->input_is_const[1]) return IR_UNSUPPORTED(d, "the axis (input 1) is computed at run time");
  int64_t axis[2];
  size_t n = 0;
  GFX_TRY(ir_const_ints(d, 1, axis, 2, &n));
  if (n != 1) return IR_UNSUPPORTED(d, "the axis input holds %zu values; one is expected", n);
  const int rank = d->input_shapes[0].rank;
  int unused;
  if (rank >= 0) GFX_TRY(ir_norm_axis(d, axis[0], rank, &unused));
  int64_t exclusive = 0, reverse = 0;
  GFX_TRY(ir_attr_int(d, "exclusive", 0, &exclusive));
  GFX_TRY(ir_attr_int(d, "reverse", 0, &reverse));
  if ((exclusive != 0 && exclusive != 1) || (reverse != 0 && reverse != 1))
    return IR_UNSUPPORTED(d, "exclusive = %lld, reverse = %lld; 0 or 1 is expected", (long long)exclusive,
                          (long long)reverse);
  memset(&p->index, 0, sizeof p->index);
  p->index.axis = axis[0];
  p->index.exclusive = (int8_t)exclusive;
  p->index.reverse = (int8_t)reverse;
  return NULL;
}

gfx_status ir_axis_geometry(const gfx_shape* s, int64_t axis, ir_axis_geom* g) {
  GFX_TRY(check_extent("the input", s));
  if (s->rank < 1 || axis < -s->rank || axis >= s->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d) of %s", (long long)axis, s->rank,
                     s->rank, SHAPE_STR(s));
  const int a = (int)(axis < 0 ? axis + s->rank : axis);
  g->outer = g->inner = 1;
  for (int i = 0; i < a; i++) g->outer *= s->dims[i];
  for (int i = a + 1; i < s->rank; i++) g->inner *= s->dims[i];
  g->len = s->dims[a];
  return NULL;
}

/* The output has x's shape; the axis must lie within its rank. */
gfx_status ir_infer_cumsum(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_axis_geom g;
  GFX_TRY(ir_axis_geometry(&in[0], node->params.index.axis, &g));
  out[0] = in[0];
  return NULL;
}

/* ---- Range ---- */

/* Range's element count is its output shape, which shape inference (which sees shapes, never
 * values) cannot compute from run-time inputs: gfxep takes a Range whose start, limit and delta are
 * all constants, and counts its elements here as ONNX Runtime does: ceil((limit - start) / delta)
 * in double after the subtraction in the element type, at least 0. float32, int32 and int64
 * (float64 and int16 stay with ORT). */
#define RANGE_COUNT_LIMIT ((int64_t)1 << 31)

static gfx_status range_scalar(const ir_node_desc* d, int i, int dtype, double* f, int64_t* v) {
  if (!d->input_is_const[i])
    return IR_UNSUPPORTED(d, "input %d is computed at run time; the output shape would depend on it", i);
  size_t n = 0;
  if (dtype == GFX_DTYPE_F32) {
    float x;
    GFX_TRY(ir_const_floats(d, i, &x, 1, &n));
    *f = x;
    *v = 0;
  } else {
    GFX_TRY(ir_const_ints(d, i, v, 1, &n));
    *f = (double)*v;
  }
  if (n != 1) return IR_UNSUPPORTED(d, "input %d holds %zu values; a scalar is expected", i, n);
  return NULL;
}

gfx_status ir_parse_range(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 2, IR_TYPE_BIT(GFX_DTYPE_F32) | IR_TYPES_INDEX, &dtype));
  double start, limit, delta;
  int64_t start_i, limit_i, delta_i;
  GFX_TRY(range_scalar(d, 0, dtype, &start, &start_i));
  GFX_TRY(range_scalar(d, 1, dtype, &limit, &limit_i));
  GFX_TRY(range_scalar(d, 2, dtype, &delta, &delta_i));
  if (delta == 0.0) return IR_UNSUPPORTED(d, "delta is 0");
  /* float32: limit - start rounds to float first, as in ORT's element-type arithmetic */
  const double span = dtype == GFX_DTYPE_F32 ? (double)((float)limit - (float)start) : limit - start;
  const double count = ceil(span / delta);
  if (!(count < (double)RANGE_COUNT_LIMIT))
    return IR_UNSUPPORTED(d, "%g elements; Range is taken below 2^31", count);
  memset(&p->index, 0, sizeof p->index);
  p->index.dtype = dtype;
  p->index.count = count > 0 ? (int64_t)count : 0;
  p->index.start = start, p->index.delta = delta;
  p->index.start_i = start_i, p->index.delta_i = delta_i;
  return NULL;
}

gfx_status ir_infer_range(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)in;
  memset(&out[0], 0, sizeof out[0]);
  out[0].rank = 1;
  out[0].dims[0] = node->params.index.count;
  return NULL;
}

/* ---- Trilu ---- */

/* Trilu moves elements of any handled type; k, when given, is a constant int64 scalar. */
#define TRILU_TYPES                                                                                            \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL) | IR_TYPE_BIT(GFX_DTYPE_U8) |                 \
   IR_TYPE_BIT(GFX_DTYPE_I8))

gfx_status ir_parse_trilu(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 1, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"upper", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, TRILU_TYPES, NULL));
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0 && rank < 2) return IR_UNSUPPORTED(d, "input 0 has rank %d; Trilu needs rank >= 2", rank);
  int64_t upper = 1, k = 0;
  GFX_TRY(ir_attr_int(d, "upper", 1, &upper));
  if (upper != 0 && upper != 1) return IR_UNSUPPORTED(d, "upper = %lld; 0 or 1 is expected", (long long)upper);
  if (d->n_inputs > 1 && d->input_dtypes[1] != GFX_DTYPE_UNDEFINED) {
    if (!d->input_is_const[1]) return IR_UNSUPPORTED(d, "k (input 1) is computed at run time");
    size_t n = 0;
    GFX_TRY(ir_const_ints(d, 1, &k, 1, &n));
    if (n != 1) return IR_UNSUPPORTED(d, "k holds %zu values; a scalar is expected", n);
  }
  memset(&p->index, 0, sizeof p->index);
  p->index.upper = (int8_t)upper;
  p->index.k = k;
  return NULL;
}

gfx_status ir_trilu_geometry(const gfx_shape* s, ir_trilu_geom* g) {
  GFX_TRY(check_extent("the input", s));
  if (s->rank < 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %s has rank below 2; Trilu needs matrices", SHAPE_STR(s));
  g->rows = s->dims[s->rank - 2];
  g->cols = s->dims[s->rank - 1];
  g->batch = 1;
  for (int i = 0; i < s->rank - 2; i++) g->batch *= s->dims[i];
  return NULL;
}

gfx_status ir_infer_trilu(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  ir_trilu_geom g;
  GFX_TRY(ir_trilu_geometry(&in[0], &g));
  out[0] = in[0];
  return NULL;
}

/* ---- GatherElements, GatherND, ScatterElements, ScatterND ---- */

/* Data of any handled type moves as bytes; the reductions compute, in float and int32/int64 only. */
#define INDEX_DATA_TYPES                                                                                       \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL) | IR_TYPE_BIT(GFX_DTYPE_U8) |                 \
   IR_TYPE_BIT(GFX_DTYPE_I8))

/* Indices read at run time are checked by the reference kernels, which fail the run on an index
 * outside [-dim, dim) (as ONNX Runtime's CPU EP does). The CUDA kernels cannot report without a
 * host sync: a gather writes 0 for such an index and a scatter skips its update; neither ever
 * touches memory outside a tensor. */

static gfx_status parse_reduction(const ir_node_desc* d, int8_t* out) {
  char r[16];
  GFX_TRY(ir_attr_string(d, "reduction", "none", r, sizeof r));
  static const char* const names[] = {"none", "add", "mul", "max", "min"}; /* ir_scatter_reduction's order */
  int found = -1;
  for (int i = 0; i < 5; i++)
    if (strcmp(r, names[i]) == 0) found = i;
  if (found < 0) return IR_UNSUPPORTED(d, "reduction '%s'; none, add, mul, max and min are handled", r);
  const int t = d->input_dtypes[0];
  if (found != IR_SCATTER_NONE && !((IR_TYPES_FLOAT | IR_TYPES_INDEX) & IR_TYPE_BIT(t)))
    return IR_UNSUPPORTED(d, "reduction '%s' of %s data; float and int32/int64 are handled", r, gfx_dtype_name(t));
  *out = (int8_t)found;
  return NULL;
}

/* Common to the four: data (input 0) of a handled type, which the output has; integer indices;
 * updates (input 2 of a scatter) of the data's type. */
static gfx_status parse_index_io(const ir_node_desc* d, int n_inputs) {
  GFX_TRY(ir_check_io(d, n_inputs, n_inputs, 1));
  int dtype = 0;
  GFX_TRY(ir_check_same_type(d, 0, 0, INDEX_DATA_TYPES, &dtype));
  GFX_TRY(ir_check_input_type(d, 1, IR_TYPES_INDEX));
  if (n_inputs == 3 && d->input_dtypes[2] != dtype)
    return IR_UNSUPPORTED(d, "input 2 is %s but the data is %s", gfx_dtype_name(d->input_dtypes[2]),
                          gfx_dtype_name(dtype));
  const int rank = d->input_shapes[0].rank;
  if (rank == 0) return IR_UNSUPPORTED(d, "the data is a scalar");
  return NULL;
}

static gfx_status parse_elements(const ir_node_desc* d, ir_params* p, int scatter) {
  GFX_TRY(parse_index_io(d, scatter ? 3 : 2));
  GFX_TRY(ir_check_known_attrs(d, scatter ? (const char* const[]){"axis", "reduction", NULL}
                                          : (const char* const[]){"axis", NULL}));
  memset(&p->index, 0, sizeof p->index);
  GFX_TRY(ir_attr_int(d, "axis", 0, &p->index.axis));
  const int rank = d->input_shapes[0].rank;
  int unused;
  if (rank > 0) GFX_TRY(ir_norm_axis(d, p->index.axis, rank, &unused));
  if (d->input_shapes[1].rank >= 0 && rank >= 0 && d->input_shapes[1].rank != rank)
    return IR_UNSUPPORTED(d, "indices of rank %d for data of rank %d", d->input_shapes[1].rank, rank);
  return scatter ? parse_reduction(d, &p->index.reduction) : NULL;
}

gfx_status ir_parse_gather_elements(const ir_node_desc* d, ir_params* p) { return parse_elements(d, p, 0); }
gfx_status ir_parse_scatter_elements(const ir_node_desc* d, ir_params* p) { return parse_elements(d, p, 1); }

gfx_status ir_parse_gather_nd(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(parse_index_io(d, 2));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"batch_dims", NULL}));
  int64_t b = 0;
  GFX_TRY(ir_attr_int(d, "batch_dims", 0, &b));
  const int r = d->input_shapes[0].rank, q = d->input_shapes[1].rank;
  if (b < 0 || b >= GFX_MAX_RANK || (r >= 0 && b >= r) || (q >= 0 && b >= q))
    return IR_UNSUPPORTED(d, "batch_dims %lld for data of rank %d and indices of rank %d", (long long)b, r, q);
  memset(&p->index, 0, sizeof p->index);
  p->index.batch_dims = (int8_t)b;
  return NULL;
}

gfx_status ir_parse_scatter_nd(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(parse_index_io(d, 3));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"reduction", NULL}));
  memset(&p->index, 0, sizeof p->index);
  return parse_reduction(d, &p->index.reduction);
}

static void row_major_strides(const gfx_shape* s, int64_t* strides) {
  int64_t stride = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = stride;
    stride *= s->dims[i];
  }
}

gfx_status ir_elements_geometry(const gfx_shape* data, const gfx_shape* indices, const gfx_shape* updates,
                                int64_t axis, ir_elements_geom* g) {
  GFX_TRY(check_extent("the data", data));
  GFX_TRY(check_extent("the indices", indices));
  if (data->rank < 1 || indices->rank != data->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "indices %s for data %s: one rank >= 1 is needed", SHAPE_STR(indices),
                     SHAPE_STR(data));
  if (updates && !gfx_shape_equal(updates, indices))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "updates %s are not shaped like the indices %s", SHAPE_STR(updates),
                     SHAPE_STR(indices));
  if (axis < -data->rank || axis >= data->rank)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d)", (long long)axis, data->rank,
                     data->rank);
  memset(g, 0, sizeof *g);
  g->rank = data->rank;
  g->axis = (int)(axis < 0 ? axis + data->rank : axis);
  g->axis_dim = data->dims[g->axis];
  for (int i = 0; i < data->rank; i++) {
    if (i != g->axis && indices->dims[i] > data->dims[i])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "indices %s reach beyond data %s on dim %d", SHAPE_STR(indices),
                       SHAPE_STR(data), i);
    g->idx_dims[i] = indices->dims[i];
  }
  row_major_strides(indices, g->idx_strides);
  row_major_strides(data, g->data_strides);
  g->count = gfx_shape_numel(indices);
  return NULL;
}

gfx_status ir_nd_geometry(const gfx_shape* data, const gfx_shape* indices, const gfx_shape* updates, int batch_dims,
                          ir_nd_geom* g, gfx_shape* gathered) {
  GFX_TRY(check_extent("the data", data));
  GFX_TRY(check_extent("the indices", indices));
  const int r = data->rank, q = indices->rank, b = batch_dims;
  if (r < 1 || q < 1 || b < 0 || b >= r || b >= q)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "data %s and indices %s with batch_dims %d", SHAPE_STR(data),
                     SHAPE_STR(indices), b);
  const int64_t m = indices->dims[q - 1];
  if (m < 1 || m > r - b)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "index tuples of %lld entries for data %s (batch_dims %d)",
                     (long long)m, SHAPE_STR(data), b);
  memset(g, 0, sizeof *g);
  g->m = (int)m;
  g->batch = g->n = g->slice = 1;
  for (int i = 0; i < b; i++) {
    if (indices->dims[i] != data->dims[i])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "batch dim %d differs: data %s, indices %s", i, SHAPE_STR(data),
                       SHAPE_STR(indices));
    g->batch *= data->dims[i];
  }
  for (int i = b; i < q - 1; i++) g->n *= indices->dims[i];
  for (int i = b + g->m; i < r; i++) g->slice *= data->dims[i];
  int64_t strides[GFX_MAX_RANK];
  row_major_strides(data, strides);
  g->data_batch_stride = b > 0 ? strides[b - 1] : gfx_shape_numel(data);
  for (int k = 0; k < g->m; k++) g->dims[k] = data->dims[b + k], g->strides[k] = strides[b + k];
  /* the gathered shape: indices' dims but the last, then data's dims after the indexed ones */
  gfx_shape out = {.rank = q - 1 + r - b - g->m};
  if (out.rank > GFX_MAX_RANK)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "the result of data %s and indices %s has rank %d, beyond %d",
                     SHAPE_STR(data), SHAPE_STR(indices), out.rank, GFX_MAX_RANK);
  for (int i = 0; i < q - 1; i++) out.dims[i] = indices->dims[i];
  for (int i = b + g->m; i < r; i++) out.dims[q - 1 + i - b - g->m] = data->dims[i];
  if (updates && !gfx_shape_equal(updates, &out))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "updates %s; data %s and indices %s need %s", SHAPE_STR(updates),
                     SHAPE_STR(data), SHAPE_STR(indices), SHAPE_STR(&out));
  if (gathered) *gathered = out;
  return NULL;
}

gfx_status ir_infer_gather_elements(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_elements_geom g;
  GFX_TRY(ir_elements_geometry(&in[0], &in[1], NULL, node->params.index.axis, &g));
  out[0] = in[1];
  return NULL;
}

gfx_status ir_infer_scatter_elements(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_elements_geom g;
  GFX_TRY(ir_elements_geometry(&in[0], &in[1], &in[2], node->params.index.axis, &g));
  out[0] = in[0];
  return NULL;
}

gfx_status ir_infer_gather_nd(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_nd_geom g;
  return ir_nd_geometry(&in[0], &in[1], NULL, node->params.index.batch_dims, &g, &out[0]);
}

gfx_status ir_infer_scatter_nd(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  ir_nd_geom g;
  GFX_TRY(ir_nd_geometry(&in[0], &in[1], &in[2], 0, &g, NULL));
  out[0] = in[0];
  return NULL;
}

/* ---- TopK ---- */

/* Opset 10 on (opset 1 has k as an attribute and is left to ORT): X of a float type or int32/int64,
 * k an int64 input of one value, Values of X's type and int64 Indices. A constant k is read here; a
 * computed k (a 1-D tensor of one element, as ONNX Runtime requires) decides the output shape from
 * the data: parse leaves k at -1 and marks input 1 a value input, and the executor reads k back and
 * folds it in before it resolves the TopK's shapes (ir_node_resolve, ir/dynamic.h). largest (11+)
 * picks the largest or smallest; ties go to the lower index, as in ONNX Runtime. sorted = 0 leaves
 * the order to the implementation: ONNX Runtime's is that of its selection's internals, which gfxep
 * does not reproduce, so such a node is left to it. */
gfx_status ir_parse_topk(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_io(d, 2, 2, 2));
  GFX_TRY(ir_check_known_attrs(d, d->since_version >= 11 ? (const char* const[]){"axis", "largest", "sorted", NULL}
                                                         : (const char* const[]){"axis", NULL}));
  GFX_TRY(ir_check_input_type(d, 0, IR_TYPES_FLOAT | IR_TYPES_INDEX));
  const int dtype = d->input_dtypes[0];
  if (d->output_dtypes[0] != dtype)
    return IR_UNSUPPORTED(d, "Values is %s, X is %s", gfx_dtype_name(d->output_dtypes[0]), gfx_dtype_name(dtype));
  if (d->output_dtypes[1] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "Indices is %s; int64 is expected", gfx_dtype_name(d->output_dtypes[1]));
  if (d->input_dtypes[1] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "k is %s; int64 is expected", gfx_dtype_name(d->input_dtypes[1]));
  int64_t k[2] = {-1, -1};
  const int computed = !d->input_is_const[1];
  if (computed) {
    /* ONNX Runtime requires a 1-D k of one element (checked again on the value read back) */
    const gfx_shape* ks = &d->input_shapes[1];
    if (!(ks->rank < 0 || (ks->rank == 1 && (ks->dims[0] == 1 || ks->dims[0] < 0))))
      return IR_UNSUPPORTED(d, "k (input 1) is computed at run time and declared with another shape than [1]");
  } else {
    size_t n = 0;
    GFX_TRY(ir_const_ints(d, 1, k, 2, &n));
    if (n != 1) return IR_UNSUPPORTED(d, "k holds %zu values; one is expected", n);
    if (k[0] < 0) return IR_UNSUPPORTED(d, "k = %lld is negative", (long long)k[0]);
  }
  int64_t axis = -1, largest = 1, sorted = 1;
  GFX_TRY(ir_attr_int(d, "axis", -1, &axis));
  GFX_TRY(ir_attr_int(d, "largest", 1, &largest));
  GFX_TRY(ir_attr_int(d, "sorted", 1, &sorted));
  if (largest != 0 && largest != 1) return IR_UNSUPPORTED(d, "largest = %lld; 0 or 1 is expected", (long long)largest);
  if (sorted != 1)
    return IR_UNSUPPORTED(d, "sorted = %lld: the order of an unsorted TopK is ONNX Runtime's own", (long long)sorted);
  const gfx_shape* x = &d->input_shapes[0];
  if (x->rank == 0) return IR_UNSUPPORTED(d, "X is a scalar; TopK needs rank >= 1");
  if (x->rank > 0) {
    int a;
    GFX_TRY(ir_norm_axis(d, axis, x->rank, &a));
    /* ONNX Runtime fails a k beyond the axis; the node is left to it to report that */
    if (!computed && x->dims[a] >= 0 && k[0] > x->dims[a])
      return IR_UNSUPPORTED(d, "k = %lld exceeds the axis' %lld elements", (long long)k[0], (long long)x->dims[a]);
  }
  memset(&p->index, 0, sizeof p->index);
  p->index.axis = axis;
  p->index.k = k[0];
  p->index.largest = (int8_t)largest;
  p->index.dtype = dtype;
  p->index.value_inputs = computed ? 1u << 1 : 0;
  return NULL;
}

gfx_status ir_topk_geometry(const gfx_shape* x, int64_t axis, int64_t k, ir_axis_geom* g) {
  GFX_TRY(ir_axis_geometry(x, axis, g));
  if (k < 0 || k > g->len)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "TopK: k = %lld but the axis of X %s has %lld elements", (long long)k,
                     SHAPE_STR(x), (long long)g->len);
  return NULL;
}

gfx_status ir_infer_topk(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  if (node->params.index.value_inputs)
    return gfx_error(GFX_ERR_INTERNAL, "TopK: k is computed at run time and was not read back before its shape");
  ir_axis_geom g;
  GFX_TRY(ir_topk_geometry(&in[0], node->params.index.axis, node->params.index.k, &g));
  const int a = (int)(node->params.index.axis < 0 ? node->params.index.axis + in[0].rank : node->params.index.axis);
  out[0] = in[0];
  out[0].dims[a] = node->params.index.k;
  out[1] = out[0];
  return NULL;
}

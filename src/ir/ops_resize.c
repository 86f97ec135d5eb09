/* gfxep — parse and infer functions of the resampling ops (see ir/ops.def): Resize, Upsample,
 * DepthToSpace, SpaceToDepth, GridSample; and the Resize and GridSample geometry the backends use
 * (ir/resize_geom.h, ir/grid_sample_geom.h).
 *
 * Resize is claimed when its scales are constant initializers, or its sizes are constant or
 * computed at run time (an image pipeline's resize to a size derived from the frame's: read back or
 * computed on the host before the node, ir/dynamic.h); any dims may resize (the image case
 * [..., H, W] takes the geometry's two-dim form, the kernels' fast path).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ops_common.h"
#include "ir/grid_sample_geom.h"
#include "ir/resize_geom.h"
#include "ir/shape.h"

/* dims above this are refused, so that every index product below fits int64 comfortably */
#define RESIZE_MAX_DIM ((int64_t)1 << 31)

/* ---- helpers ---- */

/* 1 when input i is absent or an empty tensor, ONNX's two ways to leave roi, scales or sizes out */
static int input_empty(const ir_node_desc* d, int i) {
  if (i >= d->n_inputs || d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return 1;
  const gfx_shape* s = &d->input_shapes[i];
  if (s->rank >= 0)
    for (int k = 0; k < s->rank; k++)
      if (s->dims[k] == 0) return 1;
  return d->input_is_const[i] && d->input_const_bytes[i] == 0;
}

/* Looks `value` up in a NULL-terminated list of names; its index, or -1. */
static int name_index(const char* value, const char* const* names) {
  for (int i = 0; names[i]; i++)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

static gfx_status read_choice(const ir_node_desc* d, const char* attr, const char* fallback, const char* const* names,
                              int* out) {
  char buf[64];
  GFX_TRY(ir_attr_string(d, attr, fallback, buf, sizeof buf));
  *out = name_index(buf, names);
  if (*out < 0) return IR_UNSUPPORTED(d, "%s '%s' is not handled", attr, buf);
  return NULL;
}

static const char* const mode_names[] = {"nearest", "linear", "cubic", NULL};
/* in the order of the IR_COORD_* values */
static const char* const coord_names[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                          "align_corners", "asymmetric",           "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize", NULL};
static const char* const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
static const char* const policy_names[] = {"stretch", "not_larger", "not_smaller", NULL};

/* The per-dim scales (from_sizes == 0) or sizes (from_sizes == 1, -1 = the input's dim) of all
 * `rank` dims, from the constant input and the axes it applies to. */
typedef struct resize_request {
  int rank;
  int from_sizes;
  int computed; /* sizes computed at run time: every listed dim may resize */
  float scales[GFX_MAX_RANK];
  int64_t sizes[GFX_MAX_RANK];
  int listed[GFX_MAX_RANK]; /* the dim is in axes (or there are no axes) */
} resize_request;

/* Whether dim k may resize: a scale other than 1, or a size that is not known to equal the input's
 * dim. */
static int dim_may_resize(const ir_node_desc* d, const resize_request* r, int k) {
  if (!r->from_sizes) return r->scales[k] != 1.0f;
  if (r->computed) return r->listed[k];
  return r->sizes[k] >= 0 && d->input_shapes[0].dims[k] != r->sizes[k];
}

/* The dims that may resize: every one is handled, each interpolated separably; cubic's 4 taps per
 * resized dim are bounded at three such dims (64 taps per output). Sets p->leading when a dim before
 * the last two may resize. */
static gfx_status check_resized_dims(const ir_node_desc* d, const resize_request* r, ir_resize_params* p) {
  int resized = 0;
  p->leading = 0;
  for (int k = 0; k < r->rank; k++) {
    if (!dim_may_resize(d, r, k)) continue;
    resized++;
    if (k < r->rank - 2) p->leading = 1;
  }
  if (p->mode == IR_RESIZE_CUBIC && resized > 3)
    return IR_UNSUPPORTED(d, "cubic resize of %d dims (4^%d taps per output); up to 3 dims are handled", resized,
                          resized);
  return NULL;
}

/* ---- Resize (11, 13, 18, 19) ---- */

static gfx_status read_axes(const ir_node_desc* d, int rank, int* axes, int* n_axes) {
  *n_axes = 0;
  if (d->since_version < 18) return NULL;
  int64_t raw[GFX_MAX_RANK + 1];
  size_t n = 0;
  int present = 0;
  GFX_TRY(ir_attr_ints(d, "axes", raw, GFX_MAX_RANK + 1, &n, &present));
  if (!present) return NULL;
  if (n == 0 || n > (size_t)rank) return IR_UNSUPPORTED(d, "axes has %zu entries for rank %d", n, rank);
  for (size_t i = 0; i < n; i++) {
    GFX_TRY(ir_norm_axis(d, raw[i], rank, &axes[i]));
    for (size_t j = 0; j < i; j++)
      if (axes[j] == axes[i]) return IR_UNSUPPORTED(d, "axis %d appears twice in axes", axes[i]);
  }
  *n_axes = (int)n;
  return NULL;
}

/* The dim the k-th entry of scales/sizes/roi applies to. */
static int entry_axis(const int* axes, int n_axes, int k) { return n_axes ? axes[k] : k; }

static gfx_status read_scales_or_sizes(const ir_node_desc* d, const int* axes, int n_axes, resize_request* r,
                                       ir_resize_params* p) {
  const int n_want = n_axes ? n_axes : r->rank;
  const int scales_given = !input_empty(d, 2), sizes_given = !input_empty(d, 3);
  if (scales_given == sizes_given)
    return IR_UNSUPPORTED(d, scales_given ? "both scales and sizes are given" : "neither scales nor sizes is given");
  for (int k = 0; k < r->rank; k++) {
    r->scales[k] = 1.0f;
    r->sizes[k] = -1;
    r->listed[k] = n_axes == 0;
  }
  for (int k = 0; k < n_axes; k++) r->listed[axes[k]] = 1;
  size_t n = 0;
  if (scales_given) {
    float v[GFX_MAX_RANK];
    GFX_TRY(ir_const_floats(d, 2, v, GFX_MAX_RANK, &n));
    if ((int)n != n_want) return IR_UNSUPPORTED(d, "scales has %zu values, expected %d", n, n_want);
    for (int k = 0; k < n_want; k++) {
      if (!(v[k] > 0.0f) || isinf(v[k])) return IR_UNSUPPORTED(d, "scales[%d] = %g (must be > 0)", k, (double)v[k]);
      r->scales[entry_axis(axes, n_axes, k)] = v[k];
    }
    r->from_sizes = 0;
  } else if (!d->input_is_const[3]) {
    /* computed: an int64 list of the declared length, folded in before the node runs */
    if (d->input_dtypes[3] != GFX_DTYPE_I64)
      return IR_UNSUPPORTED(d, "sizes (input 3) is %s; int64 is expected", gfx_dtype_name(d->input_dtypes[3]));
    /* its length may be unknown (a Concat of computed parts, as PyTorch exports an interpolation):
     * ONNX requires one entry per dim (per axis), which the read-back value is checked against */
    const gfx_shape* s = &d->input_shapes[3];
    const int length_ok = s->rank < 0 || (s->rank == 1 && (s->dims[0] < 0 || s->dims[0] == n_want));
    if (!length_ok)
      return IR_UNSUPPORTED(d, "sizes (input 3) is computed at run time and not declared as %d entries", n_want);
    p->value_inputs = 1u << 3;
    p->n_sizes = (int8_t)n_want;
    for (int k = 0; k < n_want; k++) p->size_axis[k] = (int8_t)entry_axis(axes, n_axes, k);
    r->from_sizes = 1;
    r->computed = 1;
  } else {
    int64_t v[GFX_MAX_RANK];
    GFX_TRY(ir_const_ints(d, 3, v, GFX_MAX_RANK, &n));
    if ((int)n != n_want) return IR_UNSUPPORTED(d, "sizes has %zu values, expected %d", n, n_want);
    for (int k = 0; k < n_want; k++) {
      if (v[k] < 0 || v[k] > RESIZE_MAX_DIM)
        return IR_UNSUPPORTED(d, "sizes[%d] = %lld is outside [0, 2^31]", k, (long long)v[k]);
      r->sizes[entry_axis(axes, n_axes, k)] = v[k];
    }
    r->from_sizes = 1;
  }
  return NULL;
}

static gfx_status read_roi(const ir_node_desc* d, const int* axes, int n_axes, int rank, ir_resize_params* p) {
  for (int k = 0; k < rank; k++) {
    p->roi[k] = 0.0f;
    p->roi[rank + k] = 1.0f;
  }
  if (p->coord != IR_COORD_TF_CROP_AND_RESIZE) return NULL; /* roi means nothing to the other modes */
  if (d->n_inputs < 2 || d->input_dtypes[1] == GFX_DTYPE_UNDEFINED) return NULL; /* the whole input */
  if (input_empty(d, 1)) return IR_UNSUPPORTED(d, "tf_crop_and_resize with an empty roi");
  float v[2 * GFX_MAX_RANK];
  size_t n = 0;
  GFX_TRY(ir_const_floats(d, 1, v, 2 * GFX_MAX_RANK, &n));
  const int n_entries = n_axes ? n_axes : rank;
  if ((int)n != 2 * n_entries) return IR_UNSUPPORTED(d, "roi has %zu values, expected %d", n, 2 * n_entries);
  for (int k = 0; k < n_entries; k++) {
    int axis = entry_axis(axes, n_axes, k);
    if (!isfinite(v[k]) || !isfinite(v[n_entries + k]))
      return IR_UNSUPPORTED(d, "roi of dim %d is not finite", axis);
    p->roi[axis] = v[k];
    p->roi[rank + axis] = v[n_entries + k];
  }
  return NULL;
}

gfx_status ir_parse_resize(const ir_node_desc* d, ir_params* params) {
  static const char* const known_11[] = {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                         "extrapolation_value", "mode", "nearest_mode", NULL};
  static const char* const known_18[] = {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                         "extrapolation_value", "mode", "nearest_mode", "antialias", "axes",
                                         "keep_aspect_ratio_policy", NULL};
  ir_resize_params* p = &params->resize;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 1, 4, 1));
  GFX_TRY(ir_check_known_attrs(d, d->since_version >= 18 ? known_18 : known_11));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  const int rank = d->input_shapes[0].rank;
  if (rank < 0) return IR_UNSUPPORTED(d, "the input's rank is not known before run time");
  if (rank < 2) return IR_UNSUPPORTED(d, "rank %d input; rank 2 or more is handled", rank);
  p->rank = rank;

  GFX_TRY(read_choice(d, "mode", "nearest", mode_names, &p->mode));
  GFX_TRY(read_choice(d, "coordinate_transformation_mode", "half_pixel", coord_names, &p->coord));
  if (p->coord == IR_COORD_HALF_PIXEL_SYMMETRIC && d->since_version < 19)
    return IR_UNSUPPORTED(d, "half_pixel_symmetric exists from opset 19; this node is opset %d", d->since_version);
  p->nearest = IR_NEAREST_ROUND_PREFER_FLOOR;
  if (p->mode == IR_RESIZE_NEAREST)
    GFX_TRY(read_choice(d, "nearest_mode", "round_prefer_floor", nearest_names, &p->nearest));
  GFX_TRY(ir_attr_float(d, "cubic_coeff_a", -0.75f, &p->cubic_a));
  GFX_TRY(ir_attr_float(d, "extrapolation_value", 0.0f, &p->extrapolation));
  int64_t flag = 0;
  GFX_TRY(ir_attr_int(d, "exclude_outside", 0, &flag));
  if (flag != 0 && p->mode != IR_RESIZE_CUBIC) return IR_UNSUPPORTED(d, "exclude_outside is set but mode is not cubic");
  p->exclude_outside = flag != 0;
  GFX_TRY(ir_attr_int(d, "antialias", 0, &flag));
  if (flag != 0) return IR_UNSUPPORTED(d, "antialias = %lld is not handled", (long long)flag);

  int axes[GFX_MAX_RANK + 1], n_axes = 0;
  GFX_TRY(read_axes(d, rank, axes, &n_axes));
  resize_request r = {.rank = rank};
  GFX_TRY(read_scales_or_sizes(d, axes, n_axes, &r, p));
  p->from_sizes = r.from_sizes;
  GFX_TRY(check_resized_dims(d, &r, p));
  for (int k = 0; k < rank; k++) {
    p->scales[k] = r.scales[k];
    p->sizes[k] = r.sizes[k];
  }

  p->policy = 0;
  if (d->since_version >= 18) GFX_TRY(read_choice(d, "keep_aspect_ratio_policy", "stretch", policy_names, &p->policy));
  if (!p->from_sizes) p->policy = 0; /* the policy only adjusts sizes */
  if (p->policy) {
    /* without axes the policy's common scale would apply to every dim, the leading ones included */
    if (n_axes == 0) return IR_UNSUPPORTED(d, "keep_aspect_ratio_policy without axes would resize every dim");
    for (int k = 0; k < n_axes; k++) {
      p->policy_axes |= 1 << axes[k];
      if (axes[k] < rank - 2) p->leading = 1;
    }
  }
  return read_roi(d, axes, n_axes, rank, p);
}

/* ---- Upsample (9): nearest or linear, asymmetric coordinates, scales >= 1 as a constant input ---- */

gfx_status ir_parse_upsample(const ir_node_desc* d, ir_params* params) {
  ir_resize_params* p = &params->resize;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"mode", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  const int rank = d->input_shapes[0].rank;
  if (rank < 0) return IR_UNSUPPORTED(d, "the input's rank is not known before run time");
  if (rank < 2) return IR_UNSUPPORTED(d, "rank %d input; rank 2 or more is handled", rank);
  p->rank = rank;
  GFX_TRY(read_choice(d, "mode", "nearest", (const char* const[]){"nearest", "linear", NULL}, &p->mode));
  p->coord = IR_COORD_ASYMMETRIC;
  p->nearest = IR_NEAREST_SIMPLE;
  for (int k = 0; k < rank; k++) p->roi[rank + k] = 1.0f;

  resize_request r = {.rank = rank};
  float v[GFX_MAX_RANK];
  size_t n = 0;
  GFX_TRY(ir_const_floats(d, 1, v, GFX_MAX_RANK, &n));
  if ((int)n != rank) return IR_UNSUPPORTED(d, "scales has %zu values for a rank %d input", n, rank);
  for (int k = 0; k < rank; k++) {
    if (!(v[k] >= 1.0f) || isinf(v[k])) return IR_UNSUPPORTED(d, "scales[%d] = %g (Upsample needs >= 1)", k, (double)v[k]);
    r.scales[k] = v[k];
  }
  GFX_TRY(check_resized_dims(d, &r, p));
  for (int k = 0; k < rank; k++) p->scales[k] = v[k];
  return NULL;
}

/* ---- the geometry ---- */

static gfx_status dims_error(const ir_node* node, const gfx_shape* x, const char* why) {
  char buf[128];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": input %s: %s", ir_op_name(node->op),
                   node->name ? node->name : "", gfx_shape_str(x, buf, sizeof buf), why);
}

/* Every dim as an axis: its output size and the scale the coordinate mapping uses, exactly as ONNX
 * Runtime derives them (floor(in * scale) in float arithmetic from scales; out/in from sizes). A
 * scale of exactly 1 keeps the dim as it is. */
static gfx_status fill_axes(const ir_node* node, const gfx_shape* x, ir_resize_axis* axes) {
  const ir_resize_params* p = &node->params.resize;
  for (int k = 0; k < x->rank; k++) {
    ir_resize_axis* a = &axes[k];
    a->in = x->dims[k];
    a->roi_start = p->roi[k];
    a->roi_end = p->roi[x->rank + k];
    if (p->from_sizes) {
      a->out = p->sizes[k] < 0 ? a->in : p->sizes[k];
      if (a->in == 0 && a->out != 0) return dims_error(node, x, "a dim of 0 cannot be resized to a nonzero size");
      a->scale = a->in == 0 ? 1.0f : (float)a->out / (float)a->in;
    } else if (p->scales[k] == 1.0f) {
      a->scale = 1.0f;
      a->out = a->in;
    } else {
      a->scale = p->scales[k];
      /* float arithmetic and truncation, as ONNX Runtime computes floor(in * scale) */
      float product = a->scale * (float)a->in;
      if (!(product <= (float)RESIZE_MAX_DIM)) return dims_error(node, x, "the resized dim exceeds 2^31");
      a->out = (int64_t)product;
    }
  }
  if (!p->policy) return NULL;
  /* one common scale for the dims the policy covers: the smallest (not_larger) or largest
   * (not_smaller) of their sizes/in ratios; those dims become round(in * scale), the others stay */
  float common = p->policy == 1 ? FLT_MAX : FLT_MIN;
  for (int k = 0; k < x->rank; k++)
    if (p->policy_axes & (1 << k))
      common = p->policy == 1 ? fminf(common, axes[k].scale) : fmaxf(common, axes[k].scale);
  for (int k = 0; k < x->rank; k++) {
    ir_resize_axis* a = &axes[k];
    if (p->policy_axes & (1 << k)) {
      float product = roundf(common * (float)a->in);
      if (!(product <= (float)RESIZE_MAX_DIM)) return dims_error(node, x, "the resized dim exceeds 2^31");
      a->scale = common;
      a->out = (int64_t)product;
    } else {
      a->scale = 1.0f;
      a->out = a->in;
    }
  }
  return NULL;
}

gfx_status ir_resize_geometry(const ir_node* node, const gfx_shape* x, ir_resize_geom* g, gfx_shape* out) {
  const ir_resize_params* p = &node->params.resize;
  memset(g, 0, sizeof *g);
  if (p->value_inputs)
    return gfx_error(GFX_ERR_INTERNAL, "Resize '%s': its sizes are computed at run time and were not read back before "
                     "its output shape", node->name);
  if (x->rank != p->rank) return dims_error(node, x, "the rank differs from the one the node was compiled for");
  if (x->rank < 2 || x->rank > GFX_MAX_RANK) return dims_error(node, x, "the rank is outside 2..8");
  for (int k = 0; k < x->rank; k++)
    if (x->dims[k] < 0 || x->dims[k] > RESIZE_MAX_DIM) return dims_error(node, x, "a dim is negative or above 2^31");
  ir_resize_axis axes[GFX_MAX_RANK];
  memset(axes, 0, sizeof axes);
  GFX_TRY(fill_axes(node, x, axes));
  *out = *x;
  g->identity = 1;
  for (int k = 0; k < x->rank; k++) {
    out->dims[k] = axes[k].out;
    g->identity &= axes[k].out == axes[k].in;
    if (k < x->rank - 2 && !ir_resize_axis_kept(&axes[k])) g->general = 1;
  }
  if (gfx_shape_numel(out) < 0) return dims_error(node, x, "the output's element count overflows");
  if (g->general) {
    g->rank = x->rank;
    memcpy(g->axes, axes, sizeof(ir_resize_axis) * (size_t)x->rank);
  } else {
    g->outer = 1;
    for (int k = 0; k < x->rank - 2; k++) {
      if (x->dims[k] && g->outer > INT64_MAX / x->dims[k]) return dims_error(node, x, "the leading dims overflow");
      g->outer *= x->dims[k];
    }
    g->h = axes[x->rank - 2];
    g->w = axes[x->rank - 1];
  }
  g->mode = p->mode;
  g->coord = p->coord;
  g->nearest = p->nearest;
  g->exclude_outside = p->exclude_outside;
  g->cubic_a = p->cubic_a;
  g->extrapolation = p->extrapolation;
  return NULL;
}

gfx_status ir_infer_resize(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_resize_geom g;
  return ir_resize_geometry(node, &in[0], &g, &out[0]);
}

/* ---- DepthToSpace, SpaceToDepth ---- */

#define IR_TYPES_MOVABLE                                                                                      \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_I8) | IR_TYPE_BIT(GFX_DTYPE_U8) |                  \
   IR_TYPE_BIT(GFX_DTYPE_BOOL))

static gfx_status parse_space_depth(const ir_node_desc* d, ir_params* params, int has_mode) {
  ir_space_depth_params* p = &params->space_depth;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, has_mode ? (const char* const[]){"blocksize", "mode", NULL}
                                           : (const char* const[]){"blocksize", NULL}));
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_MOVABLE, NULL));
  const int rank = d->input_shapes[0].rank;
  if (rank >= 0 && rank != 4) return IR_UNSUPPORTED(d, "rank %d input; rank 4 is handled", rank);
  GFX_TRY(ir_attr_int(d, "blocksize", 0, &p->blocksize));
  if (p->blocksize < 1 || p->blocksize > 65536)
    return IR_UNSUPPORTED(d, "blocksize %lld (absent or outside [1, 65536])", (long long)p->blocksize);
  if (has_mode) GFX_TRY(read_choice(d, "mode", "DCR", (const char* const[]){"DCR", "CRD", NULL}, &p->crd));
  return NULL;
}

gfx_status ir_parse_depth_to_space(const ir_node_desc* d, ir_params* params) {
  return parse_space_depth(d, params, d->since_version >= 11);
}

gfx_status ir_parse_space_to_depth(const ir_node_desc* d, ir_params* params) {
  return parse_space_depth(d, params, 0);
}

static gfx_status space_depth_shape_error(const ir_node* node, const gfx_shape* x, const char* why) {
  char buf[128];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": input %s with blocksize %lld: %s", ir_op_name(node->op),
                   node->name ? node->name : "", gfx_shape_str(x, buf, sizeof buf),
                   (long long)node->params.space_depth.blocksize, why);
}

static gfx_status check_rank4(const ir_node* node, const gfx_shape* x) {
  if (x->rank != 4) return space_depth_shape_error(node, x, "the input must be rank 4");
  for (int k = 0; k < 4; k++)
    if (x->dims[k] < 0 || x->dims[k] > RESIZE_MAX_DIM) return space_depth_shape_error(node, x, "a dim is negative or above 2^31");
  return NULL;
}

gfx_status ir_infer_depth_to_space(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const gfx_shape nchw = node->params.space_depth.nhwc_input && in[0].rank == 4 ? ir_nhwc_as_nchw(&in[0]) : in[0];
  const gfx_shape* x = &nchw;
  const int64_t b = node->params.space_depth.blocksize;
  GFX_TRY(check_rank4(node, x));
  if (x->dims[1] % (b * b)) return space_depth_shape_error(node, x, "channels are not a multiple of blocksize^2");
  *out = *x;
  out->dims[1] = x->dims[1] / (b * b);
  out->dims[2] = x->dims[2] * b;
  out->dims[3] = x->dims[3] * b;
  if (out->dims[2] > RESIZE_MAX_DIM || out->dims[3] > RESIZE_MAX_DIM || gfx_shape_numel(out) < 0)
    return space_depth_shape_error(node, x, "the output is too large");
  return NULL;
}

gfx_status ir_infer_space_to_depth(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const gfx_shape* x = &in[0];
  const int64_t b = node->params.space_depth.blocksize;
  GFX_TRY(check_rank4(node, x));
  if (x->dims[2] % b || x->dims[3] % b) return space_depth_shape_error(node, x, "height or width is not a multiple of blocksize");
  *out = *x;
  out->dims[1] = x->dims[1] * b * b;
  out->dims[2] = x->dims[2] / b;
  out->dims[3] = x->dims[3] / b;
  if (out->dims[1] > RESIZE_MAX_DIM || gfx_shape_numel(out) < 0) return space_depth_shape_error(node, x, "the output is too large");
  return NULL;
}

/* ---- GridSample ---- */

static gfx_status check_grid_sample_dims(const ir_node_desc* d) {
  const gfx_shape *x = &d->input_shapes[0], *grid = &d->input_shapes[1];
  if (x->rank == 5 || grid->rank == 5)
    return IR_UNSUPPORTED(d, "5-D (volumetric) input is not handled; 4-D NCHW input is");
  if ((x->rank >= 0 && x->rank != 4) || (grid->rank >= 0 && grid->rank != 4))
    return IR_UNSUPPORTED(d, "input rank %d and grid rank %d; both rank 4 is handled", x->rank, grid->rank);
  if (x->rank < 0 && grid->rank < 0) return IR_UNSUPPORTED(d, "the ranks of the input and grid are unknown");
  if (grid->rank == 4 && grid->dims[3] >= 0 && grid->dims[3] != 2)
    return IR_UNSUPPORTED(d, "the grid's last dim is %lld; 2 (x, y) is expected", (long long)grid->dims[3]);
  return NULL;
}

/* GridSample-16 (modes bilinear, nearest, bicubic) and -20 (linear, nearest, cubic) on 4-D input;
 * the input and output float32 or float16, the grid float32 or float16 of its own (a model lowered
 * to float16 keeps its grid float32: a flow field in float16 would be off by up to a pixel). */
gfx_status ir_parse_grid_sample(const ir_node_desc* d, ir_params* params) {
  ir_grid_sample_params* p = &params->grid_sample;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 2, 2, 1));
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"align_corners", "mode", "padding_mode", NULL}));
  const unsigned types = IR_TYPE_BIT(GFX_DTYPE_F32) | IR_TYPE_BIT(GFX_DTYPE_F16);
  GFX_TRY(ir_check_same_type(d, 0, 0, types, NULL));
  GFX_TRY(ir_check_input_type(d, 1, types));
  GFX_TRY(check_grid_sample_dims(d));
  /* opset 20 renamed the modes; the old names are no longer valid there, nor the new ones before */
  const int renamed = d->since_version >= 20;
  GFX_TRY(read_choice(d, "mode", renamed ? "linear" : "bilinear",
                      renamed ? (const char* const[]){"nearest", "linear", "cubic", NULL}
                              : (const char* const[]){"nearest", "bilinear", "bicubic", NULL},
                      &p->mode));
  GFX_TRY(read_choice(d, "padding_mode", "zeros", (const char* const[]){"zeros", "border", "reflection", NULL},
                      &p->padding));
  int64_t align;
  GFX_TRY(ir_attr_int(d, "align_corners", 0, &align));
  if (align != 0 && align != 1) return IR_UNSUPPORTED(d, "align_corners = %lld (must be 0 or 1)", (long long)align);
  p->align_corners = (int)align;
  /* mirroring about borders that coincide divides by zero in ONNX Runtime: no result to match */
  const gfx_shape* x = &d->input_shapes[0];
  if (p->padding == IR_GRID_PAD_REFLECTION && p->align_corners && x->rank == 4 && (x->dims[2] == 1 || x->dims[3] == 1))
    return IR_UNSUPPORTED(d, "reflection padding with align_corners over an input of height or width 1 has no "
                             "defined result");
  return NULL;
}

static gfx_status grid_shape_error(const ir_node* node, const gfx_shape* x, const gfx_shape* grid, const char* why) {
  char a[128], b[128];
  return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s node \"%s\": input %s and grid %s: %s", ir_op_name(node->op),
                   node->name ? node->name : "", gfx_shape_str(x, a, sizeof a), gfx_shape_str(grid, b, sizeof b), why);
}

gfx_status ir_grid_sample_geometry(const ir_node* node, const gfx_shape* x, const gfx_shape* grid, ir_grid_geom* g,
                                   gfx_shape* out) {
  memset(g, 0, sizeof *g);
  if (x->rank != 4 || grid->rank != 4) return grid_shape_error(node, x, grid, "both must be rank 4");
  for (int k = 0; k < 4; k++)
    if (x->dims[k] < 0 || x->dims[k] > RESIZE_MAX_DIM || grid->dims[k] < 0 || grid->dims[k] > RESIZE_MAX_DIM)
      return grid_shape_error(node, x, grid, "a dim is negative or above 2^31");
  if (grid->dims[0] != x->dims[0]) return grid_shape_error(node, x, grid, "the batch sizes differ");
  if (grid->dims[3] != 2) return grid_shape_error(node, x, grid, "the grid's last dim must be 2");
  const ir_grid_sample_params* p = &node->params.grid_sample;
  *g = (ir_grid_geom){.n = x->dims[0], .c = x->dims[1], .in_h = x->dims[2], .in_w = x->dims[3],
                      .out_h = grid->dims[1], .out_w = grid->dims[2], .mode = p->mode, .padding = p->padding,
                      .align_corners = p->align_corners};
  *out = (gfx_shape){.rank = 4, .dims = {g->n, g->c, g->out_h, g->out_w}};
  if (gfx_shape_numel(out) < 0) return grid_shape_error(node, x, grid, "the output is too large");
  if (gfx_shape_numel(out) > 0 && (g->in_h == 0 || g->in_w == 0))
    return grid_shape_error(node, x, grid, "an empty image has no pixels to sample");
  return NULL;
}

gfx_status ir_infer_grid_sample(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  ir_grid_geom g;
  return ir_grid_sample_geometry(node, &in[0], &in[1], &g, &out[0]);
}
/* ---- RoiAlign (10, 16) ---- */

/* X float32/float16/bfloat16 of rank 4, rois [R, 4] of X's type, int64 batch_indices [R]; mode avg
 * or max, output_half_pixel (opset 10's only rule) or half_pixel (opset 16's default),
 * sampling_ratio >= 0, output sizes >= 1. */
gfx_status ir_parse_roi_align(const ir_node_desc* d, ir_params* params) {
  static const char* const known_10[] = {"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale",
                                         NULL};
  static const char* const known_16[] = {"coordinate_transformation_mode", "mode", "output_height", "output_width",
                                         "sampling_ratio", "spatial_scale", NULL};
  ir_roi_align_params* p = &params->roi_align;
  memset(p, 0, sizeof *p);
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, d->since_version >= 16 ? known_16 : known_10));
  GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT, NULL));
  if (d->input_dtypes[2] != GFX_DTYPE_I64)
    return IR_UNSUPPORTED(d, "batch_indices is %s; int64 is expected", gfx_dtype_name(d->input_dtypes[2]));
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank != 4)
    return IR_UNSUPPORTED(d, "X has rank %d; 4 is expected", d->input_shapes[0].rank);
  int mode = 0, coord = 1;
  GFX_TRY(read_choice(d, "mode", "avg", (const char* const[]){"avg", "max", NULL}, &mode));
  if (d->since_version >= 16)
    GFX_TRY(read_choice(d, "coordinate_transformation_mode", "half_pixel",
                        (const char* const[]){"output_half_pixel", "half_pixel", NULL}, &coord));
  else
    coord = 0;
  GFX_TRY(ir_attr_int(d, "output_height", 1, &p->out_h));
  GFX_TRY(ir_attr_int(d, "output_width", 1, &p->out_w));
  GFX_TRY(ir_attr_int(d, "sampling_ratio", 0, &p->sampling_ratio));
  GFX_TRY(ir_attr_float(d, "spatial_scale", 1.0f, &p->spatial_scale));
  if (p->out_h < 1 || p->out_w < 1 || p->out_h > RESIZE_MAX_DIM || p->out_w > RESIZE_MAX_DIM)
    return IR_UNSUPPORTED(d, "output size %lld x %lld", (long long)p->out_h, (long long)p->out_w);
  if (p->sampling_ratio < 0 || p->sampling_ratio > 65535)
    return IR_UNSUPPORTED(d, "sampling_ratio = %lld is outside [0, 65535]", (long long)p->sampling_ratio);
  if (!isfinite(p->spatial_scale)) return IR_UNSUPPORTED(d, "spatial_scale is not finite");
  p->mode_max = mode;
  p->half_pixel = coord;
  return NULL;
}

gfx_status ir_infer_roi_align(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  const gfx_shape *x = &in[0], *rois = &in[1], *idx = &in[2];
  char a[96], b[96], c[96];
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || idx->rank != 1 || idx->dims[0] != rois->dims[0])
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "RoiAlign node \"%s\": X %s, rois %s and batch_indices %s do not fit "
                     "([N, C, H, W], [R, 4], [R])", node->name ? node->name : "", gfx_shape_str(x, a, sizeof a),
                     gfx_shape_str(rois, b, sizeof b), gfx_shape_str(idx, c, sizeof c));
  for (int k = 0; k < 4; k++)
    if (x->dims[k] < 0 || x->dims[k] > RESIZE_MAX_DIM || (k < 2 && rois->dims[k] > RESIZE_MAX_DIM))
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "RoiAlign node \"%s\": a dim is outside [0, 2^31]",
                       node->name ? node->name : "");
  *out = (gfx_shape){.rank = 4, .dims = {rois->dims[0], x->dims[1], node->params.roi_align.out_h,
                                         node->params.roi_align.out_w}};
  if (gfx_shape_numel(out) < 0) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "RoiAlign: the output is too large");
  return NULL;
}

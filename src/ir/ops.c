/* gfxep — the op table's parse functions: which nodes gfxep takes, and their parameters.
 *
 * A parse function either fills ir_params from the node's attributes and returns NULL, or returns
 * GFX_ERR_NOT_SUPPORTED with a message that says exactly why the node stays with ONNX Runtime.
 * Anything not understood — an unknown attribute, an unusual value, a type not handled — is a
 * reason not to claim the node: gfxep never guesses.
 */
#include <string.h>

#include "core/half.h"
#include "ir/ops_common.h"
#include "ir/resize_geom.h"

typedef gfx_status (*ir_parse_fn)(const ir_node_desc* d, ir_params* p);
/* every parse function the table names, declared here so that a family file needs no header */
#define GFX_OP(id, onnx_name, min_opset, kernel, memory, parse, infer, summary) \
  gfx_status parse(const ir_node_desc* d, ir_params* p);
#include "ir/ops.def"
#undef GFX_OP

static const struct op_entry {
  const char* name;
  int min_opset;
  ir_parse_fn parse;
  const char* summary;
  int is_view;
} op_table[GFX_OP_COUNT] = {
#define IR_MEMORY_view 1
#define IR_MEMORY_moves 0
#define GFX_OP(id, onnx_name, min_opset, kernel, memory, parse, infer, summary) \
  [GFX_OP_##id] = {onnx_name, min_opset, parse, summary, IR_MEMORY_##memory},
#include "ir/ops.def"
#undef GFX_OP
};

const char* ir_op_name(gfx_op op) {
  return op > GFX_OP_NONE && op < GFX_OP_COUNT ? op_table[op].name : "(none)";
}
int ir_op_min_opset(gfx_op op) { return op > GFX_OP_NONE && op < GFX_OP_COUNT ? op_table[op].min_opset : 0; }
const char* ir_op_summary(gfx_op op) { return op > GFX_OP_NONE && op < GFX_OP_COUNT ? op_table[op].summary : ""; }

gfx_op ir_op_from_name(const char* onnx_name) {
  for (int op = GFX_OP_NONE + 1; op < GFX_OP_COUNT; op++)
    if (strcmp(op_table[op].name, onnx_name) == 0) return (gfx_op)op;
  return GFX_OP_NONE;
}

int ir_op_is_view(gfx_op op) { return op > GFX_OP_NONE && op < GFX_OP_COUNT && op_table[op].is_view; }

/* ---- the helpers every parse function uses (ir/ops_common.h) ---- */

gfx_status ir_check_known_attrs(const ir_node_desc* d, const char* const* known) {
  int n = d->attrs.count ? d->attrs.count(d->attrs.ctx) : 0;
  for (int i = 0; i < n; i++) {
    const char* name = d->attrs.name_at(d->attrs.ctx, i);
    int found = 0;
    for (const char* const* k = known; *k && !found; k++) found = strcmp(*k, name) == 0;
    if (!found) return IR_UNSUPPORTED(d, "attribute '%s' is not handled", name);
  }
  return NULL;
}

gfx_status ir_check_io(const ir_node_desc* d, int min_in, int max_in, int n_out) {
  if (d->n_inputs < min_in || d->n_inputs > max_in)
    return IR_UNSUPPORTED(d, "%d inputs (expected %d..%d)", d->n_inputs, min_in, max_in);
  if (d->n_outputs != n_out) return IR_UNSUPPORTED(d, "%d outputs (expected %d)", d->n_outputs, n_out);
  /* the required inputs must be there: an absent one (an empty name in ONNX) is no tensor */
  for (int i = 0; i < min_in; i++)
    if (d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return IR_UNSUPPORTED(d, "required input %d is absent", i);
  return NULL;
}

static int type_in(int dtype, unsigned mask) { return dtype > 0 && dtype < 32 && (mask & IR_TYPE_BIT(dtype)); }

gfx_status ir_check_input_type(const ir_node_desc* d, int i, unsigned mask) {
  if (i >= d->n_inputs || d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return NULL;
  if (!type_in(d->input_dtypes[i], mask))
    return IR_UNSUPPORTED(d, "input %d is %s, which this op does not handle", i, gfx_dtype_name(d->input_dtypes[i]));
  return NULL;
}

gfx_status ir_check_same_type(const ir_node_desc* d, int first, int last, unsigned mask, int* dtype) {
  int t = d->n_outputs > 0 ? d->output_dtypes[0] : GFX_DTYPE_UNDEFINED;
  if (!type_in(t, mask)) return IR_UNSUPPORTED(d, "output 0 is %s, which this op does not handle", gfx_dtype_name(t));
  for (int i = first; i <= last && i < d->n_inputs; i++)
    if (d->input_dtypes[i] != GFX_DTYPE_UNDEFINED && d->input_dtypes[i] != t)
      return IR_UNSUPPORTED(d, "input %d is %s but output 0 is %s", i, gfx_dtype_name(d->input_dtypes[i]),
                            gfx_dtype_name(t));
  for (int o = 1; o < d->n_outputs; o++)
    if (d->output_dtypes[o] != t)
      return IR_UNSUPPORTED(d, "output %d is %s but output 0 is %s", o, gfx_dtype_name(d->output_dtypes[o]),
                            gfx_dtype_name(t));
  if (dtype) *dtype = t;
  return NULL;
}

gfx_status ir_check_float32(const ir_node_desc* d) {
  for (int i = 0; i < d->n_inputs; i++)
    if (d->input_dtypes[i] != GFX_DTYPE_UNDEFINED && d->input_dtypes[i] != GFX_DTYPE_F32)
      return IR_UNSUPPORTED(d, "input %d is %s; only float32 is handled", i, gfx_dtype_name(d->input_dtypes[i]));
  for (int i = 0; i < d->n_outputs; i++)
    if (d->output_dtypes[i] != GFX_DTYPE_F32)
      return IR_UNSUPPORTED(d, "output %d is %s; only float32 is handled", i, gfx_dtype_name(d->output_dtypes[i]));
  return NULL;
}

gfx_status ir_attr_int(const ir_node_desc* d, const char* name, int64_t fallback, int64_t* out) {
  *out = fallback;
  int r = d->attrs.get_int ? d->attrs.get_int(d->attrs.ctx, name, out) : 0;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not an int", name);
  if (r == 0) *out = fallback;
  return NULL;
}

gfx_status ir_attr_float(const ir_node_desc* d, const char* name, float fallback, float* out) {
  *out = fallback;
  int r = d->attrs.get_float ? d->attrs.get_float(d->attrs.ctx, name, out) : 0;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not a float", name);
  if (r == 0) *out = fallback;
  return NULL;
}

gfx_status ir_attr_string(const ir_node_desc* d, const char* name, const char* fallback, char* out, size_t cap) {
  if (cap == 0) return IR_UNSUPPORTED(d, "attribute '%s': no room", name);
  int r = d->attrs.get_string ? d->attrs.get_string(d->attrs.ctx, name, out, cap) : 0;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not a string", name);
  if (r == 0) {
    strncpy(out, fallback, cap - 1);
    out[cap - 1] = 0;
  }
  return NULL;
}

gfx_status ir_attr_scalar_tensor(const ir_node_desc* d, const char* name, int* dtype, unsigned char value[8],
                                 int* present) {
  *present = 0;
  int64_t count = 0;
  memset(value, 0, 8);
  const int r = d->attrs.get_tensor ? d->attrs.get_tensor(d->attrs.ctx, name, dtype, &count, value, 8) : 0;
  if (r == 0) return NULL;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not a tensor of at most 8 bytes gfxep can read", name);
  if (count != 1) return IR_UNSUPPORTED(d, "attribute '%s' holds %lld elements; one is expected", name, (long long)count);
  *present = 1;
  return NULL;
}

gfx_status ir_attr_ints(const ir_node_desc* d, const char* name, int64_t* out, size_t cap, size_t* n, int* present) {
  *n = 0;
  *present = 0;
  int r = d->attrs.get_ints ? d->attrs.get_ints(d->attrs.ctx, name, out, cap, n) : 0;
  if (r == 0) {
    *n = 0;
    return NULL;
  }
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not a list of ints", name);
  if (*n > cap) return IR_UNSUPPORTED(d, "attribute '%s' has %zu entries, more than %zu", name, *n, cap);
  *present = 1;
  return NULL;
}

gfx_status ir_read_ints(const ir_node_desc* d, const char* name, int64_t* out, size_t want, int64_t min_value,
                        int* present) {
  size_t n = 0;
  int64_t buf[2 * GFX_MAX_RANK + 2];
  int r = d->attrs.get_ints ? d->attrs.get_ints(d->attrs.ctx, name, buf, sizeof buf / sizeof buf[0], &n) : 0;
  *present = r == 1;
  if (r == 0) return NULL;
  if (r < 0) return IR_UNSUPPORTED(d, "attribute '%s' is not a list of ints", name);
  if (n != want) return IR_UNSUPPORTED(d, "attribute '%s' has %zu entries, expected %zu", name, n, want);
  for (size_t i = 0; i < n; i++) {
    if (buf[i] < min_value)
      return IR_UNSUPPORTED(d, "attribute '%s'[%zu] = %lld (must be >= %lld)", name, i, (long long)buf[i],
                            (long long)min_value);
    out[i] = buf[i];
  }
  return NULL;
}

static gfx_status const_input(const ir_node_desc* d, int i, const void** data, size_t* bytes) {
  if (i >= d->n_inputs || d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return IR_UNSUPPORTED(d, "input %d is absent", i);
  if (!d->input_is_const[i] || !d->input_const_data[i])
    return IR_UNSUPPORTED(d, "input %d is computed at run time; gfxep needs it as a constant initializer", i);
  *data = d->input_const_data[i];
  *bytes = d->input_const_bytes[i];
  return NULL;
}

gfx_status ir_const_ints(const ir_node_desc* d, int i, int64_t* out, size_t cap, size_t* n) {
  const void* data;
  size_t bytes;
  GFX_TRY(const_input(d, i, &data, &bytes));
  int t = d->input_dtypes[i];
  size_t es = t == GFX_DTYPE_I64 ? 8 : t == GFX_DTYPE_I32 ? 4 : 0;
  if (!es) return IR_UNSUPPORTED(d, "input %d is %s; an integer tensor is expected", i, gfx_dtype_name(t));
  if (bytes % es) return IR_UNSUPPORTED(d, "input %d holds %zu bytes, not whole elements", i, bytes);
  *n = bytes / es;
  if (*n > cap) return IR_UNSUPPORTED(d, "input %d has %zu values, more than the %zu handled", i, *n, cap);
  for (size_t k = 0; k < *n; k++) {
    if (es == 8) {
      int64_t v;
      memcpy(&v, (const char*)data + 8 * k, 8);
      out[k] = v;
    } else {
      int32_t v;
      memcpy(&v, (const char*)data + 4 * k, 4);
      out[k] = v;
    }
  }
  return NULL;
}

gfx_status ir_const_floats(const ir_node_desc* d, int i, float* out, size_t cap, size_t* n) {
  const void* data;
  size_t bytes;
  GFX_TRY(const_input(d, i, &data, &bytes));
  int t = d->input_dtypes[i];
  size_t es = t == GFX_DTYPE_F32 ? 4 : (t == GFX_DTYPE_F16 || t == GFX_DTYPE_BF16) ? 2 : t == 11 /* double */ ? 8 : 0;
  if (!es) return IR_UNSUPPORTED(d, "input %d is %s; a float tensor is expected", i, gfx_dtype_name(t));
  if (bytes % es) return IR_UNSUPPORTED(d, "input %d holds %zu bytes, not whole elements", i, bytes);
  *n = bytes / es;
  if (*n > cap) return IR_UNSUPPORTED(d, "input %d has %zu values, more than the %zu handled", i, *n, cap);
  for (size_t k = 0; k < *n; k++) {
    const char* p = (const char*)data + es * k;
    if (t == GFX_DTYPE_F32) {
      memcpy(&out[k], p, 4);
    } else if (t == 11) {
      double v;
      memcpy(&v, p, 8);
      out[k] = (float)v;
    } else {
      uint16_t h;
      memcpy(&h, p, 2);
      out[k] = t == GFX_DTYPE_F16 ? gfx_half_to_float(h) : gfx_bf16_to_float(h);
    }
  }
  return NULL;
}

gfx_status ir_norm_axis(const ir_node_desc* d, int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank) return IR_UNSUPPORTED(d, "axis %lld is outside [-%d, %d)", (long long)axis, rank, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return NULL;
}
int ir_op_channels_last_capable(const char* op_type) {
  /* Resize: a plain Resize of the N, H, W, C tensor (H and W resize: ir_resize_geom's general form) */
  static const char* const ops[] = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op_type, ops[i]) == 0) return 1;
  return 0;
}

/* The NHWC domain's Resize: the axes attribute and the roi are not permuted by the transformer. */
static gfx_status resize_may_be_channels_last(const ir_node_desc* d, const ir_resize_params* r) {
  int64_t axes[GFX_MAX_RANK + 1];
  size_t n_axes = 0;
  int has_axes = 0;
  GFX_TRY(ir_attr_ints(d, "axes", axes, GFX_MAX_RANK + 1, &n_axes, &has_axes));
  if (has_axes || r->coord == IR_COORD_TF_CROP_AND_RESIZE || r->value_inputs || r->rank != 4)
    return IR_UNSUPPORTED(d, "a channels-last Resize with %s",
                          has_axes             ? "the axes attribute"
                          : r->value_inputs    ? "sizes computed at run time"
                          : r->rank != 4       ? "an input of rank other than 4"
                                               : "tf_crop_and_resize");
  return NULL;
}

gfx_status ir_params_channels_last(gfx_op op, const ir_node_desc* d, const ir_params* params, ir_params* out) {
  *out = *params;
  const int nhwc = d->domain && strcmp(d->domain, IR_NHWC_DOMAIN) == 0;
  if (nhwc) return NULL;
  switch (op) {
    case GFX_OP_CONV:
      if (params->conv.spatial != 2) break;
      out->conv.channels_last = 1;
      return NULL;
    case GFX_OP_MAX_POOL:
    case GFX_OP_AVERAGE_POOL:
      if (params->pool.n_spatial != 2) break;
      out->pool.channels_last = 1;
      return NULL;
    case GFX_OP_GLOBAL_AVERAGE_POOL:
    case GFX_OP_GLOBAL_MAX_POOL:
      if (d->input_shapes[0].rank != 4) break;
      out->reduce.global_pool = 0;
      out->reduce.n_axes = 2;
      out->reduce.axes[0] = 1;
      out->reduce.axes[1] = 2;
      return NULL;
    case GFX_OP_RESIZE: {
      GFX_TRY(resize_may_be_channels_last(d, &params->resize));
      static const int from_nchw[4] = {0, 2, 3, 1}; /* NHWC dim k is NCHW dim from_nchw[k] */
      const ir_resize_params* r = &params->resize;
      out->resize.policy_axes = 0;
      for (int k = 0; k < 4; k++) {
        out->resize.scales[k] = r->scales[from_nchw[k]];
        out->resize.sizes[k] = r->sizes[from_nchw[k]];
        if (r->policy_axes & (1 << from_nchw[k])) out->resize.policy_axes |= 1 << k;
      }
      out->resize.leading = 1; /* H may resize: a dim before the last two */
      return NULL;
    }
    default: break;
  }
  return IR_UNSUPPORTED(d, "no channels-last form of this node");
}

gfx_status ir_op_parse(const ir_node_desc* d, gfx_op* op, ir_params* params) {
  /* ONNX Runtime's layout transformer hands a Conv over channels-last in its internal domain, where
   * the EP asked for it (layout=nhwc) */
  const int nhwc = d->domain && strcmp(d->domain, IR_NHWC_DOMAIN) == 0;
  if (nhwc && !ir_op_channels_last_capable(d->op_type))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': only Conv, pooling and Resize are handled channels-last (domain '%s')",
                     d->op_type, d->name, d->domain);
  if (d->domain && d->domain[0] && strcmp(d->domain, "ai.onnx") != 0 && !nhwc)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': domain '%s' is not handled", d->op_type, d->name, d->domain);
  gfx_op found = ir_op_from_name(d->op_type);
  if (found == GFX_OP_NONE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': operator not in gfxep's op table", d->op_type, d->name);
  if (d->since_version < op_table[found].min_opset)
    return IR_UNSUPPORTED(d, "opset version %d; versions from %d are handled", d->since_version,
                       op_table[found].min_opset);
  if (d->n_inputs > IR_MAX_IO || d->n_outputs > IR_MAX_IO)
    return IR_UNSUPPORTED(d, "%d inputs and %d outputs exceed %d", d->n_inputs, d->n_outputs, IR_MAX_IO);
  ir_params p;
  memset(&p, 0, sizeof p);
  GFX_TRY(op_table[found].parse(d, &p));
  /* the layout transformer permutes the input and constant scales or sizes into N, H, W, C order,
   * but neither the roi nor the axes attribute */
  if (nhwc && found == GFX_OP_RESIZE) GFX_TRY(resize_may_be_channels_last(d, &p.resize));
  if (nhwc && found == GFX_OP_CONV) {
    if (p.conv.spatial != 2)
      return IR_UNSUPPORTED(d, "a channels-last Conv over %d spatial dims; 2 are handled", p.conv.spatial);
    p.conv.channels_last = 1;
  }
  /* an Einsum the parser accepted is a batched matrix product (ir_parse_einsum): from here on it is a
   * MatMul, so every backend's product kernel and the fusions take it as one */
  *op = found == GFX_OP_EINSUM ? GFX_OP_MATMUL : found;
  *params = p;
  return NULL;
}

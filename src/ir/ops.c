/* gfxep — the op table's parse functions: which nodes gfxep takes, and their parameters.
 *
 * A parse function either fills ir_params from the node's attributes and returns NULL, or returns
 * GFX_ERR_NOT_SUPPORTED with a message that says exactly why the node stays with ONNX Runtime.
 * Anything not understood — an unknown attribute, an unusual value, a type not handled — is a
 * reason not to claim the node: gfxep never guesses.
 */
#include <string.h>

#include "ir/graph.h"

typedef gfx_status (*ir_parse_fn)(const ir_node_desc* d, ir_params* p);
gfx_status ir_parse_binary(const ir_node_desc* d, ir_params* p);
gfx_status ir_parse_unary(const ir_node_desc* d, ir_params* p);
gfx_status ir_parse_conv(const ir_node_desc* d, ir_params* p);
gfx_status ir_parse_matmul(const ir_node_desc* d, ir_params* p);

static const struct op_entry {
  const char* name;
  int min_opset;
  ir_parse_fn parse;
  const char* summary;
} op_table[GFX_OP_COUNT] = {
#define GFX_OP(id, onnx_name, min_opset, parse, infer, summary) [GFX_OP_##id] = {onnx_name, min_opset, parse, summary},
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

#define UNSUPPORTED(d, ...) gfx_status_wrap(gfx_error(GFX_ERR_NOT_SUPPORTED, __VA_ARGS__), "%s '%s'", (d)->op_type, (d)->name)

/* Every attribute on the node must be one this op understands. */
static gfx_status check_known_attrs(const ir_node_desc* d, const char* const* known) {
  int n = d->attrs.count ? d->attrs.count(d->attrs.ctx) : 0;
  for (int i = 0; i < n; i++) {
    const char* name = d->attrs.name_at(d->attrs.ctx, i);
    int found = 0;
    for (const char* const* k = known; *k && !found; k++) found = strcmp(*k, name) == 0;
    if (!found) return UNSUPPORTED(d, "attribute '%s' is not handled", name);
  }
  return NULL;
}

static gfx_status check_io(const ir_node_desc* d, int min_in, int max_in, int n_out) {
  if (d->n_inputs < min_in || d->n_inputs > max_in)
    return UNSUPPORTED(d, "%d inputs (expected %d..%d)", d->n_inputs, min_in, max_in);
  if (d->n_outputs != n_out) return UNSUPPORTED(d, "%d outputs (expected %d)", d->n_outputs, n_out);
  /* the required inputs must be there: an absent one (an empty name in ONNX) is no tensor */
  for (int i = 0; i < min_in; i++)
    if (d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return UNSUPPORTED(d, "required input %d is absent", i);
  return NULL;
}

/* The element types this foundation handles; fp16 and others come with the full op set. */
static gfx_status check_float32(const ir_node_desc* d) {
  for (int i = 0; i < d->n_inputs; i++)
    if (d->input_dtypes[i] != GFX_DTYPE_UNDEFINED && d->input_dtypes[i] != GFX_DTYPE_F32)
      return UNSUPPORTED(d, "input %d is %s; only float32 is handled", i, gfx_dtype_name(d->input_dtypes[i]));
  for (int i = 0; i < d->n_outputs; i++)
    if (d->output_dtypes[i] != GFX_DTYPE_F32)
      return UNSUPPORTED(d, "output %d is %s; only float32 is handled", i, gfx_dtype_name(d->output_dtypes[i]));
  return NULL;
}

gfx_status ir_parse_binary(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(check_io(d, 2, 2, 1));
  GFX_TRY(check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(check_float32(d));
  for (int i = 0; i < 2; i++)
    if (d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return UNSUPPORTED(d, "input %d is absent", i);
  return NULL;
}

gfx_status ir_parse_unary(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(check_io(d, 1, 1, 1));
  GFX_TRY(check_known_attrs(d, (const char* const[]){NULL}));
  return check_float32(d);
}

gfx_status ir_parse_matmul(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(check_io(d, 2, 2, 1));
  GFX_TRY(check_known_attrs(d, (const char* const[]){NULL}));
  GFX_TRY(check_float32(d));
  for (int i = 0; i < 2; i++)
    if (d->input_shapes[i].rank < 2)
      return UNSUPPORTED(d, "input %d has rank %d; operands of rank >= 2 are handled", i, d->input_shapes[i].rank);
  return NULL;
}

/* Reads an int list attribute of exactly `want` entries, each >= min_value. */
static gfx_status read_ints(const ir_node_desc* d, const char* name, int64_t* out, size_t want, int64_t min_value,
                            int* present) {
  size_t n = 0;
  int64_t buf[2 * IR_MAX_SPATIAL + 2];
  int r = d->attrs.get_ints ? d->attrs.get_ints(d->attrs.ctx, name, buf, sizeof buf / sizeof buf[0], &n) : 0;
  *present = r == 1;
  if (r == 0) return NULL;
  if (r < 0) return UNSUPPORTED(d, "attribute '%s' is not a list of ints", name);
  if (n != want) return UNSUPPORTED(d, "attribute '%s' has %zu entries, expected %zu", name, n, want);
  for (size_t i = 0; i < n; i++) {
    if (buf[i] < min_value)
      return UNSUPPORTED(d, "attribute '%s'[%zu] = %lld (must be >= %lld)", name, i, (long long)buf[i],
                         (long long)min_value);
    out[i] = buf[i];
  }
  return NULL;
}

gfx_status ir_parse_conv(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(check_io(d, 2, 3, 1));
  GFX_TRY(check_known_attrs(d, (const char* const[]){"auto_pad", "dilations", "group", "kernel_shape", "pads",
                                                      "strides", NULL}));
  GFX_TRY(check_float32(d));
  int rank = d->input_shapes[1].rank >= 0 ? d->input_shapes[1].rank : d->input_shapes[0].rank;
  if (rank != 4) return UNSUPPORTED(d, "rank %d; 2-D convolution (rank 4, NCHW) is handled", rank);
  if (d->input_shapes[0].rank >= 0 && d->input_shapes[0].rank != rank)
    return UNSUPPORTED(d, "input rank %d and weight rank %d differ", d->input_shapes[0].rank, rank);
  ir_conv_params c;
  memset(&c, 0, sizeof c);
  c.spatial = rank - 2;
  c.group = 1;
  for (int i = 0; i < c.spatial; i++) c.strides[i] = c.dilations[i] = 1;

  int present;
  GFX_TRY(read_ints(d, "kernel_shape", c.kernel, (size_t)c.spatial, 1, &present));
  GFX_TRY(read_ints(d, "strides", c.strides, (size_t)c.spatial, 1, &present));
  GFX_TRY(read_ints(d, "dilations", c.dilations, (size_t)c.spatial, 1, &present));
  GFX_TRY(read_ints(d, "pads", c.pads, 2 * (size_t)c.spatial, 0, &present));
  int64_t group = 1;
  int r = d->attrs.get_int ? d->attrs.get_int(d->attrs.ctx, "group", &group) : 0;
  if (r < 0) return UNSUPPORTED(d, "attribute 'group' is not an int");
  if (group < 1) return UNSUPPORTED(d, "group = %lld (must be >= 1)", (long long)group);
  c.group = group;

  char pad[32] = "NOTSET";
  r = d->attrs.get_string ? d->attrs.get_string(d->attrs.ctx, "auto_pad", pad, sizeof pad) : 0;
  if (r < 0) return UNSUPPORTED(d, "attribute 'auto_pad' is not a string");
  if (strcmp(pad, "NOTSET") == 0)
    c.auto_pad = IR_PAD_NOTSET;
  else if (strcmp(pad, "SAME_UPPER") == 0)
    c.auto_pad = IR_PAD_SAME_UPPER;
  else if (strcmp(pad, "SAME_LOWER") == 0)
    c.auto_pad = IR_PAD_SAME_LOWER;
  else if (strcmp(pad, "VALID") == 0)
    c.auto_pad = IR_PAD_VALID;
  else
    return UNSUPPORTED(d, "auto_pad = '%s' is not an ONNX value", pad);
  if (c.auto_pad != IR_PAD_NOTSET && present) {
    for (int i = 0; i < 2 * c.spatial; i++)
      if (c.pads[i] != 0) return UNSUPPORTED(d, "both auto_pad = '%s' and non-zero pads are set", pad);
  }

  if (c.auto_pad == IR_PAD_SAME_UPPER || c.auto_pad == IR_PAD_SAME_LOWER)
    for (int i = 0; i < c.spatial; i++)
      if (c.dilations[i] != 1)
        /* ONNX Runtime's own kernels refuse this combination, so there is no oracle to agree with */
        return UNSUPPORTED(d, "auto_pad = '%s' with dilations > 1", pad);

  const gfx_shape* w = &d->input_shapes[1];
  if (w->rank == 4 && w->dims[1] > 0 && d->input_shapes[0].rank == 4 && d->input_shapes[0].dims[1] > 0 &&
      (w->dims[1] > INT64_MAX / c.group || w->dims[1] * c.group != d->input_shapes[0].dims[1]))
    return UNSUPPORTED(d, "weight %lld input channels x group %lld != input channels %lld", (long long)w->dims[1],
                       (long long)c.group, (long long)d->input_shapes[0].dims[1]);
  p->conv = c;
  return NULL;
}

gfx_status ir_op_parse(const ir_node_desc* d, gfx_op* op, ir_params* params) {
  if (d->domain && d->domain[0] && strcmp(d->domain, "ai.onnx") != 0)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': domain '%s' is not handled", d->op_type, d->name, d->domain);
  gfx_op found = ir_op_from_name(d->op_type);
  if (found == GFX_OP_NONE)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s '%s': operator not in gfxep's op table", d->op_type, d->name);
  if (d->since_version < op_table[found].min_opset)
    return UNSUPPORTED(d, "opset version %d; versions from %d are handled", d->since_version,
                       op_table[found].min_opset);
  if (d->n_inputs > IR_MAX_IO || d->n_outputs > IR_MAX_IO)
    return UNSUPPORTED(d, "%d inputs and %d outputs exceed %d", d->n_inputs, d->n_outputs, IR_MAX_IO);
  ir_params p;
  memset(&p, 0, sizeof p);
  GFX_TRY(op_table[found].parse(d, &p));
  *op = found;
  *params = p;
  return NULL;
}

/* gfxep — parse and shape functions of the element-wise ops (see ir/ops.def): unary activations and
 * math, broadcasting binary and variadic ops, comparisons, Where, Cast and inference-mode
 * BatchNormalization. */
#include <float.h>
#include <string.h>

#include "ir/ops_common.h"
#include "ir/shape.h"

/* Every element type the element-wise kernels can move; data movement (Identity, Where) takes all. */
#define EW_TYPES_MOVE                                                                                          \
  (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL) | IR_TYPE_BIT(GFX_DTYPE_U8) |                 \
   IR_TYPE_BIT(GFX_DTYPE_I8))
/* What Cast converts between. */
#define EW_TYPES_CAST (IR_TYPES_FLOAT | IR_TYPES_INDEX | IR_TYPE_BIT(GFX_DTYPE_BOOL))

static const char* const no_attrs[] = {NULL};

/* A shape for a message; the compound literal lives until the end of the enclosing block. */
#define SHAPE_STR(s) gfx_shape_str((s), (char[96]){0}, 96)

/* ---- unary ---- */

/* Clip's bound number `i` (1 = min, 2 = max) from opset 11 on: an optional constant input holding
 * one value; absent means no bound. */
static gfx_status clip_bound_input(const ir_node_desc* d, int i, int* has, float* value) {
  *has = 0;
  if (i >= d->n_inputs || d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return NULL;
  size_t n = 0;
  GFX_TRY(ir_const_floats(d, i, value, 1, &n));
  if (n != 1) return IR_UNSUPPORTED(d, "input %d holds %zu values; a bound is one value", i, n);
  *has = 1;
  return NULL;
}

static gfx_status parse_clip(const ir_node_desc* d, ir_elementwise_params* p) {
  if (d->since_version < 11) {
    /* Clip-6: bounds are attributes, absent ones meaning the float range */
    GFX_TRY(ir_check_io(d, 1, 1, 1));
    GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"min", "max", NULL}));
    GFX_TRY(ir_attr_float(d, "min", -FLT_MAX, &p->min));
    GFX_TRY(ir_attr_float(d, "max", FLT_MAX, &p->max));
    p->has_min = p->has_max = 1;
    return NULL;
  }
  GFX_TRY(ir_check_io(d, 1, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  GFX_TRY(clip_bound_input(d, 1, &p->has_min, &p->min));
  return clip_bound_input(d, 2, &p->has_max, &p->max);
}

/* Reads the attributes of the activations that have any; every other unary op has none. */
static gfx_status parse_unary_attrs(const ir_node_desc* d, gfx_op op, ir_elementwise_params* p) {
  switch (op) {
    case GFX_OP_LEAKY_RELU:
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", NULL}));
      return ir_attr_float(d, "alpha", 0.01f, &p->alpha);
    case GFX_OP_HARD_SIGMOID:
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", "beta", NULL}));
      GFX_TRY(ir_attr_float(d, "alpha", 0.2f, &p->alpha));
      return ir_attr_float(d, "beta", 0.5f, &p->beta);
    case GFX_OP_ELU:
    case GFX_OP_THRESHOLDED_RELU:
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", NULL}));
      return ir_attr_float(d, "alpha", 1.0f, &p->alpha);
    case GFX_OP_CELU:
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", NULL}));
      GFX_TRY(ir_attr_float(d, "alpha", 1.0f, &p->alpha));
      if (!(p->alpha != 0.0f)) return IR_UNSUPPORTED(d, "alpha %g: Celu divides by it", (double)p->alpha);
      return NULL;
    case GFX_OP_SELU:
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"alpha", "gamma", NULL}));
      GFX_TRY(ir_attr_float(d, "alpha", 1.67326319217681884765625f, &p->alpha));
      return ir_attr_float(d, "gamma", 1.05070102214813232421875f, &p->gamma);
    case GFX_OP_GELU: {
      char approximate[16];
      GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"approximate", NULL}));
      GFX_TRY(ir_attr_string(d, "approximate", "none", approximate, sizeof approximate));
      if (strcmp(approximate, "tanh") == 0) {
        p->gelu_tanh = 1;
      } else if (strcmp(approximate, "none") != 0) {
        return IR_UNSUPPORTED(d, "approximate '%s'; 'none' and 'tanh' are handled", approximate);
      }
      return NULL;
    }
    case GFX_OP_CLIP: return parse_clip(d, p);
    default: return ir_check_known_attrs(d, no_attrs);
  }
}

gfx_status ir_parse_unary(const ir_node_desc* d, ir_params* p) {
  gfx_op op = ir_op_from_name(d->op_type);
  if (op != GFX_OP_CLIP) GFX_TRY(ir_check_io(d, 1, 1, 1));
  /* Neg and Abs are exact in integers too; everything else is float math */
  unsigned types = op == GFX_OP_NEG || op == GFX_OP_ABS ? IR_TYPES_FLOAT | IR_TYPES_INDEX : IR_TYPES_FLOAT;
  GFX_TRY(ir_check_same_type(d, 0, d->n_inputs - 1, types, NULL));
  return parse_unary_attrs(d, op, &p->elementwise);
}

gfx_status ir_parse_identity(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  return ir_check_same_type(d, 0, 0, EW_TYPES_MOVE, NULL);
}

/* ---- binary, variadic and comparisons ---- */

/* Pow: a float base; the exponent of any float or integer type (Pow-12 lets the two differ). */
/* An integer Div's divisor: a constant initializer with no zero entry. */
static gfx_status check_const_divisor(const ir_node_desc* d) {
  if (!d->input_is_const[1] || !d->input_const_data[1])
    return IR_UNSUPPORTED(d, "an integer divisor computed at run time (a zero must fail the run in ONNX Runtime)");
  const size_t es = d->input_dtypes[1] == GFX_DTYPE_I64 ? 8 : 4;
  const unsigned char* b = d->input_const_data[1];
  for (size_t i = 0; i < d->input_const_bytes[1] / es; i++) {
    int64_t v;
    if (es == 8) {
      memcpy(&v, b + 8 * i, 8);
    } else {
      int32_t w;
      memcpy(&w, b + 4 * i, 4);
      v = w;
    }
    if (v == 0) return IR_UNSUPPORTED(d, "divisor entry %zu is 0 (ONNX Runtime fails such a run)", i);
  }
  return NULL;
}

static gfx_status parse_pow(const ir_node_desc* d) {
  GFX_TRY(ir_check_same_type(d, 0, 0, IR_TYPES_FLOAT, NULL));
  return ir_check_input_type(d, 1, IR_TYPES_FLOAT | IR_TYPES_INDEX);
}

/* Comparisons: two operands of one type, a bool result. */
static gfx_status parse_compare(const ir_node_desc* d) {
  if (d->output_dtypes[0] != GFX_DTYPE_BOOL)
    return IR_UNSUPPORTED(d, "output 0 is %s; a bool output is expected", gfx_dtype_name(d->output_dtypes[0]));
  GFX_TRY(ir_check_input_type(d, 0, IR_TYPES_FLOAT | IR_TYPES_INDEX));
  if (d->input_dtypes[1] != d->input_dtypes[0])
    return IR_UNSUPPORTED(d, "input 1 is %s but input 0 is %s", gfx_dtype_name(d->input_dtypes[1]),
                          gfx_dtype_name(d->input_dtypes[0]));
  return NULL;
}

gfx_status ir_parse_binary(const ir_node_desc* d, ir_params* p) {
  (void)p;
  gfx_op op = ir_op_from_name(d->op_type);
  int variadic = op == GFX_OP_MIN || op == GFX_OP_MAX || op == GFX_OP_SUM || op == GFX_OP_MEAN;
  GFX_TRY(ir_check_io(d, variadic ? 1 : 2, variadic ? IR_MAX_IO : 2, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  for (int i = 0; i < d->n_inputs; i++)
    if (d->input_dtypes[i] == GFX_DTYPE_UNDEFINED) return IR_UNSUPPORTED(d, "input %d is absent", i);
  switch (op) {
    case GFX_OP_ADD:
    case GFX_OP_SUB:
    case GFX_OP_MUL:
    case GFX_OP_MIN:
    case GFX_OP_MAX: return ir_check_same_type(d, 0, d->n_inputs - 1, IR_TYPES_FLOAT | IR_TYPES_INDEX, NULL);
    /* Integer Div (truncating, as ONNX Runtime's) only by a constant divisor without a zero entry:
     * division by zero must fail the run in ONNX Runtime, and a GPU kernel has no way to report it
     * without a host sync. Detection post-processing divides box indices by the class count. */
    case GFX_OP_DIV:
      if (d->input_dtypes[0] == GFX_DTYPE_I32 || d->input_dtypes[0] == GFX_DTYPE_I64) {
        GFX_TRY(ir_check_same_type(d, 0, 1, IR_TYPES_INDEX, NULL));
        return check_const_divisor(d);
      }
      return ir_check_same_type(d, 0, 1, IR_TYPES_FLOAT, NULL);
    case GFX_OP_SUM:
    case GFX_OP_MEAN:
    case GFX_OP_PRELU: return ir_check_same_type(d, 0, d->n_inputs - 1, IR_TYPES_FLOAT, NULL);
    case GFX_OP_POW: return parse_pow(d);
    case GFX_OP_EQUAL:
    case GFX_OP_GREATER:
    case GFX_OP_LESS:
    case GFX_OP_GREATER_OR_EQUAL:
    case GFX_OP_LESS_OR_EQUAL: return parse_compare(d);
    default: return IR_UNSUPPORTED(d, "not a binary op");
  }
}

gfx_status ir_parse_where(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 3, 3, 1));
  GFX_TRY(ir_check_known_attrs(d, no_attrs));
  GFX_TRY(ir_check_input_type(d, 0, IR_TYPE_BIT(GFX_DTYPE_BOOL)));
  return ir_check_same_type(d, 1, 2, EW_TYPES_MOVE, NULL);
}

/* ---- Cast ---- */

gfx_status ir_parse_cast(const ir_node_desc* d, ir_params* p) {
  (void)p;
  GFX_TRY(ir_check_io(d, 1, 1, 1));
  /* saturate (opset 19) only changes conversions to float8 types, which are refused below */
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"to", "saturate", NULL}));
  int64_t to = 0;
  GFX_TRY(ir_attr_int(d, "to", 0, &to));
  GFX_TRY(ir_check_input_type(d, 0, EW_TYPES_CAST));
  int out = d->output_dtypes[0];
  if (out <= 0 || out >= 32 || !(EW_TYPES_CAST & IR_TYPE_BIT(out)))
    return IR_UNSUPPORTED(d, "output 0 is %s, which Cast does not handle", gfx_dtype_name(out));
  if (d->lowered_to && to == GFX_DTYPE_F32) to = d->lowered_to; /* a Cast to float32, computed lower */
  if (to != out) return IR_UNSUPPORTED(d, "attribute 'to' = %lld but output 0 is %s", (long long)to, gfx_dtype_name(out));
  return NULL;
}

/* ---- BatchNormalization ---- */

gfx_status ir_parse_batchnorm(const ir_node_desc* d, ir_params* p) {
  GFX_TRY(ir_check_known_attrs(d, (const char* const[]){"epsilon", "momentum", "training_mode", NULL}));
  if (d->n_outputs != 1)
    return IR_UNSUPPORTED(d, "%d outputs; only inference (one output) is handled", d->n_outputs);
  GFX_TRY(ir_check_io(d, 5, 5, 1));
  int64_t training = 0;
  GFX_TRY(ir_attr_int(d, "training_mode", 0, &training));
  if (training != 0) return IR_UNSUPPORTED(d, "training_mode = %lld; only inference is handled", (long long)training);
  GFX_TRY(ir_attr_float(d, "epsilon", 1e-5f, &p->elementwise.epsilon));
  GFX_TRY(ir_check_same_type(d, 0, 4, IR_TYPES_FLOAT, NULL));
  const gfx_shape* x = &d->input_shapes[0];
  if (x->rank >= 0 && x->rank < 2) return IR_UNSUPPORTED(d, "input 0 has rank %d; rank >= 2 is needed", x->rank);
  for (int i = 1; i < 5; i++)
    if (d->input_shapes[i].rank >= 0 && d->input_shapes[i].rank != 1)
      return IR_UNSUPPORTED(d, "input %d has rank %d; a per-channel vector is expected", i, d->input_shapes[i].rank);
  return NULL;
}

/* ---- shapes ---- */

/* Broadcast results beyond this are refused: dims that large are no real tensor, and refusing them
 * keeps every offset computation far from overflow. */
#define EW_DIM_LIMIT ((int64_t)1 << 31)

static gfx_status check_result_size(const gfx_shape* s) {
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] > EW_DIM_LIMIT)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "result shape %s has dim %d beyond 2^31", SHAPE_STR(s), i);
  if (gfx_shape_numel(s) < 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "result shape %s has too many elements", SHAPE_STR(s));
  return NULL;
}

/* Numpy broadcasting of every input (Add .. Where, variadic Sum/Mean/Min/Max). */
gfx_status ir_infer_broadcast_all(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  if (node->n_inputs < 1 || in[0].rank < 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; at least one is needed", node->n_inputs);
  gfx_shape full = in[0];
  for (int i = 1; i < node->n_inputs; i++) {
    gfx_shape next;
    gfx_status s = ir_broadcast_shapes(&full, &in[i], &next);
    if (s) return gfx_status_wrap(s, "input %d", i);
    full = next;
  }
  GFX_TRY(check_result_size(&full));
  out[0] = full;
  return NULL;
}

/* PRelu broadcasts the slope to x, never x to the slope: the result has x's shape. */
gfx_status ir_infer_prelu(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  (void)node;
  gfx_shape full;
  GFX_TRY(ir_broadcast_shapes(&in[0], &in[1], &full));
  if (!gfx_shape_equal(&full, &in[0]))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "slope %s does not broadcast to x %s", SHAPE_STR(&in[1]),
                     SHAPE_STR(&in[0]));
  out[0] = in[0];
  return NULL;
}

/* x [N, C, ...]; scale, B, mean and var each [C]. */
gfx_status ir_infer_batchnorm(const ir_node* node, const gfx_shape* in, gfx_shape* out) {
  if (node->n_inputs != 5) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs; 5 are expected", node->n_inputs);
  if (in[0].rank < 2) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "x %s has rank below 2", SHAPE_STR(&in[0]));
  static const char* const names[5] = {"x", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; i++)
    if (in[i].rank != 1 || in[i].dims[0] != in[0].dims[1])
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%s %s is not [%lld], the channels of x %s", names[i],
                       SHAPE_STR(&in[i]), (long long)in[0].dims[1], SHAPE_STR(&in[0]));
  out[0] = in[0];
  return NULL;
}

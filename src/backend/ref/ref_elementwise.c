/* gfxep — reference kernels of the element-wise ops: plain C loops on host memory.
 *
 * Float types (float32, float16, bfloat16) are computed in double and rounded once at the store.
 * Integer types are computed in int64 with two's-complement wrap-around, so int64 stays exact.
 * Data movement (Identity, Where) copies bytes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"
#include "ir/shape.h"

/* ---- element types ---- */

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}
static int is_int_type(int dtype) { return dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64; }

/* Exact integer load of an integer or bool element. */
static int64_t load_int(const void* base, int dtype, int64_t i) {
  const char* p = (const char*)base;
  switch (dtype) {
    case GFX_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    case GFX_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case GFX_DTYPE_BOOL: return p[i] != 0;
    default: return 0;
  }
}

/* Integer store; int32 keeps the low 32 bits (two's complement), as a C cast does on every target. */
static void store_int(void* base, int dtype, int64_t i, int64_t v) {
  char* p = (char*)base;
  switch (dtype) {
    case GFX_DTYPE_I64: memcpy(p + 8 * i, &v, 8); break;
    case GFX_DTYPE_I32: { uint32_t u = (uint32_t)(uint64_t)v; memcpy(p + 4 * i, &u, 4); break; }
    case GFX_DTYPE_BOOL: p[i] = v != 0; break;
    default: break;
  }
}

/* Wrapping integer arithmetic (signed overflow is undefined in C; unsigned wraps). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
/* Truncating division; parse admits only constant divisors without zeros, so b == 0 gives 0 only
 * for a caller that skipped it, and INT64_MIN / -1 wraps instead of trapping. */
static int64_t wrap_div(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? wrap_sub(0, a) : a / b; }

/* ---- checks ---- */


/* ---- numpy broadcasting of up to IR_MAX_IO operands ---- */

typedef struct ew_broadcast {
  int n, rank;
  int64_t dims[GFX_MAX_RANK];
  int64_t strides[IR_MAX_IO][GFX_MAX_RANK];
} ew_broadcast;

/* The broadcast shape of in[0..n), which the output must have; the stride tables to walk it. */
static gfx_status broadcast_init(ew_broadcast* bc, const gfx_tensor* in, int n, const gfx_tensor* out) {
  gfx_shape full = in[0].shape;
  for (int i = 1; i < n; i++) {
    gfx_shape next;
    gfx_status s = ir_broadcast_shapes(&full, &in[i].shape, &next);
    if (s) return gfx_status_wrap(s, "input %d", i);
    full = next;
  }
  GFX_TRY(ref_check_shape_is("output 0", &out->shape, &full));
  bc->n = n;
  bc->rank = full.rank;
  for (int d = 0; d < full.rank; d++) bc->dims[d] = full.dims[d];
  for (int i = 0; i < n; i++) ref_operand_strides(&in[i].shape, &full, bc->strides[i]);
  return NULL;
}

/* Element offsets of every operand for the broadcast shape's element number `linear`. */
static void broadcast_offsets(const ew_broadcast* bc, int64_t linear, int64_t* offsets) {
  for (int i = 0; i < bc->n; i++) offsets[i] = 0;
  for (int d = bc->rank - 1; d >= 0; d--) {
    int64_t coord = linear % bc->dims[d];
    linear /= bc->dims[d];
    for (int i = 0; i < bc->n; i++) offsets[i] += coord * bc->strides[i][d];
  }
}

/* ---- unary ---- */

/* comparisons rather than fmin/fmax, so that NaN passes through as in ONNX Runtime */
static double clamp01(double v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

static double unary_float(gfx_op op, const ir_elementwise_params* p, double x) {
  switch (op) {
    /* written as "x < 0" so that NaN, which compares false, passes through unchanged */
    case GFX_OP_RELU: return x < 0.0 ? 0.0 : x;
    case GFX_OP_LEAKY_RELU: return x < 0.0 ? p->alpha * x : x;
    case GFX_OP_SIGMOID: return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case GFX_OP_TANH: return tanh(x);
    case GFX_OP_HARD_SIGMOID: return clamp01((double)p->alpha * x + p->beta);
    case GFX_OP_HARD_SWISH: return x * clamp01(x / 6.0 + 0.5);
    case GFX_OP_CLIP:
      if (p->has_min && x < p->min) x = p->min;
      if (p->has_max && x > p->max) x = p->max;
      return x;
    case GFX_OP_ELU: return x < 0.0 ? p->alpha * expm1(x) : x;
    case GFX_OP_SELU: return x > 0.0 ? p->gamma * x : (double)p->gamma * p->alpha * expm1(x);
    case GFX_OP_GELU:
      if (p->gelu_tanh) return 0.5 * x * (1.0 + tanh(0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case GFX_OP_ERF: return erf(x);
    /* log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no loss for small */
    case GFX_OP_SOFTPLUS: return fmax(x, 0.0) + log1p(exp(-fabs(x)));
    case GFX_OP_SQRT: return sqrt(x);
    case GFX_OP_EXP: return exp(x);
    case GFX_OP_LOG: return log(x);
    case GFX_OP_NEG: return -x;
    case GFX_OP_ABS: return fabs(x);
    case GFX_OP_RECIPROCAL: return 1.0 / x;
    case GFX_OP_FLOOR: return floor(x);
    case GFX_OP_CEIL: return ceil(x);
    case GFX_OP_ROUND: return nearbyint(x); /* the default rounding mode: halves to even */
    case GFX_OP_SIGN: return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; /* 0 and NaN pass through */
    case GFX_OP_SIN: return sin(x);
    case GFX_OP_COS: return cos(x);
    case GFX_OP_SOFTSIGN: return x / (1.0 + fabs(x));
    case GFX_OP_MISH: return x * tanh(fmax(x, 0.0) + log1p(exp(-fabs(x))));
    case GFX_OP_CELU: return fmax(x, 0.0) + fmin(0.0, p->alpha * expm1(x / p->alpha));
    case GFX_OP_THRESHOLDED_RELU: return x > p->alpha ? x : (isnan(x) ? x : 0.0);
    default: return NAN;
  }
}

static int64_t unary_int(gfx_op op, int64_t x) {
  /* 0 - x in unsigned arithmetic: -INT64_MIN wraps to itself, as on every GPU and CPU */
  int64_t neg = (int64_t)(0 - (uint64_t)x);
  return op == GFX_OP_ABS ? (x < 0 ? neg : x) : neg;
}

static gfx_status run_identity(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(ref_check_io(node, in, out, 1, 1, 1));
  GFX_TRY(ref_check_dtype("output 0", &out[0], in[0].dtype));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  int64_t count = gfx_shape_numel(&in[0].shape);
  if (count > 0 && out[0].data != in[0].data)
    memmove(out[0].data, in[0].data, (size_t)count * gfx_dtype_size(in[0].dtype));
  return NULL;
}

gfx_status ref_run_unary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (node->op == GFX_OP_IDENTITY) return run_identity(node, in, out);
  /* Clip's bound inputs were read at parse time (params); only x is touched here */
  GFX_TRY(ref_check_io(node, in, out, 1, node->op == GFX_OP_CLIP ? 3 : 1, 1));
  const int dtype = in[0].dtype;
  const int int_ok = node->op == GFX_OP_NEG || node->op == GFX_OP_ABS;
  if (!is_float_type(dtype) && !(int_ok && is_int_type(dtype)))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s, which %s does not handle",
                     gfx_dtype_name(dtype), ir_op_name(node->op));
  GFX_TRY(ref_check_dtype("output 0", &out[0], dtype));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  const int64_t count = gfx_shape_numel(&in[0].shape);
  const ir_elementwise_params* p = &node->params.elementwise;
  for (int64_t i = 0; i < count; i++) {
    if (is_int_type(dtype))
      store_int(out[0].data, dtype, i, unary_int(node->op, load_int(in[0].data, dtype, i)));
    else
      ref_store(out[0].data, dtype, i, unary_float(node->op, p, ref_load(in[0].data, dtype, i)));
  }
  return NULL;
}

/* ---- binary, variadic, comparisons ---- */

static int is_compare(gfx_op op) {
  return op == GFX_OP_EQUAL || op == GFX_OP_GREATER || op == GFX_OP_LESS || op == GFX_OP_GREATER_OR_EQUAL ||
         op == GFX_OP_LESS_OR_EQUAL;
}

/* NaN propagates through Min and Max (fmin/fmax would drop it). */
static double min_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

/* The float result of op over v[0..n); comparisons give 1 or 0. */
static double nary_float(gfx_op op, const double* v, int n) {
  switch (op) {
    case GFX_OP_ADD: return v[0] + v[1];
    case GFX_OP_SUB: return v[0] - v[1];
    case GFX_OP_MUL: return v[0] * v[1];
    case GFX_OP_DIV: return v[0] / v[1];
    case GFX_OP_POW: return pow(v[0], v[1]);
    case GFX_OP_PRELU: return v[0] < 0.0 ? v[1] * v[0] : v[0];
    case GFX_OP_EQUAL: return v[0] == v[1];
    case GFX_OP_GREATER: return v[0] > v[1];
    case GFX_OP_LESS: return v[0] < v[1];
    case GFX_OP_GREATER_OR_EQUAL: return v[0] >= v[1];
    case GFX_OP_LESS_OR_EQUAL: return v[0] <= v[1];
    case GFX_OP_MIN:
    case GFX_OP_MAX:
    case GFX_OP_SUM:
    case GFX_OP_MEAN: {
      double r = v[0];
      for (int i = 1; i < n; i++)
        r = op == GFX_OP_MIN ? min_nan(r, v[i]) : op == GFX_OP_MAX ? max_nan(r, v[i]) : r + v[i];
      return op == GFX_OP_MEAN ? r / n : r;
    }
    default: return NAN;
  }
}

static int64_t nary_int(gfx_op op, const int64_t* v, int n) {
  switch (op) {
    case GFX_OP_ADD: return wrap_add(v[0], v[1]);
    case GFX_OP_SUB: return wrap_sub(v[0], v[1]);
    case GFX_OP_MUL: return wrap_mul(v[0], v[1]);
    case GFX_OP_DIV: return wrap_div(v[0], v[1]);
    case GFX_OP_EQUAL: return v[0] == v[1];
    case GFX_OP_GREATER: return v[0] > v[1];
    case GFX_OP_LESS: return v[0] < v[1];
    case GFX_OP_GREATER_OR_EQUAL: return v[0] >= v[1];
    case GFX_OP_LESS_OR_EQUAL: return v[0] <= v[1];
    case GFX_OP_MIN:
    case GFX_OP_MAX: {
      int64_t r = v[0];
      for (int i = 1; i < n; i++) {
        if (op == GFX_OP_MIN && v[i] < r) r = v[i];
        if (op == GFX_OP_MAX && v[i] > r) r = v[i];
      }
      return r;
    }
    default: return 0;
  }
}

/* Which element types each operand and the output must have; NOT_SUPPORTED naming the odd one. */
static gfx_status check_nary_types(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out) {
  const gfx_op op = node->op;
  const int t = in[0].dtype;
  const int int_ok = op == GFX_OP_ADD || op == GFX_OP_SUB || op == GFX_OP_MUL || op == GFX_OP_DIV ||
                     op == GFX_OP_MIN || op == GFX_OP_MAX || is_compare(op);
  if (!is_float_type(t) && !(int_ok && is_int_type(t)))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s, which %s does not handle",
                     gfx_dtype_name(t), ir_op_name(op));
  for (int i = 1; i < node->n_inputs; i++) {
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    if (op == GFX_OP_POW) {
      if (!is_float_type(in[i].dtype) && !is_int_type(in[i].dtype))
        return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s (the exponent) has element type %s", what,
                         gfx_dtype_name(in[i].dtype));
    } else {
      GFX_TRY(ref_check_dtype(what, &in[i], t));
    }
  }
  return ref_check_dtype("output 0", out, is_compare(op) ? GFX_DTYPE_BOOL : t);
}

gfx_status ref_run_binary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  const gfx_op op = node->op;
  const int variadic = op == GFX_OP_MIN || op == GFX_OP_MAX || op == GFX_OP_SUM || op == GFX_OP_MEAN;
  GFX_TRY(ref_check_io(node, in, out, variadic ? 1 : 2, variadic ? IR_MAX_IO : 2, node->n_inputs));
  GFX_TRY(check_nary_types(node, in, out));
  ew_broadcast bc;
  GFX_TRY(broadcast_init(&bc, in, node->n_inputs, &out[0]));
  /* PRelu broadcasts the slope to x only */
  if (op == GFX_OP_PRELU) GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));

  const int n = node->n_inputs;
  const int int_math = is_int_type(in[0].dtype);
  const int64_t count = gfx_shape_numel(&out[0].shape);
  for (int64_t e = 0; e < count; e++) {
    int64_t off[IR_MAX_IO];
    broadcast_offsets(&bc, e, off);
    if (int_math) {
      int64_t v[IR_MAX_IO] = {0};
      for (int i = 0; i < n; i++) v[i] = load_int(in[i].data, in[i].dtype, off[i]);
      store_int(out[0].data, out[0].dtype, e, nary_int(op, v, n));
    } else {
      double v[IR_MAX_IO] = {0};
      for (int i = 0; i < n; i++) v[i] = ref_load(in[i].data, in[i].dtype, off[i]);
      ref_store(out[0].data, out[0].dtype, e, nary_float(op, v, n));
    }
  }
  return NULL;
}

/* ---- Where ---- */

gfx_status ref_run_where(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 3, 3, 3));
  GFX_TRY(ref_check_dtype("input 0", &in[0], GFX_DTYPE_BOOL));
  GFX_TRY(ref_check_dtype("input 2", &in[2], in[1].dtype));
  GFX_TRY(ref_check_dtype("output 0", &out[0], in[1].dtype));
  ew_broadcast bc;
  GFX_TRY(broadcast_init(&bc, in, 3, &out[0]));
  const size_t size = gfx_dtype_size(out[0].dtype);
  const int64_t count = gfx_shape_numel(&out[0].shape);
  const char* cond = in[0].data;
  for (int64_t e = 0; e < count; e++) {
    int64_t off[3];
    broadcast_offsets(&bc, e, off);
    const int pick = cond[off[0]] ? 1 : 2;
    memcpy((char*)out[0].data + (size_t)e * size, (const char*)in[pick].data + (size_t)off[pick] * size, size);
  }
  return NULL;
}

/* ---- Cast ---- */

/* Float to integer as ONNX Runtime's CPU provider does on x86-64: truncation toward zero, and the
 * type's minimum for NaN and for values out of range (what the cvtt instructions return). */
static int64_t float_to_int(double v, int dtype) {
  const double lo = dtype == GFX_DTYPE_I32 ? -2147483648.0 : -9223372036854775808.0;
  if (!(v >= lo && v < -lo)) return dtype == GFX_DTYPE_I32 ? INT32_MIN : INT64_MIN;
  return (int64_t)v;
}

static void cast_element(const gfx_tensor* src, gfx_tensor* dst, int64_t i) {
  if (is_float_type(src->dtype)) {
    double v = ref_load(src->data, src->dtype, i);
    if (is_int_type(dst->dtype))
      store_int(dst->data, dst->dtype, i, float_to_int(v, dst->dtype));
    else
      ref_store(dst->data, dst->dtype, i, v); /* NaN != 0 makes NaN true for bool, as in C++ */
    return;
  }
  int64_t v = load_int(src->data, src->dtype, i);
  if (is_float_type(dst->dtype))
    /* through float, so that an int64 beyond 2^53 rounds once, as static_cast<float> does */
    ref_store(dst->data, dst->dtype, i, (double)(float)v);
  else
    store_int(dst->data, dst->dtype, i, dst->dtype == GFX_DTYPE_BOOL ? v != 0 : v);
}

gfx_status ref_run_cast(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 1, 1, 1));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  const int64_t count = gfx_shape_numel(&in[0].shape);
  for (int64_t i = 0; i < count; i++) cast_element(&in[0], &out[0], i);
  return NULL;
}

/* ---- BatchNormalization (inference) ---- */

gfx_status ref_run_batchnorm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                             gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(ref_check_io(node, in, out, 5, 5, 5));
  const int t = in[0].dtype;
  if (!is_float_type(t))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s; float types are handled",
                     gfx_dtype_name(t));
  static const char* const names[5] = {"input 0", "input 1", "input 2", "input 3", "input 4"};
  for (int i = 1; i < 5; i++) GFX_TRY(ref_check_dtype(names[i], &in[i], t));
  GFX_TRY(ref_check_dtype("output 0", &out[0], t));
  gfx_shape expected[1];
  gfx_shape shapes[5];
  for (int i = 0; i < 5; i++) shapes[i] = in[i].shape;
  GFX_TRY(ir_infer_batchnorm(node, shapes, expected));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &expected[0]));

  const int64_t channels = in[0].shape.dims[1];
  int64_t inner = 1; /* elements per channel and batch item */
  for (int d = 2; d < in[0].shape.rank; d++) inner *= in[0].shape.dims[d];
  const int64_t count = gfx_shape_numel(&in[0].shape);
  const double eps = node->params.elementwise.epsilon;
  for (int64_t i = 0; i < count; i++) {
    const int64_t c = i / inner % channels;
    const double x = ref_load(in[0].data, t, i);
    const double scale = ref_load(in[1].data, t, c), bias = ref_load(in[2].data, t, c);
    const double mean = ref_load(in[3].data, t, c), var = ref_load(in[4].data, t, c);
    ref_store(out[0].data, t, i, (x - mean) / sqrt(var + eps) * scale + bias);
  }
  return NULL;
}

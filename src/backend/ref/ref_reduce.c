/* gfxep — reference kernels of the reduction, normalization (LRN too) and pooling ops: plain C loops on host memory.
 *
 * Every kernel computes in double through ref_load/ref_store (float32, float16 and bfloat16 alike)
 * and rounds once when it stores. Index math comes from the geometry helpers of ir/ops_reduce.h,
 * which the CUDA kernels use too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/ref/ref_dtype.h"
#include "backend/ref/ref_kernels.h"
#include "ir/ops_reduce.h"
#include "ir/shape.h"

/* ---- checks ---- */

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}

static int is_int_type(int dtype) { return dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64; }

/* The integer reductions (ir_parse_reduce admits int32/int64 for these kinds only). */
static int int_reduction(const ir_node* node) {
  if (node->op != GFX_OP_REDUCE_SUM && node->op != GFX_OP_REDUCE_MAX && node->op != GFX_OP_REDUCE_MIN &&
      node->op != GFX_OP_REDUCE_PROD)
    return 0;
  const ir_reduce_kind k = node->params.reduce.kind;
  return k == IR_REDUCE_SUM || k == IR_REDUCE_MAX || k == IR_REDUCE_MIN || k == IR_REDUCE_PROD;
}

static gfx_status check_float_tensor(const char* what, const gfx_tensor* t, int dtype) {
  if (t->dtype != dtype || !is_float_type(dtype))
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "%s has element type %s; %s expected (float32, float16 or bfloat16)", what,
                     gfx_dtype_name(t->dtype), gfx_dtype_name(dtype));
  return ref_check_memory(what, t);
}

/* Inputs 0..n_inputs-1 (those past min_inputs may be absent) and output 0 all of input 0's type;
 * one output, or up to max_outputs where the op has optional ones (checked where they are written). */
static gfx_status check_io_outputs(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                                   int max_inputs, int typed_inputs, int max_outputs) {
  if (!in || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "no tensors given");
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs || node->n_outputs < 1 ||
      node->n_outputs > max_outputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected %d to %d and 1 to %d",
                     node->n_inputs, node->n_outputs, min_inputs, max_inputs, max_outputs);
  const int dtype = in[0].dtype;
  for (int i = 0; i < node->n_inputs && i < typed_inputs; i++) {
    if (i >= min_inputs && !in[i].data) continue;
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    GFX_TRY(check_float_tensor(what, &in[i], dtype));
  }
  /* ArgMax / ArgMin write int64 indices (checked where they run) */
  if (node->op == GFX_OP_ARG_MAX || node->op == GFX_OP_ARG_MIN) return NULL;
  return check_float_tensor("output 0", &out[0], dtype);
}

static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                           int max_inputs, int typed_inputs) {
  return check_io_outputs(node, in, out, min_inputs, max_inputs, typed_inputs, 1);
}

/* ---- ReduceSum/Mean/Max/Min/L2, GlobalAveragePool, GlobalMaxPool ---- */

/* Offset of element `linear` of a (dims, strides) index list, last dim fastest. */
static int64_t offset_of(int64_t linear, int n, const int64_t* dims, const int64_t* strides) {
  int64_t off = 0;
  for (int d = n - 1; d >= 0; d--) {
    off += linear % dims[d] * strides[d];
    linear /= dims[d];
  }
  return off;
}

/* ReduceLogSumExp: the largest value is subtracted before exponentiating, so nothing overflows; an
 * infinite or absent maximum shifts by 0 (all -inf gives -inf, a +inf gives +inf, NaN stays NaN). */
static double log_sum_exp_one(const void* x, int dtype, int64_t base, const ir_reduce_geom* g) {
  double max = -INFINITY, sum = 0.0;
  for (int64_t r = 0; r < g->reduce_count; r++) {
    const double v = ref_load(x, dtype, base + offset_of(r, g->n_red, g->red_dims, g->red_strides));
    if (v > max) max = v;
  }
  const double shift = isfinite(max) ? max : 0.0;
  for (int64_t r = 0; r < g->reduce_count; r++)
    sum += exp(ref_load(x, dtype, base + offset_of(r, g->n_red, g->red_dims, g->red_strides)) - shift);
  return shift + log(sum);
}

static double reduce_one(ir_reduce_kind kind, const void* x, int dtype, int64_t base, const ir_reduce_geom* g) {
  if (kind == IR_REDUCE_LOG_SUM_EXP) return log_sum_exp_one(x, dtype, base, g);
  double acc = kind == IR_REDUCE_MAX ? -INFINITY : kind == IR_REDUCE_MIN ? INFINITY : kind == IR_REDUCE_PROD ? 1.0 : 0.0;
  for (int64_t r = 0; r < g->reduce_count; r++) {
    const double v = ref_load(x, dtype, base + offset_of(r, g->n_red, g->red_dims, g->red_strides));
    switch (kind) {
      case IR_REDUCE_SUM: case IR_REDUCE_MEAN: acc += v; break;
      case IR_REDUCE_L2: case IR_REDUCE_SUM_SQUARE: acc += v * v; break;
      case IR_REDUCE_L1: acc += fabs(v); break;
      case IR_REDUCE_PROD: acc *= v; break;
      case IR_REDUCE_LOG_SUM_EXP: break; /* log_sum_exp_one's, never here */
      case IR_REDUCE_ARGMAX: case IR_REDUCE_ARGMIN: break; /* arg_one's, never here */
      /* a NaN anywhere makes the result NaN */
      case IR_REDUCE_MAX: if (v > acc || isnan(v)) acc = isnan(acc) ? acc : v; break;
      case IR_REDUCE_MIN: if (v < acc || isnan(v)) acc = isnan(acc) ? acc : v; break;
    }
  }
  if (kind == IR_REDUCE_MEAN) acc /= (double)g->reduce_count; /* an empty mean is 0/0 = NaN */
  if (kind == IR_REDUCE_L2) acc = sqrt(acc);
  return acc;
}

/* ArgMax / ArgMin over the one reduced axis: the first extreme, or with select_last the last; a NaN
 * never compares better, so it is chosen only where it comes first. */
static int64_t arg_one(ir_reduce_kind kind, int select_last, const void* x, int dtype, int64_t base,
                       const ir_reduce_geom* g) {
  int64_t best_i = 0;
  double best = g->reduce_count > 0 ? ref_load(x, dtype, base) : 0.0;
  for (int64_t r = 1; r < g->reduce_count; r++) {
    const double v = ref_load(x, dtype, base + offset_of(r, g->n_red, g->red_dims, g->red_strides));
    const int better = kind == IR_REDUCE_ARGMAX ? (select_last ? v >= best : v > best) : (select_last ? v <= best : v < best);
    if (better) best = v, best_i = r;
  }
  return best_i;
}

static int64_t load_i(const void* x, int dtype, int64_t i) {
  if (dtype == GFX_DTYPE_I64) return ((const int64_t*)x)[i];
  return ((const int32_t*)x)[i];
}

/* An integer reduction, exact: sums and products wrap as two's complement (int32 keeps the low 32
 * bits), an empty Min/Max is the type's largest/smallest value (ONNX Runtime's identities). */
static gfx_status run_reduce_int(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const int dtype = in[0].dtype;
  if (!in[0].data && gfx_shape_numel(&in[0].shape) > 0)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "input 0 has no data");
  if (out[0].dtype != dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "output 0 is %s but input 0 is %s", gfx_dtype_name(out[0].dtype),
                     gfx_dtype_name(dtype));
  ir_reduce_geom g;
  GFX_TRY(ir_reduce_geometry(&node->params.reduce, &in[0].shape, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, g.copy ? &in[0].shape : &g.out));
  const int64_t n_out = g.copy ? gfx_shape_numel(&in[0].shape) : g.out_count;
  const int i64 = dtype == GFX_DTYPE_I64;
  const ir_reduce_kind kind = node->params.reduce.kind;
  for (int64_t o = 0; o < n_out; o++) {
    uint64_t acc;
    if (g.copy) {
      acc = (uint64_t)load_i(in[0].data, dtype, o);
    } else {
      const int64_t base = offset_of(o, g.n_kept, g.kept_dims, g.kept_strides);
      const int64_t hi = i64 ? INT64_MAX : INT32_MAX, lo = i64 ? INT64_MIN : INT32_MIN;
      acc = kind == IR_REDUCE_MIN ? (uint64_t)hi : kind == IR_REDUCE_MAX ? (uint64_t)lo : kind == IR_REDUCE_PROD ? 1 : 0;
      for (int64_t r = 0; r < g.reduce_count; r++) {
        const int64_t v = load_i(in[0].data, dtype, base + offset_of(r, g.n_red, g.red_dims, g.red_strides));
        if (kind == IR_REDUCE_SUM) acc += (uint64_t)v;
        else if (kind == IR_REDUCE_PROD) acc *= (uint64_t)v;
        else if (kind == IR_REDUCE_MIN && v < (int64_t)acc) acc = (uint64_t)v;
        else if (kind == IR_REDUCE_MAX && v > (int64_t)acc) acc = (uint64_t)v;
      }
    }
    if (i64) ((int64_t*)out[0].data)[o] = (int64_t)acc;
    else ((int32_t*)out[0].data)[o] = (int32_t)(uint32_t)acc;
  }
  return NULL;
}

gfx_status ref_run_reduce(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (in && out && node->n_inputs >= 1 && node->n_outputs == 1 && is_int_type(in[0].dtype) && int_reduction(node))
    return run_reduce_int(node, in, out);
  GFX_TRY(check_io(node, in, out, 1, 2, 1));
  ir_reduce_geom g;
  GFX_TRY(ir_reduce_geometry(&node->params.reduce, &in[0].shape, &g));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, g.copy ? &in[0].shape : &g.out));
  const int dtype = in[0].dtype;
  if (g.copy) {
    const int64_t n = gfx_shape_numel(&in[0].shape);
    if (n > 0) memcpy(out[0].data, in[0].data, (size_t)n * gfx_dtype_size(dtype));
    return NULL;
  }
  const ir_reduce_kind kind = node->params.reduce.kind;
  if (kind == IR_REDUCE_ARGMAX || kind == IR_REDUCE_ARGMIN) {
    if (g.reduce_count == 0 && g.out_count > 0)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: %s over an axis of size 0 has no index to give",
                       ir_op_name(node->op));
    if (out[0].dtype != GFX_DTYPE_I64)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "reference backend: %s output is %s; int64 is expected",
                       ir_op_name(node->op), gfx_dtype_name(out[0].dtype));
    for (int64_t o = 0; o < g.out_count; o++)
      ((int64_t*)out[0].data)[o] =
          arg_one(kind, node->params.reduce.select_last, in[0].data, dtype, offset_of(o, g.n_kept, g.kept_dims, g.kept_strides), &g);
    return NULL;
  }
  for (int64_t o = 0; o < g.out_count; o++) {
    const int64_t base = offset_of(o, g.n_kept, g.kept_dims, g.kept_strides);
    ref_store(out[0].data, dtype, o, reduce_one(kind, in[0].data, dtype, base, &g));
  }
  return NULL;
}

/* ---- MaxPool, AveragePool ---- */

/* One output element of one (N, C) volume, 2-D pooling being a depth of 1 (ir_pool_geom); the
 * volume's element at spatial index s is element `first + s * step` of x (step 1 for NCHW, C for
 * channels-last). Taps in the padding are skipped: MaxPool ignores them, AveragePool divides by the
 * taps inside the input, or with count_include_pad by the window clipped to the padded input (a
 * ceil_mode window reaching past the end padding counts only up to it). */
static double pool_one(const ir_pool_params* p, const ir_pool_geom* g, const void* x, int64_t first, int64_t step,
                       int dtype, const int64_t o[3]) {
  const int64_t in_size[3] = {g->in_d, g->in_h, g->in_w};
  int64_t start[3];
  for (int j = 0; j < 3; j++) start[j] = o[j] * g->strides[j] - g->pad_begin[j];
  double acc = p->kind == IR_POOL_MAX ? -INFINITY : 0.0;
  int64_t taps = 0;
  for (int64_t kd = 0; kd < g->kernel[0]; kd++) {
    const int64_t id = start[0] + kd * g->dilations[0];
    if (id < 0 || id >= g->in_d) continue;
    for (int64_t kh = 0; kh < g->kernel[1]; kh++) {
      const int64_t ih = start[1] + kh * g->dilations[1];
      if (ih < 0 || ih >= g->in_h) continue;
      for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
        const int64_t iw = start[2] + kw * g->dilations[2];
        if (iw < 0 || iw >= g->in_w) continue;
        const double v = ref_load(x, dtype, first + ((id * g->in_h + ih) * g->in_w + iw) * step);
        if (p->kind == IR_POOL_MAX)
          acc = (v > acc || isnan(v)) && !isnan(acc) ? v : acc;
        else
          acc += v;
        taps++;
      }
    }
  }
  if (p->kind == IR_POOL_MAX) return acc;
  if (p->count_include_pad) {
    taps = 1;
    for (int j = 0; j < 3; j++) {
      const int64_t end = start[j] + g->kernel[j] < in_size[j] + g->pad_end[j] ? start[j] + g->kernel[j]
                                                                               : in_size[j] + g->pad_end[j];
      taps *= end - start[j];
    }
  }
  return taps > 0 ? acc / (double)taps : NAN;
}

gfx_status ref_run_pool(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(check_io(node, in, out, 1, 1, 1));
  ir_pool_geom g;
  GFX_TRY(ir_pool_geometry(&node->params.pool, &in[0].shape, &g));
  gfx_shape y;
  GFX_TRY(ir_infer_pool(node, &in[0].shape, &y));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &y));
  const int dtype = in[0].dtype;
  const int64_t in_volume = g.in_d * g.in_h * g.in_w, out_volume = g.out_d * g.out_h * g.out_w;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t c = 0; c < g.c; c++) {
      /* NCHW: volume (n, c) is contiguous; channels-last: its elements are C apart */
      const int64_t first = g.channels_last ? n * in_volume * g.c + c : (n * g.c + c) * in_volume;
      const int64_t step = g.channels_last ? g.c : 1;
      int64_t o[3], e = 0; /* e: the output's spatial index */
      for (o[0] = 0; o[0] < g.out_d; o[0]++)
        for (o[1] = 0; o[1] < g.out_h; o[1]++)
          for (o[2] = 0; o[2] < g.out_w; o[2]++, e++) {
            const int64_t at = g.channels_last ? (n * out_volume + e) * g.c + c : (n * g.c + c) * out_volume + e;
            ref_store(out[0].data, dtype, at, pool_one(&node->params.pool, &g, in[0].data, first, step, dtype, o));
          }
    }
  return NULL;
}

/* ---- Softmax, LogSoftmax, LpNormalization ---- */

gfx_status ref_run_softmax(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(check_io(node, in, out, 1, 1, 1));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  ir_softmax_geom g;
  GFX_TRY(ir_softmax_geometry(&node->params.softmax, &in[0].shape, &g));
  const int dtype = in[0].dtype;
  const void* x = in[0].data;
  const int lp = node->params.softmax.lp;
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++) {
      const int64_t base = o * g.n * g.inner + i;
      if (lp) { /* LpNormalization: a zero norm gives zeros, as ONNX Runtime does */
        double norm = 0.0;
        for (int64_t k = 0; k < g.n; k++) {
          const double v = ref_load(x, dtype, base + k * g.inner);
          norm += lp == 1 ? fabs(v) : v * v;
        }
        if (lp == 2) norm = sqrt(norm);
        for (int64_t k = 0; k < g.n; k++)
          ref_store(out[0].data, dtype, base + k * g.inner, norm != 0.0 ? ref_load(x, dtype, base + k * g.inner) / norm : 0.0);
        continue;
      }
      /* subtracting the maximum keeps exp from overflowing */
      double max = -INFINITY, sum = 0.0;
      for (int64_t k = 0; k < g.n; k++) {
        const double v = ref_load(x, dtype, base + k * g.inner);
        max = v > max ? v : max;
      }
      for (int64_t k = 0; k < g.n; k++) sum += exp(ref_load(x, dtype, base + k * g.inner) - max);
      for (int64_t k = 0; k < g.n; k++) {
        const double v = ref_load(x, dtype, base + k * g.inner) - max;
        ref_store(out[0].data, dtype, base + k * g.inner, node->params.softmax.log ? v - log(sum) : exp(v) / sum);
      }
    }
  return NULL;
}

/* ---- LayerNormalization, InstanceNormalization, GroupNormalization ---- */

/* LayerNormalization's optional Mean (output 1) and InvStdDev (output 2): one value per row, in
 * their own float type. */
static gfx_status check_norm_stats(const ir_node* node, const gfx_tensor* x, const gfx_tensor* out) {
  for (int o = 1; o < node->n_outputs; o++) {
    gfx_shape want;
    GFX_TRY(ir_norm_stats_shape(&node->params.norm, &x->shape, &want));
    char what[32];
    snprintf(what, sizeof what, "output %d", o);
    GFX_TRY(check_float_tensor(what, &out[o], out[o].dtype));
    GFX_TRY(ref_check_shape_is(what, &out[o].shape, &want));
  }
  return NULL;
}

/* x + r rounded to their type, as the Add before the normalization wrote it. */
static double rounded_sum(const gfx_tensor* in, int64_t i) {
  unsigned char cell[8];
  const int dtype = in[0].dtype;
  ref_store(cell, dtype, 0, ref_load(in[0].data, dtype, i) + ref_load(in[IR_NORM_RESIDUAL_INPUT].data, dtype, i));
  return ref_load(cell, dtype, 0);
}

/* LayerNormalization of x + r (a residual Add fused in, ir/fuse_norm.c): the sum rounded to the
 * type is what is normalized and, with a second output, what that output holds. */
static gfx_status run_add_layer_norm(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  if (!in || !out || node->n_inputs != 4 || node->n_outputs < 1 || node->n_outputs > 2)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; a residual LayerNormalization has 4 and 1 or 2",
                     node->n_inputs, node->n_outputs);
  const int types[4] = {0, 1, 2, IR_NORM_RESIDUAL_INPUT};
  for (int k = 0; k < 4; k++) {
    if (types[k] == 2 && !in[2].data) continue; /* no bias */
    char what[32];
    snprintf(what, sizeof what, "input %d", types[k]);
    GFX_TRY(check_float_tensor(what, &in[types[k]], in[0].dtype));
  }
  GFX_TRY(check_float_tensor("output 0", &out[0], in[0].dtype));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  GFX_TRY(ref_check_shape_is("input 3 (residual)", &in[IR_NORM_RESIDUAL_INPUT].shape, &in[0].shape));
  const int has_sum = node->n_outputs > 1;
  if (has_sum) {
    GFX_TRY(check_float_tensor("output 1 (sum)", &out[1], in[0].dtype));
    GFX_TRY(ref_check_shape_is("output 1 (sum)", &out[1].shape, &in[0].shape));
  }
  ir_norm_geom g;
  GFX_TRY(ir_norm_geometry(&node->params.norm, &in[0].shape, &in[1].shape, &g));
  const int has_bias = in[2].data != NULL;
  if (has_bias) GFX_TRY(ref_check_shape_is("input 2 (bias)", &in[2].shape, &in[1].shape));
  const int dtype = in[0].dtype;
  const double eps = node->params.norm.epsilon;
  double* row = malloc(sizeof *row * (size_t)(g.count > 0 ? g.count : 1));
  if (!row) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "a row of %lld elements", (long long)g.count);
  for (int64_t r = 0; r < g.rows; r++) {
    const int64_t base = r * g.count;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < g.count; j++) {
      row[j] = rounded_sum(in, base + j);
      if (has_sum) ref_store(out[1].data, dtype, base + j, row[j]);
      mean += row[j];
    }
    mean /= (double)g.count;
    for (int64_t j = 0; j < g.count; j++) var += (row[j] - mean) * (row[j] - mean);
    var /= (double)g.count;
    const double inv_std = 1.0 / sqrt(var + eps);
    for (int64_t j = 0; j < g.count; j++) {
      double y = (row[j] - mean) * inv_std * ref_load(in[1].data, dtype, j);
      if (has_bias) y += ref_load(in[2].data, dtype, j);
      ref_store(out[0].data, dtype, base + j, y);
    }
  }
  free(row);
  return NULL;
}

/* A value rounded to the element type, as a node storing it would leave it. */
static double rounded(int dtype, double v) {
  unsigned char b[8] = {0};
  ref_store(b, dtype, 0, v);
  return ref_load(b, dtype, 0);
}

/* Mirror index of i in [0, n) (reflect padding: no edge repeat; |pad| < n, checked at shape time). */
static int64_t reflected(int64_t i, int64_t n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; }

/* InstanceNormalization with its fused epilogue (ir_norm_params): act(norm(x) [+ input 3]), each
 * step rounded as the separate nodes stored it, written with reflect padding when it has it. */
static gfx_status run_norm_epilogue(const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  const ir_norm_params* p = &node->params.norm;
  if (node->n_inputs < 2 || node->n_inputs > IR_NORM_RESIDUAL_INPUT + 1 || node->n_outputs != 1 ||
      (p->add_after && node->n_inputs != IR_NORM_RESIDUAL_INPUT + 1))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs for an InstanceNormalization epilogue",
                     node->n_inputs, node->n_outputs);
  gfx_shape shapes[IR_NORM_RESIDUAL_INPUT + 1], want;
  for (int i = 0; i < node->n_inputs; i++) shapes[i] = in[i].shape;
  GFX_TRY(ir_infer_norm(node, shapes, &want));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &want));
  ir_norm_geom g;
  GFX_TRY(ir_norm_geometry(p, &in[0].shape, &in[1].shape, &g));
  const int has_bias = node->n_inputs >= 3 && in[2].data;
  const int dtype = in[0].dtype;
  const int64_t h = in[0].shape.dims[2], w = in[0].shape.dims[3], oh = want.dims[2], ow = want.dims[3];
  const int top = p->reflect_pad ? p->out_pads[0] : 0, left = p->reflect_pad ? p->out_pads[1] : 0;
  for (int64_t r = 0; r < g.rows; r++) {
    const int64_t base = r * g.count;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < g.count; j++) mean += ref_load(in[0].data, dtype, base + j);
    mean /= (double)g.count;
    for (int64_t j = 0; j < g.count; j++) {
      const double d = ref_load(in[0].data, dtype, base + j) - mean;
      var += d * d;
    }
    const double inv_std = 1.0 / sqrt(var / (double)g.count + p->epsilon);
    const int64_t a = r % g.affine_mod * g.affine_mul; /* the channel's scale and bias */
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++) {
        const int64_t src = base + reflected(oy - top, h) * w + reflected(ox - left, w);
        double y = (ref_load(in[0].data, dtype, src) - mean) * inv_std * ref_load(in[1].data, dtype, a);
        if (has_bias) y += ref_load(in[2].data, dtype, a);
        y = rounded(dtype, y);
        if (p->add_after) y = rounded(dtype, y + ref_load(in[IR_NORM_RESIDUAL_INPUT].data, dtype, src));
        if (p->activation == IR_ACT_RELU && y < 0.0) y = 0.0;
        ref_store(out[0].data, dtype, (r * oh + oy) * ow + ox, y);
      }
  }
  return NULL;
}

gfx_status ref_run_norm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  if (ir_norm_has_epilogue(&node->params.norm)) {
    if (node->params.norm.kind != IR_NORM_INSTANCE)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "an epilogue on a normalization other than InstanceNormalization");
    if (node->params.norm.activation != IR_ACT_NONE && node->params.norm.activation != IR_ACT_RELU)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "an InstanceNormalization epilogue activation other than Relu");
    return run_norm_epilogue(node, in, out);
  }
  if (node->params.norm.residual) {
    if (node->params.norm.kind != IR_NORM_LAYER)
      return gfx_error(GFX_ERR_INVALID_ARGUMENT, "a residual input on a normalization other than LayerNormalization");
    return run_add_layer_norm(node, in, out);
  }
  const int is_layer = node->params.norm.kind == IR_NORM_LAYER, is_rms = node->params.norm.kind == IR_NORM_RMS;
  GFX_TRY(check_io_outputs(node, in, out, is_layer || is_rms ? 2 : 3, is_rms ? 2 : 3, 3, is_layer ? 3 : 1));
  GFX_TRY(check_norm_stats(node, &in[0], out));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  ir_norm_geom g;
  GFX_TRY(ir_norm_geometry(&node->params.norm, &in[0].shape, &in[1].shape, &g));
  const int has_bias = node->n_inputs >= 3 && in[2].data;
  if (has_bias) GFX_TRY(ref_check_shape_is("input 2 (bias)", &in[2].shape, &in[1].shape));
  const int dtype = in[0].dtype;
  const double eps = node->params.norm.epsilon;
  for (int64_t r = 0; r < g.rows; r++) {
    const int64_t base = r * g.count;
    /* two passes: the mean, then the mean squared deviation from it (RMSNormalization: from 0) */
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < g.count && !is_rms; j++) mean += ref_load(in[0].data, dtype, base + j);
    mean /= (double)g.count;
    for (int64_t j = 0; j < g.count; j++) {
      const double d = ref_load(in[0].data, dtype, base + j) - mean;
      var += d * d;
    }
    var /= (double)g.count;
    const double inv_std = 1.0 / sqrt(var + eps);
    if (node->n_outputs > 1) ref_store(out[1].data, out[1].dtype, r, mean);
    if (node->n_outputs > 2) ref_store(out[2].data, out[2].dtype, r, inv_std);
    for (int64_t j = 0; j < g.count; j++) {
      const int64_t a = r % g.affine_mod * g.affine_mul + (g.affine_wrap ? j / g.affine_div % g.affine_wrap : j / g.affine_div);
      double y = (ref_load(in[0].data, dtype, base + j) - mean) * inv_std * ref_load(in[1].data, dtype, a);
      if (has_bias) y += ref_load(in[2].data, dtype, a);
      ref_store(out[0].data, dtype, base + j, y);
    }
  }
  return NULL;
}

/* ---- LRN ---- */

gfx_status ref_run_lrn(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  (void)ctx;
  GFX_TRY(check_io(node, in, out, 1, 1, 1));
  GFX_TRY(ref_check_shape_is("output 0", &out[0].shape, &in[0].shape));
  ir_lrn_geom g;
  GFX_TRY(ir_lrn_geometry(&node->params.lrn, &in[0].shape, &g));
  const ir_lrn_params* p = &node->params.lrn;
  const int dtype = in[0].dtype;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t c = 0; c < g.c; c++) {
      const int64_t lo = c - g.pre > 0 ? c - g.pre : 0;
      const int64_t hi = c - g.pre + g.size - 1 < g.c - 1 ? c - g.pre + g.size - 1 : g.c - 1;
      for (int64_t s = 0; s < g.spatial; s++) {
        double sum = 0.0;
        for (int64_t k = lo; k <= hi; k++) {
          const double v = ref_load(in[0].data, dtype, (n * g.c + k) * g.spatial + s);
          sum += v * v;
        }
        const int64_t i = (n * g.c + c) * g.spatial + s;
        const double scale = (double)p->bias + (double)p->alpha / (double)g.size * sum;
        ref_store(out[0].data, dtype, i, ref_load(in[0].data, dtype, i) * pow(scale, -(double)p->beta));
      }
    }
  return NULL;
}

/* gfxep CUDA backend — host side of the reduction, normalization and pooling ops: checks and launches
 * (kernels in cuda_reduce.cu). These ops keep no per-node state: their geometry costs a few integer
 * operations per run and travels to the kernels by value. Reductions and normalizations of few
 * long rows ask for scratch memory (see below).
 */
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_reduce.h"
#include "ir/ops_reduce.h"
#include "ir/shape.h"

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

/* Inputs 0..typed-1 (those past min_inputs may be absent) and output 0 share input 0's float type;
 * 1 to max_outputs outputs (the optional ones are checked where they are written). */
static gfx_status check_io_outputs(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                                   int typed, int max_outputs) {
  if (node->n_inputs < min_inputs || node->n_outputs < 1 || node->n_outputs > max_outputs)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT,
                                      "%d inputs and %d outputs; expected at least %d and 1 to %d", node->n_inputs,
                                      node->n_outputs, min_inputs, max_outputs));
  const int dtype = in[0].dtype;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 is %s; float32, float16 or bfloat16 is handled",
                                      gfx_dtype_name(dtype)));
  for (int i = 1; i < typed && i < node->n_inputs; i++)
    if (in[i].data && in[i].dtype != dtype)
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d is %s but input 0 is %s", i,
                                        gfx_dtype_name(in[i].dtype), gfx_dtype_name(dtype)));
  if (out[0].dtype != dtype)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output 0 is %s but input 0 is %s",
                                      gfx_dtype_name(out[0].dtype), gfx_dtype_name(dtype)));
  return NULL;
}

static gfx_status check_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out, int min_inputs,
                           int typed) {
  return check_io_outputs(node, in, out, min_inputs, typed, 1);
}

static gfx_status check_shape(const ir_node* node, const char* what, const gfx_shape* actual, const gfx_shape* expected) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[128], e[128];
  return node_error(node, gfx_error(GFX_ERR_INTERNAL, "%s has shape %s; expected %s", what,
                                    gfx_shape_str(actual, a, sizeof a), gfx_shape_str(expected, e, sizeof e)));
}

static gfx_status launched(const gfx_exec_ctx* ctx, const ir_node* node, cudaError_t err) {
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

#define STATELESS_PREPARE(kernel)                                                                           \
  gfx_status cuda_prepare_##kernel(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out, \
                                   cuda_node_state** state, size_t* scratch_bytes) {                          \
    (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;                          \
    return NULL; /* stateless; run checks the shapes */                                                       \
  }

STATELESS_PREPARE(pool)
STATELESS_PREPARE(lrn)
STATELESS_PREPARE(softmax)

/* ---- splitting few long rows (cuda_row_split) ----
 * Reductions and normalizations whose rows are too few to fill the GPU and long enough to share
 * split each row across blocks, which write partial results to the node's scratch memory. The
 * split is a pure function of the shapes: prepare asks for the scratch it needs and run derives
 * the same split again; a run without that scratch falls back to one block per row. */

static int is_arg(ir_reduce_kind kind) { return kind == IR_REDUCE_ARGMAX || kind == IR_REDUCE_ARGMIN; }

static size_t reduce_split_bytes(ir_reduce_kind kind, const ir_reduce_geom* g, int64_t* chunks, int64_t* chunk_len) {
  *chunks = 1;
  *chunk_len = g->reduce_count;
  if (is_arg(kind) || kind == IR_REDUCE_LOG_SUM_EXP) return 0;      /* one thread or block per output */
  if (g->copy || g->n_red != 1 || g->red_strides[0] != 1) return 0; /* contiguous rows only */
  cuda_row_split(g->out_count, g->reduce_count, chunks, chunk_len);
  return *chunks > 1 ? (size_t)(g->out_count * *chunks) * sizeof(float) : 0;
}

static size_t norm_split_bytes(const ir_norm_geom* g, int64_t* chunks, int64_t* chunk_len) {
  cuda_row_split(g->rows, g->count, chunks, chunk_len);
  return *chunks > 1 ? (size_t)(g->rows * *chunks) * 2 * sizeof(float) : 0;
}

/* An InstanceNormalization with a fused epilogue always computes its statistics first, into scratch
 * (one chunk per row at least). */
static size_t norm_epilogue_bytes(const ir_norm_geom* g, int64_t* chunks, int64_t* chunk_len) {
  cuda_row_split(g->rows, g->count, chunks, chunk_len);
  return (size_t)(g->rows * *chunks) * 2 * sizeof(float);
}

gfx_status cuda_prepare_reduce(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)state;
  ir_reduce_geom g;
  gfx_status s = ir_reduce_geometry(&node->params.reduce, &in[0], &g);
  if (s) { /* run reports it */
    gfx_status_free(s);
    return NULL;
  }
  int64_t chunks, chunk_len;
  *scratch_bytes = reduce_split_bytes(node->params.reduce.kind, &g, &chunks, &chunk_len);
  return NULL;
}

gfx_status cuda_prepare_norm(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)out, (void)state;
  if (node->n_inputs < 2 || node->params.norm.residual) return NULL; /* run reports it; a residual one needs no scratch */
  ir_norm_geom g;
  gfx_status s = ir_norm_geometry(&node->params.norm, &in[0], &in[1], &g);
  if (s) {
    gfx_status_free(s);
    return NULL;
  }
  int64_t chunks, chunk_len;
  *scratch_bytes = ir_norm_has_epilogue(&node->params.norm) ? norm_epilogue_bytes(&g, &chunks, &chunk_len)
                                                           : norm_split_bytes(&g, &chunks, &chunk_len);
  return NULL;
}

/* The kernels' view of a geometry (chunks and scratch are set by the caller where it splits rows). */
static cuda_reduce_args reduce_args(int kind, const ir_reduce_geom* g) {
  cuda_reduce_args a;
  memset(&a, 0, sizeof a);
  a.kind = kind;
  a.n_kept = g->n_kept;
  a.n_red = g->n_red;
  a.out_count = g->out_count;
  a.reduce_count = g->reduce_count;
  memcpy(a.kept_dims, g->kept_dims, sizeof a.kept_dims);
  memcpy(a.kept_strides, g->kept_strides, sizeof a.kept_strides);
  memcpy(a.red_dims, g->red_dims, sizeof a.red_dims);
  memcpy(a.red_strides, g->red_strides, sizeof a.red_strides);
  a.chunks = 1;
  a.chunk_len = g->reduce_count;
  return a;
}

/* ---- ArgMax, ArgMin ---- */

/* A float input (as check_io), int64 indices out. */
static gfx_status check_arg_io(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out) {
  if (node->n_inputs != 1 || node->n_outputs != 1)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs; expected 1 and 1",
                                      node->n_inputs, node->n_outputs));
  const int dtype = in[0].dtype;
  if (dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 is %s; float32, float16 or bfloat16 is handled",
                                      gfx_dtype_name(dtype)));
  if (out[0].dtype != GFX_DTYPE_I64)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output 0 is %s; int64 is expected",
                                      gfx_dtype_name(out[0].dtype)));
  return NULL;
}

static gfx_status run_arg(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(check_arg_io(node, in, out));
  ir_reduce_geom g;
  gfx_status s = ir_reduce_geometry(&node->params.reduce, &in[0].shape, &g);
  if (s) return node_error(node, s);
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &g.out));
  /* as the reference backend (and ONNX Runtime) do: an empty axis has no index to give */
  if (g.reduce_count == 0 && g.out_count > 0)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "an axis of size 0 has no index to give"));
  cuda_reduce_args a =
      reduce_args(node->params.reduce.kind == IR_REDUCE_ARGMAX ? CUDA_REDUCE_ARGMAX : CUDA_REDUCE_ARGMIN, &g);
  a.select_last = node->params.reduce.select_last;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_arg_run(in[0].dtype, in[0].data, out[0].data, a, (cudaStream_t)ctx->stream));
}

/* ---- ReduceSum/Mean/Max/Min/L2/L1/SumSquare, GlobalAveragePool, GlobalMaxPool ---- */

gfx_status cuda_run_reduce(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  (void)state;
  if (is_arg(node->params.reduce.kind)) return run_arg(ctx, node, in, out);
  const ir_reduce_kind rk = node->params.reduce.kind;
  const int int_input = node->n_inputs >= 1 && in && (in[0].dtype == GFX_DTYPE_I32 || in[0].dtype == GFX_DTYPE_I64);
  if (int_input) {
    /* Sum/Max/Min/Prod of int32/int64 (ir_parse_reduce admits no other), one strategy, no scratch */
    if (!(rk == IR_REDUCE_SUM || rk == IR_REDUCE_MAX || rk == IR_REDUCE_MIN || rk == IR_REDUCE_PROD) ||
        node->n_outputs != 1 || out[0].dtype != in[0].dtype)
      return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "%s of %s to %s is not handled", ir_op_name(node->op),
                                        gfx_dtype_name(in[0].dtype), gfx_dtype_name(out[0].dtype)));
  } else {
    GFX_TRY(check_io(node, in, out, 1, 1));
  }
  ir_reduce_geom g;
  gfx_status s = ir_reduce_geometry(&node->params.reduce, &in[0].shape, &g);
  if (s) return node_error(node, s);
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, g.copy ? &in[0].shape : &g.out));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  if (g.copy) {
    const size_t bytes = (size_t)gfx_shape_numel(&in[0].shape) * gfx_dtype_size(in[0].dtype);
    if (bytes == 0 || out[0].data == in[0].data) return NULL;
    return launched(ctx, node,
                    cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)ctx->stream));
  }
  static const int kinds[] = {[IR_REDUCE_SUM] = CUDA_REDUCE_SUM, [IR_REDUCE_MEAN] = CUDA_REDUCE_MEAN,
                              [IR_REDUCE_MAX] = CUDA_REDUCE_MAX, [IR_REDUCE_MIN] = CUDA_REDUCE_MIN,
                              [IR_REDUCE_L2] = CUDA_REDUCE_L2, [IR_REDUCE_L1] = CUDA_REDUCE_L1,
                              [IR_REDUCE_SUM_SQUARE] = CUDA_REDUCE_SUM_SQUARE, [IR_REDUCE_ARGMAX] = -1,
                              [IR_REDUCE_ARGMIN] = -1, [IR_REDUCE_PROD] = CUDA_REDUCE_PROD,
                              [IR_REDUCE_LOG_SUM_EXP] = CUDA_REDUCE_LOG_SUM_EXP};
  const int kind = (int)node->params.reduce.kind;
  if (kind < 0 || kind > IR_REDUCE_LOG_SUM_EXP || kinds[kind] < 0) /* a kind added to the IR without a kernel here */
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "reduction kind %d has no CUDA kernel", kind));
  cuda_reduce_args a = reduce_args(kinds[kind], &g);
  const size_t split_bytes =
      int_input ? 0 : reduce_split_bytes(node->params.reduce.kind, &g, &a.chunks, &a.chunk_len);
  if (split_bytes > 0 && ctx->scratch && ctx->scratch_bytes >= split_bytes) {
    a.scratch = ctx->scratch;
  } else {
    a.chunks = 1;
    a.chunk_len = g.reduce_count;
  }
  return launched(ctx, node, cuda_reduce_run(in[0].dtype, in[0].data, out[0].data, a, (cudaStream_t)ctx->stream));
}

/* ---- MaxPool, AveragePool ---- */

gfx_status cuda_run_pool(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  (void)state;
  GFX_TRY(check_io(node, in, out, 1, 1));
  ir_pool_geom g;
  gfx_status s = ir_pool_geometry(&node->params.pool, &in[0].shape, &g);
  if (s) return node_error(node, s);
  gfx_shape y;
  s = ir_infer_pool(node, &in[0].shape, &y);
  if (s) return node_error(node, s);
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &y));
  cuda_pool_args a = {
      .kind = node->params.pool.kind == IR_POOL_MAX ? 0 : 1,
      .count_include_pad = node->params.pool.count_include_pad,
      .channels = g.channels_last ? g.c : 1,
      .volumes = g.channels_last ? g.n : g.n * g.c,
      .in_size = {g.in_d, g.in_h, g.in_w},
      .out_size = {g.out_d, g.out_h, g.out_w},
  };
  for (int i = 0; i < 3; i++) {
    a.kernel[i] = g.kernel[i];
    a.strides[i] = g.strides[i];
    a.dilations[i] = g.dilations[i];
    a.pad_begin[i] = g.pad_begin[i];
    a.pad_end[i] = g.pad_end[i];
  }
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_pool_run(in[0].dtype, in[0].data, out[0].data, a, (cudaStream_t)ctx->stream));
}

/* ---- Softmax, LogSoftmax ---- */

gfx_status cuda_run_softmax(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                            cuda_node_state* state) {
  (void)state;
  GFX_TRY(check_io(node, in, out, 1, 1));
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &in[0].shape));
  ir_softmax_geom g;
  gfx_status s = ir_softmax_geometry(&node->params.softmax, &in[0].shape, &g);
  if (s) return node_error(node, s);
  cuda_softmax_args a = {.log = node->params.softmax.log, .lp = node->params.softmax.lp, .outer = g.outer, .n = g.n,
                         .inner = g.inner};
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_softmax_run(in[0].dtype, in[0].data, out[0].data, a, (cudaStream_t)ctx->stream));
}

/* ---- LayerNormalization, InstanceNormalization, GroupNormalization ---- */

/* LayerNormalization's optional Mean and InvStdDev outputs: one value per row, float32 or the
 * input's type, both alike. */
static gfx_status norm_stats_outputs(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out,
                                     cuda_norm_args* a) {
  if (node->n_outputs < 2) return NULL;
  gfx_shape want;
  gfx_status s = ir_norm_stats_shape(&node->params.norm, &in[0].shape, &want);
  if (s) return node_error(node, s);
  const int stats_dtype = out[1].dtype;
  for (int o = 1; o < node->n_outputs; o++) {
    GFX_TRY(check_shape(node, o == 1 ? "output 1 (Mean)" : "output 2 (InvStdDev)", &out[o].shape, &want));
    if (out[o].dtype != stats_dtype || (stats_dtype != GFX_DTYPE_F32 && stats_dtype != in[0].dtype))
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "output %d is %s; float32 or %s is expected", o,
                                        gfx_dtype_name(out[o].dtype), gfx_dtype_name(in[0].dtype)));
  }
  a->stats_f32 = stats_dtype == GFX_DTYPE_F32;
  a->mean = out[1].data;
  a->inv_std = node->n_outputs > 2 ? out[2].data : NULL;
  return NULL;
}

/* LayerNormalization of input 0 + input 3 (ir/fuse_norm.c), writing the sum too when the node has a
 * second output. */
static gfx_status run_add_layer_norm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                     gfx_tensor* out) {
  if (node->params.norm.kind != IR_NORM_LAYER || node->n_inputs != IR_NORM_RESIDUAL_INPUT + 1 || node->n_outputs < 1 ||
      node->n_outputs > 2)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs for a residual LayerNormalization",
                                      node->n_inputs, node->n_outputs));
  const int dtype = in[0].dtype;
  const gfx_tensor* r = &in[IR_NORM_RESIDUAL_INPUT];
  if ((dtype != GFX_DTYPE_F32 && dtype != GFX_DTYPE_F16 && dtype != GFX_DTYPE_BF16) || r->dtype != dtype ||
      in[1].dtype != dtype || (in[2].data && in[2].dtype != dtype) || out[0].dtype != dtype ||
      (node->n_outputs > 1 && out[1].dtype != dtype))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "a residual LayerNormalization of %s", gfx_dtype_name(dtype)));
  GFX_TRY(check_shape(node, "input 3 (residual)", &r->shape, &in[0].shape));
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &in[0].shape));
  if (node->n_outputs > 1) GFX_TRY(check_shape(node, "output 1 (sum)", &out[1].shape, &in[0].shape));
  ir_norm_geom g;
  gfx_status s = ir_norm_geometry(&node->params.norm, &in[0].shape, &in[1].shape, &g);
  if (s) return node_error(node, s);
  if (in[2].data) GFX_TRY(check_shape(node, "input 2 (bias)", &in[2].shape, &in[1].shape));
  const cuda_add_norm_args a = {.rows = g.rows, .count = g.count, .epsilon = node->params.norm.epsilon};
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_add_norm_run(dtype, in[0].data, r->data, in[1].data, in[2].data, out[0].data,
                                               node->n_outputs > 1 ? out[1].data : NULL, a, (cudaStream_t)ctx->stream));
}

/* InstanceNormalization with its fused Add, Relu and reflect Pad (ir/fuse_norm_epilogue.c). */
static gfx_status run_norm_epilogue(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                    gfx_tensor* out) {
  const ir_norm_params* p = &node->params.norm;
  if (p->kind != IR_NORM_INSTANCE || (p->activation != IR_ACT_NONE && p->activation != IR_ACT_RELU) ||
      node->n_outputs != 1 || node->n_inputs < 2 || node->n_inputs > IR_NORM_RESIDUAL_INPUT + 1 ||
      (p->add_after && node->n_inputs != IR_NORM_RESIDUAL_INPUT + 1))
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "an InstanceNormalization epilogue of %d inputs, %d "
                                      "outputs, activation %d", node->n_inputs, node->n_outputs, p->activation));
  const int dtype = in[0].dtype;
  gfx_shape shapes[IR_NORM_RESIDUAL_INPUT + 1], want;
  for (int i = 0; i < node->n_inputs; i++) {
    shapes[i] = in[i].shape;
    if (in[i].data && in[i].dtype != dtype)
      return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "input %d is %s, input 0 %s", i,
                                        gfx_dtype_name(in[i].dtype), gfx_dtype_name(dtype)));
  }
  gfx_status s = ir_infer_norm(node, shapes, &want);
  if (s) return node_error(node, s);
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &want));
  ir_norm_geom g;
  s = ir_norm_geometry(p, &in[0].shape, &in[1].shape, &g);
  if (s) return node_error(node, s);
  const void* bias = node->n_inputs >= 3 ? in[2].data : NULL;
  if (bias) GFX_TRY(check_shape(node, "input 2 (bias)", &in[2].shape, &in[1].shape));
  cuda_norm_epilogue_args a = {
      .norm = {.rows = g.rows, .count = g.count, .affine_mod = g.affine_mod, .affine_mul = g.affine_mul,
               .affine_div = g.affine_div, .affine_wrap = g.affine_wrap, .epsilon = p->epsilon},
      .addend = p->add_after ? in[IR_NORM_RESIDUAL_INPUT].data : NULL,
      .relu = p->activation == IR_ACT_RELU,
      .h = in[0].shape.dims[2], .w = in[0].shape.dims[3], .out_h = want.dims[2], .out_w = want.dims[3],
      .pad_top = p->reflect_pad ? p->out_pads[0] : 0, .pad_left = p->reflect_pad ? p->out_pads[1] : 0};
  const size_t need = norm_epilogue_bytes(&g, &a.norm.chunks, &a.norm.chunk_len);
  if (!ctx->scratch || ctx->scratch_bytes < need)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "%zu bytes of scratch for the statistics, %zu given",
                                      need, ctx->scratch ? ctx->scratch_bytes : 0));
  a.norm.scratch = ctx->scratch;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_norm_epilogue_run(dtype, in[0].data, in[1].data, bias, out[0].data, a,
                                                    (cudaStream_t)ctx->stream));
}

gfx_status cuda_run_norm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  (void)state;
  if (ir_norm_has_epilogue(&node->params.norm)) {
    if (!in || !out) return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "no tensors given"));
    return run_norm_epilogue(ctx, node, in, out);
  }
  if (node->params.norm.residual) {
    if (!in || !out) return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "no tensors given"));
    return run_add_layer_norm(ctx, node, in, out);
  }
  const int is_layer = node->params.norm.kind == IR_NORM_LAYER, is_rms = node->params.norm.kind == IR_NORM_RMS;
  GFX_TRY(check_io_outputs(node, in, out, is_layer || is_rms ? 2 : 3, 3, is_layer ? 3 : 1));
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &in[0].shape));
  ir_norm_geom g;
  gfx_status s = ir_norm_geometry(&node->params.norm, &in[0].shape, &in[1].shape, &g);
  if (s) return node_error(node, s);
  const void* bias = node->n_inputs >= 3 && !is_rms ? in[2].data : NULL;
  if (bias) GFX_TRY(check_shape(node, "input 2 (bias)", &in[2].shape, &in[1].shape));
  cuda_norm_args a = {.rows = g.rows, .count = g.count, .affine_mod = g.affine_mod, .affine_mul = g.affine_mul,
                      .affine_div = g.affine_div, .affine_wrap = g.affine_wrap,
                      .epsilon = node->params.norm.epsilon, .rms = is_rms};
  GFX_TRY(norm_stats_outputs(node, in, out, &a));
  const size_t split_bytes = norm_split_bytes(&g, &a.chunks, &a.chunk_len);
  if (split_bytes > 0 && ctx->scratch && ctx->scratch_bytes >= split_bytes) {
    a.scratch = ctx->scratch;
  } else {
    a.chunks = 1;
    a.chunk_len = g.count;
  }
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_norm_run(in[0].dtype, in[0].data, in[1].data, bias, out[0].data, a,
                                           (cudaStream_t)ctx->stream));
}

/* ---- LRN ---- */

gfx_status cuda_run_lrn(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                        cuda_node_state* state) {
  (void)state;
  GFX_TRY(check_io(node, in, out, 1, 1));
  GFX_TRY(check_shape(node, "output 0", &out[0].shape, &in[0].shape));
  ir_lrn_geom g;
  gfx_status s = ir_lrn_geometry(&node->params.lrn, &in[0].shape, &g);
  if (s) return node_error(node, s);
  const ir_lrn_params* p = &node->params.lrn;
  /* alpha / size in float, as ONNX Runtime's CPU kernel scales each square */
  cuda_lrn_args a = {.n = g.n, .c = g.c, .spatial = g.spatial, .size = g.size, .pre = g.pre,
                     .alpha_over_size = p->alpha / (float)g.size, .beta = p->beta, .bias = p->bias};
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node, cuda_lrn_run(in[0].dtype, in[0].data, out[0].data, a, (cudaStream_t)ctx->stream));
}

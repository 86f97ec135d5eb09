/* gfxep CUDA backend — host side of the element-wise ops: checks and launches (kernels in
 * cuda_elementwise.cu). Element-wise ops need no state: their broadcast plan costs a few integer
 * operations per run. The kernels trust what they are given, so every element type and shape is
 * checked here first. */
#include "backend/cuda/cuda_elementwise.h"
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"

/* ---- checks ---- */

static gfx_status node_error(const ir_node* node, gfx_status s) {
  return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
}

static gfx_status require_io_counts(const ir_node* node, int min_inputs, int max_inputs) {
  if (node->n_inputs < min_inputs || node->n_inputs > max_inputs || node->n_outputs != 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT,
                     "cuda backend: %s node \"%s\" has %d inputs and %d outputs, expected %d..%d and 1",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs, min_inputs,
                     max_inputs);
  return NULL;
}

static int is_float_type(int dtype) {
  return dtype == GFX_DTYPE_F32 || dtype == GFX_DTYPE_F16 || dtype == GFX_DTYPE_BF16;
}
static int is_int_type(int dtype) { return dtype == GFX_DTYPE_I32 || dtype == GFX_DTYPE_I64; }

/* NOT_SUPPORTED naming the tensor unless it has element type `want`. */
static gfx_status require_dtype(const ir_node* node, const gfx_tensor* t, const char* what, int want) {
  if (t->dtype == want) return NULL;
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s is %s; %s is expected",
                   ir_op_name(node->op), cuda_node_name(node), what, gfx_dtype_name(t->dtype),
                   gfx_dtype_name(want));
}

static gfx_status require_shape(const ir_node* node, const gfx_shape* actual, const gfx_shape* expected) {
  if (gfx_shape_equal(actual, expected)) return NULL;
  char a[128], e[128];
  return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output shape %s, expected %s",
                   ir_op_name(node->op), cuda_node_name(node), gfx_shape_str(actual, a, sizeof a),
                   gfx_shape_str(expected, e, sizeof e));
}

static gfx_status launched(const gfx_exec_ctx* ctx, const ir_node* node, cudaError_t err) {
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->dev->index);
}

/* ---- unary ---- */


/* Identity: a device-to-device copy, which graph capture records like a kernel. */
static gfx_status run_identity(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                               gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 1, 1));
  GFX_TRY(require_dtype(node, &out[0], "output 0", in[0].dtype));
  GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  const int64_t count = gfx_shape_numel(&in[0].shape);
  const size_t size = gfx_dtype_size(in[0].dtype);
  if (count < 0 || size == 0)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 of type %s", gfx_dtype_name(in[0].dtype)));
  if (count == 0 || out[0].data == in[0].data) return NULL;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cudaMemcpyAsync(out[0].data, in[0].data, (size_t)count * size, cudaMemcpyDeviceToDevice,
                                  (cudaStream_t)ctx->stream));
}

static gfx_status run_unary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  if (node->op == GFX_OP_IDENTITY) return run_identity(ctx, node, in, out);
  /* the op table sends only its unary family here (cuda_kernels.c); the kernels take gfx_op itself */
  cuda_ew_unary_args args = {0};
  args.op = node->op;
  /* Clip's bound inputs were read at parse time; only x is touched */
  GFX_TRY(require_io_counts(node, 1, node->op == GFX_OP_CLIP ? 3 : 1));
  const int dtype = in[0].dtype;
  const int int_ok = node->op == GFX_OP_NEG || node->op == GFX_OP_ABS;
  if (!is_float_type(dtype) && !(int_ok && is_int_type(dtype)))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s, which is not handled",
                                      gfx_dtype_name(dtype)));
  GFX_TRY(require_dtype(node, &out[0], "output 0", dtype));
  GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  const ir_elementwise_params* p = &node->params.elementwise;
  args.alpha = p->alpha;
  args.beta = p->beta;
  args.gamma = p->gamma;
  args.has_min = p->has_min;
  args.has_max = p->has_max;
  args.min = p->min;
  args.max = p->max;
  args.gelu_tanh = p->gelu_tanh;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_ew_unary(&args, dtype, in[0].data, out[0].data, gfx_shape_numel(&in[0].shape),
                                (cudaStream_t)ctx->stream));
}

/* ---- broadcasting ops ---- */


/* The broadcast shape of in[0..n): the output must have exactly this shape. */
static gfx_status check_broadcast(const ir_node* node, const gfx_tensor* in, int n, const gfx_shape* out) {
  gfx_shape full = in[0].shape;
  for (int i = 1; i < n; i++) {
    gfx_shape next;
    gfx_status s = ir_broadcast_shapes(&full, &in[i].shape, &next);
    if (s) return node_error(node, s);
    full = next;
  }
  if (gfx_shape_numel(&full) < 0)
    return node_error(node, gfx_error(GFX_ERR_INVALID_ARGUMENT, "the broadcast shape is not concrete"));
  return require_shape(node, out, &full);
}

/* The element types ir_parse_binary admits, checked again: the kernels reinterpret memory. */
static gfx_status check_broadcast_types(const ir_node* node, const gfx_tensor* in, const gfx_tensor* out) {
  const gfx_op op = node->op;
  const int t = in[0].dtype;
  const int compare = op == GFX_OP_EQUAL || op == GFX_OP_GREATER || op == GFX_OP_LESS ||
                      op == GFX_OP_GREATER_OR_EQUAL || op == GFX_OP_LESS_OR_EQUAL;
  const int int_ok = op == GFX_OP_ADD || op == GFX_OP_SUB || op == GFX_OP_MUL || op == GFX_OP_DIV || op == GFX_OP_MIN ||
                     op == GFX_OP_MAX || compare;
  if (!is_float_type(t) && !(int_ok && is_int_type(t)))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s, which is not handled",
                                      gfx_dtype_name(t)));
  for (int i = 1; i < node->n_inputs; i++) {
    if (op == GFX_OP_POW) {
      if (!is_float_type(in[i].dtype) && !is_int_type(in[i].dtype))
        return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "exponent of type %s", gfx_dtype_name(in[i].dtype)));
    } else if (in[i].dtype != t) {
      return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input %d is %s but input 0 is %s", i,
                                        gfx_dtype_name(in[i].dtype), gfx_dtype_name(t)));
    }
  }
  return require_dtype(node, out, "output 0", compare ? GFX_DTYPE_BOOL : t);
}

static gfx_status run_broadcast(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                gfx_tensor* out) {
  const gfx_op op = node->op; /* the binary family of the op table (cuda_kernels.c routes it here) */
  const int variadic = op == GFX_OP_MIN || op == GFX_OP_MAX || op == GFX_OP_SUM || op == GFX_OP_MEAN;
  GFX_TRY(require_io_counts(node, variadic ? 1 : 2, variadic ? IR_MAX_IO : 2));
  GFX_TRY(check_broadcast_types(node, in, &out[0]));
  GFX_TRY(check_broadcast(node, in, node->n_inputs, &out[0].shape));
  if (op == GFX_OP_PRELU) GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape)); /* slope broadcasts to x */
  const void* ptrs[IR_MAX_IO];
  int dtypes[IR_MAX_IO];
  gfx_shape shapes[IR_MAX_IO];
  for (int i = 0; i < node->n_inputs; i++) {
    ptrs[i] = in[i].data;
    dtypes[i] = in[i].dtype;
    shapes[i] = in[i].shape;
  }
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_ew_broadcast(op, node->n_inputs, ptrs, dtypes, shapes, out[0].data, out[0].dtype,
                                    &out[0].shape, (cudaStream_t)ctx->stream));
}

static gfx_status run_where(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 3, 3));
  GFX_TRY(require_dtype(node, &in[0], "input 0", GFX_DTYPE_BOOL));
  GFX_TRY(require_dtype(node, &in[2], "input 2", in[1].dtype));
  GFX_TRY(require_dtype(node, &out[0], "output 0", in[1].dtype));
  GFX_TRY(check_broadcast(node, in, 3, &out[0].shape));
  const size_t size = gfx_dtype_size(in[1].dtype);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 1 of type %s", gfx_dtype_name(in[1].dtype)));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_ew_where(in[0].data, &in[0].shape, in[1].data, &in[1].shape, in[2].data, &in[2].shape, size,
                                out[0].data, &out[0].shape, (cudaStream_t)ctx->stream));
}

/* ---- Cast ---- */

static int is_cast_type(int dtype) { return is_float_type(dtype) || is_int_type(dtype) || dtype == GFX_DTYPE_BOOL; }

static gfx_status run_cast(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 1, 1));
  if (!is_cast_type(in[0].dtype) || !is_cast_type(out[0].dtype))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "cast from %s to %s", gfx_dtype_name(in[0].dtype),
                                      gfx_dtype_name(out[0].dtype)));
  GFX_TRY(require_shape(node, &out[0].shape, &in[0].shape));
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_ew_cast(in[0].dtype, in[0].data, out[0].dtype, out[0].data, gfx_shape_numel(&in[0].shape),
                               (cudaStream_t)ctx->stream));
}

/* ---- BatchNormalization ---- */

static gfx_status run_batchnorm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 5, 5));
  const int t = in[0].dtype;
  if (!is_float_type(t))
    return node_error(node, gfx_error(GFX_ERR_NOT_SUPPORTED, "input 0 has element type %s", gfx_dtype_name(t)));
  static const char* const names[5] = {"input 0", "input 1", "input 2", "input 3", "input 4"};
  for (int i = 1; i < 5; i++) GFX_TRY(require_dtype(node, &in[i], names[i], t));
  GFX_TRY(require_dtype(node, &out[0], "output 0", t));
  gfx_shape shapes[5], expected;
  for (int i = 0; i < 5; i++) shapes[i] = in[i].shape;
  gfx_status s = ir_infer_batchnorm(node, shapes, &expected);
  if (s) return node_error(node, s);
  GFX_TRY(require_shape(node, &out[0].shape, &expected));
  int64_t inner = 1;
  for (int d = 2; d < in[0].shape.rank; d++) inner *= in[0].shape.dims[d];
  const int64_t count = gfx_shape_numel(&in[0].shape);
  if (count <= 0) return NULL; /* also keeps inner and channels, the kernel's divisors, nonzero */
  GFX_TRY(cuda_use_device(ctx->dev->index));
  return launched(ctx, node,
                  cuda_ew_batchnorm(t, in[0].data, in[1].data, in[2].data, in[3].data, in[4].data,
                                    node->params.elementwise.epsilon, out[0].data, count, in[0].shape.dims[1], inner,
                                    (cudaStream_t)ctx->stream));
}

/* ---- the kernel family entries (stateless: run checks the shapes) ---- */

#define STATELESS_PREPARE(kernel)                                                                             \
  gfx_status cuda_prepare_##kernel(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out, \
                                   cuda_node_state** state, size_t* scratch_bytes) {                         \
    (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;                           \
    return NULL;                                                                                              \
  }

STATELESS_PREPARE(unary)
STATELESS_PREPARE(binary)
STATELESS_PREPARE(where)
STATELESS_PREPARE(cast)
STATELESS_PREPARE(batchnorm)

gfx_status cuda_run_unary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_unary(ctx, node, in, out);
}

gfx_status cuda_run_binary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  (void)state;
  return run_broadcast(ctx, node, in, out);
}

gfx_status cuda_run_where(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_where(ctx, node, in, out);
}

gfx_status cuda_run_cast(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  (void)state;
  return run_cast(ctx, node, in, out);
}

gfx_status cuda_run_batchnorm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                              cuda_node_state* state) {
  (void)state;
  return run_batchnorm(ctx, node, in, out);
}

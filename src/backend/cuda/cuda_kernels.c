/* gfxep CUDA backend — per-node dispatch: node_prepare, node_release and node_run over ir/ops.def.
 *
 * Element-wise ops need no state: their broadcast plan costs a few integer operations per run.
 * MatMul and Conv keep library descriptors and an algorithm choice per input-shape signature.
 */
#include "backend/cuda/cuda_elementwise.h"
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"

const char* cuda_node_name(const ir_node* node) { return node->name ? node->name : ""; }

gfx_status cuda_require_f32(const ir_node* node, const gfx_tensor* tensors, int count, const char* role) {
  for (int i = 0; i < count; i++) {
    if (tensors[i].data && tensors[i].dtype != GFX_DTYPE_F32)
      return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s %d is %s, only float32 is implemented",
                       ir_op_name(node->op), cuda_node_name(node), role, i, gfx_dtype_name(tensors[i].dtype));
  }
  return NULL;
}

static gfx_status require_io_counts(const ir_node* node, int min_inputs, int min_outputs) {
  if (node->n_inputs < min_inputs || node->n_outputs < min_outputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs, expected %d and %d",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs, min_inputs,
                     min_outputs);
  return NULL;
}

/* ---- element-wise ---- */

typedef cudaError_t (*binary_kernel_fn)(const float* a, const gfx_shape* a_shape, const float* b,
                                        const gfx_shape* b_shape, float* out, const gfx_shape* out_shape,
                                        cudaStream_t stream);

static binary_kernel_fn binary_kernel(gfx_op op) {
  switch (op) {
    case GFX_OP_ADD: return cuda_add_f32;
    case GFX_OP_SUB: return cuda_sub_f32;
    case GFX_OP_MUL: return cuda_mul_f32;
    case GFX_OP_DIV: return cuda_div_f32;
    default: return NULL;
  }
}

/* The kernels trust their shapes, so check here that out is exactly the broadcast of a and b. */
static gfx_status check_broadcast(const ir_node* node, const gfx_shape* a, const gfx_shape* b, const gfx_shape* out) {
  gfx_shape expected;
  gfx_status s = ir_broadcast_shapes(a, b, &expected);
  if (s)
    return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", ir_op_name(node->op), cuda_node_name(node));
  if (!gfx_shape_equal(&expected, out)) {
    char a_str[128], b_str[128], out_str[128];
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output shape %s is not the broadcast of %s and %s",
                     ir_op_name(node->op), cuda_node_name(node), gfx_shape_str(out, out_str, sizeof out_str),
                     gfx_shape_str(a, a_str, sizeof a_str), gfx_shape_str(b, b_str, sizeof b_str));
  }
  return NULL;
}

static gfx_status run_binary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 2, 1));
  GFX_TRY(cuda_require_f32(node, in, 2, "input"));
  GFX_TRY(cuda_require_f32(node, out, 1, "output"));
  GFX_TRY(check_broadcast(node, &in[0].shape, &in[1].shape, &out[0].shape));
  GFX_TRY(cuda_use_device(ctx->device));
  cudaError_t err = binary_kernel(node->op)(in[0].data, &in[0].shape, in[1].data, &in[1].shape, out[0].data,
                                             &out[0].shape, (cudaStream_t)ctx->stream);
  return cuda_check(err, "%s kernel for node \"%s\" on device %d", ir_op_name(node->op), cuda_node_name(node),
                    ctx->device);
}

static gfx_status run_relu(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out) {
  GFX_TRY(require_io_counts(node, 1, 1));
  GFX_TRY(cuda_require_f32(node, in, 1, "input"));
  GFX_TRY(cuda_require_f32(node, out, 1, "output"));
  int64_t count = gfx_shape_numel(&in[0].shape);
  if (count < 0 || !gfx_shape_equal(&in[0].shape, &out[0].shape)) {
    char in_str[128], out_str[128];
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: Relu node \"%s\": output shape %s differs from input shape %s",
                     cuda_node_name(node), gfx_shape_str(&out[0].shape, out_str, sizeof out_str),
                     gfx_shape_str(&in[0].shape, in_str, sizeof in_str));
  }
  GFX_TRY(cuda_use_device(ctx->device));
  cudaError_t err = cuda_relu_f32(in[0].data, out[0].data, count, (cudaStream_t)ctx->stream);
  return cuda_check(err, "Relu kernel for node \"%s\" on device %d", cuda_node_name(node), ctx->device);
}

/* ---- the backend entries ---- */

static gfx_status op_not_implemented(const ir_node* node) {
  return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: op %s not implemented", ir_op_name(node->op));
}

gfx_status cuda_node_prepare(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             void** state, size_t* scratch_bytes) {
  *state = NULL;
  *scratch_bytes = 0;
  cuda_node_state* node_state = NULL;
  gfx_status s = NULL;
  switch (node->op) {
    case GFX_OP_ADD:
    case GFX_OP_SUB:
    case GFX_OP_MUL:
    case GFX_OP_DIV:
    case GFX_OP_RELU:
      return NULL; /* stateless; node_run checks the shapes */
    case GFX_OP_CONV:
      s = cuda_conv_prepare(device, node, in, out, &node_state, scratch_bytes);
      break;
    case GFX_OP_MATMUL:
      s = cuda_matmul_prepare(device, node, in, out, &node_state, scratch_bytes);
      break;
    default:
      return op_not_implemented(node);
  }
  if (s) return s;
  *state = node_state;
  return NULL;
}

void cuda_node_release(int device, void* state) {
  (void)device; /* library descriptors belong to no device */
  cuda_node_state* node_state = state;
  if (node_state) node_state->release(node_state);
}

gfx_status cuda_node_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         void* state) {
  switch (node->op) {
    case GFX_OP_ADD:
    case GFX_OP_SUB:
    case GFX_OP_MUL:
    case GFX_OP_DIV:
      return run_binary(ctx, node, in, out);
    case GFX_OP_RELU:
      return run_relu(ctx, node, in, out);
    case GFX_OP_CONV:
      return cuda_conv_run(ctx, node, in, out, state);
    case GFX_OP_MATMUL:
      return cuda_matmul_run(ctx, node, in, out, state);
    default:
      return op_not_implemented(node);
  }
}

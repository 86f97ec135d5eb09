/* gfxep CUDA backend — host side of the element-wise ops: checks and launches (kernels in
 * cuda_elementwise.cu). Element-wise ops need no state: their broadcast plan costs a few integer
 * operations per run. */
#include "backend/cuda/cuda_elementwise.h"
#include "backend/cuda/cuda_internal.h"
#include "ir/shape.h"

static gfx_status require_io_counts(const ir_node* node, int min_inputs, int min_outputs) {
  if (node->n_inputs < min_inputs || node->n_outputs < min_outputs)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs, expected %d and %d",
                     ir_op_name(node->op), cuda_node_name(node), node->n_inputs, node->n_outputs, min_inputs,
                     min_outputs);
  return NULL;
}


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


gfx_status cuda_prepare_binary(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL; /* stateless; run checks the shapes */
}

gfx_status cuda_run_binary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  (void)state;
  return run_binary(ctx, node, in, out);
}

gfx_status cuda_prepare_unary(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                              cuda_node_state** state, size_t* scratch_bytes) {
  (void)device, (void)node, (void)in, (void)out, (void)state, (void)scratch_bytes;
  return NULL;
}

gfx_status cuda_run_unary(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                          cuda_node_state* state) {
  (void)state;
  return run_relu(ctx, node, in, out);
}

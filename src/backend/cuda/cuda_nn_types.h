/* gfxep CUDA backend — element types of the convolution and matrix-product kernels in cuDNN's and
 * cuBLAS's terms. float32 computes in true fp32 (FMA math, no TF32), because its results are
 * compared with ONNX Runtime's CPU kernels; float16 and bfloat16 compute in float on tensor cores.
 */
#ifndef GFXEP_BACKEND_CUDA_NN_TYPES_H
#define GFXEP_BACKEND_CUDA_NN_TYPES_H

#include "backend/cuda/cuda_internal.h"

/* The node's element type from its params (0, as in nodes built by hand, means float32); 0 when
 * these kernels do not handle it. */
static inline int cuda_nn_dtype(int params_dtype) {
  if (params_dtype == GFX_DTYPE_UNDEFINED) return GFX_DTYPE_F32;
  if (params_dtype == GFX_DTYPE_F32 || params_dtype == GFX_DTYPE_F16 || params_dtype == GFX_DTYPE_BF16)
    return params_dtype;
  return 0;
}

static inline cudnnDataType_t cuda_nn_dnn_type(int dtype) {
  return dtype == GFX_DTYPE_F16 ? CUDNN_DATA_HALF : dtype == GFX_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

static inline cudaDataType_t cuda_nn_blas_type(int dtype) {
  return dtype == GFX_DTYPE_F16 ? CUDA_R_16F : dtype == GFX_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* float32 stays off tensor cores (TF32); the 16-bit types use them, accumulating in float. */
static inline cudnnMathType_t cuda_nn_math_type(int dtype, int allow_tf32) {
  return dtype == GFX_DTYPE_F32 && !allow_tf32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

/* Whether an algorithm's math fits the node: float32 stays off tensor cores (which would mean TF32)
 * unless the node allows TF32. */
static inline int cuda_nn_math_allowed(int dtype, int allow_tf32, cudnnMathType_t math) {
  const int tensor_cores = math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return !(dtype == GFX_DTYPE_F32 && !allow_tf32 && tensor_cores);
}

/* NOT_SUPPORTED unless the `count` tensors (those with data, or all when all_required) are dtype. */
static inline gfx_status cuda_nn_require_dtype(const ir_node* node, const gfx_tensor* tensors, int count, int dtype,
                                               const char* role) {
  for (int i = 0; i < count; i++) {
    if (tensors[i].dtype == dtype || (!tensors[i].data && tensors[i].dtype == GFX_DTYPE_UNDEFINED)) continue;
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": %s %d is %s, prepared for %s",
                     ir_op_name(node->op), cuda_node_name(node), role, i, gfx_dtype_name(tensors[i].dtype),
                     gfx_dtype_name(dtype));
  }
  return NULL;
}

/* The run-time check the four library ops (Conv, ConvTranspose, Gemm, MatMul) share: the node was
 * prepared (state non-NULL) on this device for these input shapes (n of them; an expected shape of
 * rank -1 wants an absent input), and the executor gave the scratch it asked for. */
static inline gfx_status cuda_lib_check_prepared(const gfx_exec_ctx* ctx, const ir_node* node, const void* state,
                                                 int device, const gfx_shape* expected, int n, const gfx_tensor* in,
                                                 size_t scratch_bytes) {
  const char* op = ir_op_name(node->op);
  if (!state)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\" run without node_prepare", op, cuda_node_name(node));
  if (device != ctx->dev->index)
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\" prepared for device %d, run on device %d", op,
                     cuda_node_name(node), device, ctx->dev->index);
  for (int i = 0; i < n; i++) {
    const int present = node->n_inputs > i && in[i].data != NULL;
    if (present != (expected[i].rank >= 0) || (present && !gfx_shape_equal(&expected[i], &in[i].shape))) {
      char got[128], want[128];
      return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\" input %d is %s; it was prepared for %s", op,
                       cuda_node_name(node), i, present ? gfx_shape_str(&in[i].shape, got, sizeof got) : "absent",
                       expected[i].rank >= 0 ? gfx_shape_str(&expected[i], want, sizeof want) : "no input");
    }
  }
  if (scratch_bytes > 0 && (!ctx->scratch || ctx->scratch_bytes < scratch_bytes))
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\" needs %zu bytes of scratch, got %zu", op,
                     cuda_node_name(node), scratch_bytes, ctx->scratch ? ctx->scratch_bytes : 0);
  return NULL;
}

#endif

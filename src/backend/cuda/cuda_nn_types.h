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

#endif

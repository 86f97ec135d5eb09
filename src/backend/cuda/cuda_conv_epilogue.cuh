/* gfxep CUDA backend — a convolution's epilogue on one value, defined once: the separate epilogue
 * kernels after cuDNN (cuda_pad.cu) and the kernels that apply it before their store
 * (cuda_conv_narrow.cu) compute the same formula. */
#ifndef GFXEP_BACKEND_CUDA_CONV_EPILOGUE_CUH
#define GFXEP_BACKEND_CUDA_CONV_EPILOGUE_CUH

#include "backend/cuda/cuda_activation.cuh"
#include "backend/cuda/cuda_pad.h"
#include "ir/graph.h"

/* The fused activation: the element-wise ops' own formulas (cuda_activation.cuh). */
__device__ inline float cuda_conv_activate(const cuda_conv_epilogue& e, float x) {
  switch (e.activation) {
    case IR_ACT_RELU: return cuda_relu(x);
    case IR_ACT_LEAKY_RELU: return cuda_leaky_relu(x, e.alpha);
    case IR_ACT_SIGMOID: return cuda_sigmoid(x);
    case IR_ACT_TANH: return tanhf(x);
    case IR_ACT_HARD_SIGMOID: return cuda_hard_sigmoid(x, e.alpha, e.beta);
    case IR_ACT_HARD_SWISH: return cuda_hard_swish(x);
    case IR_ACT_CLIP: return cuda_clip(x, e.alpha, e.beta);
    case IR_ACT_ELU: return cuda_elu(x, e.alpha);
    default: return x;
  }
}

/* The convolution's sum v (bias added) with the residual r (0 for none) and the activation, in the
 * order e.residual says. */
__device__ inline float cuda_conv_finish(const cuda_conv_epilogue& e, float v, float r) {
  if (e.residual == IR_RES_ACT_THEN_ADD) return cuda_conv_activate(e, v) + r;
  return cuda_conv_activate(e, v + r); /* IR_RES_ADD_THEN_ACT, or no residual (r = 0) */
}

/* ACT for cuda_conv_finish_as: the activation e says, looked up per element */
const int kCudaAnyActivation = -1;

/* cuda_conv_finish with the activation fixed at compile time (ACT >= 0), so that a kernel's store loop
 * holds only that activation's code; kCudaAnyActivation looks it up. */
template <int ACT>
__device__ __forceinline__ float cuda_conv_finish_as(const cuda_conv_epilogue& e, float v, float r) {
  cuda_conv_epilogue fixed = e;
  if (ACT != kCudaAnyActivation) fixed.activation = ACT;
  return cuda_conv_finish(fixed, v, r);
}

#endif

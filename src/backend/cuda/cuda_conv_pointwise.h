/* gfxep CUDA backend — a channels-last 1x1 convolution as one cuBLASLt product.
 *
 * With X as [N, H, W, C] and Y as [N, H, W, M], a 1x1 convolution of stride 1, no padding and one
 * group is Y[P, M] = X[P, C] · W[M, C]ᵀ over the P = N·H·W pixels: a plain matrix product on the
 * tensors as they lie, and the weights [M, C, 1, 1] need no rewrite. cuDNN's NHWC kernels ran these
 * 3-4x slower than cuBLASLt runs the product on the H200 (ResNet-50's 1x1 layers in float16: 57 us
 * against 16 us NCHW). A bias, ReLU and a residual added before it run inside the product
 * (cuBLASLt's bias and ReLU epilogues, the residual as its C operand with beta 1), so the output is
 * written once; other activations stay with the convolution's epilogue kernel.
 */
#ifndef GFXEP_CUDA_CONV_POINTWISE_H
#define GFXEP_CUDA_CONV_POINTWISE_H

#include <cublasLt.h>
#include <pthread.h>
#include <stdint.h>

#include "backend/cuda/cuda_internal.h"

/* What the product computes besides X · Wᵀ: Y = relu?(X · Wᵀ + residual + bias). */
typedef struct cuda_pointwise_fusion {
  int bias, relu, residual;
} cuda_pointwise_fusion;

typedef struct cuda_pointwise_product {
  int dtype;
  int64_t pixels, c_in, c_out;
  cuda_pointwise_fusion fusion;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t w_layout, x_layout, y_layout;
  cublasLtMatmulHeuristicResult_t algo; /* for 256-byte aligned operands and max_workspace */
  /* cuBLASLt takes the bias pointer through the descriptor: set per run under the lock, as the same
   * node may run on several streams at once */
  pthread_mutex_t bias_lock;
  int bias_lock_ready;
  const void* bias_in_desc;
} cuda_pointwise_product;

/* Whether a Conv's bias and activation may run inside the library's call (cuDNN's fused call, the
 * product's epilogue): GFXEP_CUDA_CONV_FUSED=0 keeps them in the separate epilogue kernel, to compare. */
int cuda_conv_fused_epilogue_allowed(void);
/* GFXEP_CUDA_CONV_FUSED=1: cuDNN's fused call also where it measured slower (cuda_conv.c). */
int cuda_conv_fused_epilogue_forced(void);

/* The part of a Conv's epilogue the product can take: a bias, ReLU or none, a residual added before
 * the activation. */
cuda_pointwise_fusion cuda_pointwise_fusion_of(int has_bias, int activation, int residual_mode);

/* Whether a Conv of these dims runs as the product: channels-last, 2-D, 1x1, stride 1, dilation 1,
 * no padding, one group. */
int cuda_pointwise_product_applies(int channels_last, int spatial, const int* kernel, const int* stride,
                                   const int* dilation, const int* pad, int pads_input, int group);

/* Builds the descriptors and picks the algorithm (at most max_workspace bytes of scratch; the one
 * picked says how much in algo.workspaceSize). On failure whatever was made is released. */
gfx_status cuda_pointwise_product_plan(int device, const ir_node* node, int dtype, int64_t pixels, int64_t c_in,
                                       int64_t c_out, cuda_pointwise_fusion fusion, size_t max_workspace,
                                       cuda_pointwise_product* p);

/* Queues Y = X · Wᵀ and the fusion on the run's stream (bias and residual as the fusion says, NULL
 * otherwise); workspace is the node's scratch (at least algo.workspaceSize). */
gfx_status cuda_pointwise_product_run(const gfx_exec_ctx* ctx, const ir_node* node, cuda_pointwise_product* p,
                                      const void* x, const void* w, const void* bias, const void* residual, void* y,
                                      void* workspace, size_t workspace_bytes);

void cuda_pointwise_product_release(cuda_pointwise_product* p);

#endif

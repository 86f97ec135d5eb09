/* gfxep CUDA backend — a channels-last 1x1 convolution as one cuBLASLt product (see the header).
 *
 * cuBLAS is column-major: the row-major Y[P, M] is its M x P matrix D (leading dimension M), the
 * row-major W[M, C] its C x M matrix (transposed: op A = Wᵀ read back as M x C) and the row-major
 * X[P, C] its C x P matrix B. So D = op(A) · B with A = W transposed and B = X as it is.
 * Precision as for MatMul and Gemm: float32 accumulation, TF32 only when the node allows it, split-K
 * partial sums never in the 16-bit output type.
 */
#include "backend/cuda/cuda_conv_pointwise.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_nn_types.h"

int cuda_pointwise_product_applies(int channels_last, int spatial, const int* kernel, const int* stride,
                                   const int* dilation, const int* pad, int pads_input, int group) {
  if (!channels_last || spatial != 2 || pads_input || group != 1) return 0;
  for (int i = 0; i < 2; i++)
    if (kernel[i] != 1 || stride[i] != 1 || dilation[i] != 1 || pad[i] != 0) return 0;
  return 1;
}

int cuda_conv_fused_epilogue_allowed(void) {
  const char* choice = getenv("GFXEP_CUDA_CONV_FUSED");
  return !(choice && strcmp(choice, "0") == 0);
}

int cuda_conv_fused_epilogue_forced(void) {
  const char* choice = getenv("GFXEP_CUDA_CONV_FUSED");
  return choice && strcmp(choice, "1") == 0;
}

cuda_pointwise_fusion cuda_pointwise_fusion_of(int has_bias, int activation, int residual_mode) {
  const int residual = residual_mode == IR_RES_ADD_THEN_ACT;
  if ((activation != IR_ACT_NONE && activation != IR_ACT_RELU) || (residual_mode != IR_RES_NONE && !residual) ||
      !cuda_conv_fused_epilogue_allowed())
    return (cuda_pointwise_fusion){0, 0, 0};
  return (cuda_pointwise_fusion){has_bias, activation == IR_ACT_RELU, residual};
}

void cuda_pointwise_product_release(cuda_pointwise_product* p) {
  if (p->bias_lock_ready) pthread_mutex_destroy(&p->bias_lock);
  if (p->y_layout) cublasLtMatrixLayoutDestroy(p->y_layout);
  if (p->x_layout) cublasLtMatrixLayoutDestroy(p->x_layout);
  if (p->w_layout) cublasLtMatrixLayoutDestroy(p->w_layout);
  if (p->desc) cublasLtMatmulDescDestroy(p->desc);
  memset(p, 0, sizeof *p);
}

static gfx_status layout(const ir_node* node, int dtype, const char* which, int64_t rows, int64_t cols,
                         cublasLtMatrixLayout_t* out) {
  return cuda_blas_check(cublasLtMatrixLayoutCreate(out, cuda_nn_blas_type(dtype), (uint64_t)rows, (uint64_t)cols, rows),
                         "cublasLtMatrixLayoutCreate(%s: %lld x %lld) for the 1x1 Conv node \"%s\"", which,
                         (long long)rows, (long long)cols, cuda_node_name(node));
}

static gfx_status preference(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, uint64_t value,
                             int as_uint32, const ir_node* node) {
  uint32_t value32 = (uint32_t)value;
  return cuda_blas_check(cublasLtMatmulPreferenceSetAttribute(pref, attr, as_uint32 ? (const void*)&value32 : (const void*)&value,
                                                              as_uint32 ? sizeof value32 : sizeof value),
                         "cublasLtMatmulPreferenceSetAttribute(%d) for the 1x1 Conv node \"%s\"", (int)attr,
                         cuda_node_name(node));
}

/* align: byte alignments of W, X, Y and C (the residual, or Y) as they will be passed. */
static gfx_status choose(cublasLtHandle_t handle, const ir_node* node, const cuda_pointwise_product* p,
                         size_t max_workspace, const size_t align[4], cublasLtMatmulHeuristicResult_t* result) {
  cublasLtMatmulPreference_t pref = NULL;
  GFX_TRY(cuda_blas_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate for the 1x1 Conv node \"%s\"",
                          cuda_node_name(node)));
  gfx_status s = preference(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_workspace, 0, node);
  if (!s) s = preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0], 1, node);
  if (!s) s = preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1], 1, node);
  if (!s) s = preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[3], 1, node);
  if (!s) s = preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[2], 1, node);
  if (!s)
    s = preference(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                   CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 1, node);
  int found = 0;
  if (!s)
    s = cuda_blas_check(cublasLtMatmulAlgoGetHeuristic(handle, p->desc, p->w_layout, p->x_layout, p->y_layout,
                                                       p->y_layout, pref, 1, result, &found),
                        "cublasLtMatmulAlgoGetHeuristic for the 1x1 Conv node \"%s\"", cuda_node_name(node));
  cublasLtMatmulPreferenceDestroy(pref);
  if (!s && (found < 1 || result->state != CUBLAS_STATUS_SUCCESS))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                  "cuda backend: Conv node \"%s\": cuBLASLt has no algorithm for the 1x1 product of %lld pixels, %lld "
                  "-> %lld channels (alignments %zu/%zu/%zu/%zu bytes, workspace %zu bytes, bias %d, ReLU %d, "
                  "residual %d)",
                  cuda_node_name(node), (long long)p->pixels, (long long)p->c_in, (long long)p->c_out, align[0],
                  align[1], align[2], align[3], max_workspace, p->fusion.bias, p->fusion.relu, p->fusion.residual);
  return s;
}

/* The bias runs along the output channels: the rows of cuBLAS's column-major D. */
static gfx_status set_epilogue(const ir_node* node, cuda_pointwise_product* p) {
  const cuda_pointwise_fusion* f = &p->fusion;
  if (!f->bias && !f->relu) return NULL;
  cublasLtEpilogue_t e = f->bias ? (f->relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS) : CUBLASLT_EPILOGUE_RELU;
  return cuda_blas_check(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e),
                         "setting the epilogue %d for the 1x1 Conv node \"%s\"", (int)e, cuda_node_name(node));
}

gfx_status cuda_pointwise_product_plan(int device, const ir_node* node, int dtype, int64_t pixels, int64_t c_in,
                                       int64_t c_out, cuda_pointwise_fusion fusion, size_t max_workspace,
                                       cuda_pointwise_product* p) {
  memset(p, 0, sizeof *p);
  p->dtype = dtype;
  p->pixels = pixels;
  p->c_in = c_in;
  p->c_out = c_out;
  p->fusion = fusion;
  if (pthread_mutex_init(&p->bias_lock, NULL) != 0)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: 1x1 Conv node \"%s\": no lock for its bias", cuda_node_name(node));
  p->bias_lock_ready = 1;
  cublasLtHandle_t handle = NULL;
  gfx_status s = cuda_blaslt_handle(device, &handle);
  if (!s)
    s = cuda_blas_check(cublasLtMatmulDescCreate(&p->desc, cuda_blas_compute_type(node, dtype), CUDA_R_32F),
                        "cublasLtMatmulDescCreate for the 1x1 Conv node \"%s\"", cuda_node_name(node));
  if (!s) {
    cublasOperation_t t = CUBLAS_OP_T;
    s = cuda_blas_check(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t),
                        "transposing the weights of the 1x1 Conv node \"%s\"", cuda_node_name(node));
  }
  if (!s) s = layout(node, dtype, "weights", c_in, c_out, &p->w_layout);
  if (!s) s = layout(node, dtype, "input", c_in, pixels, &p->x_layout);
  if (!s) s = layout(node, dtype, "output", c_out, pixels, &p->y_layout);
  if (!s) s = set_epilogue(node, p);
  const size_t align[4] = {CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT};
  if (!s) s = choose(handle, node, p, max_workspace, align, &p->algo);
  if (s) cuda_pointwise_product_release(p);
  return s;
}

gfx_status cuda_pointwise_product_run(const gfx_exec_ctx* ctx, const ir_node* node, cuda_pointwise_product* p,
                                      const void* x, const void* w, const void* bias, const void* residual, void* y,
                                      void* workspace, size_t workspace_bytes) {
  if ((p->fusion.bias && !bias) || (p->fusion.residual && !residual))
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: 1x1 Conv node \"%s\": its %s input has no data",
                     cuda_node_name(node), p->fusion.bias && !bias ? "bias" : "residual");
  cublasLtHandle_t handle = NULL;
  GFX_TRY(cuda_blaslt_handle(ctx->dev->index, &handle));
  const void* c = p->fusion.residual ? residual : y;
  const size_t align[4] = {cuda_alignment_of((uintptr_t)w), cuda_alignment_of((uintptr_t)x),
                           cuda_alignment_of((uintptr_t)y), cuda_alignment_of((uintptr_t)c)};
  const float one = 1.0f, beta = p->fusion.residual ? 1.0f : 0.0f;
  pthread_mutex_lock(&p->bias_lock);
  gfx_status s = NULL;
  if (p->fusion.bias && p->bias_in_desc != bias) {
    s = cuda_blas_check(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                        "setting the bias of the 1x1 Conv node \"%s\"", cuda_node_name(node));
    if (!s) p->bias_in_desc = bias;
  }
  /* the plan's algorithm assumed the planner's alignment and its workspace: ask again otherwise */
  cublasLtMatmulHeuristicResult_t algo = p->algo;
  int misaligned = workspace_bytes < p->algo.workspaceSize ||
                   (p->fusion.bias && cuda_alignment_of((uintptr_t)bias) < CUDA_ALLOC_ALIGNMENT);
  for (int i = 0; i < 4; i++) misaligned |= align[i] < CUDA_ALLOC_ALIGNMENT;
  if (!s && misaligned) s = choose(handle, node, p, workspace_bytes, align, &algo);
  if (!s)
    s = cuda_blas_check(cublasLtMatmul(handle, p->desc, &one, w, p->w_layout, x, p->x_layout, &beta, c, p->y_layout, y,
                                       p->y_layout, &algo.algo, workspace, algo.workspaceSize, (cudaStream_t)ctx->stream),
                        "cublasLtMatmul for the 1x1 Conv node \"%s\" (%lld pixels, %lld -> %lld channels) on device %d",
                        cuda_node_name(node), (long long)p->pixels, (long long)p->c_in, (long long)p->c_out,
                        ctx->dev->index);
  pthread_mutex_unlock(&p->bias_lock);
  return s;
}

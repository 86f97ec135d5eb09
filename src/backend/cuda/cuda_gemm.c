/* gfxep CUDA backend — Gemm (float32, float16, bfloat16) with cuBLASLt:
 * Y[m, n] = alpha * op(A) op(B) + beta * C, C broadcast unidirectionally to [m, n].
 *
 * As in cuda_matmul.c, the row-major product is computed as the column-major Yᵀ = op(B)ᵀ op(A)ᵀ:
 * operand B is cuBLAS's "A" and operand A its "B", with ONNX's transA/transB becoming cuBLAS's
 * transposes of the row-major storage read as column-major. A C of the full [m, n] shape is passed
 * to cuBLASLt as its C. A bias row (C of shape [n] or [1, n] with beta 1, what a Linear layer
 * exports as) is added by cuBLASLt's bias epilogue inside the product's kernel. Any other C is first
 * broadcast into Y by a small kernel and cuBLASLt then accumulates into Y in place (C = D = Y).
 * k = 0 leaves beta * C (or zeros).
 *
 * node_prepare builds the descriptors and picks the algorithm for 256-byte aligned buffers (what the
 * planner gives); node_run only queues work, and asks the heuristic again only when a buffer is
 * less aligned than that. Precision: CUBLAS_COMPUTE_32F, never TF32 for float32.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_nn_types.h"
#include "backend/cuda/cuda_pad.h"
#include "ir/ops_nn.h"

#define GEMM_WORKSPACE_LIMIT ((size_t)4 << 20)

typedef struct gemm_state {
  cuda_node_state base;
  int device;
  gfx_shape a_shape, b_shape, c_shape; /* the signature; c_shape.rank = -1 without C */
  int dtype;
  size_t elem_bytes;
  ir_gemm_geom geom;
  int uses_c;          /* C present and beta != 0 */
  int c_is_full;       /* C is [m, n] and goes to cuBLASLt as it is */
  int c_is_bias;       /* C is a row of n with beta 1: cuBLASLt's bias epilogue adds it */
  /* The bias pointer is an attribute of the descriptor, which concurrent runs of this signature
   * share: it is set and used under this lock (uncontended in practice, and with CUDA graphs runs
   * only come here while capturing). */
  pthread_mutex_t bias_lock;
  int bias_lock_ready;
  const void* bias_in_desc;
  int nothing_to_do;   /* the output is empty */
  int no_product;      /* k = 0: Y = beta * C or 0 */
  size_t out_bytes;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a_layout, b_layout, out_layout; /* operand a is cuBLAS's B, b is cuBLAS's A */
  cublasLtMatmulHeuristicResult_t algo;
} gemm_state;

static const char* op_name = "Gemm";

static void state_release(cuda_node_state* base) {
  gemm_state* st = (gemm_state*)base;
  if (st->out_layout) cublasLtMatrixLayoutDestroy(st->out_layout);
  if (st->b_layout) cublasLtMatrixLayoutDestroy(st->b_layout);
  if (st->a_layout) cublasLtMatrixLayoutDestroy(st->a_layout);
  if (st->desc) cublasLtMatmulDescDestroy(st->desc);
  if (st->bias_lock_ready) pthread_mutex_destroy(&st->bias_lock);
  free(st);
}

static gfx_status create_layout(const ir_node* node, int dtype, const char* which, int64_t rows, int64_t cols,
                                int64_t ld, cublasLtMatrixLayout_t* layout) {
  return cuda_blas_check(cublasLtMatrixLayoutCreate(layout, cuda_nn_blas_type(dtype), (uint64_t)rows, (uint64_t)cols, ld),
                         "cublasLtMatrixLayoutCreate(%s: %lld x %lld, ld %lld) for %s node \"%s\"", which,
                         (long long)rows, (long long)cols, (long long)ld, op_name, cuda_node_name(node));
}

static gfx_status set_transpose(const ir_node* node, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                int transpose) {
  cublasOperation_t op = transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  return cuda_blas_check(cublasLtMatmulDescSetAttribute(desc, attr, &op, sizeof op),
                         "setting transpose attribute %d for %s node \"%s\"", (int)attr, op_name, cuda_node_name(node));
}

/* On failure the caller releases the state, which frees whatever was created. */
static gfx_status create_descriptors(const ir_node* node, gemm_state* st) {
  const ir_gemm_params* p = &node->params.gemm;
  const ir_gemm_geom* g = &st->geom;
  GFX_TRY(cuda_blas_check(cublasLtMatmulDescCreate(&st->desc, cuda_blas_compute_type(node, st->dtype), CUDA_R_32F),
                          "cublasLtMatmulDescCreate for %s node \"%s\"", op_name, cuda_node_name(node)));
  /* cuBLAS's A = operand B, needed as n x k: row-major [k, n] read column-major is n x k already;
   * row-major [n, k] (transB) is k x n and is transposed. Likewise operand A as k x m. */
  GFX_TRY(set_transpose(node, st->desc, CUBLASLT_MATMUL_DESC_TRANSA, p->trans_b));
  GFX_TRY(set_transpose(node, st->desc, CUBLASLT_MATMUL_DESC_TRANSB, p->trans_a));
  if (p->trans_b)
    GFX_TRY(create_layout(node, st->dtype, "b", g->k, g->n, g->k, &st->b_layout));
  else
    GFX_TRY(create_layout(node, st->dtype, "b", g->n, g->k, g->n, &st->b_layout));
  if (p->trans_a)
    GFX_TRY(create_layout(node, st->dtype, "a", g->m, g->k, g->m, &st->a_layout));
  else
    GFX_TRY(create_layout(node, st->dtype, "a", g->k, g->m, g->k, &st->a_layout));
  if (st->c_is_bias) { /* the bias runs along Y's columns: the rows of cuBLAS's column-major Yᵀ */
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    GFX_TRY(cuda_blas_check(cublasLtMatmulDescSetAttribute(st->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                           sizeof epilogue),
                            "setting the bias epilogue for %s node \"%s\"", op_name, cuda_node_name(node)));
  }
  return create_layout(node, st->dtype, "output", g->n, g->m, g->n, &st->out_layout);
}

static gfx_status set_preference(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                                 uint64_t value, int as_uint32, const ir_node* node) {
  uint32_t value32 = (uint32_t)value;
  const void* data = as_uint32 ? (const void*)&value32 : (const void*)&value;
  size_t size = as_uint32 ? sizeof value32 : sizeof value;
  return cuda_blas_check(cublasLtMatmulPreferenceSetAttribute(pref, attr, data, size),
                         "cublasLtMatmulPreferenceSetAttribute(%d = %llu) for %s node \"%s\"", (int)attr,
                         (unsigned long long)value, op_name, cuda_node_name(node));
}

/* Byte alignments of the operands as cuBLAS sees them: [0] its A (operand b), [1] its B (operand
 * a), [2] C, [3] D. */
static gfx_status choose_algorithm(cublasLtHandle_t handle, const ir_node* node, const gemm_state* st,
                                   size_t max_workspace, const size_t align[4], cublasLtMatmulHeuristicResult_t* result) {
  cublasLtMatmulPreference_t pref = NULL;
  GFX_TRY(cuda_blas_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate for %s node \"%s\"",
                          op_name, cuda_node_name(node)));
  gfx_status s = set_preference(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_workspace, 0, node);
  if (!s) s = set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0], 1, node);
  if (!s) s = set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1], 1, node);
  if (!s) s = set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2], 1, node);
  if (!s) s = set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[3], 1, node);
  /* split-K partial sums in float32, never in the (16-bit) output type or in place in the output:
   * measured on the H200, an fp16 Gemm with K = 1500 was 3 ulp off when cuBLASLt chose otherwise */
  if (!s)
    s = set_preference(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                       CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 1, node);
  int found = 0;
  if (!s)
    s = cuda_blas_check(cublasLtMatmulAlgoGetHeuristic(handle, st->desc, st->b_layout, st->a_layout, st->out_layout,
                                                       st->out_layout, pref, 1, result, &found),
                        "cublasLtMatmulAlgoGetHeuristic for %s node \"%s\" (m %lld, n %lld, k %lld)", op_name,
                        cuda_node_name(node), (long long)st->geom.m, (long long)st->geom.n, (long long)st->geom.k);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!s && (found < 1 || result->state != CUBLAS_STATUS_SUCCESS))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                  "cuda backend: %s node \"%s\": cuBLASLt has no algorithm for m %lld, n %lld, k %lld, alignments "
                  "%zu/%zu/%zu/%zu bytes, workspace %zu bytes",
                  op_name, cuda_node_name(node), (long long)st->geom.m, (long long)st->geom.n, (long long)st->geom.k,
                  align[0], align[1], align[2], align[3], max_workspace);
  return s;
}

static gfx_status plan(const ir_node* node, const gfx_shape* in, const gfx_shape* out, gemm_state* st) {
  const ir_gemm_params* p = &node->params.gemm;
  st->dtype = cuda_nn_dtype(p->dtype);
  if (!st->dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: %s node \"%s\": element type %s is not implemented", op_name,
                     cuda_node_name(node), gfx_dtype_name(p->dtype));
  st->elem_bytes = gfx_dtype_size(st->dtype);
  const int has_c = node->n_inputs > 2 && node->inputs[2] >= 0 && in[2].rank >= 0;
  gfx_status s = ir_gemm_geometry(p, &in[0], &in[1], has_c ? &in[2] : NULL, &st->geom);
  if (s) return gfx_status_wrap(s, "cuda backend: %s node \"%s\"", op_name, cuda_node_name(node));
  const gfx_shape expected = {.rank = 2, .dims = {st->geom.m, st->geom.n}};
  if (!gfx_shape_equal(&out[0], &expected)) {
    char o[128], e[128];
    return gfx_error(GFX_ERR_INTERNAL, "cuda backend: %s node \"%s\": output shape %s, expected %s", op_name,
                     cuda_node_name(node), gfx_shape_str(&out[0], o, sizeof o), gfx_shape_str(&expected, e, sizeof e));
  }
  st->a_shape = in[0];
  st->b_shape = in[1];
  st->c_shape = has_c ? in[2] : (gfx_shape){.rank = -1};
  st->uses_c = has_c && p->beta != 0.0f;
  st->c_is_full = st->uses_c && st->geom.c_row_stride == st->geom.n && st->geom.c_col_stride == 1;
  st->c_is_bias = st->uses_c && !st->c_is_full && p->beta == 1.0f && st->geom.c_row_stride == 0 &&
                  st->geom.c_col_stride == 1;
  st->nothing_to_do = st->geom.m == 0 || st->geom.n == 0;
  st->no_product = !st->nothing_to_do && st->geom.k == 0;
  int ok = 0;
  st->out_bytes = gfx_shape_bytes(&out[0], st->dtype, &ok);
  if (!ok)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\": output size overflows", op_name,
                     cuda_node_name(node));
  return NULL;
}

gfx_status cuda_prepare_gemm(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                             cuda_node_state** state, size_t* scratch_bytes) {
  if (node->n_inputs < 2 || node->n_outputs < 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: %s node \"%s\" has %d inputs and %d outputs", op_name,
                     cuda_node_name(node), node->n_inputs, node->n_outputs);
  gemm_state* st = calloc(1, sizeof *st);
  if (!st)
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: %s node \"%s\": no host memory for its state", op_name,
                     cuda_node_name(node));
  st->base.release = state_release;
  st->device = device;
  if (pthread_mutex_init(&st->bias_lock, NULL) != 0) {
    free(st);
    return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: %s node \"%s\": no lock for its state", op_name,
                     cuda_node_name(node));
  }
  st->bias_lock_ready = 1;
  gfx_status s = plan(node, in, out, st);
  if (!s && !st->nothing_to_do && !st->no_product) {
    cublasLtHandle_t handle = NULL;
    s = cuda_blaslt_handle(device, &handle);
    if (!s) s = create_descriptors(node, st);
    const size_t align[4] = {CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT, CUDA_ALLOC_ALIGNMENT};
    if (!s) s = choose_algorithm(handle, node, st, GEMM_WORKSPACE_LIMIT, align, &st->algo);
  }
  if (s) {
    state_release(&st->base);
    return s;
  }
  *state = &st->base;
  *scratch_bytes = st->nothing_to_do || st->no_product ? 0 : st->algo.workspaceSize;
  return NULL;
}

/* Y = beta * C (or 0) without a product: k = 0. */
static gfx_status fill_without_product(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                       gfx_tensor* out, const gemm_state* st) {
  cudaStream_t stream = (cudaStream_t)ctx->stream;
  if (!st->uses_c)
    return cuda_check(cudaMemsetAsync(out[0].data, 0, st->out_bytes, stream),
                      "zeroing the output of %s node \"%s\" (k = 0) on device %d", op_name, cuda_node_name(node),
                      ctx->dev->index);
  return cuda_check(cuda_gemm_fill_c(st->dtype, in[2].data, st->geom.c_row_stride, st->geom.c_col_stride,
                                     node->params.gemm.beta, out[0].data, st->geom.m, st->geom.n, stream),
                    "beta * C for %s node \"%s\" (k = 0) on device %d", op_name, cuda_node_name(node), ctx->dev->index);
}

/* Y = alpha * op(A) op(B) + bias in one cuBLASLt call (the bias epilogue). */
static gfx_status run_with_bias(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                gemm_state* st) {
  cublasLtHandle_t handle = NULL;
  GFX_TRY(cuda_blaslt_handle(ctx->dev->index, &handle));
  const size_t align[4] = {cuda_alignment_of((uintptr_t)in[1].data), cuda_alignment_of((uintptr_t)in[0].data),
                           cuda_alignment_of((uintptr_t)out[0].data), cuda_alignment_of((uintptr_t)out[0].data)};
  const size_t scratch = ctx->scratch ? ctx->scratch_bytes : 0;
  const float alpha = node->params.gemm.alpha, beta = 0.0f;
  const void* bias = in[2].data;
  pthread_mutex_lock(&st->bias_lock);
  gfx_status s = NULL;
  if (st->bias_in_desc != bias) {
    s = cuda_blas_check(cublasLtMatmulDescSetAttribute(st->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                        "setting the bias of %s node \"%s\"", op_name, cuda_node_name(node));
    if (!s) st->bias_in_desc = bias;
  }
  /* the heuristic's pick assumed aligned operands (the planner's 256 bytes); ask again otherwise,
   * now that the descriptor holds the actual bias pointer */
  cublasLtMatmulHeuristicResult_t algo = st->algo;
  if (!s && (align[0] < CUDA_ALLOC_ALIGNMENT || align[1] < CUDA_ALLOC_ALIGNMENT || align[3] < CUDA_ALLOC_ALIGNMENT ||
             cuda_alignment_of((uintptr_t)bias) < CUDA_ALLOC_ALIGNMENT || scratch < st->algo.workspaceSize))
    s = choose_algorithm(handle, node, st, scratch, align, &algo);
  if (!s)
    s = cuda_blas_check(cublasLtMatmul(handle, st->desc, &alpha, in[1].data, st->b_layout, in[0].data, st->a_layout,
                                       &beta, out[0].data, st->out_layout, out[0].data, st->out_layout, &algo.algo,
                                       ctx->scratch, algo.workspaceSize, (cudaStream_t)ctx->stream),
                        "cublasLtMatmul with bias for %s node \"%s\" (m %lld, n %lld, k %lld) on device %d", op_name,
                        cuda_node_name(node), (long long)st->geom.m, (long long)st->geom.n, (long long)st->geom.k,
                        ctx->dev->index);
  pthread_mutex_unlock(&st->bias_lock);
  return s;
}

gfx_status cuda_run_gemm(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                         cuda_node_state* state) {
  gemm_state* st = (gemm_state*)state;
  GFX_TRY(cuda_lib_check_prepared(ctx, node, st, st ? st->device : -1,
                                  st ? (gfx_shape[]){st->a_shape, st->b_shape, st->c_shape} : NULL, st ? 3 : 0, in, 0));
  GFX_TRY(cuda_nn_require_dtype(node, in, node->n_inputs < 3 ? node->n_inputs : 3, st->dtype, "input"));
  GFX_TRY(cuda_nn_require_dtype(node, out, 1, st->dtype, "output"));
  if (st->nothing_to_do) return NULL;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  if (st->no_product) return fill_without_product(ctx, node, in, out, st);
  cudaStream_t stream = (cudaStream_t)ctx->stream;
  const char* name = cuda_node_name(node);
  if (st->c_is_bias) return run_with_bias(ctx, node, in, out, st);
  /* C as cuBLASLt reads it: the given one when full, else Y holding the broadcast C */
  const void* c = out[0].data;
  if (st->c_is_full)
    c = in[2].data;
  else if (st->uses_c)
    GFX_TRY(cuda_check(cuda_gemm_fill_c(st->dtype, in[2].data, st->geom.c_row_stride, st->geom.c_col_stride, 1.0f,
                                        out[0].data, st->geom.m, st->geom.n, stream),
                       "broadcasting C of %s node \"%s\" on device %d", op_name, name, ctx->dev->index));
  cublasLtHandle_t handle = NULL;
  GFX_TRY(cuda_blaslt_handle(ctx->dev->index, &handle));
  cublasLtMatmulHeuristicResult_t algo = st->algo;
  const size_t align[4] = {cuda_alignment_of((uintptr_t)in[1].data), cuda_alignment_of((uintptr_t)in[0].data),
                           cuda_alignment_of((uintptr_t)c), cuda_alignment_of((uintptr_t)out[0].data)};
  const size_t scratch = ctx->scratch ? ctx->scratch_bytes : 0;
  if (align[0] < CUDA_ALLOC_ALIGNMENT || align[1] < CUDA_ALLOC_ALIGNMENT || align[2] < CUDA_ALLOC_ALIGNMENT ||
      align[3] < CUDA_ALLOC_ALIGNMENT || scratch < st->algo.workspaceSize)
    GFX_TRY(choose_algorithm(handle, node, st, scratch, align, &algo));
  const float alpha = node->params.gemm.alpha;
  const float beta = st->uses_c ? node->params.gemm.beta : 0.0f;
  return cuda_blas_check(cublasLtMatmul(handle, st->desc, &alpha, in[1].data, st->b_layout, in[0].data, st->a_layout,
                                        &beta, c, st->out_layout, out[0].data, st->out_layout, &algo.algo, ctx->scratch,
                                        algo.workspaceSize, stream),
                         "cublasLtMatmul for %s node \"%s\" (m %lld, n %lld, k %lld) on device %d", op_name, name,
                         (long long)st->geom.m, (long long)st->geom.n, (long long)st->geom.k, ctx->dev->index);
}

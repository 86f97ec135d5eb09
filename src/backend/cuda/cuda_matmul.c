/* gfxep CUDA backend — MatMul (float32, float16, bfloat16) with cuBLASLt.
 *
 * ONNX MatMul is numpy's: row-major out[batch] = a[batch] @ b[batch] with broadcast batch dims.
 * cuBLAS is column-major, and a row-major matrix read as column-major is its transpose, so the
 * row-major product C = A·B is computed as the column-major product Cᵀ = Bᵀ·Aᵀ: operand b is
 * cuBLAS's "A" (n x k, ld n), operand a is cuBLAS's "B" (k x m, ld k), out is n x m with ld n.
 * No data moves and no transpose flag is set, except for a MatMul that took in a Transpose of b
 * (params.gemm.trans_b, see ir/fuse.h): b is then stored row-major [n, k], which read column-major
 * is k x n with ld k, and cuBLAS's "A" is marked transposed. A fused scalar Mul is the product's
 * alpha (params.gemm.alpha); beta stays 0.
 *
 * Batches: when each operand has either one matrix or one per output batch, a single strided
 * batched call covers everything (stride 0 repeats the single matrix). Other broadcasts, such as
 * [2,1,m,k] @ [1,3,k,n], run one strided batched call over the last batch dim per index of the
 * other batch dims.
 *
 * Precision: CUBLAS_COMPUTE_32F for every type, never TF32 for float32, because results are compared
 * with ONNX Runtime's CPU kernels at fp32 tolerances; float16 and bfloat16 operands accumulate in
 * float on tensor cores.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_nn_types.h"
#include "ir/shape.h"

/* The most workspace node_prepare lets cuBLASLt ask for; node_prepare reports what the chosen
 * algorithm needs, which is usually much less. */
#define MATMUL_WORKSPACE_LIMIT ((size_t)4 << 20)

/* How the output batch is walked: `calls` cuBLASLt calls of `inner` matrices each. */
typedef struct matmul_batching {
  int64_t inner;                                   /* matrices per call (strided batch count) */
  int64_t a_inner_stride, b_inner_stride;          /* elements between matrices in one call; 0 = reuse */
  int64_t calls;                                   /* product of outer_dims */
  int outer_rank;                                  /* batch dims walked on the host, outermost first */
  int64_t outer_dims[GFX_MAX_RANK];
  int64_t a_outer_strides[GFX_MAX_RANK], b_outer_strides[GFX_MAX_RANK]; /* elements; 0 = broadcast */
  int a_many, b_many, out_many;                    /* operand holds more than one matrix */
} matmul_batching;

typedef struct matmul_state {
  cuda_node_state base;
  int device;
  gfx_shape a_shape, b_shape; /* the signature this state was prepared for */
  int dtype;                  /* element type of every operand */
  size_t elem_bytes;
  int64_t m, n, k;            /* m includes folded batch rows (fold_batch_into_rows) */
  int nothing_to_do; /* the output has no elements */
  int zero_fill;     /* k == 0: every output element is an empty sum */
  size_t out_bytes;
  matmul_batching batching;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a_layout, b_layout, out_layout; /* operand a is cuBLAS's B, b is cuBLAS's A */
  cublasLtMatmulHeuristicResult_t algo;
  size_t algo_alignment_a, algo_alignment_b, algo_alignment_out; /* bytes the algorithm was chosen for */
} matmul_state;

/* ---- batch planning ---- */

static void batch_part(const gfx_shape* s, gfx_shape* batch) {
  batch->rank = s->rank >= 2 ? s->rank - 2 : 0;
  for (int d = 0; d < batch->rank; d++) batch->dims[d] = s->dims[d];
}

/* Dim d of `batch` right-aligned to rank `rank`; 1 where it has no such dim. */
static int64_t aligned_dim(const gfx_shape* batch, int rank, int d) {
  int own = d - (rank - batch->rank);
  return own >= 0 ? batch->dims[own] : 1;
}

static gfx_status plan_batching(const ir_node* node, const gfx_shape* a, const gfx_shape* b, const matmul_state* st,
                                matmul_batching* p, int64_t* total) {
  gfx_shape a_batch, b_batch, out_batch;
  batch_part(a, &a_batch);
  batch_part(b, &b_batch);
  gfx_status s = ir_broadcast_shapes(&a_batch, &b_batch, &out_batch);
  if (s) return gfx_status_wrap(s, "cuda backend: MatMul node \"%s\" batch dims", cuda_node_name(node));
  const int64_t a_matrix = st->m * st->k, b_matrix = st->k * st->n;
  const int64_t a_count = gfx_shape_numel(&a_batch), b_count = gfx_shape_numel(&b_batch);
  memset(p, 0, sizeof *p);
  *total = gfx_shape_numel(&out_batch);
  p->a_many = a_count > 1;
  p->b_many = b_count > 1;
  p->out_many = *total > 1;
  if ((a_count == *total || a_count == 1) && (b_count == *total || b_count == 1)) {
    p->inner = *total;
    p->calls = 1;
    p->a_inner_stride = a_count == 1 ? 0 : a_matrix;
    p->b_inner_stride = b_count == 1 ? 0 : b_matrix;
    return NULL;
  }
  /* General broadcast (out_batch has at least two dims here, or the case above would hold). */
  const int r = out_batch.rank;
  p->inner = out_batch.dims[r - 1];
  p->calls = *total / p->inner;
  p->a_inner_stride = aligned_dim(&a_batch, r, r - 1) == 1 ? 0 : a_matrix;
  p->b_inner_stride = aligned_dim(&b_batch, r, r - 1) == 1 ? 0 : b_matrix;
  p->outer_rank = r - 1;
  int64_t a_stride = a_matrix * aligned_dim(&a_batch, r, r - 1);
  int64_t b_stride = b_matrix * aligned_dim(&b_batch, r, r - 1);
  for (int d = r - 2; d >= 0; d--) {
    int64_t a_dim = aligned_dim(&a_batch, r, d), b_dim = aligned_dim(&b_batch, r, d);
    p->outer_dims[d] = out_batch.dims[d];
    p->a_outer_strides[d] = a_dim == 1 ? 0 : a_stride;
    p->b_outer_strides[d] = b_dim == 1 ? 0 : b_stride;
    a_stride *= a_dim;
    b_stride *= b_dim;
  }
  return NULL;
}

/* [batch..., m, k] @ [k, n] is one [batch*m, k] @ [k, n] product: a's matrices are consecutive
 * rows, and so are out's. One large GEMM beats a batch of small ones that all reread b. (With a
 * single a and many b matrices there is no such trick: b's matrices are not consecutive columns.)
 * b's single matrix and its layout (transposed or not) do not depend on m, so they stay valid. */
static void fold_batch_into_rows(matmul_state* st) {
  matmul_batching* p = &st->batching;
  if (p->calls != 1 || p->inner <= 1 || p->b_inner_stride != 0 || p->a_inner_stride == 0) return;
  st->m *= p->inner;
  p->inner = 1;
  p->a_inner_stride = 0;
  p->a_many = 0;
  p->out_many = 0;
}

/* ---- descriptors ---- */

static void matmul_state_release(cuda_node_state* base) {
  matmul_state* st = (matmul_state*)base;
  if (st->out_layout) cublasLtMatrixLayoutDestroy(st->out_layout);
  if (st->b_layout) cublasLtMatrixLayoutDestroy(st->b_layout);
  if (st->a_layout) cublasLtMatrixLayoutDestroy(st->a_layout);
  if (st->desc) cublasLtMatmulDescDestroy(st->desc);
  free(st);
}

/* A column-major rows x cols float matrix with leading dimension ld, `count` of them `stride`
 * elements apart. */
static gfx_status create_layout(const ir_node* node, int dtype, const char* which, uint64_t rows, uint64_t cols,
                                int64_t ld, int64_t count, int64_t stride, cublasLtMatrixLayout_t* layout) {
  int32_t batch_count = (int32_t)count;
  GFX_TRY(cuda_blas_check(cublasLtMatrixLayoutCreate(layout, cuda_nn_blas_type(dtype), rows, cols, ld),
                          "cublasLtMatrixLayoutCreate(%s: %llu x %llu, ld %lld) for MatMul node \"%s\"", which,
                          (unsigned long long)rows, (unsigned long long)cols, (long long)ld, cuda_node_name(node)));
  GFX_TRY(cuda_blas_check(
      cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch_count, sizeof batch_count),
      "setting the batch count %d of %s for MatMul node \"%s\"", (int)batch_count, which, cuda_node_name(node)));
  return cuda_blas_check(
      cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
      "setting the batch stride %lld of %s for MatMul node \"%s\"", (long long)stride, which, cuda_node_name(node));
}

/* On failure the caller releases the state, which frees whatever was created. */
static gfx_status create_descriptors(const ir_node* node, matmul_state* st) {
  const matmul_batching* p = &st->batching;
  if (p->inner > INT32_MAX)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: MatMul node \"%s\": %lld matrices in one batch, cuBLASLt takes at most %d",
                     cuda_node_name(node), (long long)p->inner, INT32_MAX);
  GFX_TRY(cuda_blas_check(cublasLtMatmulDescCreate(&st->desc, cuda_blas_compute_type(node, st->dtype), CUDA_R_32F),
                          "cublasLtMatmulDescCreate for MatMul node \"%s\"", cuda_node_name(node)));
  /* cuBLAS's A = operand b, needed as n x k: row-major [k, n] read column-major is n x k already;
   * row-major [n, k] (trans_b) is k x n and is transposed. Either way a matrix is k * n elements. */
  const int trans_b = node->params.gemm.trans_b != 0;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  GFX_TRY(cuda_blas_check(cublasLtMatmulDescSetAttribute(st->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof op_b),
                          "setting the transpose of b for MatMul node \"%s\"", cuda_node_name(node)));
  if (trans_b)
    GFX_TRY(create_layout(node, st->dtype, "b", (uint64_t)st->k, (uint64_t)st->n, st->k, p->inner,
                          p->b_inner_stride, &st->b_layout));
  else
    GFX_TRY(create_layout(node, st->dtype, "b", (uint64_t)st->n, (uint64_t)st->k, st->n, p->inner,
                          p->b_inner_stride, &st->b_layout));
  GFX_TRY(create_layout(node, st->dtype, "a", (uint64_t)st->k, (uint64_t)st->m, st->k, p->inner, p->a_inner_stride,
                        &st->a_layout));
  return create_layout(node, st->dtype, "output", (uint64_t)st->n, (uint64_t)st->m, st->n, p->inner, st->m * st->n,
                       &st->out_layout);
}

/* ---- algorithm choice ---- */

/* What alignment every matrix of an operand is guaranteed: its base pointer's, and, when it holds
 * several matrices, that of the matrix size (the distance between them). */
static size_t operand_alignment(const void* base, int many, int64_t matrix_elements, size_t elem_bytes) {
  size_t align = cuda_alignment_of((uintptr_t)base);
  size_t step = cuda_alignment_of((uintptr_t)matrix_elements * elem_bytes);
  return many && step < align ? step : align;
}

static gfx_status set_preference(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                                 uint64_t value, int as_uint32, const ir_node* node) {
  uint32_t value32 = (uint32_t)value;
  const void* data = as_uint32 ? (const void*)&value32 : (const void*)&value;
  size_t size = as_uint32 ? sizeof value32 : sizeof value;
  return cuda_blas_check(cublasLtMatmulPreferenceSetAttribute(pref, attr, data, size),
                         "cublasLtMatmulPreferenceSetAttribute(%d = %llu) for MatMul node \"%s\"", (int)attr,
                         (unsigned long long)value, cuda_node_name(node));
}

static gfx_status fill_preference(cublasLtMatmulPreference_t pref, size_t max_workspace, size_t align_a, size_t align_b,
                                  size_t align_out, const ir_node* node) {
  /* cuBLAS's A is operand b and its B is operand a (see the top of this file). */
  GFX_TRY(set_preference(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_workspace, 0, node));
  GFX_TRY(set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_b, 1, node));
  GFX_TRY(set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_a, 1, node));
  GFX_TRY(set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_out, 1, node));
  GFX_TRY(set_preference(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_out, 1, node));
  /* split-K partial sums in float32, never in a 16-bit output type (as in cuda_gemm.c) */
  return set_preference(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                        CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, 1, node);
}

/* The heuristic's first choice for these alignments and this much workspace. */
static gfx_status choose_algorithm(cublasLtHandle_t handle, const matmul_state* st, size_t max_workspace,
                                   size_t align_a, size_t align_b, size_t align_out, const ir_node* node,
                                   cublasLtMatmulHeuristicResult_t* result) {
  cublasLtMatmulPreference_t pref = NULL;
  GFX_TRY(cuda_blas_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate for MatMul node \"%s\"",
                          cuda_node_name(node)));
  gfx_status s = fill_preference(pref, max_workspace, align_a, align_b, align_out, node);
  int found = 0;
  if (!s)
    s = cuda_blas_check(cublasLtMatmulAlgoGetHeuristic(handle, st->desc, st->b_layout, st->a_layout, st->out_layout,
                                                       st->out_layout, pref, 1, result, &found),
                        "cublasLtMatmulAlgoGetHeuristic for MatMul node \"%s\" (m %lld, n %lld, k %lld)",
                        cuda_node_name(node), (long long)st->m, (long long)st->n, (long long)st->k);
  cublasLtMatmulPreferenceDestroy(pref);
  if (!s && (found < 1 || result->state != CUBLAS_STATUS_SUCCESS))
    s = gfx_error(GFX_ERR_NOT_SUPPORTED,
                  "cuda backend: MatMul node \"%s\": cuBLASLt has no algorithm for m %lld, n %lld, k %lld, %lld matrices "
                  "per call, alignments a %zu b %zu out %zu bytes, workspace %zu bytes",
                  cuda_node_name(node), (long long)st->m, (long long)st->n, (long long)st->k,
                  (long long)st->batching.inner, align_a, align_b, align_out, max_workspace);
  return s;
}

/* ---- prepare ---- */

static gfx_status check_output_shape(const ir_node* node, const gfx_shape* expected, const gfx_shape* out) {
  if (gfx_shape_equal(expected, out)) return NULL;
  char expected_str[128], out_str[128];
  return gfx_error(GFX_ERR_INTERNAL, "cuda backend: MatMul node \"%s\": output shape %s, expected %s",
                   cuda_node_name(node), gfx_shape_str(out, out_str, sizeof out_str),
                   gfx_shape_str(expected, expected_str, sizeof expected_str));
}

/* Everything but the library objects: sizes, the batch walk, the trivial cases. */
static gfx_status plan_matmul(const ir_node* node, const gfx_shape* in, const gfx_shape* out, matmul_state* st) {
  st->dtype = cuda_nn_dtype(node->params.gemm.dtype);
  if (!st->dtype)
    return gfx_error(GFX_ERR_NOT_SUPPORTED, "cuda backend: MatMul node \"%s\": element type %s is not implemented",
                     cuda_node_name(node), gfx_dtype_name(node->params.gemm.dtype));
  st->elem_bytes = gfx_dtype_size(st->dtype);
  ir_matmul_geom geom;
  gfx_status s = ir_matmul_geometry(&in[0], &in[1], node->params.gemm.trans_b, &geom);
  if (s) return gfx_status_wrap(s, "cuda backend: MatMul node \"%s\"", cuda_node_name(node));
  GFX_TRY(check_output_shape(node, &geom.out, &out[0]));
  st->a_shape = in[0];
  st->b_shape = in[1];
  st->m = geom.m;
  st->n = geom.n;
  st->k = geom.k;
  int64_t total = 0;
  GFX_TRY(plan_batching(node, &in[0], &in[1], st, &st->batching, &total));
  int ok = 0;
  st->out_bytes = gfx_shape_bytes(&out[0], st->dtype, &ok);
  if (!ok) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: MatMul node \"%s\": output size overflows", cuda_node_name(node));
  st->nothing_to_do = total == 0 || st->m == 0 || st->n == 0;
  st->zero_fill = !st->nothing_to_do && st->k == 0;
  fold_batch_into_rows(st);
  return NULL;
}

gfx_status cuda_prepare_matmul(int device, const ir_node* node, const gfx_shape* in, const gfx_shape* out,
                               cuda_node_state** state, size_t* scratch_bytes) {
  if (node->n_inputs < 2 || node->n_outputs < 1)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "cuda backend: MatMul node \"%s\" has %d inputs and %d outputs",
                     cuda_node_name(node), node->n_inputs, node->n_outputs);
  matmul_state* st = calloc(1, sizeof *st);
  if (!st) return gfx_error(GFX_ERR_OUT_OF_MEMORY, "cuda backend: MatMul node \"%s\": no host memory for its state", cuda_node_name(node));
  st->base.release = matmul_state_release;
  st->device = device;
  gfx_status s = plan_matmul(node, in, out, st);
  if (!s && !st->nothing_to_do && !st->zero_fill) {
    cublasLtHandle_t handle = NULL;
    s = cuda_blaslt_handle(device, &handle);
    if (!s) s = create_descriptors(node, st);
    if (!s) {
      /* Buffers from mem_alloc and the planner are CUDA_ALLOC_ALIGNMENT-aligned; node_run checks
       * the real pointers and chooses again in the rare case they are less aligned. */
      const matmul_batching* p = &st->batching;
      st->algo_alignment_a = operand_alignment(NULL, p->a_many, st->m * st->k, st->elem_bytes);
      st->algo_alignment_b = operand_alignment(NULL, p->b_many, st->k * st->n, st->elem_bytes);
      st->algo_alignment_out = operand_alignment(NULL, p->out_many, st->m * st->n, st->elem_bytes);
      s = choose_algorithm(handle, st, MATMUL_WORKSPACE_LIMIT, st->algo_alignment_a, st->algo_alignment_b,
                           st->algo_alignment_out, node, &st->algo);
    }
  }
  if (s) {
    matmul_state_release(&st->base);
    return s;
  }
  *state = &st->base;
  *scratch_bytes = st->nothing_to_do || st->zero_fill ? 0 : st->algo.workspaceSize;
  return NULL;
}

/* ---- run ---- */

/* The prepared algorithm, or a fresh choice when the buffers are less aligned than it assumed or
 * the scratch is smaller than it needs. */
static gfx_status algorithm_for_run(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in,
                                    const gfx_tensor* out, cublasLtHandle_t handle, const matmul_state* st,
                                    cublasLtMatmulHeuristicResult_t* algo) {
  const matmul_batching* p = &st->batching;
  size_t align_a = operand_alignment(in[0].data, p->a_many, st->m * st->k, st->elem_bytes);
  size_t align_b = operand_alignment(in[1].data, p->b_many, st->k * st->n, st->elem_bytes);
  size_t align_out = operand_alignment(out[0].data, p->out_many, st->m * st->n, st->elem_bytes);
  size_t scratch = ctx->scratch ? ctx->scratch_bytes : 0;
  if (align_a >= st->algo_alignment_a && align_b >= st->algo_alignment_b && align_out >= st->algo_alignment_out &&
      scratch >= st->algo.workspaceSize) {
    *algo = st->algo;
    return NULL;
  }
  return choose_algorithm(handle, st, scratch, align_a, align_b, align_out, node, algo);
}

/* Element offsets of call `call`'s first matrices in a and b. */
static void outer_offsets(const matmul_batching* p, int64_t call, int64_t* a_offset, int64_t* b_offset) {
  *a_offset = 0;
  *b_offset = 0;
  for (int d = p->outer_rank - 1; d >= 0; d--) {
    int64_t coord = call % p->outer_dims[d];
    call /= p->outer_dims[d];
    *a_offset += coord * p->a_outer_strides[d];
    *b_offset += coord * p->b_outer_strides[d];
  }
}

static gfx_status launch_matmuls(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                                 cublasLtHandle_t handle, const matmul_state* st,
                                 const cublasLtMatmulHeuristicResult_t* algo) {
  const matmul_batching* p = &st->batching;
  const float alpha = node->params.gemm.alpha, beta = 0.0f; /* alpha: a fused scalar Mul, else 1 */
  const char* a = in[0].data;
  const char* b = in[1].data;
  char* c = out[0].data;
  const size_t es = st->elem_bytes;
  const int64_t out_per_call = p->inner * st->m * st->n;
  for (int64_t call = 0; call < p->calls; call++) {
    int64_t a_offset, b_offset;
    outer_offsets(p, call, &a_offset, &b_offset);
    char* c_call = c + (size_t)(call * out_per_call) * es;
    GFX_TRY(cuda_blas_check(cublasLtMatmul(handle, st->desc, &alpha, b + (size_t)b_offset * es, st->b_layout,
                                           a + (size_t)a_offset * es,
                                           st->a_layout, &beta, c_call, st->out_layout, c_call, st->out_layout,
                                           &algo->algo, ctx->scratch, algo->workspaceSize, (cudaStream_t)ctx->stream),
                            "cublasLtMatmul for MatMul node \"%s\" (m %lld, n %lld, k %lld, call %lld of %lld) on device %d",
                            cuda_node_name(node), (long long)st->m, (long long)st->n, (long long)st->k,
                            (long long)call + 1, (long long)p->calls, ctx->dev->index));
  }
  return NULL;
}

gfx_status cuda_run_matmul(const gfx_exec_ctx* ctx, const ir_node* node, const gfx_tensor* in, gfx_tensor* out,
                           cuda_node_state* state) {
  const matmul_state* st = (const matmul_state*)state;
  GFX_TRY(cuda_lib_check_prepared(ctx, node, st, st ? st->device : -1,
                                  st ? (gfx_shape[]){st->a_shape, st->b_shape} : NULL, st ? 2 : 0, in, 0));
  GFX_TRY(cuda_nn_require_dtype(node, in, 2, st->dtype, "input"));
  GFX_TRY(cuda_nn_require_dtype(node, out, 1, st->dtype, "output"));
  if (st->nothing_to_do) return NULL;
  GFX_TRY(cuda_use_device(ctx->dev->index));
  if (st->zero_fill)
    return cuda_check(cudaMemsetAsync(out[0].data, 0, st->out_bytes, (cudaStream_t)ctx->stream),
                      "zeroing the output of MatMul node \"%s\" (k = 0) on device %d", cuda_node_name(node), ctx->dev->index);
  cublasLtHandle_t handle = NULL;
  GFX_TRY(cuda_blaslt_handle(ctx->dev->index, &handle));
  cublasLtMatmulHeuristicResult_t algo;
  GFX_TRY(algorithm_for_run(ctx, node, in, out, handle, st, &algo));
  return launch_matmuls(ctx, node, in, out, handle, st, &algo);
}

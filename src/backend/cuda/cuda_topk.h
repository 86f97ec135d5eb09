/* gfxep CUDA backend — TopK's kernels (cuda_topk.cu), callable from C.
 *
 * TopK along the middle dim of X as [outer, len, inner] (dtype: float types, int32/int64): the k
 * first elements of every line in TopK's order (ir_topk_before_*: largest or smallest first, NaN as
 * the largest value, ties by the lower index) into values ([outer, k, inner], X's type) and indices
 * (int64), the reference's result element for element. Long contiguous float lines go through a
 * radix selection that needs scratch; nothing allocates or syncs, so the launches can be captured.
 */
#ifndef GFXEP_BACKEND_CUDA_TOPK_H
#define GFXEP_BACKEND_CUDA_TOPK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scratch bytes cuda_topk needs for these dims (0: none). */
size_t cuda_topk_scratch(int dtype, int64_t outer, int64_t len, int64_t inner, int64_t k);

/* Queues the TopK on stream; scratch holds at least cuda_topk_scratch(...) bytes (else
 * cudaErrorInvalidValue, as for a dtype without kernels). */
cudaError_t cuda_topk(int dtype, const void* x, void* values, int64_t* indices, int64_t outer, int64_t len,
                      int64_t inner, int64_t k, int largest, void* scratch, size_t scratch_bytes, cudaStream_t stream);

/* Loads every kernel of cuda_topk.cu into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_topk_preload(void);

#ifdef __cplusplus
}
#endif

#endif

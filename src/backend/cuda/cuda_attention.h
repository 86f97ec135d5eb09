/* gfxep CUDA backend — the Attention kernel, callable from C.
 *
 * The entry queues its work on `stream` and returns the launch error (cudaSuccess when there was
 * nothing to launch). The caller has checked every shape (ir_attention_geometry).
 */
#ifndef GFXEP_BACKEND_CUDA_ATTENTION_H
#define GFXEP_BACKEND_CUDA_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ir_attention_geom as the kernel reads it: sizes, element strides per (batch, head, position),
 * the mask's broadcast strides; mask_kind 0 none, 1 bool, 2 of the inputs' type. */
typedef struct cuda_attention_args {
  int64_t batch, q_heads, group, q_seq, kv_seq, head_size, v_head_size;
  int64_t q_stride[3], k_stride[3], v_stride[3], y_stride[3], mask_stride[4];
  int mask_kind, is_causal;
  float scale;
} cuda_attention_args;

/* Rows (query positions of every batch and head) are shared out among the blocks; each keeps one
 * row's scores in shared memory, or, for more keys than CUDA_ATTENTION_SHARED_KEYS, in its part
 * of `scratch` (cuda_attention_scratch bytes). */
#define CUDA_ATTENTION_SHARED_KEYS 8192
size_t cuda_attention_scratch(const cuda_attention_args* a);
/* dtype GFX_DTYPE_F32, F16 or BF16 (anything else returns cudaErrorInvalidValue) */
cudaError_t cuda_attention(int dtype, const void* q, const void* k, const void* v, const void* mask, void* y,
                           cuda_attention_args a, void* scratch, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif

/* gfxep CUDA backend — the Attention kernels, callable from C.
 *
 * Every entry queues its work on `stream` and returns the launch error (cudaSuccess when there was
 * nothing to launch). The caller has checked every shape (ir_attention_geometry) and passes Q, K, V
 * and Y already moved to their views' offsets.
 */
#ifndef GFXEP_BACKEND_CUDA_ATTENTION_H
#define GFXEP_BACKEND_CUDA_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ir_attention_geom as the kernels read it: sizes; element strides per batch, head, position and
 * element of the head; the masks' broadcast strides over [batch, q heads, q seq, kv seq]; mask_kind
 * 0 none, 1 bool, 2 of the inputs' type; has_mask2: a second float mask, added after the first. */
typedef struct cuda_attention_args {
  int64_t batch, q_heads, group, q_seq, kv_seq, head_size, v_head_size;
  int64_t q_stride[4], k_stride[4], v_stride[4], y_stride[4], mask_stride[4], mask2_stride[4];
  int mask_kind, has_mask2, is_causal;
  float scale;
  /* the tiled kernels may load Q, K and V 16 bytes at a time (cuda_attention_vector_loads) */
  int vector_loads;
} cuda_attention_args;

/* The kernel that runs a node:
 *   ROWS  one block per query row, the row's scores in shared memory (up to 8192 keys) or in node
 *         scratch beyond: any head size, any strides;
 *   MMA   flash-attention tiles on tensor cores (mma.sync m16n8k16, float32 accumulation): 64 queries
 *         per block of 4 warps, K and V streamed through shared memory in tiles, the softmax online;
 *         float16 and bfloat16 on compute capability 8.0 and later. Where that makes few blocks
 *         (few heads, short sequences: a ViT), 16 queries per block instead, the 4 warps taking
 *         every 4th tile of keys and combining their partial softmaxes at the end;
 *   SIMT  the same tiling on plain float32 arithmetic, 32 queries per block: float32 (and the half
 *         types before compute capability 8.0).
 * Both tiled kernels take head sizes up to 128 read with unit stride along the head. */
typedef enum cuda_attention_path {
  CUDA_ATTENTION_ROWS = 0,
  CUDA_ATTENTION_MMA,
  CUDA_ATTENTION_SIMT,
  CUDA_ATTENTION_WARP,
} cuda_attention_path;

/* WARP: one warp per query row, float32 (a ViT's short sequences): the row's query in shared memory,
 * each lane scoring up to CUDA_ATTENTION_WARP_KEYS / 32 keys in registers, the softmax by warp
 * shuffles, and V summed with each lane owning head elements (coalesced rows of V, 32 rows in
 * flight at a time). No float or bool mask (causality is taken), at most CUDA_ATTENTION_WARP_KEYS
 * keys, head sizes up to 128 with unit stride along the head. On an H100, ViT-tiny's twelve float32
 * attentions took 361 us of node time fused this way with 8 rows of V in flight, and the net 0.990 ms
 * with 32 (1.111 with the unfused products, GFXEP_CUDA_ATTENTION_F32_FUSED=0). */
#define CUDA_ATTENTION_WARP_KEYS 256

#define CUDA_ATTENTION_TILED_MAX_HEAD 128

/* The path for dtype on a device of compute capability cc_major; rows_only forces the row kernel. */
cuda_attention_path cuda_attention_choose(int dtype, const cuda_attention_args* a, int cc_major, int rows_only);

/* Whether Q, K and V (at these addresses, element size es) allow the tiled kernels' 16-byte loads:
 * every head starts 16-byte aligned and holds whole 16-byte pieces. */
int cuda_attention_vector_loads(const cuda_attention_args* a, const void* q, const void* k, const void* v, size_t es);

#define CUDA_ATTENTION_SHARED_KEYS 8192
/* Scratch the row kernel needs for rows of more than CUDA_ATTENTION_SHARED_KEYS keys; 0 otherwise. */
size_t cuda_attention_scratch(const cuda_attention_args* a, cuda_attention_path path);

/* dtype GFX_DTYPE_F32, F16 or BF16 (anything else returns cudaErrorInvalidValue); mask and mask2 as
 * args says (NULL when absent). */
cudaError_t cuda_attention(int dtype, cuda_attention_path path, const void* q, const void* k, const void* v,
                           const void* mask, const void* mask2, void* y, cuda_attention_args a, void* scratch,
                           cudaStream_t stream);

/* Every attention kernel into the current context (the tiled ones through
 * cuda_attention_tiled_preload). */
cudaError_t cuda_attention_preload(void);
cudaError_t cuda_attention_tiled_preload(void);

/* The tiled kernels (cuda_attention_tiled.cu); path MMA or SIMT. */
cudaError_t cuda_attention_tiled(int dtype, cuda_attention_path path, const void* q, const void* k, const void* v,
                                 const void* mask, const void* mask2, void* y, const cuda_attention_args* a,
                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif

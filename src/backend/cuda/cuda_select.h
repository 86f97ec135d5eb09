/* gfxep CUDA backend — kernels of the selections whose count the data decides, NonZero and
 * NonMaxSuppression (cuda_select.cu), callable from C.
 *
 * Both run as the IR's bounded nodes (ir/ops_select.h): they write output 0 at its upper bound, up to
 * the count, and the count itself (int64) to device memory, where the executor reads it back. Nothing
 * here allocates, syncs or reads back: every launch can be captured into a CUDA graph, and the scratch
 * comes from the node's planned scratch (its size from the *_scratch functions, for the shapes
 * node_prepare is given). Each entry returns cudaGetLastError() after its launches.
 */
#ifndef GFXEP_BACKEND_CUDA_SELECT_H
#define GFXEP_BACKEND_CUDA_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ir/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The elements one block of the NonZero kernels looks at, and the largest element count they handle. */
#define CUDA_NONZERO_CHUNK 4096
#define CUDA_NONZERO_MAX_ELEMENTS ((int64_t)CUDA_NONZERO_CHUNK * 0x7fffffffLL)

/* Scratch bytes NonZero needs for `numel` elements (a count per block of CUDA_NONZERO_CHUNK). */
size_t cuda_nonzero_scratch(int64_t numel);

/* The coordinates of the nonzero elements of x (elements of elem_size bytes, 1, 2, 4 or 8; an element
 * is nonzero when any bit outside sign_mask is set, sign_mask being a float's sign bit, 0 for integers
 * and bools) in row-major order into y, [max(rank, 1), numel] (columns past the count unwritten; a
 * scalar's coordinate is 0), and the count into *count: one pass counts per block, one scans the
 * counts, one writes every block's coordinates at its offset, in order within the block. */
cudaError_t cuda_select_nonzero(int elem_size, uint64_t sign_mask, const void* x, const gfx_shape* x_shape, int64_t* y,
                                int64_t* count, void* scratch, cudaStream_t stream);

/* NonMaxSuppression over `segments` = batches x classes (batch, class) pairs of `boxes` boxes. */
typedef struct cuda_nms_args {
  int dtype;                 /* boxes' and scores': float32, float16 or bfloat16 */
  const void* boxes;         /* [batches, boxes, 4] */
  const void* scores;        /* [batches, classes, boxes] */
  int64_t batches, classes, boxes_n;
  int64_t per_class;         /* min(max_output_boxes_per_class, boxes) */
  int center_point_box;
  int has_score_threshold;
  float iou_threshold, score_threshold;
} cuda_nms_args;

/* Scratch bytes of NonMaxSuppression (0 when nothing can be kept). */
size_t cuda_nms_scratch(int64_t batches, int64_t classes, int64_t boxes, int64_t per_class);

/* Writes the kept (batch, class, box) rows into y ([batches x classes x per_class, 3], rows past the
 * count unwritten) in ORT's order, and their count into *count. Per segment: the candidates (above
 * the score threshold) are ranked by counting (higher score first, ties to the lower index, every
 * candidate against every other: exact and deterministic); the suppression bits of each ranked
 * candidate against the later ones are computed in parallel, 64 to a word, in chunks of rows that
 * keep that mask within 64 MiB; one block per segment walks the rows of each chunk in order, keeping
 * a row unless an earlier kept row's bits remove it, 64 rows per step (the diagonal word on one
 * thread, the other words or'ed in by all); a scan of the kept counts gives each segment its rows. */
cudaError_t cuda_select_nms(const cuda_nms_args* a, int64_t* y, int64_t* count, void* scratch, size_t scratch_bytes,
                            cudaStream_t stream);

/* Every kernel of cuda_select.cu into the current context. */
cudaError_t cuda_select_preload(void);

#ifdef __cplusplus
}
#endif

#endif

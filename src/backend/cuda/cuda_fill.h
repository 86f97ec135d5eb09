/* gfxep CUDA backend — a memset node of a captured graph as a kernel node (cuda_graph.c).
 *
 * Libraries called during a capture (cuDNN, cuBLASLt) leave cudaMemsetAsync calls in the graph as
 * memset nodes, and a small memset node costs cudaGraphLaunch about 1.2 us of host time where a kernel
 * node costs next to nothing (bench/graph_launch_cost.cu, on an H100), so cuda_graph.c swaps each for
 * this kernel, which writes the same value over the same rows (16 bytes per store where the rows
 * allow it).
 */
#ifndef GFXEP_CUDA_FILL_H
#define GFXEP_CUDA_FILL_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Adds to g, after the n_deps nodes deps, a kernel node that does what the memset node of params m
 * does; *out is the new node. */
cudaError_t cuda_fill_add_node(cudaGraph_t g, const cudaGraphNode_t* deps, size_t n_deps,
                               const struct cudaMemsetParams* m, cudaGraphNode_t* out);

cudaError_t cuda_fill_preload(void); /* its kernel into the current context */

#ifdef __cplusplus
}
#endif

#endif

/* gfxep CUDA backend — kernels of the layout and data movement ops, callable from C.
 *
 * Elements are moved as unsigned integers of their size (1, 2, 4 or 8 bytes), never converted, so
 * every element type is exact. Each entry queues its kernel on `stream` and returns
 * cudaGetLastError() after the launch (cudaSuccess when there was nothing to launch). Parameters
 * travel by value in the kernel arguments, so every launch can be captured into a CUDA graph.
 */
#ifndef GFXEP_BACKEND_CUDA_LAYOUT_H
#define GFXEP_BACKEND_CUDA_LAYOUT_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ir/layout.h"

/* Runs a strided copy plan (ir/layout.h): dst elements of the plan's box from src, or the plan's
 * constant. The plan comes from ir_layout_plan, which keeps every offset inside the tensors. */
cudaError_t cuda_layout_run_plan(const ir_copy_plan* plan, const void* src, void* dst, cudaStream_t stream);

/* out[o, j, i] = data[o, idx[j], i] of elem_size-byte elements; indices int64 when indices_i64,
 * else int32. A negative index counts from the end; one outside [-axis_dim, axis_dim) yields zeros
 * (a kernel cannot report it). */
cudaError_t cuda_layout_gather(const void* data, const void* indices, int indices_i64, void* out,
                               const ir_gather_geom* g, int elem_size, cudaStream_t stream);

/* count elements of elem_size bytes, each a copy of value. */
cudaError_t cuda_layout_fill(void* dst, int64_t count, const unsigned char* value, int elem_size,
                             cudaStream_t stream);

/* Writes n (<= GFX_MAX_RANK) int64 values, passed by value, to dst. */
cudaError_t cuda_layout_write_i64(int64_t* dst, const int64_t* values, int n, cudaStream_t stream);

/* Loads every kernel of this file into the current device's context (see cuda_elementwise.cu). */
cudaError_t cuda_layout_preload(void);

#ifdef __cplusplus
}
#endif

#endif
